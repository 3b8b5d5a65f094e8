// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Load: 8 agents in parallel, each making 1,000 mixed tool calls (execute, write_file,
// read_file, list_dir) on one sandbox with the local backend. Checks that nothing deadlocks or
// crashes, that every call produces exactly one audit record (same agent, event and path), that
// every result belongs to its own call, and that file descriptors and threads go back to their
// baseline. ELSAI_LOAD_CALLS overrides the calls per agent (longer runs).
#include "agent.h"
#include "audit.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "procself.h"
#include "sandbox.h"
#include "testutil.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QtTest>

#include <atomic>
#include <map>
#include <thread>
#include <tuple>

using namespace elsai;

namespace {

int callsPerAgent()
{
    const int n = qEnvironmentVariableIntValue("ELSAI_LOAD_CALLS");
    return n > 0 ? n : 1000;
}

/// What one agent did, and whether every result matched its call.
struct AgentRun
{
    QString id;
    std::map<std::tuple<QString, QString>, int> calls; ///< (event, path) → count
    int mismatches = 0;
    QStringList firstMismatches;
    int errors = 0;

    void mismatch(const QString &what)
    {
        ++mismatches;
        if (firstMismatches.size() < 5)
            firstMismatches.append(what);
    }
};

void runAgent(const AgentPtr &agent, int calls, AgentRun *run)
{
    const QString dir = QStringLiteral("load/%1").arg(agent->id());
    QHash<QString, QString> written; // path → the content this agent last wrote there
    for (int i = 0; i < calls; ++i) {
        const QString token = QStringLiteral("%1-%2").arg(agent->id()).arg(i);
        const QString file = QStringLiteral("%1/f%2.txt").arg(dir).arg(i % 25);
        try {
            switch (i % 4) {
            case 0: {
                const ToolResult r = agent->callTool(
                    QStringLiteral("execute"),
                    {{QStringLiteral("command"), QStringLiteral("echo %1").arg(token)}});
                run->calls[{QStringLiteral("sandbox.execute"), QString()}]++;
                if (r.data.value(QLatin1String("output")).toString() != token + QLatin1Char('\n'))
                    run->mismatch(QStringLiteral("execute %1 → %2").arg(token, r.text));
                break;
            }
            case 1: {
                const ToolResult r = agent->callTool(
                    QStringLiteral("write_file"),
                    {{QStringLiteral("path"), file}, {QStringLiteral("content"), token}});
                run->calls[{QStringLiteral("sandbox.write_file"), file}]++;
                written[file] = token;
                if (r.data.value(QLatin1String("path")).toString() != file ||
                    r.data.value(QLatin1String("bytes")).toInteger() != token.size()) {
                    run->mismatch(QStringLiteral("write %1 → %2").arg(file, r.text));
                }
                break;
            }
            case 2: {
                // the file this agent wrote on its previous call
                const QString target = QStringLiteral("%1/f%2.txt").arg(dir).arg((i - 1) % 25);
                const ToolResult r = agent->callTool(QStringLiteral("read_file"),
                                                     {{QStringLiteral("path"), target}});
                run->calls[{QStringLiteral("sandbox.read_file"), target}]++;
                if (r.data.value(QLatin1String("content")).toString() != written.value(target))
                    run->mismatch(QStringLiteral("read %1 → %2").arg(target, r.text));
                break;
            }
            default: {
                const ToolResult r =
                    agent->callTool(QStringLiteral("list_dir"), {{QStringLiteral("path"), dir}});
                run->calls[{QStringLiteral("sandbox.list_dir"), dir}]++;
                const QJsonArray entries = r.data.value(QLatin1String("entries")).toArray();
                bool own = entries.size() == written.size();
                for (const QJsonValue &e : entries) {
                    own = own &&
                          written.contains(e.toObject().value(QLatin1String("path")).toString());
                }
                if (!own)
                    run->mismatch(QStringLiteral("list %1 → %2").arg(dir, r.text.left(200)));
                break;
            }
            }
        } catch (const SandboxError &e) {
            ++run->errors;
            run->mismatch(QStringLiteral("call %1 failed: %2").arg(i).arg(e.message()));
        }
    }
}

} // namespace

class TestLoad : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false")); }
    void eightAgentsInParallel();
};

