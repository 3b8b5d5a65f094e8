// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "glob.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace elsai {

namespace detail {
// Test hook (declared by tst_glob): matching work done on this thread, counted so the tests can
// show that matching stays linear without timing anything.
quint64 globStepCount();
void resetGlobStepCount();
} // namespace detail

namespace {

thread_local quint64 t_globSteps = 0;

// One code point at `i`; a surrogate pair counts as one character for `?` and classes.
inline char32_t codePointAt(QStringView s, qsizetype i, qsizetype *len)
{
    const QChar c = s[i];
    if (c.isHighSurrogate() && i + 1 < s.size() && s[i + 1].isLowSurrogate()) {
        *len = 2;
        return QChar::surrogateToUcs4(c, s[i + 1]);
    }
    *len = 1;
    return c.unicode();
}

enum class NamedClass : quint8 {
    Alnum,
    Alpha,
    Blank,
    Cntrl,
    Digit,
    Graph,
    Lower,
    Print,
    Punct,
    Space,
    Upper,
    Xdigit
};

bool namedClassFromName(QStringView name, NamedClass *out)
{
    static const std::pair<const char *, NamedClass> names[] = {
        {"alnum", NamedClass::Alnum}, {"alpha", NamedClass::Alpha}, {"blank", NamedClass::Blank},
        {"cntrl", NamedClass::Cntrl}, {"digit", NamedClass::Digit}, {"graph", NamedClass::Graph},
        {"lower", NamedClass::Lower}, {"print", NamedClass::Print}, {"punct", NamedClass::Punct},
        {"space", NamedClass::Space}, {"upper", NamedClass::Upper}, {"xdigit", NamedClass::Xdigit},
    };
    for (const auto &[n, cls] : names) {
        if (name == QLatin1StringView(n)) {
            *out = cls;
            return true;
        }
    }
    return false;
}

bool inNamedClass(NamedClass cls, char32_t c)
{
    switch (cls) {
    case NamedClass::Alnum:
        return QChar::isLetterOrNumber(c);
    case NamedClass::Alpha:
        return QChar::isLetter(c);
    case NamedClass::Blank:
        return c == U' ' || c == U'\t';
    case NamedClass::Cntrl:
        return c < 0x20 || c == 0x7f;
    case NamedClass::Digit:
        return c >= U'0' && c <= U'9';
    case NamedClass::Graph:
        return QChar::isPrint(c) && !QChar::isSpace(c);
    case NamedClass::Lower:
        return QChar::isLower(c);
    case NamedClass::Print:
        return QChar::isPrint(c);
    case NamedClass::Punct:
        return QChar::isPunct(c) || QChar::isSymbol(c);
    case NamedClass::Space:
        return QChar::isSpace(c);
    case NamedClass::Upper:
        return QChar::isUpper(c);
    case NamedClass::Xdigit:
        return (c >= U'0' && c <= U'9') || (c >= U'a' && c <= U'f') || (c >= U'A' && c <= U'F');
    }
    return false;
}

struct CharClass
{
    bool negated = false;
    std::vector<std::pair<char32_t, char32_t>> ranges;
    std::vector<NamedClass> named;

    bool matches(char32_t c) const
    {
        if (c == U'/')
            return false; // never, even negated
        bool in = false;
        for (const auto &[lo, hi] : ranges) {
            if (c >= lo && c <= hi) {
                in = true;
                break;
            }
        }
        if (!in) {
            for (NamedClass n : named) {
                if (inNamedClass(n, c)) {
                    in = true;
                    break;
                }
            }
        }
        return in != negated;
    }
};

struct Token
{
    enum Kind : quint8 { Literal, AnyChar, Star, Class };
    Kind kind = Literal;
    char32_t ch = 0; ///< Literal
    int cls = -1;    ///< Class: index into Data::classes
};

struct Segment
{
    bool globstar = false; ///< the whole segment is `**`
    std::vector<Token> tokens;
};

} // namespace

struct GlobPattern::Data
{
    QString pattern;
    bool valid = false;
    bool dirOnly = false;
    /// Unanchored single-name pattern: only a path's last segment (or a parent's) matters,
    /// which spares the segment automaton for the most common patterns.
    bool nameOnly = false;
    std::vector<Segment> segments;
    std::vector<CharClass> classes;

    bool parse();
    bool parseClass(QStringView s, qsizetype *pos);
    bool tokenMatches(const Token &t, char32_t c) const
    {
        switch (t.kind) {
        case Token::Literal:
            return t.ch == c;
        case Token::AnyChar:
            return true;
        case Token::Class:
            return classes[size_t(t.cls)].matches(c);
        case Token::Star:
            break;
        }
        return false;
    }
    bool matchSegment(const Segment &seg, QStringView str, quint64 &steps) const;
    bool run(QStringView path, bool isDir, bool anyPrefix) const;
};

