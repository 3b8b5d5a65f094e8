// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "processregistry.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>

namespace elsai {

/// Whether a backend can open a terminal, and why not (the window's tooltip) when it cannot.
struct PtySupport
{
    bool available = false;
    QString reason; ///< empty when available
};

/// One interactive terminal session in a sandbox: a shell on a pseudo-terminal (or the remote
/// equivalent), for people; agents never get one. Lives on the thread that made it (the GUI
/// thread): its signals come there and its methods are called there. Audited as
/// `terminal.open` / `terminal.close` with the backend, the duration and the bytes each way,
/// never what was typed or shown. While it runs it is listed in the ProcessRegistry.
///
/// Backends implement the do…() hooks; the base class counts, audits and registers.
class PtySession : public QObject
{
    Q_OBJECT

public:
    enum class State { NotStarted, Starting, Running, Finished };

    PtySession(QString workspaceId, QString backendType, QObject *parent = nullptr);
    ~PtySession() override;

    const QString &workspaceId() const { return m_workspaceId; }
    const QString &backendType() const { return m_backendType; }
    State state() const { return m_state; }
    bool isRunning() const { return m_state == State::Running; }
    /// The actor of the audit records ("human").
    static QString actor() { return QStringLiteral("human"); }

    /// Starts the shell with a `cols` × `rows` window; started() or finished() follows.
    void start(int cols, int rows);
    /// Sends input (keys, a paste) to the program.
    void write(const QByteArray &bytes);
    /// Sets the window size; the program gets SIGWINCH (or the remote window change).
    void resize(int cols, int rows);
    /// Ends the session: the shell's whole process tree gets SIGHUP and SIGTERM, SIGKILL after
    /// the grace. finished() follows (at once when it never started).
    void terminate();

    int columns() const { return m_cols; }
    int rows() const { return m_rows; }
    qint64 bytesIn() const { return m_bytesIn; }   ///< typed or pasted, sent to the program
    qint64 bytesOut() const { return m_bytesOut; } ///< the program's output
    /// The program the session runs ("bash"), for a tab's title.
    QString programName() const { return m_programName; }
    /// True when a program other than the shell holds the terminal (closing asks first).
    /// Backends that cannot tell answer false.
    virtual bool hasForegroundProgram() const { return false; }
    /// The command line of that program (the Processes panel shows it beside the shell), or
    /// empty.
    virtual QString foregroundCommand() const { return {}; }
    /// Stops that program alone (SIGTERM to its process group, SIGKILL after the grace), the
    /// shell staying; false when there is none or the backend cannot (the Processes panel's
    /// Stop then ends the whole terminal).
    virtual bool stopForeground() { return false; }
    /// The host process that leads the session's tree (a local shell), or 0.
    qint64 leaderPid() const { return m_pid; }
    /// The session's entry in the ProcessRegistry (0 while not running).
    quint64 processId() const { return m_registration.id(); }
    /// Called (throttled to once a second) when the user types: keeps the sandbox's idle
    /// clock from expiring it under an active terminal.
    void setActivityCallback(std::function<void()> callback) { m_activity = std::move(callback); }

Q_SIGNALS:
    void started();
    void output(const QByteArray &bytes);
    /// The session ended: the program's exit code (128+N for signal N), or -1 with `error`
    /// when it could not start or the connection broke.
    void finished(int exitCode, const QString &error);

protected:
    virtual void doStart(int cols, int rows) = 0;
    virtual void doWrite(const QByteArray &bytes) = 0;
    virtual void doResize(int cols, int rows) = 0;
    virtual void doTerminate() = 0;

    void setProgramName(const QString &name) { m_programName = name; }
    /// The shell runs (`pid`: its host process, 0 when remote).
    void reportStarted(qint64 pid = 0);
    void reportOutput(const QByteArray &bytes);
    /// The session is over (a failure to start too); emits finished() once.
    void reportFinished(int exitCode, const QString &error = QString());

private:
    QString m_workspaceId;
    QString m_backendType;
    QString m_programName = QStringLiteral("sh");
    State m_state = State::NotStarted;
    int m_cols = 80;
    int m_rows = 24;
    int m_startCols = 80; ///< the size the program was started with
    int m_startRows = 24;
    qint64 m_bytesIn = 0;
    qint64 m_bytesOut = 0;
    qint64 m_pid = 0;
    QElapsedTimer m_clock;
    QElapsedTimer m_lastActivity;
    std::function<void()> m_activity;
    ProcessRegistration m_registration;
    QTimer m_foregroundPoll;      ///< keeps the registry's `foreground` current while running
    QString m_stoppingForeground; ///< the foreground program a stop() is ending
};

} // namespace elsai
