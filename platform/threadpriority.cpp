// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "threadpriority.h"

#include <cerrno>
#include <sys/resource.h>
#include <unistd.h>

namespace elsai {

void lowerThreadPriority(int niceness)
{
#ifdef __linux__
    thread_local int applied = -100;
    if (applied >= niceness)
        return;
    const id_t self = id_t(::gettid()); // PRIO_PROCESS with a tid: that thread only (Linux)
    errno = 0;
    const int current = ::getpriority(PRIO_PROCESS, self);
    if (errno == 0 && current < niceness)
        ::setpriority(PRIO_PROCESS, self, niceness);
    applied = niceness;
#else
    (void)niceness;
#endif
}

} // namespace elsai
