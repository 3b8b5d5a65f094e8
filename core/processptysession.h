// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "process.h"
#include "ptysession.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

class QSocketNotifier;

namespace elsai {

/// What a ProcessPtySession runs: the program on the PTY's slave. The backends build it (local:
/// the user's shell in the workspace; bwrap: bwrap around a shell; ssh: `ssh -tt` over the
/// master).
struct PtyLaunch
{
    /// `arguments` (program first, absolute), `environment`, `cwdFd`, `joinCgroupFd`,
    /// `sweepStrays` and `killGraceMs` count; the output fields do not (there is none).
    ProcessSpec spec;
    /// What the spec's descriptors belong to (a folder fd, a pids cgroup): kept until the
    /// program has ended.
    std::shared_ptr<void> keepAlive;
    QString programName; ///< for the tab's title
    /// The names (/proc/PID/comm) that mean "nothing runs but the shell" in the foreground.
    QStringList idleNames;
    /// Run on the session's thread once the program has ended (a remote sweep of what it left).
    std::function<void()> cleanup;
};

/// The terminal's environment: `base` with TERM and COLORTERM of a 256-colour, true-colour
/// terminal (whatever `base` said), and `extra` ("K=V") on top.
QStringList terminalEnvironment(const QStringList &base, const QStringList &extra = {});

/// Shells a terminal's foreground may show while nothing else runs.
QStringList idleShellNames();

/// A PtySession whose program is a host process on a local pseudo-terminal, started by
/// runProcess (platform/process.h) on a thread of the session's own: so it is in its own
/// session and process group, inside the engine's cgroup, carries the engine's marker, is
/// killed with its whole tree when the session ends, and dies with the engine (the watchdog,
/// a shutdown). The parent-death signal follows the thread, which lives as long as the program.
/// The PTY master is read on the session's thread in bounded chunks per event-loop turn, so a
/// flood of output never starves the window.
class ProcessPtySession : public PtySession
{
    Q_OBJECT

public:
    /// Builds the launch on the session's thread (it may block: an ssh master that must start
    /// first); throws SandboxError for a backend that cannot.
    using Launcher = std::function<PtyLaunch()>;

    ProcessPtySession(QString workspaceId, QString backendType, Launcher launcher,
                      QObject *parent = nullptr);
    /// Ends the program and waits for its thread (bounded by the kill grace).
    ~ProcessPtySession() override;

    bool hasForegroundProgram() const override;
    QString foregroundCommand() const override;
    bool stopForeground() override;
    /// The PTY master (tests read its window size), -1 when not running.
    int masterFd() const;

    /// Bytes read from the master per event-loop turn at most, and the time spent on them
    /// (the view's parsing included): the window stays responsive under a flood.
    static constexpr qsizetype ReadBudget = 256 * 1024;
    static constexpr int TimeBudgetMs = 8;

protected:
    void doStart(int cols, int rows) override;
    void doWrite(const QByteArray &bytes) override;
    void doResize(int cols, int rows) override;
    void doTerminate() override;

private:
    void onReadable();
    void onWritable();
    void onProgramEnded(int exitCode, const QString &error);
    void closeMaster();
    /// The terminal's foreground process group when a program other than the shell holds
    /// it, else 0.
    pid_t foregroundProgramGroup() const;
    /// Reads at most `budget` bytes, for at most `timeBudgetMs` (-1: no limit) counting the
    /// time the receivers of output() take; false at EOF or on an error (the slave is gone).
    bool readSome(qsizetype budget, int timeBudgetMs = -1);

    struct Shared;
    Launcher m_launcher;
    std::shared_ptr<Shared> m_shared;
    std::thread m_thread;
    int m_master = -1;
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr;
    QByteArray m_pending; ///< input the PTY did not take yet
    QStringList m_idleNames;
};

} // namespace elsai
