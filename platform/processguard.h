// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// What makes every command die with the engine, and keeps the engine unreadable by them.
// runProcess (process.cpp) is the only user inside the library.

#include <QByteArray>

#include <sys/types.h>

namespace elsai {

class CancellationToken;

/// Sets the engine up so that no command outlives it and none can read it. Idempotent and
/// thread-safe; runProcess calls it before its first command, and the executable at the top of
/// main(), while the process is small and single-threaded (the watchdog is a copy of it).
/// Every program that shows a window and runs commands calls it first: called later, from a
/// full window, the fork leaves every page of the process shared copy-on-write with the
/// watchdog, and the next repaint copies the backing store page by page (window_bench saw
/// one 30–50 ms stall per run, in the first command's flood).
/// - PR_SET_DUMPABLE 0: /proc/<engine>/mem, environ, maps and ptrace are closed to processes
///   of the same uid without CAP_SYS_PTRACE (commands run as root lose that capability in
///   runProcess), so `inherit_env = false` really keeps the engine's secrets from commands.
///   Also means: no core dumps, and a debugger must attach as root.
/// - moves the environment to the heap and zeroes the block /proc/<engine>/environ shows
///   (root reads that file despite the above). getenv() and setenv() work as before; a pointer
///   into the old block taken before the call now reads an empty string, hence: early.
/// - where cgroup v2 is mounted and our cgroup's folder is writable (root, or a delegated
///   subtree), makes `<that folder>/elsai-engine-<pid>/engine` and moves the engine into it,
///   once: every process the engine starts is then born inside, and no setsid, double fork or
///   cleared environment takes it out (only a write to another cgroup's cgroup.procs, which
///   needs root or a delegation). No per-command cost: a fork inherits the cgroup. The
///   variable ELSAI_NO_ENGINE_CGROUP (any value) turns this off (tests of the fallback).
/// - forks the watchdog (outside that cgroup): a process that keeps only the read end of a pipe
///   whose write end the engine holds (close-on-exec, so no command has it). When the engine is
///   gone — exit, crash or kill -9 — the pipe ends and the watchdog kills the engine's cgroup
///   (cgroup.kill, or rounds over cgroup.procs before Linux 5.14) and removes its folders, then
///   SIGKILLs every command process group still registered, every process in such a group or
///   session, and every process whose environment carries this engine's marker, round after
///   round until none is left. Without the cgroup those last rounds are all there is: a
///   descendant that leaves the session and clears its environment (setsid env -i) then
///   survives. The watchdog scrubs the environment it inherited, is not dumpable, leaves the
///   engine's session and ignores the terminal's signals.
void guardEngineProcess();

/// Hex digits that start the ELSAI_EXEC_TOKEN value of every command this engine runs (the
/// watchdog's search key). Calls guardEngineProcess().
const QByteArray &engineMarkerPrefix();

/// An environment entry ("ELSAI_EXEC_TOKEN=…") for a helper process the engine starts outside
/// runProcess (the ssh master): the watchdog's marker rounds then end it with the engine where
/// there is no engine cgroup. No command's per-call sweep matches it.
QByteArray engineHelperMarker();

/// The engine's cgroup v2 folder (see guardEngineProcess(); the engine itself is in its leaf
/// `engine`, and other cgroups made for it may go beside the leaf), or empty when there is
/// none. Calls guardEngineProcess().
QString engineCgroupFolder();

/// The `cgroup.procs` file of the leaf every process the engine starts is born in (encoded for
/// open()), or empty when there is no engine cgroup. Calls guardEngineProcess().
const QByteArray &engineCgroupProcsFile();

/// An fd open on engineCgroupProcsFile() for the life of the process (read it with pread at
/// offset 0: each read from 0 lists the members afresh), or -1. Calls guardEngineProcess().
int engineCgroupProcsFd();

/// For a shutdown (SIGTERM, SIGINT, SIGHUP): refuses every later runProcess call (OSError),
/// cancels every running one — each then does what a cancel does: SIGTERM to its process
/// group, SIGKILL after its grace, kills the descendants that left the group, returns exit
/// code 130 — and waits until they have returned, at most `waitMs`; groups still registered
/// then get SIGKILL. Last, SIGKILLs every process left in the engine's cgroup but the engine
/// (what left both group and marker behind, helpers such as the ssh master). Returns how many
/// commands were running. Thread-safe; may be called from any thread but not from a signal
/// handler.
int shutdownCommands(int waitMs);

/// True once shutdownCommands() was called.
bool commandsShutDown();

namespace detail {

/// One running command in the process-wide registry (runProcess holds one per call).
/// The constructor throws OSError once shutdownCommands() has begun.
class CommandRegistration
{
public:
    CommandRegistration();
    ~CommandRegistration();
    CommandRegistration(const CommandRegistration &) = delete;
    CommandRegistration &operator=(const CommandRegistration &) = delete;

    /// Publishes the command's process group (to the watchdog and to a shutdown).
    void setGroup(pid_t pgid);
    /// Withdraws it; call before the group leader is reaped (its pid then stops pinning the id).
    void clearGroup();

    /// Cancelled by shutdownCommands(); its fd is readable from then on.
    static CancellationToken &shutdownToken();

private:
    int m_slot = -1;
};

} // namespace detail

} // namespace elsai
