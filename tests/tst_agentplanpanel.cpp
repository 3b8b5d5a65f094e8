// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The scripted-agent panel on the offscreen platform: plays the bundled demo plans against a
// sandbox seeded from the sample project (through the window's controller) and checks each
// step's result, the highlighted step, the controls, and the agent in the agents model.

#include "agentplanpanel.h"
#include "agentsmodel.h"
#include "mainwindow.h"
#include "sandboxcontroller.h"
#include "testutil.h"

#include <QAction>
#include <QComboBox>
#include <QDirIterator>
#include <QDockWidget>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

using namespace elsai;
using Status = PlanStepsModel::Status;
using State = PlanRunner::State;

class TestAgentPlanPanel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;
    std::unique_ptr<SandboxController> m_controller;
    QString m_id;
    QString m_root;

    QList<Status> statuses(const AgentPlanPanel &panel) const
    {
        QList<Status> out;
        const PlanStepsModel *m = panel.runner()->stepsModel();
        for (int i = 0; i < m->rowCount(); ++i)
            out.append(m->status(i));
        return out;
    }

    static void choose(AgentPlanPanel &panel, const QString &demo)
    {
        const int index = panel.planBox()->findData(AgentPlan::demoPrefix() + demo);
        QVERIFY2(index >= 0, qPrintable(demo));
        panel.planBox()->setCurrentIndex(index);
    }

