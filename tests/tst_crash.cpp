// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Crash safety. Built with the engine files that have fault points compiled with the hook
// (elsai_fault_points, ELSAI_FAULT_INJECTION, see platform/faultinjection.h): for each scenario, a
// child process (this executable with --child) prepares a sandbox, arms the fault hook and runs one
// operation; the hook ends the child right after the k-th file-system mutation (write, fsync,
// rename, unlink, mkdir, audit append). The parent loops k = 1, 2, … until the operation completes
// without crashing and, after every crash, checks that each target holds its old or its new content
// (never a torn one), that the next start of the backend (and the next flush) removes the temp
// files, and that every line of the audit log parses. Then the real `elsai-workbench --headless` is
// killed with SIGKILL at random moments of a flush (ELSAI_CRASH_KILL_ROUNDS rounds, default 20): no
// host file may be torn.

#include "errors.h"
#include "faultinjection.h"
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "tempfiles.h"
#include "testutil.h"
#include "treesnapshot.h"

#include <QDirIterator>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <cstdio>

#include <fcntl.h>
#include <unistd.h>

#ifndef ELSAI_WORKBENCH_BIN
#error "ELSAI_WORKBENCH_BIN must name the elsai-workbench executable"
#endif

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

namespace {

constexpr int FlushFiles = 50;
constexpr int MaxCrashPoints = 5000; // a runaway loop is a bug, not a long test

// Large enough that a write cut short would show.
QByteArray oldContent(int i)
{
    return QByteArray(12 * 1024 + i, char('a' + i % 26));
}
QByteArray newContent(int i)
{
    return QByteArray(16 * 1024 + i, char('A' + i % 26));
}

const QStringList kDeleted = {QStringLiteral("del/a.txt"), QStringLiteral("del/b.txt"),
                              QStringLiteral("del/sub/c.txt"), QStringLiteral("del/sub/d.txt")};

/// The state every scenario starts from, written with plain file I/O.
void prepare(const QString &root)
{
    writeHostFile(root + QStringLiteral("/ws/old.txt"), oldContent(0));
    writeHostFile(root + QStringLiteral("/ws/m.txt"), oldContent(1));
    for (int i = 0; i < kDeleted.size(); ++i)
        writeHostFile(root + QStringLiteral("/ws/") + kDeleted[i], oldContent(i));
    for (int i = 0; i < FlushFiles; ++i)
        writeHostFile(root + QStringLiteral("/host/src/f%1.py").arg(i), oldContent(i));
}

/// A process crash keeps the page cache, so what it leaves does not depend on the file system:
/// use tmpfs where there is one, so the hundreds of runs do not wait on disk fsyncs.
QString scratchTemplate()
{
    const QString shm = QStringLiteral("/dev/shm");
    const QFileInfo fi(shm);
    return (fi.isDir() && fi.isWritable() ? shm : QDir::tempPath()) +
           QStringLiteral("/elsai-crash-XXXXXX");
}

/// What the "restore" scenario changes after its checkpoint (plain file I/O).
void mutate(const QString &ws)
{
    writeHostFile(ws + QStringLiteral("/old.txt"), newContent(0));
    writeHostFile(ws + QStringLiteral("/added/x.txt"), newContent(1));
    QFile::remove(ws + QStringLiteral("/del/sub/c.txt"));
    QFile::remove(ws + QStringLiteral("/del/sub/d.txt"));
    QDir(ws).rmdir(QStringLiteral("del/sub"));
    QFile::setPermissions(ws + QStringLiteral("/m.txt"), QFile::ReadOwner);
}

QByteArray digestOf(const QString &root)
{
    const UniqueFd fd(::open(QFile::encodeName(root).constData(), O_RDONLY | O_DIRECTORY));
    return treeDigest(captureTree(fd.get(), {}));
}

bool timeTravelScenario(const QString &scenario)
{
    return scenario == QLatin1String("checkpoint") || scenario == QLatin1String("restore");
}

SandboxPtr openSandbox(const QString &root, bool seed, bool checkpoints = false)
{
    Sandbox::Options options;
    if (checkpoints) {
        options.timeTravel.checkpoints = true;
        options.timeTravel.baseline = false;
        options.timeTravel.folder = root + QStringLiteral("/store");
    }
    if (seed)
        options.seedFrom = root + QStringLiteral("/host");
    return Sandbox::create(QStringLiteral("crash"),
                           std::make_shared<LocalSandboxBackend>(root + QStringLiteral("/ws")),
                           std::nullopt, options);
}

/// Child process: set up (unarmed), arm the hook at k, run the scenario's operation.
int childMain(const QString &scenario, const QString &root, int k)
{
    QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false"));
    try {
        const bool flush = scenario == QLatin1String("flush");
        auto sink = std::make_shared<JsonLinesAuditSink>(root + QStringLiteral("/audit.jsonl"));
        AuditLog::instance().addSink(sink);
        const SandboxPtr sandbox = openSandbox(root, flush, timeTravelScenario(scenario));
        sandbox->start();
        if (scenario == QLatin1String("restore")) {
            sandbox->checkpoint(QStringLiteral("c1"));
            mutate(root + QStringLiteral("/ws"));
        }
        if (flush) {
            // changed in the workspace since seeding (plain writes: setup needs no fsync)
            for (int i = 0; i < FlushFiles; ++i)
                writeHostFile(root + QStringLiteral("/ws/src/f%1.py").arg(i), newContent(i));
        }
        fault::arm(k);
        if (scenario == QLatin1String("write_new"))
            sandbox->addFiles({{QStringLiteral("new.txt"), FileSource::bytes(newContent(0))}});
        else if (scenario == QLatin1String("overwrite"))
            sandbox->addFiles({{QStringLiteral("old.txt"), FileSource::bytes(newContent(0))}});
        else if (scenario == QLatin1String("move"))
            sandbox->moveFile(QStringLiteral("m.txt"), QStringLiteral("moved/m.txt"));
        else if (scenario == QLatin1String("delete"))
            sandbox->deleteFiles({QStringLiteral("del")});
        else if (scenario == QLatin1String("checkpoint"))
            sandbox->checkpoint(QStringLiteral("c1"));
        else if (scenario == QLatin1String("restore"))
            sandbox->restore(QStringLiteral("c1"));
        else if (flush)
            sandbox->flush();
        else
            return 3;
        fault::arm(0);
        return 0;
    } catch (const SandboxError &e) {
        std::fprintf(stderr, "child: %s: %s\n", qPrintable(e.specName()), qPrintable(e.message()));
        return 2;
    }
}

QStringList tempFilesUnder(const QString &dir)
{
    QStringList found;
    QDirIterator it(dir, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        if (isStaleTempName(QFile::encodeName(it.fileName())))
            found.append(it.filePath());
    }
    return found;
}

/// "" when `path` holds one of the allowed contents (a null QByteArray = absent).
QString checkOneOf(const QString &path, const QList<QByteArray> &allowed)
{
    const bool exists = QFileInfo::exists(path);
    const QByteArray content = exists ? readHostFile(path) : QByteArray();
    for (const QByteArray &a : allowed) {
        if (a.isNull() ? !exists : (exists && content == a))
            return {};
    }
    return QStringLiteral("%1: torn or unexpected (%2 bytes)")
        .arg(path, exists ? QString::number(content.size()) : QStringLiteral("absent"));
}

/// Every complete line of the audit log is a JSON object with an event; nothing is cut.
QString checkAuditLog(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {}; // the crash came before the first record
    const QByteArray all = f.readAll();
    if (!all.isEmpty() && !all.endsWith('\n'))
        return QStringLiteral("audit log ends in a partial line");
    for (const QByteArray &line : all.split('\n')) {
        if (line.isEmpty())
            continue;
        const QJsonDocument doc = QJsonDocument::fromJson(line);
        if (!doc.isObject() || !doc.object().contains(QLatin1String("event")))
            return QStringLiteral("audit line does not parse: %1")
                .arg(QString::fromUtf8(line.left(120)));
    }
    return {};
}

} // namespace

