// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Stops the real elsai-workbench executable while a command runs — SIGTERM, SIGINT, SIGHUP and
// kill -9, headless (--exec and the script runner) and in the window — and checks that it ends
// with 128 + the signal and that nothing of the command's tree survives, including
// descendants that called setsid, cleared their environment or double-forked (the engine's
// cgroup), and the ssh backend's ControlMaster. Also checks that a command run with
// --no-inherit-env cannot read the engine's secrets from /proc (its parent, its parents'
// chain, any process).

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "cgroup.h"
#include "sshfixture.h"
#include "testutil.h"

#include <cerrno>
#include <csignal>
#include <memory>

#include <grp.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef ELSAI_WORKBENCH_BIN
#error "ELSAI_WORKBENCH_BIN must name the elsai-workbench executable"
#endif

namespace {

constexpr int StartBoundMs = 30000; // every wait is a "did not hang" bound, not a timing
constexpr int ExitBoundMs = 30000;
constexpr int GoneBoundMs = 15000;

using elsai::test::processesWith;

/// Gone: no such process, or a zombie nobody reaps yet (it runs nothing).
bool gone(pid_t pid)
{
    if (::kill(pid, 0) != 0)
        return errno == ESRCH;
    const auto st = elsai::test::procStat(pid);
    return !st || st->state == 'Z' || st->state == 'X';
}

QList<pid_t> readPids(const QString &path)
{
    QList<pid_t> pids;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return pids;
    for (const QByteArray &line : f.readAll().split('\n')) {
        bool ok = false;
        const int pid = line.trimmed().toInt(&ok);
        if (ok && pid > 1)
            pids.append(pid_t(pid));
    }
    return pids;
}

/// The command's tree: the shell, a group member, a group member with an empty environment,
/// and a descendant in a session of its own. Each writes its pid to `pidFile`.
QString treeCommand(const QString &pidFile)
{
    const QString p = QLatin1Char('\'') + pidFile + QLatin1Char('\'');
    return QStringLiteral("echo $$ >> %1; "
                          "sleep 300 & echo $! >> %1; "
                          "env -i /bin/sh -c 'echo $$ >> \"$0\"; exec sleep 300' %1 & "
                          "setsid /bin/sh -c 'echo $$ >> \"$0\"; exec sleep 300' %1 & "
                          "wait")
        .arg(p);
}

constexpr int TreeSize = 4;

/// Live processes whose command line is `sleep <tag>` (zombies have none).
int sleepers(const QByteArray &tag)
{
    return int(processesWith({QByteArray("sleep\0", 6) + tag + '\0'}).size());
}

/// The engine's cgroup folder while `pid` runs (processguard.h), or empty when it has none:
/// its /proc/<pid>/cgroup line ends in ".../elsai-engine-<pid>/engine".
QString engineCgroupOf(pid_t pid)
{
    const QByteArray self = elsai::cgroup::readFile(QStringLiteral("/proc/%1/cgroup").arg(pid));
    const QByteArray leaf = "/elsai-engine-" + QByteArray::number(pid) + "/engine";
    for (const QByteArray &line : self.split('\n')) {
        if (line.startsWith("0::") && line.endsWith(leaf)) {
            const QString own = elsai::cgroup::ownFolders().v2; // the engine's parent is ours
            return own + QStringLiteral("/elsai-engine-%1").arg(pid);
        }
    }
    return {};
}

QProcessEnvironment headlessEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "QT_LOGGING_RULES"})
        env.remove(QLatin1String(name));
    return env;
}

} // namespace

class TestShutdown : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void signalStopsEverything_data();
    void signalStopsEverything();
    void killNineStopsEverything_data();
    void killNineStopsEverything();
    void idleSignalExits_data();
    void idleSignalExits();
    void shutdownIsAudited();
    void callsAfterASignalAreRefused_data();
    void callsAfterASignalAreRefused();
    void detachedDescendantsDie_data();
    void detachedDescendantsDie();
    void sshMasterDies_data();
    void sshMasterDies();
    void bwrapTreeDies_data();
    void bwrapTreeDies();
    void secretsNotReadable_data();
    void secretsNotReadable();

