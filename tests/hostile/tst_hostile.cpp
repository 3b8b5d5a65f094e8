// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Hostile-input suite (SECURITY.md, "The hostile paths"): a table of hostile paths tried with
// every file operation of every backend that can run here, plus the openat2-style rename race
// through the backend. The hostile layout is planted with the backend's own execute (ln -s,
// mkfifo, …), so a backend added to backends() runs the same table: add one BackendFixture.
// For every case and operation: the outside canary is never returned, nothing outside the
// workspace changes, and the operations that must refuse do. Prints cases tried and passed.
// ELSAI_HOSTILE_RACE_ROUNDS sets the race rounds (CI default 20,000, ssh 50; the long run
// 100,000+, ssh 2,000).
#include "bwrapsandboxbackend.h"
#include "dockerfixture.h"
#include "errors.h"
#include "fakeagentcore.h"
#include "fakedaytona.h"
#include "localsandboxbackend.h"
#include "renameexchanger.h"
#include "sandbox.h"
#include "sshfixture.h"
#include "testutil.h"

#include <QCryptographicHash>
#include <QDirIterator>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include <fcntl.h>
#include <stdio.h>

using namespace elsai;

namespace {

const QByteArray Canary = "HOSTILE-CANARY-0b7e";

struct BackendFixture
{
    QString name;
    /// A started backend on a fresh, empty workspace whose parent folder the test may use as
    /// "outside" (via execute with relative paths).
    std::function<std::shared_ptr<SandboxBackend>()> make;
    /// Rounds of the rename race (0: the default): a remote backend pays a round trip a call.
    int raceRounds = 0;
    /// A race escape this backend is known to have (not fixed yet): the race still runs and
    /// prints its figures, but escapes are reported as a warning instead of failing.
    QString raceKnownBug = {};
    /// Host folder of a workspace whose commands see it elsewhere (bwrap: /workspace). Set:
    /// the layout is planted by a local backend on that folder, and "outside" is its parent.
    /// Unset: commands run at the workspace's host path (local, ssh and the loopback fakes).
    std::function<QString(SandboxBackend &)> hostFolder = {};
    /// Where the workspace is seen on this host when its commands see it at another path and
    /// only they can plant the layout (a container: its volume's folder on this machine).
    /// Unset: hostFolder, else the path the commands see.
    std::function<QString(SandboxBackend &)> hostView = {};
    /// Why the backend cannot run here (empty: it can); checked before its first case.
    std::function<QString()> unavailable = {};
    /// "case id" or "case id|operation" → a known backend bug, not fixed yet
    /// (docs/testing.md lists them): not run (it hangs or escapes), reported with the reason.
    QHash<QString, QString> knownBugs = {};
};

QList<BackendFixture> backends()
{
    static std::vector<std::unique_ptr<QTemporaryDir>> dirs;
    static test::SshServer sshd;
    QList<BackendFixture> list{
        {QStringLiteral("local"),
         [] {
             dirs.push_back(std::make_unique<QTemporaryDir>());
             const QString ws = dirs.back()->path() + QStringLiteral("/ws");
             QDir().mkpath(ws);
             auto b = std::make_shared<LocalSandboxBackend>(ws);
             b->create();
             return b;
         }},
    };
    if (sshd.start()) {
        // Each workspace in a folder of its own on the "remote" (this machine, over sshd): the
        // folder is the outside the cases watch.
        list.append({QStringLiteral("ssh"),
                     [] {
                         static int serial = 0;
                         SshSandboxBackend::Options o = sshd.backendOptions(QStringLiteral("ws"));
                         o.remoteRoot = sshd.remoteRoot() + QStringLiteral("/h%1").arg(++serial);
                         QDir().mkpath(o.remoteRoot);
                         auto b = std::make_shared<SshSandboxBackend>(o);
                         b->create();
                         return b;
                     },
                     // A round is three ssh channels: ~1 s on the 2 busy shared cores here
                     // (the attacker spins one of them), so 50 keep the suite near 90 s.
                     // The long run: ELSAI_HOSTILE_RACE_ROUNDS=2000 (docs/testing.md).
                     50});
    } else {
        qInfo("hostile: ssh skipped: %s", qPrintable(sshd.error()));
    }
    return list;
}

/// The loopback protocol servers of the remote fixtures, made on first use (their server
/// threads need the QCoreApplication) and released by cleanupTestCase() (LeakSanitizer).
struct RemoteFakes
{
    std::function<std::shared_ptr<SandboxBackend>()> daytona;
    std::function<std::shared_ptr<SandboxBackend>()> agentcore;
};
RemoteFakes &remoteFakes()
{
    static RemoteFakes fakes;
    return fakes;
}

/// bwrap and the remote backends over their loopback fakes: the same table as backends().
QList<BackendFixture> moreBackends()
{
    static std::vector<std::unique_ptr<QTemporaryDir>> dirs;
    BackendFixture bwrap{QStringLiteral("bwrap"), [] {
                             dirs.push_back(std::make_unique<QTemporaryDir>());
                             const QString ws = dirs.back()->path() + QStringLiteral("/ws");
                             QDir().mkpath(ws);
                             auto b = std::make_shared<BwrapSandboxBackend>(ws);
                             b->create();
                             return b;
                         }};
    bwrap.hostFolder = [](SandboxBackend &b) {
        return static_cast<BwrapSandboxBackend &>(b).workspaceRoot();
    };
    bwrap.unavailable = [] {
        QTemporaryDir dir;
        try {
            BwrapSandboxBackend(dir.path()).create();
            return QString();
        } catch (const SandboxError &e) {
            return QStringLiteral("bubblewrap cannot run here: ") + e.display();
        }
    };

    // The fake runs each sandbox in a temp folder of its own; the workspace is a folder in it
    // (`<sandbox>/workspace`), so the sandbox folder is the outside the cases watch.
    BackendFixture daytona{QStringLiteral("daytona"), [] {
                               if (!remoteFakes().daytona)
                                   remoteFakes().daytona = test::FakeDaytona::backendFactory();
                               auto b = remoteFakes().daytona();
                               b->create();
                               return b;
                           }};

    // The fake's session folder is the workspace, a QTemporaryDir: made under a fresh folder
    // of ours (TMPDIR while create() starts the session) so that its parent, the outside the
    // cases watch, is private instead of /tmp.
    BackendFixture agentcore{QStringLiteral("agentcore"), [] {
                                 if (!remoteFakes().agentcore)
                                     remoteFakes().agentcore =
                                         test::FakeAgentCore::backendFactory();
                                 dirs.push_back(std::make_unique<QTemporaryDir>());
                                 const QByteArray savedTmp = qgetenv("TMPDIR");
                                 const bool hadTmp = qEnvironmentVariableIsSet("TMPDIR");
                                 qputenv("TMPDIR", QFile::encodeName(dirs.back()->path()));
                                 const auto restore = qScopeGuard([&] {
                                     if (hadTmp)
                                         qputenv("TMPDIR", savedTmp);
                                     else
                                         qunsetenv("TMPDIR");
                                 });
                                 auto b = remoteFakes().agentcore();
                                 b->create();
                                 return b;
                             }};
    // A container of its own per case, its workspace a folder in the volume, so that the
    // volume's root is the outside the cases watch (read on this host, where the engine
    // keeps the volume).
    BackendFixture docker{QStringLiteral("docker"), [] {
                              auto o = test::DockerEngine::options();
                              o.workspacePath = QStringLiteral("/workspace/ws");
                              static int serial = 0;
                              auto b = test::DockerEngine::makeBackend(
                                  QStringLiteral("hostile-%1").arg(++serial), o);
                              b->create();
                              return b;
                          }};
    docker.hostView = [](SandboxBackend &b) {
        const QString volume =
            test::DockerEngine::volumeOnHost(static_cast<DockerSandboxBackend &>(b).volumeName());
        return volume.isEmpty() ? QString() : volume + QStringLiteral("/ws");
    };
    docker.unavailable = [] {
        const QString why = test::DockerEngine::unavailable();
        if (!why.isEmpty())
            return why;
        // the outside is read where the engine keeps the volume: a local engine, as root
        auto b = test::DockerEngine::makeBackend(QStringLiteral("hostile-probe"));
        b->create();
        const bool readable = QFileInfo(test::DockerEngine::volumeOnHost(b->volumeName())).isDir();
        b->close();
        return readable ? QString()
                        : QStringLiteral("the engine's volumes are not readable here (a remote "
                                         "engine, or not root)");
    };
    // Each race round is a few confined shell commands on the fake (one round trip each).
    daytona.raceRounds = 100;
    agentcore.raceRounds = 100;
    // A container's round is three execs (each a runc exec) while the attacker holds a core:
    // fewer rounds, still thousands of swaps in each (the script is the one the fakes race).
    docker.raceRounds = 40;
    return {bwrap, daytona, agentcore, docker};
}

/// The fixtures ELSAI_HOSTILE_BACKENDS names (comma-separated; unset: all of them). CTest runs
/// one test per group so that each has its own time budget and they run in parallel.
bool wanted(const QString &name)
{
    const QStringList only =
        qEnvironmentVariable("ELSAI_HOSTILE_BACKENDS").split(u',', Qt::SkipEmptyParts);
    return only.isEmpty() || only.contains(name);
}

QList<BackendFixture> selectedBackends()
{
    QList<BackendFixture> all;
    // backends() starts the throwaway sshd: only when local or ssh is asked for
    if (wanted(QStringLiteral("local")) || wanted(QStringLiteral("ssh")))
        all += backends();
    all += moreBackends();
    QList<BackendFixture> list;
    for (const BackendFixture &f : all) {
        if (wanted(f.name))
            list.append(f);
    }
    return list;
}

// Backend operations and the host-side Sandbox operations (add_files, read_file,
// download_files, move_file to / from, delete_files). Reads first, then writes, removals last:
// a write may replace a planted FIFO and a removal may delete a planted link.
enum Op {
    Read,
    List,
    Stat,
    Cwd,
    HostRead,
    HostDownload,
    Write,
    MakeDirs,
    HostAdd,
    HostMoveTo,
    HostMoveFrom,
    Remove,
    HostDelete,
    OpCount
};
const char *const OpNames[] = {"read",           "list",           "stat",           "cwd",
                               "host read_file", "download_files", "write",          "mkdir",
                               "add_files",      "move_file to",   "move_file from", "remove",
                               "delete_files"};

/// Host operations must refuse what the backend operation they build on refuses.
Op baseOp(Op op)
{
    switch (op) {
    case HostAdd:
        return Write;
    case HostRead:
    case HostDownload:
        return Read;
    case HostMoveTo:
    case HostMoveFrom:
    case HostDelete:
        return Remove;
    default:
        return op;
    }
}

struct Case
{
    QString id;
    QString path;
    QList<Op> refused; ///< operations that must fail; every operation must stay inside
    /// A hard link shares its inode with the outside file: reading it is reading that file,
    /// which the agent could already do. Writes must still break the link (P11).
    bool sharesInode = false;
};

/// `wsName`: the workspace folder's name, for the prefix sibling (`../<wsName>-evil`).
QList<Case> cases(const QString &wsName = QStringLiteral("ws"))
{
    const QList<Op> all = {Read, Write, List, MakeDirs, Cwd, Stat, Remove};
    const QList<Op> follows = {Read, Write, List, MakeDirs, Cwd};
    QString deep;
    for (int i = 0; i < 1000; ++i)
        deep += QStringLiteral("a/");
    for (int i = 0; i < 1001; ++i)
        deep += QStringLiteral("../");
    return {
        {"P1 ..", "../outside.txt", all},
        {"P1 a/../..", "sub/../../outside.txt", all},
        {"P1 deep", deep + QStringLiteral("outside.txt"), all},
        {"P1 ..folder", "..", all},
        {"P1 trailing ..", "sub/../..", all},
        {"P2 absolute", "/etc/passwd", all},
        {"P2 absolute tmp", "/tmp/elsai-hostile-created", all},
        {"P3 prefix sibling", QStringLiteral("../%1-evil/s").arg(wsName), all},
        {"P4 abs link", "abs", {Read, Write, List, MakeDirs, Cwd}},
        {"P4 up link", "up", follows},
        {"P4 dir link", "dotdot/outside.txt", all},
        {"P4 dir link itself", "dotdot", {List, Cwd, MakeDirs}},
        {"P4 dir link slash", "dotdot/", {List, Cwd, Write, Read}},
        {"P5 dangling", "dangling", {Read, Write, List, Cwd, MakeDirs}},
        {"P5 through folder link", "linkdir/new.txt", all},
        {"P5 through folder link deep", "linkdir/x/y/new.txt", all},
        {"P6 NUL", QString::fromUtf8("a\0b", 3), all},
        {"P6 NUL after ..", QString::fromUtf8("..\0x", 4), all},
        {"P8 long component", QString(256, QLatin1Char('n')), {Read, Write, List, MakeDirs, Cwd}},
        {"P8 long path",
         QString(5000, QLatin1Char('d')).replace(QStringLiteral("dddd"), QStringLiteral("ddd/")),
         {Read, Write, List, MakeDirs, Cwd}},
        {"P9 empty", "", {Read, Write, Remove}},
        // a write replaces the FIFO atomically (rename over it), never opens it
        {"P10 fifo", "fifo", {Read, List, Cwd}},
        {"P11 hard link", "hl", {}, true},
        {"loop", "loop", {Read, Write, List, Cwd, MakeDirs}},
        {"magic link", "magic/etc/passwd", all},
        {"P7 literal %2e", "%2e%2e/x", {}},
        {"P7 literal backslash", "..\\x", {}},
        {"P9 tilde", "~/x", {}},
        {"P9 dash", "-rf", {}},
        {"P9 a//b", "sub//f", {}},
        {"P4 inner link", "rel", {}},
    };
}

QByteArray outsideDigest(const QString &base, const QString &wsName = QStringLiteral("ws"))
{
    QStringList lines;
    QDirIterator it(base, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        const QString rel = QDir(base).relativeFilePath(it.filePath());
        if (rel == wsName || rel.startsWith(wsName + QLatin1Char('/')))
            continue;
        QFile f(it.filePath());
        const bool regular = it.fileInfo().isFile() && !it.fileInfo().isSymLink();
        lines << rel + QLatin1Char('|') +
                     (regular && f.open(QIODevice::ReadOnly)
                          ? QString::fromLatin1(f.readAll().toHex())
                          : QStringLiteral("-"));
    }
    lines.sort();
    return QCryptographicHash::hash(lines.join(u'\n').toUtf8(), QCryptographicHash::Sha256);
}

/// Runs one operation; returns whether it was refused (threw). Sets *leaked when outside
/// content came back.
bool attempt(SandboxBackend &b, Sandbox &sandbox, const QString &downloads, Op op,
             const QString &path, bool *leaked)
{
    try {
        switch (op) {
        case HostAdd:
            sandbox.addFiles({{path, FileSource::text(QStringLiteral("added\n"))}});
            break;
        case HostRead:
            *leaked = sandbox.readFileBytes(path).contains(Canary);
            break;
        case HostDownload: {
            const QString to = downloads + QStringLiteral("/dl.txt");
            QFile::remove(to);
            sandbox.downloadFiles({{path, to}});
            *leaked = test::readHostFile(to).contains(Canary);
            break;
        }
        case HostMoveTo:
            sandbox.moveFile(QStringLiteral("sub/f"), path);
            break;
        case HostMoveFrom:
            sandbox.moveFile(path, QStringLiteral("moved-away"));
            break;
        case HostDelete:
            sandbox.deleteFiles({path});
            break;
        case Read:
            *leaked = b.readFile(path).contains(Canary);
            break;
        case Write:
            b.writeFile(path, "written by a hostile case\n");
            break;
        case List:
            for (const FileInfo &e : b.listDir(path))
                *leaked = *leaked || e.path.contains(QLatin1String("outside"));
            break;
        case Stat:
            b.stat(path);
            break;
        case Remove:
            b.removeFile(path, false);
            break;
        case MakeDirs:
            b.makeDirs(path);
            break;
        case Cwd: {
            const ExecuteResult r =
                b.execute(QStringLiteral("cat outside.txt 2>/dev/null; pwd"), 10, path);
            *leaked = r.output.contains(QString::fromLatin1(Canary));
            break;
        }
        case OpCount:
            break;
        }
        return false;
    } catch (const SandboxError &) {
        return true;
    }
}

const char *const PlantScript = R"(
set -e
printf '%s' "$CANARY" > ../outside.txt
mkdir -p "../${PWD##*/}-evil" && printf '%s' "$CANARY" > "../${PWD##*/}-evil/s"
mkdir -p ../linktarget
mkdir -p sub && printf 'inner\n' > sub/f
ln -s ../outside.txt up
ln -s "$PWD/../outside.txt" abs
ln -s .. dotdot
ln -s ../created.txt dangling
ln -s ../linktarget linkdir
ln -s sub/f rel
ln -s loop loop
ln -s /proc/self/root magic
mkfifo fifo
ln ../outside.txt hl
)";