class TestCrash : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false")); }
    void crashAtEveryPoint_data();
    void crashAtEveryPoint();
    void killHeadlessDuringFlush();
    void staleTempNames();
    void cleanupTestCase() { qInfo("crash: %d crash points in all, 0 torn", m_totalPoints); }

private:
    int m_totalPoints = 0;
};

void TestCrash::crashAtEveryPoint_data()
{
    QTest::addColumn<QString>("scenario");
    for (const char *s :
         {"write_new", "overwrite", "move", "delete", "flush", "checkpoint", "restore"})
        QTest::newRow(s) << QString::fromLatin1(s);
}

void TestCrash::crashAtEveryPoint()
{
    QFETCH(QString, scenario);
    int crashes = 0;
    bool completed = false;
    QStringList kinds;
    // the two states a checkpoint / restore scenario may leave the workspace in
    QByteArray checkpointed, mutated;
    if (timeTravelScenario(scenario)) {
        QTemporaryDir a(scratchTemplate());
        QTemporaryDir b(scratchTemplate());
        prepare(a.path());
        prepare(b.path());
        mutate(b.path() + QStringLiteral("/ws"));
        checkpointed = digestOf(a.path() + QStringLiteral("/ws"));
        mutated = digestOf(b.path() + QStringLiteral("/ws"));
    }
    for (int k = 1; k <= MaxCrashPoints && !completed; ++k) {
        QTemporaryDir tmp(scratchTemplate());
        QVERIFY(tmp.isValid());
        const QString root = tmp.path();
        const QString ws = root + QStringLiteral("/ws");
        prepare(root);

        QProcess child;
        child.start(QCoreApplication::applicationFilePath(),
                    {QStringLiteral("--child"), scenario, root, QString::number(k)});
        QVERIFY(child.waitForFinished(120000));
        QVERIFY2(child.exitStatus() == QProcess::NormalExit, "child died of a signal");
        const QByteArray err = child.readAllStandardError();
        if (child.exitCode() == 0) {
            completed = true;
        } else {
            QVERIFY2(child.exitCode() == fault::CrashExitCode,
                     qPrintable(QStringLiteral("k=%1: child failed (%2): %3")
                                    .arg(k)
                                    .arg(child.exitCode())
                                    .arg(QString::fromUtf8(err))));
            ++crashes;
            const QByteArray kind = err.mid(err.lastIndexOf("crash at ") + 9).trimmed();
            if (!kinds.contains(QString::fromUtf8(kind)))
                kinds.append(QString::fromUtf8(kind));
        }

        // Old or new, never torn.
        QStringList problems;
        auto expect = [&](const QString &path, const QList<QByteArray> &allowed) {
            const QString p = checkOneOf(path, allowed);
            if (!p.isEmpty())
                problems.append(p);
        };
        const QByteArray absent;
        if (scenario == QLatin1String("write_new")) {
            expect(ws + QStringLiteral("/new.txt"), {absent, newContent(0)});
        } else if (scenario == QLatin1String("overwrite")) {
            expect(ws + QStringLiteral("/old.txt"), {oldContent(0), newContent(0)});
        } else if (scenario == QLatin1String("move")) {
            expect(ws + QStringLiteral("/m.txt"), {absent, oldContent(1)});
            expect(ws + QStringLiteral("/moved/m.txt"), {absent, oldContent(1)});
            if (!QFileInfo::exists(ws + QStringLiteral("/m.txt")) &&
                !QFileInfo::exists(ws + QStringLiteral("/moved/m.txt"))) {
                problems.append(QStringLiteral("the moved file is lost"));
            }
        } else if (scenario == QLatin1String("delete")) {
            for (int i = 0; i < kDeleted.size(); ++i)
                expect(ws + QLatin1Char('/') + kDeleted[i], {absent, oldContent(i)});
        } else if (scenario == QLatin1String("checkpoint")) {
            // the workspace is only read; the checkpoint is listed whole or not at all
            if (digestOf(ws) != checkpointed)
                problems.append(QStringLiteral("a checkpoint changed the workspace"));
            const SandboxPtr next = openSandbox(root, false, true);
            next->start();
            for (const CheckpointInfo &i : next->checkpoints()) {
                if (treeDigest(next->timeTravel()->manifest(i.name)) != checkpointed)
                    problems.append(QStringLiteral("a torn checkpoint is listed: ") + i.name);
            }
            // and whatever is listed restores to it
            if (!next->checkpoints().isEmpty()) {
                next->restore(QStringLiteral("c1"));
                if (digestOf(ws) != checkpointed)
                    problems.append(QStringLiteral("the listed checkpoint does not restore"));
            }
            next->stop(false);
        } else if (scenario == QLatin1String("restore")) {
            const SandboxPtr next = openSandbox(root, false, true);
            next->start();
            if (const auto pending = next->interruptedRestore()) {
                // said at the next start, and finishing it brings the checkpoint back exactly
                next->restore(*pending);
                if (digestOf(ws) != checkpointed)
                    problems.append(QStringLiteral("finishing the interrupted restore did not "
                                                   "bring the checkpoint back"));
            } else if (const QByteArray d = digestOf(ws); d != checkpointed && d != mutated) {
                problems.append(QStringLiteral("the workspace is torn and no restore is "
                                               "reported as interrupted"));
            }
            if (next->interruptedRestore())
                problems.append(QStringLiteral("the journal outlived a finished restore"));
            next->stop(false);
        } else {
            for (int i = 0; i < FlushFiles; ++i)
                expect(root + QStringLiteral("/host/src/f%1.py").arg(i),
                       {oldContent(i), newContent(i)});
        }
        const QString audit = checkAuditLog(root + QStringLiteral("/audit.jsonl"));
        if (!audit.isEmpty())
            problems.append(audit);
        QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1, crash at k=%2: %3")
                                                    .arg(scenario)
                                                    .arg(k)
                                                    .arg(problems.join(u"; "))));

        // The next start removes what the crash left: workspace temps on create(), host temps
        // in the folders the next flush writes to.
        LocalSandboxBackend next(ws);
        next.create();
        if (scenario == QLatin1String("flush"))
            next.syncArtifacts(root + QStringLiteral("/host"), defaultSandboxSyncPolicy());
        const QStringList left = tempFilesUnder(root);
        QVERIFY2(left.isEmpty(), qPrintable(QStringLiteral("%1, k=%2: temp files left: %3")
                                                .arg(scenario)
                                                .arg(k)
                                                .arg(left.join(u", "))));
    }
    QVERIFY2(completed, "the operation never completed");
    m_totalPoints += crashes;
    qInfo("crash: %s: %d crash points (%s), 0 torn, 0 temp files left, audit log parsed",
          qPrintable(scenario), crashes, qPrintable(kinds.join(u", ")));
}

