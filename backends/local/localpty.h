// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "processptysession.h"

#include <QString>
#include <QStringList>

#include <memory>

namespace elsai {

class LocalSandboxBackend;

/// The user's shell for the local terminal: `$SHELL` of the backend's environment when it is
/// an absolute executable, else /bin/sh.
QString localShell(const QStringList &environment);

/// The launch of a local terminal: the user's shell (login-less) in the workspace, with the
/// backend's environment, as a command of the engine (processptysession.h). OSError when the
/// backend is not created.
PtyLaunch localPtyLaunch(const LocalSandboxBackend &backend);

} // namespace elsai
