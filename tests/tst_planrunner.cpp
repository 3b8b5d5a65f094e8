// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// PlanRunner (play / pause / step / stop off the GUI thread) and PlanStepsModel, the latter
// under QAbstractItemModelTester throughout.

#include "agentplan.h"
#include "localsandboxbackend.h"
#include "planrunner.h"
#include "sandbox.h"
#include "testutil.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace elsai;
using Status = PlanStepsModel::Status;
using State = PlanRunner::State;

namespace {

QJsonObject step(const QString &name, const QString &tool, const QJsonObject &args,
                 const QJsonObject &expect = {}, int delayMs = 0)
{
    QJsonObject s{{"name", name}, {"tool", tool}, {"args", args}};
    if (!expect.isEmpty())
        s.insert("expect", expect);
    if (delayMs > 0)
        s.insert("delay_ms", delayMs);
    return s;
}

AgentPlan plan(const QJsonArray &steps, const QJsonObject &extra = {})
{
    QJsonObject o{{"format", AgentPlan::formatName()},
                  {"version", 1},
                  {"name", "model-plan"},
                  {"agent", QJsonObject{{"name", "planner"}}},
                  {"steps", steps}};
    for (auto it = extra.begin(); it != extra.end(); ++it)
        o.insert(it.key(), it.value());
    return AgentPlan::parse(QJsonDocument(o).toJson());
}

AgentPlan threeSteps()
{
    return plan({step("write", "write_file", {{"path", "a.txt"}, {"content", "hi\n"}}),
                 step("read", "read_file", {{"path", "a.txt"}}, {{"content", "hi\n"}}),
                 step("run", "execute", {{"command", "cat a.txt"}},
                      {{"exit_code", 0}, {"output_contains", "hi"}})});
}

} // namespace

class TestPlanRunner : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;
    SandboxPtr m_sandbox;
    std::unique_ptr<PlanRunner> m_runner;
    std::unique_ptr<QAbstractItemModelTester> m_tester;

    QList<Status> statuses() const
    {
        QList<Status> out;
        for (int i = 0; i < m_runner->stepsModel()->rowCount(); ++i)
            out.append(m_runner->stepsModel()->status(i));
        return out;
    }
    int currentRow() const
    {
        const PlanStepsModel *m = m_runner->stepsModel();
        int found = -1;
        for (int i = 0; i < m->rowCount(); ++i) {
            if (m->index(i, 0).data(PlanRoles::IsCurrentRole).toBool()) {
                if (found != -1)
                    return -2; // two current rows
                found = i;
            }
        }
        return found;
    }

