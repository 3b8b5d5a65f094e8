// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Time travel (docs/checkpoints.md): the checkpoint store, restore to a full tree digest, diff,
// fork, names and the size limit, and the changes of every call (shell commands included)
// attributed to the call that made them. Local backend, and bwrap where it runs.
#include "agent.h"
#include "bwrapsandboxbackend.h"
#include "checkpointstore.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "testutil.h"
#include "treemanifest.h"
#include "treesnapshot.h"
#include "treetestutil.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtConcurrent>
#include <QtTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace elsai;
using test::digestOf;
using test::readHostFile;
using test::sh;
using test::writeHostFile;

namespace {

/// A tree with every kind of entry a checkpoint records.
void makeTree(const QString &ws)
{
    writeHostFile(ws + QStringLiteral("/src/main.py"), "print('hello')\nprint('world')\n");
    writeHostFile(ws + QStringLiteral("/src/lib/util.py"), "def f():\n    return 1\n");
    writeHostFile(ws + QStringLiteral("/bin/run.sh"), "#!/bin/sh\necho run\n");
    writeHostFile(ws + QStringLiteral("/data.bin"), QByteArray("\0\1\2\3binary", 10));
    writeHostFile(ws + QStringLiteral("/notes.txt"), "a\nb\nc\n");
    sh(ws, QStringLiteral("chmod 755 bin/run.sh && chmod 600 notes.txt && mkdir -p empty/deeper "
                          "&& mkdir ro && echo x > ro/inside && chmod 555 ro && "
                          "ln -s src/main.py link-to-main && ln -s /etc/passwd abs-link && "
                          "ln -s missing dangling"));
}

struct Fixture
{
    QTemporaryDir tmp;
    QString ws;
    QString store;
    SandboxPtr sandbox;
    AgentPtr agent;

    explicit Fixture(bool bwrap = false, TimeTravelOptions tto = {})
    {
        ws = tmp.path() + QStringLiteral("/ws");
        store = tmp.path() + QStringLiteral("/store");
        QDir().mkpath(ws);
        tto.folder = store;
        Sandbox::Options options;
        options.timeTravel = tto;
        BackendPtr backend;
        if (bwrap)
            backend = std::make_shared<BwrapSandboxBackend>(ws);
        else
            backend = std::make_shared<LocalSandboxBackend>(ws);
        sandbox = Sandbox::create(QStringLiteral("tt"), backend, std::nullopt, options);
    }
    void attach()
    {
        AgentConfig config;
        config.sandbox = sandbox;
        config.sandboxMode = SandboxMode::Sandbox;
        agent = Agent::create(QStringLiteral("a1"), config);
    }
    ~Fixture()
    {
        if (sandbox && sandbox->isStarted())
            sandbox->stop(false);
        // a read-only folder of a test must not stop the temp folder's removal
        QProcess::execute(QStringLiteral("chmod"),
                          {QStringLiteral("-R"), QStringLiteral("u+rwx"), tmp.path()});
    }
};

TimeTravelOptions checkpointsOn()
{
    TimeTravelOptions o;
    o.checkpoints = true;
    return o;
}

TimeTravelOptions trackingOn()
{
    TimeTravelOptions o;
    o.trackChanges = true;
    return o;
}

bool bwrapWorks()
{
    QTemporaryDir tmp;
    try {
        BwrapSandboxBackend b(tmp.path());
        b.create();
        return b.execute(QStringLiteral("true")).exitCode == 0;
    } catch (const SandboxError &) {
        return false;
    }
}

QStringList strings(const QJsonValue &v)
{
    QStringList out;
    for (const QJsonValue &s : v.toArray())
        out.append(s.toString());
    return out;
}

} // namespace

class TestCheckpoints : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false")); }
    void manifestRoundTrip();
    void restoreExact_data();
    void restoreExact();
    void incrementalExact_data();
    void incrementalExact();
    void incrementalFallback_data();
    void incrementalFallback();
    void dedupAndDiff();
    void namesAndLimit();
    void fork();
    void interruptedRestore();
    void restoreStopsCommands();
    void changesPerCall_data();
    void changesPerCall();
    void sharedAttribution();
    void automaticBeforeMutatingCalls();
};

