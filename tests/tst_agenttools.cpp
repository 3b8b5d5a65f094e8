// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

// The coding-agent tools (grep, glob, tree, stat, read_many, edit_file, move, delete, mkdir,
// the process tools, execute's timeout and soft return) through Agent::callTool, as every
// front end calls them, on the local and bwrap backends.

#include "agenttools.h"
#include "audit.h"
#include "backgroundprocesses.h"
#include "bwrapsandboxbackend.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "procself.h"
#include "sandbox.h"
#include "sandboxmanager.h"
#include "sandboxplugin.h"
#include "testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include <unistd.h>

using namespace elsai;
using namespace elsai::test;

namespace {

/// A JSON object written with ' for " (raw string literals confuse moc).
QJsonObject json(const char *text)
{
    return QJsonDocument::fromJson(QByteArray(text).replace('\'', '"')).object();
}

/// One workspace with a writer, a reader and a detached agent.
struct Bench
{
    SandboxPtr sandbox;
    AgentPtr writer;
    AgentPtr reader;
    AgentPtr detached;
    QString root;
};

} // namespace

class TestAgentTools : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    QMap<QString, Bench> m_benches;

    Bench &bench(const QString &name)
    {
        if (!m_benches.contains(name))
            QTest::qFail("no such backend", __FILE__, __LINE__);
        return m_benches[name];
    }

    void addBackendRows(const std::function<void(const QString &)> &rows)
    {
        for (auto it = m_benches.cbegin(); it != m_benches.cend(); ++it)
            rows(it.key());
    }

    /// The tool's text, or "ERROR <type>: <message>".
    static QString call(const AgentPtr &agent, const QString &tool, const QJsonObject &args)
    {
        try {
            return agent->callTool(tool, args).text;
        } catch (const SandboxError &e) {
            return QStringLiteral("ERROR ") + e.specName() + QStringLiteral(": ") + e.message();
        }
    }

    Bench makeBench(const QString &name, const BackendPtr &backend, Sandbox::Options options = {})
    {
        Bench b;
        b.root = m_tmp.filePath(name);
        b.sandbox = Sandbox::create(name, backend, 600, options);
        b.sandbox->start();
        const auto text = [](const char *t) { return FileSource::text(QString::fromUtf8(t)); };
        QString many;
        for (int i = 1; i <= 300; ++i)
            many += QStringLiteral("match %1\n").arg(i);
        b.sandbox->addFiles({
            {QStringLiteral("src/main.py"),
             text("import os\ndef main():\n    print('hello')\n    return 0\n")},
            {QStringLiteral("src/util.py"), text("def helper():\n    return 'Hello'\n")},
            {QStringLiteral("src/app.ts"), text("const x = 1;\n// TODO fix\n")},
            {QStringLiteral("docs/readme.md"), text("# Title\nhello world\n")},
            {QStringLiteral("node_modules/pkg/index.js"), text("hello from dep\n")},
            {QStringLiteral(".env"), text("SECRET=hello\n")},
            {QStringLiteral("bin.dat"), FileSource::bytes(QByteArray("hello\0world", 11))},
            {QStringLiteral("many.txt"), FileSource::text(many)},
            {QStringLiteral("long.txt"),
             FileSource::text(QString(30000, u'a') + QStringLiteral("!\n"))},
        });
        b.writer = Agent::create(name + QStringLiteral("-writer"));
        b.reader = Agent::create(name + QStringLiteral("-reader"));
        b.detached = Agent::create(name + QStringLiteral("-detached"));
        b.sandbox->attach(b.writer);
        b.sandbox->attach(b.reader, SandboxAttachMode::ReadOnly);
        b.sandbox->attach(b.detached);
        b.sandbox->detach(b.detached);
        return b;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        m_benches.insert(QStringLiteral("local"),
                         makeBench(QStringLiteral("local"),
                                   std::make_shared<LocalSandboxBackend>(m_tmp.filePath("local"))));
        try {
            auto bwrap = std::make_shared<BwrapSandboxBackend>(m_tmp.filePath("bwrap"));
            bwrap->create();
            m_benches.insert(QStringLiteral("bwrap"), makeBench(QStringLiteral("bwrap"), bwrap));
        } catch (const SandboxError &e) {
            qWarning("bwrap rows skipped: %s", qPrintable(e.message()));
        }
    }

    void cleanupTestCase()
    {
        for (Bench &b : m_benches)
            b.sandbox->stop(false);
    }

    void grep_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<QJsonObject>("args");
        QTest::addColumn<QString>("expected");
        addBackendRows([](const QString &b) {
            const auto row = [&](const char *name, const char *args, const QString &expected) {
                QTest::newRow(qPrintable(b + u'/' + QLatin1String(name)))
                    << b << json(args) << expected;
            };
            // clang-format off
            row("lines with numbers", "{'pattern':'def \\\\w+'}",
                "src/main.py:2:def main():\nsrc/util.py:1:def helper():");
            row("case and include", "{'pattern':'hello','case_insensitive':true,'include':['*.py']}",
                "src/main.py:3:    print('hello')\nsrc/util.py:2:    return 'Hello'");
            row("seed excludes skipped", "{'pattern':'hello','output':'files'}",
                "docs/readme.md\nsrc/main.py");
            row("include_excluded", "{'pattern':'hello','output':'files','include_excluded':true}",
                ".env\ndocs/readme.md\nnode_modules/pkg/index.js\nsrc/main.py");
            row("excluded folder named", "{'pattern':'hello','path':'node_modules'}",
                "node_modules/pkg/index.js:1:hello from dep");
            row("count", "{'pattern':'^match','output':'count'}", "many.txt:300");
            row("cap and more", "{'pattern':'match [0-9]+$','max_results':3}",
                "many.txt:1:match 1\nmany.txt:2:match 2\nmany.txt:3:match 3\n"
                "[more: stopped after 3 matching lines; narrow the pattern, path or include, or raise max_results]");
            row("exact cap is no more", "{'pattern':'match 30[0-9]','max_results':1}",
                "many.txt:300:match 300");
            row("files cap", "{'pattern':'o','output':'files','max_results':1,'include':['*.py']}",
                "src/main.py\n[more: stopped after 1 files; narrow the pattern, path or include, or raise max_results]");
            row("context", "{'pattern':'print','context':1}",
                "src/main.py-2-def main():\nsrc/main.py:3:    print('hello')\nsrc/main.py-4-    return 0");
            row("context merges", "{'pattern':'^match (1|3|13)$','context':1}",
                "many.txt:1:match 1\nmany.txt-2-match 2\nmany.txt:3:match 3\nmany.txt-4-match 4\n--\n"
                "many.txt-12-match 12\nmany.txt:13:match 13\nmany.txt-14-match 14");
            row("exclude glob", "{'pattern':'def','exclude':['util.*']}", "src/main.py:2:def main():");
            row("one file", "{'pattern':'return','path':'src/util.py'}", "src/util.py:2:    return 'Hello'");
            row("anchors per line", "{'pattern':'^\\\\s+return 0$'}", "src/main.py:4:    return 0");
            row("no match across lines", "{'pattern':'main\\\\(\\\\):\\\\s+print'}", "No matches (6 files searched).");
            row("lookahead line by line", "{'pattern':'TODO(?= fix$)'}", "src/app.ts:2:// TODO fix");
            row("no match", "{'pattern':'nothing-like-this'}", "No matches (6 files searched).");
            row("invalid", "{'pattern':'(unclosed'}", "ERROR ValueError: grep: invalid regular expression at offset 9: missing closing parenthesis");
            row("verbs refused", "{'pattern':'(*LIMIT_MATCH=99999999)a'}", "ERROR ValueError: grep: patterns may not start with a PCRE2 option such as (*LIMIT_MATCH=…) or (*UTF)");
            row("bad output", "{'pattern':'a','output':'lines'}", "ERROR ValueError: grep: output must be content, files or count");
            row("unknown argument", "{'pattern':'a','glob':'*.py'}", "ERROR ValueError: grep: unknown argument 'glob'; it takes after, before, case_insensitive, context, exclude, include, include_excluded, max_results, output, path, pattern");
            row("cap bound", "{'pattern':'a','max_results':9999}", "ERROR ValueError: grep: argument 'max_results' must be between 1 and 5000, got 9999");
            // clang-format on
        });
    }

    void grep()
    {
        QFETCH(QString, backend);
        QFETCH(QJsonObject, args);
        QFETCH(QString, expected);
        QCOMPARE(call(bench(backend).reader, QStringLiteral("grep"), args), expected);
    }

    void grepPathologicalPattern_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<QString>("pattern");
        addBackendRows([](const QString &b) {
            QTest::newRow(qPrintable(b + QStringLiteral("/nested plus"))) << b << "(a+)+$";
            QTest::newRow(qPrintable(b + QStringLiteral("/alternation"))) << b << "(a|aa)+$";
            QTest::newRow(qPrintable(b + QStringLiteral("/nested star"))) << b << "^(a*)*b";
        });
    }

    // A pattern that backtracks exponentially on the 30,000-character line ends (the match
    // limit), with a clear error naming the file and line, or with a correct answer.
    void grepPathologicalPattern()
    {
        QFETCH(QString, backend);
        QFETCH(QString, pattern);
        const QString got = call(bench(backend).reader, QStringLiteral("grep"),
                                 {{QStringLiteral("pattern"), pattern},
                                  {QStringLiteral("path"), QStringLiteral("long.txt")}});
        QVERIFY2(got.startsWith(QLatin1String("No matches")) ||
                     got == QLatin1String("ERROR ValueError: grep: the pattern needs too much "
                                          "backtracking on line 1 of 'long.txt' (the regex "
                                          "match limit ended it); rewrite it without nested "
                                          "repetition such as (a+)+ or (a|a)*"),
                 qPrintable(got.left(300)));
    }

    // Local searches read and match batches of files on several threads; the result is the
    // sequential one: files in walk order, the cap cutting inside the same file, the same
    // counters. 700 files hold 0, 1 or 2 matching lines (file i: i % 3), so each cap falls in
    // the second or third batch, where a file's scan must be redone with what is left.
    void grepBatchesMergeInWalkOrder_data()
    {
        QTest::addColumn<int>("output");
        QTest::addColumn<int>("cap");
        QTest::newRow("content, cut inside a file") << int(GrepOutput::Content) << 500;
        QTest::newRow("content, cut at a file's end") << int(GrepOutput::Content) << 501;
        QTest::newRow("content, no cut") << int(GrepOutput::Content) << 5000;
        QTest::newRow("count, capped") << int(GrepOutput::Count) << 300;
        QTest::newRow("files, all") << int(GrepOutput::FilesWithMatches) << 5000;
    }
    void grepBatchesMergeInWalkOrder()
    {
        QFETCH(int, output);
        QFETCH(int, cap);
        constexpr int Files = 700;
        const QString root = m_tmp.filePath(QStringLiteral("grep-batches"));
        if (!QFile::exists(root)) {
            for (int i = 0; i < Files; ++i) {
                QByteArray text = "miss\n";
                for (int j = 0; j < i % 3; ++j)
                    text += "hit " + QByteArray::number(i) + "\nmiss\n";
                writeHostFile(root + QStringLiteral("/many/f%1.txt").arg(i, 3, 10, QChar(u'0')),
                              text);
            }
        }
        LocalSandboxBackend backend(root);
        backend.create();
        GrepRequest request;
        request.scope.path = QStringLiteral("many");
        request.pattern = QStringLiteral("^hit");
        request.output = GrepOutput(output);
        request.maxResults = cap;
        const GrepResult got = grepWorkspace(backend, request);

        // the sequential search, by hand
        QStringList files;
        QList<qint64> counts;
        qint64 shown = 0, searched = 0, lines = 0;
        bool more = false;
        for (int i = 0; i < Files && !more; ++i) {
            ++searched;
            const int c = i % 3;
            const QString path = QStringLiteral("many/f%1.txt").arg(i, 3, 10, QChar(u'0'));
            if (request.output == GrepOutput::Content) {
                const qint64 take = qMin<qint64>(c, cap - shown);
                more = c > cap - shown;
                if (take > 0) {
                    files << path;
                    counts << take;
                }
                shown += take;
                lines += take;
            } else if (c > 0) {
                if (shown == cap) {
                    more = true;
                    break;
                }
                ++shown;
                files << path;
                counts << (request.output == GrepOutput::Count ? c : 1);
            }
        }
        QStringList gotFiles;
        QList<qint64> gotCounts;
        for (const GrepFile &f : got.files) {
            gotFiles << f.path;
            gotCounts << f.count;
            if (request.output == GrepOutput::Content)
                QCOMPARE(f.lines.size(), f.count);
        }
        QCOMPARE(gotFiles, files);
        QCOMPARE(gotCounts, counts);
        QCOMPARE(got.more, more);
        QCOMPARE(got.filesSearched, searched);
        QCOMPARE(got.matchingLines, lines);
    }

    void glob_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<QJsonObject>("args");
        QTest::addColumn<QString>("expected");
        addBackendRows([](const QString &b) {
            const auto row = [&](const char *name, const char *args, const QString &expected) {
                QTest::newRow(qPrintable(b + u'/' + QLatin1String(name)))
                    << b << json(args) << expected;
            };
            // clang-format off
            row("name at any depth", "{'pattern':'*.py','order':'path'}", "src/main.py\nsrc/util.py");
            row("double star", "{'pattern':'src/**/*.ts','order':'path'}", "src/app.ts");
            row("seed excludes", "{'pattern':'**/*.js'}", "No files match.");
            row("include_excluded", "{'pattern':'**/*.js','include_excluded':true}", "node_modules/pkg/index.js");
            row("folders", "{'pattern':'*/','order':'path'}", "docs/\nsrc/");
            row("relative to path", "{'pattern':'*.md','path':'docs'}", "docs/readme.md");
            row("cap", "{'pattern':'*.py','order':'path','max_results':1}",
                "src/main.py\n[more: 2 matches, the first 1 shown; narrow the pattern or path, or raise max_results]");
            row("exclude", "{'pattern':'*','order':'path','exclude':['src','*.txt']}", "bin.dat\ndocs/readme.md");
            row("bad glob", "{'pattern':'[abc'}", "ERROR ValueError: include glob '[abc' is not valid (empty, or an unclosed '[')");
            row("bad order", "{'pattern':'*','order':'size'}", "ERROR ValueError: glob: order must be newest or path");
            // clang-format on
        });
    }

    void glob()
    {
        QFETCH(QString, backend);
        QFETCH(QJsonObject, args);
        QFETCH(QString, expected);
        QCOMPARE(call(bench(backend).reader, QStringLiteral("glob"), args), expected);
    }

    void globNewestFirst_data()
    {
        QTest::addColumn<QString>("backend");
        addBackendRows([](const QString &b) { QTest::newRow(qPrintable(b)) << b; });
    }

    void globNewestFirst()
    {
        QFETCH(QString, backend);
        Bench &b = bench(backend);
        QFile f(b.root + QStringLiteral("/src/util.py"));
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(QDateTime::currentDateTimeUtc().addDays(1),
                              QFileDevice::FileModificationTime));
        f.close();
        QCOMPARE(call(b.reader, QStringLiteral("glob"), json("{'pattern':'*.py'}")),
                 QStringLiteral("src/util.py\nsrc/main.py"));
        const ToolResult r = b.reader->callTool(QStringLiteral("glob"), json("{'pattern':'*.py'}"));
        QCOMPARE(r.data.value("total_matches").toInt(), 2);
        QVERIFY(r.data.value("entries").toArray().at(0).toObject().value("mtime_ms").toDouble() >
                r.data.value("entries").toArray().at(1).toObject().value("mtime_ms").toDouble());
    }

    void treeStatAndReads_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<QString>("tool");
        QTest::addColumn<QJsonObject>("args");
        QTest::addColumn<QString>("expected");
        addBackendRows([](const QString &b) {
            const auto row = [&](const char *name, const char *tool, const char *args,
                                 const QString &expected) {
                QTest::newRow(qPrintable(b + u'/' + QLatin1String(name)))
                    << b << QString::fromLatin1(tool) << json(args) << expected;
            };
            // clang-format off
            row("tree depth 1", "tree", "{'depth':1,'exclude':['*.txt','bin.dat']}",
                "docs/\nnode_modules/ (excluded: not expanded)\nsrc/");
            row("tree depth 2", "tree", "{'path':'src','depth':2}",
                "app.ts (25 bytes)\nmain.py (54 bytes)\nutil.py (33 bytes)");
            row("tree cap", "tree", "{'path':'src','max_entries':2}",
                "app.ts (25 bytes)\nmain.py (54 bytes)\n[more: stopped after 2 entries; ask for a subfolder or a smaller depth, or raise max_entries]");
            row("tree nested", "tree", "{'path':'docs'}", "readme.md (20 bytes)");
            row("stat file", "stat", "{'path':'src/util.py'}", "src/util.py: file, 33 bytes, modified ");
            row("stat folder", "stat", "{'path':'src'}", "src: dir");
            row("stat missing", "stat", "{'path':'nope'}", "nope: does not exist");
            row("stat escape", "stat", "{'path':'../x'}", "ERROR PermissionError: ");
            row("line numbers", "read_file", "{'path':'src/util.py','line_numbers':true}",
                "     1\tdef helper():\n     2\t    return 'Hello'\n");
            row("line numbers from offset", "read_file", "{'path':'src/main.py','line_numbers':true,'offset':2,'limit':1}",
                "     3\t    print('hello')\n");
            row("line numbers need lines", "read_file", "{'path':'src/main.py','line_numbers':true,'byte_offset':3}",
                "ERROR ValueError: read_file: line_numbers needs a line offset, not byte_offset");
            row("read_many", "read_many", "{'paths':['src/util.py','missing.txt','bin.dat']}",
                "==> src/util.py <==\ndef helper():\n    return 'Hello'\n==> missing.txt <==\n[error: ");
            row("read_many numbered", "read_many", "{'paths':['docs/readme.md'],'line_numbers':true}",
                "==> docs/readme.md <==\n     1\t# Title\n     2\thello world");
            row("read_many empty", "read_many", "{'paths':[]}", "ERROR ValueError: read_many: paths is empty");
            // clang-format on
        });
    }

    void treeStatAndReads()
    {
        QFETCH(QString, backend);
        QFETCH(QString, tool);
        QFETCH(QJsonObject, args);
        QFETCH(QString, expected);
        const QString got = call(bench(backend).reader, tool, args);
        QVERIFY2(got.startsWith(expected), qPrintable(got + QStringLiteral("\n---\n") + expected));
        if (tool == QLatin1String("read_many") && args.value("paths").toArray().size() == 3)
            QVERIFY2(got.endsWith(QLatin1String("==> bin.dat <==\n[error: ValueError: a binary "
                                                "file (11 bytes)]")),
                     qPrintable(got));
    }

    void editFile_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<QString>("before");
        QTest::addColumn<QJsonObject>("args");
        QTest::addColumn<QString>("expected"); ///< the tool's text
        QTest::addColumn<QString>("after");    ///< the file afterwards
        addBackendRows([](const QString &b) {
            const auto row = [&](const char *name, const char *before, const char *args,
                                 const QString &expected, const char *after) {
                QTest::newRow(qPrintable(b + u'/' + QLatin1String(name)))
                    << b << QString::fromUtf8(before) << json(args) << expected
                    << QString::fromUtf8(after);
            };
            // clang-format off
            row("unique", "a\nb\nc\nd\ne\nf\ng\nh\n", "{'old_string':'e','new_string':'E'}",
                "Edited e.txt: 1 replacement\n--- a/e.txt\n+++ b/e.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n",
                "a\nb\nc\nd\nE\nf\ng\nh\n");
            row("lines added", "x\ny\n", "{'old_string':'x\\n','new_string':'x\\nx2\\nx3\\n'}",
                "Edited e.txt: 1 replacement\n--- a/e.txt\n+++ b/e.txt\n@@ -1,2 +1,4 @@\n x\n+x2\n+x3\n y\n",
                "x\nx2\nx3\ny\n");
            row("line removed", "x\ny\nz\n", "{'old_string':'y\\n','new_string':''}",
                "Edited e.txt: 1 replacement\n--- a/e.txt\n+++ b/e.txt\n@@ -1,3 +1,2 @@\n x\n-y\n z\n",
                "x\nz\n");
            row("lines joined", "x\ny\nz\n", "{'old_string':'x\\n','new_string':'x '}",
                "Edited e.txt: 1 replacement\n--- a/e.txt\n+++ b/e.txt\n@@ -1,3 +1,2 @@\n-x\n-y\n+x y\n z\n",
                "x y\nz\n");
            row("no newline at end", "one\ntwo", "{'old_string':'two','new_string':'2'}",
                "Edited e.txt: 1 replacement\n--- a/e.txt\n+++ b/e.txt\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+2\n\\ No newline at end of file\n",
                "one\n2");
            row("replace all, two hunks", "k\n1\n2\n3\n4\n5\n6\n7\n8\nk\n", "{'old_string':'k','new_string':'K','replace_all':true}",
                "Edited e.txt: 2 replacements\n--- a/e.txt\n+++ b/e.txt\n@@ -1,4 +1,4 @@\n-k\n+K\n 1\n 2\n 3\n@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-k\n+K\n",
                "K\n1\n2\n3\n4\n5\n6\n7\n8\nK\n");
            row("two on a line", "a a\n", "{'old_string':'a','new_string':'b','replace_all':true}",
                "Edited e.txt: 2 replacements\n--- a/e.txt\n+++ b/e.txt\n@@ -1 +1 @@\n-a a\n+b b\n",
                "b b\n");
            row("dry run", "a\n", "{'old_string':'a','new_string':'b','dry_run':true}",
                "Would edit e.txt: 1 replacement\n--- a/e.txt\n+++ b/e.txt\n@@ -1 +1 @@\n-a\n+b\n", "a\n");
            row("not unique", "a\na\n", "{'old_string':'a','new_string':'b'}",
                "ERROR ValueError: edit_file: old_string occurs 2 times in 'e.txt' (lines 1, 2); include more surrounding lines to make it unique, or pass replace_all: true",
                "a\na\n");
            row("not found", "a\n", "{'old_string':'A','new_string':'b'}",
                "ERROR ValueError: edit_file: old_string was not found in 'e.txt'; read the file again and copy the text exactly, with its whitespace and line ends",
                "a\n");
            row("same", "a\n", "{'old_string':'a','new_string':'a'}",
                "ERROR ValueError: edit_file: old_string and new_string are the same; there is nothing to change", "a\n");
            row("crlf kept", "a\r\nb\r\n", "{'old_string':'b','new_string':'c'}",
                "Edited e.txt: 1 replacement\n--- a/e.txt\n+++ b/e.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n",
                "a\r\nc\r\n");
            // clang-format on
        });
    }

    void editFile()
    {
        QFETCH(QString, backend);
        QFETCH(QString, before);
        QFETCH(QJsonObject, args);
        QFETCH(QString, expected);
        QFETCH(QString, after);
        Bench &b = bench(backend);
        b.sandbox->addFiles({{QStringLiteral("e.txt"), FileSource::text(before)}});
        args.insert(QStringLiteral("path"), QStringLiteral("e.txt"));
        QCOMPARE(call(b.writer, QStringLiteral("edit_file"), args), expected);
        QCOMPARE(QString::fromUtf8(readHostFile(b.root + QStringLiteral("/e.txt"))), after);
    }

    void fileManagement_data()
    {
        QTest::addColumn<QString>("backend");
        addBackendRows([](const QString &b) { QTest::newRow(qPrintable(b)) << b; });
    }

    void fileManagement()
    {
        QFETCH(QString, backend);
        Bench &b = bench(backend);
        QCOMPARE(call(b.writer, "mkdir", json("{'path':'m/n/o'}")),
                 QStringLiteral("Created m/n/o"));
        QCOMPARE(call(b.writer, "mkdir", json("{'path':'m/n/o'}")),
                 QStringLiteral("Created m/n/o"));
        b.sandbox->addFiles({{QStringLiteral("m/n/f.txt"), FileSource::text(QStringLiteral("f"))},
                             {QStringLiteral("m/g.txt"), FileSource::text(QStringLiteral("g"))}});
        QVERIFY(call(b.writer, "move", json("{'source':'m/g.txt','destination':'m/n/f.txt'}"))
                    .startsWith(QLatin1String("ERROR FileExistsError")));
        QCOMPARE(call(b.writer, "move",
                      json("{'source':'m/g.txt','destination':'m/n/f.txt','overwrite':true}")),
                 QStringLiteral("Moved m/g.txt to m/n/f.txt"));
        QCOMPARE(readHostFile(b.root + "/m/n/f.txt"), QByteArray("g"));
        QVERIFY(!QFileInfo::exists(b.root + "/m/g.txt"));
        QCOMPARE(call(b.writer, "move", json("{'source':'m/n','destination':'m2/n'}")),
                 QStringLiteral("Moved m/n to m2/n"));
        QCOMPARE(readHostFile(b.root + "/m2/n/f.txt"), QByteArray("g"));
        QCOMPARE(
            call(b.writer, "move", json("{'source':'m2','destination':'m2/inner'}")),
            QStringLiteral("ERROR ValueError: move: 'm2' cannot move into itself ('m2/inner')"));
        QVERIFY(call(b.writer, "move", json("{'source':'m2/n/f.txt','destination':'m'}"))
                    .startsWith(QLatin1String("ERROR IsADirectoryError")));
        QCOMPARE(call(b.writer, "move", json("{'source':'.','destination':'x'}")),
                 QStringLiteral("ERROR PermissionError: move: the workspace root cannot be moved"));
        QVERIFY(call(b.writer, "delete", json("{'path':'m2'}"))
                    .startsWith(QLatin1String("ERROR OSError: delete: 'm2' is a folder that is not "
                                              "empty")));
        QCOMPARE(call(b.writer, "delete", json("{'path':'m2','recursive':true}")),
                 QStringLiteral("Deleted m2"));
        QVERIFY(!QFileInfo::exists(b.root + "/m2"));
        QCOMPARE(call(b.writer, "delete", json("{'path':'m'}")),
                 QStringLiteral("Deleted m")); // empty
        QCOMPARE(
            call(b.writer, "delete", json("{'path':'.'}")),
            QStringLiteral("ERROR PermissionError: delete: the workspace root cannot be deleted"));
        QVERIFY(call(b.writer, "delete", json("{'path':'m/none'}"))
                    .startsWith(QLatin1String("ERROR FileNotFoundError")));
    }

    void refusals_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<QString>("who");
        QTest::addColumn<QString>("tool");
        QTest::addColumn<QString>("error");
        addBackendRows([](const QString &b) {
            const QStringList mutating{"edit_file",      "move",          "delete",
                                       "mkdir",          "process_start", "process_list",
                                       "process_output", "process_input", "process_stop"};
            for (const QString &t : mutating) {
                QTest::newRow(qPrintable(b + "/reader/" + t))
                    << b << "reader" << t << "SandboxMutationDeniedError";
                QTest::newRow(qPrintable(b + "/detached/" + t))
                    << b << "detached" << t << "AgentSandboxDetachedError";
            }
            for (const char *t : {"grep", "glob", "tree", "stat", "read_many"})
                QTest::newRow(qPrintable(b + "/detached/" + t))
                    << b << "detached" << t << "ToolNotFoundError";
        });
    }

    // Read-only agents do not get the tools that change the workspace, detached ones get no
    // sandbox tool; calling one anyway is refused (and audited as denied).
    void refusals()
    {
        QFETCH(QString, backend);
        QFETCH(QString, who);
        QFETCH(QString, tool);
        QFETCH(QString, error);
        Bench &b = bench(backend);
        const AgentPtr agent = who == QLatin1String("reader") ? b.reader : b.detached;
        QVERIFY(!agent->tools().contains(tool));
        QList<AuditEvent> events;
        auto sink = std::make_shared<CallbackAuditSink>([&](const AuditEvent &e) {
            if (e.actor == agent->id())
                events.append(e);
        });
        AuditLog::instance().addSink(sink);
        const QString got = call(agent, tool, json("{'path':'x','command':'true'}"));
        AuditLog::instance().removeSink(sink);
        QVERIFY2(got.startsWith(QStringLiteral("ERROR ") + error), qPrintable(got));
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.first().outcome, error == QLatin1String("ToolNotFoundError")
                                             ? QStringLiteral("invalid")
                                             : QStringLiteral("denied"));
    }

    void oneAuditRecordPerCall_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<QString>("tool");
        QTest::addColumn<QJsonObject>("args");
        QTest::addColumn<QString>("event");
        addBackendRows([](const QString &b) {
            const auto row = [&](const char *tool, const char *args) {
                QTest::newRow(qPrintable(b + u'/' + QLatin1String(tool)))
                    << b << QString::fromLatin1(tool) << json(args)
                    << QStringLiteral("sandbox.") + QLatin1String(tool);
            };
            row("grep", "{'pattern':'secret-pattern'}");
            row("glob", "{'pattern':'*.py'}");
            row("tree", "{}");
            row("stat", "{'path':'src'}");
            row("read_many", "{'paths':['src/main.py','docs/readme.md']}");
            row("edit_file",
                "{'path':'src/app.ts','old_string':'x = 1','new_string':'x = 2','dry_run':true}");
            row("mkdir", "{'path':'made'}");
            row("process_list", "{}");
        });
    }

    void oneAuditRecordPerCall()
    {
        QFETCH(QString, backend);
        QFETCH(QString, tool);
        QFETCH(QJsonObject, args);
        QFETCH(QString, event);
        Bench &b = bench(backend);
        QList<AuditEvent> events;
        auto sink = std::make_shared<CallbackAuditSink>([&](const AuditEvent &e) {
            if (e.actor == b.writer->id())
                events.append(e);
        });
        AuditLog::instance().addSink(sink);
        call(b.writer, tool, args);
        AuditLog::instance().removeSink(sink);
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.first().event, event);
        const QByteArray record = QJsonDocument(events.first().toJson()).toJson();
        QVERIFY2(!record.contains("secret-pattern"), record.constData());
        if (tool == QLatin1String("grep")) {
            QCOMPARE(events.first().fields.value("pattern_bytes").toInt(), 14);
            QCOMPARE(events.first().fields.value("pattern_sha256").toString().size(), 12);
        }
    }

    void backgroundProcess_data()
    {
        QTest::addColumn<QString>("backend");
        addBackendRows([](const QString &b) { QTest::newRow(qPrintable(b)) << b; });
    }

    // start → input → output → end; stop of one that would run on; the audit keeps no text.
    void backgroundProcess()
    {
        QFETCH(QString, backend);
        Bench &b = bench(backend);
        QList<AuditEvent> events;
        auto sink = std::make_shared<CallbackAuditSink>([&](const AuditEvent &e) {
            if (e.actor == b.writer->id())
                events.append(e);
        });
        AuditLog::instance().addSink(sink);
        const ToolResult started = b.writer->callTool(
            "process_start", json("{'command':'echo ready; read line; echo got-$line'}"));
        const QString id = started.data.value("process_id").toString();
        QVERIFY(!id.isEmpty());
        QCOMPARE(started.data.value("accepts_input").toBool(), true);
        QCOMPARE(call(b.writer, "process_input",
                      {{"process_id", id}, {"input", "typed-text\n"}, {"close", true}}),
                 QStringLiteral("Sent 11 of 11 bytes to %1; its input is closed").arg(id));
        const ToolResult out =
            b.writer->callTool("process_output", {{"process_id", id}, {"wait", 30}});
        QCOMPARE(out.data.value("output").toString(), QStringLiteral("ready\ngot-typed-text\n"));
        QCOMPARE(out.data.value("running").toBool(), false);
        QCOMPARE(out.data.value("exit_code").toInt(), 0);
        QCOMPARE(out.data.value("next_offset").toInt(), 21);
        // reading on from next_offset: nothing new
        QCOMPARE(b.writer->callTool("process_output", {{"process_id", id}, {"offset", 21}})
                     .data.value("output")
                     .toString(),
                 QString());
        QVERIFY(call(b.writer, "process_input", {{"process_id", id}, {"input", "late"}})
                    .startsWith(QLatin1String("ERROR OSError")));

        const QString sleeper =
            b.writer->callTool("process_start", json("{'command':'echo up; exec sleep 300'}"))
                .data.value("process_id")
                .toString();
        QVERIFY(call(b.writer, "process_list", {}).contains(sleeper + QStringLiteral(": running")));
        // another agent sees no such process
        QVERIFY(call(b.reader, "process_list", {}).startsWith(QLatin1String("ERROR")));
        const ToolResult stopped = b.writer->callTool("process_stop", {{"process_id", sleeper}});
        QVERIFY2(stopped.text.startsWith(QStringLiteral("Stopped %1: ended").arg(sleeper)),
                 qPrintable(stopped.text));
        QVERIFY(call(b.writer, "process_list", {}).contains(sleeper + QStringLiteral(": ended")));
        QCOMPARE(call(b.writer, "process_output", {{"process_id", "p999"}}),
                 QStringLiteral("ERROR FileNotFoundError: no background process 'p999'; "
                                "process_list shows yours"));
        AuditLog::instance().removeSink(sink);
        for (const AuditEvent &e : std::as_const(events)) {
            const QByteArray record = QJsonDocument(e.toJson()).toJson();
            QVERIFY2(!record.contains("typed-text") && !record.contains("echo"),
                     record.constData());
        }
        QCOMPARE(events.first().event, QStringLiteral("sandbox.process_start"));
        QVERIFY(events.first().fields.contains("command_sha256"));
    }

