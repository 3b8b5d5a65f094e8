// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "highlighter.h"

#include <QFileInfo>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextDocument>

#ifdef HAVE_KSYNTAXHIGHLIGHTING
#include <KSyntaxHighlighting/Definition>
#include <KSyntaxHighlighting/Repository>
#include <KSyntaxHighlighting/SyntaxHighlighter>
#include <KSyntaxHighlighting/Theme>
#endif

namespace elsai {

namespace {

enum class Lang { None, Python, Cpp, JavaScript, TypeScript, Json, Shell, Markdown, Yaml, CMake };

QString langName(Lang lang)
{
    switch (lang) {
    case Lang::Python:
        return QStringLiteral("python");
    case Lang::Cpp:
        return QStringLiteral("cpp");
    case Lang::JavaScript:
        return QStringLiteral("javascript");
    case Lang::TypeScript:
        return QStringLiteral("typescript");
    case Lang::Json:
        return QStringLiteral("json");
    case Lang::Shell:
        return QStringLiteral("shell");
    case Lang::Markdown:
        return QStringLiteral("markdown");
    case Lang::Yaml:
        return QStringLiteral("yaml");
    case Lang::CMake:
        return QStringLiteral("cmake");
    case Lang::None:
        break;
    }
    return QStringLiteral("none");
}

Lang languageFor(const QString &fileName)
{
    const QFileInfo fi(fileName);
    const QString name = fi.fileName().toLower();
    if (name == QLatin1String("cmakelists.txt"))
        return Lang::CMake;
    if (name == QLatin1String(".bashrc") || name == QLatin1String(".profile"))
        return Lang::Shell;
    const QString ext = fi.suffix().toLower();
    static const QHash<QString, Lang> byExt = {
        {QStringLiteral("py"), Lang::Python},
        {QStringLiteral("pyi"), Lang::Python},
        {QStringLiteral("c"), Lang::Cpp},
        {QStringLiteral("h"), Lang::Cpp},
        {QStringLiteral("cc"), Lang::Cpp},
        {QStringLiteral("cpp"), Lang::Cpp},
        {QStringLiteral("cxx"), Lang::Cpp},
        {QStringLiteral("hpp"), Lang::Cpp},
        {QStringLiteral("hh"), Lang::Cpp},
        {QStringLiteral("js"), Lang::JavaScript},
        {QStringLiteral("mjs"), Lang::JavaScript},
        {QStringLiteral("cjs"), Lang::JavaScript},
        {QStringLiteral("jsx"), Lang::JavaScript},
        {QStringLiteral("ts"), Lang::TypeScript},
        {QStringLiteral("tsx"), Lang::TypeScript},
        {QStringLiteral("json"), Lang::Json},
        {QStringLiteral("sh"), Lang::Shell},
        {QStringLiteral("bash"), Lang::Shell},
        {QStringLiteral("zsh"), Lang::Shell},
        {QStringLiteral("md"), Lang::Markdown},
        {QStringLiteral("markdown"), Lang::Markdown},
        {QStringLiteral("yaml"), Lang::Yaml},
        {QStringLiteral("yml"), Lang::Yaml},
        {QStringLiteral("cmake"), Lang::CMake},
    };
    return byExt.value(ext, Lang::None);
}

QTextCharFormat charFormat(const QColor &color, bool bold = false, bool italic = false)
{
    QTextCharFormat f;
    if (color.isValid())
        f.setForeground(color);
    if (bold)
        f.setFontWeight(QFont::Bold);
    f.setFontItalic(italic);
    return f;
}

QString wordsPattern(const QStringList &words)
{
    return QStringLiteral("\\b(?:") + words.join(QLatin1Char('|')) + QStringLiteral(")\\b");
}

/// Rule-based highlighter: single-line rules applied in order (later rules win), then
/// multi-line block comments / strings tracked with the block state.
class BuiltinHighlighter : public QSyntaxHighlighter
{
public:
    BuiltinHighlighter(QTextDocument *document, Lang lang, bool dark) : QSyntaxHighlighter(document)
    {
        // Colours picked for contrast on a white or a near-black editor background.
        const QTextCharFormat keyword =
            charFormat(dark ? QColor(0x56, 0x9c, 0xd6) : QColor(0x00, 0x33, 0x99), true);
        const QTextCharFormat string =
            charFormat(dark ? QColor(0xce, 0x91, 0x78) : QColor(0xa3, 0x15, 0x15));
        const QTextCharFormat number =
            charFormat(dark ? QColor(0xb5, 0xce, 0xa8) : QColor(0x09, 0x86, 0x58));
        m_comment =
            charFormat(dark ? QColor(0x6a, 0x99, 0x55) : QColor(0x00, 0x80, 0x00), false, true);
        const QTextCharFormat other =
            charFormat(dark ? QColor(0xc5, 0x86, 0xc0) : QColor(0x79, 0x5e, 0x26));
        const QRegularExpression numberRe(
            QStringLiteral("\\b(?:0[xX][0-9a-fA-F]+|\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\b"));
        const QRegularExpression dq(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\""));
        const QRegularExpression sq(QStringLiteral("'(?:[^'\\\\]|\\\\.)*'"));