void TestCheckpoints::manifestRoundTrip()
{
    TreeManifest m;
    m.name = QStringLiteral("n");
    m.note = QStringLiteral("tab\there, newline\nthere");
    m.createdMs = 1234;
    m.source = QStringLiteral("local:/x");
    TreeEntry f;
    f.path = "dir/a\tb";
    f.mode = 0644;
    f.size = 3;
    f.hash = contentHash("abc");
    f.stamp = {1, 2, 3, 4, 5};
    TreeEntry l;
    l.path = "dir/link";
    l.type = TreeEntry::Type::Symlink;
    l.mode = 0777;
    l.target = "../x\ny";
    l.size = l.target.size();
    TreeEntry d;
    d.path = "dir";
    d.type = TreeEntry::Type::Dir;
    d.mode = 0755;
    m.entries = {d, f, l};
    const QByteArray bytes = encodeManifest(m);
    const auto back = decodeManifest(bytes);
    QVERIFY(back);
    QCOMPARE(back->note, m.note);
    QCOMPARE(treeDigest(*back), treeDigest(m));
    QCOMPARE(back->entries[2].target, l.target);
    QCOMPARE(back->entries[1].stamp, f.stamp);
    // cut short, or one byte altered: refused
    QString error;
    QVERIFY(!decodeManifest(bytes.left(bytes.size() - 5), &error));
    QByteArray altered = bytes;
    altered[altered.indexOf("dir/a") + 1] = 'X';
    QVERIFY(!decodeManifest(altered, &error));
    QVERIFY2(error.contains(QLatin1String("checksum")), qPrintable(error));
    // the header alone
    const auto header = decodeManifest(bytes, nullptr, true);
    QVERIFY(header && header->entries.empty() && header->name == QLatin1String("n"));
}

namespace {
// Shell changes of every kind to makeTree()'s tree.
// clang-format off
const char *const kMutations[] = {
    "sed -i 's/hello/bye/' src/main.py",
    "echo more >> notes.txt",
    "chmod 700 src/main.py",
    "ln -s notes.txt newlink",
    "mv src/lib src/library",
    "rm -r src",
    "mkdir -p a/b/c",
    "rm notes.txt && mkdir notes.txt && echo in > notes.txt/f",
    "rm -r empty && echo file > empty",
    "rm link-to-main && ln -s notes.txt link-to-main",
    "rm link-to-main && mkdir link-to-main",
    "chmod 700 ro && rm ro/inside && chmod 500 ro",
    "chmod 700 empty",
    "printf '\\0\\0' > data.bin",
    "rm -rf ./* && touch only",
};
// clang-format on
} // namespace

void TestCheckpoints::restoreExact_data()
{
    QTest::addColumn<bool>("bwrap");
    QTest::addColumn<QString>("mutation");
    for (const char *m : kMutations)
        QTest::newRow(m) << false << QString::fromLatin1(m);
    QTest::newRow("bwrap: many at once")
        << true
        << QStringLiteral("sed -i s/a/z/ notes.txt; chmod 700 bin/run.sh; rm -r src/lib; "
                          "ln -s x y; mkdir -p n/m; rm dangling; mkdir dangling");
}

void TestCheckpoints::restoreExact()
{
    QFETCH(bool, bwrap);
    QFETCH(QString, mutation);
    if (bwrap && !bwrapWorks())
        QSKIP("bwrap cannot run here");
    Fixture f(bwrap, checkpointsOn());
    makeTree(f.ws);
    f.sandbox->start();
    const QByteArray before = digestOf(f.ws);
    f.sandbox->checkpoint(QStringLiteral("c1"));
    QCOMPARE(treeDigest(f.sandbox->timeTravel()->manifest(QStringLiteral("c1"))), before);

    sh(f.ws, mutation);
    QVERIFY(digestOf(f.ws) != before);
    const RestoreResult r = f.sandbox->restore(QStringLiteral("c1"));
    QCOMPARE(digestOf(f.ws), before);
    QVERIFY(r.applied.written + r.applied.removed + r.applied.linked + r.applied.created +
                r.applied.modes >
            0);
    // byte for byte and mode for mode, as seen by plain file APIs too
    QCOMPARE(readHostFile(f.ws + QStringLiteral("/src/main.py")),
             QByteArray("print('hello')\nprint('world')\n"));
    QCOMPARE(QFileInfo(f.ws + QStringLiteral("/bin/run.sh")).permissions() & QFile::ExeOwner,
             QFile::ExeOwner);
    QCOMPARE(QFileInfo(f.ws + QStringLiteral("/abs-link")).symLinkTarget(),
             QStringLiteral("/etc/passwd"));
    QVERIFY(QFileInfo(f.ws + QStringLiteral("/empty/deeper")).isDir());
    // restoring the state it is in changes nothing
    const RestoreResult again = f.sandbox->restore(QStringLiteral("c1"));
    QCOMPARE(again.applied.written + again.applied.removed + again.applied.modes, qint64(0));
}

