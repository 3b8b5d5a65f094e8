// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "processptysession.h"

namespace elsai {

class SshSandboxBackend;

/// The launch of a terminal on an SSH sandbox: `ssh -tt` over the backend's ControlMaster (no
/// new login), on a local PTY so that its window changes reach the remote one (ssh forwards
/// SIGWINCH as a window-change request), running the remote user's shell in the workspace
/// folder with the backend's variables. The remote processes carry a marker of the session;
/// when it ends, what they left behind (a `nohup`, a `setsid`) is swept like a cancelled
/// command's. Blocks while the master starts (the session calls it on its own thread).
PtyLaunch sshPtyLaunch(const SshSandboxBackend &backend);

} // namespace elsai
