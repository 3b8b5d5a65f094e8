// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

namespace elsai {

/// How the program ends once the running commands are stopped.
enum class ShutdownExit {
    /// _exit at once: the main thread may be blocked in a command or on standard input
    /// (headless --exec and the script runner).
    Immediate,
    /// QCoreApplication::exit(status) on the main event loop, so the program tears down as
    /// after a normal quit (the window, MCP); _exit if it has not ended within a bound.
    EventLoop,
};

/// SIGTERM, SIGINT and SIGHUP for the whole program, the window and every headless mode.
/// The handler only writes the signal number to a pipe (async-signal-safe); a watcher thread
/// of its own — the main thread may be busy in a command — then:
/// 1. stops accepting commands and stops every running one (shutdownCommands(): TERM to each
///    process group, KILL after its grace, descendants that left the group too);
/// 2. waits (bounded) for the stopped calls' own audit records, records `engine.shutdown`
///    {signal, commands_stopped} and flushes the audit log;
/// 3. ends the program with 128 + the signal number (see ShutdownExit).
/// A second signal during this ends the program at once with the same status (the watchdog
/// still kills whatever is left). Install once, after the application object exists; a later
/// call only changes how it exits.
void installShutdownSignals(ShutdownExit exit);

/// True once SIGTERM, SIGINT or SIGHUP arrived (the shutdown is under way).
bool shutdownRequested();

/// For a main thread that notices the shutdown (its command was cancelled by it): nothing more
/// is done, no flush, no exit status of its own; the watcher ends the program.
[[noreturn]] void awaitShutdownExit();

} // namespace elsai