private:
    enum class Front { Exec, Script, Window, McpStdio };

    /// Starts the workbench running treeCommand() and waits until every process of the tree
    /// has written its pid. Returns the pids (empty on failure, with a QVERIFY message).
    /// `command` and `size`: another command, and how many pids it writes.
    QList<pid_t> startTree(QProcess &p, Front front, const QString &command = {},
                           int size = TreeSize);
    void expectAllGone(const QList<pid_t> &pids);

    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_pidFile;
};

void TestShutdown::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    QVERIFY(QDir().mkpath(m_tmp->filePath(QStringLiteral("ws"))));
    m_pidFile = m_tmp->filePath(QStringLiteral("pids"));
}

void TestShutdown::cleanup()
{
    // Whatever a failed test left behind must not outlive it.
    for (pid_t pid : readPids(m_pidFile))
        ::kill(pid, SIGKILL);
    m_tmp.reset();
}

QList<pid_t> TestShutdown::startTree(QProcess &p, Front front, const QString &otherCommand,
                                     int size)
{
    QProcessEnvironment env = headlessEnvironment();
    QStringList args{QStringLiteral("--workspace-root"), m_tmp->filePath(QStringLiteral("ws"))};
    const QString command = otherCommand.isEmpty() ? treeCommand(m_pidFile) : otherCommand;
    switch (front) {
    case Front::Exec:
        args << QStringLiteral("--headless") << QStringLiteral("--exec") << command;
        break;
    case Front::Script:
        args << QStringLiteral("--headless") << QStringLiteral("--script") << QStringLiteral("-");
        break;
    case Front::Window:
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        args << QStringLiteral("--exec") << command;
        break;
    case Front::McpStdio:
        args << QStringLiteral("--headless") << QStringLiteral("--mcp-stdio")
             << QStringLiteral("--mcp-agent") << QStringLiteral("a=read_write");
        break;
    }
    p.setProcessEnvironment(env);
    p.setWorkingDirectory(m_tmp->path());
    p.start(QStringLiteral(ELSAI_WORKBENCH_BIN), args);
    if (!p.waitForStarted(StartBoundMs))
        return {};
    if (front == Front::Script) {
        const QByteArray json =
            QJsonDocument(QJsonObject{{QStringLiteral("op"), QStringLiteral("call")},
                                      {QStringLiteral("agent"), QStringLiteral("a")},
                                      {QStringLiteral("tool"), QStringLiteral("execute")},
                                      {QStringLiteral("args"),
                                       QJsonObject{{QStringLiteral("command"), command}}}})
                .toJson(QJsonDocument::Compact);
        p.write("{\"op\":\"start\"}\n{\"op\":\"attach\",\"agent\":\"a\"}\n" + json + '\n');
        // stdin stays open: the runner would wait for the next line after the command.
    }
    if (front == Front::McpStdio) {
        const auto rpc = [](const QJsonObject &o) {
            return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
        };
        const QJsonObject client{{QStringLiteral("name"), QStringLiteral("t")},
                                 {QStringLiteral("version"), QStringLiteral("1")}};
        const QJsonObject params{{QStringLiteral("protocolVersion"), QStringLiteral("2025-03-26")},
                                 {QStringLiteral("capabilities"), QJsonObject()},
                                 {QStringLiteral("clientInfo"), client}};
        p.write(rpc({{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                     {QStringLiteral("id"), 1},
                     {QStringLiteral("method"), QStringLiteral("initialize")},
                     {QStringLiteral("params"), params}}));
        p.write(rpc({{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                     {QStringLiteral("method"), QStringLiteral("notifications/initialized")}}));
        p.write(rpc({{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                     {QStringLiteral("id"), 2},
                     {QStringLiteral("method"), QStringLiteral("tools/call")},
                     {QStringLiteral("params"),
                      QJsonObject{{QStringLiteral("name"), QStringLiteral("execute")},
                                  {QStringLiteral("arguments"),
                                   QJsonObject{{QStringLiteral("command"), command}}}}}}));
    }
    QElapsedTimer t;
    t.start();
    QList<pid_t> pids;
    while (t.elapsed() < StartBoundMs && p.state() == QProcess::Running) {
        pids = readPids(m_pidFile);
        if (pids.size() >= size)
            return pids;
        QTest::qWait(20);
    }
    qWarning() << "stderr:" << p.readAllStandardError() << "stdout:" << p.readAllStandardOutput();
    return {};
}

void TestShutdown::expectAllGone(const QList<pid_t> &pids)
{
    QElapsedTimer t;
    t.start();
    QList<pid_t> alive = pids;
    while (!alive.isEmpty() && t.elapsed() < GoneBoundMs) {
        alive.removeIf(gone);
        if (!alive.isEmpty())
            QTest::qWait(20);
    }
    QString left;
    for (pid_t pid : alive)
        left += QString::number(pid) + QLatin1Char(' ');
    QVERIFY2(alive.isEmpty(), qPrintable(QStringLiteral("still running: ") + left));
}

void TestShutdown::signalStopsEverything_data()
{
    QTest::addColumn<int>("signo");
    QTest::addColumn<int>("front");
    const struct
    {
        const char *name;
        int signo;
    } sigs[] = {{"SIGTERM", SIGTERM}, {"SIGINT", SIGINT}, {"SIGHUP", SIGHUP}};
    for (const auto &s : sigs) {
        QTest::addRow("%s exec", s.name) << s.signo << int(Front::Exec);
        QTest::addRow("%s script", s.name) << s.signo << int(Front::Script);
    }
    QTest::addRow("SIGTERM window") << int(SIGTERM) << int(Front::Window);
    QTest::addRow("SIGTERM mcp-stdio") << int(SIGTERM) << int(Front::McpStdio);
    QTest::addRow("SIGINT mcp-stdio") << int(SIGINT) << int(Front::McpStdio);
}

void TestShutdown::signalStopsEverything()
{
    QFETCH(int, signo);
    QFETCH(int, front);
    QProcess p;
    const QList<pid_t> pids = startTree(p, Front(front));
    QVERIFY2(pids.size() == TreeSize, "the command's tree did not start");
    ::kill(pid_t(p.processId()), signo);
    QVERIFY2(p.waitForFinished(ExitBoundMs), "the workbench did not end after the signal");
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QVERIFY2(
        p.exitCode() == 128 + signo,
        qPrintable(
            QStringLiteral("exit %1, stderr: %2").arg(p.exitCode()).arg(QString::fromUtf8(err))));
    expectAllGone(pids);
}

void TestShutdown::killNineStopsEverything_data()
{
    QTest::addColumn<int>("front");
    QTest::addRow("exec") << int(Front::Exec);
    QTest::addRow("script") << int(Front::Script);
    QTest::addRow("mcp-stdio") << int(Front::McpStdio);
}

void TestShutdown::killNineStopsEverything()
{
    QFETCH(int, front);
    QProcess p;
    const QList<pid_t> pids = startTree(p, Front(front));
    QVERIFY2(pids.size() == TreeSize, "the command's tree did not start");
    ::kill(pid_t(p.processId()), SIGKILL);
    QVERIFY(p.waitForFinished(ExitBoundMs));
    QCOMPARE(p.exitStatus(), QProcess::CrashExit);
    expectAllGone(pids);
}

// No command running: the signal still ends the program with its status at once.
void TestShutdown::idleSignalExits_data()
{
    QTest::addColumn<bool>("window");
    QTest::addRow("script") << false;
    QTest::addRow("window") << true;
}

void TestShutdown::idleSignalExits()
{
    QFETCH(bool, window);
    QProcess p;
    QProcessEnvironment env = headlessEnvironment();
    QStringList args{QStringLiteral("--workspace-root"), m_tmp->filePath(QStringLiteral("ws"))};
    if (window)
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    else
        args << QStringLiteral("--headless") << QStringLiteral("--script") << QStringLiteral("-");
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(ELSAI_WORKBENCH_BIN), args);
    QVERIFY(p.waitForStarted(StartBoundMs));
    if (!window) {
        p.write("{\"op\":\"start\"}\n");
        QVERIFY(p.waitForReadyRead(StartBoundMs)); // its result: the runner waits for more
    } else {
        QTest::qWait(1000); // no readiness signal from the window; the signal may come early
    }
    ::kill(pid_t(p.processId()), SIGTERM);
    QVERIFY(p.waitForFinished(ExitBoundMs));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 128 + SIGTERM);
}

void TestShutdown::shutdownIsAudited()
{
    const QString audit = m_tmp->filePath(QStringLiteral("audit.jsonl"));
    QProcess p;
    p.setProcessEnvironment(headlessEnvironment());
    p.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
            {QStringLiteral("--headless"), QStringLiteral("--workspace-root"),
             m_tmp->filePath(QStringLiteral("ws")), QStringLiteral("--audit-log"), audit,
             QStringLiteral("--exec"), treeCommand(m_pidFile)});
    QVERIFY(p.waitForStarted(StartBoundMs));
    QElapsedTimer t;
    t.start();
    while (readPids(m_pidFile).size() < TreeSize && t.elapsed() < StartBoundMs)
        QTest::qWait(20);
    QCOMPARE(readPids(m_pidFile).size(), TreeSize);
    ::kill(pid_t(p.processId()), SIGHUP);
    QVERIFY(p.waitForFinished(ExitBoundMs));
    QCOMPARE(p.exitCode(), 128 + SIGHUP);
    QFile f(audit);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonObject shutdown;
    QJsonObject execute;
    for (const QByteArray &line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value(QStringLiteral("event")) == QLatin1String("engine.shutdown"))
            shutdown = o;
        else if (o.value(QStringLiteral("event")).toString().endsWith(QLatin1String("execute")))
            execute = o;
    }
    QVERIFY2(!shutdown.isEmpty(), "no engine.shutdown record");
    const QJsonObject fields = shutdown.value(QStringLiteral("fields")).toObject();
    const QJsonObject where = fields.isEmpty() ? shutdown : fields;
    QCOMPARE(where.value(QStringLiteral("signal")).toString(), QStringLiteral("SIGHUP"));
    QCOMPARE(where.value(QStringLiteral("commands_stopped")).toInt(), 1);
    // The stopped command's own record came first: stopping it was waited for.
    QVERIFY2(!execute.isEmpty(), "no record of the stopped command");
}

