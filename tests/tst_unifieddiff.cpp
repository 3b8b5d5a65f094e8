// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "unifieddiff.h"

#include <QRandomGenerator>
#include <QRegularExpression>
#include <QtTest>

#include <vector>

using namespace elsai;

namespace {

/// Applies a unified diff to `old` as patch(1) would (hunks in order, context checked);
/// a null string when the diff does not apply.
QString applyDiff(const QString &old, const QString &diff)
{
    if (diff.isEmpty())
        return old;
    QStringList oldLines = old.split(QLatin1Char('\n'));
    const bool oldEndsWithNewline = old.isEmpty() || old.endsWith(QLatin1Char('\n'));
    if (oldEndsWithNewline)
        oldLines.removeLast();
    QStringList lines = diff.split(QLatin1Char('\n'));
    lines.removeLast(); // the output ends with a newline
    if (lines.size() < 2 || !lines[0].startsWith(QLatin1String("--- ")) ||
        !lines[1].startsWith(QLatin1String("+++ ")))
        return {};
    static const QRegularExpression header(
        QStringLiteral("^@@ -(\\d+)(?:,(\\d+))? \\+(\\d+)(?:,(\\d+))? @@$"));
    QStringList out;
    qsizetype next = 0;             // next line of `old` not yet copied
    bool newEndsWithNewline = true; // unless a '+' or ' ' line is marked unterminated
    char lastKind = 0;
    for (qsizetype i = 2; i < lines.size(); ++i) {
        const QString &line = lines[i];
        if (line.startsWith(QLatin1String("@@"))) {
            const auto match = header.match(line);
            if (!match.hasMatch())
                return {};
            const qsizetype count = match.captured(2).isEmpty() ? 1 : match.captured(2).toInt();
            const qsizetype start = match.captured(1).toInt() - (count ? 1 : 0);
            if (start < next)
                return {};
            while (next < start)
                out.append(oldLines.value(next++));
            continue;
        }
        if (line == QLatin1String("\\ No newline at end of file")) {
            if (lastKind != '-')
                newEndsWithNewline = false;
            continue;
        }
        const QChar kind = line.isEmpty() ? QChar() : line.at(0);
        const QString text = line.mid(1);
        if (kind == QLatin1Char(' ') || kind == QLatin1Char('-')) {
            if (next >= oldLines.size() || oldLines[next] != text)
                return {};
            ++next;
            if (kind == QLatin1Char(' '))
                out.append(text);
        } else if (kind == QLatin1Char('+')) {
            out.append(text);
        } else {
            return {};
        }
        lastKind = char(kind.unicode());
    }
    if (next < oldLines.size()) {
        // the tail after the last hunk is the old file's, ending and all
        while (next < oldLines.size())
            out.append(oldLines.value(next++));
        newEndsWithNewline = oldEndsWithNewline;
    }
    QString result = out.join(QLatin1Char('\n'));
    if (!out.isEmpty() && newEndsWithNewline)
        result += QLatin1Char('\n');
    return result;
}

/// Lines removed plus added by a diff.
int editCount(const QString &diff)
{
    int n = 0;
    for (const QString &line : diff.split(QLatin1Char('\n'))) {
        if ((line.startsWith(QLatin1Char('-')) && !line.startsWith(QLatin1String("--- "))) ||
            (line.startsWith(QLatin1Char('+')) && !line.startsWith(QLatin1String("+++ "))))
            ++n;
    }
    return n;
}

/// N + M - 2 LCS: the edits of a minimal diff (a quadratic reference, small inputs only).
int minimalEdits(const QStringList &a, const QStringList &b)
{
    std::vector<std::vector<int>> lcs(size_t(a.size() + 1), std::vector<int>(size_t(b.size() + 1)));
    for (qsizetype i = a.size() - 1; i >= 0; --i)
        for (qsizetype j = b.size() - 1; j >= 0; --j)
            lcs[size_t(i)][size_t(j)] = a[i] == b[j] ? lcs[size_t(i + 1)][size_t(j + 1)] + 1
                                                     : std::max(lcs[size_t(i + 1)][size_t(j)],
                                                                lcs[size_t(i)][size_t(j + 1)]);
    return int(a.size() + b.size()) - 2 * lcs[0][0];
}

QString text(const QStringList &lines)
{
    return lines.isEmpty() ? QString() : lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

} // namespace

class TestUnifiedDiff : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exact_data()
    {
        QTest::addColumn<QString>("oldText");
        QTest::addColumn<QString>("newText");
        QTest::addColumn<QString>("expected");
        // clang-format off
        QTest::newRow("equal") << "a\nb\n" << "a\nb\n" << "";
        QTest::newRow("both empty") << "" << "" << "";
        QTest::newRow("one changed, one added")
            << "a\nb\nc\n" << "a\nB\nc\nd\n"
            << "--- old\n+++ new\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n";
        QTest::newRow("new file")
            << "" << "x\n" << "--- old\n+++ new\n@@ -0,0 +1 @@\n+x\n";
        QTest::newRow("deleted file")
            << "x\ny\n" << "" << "--- old\n+++ new\n@@ -1,2 +0,0 @@\n-x\n-y\n";
        QTest::newRow("newline added at the end")
            << "a\nb" << "a\nb\n"
            << "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n";
        QTest::newRow("newline removed at the end")
            << "a\nb\n" << "a\nb"
            << "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n";
        QTest::newRow("unterminated context")
            << "a\nb\nc" << "A\nb\nc"
            << "--- old\n+++ new\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n";
        QTest::newRow("deletions before insertions")
            << "1\n2\n3\n4\n" << "1\nx\ny\n4\n"
            << "--- old\n+++ new\n@@ -1,4 +1,4 @@\n 1\n-2\n-3\n+x\n+y\n 4\n";
        QTest::newRow("carriage return is content")
            << "a\r\n" << "a\n" << "--- old\n+++ new\n@@ -1 +1 @@\n-a\r\n+a\n";
        // clang-format on
    }

