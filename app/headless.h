#pragma once

#include <QStringList>

namespace elsai {

/// True when argv asks for the headless runner (decided before any application object
/// exists, so no display is touched).
bool wantsHeadless(int argc, char **argv);

/// Runs the headless workbench: builds the sandbox from the command line and runs --exec,
/// --script, or (with neither) the script from standard input. Returns the exit status.
/// Creates its own QCoreApplication.
int runHeadless(int argc, char **argv);

} // namespace elsai
