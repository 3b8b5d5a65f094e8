// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentsmodel.h"
#include "auditlogmodel.h"
#include "consolehistorymodel.h"
#include "errors.h"
#include "modelroles.h"
#include "sandboxcontroller.h"
#include "sandboxplugin.h"
#include "sessionsmodel.h"
#include "testutil.h"
#include "workspacetreemodel.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

class TestSandboxController : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;

    SandboxSpec spec(const QString &id, bool seed = true)
    {
        SandboxSpec s;
        s.workspaceId = id;
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("ws-%1").arg(++m_n));
        if (seed) {
            const QString project = m_tmp.filePath(QStringLiteral("project-%1").arg(m_n));
            writeHostFile(project + QStringLiteral("/src/app.py"), "print('app')\n");
            writeHostFile(project + QStringLiteral("/README.md"), "# demo\n");
            writeHostFile(project + QStringLiteral("/.git/HEAD"), "ref\n");
            s.seedFrom = project;
        }
        return s;
    }

    static bool waitStarted(SandboxController &c, const QString &id)
    {
        return QTest::qWaitFor([&] { return c.state(id) == SessionState::Running; }, 20000);
    }

    static QStringList rootNames(WorkspaceTreeModel *tree)
    {
        QStringList names;
        for (int r = 0; r < tree->rowCount(); ++r)
            names.append(tree->index(r, 0).data(Roles::PathRole).toString());
        return names;
    }

