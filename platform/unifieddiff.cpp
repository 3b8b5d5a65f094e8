// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "unifieddiff.h"

#include <QHash>

#include <algorithm>
#include <vector>

namespace elsai {

namespace {

/// One side split into lines, each interned as an id (equal lines, equal ids: the comparison
/// then works on integers). A last line without '\n' gets an id of its own kind, so it never
/// equals the same text with a newline.
struct Lines
{
    std::vector<QStringView> text;
    std::vector<int> id;
    bool lastHasNewline = true;
};

class Interner
{
public:
    int idOf(QStringView line, bool newline)
    {
        QHash<QStringView, int> &table = newline ? m_lines : m_unterminated;
        const auto it = table.constFind(line);
        if (it != table.cend())
            return *it;
        const int id = m_next++;
        table.insert(line, id);
        return id;
    }

private:
    QHash<QStringView, int> m_lines;
    QHash<QStringView, int> m_unterminated;
    int m_next = 0;
};

Lines splitLines(QStringView text, Interner &interner)
{
    Lines lines;
    qsizetype start = 0;
    while (start < text.size()) {
        const qsizetype end = text.indexOf(QLatin1Char('\n'), start);
        const bool newline = end >= 0;
        const QStringView line = text.mid(start, (newline ? end : text.size()) - start);
        lines.text.push_back(line);
        lines.id.push_back(interner.idOf(line, newline));
        if (!newline) {
            lines.lastHasNewline = false;
            break;
        }
        start = end + 1;
    }
    return lines;
}

/// Myers' linear-space comparison: marks the lines of `a` removed and of `b` added.
class Differ
{
public:
    Differ(const std::vector<int> &a, const std::vector<int> &b, qint64 budget)
        : m_a(a), m_b(b), m_removed(a.size(), false), m_added(b.size(), false), m_budget(budget)
    {
        const size_t diagonals = 2 * (a.size() + b.size()) + 3;
        m_forward.resize(diagonals);
        m_backward.resize(diagonals);
    }

    void run() { compare(0, int(m_a.size()), 0, int(m_b.size())); }
    const std::vector<bool> &removed() const { return m_removed; }
    const std::vector<bool> &added() const { return m_added; }

private:
    struct Split
    {
        int x, y; // the first subproblem ends here: a[..x), b[..y)
        int u, v; // the second starts here: a[u..), b[v..)
    };

    void compare(int aLo, int aHi, int bLo, int bHi)
    {
        while (aLo < aHi && bLo < bHi && m_a[size_t(aLo)] == m_b[size_t(bLo)]) {
            ++aLo;
            ++bLo;
        }
        while (aLo < aHi && bLo < bHi && m_a[size_t(aHi - 1)] == m_b[size_t(bHi - 1)]) {
            --aHi;
            --bHi;
        }
        // With no common head and tail, both sides non-empty means two edits or more, and
        // the split halves them: the recursion always shrinks (depth ~ log D).
        Split split;
        if (aLo == aHi || bLo == bHi || !middleSnake(aLo, aHi, bLo, bHi, &split)) {
            std::fill(m_removed.begin() + aLo, m_removed.begin() + aHi, true);
            std::fill(m_added.begin() + bLo, m_added.begin() + bHi, true);
            return;
        }
        compare(aLo, split.x, bLo, split.y);
        compare(split.u, aHi, split.v, bHi);
    }

    // The furthest-reaching paths from both corners, D steps each, until they overlap (Myers
    // 1986, section 4b). V arrays are indexed by diagonal k = x - y, offset by `mid`. False
    // when the budget ran out.
    bool middleSnake(int aLo, int aHi, int bLo, int bHi, Split *split)
    {
        const int n = aHi - aLo;
        const int m = bHi - bLo;
        const int delta = n - m;
        const bool odd = (delta & 1) != 0;
        const int maxD = (n + m + 1) / 2;
        const int mid = maxD + 1;
        int *vf = m_forward.data();
        int *vb = m_backward.data();
        vf[mid + 1] = 0;
        vb[mid + 1] = 0;
        const int *a = m_a.data() + aLo;
        const int *b = m_b.data() + bLo;
        for (int d = 0; d <= maxD; ++d) {
            m_budget -= 2 * d + 1;
            if (m_budget < 0)
                return false;
            for (int k = -d; k <= d; k += 2) {
                int x = (k == -d || (k != d && vf[mid + k - 1] < vf[mid + k + 1]))
                            ? vf[mid + k + 1]
                            : vf[mid + k - 1] + 1;
                int y = x - k;
                const int x0 = x, y0 = y;
                while (x < n && y < m && a[x] == b[y]) {
                    ++x;
                    ++y;
                }
                m_budget -= x - x0;
                vf[mid + k] = x;
                const int kb = delta - k; // the same diagonal, seen from the other corner
                if (odd && kb >= -(d - 1) && kb <= d - 1 && x + vb[mid + kb] >= n) {
                    *split = {aLo + x0, bLo + y0, aLo + x, bLo + y};
                    return true;
                }
            }
            m_budget -= 2 * d + 1;
            if (m_budget < 0)
                return false;
            for (int k = -d; k <= d; k += 2) {
                // Runs on the reversed sequences: x counts lines from the end.
                int x = (k == -d || (k != d && vb[mid + k - 1] < vb[mid + k + 1]))
                            ? vb[mid + k + 1]
                            : vb[mid + k - 1] + 1;
                int y = x - k;
                const int x0 = x, y0 = y;
                while (x < n && y < m && a[n - 1 - x] == b[m - 1 - y]) {
                    ++x;
                    ++y;
                }
                m_budget -= x - x0;
                vb[mid + k] = x;
                const int kf = delta - k;
                if (!odd && kf >= -d && kf <= d && x + vf[mid + kf] >= n) {
                    *split = {aLo + n - x, bLo + m - y, aLo + n - x0, bLo + m - y0};
                    return true;
                }
            }
        }
        return false; // not reached: the paths meet by D = maxD
    }