void TestCheckpoints::incrementalExact_data()
{
    QTest::addColumn<QString>("mutation");
    for (const char *m : kMutations)
        QTest::newRow(m) << QString::fromLatin1(m);
    // what the tracker's metadata calls unchanged: the event still names the path
    QTest::newRow("same size and mtime")
        << QStringLiteral("touch -r notes.txt ../ref && printf 'x\\ny\\nz\\n' > notes.txt && "
                          "touch -r ../ref notes.txt");
    QTest::newRow("a folder made again")
        << QStringLiteral("rm -r src/lib && mkdir src/lib && echo new > src/lib/util.py");
    QTest::newRow("a new tree moved in")
        << QStringLiteral("mkdir -p ../t/u && echo v > ../t/u/w && mv ../t moved");
}

// Changes the tree by `mutation`, checkpoints it (c2), restores c1 (the tree was `before`) and
// checkpoints that (c3): each capture and the restore exact. `changed`: the changed tree's digest.
static void changeCaptureRestore(Fixture &f, TimeTravel *tt, const QByteArray &before,
                                 const QString &mutation, QByteArray *changed)
{
    sh(f.ws, mutation);
    *changed = digestOf(f.ws);
    QVERIFY(*changed != before);
    f.sandbox->checkpoint(QStringLiteral("c2"));
    QCOMPARE(treeDigest(tt->manifest(QStringLiteral("c2"))), *changed);
    f.sandbox->restore(QStringLiteral("c1"));
    QCOMPARE(digestOf(f.ws), before);
    f.sandbox->checkpoint(QStringLiteral("c3"));
    QCOMPARE(treeDigest(tt->manifest(QStringLiteral("c3"))), before);
}

// With change tracking on, a checkpoint and a restore look only at the paths the tracker saw
// touched since the last capture: each result is exactly what a full walk sees.
void TestCheckpoints::incrementalExact()
{
    QFETCH(QString, mutation);
    TimeTravelOptions o = checkpointsOn();
    o.trackChanges = true;
    Fixture f(false, o);
    makeTree(f.ws);
    f.sandbox->start();
    TimeTravel *tt = f.sandbox->timeTravel().get();
    const QByteArray before = digestOf(f.ws);
    f.sandbox->checkpoint(QStringLiteral("c1"));
    const quint64 walks = tt->treeWalks();
    QVERIFY(walks >= 1); // the baseline's

    QByteArray changed;
    changeCaptureRestore(f, tt, before, mutation, &changed);
    if (QTest::currentTestFailed())
        return;
    f.sandbox->restore(QStringLiteral("c2"));
    QCOMPARE(digestOf(f.ws), changed);
    QCOMPARE(tt->treeWalks(), walks); // none of them walked the whole tree
}

void TestCheckpoints::incrementalFallback_data()
{
    QTest::addColumn<int>("maxWatches");
    QTest::addColumn<bool>("flood");
    QTest::addColumn<QString>("mutation");
    QTest::addColumn<int>("walks"); // of the 4 captures after the first checkpoint
    // clang-format off
    QTest::newRow("more folders than watches") << 1     << false
        << QStringLiteral("echo more >> src/lib/util.py") << 4;
    QTest::newRow("the event queue overflowed") << 65536 << true
        << QStringLiteral("touch -r notes.txt ../ref && printf 'x\\ny\\nz\\n' > notes.txt && "
                          "touch -r ../ref notes.txt") << 1;
    // no event here names a write through a hard link elsewhere: such files are always looked at
    QTest::newRow("a hard link outside") << 65536 << false
        << QStringLiteral("echo more >> ../outside") << 0;
    // clang-format on
}