// "Stop accepting calls" (issue 10 §6): a call that arrives while a signal stops the engine
// is not run, whatever the tool, and its answer says why. The first command ignores SIGTERM,
// so the engine is still stopping it (its grace, then SIGKILL) when the second call comes.
void TestShutdown::callsAfterASignalAreRefused_data()
{
    QTest::addColumn<int>("front");
    QTest::addColumn<QString>("tool");
    QTest::addRow("script, execute") << int(Front::Script) << QStringLiteral("execute");
    QTest::addRow("script, write_file") << int(Front::Script) << QStringLiteral("write_file");
    QTest::addRow("mcp-stdio, execute") << int(Front::McpStdio) << QStringLiteral("execute");
    QTest::addRow("mcp-stdio, write_file") << int(Front::McpStdio) << QStringLiteral("write_file");
}

void TestShutdown::callsAfterASignalAreRefused()
{
    QFETCH(int, front);
    QFETCH(QString, tool);
    const QString marker = m_tmp->filePath(QStringLiteral("ws/marker"));
    const QString stubborn =
        QStringLiteral("trap '' TERM; echo $$ >> '%1'; sleep 300").arg(m_pidFile);
    QProcess p;
    const QList<pid_t> pids = startTree(p, Front(front), stubborn, 1);
    QVERIFY2(pids.size() == 1, "the command did not start");
    ::kill(pid_t(p.processId()), SIGTERM);
    QByteArray err;
    QElapsedTimer t;
    t.start();
    while (!err.contains("stopping the running commands") && t.elapsed() < ExitBoundMs &&
           p.state() == QProcess::Running) {
        p.waitForReadyRead(100);
        err += p.readAllStandardError();
    }
    QVERIFY2(err.contains("stopping the running commands"), err.constData());
    const QJsonObject args =
        tool == QLatin1String("execute")
            ? QJsonObject{{QStringLiteral("command"), QStringLiteral("touch marker")}}
            : QJsonObject{{QStringLiteral("path"), QStringLiteral("marker")},
                          {QStringLiteral("content"), QStringLiteral("x")}};
    const QJsonObject call =
        Front(front) == Front::Script
            ? QJsonObject{{QStringLiteral("op"), QStringLiteral("call")},
                          {QStringLiteral("agent"), QStringLiteral("a")},
                          {QStringLiteral("tool"), tool},
                          {QStringLiteral("args"), args}}
            : QJsonObject{
                  {QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                  {QStringLiteral("id"), 3},
                  {QStringLiteral("method"), QStringLiteral("tools/call")},
                  {QStringLiteral("params"), QJsonObject{{QStringLiteral("name"), tool},
                                                         {QStringLiteral("arguments"), args}}}};
    p.write(QJsonDocument(call).toJson(QJsonDocument::Compact) + '\n');
    QVERIFY2(p.waitForFinished(ExitBoundMs), "the workbench did not end after the signal");
    QCOMPARE(p.exitCode(), 128 + SIGTERM);
    QVERIFY2(!QFileInfo::exists(marker), "a call made after the signal was run");
    if (Front(front) == Front::McpStdio) {
        // The MCP server reads on while it stops: the call is answered, as a refusal.
        QJsonObject answer;
        for (const QByteArray &line : p.readAllStandardOutput().split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o.value(QStringLiteral("id")).toInt() == 3)
                answer = o;
        }
        QVERIFY2(!answer.isEmpty(), "the call after the signal was not answered");
        const QByteArray text = QJsonDocument(answer).toJson(QJsonDocument::Compact);
        QVERIFY2(text.contains("shutting down"), text.constData());
    }
    expectAllGone(pids);
}

