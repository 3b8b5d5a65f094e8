// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The backend conformance cases: file operations, execute, timeout, truncation, path
// confinement, seeding and flush, identical for every backend.

#include "conformance.h"

#include "agent.h"
#include "boundedread.h"
#include "errors.h"
#include "firstentries.h"
#include "sandbox.h"
#include "sandboxplugin.h"
#include "testutil.h"
#include "types.h"
#include "workspacesearch.h"

#include <QJsonArray>

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

using namespace elsai;
using elsai::test::readHostFile;
using elsai::test::writeHostFile;

namespace {

/// Runs `f`; the spec name of the SandboxError it throws, "" when none.
QString errorName(const std::function<void()> &f)
{
    try {
        f();
    } catch (const SandboxError &e) {
        return e.specName();
    }
    return QString();
}

QStringList sortedPaths(const QList<FileInfo> &entries)
{
    QStringList out;
    for (const FileInfo &e : entries)
        out.append(e.path);
    out.sort();
    return out;
}

const FileInfo *entryNamed(const QList<FileInfo> &entries, const QString &path)
{
    for (const FileInfo &e : entries) {
        if (e.path == path)
            return &e;
    }
    return nullptr;
}

QByteArray allBytes(int repeat)
{
    QByteArray b;
    for (int r = 0; r < repeat; ++r) {
        for (int i = 0; i < 256; ++i)
            b.append(char(i));
    }
    return b;
}

/// A small project: five files to seed, the rest excluded by the default excludes or a
/// symlink.
void writeProject(const QString &root)
{
    writeHostFile(root + QStringLiteral("/README.md"), "# project\n");
    writeHostFile(root + QStringLiteral("/src/main.py"), "print('main')\n");
    writeHostFile(root + QStringLiteral("/src/pkg/mod.py"), "X = 1\n");
    writeHostFile(root + QStringLiteral("/data.bin"), allBytes(2));
    writeHostFile(root + QStringLiteral("/nested/deep/deeper/file.txt"), "deep\n");
    writeHostFile(root + QStringLiteral("/.git/config"), "[core]\n");
    writeHostFile(root + QStringLiteral("/node_modules/m/index.js"), "module\n");
    writeHostFile(root + QStringLiteral("/key.pem"), "-----BEGIN\n");
    writeHostFile(root + QStringLiteral("/secrets/token"), "t0ken\n");
    writeHostFile(root + QStringLiteral("/sub/.env"), "SECRET=1\n");
    QFile::link(QStringLiteral("README.md"), root + QStringLiteral("/link.md"));
}

/// A 64 MiB file, sparse but for 1 MiB of 11-byte text lines at its head.
constexpr qint64 HugeSize = qint64(64) << 20;
constexpr qint64 LineBytes = 11; // "abcdefghij\n"
void plantHugeFile(SandboxBackend &b)
{
    const ExecuteResult r = b.execute(
        QStringLiteral("yes abcdefghij | head -c 1048576 > huge.txt && truncate -s 64M huge.txt"));
    QCOMPARE(r.exitCode, 0);
}

class BackendConformance : public QObject
{
    Q_OBJECT

public:
    explicit BackendConformance(BackendFixture fixture) : m_fixture(std::move(fixture)) {}

private:
    BackendFixture m_fixture;

    std::shared_ptr<SandboxBackend> make() { return m_fixture.make(); }

private Q_SLOTS:
    void initTestCase()
    {
        qInfo("backend conformance: %s", qPrintable(m_fixture.name));
        try {
            QVERIFY(make());
        } catch (const SandboxError &e) {
            QSKIP(qPrintable(QStringLiteral("the %1 backend is not available here: %2")
                                 .arg(m_fixture.name, e.display())));
        }
    }

    void init()
    {
        const QString bug =
            m_fixture.knownBugs.value(QString::fromLatin1(QTest::currentTestFunction()));
        if (!bug.isEmpty())
            QSKIP(qPrintable(QStringLiteral("known %1 backend bug: ").arg(m_fixture.name) + bug));
    }

    // --- lifecycle -----------------------------------------------------------------------

    void createIsIdempotent()
    {
        auto b = make();
        QVERIFY(b->isCreated());
        b->create();
        QVERIFY(b->isCreated());
        QVERIFY(!b->id().isEmpty());
        QVERIFY(!b->typeName().isEmpty());
        QVERIFY(supportsExecution(b.get()));
        QVERIFY(b->listDir(QStringLiteral(".")).isEmpty());
    }

    // --- file operations -----------------------------------------------------------------

    void writeThenRead_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("content");
        QTest::newRow("text") << QStringLiteral("a.txt") << QByteArray("hello\nworld\n");
        QTest::newRow("empty") << QStringLiteral("empty") << QByteArray();
        QTest::newRow("binary") << QStringLiteral("b.bin") << allBytes(4);
        QTest::newRow("nested") << QStringLiteral("a/b/c/d.txt") << QByteArray("deep");
        QTest::newRow("unicode name") << QStringLiteral("dür/ñame ☃.txt") << QByteArray("u");
        QTest::newRow("1 MiB") << QStringLiteral("big.bin") << allBytes(4096);
    }
    void writeThenRead()
    {
        QFETCH(QString, path);
        QFETCH(QByteArray, content);
        auto b = make();
        b->writeFile(path, content);
        QCOMPARE(b->readFile(path), content);
        const FileInfo info = b->stat(path);
        QVERIFY(!info.isDir);
        QCOMPARE(info.type, FileInfo::Type::File);
        QCOMPARE(info.size, std::optional<qint64>(content.size()));
    }

    void overwriteReplacesContent()
    {
        auto b = make();
        b->writeFile(QStringLiteral("f.txt"), "a much longer first version");
        b->writeFile(QStringLiteral("f.txt"), "short");
        QCOMPARE(b->readFile(QStringLiteral("f.txt")), QByteArray("short"));
    }

    void listDirReportsEntries()
    {
        auto b = make();
        b->writeFile(QStringLiteral("a.txt"), "abc");
        b->writeFile(QStringLiteral("sub/b.txt"), "bb");
        b->makeDirs(QStringLiteral("empty"));
        const QList<FileInfo> top = b->listDir(QStringLiteral("."));
        QCOMPARE(sortedPaths(top), (QStringList{QStringLiteral("a.txt"), QStringLiteral("empty"),
                                                QStringLiteral("sub")}));
        QCOMPARE(entryNamed(top, QStringLiteral("a.txt"))->size, std::optional<qint64>(3));
        QVERIFY(!entryNamed(top, QStringLiteral("a.txt"))->isDir);
        QVERIFY(entryNamed(top, QStringLiteral("sub"))->isDir);
        QVERIFY(entryNamed(top, QStringLiteral("empty"))->isDir);
        QCOMPARE(sortedPaths(b->listDir(QStringLiteral("sub"))),
                 QStringList{QStringLiteral("sub/b.txt")});
        QVERIFY(b->listDir(QStringLiteral("empty")).isEmpty());
        QCOMPARE(errorName([&] { b->listDir(QStringLiteral("a.txt")); }),
                 QStringLiteral("NotADirectoryError"));
        QCOMPARE(errorName([&] { b->listDir(QStringLiteral("missing")); }),
                 QStringLiteral("FileNotFoundError"));
    }

