// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// LocalSandboxBackend, used through the SandboxBackend / ExecutionBackend interfaces: options,
// lifecycle, confined file operations, transfers, command execution (streams, timeouts, cwd,
// environment, streaming, cancellation, output cap, stray processes), concurrency, and
// seeding / syncing a host folder.

#include "backend.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "process.h"
#include "treecopy.h"
#include "types.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <thread>

#include <signal.h>
#include <unistd.h>

using namespace elsai;
using Options = LocalSandboxBackend::Options;

namespace {

/// Runs `f` and returns the spec name of the SandboxError it throws ("" when none).
QString errorName(const std::function<void()> &f, QString *message = nullptr)
{
    try {
        f();
    } catch (const SandboxError &e) {
        if (message)
            *message = e.message();
        return e.specName();
    } catch (const std::exception &e) {
        return QStringLiteral("std::exception: ") + QString::fromUtf8(e.what());
    }
    return QString();
}

void writeHost(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        qFatal("cannot write %s", qPrintable(path));
    f.write(data);
}

QByteArray readHost(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return QByteArrayLiteral("<missing>");
    return f.readAll();
}

/// Pids of processes whose command line has `arg` as one of its arguments.
QList<qint64> processesWithArgument(const QByteArray &arg)
{
    QList<qint64> pids;
    const qint64 self = QCoreApplication::applicationPid();
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &name : entries) {
        bool ok = false;
        const qint64 pid = name.toLongLong(&ok);
        if (!ok || pid == self)
            continue;
        QFile f(QStringLiteral("/proc/%1/cmdline").arg(name));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        if (f.readAll().split('\0').contains(arg))
            pids.append(pid);
    }
    return pids;
}

/// Kills leftovers so a failing test does not leave 100 s sleepers behind.
void killAll(const QList<qint64> &pids)
{
    for (qint64 pid : pids)
        ::kill(pid_t(pid), SIGKILL);
}

/// A unique `sleep` argument per test run, so /proc scans find only our processes.
QByteArray uniqueSleepArg(int row)
{
    return QByteArrayLiteral("100.") + QByteArray::number(QCoreApplication::applicationPid()) +
           QByteArray::number(row);
}

QString syncActionName(SyncPlanEntry::Action a)
{
    switch (a) {
    case SyncPlanEntry::Action::Add:
        return QStringLiteral("Add");
    case SyncPlanEntry::Action::Update:
        return QStringLiteral("Update");
    case SyncPlanEntry::Action::Unchanged:
        return QStringLiteral("Unchanged");
    case SyncPlanEntry::Action::KeepHost:
        return QStringLiteral("KeepHost");
    case SyncPlanEntry::Action::Conflict:
        return QStringLiteral("Conflict");
    case SyncPlanEntry::Action::SkippedSymlink:
        return QStringLiteral("SkippedSymlink");
    case SyncPlanEntry::Action::SkippedSpecial:
        return QStringLiteral("SkippedSpecial");
    case SyncPlanEntry::Action::HostDeleted:
        return QStringLiteral("HostDeleted");
    case SyncPlanEntry::Action::SandboxDeleted:
        return QStringLiteral("SandboxDeleted");
    }
    return QStringLiteral("?");
}

/// path → action name of a plan.
QMap<QString, QString> planActions(const SyncPlan &plan)
{
    QMap<QString, QString> out;
    for (const SyncPlanEntry &e : plan.entries)
        out.insert(e.path, syncActionName(e.action));
    return out;
}

} // namespace

class TestLocalBackend : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    // Options and identity
    void constructorDefaults();
    void constructorRejectsBadOptions_data();
    void constructorRejectsBadOptions();
    void identityThroughInterface();

    // Lifecycle
    void createIsIdempotentAndCreatesRoot();
    void operationsWhenClosedRaiseOSError_data();
    void operationsWhenClosedRaiseOSError();
    void closedExecuteRunsNothing();
    void workspaceSurvivesCloseAndReopen();

    // Files
    void fileRoundTrips();
    void listDirReportsEntries();
    void removeFileRecursive();
    void missingPathsRaiseFileNotFound_data();
    void missingPathsRaiseFileNotFound();
    void escapesAreRefused_data();
    void escapesAreRefused();
    void uploadFilesReportsPerFile();
    void downloadFilesReportsPerFile();

    // Execute
    void executeSeparatesStreams_data();
    void executeSeparatesStreams();
    void executeTimeouts_data();
    void executeTimeouts();
    void executeRejectsBadTimeout_data();
    void executeRejectsBadTimeout();
    void executeCwdInside_data();
    void executeCwdInside();
    void executeCwdRefused_data();
    void executeCwdRefused();
    void executeInheritsHostEnvironment();
    void executeWithoutInheritedEnvironment();
    void executeEnvOverrides_data();
    void executeEnvOverrides();
    void executePerCallEnvDoesNotPersist();
    void executeStreamsOutput();
    void executeStreamsWhileRunning();
    void executeCancel_data();
    void executeCancel();
    void executeOutputCap_data();
    void executeOutputCap();
    void executeStdinAtEof_data();
    void executeStdinAtEof();
    void strayProcessScanWorks();
    void executeLeavesNoStrayProcess_data();
    void executeLeavesNoStrayProcess();

    // Concurrency
    void concurrentMixedCalls();

    // Seed and sync
    void seedAppliesDefaultExcludes_data();
    void seedAppliesDefaultExcludes();
    void seedResultCounts();
    void syncToSeedFolder();
    void syncSecondTimeWritesNothing();
    void syncToOtherFolder();
    void syncBackToSeedFolderAfterOtherDest();
    void syncNeverCreatesHostSymlinks();

private:
    QString root() const { return m_tmp->path() + QStringLiteral("/ws"); }
    QString outside() const { return m_tmp->path() + QStringLiteral("/outside"); }
    std::shared_ptr<LocalSandboxBackend> makeBackend(const Options &options = Options());
    /// A host project with seeded files and every default exclude, at top level and nested.
    QString makeProject();

    std::unique_ptr<QTemporaryDir> m_tmp;
    QList<QByteArray> m_envToUnset;
};

void TestLocalBackend::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    QVERIFY(QDir().mkpath(outside()));
}

void TestLocalBackend::cleanup()
{
    for (const QByteArray &name : std::as_const(m_envToUnset))
        qunsetenv(name.constData());
    m_envToUnset.clear();
    m_tmp.reset();
}

std::shared_ptr<LocalSandboxBackend> TestLocalBackend::makeBackend(const Options &options)
{
    auto backend = std::make_shared<LocalSandboxBackend>(root(), options);
    backend->create();
    return backend;
}

QString TestLocalBackend::makeProject()
{
    const QString p = m_tmp->path() + QStringLiteral("/project");
    const QList<QPair<QString, QByteArray>> files = {
        {QStringLiteral("src/main.py"), "print('main')\n"},
        {QStringLiteral("src/a.py"), "a = 1\n"},
        {QStringLiteral("src/b.py"), "b = 1\n"},
        {QStringLiteral("src/pkg/util.py"), "def util(): pass\n"},
        {QStringLiteral("README.md"), "# project\n"},
        {QStringLiteral("notes.md"), "notes\n"},
        {QStringLiteral("data.bin"), QByteArray("\x00\x01\x02", 3)},
        {QStringLiteral(".env.example"), "KEY=\n"},
        {QStringLiteral("docs/secrets"), "a file named secrets, not a folder\n"},
        {QStringLiteral(".git/config"), "[core]\n"},
        {QStringLiteral("src/vendor/.git/HEAD"), "ref: x\n"},
        {QStringLiteral("node_modules/left-pad/index.js"), "module.exports = 1\n"},
        {QStringLiteral("web/node_modules/x/index.js"), "x\n"},
        {QStringLiteral("src/__pycache__/main.cpython-311.pyc"), "pyc"},
        {QStringLiteral(".venv/bin/python"), "#!/bin/false\n"},
        {QStringLiteral(".env"), "SECRET=1\n"},
        {QStringLiteral("config/.env"), "SECRET=2\n"},
        {QStringLiteral("k.pem"), "-----BEGIN-----\n"},
        {QStringLiteral("certs/server.pem"), "-----BEGIN-----\n"},
        {QStringLiteral("credentials.json"), "{}\n"},
        {QStringLiteral("config/credentials.json"), "{}\n"},
        {QStringLiteral("secrets/token"), "t0k3n\n"},
        {QStringLiteral("src/secrets/key"), "k3y\n"},
    };
    for (const auto &[rel, data] : files)
        writeHost(p + QLatin1Char('/') + rel, data);
    return p;
}

// ---- Options and identity -----------------------------------------------------------------

void TestLocalBackend::constructorDefaults()
{
    const Options defaults;
    QCOMPARE(defaults.timeout, 120.0);
    QCOMPARE(defaults.maxOutputBytes, qint64(100000));
    QCOMPARE(defaults.inheritEnv, true);
    QVERIFY(defaults.env.isEmpty());

    const LocalSandboxBackend backend(root());
    QCOMPARE(backend.options().timeout, 120.0);
    QCOMPARE(backend.options().maxOutputBytes, qint64(100000));
    QCOMPARE(backend.options().inheritEnv, true);
    QVERIFY(backend.options().env.isEmpty());
    QCOMPARE(backend.workspaceRoot(), QDir(root()).absolutePath());
    // Construction alone neither opens a session nor creates the folder.
    QVERIFY(!backend.isCreated());
    QVERIFY(!QFileInfo::exists(root()));
}

