// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agent.h"
#include "errors.h"
#include "hosttools.h"
#include "localsandboxbackend.h"
#include "offload.h"
#include "sandbox.h"
#include "sandboxplugin.h"
#include "testutil.h"
#include "workspace.h"

#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

class TestAgent : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;
    QString fresh(const char *what)
    {
        return m_tmp.filePath(QStringLiteral("%1-%2").arg(QLatin1String(what)).arg(++m_n));
    }

    SandboxPtr startedSandbox()
    {
        auto s = Sandbox::create(QStringLiteral("agent-test-%1").arg(++m_n),
                                 std::make_shared<LocalSandboxBackend>(fresh("ws")), 600);
        s->start();
        return s;
    }

private Q_SLOTS:
    void enumNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("valid");
        for (const char *n : {"off", "sandbox", "local_dev"})
            QTest::newRow(n) << QString::fromLatin1(n) << true;
        QTest::newRow("upper") << QStringLiteral("SANDBOX") << false;
        QTest::newRow("empty") << QString() << false;
    }

    void enumNames()
    {
        QFETCH(QString, name);
        QFETCH(bool, valid);
        if (valid)
            QCOMPARE(toString(sandboxModeFromString(name)), name);
        else
            QVERIFY_THROWS_EXCEPTION(ValueError, sandboxModeFromString(name));
        QCOMPARE(toString(attachModeFromString(QStringLiteral("read_only"))),
                 QStringLiteral("read_only"));
        QVERIFY_THROWS_EXCEPTION(ValueError, attachModeFromString(QStringLiteral("rw")));
    }

    void workspaceIdHelpers()
    {
        QCOMPARE(workspaceIdForRun(QStringLiteral("42")), QStringLiteral("graph-42"));
        QCOMPARE(workspaceIdForContext(QStringLiteral("ctx")), QStringLiteral("ctx"));
        QCOMPARE(workspaceIdForContext(QStringLiteral("ctx"), true),
                 QStringLiteral("ctx:shared-ws"));
    }

    void constants()
    {
        QCOMPARE(HOST_EXECUTION_TOOL_NAMES,
                 (QStringList{QStringLiteral("shell"), QStringLiteral("python_repl"),
                              QStringLiteral("file_read"), QStringLiteral("file_write"),
                              QStringLiteral("environment")}));
        QCOMPARE(SANDBOX_OFFLOAD_TOOL_NAMES,
                 (QStringList{QStringLiteral("execute"), QStringLiteral("read_file"),
                              QStringLiteral("write_file"), QStringLiteral("list_dir")}));
        const WorkspaceSyncPolicy p = defaultSandboxSyncPolicy();
        QCOMPARE(p.excludePatterns, DEFAULT_SANDBOX_SEED_EXCLUDES);
        QCOMPARE(p.syncIncludePatterns.value(), DEFAULT_SANDBOX_SYNC_INCLUDE);
        const AgentConfig c;
        QCOMPARE(c.workspaceSyncPolicy.excludePatterns,
                 (QStringList{QStringLiteral(".git"), QStringLiteral("node_modules"),
                              QStringLiteral("__pycache__"), QStringLiteral(".venv")}));
        QVERIFY(!c.workspaceSyncPolicy.syncIncludePatterns);
        QVERIFY(c.sandboxMode == SandboxMode::Off);
        QVERIFY(c.sandboxAttachMode == SandboxAttachMode::ReadWrite);
        QVERIFY(!c.sandbox && !c.sandboxManager && !c.sandboxOutputOffload && !c.workspaceRoot);
    }

    void configValidation_data()
    {
        QTest::addColumn<int>("combination");
        QTest::addColumn<QString>("messageStart");
        QTest::newRow("sandbox+execution_backend") << 0 << QStringLiteral("Dual config");
        QTest::newRow("sandbox+workspace_root")
            << 1 << QStringLiteral("Use Sandbox(seed_from=...)");
        QTest::newRow("sandbox+sandbox_manager")
            << 2 << QStringLiteral("Manager is owned by Sandbox");
        QTest::newRow("sandbox-mode-without-backend") << 3 << QStringLiteral("Missing backend");
    }

    void configValidation()
    {
        QFETCH(int, combination);
        QFETCH(QString, messageStart);
        AgentConfig c;
        const SandboxPtr s = combination < 3 ? startedSandbox() : SandboxPtr();
        c.sandbox = s;
        switch (combination) {
        case 0:
            c.executionBackend = std::make_shared<LocalSandboxBackend>(fresh("x"));
            break;
        case 1:
            c.workspaceRoot = fresh("x");
            break;
        case 2:
            c.sandboxManager = std::make_shared<SandboxManager>();
            break;
        case 3:
            c.sandboxMode = SandboxMode::Sandbox;
            break;
        }
        try {
            Agent::create(QStringLiteral("a"), c);
            QFAIL("no error");
        } catch (const ValueError &e) {
            QVERIFY2(e.message().startsWith(messageStart), qPrintable(e.message()));
            QCOMPARE(e.specName(), QStringLiteral("ValueError"));
        }
        if (s) {
            QVERIFY(s->attachedAgents().isEmpty()); // nothing attached by a refused config
            s->stop(false);
        }
    }

    void sandboxConfigAttachesAtInit()
    {
        const SandboxPtr s = startedSandbox();
        AgentConfig c;
        c.sandbox = s;
        c.sandboxAttachMode = SandboxAttachMode::ReadOnly;
        const AgentPtr a = Agent::create(QStringLiteral("ro"), c);
        QCOMPARE(a->attachedSandbox(), s);
        QCOMPARE(a->tools().names(), elsai::test::sortedSandboxTools(SandboxAttachMode::ReadOnly));
        QVERIFY(sandboxIsActive(*a));
        QVERIFY(workspaceIsPrepared(*a));
        s->stop(false);

        auto notStarted = Sandbox::create(QStringLiteral("not-started"),
                                          std::make_shared<LocalSandboxBackend>(fresh("ws")), 60);
        AgentConfig c2;
        c2.sandbox = notStarted;
        QVERIFY_THROWS_EXCEPTION(SandboxAttachError, Agent::create(QStringLiteral("b"), c2));
    }

    void hostToolsBlockedInSandboxMode_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<bool>("blocked");
        QTest::newRow("off") << int(SandboxMode::Off) << false;
        QTest::newRow("sandbox") << int(SandboxMode::Sandbox) << true;
        QTest::newRow("local_dev") << int(SandboxMode::LocalDev) << false;
    }

    void hostToolsBlockedInSandboxMode()
    {
        QFETCH(int, mode);
        QFETCH(bool, blocked);
        AgentConfig c;
        c.sandboxMode = SandboxMode(mode);
        if (c.sandboxMode != SandboxMode::Off)
            c.executionBackend = std::make_shared<LocalSandboxBackend>(fresh("ws"));
        c.tools = hostExecutionTools();
        const AgentPtr a = Agent::create(QStringLiteral("host-%1").arg(mode), c);
        for (const QString &name : HOST_EXECUTION_TOOL_NAMES)
            QCOMPARE(a->tools().contains(name), !blocked);
        QCOMPARE(a->blockedTools().size(), blocked ? 5 : 0);
        if (blocked) {
            try {
                a->callTool(QStringLiteral("shell"),
                            {{QStringLiteral("command"), QStringLiteral("true")}});
                QFAIL("shell ran in sandbox mode");
            } catch (const ToolNotFoundError &e) {
                QVERIFY(e.message().contains(QStringLiteral("blocked in sandbox mode")));
            }
        } else {
            const ToolResult r =
                a->callTool(QStringLiteral("shell"),
                            {{QStringLiteral("command"), QStringLiteral("echo host")}});
            QCOMPARE(r.data.value(QStringLiteral("output")).toString(), QStringLiteral("host\n"));
        }
        // The sandbox tools are there whenever a backend is active.
        QCOMPARE(a->tools().contains(QStringLiteral("read_file")),
                 c.sandboxMode != SandboxMode::Off);
    }

    // Blocking holds however a host execution tool reaches the agent: added after
    // construction, it is refused by the registry and calling it stays blocked.
    void hostToolsAddedLaterAreBlockedInSandboxMode()
    {
        AgentConfig c;
        c.sandboxMode = SandboxMode::Sandbox;
        c.executionBackend = std::make_shared<LocalSandboxBackend>(fresh("ws"));
        const AgentPtr a = Agent::create(QStringLiteral("late-host"), c);
        QVERIFY(a->blockedTools().isEmpty());
        for (const Tool &t : hostExecutionTools())
            QVERIFY(!a->tools().add(t));
        for (const QString &name : HOST_EXECUTION_TOOL_NAMES)
            QVERIFY2(!a->tools().contains(name), qPrintable(name));
        QCOMPARE(a->blockedTools().size(), 5);
        const QString marker = fresh("ran");
        try {
            a->callTool(QStringLiteral("shell"),
                        {{QStringLiteral("command"), QStringLiteral("touch ") + marker}});
            QFAIL("shell ran in sandbox mode");
        } catch (const ToolNotFoundError &e) {
            QVERIFY(e.message().contains(QStringLiteral("blocked in sandbox mode")));
        }
        QVERIFY(!QFileInfo::exists(marker));
        // local_dev keeps them
        AgentConfig dev;
        dev.sandboxMode = SandboxMode::LocalDev;
        dev.executionBackend = std::make_shared<LocalSandboxBackend>(fresh("ws"));
        const AgentPtr d = Agent::create(QStringLiteral("late-host-dev"), dev);
        QVERIFY(d->tools().add(hostExecutionTools().first()));
    }

    void offloadPolicyNeedsAStorage()
    {
        AgentConfig c;
        c.sandbox = startedSandbox();
        c.sandboxOutputOffload = SandboxOutputOffloadPolicy{};
        QVERIFY_THROWS_EXCEPTION(ValueError, Agent::create(QStringLiteral("no-storage"), c));
        c.sandboxOutputOffload->storage = std::make_shared<InMemoryStorage>();
        QVERIFY(Agent::create(QStringLiteral("with-storage"), c));
    }

    // "Auto-created when sandbox mode is enabled without sandbox=": local_dev too, and before
    // a backend is given.
    void managerIsAutoCreatedWhenSandboxModeIsOn_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<bool>("withBackend");
        QTest::addColumn<bool>("managed");
        QTest::newRow("off") << int(SandboxMode::Off) << true << false;
        QTest::newRow("sandbox") << int(SandboxMode::Sandbox) << true << true;
        QTest::newRow("local_dev") << int(SandboxMode::LocalDev) << true << true;
        QTest::newRow("local_dev, no backend") << int(SandboxMode::LocalDev) << false << true;
    }
    void managerIsAutoCreatedWhenSandboxModeIsOn()
    {
        QFETCH(int, mode);
        QFETCH(bool, withBackend);
        QFETCH(bool, managed);
        AgentConfig c;
        c.sandboxMode = SandboxMode(mode);
        if (withBackend)
            c.executionBackend = std::make_shared<LocalSandboxBackend>(fresh("ws"));
        const AgentPtr a = Agent::create(QStringLiteral("managed-%1").arg(++m_n), c);
        QCOMPARE(bool(a->sandboxManager()), managed);
    }

    void syncPolicyDefaultsAreTheSpecs()
    {
        const WorkspaceSyncPolicy p;
        QCOMPARE(p.excludePatterns,
                 (QStringList{QStringLiteral(".git"), QStringLiteral("node_modules"),
                              QStringLiteral("__pycache__"), QStringLiteral(".venv")}));
        QVERIFY(!p.syncIncludePatterns);
        QCOMPARE(AgentConfig().workspaceSyncPolicy.excludePatterns, p.excludePatterns);
    }

    void hostToolsReallyRun()
    {
        AgentConfig c;
        c.tools = hostExecutionTools();
        const AgentPtr a = Agent::create(QStringLiteral("host"), c);
        const QString file = fresh("host-file") + QStringLiteral(".txt");
        a->callTool(QStringLiteral("file_write"),
                    {{QStringLiteral("path"), file},
                     {QStringLiteral("content"), QStringLiteral("on host")}});
        QCOMPARE(readHostFile(file), QByteArray("on host"));
        QCOMPARE(a->callTool(QStringLiteral("file_read"), {{QStringLiteral("path"), file}}).text,
                 QStringLiteral("on host"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, a->callTool(QStringLiteral("file_read"),
                                                                {{QStringLiteral("path"),
                                                                  file + QStringLiteral(".no")}}));
        qputenv("ELSAI_AGENT_TEST_VAR", "42");
        QCOMPARE(a->callTool(QStringLiteral("environment"),
                             {{QStringLiteral("name"), QStringLiteral("ELSAI_AGENT_TEST_VAR")}})
                     .text,
                 QStringLiteral("42"));
        QVERIFY(a->callTool(QStringLiteral("environment"), {})
                    .text.contains(QStringLiteral("ELSAI_AGENT_TEST_VAR")));
        const ToolResult shell = a->callTool(
            QStringLiteral("shell"), {{QStringLiteral("command"), QStringLiteral("exit 4")}});
        QCOMPARE(shell.data.value(QStringLiteral("exit_code")).toInt(), 4);
        if (!QStandardPaths::findExecutable(QStringLiteral("python3")).isEmpty()) {
            const ToolResult py =
                a->callTool(QStringLiteral("python_repl"),
                            {{QStringLiteral("code"), QStringLiteral("print('it''s', 6*7)")}});
            QCOMPARE(py.data.value(QStringLiteral("output")).toString(),
                     QStringLiteral("its 42\n"));
        }
    }

    void unknownToolAndArguments()
    {
        const SandboxPtr s = startedSandbox();
        const AgentPtr a = Agent::create(QStringLiteral("args"));
        s->attach(a);
        QVERIFY_THROWS_EXCEPTION(ToolNotFoundError, a->callTool(QStringLiteral("nope")));
        QVERIFY_THROWS_EXCEPTION(ValueError, a->callTool(QStringLiteral("read_file"), {}));
        QVERIFY_THROWS_EXCEPTION(
            ValueError, a->callTool(QStringLiteral("read_file"), {{QStringLiteral("path"), 3}}));
        QVERIFY_THROWS_EXCEPTION(
            ValueError,
            a->callTool(QStringLiteral("read_file"), {{QStringLiteral("path"), QStringLiteral("x")},
                                                      {QStringLiteral("offset"), 1.5}}));
        const AgentActivity act = a->activity();
        QCOMPARE(act.toolCalls, 4);
        QCOMPARE(act.lastTool, QStringLiteral("read_file"));
        QCOMPARE(act.lastOutcome, QStringLiteral("ValueError"));
        s->stop(false);
    }

    void perAgentPathPreparesOnFirstInvocation()
    {
        const QString project = fresh("project");
        writeHostFile(project + QStringLiteral("/src/main.py"), "print(1)\n");
        writeHostFile(project + QStringLiteral("/.venv/lib.py"), "venv\n");
        writeHostFile(project + QStringLiteral("/keep.env"),
                      "kept: not a default policy exclude\n");
        const QString ws = fresh("ws");
        AgentConfig c;
        c.sandboxMode = SandboxMode::Sandbox;
        c.executionBackend = std::make_shared<LocalSandboxBackend>(ws);
        c.workspaceRoot = project;
        c.workspaceSyncPolicy.syncIncludePatterns = QStringList{QStringLiteral("src/**")};
        const AgentPtr a = Agent::create(QStringLiteral("solo"), c);
        QVERIFY(a->sandboxManager()); // auto-created
        QVERIFY(sandboxIsActive(*a));
        QVERIFY(!workspaceIsPrepared(*a));
        QVERIFY(!a->sandboxManager()->getSession(QStringLiteral("solo"))); // nothing created yet
        QCOMPARE(a->tools().names(), elsai::test::sortedSandboxTools(SandboxAttachMode::ReadWrite));

        const ToolResult r = a->callTool(QStringLiteral("read_file"),
                                         {{QStringLiteral("path"), QStringLiteral("src/main.py")}});
        QCOMPARE(r.text, QStringLiteral("print(1)\n"));
        QVERIFY(workspaceIsPrepared(*a));
        const auto session = a->sandboxManager()->getSession(QStringLiteral("solo"));
        QVERIFY(session && session->prepared && session->seedResult);
        QCOMPARE(session->seedResult->filesSeeded, 2);
        QVERIFY(!QFile::exists(ws + QStringLiteral("/.venv/lib.py")));

        a->callTool(QStringLiteral("execute"),
                    {{QStringLiteral("command"), QStringLiteral("echo 'x = 2' > src/new.py")}});
        const auto sync = syncWorkspaceArtifacts(*a);
        QVERIFY(sync);
        QCOMPARE(readHostFile(project + QStringLiteral("/src/new.py")), QByteArray("x = 2\n"));

        QVERIFY(closeSandboxWorkspace(*a, false) == std::nullopt);
        QVERIFY(!a->sandboxManager()->getSession(QStringLiteral("solo")));
        // A later call prepares a new session again (orchestrator runs before each invocation).
        a->callTool(QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral(".")}});
        QVERIFY(workspaceIsPrepared(*a));
    }

    void sharedManagerAndSessionIdForPerAgentPath()
    {
        auto manager = std::make_shared<SandboxManager>(std::nullopt);
        const QString ws = fresh("ws");
        auto make = [&](const QString &id) {
            AgentConfig c;
            c.sandboxMode = SandboxMode::LocalDev;
            c.executionBackend = std::make_shared<LocalSandboxBackend>(ws);
            c.sandboxManager = manager;
            c.sessionId = QStringLiteral("conversation-1");
            return Agent::create(id, c);
        };
        const AgentPtr a = make(QStringLiteral("a"));
        const AgentPtr b = make(QStringLiteral("b"));
        QCOMPARE(a->sandboxManager(), manager);
        a->callTool(QStringLiteral("write_file"),
                    {{QStringLiteral("path"), QStringLiteral("f")},
                     {QStringLiteral("content"), QStringLiteral("from a")}});
        QCOMPARE(b->callTool(QStringLiteral("read_file"),
                             {{QStringLiteral("path"), QStringLiteral("f")}})
                     .text,
                 QStringLiteral("from a"));
        QCOMPARE(manager->sessions().size(), 1);
        QCOMPARE(manager->sessions().first().sessionId, QStringLiteral("conversation-1"));
    }

    void prepareErrorsRaiseWorkspacePrepareError()
    {
        AgentConfig c;
        c.sandboxMode = SandboxMode::Sandbox;
        c.executionBackend = std::make_shared<LocalSandboxBackend>(fresh("ws"));
        c.workspaceRoot = fresh("missing-project");
        const AgentPtr a = Agent::create(QStringLiteral("broken"), c);
        QVERIFY_THROWS_EXCEPTION(WorkspacePrepareError, prepareWorkspace(*a));
        QVERIFY(!workspaceIsPrepared(*a));
        QVERIFY_THROWS_EXCEPTION(WorkspacePrepareError,
                                 a->callTool(QStringLiteral("list_dir"),
                                             {{QStringLiteral("path"), QStringLiteral(".")}}));
    }

    void offModeWithBackendIsInactive()
    {
        AgentConfig c;
        c.executionBackend = std::make_shared<LocalSandboxBackend>(fresh("ws"));
        const AgentPtr a = Agent::create(QStringLiteral("off"), c);
        QVERIFY(!sandboxIsActive(*a));
        QVERIFY(a->tools().names().isEmpty());
        QVERIFY(!prepareWorkspace(*a));
        QVERIFY_THROWS_EXCEPTION(AgentSandboxDetachedError,
                                 writeWorkspaceFile(*a, QStringLiteral("x"), QStringLiteral("y")));
    }

    void orchestratorHookRunsBeforeEachInvocation()
    {
        struct Counter : AgentHook
        {
            int calls = 0;
            void beforeInvocation(Agent &) override { ++calls; }
        };
        const SandboxPtr s = startedSandbox();
        const AgentPtr a = Agent::create(QStringLiteral("hooked"));
        s->attach(a);
        auto counter = std::make_shared<Counter>();
        a->addHook(counter);
        a->callTool(QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral(".")}});
        a->beginInvocation();
        QCOMPARE(counter->calls, 2);
        s->stop(false);
    }

    void syncForSandboxIsFlushAlias()
    {
        const QString project = fresh("project");
        writeHostFile(project + QStringLiteral("/a.md"), "a\n");
        Sandbox::Options o;
        o.seedFrom = project;
        auto s = Sandbox::create(QStringLiteral("alias"),
                                 std::make_shared<LocalSandboxBackend>(fresh("ws")), 60, o);
        s->start();
        s->addFiles({{QStringLiteral("b.md"), FileSource::text(QStringLiteral("b\n"))}});
        const AgentPtr a = Agent::create(QStringLiteral("x"));
        s->attach(a);
        QCOMPARE(syncWorkspaceForSandbox(*s)->filesSynced, 1);
        QCOMPARE(readHostFile(project + QStringLiteral("/b.md")), QByteArray("b\n"));
        QVERIFY(syncWorkspaceArtifacts(*a)); // attached agent → the sandbox's flush
        s->stop(false);
    }
};

QTEST_GUILESS_MAIN(TestAgent)
#include "tst_agent.moc"
