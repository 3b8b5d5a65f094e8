// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "processusage.h"

#include "fdutil.h"

#include <QHash>
#include <QSet>

#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

namespace elsai {

namespace {

struct ProcStat
{
    qint64 pid = 0;
    qint64 ppid = 0;
    qint64 pgrp = 0;
    qint64 session = 0;
    qint64 ticks = 0; // utime + stime
    qint64 rssPages = 0;
};

/// /proc/<pid>/stat: "pid (comm) state ppid pgrp session … utime(14) stime(15) … rss(24)".
/// comm may hold spaces and parentheses: the fields start after the LAST ')'.
bool readStat(int procFd, const char *pid, ProcStat *out)
{
    char path[sizeof(dirent::d_name) + 8];
    std::snprintf(path, sizeof path, "%s/stat", pid);
    const UniqueFd fd(::openat(procFd, path, O_RDONLY | O_CLOEXEC));
    if (!fd.isValid())
        return false;
    char buf[1024];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = std::strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return false;
    p += 2; // field 3, the state
    qint64 fields[22] = {};
    // fields[0] is the state (skipped); fields[k] is field k + 3
    while (*p && *p != ' ')
        ++p;
    for (int k = 1; k < 22 && *p; ++k) {
        char *end = nullptr;
        fields[k] = std::strtoll(p, &end, 10);
        if (end == p)
            return false;
        p = end;
    }
    out->pid = std::strtoll(pid, nullptr, 10);
    out->ppid = fields[1];                // field 4
    out->pgrp = fields[2];                // field 5
    out->session = fields[3];             // field 6
    out->ticks = fields[11] + fields[12]; // fields 14, 15
    out->rssPages = fields[21];           // field 24
    return true;
}

} // namespace

ProcessUsage sampleProcessGroups(const QList<qint64> &groups)
{
    ProcessUsage usage;
    if (groups.isEmpty())
        return usage;
    const UniqueFd procFd(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!procFd.isValid())
        return usage;
    DIR *dir = ::fdopendir(::dup(procFd.get()));
    if (!dir)
        return usage;
    QList<ProcStat> all;
    all.reserve(512);
    while (const dirent *entry = ::readdir(dir)) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
            continue;
        ProcStat s;
        if (readStat(procFd.get(), entry->d_name, &s))
            all.append(s);
    }
    ::closedir(dir);

    const QSet<qint64> wanted(groups.cbegin(), groups.cend());
    QHash<qint64, QList<qsizetype>> children; // ppid → indexes into `all`
    QList<qsizetype> pending;
    for (qsizetype i = 0; i < all.size(); ++i) {
        children[all[i].ppid].append(i);
        if (wanted.contains(all[i].pgrp) || wanted.contains(all[i].session))
            pending.append(i);
    }
    QSet<qint64> counted;
    while (!pending.isEmpty()) {
        const ProcStat &s = all[pending.takeLast()];
        if (counted.contains(s.pid))
            continue;
        counted.insert(s.pid);
        ++usage.processes;
        usage.cpuNs += s.ticks;
        usage.rssBytes += s.rssPages;
        pending.append(children.value(s.pid));
    }
    static const qint64 tick = qMax<qint64>(1, ::sysconf(_SC_CLK_TCK));
    static const qint64 page = qMax<qint64>(1, ::sysconf(_SC_PAGESIZE));
    usage.cpuNs = usage.cpuNs * (1'000'000'000 / tick);
    usage.rssBytes *= page;
    return usage;
}

} // namespace elsai