// Descendants that leave the command's process group and session, and maybe its environment
// too (the marker with it), or are orphaned by a double fork: none survives a signal or a
// kill -9 of the engine. Those without the marker need the engine's cgroup; where the engine
// has none (no writable cgroup v2) those rows are skipped with the reason.
void TestShutdown::detachedDescendantsDie_data()
{
    QTest::addColumn<int>("signo");
    QTest::addColumn<QString>("launch"); // %1: the descendant's script (writes its pid, sleeps)
    QTest::addColumn<bool>("needsCgroup");
    const struct
    {
        const char *name;
        const char *launch;
        bool needsCgroup;
    } variants[] = {
        {"setsid", "setsid /bin/sh '%1' &", false},
        {"setsid env -i", "setsid env -i /bin/sh '%1' &", true},
        {"setsid + unset marker",
         "setsid /bin/sh -c 'unset ELSAI_EXEC_TOKEN; exec /bin/sh \"$0\"' '%1' &", true},
        {"setsid + double fork", "setsid /bin/sh -c '/bin/sh \"$0\" & exit 0' '%1' &", false},
        {"setsid env -i + double fork", "setsid env -i /bin/sh -c '/bin/sh \"$0\" & exit 0' '%1' &",
         true},
        {"nohup", "nohup /bin/sh '%1' > /dev/null 2>&1 &", false},
    };
    for (const auto &v : variants) {
        for (int signo : {SIGTERM, SIGKILL}) {
            QTest::addRow("%s, %s", v.name, signo == SIGTERM ? "SIGTERM" : "kill -9")
                << signo << QString::fromLatin1(v.launch) << v.needsCgroup;
        }
    }
}

