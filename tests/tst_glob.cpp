// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "glob.h"
#include "types.h"

#include <QtTest>

namespace elsai::detail {
// Test hook of glob.cpp: matching work done on this thread.
quint64 globStepCount();
void resetGlobStepCount();
} // namespace elsai::detail

using namespace elsai;

class TestGlob : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void validity_data();
    void validity();
    void matches_data();
    void matches();
    void defaultExcludes_data();
    void defaultExcludes();
    void defaultIncludes_data();
    void defaultIncludes();
    void pathOrParent_data();
    void pathOrParent();
    void matchIndexIsFirstMatch();
    void invalidPatternMatchesNothing();
    void pathological_data();
    void pathological();
    void deepPathOrParentIsLinear();
};

void TestGlob::validity_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<bool>("dirOnly");

    QTest::newRow("empty") << "" << false << false;
    QTest::newRow("only slash") << "/" << false << false;
    QTest::newRow("unclosed class") << "[abc" << false << false;
    QTest::newRow("unclosed class at end") << "a[" << false << false;
    QTest::newRow("unclosed negated class") << "[!" << false << false;
    QTest::newRow("empty class is unclosed") << "[]" << false << false;
    QTest::newRow("unknown named class") << "[[:nope:]]" << false << false;
    QTest::newRow("trailing backslash") << "abc\\" << false << false;
    QTest::newRow("bracket as first class member") << "[]]" << true << false;
    QTest::newRow("plain name") << "*.py" << true << false;
    QTest::newRow("globstar") << "**" << true << false;
    QTest::newRow("folder only") << "secrets/" << true << true;
    QTest::newRow("anchored folder only") << "/build/" << true << true;
    QTest::newRow("escaped trailing slash") << "a\\/" << true << false;
    QTest::newRow("named class") << "[[:digit:]]" << true << false;
}

void TestGlob::validity()
{
    QFETCH(QString, pattern);
    QFETCH(bool, valid);
    QFETCH(bool, dirOnly);
    const GlobPattern p(pattern);
    QCOMPARE(p.pattern(), pattern);
    QCOMPARE(p.isValid(), valid);
    QCOMPARE(p.directoryOnly(), dirOnly);
}