        switch (lang) {
        case Lang::Python:
            add(wordsPattern({QStringLiteral("and"),      QStringLiteral("as"),
                              QStringLiteral("assert"),   QStringLiteral("async"),
                              QStringLiteral("await"),    QStringLiteral("break"),
                              QStringLiteral("class"),    QStringLiteral("continue"),
                              QStringLiteral("def"),      QStringLiteral("del"),
                              QStringLiteral("elif"),     QStringLiteral("else"),
                              QStringLiteral("except"),   QStringLiteral("False"),
                              QStringLiteral("finally"),  QStringLiteral("for"),
                              QStringLiteral("from"),     QStringLiteral("global"),
                              QStringLiteral("if"),       QStringLiteral("import"),
                              QStringLiteral("in"),       QStringLiteral("is"),
                              QStringLiteral("lambda"),   QStringLiteral("None"),
                              QStringLiteral("nonlocal"), QStringLiteral("not"),
                              QStringLiteral("or"),       QStringLiteral("pass"),
                              QStringLiteral("raise"),    QStringLiteral("return"),
                              QStringLiteral("True"),     QStringLiteral("try"),
                              QStringLiteral("while"),    QStringLiteral("with"),
                              QStringLiteral("yield"),    QStringLiteral("self")}),
                keyword);
            add(QStringLiteral("@\\w+"), other);
            addRe(numberRe, number);
            addRe(dq, string);
            addRe(sq, string);
            add(QStringLiteral("#[^\n]*"), m_comment);
            m_blockStart = QRegularExpression(QStringLiteral("\"\"\"|'''"));
            m_blockFormat = string;
            m_blockSameDelimiter = true;
            break;
        case Lang::Cpp:
        case Lang::JavaScript:
        case Lang::TypeScript: {
            QStringList words;
            if (lang == Lang::Cpp) {
                words = {QStringLiteral("auto"),      QStringLiteral("bool"),
                         QStringLiteral("break"),     QStringLiteral("case"),
                         QStringLiteral("char"),      QStringLiteral("class"),
                         QStringLiteral("const"),     QStringLiteral("constexpr"),
                         QStringLiteral("continue"),  QStringLiteral("default"),
                         QStringLiteral("delete"),    QStringLiteral("do"),
                         QStringLiteral("double"),    QStringLiteral("else"),
                         QStringLiteral("enum"),      QStringLiteral("explicit"),
                         QStringLiteral("false"),     QStringLiteral("float"),
                         QStringLiteral("for"),       QStringLiteral("if"),
                         QStringLiteral("inline"),    QStringLiteral("int"),
                         QStringLiteral("long"),      QStringLiteral("namespace"),
                         QStringLiteral("new"),       QStringLiteral("nullptr"),
                         QStringLiteral("override"),  QStringLiteral("private"),
                         QStringLiteral("protected"), QStringLiteral("public"),
                         QStringLiteral("return"),    QStringLiteral("short"),
                         QStringLiteral("static"),    QStringLiteral("struct"),
                         QStringLiteral("switch"),    QStringLiteral("template"),
                         QStringLiteral("this"),      QStringLiteral("throw"),
                         QStringLiteral("true"),      QStringLiteral("try"),
                         QStringLiteral("catch"),     QStringLiteral("typename"),
                         QStringLiteral("unsigned"),  QStringLiteral("using"),
                         QStringLiteral("virtual"),   QStringLiteral("void"),
                         QStringLiteral("while")};
            } else {
                words = {QStringLiteral("async"),      QStringLiteral("await"),
                         QStringLiteral("break"),      QStringLiteral("case"),
                         QStringLiteral("catch"),      QStringLiteral("class"),
                         QStringLiteral("const"),      QStringLiteral("continue"),
                         QStringLiteral("default"),    QStringLiteral("delete"),
                         QStringLiteral("do"),         QStringLiteral("else"),
                         QStringLiteral("export"),     QStringLiteral("extends"),
                         QStringLiteral("false"),      QStringLiteral("finally"),
                         QStringLiteral("for"),        QStringLiteral("from"),
                         QStringLiteral("function"),   QStringLiteral("if"),
                         QStringLiteral("import"),     QStringLiteral("in"),
                         QStringLiteral("instanceof"), QStringLiteral("let"),
                         QStringLiteral("new"),        QStringLiteral("null"),
                         QStringLiteral("of"),         QStringLiteral("return"),
                         QStringLiteral("switch"),     QStringLiteral("this"),
                         QStringLiteral("throw"),      QStringLiteral("true"),
                         QStringLiteral("try"),        QStringLiteral("typeof"),
                         QStringLiteral("undefined"),  QStringLiteral("var"),
                         QStringLiteral("void"),       QStringLiteral("while"),
                         QStringLiteral("yield")};
                if (lang == Lang::TypeScript) {
                    words += {QStringLiteral("interface"), QStringLiteral("type"),
                              QStringLiteral("enum"),      QStringLiteral("implements"),
                              QStringLiteral("private"),   QStringLiteral("public"),
                              QStringLiteral("readonly"),  QStringLiteral("string"),
                              QStringLiteral("number"),    QStringLiteral("boolean"),
                              QStringLiteral("any"),       QStringLiteral("unknown")};
                }
            }
            add(wordsPattern(words), keyword);
            if (lang == Lang::Cpp)
                add(QStringLiteral("^\\s*#\\s*\\w+"), other);
            addRe(numberRe, number);
            addRe(dq, string);
            addRe(sq, string);
            if (lang != Lang::Cpp)
                add(QStringLiteral("`(?:[^`\\\\]|\\\\.)*`"), string);
            add(QStringLiteral("//[^\n]*"), m_comment);
            m_blockStart = QRegularExpression(QStringLiteral("/\\*"));
            m_blockEnd = QRegularExpression(QStringLiteral("\\*/"));
            m_blockFormat = m_comment;
            break;
        }
        case Lang::Json:
            addRe(numberRe, number);
            add(wordsPattern(
                    {QStringLiteral("true"), QStringLiteral("false"), QStringLiteral("null")}),
                keyword);
            addRe(dq, string);
            // Object keys: a string followed by a colon.
            add(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\"(?=\\s*:)"), other);
            break;
        case Lang::Shell:
            add(wordsPattern({QStringLiteral("if"),     QStringLiteral("then"),
                              QStringLiteral("else"),   QStringLiteral("elif"),
                              QStringLiteral("fi"),     QStringLiteral("for"),
                              QStringLiteral("in"),     QStringLiteral("do"),
                              QStringLiteral("done"),   QStringLiteral("while"),
                              QStringLiteral("until"),  QStringLiteral("case"),
                              QStringLiteral("esac"),   QStringLiteral("function"),
                              QStringLiteral("return"), QStringLiteral("local"),
                              QStringLiteral("export"), QStringLiteral("readonly"),
                              QStringLiteral("set"),    QStringLiteral("echo"),
                              QStringLiteral("exit")}),
                keyword);
            add(QStringLiteral("\\$\\{?\\w+\\}?"), other);
            addRe(numberRe, number);
            addRe(dq, string);
            add(QStringLiteral("'[^']*'"), string);
            add(QStringLiteral("(?:^|\\s)#[^\n]*"), m_comment);
            break;
        case Lang::Markdown:
            add(QStringLiteral("^#{1,6}\\s.*"), keyword);
            add(QStringLiteral("\\*\\*[^*]+\\*\\*|__[^_]+__"), charFormat(QColor(), true));
            add(QStringLiteral("(?<![*\\w])\\*[^*\\s][^*]*\\*(?!\\*)"),
                charFormat(QColor(), false, true));
            add(QStringLiteral("`[^`]+`"), string);
            add(QStringLiteral("\\[[^\\]]*\\]\\([^)]*\\)"), other);
            add(QStringLiteral("^\\s*(?:[-*+]|\\d+\\.)\\s"), number);
            m_blockStart = QRegularExpression(QStringLiteral("^\\s*```"));
            m_blockEnd = QRegularExpression(QStringLiteral("^\\s*```"));
            m_blockFormat = string;
            m_blockWholeLine = true;
            break;
        case Lang::Yaml:
            add(QStringLiteral("^\\s*(?:-\\s+)?[\\w.\\-\"']+\\s*(?=:(?:\\s|$))"), keyword);
            add(wordsPattern({QStringLiteral("true"), QStringLiteral("false"),
                              QStringLiteral("null"), QStringLiteral("yes"), QStringLiteral("no")}),
                other);
            addRe(numberRe, number);
            addRe(dq, string);
            addRe(sq, string);
            add(QStringLiteral("(?:^|\\s)#[^\n]*"), m_comment);
            break;
        case Lang::CMake:
            add(QStringLiteral("^\\s*\\w+(?=\\s*\\()"), keyword);
            add(wordsPattern({QStringLiteral("PUBLIC"), QStringLiteral("PRIVATE"),
                              QStringLiteral("INTERFACE"), QStringLiteral("REQUIRED"),
                              QStringLiteral("COMPONENTS"), QStringLiteral("STATIC"),
                              QStringLiteral("SHARED"), QStringLiteral("TARGET"),
                              QStringLiteral("NOT"), QStringLiteral("AND"), QStringLiteral("OR")}),
                other);
            add(QStringLiteral("\\$\\{\\w+\\}"), other);
            addRe(numberRe, number);
            addRe(dq, string);
            add(QStringLiteral("#[^\n]*"), m_comment);
            break;
        case Lang::None:
            break;
        }
    }

protected:
    void highlightBlock(const QString &text) override
    {
        for (const Rule &rule : std::as_const(m_rules)) {
            auto it = rule.re.globalMatch(text);
            while (it.hasNext()) {
                const QRegularExpressionMatch m = it.next();
                setFormat(int(m.capturedStart()), int(m.capturedLength()), rule.format);
            }
        }
        highlightMultiline(text);
    }

private:
    struct Rule
    {
        QRegularExpression re;
        QTextCharFormat format;
    };