void TestShutdown::detachedDescendantsDie()
{
    QFETCH(int, signo);
    QFETCH(QString, launch);
    QFETCH(bool, needsCgroup);
    const QString script = m_tmp->filePath(QStringLiteral("descendant.sh"));
    {
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("echo $$ >> '" + QFile::encodeName(m_pidFile) + "'\nexec sleep 300\n");
    }
    const QString command =
        launch.arg(script) + QStringLiteral("\necho $$ >> '%1'; exec sleep 300").arg(m_pidFile);
    QProcess p;
    p.setProcessEnvironment(headlessEnvironment());
    p.setWorkingDirectory(m_tmp->path());
    p.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
            {QStringLiteral("--headless"), QStringLiteral("--workspace-root"),
             m_tmp->filePath(QStringLiteral("ws")), QStringLiteral("--exec"), command});
    QVERIFY(p.waitForStarted(StartBoundMs));
    QElapsedTimer t;
    t.start();
    while (readPids(m_pidFile).size() < 2 && t.elapsed() < StartBoundMs &&
           p.state() == QProcess::Running)
        QTest::qWait(20);
    const QList<pid_t> pids = readPids(m_pidFile);
    QVERIFY2(pids.size() == 2, p.readAllStandardError().constData());
    const QString cgroupFolder = engineCgroupOf(pid_t(p.processId()));
    // The engine makes its cgroup wherever we could (same folder, same rights).
    if (needsCgroup && (!elsai::cgroup::writable(elsai::cgroup::ownFolders().v2) ||
                        qEnvironmentVariableIsSet("ELSAI_NO_ENGINE_CGROUP"))) {
        ::kill(pid_t(p.processId()), SIGKILL);
        p.waitForFinished(ExitBoundMs);
        QSKIP("no engine cgroup here (cgroup v2 missing or not writable: not root, not "
              "delegated; or ELSAI_NO_ENGINE_CGROUP set); then a descendant that leaves the "
              "session and drops the marker "
              "survives, as the README says");
    }
    ::kill(pid_t(p.processId()), signo);
    QVERIFY(p.waitForFinished(ExitBoundMs));
    if (signo != SIGKILL)
        QCOMPARE(p.exitCode(), 128 + signo);
    expectAllGone(pids);
    if (!cgroupFolder.isEmpty()) {
        // The watchdog removes the engine's cgroup once it is empty.
        t.restart();
        while (QFileInfo::exists(cgroupFolder) && t.elapsed() < GoneBoundMs)
            QTest::qWait(20);
        QVERIFY2(!QFileInfo::exists(cgroupFolder), qPrintable(cgroupFolder));
    }
}

