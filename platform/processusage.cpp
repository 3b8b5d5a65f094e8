// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "processusage.h"

#include "fdutil.h"
#include "procstat.h"

#include <QHash>
#include <QSet>

#include <fcntl.h>
#include <unistd.h>

namespace elsai {

ProcessUsage sampleProcessGroups(const QList<qint64> &groups)
{
    ProcessUsage usage;
    if (groups.isEmpty())
        return usage;
    const UniqueFd procFd(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!procFd.isValid())
        return usage;
    QList<ProcStat> all;
    all.reserve(512);
    forEachProcPid(procFd.get(), [&](pid_t pid) {
        ProcStat s;
        if (readProcStat(procFd.get(), pid, s))
            all.append(s);
    });

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
        usage.cpuNs += s.cpuTicks;
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
