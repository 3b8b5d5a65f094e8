// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// inferShellOperation: a single-pass scanner over the command (linear in its length, whatever
// the input: an agent controls it, and every execute call — also a denied one — classifies it).
// Each character is looked at a bounded number of times; the words of a command are compared
// against small fixed tables as they end, and multi-word rules ("pip install", "python -m pip
// install", "sed -i", "find … -delete") are small states carried forward, never a rescan.

#include "audit.h"

#include <QStringView>

namespace elsai {

namespace detail {
// Test hook (declared by tst_audit): scanner steps done on this thread, counted so the tests can
// show that classification stays linear without timing anything.
quint64 shellClassifierStepCount();
void resetShellClassifierStepCount();
} // namespace detail

namespace {

thread_local quint64 t_steps = 0;

// Rules in priority order: the first rule any command of the line matches wins.
enum Rule : unsigned {
    PackageInstall = 1u << 0,
    Network = 1u << 1,
    Git = 1u << 2,
    ShellDelete = 1u << 3,
    ShellMove = 1u << 4,
    ShellWrite = 1u << 5,
    Python = 1u << 6,
    Build = 1u << 7,
    Read = 1u << 8,
};

bool isBlank(QChar c)
{
    return c == u' ' || c == u'\t' || c == u'\r' || c == u'\v' || c == u'\f';
}

// Characters that end a word (besides blanks): separators, grouping, quotes, redirections.
bool endsWord(QChar c)
{
    switch (c.unicode()) {
    case u';':
    case u'&':
    case u'|':
    case u'\n':
    case u'(':
    case u')':
    case u'`':
    case u'\'':
    case u'"':
    case u'<':
    case u'>':
        return true;
    default:
        return isBlank(c);
    }
}

bool isNameChar(QChar c)
{
    const char16_t u = c.unicode();
    return (u >= u'a' && u <= u'z') || (u >= u'A' && u <= u'Z') || (u >= u'0' && u <= u'9') ||
           u == u'_';
}

bool oneOf(QStringView w, std::initializer_list<const char16_t *> names)
{
    for (const char16_t *n : names) {
        if (w == QStringView(n))
            return true;
    }
    return false;
}

// The rules a command name alone matches.
unsigned rulesOfName(QStringView name)
{
    unsigned r = 0;
    if (oneOf(name, {u"curl", u"wget", u"nc", u"ncat", u"ssh", u"scp", u"sftp", u"rsync", u"telnet",
                     u"ftp", u"ping"}))
        r |= Network;
    if (name == u"git")
        r |= Git;
    if (oneOf(name, {u"rm", u"rmdir", u"unlink", u"shred"}))
        r |= ShellDelete;
    if (oneOf(name, {u"mv", u"rename"}))
        r |= ShellMove;
    if (oneOf(name, {u"cp", u"touch", u"mkdir", u"tee", u"dd", u"install", u"ln", u"chmod",
                     u"chown", u"truncate"}))
        r |= ShellWrite;
    if (oneOf(name, {u"python", u"python3", u"pytest", u"pip", u"pip3"}))
        r |= Python;
    if (oneOf(name, {u"make", u"cmake", u"ninja", u"gcc", u"g++", u"clang", u"cc", u"npm", u"node",
                     u"cargo", u"go"}))
        r |= Build;
    if (oneOf(name, {u"cat", u"head", u"tail", u"less", u"grep", u"rg", u"find", u"ls", u"wc",
                     u"diff", u"stat"}))
        r |= Read;
    return r;
}

bool isPackageManager(QStringView name)
{
    return oneOf(name, {u"pip", u"pip3", u"npm", u"pnpm", u"yarn", u"apt", u"apt-get", u"cargo",
                        u"gem", u"go", u"brew", u"conda", u"uv"});
}

bool isPrefixWord(QStringView name)
{
    return oneOf(name, {u"sudo", u"env", u"nohup", u"time", u"xargs"});
}

// NAME=value (a variable assignment before the command).
bool isAssignment(QStringView w)
{
    qsizetype i = 0;
    while (i < w.size() && isNameChar(w[i]))
        ++i;
    return i > 0 && i < w.size() && w[i] == u'=';
}

class Scanner
{
public:
    explicit Scanner(QStringView s) : m_s(s) {}

