// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// Pseudo-terminals: the pair a terminal session runs on (runProcess with ProcessSpec::ttyFd
// makes the slave a command's controlling terminal).

#include "fdutil.h"

#include <QString>

#include <utility>

#include <sys/types.h>

namespace elsai {

struct PtyPair
{
    UniqueFd master; ///< non-blocking, close-on-exec
    UniqueFd slave;  ///< close-on-exec, above fd 2 (ProcessSpec::ttyFd wants that)
};

/// A new PTY of `cols` × `rows` cells, in UTF-8 mode. OSError when none can be had.
PtyPair openPty(int cols, int rows);

/// Sets the window size on the master (TIOCSWINSZ): the kernel sends SIGWINCH to the
/// terminal's foreground process group. False when the size is refused.
bool setPtySize(int masterFd, int cols, int rows);

/// The size the PTY has now (TIOCGWINSZ), for tests: {cols, rows}, or {0, 0}.
std::pair<int, int> ptySize(int masterFd);

/// The foreground process group of the terminal (tcgetpgrp on the master), or -1.
pid_t ptyForegroundGroup(int masterFd);

/// The name (/proc/PID/comm) of a process, or empty when it is gone or unreadable.
QString processName(pid_t pid);

/// The command line (/proc/PID/cmdline, arguments joined by spaces) of a process, at most
/// `maxChars` characters; empty when it is gone or unreadable.
QString processCommandLine(pid_t pid, qsizetype maxChars);

} // namespace elsai