private Q_SLOTS:
    void initTestCase()
    {
        // The main window saves its layout: keep it away from the user's settings.
        QStandardPaths::setTestModeEnabled(true);
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                           m_tmp.filePath(QStringLiteral("config")));
    }

    void init()
    {
        // A writable copy of the sample project: the run must never touch the sources.
        ++m_n;
        const QString project = m_tmp.filePath(QStringLiteral("project-%1").arg(m_n));
        const QString source = QStringLiteral(ELSAI_SOURCE_DIR "/resources/sample-project");
        QDirIterator it(source, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            test::writeHostFile(project + file.mid(source.size()), test::readHostFile(file));
        }
        m_controller = std::make_unique<SandboxController>();
        SandboxSpec spec;
        m_id = QStringLiteral("panel-%1").arg(m_n);
        m_root = m_tmp.filePath(QStringLiteral("ws-%1").arg(m_n));
        spec.workspaceId = m_id;
        spec.workspaceRoot = m_root;
        spec.seedFrom = project;
        m_controller->addSandbox(spec);
        QTRY_VERIFY(m_controller->state(m_id) == SessionState::Running);
    }

    void cleanup()
    {
        m_controller->waitForIdle();
        m_controller.reset();
    }

    void lists_the_demo_plans()
    {
        AgentPlanPanel panel(m_controller.get());
        QCOMPARE(panel.planBox()->count(), AgentPlan::demoNames().size());
        QCOMPARE(panel.runner()->state(), State::Ready); // the first demo is loaded
        QVERIFY(panel.playButton()->isEnabled());
        QVERIFY(!panel.stopButton()->isEnabled());
        QVERIFY(panel.statusLabel()->text().contains("no sandbox"));
        panel.setWorkspace(m_id);
        QVERIFY(panel.statusLabel()->text().contains(m_id));
    }

    void plays_fix_failing_test()
    {
        AgentPlanPanel panel(m_controller.get());
        panel.setWorkspace(m_id);
        choose(panel, QStringLiteral("fix-failing-test"));
        panel.runner()->setSleeper([](qint64) {}); // the demo's delays are for people
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QCOMPARE(panel.view()->model()->rowCount(), 6);

        QTest::mouseClick(panel.playButton(), Qt::LeftButton);
        QVERIFY(!panel.playButton()->isEnabled());
        QVERIFY(panel.stopButton()->isEnabled());
        QVERIFY(!panel.planBox()->isEnabled()); // no plan change during a run
        QTRY_COMPARE_WITH_TIMEOUT(panel.runner()->state(), State::Finished, 60000);

        QCOMPARE(statuses(panel), QList<Status>(6, Status::Passed));
        QCOMPARE(panel.statusLabel()->text(), QStringLiteral("Finished · 6 passed, 0 failed"));
        const QAbstractItemModel *m = panel.view()->model();
        QCOMPARE(m->index(5, PlanStepsModel::StatusColumn).data().toString(),
                 QStringLiteral("passed"));
        QCOMPARE(m->index(5, PlanStepsModel::DetailColumn).data().toString(),
                 QStringLiteral("exit code 0 · OK"));
        QCOMPARE(m->index(0, PlanStepsModel::DetailColumn).data().toString(),
                 QStringLiteral("exit code 1 · FAILED (failures=1)"));
        QCOMPARE(m->index(1, PlanStepsModel::DetailColumn).data().toString(),
                 QStringLiteral("24 lines of tests/test_ops.py"));
        // The fix is in the workspace (and nowhere else: nothing was flushed).
        QVERIFY(test::readHostFile(m_root + "/src/calc/ops.py").contains("100.0 * part / whole"));

        panel.view()->selectRow(0);
        QVERIFY(panel.details()->toPlainText().contains("unittest discover"));
        QVERIFY(panel.details()->toPlainText().contains("\"exit_code\": 1"));

        // The README's screenshot of the panel (written next to the test binary).
        panel.resize(980, 560);
        QCoreApplication::processEvents();
        QVERIFY(panel.grab().save(QCoreApplication::applicationDirPath() +
                                  QStringLiteral("/agentplan-panel.png")));
    }

    void steps_highlight_and_show_the_agent()
    {
        AgentPlanPanel panel(m_controller.get());
        panel.setWorkspace(m_id);
        choose(panel, QStringLiteral("readonly-denied"));
        const PlanStepsModel *m = panel.runner()->stepsModel();
        QVERIFY(m->index(0, 0).data(PlanRoles::IsCurrentRole).toBool());

        QTest::mouseClick(panel.stepButton(), Qt::LeftButton);
        QTRY_COMPARE(panel.runner()->state(), State::Paused);
        QCOMPARE(statuses(panel), (QList<Status>{Status::Passed, Status::Pending, Status::Pending,
                                                 Status::Pending}));
        QVERIFY(m->index(1, 0).data(PlanRoles::IsCurrentRole).toBool());
        QVERIFY(!m->index(0, 0).data(PlanRoles::IsCurrentRole).toBool());
        QVERIFY(panel.statusLabel()->text().startsWith("Paused before step 2 of 4"));

        // While paused, the plan's agent is attached read-only and listed in the agents model.
        m_controller->refreshPanels();
        QTRY_VERIFY(m_controller->agentsModel()->rowOf(m_id, QStringLiteral("reviewer")) >= 0);
        const int row = m_controller->agentsModel()->rowOf(m_id, QStringLiteral("reviewer"));
        QCOMPARE(m_controller->agentsModel()->agent(row).mode, QStringLiteral("read_only"));

        QTest::mouseClick(panel.playButton(), Qt::LeftButton);
        QTRY_COMPARE(panel.runner()->state(), State::Finished);
        QCOMPARE(statuses(panel), QList<Status>(4, Status::Passed));
        // The denied write shows the expected error.
        QVERIFY(m->index(1, PlanStepsModel::DetailColumn)
                    .data()
                    .toString()
                    .startsWith("SandboxMutationDeniedError (expected)"));
        m_controller->refreshPanels();
        QTRY_COMPARE(m_controller->agentsModel()->rowOf(m_id, QStringLiteral("reviewer")), -1);
    }

    void mode_override_and_stop()
    {
        AgentPlanPanel panel(m_controller.get());
        panel.setWorkspace(m_id);
        choose(panel, QStringLiteral("fix-failing-test"));
        panel.modeBox()->setCurrentIndex(panel.modeBox()->findText("read_only"));
        QTest::mouseClick(panel.playButton(), Qt::LeftButton);
        QTRY_COMPARE(panel.runner()->state(), State::Finished);
        // Read-only, the first step (a command) is denied and the rest are skipped.
        QCOMPARE(statuses(panel),
                 (QList<Status>{Status::Failed, Status::Skipped, Status::Skipped, Status::Skipped,
                                Status::Skipped, Status::Skipped}));
        QVERIFY(panel.statusLabel()->text().contains("5 not run"));

        // Stop during a delay: step 3 of the demo waits before it reads; the wait here lasts
        // until the test has pressed Stop.
        std::atomic_bool waiting{false}, release{false};
        panel.runner()->setSleeper([&](qint64) {
            waiting = true;
            while (!release)
                QThread::msleep(1);
        });
        panel.modeBox()->setCurrentIndex(0);
        QTest::mouseClick(panel.playButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(waiting, 30000);
        QTest::mouseClick(panel.stopButton(), Qt::LeftButton);
        release = true;
        QTRY_COMPARE(panel.runner()->state(), State::Finished);
        QCOMPARE(statuses(panel),
                 (QList<Status>{Status::Passed, Status::Passed, Status::Cancelled,
                                Status::Cancelled, Status::Cancelled, Status::Cancelled}));
        QVERIFY(panel.statusLabel()->text().contains("4 not run"));
    }

    void no_sandbox_is_reported()
    {
        AgentPlanPanel panel(m_controller.get());
        QTest::mouseClick(panel.playButton(), Qt::LeftButton);
        QCOMPARE(panel.runner()->state(), State::Finished);
        QVERIFY2(panel.statusLabel()->text().startsWith("SandboxAttachError"),
                 qPrintable(panel.statusLabel()->text()));
    }

    void main_window_has_the_dock()
    {
        MainWindow window(m_controller.get());
        auto *panel = window.findChild<AgentPlanPanel *>();
        QVERIFY(panel);
        auto *dock = window.findChild<QDockWidget *>(QStringLiteral("agentPlanDock"));
        QVERIFY(dock);
        QCOMPARE(dock->widget(), panel);
        window.setCurrentWorkspace(m_id);
        QVERIFY(panel->statusLabel()->text().contains(m_id));
        // Record and replay from the Sandbox menu: the panel's actions.
        auto *record = window.findChild<QAction *>(QStringLiteral("actionRecordSession"));
        QVERIFY(record);
        QCOMPARE(record, panel->recording()->recordAction());
        QVERIFY(record->isEnabled());
        QVERIFY(!panel->recording()->stopAction()->isEnabled());
    }

    /// Sandbox → Record Session… of the console's command, then its replay in the dock.
    void records_and_replays_in_the_window()
    {
        AgentPlanPanel panel(m_controller.get());
        // A sandbox without change tracking cannot be recorded, and says how to make one.
        panel.setWorkspace(m_id);
        panel.recording()->start(m_tmp.filePath(QStringLiteral("never.json")));
        QTRY_VERIFY(!panel.recording()->isBusy());
        QVERIFY2(panel.recording()->statusText().contains("--track-changes"),
                 qPrintable(panel.recording()->statusText()));
        QVERIFY(!panel.recording()->isRecording());

        SandboxSpec spec;
        spec.workspaceId = m_id + QStringLiteral("-tt");
        spec.workspaceRoot = m_root + QStringLiteral("-tt");
        spec.seedFrom = m_controller->sandbox(m_id)->options().seedFrom;
        spec.timeTravel.checkpoints = true;
        spec.timeTravel.trackChanges = true;
        spec.timeTravel.folder = m_tmp.filePath(QStringLiteral("store-%1").arg(m_n));
        m_controller->addSandbox(spec);
        QTRY_VERIFY(m_controller->state(spec.workspaceId) == SessionState::Running);
        panel.setWorkspace(spec.workspaceId);
        const QString file = m_tmp.filePath(QStringLiteral("recorded-%1.json").arg(m_n));
        panel.recording()->start(file);
        QTRY_VERIFY(panel.recording()->isRecording());
        QVERIFY(panel.recording()->stopAction()->isEnabled());
        QVERIFY(!panel.recording()->recordAction()->isEnabled());
        QSignalSpy finished(m_controller.get(), &SandboxController::commandFinished);
        m_controller->execute(spec.workspaceId, QStringLiteral("echo fixed >> README.md"));
        QTRY_COMPARE(finished.size(), 1);
        panel.recording()->stop();
        QTRY_VERIFY(!panel.recording()->isRecording() && !panel.recording()->isBusy());
        QVERIFY2(panel.recording()->statusText().contains("Recorded 1 call"),
                 qPrintable(panel.recording()->statusText()));

        // The replay restores the starting checkpoint (asked first; not here) and matches.
        QVERIFY(panel.loadPlan(file));
        QCOMPARE(panel.runner()->plan()->steps.first().agentName, std::nullopt);
        panel.setConfirmRestore(false);
        QTest::mouseClick(panel.playButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(panel.runner()->state(), State::Finished, 60000);
        QVERIFY2(statuses(panel) == QList<Status>{Status::Passed},
                 qPrintable(panel.runner()->stepsModel()->result(0)->reason));
        QVERIFY2(panel.statusLabel()->text().contains("Start: restored checkpoint"),
                 qPrintable(panel.statusLabel()->text()));

        // A divergence shows as a failed step, with the divergence in its result.
        m_controller->sandbox(spec.workspaceId)->restore(panel.runner()->plan()->start->checkpoint);
        m_controller->sandbox(spec.workspaceId)
            ->deleteCheckpoint(panel.runner()->plan()->start->checkpoint);
        m_controller->sandbox(spec.workspaceId)
            ->writeFile(QStringLiteral("README.md"), "another start\n");
        QTest::mouseClick(panel.playButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(panel.runner()->state(), State::Finished, 60000);
        QCOMPARE(statuses(panel), QList<Status>{Status::Failed});
        QVERIFY(panel.statusLabel()->text().contains("Start diverged"));
        const StepResult r = *panel.runner()->stepsModel()->result(0);
        QCOMPARE(r.divergences.size(), 1);
        QCOMPARE(r.divergences.first().check, QStringLiteral("file"));
        QCOMPARE(r.divergences.first().path, QStringLiteral("README.md"));
        m_controller->stopSandbox(spec.workspaceId, false);
        QTRY_VERIFY(m_controller->state(spec.workspaceId) != SessionState::Running);
    }
};

QTEST_MAIN(TestAgentPlanPanel)
#include "tst_agentplanpanel.moc"