private Q_SLOTS:
    void startsSeedsAndShowsTheTree()
    {
        SandboxController c;
        QSignalSpy started(&c, &SandboxController::sandboxStarted);
        QSignalSpy progress(&c, &SandboxController::seedProgress);
        c.addSandbox(spec(QStringLiteral("tree")));
        QCOMPARE(c.sessionsModel()->rowCount(), 1);
        QVERIFY(waitStarted(c, QStringLiteral("tree")));
        QCOMPARE(started.size(), 1);
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.last().at(2).toInt(), progress.last().at(1).toInt()); // ends at 100 %

        WorkspaceTreeModel *tree = c.treeModel(QStringLiteral("tree"));
        if (tree->canFetchMore({}))
            tree->fetchMore({});
        QTRY_COMPARE(rootNames(tree),
                     (QStringList{QStringLiteral("src"), QStringLiteral("README.md")}));
        const SessionRow row = c.sessionsModel()->session(0);
        QVERIFY(row.state == SessionState::Running);
        QVERIFY(!row.ownerId.isEmpty());
        QCOMPARE(row.backend, QStringLiteral("LocalSandboxBackend"));
        // The console agent is attached read-write and shows in the agents panel.
        QCOMPARE(c.agentsModel()->rowCount(), 1);
        QCOMPARE(c.agentsModel()->agent(0).name, SandboxController::consoleAgent());
    }

    void consoleStreamsAndFinishes()
    {
        SandboxController c;
        c.addSandbox(spec(QStringLiteral("console"), false));
        QVERIFY(waitStarted(c, QStringLiteral("console")));
        QSignalSpy finished(&c, &SandboxController::commandFinished);
        const quint64 id = c.execute(QStringLiteral("console"),
                                     QStringLiteral("echo one; sleep 0.3; echo two >&2; exit 3"));
        QVERIFY(id > 0);
        ConsoleHistoryModel *console = c.consoleModel(QStringLiteral("console"));
        QCOMPARE(console->rowCount(), 1);
        // stdout streams in before the command ends.
        QTRY_COMPARE(console->entry(0).stdoutData(), QByteArray("one\n"));
        QVERIFY(console->entry(0).running);
        QTRY_COMPARE(finished.size(), 1);
        const auto r = finished.first().at(2).value<ExecuteResult>();
        QCOMPARE(r.exitCode, 3);
        QCOMPARE(console->entry(0).stderrData(), QByteArray("two\n"));
        QVERIFY(!console->entry(0).running);
        QCOMPARE(console->index(0).data(Roles::ExitCodeRole).toInt(), 3);
    }

    void cancelKillsTheCommand()
    {
        SandboxController c;
        c.addSandbox(spec(QStringLiteral("cancel"), false));
        QVERIFY(waitStarted(c, QStringLiteral("cancel")));
        QSignalSpy finished(&c, &SandboxController::commandFinished);
        const quint64 id = c.execute(QStringLiteral("cancel"), QStringLiteral("sleep 60"));
        QTRY_VERIFY(c.isCommandRunning(id));
        c.cancelCommand(id);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 20000);
        QVERIFY(finished.first().at(2).value<ExecuteResult>().cancelled);
    }

    void mutationsUpdateTheTreeIncrementally()
    {
        SandboxController c;
        c.addSandbox(spec(QStringLiteral("mut")));
        QVERIFY(waitStarted(c, QStringLiteral("mut")));
        WorkspaceTreeModel *tree = c.treeModel(QStringLiteral("mut"));
        tree->fetchMore({});
        QTRY_COMPARE(tree->rowCount(), 2);
        QSignalSpy reset(tree, &QAbstractItemModel::modelReset);

        // The window's own write (human actor)...
        c.writeFile(QStringLiteral("mut"), QStringLiteral("notes.txt"), "n\n");
        QTRY_VERIFY(rootNames(tree).contains(QStringLiteral("notes.txt")));
        QCOMPARE(readHostFile(c.sandbox(QStringLiteral("mut"))->options().seedFrom.value() +
                              QStringLiteral("/notes.txt")),
                 QByteArray("<missing>")); // not flushed

        // ...an agent's write through its tool...
        const AgentPtr agent = Agent::create(QStringLiteral("bot"));
        c.sandbox(QStringLiteral("mut"))->attach(agent);
        agent->callTool(QStringLiteral("write_file"),
                        {{QStringLiteral("path"), QStringLiteral("bot.txt")},
                         {QStringLiteral("content"), QStringLiteral("b")}});
        QTRY_VERIFY(rootNames(tree).contains(QStringLiteral("bot.txt")));

        // ...a command...
        c.execute(QStringLiteral("mut"), QStringLiteral("touch made-by-command"));
        QTRY_VERIFY(rootNames(tree).contains(QStringLiteral("made-by-command")));

        // ...and a delete.
        c.deleteFiles(QStringLiteral("mut"), {QStringLiteral("notes.txt")});
        QTRY_VERIFY(!rootNames(tree).contains(QStringLiteral("notes.txt")));
        QCOMPARE(reset.size(), 0);

        // Files changed since seeding are marked.
        const QModelIndex bot = tree->indexForPath(QStringLiteral("bot.txt"));
        QCOMPARE(bot.data(Roles::ChangeMarkRole).toInt(), int(ChangeMark::Added));
        const QModelIndex readme = tree->indexForPath(QStringLiteral("README.md"));
        QCOMPARE(readme.data(Roles::ChangeMarkRole).toInt(), int(ChangeMark::None));

        // The bot's calls show in the agents panel.
        c.refreshPanels();
        const int row = c.agentsModel()->rowOf(QStringLiteral("mut"), QStringLiteral("bot"));
        QVERIFY(row >= 0);
        QCOMPARE(c.agentsModel()->agent(row).toolCalls, 1);
        QCOMPARE(c.agentsModel()->agent(row).recentCalls.size(), 1);
    }

    void failuresAreReported()
    {
        SandboxController c;
        c.addSandbox(spec(QStringLiteral("fail"), false));
        QVERIFY(waitStarted(c, QStringLiteral("fail")));
        QSignalSpy failed(&c, &SandboxController::operationFailed);
        c.readFile(QStringLiteral("fail"), QStringLiteral("../etc/passwd"));
        QTRY_COMPARE(failed.size(), 1);
        QCOMPARE(failed.first().at(1).toString(), QStringLiteral("read_file"));
        QCOMPARE(failed.first().at(2).toString(), QStringLiteral("PermissionError"));
        QVERIFY_THROWS_EXCEPTION(ValueError, c.addSandbox(spec(QStringLiteral("fail"))));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 c.readFile(QStringLiteral("nope"), QStringLiteral("x")));
    }

    void attachAndDetachAgents()
    {
        SandboxController c;
        c.addSandbox(spec(QStringLiteral("agents"), false));
        QVERIFY(waitStarted(c, QStringLiteral("agents")));
        c.attachAgent(QStringLiteral("agents"), QStringLiteral("reviewer"),
                      SandboxAttachMode::ReadOnly)
            .waitForFinished();
        QTRY_VERIFY(c.agentsModel()->rowOf(QStringLiteral("agents"), QStringLiteral("reviewer")) >=
                    0);
        const int row =
            c.agentsModel()->rowOf(QStringLiteral("agents"), QStringLiteral("reviewer"));
        QCOMPARE(c.agentsModel()->agent(row).mode, QStringLiteral("read_only"));
        QCOMPARE(c.agentsModel()->agent(row).tools,
                 elsai::test::sortedSandboxTools(SandboxAttachMode::ReadOnly));
        c.changeAgentMode(QStringLiteral("agents"), QStringLiteral("reviewer"),
                          SandboxAttachMode::ReadWrite)
            .waitForFinished();
        QTRY_COMPARE(c.agentsModel()
                         ->agent(c.agentsModel()->rowOf(QStringLiteral("agents"),
                                                        QStringLiteral("reviewer")))
                         .mode,
                     QStringLiteral("read_write"));
        c.detachAgent(QStringLiteral("agents"), QStringLiteral("reviewer")).waitForFinished();
        QTRY_COMPARE(c.agentsModel()->rowOf(QStringLiteral("agents"), QStringLiteral("reviewer")),
                     -1);
    }

    void attachingAnAttachedNameIsRefused()
    {
        SandboxController c;
        c.addSandbox(spec(QStringLiteral("once"), false));
        QVERIFY(waitStarted(c, QStringLiteral("once")));
        c.attachAgent(QStringLiteral("once"), QStringLiteral("bob"), SandboxAttachMode::ReadOnly)
            .waitForFinished();
        // Again (either mode): refused before anything runs; the mode stays.
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 c.attachAgent(QStringLiteral("once"), QStringLiteral("bob"),
                                               SandboxAttachMode::ReadWrite));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 c.attachAgent(QStringLiteral("once"), QStringLiteral("bob"),
                                               SandboxAttachMode::ReadOnly));
        QVERIFY_THROWS_EXCEPTION(ValueError, c.attachAgent(QStringLiteral("once"),
                                                           SandboxController::consoleAgent(),
                                                           SandboxAttachMode::ReadOnly));
        c.waitForIdle();
        const auto modeOf = [&c] {
            return c.agentsModel()
                ->agent(c.agentsModel()->rowOf(QStringLiteral("once"), QStringLiteral("bob")))
                .mode;
        };
        QCOMPARE(modeOf(), QStringLiteral("read_only"));
        // Explicitly: the mode changes.
        c.changeAgentMode(QStringLiteral("once"), QStringLiteral("bob"),
                          SandboxAttachMode::ReadWrite)
            .waitForFinished();
        QTRY_COMPARE(modeOf(), QStringLiteral("read_write"));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 c.changeAgentMode(QStringLiteral("once"), QStringLiteral("nobody"),
                                                   SandboxAttachMode::ReadWrite));
    }

    void missingSeedFolderIsAWarning()
    {
        SandboxController c;
        QSignalSpy warned(&c, &SandboxController::operationWarning);
        SandboxSpec s = spec(QStringLiteral("noseed"), false);
        s.seedFrom = m_tmp.filePath(QStringLiteral("no-such-folder"));
        c.addSandbox(s);
        QTRY_VERIFY(c.state(QStringLiteral("noseed")) == SessionState::Running ||
                    c.state(QStringLiteral("noseed")) == SessionState::Failed);
        if (c.state(QStringLiteral("noseed")) == SessionState::Running) {
            QTRY_COMPARE(warned.size(), 1);
            QCOMPARE(warned.first().at(1).toString(), QStringLiteral("seed"));
            QVERIFY(warned.first().at(2).toString().contains(QStringLiteral("no-such-folder")));
        }
        const int row = c.sessionsModel()->rowOf(QStringLiteral("noseed"));
        QVERIFY(c.sessionsModel()->session(row).message.contains(QStringLiteral("no-such-folder")));
    }

    void shutdownIsOrderedQuietAndFinal()
    {
        SandboxController c;
        c.addSandbox(spec(QStringLiteral("quit"), false));
        QVERIFY(waitStarted(c, QStringLiteral("quit")));
        const quint64 id = c.execute(QStringLiteral("quit"), QStringLiteral("sleep 600"));
        QVERIFY(id);
        QTest::qWait(100);
        QSignalSpy finished(&c, &SandboxController::commandFinished);
        QSignalSpy stopped(&c, &SandboxController::sandboxStopped);
        QSignalSpy failed(&c, &SandboxController::operationFailed);
        c.shutdown(); // returns once the command was killed and the sandbox stopped
        QVERIFY(c.isShuttingDown());
        QCOMPARE(c.runningCommandCount(), 0);
        QVERIFY(c.workspaceIds().isEmpty());
        QCoreApplication::processEvents();
        QTest::qWait(50);
        QCOMPARE(finished.size() + stopped.size() + failed.size(), 0); // nothing after it
        // It takes no more work.
        QCOMPARE(c.execute(QStringLiteral("quit"), QStringLiteral("true")), quint64(0));
        QVERIFY_THROWS_EXCEPTION(ValueError, c.addSandbox(spec(QStringLiteral("late"), false)));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 c.readFile(QStringLiteral("quit"), QStringLiteral("x")));
        c.shutdown(); // idempotent
    }

    void auditRowsArrive()
    {
        SandboxController c;
        c.addSandbox(spec(QStringLiteral("audit"), false));
        QVERIFY(waitStarted(c, QStringLiteral("audit")));
        c.auditModel()->flush();
        QTRY_VERIFY(c.auditModel()->rowCount() >= 2); // sandbox.start, attach (console)
        const int before = c.auditModel()->rowCount();
        c.makeFolder(QStringLiteral("audit"), QStringLiteral("made"));
        QTRY_COMPARE(c.auditModel()->rowCount(), before + 1);
        const AuditEvent last = c.auditModel()->event(c.auditModel()->rowCount() - 1);
        QCOMPARE(last.event, QStringLiteral("sandbox.make_folder"));
        QCOMPARE(last.actor, SandboxController::humanActor());
    }

    void flushPreviewThenFlush()
    {
        SandboxController c;
        SandboxSpec s = spec(QStringLiteral("flush"));
        const QString project = *s.seedFrom;
        c.addSandbox(s);
        QVERIFY(waitStarted(c, QStringLiteral("flush")));
        c.writeFile(QStringLiteral("flush"), QStringLiteral("src/new.py"), "x = 1\n")
            .waitForFinished();
        auto plan = c.planFlush(QStringLiteral("flush"));
        plan.waitForFinished();
        const std::optional<SyncPlan> planned = plan.result();
        QVERIFY(planned.has_value());
        bool sawAdd = false;
        for (const SyncPlanEntry &e : planned->entries)
            sawAdd |=
                e.path == QLatin1String("src/new.py") && e.action == SyncPlanEntry::Action::Add;
        QVERIFY(sawAdd);
        QSignalSpy progress(&c, &SandboxController::flushProgress);
        auto result = c.flush(QStringLiteral("flush"));
        result.waitForFinished();
        QCOMPARE(result.result()->filesSynced, 1);
        QCOMPARE(readHostFile(project + QStringLiteral("/src/new.py")), QByteArray("x = 1\n"));
        QTRY_VERIFY(!progress.isEmpty());
    }

    void expiryIsShownWithItsReason()
    {
        SandboxController c;
        double now = 0;
        SandboxSpec s = spec(QStringLiteral("expire"), false);
        s.ttlSeconds = 60;
        const SandboxPtr sandbox = c.addSandbox(s, false);
        sandbox->manager()->setClock([&] { return now; });
        c.startSandbox(QStringLiteral("expire"));
        QVERIFY(waitStarted(c, QStringLiteral("expire")));
        QSignalSpy stopped(&c, &SandboxController::sandboxStopped);
        c.refreshPanels();
        QCOMPARE(c.sessionsModel()->session(0).ttlRemaining().value_or(-1), 60.0);
        now += 61;
        sandbox->manager()->cleanupExpired();
        QTRY_VERIFY(c.state(QStringLiteral("expire")) == SessionState::Expired);
        QCOMPARE(stopped.size(), 1);
        QVERIFY(stopped.first().at(1).toString().contains(QStringLiteral("expired")));
        QVERIFY(c.sessionsModel()->session(0).message.contains(QStringLiteral("expired")));
        // It can be started again.
        c.startSandbox(QStringLiteral("expire"));
        QVERIFY(waitStarted(c, QStringLiteral("expire")));
    }

    void stopAndRemove()
    {
        SandboxController c;
        SandboxSpec s = spec(QStringLiteral("stop"));
        const QString project = *s.seedFrom;
        const QString root = s.workspaceRoot;
        c.addSandbox(s);
        QVERIFY(waitStarted(c, QStringLiteral("stop")));
        c.writeFile(QStringLiteral("stop"), QStringLiteral("src/kept.py"), "k\n").waitForFinished();
        QSignalSpy stopped(&c, &SandboxController::sandboxStopped);
        c.stopSandbox(QStringLiteral("stop"), true);
        QTRY_VERIFY(c.state(QStringLiteral("stop")) == SessionState::Stopped);
        QCOMPARE(stopped.size(), 1);
        QCOMPARE(readHostFile(project + QStringLiteral("/src/kept.py")), QByteArray("k\n"));
        c.removeSandbox(QStringLiteral("stop"));
        QCOMPARE(c.sessionsModel()->rowCount(), 0);
        QVERIFY(!c.treeModel(QStringLiteral("stop")));
        QVERIFY(QFile::exists(root + QStringLiteral("/src/kept.py"))); // never deleted
    }

    // Start pressed while the sandbox still stops (or Stop while it starts) runs after it, and
    // the last one asked for decides the state: the earlier one's end never overrides it.
    void startAndStopRunInTheOrderAsked()
    {
        SandboxController c;
        const QString id = QStringLiteral("again");
        c.addSandbox(spec(id));
        QVERIFY(waitStarted(c, id));
        QSignalSpy started(&c, &SandboxController::sandboxStarted);
        for (int round = 0; round < 5; ++round) {
            c.stopSandbox(id, false);
            c.startSandbox(id);
            QVERIFY(waitStarted(c, id));
            QTRY_COMPARE(started.size(), round + 1);
            QTest::qWait(50); // a stop finishing late would show now
            QVERIFY(c.state(id) == SessionState::Running);
            QVERIFY(c.sandbox(id)->isStarted());
        }
        c.startSandbox(id); // already running: a no-op start, then the stop decides
        c.stopSandbox(id, false);
        QTRY_VERIFY(c.state(id) == SessionState::Stopped);
        QTest::qWait(50);
        QVERIFY(c.state(id) == SessionState::Stopped);
        QVERIFY(!c.sandbox(id)->isStarted());
    }
};

QTEST_GUILESS_MAIN(TestSandboxController)
#include "tst_sandboxcontroller.moc"