    QString classify()
    {
        while (m_i < m_s.size())
            step();
        endWord();
        static const std::pair<Rule, const char *> order[] = {
            {PackageInstall, "package_install"},
            {Network, "network"},
            {Git, "git"},
            {ShellDelete, "shell_delete"},
            {ShellMove, "shell_move"},
            {ShellWrite, "shell_write"},
            {Python, "python"},
            {Build, "build"},
            {Read, "read"},
        };
        for (const auto &[rule, op] : order) {
            // An output redirection into a file makes the line a write unless a stronger rule
            // (install, network, git, delete, move) already said what it does.
            if (rule == Python && m_redirects)
                return QStringLiteral("shell_write");
            if (m_rules & rule)
                return QString::fromLatin1(op);
        }
        return m_redirects ? QStringLiteral("shell_write") : QStringLiteral("shell");
    }

private:
    // What the next word means.
    enum class Expect {
        Command,     ///< a command position: prefixes, then the command word
        PrefixArgs,  ///< after sudo/env/…: its -options, then the command word
        Argument,    ///< an argument (nothing to learn from it)
        PkgVerb,     ///< after a package manager: install / add / get?
        DashM,       ///< after python: -m?
        MPip,        ///< after python -m: pip?
        SedInPlace,  ///< after sed: -i?
        RedirTarget, ///< the file of a redirection
    };

    void step()
    {
        ++t_steps;
        const QChar c = m_s[m_i];
        if (m_quote == u'\'') {
            // Single quotes: no escapes; only the closing quote is special for redirections,
            // but separators still start commands (sh -c 'ls; rm x' deletes).
            if (c == u'\'') {
                closeQuote();
                return;
            }
            if (m_wordQuote) {
                ++m_i;
                return;
            }
        } else if (c == u'\\' && m_i + 1 < m_s.size()) {
            // An escaped character is part of the word (\; is no separator, \> no redirection).
            startWord();
            m_i += 2;
            ++t_steps;
            return;
        } else if (m_quote == u'"') {
            if (c == u'"') {
                closeQuote();
                return;
            }
            if (m_wordQuote) {
                ++m_i;
                return;
            }
        } else if ((c == u'\'' || c == u'"') && m_wordStart >= 0) {
            // A quote inside a word (A='x y', --opt="a b") is part of that word.
            m_quote = c.unicode();
            m_wordQuote = true;
            ++m_i;
            return;
        } else if (c == u'\'' || c == u'"') {
            // An opening quote is a command position too: sh -c 'rm -rf x'.
            m_quote = c.unicode();
            commandStart();
            ++m_i;
            return;
        } else if (c == u'>') {
            endWord();
            redirection();
            return;
        } else if (c == u'<') {
            endWord();
            m_expect = Expect::RedirTarget;
            ++m_i;
            return;
        }
        // Quoted or not from here on.
        if (c == u'$' && m_i + 1 < m_s.size() && m_s[m_i + 1] == u'(') {
            endWord();
            commandStart();
            m_i += 2;
            return;
        }
        if (c == u'$' || !endsWord(c) || (m_quote && (c == u'<' || c == u'>'))) {
            startWord();
            ++m_i;
            return;
        }
        endWord();
        switch (c.unicode()) {
        case u';':
        case u'&':
        case u'|':
        case u'\n':
            m_findSegment = false; // find … -delete looks no further than its own command
            commandStart();
            break;
        case u'(':
        case u'`':
            commandStart();
            break;
        default: // blanks, ')' and quote characters inside the other kind of quotes
            break;
        }
        ++m_i;
    }

    void closeQuote()
    {
        if (!m_wordQuote)
            endWord();
        m_quote = 0;
        m_wordQuote = false;
        ++m_i;
    }

    void commandStart() { m_expect = m_afterRedirect = Expect::Command; }

    void startWord()
    {
        if (m_wordStart < 0)
            m_wordStart = m_i;
    }