// The ssh backend's ControlMaster leaves the engine's session (ssh -f): it still ends with the
// engine, by signal or kill -9 (the cgroup, or the engine's marker in its environment).
void TestShutdown::sshMasterDies_data()
{
    QTest::addColumn<int>("signo");
    QTest::addRow("SIGTERM") << int(SIGTERM);
    QTest::addRow("kill -9") << int(SIGKILL);
}

void TestShutdown::sshMasterDies()
{
    QFETCH(int, signo);
    elsai::test::SshServer sshd;
    if (!sshd.start())
        QSKIP(qPrintable(sshd.error()));
    const QString ready = m_tmp->filePath(QStringLiteral("ssh-ready"));
    const QByteArray tag =
        QByteArray::number(3000000 + QRandomGenerator::global()->bounded(999999));
    const QString command =
        QStringLiteral("touch '%1'; exec sleep %2").arg(ready, QString::fromLatin1(tag));
    QProcess p;
    p.setProcessEnvironment(headlessEnvironment());
    p.setWorkingDirectory(m_tmp->path());
    p.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
            {QStringLiteral("--headless"), QStringLiteral("--backend"), QStringLiteral("ssh"),
             QStringLiteral("--ssh-host"), QStringLiteral("127.0.0.1"),
             QStringLiteral("--ssh-port"), QString::number(sshd.port()),
             QStringLiteral("--ssh-user"), sshd.user(), QStringLiteral("--ssh-identity"),
             sshd.userKey(), QStringLiteral("--ssh-known-hosts"), sshd.knownHosts(),
             QStringLiteral("--ssh-remote-root"), sshd.remoteRoot(),
             QStringLiteral("--workspace-root"), m_tmp->filePath(QStringLiteral("ws")),
             QStringLiteral("--exec"), command});
    QVERIFY(p.waitForStarted(StartBoundMs));
    QElapsedTimer t;
    t.start();
    while (!QFileInfo::exists(ready) && t.elapsed() < StartBoundMs &&
           p.state() == QProcess::Running)
        QTest::qWait(20);
    QVERIFY2(QFileInfo::exists(ready), p.readAllStandardError().constData());
    // The master: an ssh with ControlMaster=yes whose config names this sshd's port.
    QList<pid_t> masters;
    for (pid_t pid : processesWith({QByteArray("ssh\0", 4), "ControlMaster=yes"})) {
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (!cmdline.open(QIODevice::ReadOnly))
            continue;
        const QList<QByteArray> args = cmdline.readAll().split('\0');
        const qsizetype f = args.indexOf("-F");
        QFile config(f >= 0 ? QString::fromLocal8Bit(args.value(f + 1)) : QString());
        if (config.open(QIODevice::ReadOnly) &&
            config.readAll().contains("Port " + QByteArray::number(sshd.port()) + '\n'))
            masters.append(pid);
    }
    // Where OpenSSH retitles the master ("ssh: <control path> [mux]"): the path is in our
    // temp folder, which the engine inherited.
    if (masters.isEmpty())
        masters = processesWith({"[mux]", QFile::encodeName(QDir::tempPath() + u'/')});
    QVERIFY2(!masters.isEmpty(), "no ControlMaster found");
    const QList<pid_t> remote = processesWith({QByteArray("sleep\0", 6) + tag + '\0'});
    QCOMPARE(remote.size(), 1);
    ::kill(pid_t(p.processId()), signo);
    QVERIFY(p.waitForFinished(ExitBoundMs));
    if (signo != SIGKILL)
        QCOMPARE(p.exitCode(), 128 + signo);
    expectAllGone(masters);
    // The remote command is the remote host's: it ends at its own timeout there (sshd does not
    // signal a session without a terminal when its connection drops). Not this test's subject.
    for (pid_t pid : remote)
        ::kill(pid, SIGKILL);
}