void plant(SandboxBackend &b)
{
    const ExecuteResult r =
        b.execute(QStringLiteral("CANARY='%1'\n%2")
                      .arg(QString::fromLatin1(Canary), QLatin1String(PlantScript)),
                  30);
    if (r.exitCode != 0)
        qFatal("planting the hostile layout failed: %s", qPrintable(r.output + r.stderr_));
}

/// Plants through the backend, or from the host where its commands see the workspace
/// elsewhere (the layout's absolute link and `..` must be host paths).
void plant(const BackendFixture &fixture, SandboxBackend &b)
{
    if (!fixture.hostFolder) {
        plant(b);
        return;
    }
    LocalSandboxBackend host(fixture.hostFolder(b));
    host.create();
    plant(host);
}

/// The host folder of the workspace and its parent (the outside the cases watch).
QString hostWorkspace(const BackendFixture &fixture, SandboxBackend &b)
{
    if (fixture.hostView)
        return fixture.hostView(b);
    if (fixture.hostFolder)
        return fixture.hostFolder(b);
    return b.execute(QStringLiteral("pwd -P"), 10).output.trimmed();
}

} // namespace

class TestHostile : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false")); }
    // the fakes' server threads end while the QCoreApplication still exists
    void cleanupTestCase()
    {
        remoteFakes() = {};
        test::DockerEngine::cleanUp();
    }
    void pathTable();
    void renameExchangeRace();
    void renameExchangeRaceMore();
};