void TestLocalBackend::constructorRejectsBadOptions_data()
{
    QTest::addColumn<QString>("rootPath");
    QTest::addColumn<double>("timeout");
    QTest::addColumn<qint64>("maxOutputBytes");
    QTest::addColumn<QString>("mentions");

    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    QTest::newRow("empty workspace root")
        << QString() << 120.0 << qint64(100000) << QStringLiteral("workspace_root");
    QTest::newRow("zero timeout") << QStringLiteral("ws") << 0.0 << qint64(100000)
                                  << QStringLiteral("timeout");
    QTest::newRow("negative timeout")
        << QStringLiteral("ws") << -5.0 << qint64(100000) << QStringLiteral("timeout");
    QTest::newRow("NaN timeout") << QStringLiteral("ws") << nan << qint64(100000)
                                 << QStringLiteral("timeout");
    QTest::newRow("infinite timeout")
        << QStringLiteral("ws") << inf << qint64(100000) << QStringLiteral("timeout");
    QTest::newRow("negative max_output_bytes")
        << QStringLiteral("ws") << 120.0 << qint64(-1) << QStringLiteral("max_output_bytes");
}

void TestLocalBackend::constructorRejectsBadOptions()
{
    QFETCH(QString, rootPath);
    QFETCH(double, timeout);
    QFETCH(qint64, maxOutputBytes);
    QFETCH(QString, mentions);

    Options o;
    o.timeout = timeout;
    o.maxOutputBytes = maxOutputBytes;
    const QString path = rootPath.isEmpty() ? QString() : m_tmp->path() + u'/' + rootPath;
    QString message;
    QCOMPARE(errorName([&] { LocalSandboxBackend b(path, o); }, &message),
             QStringLiteral("ValueError"));
    QVERIFY2(message.contains(mentions), qPrintable(message));
    if (!path.isEmpty())
        QVERIFY(!QFileInfo::exists(path));
}

void TestLocalBackend::identityThroughInterface()
{
    const auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    QCOMPARE(eb.typeName(), QStringLiteral("LocalSandboxBackend"));
    QVERIFY(supportsExecution(&eb));
    QVERIFY(dynamic_cast<SandboxBackend *>(&eb));
    QVERIFY2(eb.id().contains(QDir(root()).absolutePath()), qPrintable(eb.id()));
    // Two backends on different folders have different ids.
    const LocalSandboxBackend other(outside());
    QVERIFY(other.id() != eb.id());
}

// ---- Lifecycle ----------------------------------------------------------------------------

void TestLocalBackend::createIsIdempotentAndCreatesRoot()
{
    const QString nested = m_tmp->path() + QStringLiteral("/a/b/c/ws");
    auto backend = std::make_shared<LocalSandboxBackend>(nested);
    ExecutionBackend &eb = *backend;
    QVERIFY(!QFileInfo::exists(nested));
    eb.create();
    QVERIFY(eb.isCreated());
    QVERIFY(QFileInfo(nested).isDir());
    eb.writeFile(QStringLiteral("keep.txt"), "kept");
    eb.create(); // again: no error, nothing wiped
    QVERIFY(eb.isCreated());
    QCOMPARE(eb.readFile(QStringLiteral("keep.txt")), QByteArray("kept"));
    QCOMPARE(readHost(nested + QStringLiteral("/keep.txt")), QByteArray("kept"));
}

void TestLocalBackend::operationsWhenClosedRaiseOSError_data()
{
    QTest::addColumn<QString>("operation");
    QTest::addColumn<bool>("everCreated");

    const QStringList ops = {
        QStringLiteral("readFile"),      QStringLiteral("writeFile"),
        QStringLiteral("listDir"),       QStringLiteral("removeFile"),
        QStringLiteral("stat"),          QStringLiteral("execute"),
        QStringLiteral("seedWorkspace"), QStringLiteral("syncArtifacts"),
        QStringLiteral("planSync"),
    };
    for (const QString &op : ops) {
        QTest::addRow("%s after close", qPrintable(op)) << op << true;
        QTest::addRow("%s before create", qPrintable(op)) << op << false;
    }
}

void TestLocalBackend::operationsWhenClosedRaiseOSError()
{
    QFETCH(QString, operation);
    QFETCH(bool, everCreated);

    auto backend = std::make_shared<LocalSandboxBackend>(root());
    SandboxBackend &sb = *backend;
    const QString project = makeProject();
    if (everCreated) {
        sb.create();
        sb.writeFile(QStringLiteral("f.txt"), "x");
        sb.close();
        sb.close(); // idempotent
    }
    QVERIFY(!sb.isCreated());

    const QHash<QString, std::function<void()>> calls = {
        {QStringLiteral("readFile"), [&] { sb.readFile(QStringLiteral("f.txt")); }},
        {QStringLiteral("writeFile"), [&] { sb.writeFile(QStringLiteral("g.txt"), "y"); }},
        {QStringLiteral("listDir"), [&] { sb.listDir(QStringLiteral(".")); }},
        {QStringLiteral("removeFile"), [&] { sb.removeFile(QStringLiteral("f.txt")); }},
        {QStringLiteral("stat"), [&] { sb.stat(QStringLiteral("f.txt")); }},
        {QStringLiteral("execute"), [&] { sb.execute(QStringLiteral("true")); }},
        {QStringLiteral("seedWorkspace"),
         [&] { sb.seedWorkspace(project, DEFAULT_SANDBOX_SEED_EXCLUDES); }},
        {QStringLiteral("syncArtifacts"),
         [&] { sb.syncArtifacts(project, defaultSandboxSyncPolicy()); }},
        {QStringLiteral("planSync"), [&] { sb.planSync(project, defaultSandboxSyncPolicy()); }},
    };
    QVERIFY(calls.contains(operation));
    QString message;
    QCOMPARE(errorName(calls.value(operation), &message), QStringLiteral("OSError"));
    // The message says what is wrong and names the workspace.
    QVERIFY2(message.contains(QStringLiteral("closed")), qPrintable(message));
    QVERIFY2(message.contains(QDir(root()).absolutePath()), qPrintable(message));
    // Nothing was written, removed or seeded.
    QVERIFY(!QFileInfo::exists(root() + QStringLiteral("/g.txt")));
    QVERIFY(!QFileInfo::exists(root() + QStringLiteral("/src")));
    if (everCreated)
        QCOMPARE(readHost(root() + QStringLiteral("/f.txt")), QByteArray("x"));
    QVERIFY(!QFileInfo::exists(project + QStringLiteral("/f.txt")));
}

void TestLocalBackend::closedExecuteRunsNothing()
{
    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    sb.close();
    const QString marker = outside() + QStringLiteral("/ran");
    QCOMPARE(errorName([&] { sb.execute(QStringLiteral("touch '%1'").arg(marker)); }),
             QStringLiteral("OSError"));
    QVERIFY(!QFileInfo::exists(marker));

    // Transfers report the failure per file instead of throwing.
    QList<FileTransferResult> up;
    QList<FileTransferResult> down;
    QVERIFY_THROWS_NO_EXCEPTION(up = sb.uploadFiles({{QStringLiteral("u.txt"), "u"}}));
    QVERIFY_THROWS_NO_EXCEPTION(down = sb.downloadFiles({QStringLiteral("u.txt")}));
    QCOMPARE(up.size(), 1);
    QCOMPARE(down.size(), 1);
    QVERIFY(!up.first().success());
    QVERIFY(!down.first().success());
    QVERIFY(!QFileInfo::exists(root() + QStringLiteral("/u.txt")));
}

void TestLocalBackend::workspaceSurvivesCloseAndReopen()
{
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    eb.writeFile(QStringLiteral("dir/state.txt"), "persisted");
    eb.close();
    QVERIFY(QFileInfo(root()).isDir());
    QCOMPARE(readHost(root() + QStringLiteral("/dir/state.txt")), QByteArray("persisted"));

    // The same backend opens again, and so does a new one on the same folder.
    eb.create();
    QCOMPARE(eb.readFile(QStringLiteral("dir/state.txt")), QByteArray("persisted"));
    LocalSandboxBackend second(root());
    second.create();
    QCOMPARE(second.readFile(QStringLiteral("dir/state.txt")), QByteArray("persisted"));
}

// ---- Files --------------------------------------------------------------------------------