    void statReportsTypes()
    {
        auto b = make();
        b->writeFile(QStringLiteral("d/f"), "12345");
        QVERIFY(b->stat(QStringLiteral("d")).isDir);
        QCOMPARE(b->stat(QStringLiteral("d")).type, FileInfo::Type::Directory);
        QCOMPARE(b->stat(QStringLiteral("d/f")).size, std::optional<qint64>(5));
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("d/nope")); }),
                 QStringLiteral("FileNotFoundError"));
        QCOMPARE(errorName([&] { b->readFile(QStringLiteral("nope")); }),
                 QStringLiteral("FileNotFoundError"));
        QCOMPARE(errorName([&] { b->readFile(QStringLiteral("d")); }),
                 QStringLiteral("IsADirectoryError"));
    }

    void makeDirsIsIdempotent()
    {
        auto b = make();
        b->makeDirs(QStringLiteral("x/y/z"));
        b->makeDirs(QStringLiteral("x/y/z"));
        b->makeDirs(QStringLiteral("x"));
        QVERIFY(b->stat(QStringLiteral("x/y/z")).isDir);
        b->writeFile(QStringLiteral("file"), "f");
        QVERIFY(!errorName([&] { b->makeDirs(QStringLiteral("file/sub")); }).isEmpty());
    }

    void removeFilesAndFolders()
    {
        auto b = make();
        b->writeFile(QStringLiteral("f.txt"), "f");
        b->writeFile(QStringLiteral("d/e/g.txt"), "g");
        b->removeFile(QStringLiteral("f.txt"));
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("f.txt")); }),
                 QStringLiteral("FileNotFoundError"));
        // A folder with contents needs `recursive`; nothing is removed without it.
        QVERIFY(!errorName([&] { b->removeFile(QStringLiteral("d")); }).isEmpty());
        QCOMPARE(b->readFile(QStringLiteral("d/e/g.txt")), QByteArray("g"));
        b->removeFile(QStringLiteral("d"), true);
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("d")); }),
                 QStringLiteral("FileNotFoundError"));
        QCOMPARE(errorName([&] { b->removeFile(QStringLiteral("missing")); }),
                 QStringLiteral("FileNotFoundError"));
    }

    void transfersReportPerFile()
    {
        auto b = make();
        const QList<FileTransferResult> up = b->uploadFiles(
            {{QStringLiteral("u/one.txt"), QByteArray("1")}, {QStringLiteral("../out"), "x"}});
        QCOMPARE(up.size(), 2);
        QVERIFY(up[0].success());
        QVERIFY(!up[1].success());
        const QList<FileTransferResult> down =
            b->downloadFiles({QStringLiteral("u/one.txt"), QStringLiteral("missing")});
        QCOMPARE(down.size(), 2);
        QVERIFY(down[0].success());
        QCOMPARE(down[0].content.value_or(QByteArray()), QByteArray("1"));
        QVERIFY(!down[1].success());
    }

    // --- execute -------------------------------------------------------------------------

    void executeReturnsExitCodes_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<int>("exitCode");
        QTest::newRow("true") << QStringLiteral("true") << 0;
        QTest::newRow("false") << QStringLiteral("false") << 1;
        QTest::newRow("exit 7") << QStringLiteral("exit 7") << 7;
        QTest::newRow("exit 255") << QStringLiteral("exit 255") << 255;
        QTest::newRow("not found") << QStringLiteral("no-such-command-elsai") << 127;
        QTest::newRow("last of a list") << QStringLiteral("false; true") << 0;
    }
    void executeReturnsExitCodes()
    {
        QFETCH(QString, command);
        QFETCH(int, exitCode);
        const ExecuteResult r = make()->execute(command);
        QCOMPARE(r.exitCode, exitCode);
        QCOMPARE(r.success(), exitCode == 0);
        QVERIFY(!r.timedOut);
        QVERIFY(!r.truncated);
    }

    void executeSeparatesStreams()
    {
        const ExecuteResult r =
            make()->execute(QStringLiteral("printf 'out\\n'; printf 'err\\n' >&2; printf 'o2'"));
        QCOMPARE(r.output, QStringLiteral("out\no2"));
        QCOMPARE(r.stderr_, QStringLiteral("err\n"));
        QCOMPARE(r.exitCode, 0);
    }

    void executeStreamsOutput()
    {
        QByteArray streamedOut, streamedErr;
        ExecuteOptions o;
        o.onOutput = [&](OutputChannel c, const QByteArray &chunk) {
            (c == OutputChannel::Stdout ? streamedOut : streamedErr) += chunk;
        };
        const ExecuteResult r = make()->execute(
            QStringLiteral("for i in 1 2 3; do echo line$i; done; echo oops >&2"), {}, {}, o);
        QCOMPARE(QString::fromUtf8(streamedOut), r.output);
        QCOMPARE(QString::fromUtf8(streamedErr), r.stderr_);
        QCOMPARE(r.output, QStringLiteral("line1\nline2\nline3\n"));
    }

    void executeSharesTheWorkspace()
    {
        auto b = make();
        b->writeFile(QStringLiteral("in.txt"), "from the api");
        QCOMPARE(b->execute(QStringLiteral("cat in.txt")).output, QStringLiteral("from the api"));
        QCOMPARE(b->execute(QStringLiteral("mkdir -p d/e && printf made > d/e/out.txt")).exitCode,
                 0);
        QCOMPARE(b->readFile(QStringLiteral("d/e/out.txt")), QByteArray("made"));
        QVERIFY(b->stat(QStringLiteral("d/e")).isDir);
        QCOMPARE(b->execute(QStringLiteral("head -c 1000 /dev/zero > zeros && wc -c < zeros"))
                     .output.trimmed(),
                 QStringLiteral("1000"));
        QCOMPARE(b->readFile(QStringLiteral("zeros")), QByteArray(1000, '\0'));
    }

    void executeRunsInCwd()
    {
        auto b = make();
        b->makeDirs(QStringLiteral("sub/dir"));
        const ExecuteResult r = b->execute(QStringLiteral("pwd"), {}, QStringLiteral("sub/dir"));
        QVERIFY2(r.output.endsWith(QStringLiteral("/sub/dir\n")), qPrintable(r.output));
        QCOMPARE(
            b->execute(QStringLiteral("printf x > here.txt"), {}, QStringLiteral("sub")).exitCode,
            0);
        QCOMPARE(b->readFile(QStringLiteral("sub/here.txt")), QByteArray("x"));
        // The default cwd is the workspace root.
        QCOMPARE(b->execute(QStringLiteral("ls")).output, QStringLiteral("sub\n"));
    }

    void executeCwdIsConfined_data()
    {
        QTest::addColumn<QString>("cwd");
        QTest::addColumn<QString>("error");
        QTest::newRow("..") << QStringLiteral("..") << QStringLiteral("PermissionError");
        QTest::newRow("../..") << QStringLiteral("../..") << QStringLiteral("PermissionError");
        QTest::newRow("absolute") << QStringLiteral("/etc") << QStringLiteral("PermissionError");
        QTest::newRow("sub/../..")
            << QStringLiteral("sub/../..") << QStringLiteral("PermissionError");
        QTest::newRow("missing") << QStringLiteral("nope") << QStringLiteral("FileNotFoundError");
        QTest::newRow("a file") << QStringLiteral("f.txt") << QStringLiteral("NotADirectoryError");
    }
    void executeCwdIsConfined()
    {
        QFETCH(QString, cwd);
        QFETCH(QString, error);
        auto b = make();
        b->makeDirs(QStringLiteral("sub"));
        b->writeFile(QStringLiteral("f.txt"), "f");
        QCOMPARE(errorName([&] { b->execute(QStringLiteral("touch escaped"), {}, cwd); }), error);
    }

    void executePassesPerCallEnv()
    {
        ExecuteOptions o;
        o.env.insert(QStringLiteral("ELSAI_CONF_VAR"), QStringLiteral("two words 'quoted' $x"));
        const ExecuteResult r =
            make()->execute(QStringLiteral("printf %s \"$ELSAI_CONF_VAR\""), {}, {}, o);
        QCOMPARE(r.output, QStringLiteral("two words 'quoted' $x"));
    }

    void executeKeepsCommandTextIntact()
    {
        // Quotes, newlines and shell syntax reach the shell as written.
        const QString command =
            QStringLiteral("x='a \"b\" c'\nprintf '%s|' \"$x\" 'it'\\''s' $((6*7))");
        QCOMPARE(make()->execute(command).output, QStringLiteral("a \"b\" c|it's|42|"));
    }

    void timeoutGives124_data()
    {
        QTest::addColumn<QString>("command");
        QTest::newRow("sleep") << QStringLiteral("echo before; sleep 30");
        QTest::newRow("TERM ignored") << QStringLiteral("trap '' TERM; echo before; sleep 30");
        QTest::newRow("busy loop") << QStringLiteral("echo before; while :; do :; done");
    }
    void timeoutGives124()
    {
        QFETCH(QString, command);
        const ExecuteResult r = make()->execute(command, 1);
        QCOMPARE(r.exitCode, 124);
        QVERIFY(r.timedOut);
        QVERIFY(!r.success());
        QCOMPARE(r.output, QStringLiteral("before\n"));
    }

    void endlessOutputIsCappedUntilTheTimeout()
    {
        const ExecuteResult r = make()->execute(QStringLiteral("yes"), 2);
        QCOMPARE(r.exitCode, 124);
        QVERIFY(r.truncated);
        QVERIFY(r.output.size() <= 100000);
        QVERIFY(r.output.startsWith(QStringLiteral("y\ny\n")));
    }

    void timeoutKillsBackgroundWork()
    {
        auto b = make();
        const ExecuteResult r =
            b->execute(QStringLiteral("(sleep 2; echo late > late.txt) & sleep 30"), 1);
        QCOMPARE(r.exitCode, 124);
        QTest::qWait(3500);
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("late.txt")); }),
                 QStringLiteral("FileNotFoundError"));
    }

    void backgroundWorkDoesNotOutliveTheCall()
    {
        auto b = make();
        const ExecuteResult r = b->execute(
            QStringLiteral("(sleep 2; echo late > late.txt) >/dev/null 2>&1 & echo started"), 60);
        QCOMPARE(r.output, QStringLiteral("started\n"));
        QCOMPARE(r.exitCode, 0);
        QVERIFY(!r.timedOut);
        QTest::qWait(3500);
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("late.txt")); }),
                 QStringLiteral("FileNotFoundError"));
    }

    void outputIsTruncatedAtTheCap()
    {
        auto b = make();
        const ExecuteResult r =
            b->execute(QStringLiteral("head -c 300000 /dev/zero | tr '\\0' a; echo tail >&2"));
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.truncated);
        QVERIFY(r.output.size() + r.stderr_.size() <= 100000);
        QVERIFY(r.output.size() >= 50000);
        QVERIFY(r.output.startsWith(QStringLiteral("aaaa")));
        // Both streams count towards the one cap.
        const ExecuteResult both = b->execute(QStringLiteral(
            "head -c 70000 /dev/zero | tr '\\0' o; head -c 70000 /dev/zero | tr '\\0' e >&2"));
        QVERIFY(both.truncated);
        QVERIFY(both.output.size() + both.stderr_.size() <= 100000);
        const ExecuteResult small =
            b->execute(QStringLiteral("head -c 99000 /dev/zero | tr '\\0' s"));
        QVERIFY(!small.truncated);
        QCOMPARE(small.output.size(), 99000);
    }

    // --- path confinement ----------------------------------------------------------------

    void escapingPathsAreRefused_data()
    {
        QTest::addColumn<QString>("path");
        for (const char *p : {"../escape.txt", "..", "/etc/passwd", "/tmp/elsai-escape",
                              "a/../../escape.txt", "a/b/../../../escape.txt"})
            QTest::newRow(p) << QString::fromUtf8(p);
    }
    void escapingPathsAreRefused()
    {
        QFETCH(QString, path);
        auto b = make();
        b->makeDirs(QStringLiteral("a/b"));
        const QString perm = QStringLiteral("PermissionError");
        QCOMPARE(errorName([&] { b->readFile(path); }), perm);
        QCOMPARE(errorName([&] { b->writeFile(path, "x"); }), perm);
        QCOMPARE(errorName([&] { b->stat(path); }), perm);
        QCOMPARE(errorName([&] { b->listDir(path); }), perm);
        QCOMPARE(errorName([&] { b->removeFile(path); }), perm);
        QCOMPARE(errorName([&] { b->makeDirs(path + QStringLiteral("/new")); }), perm);
    }

    void symlinkEscapesAreRefused()
    {
        auto b = make();
        // Planted by a command, as an agent would.
        const ExecuteResult r = b->execute(QStringLiteral(
            "ln -s /etc/passwd abs && ln -s .. up && ln -s ../../../../../../../../etc rel && "
            "mkdir -p d && ln -s /tmp d/tmp && ln -s /nonexistent-elsai dangling"));
        QCOMPARE(r.exitCode, 0);
        const QString perm = QStringLiteral("PermissionError");
        QCOMPARE(errorName([&] { b->readFile(QStringLiteral("abs")); }), perm);
        QCOMPARE(errorName([&] { b->readFile(QStringLiteral("rel/passwd")); }), perm);
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("up/x")); }), perm);
        QCOMPARE(errorName([&] { b->listDir(QStringLiteral("up")); }), perm);
        // the ranged read and the capped listing go through the same confinement
        QCOMPARE(errorName([&] { b->readFileRange(QStringLiteral("abs"), 0, 10); }), perm);
        QCOMPARE(errorName([&] { b->readFileRange(QStringLiteral("rel/passwd"), 5, 10); }), perm);
        QCOMPARE(errorName([&] { listDirFirst(*b, QStringLiteral("up"), 10, -1); }), perm);
        QCOMPARE(errorName([&] { listDirFirst(*b, QStringLiteral("d/tmp"), 10, -1); }), perm);
        QCOMPARE(errorName([&] { b->writeFile(QStringLiteral("abs"), "x"); }), perm);
        QCOMPARE(errorName([&] { b->writeFile(QStringLiteral("up/escape.txt"), "x"); }), perm);
        QCOMPARE(errorName([&] { b->writeFile(QStringLiteral("d/tmp/escape.txt"), "x"); }), perm);
        QCOMPARE(errorName([&] { b->writeFile(QStringLiteral("dangling"), "x"); }), perm);
        QCOMPARE(errorName([&] { b->makeDirs(QStringLiteral("up/newdir")); }), perm);
        QCOMPARE(errorName([&] { b->removeFile(QStringLiteral("rel/passwd")); }), perm);
        QCOMPARE(errorName([&] { b->execute(QStringLiteral("true"), {}, QStringLiteral("up")); }),
                 perm);
        // The links themselves are listed, not followed.
        const QList<FileInfo> top = b->listDir(QStringLiteral("."));
        QVERIFY(entryNamed(top, QStringLiteral("abs")));
        QVERIFY(entryNamed(top, QStringLiteral("up")));
        if (m_fixture.listsSymlinks) {
            QCOMPARE(entryNamed(top, QStringLiteral("abs"))->type, FileInfo::Type::Symlink);
            QVERIFY(!entryNamed(top, QStringLiteral("up"))->isDir);
        }
    }

    // The same refusal is the same error type on every backend (the local backend's; a
    // remote refusal goes through the one errno mapping, platform/errnoerror.h).
    void errorsHaveTheSameTypeEverywhere_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("type");
        // clang-format off
        const auto row = [](const char *op, const char *path, const char *type) {
            QTest::addRow("%s %s", op, path) << QString::fromUtf8(op) << QString::fromUtf8(path)
                                             << QString::fromUtf8(type);
        };
        row("read",   "missing.txt",  "FileNotFoundError");
        row("read",   "d",            "IsADirectoryError");
        row("read",   "loop",         "PermissionError");
        row("read",   "out/passwd",   "PermissionError");
        row("stat",   "missing.txt",  "FileNotFoundError");
        row("stat",   "d/missing",    "FileNotFoundError");
        row("stat",   "f.txt/x",      "NotADirectoryError");
        row("list",   "missing",      "FileNotFoundError");
        row("list",   "f.txt",        "NotADirectoryError");
        row("list",   "loop",         "PermissionError");
        row("list",   "out",          "PermissionError");
        row("walk",   "missing",      "FileNotFoundError");
        row("walk",   "f.txt",        "NotADirectoryError");
        row("walk",   "loop",         "PermissionError");
        row("walk",   "out",          "PermissionError");
        row("write",  "d",            "IsADirectoryError");
        row("write",  "loop/x",       "PermissionError");
        row("write",  "f.txt/x",      "NotADirectoryError");
        row("mkdirs", "out/new",      "PermissionError");
        row("remove", "missing.txt",  "FileNotFoundError");
        row("remove", "d",            "IsADirectoryError");
        row("cwd",    "missing",      "FileNotFoundError");
        row("cwd",    "loop",         "PermissionError");
        row("cwd",    "out",          "PermissionError");
        // clang-format on
    }
    void errorsHaveTheSameTypeEverywhere()
    {
        QFETCH(QString, op);
        QFETCH(QString, path);
        QFETCH(QString, type);
        auto b = make();
        QCOMPARE(b->execute(QStringLiteral("echo x > f.txt && mkdir -p d/e && ln -s loop loop && "
                                           "ln -s / out"))
                     .exitCode,
                 0);
        const QString got = errorName([&] {
            if (op == QLatin1String("read"))
                b->readFile(path);
            else if (op == QLatin1String("stat"))
                b->stat(path);
            else if (op == QLatin1String("list"))
                b->listDir(path);
            else if (op == QLatin1String("walk"))
                b->walkTree(path, true, [](const WalkEntry &) { return WalkStep::Continue; });
            else if (op == QLatin1String("write"))
                b->writeFile(path, "x");
            else if (op == QLatin1String("mkdirs"))
                b->makeDirs(path);
            else if (op == QLatin1String("remove"))
                b->removeFile(path);
            else
                b->execute(QStringLiteral("true"), {}, path);
        });
        QCOMPARE(got, type);
    }

    void symlinksInsideTheWorkspaceWork()
    {
        auto b = make();
        b->writeFile(QStringLiteral("sub/f.txt"), "inside");
        QCOMPARE(b->execute(QStringLiteral("ln -s sub/f.txt rel && ln -s sub dir")).exitCode, 0);
        QCOMPARE(b->readFile(QStringLiteral("rel")), QByteArray("inside"));
        QCOMPARE(b->readFile(QStringLiteral("dir/f.txt")), QByteArray("inside"));
        QCOMPARE(b->execute(QStringLiteral("cat f.txt"), {}, QStringLiteral("dir")).output,
                 QStringLiteral("inside"));
    }

    // --- identity: one file under two names -------------------------------------------

    void statTellsOneFileFromAnother()
    {
        auto b = make();
        b->writeFile(QStringLiteral("sub/f.txt"), "one");
        b->writeFile(QStringLiteral("sub/g.txt"), "one");
        QCOMPARE(b->execute(QStringLiteral("ln -s sub dir && ln sub/f.txt hard.txt")).exitCode, 0);
        const FileInfo f = b->stat(QStringLiteral("sub/f.txt"));
        QVERIFY(f.inode != 0);
        QVERIFY(f.isSameFile(b->stat(QStringLiteral("dir/f.txt"))));
        QVERIFY(f.isSameFile(b->stat(QStringLiteral("./sub//f.txt"))));
        QVERIFY(f.isSameFile(b->stat(QStringLiteral("hard.txt"))));
        QVERIFY(!f.isSameFile(b->stat(QStringLiteral("sub/g.txt"))));
    }

    // A move onto itself is a no-op that says so, never read → write → delete of the file.
    void moveOntoItselfKeepsTheFile_data()
    {
        QTest::addColumn<QString>("dest");
        QTest::newRow("same path") << QStringLiteral("sub/f.txt");
        QTest::newRow("./ spelling") << QStringLiteral("./sub/./f.txt");
        QTest::newRow("double slash") << QStringLiteral("sub//f.txt");
        QTest::newRow("folder link") << QStringLiteral("dir/f.txt");
        QTest::newRow("link to the root") << QStringLiteral("root/sub/f.txt");
        QTest::newRow("hard link") << QStringLiteral("hard.txt");
    }
    void moveOntoItselfKeepsTheFile()
    {
        QFETCH(QString, dest);
        auto b = make();
        b->writeFile(QStringLiteral("sub/f.txt"), "keep me");
        QCOMPARE(b->execute(QStringLiteral("ln -s sub dir && ln -s . root && ln sub/f.txt "
                                           "hard.txt"))
                     .exitCode,
                 0);
        const SandboxPtr sb = Sandbox::create(
            QStringLiteral("conformance-move-%1").arg(QTest::currentDataTag()), b, std::nullopt);
        sb->start();
        QCOMPARE(sb->moveFile(QStringLiteral("sub/f.txt"), dest), false);
        QCOMPARE(b->readFile(QStringLiteral("sub/f.txt")), QByteArray("keep me"));
        QCOMPARE(b->readFile(dest), QByteArray("keep me"));
        // a real move still moves
        QCOMPARE(sb->moveFile(QStringLiteral("sub/f.txt"), QStringLiteral("moved.txt")), true);
        QCOMPARE(b->readFile(QStringLiteral("moved.txt")), QByteArray("keep me"));
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("sub/f.txt")); }),
                 QStringLiteral("FileNotFoundError"));
        sb->stop(false);
    }

    // --- bounded reads and listings (agent-facing) ----------------------------------------

    void rangedReadsMoveOnlyTheRange_data()
    {
        QTest::addColumn<qint64>("lineOffset");
        QTest::addColumn<qint64>("lineLimit");  // -1: none
        QTest::addColumn<qint64>("byteOffset"); // -1: none
        QTest::addColumn<qint64>("maxBytes");
        QTest::addColumn<qint64>("startByte");
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<bool>("cut");
        const qint64 cap = DefaultReadFileMaxBytes;
        const qint64 head = cap - cap % LineBytes; // cut at the last whole line
        QTest::newRow("head, capped") << 0LL << -1LL << -1LL << cap << 0LL << head << true;
        QTest::newRow("lines 10-14")
            << 10LL << 5LL << -1LL << cap << 10 * LineBytes << 5 * LineBytes << false;
        QTest::newRow("line offset past a scan buffer")
            << 30000LL << 2LL << -1LL << cap << 30000 * LineBytes << 2 * LineBytes << false;
        QTest::newRow("byte offset, 2 lines")
            << 0LL << 2LL << 1100LL << cap << 1100LL << 2 * LineBytes << false;
        QTest::newRow("small max_bytes") << 0LL << -1LL << -1LL << 100LL << 0LL << 99LL << true;
        QTest::newRow("the sparse tail")
            << 0LL << -1LL << HugeSize - 100 << cap << HugeSize - 100 << 100LL << false;
        QTest::newRow("past the end")
            << 0LL << -1LL << HugeSize + 5 << cap << HugeSize << 0LL << false;
    }
    void rangedReadsMoveOnlyTheRange()
    {
        QFETCH(qint64, lineOffset);
        QFETCH(qint64, lineLimit);
        QFETCH(qint64, byteOffset);
        QFETCH(qint64, maxBytes);
        QFETCH(qint64, startByte);
        QFETCH(qint64, bytes);
        QFETCH(bool, cut);
        auto b = make();
        QVERIFY(b->hasRangedRead()); // every backend of this project reads just the range
        plantHugeFile(*b);
        BoundedReadRequest request;
        request.lineOffset = lineOffset;
        if (lineLimit >= 0)
            request.lineLimit = lineLimit;
        if (byteOffset >= 0)
            request.byteOffset = byteOffset;
        request.maxBytes = maxBytes;
        if (m_fixture.resetTransfer)
            m_fixture.resetTransfer();
        const BoundedRead read = readBounded(*b, QStringLiteral("huge.txt"), request);
        QCOMPARE(read.totalBytes, HugeSize);
        QCOMPARE(read.startByte, startByte);
        QCOMPARE(qint64(read.bytes.size()), bytes);
        QCOMPARE(read.cut, cut);
        if (startByte < (1 << 20) && bytes > 0)
            QVERIFY(read.bytes.startsWith(startByte % LineBytes == 0 ? "abcdefghij" : ""));
        if (m_fixture.largestTransfer) {
            // one answer carries at most the range asked for plus a little, never the file:
            // base64 (4/3) in JSON, which AgentCore's answer holds twice (its text content and
            // structuredContent.stdout); 64 MiB would be ~85 MiB of base64
            const qint64 biggest = m_fixture.largestTransfer();
            QVERIFY2(biggest <= 3 * (maxBytes + 3) + 64 * 1024,
                     qPrintable(QStringLiteral("%1 bytes in one answer").arg(biggest)));
        }
    }

    void readOnlyAgentGetsTheHeadOfAHugeFile()
    {
        auto b = make();
        plantHugeFile(*b);
        const SandboxPtr sb = Sandbox::create(QStringLiteral("conformance-huge"), b, std::nullopt);
        sb->start();
        const AgentPtr reader = Agent::create(QStringLiteral("reader"));
        sb->attach(reader, SandboxAttachMode::ReadOnly);
        const ToolResult r =
            reader->callTool(QStringLiteral("read_file"), {{QStringLiteral("path"), "huge.txt"}});
        const qint64 head = DefaultReadFileMaxBytes - DefaultReadFileMaxBytes % LineBytes;
        QCOMPARE(r.data.value(QStringLiteral("total_bytes")).toInteger(), HugeSize);
        QCOMPARE(r.data.value(QStringLiteral("bytes")).toInteger(), head);
        QCOMPARE(r.data.value(QStringLiteral("truncated")).toBool(), true);
        QCOMPARE(r.data.value(QStringLiteral("next_offset")).toInteger(), head / LineBytes);
        QCOMPARE(r.data.value(QStringLiteral("next_byte_offset")).toInteger(), head);
        QVERIFY(r.text.contains(QStringLiteral("of %1 shown").arg(HugeSize)));
        QVERIFY(r.text.contains(QStringLiteral("offset=%1").arg(head / LineBytes)));
        // and the rest reads on from there
        const ToolResult next = reader->callTool(QStringLiteral("read_file"),
                                                 {{QStringLiteral("path"), "huge.txt"},
                                                  {QStringLiteral("offset"), head / LineBytes},
                                                  {QStringLiteral("limit"), 1}});
        QCOMPARE(next.data.value(QStringLiteral("content")).toString(),
                 QStringLiteral("abcdefghij\n"));
        sb->stop(false);
    }

    // --- the coding-agent tools (docs/tools.md), through an agent as every front end calls them