    const std::vector<int> &m_a;
    const std::vector<int> &m_b;
    std::vector<bool> m_removed;
    std::vector<bool> m_added;
    std::vector<int> m_forward;
    std::vector<int> m_backward;
    qint64 m_budget;
};

struct Op
{
    char kind; // ' ', '-', '+'
    int line;  // index into a (' ' and '-') or b ('+')
};

} // namespace

QString unifiedDiff(QStringView oldText, QStringView newText, const QString &oldName,
                    const QString &newName, const UnifiedDiffOptions &options)
{
    if (oldText == newText)
        return {};
    Interner interner;
    const Lines a = splitLines(oldText, interner);
    const Lines b = splitLines(newText, interner);
    Differ differ(a.id, b.id, qMax<qint64>(0, options.maxCost));
    differ.run();

    std::vector<Op> ops;
    ops.reserve(a.id.size() + b.id.size());
    {
        const std::vector<bool> &removed = differ.removed();
        const std::vector<bool> &added = differ.added();
        size_t i = 0, j = 0;
        while (i < a.id.size() || j < b.id.size()) {
            if (i < a.id.size() && (removed[i] || j >= b.id.size())) {
                ops.push_back({'-', int(i++)});
            } else if (j < b.id.size() && (added[j] || i >= a.id.size())) {
                ops.push_back({'+', int(j++)});
            } else {
                ops.push_back({' ', int(i)});
                ++i;
                ++j;
            }
        }
    }

    const int context = qMax(0, options.context);
    const auto total = qsizetype(ops.size());
    auto lineOf = [&](const Op &op) -> const Lines & { return op.kind == '+' ? b : a; };
    auto range = [](qsizetype start, qsizetype count) {
        // diff -u: "l" for one line, "l,0" naming the line before an empty side
        if (count == 1)
            return QString::number(start + 1);
        return QStringLiteral("%1,%2").arg(count ? start + 1 : start).arg(count);
    };
    QString out;
    qsizetype k = 0;
    qsizetype oldLine = 0; // lines of each side before ops[k]
    qsizetype newLine = 0;
    while (k < total) {
        if (ops[size_t(k)].kind == ' ') {
            ++oldLine;
            ++newLine;
            ++k;
            continue;
        }
        // A change at k: the hunk starts `context` lines earlier and runs until a gap of
        // more than 2 * context unchanged lines.
        const qsizetype start = qMax<qsizetype>(0, k - context);
        qsizetype lastChange = k;
        for (qsizetype x = k; x < total; ++x) {
            if (ops[size_t(x)].kind != ' ')
                lastChange = x;
            else if (x - lastChange > 2 * context)
                break;
        }
        const qsizetype end = qMin(total, lastChange + context + 1);
        const qsizetype back = k - start;
        qsizetype oldCount = 0;
        qsizetype newCount = 0;
        for (qsizetype x = start; x < end; ++x) {
            oldCount += ops[size_t(x)].kind != '+';
            newCount += ops[size_t(x)].kind != '-';
        }
        if (out.isEmpty())
            out = QStringLiteral("--- %1\n+++ %2\n").arg(oldName, newName);
        out += QStringLiteral("@@ -%1 +%2 @@\n")
                   .arg(range(oldLine - back, oldCount), range(newLine - back, newCount));
        for (qsizetype x = start; x < end; ++x) {
            const Op &op = ops[size_t(x)];
            const Lines &side = lineOf(op);
            out += QLatin1Char(op.kind);
            out += side.text[size_t(op.line)];
            out += QLatin1Char('\n');
            if (!side.lastHasNewline && size_t(op.line) + 1 == side.text.size())
                out += QLatin1String("\\ No newline at end of file\n");
        }
        for (qsizetype x = k; x < end; ++x) {
            oldLine += ops[size_t(x)].kind != '+';
            newLine += ops[size_t(x)].kind != '-';
        }
        k = end;
    }
    return out;
}

} // namespace elsai
