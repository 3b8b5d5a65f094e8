// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "procstat.h"

#include "fdutil.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>

namespace elsai {

bool readProcStat(int procFd, pid_t pid, ProcStat &out)
{
    char path[32];
    std::snprintf(path, sizeof path, "%d/stat", int(pid));
    const UniqueFd fd(::openat(procFd, path, O_RDONLY | O_CLOEXEC));
    if (!fd.isValid())
        return false;
    char buf[1024];
    ssize_t n;
    do {
        n = ::read(fd.get(), buf, sizeof buf - 1);
    } while (n < 0 && errno == EINTR);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    // "pid (comm) state ppid …": comm may hold anything, spaces and ')' included, so the
    // fields start after the LAST ')'.
    const char *p = static_cast<const char *>(::memrchr(buf, ')', size_t(n)));
    if (!p || p[1] != ' ' || p[2] == '\0')
        return false;
    out.pid = pid;
    out.state = p[2];
    p += 3;
    long long field[25] = {}; // field[k] is field k of proc(5), 4 to 24
    for (int k = 4; k <= 24; ++k) {
        char *end = nullptr;
        field[k] = std::strtoll(p, &end, 10);
        if (end == p)
            return false;
        p = end;
    }
    out.ppid = pid_t(field[4]);
    out.pgrp = pid_t(field[5]);
    out.session = pid_t(field[6]);
    out.flags = static_cast<unsigned long>(field[9]);
    out.cpuTicks = field[14] + field[15];
    out.startTime = static_cast<unsigned long long>(field[22]);
    out.rssPages = field[24];
    return true;
}

} // namespace elsai
