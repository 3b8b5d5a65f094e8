// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

namespace elsai {

/// Runs the window: QApplication, a SandboxController and the MainWindow. The sandbox comes
/// from the same options as the headless runner (SessionOptions); with none of
/// --seed-from / --workspace-root it is a demo seeded from the bundled sample project.
/// Returns the exit status.
int runGui(int argc, char **argv);

/// True when no display is available (neither DISPLAY nor WAYLAND_DISPLAY set and no
/// QT_QPA_PLATFORM chosen), so the window cannot be shown.
bool noDisplay();

} // namespace elsai