// What the tracker cannot vouch for makes the capture walk the tree, and stays exact.
void TestCheckpoints::incrementalFallback()
{
    QFETCH(int, maxWatches);
    QFETCH(bool, flood);
    QFETCH(QString, mutation);
    QFETCH(int, walks);
    TimeTravelOptions o = checkpointsOn();
    o.trackChanges = true;
    o.maxWatches = maxWatches;
    Fixture f(false, o);
    makeTree(f.ws);
    writeHostFile(f.ws + QStringLiteral("/shared.txt"), "shared\n");
    QVERIFY(::link(QFile::encodeName(f.ws + QStringLiteral("/shared.txt")).constData(),
                   QFile::encodeName(f.tmp.path() + QStringLiteral("/outside")).constData()) == 0);
    f.sandbox->start();
    TimeTravel *tt = f.sandbox->timeTravel().get();
    const QByteArray before = digestOf(f.ws);
    f.sandbox->checkpoint(QStringLiteral("c1"));
    const quint64 first = tt->treeWalks();

    if (flood) {
        // more events than the kernel queues (two files in turn: equal events are merged)
        QFile limit(QStringLiteral("/proc/sys/fs/inotify/max_queued_events"));
        QVERIFY(limit.open(QIODevice::ReadOnly));
        const int events = limit.readAll().trimmed().toInt();
        if (events <= 0 || events > 1000000)
            QSKIP("the inotify queue is too long to fill quickly");
        const QByteArray a = QFile::encodeName(f.ws + QStringLiteral("/src/main.py"));
        const QByteArray b = QFile::encodeName(f.ws + QStringLiteral("/bin/run.sh"));
        for (int i = 0; i < events + 100; ++i)
            QVERIFY(::utimensat(AT_FDCWD, (i % 2 ? a : b).constData(), nullptr, 0) == 0);
    }
    QByteArray changed;
    changeCaptureRestore(f, tt, before, mutation, &changed);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(tt->treeWalks() - first, quint64(walks));
}

void TestCheckpoints::dedupAndDiff()
{
    Fixture f(false, checkpointsOn());
    makeTree(f.ws);
    for (int i = 0; i < 50; ++i)
        writeHostFile(f.ws + QStringLiteral("/many/f%1.txt").arg(i), QByteArray::number(i) + '\n');
    f.sandbox->start(); // the baseline "seed"
    CheckpointStore &store = f.sandbox->timeTravel()->store();
    const qint64 afterSeed = store.bytesAdded();
    sh(f.ws, QStringLiteral("echo changed > many/f7.txt && rm many/f8.txt && echo new > n.txt && "
                            "printf 'x\\0y' > data.bin && chmod 700 notes.txt"));
    f.sandbox->checkpoint(QStringLiteral("c2"), QStringLiteral("after edits"));
    // only the new contents were stored
    QCOMPARE(store.bytesAdded() - afterSeed, qint64(strlen("changed\n") + strlen("new\n") + 3));

    const CheckpointDiff d =
        f.sandbox->diffCheckpoints(QStringLiteral("seed"), QStringLiteral("c2"));
    QCOMPARE(d.added, qint64(1));
    QCOMPARE(d.deleted, qint64(1));
    QCOMPARE(d.modified, qint64(3));
    QHash<QString, CheckpointDiffEntry> byPath;
    for (const CheckpointDiffEntry &e : d.entries)
        byPath.insert(e.path, e);
    QVERIFY(
        byPath.value(QStringLiteral("many/f7.txt")).diff.contains(QLatin1String("-7\n+changed\n")));
    QVERIFY(byPath.value(QStringLiteral("data.bin")).binary);
    QCOMPARE(*byPath.value(QStringLiteral("data.bin")).sizeTo, qint64(3));
    QCOMPARE(*byPath.value(QStringLiteral("notes.txt")).modeTo, quint32(0700));
    QVERIFY(byPath.value(QStringLiteral("notes.txt")).diff.isEmpty());
    // against the live workspace
    sh(f.ws, QStringLiteral("echo later >> n.txt"));
    const CheckpointDiff now = f.sandbox->diffCheckpoints(QStringLiteral("c2"));
    QCOMPARE(now.modified, qint64(1));
    QCOMPARE(now.entries.value(0).path, QStringLiteral("n.txt"));
    QVERIFY(now.entries.value(0).diff.contains(QLatin1String("+later")));
    // bounded
    CheckpointDiffOptions small;
    small.maxEntries = 2;
    const CheckpointDiff cut =
        f.sandbox->diffCheckpoints(QStringLiteral("seed"), QStringLiteral("now"), small);
    QVERIFY(cut.truncated);
    QCOMPARE(cut.entries.size(), 2);
    QCOMPARE(cut.added + cut.modified + cut.deleted, qint64(5));
}

