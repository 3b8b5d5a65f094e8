// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Quits the window with every panel busy — a console command running, a scripted agent playing
// a command, MCP sessions open over HTTP (one of them in a running tools/call), a flush in
// progress, a file tab with unsaved edits — and checks that the process exits with status 0,
// without a crash, and that no process it started survives it.
//
// The window runs in a child process (this executable with --child): its exit status is then
// the thing checked, and its orphans are ours to find (we are the child subreaper).

#include "agentplanpanel.h"
#include "confirm.h"
#include "filetabs.h"
#include "mainwindow.h"
#include "mcppanel.h"
#include "mcpservermodel.h"
#include "planrunner.h"
#include "sandboxcontroller.h"
#include "testutil.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPlainTextEdit>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <cstdio>

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

using namespace elsai;

namespace {

constexpr int BoundMs = 60000; // "did not hang" bounds, not timings

void say(const QString &line)
{
    std::fprintf(stdout, "%s\n", qPrintable(line));
    std::fflush(stdout);
}

bool waitFor(const std::function<bool()> &done, int ms = BoundMs)
{
    QElapsedTimer timer;
    timer.start();
    while (!done()) {
        if (timer.hasExpired(ms))
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(5);
    }
    return true;
}

void writeFile(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (f.open(QIODevice::WriteOnly))
        f.write(bytes);
}

/// A POST to the MCP endpoint; the reply is left running (the caller waits or not).
QNetworkReply *mcpPost(QNetworkAccessManager &nam, const QUrl &url, const QString &token,
                       const QByteArray &session, const QJsonObject &message)
{
    QNetworkRequest r(url);
    r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
    r.setRawHeader("Accept", "application/json, text/event-stream");
    r.setRawHeader("Authorization", "Bearer " + token.toUtf8());
    if (!session.isEmpty()) {
        r.setRawHeader("Mcp-Session-Id", session);
        r.setRawHeader("MCP-Protocol-Version", "2025-06-18");
    }
    return nam.post(r, QJsonDocument(message).toJson(QJsonDocument::Compact));
}

QByteArray openSession(QNetworkAccessManager &nam, const QUrl &url, const QString &token)
{
    QNetworkReply *reply =
        mcpPost(nam, url, token, {},
                {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                 {QStringLiteral("id"), 1},
                 {QStringLiteral("method"), QStringLiteral("initialize")},
                 {QStringLiteral("params"),
                  QJsonObject{{QStringLiteral("protocolVersion"), QStringLiteral("2025-06-18")},
                              {QStringLiteral("capabilities"), QJsonObject()}}}});
    waitFor([reply] { return reply->isFinished(); });
    const QByteArray session = reply->rawHeader("Mcp-Session-Id");
    reply->deleteLater();
    if (session.isEmpty())
        return session;
    QNetworkReply *ack =
        mcpPost(nam, url, token, session,
                {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                 {QStringLiteral("method"), QStringLiteral("notifications/initialized")}});
    waitFor([ack] { return ack->isFinished(); });
    ack->deleteLater();
    return session;
}

/// The child: the window as app/gui.cpp runs it, made busy everywhere, then File > Quit.
int runChild(int argc, char **argv, const QString &root, const QString &tag)
{
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    QStringList asked;
    setConfirmHook([&asked](QWidget *, const Confirmation &q) {
        asked.append(q.kind);
        say(QStringLiteral("ASKED %1: %2").arg(q.kind, q.items.join(QStringLiteral(" | "))));
        return ConfirmAnswer::Accept; // Quit anyway; Discard the edits
    });

    const QString sleepCommand = QStringLiteral("sleep %1").arg(tag);
    writeFile(root + QStringLiteral("/seed/README.md"), "# quit\n");
    writeFile(root + QStringLiteral("/plan.json"),
              QJsonDocument(
                  QJsonObject{{QStringLiteral("format"), QStringLiteral("elsai-agent-plan")},
                              {QStringLiteral("version"), 1},
                              {QStringLiteral("name"), QStringLiteral("busy-plan")},
                              {QStringLiteral("agent"),
                               QJsonObject{{QStringLiteral("name"), QStringLiteral("planner")},
                                           {QStringLiteral("mode"), QStringLiteral("read_write")}}},
                              {QStringLiteral("steps"),
                               QJsonArray{QJsonObject{
                                   {QStringLiteral("name"), QStringLiteral("a long command")},
                                   {QStringLiteral("tool"), QStringLiteral("execute")},
                                   {QStringLiteral("args"),
                                    QJsonObject{{QStringLiteral("command"), sleepCommand}}}}}}})
                  .toJson());

    int status = 0;
    {
        SandboxController controller;
        MainWindow window(&controller);
        window.show();
        SandboxSpec spec;
        spec.workspaceId = QStringLiteral("quit");
        spec.workspaceRoot = root + QStringLiteral("/ws");
        spec.seedFrom = root + QStringLiteral("/seed");
        spec.syncDest = root + QStringLiteral("/dest");
        bool started = false;
        QObject::connect(&controller, &SandboxController::sandboxStarted, &app,
                         [&started] { started = true; });
        controller.addSandbox(spec);
        if (!waitFor([&started] { return started; }))
            return 10;

        // A console command.
        if (controller.execute(spec.workspaceId, sleepCommand) == 0)
            return 11;
        // A scripted agent playing a command.
        auto *plans = window.findChild<AgentPlanPanel *>();
        if (!plans || !plans->loadPlan(root + QStringLiteral("/plan.json")))
            return 12;
        plans->runner()->play();
        // MCP: two sessions over HTTP, one of them in a running tools/call.
        auto *mcp = window.findChild<McpPanel *>();
        if (!mcp)
            return 13;
        mcp->model()->start(controller.sandbox(spec.workspaceId));
        const McpAgentSpec remote =
            mcp->model()->createAgent(QStringLiteral("remote"), SandboxAttachMode::ReadWrite);
        QNetworkAccessManager nam;
        const QUrl url = mcp->model()->url();
        const QByteArray first = openSession(nam, url, remote.token);
        const QByteArray second = openSession(nam, url, remote.token);
        if (first.isEmpty() || second.isEmpty())
            return 14;
        QNetworkReply *call =
            mcpPost(nam, url, remote.token, first,
                    {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                     {QStringLiteral("id"), 2},
                     {QStringLiteral("method"), QStringLiteral("tools/call")},
                     {QStringLiteral("params"),
                      QJsonObject{{QStringLiteral("name"), QStringLiteral("execute")},
                                  {QStringLiteral("arguments"),
                                   QJsonObject{{QStringLiteral("command"), sleepCommand}}}}}});
        Q_UNUSED(call);
        // A flush with plenty to write.
        QList<QPair<QString, FileSource>> files;
        for (int i = 0; i < 3000; ++i)
            files.append({QStringLiteral("src/out/f%1.txt").arg(i),
                          FileSource::bytes(QByteArray(512, 'x'))});
        controller.addFiles(spec.workspaceId, files).waitForFinished();
        const auto flush = controller.flush(spec.workspaceId);
        // A tab with unsaved edits.
        FileTabs *tabs = window.fileTabs();
        tabs->openFile(spec.workspaceId, QStringLiteral("README.md"));
        if (!waitFor([tabs] { return tabs->count() == 1 && tabs->editor(0); }))
            return 15;
        tabs->editor(0)->appendPlainText(QStringLiteral("unsaved"));

        // Every sleeper runs before the quit: the console's, the plan's, the MCP call's.
        if (!waitFor([&] {
                return controller.runningCommandCount() == 1 && plans->runner()->isBusy() &&
                       mcp->model()->sessionCount(QStringLiteral("remote")) == 2;
            }))
            return 16;
        say(QStringLiteral("FLUSH %1")
                .arg(flush.isRunning() ? QStringLiteral("running") : QStringLiteral("done")));
        for (const QString &line : window.busyWork())
            say(QStringLiteral("BUSY %1").arg(line));
        say(QStringLiteral("PID %1").arg(::getpid()));

        QElapsedTimer quitting;
        quitting.start();
        QTimer::singleShot(0, &window,
                           [&window] { window.action(QStringLiteral("actionQuit"))->trigger(); });
        status = QApplication::exec();
        window.shutdown(); // as app/gui.cpp does, whatever ended the loop
        if (!window.isShutDown())
            return 17;
        say(QStringLiteral("QUIT-MS %1").arg(quitting.elapsed())); // information, not asserted
    }
    say(QStringLiteral("ASKED-KINDS %1").arg(asked.join(QLatin1Char(','))));
    say(QStringLiteral("CLEAN"));
    return status;
}

/// Live processes whose command line holds `sleep <tag>` (zombies have none).
QList<pid_t> sleepers(const QString &tag)
{
    return test::processesWith({QByteArray("sleep\0", 6) + tag.toUtf8()});
}

} // namespace

