// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

namespace elsai {

/// Lowers the calling thread's scheduling priority to nice `niceness` (never raises it back:
/// an unprivileged thread could not). For threads that only do background work for a window
/// (seeding, flushing, listing what changed): the GUI thread, left at the process's priority,
/// then gets a core first when both want one, and the threads this one starts afterwards
/// (the seed's copy threads) inherit the value — Linux keeps nice per thread. Best effort:
/// nothing happens where it is not allowed or not supported.
void lowerThreadPriority(int niceness = 10);

} // namespace elsai
