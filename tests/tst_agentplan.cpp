// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The scripted-agent engine: plan parsing and validation, expectations, and the runner against
// a real local sandbox (attach modes enforced, calls audited under the agent's name, delays
// through an injected sleeper so nothing here sleeps).

#include "agentplan.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "testutil.h"

#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

namespace {

QByteArray planJson(const QJsonArray &steps, const QJsonObject &extra = {})
{
    QJsonObject o{{QStringLiteral("format"), AgentPlan::formatName()},
                  {QStringLiteral("version"), 1},
                  {QStringLiteral("name"), QStringLiteral("t")},
                  {QStringLiteral("steps"), steps}};
    for (auto it = extra.begin(); it != extra.end(); ++it)
        o.insert(it.key(), it.value());
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

QJsonObject step(const QString &name, const QString &tool, const QJsonObject &args,
                 const QJsonObject &expect = {})
{
    QJsonObject s{{QStringLiteral("name"), name},
                  {QStringLiteral("tool"), tool},
                  {QStringLiteral("args"), args}};
    if (!expect.isEmpty())
        s.insert(QStringLiteral("expect"), expect);
    return s;
}

QJsonObject readStep(const QString &name, const QString &path, const QJsonObject &expect = {})
{
    return step(name, QStringLiteral("read_file"), {{QStringLiteral("path"), path}}, expect);
}

} // namespace

class TestAgentPlan : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;
    QString m_root; ///< workspace folder of the last startedSandbox()

    SandboxPtr startedSandbox(const std::optional<QString> &seedFrom = std::nullopt)
    {
        Sandbox::Options options;
        options.seedFrom = seedFrom;
        ++m_n;
        m_root = m_tmp.filePath(QStringLiteral("ws-%1").arg(m_n));
        auto s = Sandbox::create(QStringLiteral("plan-test-%1").arg(m_n),
                                 std::make_shared<LocalSandboxBackend>(m_root), 600, options);
        s->start();
        return s;
    }