void TestCrash::killHeadlessDuringFlush()
{
    const int rounds = qMax(1, qEnvironmentVariableIntValue("ELSAI_CRASH_KILL_ROUNDS") > 0
                                   ? qEnvironmentVariableIntValue("ELSAI_CRASH_KILL_ROUNDS")
                                   : 20);
    QRandomGenerator rng(quint32(QDateTime::currentMSecsSinceEpoch()));
    const quint32 seed = rng.generate();
    rng.seed(seed);
    int torn = 0;
    int killedMidFlush = 0;
    for (int round = 0; round < rounds; ++round) {
        QTemporaryDir tmp(scratchTemplate());
        QVERIFY(tmp.isValid());
        const QString root = tmp.path();
        prepare(root);
        QProcess p;
        p.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
                {QStringLiteral("--headless"), QStringLiteral("--workspace-root"),
                 root + QStringLiteral("/ws"), QStringLiteral("--seed-from"),
                 root + QStringLiteral("/host"), QStringLiteral("--script"), QStringLiteral("-")});
        QVERIFY(p.waitForStarted());
        QJsonObject files;
        for (int i = 0; i < FlushFiles; ++i)
            files.insert(QStringLiteral("src/f%1.py").arg(i), QString::fromLatin1(newContent(i)));
        p.write("{\"op\":\"start\"}\n");
        p.write(QJsonDocument(QJsonObject{{QStringLiteral("op"), QStringLiteral("add_files")},
                                          {QStringLiteral("files"), files}})
                    .toJson(QJsonDocument::Compact) +
                '\n');
        // wait until both results are out, then flush and kill at a random moment of it
        QByteArray out;
        while (out.count('\n') < 2 && p.waitForReadyRead(60000))
            out += p.readAllStandardOutput();
        QCOMPARE(out.count('\n'), 2);
        p.write("{\"op\":\"flush\"}\n");
        QVERIFY(p.waitForBytesWritten(10000));
        ::usleep(useconds_t(rng.bounded(12000))); // a 50-file flush takes ~10-30 ms here
        ::kill(pid_t(p.processId()), SIGKILL);
        p.waitForFinished(30000);
        out += p.readAllStandardOutput();
        if (out.count('\n') < 3)
            ++killedMidFlush; // the flush had not answered yet
        for (int i = 0; i < FlushFiles; ++i) {
            if (!checkOneOf(root + QStringLiteral("/host/src/f%1.py").arg(i),
                            {oldContent(i), newContent(i)})
                     .isEmpty()) {
                ++torn;
            }
        }
    }
    qInfo("crash: kill -9 of elsai-workbench --headless during a flush of %d files: %d rounds "
          "(seed %u), %d killed before the flush answered, %d torn files",
          FlushFiles, rounds, seed, killedMidFlush, torn);
    QCOMPARE(torn, 0);
}