    // `>`, `>>`, `&>`, `2>`: a write unless it goes to another descriptor (>&2, 2>&1) or to
    // /dev/null. Looks ahead over blanks and at most "/dev/null"; the scan continues after `>`.
    void redirection()
    {
        qsizetype j = m_i + 1;
        if (j < m_s.size() && m_s[j] == u'>')
            ++j;
        m_i = j;
        while (j < m_s.size() && isBlank(m_s[j])) {
            ++j;
            ++t_steps;
        }
        m_expect = Expect::RedirTarget;
        if (j >= m_s.size())
            return;
        const QChar t = m_s[j];
        if (t == u'&') {
            m_i = j + 1; // >&2 duplicates a descriptor; its '&' separates nothing
            return;
        }
        if (endsWord(t) && t != u'\'' && t != u'"')
            return;
        static constexpr QStringView devNull = u"/dev/null";
        const QStringView rest = m_s.mid(j, devNull.size() + 1);
        t_steps += quint64(rest.size());
        if (rest.startsWith(devNull) && (rest.size() == devNull.size() || !isNameChar(rest.back())))
            return;
        m_redirects = true;
    }

    void endWord()
    {
        if (m_wordStart < 0)
            return;
        const QStringView w = m_s.mid(m_wordStart, m_i - m_wordStart);
        m_wordStart = -1;
        word(w);
    }

    void word(QStringView w)
    {
        if (m_findSegment && w == u"-delete")
            m_rules |= ShellDelete;
        switch (m_expect) {
        case Expect::RedirTarget:
            m_expect = m_afterRedirect;
            return;
        case Expect::Argument:
            return;
        case Expect::PkgVerb:
            if (oneOf(w, {u"install", u"add", u"get"}))
                m_rules |= PackageInstall;
            m_expect = m_afterRedirect = Expect::Argument;
            return;
        case Expect::DashM:
            m_expect = m_afterRedirect = w == u"-m" ? Expect::MPip : Expect::Argument;
            return;
        case Expect::MPip:
            m_expect = m_afterRedirect = w == u"pip" ? Expect::PkgVerb : Expect::Argument;
            return;
        case Expect::SedInPlace:
            if (w.startsWith(u"-i") && (w.size() == 2 || !isNameChar(w[2])))
                m_rules |= ShellWrite;
            m_expect = m_afterRedirect = Expect::Argument;
            return;
        case Expect::PrefixArgs:
            if (w.startsWith(u'-'))
                return;
            break;
        case Expect::Command:
            break;
        }
        // A command position: skip prefixes and assignments, then the command word, whose
        // folder (/bin/rm, ./tool) does not matter.
        if (isAssignment(w))
            return;
        const qsizetype slash = w.lastIndexOf(u'/');
        const QStringView name = slash < 0 ? w : w.mid(slash + 1);
        t_steps += quint64(w.size()); // the table comparisons look at the word a few times
        if (isPrefixWord(name)) {
            m_expect = m_afterRedirect = Expect::PrefixArgs;
            return;
        }
        m_rules |= rulesOfName(name);
        if (name == u"find")
            m_findSegment = true;
        Expect next = Expect::Argument;
        if (isPackageManager(name))
            next = Expect::PkgVerb;
        else if (name == u"python" || name == u"python3")
            next = Expect::DashM;
        else if (name == u"sed")
            next = Expect::SedInPlace;
        m_expect = m_afterRedirect = next;
    }

    QStringView m_s;
    qsizetype m_i = 0;
    qsizetype m_wordStart = -1;
    char16_t m_quote = 0;
    bool m_wordQuote = false; ///< the open quote continues a word: its text is opaque
    Expect m_expect = Expect::Command;
    Expect m_afterRedirect = Expect::Command; ///< what follows a redirection's target
    unsigned m_rules = 0;
    bool m_redirects = false;
    bool m_findSegment = false;
};

} // namespace

QString inferShellOperation(const QString &command)
{
    return Scanner(command).classify();
}

namespace detail {

quint64 shellClassifierStepCount()
{
    return t_steps;
}

void resetShellClassifierStepCount()
{
    t_steps = 0;
}

} // namespace detail

} // namespace elsai