void TestLoad::eightAgentsInParallel()
{
    constexpr int agentCount = 8;
    const int calls = callsPerAgent();
    QTemporaryDir ws;
    QVERIFY(ws.isValid());

    // Warm-up: one sandbox life with every tool, so lazily created process-wide state (thread
    // pools, the audit log, caches) exists before the baseline is taken.
    {
        auto sandbox =
            Sandbox::create(QStringLiteral("load-warmup"),
                            std::make_shared<LocalSandboxBackend>(ws.path()), std::nullopt);
        sandbox->start();
        AgentConfig config;
        config.sandbox = sandbox;
        config.sandboxMode = SandboxMode::Sandbox;
        const AgentPtr a = Agent::create(QStringLiteral("warmup"), config);
        a->callTool(QStringLiteral("execute"),
                    {{QStringLiteral("command"), QStringLiteral("true")}});
        a->callTool(QStringLiteral("write_file"), {{QStringLiteral("path"), QStringLiteral("w")},
                                                   {QStringLiteral("content"), "1"}});
        a->callTool(QStringLiteral("read_file"), {{QStringLiteral("path"), QStringLiteral("w")}});
        a->callTool(QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral(".")}});
        sandbox->stop(false);
    }
    QThreadPool::globalInstance()->waitForDone();
    const int fdsBefore = test::procSelfEntries("fd");
    const int threadsBefore = test::procSelfEntries("task");

    test::AuditCapture audit;
    auto sandbox = Sandbox::create(QStringLiteral("load"),
                                   std::make_shared<LocalSandboxBackend>(ws.path()), std::nullopt);
    sandbox->start();
    QList<AgentPtr> agents;
    for (int i = 0; i < agentCount; ++i) {
        AgentConfig config;
        config.sandbox = sandbox;
        config.sandboxMode = SandboxMode::Sandbox;
        agents.append(Agent::create(QStringLiteral("agent%1").arg(i), config));
    }
    audit.clear(); // the attach records

    QList<AgentRun> runs(agentCount);
    QElapsedTimer timer;
    timer.start();
    {
        std::vector<std::jthread> threads;
        for (int i = 0; i < agentCount; ++i) {
            runs[i].id = agents[i]->id();
            threads.emplace_back(runAgent, agents[i], calls, &runs[i]);
        }
    }
    const qint64 elapsedMs = timer.elapsed();

    // Exactly one record per call: the same (actor, event, path) multiset.
    std::map<QString, std::map<std::tuple<QString, QString>, int>> recorded;
    int okRecords = 0;
    for (const AuditEvent &e : audit.events()) {
        const QString path = e.event == QLatin1String("sandbox.execute")
                                 ? QString()
                                 : e.fields.value(QLatin1String("path")).toString();
        recorded[e.actor][{e.event, path}]++;
        okRecords += e.outcome == QLatin1String("ok");
    }
    int totalMismatches = 0;
    for (const AgentRun &run : runs) {
        totalMismatches += run.mismatches;
        QVERIFY2(run.mismatches == 0,
                 qPrintable(run.id + QStringLiteral(": ") + run.firstMismatches.join(u"; ")));
        QVERIFY2(recorded[run.id] == run.calls,
                 qPrintable(QStringLiteral("%1: audit records differ from the calls").arg(run.id)));
    }
    const int records = int(audit.events().size());
    QCOMPARE(records, agentCount * calls);
    QCOMPARE(okRecords, agentCount * calls);

    for (const AgentPtr &a : agents)
        sandbox->detach(a);
    agents.clear();
    sandbox->stop(false);
    sandbox.reset();
    QThreadPool::globalInstance()->waitForDone();
    // Threads that a call started may still be exiting; they must all go, so wait for it.
    QTRY_VERIFY_WITH_TIMEOUT(test::procSelfEntries("task") <= threadsBefore, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(test::procSelfEntries("fd"), fdsBefore, 30000);

    qInfo("load: %d agents x %d calls = %d calls in %lld ms (%.0f calls/s), %d audit records, "
          "%d mismatches; fds %d -> %d, threads %d -> %d",
          agentCount, calls, agentCount * calls, elapsedMs,
          elapsedMs > 0 ? agentCount * calls * 1000.0 / double(elapsedMs) : 0.0, records,
          totalMismatches, fdsBefore, test::procSelfEntries("fd"), threadsBefore,
          test::procSelfEntries("task"));
}

QTEST_GUILESS_MAIN(TestLoad)
#include "tst_load.moc"