void TestGlob::matches_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("isDir");
    QTest::addColumn<bool>("expected");

    // `*` and `?`
    // clang-format off
    QTest::newRow("star suffix top") << "*.py" << "a.py" << false << true;
    QTest::newRow("star suffix nested") << "*.py" << "x/y/a.py" << false << true;
    QTest::newRow("star suffix other ext") << "*.py" << "a.pyc" << false << false;
    QTest::newRow("star matches empty") << "*.py" << ".py" << false << true;
    QTest::newRow("star matches dotfile") << "*" << ".env" << false << true;
    QTest::newRow("star matches leading dot") << "*.md" << ".hidden.md" << false << true;
    QTest::newRow("star never crosses slash") << "/a*b" << "a/x/b" << false << false;
    QTest::newRow("star in middle segment") << "a/*/c" << "a/b/c" << false << true;
    QTest::newRow("star is one segment only") << "a/*/c" << "a/b/x/c" << false << false;
    QTest::newRow("double star inside segment is star") << "a**b" << "axyb" << false << true;
    QTest::newRow("double star inside segment no slash") << "/a**b" << "ax/yb" << false << false;
    QTest::newRow("question one char") << "?.py" << "a.py" << false << true;
    QTest::newRow("question not two chars") << "?.py" << "ab.py" << false << false;
    QTest::newRow("question not slash") << "a?b" << "a/b" << false << false;
    QTest::newRow("question non-ascii") << "?.txt" << "é.txt" << false << true;
    QTest::newRow("question surrogate pair") << "?.txt" << "\U0001F600.txt" << false << true;
    QTest::newRow("case sensitive") << "*.PY" << "a.py" << false << false;
    QTest::newRow("literal dotfile") << ".env" << ".env" << false << true;
    QTest::newRow("literal dotfile nested") << ".env" << "app/.env" << false << true;
    QTest::newRow("literal is whole name") << ".env" << ".env.local" << false << false;
    // clang-format on

    // classes
    // clang-format off
    QTest::newRow("class member") << "[abc].py" << "a.py" << false << true;
    QTest::newRow("class member nested") << "[abc].py" << "pkg/c.py" << false << true;
    QTest::newRow("class non member") << "[abc].py" << "d.py" << false << false;
    QTest::newRow("class is one char") << "[abc].py" << "ab.py" << false << false;
    QTest::newRow("class is not literal") << "[abc].py" << "[abc].py" << false << false;
    QTest::newRow("class range in") << "file[0-9].txt" << "file7.txt" << false << true;
    QTest::newRow("class range out") << "file[0-9].txt" << "filex.txt" << false << false;
    QTest::newRow("class bang negation") << "[!a].py" << "b.py" << false << true;
    QTest::newRow("class bang negation excludes") << "[!a].py" << "a.py" << false << false;
    QTest::newRow("class caret negation") << "[^a].py" << "b.py" << false << true;
    QTest::newRow("class caret negation excludes") << "[^a].py" << "a.py" << false << false;
    QTest::newRow("class first bracket literal") << "[]]x" << "]x" << false << true;
    QTest::newRow("class never slash") << "a[/]b" << "a/b" << false << false;
    QTest::newRow("negated class never slash") << "/a[!x]b" << "a/b" << false << false;
    QTest::newRow("class named digit") << "[[:digit:]]*" << "1abc" << false << true;
    QTest::newRow("class named digit no") << "[[:digit:]]*" << "abc" << false << false;
    QTest::newRow("class escaped bracket") << "[\\]]" << "]" << false << true;
    QTest::newRow("class reversed range empty") << "[z-a]" << "m" << false << false;
    // clang-format on

    // escapes
    // clang-format off
    QTest::newRow("escaped star literal") << "\\*.py" << "*.py" << false << true;
    QTest::newRow("escaped star not wildcard") << "\\*.py" << "x.py" << false << false;
    QTest::newRow("escaped brackets literal") << "\\[abc\\].py" << "[abc].py" << false << true;
    QTest::newRow("escaped brackets not class") << "\\[abc\\].py" << "a.py" << false << false;
    QTest::newRow("escaped question") << "a\\?" << "a?" << false << true;
    QTest::newRow("escaped question not wildcard") << "a\\?" << "ab" << false << false;
    QTest::newRow("escaped backslash") << "a\\\\b" << "a\\b" << false << true;
    QTest::newRow("escaped plain char") << "\\a" << "a" << false << true;
    // clang-format on

    // `**`
    // clang-format off
    QTest::newRow("leading globstar zero folders") << "**/x" << "x" << false << true;
    QTest::newRow("leading globstar one folder") << "**/x" << "a/x" << false << true;
    QTest::newRow("leading globstar deep") << "**/x" << "a/b/c/x" << false << true;
    QTest::newRow("leading globstar whole name") << "**/x" << "ax" << false << false;
    QTest::newRow("middle globstar zero") << "a/**/b" << "a/b" << false << true;
    QTest::newRow("middle globstar one") << "a/**/b" << "a/x/b" << false << true;
    QTest::newRow("middle globstar many") << "a/**/b" << "a/x/y/z/b" << false << true;
    QTest::newRow("middle globstar no join") << "a/**/b" << "ab" << false << false;
    QTest::newRow("middle globstar tail") << "a/**/b" << "a/b/c" << false << false;
    QTest::newRow("trailing globstar inside") << "dist/**" << "dist/app.js" << false << true;
    QTest::newRow("trailing globstar deep") << "dist/**" << "dist/a/b/c.css" << false << true;
    QTest::newRow("trailing globstar folder inside") << "dist/**" << "dist/a" << true << true;
    QTest::newRow("trailing globstar not file dist") << "dist/**" << "dist" << false << false;
    QTest::newRow("trailing globstar not folder dist") << "dist/**" << "dist" << true << false;
    QTest::newRow("trailing globstar anchored") << "dist/**" << "x/dist/a.js" << false << false;
    QTest::newRow("trailing globstar prefix name") << "dist/**" << "distro/a.js" << false << false;
    QTest::newRow("globstar alone") << "**" << "a/b/c" << false << true;
    QTest::newRow("globstar chain") << "**/**/x" << "a/b/x" << false << true;
    QTest::newRow("globstar then star") << "**/*.md" << "docs/a.md" << false << true;
    QTest::newRow("triple star is star") << "/***" << "a/b" << false << false;
    // clang-format on

    // anchoring
    // clang-format off
    QTest::newRow("leading slash anchors top") << "/foo" << "foo" << false << true;
    QTest::newRow("leading slash anchors not nested") << "/foo" << "a/foo" << false << false;
    QTest::newRow("no slash any depth") << "foo" << "a/b/foo" << false << true;
    QTest::newRow("inner slash anchors") << "a/b" << "a/b" << false << true;
    QTest::newRow("inner slash anchors not nested") << "a/b" << "x/a/b" << false << false;
    QTest::newRow("double slash in pattern") << "a//b" << "a/b" << false << true;
    QTest::newRow("path double slash") << "a/b" << "a//b" << false << true;
    // clang-format on

    // folders only
    // clang-format off
    QTest::newRow("folder only matches folder") << "secrets/" << "secrets" << true << true;
    QTest::newRow("folder only not file") << "secrets/" << "secrets" << false << false;
    QTest::newRow("folder only nested") << "secrets/" << "a/b/secrets" << true << true;
    QTest::newRow("folder only other name") << "secrets/" << "secrets.txt" << true << false;
    QTest::newRow("anchored folder only") << "/build/" << "build" << true << true;
    QTest::newRow("anchored folder only nested") << "/build/" << "a/build" << true << false;
    QTest::newRow("plain pattern matches folder too") << "node_modules" << "node_modules" << true
                                                      << true;
    // clang-format on
}