    void add(const QString &pattern, const QTextCharFormat &f)
    {
        addRe(QRegularExpression(pattern), f);
    }
    void addRe(const QRegularExpression &re, const QTextCharFormat &f) { m_rules.append({re, f}); }

    /// Block state: 0 normal, 1 inside a multi-line construct (""" or /* or a fence),
    /// 2 inside a ''' string (so the right delimiter closes it on a later line).
    void highlightMultiline(const QString &text)
    {
        setCurrentBlockState(0);
        if (m_blockStart.pattern().isEmpty())
            return;
        const int len = int(text.size());
        if (m_blockWholeLine) {
            const bool fence = m_blockStart.match(text).hasMatch();
            const bool inside = previousBlockState() == 1;
            if (inside || fence)
                setFormat(0, len, m_blockFormat);
            setCurrentBlockState(inside != fence ? 1 : 0);
            return;
        }
        qsizetype start = 0;
        qsizetype pos = 0;
        QString delimiter;
        if (previousBlockState() >= 1) {
            delimiter =
                previousBlockState() == 2 ? QStringLiteral("'''") : QStringLiteral("\"\"\"");
        } else {
            const QRegularExpressionMatch m = m_blockStart.match(text);
            if (!m.hasMatch())
                return;
            start = m.capturedStart();
            delimiter = m.captured();
            pos = start + m.capturedLength();
        }
        for (;;) {
            qsizetype end = -1;
            qsizetype endLen = 0;
            if (m_blockSameDelimiter) {
                end = text.indexOf(delimiter, pos);
                endLen = delimiter.size();
            } else if (const QRegularExpressionMatch e = m_blockEnd.match(text, pos);
                       e.hasMatch()) {
                end = e.capturedStart();
                endLen = e.capturedLength();
            }
            if (end < 0) {
                setFormat(int(start), len - int(start), m_blockFormat);
                setCurrentBlockState(delimiter == QLatin1String("'''") ? 2 : 1);
                return;
            }
            setFormat(int(start), int(end + endLen - start), m_blockFormat);
            const QRegularExpressionMatch next = m_blockStart.match(text, end + endLen);
            if (!next.hasMatch())
                return;
            start = next.capturedStart();
            delimiter = next.captured();
            pos = start + next.capturedLength();
        }
    }