private:
    /// A sandbox on `b` with a read-only and a read-write agent; `body` runs, then it stops.
    void withAgents(const std::shared_ptr<SandboxBackend> &b,
                    const std::function<void(const AgentPtr &reader, const AgentPtr &writer)> &body)
    {
        const SandboxPtr sb = Sandbox::create(QStringLiteral("conformance-tools"), b, std::nullopt);
        sb->start();
        const AgentPtr reader = Agent::create(QStringLiteral("reader"));
        const AgentPtr writer = Agent::create(QStringLiteral("writer"));
        sb->attach(reader, SandboxAttachMode::ReadOnly);
        sb->attach(writer);
        body(reader, writer);
        sb->stop(false);
    }

    static QString text(const AgentPtr &agent, const QString &tool, const QJsonObject &args)
    {
        try {
            return agent->callTool(tool, args).text;
        } catch (const SandboxError &e) {
            return QStringLiteral("ERROR ") + e.specName();
        }
    }

private Q_SLOTS:
    void agentToolsSearchTheWorkspace()
    {
        auto b = make();
        b->writeFile(QStringLiteral("src/a.py"), "import os\ndef alpha():\n    return 1\n");
        b->writeFile(QStringLiteral("src/deep/b.py"), "def beta():\n    pass\n");
        b->writeFile(QStringLiteral("node_modules/m/x.py"), "def hidden():\n");
        b->writeFile(QStringLiteral("notes.md"), "nothing here\n");
        withAgents(b, [&](const AgentPtr &reader, const AgentPtr &) {
            QCOMPARE(text(reader, "grep", {{"pattern", "def \\w+"}}),
                     QStringLiteral("src/a.py:2:def alpha():\nsrc/deep/b.py:1:def beta():"));
            QCOMPARE(text(reader, "grep", {{"pattern", "return"}, {"context", 1}}),
                     QStringLiteral("src/a.py-2-def alpha():\nsrc/a.py:3:    return 1"));
            QCOMPARE(text(reader, "grep",
                          {{"pattern", "def"}, {"output", "files"}, {"include_excluded", true}}),
                     QStringLiteral("node_modules/m/x.py\nsrc/a.py\nsrc/deep/b.py"));
            QCOMPARE(text(reader, "grep", {{"pattern", "def"}, {"max_results", 1}}),
                     QStringLiteral("src/a.py:2:def alpha():\n[more: stopped after 1 matching "
                                    "lines; narrow the pattern, path or include, or raise "
                                    "max_results]"));
            QCOMPARE(text(reader, "glob", {{"pattern", "**/*.py"}, {"order", "path"}}),
                     QStringLiteral("src/a.py\nsrc/deep/b.py"));
            QCOMPARE(text(reader, "tree", {{"depth", 2}}),
                     QStringLiteral("node_modules/ (excluded: not expanded)\nnotes.md (13 "
                                    "bytes)\nsrc/\n  a.py (36 bytes)\n  deep/"));
            QVERIFY(text(reader, "stat", {{"path", "src/a.py"}})
                        .startsWith(QLatin1String("src/a.py: file, 36 bytes")));
            QCOMPARE(text(reader, "stat", {{"path", "none"}}),
                     QStringLiteral("none: does not exist"));
            QCOMPARE(
                text(reader, "read_many", {{"paths", QJsonArray{"notes.md", "src/deep/b.py"}}}),
                QStringLiteral("==> notes.md <==\nnothing here\n==> src/deep/b.py <==\n"
                               "def beta():\n    pass"));
            QCOMPARE(text(reader, "edit_file", {{"path", "notes.md"}}),
                     QStringLiteral("ERROR SandboxMutationDeniedError"));
        });
    }

    // grep answers the same on every backend over a tree with odd names, binary files, seed
    // excludes and links out of the searched folder; a remote one fetches the files it searches
    // in ONE archive (a folder of 2 files and one of 50 cost the same round trips), bounded.
    void grepOverATreeIsOneFetch()
    {
        auto b = make();
        QCOMPARE(
            b->execute(QStringLiteral(
                           "mkdir -p few many/node_modules/m outside && "
                           "for d in a b c d; do mkdir -p many/$d/deep; for i in 1 2 3 4 5 6; "
                           "do printf 'x\\nneedle %s%s\\n' $d $i > many/$d/f$i.txt; "
                           "printf 'needle deep\\n' > many/$d/deep/g$i.txt; done; done && "
                           "printf 'needle a\\n' > few/one.txt && printf 'no\\n' > few/two.txt && "
                           "printf 'needle odd\\n' > 'many/a/-[*] \\x.txt' && "
                           "printf 'needle\\0bin' > many/a/bin.dat && "
                           "printf 'needle dep\\n' > many/node_modules/m/i.js && "
                           "printf 'needle outside\\n' > outside/o.txt && "
                           "ln -s ../outside many/link && ln -s ../outside/o.txt many/flink"))
                .exitCode,
            0);
        const auto roundTrips = [&] { return m_fixture.roundTrips ? m_fixture.roundTrips() : 0; };
        withAgents(b, [&](const AgentPtr &reader, const AgentPtr &) {
            const auto trips = [&](const QJsonObject &args, QString *out) {
                const qint64 before = roundTrips();
                *out = text(reader, "grep", args);
                return roundTrips() - before;
            };
            QString few, many, counts;
            const qint64 fewTrips = trips({{"pattern", "needle"}, {"path", "few"}}, &few);
            QCOMPARE(few, QStringLiteral("few/one.txt:1:needle a"));
            const qint64 manyTrips =
                trips({{"pattern", "needle [a-z]+[0-9]*"}, {"path", "many"}, {"output", "count"}},
                      &counts);
            QCOMPARE(manyTrips, fewTrips);
            QCOMPARE(counts.count(u'\n') + 1, 49); // 48 files and the odd name, no more
            QVERIFY2(
                counts.startsWith(QLatin1String("many/a/-[*] \\x.txt:1\nmany/a/deep/g1.txt:1")),
                qPrintable(counts));
            QVERIFY(!counts.contains(QLatin1String("bin.dat")));
            QVERIFY(!counts.contains(QLatin1String("outside")));
            QVERIFY(!counts.contains(QLatin1String("node_modules")));
            // the whole tree, matches in walk order, capped with the marker as elsewhere
            QVERIFY(trips({{"pattern", "needle [b-c]3"}, {"max_results", 1}}, &many) <= fewTrips);
            QCOMPARE(many, QStringLiteral("many/b/f3.txt:2:needle b3\n[more: stopped after 1 "
                                          "matching lines; narrow the pattern, path or include, "
                                          "or raise max_results]"));
            // one fetch: the listing, the archive and the checks of the path around them
            QVERIFY2(fewTrips <= 4, qPrintable(QString::number(fewTrips)));
            // An agent fills the tree: past the fetch bound a remote search is refused, saying how
            // to narrow it, before anything is fetched; a local one reads the files where they are.
            GrepRequest bounded;
            bounded.pattern = QStringLiteral("needle");
            bounded.scope.path = QStringLiteral("many");
            bounded.maxFetchBytes = 100;
            const qint64 before = roundTrips();
            if (!b->fetchesFiles()) {
                QCOMPARE(grepWorkspace(*b, bounded).filesSearched, 50); // node_modules too: no skip
                return;
            }
            try {
                grepWorkspace(*b, bounded);
                QFAIL("a search past the fetch bound ran");
            } catch (const ValueError &e) {
                QVERIFY2(e.message().contains(QLatin1String("files to search under 'many' hold")) &&
                             e.message().contains(QLatin1String("narrow the path")),
                         qPrintable(e.message()));
            }
            if (m_fixture.roundTrips)
                QVERIFY2(roundTrips() - before <= 3,
                         qPrintable(QString::number(roundTrips() - before)));
        });
    }

    void agentToolsChangeTheWorkspace()
    {
        auto b = make();
        b->writeFile(QStringLiteral("a.txt"), "one\ntwo\nthree\n");
        b->writeFile(QStringLiteral("dir/f.txt"), "f\n");
        withAgents(b, [&](const AgentPtr &, const AgentPtr &writer) {
            QCOMPARE(text(writer, "edit_file",
                          {{"path", "a.txt"}, {"old_string", "two"}, {"new_string", "2"}}),
                     QStringLiteral("Edited a.txt: 1 replacement\n--- a/a.txt\n+++ b/a.txt\n"
                                    "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"));
            QCOMPARE(b->readFile(QStringLiteral("a.txt")), QByteArray("one\n2\nthree\n"));
            QCOMPARE(text(writer, "move", {{"source", "a.txt"}, {"destination", "b/a.txt"}}),
                     QStringLiteral("Moved a.txt to b/a.txt"));
            QCOMPARE(b->readFile(QStringLiteral("b/a.txt")), QByteArray("one\n2\nthree\n"));
            QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b->stat(QStringLiteral("a.txt")));
            QCOMPARE(text(writer, "move", {{"source", "dir"}, {"destination", "moved/dir"}}),
                     QStringLiteral("Moved dir to moved/dir"));
            QCOMPARE(b->readFile(QStringLiteral("moved/dir/f.txt")), QByteArray("f\n"));
            QCOMPARE(
                text(writer, "move", {{"source", "b/a.txt"}, {"destination", "moved/dir/f.txt"}}),
                QStringLiteral("ERROR FileExistsError"));
            QCOMPARE(text(writer, "mkdir", {{"path", "x/y"}}), QStringLiteral("Created x/y"));
            QVERIFY(b->stat(QStringLiteral("x/y")).isDir);
            QCOMPARE(text(writer, "delete", {{"path", "moved"}}), QStringLiteral("ERROR OSError"));
            QCOMPARE(text(writer, "delete", {{"path", "moved"}, {"recursive", true}}),
                     QStringLiteral("Deleted moved"));
            QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b->stat(QStringLiteral("moved")));
        });
    }

    void backgroundProcessesStartReadAndStop()
    {
        auto b = make();
        withAgents(b, [&](const AgentPtr &, const AgentPtr &writer) {
            if (!b->cancelsRunningCommands()) {
                QCOMPARE(text(writer, "process_start", {{"command", "true"}}),
                         QStringLiteral("ERROR PermissionError"));
                return;
            }
            const QString id =
                writer->callTool("process_start", {{"command", "echo up; exec sleep 300"}})
                    .data.value("process_id")
                    .toString();
            QVERIFY(!id.isEmpty());
            // the output arrives while it runs (a bounded wait, no wall-clock assumption)
            QString output;
            for (int i = 0; i < 600 && !output.contains(QLatin1String("up")); ++i) {
                output = writer->callTool("process_output", {{"process_id", id}})
                             .data.value("output")
                             .toString();
                if (!output.contains(QLatin1String("up")))
                    QTest::qWait(50);
            }
            QCOMPARE(output, QStringLiteral("up\n"));
            const ToolResult stopped = writer->callTool("process_stop", {{"process_id", id}});
            QVERIFY2(stopped.text.startsWith(QStringLiteral("Stopped %1: ended").arg(id)),
                     qPrintable(stopped.text));
            QCOMPARE(text(writer, "process_input", {{"process_id", id}, {"input", "x"}}),
                     b->acceptsInput() ? QStringLiteral("ERROR OSError")
                                       : QStringLiteral("ERROR PermissionError"));
        });
    }

    void agentListingsStopAtTheCap()
    {
        auto b = make();
        // 2,500 empty files: more than the cap, and names whose order is known
        QCOMPARE(b->execute(QStringLiteral("mkdir big && cd big && seq -f 'f%05g' 1 2500 | "
                                           "xargs touch"))
                     .exitCode,
                 0);
        const qsizetype cap = listDirMaxEntries();
        const CappedListing first = listDirFirst(*b, QStringLiteral("big"), cap, -1);
        QCOMPARE(first.totalEntries, 2500);
        QCOMPARE(first.listing.size(), cap);
        QCOMPARE(first.listing.path(first.listing.entries.front()), QStringLiteral("big/f00001"));
        QCOMPARE(first.listing.path(first.listing.entries.back()),
                 QStringLiteral("big/f%1").arg(cap, 5, 10, QLatin1Char('0')));
        QCOMPARE(first.listing.entries.front().size, std::optional<qint64>(0));
        if (m_fixture.resetTransfer) {
            m_fixture.resetTransfer();
            const CappedListing ten = listDirFirst(*b, QStringLiteral("big"), 10, -1);
            QCOMPARE(ten.listing.size(), 10);
            QCOMPARE(ten.totalEntries, 2500);
            // ten records came, not 2,500 (~150 KB)
            QVERIFY2(m_fixture.largestTransfer() < 8 * 1024,
                     qPrintable(QString::number(m_fixture.largestTransfer())));
        }
        // names with tabs, newlines and spaces keep their place (the remote sort keys on the
        // whole name) and come back whole
        QCOMPARE(b->execute(QStringLiteral("mkdir odd && cd odd && : > 'a\tb' && : > 'a b' && "
                                           ": > \"$(printf 'a\\nc')\" && : > z && : > aa"))
                     .exitCode,
                 0);
        const CappedListing odd = listDirFirst(*b, QStringLiteral("odd"), 4, -1);
        QCOMPARE(odd.totalEntries, 5);
        QStringList names;
        for (const DirListing::Entry &e : odd.listing.entries)
            names << QString::fromUtf8(odd.listing.name(e));
        QCOMPARE(names, (QStringList{QStringLiteral("a\tb"), QStringLiteral("a\nc"),
                                     QStringLiteral("a b"), QStringLiteral("aa")}));
        // the agent tool says how many more there are
        const SandboxPtr sb = Sandbox::create(QStringLiteral("conformance-list"), b, std::nullopt);
        sb->start();
        const AgentPtr reader = Agent::create(QStringLiteral("lister"));
        sb->attach(reader, SandboxAttachMode::ReadOnly);
        const ToolResult r =
            reader->callTool(QStringLiteral("list_dir"), {{QStringLiteral("path"), "big"}});
        QCOMPARE(r.data.value(QStringLiteral("entries")).toArray().size(), cap);
        QCOMPARE(r.data.value(QStringLiteral("total_entries")).toInteger(), 2500);
        QCOMPARE(r.data.value(QStringLiteral("truncated")).toBool(), true);
        QVERIFY(r.text.contains(QStringLiteral("500 more entries not shown")));
        sb->stop(false);
    }

    // --- seeding -------------------------------------------------------------------------

    void seedingCopiesTheProjectWithoutExcludes()
    {
        QTemporaryDir project;
        writeProject(project.path());
        auto b = make();
        const WorkspaceSeedResult r =
            b->seedWorkspace(project.path(), DEFAULT_SANDBOX_SEED_EXCLUDES);
        QVERIFY2(r.success(), qPrintable(r.errors.join(QLatin1Char('\n'))));
        QCOMPARE(r.filesSeeded, 5);
        QCOMPARE(b->readFile(QStringLiteral("README.md")), QByteArray("# project\n"));
        QCOMPARE(b->readFile(QStringLiteral("src/pkg/mod.py")), QByteArray("X = 1\n"));
        QCOMPARE(b->readFile(QStringLiteral("data.bin")), allBytes(2));
        QCOMPARE(b->readFile(QStringLiteral("nested/deep/deeper/file.txt")), QByteArray("deep\n"));
        for (const char *excluded :
             {".git", "node_modules", "key.pem", "secrets", "sub/.env", "link.md"})
            QCOMPARE(errorName([&] { b->stat(QString::fromUtf8(excluded)); }),
                     QStringLiteral("FileNotFoundError"));
        QVERIFY(r.skippedPaths.contains(QStringLiteral("link.md"))); // a symlink, not followed
        QVERIFY(r.skippedPaths.contains(QStringLiteral(".git")));
        // Commands see the seeded files.
        QCOMPARE(b->execute(QStringLiteral("cat src/main.py")).output,
                 QStringLiteral("print('main')\n"));
    }

    void seedingAppliesExtraExcludes()
    {
        QTemporaryDir project;
        writeProject(project.path());
        auto b = make();
        const WorkspaceSeedResult r = b->seedWorkspace(
            project.path(), DEFAULT_SANDBOX_SEED_EXCLUDES +
                                QStringList{QStringLiteral("*.md"), QStringLiteral("nested/")});
        QVERIFY(r.success());
        QCOMPARE(r.filesSeeded, 3);
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("README.md")); }),
                 QStringLiteral("FileNotFoundError"));
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("nested")); }),
                 QStringLiteral("FileNotFoundError"));
        QVERIFY(b->stat(QStringLiteral("src/main.py")).size.has_value());
    }

    // --- flush ---------------------------------------------------------------------------

    void flushCopiesSelectedArtifacts()
    {
        QTemporaryDir project;
        writeProject(project.path());
        const QString p = project.path();
        auto b = make();
        QVERIFY(b->seedWorkspace(p, DEFAULT_SANDBOX_SEED_EXCLUDES).success());
        QCOMPARE(b->execute(QStringLiteral("printf changed > src/main.py && mkdir -p dist && "
                                           "printf app > dist/app.js && printf n > notes.txt && "
                                           "mkdir -p node_modules/x && printf m > "
                                           "node_modules/x/new.json"))
                     .exitCode,
                 0);
        b->writeFile(QStringLiteral("src/new.py"), "new\n");
        const SyncPlan plan = b->planSync(p, defaultSandboxSyncPolicy());
        QVERIFY(plan.errors.isEmpty());
        QVERIFY(!QFileInfo::exists(p + QStringLiteral("/src/new.py"))); // a preview writes nothing

        const WorkspaceSyncResult r = b->syncArtifacts(p, defaultSandboxSyncPolicy());
        QVERIFY2(r.success(), qPrintable(r.errors.join(QLatin1Char('\n'))));
        QCOMPARE(r.filesSynced, 3);
        QCOMPARE(readHostFile(p + QStringLiteral("/src/main.py")), QByteArray("changed"));
        QCOMPARE(readHostFile(p + QStringLiteral("/src/new.py")), QByteArray("new\n"));
        QCOMPARE(readHostFile(p + QStringLiteral("/dist/app.js")), QByteArray("app"));
        QVERIFY(!QFileInfo::exists(p + QStringLiteral("/notes.txt")));               // not included
        QVERIFY(!QFileInfo::exists(p + QStringLiteral("/node_modules/x/new.json"))); // excluded
        // Nothing changed since: a second flush copies nothing.
        QCOMPARE(b->syncArtifacts(p, defaultSandboxSyncPolicy()).filesSynced, 0);
    }

    void flushHonoursACustomPolicy()
    {
        QTemporaryDir project;
        writeProject(project.path());
        const QString p = project.path();
        auto b = make();
        QVERIFY(b->seedWorkspace(p, DEFAULT_SANDBOX_SEED_EXCLUDES).success());
        b->writeFile(QStringLiteral("out/report.txt"), "r");
        b->writeFile(QStringLiteral("out/skip.log"), "l");
        b->writeFile(QStringLiteral("src/ignored.py"), "i");
        WorkspaceSyncPolicy policy;
        policy.syncIncludePatterns = QStringList{QStringLiteral("out/**")};
        policy.excludePatterns = {QStringLiteral("*.log")};
        const WorkspaceSyncResult r = b->syncArtifacts(p, policy);
        QVERIFY(r.success());
        QCOMPARE(r.filesSynced, 1);
        QCOMPARE(readHostFile(p + QStringLiteral("/out/report.txt")), QByteArray("r"));
        QVERIFY(!QFileInfo::exists(p + QStringLiteral("/out/skip.log")));
        QVERIFY(!QFileInfo::exists(p + QStringLiteral("/src/ignored.py")));
    }

    void flushKeepsHostChangesAndReportsConflicts()
    {
        QTemporaryDir project;
        const QString p = project.path();
        writeHostFile(p + QStringLiteral("/src/both.py"), "seeded\n");
        writeHostFile(p + QStringLiteral("/src/host_only.py"), "seeded\n");
        auto b = make();
        QVERIFY(b->seedWorkspace(p, DEFAULT_SANDBOX_SEED_EXCLUDES).success());
        writeHostFile(p + QStringLiteral("/src/both.py"), "host edit\n");
        writeHostFile(p + QStringLiteral("/src/host_only.py"), "host edit\n");
        b->writeFile(QStringLiteral("src/both.py"), "sandbox edit\n");

        const WorkspaceSyncResult r = b->syncArtifacts(p, defaultSandboxSyncPolicy());
        QVERIFY(!r.success());
        QCOMPARE(r.conflicts, QStringList{QStringLiteral("src/both.py")});
        QCOMPARE(readHostFile(p + QStringLiteral("/src/both.py")), QByteArray("host edit\n"));
        QCOMPARE(readHostFile(p + QStringLiteral("/src/both.py") + conflictSuffix()),
                 QByteArray("sandbox edit\n"));
        // Changed on the host only: left as the host has it, and no conflict.
        QCOMPARE(readHostFile(p + QStringLiteral("/src/host_only.py")), QByteArray("host edit\n"));
    }

    // The three-way flush, row by row (base = the seed, ours = the sandbox, theirs = the host):
    // the same decisions on every backend, whatever carries the files.
    void flushThreeWayTable_data()
    {
        QTest::addColumn<QString>("host");         // "" untouched, "edit", "delete"
        QTest::addColumn<QString>("sandbox");      // "" untouched, "edit", "delete"
        QTest::addColumn<QString>("extra");        // "" or what happens around the flush
        QTest::addColumn<QByteArray>("hostAfter"); // "<missing>": no host file
        QTest::addColumn<QString>("list");         // the result list naming src/a.py, or ""
        QTest::addColumn<QString>("conflictFile");
        const QByteArray seeded("seeded\n"), hostEdit("host edit\n"), ws("sandbox edit\n");
        const QByteArray missing("<missing>");
        const QString sidecar = QStringLiteral("src/a.py.sandbox-conflict");
        auto row = [](const char *name) -> QTestData & { return QTest::newRow(name); };
        row("unchanged in both -> nothing") << ""
                                            << ""
                                            << "" << seeded << ""
                                            << "";
        row("changed in sandbox only -> written") << ""
                                                  << "edit"
                                                  << "" << ws << "updated"
                                                  << "";
        row("changed on host only -> host wins") << "edit"
                                                 << ""
                                                 << "" << hostEdit << "keptHost"
                                                 << "";
        row("changed on both -> conflict") << "edit"
                                           << "edit"
                                           << "" << hostEdit << "conflicts" << sidecar;
        row("host deleted, sandbox unchanged -> stays deleted") << "delete"
                                                                << ""
                                                                << "" << missing << "hostDeleted"
                                                                << "";
        row("host deleted, sandbox changed -> conflict") << "delete"
                                                         << "edit"
                                                         << "" << missing << "conflicts" << sidecar;
        row("sandbox deleted -> reported, host kept") << ""
                                                      << "delete"
                                                      << "" << seeded << "sandboxDeleted"
                                                      << "";
        row("second conflict beside an edited conflict file -> new name")
            << "edit"
            << "edit"
            << "edited conflict file" << hostEdit << "conflicts"
            << QStringLiteral("src/a.py.sandbox-conflict-2");
        row("no base, keep-both -> conflict") << ""
                                              << "edit"
                                              << "no base" << seeded << "conflicts" << sidecar;
        row("no base, overwrite -> written") << ""
                                             << "edit"
                                             << "no base, overwrite" << ws << "updated"
                                             << "";
        const QByteArray same("converged\n");
        row("same change on both -> converged, nothing written") << "same"
                                                                 << "same"
                                                                 << "" << same << ""
                                                                 << "";
        // The base outlives the workbench: a second backend on the same workspace, as after a
        // restart, still decides three-way (skipped where a workspace cannot be reattached).
        row("restart: unchanged in both -> nothing") << ""
                                                     << ""
                                                     << "restart" << seeded << ""
                                                     << "";
        row("restart: changed in sandbox only -> written") << ""
                                                           << "edit"
                                                           << "restart" << ws << "updated"
                                                           << "";
        row("restart: changed on host only -> host wins") << "edit"
                                                          << ""
                                                          << "restart" << hostEdit << "keptHost"
                                                          << "";
        row("restart: changed on both -> conflict")
            << "edit"
            << "edit"
            << "restart" << hostEdit << "conflicts" << sidecar;
        row("restart: host deleted, sandbox unchanged -> stays deleted")
            << "delete"
            << ""
            << "restart" << missing << "hostDeleted"
            << "";
        row("restart: sandbox deleted -> reported, host kept")
            << ""
            << "delete"
            << "restart" << seeded << "sandboxDeleted"
            << "";
        row("restart: same change on both -> converged") << "same"
                                                         << "same"
                                                         << "restart" << same << ""
                                                         << "";
        // A converged flush moves the base: a later change on one side only is that side's,
        // not a conflict (also after a restart: the moved base is persisted).
        row("converged, then host edit -> host wins")
            << "same"
            << "same"
            << "converged, then host edit" << hostEdit << "keptHost"
            << "";
        row("converged, then sandbox edit -> written")
            << "same"
            << "same"
            << "converged, then sandbox edit" << ws << "updated"
            << "";
        row("converged, restart, then host edit -> host wins")
            << "same"
            << "same"
            << "converged, restart, then host edit" << hostEdit << "keptHost"
            << "";
        row("converged, restart, then sandbox edit -> written")
            << "same"
            << "same"
            << "converged, restart, then sandbox edit" << ws << "updated"
            << "";
    }

    void flushThreeWayTable()
    {
        QFETCH(QString, host);
        QFETCH(QString, sandbox);
        QFETCH(QString, extra);
        QFETCH(QByteArray, hostAfter);
        QFETCH(QString, list);
        QFETCH(QString, conflictFile);
        QTemporaryDir project, other;
        const QString seedRoot = project.path();
        writeHostFile(seedRoot + QStringLiteral("/src/a.py"), "seeded\n");
        writeHostFile(seedRoot + QStringLiteral("/src/b.py"), "b\n");
        std::shared_ptr<SandboxBackend> b = make();
        const WorkspaceSeedResult seeded =
            b->seedWorkspace(seedRoot, DEFAULT_SANDBOX_SEED_EXCLUDES);
        QVERIFY2(seeded.success(), qPrintable(seeded.errors.join(u'\n')));
        const bool restart = extra.contains(QLatin1String("restart"));
        if (restart && !m_fixture.reopen)
            QSKIP("this backend's workspace cannot be reattached after a restart");
        auto reopen = [&] {
            std::shared_ptr<SandboxBackend> again = m_fixture.reopen(*b);
            b.reset(); // the old one is gone, as after a restart (nothing is closed)
            again->create();
            b = std::move(again);
        };
        if (extra == QLatin1String("restart"))
            reopen();
        WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
        QString p = seedRoot;
        if (extra.startsWith(QLatin1String("no base"))) {
            // a folder this workspace never seeded from nor flushed to, holding other bytes
            p = other.path();
            writeHostFile(p + QStringLiteral("/src/a.py"), "seeded\n");
            if (extra.endsWith(QLatin1String("overwrite")))
                policy.noBaseConflict = NoBaseConflict::Overwrite;
        }
        const QString file = p + QStringLiteral("/src/a.py");
        if (host == QLatin1String("edit") || host == QLatin1String("same")) {
            writeHostFile(file, host == QLatin1String("same") ? "converged\n" : "host edit\n");
            // a distinct mtime whatever the file system's granularity
            QFile f(file);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.setFileTime(QDateTime::currentDateTime().addSecs(60),
                                  QFileDevice::FileModificationTime));
        } else if (host == QLatin1String("delete")) {
            QVERIFY(QFile::remove(file));
        }
        if (sandbox == QLatin1String("edit"))
            b->writeFile(QStringLiteral("src/a.py"), "sandbox edit\n");
        else if (sandbox == QLatin1String("same"))
            b->writeFile(QStringLiteral("src/a.py"), "converged\n");
        else if (sandbox == QLatin1String("delete"))
            b->removeFile(QStringLiteral("src/a.py"));
        if (extra.startsWith(QLatin1String("converged"))) {
            // the same bytes on both sides: nothing written, nothing in any list
            const QDateTime before = QFileInfo(file).lastModified();
            const WorkspaceSyncResult first = b->syncArtifacts(p, policy);
            QVERIFY2(first.success(), qPrintable(first.errors.join(u'\n')));
            QVERIFY(first.updated.isEmpty() && first.conflicts.isEmpty() &&
                    first.keptHost.isEmpty());
            QCOMPARE(QFileInfo(file).lastModified(), before);
            QCOMPARE(readHostFile(file), QByteArray("converged\n"));
            if (restart)
                reopen();
            if (extra.endsWith(QLatin1String("host edit"))) {
                writeHostFile(file, "host edit\n");
                QFile f(file);
                QVERIFY(f.open(QIODevice::ReadWrite));
                QVERIFY(f.setFileTime(QDateTime::currentDateTime().addSecs(120),
                                      QFileDevice::FileModificationTime));
            } else {
                b->writeFile(QStringLiteral("src/a.py"), "sandbox edit\n");
            }
        }
        if (extra == QLatin1String("edited conflict file")) {
            b->writeFile(QStringLiteral("src/a.py"), "first sandbox edit\n");
            const WorkspaceSyncResult first = b->syncArtifacts(p, policy);
            QCOMPARE(first.conflicts, QStringList{QStringLiteral("src/a.py")});
            QCOMPARE(readHostFile(file + conflictSuffix()), QByteArray("first sandbox edit\n"));
            writeHostFile(file + conflictSuffix(), "the user's merge\n");
            b->writeFile(QStringLiteral("src/a.py"), "sandbox edit\n");
        }

        // the preview decides the same
        const SyncPlan plan = b->planSync(p, policy);
        QVERIFY2(plan.errors.isEmpty(), qPrintable(plan.errors.join(QLatin1Char('\n'))));
        const QDateTime mtimeBefore = QFileInfo(file).lastModified();
        const WorkspaceSyncResult r = b->syncArtifacts(p, policy);
        if (list.isEmpty() && QFileInfo::exists(file)) // nothing to do: nothing written
            QCOMPARE(QFileInfo(file).lastModified(), mtimeBefore);
        const QByteArray now =
            QFileInfo::exists(file) ? readHostFile(file) : QByteArray("<missing>");
        QCOMPARE(now, hostAfter);
        const QMap<QString, QStringList> lists = {
            {QStringLiteral("updated"), r.updated},
            {QStringLiteral("keptHost"), r.keptHost},
            {QStringLiteral("hostDeleted"), r.hostDeleted},
            {QStringLiteral("sandboxDeleted"), r.sandboxDeleted},
            {QStringLiteral("conflicts"), r.conflicts},
        };
        for (auto it = lists.cbegin(); it != lists.cend(); ++it) {
            const QStringList want =
                it.key() == list ? QStringList{QStringLiteral("src/a.py")} : QStringList();
            QVERIFY2(it.value() == want,
                     qPrintable(it.key() + QStringLiteral(": ") + it.value().join(u',')));
        }
        // in a folder without a base the other seeded file is new
        QCOMPARE(r.added, p == seedRoot ? QStringList() : QStringList{QStringLiteral("src/b.py")});
        // the preview's class matches the flush's
        for (const SyncPlanEntry &e : plan.entries) {
            if (e.path != QLatin1String("src/a.py"))
                continue;
            using A = SyncPlanEntry::Action;
            const QMap<QString, A> kinds = {
                {"updated", A::Update},          {"keptHost", A::KeepHost},
                {"hostDeleted", A::HostDeleted}, {"sandboxDeleted", A::SandboxDeleted},
                {"conflicts", A::Conflict},      {"", A::Unchanged}};
            QCOMPARE(int(e.action), int(kinds.value(list)));
        }
        if (conflictFile.isEmpty()) {
            QVERIFY2(r.success(), qPrintable(r.errors.join(QLatin1Char('\n'))));
            QVERIFY(!QFileInfo::exists(file + conflictSuffix()));
        } else {
            QVERIFY(!r.success());
            QCOMPARE(r.conflictFiles.value(QStringLiteral("src/a.py")), conflictFile);
            QCOMPARE(readHostFile(p + QLatin1Char('/') + conflictFile),
                     QByteArray("sandbox edit\n"));
        }
        if (extra == QLatin1String("edited conflict file"))
            QCOMPARE(readHostFile(file + conflictSuffix()), QByteArray("the user's merge\n"));
        // the other file is untouched by all of this
        if (p == seedRoot)
            QCOMPARE(readHostFile(p + QStringLiteral("/src/b.py")), QByteArray("b\n"));
        // the result says it all to headless and MCP callers too
        const QJsonObject json = r.toJson();
        for (const char *key : {"added", "updated", "kept_host", "host_deleted", "sandbox_deleted",
                                "conflicts", "conflict_files"})
            QVERIFY2(json.contains(QLatin1String(key)), key);
    }

    void flushNeverCreatesSymlinksOnTheHost()
    {
        QTemporaryDir project;
        const QString p = project.path();
        writeHostFile(p + QStringLiteral("/src/a.py"), "a\n");
        auto b = make();
        QVERIFY(b->seedWorkspace(p, DEFAULT_SANDBOX_SEED_EXCLUDES).success());
        QCOMPARE(b->execute(QStringLiteral("ln -s /etc/passwd src/link.py")).exitCode, 0);
        const WorkspaceSyncResult r = b->syncArtifacts(p, defaultSandboxSyncPolicy());
        QVERIFY(!QFileInfo(p + QStringLiteral("/src/link.py")).isSymLink());
        QVERIFY(!QFileInfo::exists(p + QStringLiteral("/src/link.py")));
        QVERIFY(r.skippedPaths.contains(QStringLiteral("src/link.py")));
    }
};

} // namespace

int runBackendConformance(int argc, char **argv, const BackendFixture &fixture)
{
    QCoreApplication app(argc, argv);
    elsai::test::isolateFlushBases(); // remote backends keep their flush bases on the host
    int status = 0;
    {
        BackendConformance suite(fixture);
        status = QTest::qExec(&suite, argc, argv);
    }
    if (fixture.teardown)
        fixture.teardown();
    return status;
}

#include "conformance.moc"
