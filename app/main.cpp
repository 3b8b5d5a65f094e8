// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "gui.h"
#include "headless.h"
#include "processguard.h"

int main(int argc, char **argv)
{
    // First, while the process is small and single-threaded: not dumpable (commands cannot
    // read our environment or memory), and the watchdog that kills every command if we die.
    elsai::guardEngineProcess();
    // Decided before any application object exists, so headless runs never touch a display.
    if (elsai::wantsHeadless(argc, argv) || elsai::noDisplay())
        return elsai::runHeadless(argc, argv);
    return elsai::runGui(argc, argv);
}
