// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "planrunner.h"
#include "sessionrecording.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTableView;

namespace elsai {

class SandboxController;

/// Scripted agents in the window: pick a bundled demo plan or open a plan file, then play,
/// pause, step or stop it against the current sandbox. The steps table highlights the step
/// running (or next), colours each result, and shows the selected step's result in full.
/// The plan's agent appears in the agents panel while the run lasts.
class AgentPlanPanel : public QWidget
{
    Q_OBJECT

public:
    explicit AgentPlanPanel(SandboxController *controller, QWidget *parent = nullptr);

    PlanRunner *runner() const { return m_runner; }
    QComboBox *planBox() const { return m_plans; }
    QComboBox *modeBox() const { return m_mode; }
    QPushButton *playButton() const { return m_play; }
    QPushButton *pauseButton() const { return m_pause; }
    QPushButton *stepButton() const { return m_step; }
    QPushButton *stopButton() const { return m_stop; }
    QTableView *view() const { return m_view; }
    QLabel *statusLabel() const { return m_status; }
    QPlainTextEdit *details() const { return m_details; }
    /// Record Session… / Stop Recording of the current sandbox (the Sandbox menu shows them).
    SessionRecording *recording() const { return m_recording; }
    /// Asks before a recorded plan's run restores its starting checkpoint (tests: false).
    void setConfirmRestore(bool confirm) { m_confirmRestore = confirm; }

public Q_SLOTS:
    /// The sandbox the next run attaches to.
    void setWorkspace(const QString &workspaceId);
    /// Loads a plan file or "demo:NAME" and selects it; false (and the error shown) when it
    /// cannot be loaded.
    bool loadPlan(const QString &source);
    void openPlanFile();

private:
    void onPlanChosen(int index);
    void updateControls();
    void updateStatus();
    void updateRunStatus();
    void updateDetails();
    void showError(const QString &text);
    /// A recorded plan about to run from its start: true when its starting checkpoint would
    /// replace the workspace and the user said no.
    bool restoreDeclined();
    void showStart(const StartCheck &check);

    SandboxController *m_controller;
    PlanRunner *m_runner;
    QString m_workspaceId;
    QComboBox *m_plans;
    QPushButton *m_open;
    QComboBox *m_mode;
    QLabel *m_info;
    QPushButton *m_play, *m_pause, *m_step, *m_stop;
    QTableView *m_view;
    QLabel *m_status;
    QPlainTextEdit *m_details;
    QString m_error;
    SessionRecording *m_recording;
    QLabel *m_recordingStatus;
    QString m_start; ///< how a recorded plan's run found its start
    bool m_confirmRestore = true;
};

} // namespace elsai