// bwrap: --die-with-parent and the pid namespace; a setsid inside cannot leave either.
void TestShutdown::bwrapTreeDies_data()
{
    QTest::addColumn<int>("signo");
    QTest::addRow("SIGTERM") << int(SIGTERM);
    QTest::addRow("SIGKILL") << int(SIGKILL);
}

void TestShutdown::bwrapTreeDies()
{
    QFETCH(int, signo);
    if (QStandardPaths::findExecutable(QStringLiteral("bwrap")).isEmpty())
        QSKIP("bwrap is not installed");
    const QByteArray tag =
        QByteArray::number(3000000 + QRandomGenerator::global()->bounded(999999));
    const QString command = QStringLiteral("sleep %1 & setsid /bin/sh -c 'exec sleep %1' & "
                                           "touch /workspace/ready; wait")
                                .arg(QString::fromLatin1(tag));
    const QString ws = m_tmp->filePath(QStringLiteral("ws"));
    QProcess p;
    p.setProcessEnvironment(headlessEnvironment());
    p.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
            {QStringLiteral("--headless"), QStringLiteral("--backend"), QStringLiteral("bwrap"),
             QStringLiteral("--workspace-root"), ws, QStringLiteral("--exec"), command});
    QVERIFY(p.waitForStarted(StartBoundMs));
    QElapsedTimer t;
    t.start();
    while ((!QFile::exists(ws + QStringLiteral("/ready")) || sleepers(tag) < 2) &&
           t.elapsed() < StartBoundMs && p.state() == QProcess::Running)
        QTest::qWait(20);
    if (p.state() != QProcess::Running) {
        const QByteArray err = p.readAllStandardError();
        if (err.contains("bwrap"))
            QSKIP(qPrintable(QStringLiteral("bwrap cannot run here: ") + QString::fromUtf8(err)));
    }
    QCOMPARE(sleepers(tag), 2);
    ::kill(pid_t(p.processId()), signo);
    QVERIFY(p.waitForFinished(ExitBoundMs));
    if (signo != SIGKILL)
        QCOMPARE(p.exitCode(), 128 + signo);
    t.restart();
    while (sleepers(tag) > 0 && t.elapsed() < GoneBoundMs)
        QTest::qWait(20);
    QCOMPARE(sleepers(tag), 0);
}