void TestLocalBackend::fileRoundTrips()
{
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;

    QByteArray binary;
    for (int i = 0; i < 256; ++i)
        binary.append(char(i));
    binary.append(QByteArray(70000, 'z'));

    eb.writeFile(QStringLiteral("deep/er/still/bin.dat"), binary); // parents created
    QCOMPARE(eb.readFile(QStringLiteral("deep/er/still/bin.dat")), binary);
    QCOMPARE(readHost(root() + QStringLiteral("/deep/er/still/bin.dat")), binary);

    eb.writeFile(QStringLiteral("text.txt"), "first version, longer");
    eb.writeFile(QStringLiteral("text.txt"), "second");
    QCOMPARE(eb.readFile(QStringLiteral("text.txt")), QByteArray("second"));
    eb.writeFile(QStringLiteral("empty.txt"), QByteArray());
    QCOMPARE(eb.readFile(QStringLiteral("empty.txt")), QByteArray());
    // Equivalent spellings of one path.
    QCOMPARE(eb.readFile(QStringLiteral("./deep//er/./still/bin.dat")), binary);

    const FileInfo f = eb.stat(QStringLiteral("text.txt"));
    QCOMPARE(f.path, QStringLiteral("text.txt"));
    QVERIFY(!f.isDir);
    QCOMPARE(f.type, FileInfo::Type::File);
    QCOMPARE(f.size, std::optional<qint64>(6));
    QVERIFY(f.mtimeMs > 0);

    const FileInfo d = eb.stat(QStringLiteral("deep/er"));
    QCOMPARE(d.path, QStringLiteral("deep/er"));
    QVERIFY(d.isDir);
    QCOMPARE(d.type, FileInfo::Type::Directory);
}

void TestLocalBackend::listDirReportsEntries()
{
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    eb.writeFile(QStringLiteral("d/b.txt"), "bb");
    eb.writeFile(QStringLiteral("d/a.txt"), "a");
    eb.writeFile(QStringLiteral("d/sub/c.txt"), "ccc");
    QVERIFY(QFile::link(QStringLiteral("a.txt"), root() + QStringLiteral("/d/link")));

    const QList<FileInfo> entries = eb.listDir(QStringLiteral("d"));
    QStringList paths;
    for (const FileInfo &e : entries)
        paths.append(e.path);
    QCOMPARE(paths, (QStringList{QStringLiteral("d/a.txt"), QStringLiteral("d/b.txt"),
                                 QStringLiteral("d/link"), QStringLiteral("d/sub")}));
    QCOMPARE(entries.at(0).size, std::optional<qint64>(1));
    QCOMPARE(entries.at(1).size, std::optional<qint64>(2));
    QCOMPARE(entries.at(2).type, FileInfo::Type::Symlink); // not followed
    QVERIFY(entries.at(3).isDir);

    QStringList top;
    for (const FileInfo &e : eb.listDir(QStringLiteral(".")))
        top.append(e.path);
    QCOMPARE(top, QStringList{QStringLiteral("d")});
    QCOMPARE(eb.listDir(QStringLiteral("d/sub")).size(), 1);
    QCOMPARE(errorName([&] { eb.listDir(QStringLiteral("d/a.txt")); }),
             QStringLiteral("NotADirectoryError"));
}

void TestLocalBackend::removeFileRecursive()
{
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    eb.writeFile(QStringLiteral("tree/a.txt"), "a");
    eb.writeFile(QStringLiteral("tree/x/y/z.txt"), "z");
    eb.writeFile(QStringLiteral("single.txt"), "s");
    QVERIFY(QFile::link(outside(), root() + QStringLiteral("/tree/out-link")));
    writeHost(outside() + QStringLiteral("/precious.txt"), "precious");

    // A final symlink is removed itself, never its target.
    QVERIFY(QFile::link(outside() + QStringLiteral("/precious.txt"),
                        root() + QStringLiteral("/tolink")));
    QCOMPARE(eb.stat(QStringLiteral("tolink")).type, FileInfo::Type::Symlink);
    eb.removeFile(QStringLiteral("tolink"));
    QVERIFY(!QFileInfo(root() + QStringLiteral("/tolink")).isSymLink());
    QCOMPARE(readHost(outside() + QStringLiteral("/precious.txt")), QByteArray("precious"));

    eb.removeFile(QStringLiteral("single.txt"));
    QCOMPARE(errorName([&] { eb.stat(QStringLiteral("single.txt")); }),
             QStringLiteral("FileNotFoundError"));

    // A folder needs `recursive`; without it nothing is removed.
    QVERIFY(!errorName([&] { eb.removeFile(QStringLiteral("tree")); }).isEmpty());
    QVERIFY(eb.stat(QStringLiteral("tree/x/y/z.txt")).size.has_value());

    eb.removeFile(QStringLiteral("tree"), true);
    QCOMPARE(errorName([&] { eb.stat(QStringLiteral("tree")); }),
             QStringLiteral("FileNotFoundError"));
    QVERIFY(!QFileInfo::exists(root() + QStringLiteral("/tree")));
    // The symlink inside was removed, not followed.
    QCOMPARE(readHost(outside() + QStringLiteral("/precious.txt")), QByteArray("precious"));
    // The root itself is never removed.
    QVERIFY(!errorName([&] { eb.removeFile(QStringLiteral("."), true); }).isEmpty());
    QVERIFY(QFileInfo(root()).isDir());
}

void TestLocalBackend::missingPathsRaiseFileNotFound_data()
{
    QTest::addColumn<QString>("operation");
    QTest::newRow("readFile") << QStringLiteral("readFile");
    QTest::newRow("listDir") << QStringLiteral("listDir");
    QTest::newRow("stat") << QStringLiteral("stat");
    QTest::newRow("removeFile") << QStringLiteral("removeFile");
    QTest::newRow("removeFile recursive") << QStringLiteral("removeFileRecursive");
}

void TestLocalBackend::missingPathsRaiseFileNotFound()
{
    QFETCH(QString, operation);
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    const QString missing = QStringLiteral("nope/missing.txt");
    const QHash<QString, std::function<void()>> calls = {
        {QStringLiteral("readFile"), [&] { eb.readFile(missing); }},
        {QStringLiteral("listDir"), [&] { eb.listDir(missing); }},
        {QStringLiteral("stat"), [&] { eb.stat(missing); }},
        {QStringLiteral("removeFile"), [&] { eb.removeFile(missing); }},
        {QStringLiteral("removeFileRecursive"), [&] { eb.removeFile(missing, true); }},
    };
    QString message;
    QCOMPARE(errorName(calls.value(operation), &message), QStringLiteral("FileNotFoundError"));
    QVERIFY2(message.contains(QStringLiteral("missing.txt")), qPrintable(message));
    // Nothing was created on the way.
    QVERIFY(!QFileInfo::exists(root() + QStringLiteral("/nope")));
}

void TestLocalBackend::escapesAreRefused_data()
{
    QTest::addColumn<QString>("operation");
    QTest::addColumn<QString>("path");

    // The paths are relative to the workspace root <tmp>/ws; <tmp>/outside and <tmp>/ws-evil
    // are its neighbours. "ABS" stands for the temporary folder.
    const QList<QPair<const char *, QString>> paths = {
        {"parent", QStringLiteral("../outside/secret.txt")},
        {"nested parent", QStringLiteral("a/../../outside/secret.txt")},
        {"absolute outside", QStringLiteral("ABS/outside/secret.txt")},
        {"prefix sibling", QStringLiteral("../ws-evil/s")},
        {"absolute prefix sibling", QStringLiteral("ABS/ws-evil/s")},
        {"through symlink to parent", QStringLiteral("up/outside/secret.txt")},
    };
    for (const char *op : {"read", "write", "stat", "remove"}) {
        for (const auto &[name, path] : paths)
            QTest::addRow("%s %s", op, name) << QString::fromLatin1(op) << path;
    }
    // stat and remove act on a final symlink itself (lstat, unlink), so only these follow it.
    QTest::newRow("read symlink to outside file") << QStringLiteral("read") << QStringLiteral("l");
    QTest::newRow("write symlink to outside file")
        << QStringLiteral("write") << QStringLiteral("l");
    QTest::newRow("list parent") << QStringLiteral("list") << QStringLiteral("..");
    QTest::newRow("list symlink to parent") << QStringLiteral("list") << QStringLiteral("up");
    QTest::newRow("list absolute") << QStringLiteral("list") << QStringLiteral("ABS/outside");
}

void TestLocalBackend::escapesAreRefused()
{
    QFETCH(QString, operation);
    QFETCH(QString, path);

    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    writeHost(outside() + QStringLiteral("/secret.txt"), "secret");
    writeHost(m_tmp->path() + QStringLiteral("/ws-evil/s"), "evil");
    QVERIFY(QFile::link(outside() + QStringLiteral("/secret.txt"), root() + QStringLiteral("/l")));
    QVERIFY(QFile::link(QStringLiteral(".."), root() + QStringLiteral("/up")));
    path.replace(QStringLiteral("ABS"), m_tmp->path());

    QByteArray read;
    QList<FileInfo> listed;
    const QHash<QString, std::function<void()>> calls = {
        {QStringLiteral("read"), [&] { read = eb.readFile(path); }},
        {QStringLiteral("write"), [&] { eb.writeFile(path, "pwned"); }},
        {QStringLiteral("stat"), [&] { eb.stat(path); }},
        {QStringLiteral("remove"), [&] { eb.removeFile(path, true); }},
        {QStringLiteral("list"), [&] { listed = eb.listDir(path); }},
    };
    QCOMPARE(errorName(calls.value(operation)), QStringLiteral("PermissionError"));
    QVERIFY(read.isEmpty());
    QVERIFY(listed.isEmpty());
    QCOMPARE(readHost(outside() + QStringLiteral("/secret.txt")), QByteArray("secret"));
    QCOMPARE(readHost(m_tmp->path() + QStringLiteral("/ws-evil/s")), QByteArray("evil"));
    QVERIFY(QFileInfo(root() + QStringLiteral("/l")).isSymLink()); // not replaced
}

