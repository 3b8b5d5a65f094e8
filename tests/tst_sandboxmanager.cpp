// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agent.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "sandboxmanager.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <thread>

using namespace elsai;

namespace {

/// Counts create/close calls; used to prove who builds and closes backends.
class CountingBackend : public LocalSandboxBackend
{
public:
    using LocalSandboxBackend::LocalSandboxBackend;
    void create() override
    {
        ++creates;
        LocalSandboxBackend::create();
    }
    void close() override
    {
        ++closes;
        LocalSandboxBackend::close();
    }
    std::atomic_int creates{0};
    std::atomic_int closes{0};
};

class PerSessionTemplate : public BackendTemplate
{
public:
    explicit PerSessionTemplate(QString root) : m_root(std::move(root)) {}
    QString typeName() const override { return QStringLiteral("PerSessionTemplate"); }
    BackendPtr buildForSession(const QString &sessionId) override
    {
        built.append(sessionId);
        return std::make_shared<LocalSandboxBackend>(m_root + QLatin1Char('/') + sessionId);
    }
    BackendPtr buildDefault() override { return {}; }
    QStringList built;

private:
    QString m_root;
};

class DefaultOnlyTemplate : public BackendTemplate
{
public:
    explicit DefaultOnlyTemplate(QString root) : m_root(std::move(root)) {}
    QString typeName() const override { return QStringLiteral("DefaultOnlyTemplate"); }
    BackendPtr buildDefault() override
    {
        ++defaults;
        return std::make_shared<LocalSandboxBackend>(m_root);
    }
    int defaults = 0;

private:
    QString m_root;
};

} // namespace

