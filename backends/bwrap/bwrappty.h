// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "processptysession.h"

namespace elsai {

class BwrapSandboxBackend;

/// The launch of a terminal in a bwrap sandbox: a shell inside bwrap with the binds, limits,
/// network rule and environment of the backend's commands (bwrapArguments()), in the
/// per-session pids cgroup where one can be had.
///
/// The PTY is allocated outside and its slave handed in as stdio. bwrap keeps --new-session
/// (its guard against TIOCSTI: nothing inside may push input into a terminal outside), so the
/// slave is NOT the controlling terminal of the session outside; inside, `setsid --ctty`
/// (util-linux) makes it the controlling terminal of the shell's new session, which takes no
/// privilege because no other session holds it. The only terminal the sandbox can reach is
/// then its own: an injection lands in its own input. Without setsid(1) the shell runs
/// without job control (Ctrl+C then ends the session).
PtyLaunch bwrapPtyLaunch(const BwrapSandboxBackend &backend);

} // namespace elsai
