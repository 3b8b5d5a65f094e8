// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "sandbox.h"
#include "sessionrecorder.h"

#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <memory>

class QAction;
class QWidget;

namespace elsai {

class SandboxController;

/// *Sandbox → Record Session…* and *Stop Recording* in the window: records the tool calls made
/// in the current sandbox (the console's, MCP agents', scripted agents') into a plan file that
/// the Scripted Agent dock or `--run-agent` replays (docs/agents.md, "Recorded plans"). The
/// starting checkpoint and the save run off the GUI thread. One recording at a time.
class SessionRecording : public QObject
{
    Q_OBJECT

public:
    /// `dialogParent`: where the file dialog and errors show.
    SessionRecording(SandboxController *controller, QWidget *dialogParent);
    ~SessionRecording() override;

    QAction *recordAction() const { return m_record; }
    QAction *stopAction() const { return m_stop; }
    bool isRecording() const { return m_recorder != nullptr; }
    /// Starting or saving (until the result is taken on the GUI thread).
    bool isBusy() const { return m_busy; }
    /// One line: "Recording to FILE · N calls", the last result, or empty.
    QString statusText() const { return m_status; }

public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
    /// Starts recording the current sandbox into `file` (the action asks for it).
    void start(const QString &file);
    /// Stops and saves the plan.
    void stop();

Q_SIGNALS:
    /// The status changed (statusText()); `message` is also worth the status bar when set.
    void statusChanged(const QString &message);

private:
    void setStatus(const QString &text, bool announce);
    void updateActions();

    SandboxController *m_controller;
    QPointer<QWidget> m_dialogParent;
    QString m_workspaceId;
    QString m_recordingWorkspace;
    QString m_file;
    std::shared_ptr<SessionRecorder> m_recorder;
    /// Starting (the new recorder) or saving (none); the error text, empty when fine.
    struct Done
    {
        QString error;
        std::shared_ptr<SessionRecorder> started;
    };
    QFutureWatcher<Done> m_watcher;
    QAction *m_record;
    QAction *m_stop;
    QTimer m_tick; ///< the count of calls while recording
    QString m_status;
    bool m_busy = false;
};

} // namespace elsai