void TestHostile::pathTable()
{
    QStringList failures;
    QStringList skipped;
    for (const BackendFixture &fixture : selectedBackends()) {
        if (fixture.unavailable) {
            const QString why = fixture.unavailable();
            if (!why.isEmpty()) {
                qInfo("hostile: %s skipped: %s", qPrintable(fixture.name), qPrintable(why));
                skipped << fixture.name;
                continue;
            }
        }
        int tried = 0;
        int passed = 0;
        int knownBugs = 0;
        const qsizetype caseCount = cases().size();
        for (qsizetype i = 0; i < caseCount; ++i) {
            // a fresh layout per case: a write or remove may change it
            const std::shared_ptr<SandboxBackend> b = fixture.make();
            plant(fixture, *b);
            const SandboxPtr sandbox = Sandbox::create(QStringLiteral("hostile"), b, std::nullopt);
            sandbox->start();
            const auto stop = qScopeGuard([&] { sandbox->stop(false); });
            QTemporaryDir downloads;
            const QFileInfo ws(hostWorkspace(fixture, *b));
            const QString base = ws.path();
            const Case c = cases(ws.fileName()).at(i);
            QByteArray before = outsideDigest(base, ws.fileName());
            for (int op = 0; op < OpCount; ++op) {
                const QString bug = fixture.knownBugs.value(
                    c.id, fixture.knownBugs.value(c.id + u'|' + QLatin1String(OpNames[op])));
                if (!bug.isEmpty()) {
                    qWarning("hostile: %s [%s] %s: KNOWN BUG, not run: %s",
                             qPrintable(fixture.name), qPrintable(c.id), OpNames[op],
                             qPrintable(bug));
                    ++knownBugs;
                    continue;
                }
                ++tried;
                if (qEnvironmentVariableIsSet("ELSAI_HOSTILE_TRACE")) // which call hangs
                    qInfo("hostile: %s [%s] %s", qPrintable(fixture.name), qPrintable(c.id),
                          OpNames[op]);
                bool leaked = false;
                const bool refused =
                    attempt(*b, *sandbox, downloads.path(), Op(op), c.path, &leaked);
                QString problem;
                if (leaked && !(c.sharesInode && baseOp(Op(op)) == Read))
                    problem = QStringLiteral("returned outside content");
                else if (c.refused.contains(baseOp(Op(op))) && !refused)
                    problem = QStringLiteral("was not refused");
                else if (outsideDigest(base, ws.fileName()) != before)
                    problem = QStringLiteral("changed something outside the workspace");
                if (problem.isEmpty()) {
                    ++passed;
                } else {
                    failures << QStringLiteral("%1 [%2] %3 '%4': %5")
                                    .arg(fixture.name, c.id, QLatin1String(OpNames[op]),
                                         c.path.left(60), problem);
                    // the next operations are judged on their own changes
                    before = outsideDigest(base, ws.fileName());
                }
            }
            QVERIFY(!QFileInfo::exists(QStringLiteral("/tmp/elsai-hostile-created")));
        }
        qInfo("hostile: %s: %d cases x %d operations: %d tried, %d passed, %d not run (known bugs)",
              qPrintable(fixture.name), int(caseCount), int(OpCount), tried, passed, knownBugs);
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u'\n')));
    if (!skipped.isEmpty() && skipped.size() == selectedBackends().size())
        QSKIP(qPrintable(QStringLiteral("no backend could run here: ") + skipped.join(u' ')));
}