void TestGlob::matches()
{
    QFETCH(QString, pattern);
    QFETCH(QString, path);
    QFETCH(bool, isDir);
    QFETCH(bool, expected);
    const GlobPattern p(pattern);
    QVERIFY(p.isValid());
    QCOMPARE(p.matches(path, isDir), expected);
}

void TestGlob::defaultExcludes_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("isDir");
    QTest::addColumn<bool>("expected");

    const QStringList dirs = {QStringLiteral(".git"), QStringLiteral("node_modules"),
                              QStringLiteral("__pycache__"), QStringLiteral(".venv"),
                              QStringLiteral("secrets")};
    for (const QString &d : dirs) {
        const QByteArray n = d.toUtf8();
        QTest::newRow(n + " folder top") << d << true << true;
        QTest::newRow(n + " file inside top") << d + "/x/file" << false << true;
        QTest::newRow(n + " folder nested") << "a/b/" + d << true << true;
        QTest::newRow(n + " file inside nested") << "a/b/" + d + "/f" << false << true;
    }
    const QStringList files = {QStringLiteral(".env"), QStringLiteral("k.pem"),
                               QStringLiteral("credentials.json")};
    for (const QString &f : files) {
        const QByteArray n = f.toUtf8();
        QTest::newRow(n + " top") << f << false << true;
        QTest::newRow(n + " nested") << "a/b/" + f << false << true;
    }
    QTest::newRow("secrets file is not a folder") << "secrets" << false << false;
    QTest::newRow("secrets file nested") << "conf/secrets" << false << false;
    QTest::newRow("secrets.txt") << "secrets.txt" << false << false;
    QTest::newRow(".github is not .git") << ".github/workflows/ci.yml" << false << false;
    QTest::newRow(".gitignore") << ".gitignore" << false << false;
    QTest::newRow(".env.example") << ".env.example" << false << false;
    QTest::newRow(".envrc") << ".envrc" << false << false;
    QTest::newRow("pem backup") << "k.pem.bak" << false << false;
    QTest::newRow("dot pem") << "certs/.pem" << false << true;
    QTest::newRow("credentials backup") << "credentials.json.bak" << false << false;
    QTest::newRow("prefixed credentials") << "my-credentials.json" << false << false;
    QTest::newRow("my_node_modules") << "my_node_modules/x" << false << false;
    QTest::newRow("source file") << "src/main.py" << false << false;
    QTest::newRow("readme") << "README.md" << false << false;
}

void TestGlob::defaultExcludes()
{
    QFETCH(QString, path);
    QFETCH(bool, isDir);
    QFETCH(bool, expected);
    const GlobSet set(DEFAULT_SANDBOX_SEED_EXCLUDES);
    QCOMPARE(set.matchesPathOrParent(path, isDir), expected);
}

