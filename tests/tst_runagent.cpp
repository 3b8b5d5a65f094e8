// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// `elsai-workbench --headless --run-agent PLAN` end to end through the real executable: the
// bundled demo plans against the seeded sample project, plan files, mode and name overrides,
// the JSON lines, the audit log and every documented exit status.

#include "testutil.h"

#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#ifndef ELSAI_WORKBENCH_BIN
#error "ELSAI_WORKBENCH_BIN must name the elsai-workbench executable"
#endif

namespace {

struct RunResult
{
    bool finished = false;
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
    QList<QJsonObject> steps; ///< the lines with a "step"
    QJsonObject summary;      ///< the last line (with "plan")
    QString problem;          ///< a line that is not a JSON object
};

using elsai::test::readHostFile;
using elsai::test::writeHostFile;

QString dump(const QJsonObject &o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

} // namespace

class TestRunAgent : public QObject
{
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_tmp;
    int m_n = 0;

    QString fresh(const QString &what) { return m_tmp->filePath(what + QString::number(++m_n)); }

    /// A writable copy of the sample project (a run must never touch the source tree).
    QString sampleCopy()
    {
        const QString dest = fresh(QStringLiteral("project-"));
        const QString source = QStringLiteral(ELSAI_SOURCE_DIR "/resources/sample-project");
        QDirIterator it(source, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            writeHostFile(dest + file.mid(source.size()), readHostFile(file));
        }
        return dest;
    }

    RunResult run(const QStringList &args)
    {
        RunResult r;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *name :
             {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "QT_LOGGING_RULES"})
            env.remove(QLatin1String(name));
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(m_tmp->path());
        p.start(QStringLiteral(ELSAI_WORKBENCH_BIN), QStringList{"--headless"} + args);
        if (!p.waitForStarted(10000))
            return r;
        p.closeWriteChannel();
        r.finished = p.waitForFinished(120000); // a "did not hang" bound, not a measurement
        if (!r.finished) {
            p.kill();
            p.waitForFinished(5000);
        }
        r.exitCode = p.exitCode();
        r.out = p.readAllStandardOutput();
        r.err = p.readAllStandardError();
        for (const QByteArray &line : r.out.split('\n')) {
            if (line.isEmpty())
                continue;
            const QJsonDocument doc = QJsonDocument::fromJson(line);
            if (!doc.isObject()) {
                r.problem = QString::fromUtf8(line);
                continue;
            }
            if (doc.object().contains("step"))
                r.steps.append(doc.object());
            else
                r.summary = doc.object();
        }
        return r;
    }

    /// --seed-from a fresh sample copy, --workspace-root a fresh folder.
    QStringList onSample(QString *project = nullptr, QString *workspace = nullptr)
    {
        const QString p = sampleCopy();
        const QString w = fresh(QStringLiteral("ws-"));
        if (project)
            *project = p;
        if (workspace)
            *workspace = w;
        return {"--seed-from", p, "--workspace-root", w};
    }

private Q_SLOTS:
    void init() { m_tmp = std::make_unique<QTemporaryDir>(); }

    void demoPlansPass_data()
    {
        QTest::addColumn<QString>("demo");
        QTest::addColumn<int>("steps");
        QTest::addColumn<QString>("agent");
        QTest::addColumn<QString>("mode");
        QTest::newRow("explore-readonly") << "explore-readonly" << 8 << "explorer"
                                          << "read_only";
        QTest::newRow("fix-failing-test") << "fix-failing-test" << 6 << "fixer"
                                          << "read_write";
        QTest::newRow("readonly-denied") << "readonly-denied" << 4 << "reviewer"
                                         << "read_only";
    }