void TestLocalBackend::uploadFilesReportsPerFile()
{
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    const QList<QPair<QString, QByteArray>> files = {
        {QStringLiteral("up/a.txt"), "A"},
        {QStringLiteral("../escaped.txt"), "X"},
        {QStringLiteral("/tmp/elsai-tst-abs-upload.txt"), "X"},
        {QStringLiteral("up/b.bin"), QByteArray("\x00\xff\x01", 3)},
        {QStringLiteral("up/a.txt/child"), "not under a file"},
    };
    QList<FileTransferResult> results;
    QVERIFY_THROWS_NO_EXCEPTION(results = eb.uploadFiles(files));
    QCOMPARE(results.size(), files.size());
    for (int i = 0; i < files.size(); ++i)
        QCOMPARE(results.at(i).path, files.at(i).first);

    QVERIFY(results.at(0).success());
    QVERIFY(!results.at(1).success());
    QVERIFY2(results.at(1).error->contains(QStringLiteral("PermissionError")),
             qPrintable(*results.at(1).error));
    QVERIFY(!results.at(2).success());
    QVERIFY(results.at(3).success());
    QVERIFY(!results.at(4).success());
    QVERIFY(!results.at(4).error->isEmpty());

    QCOMPARE(eb.readFile(QStringLiteral("up/a.txt")), QByteArray("A"));
    QCOMPARE(eb.readFile(QStringLiteral("up/b.bin")), QByteArray("\x00\xff\x01", 3));
    QVERIFY(!QFileInfo::exists(m_tmp->path() + QStringLiteral("/escaped.txt")));
    QVERIFY(!QFileInfo::exists(QStringLiteral("/tmp/elsai-tst-abs-upload.txt")));
}

void TestLocalBackend::downloadFilesReportsPerFile()
{
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    eb.writeFile(QStringLiteral("a.txt"), "alpha");
    eb.writeFile(QStringLiteral("sub/b.bin"), QByteArray("\x00\x01", 2));
    writeHost(outside() + QStringLiteral("/secret.txt"), "secret");
    QVERIFY(QFile::link(outside() + QStringLiteral("/secret.txt"), root() + QStringLiteral("/l")));

    const QStringList paths = {QStringLiteral("a.txt"),
                               QStringLiteral("missing.txt"),
                               QStringLiteral("../outside/secret.txt"),
                               QStringLiteral("l"),
                               QStringLiteral("sub"),
                               QStringLiteral("sub/b.bin")};
    QList<FileTransferResult> results;
    QVERIFY_THROWS_NO_EXCEPTION(results = eb.downloadFiles(paths));
    QCOMPARE(results.size(), paths.size());
    for (int i = 0; i < paths.size(); ++i)
        QCOMPARE(results.at(i).path, paths.at(i));

    QVERIFY(results.at(0).success());
    QCOMPARE(results.at(0).content, std::optional<QByteArray>("alpha"));
    QVERIFY(!results.at(1).success());
    QVERIFY2(results.at(1).error->contains(QStringLiteral("FileNotFoundError")),
             qPrintable(*results.at(1).error));
    for (int i : {2, 3}) {
        QVERIFY(!results.at(i).success());
        QVERIFY2(results.at(i).error->contains(QStringLiteral("PermissionError")),
                 qPrintable(*results.at(i).error));
        QVERIFY(!results.at(i).content.has_value()); // no byte of the outside file
    }
    QVERIFY(!results.at(4).success()); // a folder is not a file
    QVERIFY(results.at(5).success());
    QCOMPARE(results.at(5).content, std::optional<QByteArray>(QByteArray("\x00\x01", 2)));
}

// ---- Execute ------------------------------------------------------------------------------

void TestLocalBackend::executeSeparatesStreams_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("output");
    QTest::addColumn<QString>("stderrText");
    QTest::addColumn<int>("exitCode");

    QTest::newRow("stdout only") << QStringLiteral("echo out") << QStringLiteral("out\n")
                                 << QString() << 0;
    QTest::newRow("stderr only") << QStringLiteral("echo err >&2") << QString()
                                 << QStringLiteral("err\n") << 0;
    QTest::newRow("both, interleaved")
        << QStringLiteral("echo o1; echo e1 >&2; echo o2; echo e2 >&2")
        << QStringLiteral("o1\no2\n") << QStringLiteral("e1\ne2\n") << 0;
    QTest::newRow("exit code 3 with output")
        << QStringLiteral("echo out; echo err >&2; exit 3") << QStringLiteral("out\n")
        << QStringLiteral("err\n") << 3;
    QTest::newRow("exit code 255") << QStringLiteral("exit 255") << QString() << QString() << 255;
    QTest::newRow("false") << QStringLiteral("false") << QString() << QString() << 1;
    QTest::newRow("killed by a signal")
        << QStringLiteral("kill -KILL $$") << QString() << QString() << 128 + SIGKILL;
    QTest::newRow("utf-8 output") << QStringLiteral("printf 'h\\303\\251 \\360\\237\\230\\200'")
                                  << QStringLiteral("hé 😀") << QString() << 0;
}

void TestLocalBackend::executeSeparatesStreams()
{
    QFETCH(QString, command);
    QFETCH(QString, output);
    QFETCH(QString, stderrText);
    QFETCH(int, exitCode);

    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    const ExecuteResult r = sb.execute(command);
    QCOMPARE(r.output, output);
    QCOMPARE(r.stderr_, stderrText);
    QCOMPARE(r.exitCode, exitCode);
    QCOMPARE(r.success(), exitCode == 0);
    QVERIFY(!r.truncated);
    QVERIFY(!r.timedOut);
    QVERIFY(!r.cancelled);
}

void TestLocalBackend::executeTimeouts_data()
{
    QTest::addColumn<double>("defaultTimeout");
    QTest::addColumn<std::optional<double>>("callTimeout");
    QTest::addColumn<QString>("command");
    QTest::addColumn<bool>("timesOut");
    QTest::addColumn<qint64>("minMs"); // lower bound of the call's duration

    const std::optional<double> none;
    QTest::newRow("default timeout from options")
        << 1.0 << none << QStringLiteral("sleep 30") << true << qint64(900);
    QTest::newRow("per-call timeout shorter than the default")
        << 60.0 << std::optional<double>(1.0) << QStringLiteral("sleep 30") << true << qint64(900);
    QTest::newRow("per-call timeout longer than the default")
        << 1.0 << std::optional<double>(15.0) << QStringLiteral("sleep 2; echo done") << false
        << qint64(1900);
    QTest::newRow("TERM ignored: killed after the grace")
        << 60.0 << std::optional<double>(1.0) << QStringLiteral("trap '' TERM; sleep 30") << true
        << qint64(900);
    QTest::newRow("fractional per-call timeout")
        << 60.0 << std::optional<double>(0.5) << QStringLiteral("sleep 30") << true << qint64(450);
    QTest::newRow("tiny per-call timeout still times out")
        << 60.0 << std::optional<double>(0.0001) << QStringLiteral("sleep 3; echo late") << true
        << qint64(0);
    QTest::newRow("tiny default timeout still times out")
        << 0.0001 << none << QStringLiteral("sleep 3; echo late") << true << qint64(0);
}

void TestLocalBackend::executeTimeouts()
{
    QFETCH(double, defaultTimeout);
    QFETCH(std::optional<double>, callTimeout);
    QFETCH(QString, command);
    QFETCH(bool, timesOut);
    QFETCH(qint64, minMs);

    Options o;
    o.timeout = defaultTimeout;
    auto backend = makeBackend(o);
    SandboxBackend &sb = *backend;
    QElapsedTimer timer;
    timer.start();
    const ExecuteResult r = sb.execute(command, callTimeout);
    const qint64 elapsed = timer.elapsed();
    QVERIFY2(elapsed < 20000, qPrintable(QString::number(elapsed)));
    QVERIFY2(elapsed >= minMs, qPrintable(QString::number(elapsed)));
    QCOMPARE(r.timedOut, timesOut);
    QCOMPARE(r.exitCode, timesOut ? 124 : 0);
    QVERIFY(!r.cancelled);
    if (timesOut)
        QVERIFY(!r.output.contains(QStringLiteral("late")));
    else
        QCOMPARE(r.output, QStringLiteral("done\n"));
}

void TestLocalBackend::executeRejectsBadTimeout_data()
{
    QTest::addColumn<double>("timeout");
    QTest::newRow("zero") << 0.0;
    QTest::newRow("negative") << -1.0;
    QTest::newRow("NaN") << std::numeric_limits<double>::quiet_NaN();
    QTest::newRow("infinite") << std::numeric_limits<double>::infinity();
}

void TestLocalBackend::executeRejectsBadTimeout()
{
    QFETCH(double, timeout);
    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    const QString marker = outside() + QStringLiteral("/ran");
    QCOMPARE(errorName([&] { sb.execute(QStringLiteral("touch '%1'").arg(marker), timeout); }),
             QStringLiteral("ValueError"));
    QVERIFY(!QFileInfo::exists(marker));
}

