// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sessionrecording.h"

#include "errors.h"
#include "sandboxcontroller.h"

#include <QAction>
#include <QDebug>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QtConcurrent>

namespace elsai {

SessionRecording::SessionRecording(SandboxController *controller, QWidget *dialogParent)
    : QObject(dialogParent), m_controller(controller), m_dialogParent(dialogParent),
      m_record(new QAction(tr("&Record Session…"), this)),
      m_stop(new QAction(tr("Stop &Recording"), this))
{
    m_record->setObjectName(QStringLiteral("actionRecordSession"));
    m_record->setToolTip(tr("Record the current sandbox's tool calls as a plan to replay "
                            "(needs --checkpoints and --track-changes)"));
    m_stop->setObjectName(QStringLiteral("actionStopRecording"));
    m_stop->setToolTip(tr("Stop recording and save the plan"));
    connect(m_record, &QAction::triggered, this, [this] {
        const QString file = QFileDialog::getSaveFileName(
            m_dialogParent, tr("Record Session"),
            QDir::home().filePath(QStringLiteral("recorded-session.json")),
            tr("Agent plans (*.json)"));
        if (!file.isEmpty())
            start(file);
    });
    connect(m_stop, &QAction::triggered, this, &SessionRecording::stop);
    connect(&m_tick, &QTimer::timeout, this, [this] {
        if (m_recorder)
            setStatus(tr("Recording %1 to %2 · %n call(s)", nullptr, m_recorder->steps())
                          .arg(m_recordingWorkspace, QFileInfo(m_file).fileName()),
                      false);
    });
    m_tick.setInterval(1000);
    connect(&m_watcher, &QFutureWatcher<Done>::finished, this, [this] {
        m_busy = false;
        const Done done = m_watcher.result();
        const QString &error = done.error;
        if (done.started)
            m_recorder = done.started;
        if (!error.isEmpty()) {
            m_recorder.reset();
            m_tick.stop();
            setStatus(error, true);
        } else if (m_recorder && m_recorder->isRecording()) {
            m_tick.start();
            setStatus(tr("Recording %1 to %2 (from checkpoint %3)")
                          .arg(m_recordingWorkspace, QFileInfo(m_file).fileName(),
                               m_recorder->checkpoint()),
                      true);
        } else if (m_recorder) {
            setStatus(tr("Recorded %n call(s) of %1 to %2", nullptr, m_recorder->steps())
                          .arg(m_recordingWorkspace, QDir::toNativeSeparators(m_file)),
                      true);
            m_recorder.reset();
        }
        updateActions();
    });
    updateActions();
}

SessionRecording::~SessionRecording()
{
    m_watcher.waitForFinished();
    std::shared_ptr<SessionRecorder> recorder = m_recorder;
    if (!recorder && m_watcher.future().resultCount() > 0)
        recorder = m_watcher.result().started; // it started as the window closed
    if (!recorder || !recorder->isRecording())
        return;
    // Closing the window while recording: what was recorded is saved, not lost.
    recorder->stop();
    try {
        recorder->save(m_file);
    } catch (const SandboxError &e) {
        qWarning().noquote() << "the recording was not saved:" << e.display();
    }
}

void SessionRecording::setWorkspace(const QString &workspaceId)
{
    m_workspaceId = workspaceId;
    updateActions();
}

void SessionRecording::start(const QString &file)
{
    if (isRecording() || isBusy())
        return;
    const SandboxPtr sandbox =
        m_controller && !m_workspaceId.isEmpty() ? m_controller->sandbox(m_workspaceId) : nullptr;
    if (!sandbox) {
        setStatus(tr("Select a started sandbox to record"), true);
        return;
    }
    m_file = file;
    m_recordingWorkspace = m_workspaceId;
    SessionRecorder::Options options;
    options.name = QFileInfo(file).completeBaseName();
    m_busy = true;
    setStatus(tr("Taking the starting checkpoint of %1…").arg(m_workspaceId), false);
    // The starting checkpoint copies what the store lacks: not on the GUI thread.
    m_watcher.setFuture(QtConcurrent::run([sandbox, options] {
        try {
            return Done{QString(), std::make_shared<SessionRecorder>(sandbox, options)};
        } catch (const SandboxError &e) {
            return Done{tr("Cannot record: %1").arg(e.display()), nullptr};
        }
    }));
    updateActions();
}

void SessionRecording::stop()
{
    if (!isRecording() || isBusy())
        return;
    m_tick.stop();
    const std::shared_ptr<SessionRecorder> recorder = m_recorder;
    const QString file = m_file;
    recorder->stop(); // no call is recorded after this
    m_busy = true;
    m_watcher.setFuture(QtConcurrent::run([recorder, file] {
        try {
            recorder->save(file);
            return Done();
        } catch (const SandboxError &e) {
            return Done{tr("The recording was not saved: %1").arg(e.display()), nullptr};
        }
    }));
    updateActions();
}

void SessionRecording::setStatus(const QString &text, bool announce)
{
    m_status = text;
    Q_EMIT statusChanged(announce ? text : QString());
}

void SessionRecording::updateActions()
{
    m_record->setEnabled(!isRecording() && !isBusy() && !m_workspaceId.isEmpty());
    m_stop->setEnabled(isRecording() && !isBusy());
}

} // namespace elsai
