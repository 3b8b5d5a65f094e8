// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "types.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>

namespace elsai {

/// A cancellation flag that also wakes a waiting poll() at once (eventfd).
/// Thread-safe; share it with std::shared_ptr. The eventfd is made by the first fd(): most
/// tokens (one per tool call) are only ever checked, never polled.
class CancellationToken
{
public:
    CancellationToken() = default;
    ~CancellationToken();
    CancellationToken(const CancellationToken &) = delete;
    CancellationToken &operator=(const CancellationToken &) = delete;

    void cancel();
    bool isCancelled() const { return m_cancelled.load(); }
    int fd() const; ///< readable once cancelled; -1 if no eventfd could be made

private:
    std::atomic_bool m_cancelled{false};
    static void signal(int fd);

    mutable std::atomic_int m_fd{-1};
};

enum class OutputChannel { Stdout, Stderr };

struct ProcessSpec
{
    QString command; ///< run as /bin/sh -c <command> (when `arguments` is empty)
    /// Program (absolute path) and arguments, run directly without a shell; overrides
    /// `command`. Saves an exec where the caller already has an argument vector (bwrap).
    QStringList arguments;
    int cwdFd = -1; ///< working folder as an fd (fchdir in the child); -1 = inherit
    /// The child's stdin (a pipe's read end, >= 3; the child gets a copy); -1 = /dev/null.
    int stdinFd = -1;
    QStringList environment;        ///< complete environment, "K=V" entries
    int timeoutMs = 120000;         ///< <= 0: no timeout
    int killGraceMs = 1000;         ///< TERM → KILL grace after a timeout or a cancel
    qint64 maxOutputBytes = 100000; ///< cap on stdout + stderr kept together
    /// Called on the calling thread for every chunk kept (after the cap, nothing more).
    std::function<void(OutputChannel, const QByteArray &)> onOutput;
    /// Every chunk goes to onOutput and none is kept (maxOutputBytes does not apply): for a
    /// consumer that bounds what it holds itself (background processes).
    bool streamOnly = false;
    std::shared_ptr<CancellationToken> cancel;
    /// Find and kill descendants that left the process group by the environment marker. A
    /// caller whose command cannot outlive the group leader anyway (bwrap: a pid namespace
    /// dies with it) turns this off and saves scanning every pid allocated meanwhile.
    bool sweepStrays = true;
    /// A writable cgroup file (`tasks` on cgroup v1, `cgroup.procs` on v2) the child writes
    /// "0" to between fork and exec, so that it and every descendant start in that cgroup and
    /// nothing escapes the limit. v1 `tasks` moves one thread without the global threadgroup
    /// lock (whose RCU grace period `cgroup.procs` waits for). -1: stay in ours.
    int joinCgroupFd = -1;
    /// A terminal (a PTY slave, fd > 2) that becomes the command's controlling terminal and its
    /// stdin, stdout and stderr: nothing is captured then (the caller reads the PTY master),
    /// and the call returns when the command ends, is cancelled or times out. -1: pipes.
    int ttyFd = -1;
    /// With `ttyFd`: false leaves the terminal stdio only, not the controlling terminal of the
    /// new session, so that a program further down (in a sandbox's session of its own) can
    /// take it without privileges.
    bool ttyControlling = true;
    /// Called on the calling thread once the command runs, with its pid (= its process group
    /// and session id), before any output: a backend keeps its commands' groups for the views
    /// that sample their resource use and list its processes. Not called when the command
    /// could not start.
    std::function<void(qint64 pid)> onStarted;
};

struct ProcessOutcome
{
    QByteArray stdoutData;
    QByteArray stderrData;
    int exitCode = -1; ///< exit status; 128+N for signal N; 124 on timeout
    bool truncated = false;
    bool timedOut = false;
    bool cancelled = false; ///< exit code is then 130
    qint64 durationMs = 0;
    qint64 droppedBytes = 0;
};

/// Runs one shell command (or program) synchronously on the calling thread and returns when it
/// and every descendant are gone:
/// - /bin/sh -c (or `arguments`) in a new session and process group (a vfork-style clone, as
///   posix_spawn does, that also arms a SIGKILL parent-death signal, drops CAP_SYS_PTRACE when
///   the engine has it, and joins the cgroup before exec), stdin = /dev/null, stdout and
///   stderr on separate pipes read concurrently with poll(); no other descriptor of ours
///   reaches the command, with or without O_CLOEXEC (close_range, Linux 5.11);
/// - output beyond maxOutputBytes is read and dropped (bounded memory, `truncated`);
/// - on timeout or cancel: SIGTERM to the group, SIGKILL after the grace; exit code 124
///   (timeout) or 130 (cancel);
/// - when the shell exits, the rest of its group is killed, so descendants holding the pipes
///   neither keep the call waiting nor outlive it; descendants that left the group (setsid,
///   double fork) are found by a marker variable in their environment and killed too.
/// - the process group is registered with the engine's guard (processguard.h): a shutdown
///   cancels the call, and the watchdog kills the tree if the engine dies first.
/// Throws OSError only when the process cannot be started at all (including: the cgroup could
/// not be joined, the program is then never executed; the engine is shutting down).
/// Thread-safe: many calls may run at once on different threads.
ProcessOutcome runProcess(const ProcessSpec &spec);

/// runProcess() in two steps: the constructor starts the command (and throws as runProcess
/// does), waitFor() waits for its end. The waiting may move to another thread between calls
/// (execute's soft return hands a command over that way), one thread at a time; onOutput is
/// called on the waiting thread. The command's parent-death signal follows the thread that
/// constructed it (callingThreadOutlivesCommands()). Destroyed before its end, it kills the
/// command's group and every marked descendant.
class RunningProcess
{
public:
    explicit RunningProcess(ProcessSpec spec);
    ~RunningProcess();
    RunningProcess(RunningProcess &&) noexcept;
    RunningProcess &operator=(RunningProcess &&) = delete;

    /// True once the command and its descendants are gone; false when `timeoutMs` passed
    /// first (-1: no limit). The command's own timeout counts from the start.
    bool waitFor(int timeoutMs);
    /// The outcome, once waitFor() returned true (once).
    ProcessOutcome takeOutcome();

private:
    struct Private;
    std::unique_ptr<Private> d;
};

/// Whether a command started on the calling thread may be left running after the thread moves
/// on: the kernel sends the parent-death signal (PR_SET_PDEATHSIG, which takes a command down
/// with a killed engine) when the *thread* that started it ends, so only the main thread, which
/// lives as long as the engine, qualifies.
bool callingThreadOutlivesCommands();

/// The spec's ExecuteResult of an outcome (output decoded as UTF-8).
ExecuteResult toExecuteResult(const ProcessOutcome &outcome);

} // namespace elsai