void TestLocalBackend::executeCwdInside_data()
{
    QTest::addColumn<QString>("cwd");
    QTest::addColumn<QString>("expected"); // relative to the root

    QTest::newRow("default is the root") << QString() << QString();
    QTest::newRow("dot is the root") << QStringLiteral(".") << QString();
    QTest::newRow("subfolder") << QStringLiteral("sub") << QStringLiteral("/sub");
    QTest::newRow("subfolder with trailing slash")
        << QStringLiteral("sub/") << QStringLiteral("/sub");
    QTest::newRow("dotted spelling")
        << QStringLiteral("./sub/./deeper") << QStringLiteral("/sub/deeper");
    QTest::newRow("relative symlink that stays inside")
        << QStringLiteral("inlink") << QStringLiteral("/sub");
    QTest::newRow("literal percent-dot name")
        << QStringLiteral("%2e%2e") << QStringLiteral("/%2e%2e");
}

void TestLocalBackend::executeCwdInside()
{
    QFETCH(QString, cwd);
    QFETCH(QString, expected);

    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    QVERIFY(QDir().mkpath(root() + QStringLiteral("/sub/deeper")));
    QVERIFY(QDir().mkpath(root() + QStringLiteral("/%2e%2e")));
    QVERIFY(QFile::link(QStringLiteral("sub"), root() + QStringLiteral("/inlink")));

    const ExecuteResult r = sb.execute(QStringLiteral("pwd -P; touch here.txt"), {}, cwd);
    QCOMPARE(r.exitCode, 0);
    const QString canonicalRoot = QFileInfo(root()).canonicalFilePath();
    QCOMPARE(r.output, canonicalRoot + expected + QLatin1Char('\n'));
    QVERIFY(QFileInfo::exists(canonicalRoot + expected + QStringLiteral("/here.txt")));
}

void TestLocalBackend::executeCwdRefused_data()
{
    QTest::addColumn<QString>("cwd");
    QTest::addColumn<QString>("error");

    QTest::newRow("parent with slash")
        << QStringLiteral("../") << QStringLiteral("PermissionError");
    QTest::newRow("parent") << QStringLiteral("..") << QStringLiteral("PermissionError");
    QTest::newRow("nested escape")
        << QStringLiteral("sub/../..") << QStringLiteral("PermissionError");
    QTest::newRow("absolute outside")
        << QStringLiteral("ABS/outside") << QStringLiteral("PermissionError");
    QTest::newRow("absolute path of the root itself")
        << QStringLiteral("ABS/ws") << QStringLiteral("PermissionError");
    QTest::newRow("prefix sibling")
        << QStringLiteral("../ws-evil") << QStringLiteral("PermissionError");
    QTest::newRow("symlink to outside")
        << QStringLiteral("outlink") << QStringLiteral("PermissionError");
    QTest::newRow("symlink to parent") << QStringLiteral("up") << QStringLiteral("PermissionError");
    QTest::newRow("subfolder of symlink to outside")
        << QStringLiteral("up/outside") << QStringLiteral("PermissionError");
    QTest::newRow("missing folder")
        << QStringLiteral("nope") << QStringLiteral("FileNotFoundError");
    QTest::newRow("a file") << QStringLiteral("file.txt") << QStringLiteral("NotADirectoryError");
    QTest::newRow("NUL byte") << QStringLiteral("sub") + QChar(0) + QStringLiteral("x")
                              << QStringLiteral("ValueError");
}

void TestLocalBackend::executeCwdRefused()
{
    QFETCH(QString, cwd);
    QFETCH(QString, error);

    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    QVERIFY(QDir().mkpath(root() + QStringLiteral("/sub")));
    QVERIFY(QDir().mkpath(m_tmp->path() + QStringLiteral("/ws-evil")));
    writeHost(root() + QStringLiteral("/file.txt"), "f");
    QVERIFY(QFile::link(outside(), root() + QStringLiteral("/outlink")));
    QVERIFY(QFile::link(QStringLiteral(".."), root() + QStringLiteral("/up")));
    cwd.replace(QStringLiteral("ABS"), m_tmp->path());

    // If anything ran, the marker would exist (absolute path, whatever the working folder).
    const QString marker = m_tmp->path() + QStringLiteral("/marker");
    QString message;
    QCOMPARE(
        errorName([&] { sb.execute(QStringLiteral("touch '%1'").arg(marker), {}, cwd); }, &message),
        error);
    QVERIFY(!message.isEmpty());
    QVERIFY2(!QFileInfo::exists(marker), "the command ran although its cwd was refused");
}

void TestLocalBackend::executeInheritsHostEnvironment()
{
    qputenv("ELSAI_TST_LB_HOST", "host-value-7");
    m_envToUnset << "ELSAI_TST_LB_HOST";
    auto backend = makeBackend(); // inheritEnv defaults to true
    SandboxBackend &sb = *backend;
    const ExecuteResult r = sb.execute(QStringLiteral("printf %s \"$ELSAI_TST_LB_HOST\""));
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.output, QStringLiteral("host-value-7"));
}

void TestLocalBackend::executeWithoutInheritedEnvironment()
{
    qputenv("ELSAI_TST_LB_HOST", "host-value-7");
    m_envToUnset << "ELSAI_TST_LB_HOST";
    Options o;
    o.inheritEnv = false;
    o.env.insert(QStringLiteral("ELSAI_TST_ONLY"), QStringLiteral("only-this"));
    auto backend = makeBackend(o);
    SandboxBackend &sb = *backend;

    const ExecuteResult r = sb.execute(QStringLiteral("env"));
    QCOMPARE(r.exitCode, 0); // `env` was found: PATH is set
    QSet<QString> names;
    QMap<QString, QString> values;
    for (const QString &line : r.output.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QString name = line.section(QLatin1Char('='), 0, 0);
        names.insert(name);
        values.insert(name, line.section(QLatin1Char('='), 1));
    }
    QCOMPARE(values.value(QStringLiteral("ELSAI_TST_ONLY")), QStringLiteral("only-this"));
    QVERIFY(!values.value(QStringLiteral("PATH")).isEmpty());
    QVERIFY(!names.contains(QStringLiteral("ELSAI_TST_LB_HOST")));
    // Nothing else of the host: only what the shell itself and the process tracker add.
    const QSet<QString> allowed = {
        QStringLiteral("ELSAI_TST_ONLY"),  QStringLiteral("PATH"),  QStringLiteral("PWD"),
        QStringLiteral("OLDPWD"),          QStringLiteral("SHLVL"), QStringLiteral("_"),
        QStringLiteral("ELSAI_EXEC_TOKEN")};
    const QSet<QString> extra = names - allowed;
    QVERIFY2(extra.isEmpty(), qPrintable(QStringList(extra.values()).join(u' ')));

    // A PATH from options.env is kept, not replaced by the fallback.
    Options withPath = o;
    withPath.env.insert(QStringLiteral("PATH"), QStringLiteral("/bin:/usr/bin:/elsai-marker"));
    LocalSandboxBackend b2(root(), withPath);
    b2.create();
    QCOMPARE(b2.execute(QStringLiteral("printf %s \"$PATH\"")).output,
             QStringLiteral("/bin:/usr/bin:/elsai-marker"));
}

void TestLocalBackend::executeEnvOverrides_data()
{
    QTest::addColumn<bool>("inheritEnv");
    QTest::addColumn<QString>("hostValue");   // "" = unset on the host
    QTest::addColumn<QString>("optionValue"); // "" = not in options.env
    QTest::addColumn<QString>("callValue");   // "" = not in ExecuteOptions.env
    QTest::addColumn<QString>("expected");

    // clang-format off
    QTest::newRow("host only") << true << "host" << "" << "" << "host";
    QTest::newRow("options.env overrides the host") << true << "host" << "opt" << "" << "opt";
    QTest::newRow("per-call env overrides options.env")
        << true << "host" << "opt" << "call" << "call";
    QTest::newRow("per-call env overrides the host") << true << "host" << "" << "call" << "call";
    QTest::newRow("per-call env without inheritance") << false << "host" << "" << "call"
                                                      << "call";
    QTest::newRow("per-call env overrides options.env without inheritance")
        << false << "" << "opt" << "call" << "call";
    QTest::newRow("host hidden without inheritance") << false << "host" << "" << "" << "";
    // clang-format on
}

void TestLocalBackend::executeEnvOverrides()
{
    QFETCH(bool, inheritEnv);
    QFETCH(QString, hostValue);
    QFETCH(QString, optionValue);
    QFETCH(QString, callValue);
    QFETCH(QString, expected);

    const QString name = QStringLiteral("ELSAI_TST_LB_VAR");
    if (!hostValue.isEmpty()) {
        qputenv(name.toLatin1().constData(), hostValue.toUtf8());
        m_envToUnset << name.toLatin1();
    }
    Options o;
    o.inheritEnv = inheritEnv;
    if (!optionValue.isEmpty())
        o.env.insert(name, optionValue);
    auto backend = makeBackend(o);
    SandboxBackend &sb = *backend;
    ExecuteOptions call;
    if (!callValue.isEmpty())
        call.env.insert(name, callValue);

    // Both what the shell sees and what a child program gets.
    const ExecuteResult r = sb.execute(
        QStringLiteral("printf '%s|' \"$%1\"; env | grep '^%1=' | wc -l").arg(name), {}, {}, call);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.output.section(QLatin1Char('|'), 0, 0), expected);
    QCOMPARE(r.output.section(QLatin1Char('|'), 1).trimmed(),
             expected.isEmpty() ? QStringLiteral("0") : QStringLiteral("1"));
}