void TestGlob::defaultIncludes_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("isDir");
    QTest::addColumn<bool>("expected");

    QTest::newRow("src file") << "src/main.c" << false << true;
    QTest::newRow("src deep file") << "src/a/b/c.cpp" << false << true;
    QTest::newRow("src dotfile") << "src/.clang-format" << false << true;
    QTest::newRow("src folder itself") << "src" << true << false;
    QTest::newRow("nested src is anchored") << "lib/src/x.c" << false << false;
    QTest::newRow("tests file") << "tests/test_a.txt" << false << true;
    QTest::newRow("tests deep file") << "tests/data/x.bin" << false << true;
    QTest::newRow("md top") << "README.md" << false << true;
    QTest::newRow("md nested") << "docs/guide/intro.md" << false << true;
    QTest::newRow("md dotfile") << ".hidden.md" << false << true;
    QTest::newRow("py top") << "setup.py" << false << true;
    QTest::newRow("py nested") << "pkg/sub/mod.py" << false << true;
    QTest::newRow("json nested") << "config/app.json" << false << true;
    QTest::newRow("yaml nested") << "k8s/deploy.yaml" << false << true;
    QTest::newRow("yml in dot folder") << ".github/workflows/ci.yml" << false << true;
    QTest::newRow("dist file") << "dist/app.js" << false << true;
    QTest::newRow("dist deep file") << "dist/assets/a/b.css" << false << true;
    QTest::newRow("file named dist") << "dist" << false << false;
    QTest::newRow("nested dist is anchored") << "web/dist/app.js" << false << false;
    QTest::newRow("build file") << "build/out.bin" << false << true;
    QTest::newRow("file named build") << "build" << false << false;
    QTest::newRow("c file elsewhere") << "lib/x.c" << false << false;
    QTest::newRow("makefile") << "Makefile" << false << false;
    QTest::newRow("env file") << ".env" << false << false;
    QTest::newRow("pyc") << "pkg/mod.pyc" << false << false;
}

void TestGlob::defaultIncludes()
{
    QFETCH(QString, path);
    QFETCH(bool, isDir);
    QFETCH(bool, expected);
    const GlobSet set(DEFAULT_SANDBOX_SYNC_INCLUDE);
    QCOMPARE(set.matchesPathOrParent(path, isDir), expected);
}

void TestGlob::pathOrParent_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("isDir");
    QTest::addColumn<bool>("itself");
    QTest::addColumn<bool>("orParent");

    // clang-format off
    QTest::newRow("parent folder by name") << "src" << "src/a/b.c" << false << false << true;
    QTest::newRow("anchored parent") << "/src" << "src/a/b.c" << false << false << true;
    QTest::newRow("anchored parent not nested") << "/src" << "x/src/b.c" << false << false
                                                << false;
    QTest::newRow("folder-only parent") << "out/" << "out/x" << false << false << true;
    QTest::newRow("folder-only file itself") << "out/" << "out" << false << false << false;
    QTest::newRow("globstar folder inside") << "dist/**" << "dist/a/b" << false << true << true;
    QTest::newRow("star parent") << "*.d" << "x.d/y/z" << false << false << true;
    QTest::newRow("no parent match") << "*.d" << "x/y/z" << false << false << false;
    QTest::newRow("middle globstar parent") << "a/**/b" << "a/x/b/c" << false << false << true;
    // clang-format on
}

void TestGlob::pathOrParent()
{
    QFETCH(QString, pattern);
    QFETCH(QString, path);
    QFETCH(bool, isDir);
    QFETCH(bool, itself);
    QFETCH(bool, orParent);
    const GlobPattern p(pattern);
    QCOMPARE(p.matches(path, isDir), itself);
    QCOMPARE(p.matchesPathOrParent(path, isDir), orParent);
    const GlobSet set({pattern});
    QCOMPARE(set.matches(path, isDir), itself);
    QCOMPARE(set.matchesPathOrParent(path, isDir), orParent);
}

void TestGlob::matchIndexIsFirstMatch()
{
    const GlobSet set(DEFAULT_SANDBOX_SEED_EXCLUDES);
    QCOMPARE(set.matchIndex(u"a/node_modules", true), 1);
    QCOMPARE(set.matchIndex(u"k.pem", false), 5);
    QCOMPARE(set.matchIndex(u"secrets", true), 7);
    QCOMPARE(set.matchIndex(u"secrets", false), -1);
    QCOMPARE(set.matchIndex(u"src/x.py", false), -1);
    QVERIFY(GlobSet().isEmpty());
    QVERIFY(!GlobSet().matchesPathOrParent(u"a/b", false));
}

void TestGlob::invalidPatternMatchesNothing()
{
    const GlobPattern unclosed(QStringLiteral("[abc"));
    QVERIFY(!unclosed.isValid());
    QVERIFY(!unclosed.matches(u"[abc", false));
    QVERIFY(!unclosed.matches(u"a", false));
    QVERIFY(!unclosed.matchesPathOrParent(u"[abc/x", false));
    QVERIFY(!GlobPattern(QString()).matches(u"", false));

    // an invalid pattern in a set does not disturb the valid ones
    const GlobSet set({QStringLiteral("[abc"), QStringLiteral("*.py")});
    QCOMPARE(set.matchIndex(u"a", false), -1);
    QCOMPARE(set.matchIndex(u"a.py", false), 1);
}

