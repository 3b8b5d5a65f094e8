// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "ptysession.h"

#include "audit.h"

#include <QJsonObject>
#include <QPointer>

#include <algorithm>

namespace elsai {

namespace {
constexpr int MaxCells = 4096; // columns or rows: more is a bug or a hostile resize
constexpr qint64 ActivityIntervalMs = 1000;
constexpr int ForegroundPollMs = 1000;
} // namespace

PtySession::PtySession(QString workspaceId, QString backendType, QObject *parent)
    : QObject(parent), m_workspaceId(std::move(workspaceId)), m_backendType(std::move(backendType))
{
    m_foregroundPoll.setInterval(ForegroundPollMs);
    connect(&m_foregroundPoll, &QTimer::timeout, this, [this] {
        const QString command = foregroundCommand();
        const bool stopped = !m_stoppingForeground.isEmpty() && command != m_stoppingForeground;
        if (stopped)
            m_stoppingForeground.clear();
        ProcessRegistry::instance().setForeground(m_registration.id(), command, stopped);
    });
}

PtySession::~PtySession() = default;

void PtySession::start(int cols, int rows)
{
    if (m_state != State::NotStarted)
        return;
    m_cols = std::clamp(cols, 1, MaxCells);
    m_rows = std::clamp(rows, 1, MaxCells);
    m_state = State::Starting;
    m_startCols = m_cols;
    m_startRows = m_rows;
    m_clock.start();
    doStart(m_cols, m_rows);
}

void PtySession::write(const QByteArray &bytes)
{
    if (m_state != State::Running || bytes.isEmpty())
        return;
    m_bytesIn += bytes.size();
    if (m_activity &&
        (!m_lastActivity.isValid() || m_lastActivity.elapsed() >= ActivityIntervalMs)) {
        m_lastActivity.start();
        m_activity();
    }
    doWrite(bytes);
}

void PtySession::resize(int cols, int rows)
{
    cols = std::clamp(cols, 1, MaxCells);
    rows = std::clamp(rows, 1, MaxCells);
    if (cols == m_cols && rows == m_rows)
        return;
    m_cols = cols;
    m_rows = rows;
    if (m_state == State::Running)
        doResize(cols, rows);
}

void PtySession::terminate()
{
    switch (m_state) {
    case State::NotStarted:
        reportFinished(-1, tr("the terminal was closed before it started"));
        return;
    case State::Starting:
    case State::Running:
        doTerminate();
        return;
    case State::Finished:
        return;
    }
}

void PtySession::reportStarted(qint64 pid)
{
    if (m_state != State::Starting)
        return;
    m_state = State::Running;
    m_pid = pid;
    // The view may have been laid out (resized) while the program was starting.
    if (m_cols != m_startCols || m_rows != m_startRows)
        doResize(m_cols, m_rows);
    ProcessEntry entry;
    entry.workspaceId = m_workspaceId;
    entry.kind = ProcessEntry::Kind::Terminal;
    entry.label = m_programName;
    entry.actor = actor();
    entry.backend = m_backendType;
    entry.pid = pid;
    ProcessHooks hooks;
    // The registry may call it from any thread: the session lives on its own.
    hooks.stop = [self = QPointer<PtySession>(this)] {
        QMetaObject::invokeMethod(
            self.data(),
            [self] {
                if (!self)
                    return;
                const QString program = self->foregroundCommand();
                if (!program.isEmpty() && self->stopForeground())
                    self->m_stoppingForeground = program; // the poll sees it go
                else
                    self->terminate();
            },
            Qt::QueuedConnection);
    };
    m_registration = ProcessRegistration(std::move(entry), std::move(hooks));
    m_foregroundPoll.start();
    AuditLog::instance().emitEvent(QStringLiteral("terminal.open"), m_workspaceId, actor(),
                                   QStringLiteral("ok"),
                                   {{QStringLiteral("backend"), m_backendType},
                                    {QStringLiteral("columns"), m_cols},
                                    {QStringLiteral("rows"), m_rows}});
    Q_EMIT started();
}

void PtySession::reportOutput(const QByteArray &bytes)
{
    if (bytes.isEmpty())
        return;
    m_bytesOut += bytes.size();
    Q_EMIT output(bytes);
}

void PtySession::reportFinished(int exitCode, const QString &error)
{
    if (m_state == State::Finished)
        return;
    const bool wasRunning = m_state == State::Running;
    m_state = State::Finished;
    m_foregroundPoll.stop();
    m_registration.reset();
    if (wasRunning) {
        QJsonObject fields{{QStringLiteral("backend"), m_backendType},
                           {QStringLiteral("duration_ms"), m_clock.elapsed()},
                           {QStringLiteral("bytes_in"), m_bytesIn},
                           {QStringLiteral("bytes_out"), m_bytesOut},
                           {QStringLiteral("exit_code"), exitCode}};
        // The error names the connection or the program, never the session's text.
        if (!error.isEmpty())
            fields.insert(QStringLiteral("error"), error.left(1024));
        AuditLog::instance().emitEvent(
            QStringLiteral("terminal.close"), m_workspaceId, actor(),
            error.isEmpty() ? QStringLiteral("ok") : QStringLiteral("error"), fields);
    } else if (m_clock.isValid()) {
        AuditLog::instance().emitEvent(QStringLiteral("terminal.open"), m_workspaceId, actor(),
                                       QStringLiteral("error"),
                                       {{QStringLiteral("backend"), m_backendType},
                                        {QStringLiteral("error"), error.left(1024)}});
    }
    Q_EMIT finished(exitCode, error);
}

} // namespace elsai
