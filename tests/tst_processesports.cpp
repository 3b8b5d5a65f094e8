// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The Processes and Ports sources: the process registry fed by agents' commands (output so far,
// stop = TERM then KILL, the result says cancelled), its model under QAbstractItemModelTester,
// /proc/net/tcp parsing, and the ports a sandbox's terminal listens on — local directly, bwrap
// through the loopback proxy into its network namespace, ssh through a forward of the master.

#include "bwrapsandboxbackend.h"
#include "errors.h"
#include "listeningports.h"
#include "localsandboxbackend.h"
#include "namespaceforward.h"
#include "processesmodel.h"
#include "processregistry.h"
#include "ptyfactory.h"
#include "sandbox.h"
#include "sandboxplugin.h"
#include "sandboxports.h"
#include "sshfixture.h"
#include "testutil.h"

#include <QAbstractItemModelTester>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

#include <future>
#include <memory>

using namespace elsai;

namespace {

constexpr int Wait = 20000; // ms; a bound, never a measurement

/// A terminal of `backend` that starts a web server on a free port; returns the port (0 when
/// it did not come up) and keeps the session in `out`.
int serveFromTerminal(const BackendPtr &backend, const QString &workspaceId,
                      std::unique_ptr<PtySession> &out)
{
    out.reset(createPtySession(backend, workspaceId));
    auto text = std::make_shared<QByteArray>();
    QObject::connect(out.get(), &PtySession::output, out.get(),
                     [text](const QByteArray &b) { text->append(b); });
    out->start(120, 30);
    if (!QTest::qWaitFor([&] { return out->isRunning(); }, Wait))
        return 0;
    out->write("/usr/bin/python3 -m http.server 0 --bind 127.0.0.1\n");
    static const QRegularExpression serving(QStringLiteral("Serving HTTP on \\S+ port (\\d+)"));
    int port = 0;
    (void)QTest::qWaitFor(
        [&] {
            const auto m = serving.match(QString::fromUtf8(*text));
            port = m.hasMatch() ? m.captured(1).toInt() : 0;
            return port > 0;
        },
        Wait);
    return port;
}

/// An HTTP GET of "/" on 127.0.0.1:`port`; the status line, or empty.
QByteArray httpStatus(int port)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(port));
    if (!socket.waitForConnected(Wait))
        return {};
    socket.write("GET / HTTP/1.0\r\nHost: localhost\r\n\r\n");
    QByteArray reply;
    while (!reply.contains('\n') && socket.waitForReadyRead(Wait))
        reply += socket.readAll();
    return reply.left(reply.indexOf('\r'));
}

} // namespace

class TestProcessesPorts : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_tmp;