private Q_SLOTS:
    void init()
    {
        ++m_n;
        m_sandbox = Sandbox::create(
            QStringLiteral("planrunner-%1").arg(m_n),
            std::make_shared<LocalSandboxBackend>(m_tmp.filePath(QStringLiteral("ws-%1").arg(m_n))),
            600);
        m_sandbox->start();
        m_runner = std::make_unique<PlanRunner>();
        m_tester = std::make_unique<QAbstractItemModelTester>(
            m_runner->stepsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        m_runner->setSandbox(m_sandbox);
    }

    void cleanup()
    {
        m_tester.reset();
        m_runner.reset();
        m_sandbox->stop(false);
    }

    void playRunsEveryStep()
    {
        QCOMPARE(m_runner->state(), State::Empty);
        m_runner->setPlan(threeSteps());
        QCOMPARE(m_runner->state(), State::Ready);
        QCOMPARE(m_runner->stepsModel()->rowCount(), 3);
        QCOMPARE(statuses(), (QList<Status>{Status::Pending, Status::Pending, Status::Pending}));
        QCOMPARE(currentRow(), 0);

        QSignalSpy started(m_runner.get(), &PlanRunner::stepStarted);
        QSignalSpy finished(m_runner.get(), &PlanRunner::stepFinished);
        QSignalSpy done(m_runner.get(), &PlanRunner::runFinished);
        test::AuditCapture audit;
        m_runner->play();
        QCOMPARE(m_runner->state(), State::Running);
        QTRY_COMPARE_WITH_TIMEOUT(m_runner->state(), State::Finished, 30000);
        QCOMPARE(statuses(), (QList<Status>{Status::Passed, Status::Passed, Status::Passed}));
        QCOMPARE(started.size(), 3);
        QCOMPARE(finished.size(), 3);
        QCOMPARE(done.size(), 1);
        QCOMPARE(done[0], (QVariantList{3, 0, 0}));
        QCOMPARE(currentRow(), -1);

        const PlanStepsModel *m = m_runner->stepsModel();
        QCOMPARE(m->index(2, PlanStepsModel::StatusColumn).data().toString(),
                 QStringLiteral("passed"));
        QCOMPARE(m->index(2, PlanStepsModel::DetailColumn).data().toString(),
                 QStringLiteral("exit code 0 · hi"));
        QCOMPARE(m->index(1, PlanStepsModel::DetailColumn).data().toString(),
                 QStringLiteral("1 line of a.txt"));
        QVERIFY(m->index(2, 0).data(PlanRoles::StepDurationRole).isValid());
        const QJsonObject json = m->index(2, 0).data(PlanRoles::StepResultRole).toJsonObject();
        QCOMPARE(json.value("result").toObject().value("exit_code").toInt(), 0);
        QCOMPARE(m->index(0, 0).data(PlanRoles::StepArgsRole).toJsonObject().value("path"),
                 QJsonValue("a.txt"));

        QStringList actors;
        for (const AuditEvent &e : audit.events())
            actors.append(e.actor);
        actors.removeDuplicates();
        QCOMPARE(actors, QStringList{"planner"});
        QVERIFY(m_sandbox->attachedAgents().isEmpty()); // detached when the run ended
        QCOMPARE(audit.named("detach").size(), 1);
    }

    void stepThenPlay()
    {
        m_runner->setPlan(threeSteps());
        m_runner->step();
        QCOMPARE(m_runner->state(), State::Stepping);
        QTRY_COMPARE(m_runner->state(), State::Paused);
        QCOMPARE(statuses(), (QList<Status>{Status::Passed, Status::Pending, Status::Pending}));
        QCOMPARE(currentRow(), 1); // the next step is highlighted
        QCOMPARE(m_runner->nextStep(), 1);
        QCOMPARE(m_sandbox->attachedAgents().size(), 1); // still attached while paused

        m_runner->step();
        QTRY_COMPARE(m_runner->state(), State::Paused);
        QCOMPARE(statuses(), (QList<Status>{Status::Passed, Status::Passed, Status::Pending}));

        m_runner->play();
        QTRY_COMPARE(m_runner->state(), State::Finished);
        QCOMPARE(statuses(), (QList<Status>{Status::Passed, Status::Passed, Status::Passed}));
    }

    void pauseWhileRunning()
    {
        m_runner->setPlan(threeSteps());
        m_runner->play();
        m_runner->pause(); // the first step is running: it finishes, then the run pauses
        QCOMPARE(m_runner->state(), State::Pausing);
        QTRY_COMPARE(m_runner->state(), State::Paused);
        QCOMPARE(statuses(), (QList<Status>{Status::Passed, Status::Pending, Status::Pending}));
        m_runner->play();
        QTRY_COMPARE(m_runner->state(), State::Finished);
        QCOMPARE(m_runner->passedCount(), 3);
    }

    void stopCutsADelayShort()
    {
        // A ten-minute delay: the test ends only because stop() interrupts it.
        m_runner->setPlan(plan({step("first", "list_dir", {{"path", "."}}),
                                step("waits", "list_dir", {{"path", "."}}, {}, 600000),
                                step("never", "list_dir", {{"path", "."}})}));
        QSignalSpy started(m_runner.get(), &PlanRunner::stepStarted);
        m_runner->play();
        QTRY_COMPARE(started.size(), 2);
        QTRY_COMPARE(m_sandbox->attachedAgents().size(), 1);
        m_runner->stop();
        QTRY_COMPARE(m_runner->state(), State::Finished);
        QCOMPARE(statuses(), (QList<Status>{Status::Passed, Status::Cancelled, Status::Cancelled}));
        QVERIFY(m_runner->stepsModel()
                    ->index(2, PlanStepsModel::DetailColumn)
                    .data()
                    .toString()
                    .contains("stopped"));
        QVERIFY(m_sandbox->attachedAgents().isEmpty());
    }

    void stopKillsARunningCommand()
    {
        // A ten-minute command: the step ends only because stop() kills it (the bound is a
        // "did not hang", far below the command's own timeout).
        m_runner->setPlan(plan({step("long", "execute", {{"command", "sleep 600"}}),
                                step("never", "list_dir", {{"path", "."}})}));
        QSignalSpy started(m_runner.get(), &PlanRunner::stepStarted);
        m_runner->play();
        QTRY_COMPARE(started.size(), 1);
        QTest::qWait(200); // the command is running
        QVERIFY(m_runner->isBusy());
        m_runner->stop();
        QTRY_COMPARE_WITH_TIMEOUT(m_runner->state(), State::Finished, 30000);
        QCOMPARE(statuses().at(1), Status::Cancelled);
        QVERIFY(m_sandbox->attachedAgents().isEmpty());
    }

    void shutdownWaitsQuietly()
    {
        m_runner->setPlan(plan({step("long", "execute", {{"command", "sleep 600"}}),
                                step("never", "list_dir", {{"path", "."}})}));
        QSignalSpy started(m_runner.get(), &PlanRunner::stepStarted);
        m_runner->play();
        QTRY_COMPARE(started.size(), 1);
        QTRY_COMPARE(m_sandbox->attachedAgents().size(), 1);
        QSignalSpy finished(m_runner.get(), &PlanRunner::stepFinished);
        QSignalSpy state(m_runner.get(), &PlanRunner::stateChanged);
        m_runner->shutdown(); // returns once the step ended: the command was killed
        QVERIFY(!m_runner->isBusy());
        QVERIFY(m_sandbox->attachedAgents().isEmpty());
        m_runner->play();
        QTest::qWait(100);
        QCOMPARE(finished.size(), 0);
        QCOMPARE(started.size(), 1);
    }

    void failureSkipsTheRestAndPlayStartsOver()
    {
        m_runner->setPlan(plan({step("fails", "read_file", {{"path", "missing.txt"}}),
                                step("after", "list_dir", {{"path", "."}})}));
        QSignalSpy done(m_runner.get(), &PlanRunner::runFinished);
        m_runner->play();
        QTRY_COMPARE(m_runner->state(), State::Finished);
        QCOMPARE(statuses(), (QList<Status>{Status::Failed, Status::Skipped}));
        QCOMPARE(done.last(), (QVariantList{0, 1, 1}));
        const QString reason =
            m_runner->stepsModel()->index(0, 0).data(PlanRoles::StepReasonRole).toString();
        QVERIFY2(reason.contains("FileNotFoundError"), qPrintable(reason));

        m_sandbox->addFiles({{QStringLiteral("missing.txt"), FileSource::text("now here")}});
        m_runner->play(); // from Finished: a fresh run
        QTRY_COMPARE(m_runner->state(), State::Finished);
        QCOMPARE(statuses(), (QList<Status>{Status::Passed, Status::Passed}));
        QCOMPARE(done.last(), (QVariantList{2, 0, 0}));
    }

    void readOnlyOverrideAndDenial()
    {
        m_runner->setPlan(plan({step("denied", "write_file", {{"path", "x"}, {"content", "y"}},
                                     {{"error", "SandboxMutationDeniedError"}})}));
        m_runner->setAgentMode(SandboxAttachMode::ReadOnly);
        m_runner->setAgentName(QStringLiteral("ro-bot"));
        test::AuditCapture audit;
        m_runner->play();
        QTRY_COMPARE(m_runner->state(), State::Finished);
        QCOMPARE(statuses(), QList<Status>{Status::Passed});
        QCOMPARE(audit.named("sandbox.write_file").value(0).actor, QStringLiteral("ro-bot"));
        QCOMPARE(audit.named("sandbox.write_file").value(0).outcome, QStringLiteral("denied"));
    }

    void withoutASandboxTheRunFails()
    {
        m_runner->setSandbox(nullptr);
        m_runner->setPlan(threeSteps());
        QSignalSpy failed(m_runner.get(), &PlanRunner::runFailed);
        m_runner->play();
        QCOMPARE(failed.size(), 1);
        QCOMPARE(failed[0][0].toString(), QStringLiteral("SandboxAttachError"));
        QCOMPARE(m_runner->state(), State::Finished);
        QCOMPARE(statuses(),
                 (QList<Status>{Status::Cancelled, Status::Cancelled, Status::Cancelled}));
    }

    void stoppedSandboxFailsToAttach()
    {
        m_sandbox->stop(false);
        m_runner->setPlan(threeSteps());
        QSignalSpy failed(m_runner.get(), &PlanRunner::runFailed);
        m_runner->play();
        QTRY_COMPARE(m_runner->state(), State::Finished);
        QCOMPARE(failed.size(), 1);
        QCOMPARE(failed[0][0].toString(), QStringLiteral("SandboxAttachError"));
        QCOMPARE(m_runner->stepsModel()->status(0), Status::Cancelled);
    }

    void roleNamesAndHeaders()
    {
        m_runner->setPlan(threeSteps());
        const PlanStepsModel *m = m_runner->stepsModel();
        QCOMPARE(m->columnCount(), int(PlanStepsModel::ColumnCount));
        QCOMPARE(m->headerData(PlanStepsModel::NameColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Step"));
        QCOMPARE(m->roleNames().value(PlanRoles::IsCurrentRole), QByteArray("isCurrent"));
        QCOMPARE(m->index(1, PlanStepsModel::ToolColumn).data().toString(),
                 QStringLiteral("read_file"));
        QCOMPARE(m->index(1, 0).data(PlanRoles::StepStatusRole).toInt(), int(Status::Pending));
        QVERIFY(!m->index(1, 0).data(PlanRoles::StepResultRole).isValid());
    }
};

QTEST_GUILESS_MAIN(TestPlanRunner)
#include "tst_planrunner.moc"