// `*pos` is at '['; on success it is left just past the closing ']'.
bool GlobPattern::Data::parseClass(QStringView s, qsizetype *pos)
{
    const qsizetype n = s.size();
    qsizetype j = *pos + 1;
    CharClass cc;
    if (j < n && (s[j] == u'!' || s[j] == u'^')) {
        cc.negated = true;
        ++j;
    }
    bool first = true; // a ']' right after '[' or '[!' is a literal
    for (;;) {
        if (j >= n)
            return false;
        qsizetype len;
        char32_t c = codePointAt(s, j, &len);
        if (c == U']' && !first) {
            ++j;
            break;
        }
        first = false;
        if (c == U'[' && j + 1 < n && s[j + 1] == u':') {
            const qsizetype end = s.indexOf(u":]", j + 2);
            if (end >= 0) {
                NamedClass named;
                if (!namedClassFromName(s.mid(j + 2, end - j - 2), &named))
                    return false;
                cc.named.push_back(named);
                j = end + 2;
                continue;
            }
        }
        if (c == U'\\') {
            if (++j >= n)
                return false;
            c = codePointAt(s, j, &len);
        }
        j += len;
        char32_t hi = c;
        if (j + 1 < n && s[j] == u'-' && s[j + 1] != u']') {
            ++j;
            hi = codePointAt(s, j, &len);
            if (hi == U'\\') {
                if (++j >= n)
                    return false;
                hi = codePointAt(s, j, &len);
            }
            j += len;
        }
        if (c <= hi) // a reversed range matches nothing
            cc.ranges.emplace_back(c, hi);
    }
    classes.push_back(std::move(cc));
    *pos = j;
    return true;
}

bool GlobPattern::Data::parse()
{
    const QStringView s(pattern);
    const qsizetype n = s.size();
    if (n == 0)
        return false;

    bool anchored = s[0] == u'/';
    Segment cur;
    int stars = 0;      // unescaped `*` in the current segment
    bool other = false; // anything else in the current segment
    auto finishSegment = [&] {
        if (!cur.tokens.empty()) { // empty segments (`a//b`, leading `/`) are dropped
            cur.globstar = stars == 2 && !other;
            segments.push_back(std::move(cur));
        }
        cur = Segment();
        stars = 0;
        other = false;
    };

    qsizetype i = 0;
    while (i < n) {
        qsizetype len;
        const char32_t c = codePointAt(s, i, &len);
        dirOnly = false;
        switch (c) {
        case U'/':
            finishSegment();
            dirOnly = true;
            i += len;
            continue;
        case U'*':
            ++stars;
            // `a**b` is `a*b`; collapsing runs keeps the matcher's work down
            if (cur.tokens.empty() || cur.tokens.back().kind != Token::Star)
                cur.tokens.push_back({Token::Star, 0, -1});
            i += len;
            continue;
        case U'?':
            cur.tokens.push_back({Token::AnyChar, 0, -1});
            i += len;
            break;
        case U'[':
            if (!parseClass(s, &i))
                return false; // unclosed `[` or unknown `[:name:]`
            cur.tokens.push_back({Token::Class, 0, int(classes.size() - 1)});
            break;
        case U'\\':
            if (i + 1 >= n)
                return false; // a trailing backslash escapes nothing
            i += 1;
            cur.tokens.push_back({Token::Literal, codePointAt(s, i, &len), -1});
            i += len;
            break;
        default:
            cur.tokens.push_back({Token::Literal, c, -1});
            i += len;
            break;
        }
        other = true;
    }
    finishSegment();
    if (segments.empty())
        return false;

    anchored = anchored || segments.size() > 1;
    if (!anchored && !segments.front().globstar) {
        nameOnly = true;
        segments.insert(segments.begin(), Segment{true, {{Token::Star, 0, -1}}});
    }
    return true;
}

// Classic wildcard matching with a single backtrack point: within one segment `*` never has
// to give back more than the last star took, so the work is O(len(str) * len(tokens)).
bool GlobPattern::Data::matchSegment(const Segment &seg, QStringView str, quint64 &steps) const
{
    const std::vector<Token> &t = seg.tokens;
    const size_t m = t.size();
    const qsizetype n = str.size();
    size_t p = 0;
    qsizetype s = 0;
    size_t starP = size_t(-1);
    qsizetype starS = 0;
    while (s < n) {
        ++steps;
        if (p < m && t[p].kind == Token::Star) {
            starP = p++;
            starS = s;
            continue;
        }
        qsizetype len;
        const char32_t c = codePointAt(str, s, &len);
        if (p < m && tokenMatches(t[p], c)) {
            ++p;
            s += len;
            continue;
        }
        if (starP == size_t(-1))
            return false;
        p = starP + 1;
        codePointAt(str, starS, &len);
        starS += len;
        s = starS;
    }
    while (p < m && t[p].kind == Token::Star)
        ++p;
    return p == m;
}