    void demoPlansPass()
    {
        QFETCH(QString, demo);
        QFETCH(int, steps);
        QFETCH(QString, agent);
        QFETCH(QString, mode);
        QString project, workspace;
        const QByteArray originalOps = readHostFile(sampleCopy() + "/src/calc/ops.py");
        const RunResult r =
            run(onSample(&project, &workspace) + QStringList{"--run-agent", "demo:" + demo});
        QVERIFY(r.finished);
        QVERIFY2(r.exitCode == 0, r.out + r.err);
        QVERIFY2(r.problem.isEmpty(), qPrintable(r.problem));
        QCOMPARE(r.steps.size(), steps);
        for (int i = 0; i < r.steps.size(); ++i) {
            QCOMPARE(r.steps[i].value("step").toInt(), i + 1);
            QVERIFY2(r.steps[i].value("passed").toBool(), qPrintable(dump(r.steps[i])));
            QVERIFY(!r.steps[i].value("name").toString().isEmpty());
            QVERIFY(r.steps[i].value("duration_ms").isDouble());
        }
        QCOMPARE(r.summary.value("plan").toString(), demo);
        QCOMPARE(r.summary.value("agent").toString(), agent);
        QCOMPARE(r.summary.value("mode").toString(), mode);
        QCOMPARE(r.summary.value("passed").toInt(), steps);
        QCOMPARE(r.summary.value("ok").toBool(), true);
        QCOMPARE(r.summary.value("workspace_root").toString(), workspace);

        // The agent changed the workspace only; the project is not flushed.
        QCOMPARE(readHostFile(project + "/src/calc/ops.py"), originalOps);
        const QByteArray wsOps = readHostFile(workspace + "/src/calc/ops.py");
        QCOMPARE(wsOps.contains("100.0 * part / whole"), demo == "fix-failing-test");
    }

    void fixPlanOutputs()
    {
        const RunResult r = run(onSample() + QStringList{"--run-agent", "demo:fix-failing-test"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject first = r.steps.value(0).value("result").toObject();
        QCOMPARE(first.value("exit_code").toInt(), 1); // the test failed before the fix
        const QJsonObject last = r.steps.value(5).value("result").toObject();
        QCOMPARE(last.value("exit_code").toInt(), 0);
        QVERIFY(last.value("stderr").toString().contains("OK"));
    }

    void demoWithoutAProjectUsesTheBundledSample()
    {
        const RunResult r = run({"--run-agent", "demo:readonly-denied"});
        const QString root = r.summary.value("workspace_root").toString();
        if (root.startsWith(QDir::tempPath() + "/elsai-demo-"))
            QDir(root).removeRecursively(); // kept by design; not by the test
        QVERIFY2(r.exitCode == 0, r.out + r.err);
        QCOMPARE(r.summary.value("passed").toInt(), 4);
    }

    void readOnlyOverrideFailsTheFix()
    {
        const RunResult r = run(onSample() + QStringList{"--run-agent", "demo:fix-failing-test",
                                                         "--agent-mode", "read_only"});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.steps.size(), 6);
        const QJsonObject first = r.steps[0];
        QCOMPARE(first.value("passed").toBool(), false);
        QCOMPARE(first.value("error").toObject().value("type").toString(),
                 QStringLiteral("SandboxMutationDeniedError"));
        for (int i = 1; i < 6; ++i)
            QCOMPARE(r.steps[i].value("outcome").toString(), QStringLiteral("skipped"));
        QCOMPARE(r.summary.value("mode").toString(), QStringLiteral("read_only"));
        QCOMPARE(r.summary.value("failed").toInt(), 1);
        QCOMPARE(r.summary.value("not_run").toInt(), 5);
        QCOMPARE(r.summary.value("ok").toBool(), false);
    }

    void planFileFailedExpectation()
    {
        const QString plan = fresh("plan-") + ".json";
        QVERIFY(writeHostFile(plan, R"({"format":"elsai-agent-plan","version":1,"name":"mine",
            "stop_on_failure":false,
            "steps":[{"name":"says hi","tool":"execute","args":{"command":"echo hi"},
                      "expect":{"output_contains":"bye"}},
                     {"name":"still runs","tool":"execute","args":{"command":"exit 4"},
                      "expect":{"exit_code":4}}]})"));
        const RunResult r =
            run({"--workspace-root", fresh("ws-"), "--run-agent", plan, "--timeout", "30"});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.steps.size(), 2);
        QCOMPARE(r.steps[0].value("passed").toBool(), false);
        QVERIFY(r.steps[0].value("reason").toString().contains("does not contain \"bye\""));
        QCOMPARE(r.steps[1].value("passed").toBool(), true);
        QCOMPARE(r.summary.value("plan").toString(), QStringLiteral("mine"));
        QCOMPARE(r.summary.value("agent").toString(), QStringLiteral("plan-agent"));
    }