void TestCheckpoints::namesAndLimit()
{
    TimeTravelOptions o = checkpointsOn();
    o.baseline = false;
    o.sizeLimitBytes = 3000;
    Fixture f(false, o);
    f.sandbox->start();
    for (const QString &bad : {QStringLiteral(""), QStringLiteral("now"), QStringLiteral("../x"),
                               QStringLiteral(".hidden"), QStringLiteral("a b")}) {
        if (bad.isEmpty())
            continue; // empty = automatic
        QVERIFY_THROWS_EXCEPTION(ValueError, f.sandbox->checkpoint(bad));
    }
    writeHostFile(f.ws + QStringLiteral("/keep.txt"), QByteArray(1000, 'k'));
    f.sandbox->checkpoint(QStringLiteral("named"));
    QVERIFY_THROWS_EXCEPTION(FileExistsError, f.sandbox->checkpoint(QStringLiteral("named")));
    // automatic checkpoints of 1000 new bytes each: the oldest go, the named one stays
    QStringList removed;
    for (int i = 0; i < 4; ++i) {
        writeHostFile(f.ws + QStringLiteral("/f%1").arg(i), QByteArray(1000, char('a' + i)));
        f.sandbox->timeTravel()->checkpoint(QStringLiteral("auto%1").arg(i), {}, true);
    }
    QStringList names;
    for (const CheckpointInfo &i : f.sandbox->checkpoints())
        names.append(i.name);
    QVERIFY2(names.contains(QLatin1String("named")), qPrintable(names.join(u',')));
    QVERIFY2(names.contains(QLatin1String("auto3")), qPrintable(names.join(u',')));
    QVERIFY2(!names.contains(QLatin1String("auto0")), qPrintable(names.join(u',')));
    QVERIFY(f.sandbox->deleteCheckpoint(QStringLiteral("named")));
    QVERIFY(!f.sandbox->deleteCheckpoint(QStringLiteral("named")));
    QVERIFY_THROWS_EXCEPTION(FileNotFoundError, f.sandbox->restore(QStringLiteral("named")));
}

void TestCheckpoints::fork()
{
    Fixture f(false, checkpointsOn());
    makeTree(f.ws);
    f.sandbox->start();
    const QByteArray digest = digestOf(f.ws);
    const QString target = f.tmp.path() + QStringLiteral("/fork");
    Sandbox::Options options;
    options.timeTravel = checkpointsOn();
    options.timeTravel.folder = f.store;
    const SandboxPtr forked =
        f.sandbox->fork(QStringLiteral("seed"), QStringLiteral("forked"),
                        std::make_shared<LocalSandboxBackend>(target), options);
    QVERIFY(forked->isStarted());
    QCOMPARE(digestOf(target), digest);
    QCOMPARE(forked->checkpoints().value(0).name, QStringLiteral("seed"));
    forked->stop(false);
    // never over something
    QVERIFY_THROWS_EXCEPTION(FileExistsError,
                             f.sandbox->fork(QStringLiteral("seed"), QStringLiteral("again"),
                                             std::make_shared<LocalSandboxBackend>(target)));
    QCOMPARE(digestOf(target), digest);
}

void TestCheckpoints::interruptedRestore()
{
    // What a kill in the middle leaves (tests/tst_crash.cpp kills for real): the journal, and a
    // workspace half-way. The next start says so; restoring finishes it.
    Fixture f(false, checkpointsOn());
    makeTree(f.ws);
    f.sandbox->start();
    const QByteArray digest = digestOf(f.ws);
    CheckpointSpace(CheckpointStore::open(f.store), f.sandbox->backend()->id())
        .writeJournal(QStringLiteral("seed"));
    sh(f.ws, QStringLiteral("rm -r src && echo half > notes.txt"));
    f.sandbox->stop(false);
    QVERIFY(f.sandbox->start().has_value() || true);
    QCOMPARE(f.sandbox->interruptedRestore(), std::optional<QString>(QStringLiteral("seed")));
    QVERIFY_THROWS_EXCEPTION(PermissionError, f.sandbox->deleteCheckpoint(QStringLiteral("seed")));
    const RestoreResult r = f.sandbox->restore(QStringLiteral("seed"));
    QVERIFY(r.wasInterrupted);
    QCOMPARE(digestOf(f.ws), digest);
    QCOMPARE(f.sandbox->interruptedRestore(), std::nullopt);
}