// Worst cases for backtracking matchers. Each row runs at size n and 2n and counts the matcher's
// steps: linear work means the count at most ~doubles (2.5 allows for constant overhead).
void TestGlob::pathological_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("unit"); // repeated n times
    QTest::addColumn<QString>("suffix");
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("expected");

    const QString stars = QStringLiteral("*a*a*a*a*a*a*a*a*b");
    // clang-format off
    QTest::newRow("stars vs 10000 a") << stars << "a" << "" << 10000 << false;
    QTest::newRow("stars vs 10000 a then b") << stars << "a" << "b" << 10000 << true;
    QTest::newRow("anchored stars vs 10000 a") << "/" + stars << "a" << "" << 10000 << false;
    QTest::newRow("stars in folder vs 10000 a") << "x/" + stars << "a" << "" << 10000 << false;
    QTest::newRow("globstar chain vs 2000 segments") << "**/**/**/**/x" << "a/" << "y" << 2000
                                                     << false;
    QTest::newRow("globstar chain hit at end") << "**/**/**/**/x" << "a/" << "x" << 2000 << true;
    QTest::newRow("globstars between names") << "a/**/a/**/a/**/a/**/b" << "a/" << "a" << 2000
                                             << false;
    QTest::newRow("globstar with star segments") << "**/*a*a*a*b/**/*a*a*c" << "aaaa/" << "aa"
                                                 << 2000 << false;
    // clang-format on
}

void TestGlob::pathological()
{
    QFETCH(QString, pattern);
    QFETCH(QString, unit);
    QFETCH(QString, suffix);
    QFETCH(int, n);
    QFETCH(bool, expected);

    const GlobPattern p(pattern);
    QVERIFY(p.isValid());
    auto stepsFor = [&](int count, bool *result, bool *parentResult) {
        const QString path = unit.repeated(count) + suffix;
        detail::resetGlobStepCount();
        *result = p.matches(path, false);
        const quint64 single = detail::globStepCount();
        *parentResult = p.matchesPathOrParent(path, false);
        return std::max(single, detail::globStepCount() - single);
    };
    bool r1 = false, r2 = false, pr1 = false, pr2 = false;
    const quint64 s1 = stepsFor(n, &r1, &pr1);
    const quint64 s2 = stepsFor(2 * n, &r2, &pr2);
    QCOMPARE(r1, expected);
    QCOMPARE(r2, expected);
    QCOMPARE(pr1, expected);
    QCOMPARE(pr2, expected);
    QVERIFY(s1 > 0);
    // absolute bound: path length times pattern length, with a small constant
    const quint64 bound =
        quint64(unit.size() * n + suffix.size() + 1) * quint64(pattern.size()) * 4;
    QVERIFY2(s1 <= bound, qPrintable(QStringLiteral("%1 steps > bound %2").arg(s1).arg(bound)));
    QVERIFY2(double(s2) <= 2.5 * double(s1),
             qPrintable(QStringLiteral("steps %1 -> %2 when doubling the input").arg(s1).arg(s2)));
}

void TestGlob::deepPathOrParentIsLinear()
{
    // A set of patterns against a 2,000-deep path: matchesPathOrParent must not re-match every
    // parent prefix from scratch (that would be quadratic).
    const GlobSet set(DEFAULT_SANDBOX_SEED_EXCLUDES + DEFAULT_SANDBOX_SYNC_INCLUDE);
    auto steps = [&](int depth) {
        const QString path = QStringLiteral("d/").repeated(depth) + QStringLiteral("f.c");
        detail::resetGlobStepCount();
        const bool r = set.matchesPathOrParent(path, false);
        return std::pair(r, detail::globStepCount());
    };
    const auto [r1, s1] = steps(2000);
    const auto [r2, s2] = steps(4000);
    QVERIFY(!r1);
    QVERIFY(!r2);
    QVERIFY2(double(s2) <= 2.5 * double(s1),
             qPrintable(QStringLiteral("steps %1 -> %2 when doubling the depth").arg(s1).arg(s2)));
}

QTEST_GUILESS_MAIN(TestGlob)
#include "tst_glob.moc"
