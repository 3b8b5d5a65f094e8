// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// BwrapSandboxBackend containment: what a command inside the sandbox can and cannot see,
// reach, write and leave behind. The generic backend behaviour (files, exit codes, timeouts,
// truncation, seeding, flush) is in tests/conformance/, run for this backend by
// tst_conformance_bwrap.

#include "bwrapsandboxbackend.h"
#include "errors.h"
#include "flushbase.h"
#include "offload.h"
#include "pidscgroup.h"
#include "sandboxspec.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QHostAddress>
#include <QRandomGenerator>
#include <QSet>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>
#include <future>
#include <memory>
#include <vector>

#include <unistd.h>

using namespace elsai;

namespace {

QString errorName(const std::function<void()> &f)
{
    try {
        f();
    } catch (const SandboxError &e) {
        return e.specName();
    }
    return QString();
}

/// A token no command line of another test or engineer contains.
QString uniqueToken()
{
    return QStringLiteral("%1%2").arg(::getpid()).arg(QRandomGenerator::global()->generate());
}

/// Host pids whose command line contains `needle`.
QList<int> hostProcessesWith(const QByteArray &needle)
{
    QList<int> out;
    const QStringList pids = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &p : pids) {
        bool ok = false;
        const int pid = p.toInt(&ok);
        if (!ok || pid == ::getpid())
            continue;
        QFile f(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (f.open(QIODevice::ReadOnly) && f.readAll().replace('\0', ' ').contains(needle))
            out.append(pid);
    }
    return out;
}

int hostProcessCount()
{
    int n = 0;
    for (const QString &p : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs))
        n += p.toInt() > 0 ? 1 : 0;
    return n;
}

} // namespace