    QList<Rule> m_rules;
    QTextCharFormat m_comment;
    QRegularExpression m_blockStart;
    QRegularExpression m_blockEnd;
    QTextCharFormat m_blockFormat;
    bool m_blockSameDelimiter = false;
    bool m_blockWholeLine = false;
};

#ifdef HAVE_KSYNTAXHIGHLIGHTING
KSyntaxHighlighting::Repository &repository()
{
    // Loading the definitions is slow: once per process, on the GUI thread.
    static KSyntaxHighlighting::Repository repo;
    return repo;
}
#endif

} // namespace

QString attachHighlighter(QTextDocument *document, const QString &fileName, bool darkPalette)
{
    if (!document)
        return QStringLiteral("none");
#ifdef HAVE_KSYNTAXHIGHLIGHTING
    {
        KSyntaxHighlighting::Repository &repo = repository();
        const KSyntaxHighlighting::Definition def = repo.definitionForFileName(fileName);
        if (def.isValid()) {
            auto *h = new KSyntaxHighlighting::SyntaxHighlighter(document);
            const KSyntaxHighlighting::Theme theme =
                repo.defaultTheme(darkPalette ? KSyntaxHighlighting::Repository::DarkTheme
                                              : KSyntaxHighlighting::Repository::LightTheme);
            h->setTheme(theme);
            h->setDefinition(def);
            return QStringLiteral("ksyntaxhighlighting:%1:%2").arg(def.name(), theme.name());
        }
    }
#endif
    return attachBuiltinHighlighter(document, fileName, darkPalette);
}

QString attachBuiltinHighlighter(QTextDocument *document, const QString &fileName, bool darkPalette)
{
    const Lang lang = document ? languageFor(fileName) : Lang::None;
    if (lang == Lang::None)
        return QStringLiteral("none");
    new BuiltinHighlighter(document, lang, darkPalette);
    return QStringLiteral("builtin:") + langName(lang);
}

bool hasKSyntaxHighlighting()
{
#ifdef HAVE_KSYNTAXHIGHLIGHTING
    return true;
#else
    return false;
#endif
}

} // namespace elsai