void TestLocalBackend::executePerCallEnvDoesNotPersist()
{
    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    ExecuteOptions call;
    call.env.insert(QStringLiteral("ELSAI_TST_ONCE"), QStringLiteral("once"));
    QCOMPARE(sb.execute(QStringLiteral("printf %s \"$ELSAI_TST_ONCE\""), {}, {}, call).output,
             QStringLiteral("once"));
    QCOMPARE(sb.execute(QStringLiteral("printf %s \"$ELSAI_TST_ONCE\"")).output, QString());
    QVERIFY(!backend->baseEnvironment().join(u'\n').contains(QStringLiteral("ELSAI_TST_ONCE")));
}

void TestLocalBackend::executeStreamsOutput()
{
    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    QMutex mutex;
    QByteArray out;
    QByteArray err;
    int outChunks = 0;
    int errChunks = 0;
    ExecuteOptions call;
    call.onOutput = [&](OutputChannel channel, const QByteArray &chunk) {
        QMutexLocker lock(&mutex);
        if (channel == OutputChannel::Stdout) {
            out += chunk;
            ++outChunks;
        } else {
            err += chunk;
            ++errChunks;
        }
    };
    const ExecuteResult r = sb.execute(
        QStringLiteral("seq 1 10000; echo to-stderr >&2; printf 'h\\303\\251'"), {}, {}, call);
    QCOMPARE(r.exitCode, 0);
    QMutexLocker lock(&mutex);
    QVERIFY(outChunks >= 1);
    QVERIFY(errChunks >= 1);
    QCOMPARE(QString::fromUtf8(out), r.output);
    QCOMPARE(QString::fromUtf8(err), r.stderr_);
    QCOMPARE(err, QByteArray("to-stderr\n"));
    QVERIFY(!r.truncated);
    QVERIFY(r.output.endsWith(QStringLiteral("10000\nhé")));
}

void TestLocalBackend::executeStreamsWhileRunning()
{
    // The command waits for a file that only the output callback creates: without streaming
    // it would run into its timeout.
    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    const QString go = root() + QStringLiteral("/go");
    QByteArray seen;
    ExecuteOptions call;
    call.onOutput = [&](OutputChannel channel, const QByteArray &chunk) {
        if (channel != OutputChannel::Stdout)
            return;
        seen += chunk;
        if (seen.contains("ready") && !QFileInfo::exists(go))
            writeHost(go, "go");
    };
    const ExecuteResult r = sb.execute(
        QStringLiteral("echo ready; while [ ! -e go ]; do sleep 0.05; done; echo finished"), 15.0,
        {}, call);
    QVERIFY(!r.timedOut);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.output, QStringLiteral("ready\nfinished\n"));
    QCOMPARE(QString::fromUtf8(seen), r.output);
}

void TestLocalBackend::executeCancel_data()
{
    QTest::addColumn<bool>("cancelBeforeStart");
    QTest::newRow("cancelled from another thread while running") << false;
    QTest::newRow("cancelled before the call") << true;
}

void TestLocalBackend::executeCancel()
{
    QFETCH(bool, cancelBeforeStart);

    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    const QByteArray sleepArg = uniqueSleepArg(cancelBeforeStart ? 1 : 2);
    auto token = std::make_shared<CancellationToken>();
    std::promise<void> started;
    auto startedFuture = started.get_future();
    bool signalled = false;
    ExecuteOptions call;
    call.cancel = token;
    call.onOutput = [&](OutputChannel, const QByteArray &chunk) {
        if (!signalled && chunk.contains("started")) {
            signalled = true;
            started.set_value();
        }
    };
    if (cancelBeforeStart)
        token->cancel();
    std::thread canceller([&] {
        if (cancelBeforeStart)
            return;
        startedFuture.wait_for(std::chrono::seconds(10)); // without streaming: cancel anyway
        token->cancel();
    });

    QElapsedTimer timer;
    timer.start();
    const QString marker = outside() + QStringLiteral("/after-sleep");
    const ExecuteResult r = sb.execute(QStringLiteral("echo started; sleep %1; touch '%2'")
                                           .arg(QString::fromLatin1(sleepArg), marker),
                                       60.0, {}, call);
    const qint64 elapsed = timer.elapsed();
    canceller.join();
    const QList<qint64> left = processesWithArgument(sleepArg);
    killAll(left);

    QVERIFY2(elapsed < 20000, qPrintable(QString::number(elapsed)));
    QCOMPARE(r.exitCode, 130);
    QVERIFY(r.cancelled);
    QVERIFY(!r.timedOut);
    QVERIFY(!r.success());
    QVERIFY(!QFileInfo::exists(marker));
    QVERIFY2(left.isEmpty(), "the cancelled command's sleep is still running");
}

void TestLocalBackend::executeOutputCap_data()
{
    QTest::addColumn<qint64>("cap");
    QTest::addColumn<QString>("command");
    QTest::addColumn<qint64>("produced"); // bytes the command writes in all (-1: endless)
    QTest::addColumn<bool>("timesOut");

    const QString a = QStringLiteral("head -c %1 /dev/zero | tr '\\0' a");
    QTest::newRow("under the cap") << qint64(1000) << a.arg(999) << qint64(999) << false;
    QTest::newRow("exactly the cap") << qint64(1000) << a.arg(1000) << qint64(1000) << false;
    QTest::newRow("one byte over") << qint64(1000) << a.arg(1001) << qint64(1001) << false;
    QTest::newRow("stdout flood") << qint64(1000) << a.arg(5000000) << qint64(5000000) << false;
    QTest::newRow("stderr flood") << qint64(1000) << a.arg(5000000) + QStringLiteral(" >&2")
                                  << qint64(5000000) << false;
    QTest::newRow("both streams, together over the cap")
        << qint64(1000) << a.arg(600) + QStringLiteral("; ") + a.arg(600) + QStringLiteral(" >&2")
        << qint64(1200) << false;
    QTest::newRow("one long line without newline, default cap")
        << qint64(100000) << a.arg(3000000) << qint64(3000000) << false;
    QTest::newRow("endless yes until the timeout")
        << qint64(1000) << QStringLiteral("yes") << qint64(-1) << true;
    QTest::newRow("zero cap") << qint64(0) << QStringLiteral("echo hi; echo ho >&2") << qint64(6)
                              << false;
}

void TestLocalBackend::executeOutputCap()
{
    QFETCH(qint64, cap);
    QFETCH(QString, command);
    QFETCH(qint64, produced);
    QFETCH(bool, timesOut);

    Options o;
    o.maxOutputBytes = cap;
    auto backend = makeBackend(o);
    SandboxBackend &sb = *backend;
    qint64 streamed = 0;
    ExecuteOptions call;
    call.onOutput = [&](OutputChannel, const QByteArray &chunk) { streamed += chunk.size(); };
    QElapsedTimer timer;
    timer.start();
    const ExecuteResult r = sb.execute(command, timesOut ? 1.0 : 30.0, {}, call);
    QVERIFY(timer.elapsed() < 20000);
    const qint64 kept = r.output.toUtf8().size() + r.stderr_.toUtf8().size();
    const bool over = produced < 0 || produced > cap;
    QCOMPARE(r.truncated, over);
    QCOMPARE(kept, over ? cap : produced); // as much as the cap allows, no more
    QCOMPARE(streamed, kept);              // nothing is streamed past the cap
    QCOMPARE(r.timedOut, timesOut);
    QCOMPARE(r.exitCode, timesOut ? 124 : 0);
}

void TestLocalBackend::executeStdinAtEof_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("output");
    QTest::newRow("cat returns") << QStringLiteral("cat; echo after") << QStringLiteral("after\n");
    QTest::newRow("read sees EOF")
        << QStringLiteral("read x; echo \"rc=$?\"") << QStringLiteral("rc=1\n");
    QTest::newRow("stdin is /dev/null or empty")
        << QStringLiteral("head -c 10 | wc -c | tr -d ' '") << QStringLiteral("0\n");
}

void TestLocalBackend::executeStdinAtEof()
{
    QFETCH(QString, command);
    QFETCH(QString, output);
    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    const ExecuteResult r = sb.execute(command, 15.0);
    QVERIFY(!r.timedOut);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.output, output);
}

void TestLocalBackend::strayProcessScanWorks()
{
    // The scan the next test relies on finds a sleep that is running.
    const QByteArray arg = uniqueSleepArg(9);
    QProcess p;
    p.start(QStringLiteral("sleep"), {QString::fromLatin1(arg)});
    QVERIFY(p.waitForStarted());
    QTRY_COMPARE(processesWithArgument(arg), QList<qint64>{p.processId()});
    p.kill();
    QVERIFY(p.waitForFinished());
    QVERIFY(processesWithArgument(arg).isEmpty());
}