void TestCrash::staleTempNames()
{
    QVERIFY(isStaleTempName(".a.txt.elsai-tmp-0123456789abcdef"));
    QVERIFY(isStaleTempName(".a.txt.elsai-tmp-0123456789ab"));
    QVERIFY(isStaleTempName(".sandbox-tmp-3f"));
    QVERIFY(!isStaleTempName("a.txt.elsai-tmp-0123456789abcdef")); // no leading dot
    QVERIFY(!isStaleTempName(".elsai-tmp-0123456789abcdef"));      // no name
    QVERIFY(!isStaleTempName(".a.elsai-tmp-0123456789ABCDEF"));    // not our hex
    QVERIFY(!isStaleTempName(".a.elsai-tmp-0123456789abcde"));     // wrong length
    QVERIFY(!isStaleTempName(".sandbox-tmp-"));
    QVERIFY(!isStaleTempName(".sandbox-tmp-xyz"));
    QVERIFY(!isStaleTempName("notes.txt"));

    // Only regular files of ours go; a symlink or folder with such a name stays.
    QTemporaryDir tmp;
    const QString ws = tmp.path();
    writeHostFile(ws + QStringLiteral("/sub/.f.elsai-tmp-0123456789abcdef"), "x");
    writeHostFile(ws + QStringLiteral("/keep.txt"), "k");
    QVERIFY(QDir().mkpath(ws + QStringLiteral("/.d.elsai-tmp-0123456789abcdef")));
    QVERIFY(QFile::link(ws + QStringLiteral("/keep.txt"),
                        ws + QStringLiteral("/.l.elsai-tmp-0123456789abcdef")));
    LocalSandboxBackend backend(ws);
    backend.create();
    QVERIFY(!QFileInfo::exists(ws + QStringLiteral("/sub/.f.elsai-tmp-0123456789abcdef")));
    QVERIFY(QFileInfo(ws + QStringLiteral("/.d.elsai-tmp-0123456789abcdef")).isDir());
    QVERIFY(QFileInfo(ws + QStringLiteral("/.l.elsai-tmp-0123456789abcdef")).isSymLink());
    QCOMPARE(readHostFile(ws + QStringLiteral("/keep.txt")), QByteArray("k"));
}

int main(int argc, char **argv)
{
    if (argc == 5 && qstrcmp(argv[1], "--child") == 0) {
        QCoreApplication app(argc, argv);
        return childMain(QString::fromLocal8Bit(argv[2]), QString::fromLocal8Bit(argv[3]),
                         atoi(argv[4]));
    }
    QCoreApplication app(argc, argv);
    TestCrash tc;
    return QTest::qExec(&tc, argc, argv);
}

#include "tst_crash.moc"