void TestCheckpoints::restoreStopsCommands()
{
    Fixture f(false, checkpointsOn());
    f.sandbox->start();
    f.attach();
    QFuture<ToolResult> running = QtConcurrent::run([&] {
        return f.agent->callTool(QStringLiteral("execute"),
                                 {{QStringLiteral("command"), QStringLiteral("sleep 60")}});
    });
    QTest::qWait(300); // let the command start
    const RestoreResult r = f.sandbox->restore(QStringLiteral("seed"));
    QCOMPARE(r.stoppedCalls, 1);
    QVERIFY(running.isFinished());
    QVERIFY(running.result().data.value(QStringLiteral("cancelled")).toBool());
}

void TestCheckpoints::changesPerCall_data()
{
    QTest::addColumn<bool>("bwrap");
    QTest::addColumn<QString>("command");
    QTest::addColumn<QStringList>("added");
    QTest::addColumn<QStringList>("modified");
    QTest::addColumn<QStringList>("deleted");
    const auto l = [](std::initializer_list<const char *> s) {
        QStringList out;
        for (const char *x : s)
            out.append(QString::fromLatin1(x));
        return out;
    };
    for (bool bwrap : {false, true}) {
        const QString p = bwrap ? QStringLiteral("bwrap: ") : QString();
        // clang-format off
        QTest::newRow(qPrintable(p + "sed -i"))    << bwrap << "sed -i s/a/b/ notes.txt" << l({}) << l({"notes.txt"}) << l({});
        QTest::newRow(qPrintable(p + ">>"))        << bwrap << "echo x >> notes.txt" << l({}) << l({"notes.txt"}) << l({});
        QTest::newRow(qPrintable(p + "chmod"))     << bwrap << "chmod 700 notes.txt" << l({}) << l({"notes.txt"}) << l({});
        QTest::newRow(qPrintable(p + "ln -s"))     << bwrap << "ln -s notes.txt l" << l({"l"}) << l({}) << l({});
        QTest::newRow(qPrintable(p + "mv"))        << bwrap << "mv src/lib src/x" << l({"src/x", "src/x/util.py"}) << l({}) << l({"src/lib", "src/lib/util.py"});
        QTest::newRow(qPrintable(p + "rm -r"))     << bwrap << "rm -r src" << l({}) << l({}) << l({"src", "src/lib", "src/lib/util.py", "src/main.py"});
        QTest::newRow(qPrintable(p + "mkdir -p"))  << bwrap << "mkdir -p a/b/c" << l({"a", "a/b", "a/b/c"}) << l({}) << l({});
        QTest::newRow(qPrintable(p + "file → folder")) << bwrap << "rm notes.txt && mkdir notes.txt" << l({"notes.txt"}) << l({}) << l({"notes.txt"});
        QTest::newRow(qPrintable(p + "created and removed")) << bwrap << "touch t && rm t" << l({}) << l({}) << l({});
        QTest::newRow(qPrintable(p + "nothing"))   << bwrap << "cat notes.txt" << l({}) << l({}) << l({});
        // clang-format on
    }
}