void TestLocalBackend::executeLeavesNoStrayProcess_data()
{
    QTest::addColumn<QString>("commandTemplate"); // %1 = the unique sleep argument
    QTest::addColumn<QString>("output");
    QTest::addColumn<int>("row");

    QTest::newRow("background job")
        << QStringLiteral("sleep %1 & echo hi") << QStringLiteral("hi\n") << 10;
    QTest::newRow("background job with redirected output")
        << QStringLiteral("sleep %1 >/dev/null 2>&1 & echo hi") << QStringLiteral("hi\n") << 11;
    QTest::newRow("nohup in a subshell")
        << QStringLiteral("(nohup sleep %1 >/dev/null 2>&1 &); echo hi") << QStringLiteral("hi\n")
        << 12;
    QTest::newRow("setsid leaves the group")
        << QStringLiteral("setsid sleep %1 >/dev/null 2>&1 < /dev/null & echo hi")
        << QStringLiteral("hi\n") << 13;
}

void TestLocalBackend::executeLeavesNoStrayProcess()
{
    QFETCH(QString, commandTemplate);
    QFETCH(QString, output);
    QFETCH(int, row);

    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    const QByteArray arg = uniqueSleepArg(row);
    QVERIFY(processesWithArgument(arg).isEmpty());
    QElapsedTimer timer;
    timer.start();
    const ExecuteResult r = sb.execute(commandTemplate.arg(QString::fromLatin1(arg)), 60.0);
    const qint64 elapsed = timer.elapsed();
    const QList<qint64> left = processesWithArgument(arg);
    killAll(left);

    QVERIFY2(elapsed < 20000, qPrintable(QString::number(elapsed)));
    QVERIFY(!r.timedOut);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.output, output);
    QVERIFY2(left.isEmpty(),
             qPrintable(QStringLiteral("still running: sleep %1").arg(QString::fromLatin1(arg))));
}

// ---- Concurrency --------------------------------------------------------------------------

void TestLocalBackend::concurrentMixedCalls()
{
    auto backend = makeBackend();
    SandboxBackend &sb = *backend;
    constexpr int Threads = 8;
    constexpr int Calls = 50;
    QMutex mutex;
    QStringList failures;
    int completed = 0;
    auto fail = [&](const QString &what) {
        QMutexLocker lock(&mutex);
        failures.append(what);
    };

    std::vector<std::thread> threads;
    for (int t = 0; t < Threads; ++t) {
        threads.emplace_back([&, t] {
            const QString folder = QStringLiteral("t%1").arg(t);
            for (int i = 0; i < Calls; ++i) {
                const QString token = QStringLiteral("tok-%1-%2").arg(t).arg(i);
                const QString path = QStringLiteral("%1/f%2.txt").arg(folder).arg(i);
                try {
                    switch (i % 4) {
                    case 0: {
                        const ExecuteResult r = sb.execute(QStringLiteral("echo %1").arg(token));
                        if (r.output != token + u'\n' || r.exitCode != 0 || !r.stderr_.isEmpty())
                            fail(QStringLiteral("execute %1 got '%2'").arg(token, r.output));
                        break;
                    }
                    case 1:
                    case 2: {
                        sb.writeFile(path, token.toUtf8());
                        const QByteArray back = sb.readFile(path);
                        if (back != token.toUtf8())
                            fail(QStringLiteral("read %1 got '%2'")
                                     .arg(path, QString::fromUtf8(back)));
                        break;
                    }
                    default: {
                        const QList<FileInfo> entries = sb.listDir(folder);
                        for (const FileInfo &e : entries) {
                            if (!e.path.startsWith(folder + u'/'))
                                fail(QStringLiteral("listDir %1 listed %2").arg(folder, e.path));
                        }
                        // Every file this thread wrote so far is listed.
                        int written = 0;
                        for (int j = 0; j < i; ++j)
                            written += (j % 4 == 1 || j % 4 == 2) ? 1 : 0;
                        if (entries.size() != written)
                            fail(QStringLiteral("listDir %1: %2 entries, expected %3")
                                     .arg(folder)
                                     .arg(entries.size())
                                     .arg(written));
                        break;
                    }
                    }
                } catch (const SandboxError &e) {
                    fail(QStringLiteral("%1: %2").arg(token, e.display()));
                }
                QMutexLocker lock(&mutex);
                ++completed;
            }
        });
    }
    for (std::thread &th : threads)
        th.join();
    QVERIFY2(failures.isEmpty(), qPrintable(failures.mid(0, 10).join(u'\n')));
    QCOMPARE(completed, Threads * Calls);
    // Every file has the content of its own call.
    for (int t = 0; t < Threads; ++t) {
        for (int i = 1; i < Calls; i += 4) {
            QCOMPARE(readHost(root() + QStringLiteral("/t%1/f%2.txt").arg(t).arg(i)),
                     QStringLiteral("tok-%1-%2").arg(t).arg(i).toUtf8());
        }
    }
}

// ---- Seed and sync ------------------------------------------------------------------------

void TestLocalBackend::seedAppliesDefaultExcludes_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("present");

    QTest::newRow("source file") << QStringLiteral("src/main.py") << true;
    QTest::newRow("nested source file") << QStringLiteral("src/pkg/util.py") << true;
    QTest::newRow("markdown") << QStringLiteral("README.md") << true;
    QTest::newRow("binary data") << QStringLiteral("data.bin") << true;
    QTest::newRow(".env.example is not .env") << QStringLiteral(".env.example") << true;
    QTest::newRow("a file named secrets") << QStringLiteral("docs/secrets") << true;
    QTest::newRow(".git") << QStringLiteral(".git") << false;
    QTest::newRow("nested .git") << QStringLiteral("src/vendor/.git") << false;
    QTest::newRow("node_modules") << QStringLiteral("node_modules") << false;
    QTest::newRow("nested node_modules") << QStringLiteral("web/node_modules") << false;
    QTest::newRow("__pycache__") << QStringLiteral("src/__pycache__") << false;
    QTest::newRow(".venv") << QStringLiteral(".venv") << false;
    QTest::newRow(".env") << QStringLiteral(".env") << false;
    QTest::newRow("nested .env") << QStringLiteral("config/.env") << false;
    QTest::newRow("pem") << QStringLiteral("k.pem") << false;
    QTest::newRow("nested pem") << QStringLiteral("certs/server.pem") << false;
    QTest::newRow("credentials.json") << QStringLiteral("credentials.json") << false;
    QTest::newRow("nested credentials.json") << QStringLiteral("config/credentials.json") << false;
    QTest::newRow("secrets folder") << QStringLiteral("secrets") << false;
    QTest::newRow("nested secrets folder") << QStringLiteral("src/secrets") << false;
}

void TestLocalBackend::seedAppliesDefaultExcludes()
{
    QFETCH(QString, path);
    QFETCH(bool, present);

    const QString project = makeProject();
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    const WorkspaceSeedResult r = eb.seedWorkspace(project, DEFAULT_SANDBOX_SEED_EXCLUDES);
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(QFileInfo::exists(root() + u'/' + path), present);
    if (present) {
        const FileInfo fi = eb.stat(path);
        if (!fi.isDir)
            QCOMPARE(eb.readFile(path), readHost(project + u'/' + path));
    } else {
        QVERIFY2(r.skippedPaths.contains(path), qPrintable(r.skippedPaths.join(u' ')));
    }
}

void TestLocalBackend::seedResultCounts()
{
    const QString project = makeProject();
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    int progressCalls = 0;
    int lastDone = -1;
    int lastTotal = -1;
    const WorkspaceSeedResult r =
        eb.seedWorkspace(project, DEFAULT_SANDBOX_SEED_EXCLUDES, [&](int done, int total) {
            ++progressCalls;
            lastDone = done;
            lastTotal = total;
        });
    QVERIFY(r.success());
    // src/main.py a.py b.py pkg/util.py README.md notes.md data.bin .env.example docs/secrets
    const QStringList copied = {
        QStringLiteral("src/main.py"),  QStringLiteral("src/a.py"),
        QStringLiteral("src/b.py"),     QStringLiteral("src/pkg/util.py"),
        QStringLiteral("README.md"),    QStringLiteral("notes.md"),
        QStringLiteral("data.bin"),     QStringLiteral(".env.example"),
        QStringLiteral("docs/secrets"),
    };
    qint64 bytes = 0;
    for (const QString &p : copied)
        bytes += QFileInfo(project + u'/' + p).size();
    QCOMPARE(r.filesSeeded, int(copied.size()));
    QCOMPARE(r.bytesSeeded, bytes);
    QVERIFY(progressCalls > 0);
    QCOMPARE(lastDone, lastTotal);
    QCOMPARE(lastTotal, int(copied.size()));
    // The host project is untouched.
    QCOMPARE(readHost(project + QStringLiteral("/.env")), QByteArray("SECRET=1\n"));
}