    void agentNameIsAuditedWithoutCommandText()
    {
        const QString audit = fresh("audit-") + ".jsonl";
        const RunResult r =
            run(onSample() + QStringList{"--run-agent", "demo:fix-failing-test", "--agent-name",
                                         "bot-7", "--audit-log", audit});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.summary.value("agent").toString(), QStringLiteral("bot-7"));
        const QByteArray log = readHostFile(audit);
        QVERIFY(!log.contains("unittest discover")); // never the command text
        QStringList toolEvents;
        for (const QByteArray &line : log.split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            const QString event = o.value("event").toString();
            if (event == "sandbox.execute" || event == "sandbox.write_file" ||
                event == "sandbox.read_file") {
                QCOMPARE(o.value("actor").toString(), QStringLiteral("bot-7"));
                toolEvents.append(event);
            }
        }
        QCOMPARE(toolEvents.count("sandbox.execute"), 2);
        QCOMPARE(toolEvents.count("sandbox.write_file"), 1);
    }

    void invalidPlanIsAUsageError()
    {
        const QString plan = fresh("bad-") + ".json";
        QVERIFY(writeHostFile(plan, R"({"format":"elsai-agent-plan","version":1,"steps":[
            {"name":"ok","tool":"list_dir","args":{"path":"."}},
            {"name":"typo","tool":"read_file","args":{"path":"a"},"expect":{"exitcode":0}}]})"));
        const QString ws = fresh("ws-");
        const RunResult r = run({"--workspace-root", ws, "--run-agent", plan});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.contains("step 2 ('typo')") && r.err.contains("'expect.exitcode'"), r.err);
        QVERIFY(!QFileInfo::exists(ws)); // nothing was created for an invalid plan
    }

    void exitStatuses_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("stderrMentions");
        QTest::newRow("missing file")
            << QStringList{"--run-agent", "/nonexistent/plan.json"} << 2 << "cannot read plan";
        QTest::newRow("unknown demo")
            << QStringList{"--run-agent", "demo:nope"} << 2 << "fix-failing-test";
        QTest::newRow("bad mode") << QStringList{"--run-agent", "demo:explore-readonly",
                                                 "--agent-mode", "admin"}
                                  << 2 << "--agent-mode";
        QTest::newRow("mode without plan")
            << QStringList{"--agent-mode", "read_only"} << 2 << "need --run-agent";
        QTest::newRow("with --exec")
            << QStringList{"--run-agent", "demo:explore-readonly", "--exec", "true"} << 2
            << "cannot be combined";
    }

    void exitStatuses()
    {
        QFETCH(QStringList, args);
        QFETCH(int, status);
        QFETCH(QString, stderrMentions);
        const RunResult r = run(QStringList{"--workspace-root", fresh("ws-")} + args);
        QCOMPARE(r.exitCode, status);
        QVERIFY2(r.err.contains(stderrMentions.toUtf8()), r.err);
    }

    void helpDescribesIt()
    {
        const RunResult r = run({"--help"});
        QCOMPARE(r.exitCode, 0);
        for (const char *text : {"--run-agent <PLAN>", "--agent-mode <MODE>", "--agent-name <NAME>",
                                 "demo:fix-failing-test", "3 when the sandbox cannot start"})
            QVERIFY2(r.out.contains(text), text);
    }

    void setupErrorIsThree()
    {
        const QString notAFolder = fresh("file-");
        QVERIFY(writeHostFile(notAFolder, "x"));
        const RunResult r =
            run({"--workspace-root", notAFolder, "--run-agent", "demo:explore-readonly"});
        QCOMPARE(r.exitCode, 3);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.contains("NotADirectoryError"), r.err);
    }
};

QTEST_GUILESS_MAIN(TestRunAgent)
#include "tst_runagent.moc"