    void exact()
    {
        QFETCH(QString, oldText);
        QFETCH(QString, newText);
        QFETCH(QString, expected);
        const QString diff =
            unifiedDiff(oldText, newText, QStringLiteral("old"), QStringLiteral("new"));
        QCOMPARE(diff, expected);
        QCOMPARE(applyDiff(oldText, diff), newText);
    }

    void hunksAndContext()
    {
        QStringList lines;
        for (int i = 1; i <= 20; ++i)
            lines.append(QString::number(i));
        QStringList changed = lines;
        changed[1] = QStringLiteral("two");
        changed[17] = QStringLiteral("eighteen");
        const QString diff =
            unifiedDiff(text(lines), text(changed), QStringLiteral("a"), QStringLiteral("b"));
        QCOMPARE(diff.count(QStringLiteral("@@ -")), 2);
        QVERIFY(diff.contains(QStringLiteral("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n")));
        QVERIFY(diff.contains(
            QStringLiteral("@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n")));
        // Changes six lines apart share one hunk (the gap is not over 2 × context).
        changed = lines;
        changed[4] = QStringLiteral("five");
        changed[11] = QStringLiteral("twelve");
        const QString joined =
            unifiedDiff(text(lines), text(changed), QStringLiteral("a"), QStringLiteral("b"));
        QCOMPARE(joined.count(QStringLiteral("@@ -")), 1);
        // No context at all.
        UnifiedDiffOptions bare;
        bare.context = 0;
        QCOMPARE(
            unifiedDiff(text(lines), text(changed), QStringLiteral("a"), QStringLiteral("b"), bare),
            QStringLiteral("--- a\n+++ b\n@@ -5 +5 @@\n-5\n+five\n@@ -12 +12 @@\n-12\n"
                           "+twelve\n"));
    }