// Runs the pattern's segments as an NFA over the path's segments: state i means "segments
// [0, i) matched". A `**` state loops on any segment; a trailing `**` needs at least one.
// Work is O(#path segments * #pattern segments) plus the segment matches, so a chain of `**`
// cannot blow up. With `anyPrefix`, every folder prefix of the path is tested along the way.
bool GlobPattern::Data::run(QStringView path, bool isDir, bool anyPrefix) const
{
    quint64 steps = 0;
    bool matched = false;
    const size_t k = segments.size();
    std::vector<char> cur;
    std::vector<char> next;
    if (!nameOnly) {
        cur.assign(k + 1, 0);
        next.assign(k + 1, 0);
        cur[0] = 1;
        for (size_t i = 0; i + 1 < k && cur[i] && segments[i].globstar; ++i)
            cur[i + 1] = 1;
    }

    const qsizetype n = path.size();
    qsizetype pos = 0;
    while (pos < n && !matched) {
        ++steps;
        qsizetype end = path.indexOf(u'/', pos);
        if (end < 0)
            end = n;
        const QStringView seg = path.mid(pos, end - pos);
        pos = end + 1;
        if (seg.isEmpty())
            continue; // tolerate `a//b` and a leading `/`
        qsizetype rest = pos;
        while (rest < n && path[rest] == u'/')
            ++rest;
        const bool isLast = rest >= n;
        const bool segIsDir = isLast ? isDir : true;
        const bool candidate = (isLast || anyPrefix) && (!dirOnly || segIsDir);

        if (nameOnly) {
            if (candidate && matchSegment(segments[1], seg, steps))
                matched = true;
            continue;
        }

        std::fill(next.begin(), next.end(), 0);
        bool alive = false;
        for (size_t i = 0; i < k; ++i) {
            ++steps;
            if (!cur[i])
                continue;
            if (segments[i].globstar) {
                next[i] = 1;
                if (i + 1 == k)
                    next[k] = 1;
                alive = true;
            } else if (matchSegment(segments[i], seg, steps)) {
                next[i + 1] = 1;
                alive = true;
            }
        }
        // zero-folder step of a non-trailing `**` (states only move forward)
        for (size_t i = 0; i + 1 < k; ++i) {
            if (next[i] && segments[i].globstar)
                next[i + 1] = 1;
        }
        cur.swap(next);
        if (!alive)
            break;
        if (cur[k] && candidate)
            matched = true;
    }
    t_globSteps += steps;
    return matched;
}

GlobPattern::GlobPattern(const QString &pattern)
{
    auto data = std::make_shared<Data>();
    data->pattern = pattern;
    data->valid = data->parse();
    if (!data->valid) {
        data->segments.clear();
        data->classes.clear();
        data->nameOnly = false;
    }
    d = std::move(data);
}

GlobPattern::~GlobPattern() = default;
GlobPattern::GlobPattern(const GlobPattern &) = default;
GlobPattern &GlobPattern::operator=(const GlobPattern &) = default;

const QString &GlobPattern::pattern() const
{
    return d->pattern;
}

bool GlobPattern::isValid() const
{
    return d->valid;
}

bool GlobPattern::directoryOnly() const
{
    return d->valid && d->dirOnly;
}

bool GlobPattern::matches(QStringView relPath, bool isDir) const
{
    return d->valid && d->run(relPath, isDir, false);
}

bool GlobPattern::matchesPathOrParent(QStringView relPath, bool isDir) const
{
    return d->valid && d->run(relPath, isDir, true);
}

GlobSet::GlobSet(const QStringList &patterns)
{
    m_patterns.reserve(patterns.size());
    for (const QString &p : patterns)
        m_patterns.append(GlobPattern(p));
}

int GlobSet::matchIndex(QStringView relPath, bool isDir) const
{
    for (qsizetype i = 0; i < m_patterns.size(); ++i) {
        if (m_patterns[i].matches(relPath, isDir))
            return int(i);
    }
    return -1;
}

bool GlobSet::matchesPathOrParent(QStringView relPath, bool isDir) const
{
    // One pass per pattern: the automaton reports folder prefixes as it goes, so this stays
    // linear in the path instead of re-matching every parent.
    for (const GlobPattern &p : m_patterns) {
        if (p.matchesPathOrParent(relPath, isDir))
            return true;
    }
    return false;
}

namespace detail {

quint64 globStepCount()
{
    return t_globSteps;
}

void resetGlobStepCount()
{
    t_globSteps = 0;
}

} // namespace detail

} // namespace elsai