    static QStringList outcomes(const QList<StepResult> &results)
    {
        QStringList out;
        for (const StepResult &r : results)
            out.append(toString(r.outcome) +
                       (r.passed ? QStringLiteral("+") : QStringLiteral("-")));
        return out;
    }

private Q_SLOTS:
    void parseErrors_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QStringList>("mustMention");
        const QJsonObject ok = readStep(QStringLiteral("r"), QStringLiteral("a.txt"));
        auto with = [&](const char *key, const QJsonValue &v) {
            QJsonObject s = ok;
            s.insert(QLatin1String(key), v);
            return planJson({s});
        };
        auto expecting = [&](const QJsonObject &expect, const QString &tool = "read_file") {
            QJsonObject s = ok;
            s.insert(QStringLiteral("tool"), tool);
            s.insert(QStringLiteral("args"), QJsonObject{{QStringLiteral("path"), "a"},
                                                         {QStringLiteral("command"), "true"}});
            s.insert(QStringLiteral("expect"), expect);
            return planJson({s});
        };
        QTest::newRow("malformed") << QByteArray("{\"format\":") << QStringList{"malformed JSON"};
        QTest::newRow("not an object") << QByteArray("[1]") << QStringList{"JSON object"};
        QTest::newRow("no format")
            << QByteArray(R"({"version":1,"steps":[]})") << QStringList{"'format'", "required"};
        QTest::newRow("wrong format") << QByteArray(R"({"format":"x","version":1,"steps":[]})")
                                      << QStringList{"'format'", "elsai-agent-plan"};
        QTest::newRow("no version") << QByteArray(R"({"format":"elsai-agent-plan","steps":[]})")
                                    << QStringList{"'version'", "required"};
        QTest::newRow("future version")
            << QByteArray(R"({"format":"elsai-agent-plan","version":3,"steps":[]})")
            << QStringList{"'version'", "is 3", "versions 1 to 2"};
        QTest::newRow("unknown top field") << planJson({ok}, {{QStringLiteral("stpes"), 1}})
                                           << QStringList{"'stpes'", "unknown", "steps"};
        QTest::newRow("empty steps") << planJson({}) << QStringList{"'steps'", "non-empty"};
        QTest::newRow("bad mode") << planJson({ok},
                                              {{QStringLiteral("agent"),
                                                QJsonObject{{QStringLiteral("mode"), "write"}}}})
                                  << QStringList{"'agent.mode'", "read_only"};
        QTest::newRow("bad stop_on_failure")
            << planJson({ok}, {{QStringLiteral("stop_on_failure"), "yes"}})
            << QStringList{"'stop_on_failure'", "true or false"};
        QTest::newRow("step not object") << planJson({1}) << QStringList{"step 1", "object"};
        QTest::newRow("step without name")
            << planJson({QJsonObject{{"tool", "list_dir"}, {"args", QJsonObject{{"path", "."}}}}})
            << QStringList{"step 1", "'name'", "required"};
        QTest::newRow("step without tool")
            << planJson({ok, QJsonObject{{"name", "second"}}})
            << QStringList{"step 2 ('second')", "'tool'", "required"};
        QTest::newRow("duplicate name")
            << planJson({ok, ok}) << QStringList{"step 2 ('r')", "'name'", "unique"};
        QTest::newRow("unknown step field")
            << with("expext", QJsonObject{}) << QStringList{"step 1 ('r')", "'expext'", "unknown"};
        QTest::newRow("args not object")
            << with("args", "a.txt") << QStringList{"'args'", "object"};
        QTest::newRow("missing required arg")
            << with("args", QJsonObject{}) << QStringList{"'args.path'", "read_file"};
        QTest::newRow("write needs content")
            << planJson({step("w", "write_file", {{"path", "a"}})})
            << QStringList{"step 1 ('w')", "'args.content'", "write_file"};
        QTest::newRow("negative delay")
            << with("delay_ms", -5) << QStringList{"'delay_ms'", "0 to 600000"};
        QTest::newRow("fractional delay")
            << with("delay_ms", 1.5) << QStringList{"'delay_ms'", "whole number"};
        QTest::newRow("expect not object")
            << with("expect", 0) << QStringList{"'expect'", "object"};
        QTest::newRow("unknown expectation")
            << expecting({{"exit", 0}}) << QStringList{"'expect.exit'", "exit_code"};
        QTest::newRow("exit_code on read_file")
            << expecting({{"exit_code", 0}}) << QStringList{"'expect.exit_code'", "execute only"};
        QTest::newRow("content on execute") << expecting({{"content", "x"}}, "execute")
                                            << QStringList{"'expect.content'", "read_file only"};
        QTest::newRow("bad regex") << expecting({{"output_matches", "(["}})
                                   << QStringList{"'expect.output_matches'", "regular expression"};
        QTest::newRow("contains not strings")
            << expecting({{"output_contains", QJsonArray{1}}})
            << QStringList{"'expect.output_contains'", "array of strings"};
        QTest::newRow("error with result check")
            << expecting({{"error", "OSError"}, {"output_contains", "x"}})
            << QStringList{"'expect.error'", "cannot be combined"};
        QTest::newRow("error_contains alone")
            << expecting({{"error_contains", "x"}}) << QStringList{"'expect.error_contains'"};
        QTest::newRow("fields not object")
            << expecting({{"fields", 1}}) << QStringList{"'expect.fields'", "object"};
    }

    void parseErrors()
    {
        QFETCH(QByteArray, json);
        QFETCH(QStringList, mustMention);
        try {
            AgentPlan::parse(json, QStringLiteral("file"));
            QFAIL("parse accepted an invalid plan");
        } catch (const ValueError &e) {
            QVERIFY2(e.message().startsWith(QLatin1String("plan '")), qPrintable(e.message()));
            for (const QString &m : mustMention)
                QVERIFY2(e.message().contains(m), qPrintable(e.message() + " lacks " + m));
        }
    }

    void parseDefaultsAndFields()
    {
        const QByteArray json = R"({"format":"elsai-agent-plan","version":1,
            "steps":[{"name":"a","tool":"custom_tool"},
                     {"name":"b","tool":"execute","args":{"command":"true"},"delay_ms":250,
                      "expect":{"exit_code":3,"output_contains":"x",
                                "output_not_contains":["y","z"],"output_matches":"^a$",
                                "fields":{"timed_out":false}}}]})";
        const AgentPlan plan = AgentPlan::parse(json, QStringLiteral("from-file"));
        QCOMPARE(plan.name, QStringLiteral("from-file"));
        QCOMPARE(plan.agentName, QStringLiteral("plan-agent"));
        QVERIFY(plan.mode == SandboxAttachMode::ReadWrite);
        QVERIFY(plan.stopOnFailure);
        QCOMPARE(plan.steps.size(), 2);
        QCOMPARE(plan.steps[0].tool, QStringLiteral("custom_tool")); // any tool the agent has
        QVERIFY(plan.steps[0].args.isEmpty());
        const PlanStep &b = plan.steps[1];
        QCOMPARE(b.delayMs, 250);
        QCOMPARE(b.expect.exitCode, 3);
        QCOMPARE(b.expect.outputContains, QStringList{"x"});
        QCOMPARE(b.expect.outputNotContains, (QStringList{"y", "z"}));
        QVERIFY(b.expect.outputMatches);
        QCOMPARE(b.expect.fields.value("timed_out"), QJsonValue(false));
    }

    void demoPlans()
    {
        QCOMPARE(AgentPlan::demoNames(),
                 (QStringList{"explore-readonly", "fix-failing-test", "readonly-denied"}));
        const AgentPlan explore = AgentPlan::load(QStringLiteral("demo:explore-readonly"));
        QVERIFY(explore.mode == SandboxAttachMode::ReadOnly);
        for (const PlanStep &s : explore.steps)
            QVERIFY2(s.tool == "read_file" || s.tool == "list_dir" || s.expect.error,
                     qPrintable(s.name + ": a read-only exploration must not mutate"));
        QVERIFY(AgentPlan::load(QStringLiteral("demo:fix-failing-test")).mode ==
                SandboxAttachMode::ReadWrite);
        QVERIFY(AgentPlan::load(QStringLiteral("demo:readonly-denied")).mode ==
                SandboxAttachMode::ReadOnly);
        try {
            AgentPlan::load(QStringLiteral("demo:nope"));
            QFAIL("unknown demo loaded");
        } catch (const ValueError &e) {
            QVERIFY(e.message().contains("fix-failing-test"));
        }
        QVERIFY_THROWS_EXCEPTION(OSError, AgentPlan::load(m_tmp.filePath("missing.json")));
    }

    void loadRefusesWhatIsNotAPlanFile()
    {
        // A FIFO would block the read forever, a folder is not a plan.
        const QString fifo = m_tmp.filePath(QStringLiteral("plan.fifo"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        QVERIFY_THROWS_EXCEPTION(OSError, AgentPlan::load(fifo));
        QVERIFY_THROWS_EXCEPTION(OSError, AgentPlan::load(m_tmp.path()));
        // A huge file is refused after reading just past the cap.
        const QString big = m_tmp.filePath(QStringLiteral("big.json"));
        {
            QFile f(big);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QVERIFY(f.resize(64ll << 20)); // sparse
        }
        try {
            AgentPlan::load(big);
            QFAIL("a 64 MiB plan was read");
        } catch (const ValueError &e) {
            QVERIFY2(e.message().contains("larger than 16 MiB"), qPrintable(e.message()));
        }
        // A plan file named on disk gets its base name when it has none.
        const QString plain = m_tmp.filePath(QStringLiteral("my-plan.json"));
        writeHostFile(plain, R"({"format":"elsai-agent-plan","version":1,
            "steps":[{"name":"l","tool":"list_dir","args":{"path":"."}}]})");
        QCOMPARE(AgentPlan::load(plain).name, QStringLiteral("my-plan"));
    }

    void errorTypeNamesIncludeBases()
    {
        QCOMPARE(errorTypeNames(FileNotFoundError(QStringLiteral("x"))),
                 (QStringList{"FileNotFoundError", "OSError", "Exception"}));
        QCOMPARE(errorTypeNames(ToolNotFoundError(QStringLiteral("x"))),
                 (QStringList{"ToolNotFoundError", "ValueError", "Exception"}));
        QCOMPARE(errorTypeNames(SandboxMutationDeniedError(QStringLiteral("x"))),
                 (QStringList{"SandboxMutationDeniedError", "Exception"}));
    }

    void expectations_data()
    {
        QTest::addColumn<QJsonObject>("expect");
        QTest::addColumn<QStringList>("errorTypes");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QJsonObject>("data");
        QTest::addColumn<QString>("failureMentions"); // empty: must pass
        const QJsonObject exit0{{"exit_code", 0}, {"content", "hello\n"}};
        const QStringList none;
        const QStringList denied{"SandboxMutationDeniedError", "Exception"};
        const QStringList notFound{"FileNotFoundError", "OSError", "Exception"};
        QTest::newRow("no expectation, success") << QJsonObject{} << none << "x" << exit0 << "";
        QTest::newRow("no expectation, error")
            << QJsonObject{} << denied << "" << QJsonObject{} << "the call failed";
        QTest::newRow("exit code met")
            << QJsonObject{{"exit_code", 0}} << none << "" << exit0 << "";
        QTest::newRow("exit code missed") << QJsonObject{{"exit_code", 1}} << none << "" << exit0
                                          << "expected exit code 1, got 0";
        QTest::newRow("contains met") << QJsonObject{{"output_contains", QJsonArray{"he", "llo"}}}
                                      << none << "hello" << exit0 << "";
        QTest::newRow("contains missed")
            << QJsonObject{{"output_contains", QJsonArray{"he", "bye"}}} << none << "hello" << exit0
            << "does not contain \"bye\"";
        QTest::newRow("not contains missed") << QJsonObject{{"output_not_contains", "ell"}} << none
                                             << "hello" << exit0 << "contains \"ell\"";
        QTest::newRow("matches met (multiline)")
            << QJsonObject{{"output_matches", "^Ran \\d+ tests"}} << none << "x\nRan 3 tests\n"
            << exit0 << "";
        QTest::newRow("matches missed") << QJsonObject{{"output_matches", "^OK$"}} << none
                                        << "FAILED" << exit0 << "does not match /^OK$/";
        QTest::newRow("content met")
            << QJsonObject{{"content", "hello\n"}} << none << "" << exit0 << "";
        QTest::newRow("content missed")
            << QJsonObject{{"content", "hello"}} << none << "" << exit0 << "the content differs";
        QTest::newRow("fields met")
            << QJsonObject{{"fields", QJsonObject{{"exit_code", 0}}}} << none << "" << exit0 << "";
        QTest::newRow("fields missed") << QJsonObject{{"fields", QJsonObject{{"bytes", 3}}}} << none
                                       << "" << exit0 << "field 'bytes' is nothing, expected 3";
        QTest::newRow("error met") << QJsonObject{{"error", "SandboxMutationDeniedError"}} << denied
                                   << "" << QJsonObject{} << "";
        QTest::newRow("error met by base")
            << QJsonObject{{"error", "OSError"}} << notFound << "" << QJsonObject{} << "";
        QTest::newRow("error of another type")
            << QJsonObject{{"error", "PermissionError"}} << notFound << "" << QJsonObject{}
            << "expected PermissionError, got FileNotFoundError";
        QTest::newRow("error expected, success")
            << QJsonObject{{"error", "PermissionError"}} << none << "x" << exit0
            << "expected PermissionError, but the call succeeded";
        QTest::newRow("error message missed")
            << QJsonObject{{"error", "OSError"}, {"error_contains", "nope"}} << notFound << ""
            << QJsonObject{} << "does not contain \"nope\"";
    }

    void expectations()
    {
        QFETCH(QJsonObject, expect);
        QFETCH(QStringList, errorTypes);
        QFETCH(QString, text);
        QFETCH(QJsonObject, data);
        QFETCH(QString, failureMentions);
        const QString tool = expect.contains("content") ? "read_file" : "execute";
        QJsonObject s = step("s", tool, {{"path", "p"}, {"command", "c"}}, expect);
        const AgentPlan plan = AgentPlan::parse(planJson({s}));
        const QString why =
            checkExpectation(plan.steps[0], errorTypes, text, data, QStringLiteral("msg"));
        if (failureMentions.isEmpty())
            QVERIFY2(why.isEmpty(), qPrintable(why));
        else
            QVERIFY2(why.contains(failureMentions), qPrintable(why));
    }

    void runPassesAndAuditsUnderAgentName()
    {
        const SandboxPtr sandbox = startedSandbox();
        test::AuditCapture audit;
        const AgentPlan plan = AgentPlan::parse(planJson(
            {step("write", "write_file", {{"path", "notes/a.txt"}, {"content", "one\ntwo\n"}},
                  {{"fields", QJsonObject{{"path", "notes/a.txt"}}}}),
             readStep("read", "notes/a.txt", {{"content", "one\ntwo\n"}}),
             step("list", "list_dir", {{"path", "notes"}}, {{"output_contains", "a.txt"}}),
             step("run", "execute", {{"command", "cat notes/a.txt; exit 3"}},
                  {{"exit_code", 3}, {"output_matches", "^two$"}})},
            {{"agent", QJsonObject{{"name", "scripted"}}}}));
        AgentPlanRunner runner(plan, sandbox);
        QList<int> seen;
        const QList<StepResult> results =
            runner.run([&](const StepResult &r) { seen.append(r.index); });
        QCOMPARE(seen, (QList<int>{0, 1, 2, 3}));
        QCOMPARE(outcomes(results), (QStringList{"ok+", "ok+", "ok+", "ok+"}));
        QCOMPARE(results[3].data.value("exit_code").toInt(), 3);
        QVERIFY(results[3].text.contains("[exit code: 3]"));
        QCOMPARE(readHostFile(m_root + "/notes/a.txt"), QByteArray("one\ntwo\n"));

        const QJsonObject line = results[3].toJson();
        QCOMPARE(line.value("step").toInt(), 4);
        QCOMPARE(line.value("outcome").toString(), QStringLiteral("ok"));
        QCOMPARE(line.value("result").toObject().value("exit_code").toInt(), 3);

        QStringList calls;
        for (const AuditEvent &e : audit.events()) {
            if (e.event.startsWith("sandbox.")) {
                QCOMPARE(e.actor, QStringLiteral("scripted"));
                calls.append(e.event);
            }
        }
        QCOMPARE(calls, (QStringList{"sandbox.write_file", "sandbox.read_file", "sandbox.list_dir",
                                     "sandbox.execute"}));
        QVERIFY(!audit.named("attach").isEmpty());
        QCOMPARE(audit.named("attach").first().actor, QStringLiteral("scripted"));
        runner.detach();
        QVERIFY(sandbox->attachedAgents().isEmpty());
    }

    // A recorded session's background process cannot be replayed identically (what it does
    // between the calls was recorded by none): its process_start diverges instead of passing;
    // a hand-written plan (no start) expects what it says and passes.
    void backgroundProcessDiverges_data()
    {
        QTest::addColumn<bool>("recorded");
        QTest::newRow("recorded") << true;
        QTest::newRow("hand-written") << false;
    }

    void backgroundProcessDiverges()
    {
        QFETCH(bool, recorded);
        const SandboxPtr sandbox = startedSandbox();
        QJsonObject o{
            {"format", AgentPlan::formatName()},
            {"version", 2},
            {"name", "bg"},
            {"steps", QJsonArray{step("start", "process_start", {{"command", "echo hi > bg.txt"}}),
                                 step("after", "execute", {{"command", "true"}})}}};
        if (recorded)
            o.insert("start", QJsonObject{{"checkpoint", "c"}, {"digest", QString(64, u'0')}});
        const AgentPlan plan = AgentPlan::parse(QJsonDocument(o).toJson());
        AgentPlanRunner runner(plan, sandbox);
        const QList<StepResult> results = runner.run();
        QCOMPARE(results.size(), 2);
        QCOMPARE(results[1].divergences.size(), 0);
        if (!recorded) {
            QVERIFY2(results[0].passed, qPrintable(results[0].reason));
            return;
        }
        QVERIFY(!results[0].passed);
        QCOMPARE(results[0].divergences.size(), 1);
        const Divergence &d = results[0].divergences.first();
        QCOMPARE(d.check, QStringLiteral("background_process"));
        const QString id = results[0].data.value("process_id").toString();
        QVERIFY(!id.isEmpty());
        QVERIFY(d.seen.toString().contains(id));
        QVERIFY(results[0].reason.contains("background_process"));
    }

    void failureSkipsTheRest_data()
    {
        QTest::addColumn<bool>("stopOnFailure");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("stop") << true << QStringList{"ok+", "ok-", "skipped-", "skipped-"};
        QTest::newRow("go on") << false << QStringList{"ok+", "ok-", "error-", "ok+"};
    }

    void failureSkipsTheRest()
    {
        QFETCH(bool, stopOnFailure);
        QFETCH(QStringList, expected);
        const SandboxPtr sandbox = startedSandbox();
        const AgentPlan plan = AgentPlan::parse(planJson(
            {step("ok", "execute", {{"command", "true"}}, {{"exit_code", 0}}),
             step("wrong", "execute", {{"command", "echo hi"}}, {{"output_contains", "bye"}}),
             readStep("missing", "nope.txt"), step("last", "list_dir", {{"path", "."}})},
            {{"stop_on_failure", stopOnFailure}}));
        AgentPlanRunner runner(plan, sandbox);
        const QList<StepResult> results = runner.run();
        QCOMPARE(outcomes(results), expected);
        QVERIFY(results[1].reason.contains("does not contain \"bye\""));
        if (stopOnFailure) {
            QVERIFY(results[2].reason.contains("step 2 ('wrong') failed"));
        } else {
            QCOMPARE(results[2].errorType, QStringLiteral("FileNotFoundError"));
            QCOMPARE(results[2].toJson().value("error").toObject().value("type").toString(),
                     QStringLiteral("FileNotFoundError"));
        }
    }

    void readOnlyAgentIsDenied()
    {
        const SandboxPtr sandbox = startedSandbox();
        sandbox->addFiles({{QStringLiteral("a.txt"), FileSource::text("original\n")}});
        test::AuditCapture audit;
        const AgentPlan plan = AgentPlan::parse(
            planJson({step("write", "write_file", {{"path", "a.txt"}, {"content", "changed"}},
                           {{"error", "SandboxMutationDeniedError"}}),
                      step("run", "execute", {{"command", "echo changed > a.txt"}},
                           {{"error", "SandboxMutationDeniedError"}}),
                      readStep("unchanged", "a.txt", {{"content", "original\n"}})},
                     {{"agent", QJsonObject{{"name", "ro"}, {"mode", "read_only"}}}}));
        AgentPlanRunner runner(plan, sandbox);
        QVERIFY(runner.mode() == SandboxAttachMode::ReadOnly);
        QCOMPARE(outcomes(runner.run()), (QStringList{"error+", "error+", "ok+"}));
        QCOMPARE(readHostFile(m_root + "/a.txt"), QByteArray("original\n"));
        const QList<AuditEvent> writes = audit.named("sandbox.write_file");
        QCOMPARE(writes.size(), 1);
        QCOMPARE(writes[0].actor, QStringLiteral("ro"));
        QCOMPARE(writes[0].outcome, QStringLiteral("denied"));
        QCOMPARE(audit.named("sandbox.execute").value(0).outcome, QStringLiteral("denied"));
    }

    // A plan's calls go through Agent::callTool: an ill-typed argument or an unknown tool is
    // an error result of its step and leaves one `invalid` record under the agent's name.
    void invalidStepsAreAudited()
    {
        const SandboxPtr sandbox = startedSandbox();
        sandbox->addFiles({{QStringLiteral("a.txt"), FileSource::text("x\n")}});
        test::AuditCapture audit;
        const AgentPlan plan = AgentPlan::parse(
            planJson({step("bad offset", "read_file", {{"path", "a.txt"}, {"offset", "one"}},
                           {{"error", "ValueError"}}),
                      step("no such tool", "format_disk", {}, {{"error", "ToolNotFoundError"}})},
                     {{"agent", QJsonObject{{"name", "planner"}}}}));
        AgentPlanRunner runner(plan, sandbox);
        QCOMPARE(outcomes(runner.run()), (QStringList{"error+", "error+"}));
        QStringList seen;
        for (const AuditEvent &e : audit.events()) {
            if (e.actor == QLatin1String("planner") && e.event != QLatin1String("attach") &&
                e.event != QLatin1String("detach"))
                seen << e.event + u'/' + e.outcome;
        }
        QCOMPARE(seen, (QStringList{"sandbox.read_file/invalid", "tool.call/invalid"}));
    }

    void modeAndNameOverrides()
    {
        const SandboxPtr sandbox = startedSandbox();
        const AgentPlan plan = AgentPlan::parse(
            planJson({step("write", "write_file", {{"path", "a.txt"}, {"content", "x"}})}));
        AgentPlanRunner::Options options;
        options.mode = SandboxAttachMode::ReadOnly;
        options.agentName = QStringLiteral("other");
        AgentPlanRunner runner(plan, sandbox, options);
        const StepResult r = runner.runStep(0);
        QVERIFY(r.outcome == StepOutcome::Error);
        QCOMPARE(r.errorType, QStringLiteral("SandboxMutationDeniedError"));
        QVERIFY(!r.passed);
        QCOMPARE(sandbox->attachedAgents().value(0).agent->id(), QStringLiteral("other"));
        QVERIFY(sandbox->attachedAgents().value(0).mode == SandboxAttachMode::ReadOnly);
    }

    void attachProblems()
    {
        const SandboxPtr sandbox = startedSandbox();
        const AgentPlan plan = AgentPlan::parse(planJson({readStep("r", "a")}));
        AgentPlanRunner first(plan, sandbox);
        first.attach();
        AgentPlanRunner second(plan, sandbox);
        QVERIFY_THROWS_EXCEPTION(SandboxAttachError, second.attach());
        first.detach();
        second.attach(); // the name is free again

        auto stopped = Sandbox::create(
            QStringLiteral("plan-stopped"),
            std::make_shared<LocalSandboxBackend>(m_tmp.filePath(QStringLiteral("stopped"))), 600);
        AgentPlanRunner third(plan, stopped);
        QVERIFY_THROWS_EXCEPTION(SandboxAttachError, third.runStep(0));
    }

    void delaysUseTheInjectedSleeperAndClock()
    {
        const SandboxPtr sandbox = startedSandbox();
        QJsonObject slow = step("slow", "list_dir", {{"path", "."}});
        slow.insert("delay_ms", 1500);
        QJsonObject slower = step("slower", "list_dir", {{"path", "."}});
        slower.insert("delay_ms", 600000);
        const AgentPlan plan =
            AgentPlan::parse(planJson({step("now", "list_dir", {{"path", "."}}), slow, slower}));
        QList<qint64> slept;
        qint64 fakeNow = 1000;
        AgentPlanRunner::Options options;
        options.sleeper = [&](qint64 ms) {
            slept.append(ms);
            fakeNow += ms; // the sleep is not part of the step's duration
        };
        options.clock = [&] { return fakeNow += 7; };
        AgentPlanRunner runner(plan, sandbox, options);
        const QList<StepResult> results = runner.run();
        QCOMPARE(slept, (QList<qint64>{1500, 600000}));
        QCOMPARE(outcomes(results), (QStringList{"ok+", "ok+", "ok+"}));
        for (const StepResult &r : results)
            QCOMPARE(r.durationMs, 7);
    }

    void cancelDuringADelay()
    {
        const SandboxPtr sandbox = startedSandbox();
        QJsonObject waits = step("waits", "list_dir", {{"path", "."}});
        waits.insert("delay_ms", 600000);
        const AgentPlan plan =
            AgentPlan::parse(planJson({step("first", "list_dir", {{"path", "."}}), waits,
                                       step("after", "list_dir", {{"path", "."}})}));
        AgentPlanRunner *self = nullptr;
        AgentPlanRunner::Options options;
        options.sleeper = [&](qint64) { self->cancel(); }; // "stop" pressed during the wait
        AgentPlanRunner runner(plan, sandbox, options);
        self = &runner;
        QCOMPARE(outcomes(runner.run()), (QStringList{"ok+", "cancelled-", "cancelled-"}));
    }

    void defaultSleeperWakesOnCancel()
    {
        // The real wait: a ten-minute delay ends as soon as another thread cancels.
        const SandboxPtr sandbox = startedSandbox();
        QJsonObject waits = step("waits", "list_dir", {{"path", "."}});
        waits.insert("delay_ms", 600000);
        AgentPlanRunner runner(AgentPlan::parse(planJson({waits})), sandbox);
        std::unique_ptr<QThread> canceller(QThread::create([&] {
            while (!runner.agent()) // attached: the wait is next (or already running)
                QThread::msleep(1);
            runner.cancel();
        }));
        canceller->start();
        const StepResult r = runner.runStep(0);
        canceller->wait();
        QVERIFY(r.outcome == StepOutcome::Cancelled);
    }

    void demoPlansPassOnTheSampleProject_data()
    {
        QTest::addColumn<QString>("demo");
        for (const QString &name : AgentPlan::demoNames())
            QTest::newRow(qPrintable(name)) << name;
    }

    void demoPlansPassOnTheSampleProject()
    {
        QFETCH(QString, demo);
        // A copy: a failing check must never leave a sandbox that could flush into the sources.
        const QString project = m_tmp.filePath(QStringLiteral("project-%1").arg(++m_n));
        const QString source = QStringLiteral(ELSAI_SOURCE_DIR "/resources/sample-project");
        QDirIterator it(source, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            writeHostFile(project + file.mid(source.size()), readHostFile(file));
        }
        const SandboxPtr sandbox = startedSandbox(project);
        AgentPlanRunner::Options options;
        options.sleeper = [](qint64) {}; // the demos' delays are for watching, not for tests
        AgentPlanRunner runner(AgentPlan::load(AgentPlan::demoPrefix() + demo), sandbox, options);
        for (const StepResult &r : runner.run())
            QVERIFY2(
                r.passed,
                qPrintable(
                    QStringLiteral("step %1 '%2': %3").arg(r.index + 1).arg(r.name, r.reason)));
    }
};

QTEST_GUILESS_MAIN(TestAgentPlan)
#include "tst_agentplan.moc"