void TestLocalBackend::syncToSeedFolder()
{
    const QString project = makeProject();
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    QVERIFY(eb.seedWorkspace(project, DEFAULT_SANDBOX_SEED_EXCLUDES).success());

    eb.writeFile(QStringLiteral("src/x.py"), "x = 'new in the sandbox'\n");        // Add
    eb.writeFile(QStringLiteral("src/a.py"), "a = 2  # changed in the sandbox\n"); // Update
    eb.writeFile(QStringLiteral("src/b.py"), "b = 'sandbox version'\n");           // Conflict
    writeHost(project + QStringLiteral("/src/b.py"), "b = 'host version, edited meanwhile'\n");
    eb.writeFile(QStringLiteral("scratch.bin"), "not selected by the includes");
    eb.writeFile(QStringLiteral("node_modules/dep/package.json"), "{}"); // excluded
    eb.writeFile(QStringLiteral("src/.env"), "SECRET=sandbox");          // excluded

    const WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
    const QMap<QString, QString> plan = planActions(eb.planSync(project, policy));
    QCOMPARE(plan.value(QStringLiteral("src/x.py")), QStringLiteral("Add"));
    QCOMPARE(plan.value(QStringLiteral("src/a.py")), QStringLiteral("Update"));
    QCOMPARE(plan.value(QStringLiteral("src/b.py")), QStringLiteral("Conflict"));
    QCOMPARE(plan.value(QStringLiteral("src/main.py")), QStringLiteral("Unchanged"));
    QCOMPARE(plan.value(QStringLiteral("README.md")), QStringLiteral("Unchanged"));
    QVERIFY(!plan.contains(QStringLiteral("scratch.bin")));
    QVERIFY(!plan.contains(QStringLiteral("node_modules/dep/package.json")));
    QVERIFY(!plan.contains(QStringLiteral("src/.env")));
    // Planning changed nothing.
    QVERIFY(!QFileInfo::exists(project + QStringLiteral("/src/x.py")));
    QCOMPARE(readHost(project + QStringLiteral("/src/a.py")), QByteArray("a = 1\n"));

    const WorkspaceSyncResult r = eb.syncArtifacts(project, policy);
    QCOMPARE(r.filesSynced, 2);
    QCOMPARE(r.conflicts, QStringList{QStringLiteral("src/b.py")});
    QCOMPARE(readHost(project + QStringLiteral("/src/x.py")),
             QByteArray("x = 'new in the sandbox'\n"));
    QCOMPARE(readHost(project + QStringLiteral("/src/a.py")),
             QByteArray("a = 2  # changed in the sandbox\n"));
    QCOMPARE(readHost(project + QStringLiteral("/src/b.py")),
             QByteArray("b = 'host version, edited meanwhile'\n"));
    QCOMPARE(readHost(project + QStringLiteral("/src/b.py") + conflictSuffix()),
             QByteArray("b = 'sandbox version'\n"));
    QVERIFY(!QFileInfo::exists(project + QStringLiteral("/scratch.bin")));
    QVERIFY(!QFileInfo::exists(project + QStringLiteral("/node_modules/dep")));
    QCOMPARE(readHost(project + QStringLiteral("/src/.env")), QByteArray("<missing>"));
}

void TestLocalBackend::syncSecondTimeWritesNothing()
{
    const QString project = makeProject();
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    QVERIFY(eb.seedWorkspace(project, DEFAULT_SANDBOX_SEED_EXCLUDES).success());
    eb.writeFile(QStringLiteral("src/x.py"), "x = 1\n");
    eb.writeFile(QStringLiteral("src/a.py"), "a = 2  # changed\n");
    eb.writeFile(QStringLiteral("docs/new.md"), "# new\n");
    const WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
    const WorkspaceSyncResult first = eb.syncArtifacts(project, policy);
    QVERIFY2(first.success(), qPrintable(first.errors.join(u'\n')));
    QCOMPARE(first.filesSynced, 3);

    for (const SyncPlanEntry &e : eb.planSync(project, policy).entries) {
        QVERIFY2(e.action == SyncPlanEntry::Action::Unchanged,
                 qPrintable(e.path + QStringLiteral(": ") + syncActionName(e.action)));
    }
    const WorkspaceSyncResult second = eb.syncArtifacts(project, policy);
    QVERIFY(second.success());
    QCOMPARE(second.filesSynced, 0);
    QCOMPARE(second.bytesSynced, qint64(0));
    QVERIFY(second.conflicts.isEmpty());

    // A later sandbox change is an Update again, and a host-only change is kept silently.
    eb.writeFile(QStringLiteral("src/x.py"), "x = 22\n");
    writeHost(project + QStringLiteral("/docs/new.md"), "# edited on the host\n");
    const QMap<QString, QString> plan = planActions(eb.planSync(project, policy));
    QCOMPARE(plan.value(QStringLiteral("src/x.py")), QStringLiteral("Update"));
    QCOMPARE(plan.value(QStringLiteral("docs/new.md")), QStringLiteral("KeepHost"));
    const WorkspaceSyncResult third = eb.syncArtifacts(project, policy);
    QCOMPARE(third.filesSynced, 1);
    QCOMPARE(readHost(project + QStringLiteral("/docs/new.md")),
             QByteArray("# edited on the host\n"));
}

void TestLocalBackend::syncToOtherFolder()
{
    const QString project = makeProject();
    const QString dest = m_tmp->path() + QStringLiteral("/export/out"); // does not exist yet
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    QVERIFY(eb.seedWorkspace(project, DEFAULT_SANDBOX_SEED_EXCLUDES).success());
    eb.writeFile(QStringLiteral("src/a.py"), "a = 2  # changed\n");
    eb.writeFile(QStringLiteral("dist/app.tar"), "archive");
    const WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();

    const QMap<QString, QString> plan = planActions(eb.planSync(dest, policy));
    for (auto it = plan.cbegin(); it != plan.cend(); ++it)
        QVERIFY2(it.value() == QStringLiteral("Add"), qPrintable(it.key() + u' ' + it.value()));
    QVERIFY(plan.contains(QStringLiteral("dist/app.tar")));
    QVERIFY(plan.contains(QStringLiteral("src/main.py")));

    const WorkspaceSyncResult r = eb.syncArtifacts(dest, policy);
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(r.filesSynced, int(plan.size()));
    QCOMPARE(readHost(dest + QStringLiteral("/src/a.py")), QByteArray("a = 2  # changed\n"));
    QCOMPARE(readHost(dest + QStringLiteral("/dist/app.tar")), QByteArray("archive"));
    QCOMPARE(readHost(dest + QStringLiteral("/README.md")), QByteArray("# project\n"));
    QVERIFY(!QFileInfo::exists(dest + QStringLiteral("/data.bin")));
    // The seed folder is untouched.
    QCOMPARE(readHost(project + QStringLiteral("/src/a.py")), QByteArray("a = 1\n"));
    QVERIFY(!QFileInfo::exists(project + QStringLiteral("/dist")));

    const WorkspaceSyncResult again = eb.syncArtifacts(dest, policy);
    QVERIFY(again.success());
    QCOMPARE(again.filesSynced, 0);
}

void TestLocalBackend::syncBackToSeedFolderAfterOtherDest()
{
    // A flush to another folder must not make the seed folder's unchanged files look like
    // conflicts: the host copy of src/a.py never changed, so the sandbox edit is an Update.
    const QString project = makeProject();
    const QString dest = m_tmp->path() + QStringLiteral("/export");
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    QVERIFY(eb.seedWorkspace(project, DEFAULT_SANDBOX_SEED_EXCLUDES).success());
    eb.writeFile(QStringLiteral("src/a.py"), "a = 2  # changed\n");
    const WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
    QVERIFY(eb.syncArtifacts(dest, policy).success());

    QCOMPARE(planActions(eb.planSync(project, policy)).value(QStringLiteral("src/a.py")),
             QStringLiteral("Update"));
    const WorkspaceSyncResult r = eb.syncArtifacts(project, policy);
    QVERIFY2(r.conflicts.isEmpty(), qPrintable(r.conflicts.join(u' ')));
    QCOMPARE(readHost(project + QStringLiteral("/src/a.py")), QByteArray("a = 2  # changed\n"));
    QVERIFY(!QFileInfo::exists(project + QStringLiteral("/src/a.py") + conflictSuffix()));
}

void TestLocalBackend::syncNeverCreatesHostSymlinks()
{
    const QString project = makeProject();
    auto backend = makeBackend();
    ExecutionBackend &eb = *backend;
    QVERIFY(eb.seedWorkspace(project, DEFAULT_SANDBOX_SEED_EXCLUDES).success());
    writeHost(outside() + QStringLiteral("/bashrc"), "host file");
    QVERIFY(QFile::link(outside() + QStringLiteral("/bashrc"),
                        root() + QStringLiteral("/src/evil.py")));
    QVERIFY(QFile::link(QStringLiteral("/"), root() + QStringLiteral("/src/sub")));

    const WorkspaceSyncResult r = eb.syncArtifacts(project, defaultSandboxSyncPolicy());
    QVERIFY(r.skippedPaths.contains(QStringLiteral("src/evil.py")));
    QVERIFY(r.skippedPaths.contains(QStringLiteral("src/sub")));
    QVERIFY(!QFileInfo(project + QStringLiteral("/src/evil.py")).exists());
    QVERIFY(!QFileInfo(project + QStringLiteral("/src/evil.py")).isSymLink());
    QVERIFY(!QFileInfo(project + QStringLiteral("/src/sub")).isSymLink());
    QCOMPARE(readHost(outside() + QStringLiteral("/bashrc")), QByteArray("host file"));
}

QTEST_GUILESS_MAIN(TestLocalBackend)
#include "tst_localbackend.moc"