class TestSandboxManager : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void defaults()
    {
        SandboxManager m;
        QCOMPARE(m.ttlSeconds(), std::optional<double>(3600.0));
        QVERIFY(m.sessions().isEmpty());
        QVERIFY(!m.getSession(QStringLiteral("x")));
        QVERIFY_THROWS_EXCEPTION(ValueError, SandboxManager(-1.0));
    }

    void getOrCreateBuildsOnce()
    {
        QTemporaryDir dir;
        auto backend = std::make_shared<CountingBackend>(dir.path());
        SandboxManager m;
        int factoryCalls = 0;
        const BackendFactory factory = [&] {
            ++factoryCalls;
            return backend;
        };
        const auto s1 = m.getOrCreate(QStringLiteral("ws"), factory);
        const auto s2 = m.getOrCreate(QStringLiteral("ws"), factory);
        QCOMPARE(factoryCalls, 1);
        QCOMPARE(backend->creates.load(), 1);
        QCOMPARE(s1.backend, s2.backend);
        QCOMPARE(s1.sessionId, QStringLiteral("ws"));
        QVERIFY(!s1.prepared);
        QVERIFY(!s1.ownerId);
        QVERIFY(s1.createdAt > 0);
    }

    void concurrentGetOrCreateYieldsOneSession()
    {
        QTemporaryDir dir;
        SandboxManager m;
        std::atomic_int built{0};
        const BackendFactory factory = [&] {
            ++built;
            return std::make_shared<LocalSandboxBackend>(dir.path());
        };
        QList<BackendPtr> seen(8);
        std::vector<std::thread> threads;
        for (int i = 0; i < 8; ++i)
            threads.emplace_back(
                [&, i] { seen[i] = m.getOrCreate(QStringLiteral("ws"), factory).backend; });
        for (auto &t : threads)
            t.join();
        for (const BackendPtr &b : seen)
            QCOMPARE(b, seen.first());
        QCOMPARE(m.sessions().size(), 1);
    }

    void claimSession()
    {
        QTemporaryDir dir;
        SandboxManager m;
        const auto factory = [&] { return std::make_shared<LocalSandboxBackend>(dir.path()); };
        const auto s = m.claimSession(QStringLiteral("ws"), factory, QStringLiteral("owner-a"));
        QCOMPARE(s.ownerId, std::optional<QString>(QStringLiteral("owner-a")));
        // The same owner may claim again; another owner may not.
        QCOMPARE(m.claimSession(QStringLiteral("ws"), factory, QStringLiteral("owner-a")).backend,
                 s.backend);
        QVERIFY_THROWS_EXCEPTION(
            SandboxStartError, m.claimSession(QStringLiteral("ws"), factory, QStringLiteral("b")));
        // An unowned session (per-agent path) is adopted.
        m.getOrCreate(QStringLiteral("free"), factory);
        QCOMPARE(m.claimSession(QStringLiteral("free"), factory, QStringLiteral("c")).ownerId,
                 std::optional<QString>(QStringLiteral("c")));
    }

    void claimFailureLeavesNoReservation()
    {
        SandboxManager m;
        const BackendFactory failing = []() -> BackendPtr { return nullptr; };
        QVERIFY_THROWS_EXCEPTION(
            SandboxStartError, m.claimSession(QStringLiteral("ws"), failing, QStringLiteral("a")));
        QVERIFY(!m.getSession(QStringLiteral("ws")));
    }

    void markPrepared()
    {
        QTemporaryDir dir;
        SandboxManager m;
        m.getOrCreate(QStringLiteral("ws"),
                      [&] { return std::make_shared<LocalSandboxBackend>(dir.path()); });
        WorkspaceSeedResult seed;
        seed.filesSeeded = 3;
        m.markPrepared(QStringLiteral("ws"), seed);
        const auto s = m.getSession(QStringLiteral("ws"));
        QVERIFY(s->prepared);
        QCOMPARE(s->seedResult->filesSeeded, 3);
        m.markPrepared(QStringLiteral("unknown")); // ignored, no throw
    }

    void closeSessionClosesBackendAndNotifies()
    {
        QTemporaryDir dir;
        auto backend = std::make_shared<CountingBackend>(dir.path());
        SandboxManager m;
        QStringList closed;
        m.addCloseListener([&](const QString &id, const QString &reason) {
            closed.append(id + QLatin1Char(':') + reason);
        });
        m.getOrCreate(QStringLiteral("ws"), [&] { return backend; });
        m.closeSession(QStringLiteral("ws"));
        QCOMPARE(backend->closes.load(), 1);
        QVERIFY(!m.getSession(QStringLiteral("ws")));
        QCOMPARE(closed, QStringList{QStringLiteral("ws:closed")});
        m.closeSession(QStringLiteral("ws")); // idempotent
        QCOMPARE(backend->closes.load(), 1);
        QVERIFY(QFileInfo(dir.path()).isDir()); // the local folder stays
    }

    void closeSessionSyncsPerAgentArtifacts()
    {
        QTemporaryDir project, ws;
        test::writeHostFile(project.filePath(QStringLiteral("src/a.py")), "a = 1\n");
        AgentConfig config;
        config.sandboxMode = SandboxMode::Sandbox;
        config.executionBackend = std::make_shared<LocalSandboxBackend>(ws.path());
        config.workspaceRoot = project.path();
        config.workspaceSyncPolicy.syncIncludePatterns = QStringList{QStringLiteral("src/**")};
        const AgentPtr agent = Agent::create(QStringLiteral("solo"), config);
        agent->callTool(QStringLiteral("write_file"),
                        {{QStringLiteral("path"), QStringLiteral("src/b.py")},
                         {QStringLiteral("content"), QStringLiteral("b = 2\n")}});
        const auto r =
            agent->sandboxManager()->closeSession(QStringLiteral("solo"), true, agent.get());
        QVERIFY(r);
        QCOMPARE(r->filesSynced, 1);
        QCOMPARE(test::readHostFile(project.filePath(QStringLiteral("src/b.py"))),
                 QByteArray("b = 2\n"));
    }

    void cleanupExpiredUsesIdleTime()
    {
        QTemporaryDir dir;
        SandboxManager m(10.0);
        double now = 1000;
        m.setClock([&] { return now; });
        const auto factory = [&] { return std::make_shared<LocalSandboxBackend>(dir.path()); };
        m.getOrCreate(QStringLiteral("idle"), factory);
        m.getOrCreate(QStringLiteral("busy"), factory);
        QStringList reasons;
        m.addCloseListener([&](const QString &id, const QString &reason) {
            reasons.append(id + QLatin1Char(':') + reason);
        });
        now += 6;
        m.touch(QStringLiteral("busy"));
        now += 5; // idle: 11 s, busy: 5 s
        test::AuditCapture audit;
        QCOMPARE(m.cleanupExpired(), QStringList{QStringLiteral("idle")});
        QCOMPARE(reasons, QStringList{QStringLiteral("idle:expired")});
        QVERIFY(!m.getSession(QStringLiteral("idle")));
        QVERIFY(m.getSession(QStringLiteral("busy")));
        QCOMPARE(audit.named(QStringLiteral("sandbox.expired")).size(), 1);
        now += 10.5;
        QCOMPARE(m.cleanupExpired(), QStringList{QStringLiteral("busy")});
        QVERIFY(m.cleanupExpired().isEmpty());
    }

    void cleanupExpiredDisabledWithoutTtl()
    {
        QTemporaryDir dir;
        SandboxManager m(std::nullopt);
        double now = 0;
        m.setClock([&] { return now; });
        m.getOrCreate(QStringLiteral("ws"),
                      [&] { return std::make_shared<LocalSandboxBackend>(dir.path()); });
        now = 1e9;
        QVERIFY(m.cleanupExpired().isEmpty());
        QVERIFY(m.getSession(QStringLiteral("ws")));
    }

    void defaultClockIsMonotonicSeconds()
    {
        SandboxManager m;
        const double a = m.now();
        QThread::msleep(20);
        const double b = m.now();
        QVERIFY(b > a);
        QVERIFY(b - a < 60); // seconds, not milliseconds
    }

    void resolveWorkspaceIdOrder()
    {
        QTemporaryDir dir;
        // agent id last
        const AgentPtr plain = Agent::create(QStringLiteral("agent-1"));
        QCOMPARE(SandboxManager::resolveWorkspaceId(*plain), QStringLiteral("agent-1"));
        // session manager's session id before it
        AgentConfig c;
        c.sessionId = QStringLiteral("conv-7");
        const AgentPtr withSession = Agent::create(QStringLiteral("agent-2"), c);
        QCOMPARE(SandboxManager::resolveWorkspaceId(*withSession), QStringLiteral("conv-7"));
        QCOMPARE(SandboxManager::resolveSessionId(*withSession), QStringLiteral("conv-7"));
        // the sandbox workspace id first
        auto sandbox = Sandbox::create(QStringLiteral("shared"),
                                       std::make_shared<LocalSandboxBackend>(dir.path()), 60);
        sandbox->start();
        sandbox->attach(withSession);
        QCOMPARE(SandboxManager::resolveWorkspaceId(*withSession), QStringLiteral("shared"));
        sandbox->stop(false);
    }

    void backendFactoryForSession()
    {
        QTemporaryDir dir;
        auto perSession = std::make_shared<PerSessionTemplate>(dir.path());
        const BackendPtr b1 =
            SandboxManager::backendFactoryForSession(perSession, QStringLiteral("s1"))();
        QCOMPARE(perSession->built, QStringList{QStringLiteral("s1")});
        QCOMPARE(static_cast<LocalSandboxBackend *>(b1.get())->workspaceRoot(),
                 dir.filePath(QStringLiteral("s1")));

        auto defaultOnly = std::make_shared<DefaultOnlyTemplate>(dir.path());
        QVERIFY(SandboxManager::backendFactoryForSession(defaultOnly, QStringLiteral("s2"))());
        QCOMPARE(defaultOnly->defaults, 1);

        auto instance = std::make_shared<LocalSandboxBackend>(dir.path());
        QCOMPARE(SandboxManager::backendFactoryForSession(instance, QStringLiteral("s3"))(),
                 BackendPtr(instance));
    }
};

QTEST_GUILESS_MAIN(TestSandboxManager)
#include "tst_sandboxmanager.moc"