    // Random edits of random texts over a small alphabet (many equal lines, the hard case):
    // every diff applies, and it is minimal (as many edits as N + M - 2 LCS).
    void randomDiffsApplyAndAreMinimal()
    {
        QRandomGenerator rng(20260311);
        for (int round = 0; round < 400; ++round) {
            QStringList a;
            const int n = int(rng.bounded(30));
            for (int i = 0; i < n; ++i)
                a.append(QString(QChar(u'a' + rng.bounded(4))));
            QStringList b = a;
            const int edits = int(rng.bounded(8));
            for (int e = 0; e < edits; ++e) {
                const int pos = b.isEmpty() ? 0 : int(rng.bounded(b.size() + 1));
                switch (rng.bounded(3)) {
                case 0:
                    b.insert(pos, QString(QChar(u'a' + rng.bounded(5))));
                    break;
                case 1:
                    if (pos < b.size())
                        b.removeAt(pos);
                    break;
                default:
                    if (pos < b.size())
                        b[pos] = QString(QChar(u'a' + rng.bounded(5)));
                }
            }
            QString oldText = text(a), newText = text(b);
            if (round % 5 == 1 && oldText.endsWith(QLatin1Char('\n')))
                oldText.chop(1);
            if (round % 7 == 2 && newText.endsWith(QLatin1Char('\n')))
                newText.chop(1);
            const QString diff =
                unifiedDiff(oldText, newText, QStringLiteral("o"), QStringLiteral("n"));
            QCOMPARE(applyDiff(oldText, diff), newText);
        }
        for (int round = 0; round < 300; ++round) {
            QStringList a, b;
            for (int i = 0, n = int(rng.bounded(25)); i < n; ++i)
                a.append(QString(QChar(u'a' + rng.bounded(3))));
            for (int i = 0, n = int(rng.bounded(25)); i < n; ++i)
                b.append(QString(QChar(u'a' + rng.bounded(3))));
            const QString diff =
                unifiedDiff(text(a), text(b), QStringLiteral("o"), QStringLiteral("n"));
            QCOMPARE(applyDiff(text(a), diff), text(b));
            QCOMPARE(editCount(diff), minimalEdits(a, b));
        }
    }

    // Past the work bound the diff stays correct: the region is replaced wholesale.
    void boundedWorkStaysCorrect()
    {
        UnifiedDiffOptions none;
        none.maxCost = 0;
        const QString diff =
            unifiedDiff(QStringLiteral("a\nb\nc\nd\n"), QStringLiteral("a\nx\nc\ny\n"),
                        QStringLiteral("o"), QStringLiteral("n"), none);
        QCOMPARE(diff, QStringLiteral("--- o\n+++ n\n@@ -1,4 +1,4 @@\n a\n-b\n-c\n-d\n+x\n+c\n"
                                      "+y\n"));
        // Two large unrelated texts: bounded, still applies.
        QStringList a, b;
        for (int i = 0; i < 5000; ++i) {
            a.append(QStringLiteral("left %1").arg(i));
            b.append(QStringLiteral("right %1").arg(i % 7 == 0 ? i : -i));
        }
        UnifiedDiffOptions small;
        small.maxCost = 20000;
        const QString big =
            unifiedDiff(text(a), text(b), QStringLiteral("o"), QStringLiteral("n"), small);
        QCOMPARE(applyDiff(text(a), big), text(b));
        QCOMPARE(editCount(big), 10000);
    }

    // A long file with a few edits: linear work, and the minimal answer.
    void longFileFewEdits()
    {
        QStringList a;
        for (int i = 0; i < 50000; ++i)
            a.append(QStringLiteral("line %1").arg(i % 1000)); // repeated lines
        QStringList b = a;
        b[1000] = QStringLiteral("changed");
        b.insert(30000, QStringLiteral("inserted"));
        b.removeAt(49000);
        const QString diff =
            unifiedDiff(text(a), text(b), QStringLiteral("o"), QStringLiteral("n"));
        QCOMPARE(editCount(diff), 4);
        QCOMPARE(applyDiff(text(a), diff), text(b));
    }
};

QTEST_APPLESS_MAIN(TestUnifiedDiff)
#include "tst_unifieddiff.moc"