void TestCheckpoints::changesPerCall()
{
    QFETCH(bool, bwrap);
    QFETCH(QString, command);
    QFETCH(QStringList, added);
    QFETCH(QStringList, modified);
    QFETCH(QStringList, deleted);
    if (bwrap && !bwrapWorks())
        QSKIP("bwrap cannot run here");
    Fixture f(bwrap, trackingOn());
    makeTree(f.ws);
    f.sandbox->start();
    f.attach();
    test::AuditCapture audit;
    const ToolResult r =
        f.agent->callTool(QStringLiteral("execute"), {{QStringLiteral("command"), command}});
    QCOMPARE(r.data.value(QStringLiteral("exit_code")).toInt(), 0);
    const QJsonObject c = r.data.value(QStringLiteral("changes")).toObject();
    const QJsonObject paths = c.value(QStringLiteral("paths")).toObject();
    QCOMPARE(strings(paths.value(QStringLiteral("added"))), added);
    QCOMPARE(strings(paths.value(QStringLiteral("modified"))), modified);
    QCOMPARE(strings(paths.value(QStringLiteral("deleted"))), deleted);
    QCOMPARE(c.value(QStringLiteral("added")).toInt(), added.size());
    QCOMPARE(c.value(QStringLiteral("attribution")).toString(), QStringLiteral("exclusive"));
    // the call's audit record carries the counts (and no path)
    const auto events = audit.named(QStringLiteral("sandbox.execute"));
    QCOMPARE(events.size(), 1);
    const QJsonObject ac = events.first().fields.value(QStringLiteral("changes")).toObject();
    QCOMPARE(ac.value(QStringLiteral("deleted")).toInt(), deleted.size());
    QVERIFY(!ac.contains(QLatin1String("paths")));
    // a read-only tool is not a span; write_file is
    const ToolResult w = f.agent->callTool(QStringLiteral("write_file"),
                                           {{QStringLiteral("path"), QStringLiteral("w/new.txt")},
                                            {QStringLiteral("content"), QStringLiteral("x")}});
    QCOMPARE(strings(w.data.value(QStringLiteral("changes"))
                         .toObject()
                         .value(QStringLiteral("paths"))
                         .toObject()
                         .value(QStringLiteral("added"))),
             (QStringList{QStringLiteral("w"), QStringLiteral("w/new.txt")}));
    const ToolResult read = f.agent->callTool(
        QStringLiteral("read_file"), {{QStringLiteral("path"), QStringLiteral("w/new.txt")}});
    QVERIFY(!read.data.contains(QLatin1String("changes")));
}

void TestCheckpoints::sharedAttribution()
{
    Fixture f(false, trackingOn());
    f.sandbox->start();
    f.attach();
    AgentConfig config;
    config.sandbox = f.sandbox;
    config.sandboxMode = SandboxMode::Sandbox;
    const AgentPtr other = Agent::create(QStringLiteral("a2"), config);
    // a2 runs while a1 writes: a1's change is attributed to both
    QFuture<ToolResult> slow = QtConcurrent::run([&] {
        return other->callTool(
            QStringLiteral("execute"),
            {{QStringLiteral("command"), QStringLiteral("sleep 1; touch late")}});
    });
    QTest::qWait(200);
    const ToolResult mine = f.agent->callTool(
        QStringLiteral("execute"), {{QStringLiteral("command"), QStringLiteral("touch early")}});
    slow.waitForFinished();
    const QJsonObject a = mine.data.value(QStringLiteral("changes")).toObject();
    const QJsonObject b = slow.result().data.value(QStringLiteral("changes")).toObject();
    QCOMPARE(a.value(QStringLiteral("attribution")).toString(), QStringLiteral("shared"));
    QCOMPARE(strings(a.value(QStringLiteral("paths")).toObject().value(QStringLiteral("added"))),
             QStringList{QStringLiteral("early")});
    QCOMPARE(b.value(QStringLiteral("attribution")).toString(), QStringLiteral("shared"));
    QCOMPARE(strings(b.value(QStringLiteral("paths")).toObject().value(QStringLiteral("added"))),
             (QStringList{QStringLiteral("early"), QStringLiteral("late")}));
    QCOMPARE(f.sandbox->timeTravel()->tracker()->log().size(), 2);
}

void TestCheckpoints::automaticBeforeMutatingCalls()
{
    TimeTravelOptions o = checkpointsOn();
    o.baseline = false;
    o.autoCheckpointAgents = {QStringLiteral("a1")};
    Fixture f(false, o);
    f.sandbox->start();
    f.attach();
    const auto write = [&](const char *content) {
        f.agent->callTool(QStringLiteral("write_file"),
                          {{QStringLiteral("path"), QStringLiteral("f.txt")},
                           {QStringLiteral("content"), QLatin1String(content)}});
    };
    write("one");
    write("two");
    f.agent->callTool(QStringLiteral("read_file"),
                      {{QStringLiteral("path"), QStringLiteral("f.txt")}});
    const QList<CheckpointInfo> list = f.sandbox->checkpoints();
    QCOMPARE(list.size(), 2); // before each write, none before the read
    QVERIFY(list[0].automatic && list[1].automatic);
    QVERIFY(list[0].name != list[1].name);
    // the second one holds the first write: restoring it undoes the second
    f.sandbox->restore(list[1].name);
    QCOMPARE(readHostFile(f.ws + QStringLiteral("/f.txt")), QByteArray("one"));
}

QTEST_GUILESS_MAIN(TestCheckpoints)
#include "tst_checkpoints.moc"