// As root the workbench's commands lose CAP_SYS_PTRACE and /proc/<pid>/environ reads zeros;
// as another user the kernel refuses the file itself (EACCES), which the second row checks by
// running the workbench as nobody.
void TestShutdown::secretsNotReadable_data()
{
    QTest::addColumn<bool>("asNobody");
    QTest::addRow("this user") << false;
    QTest::addRow("nobody") << true;
}

void TestShutdown::secretsNotReadable()
{
    QFETCH(bool, asNobody);
    if (asNobody && ::geteuid() != 0)
        QSKIP("not root: the first row already runs as a user without CAP_SYS_PTRACE");
    if (asNobody) {
        const auto open = QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner |
                          QFileDevice::ReadOther | QFileDevice::WriteOther | QFileDevice::ExeOther;
        for (const QString &dir : {m_tmp->path(), m_tmp->filePath(QStringLiteral("ws"))})
            QVERIFY(QFile::setPermissions(dir, open));
    }
    const QByteArray secret =
        "elsai-secret-" + QByteArray::number(QRandomGenerator::global()->generate64(), 16);
    QProcessEnvironment env = headlessEnvironment();
    env.insert(QStringLiteral("AWS_SECRET_ACCESS_KEY"), QString::fromLatin1(secret));
    // The command never spells the secret: it looks for the variable's name and prints what
    // it finds, so the test compares.
    const QString command = QStringLiteral(
        "tr '\\0' '\\n' < /proc/$PPID/environ 2> /dev/null | grep -c =; "
        "cat /proc/$PPID/environ > /dev/null 2>&1 || echo parent-environ-refused; "
        "dd if=/proc/$PPID/mem bs=1 count=1 skip=$(( 0x$(grep -m1 -o '^[0-9a-f]*' "
        "/proc/$PPID/maps 2> /dev/null || echo 0) )) > /dev/null 2>&1 "
        "&& echo parent-mem-readable; "
        "p=$PPID; n=0; while [ \"$p\" -gt 1 ] && [ $n -lt 64 ]; do "
        "  tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep '^AWS_SECRET_ACCESS_KEY='; "
        "  p=$(sed 's/.*) [^ ]* \\([0-9]*\\).*/\\1/' /proc/$p/stat); n=$((n+1)); done; "
        "for f in /proc/[0-9]*/environ; do "
        "  tr '\\0' '\\n' < $f 2>/dev/null | grep '^AWS_SECRET_ACCESS_KEY='; done; "
        "echo scanned");
    QProcess p;
    p.setProcessEnvironment(env);
    p.setWorkingDirectory(m_tmp->path());
    if (asNobody) {
        p.setChildProcessModifier([] {
            if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)
                ::_exit(125);
        });
    }
    p.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
            {QStringLiteral("--headless"), QStringLiteral("--no-inherit-env"),
             QStringLiteral("--workspace-root"), m_tmp->filePath(QStringLiteral("ws")),
             QStringLiteral("--exec"), command});
    QVERIFY(p.waitForFinished(ExitBoundMs));
    const QByteArray out = p.readAllStandardOutput();
    const QByteArray err = p.readAllStandardError();
    QVERIFY2(p.exitCode() == 0, err.constData());
    QVERIFY2(out.contains("scanned"), out.constData());
    QVERIFY2(out.startsWith("0\n"), out.constData()); // no variable in the parent's environ
    QVERIFY2(!out.contains("parent-mem-readable"), out.constData());
    QVERIFY2(!out.contains(secret), out.constData());
    if (asNobody)
        QVERIFY2(out.contains("parent-environ-refused"), out.constData());
}

QTEST_GUILESS_MAIN(TestShutdown)
#include "tst_shutdown.moc"