class TestQuit : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        // Orphans of the child come to us, so "nothing survives" is checked, not assumed.
        QVERIFY(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    }

    void quitWithEveryPanelBusy()
    {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        const QString tag = QString::number(3000000 + (::getpid() % 100000) * 7 + 1);
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("QT_LOGGING_RULES"), QStringLiteral("elsai.*=false"));
        child.setProcessEnvironment(env);
        child.setProcessChannelMode(QProcess::SeparateChannels);
        child.start(QCoreApplication::applicationFilePath(),
                    {QStringLiteral("--child"), root.path(), tag});
        QVERIFY(child.waitForStarted());
        QVERIFY2(child.waitForFinished(BoundMs * 3), "the window did not quit");
        const QString out = QString::fromUtf8(child.readAllStandardOutput());
        const QString err = QString::fromUtf8(child.readAllStandardError());
        qInfo().noquote() << out;
        QVERIFY2(child.exitStatus() == QProcess::NormalExit, qPrintable(err.right(4000)));
        QVERIFY2(
            child.exitCode() == 0,
            qPrintable(
                QStringLiteral("exit %1\n%2\n%3").arg(child.exitCode()).arg(out, err.right(4000))));
        QVERIFY(out.contains(QStringLiteral("CLEAN")));
        // Everything was busy when the quit came, and the quit said so before doing it.
        QVERIFY(out.contains(QStringLiteral("BUSY 1 console command(s) running")));
        QVERIFY(out.contains(QStringLiteral("BUSY scripted agent 'busy-plan' playing")));
        QVERIFY(out.contains(QStringLiteral("with 2 session(s) connected")));
        QVERIFY(out.contains(QStringLiteral("ASKED-KINDS unsaved,quit-busy")));
        QVERIFY(!err.contains(QStringLiteral("AddressSanitizer")));

        // Nothing it started survives: no sleeper of ours, no orphan re-parented to us.
        QElapsedTimer gone;
        gone.start();
        while ((!sleepers(tag).isEmpty() || !test::liveChildrenOf(::getpid()).isEmpty()) &&
               !gone.hasExpired(15000))
            QThread::msleep(50);
        QCOMPARE(sleepers(tag), QList<pid_t>());
        QCOMPARE(test::liveChildrenOf(::getpid()), QList<pid_t>());
    }
};

int main(int argc, char **argv)
{
    if (argc >= 4 && qstrcmp(argv[1], "--child") == 0) {
        const QString root = QString::fromLocal8Bit(argv[2]);
        const QString tag = QString::fromLocal8Bit(argv[3]);
        int childArgc = 1;
        return runChild(childArgc, argv, root, tag);
    }
    QCoreApplication app(argc, argv);
    TestQuit test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_quit.moc"