class TestBwrapBackend : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_serial = 0;

    /// A created backend over a new empty workspace; skips the test when bwrap cannot run.
    std::shared_ptr<BwrapSandboxBackend> make(BwrapSandboxBackend::Options o = {},
                                              LocalSandboxBackend::Options base = {})
    {
        const QString root = m_dir.filePath(QStringLiteral("ws%1").arg(++m_serial));
        QDir().mkpath(root);
        auto b = std::make_shared<BwrapSandboxBackend>(root, base, o);
        b->create();
        return b;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        try {
            make();
        } catch (const SandboxError &e) {
            QSKIP(qPrintable(QStringLiteral("bubblewrap cannot run here: ") + e.message()));
        }
    }

    void registeredInSandboxSpec()
    {
        QVERIFY(SandboxSpec::availableBackends().contains(QStringLiteral("bwrap")));
        SandboxSpec spec;
        spec.backend = QStringLiteral("bwrap");
        spec.workspaceRoot = m_dir.filePath(QStringLiteral("spec"));
        spec.bwrap.network = true;
        const BackendPtr b = spec.createBackend();
        QCOMPARE(b->typeName(), QStringLiteral("BwrapSandboxBackend"));
        auto *bw = dynamic_cast<BwrapSandboxBackend *>(b.get());
        QVERIFY(bw);
        QVERIFY(bw->bwrapOptions().network);
        QVERIFY(bw->id().startsWith(QStringLiteral("bwrap:")));
    }

    void missingBwrapIsReported()
    {
        BwrapSandboxBackend::Options o;
        o.bwrapPath = QStringLiteral("/nonexistent/bwrap");
        BwrapSandboxBackend b(m_dir.filePath(QStringLiteral("nobwrap")), {}, o);
        QString message;
        try {
            b.create();
        } catch (const OSError &e) {
            message = e.message();
        }
        QVERIFY2(message.contains(QStringLiteral("bubblewrap")), qPrintable(message));
        QVERIFY(!b.isCreated());
        QVERIFY(errorName([&] { b.execute(QStringLiteral("true")); }).contains("OSError"));
    }

    void invalidOptionsAreRefused()
    {
        BwrapSandboxBackend::Options o;
        o.maxProcesses = 0;
        QCOMPARE(errorName([&] { BwrapSandboxBackend(m_dir.path(), {}, o); }),
                 QStringLiteral("ValueError"));
        o = {};
        o.readOnlyBinds = {QStringLiteral("relative/path")};
        QCOMPARE(errorName([&] { BwrapSandboxBackend(m_dir.path(), {}, o); }),
                 QStringLiteral("ValueError"));
        LocalSandboxBackend::Options base;
        base.env.insert(QStringLiteral("A=B"), QStringLiteral("x"));
        QCOMPARE(errorName([&] { BwrapSandboxBackend(m_dir.path(), base, {}); }),
                 QStringLiteral("ValueError"));
        auto b = make();
        ExecuteOptions eo;
        eo.env.insert(QString(), QStringLiteral("x"));
        QCOMPARE(errorName([&] { b->execute(QStringLiteral("true"), {}, {}, eo); }),
                 QStringLiteral("ValueError"));
    }

    // The engine writes offload files outside the sandbox: a folder the agent could swap for
    // a link (one inside the workspace) is refused, and a NUL never reaches bwrap's argv.
    void engineFoldersAndTextStayOutOfReach()
    {
        auto b = make();
        const QString inside = b->workspaceRoot() + QStringLiteral("/offload");
        QCOMPARE(errorName([&] { FileStorage storage(inside); }), QStringLiteral("ValueError"));
        const QString nul = QStringLiteral("true") + QChar(u'\0') + QStringLiteral("; touch x");
        QCOMPARE(errorName([&] { b->execute(nul); }), QStringLiteral("ValueError"));
        ExecuteOptions eo;
        eo.env.insert(QStringLiteral("V"), nul);
        QCOMPARE(errorName([&] { b->execute(QStringLiteral("touch x"), {}, {}, eo); }),
                 QStringLiteral("ValueError"));
        QVERIFY(!QFileInfo::exists(b->workspaceRoot() + QStringLiteral("/x")));
    }

    void argumentsNameEveryNamespace()
    {
        auto b = make();
        const QStringList a = b->bwrapArguments(QStringLiteral("true"));
        for (const char *flag :
             {"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
              "--unshare-cgroup-try", "--unshare-net", "--die-with-parent", "--new-session",
              "--clearenv", "--disable-userns"})
            QVERIFY2(a.contains(QLatin1String(flag)), flag);
        for (const QString &forbidden :
             {QStringLiteral("/home"), QStringLiteral("/root"), QStringLiteral("/run")})
            QVERIFY2(!a.contains(forbidden), qPrintable(forbidden));
        BwrapSandboxBackend::Options net;
        net.network = true;
        QVERIFY(!make(net)
                     ->bwrapArguments(QStringLiteral("true"))
                     .contains(QStringLiteral("--unshare-net")));
    }

    void hostViewIsLimited()
    {
        auto b = make();
        const ExecuteResult r = b->execute(QStringLiteral("ls -A /"));
        QCOMPARE(r.exitCode, 0);
        const QSet<QString> allowed = {"bin",    "dev",  "etc",  "lib", "lib32", "lib64",
                                       "libx32", "proc", "sbin", "tmp", "usr",   "workspace"};
        for (const QString &entry : r.output.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
            QVERIFY2(allowed.contains(entry),
                     qPrintable(QStringLiteral("/%1 is visible").arg(entry)));
        const ExecuteResult s = b->execute(QStringLiteral(
            "for p in /home /root /run /etc/shadow /sys /var; do test -e $p && echo $p; done; "
            "true"));
        QCOMPARE(s.output, QString());
    }

    void homeCanaryIsUnreadable()
    {
        const QString token = uniqueToken();
        const QString canary = QDir::home().filePath(QStringLiteral(".elsai-canary-") + token);
        test::writeHostFile(canary, "canary-secret-" + token.toUtf8());
        auto cleanup = qScopeGuard([&] { QFile::remove(canary); });
        auto b = make();
        const ExecuteResult r = b->execute(
            QStringLiteral("cat '%1'; cat /proc/1/root'%1'; grep -rs canary-secret /etc /tmp "
                           "/workspace /usr/local 2>/dev/null; ls -a ~ /home 2>&1")
                .arg(canary));
        QVERIFY(!r.output.contains(QStringLiteral("canary-secret")));
        QVERIFY(!r.stderr_.contains(QStringLiteral("canary-secret")));
        QVERIFY(!r.output.contains(QStringLiteral(".elsai-canary")));
        QVERIFY(r.exitCode != 0);
    }

    // The flush base lives beside the workspace folder: an agent can neither read nor forge it
    // (a forged base could make a flush overwrite the user's host edits).
    void flushBaseIsOutOfReach()
    {
        QTemporaryDir project;
        test::writeHostFile(project.filePath(QStringLiteral("src/a.py")), "seeded\n");
        auto b = make();
        QVERIFY(b->seedWorkspace(project.path(), {}).success());
        const QString base = flushBasePath(b->workspaceRoot());
        QVERIFY(QFileInfo::exists(base));
        const QByteArray before = test::readHostFile(base);
        const QString name = QFileInfo(base).fileName();
        const ExecuteResult r = b->execute(
            QStringLiteral("cat ../'%1' '%2'; echo forged > ../'%1'; echo forged > '%2'; "
                           "find / -name '%1' 2>/dev/null")
                .arg(name, base));
        QVERIFY(!r.output.contains(QStringLiteral("elsai-flush-base")));
        QCOMPARE(test::readHostFile(base), before);
    }

    void nothingIsWrittenOutsideTheWorkspace_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<bool>("writableInside"); // private: writes land in a throwaway tmpfs
        QTest::newRow("/") << QStringLiteral("/") << false;
        QTest::newRow("/usr") << QStringLiteral("/usr") << false;
        QTest::newRow("/usr/local/bin") << QStringLiteral("/usr/local/bin") << false;
        QTest::newRow("/etc") << QStringLiteral("/etc") << false;
        QTest::newRow("/tmp") << QStringLiteral("/tmp") << true;
        QTest::newRow("/dev/shm") << QStringLiteral("/dev/shm") << true;
        QTest::newRow("home") << QDir::homePath() << false;
    }
    void nothingIsWrittenOutsideTheWorkspace()
    {
        QFETCH(QString, folder);
        QFETCH(bool, writableInside);
        const QString name = QStringLiteral("elsai-escape-") + uniqueToken();
        const QString target = QDir(folder).filePath(name);
        auto cleanup = qScopeGuard([&] { QFile::remove(target); });
        auto b = make();
        const ExecuteResult r =
            b->execute(QStringLiteral("mkdir -p '%1' 2>/dev/null; echo x > '%2' && cat '%2'")
                           .arg(folder, target));
        QCOMPARE(r.exitCode == 0, writableInside);
        QVERIFY2(!QFileInfo::exists(target), qPrintable(target));
        // The workspace itself is writable and what is written there is on the host.
        QCOMPARE(b->execute(QStringLiteral("echo ok > ws.txt")).exitCode, 0);
        QCOMPARE(b->readFile(QStringLiteral("ws.txt")), QByteArray("ok\n"));
    }

    void hostLoopbackIsUnreachable()
    {
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost));
        const QString connect = QStringLiteral("exec 3<>/dev/tcp/127.0.0.1/%1 && echo connected")
                                    .arg(server.serverPort());
        auto b = make();
        const ExecuteResult r = b->execute(QStringLiteral("bash -c '%1'").arg(connect), 20);
        QVERIFY(r.exitCode != 0);
        QVERIFY(!r.output.contains(QStringLiteral("connected")));
        QVERIFY(!server.waitForNewConnection(200));
        // Control: with the network shared, the same command does reach the server, so the
        // refusal above is the sandbox's doing.
        BwrapSandboxBackend::Options net;
        net.network = true;
        const ExecuteResult shared =
            make(net)->execute(QStringLiteral("bash -c '%1'").arg(connect), 20);
        QCOMPARE(shared.output, QStringLiteral("connected\n"));
        QVERIFY(server.waitForNewConnection(10000));
    }

    void hostEnvironmentIsInvisible()
    {
        const QByteArray secret = "elsai-secret-" + uniqueToken().toUtf8();
        qputenv("ELSAI_TEST_SECRET", secret);
        auto unset = qScopeGuard([] { qunsetenv("ELSAI_TEST_SECRET"); });
        LocalSandboxBackend::Options base;
        base.inheritEnv = true; // ignored by this backend: the host environment never goes in
        base.env.insert(QStringLiteral("CONFIGURED"), QStringLiteral("yes"));
        auto b = make({}, base);
        ExecuteOptions eo;
        eo.env.insert(QStringLiteral("PER_CALL"), QStringLiteral("also"));
        const ExecuteResult r = b->execute(
            QStringLiteral("env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done"), {},
            {}, eo);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(!r.output.contains(QString::fromUtf8(secret)));
        QVERIFY(!r.output.contains(QStringLiteral("ELSAI_TEST_SECRET")));
        QVERIFY(r.output.contains(QStringLiteral("CONFIGURED=yes\n")));
        QVERIFY(r.output.contains(QStringLiteral("PER_CALL=also\n")));
        QVERIFY(r.output.contains(QStringLiteral("HOME=/tmp\n")));
        // Exactly the allowlist + the configured variables, as sandboxEnvironment() says.
        const ExecuteResult names = b->execute(QStringLiteral("env -0 | tr '\\0\\n' '\\n ' | "
                                                              "cut -d= -f1 | sort"),
                                               {}, {}, eo);
        QStringList expected = b->sandboxEnvironment(eo.env).keys();
        expected << QStringLiteral("PWD"); // the shell's own
        expected.sort();
        QStringList got = names.output.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        got.removeAll(QStringLiteral("OLDPWD"));
        QCOMPARE(got, expected);
    }

    void noProcessOutlivesTheCall()
    {
        const QString tag = QStringLiteral("31%1.5").arg(QRandomGenerator::global()->bounded(1000));
        auto b = make();
        const ExecuteResult r = b->execute(
            QStringLiteral("sleep %1 & setsid sleep %1 & nohup sleep %1 >/dev/null 2>&1 & "
                           "(sleep %1 &) ; echo started")
                .arg(tag),
            60);
        QCOMPARE(r.output, QStringLiteral("started\n"));
        QCOMPARE(r.exitCode, 0);
        QVERIFY(!r.timedOut);
        QTRY_VERIFY_WITH_TIMEOUT(hostProcessesWith("sleep " + tag.toUtf8()).isEmpty(), 10000);
    }

    void timeoutKillsTheWholeTree()
    {
        const QString tag = QStringLiteral("32%1.5").arg(QRandomGenerator::global()->bounded(1000));
        auto b = make();
        const ExecuteResult r = b->execute(
            QStringLiteral("setsid sleep %1 & sleep %1 & echo waiting; wait").arg(tag), 1);
        QCOMPARE(r.exitCode, 124);
        QVERIFY(r.timedOut);
        QCOMPARE(r.output, QStringLiteral("waiting\n"));
        QTRY_VERIFY_WITH_TIMEOUT(hostProcessesWith("sleep " + tag.toUtf8()).isEmpty(), 10000);
    }

    void processLimitBinds()
    {
        if (PidsCgroup::parentFolder().isEmpty() && ::getuid() == 0)
            QSKIP("no pids cgroup can be made here and root is exempt from RLIMIT_NPROC");
        BwrapSandboxBackend::Options o;
        o.maxProcesses = 24;
        auto b = make(o);
        // Fork until the kernel refuses; every child waits, so all count at once.
        const ExecuteResult r = b->execute(QStringLiteral(R"(python3 -c '
import os, time
n = 0
for i in range(100):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
print(n)')"),
                                           60);
        bool ok = false;
        const int seen = r.output.trimmed().toInt(&ok);
        QVERIFY2(ok, qPrintable(r.output + r.stderr_));
        QVERIFY2(seen < o.maxProcesses, qPrintable(QString::number(seen)));
        QVERIFY(seen > 2);
    }

    void forkBombIsContained()
    {
        if (PidsCgroup::parentFolder().isEmpty() && ::getuid() == 0)
            QSKIP("no pids cgroup can be made here and root is exempt from RLIMIT_NPROC: a fork "
                  "bomb would not be bounded");
        const int before = hostProcessCount();
        BwrapSandboxBackend::Options o;
        o.maxProcesses = 64;
        auto b = make(o);
        const ExecuteResult r =
            b->execute(QStringLiteral("b(){ b | b & }; b; sleep 2; echo survived"), 5);
        // Bounded: the call comes back (at the latest by the timeout) ...
        QVERIFY(r.exitCode == 0 || r.exitCode == 124);
        // ... nothing of it is left on the host, and the host still runs commands.
        QTRY_VERIFY_WITH_TIMEOUT(hostProcessCount() <= before + 16, 20000);
        const ExecuteResult after = b->execute(QStringLiteral("echo fine"));
        QCOMPARE(after.output, QStringLiteral("fine\n"));
    }

    void readOnlyExecutionBindsTheWorkspaceReadOnly()
    {
        auto b = make();
        b->writeFile(QStringLiteral("keep.txt"), "original");
        ExecuteOptions ro;
        ro.readOnlyWorkspace = true;
        const ExecuteResult r = b->execute(
            QStringLiteral("cat keep.txt; echo changed > keep.txt; touch new.txt; rm keep.txt"), {},
            {}, ro);
        QVERIFY(r.exitCode != 0);
        QCOMPARE(r.output, QStringLiteral("original"));
        QCOMPARE(b->readFile(QStringLiteral("keep.txt")), QByteArray("original"));
        QCOMPARE(errorName([&] { b->stat(QStringLiteral("new.txt")); }),
                 QStringLiteral("FileNotFoundError"));
        // /tmp stays usable, and the next read-write call can write again.
        QCOMPARE(b->execute(QStringLiteral("echo t > /tmp/t && cat /tmp/t"), {}, {}, ro).output,
                 QStringLiteral("t\n"));
        QCOMPARE(b->execute(QStringLiteral("echo changed > keep.txt")).exitCode, 0);
        QCOMPARE(b->readFile(QStringLiteral("keep.txt")), QByteArray("changed\n"));
    }

    void localBackendRefusesReadOnlyExecution()
    {
        LocalSandboxBackend local(m_dir.filePath(QStringLiteral("local")));
        local.create();
        ExecuteOptions ro;
        ro.readOnlyWorkspace = true;
        QCOMPARE(errorName([&] { local.execute(QStringLiteral("true"), {}, {}, ro); }),
                 QStringLiteral("PermissionError"));
    }

    void cwdIsMappedBeneathTheWorkspace()
    {
        auto b = make();
        b->makeDirs(QStringLiteral("a/b"));
        QCOMPARE(b->execute(QStringLiteral("pwd"), {}, QStringLiteral("a/b")).output,
                 QStringLiteral("/workspace/a/b\n"));
        QCOMPARE(b->execute(QStringLiteral("pwd")).output, QStringLiteral("/workspace\n"));
        QCOMPARE(b->execute(QStringLiteral("ln -s a/b inner && ln -s /etc outer")).exitCode, 0);
        QCOMPARE(b->execute(QStringLiteral("pwd"), {}, QStringLiteral("inner")).output,
                 QStringLiteral("/workspace/a/b\n"));
        QCOMPARE(errorName([&] { b->execute(QStringLiteral("pwd"), {}, QStringLiteral("outer")); }),
                 QStringLiteral("PermissionError"));
        QCOMPARE(errorName([&] { b->execute(QStringLiteral("pwd"), {}, QStringLiteral("..")); }),
                 QStringLiteral("PermissionError"));
    }

    void privilegesAreDropped()
    {
        auto b = make();
        const ExecuteResult caps = b->execute(QStringLiteral("grep CapEff /proc/self/status"));
        QCOMPARE(caps.output.simplified(), QStringLiteral("CapEff: 0000000000000000"));
        // No nested user namespace: the usual first step of a kernel exploit.
        QVERIFY(b->execute(QStringLiteral("unshare -U true")).exitCode != 0);
        // The host's processes are not visible (own pid namespace).
        const ExecuteResult ps = b->execute(QStringLiteral("ls -d /proc/[0-9]* | wc -l"));
        QVERIFY(ps.output.trimmed().toInt() < 6);
        QCOMPARE(b->execute(QStringLiteral("hostname")).output, QStringLiteral("elsai-sandbox\n"));
    }

    void concurrentCallsAreIndependent()
    {
        auto b = make();
        std::vector<std::future<ExecuteResult>> calls;
        for (int i = 0; i < 4; ++i) {
            calls.push_back(std::async(std::launch::async, [b, i] {
                return b->execute(QStringLiteral("echo %1 > /tmp/me; sleep 0.3; cat /tmp/me; "
                                                 "echo %1 > out%1.txt")
                                      .arg(i));
            }));
        }
        for (int i = 0; i < 4; ++i) {
            const ExecuteResult r = calls[size_t(i)].get();
            QCOMPARE(r.exitCode, 0);
            QCOMPARE(r.output, QStringLiteral("%1\n").arg(i)); // each call has its own /tmp
            QCOMPARE(b->readFile(QStringLiteral("out%1.txt").arg(i)), QByteArray::number(i) + '\n');
        }
    }

    void fileSizeLimitBinds()
    {
        BwrapSandboxBackend::Options o;
        o.maxFileSizeBytes = 1 << 20;
        auto b = make(o);
        const ExecuteResult r = b->execute(QStringLiteral("head -c 3000000 /dev/zero > big.bin"));
        QVERIFY(r.exitCode != 0);
        QVERIFY(b->stat(QStringLiteral("big.bin")).size.value_or(0) <= o.maxFileSizeBytes);
    }

    void memoryLimitBinds()
    {
        BwrapSandboxBackend::Options o;
        o.maxMemoryBytes = qint64(64) << 20;
        auto b = make(o);
        // python3 is in the package list of the test command; allocate 256 MiB.
        const ExecuteResult r = b->execute(QStringLiteral("python3 -c 'b = bytearray(1 << 28)'"));
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.stderr_.contains(QStringLiteral("MemoryError")), qPrintable(r.stderr_));
    }
};

QTEST_GUILESS_MAIN(TestBwrapBackend)
#include "tst_bwrapbackend.moc"