namespace {

// The race layout, planted by a command run in the workspace: sw, a folder inside; swl, a link
// to a folder outside holding the canary as f and a marker only an outside listing shows.
// Prints the workspace's path.
const QString RacePlant = QStringLiteral(
    "set -e; mkdir -p ../race-out sw; printf '%1' > ../race-out/f;"
    ": > ../race-out/outside-only; printf inside > sw/f; ln -s ../race-out swl; pwd");

/// The race itself: an attacker swaps sw and swl in `hostWs` (the workspace's host folder) with
/// RENAME_EXCHANGE while readFile / listDir / stat resolve "sw/f" and "sw" through `b`.
void raceThrough(const BackendFixture &fixture, SandboxBackend &b, const QString &hostWs)
{
    const int rounds = qEnvironmentVariableIntValue("ELSAI_HOSTILE_RACE_ROUNDS") > 0
                           ? qEnvironmentVariableIntValue("ELSAI_HOSTILE_RACE_ROUNDS")
                       : fixture.raceRounds > 0 ? fixture.raceRounds
                                                : 20000;
    elsai::test::RenameExchanger attacker(QFile::encodeName(hostWs + QStringLiteral("/sw")),
                                          QFile::encodeName(hostWs + QStringLiteral("/swl")));
    int escapes = 0, inside = 0, refused = 0, listEscapes = 0, statEscapes = 0;
    for (int round = 0; round < rounds; ++round) {
        try {
            if (b.readFile(QStringLiteral("sw/f")).contains(Canary))
                ++escapes;
            else
                ++inside;
        } catch (const SandboxError &) {
            ++refused;
        }
        // an outside listing has "outside-only"; the outside f is the canary's size
        try {
            for (const FileInfo &e : b.listDir(QStringLiteral("sw")))
                listEscapes += e.path.contains(QLatin1String("outside-only")) ? 1 : 0;
        } catch (const SandboxError &) {
        }
        try {
            statEscapes += b.stat(QStringLiteral("sw/f")).size == Canary.size() ? 1 : 0;
        } catch (const SandboxError &) {
        }
    }
    attacker.stop();
    qInfo("hostile: %s: RENAME_EXCHANGE race: %d rounds, %lld swaps, %d inside, %d refused, "
          "%d escapes (read), %d (list), %d (stat)",
          qPrintable(fixture.name), rounds, attacker.swaps(), inside, refused, escapes, listEscapes,
          statEscapes);
    QVERIFY(attacker.swaps() > 0);
    if (!fixture.raceKnownBug.isEmpty() && escapes + listEscapes + statEscapes > 0) {
        qWarning("hostile: %s: KNOWN BUG, %d escapes: %s", qPrintable(fixture.name),
                 escapes + listEscapes + statEscapes, qPrintable(fixture.raceKnownBug));
        return;
    }
    QCOMPARE(escapes, 0);
    QCOMPARE(listEscapes, 0);
    QCOMPARE(statEscapes, 0);
}

} // namespace

