// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QStringList>

namespace elsai {

/// True when argv asks for the headless runner (decided before any application object
/// exists, so no display is touched).
bool wantsHeadless(int argc, char **argv);

/// The exit status of a headless run whose audit log lost records (a write kept failing: full
/// disk, I/O error, permission), whatever the run's own status would have been.
inline constexpr int AuditRecordsLostExitCode = 4;

/// Runs the headless workbench: builds the sandbox from the command line and runs --exec,
/// --script, or (with neither) the script from standard input. Returns the exit status
/// (AuditRecordsLostExitCode when audit records were lost). Creates its own QCoreApplication.
int runHeadless(int argc, char **argv);

} // namespace elsai
