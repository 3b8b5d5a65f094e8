// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QtGlobal>

#include <cstdlib>

#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

namespace elsai {

/// The fields of /proc/<pid>/stat the engine reads (proc(5) numbers them).
struct ProcStat
{
    pid_t pid = 0;
    char state = '?';                 ///< field 3: R, S, D, Z, X, …
    pid_t ppid = 0;                   ///< field 4
    pid_t pgrp = 0;                   ///< field 5
    pid_t session = 0;                ///< field 6
    unsigned long flags = 0;          ///< field 9 (PF_KTHREAD marks a kernel thread)
    qint64 cpuTicks = 0;              ///< fields 14 + 15: user + system time, clock ticks
    unsigned long long startTime = 0; ///< field 22: clock ticks since boot
    qint64 rssPages = 0;              ///< field 24
};

/// Reads /proc/<pid>/stat beneath `procFd` (an open /proc). False when the process is gone or
/// the line cannot be parsed. Allocates nothing: the watchdog's sweep calls it per process.
bool readProcStat(int procFd, pid_t pid, ProcStat &out);

/// Calls `visit(pid)` for every process listed in /proc (`procFd`, read from its start).
/// Allocates nothing.
template<typename F>
void forEachProcPid(int procFd, F &&visit)
{
    if (::lseek(procFd, 0, SEEK_SET) < 0)
        return;
    alignas(struct dirent64) char buf[32768];
    for (;;) {
        const ssize_t n = ::getdents64(procFd, buf, sizeof buf);
        if (n <= 0)
            return;
        for (ssize_t off = 0; off < n;) {
            const auto *d = reinterpret_cast<const struct dirent64 *>(buf + off);
            off += d->d_reclen;
            const char *name = d->d_name;
            if (*name < '1' || *name > '9')
                continue;
            char *end = nullptr;
            const long pid = std::strtol(name, &end, 10);
            if (*end == '\0')
                visit(pid_t(pid));
        }
    }
}

} // namespace elsai