void TestHostile::renameExchangeRace()
{
    for (const BackendFixture &fixture : backends()) {
        const std::shared_ptr<SandboxBackend> b = fixture.make();
        // planted by the backend itself: its commands see the workspace at its host path
        const ExecuteResult r = b->execute(RacePlant.arg(QString::fromLatin1(Canary)), 10);
        QCOMPARE(r.exitCode, 0);
        raceThrough(fixture, *b, r.output.trimmed());
        if (QTest::currentTestFailed())
            return;
    }
}

/// renameExchangeRace for the backends of moreBackends(): the layout is planted and the
/// attacker runs on the host folder of the workspace (bwrap's commands see it at /workspace;
/// the fakes' sandboxes are host folders too).
void TestHostile::renameExchangeRaceMore()
{
    for (const BackendFixture &fixture : moreBackends()) {
        if (!wanted(fixture.name))
            continue;
        if (fixture.unavailable && !fixture.unavailable().isEmpty()) {
            qInfo("hostile: %s race skipped: %s", qPrintable(fixture.name),
                  qPrintable(fixture.unavailable()));
            continue;
        }
        const std::shared_ptr<SandboxBackend> b = fixture.make();
        const QString hostWs = hostWorkspace(fixture, *b);
        LocalSandboxBackend planter(hostWs);
        planter.create();
        const ExecuteResult r = planter.execute(RacePlant.arg(QString::fromLatin1(Canary)), 10);
        QCOMPARE(r.exitCode, 0);
        raceThrough(fixture, *b, hostWs);
        if (QTest::currentTestFailed())
            return;
    }
}

QTEST_GUILESS_MAIN(TestHostile)
#include "tst_hostile.moc"