private:
    static int threadCount() { return test::procSelfEntries("task"); }

    // A process request of owner "a" in workspace "w", on a new local backend.
    BackgroundProcesses::StartRequest localStart(const QString &folder)
    {
        auto backend = std::make_shared<LocalSandboxBackend>(m_tmp.filePath(folder));
        backend->create();
        BackgroundProcesses::StartRequest r;
        r.backend = backend;
        r.workspaceId = QStringLiteral("w");
        r.owner = QStringLiteral("a");
        return r;
    }

private Q_SLOTS:
    // The buffer keeps the last part of a long output and says how much is gone.
    void backgroundBufferBound()
    {
        BackgroundProcesses processes({1000, 4, 4});
        BackgroundProcesses::StartRequest r = localStart(QStringLiteral("buffer"));
        r.command = QStringLiteral("head -c 200000 /dev/zero | tr '\\0' x; echo; echo end");
        const QString id = processes.start(r);
        QVERIFY(processes.wait(id, 60000));
        const BackgroundOutput out = processes.read(id, QStringLiteral("a"), 0, 1 << 20);
        QVERIFY(out.skipped > 190000);
        QVERIFY(out.data.size() <= 1250);
        QVERIFY(out.data.endsWith("xx\nend\n"));
        QCOMPARE(out.nextOffset, 200005);
        const BackgroundProcessInfo info = processes.info(id, QStringLiteral("a"));
        QCOMPARE(info.outputBytes, 200005);
        QCOMPARE(info.droppedBytes, out.offset);
        // the per-workspace bound on running processes
        r.command = QStringLiteral("exec sleep 300");
        QStringList sleepers;
        for (int i = 0; i < 4; ++i)
            sleepers << processes.start(r);
        QVERIFY_THROWS_EXCEPTION(ValueError, processes.start(r));
        processes.stopWorkspace(QStringLiteral("w"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError,
                                 processes.info(sleepers[0], QStringLiteral("a")));
    }

    // Ended processes beyond maxFinished are forgotten, but never a soft return's command
    // whose execute call has yet to take its result (64 ending at once lost theirs).
    void pruneKeepsResultsNotYetTaken()
    {
        BackgroundProcesses processes({1000, 4, 2});
        BackgroundProcesses::StartRequest r = localStart(QStringLiteral("prune"));
        r.background = false; // as a soft-return execute starts it
        QStringList waiting;
        for (int i = 0; i < 5; ++i) {
            r.command = QStringLiteral("echo %1").arg(i);
            waiting << processes.start(r);
            QVERIFY(processes.wait(waiting.last(), 60000));
        }
        // background processes that end are pruned down to maxFinished as others start
        r.background = true;
        r.command = QStringLiteral("true");
        QStringList background;
        for (int i = 0; i < 4; ++i) {
            background << processes.start(r);
            QVERIFY(processes.wait(background.last(), 60000));
        }
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError,
                                 processes.info(background[0], QStringLiteral("a")));
        processes.info(background[3], QStringLiteral("a"));
        for (int i = 0; i < 5; ++i) {
            const auto result = processes.take(waiting[i]);
            QVERIFY2(result, qPrintable(waiting[i]));
            QCOMPARE(result->exitCode, 0);
        }
    }

    // Each process runs on a pool thread, so a run of short commands reuses a few threads
    // (one new thread per execute cost more than the rest of the call), and none outlives
    // the BackgroundProcesses, also with a command still running at its end.
    void backgroundThreadsAreReusedAndEnd()
    {
        const int before = threadCount();
        {
            BackgroundProcesses processes({1000, 4, 4});
            BackgroundProcesses::StartRequest r = localStart(QStringLiteral("threads"));
            r.background = false;
            r.command = QStringLiteral("echo x");
            std::mutex m;
            std::set<pid_t> runners; // the threads that ran a command (its output's observer)
            r.observer = [&](OutputChannel, const QByteArray &) {
                std::lock_guard lock(m);
                runners.insert(pid_t(::gettid()));
            };
            for (int i = 0; i < 40; ++i) {
                const QString id = processes.start(r);
                QVERIFY(processes.wait(id, 60000));
                QVERIFY(processes.take(id));
            }
            // 40 commands, one after the other, on a handful of threads (a thread each before)
            QVERIFY2(runners.size() >= 1 && runners.size() <= 8,
                     qPrintable(QString::number(runners.size())));
            QVERIFY2(threadCount() - before <= 8, qPrintable(QString::number(threadCount())));
            r.observer = {};
            r.background = true;
            r.command = QStringLiteral("exec sleep 300");
            const QString sleeper = processes.start(r);
            QVERIFY(processes.info(sleeper, QStringLiteral("a")).running);
        }
        QTRY_COMPARE_WITH_TIMEOUT(threadCount(), before,
                                  5000); // an exiting thread is listed briefly
    }

    // execute's soft return runs a command on the calling thread (the main thread, which
    // outlives its commands) until the soft-return time: a short command needs no second
    // thread. Any other thread hands every command to a thread of its own at once, since the
    // shell's parent-death signal follows the thread that started it.
    void softReturnRunsOnTheCallingThread()
    {
        BackgroundProcesses processes({1000, 4, 4});
        BackgroundProcesses::StartRequest r = localStart(QStringLiteral("soft-here"));
        r.command = QStringLiteral("echo here");
        std::mutex m;
        std::set<pid_t> runners;
        r.observer = [&](OutputChannel, const QByteArray &) {
            std::lock_guard lock(m);
            runners.insert(pid_t(::gettid()));
        };
        const int before = threadCount();
        for (int i = 0; i < 5; ++i) {
            const auto ran = processes.runWithSoftReturn(r, 60000, nullptr);
            QVERIFY(ran.result);
            QCOMPARE(ran.result->output, QStringLiteral("here\n"));
            QVERIFY(ran.processId.isEmpty());
        }
        QCOMPARE(runners, std::set<pid_t>{pid_t(::gettid())});
        QCOMPARE(threadCount(), before);
        // nothing stays listed: the results were taken
        QVERIFY(processes.list(QStringLiteral("w"), QStringLiteral("a")).isEmpty());

        runners.clear();
        pid_t caller = 0;
        std::optional<ExecuteResult> fromThread;
        std::thread([&] {
            caller = pid_t(::gettid());
            fromThread = processes.runWithSoftReturn(r, 60000, nullptr).result;
        }).join();
        QVERIFY(fromThread);
        QCOMPARE(fromThread->output, QStringLiteral("here\n"));
        QCOMPARE(runners.size(), size_t(1));
        QVERIFY(!runners.count(caller) && !runners.count(pid_t(::gettid())));
    }

    // Still running at the soft-return time, the command moves to a thread of its own and
    // its output goes on from where it was; the caller's cancel and a closing workspace end
    // it while the caller still waits. No wall-clock assumption: the commands wait for files.
    void softReturnHandsOverOrEnds()
    {
        const QString folder = QStringLiteral("soft-over");
        BackgroundProcesses processes({1000, 4, 4});
        BackgroundProcesses::StartRequest r = localStart(folder);
        const QString go = m_tmp.filePath(folder + QStringLiteral("/go"));
        r.command = QStringLiteral("echo started; while [ ! -e go ]; do sleep 0.02; done; "
                                   "echo finished");
        std::atomic_int observed{0};
        r.observer = [&](OutputChannel, const QByteArray &) { ++observed; };
        const auto over = processes.runWithSoftReturn(r, 100, nullptr);
        QVERIFY(!over.result);
        QVERIFY(!over.processId.isEmpty());
        const int seen = observed.load();
        QVERIFY(writeHostFile(go, "1"));
        QVERIFY(processes.wait(over.processId, 60000));
        const BackgroundOutput out =
            processes.read(over.processId, QStringLiteral("a"), 0, 1 << 20);
        QCOMPARE(out.data, QByteArray("started\nfinished\n"));
        QVERIFY(!out.running);
        QCOMPARE(processes.info(over.processId, QStringLiteral("a")).result->exitCode, 0);
        QCOMPARE(observed.load(), seen); // no progress after the answer
        QVERIFY(QFile::remove(go));

        // the caller cancels while it waits
        const auto cancel = std::make_shared<CancellationToken>();
        r.observer = [&](OutputChannel, const QByteArray &) { cancel->cancel(); };
        const auto cancelled = processes.runWithSoftReturn(r, 60000, cancel);
        QVERIFY(cancelled.result);
        QVERIFY(cancelled.result->cancelled);
        QCOMPARE(cancelled.result->exitCode, 130);
        QVERIFY(cancelled.processId.isEmpty());

        // the workspace closes while the caller waits (from another thread, as the window's
        // stop would)
        std::thread closer;
        r.observer = [&](OutputChannel, const QByteArray &) {
            if (!closer.joinable())
                closer = std::thread([&] { processes.stopWorkspace(QStringLiteral("w")); });
        };
        const auto closed = processes.runWithSoftReturn(r, 60000, nullptr);
        closer.join();
        QVERIFY(closed.result);
        QCOMPARE(closed.result->exitCode, 130);
        QCOMPARE(closed.result->stderr_,
                 QStringLiteral("the workspace was closed while the command ran"));
    }

    // An output observer that throws ends the call, the command and its job: nothing is left
    // for a stop to wait for.
    void softReturnObserverThrowing()
    {
        BackgroundProcesses processes({1000, 4, 4});
        BackgroundProcesses::StartRequest r = localStart(QStringLiteral("soft-throw"));
        r.command = QStringLiteral("echo x; exec sleep 300");
        r.observer = [](OutputChannel, const QByteArray &) {
            throw std::runtime_error("observer failed");
        };
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 processes.runWithSoftReturn(r, 60000, nullptr));
        QVERIFY(processes.list(QStringLiteral("w"), QStringLiteral("a")).isEmpty());
        processes.stopWorkspace(QStringLiteral("w")); // returns: no job left running
        // the same on a thread of its own (any caller but the main thread): the call fails
        // as execute() would, and the process is gone
        std::thread([&] {
            QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                     processes.runWithSoftReturn(r, 60000, nullptr));
        }).join();
        QVERIFY(processes.list(QStringLiteral("w"), QStringLiteral("a")).isEmpty());
    }

    // When no thread can take a command still running at the soft-return time, the call
    // waits for its end rather than lose it.
    void softReturnWithoutThreadsWaits()
    {
        const QString folder = QStringLiteral("soft-nothread");
        BackgroundProcesses::Limits limits{1000, 4, 4};
        limits.maxThreads = 0;
        BackgroundProcesses processes(limits);
        BackgroundProcesses::StartRequest r = localStart(folder);
        r.command = QStringLiteral("echo started; while [ ! -e go ]; do sleep 0.02; done; "
                                   "echo finished");
        std::thread writer;
        r.observer = [&](OutputChannel, const QByteArray &) {
            if (!writer.joinable()) {
                writer = std::thread([go = m_tmp.filePath(folder + QStringLiteral("/go"))] {
                    // well past the soft-return time, unless the machine stalls (then the
                    // command ends in time, which the checks below accept too)
                    std::this_thread::sleep_for(std::chrono::milliseconds(500));
                    writeHostFile(go, "1");
                });
            }
        };
        const auto ran = processes.runWithSoftReturn(r, 50, nullptr);
        writer.join();
        QVERIFY(ran.result);
        QCOMPARE(ran.result->output, QStringLiteral("started\nfinished\n"));
        QCOMPARE(ran.result->exitCode, 0);
        // and a background process has no thread to run on: it says so
        r.observer = {};
        r.background = true;
        QVERIFY_THROWS_EXCEPTION(OSError, processes.start(r));
        QVERIFY(processes.list(QStringLiteral("w"), QStringLiteral("a")).isEmpty());
    }

    void executeTimeoutArgument_data()
    {
        QTest::addColumn<QString>("backend");
        addBackendRows([](const QString &b) { QTest::newRow(qPrintable(b)) << b; });
    }

    void executeTimeoutArgument()
    {
        QFETCH(QString, backend);
        Bench &b = bench(backend);
        QCOMPARE(call(b.writer, "execute", json("{'command':'true','timeout':100000}")),
                 QStringLiteral("ERROR ValueError: execute: timeout 100000 s is longer than the "
                                "sandbox's timeout of 120 s; for longer work use process_start"));
        QCOMPARE(call(b.writer, "execute", json("{'command':'true','timeout':0}")),
                 QStringLiteral("ERROR ValueError: execute: timeout must be a positive number of "
                                "seconds"));
        const ToolResult r =
            b.writer->callTool("execute", json("{'command':'exec sleep 30','timeout':0.2}"));
        QCOMPARE(r.data.value("timed_out").toBool(), true);
        QCOMPARE(r.data.value("exit_code").toInt(), 124);
    }

    void executeSoftReturn_data()
    {
        QTest::addColumn<QString>("backend");
        addBackendRows([](const QString &b) { QTest::newRow(qPrintable(b)) << b; });
    }

    // A command still running at the soft-return time is handed over as a background
    // process; one that ends in time answers as always. No wall-clock assumption: the long
    // command waits for a file the test writes after the answer.
    void executeSoftReturn()
    {
        QFETCH(QString, backend);
        const QString name = backend + QStringLiteral("-soft");
        BackendPtr be;
        if (backend == QLatin1String("bwrap")) {
            auto bw = std::make_shared<BwrapSandboxBackend>(m_tmp.filePath(name));
            bw->create();
            be = bw;
        } else {
            be = std::make_shared<LocalSandboxBackend>(m_tmp.filePath(name));
        }
        Sandbox::Options options;
        options.executeSoftReturnSeconds = 0.2;
        auto sandbox = Sandbox::create(name, be, 600, options);
        sandbox->start();
        const AgentPtr agent = Agent::create(name + QStringLiteral("-agent"));
        sandbox->attach(agent);
        const ToolResult r =
            agent->callTool("execute", json("{'command':'echo started; while [ ! -e go ]; do sleep "
                                            "0.02; done; echo finished'}"));
        QCOMPARE(r.data.value("running").toBool(), true);
        const QString id = r.data.value("process_id").toString();
        QVERIFY(!id.isEmpty());
        QVERIFY2(r.text.contains(QStringLiteral("[still running after 0.2 s as background "
                                                "process %1")
                                     .arg(id)),
                 qPrintable(r.text));
        QCOMPARE(r.data.value("next_offset").toInt(), r.data.value("output").toString().size());
        QVERIFY(writeHostFile(m_tmp.filePath(name) + QStringLiteral("/go"), "1"));
        // wait is bounded by the soft-return time: poll until it ends (a bounded loop)
        ToolResult last;
        for (int i = 0; i < 1000 && (i == 0 || last.data.value("running").toBool()); ++i)
            last = agent->callTool("process_output", {{"process_id", id}, {"wait", 0.2}});
        QCOMPARE(last.data.value("running").toBool(), false);
        QCOMPARE(last.data.value("output").toString(), QStringLiteral("started\nfinished\n"));
        QCOMPARE(last.data.value("exit_code").toInt(), 0);
        // a command that ends in time answers as execute always does
        sandbox->stop(false);
        options.executeSoftReturnSeconds = 30;
        sandbox = Sandbox::create(name + QStringLiteral("2"), be, 600, options);
        sandbox->start();
        sandbox->attach(agent);
        const ToolResult quick = agent->callTool("execute", json("{'command':'echo quick'}"));
        QCOMPARE(quick.text, QStringLiteral("quick\n[exit code: 0]"));
        QVERIFY(!quick.data.contains("running"));
        // a still-running process ends with the sandbox
        const QString sleeper =
            agent->callTool("process_start", json("{'command':'exec sleep 300'}"))
                .data.value("process_id")
                .toString();
        auto manager = sandbox->manager();
        sandbox->stop(false);
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError,
                                 manager->backgroundProcesses().info(sleeper, agent->id()));
    }

    void mcpHintsAndTitles()
    {
        for (const Tool &t : SandboxPlugin::tools(SandboxAttachMode::ReadWrite, true)) {
            QVERIFY2(t.hints.has_value(), qPrintable(t.name));
            QVERIFY2(!t.title.isEmpty(), qPrintable(t.name));
            QVERIFY2(t.description.size() > 60, qPrintable(t.name));
            QVERIFY2(!t.outputSchema.isEmpty(), qPrintable(t.name));
            QCOMPARE(t.inputSchema.value("additionalProperties"), QJsonValue(false));
            // required result fields are declared properties
            const QJsonObject props = t.outputSchema.value("properties").toObject();
            for (const QJsonValue &r : t.outputSchema.value("required").toArray())
                QVERIFY2(props.contains(r.toString()), qPrintable(t.name + u' ' + r.toString()));
        }
        const auto hints = [](const QString &name) {
            for (const Tool &t : SandboxPlugin::tools(SandboxAttachMode::ReadWrite, true)) {
                if (t.name == name)
                    return *t.hints;
            }
            return ToolHints{};
        };
        QVERIFY(hints("grep").readOnly && hints("glob").readOnly && hints("stat").readOnly);
        QVERIFY(!hints("mkdir").readOnly && !hints("mkdir").destructive &&
                hints("mkdir").idempotent);
        QVERIFY(hints("delete").destructive && hints("delete").idempotent);
        QVERIFY(hints("edit_file").destructive && !hints("edit_file").idempotent);
        QVERIFY(!hints("move").idempotent);
    }

    void imageRead()
    {
        Bench &b = bench(QStringLiteral("local"));
        const QByteArray png = QByteArray("\x89PNG\r\n\x1a\n", 8) + QByteArray(40, '\0');
        b.sandbox->addFiles({{QStringLiteral("pic.png"), FileSource::bytes(png)},
                             {QStringLiteral("fake.png"), FileSource::text(QStringLiteral("no"))}});
        const ToolResult r = b.reader->callTool("read_file", json("{'path':'pic.png'}"));
        QVERIFY(r.image);
        QCOMPARE(r.image->mimeType, QStringLiteral("image/png"));
        QCOMPARE(r.image->bytes, png);
        QCOMPARE(r.text, QStringLiteral("[image/png image, 48 bytes]"));
        QCOMPARE(call(b.reader, "read_file", json("{'path':'fake.png'}")),
                 QStringLiteral("ERROR ValueError: 'fake.png' is not a image/png image (its first "
                                "bytes do not match)"));
    }
};

QTEST_GUILESS_MAIN(TestAgentTools)
#include "tst_agenttools.moc"