private Q_SLOTS:
    void parsesProcNetTcp_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<bool>("v6");
        QTest::addColumn<QString>("address");
        QTest::addColumn<int>("port");
        QTest::addColumn<quint64>("inode");
        // clang-format off
        QTest::newRow("v4 loopback") << QByteArray("   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0")
                                     << false << "127.0.0.1" << 8080 << quint64(4242);
        QTest::newRow("v4 any")      << QByteArray("   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 17 1 0000000000000000 100 0 0 10 0")
                                     << false << "0.0.0.0" << 22 << quint64(17);
        QTest::newRow("v4 other")    << QByteArray("   2: 0201A8C0:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9 1 0000000000000000 100 0 0 10 0")
                                     << false << "192.168.1.2" << 80 << quint64(9);
        QTest::newRow("v6 loopback") << QByteArray("   0: 00000000000000000000000001000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 100 0 0 10 0")
                                     << true << "::1" << 3000 << quint64(77);
        QTest::newRow("v6 any")      << QByteArray("   1: 00000000000000000000000000000000:1388 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 78 1 0000000000000000 100 0 0 10 0")
                                     << true << "::" << 5000 << quint64(78);
        // clang-format on
    }
    void parsesProcNetTcp()
    {
        QFETCH(QByteArray, line);
        QFETCH(bool, v6);
        QFETCH(QString, address);
        QFETCH(int, port);
        QFETCH(quint64, inode);
        const QByteArray header = "  sl  local_address rem_address   st tx_queue rx_queue\n";
        const QList<ListeningPort> ports = parseProcNetTcp(header + line + '\n', v6);
        QCOMPARE(ports.size(), 1);
        QCOMPARE(ports.first().address, address);
        QCOMPARE(ports.first().port, port);
        QCOMPARE(ports.first().inode, inode);
        // An established connection is not a listener.
        QByteArray established = line;
        established.replace(" 0A ", " 01 ");
        QVERIFY(parseProcNetTcp(header + established, v6).isEmpty());
    }

    void listenersOfThisProcess()
    {
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        const QSet<qint64> self{QCoreApplication::applicationPid()};
        const QList<ListeningPort> ours = listenersOf(tcpListeners(), self);
        QVERIFY(std::any_of(ours.begin(), ours.end(), [&](const ListeningPort &p) {
            return p.port == server.serverPort() && p.pid == self.values().first();
        }));
        QVERIFY(processTrees(self).contains(self.values().first()));
        // This process and its children share our network namespace: none is "other" (a
        // namespace compared by its link text as a path would make every process other).
        QCOMPARE(processInOtherNetworkNamespace(QCoreApplication::applicationPid()), 0);
    }

    void agentCommandsAreListedWithOutputAndStop()
    {
        const QString ws = m_tmp.filePath(QStringLiteral("procs"));
        const SandboxPtr sandbox = Sandbox::create(QStringLiteral("procs"),
                                                   std::make_shared<LocalSandboxBackend>(ws), 600);
        sandbox->start();
        const AgentPtr agent = Agent::create(QStringLiteral("builder"));
        sandbox->attach(agent);

        ProcessesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setInterval(50);
        model.setWorkspace(QStringLiteral("procs"));
        QCOMPARE(model.rowCount(), 0);

        auto run = std::async(std::launch::async, [agent] {
            return executeAs(*agent, QStringLiteral("echo first-line; sleep 600"));
        });
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, Wait);
        const quint64 id = model.processId(0);
        QCOMPARE(model.index(0, ProcessesModel::Actor).data().toString(),
                 QStringLiteral("builder"));
        QCOMPARE(model.index(0, ProcessesModel::Kind).data().toString(), QStringLiteral("command"));
        QCOMPARE(model.index(0, ProcessesModel::What).data().toString(),
                 QStringLiteral("echo first-line; sleep 600"));
        QTRY_VERIFY_WITH_TIMEOUT(ProcessRegistry::instance().output(id).contains("first-line"),
                                 Wait);
        // Another sandbox sees none of it.
        QVERIFY(ProcessRegistry::instance().list(QStringLiteral("other")).isEmpty());

        QVERIFY(ProcessRegistry::instance().stop(id));
        QVERIFY(run.wait_for(std::chrono::milliseconds(Wait)) == std::future_status::ready);
        const ExecuteResult r = run.get();
        QVERIFY(r.cancelled);
        QCOMPARE(r.exitCode, 130);
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 0, Wait);
        QVERIFY(!ProcessRegistry::instance().stop(id)); // gone
        sandbox->stop(false);
    }

    // The agent tools' background processes are listed too (kind "background") while they
    // run; stopping one from the panel ends it, and its output stays readable by the agent.
    void backgroundProcessesAreListed()
    {
        const QString ws = m_tmp.filePath(QStringLiteral("bg"));
        const SandboxPtr sandbox =
            Sandbox::create(QStringLiteral("bg"), std::make_shared<LocalSandboxBackend>(ws), 600);
        sandbox->start();
        const AgentPtr agent = Agent::create(QStringLiteral("server"));
        sandbox->attach(agent);

        ProcessesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setInterval(50);
        model.setWorkspace(QStringLiteral("bg"));
        const ToolResult started = agent->callTool(
            QStringLiteral("process_start"),
            {{QStringLiteral("command"), QStringLiteral("echo serving; sleep 600")}});
        const QString processId = started.data.value(QLatin1String("process_id")).toString();
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, Wait);
        QCOMPARE(model.index(0, ProcessesModel::Kind).data().toString(),
                 QStringLiteral("background"));
        QCOMPARE(model.index(0, ProcessesModel::Actor).data().toString(), QStringLiteral("server"));
        QCOMPARE(model.index(0, ProcessesModel::What).data().toString(),
                 QStringLiteral("echo serving; sleep 600"));
        const quint64 id = model.processId(0);
        QTRY_VERIFY_WITH_TIMEOUT(ProcessRegistry::instance().output(id).contains("serving"), Wait);

        QVERIFY(ProcessRegistry::instance().stop(id));
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 0, Wait);
        const ToolResult after = agent->callTool(QStringLiteral("process_output"),
                                                 {{QStringLiteral("process_id"), processId}});
        QCOMPARE(after.data.value(QLatin1String("running")).toBool(true), false);
        QVERIFY(after.text.contains(QLatin1String("serving")));
        sandbox->stop(false);
    }

    void localTerminalPortIsListedAndReachable()
    {
        if (!QFileInfo(QStringLiteral("/usr/bin/python3")).isExecutable())
            QSKIP("/usr/bin/python3 is not installed");
        auto backend = std::make_shared<LocalSandboxBackend>(m_tmp.filePath(QStringLiteral("lp")));
        backend->create();
        // A listener of this test process: not the sandbox's.
        QTcpServer foreign;
        QVERIFY(foreign.listen(QHostAddress::LocalHost, 0));
        std::unique_ptr<PtySession> term;
        const int port = serveFromTerminal(backend, QStringLiteral("lp"), term);
        QVERIFY(port > 0);
        QList<SandboxPort> ports;
        QTRY_VERIFY_WITH_TIMEOUT(
            (ports = listSandboxPorts(backend, QStringLiteral("lp")),
             std::any_of(ports.begin(), ports.end(),
                         [&](const SandboxPort &p) { return p.port == port; })),
            Wait);
        const SandboxPort p = *std::find_if(ports.begin(), ports.end(),
                                            [&](const SandboxPort &p) { return p.port == port; });
        QVERIFY(p.process.startsWith(QLatin1String("python")));
        QCOMPARE(p.reach, SandboxPort::Reach::Direct);
        QVERIFY(std::none_of(ports.begin(), ports.end(),
                             [&](const SandboxPort &q) { return q.port == foreign.serverPort(); }));
        const QUrl url = sandboxPortUrl(backend, p);
        QCOMPARE(url, QUrl(QStringLiteral("http://127.0.0.1:%1/").arg(port)));
        QVERIFY(httpStatus(port).contains(" 200"));
        // The Processes panel names the server beside the terminal's shell.
        ProcessesModel model;
        model.setInterval(50);
        model.setWorkspace(QStringLiteral("lp"));
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, Wait);
        QTRY_VERIFY_WITH_TIMEOUT(
            model.index(0, ProcessesModel::What)
                .data()
                .toString()
                .endsWith(QLatin1String(": /usr/bin/python3 -m http.server 0 --bind 127.0.0.1")),
            Wait);
        term->terminate();
        QTRY_VERIFY_WITH_TIMEOUT(term->state() == PtySession::State::Finished, Wait);
        QTRY_VERIFY_WITH_TIMEOUT(listSandboxPorts(backend, QStringLiteral("lp")).isEmpty(), Wait);
    }

    void bwrapTerminalPortThroughTheProxy()
    {
        if (!QFileInfo(QStringLiteral("/usr/bin/python3")).isExecutable())
            QSKIP("/usr/bin/python3 is not installed");
        std::shared_ptr<BwrapSandboxBackend> backend;
        try {
            backend = std::make_shared<BwrapSandboxBackend>(m_tmp.filePath(QStringLiteral("bp")));
            backend->create();
        } catch (const SandboxError &e) {
            QSKIP(qPrintable(e.message()));
        }
        std::unique_ptr<PtySession> term;
        const int port = serveFromTerminal(backend, QStringLiteral("bp"), term);
        QVERIFY(port > 0);
        QList<SandboxPort> ports;
        QTRY_VERIFY_WITH_TIMEOUT(
            !(ports = listSandboxPorts(backend, QStringLiteral("bp"))).isEmpty(), Wait);
        QCOMPARE(ports.first().port, port);
        QCOMPARE(ports.first().reach, SandboxPort::Reach::NamespaceProxy);
        QVERIFY(ports.first().namespacePid > 0);
        NamespaceForward forward(ports.first().namespacePid, port);
        auto fetch =
            std::async(std::launch::async, [&] { return httpStatus(forward.url().port()); });
        QTRY_VERIFY_WITH_TIMEOUT(
            fetch.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready, Wait);
        const QByteArray status = fetch.get();
        QVERIFY2(status.contains(" 200"), status.constData());
        term->terminate();
        QTRY_VERIFY_WITH_TIMEOUT(term->state() == PtySession::State::Finished, Wait);
    }

    // "Open in Browser" on an ssh sandbox: a local port forwarded through the master, which
    // answers (ssh -O forward exits 0 even when it forwarded nothing).
    void sshTerminalPortThroughTheMaster()
    {
        if (!QFileInfo(QStringLiteral("/usr/bin/python3")).isExecutable())
            QSKIP("/usr/bin/python3 is not installed");
        test::SshServer sshd;
        sshd.tcpForwarding = true;
        if (!sshd.start())
            QSKIP(qPrintable(sshd.error()));
        const auto backend = sshd.makeBackend(QStringLiteral("sp"));
        backend->create();
        std::unique_ptr<PtySession> term;
        const int port = serveFromTerminal(backend, QStringLiteral("sp"), term);
        QVERIFY(port > 0);
        QList<SandboxPort> ports;
        QTRY_VERIFY_WITH_TIMEOUT(
            (ports = listSandboxPorts(backend, QStringLiteral("sp")),
             std::any_of(ports.begin(), ports.end(),
                         [&](const SandboxPort &p) { return p.port == port; })),
            Wait);
        const SandboxPort p = *std::find_if(ports.begin(), ports.end(),
                                            [&](const SandboxPort &p) { return p.port == port; });
        QCOMPARE(p.reach, SandboxPort::Reach::SshForward);
        const QUrl url = sandboxPortUrl(backend, p);
        QCOMPARE(url.host(), QStringLiteral("127.0.0.1"));
        QVERIFY(url.port() > 0 && url.port() != port);
        const QByteArray status = httpStatus(url.port());
        QVERIFY2(status.contains(" 200"), status.constData());
        term->terminate();
        QTRY_VERIFY_WITH_TIMEOUT(term->state() == PtySession::State::Finished, Wait);
        backend->close();
    }
};

QTEST_MAIN(TestProcessesPorts)
#include "tst_processesports.moc"
