// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QList>
#include <QtGlobal>

namespace elsai {

/// What a set of processes uses at one moment, summed from /proc.
struct ProcessUsage
{
    int processes = 0;
    qint64 cpuNs = 0;    ///< user + system time consumed so far (all threads)
    qint64 rssBytes = 0; ///< resident memory (shared pages counted in each process)
};

/// The processes of the commands whose process groups are `groups` (each command leads its
/// own group and session: runProcess), found by process group or session id, plus every
/// descendant of those (what a command's bwrap runs in its pid namespace, or a process that
/// left the group but not the tree). One pass over /proc (about a millisecond per few hundred
/// processes); processes that end meanwhile are skipped. Linux only: elsewhere, nothing.
///
/// Per sandbox by design: the engine's cgroup (processguard.h) holds every sandbox's commands
/// and the engine itself, so its counters cannot tell one sandbox's use.
ProcessUsage sampleProcessGroups(const QList<qint64> &groups);

} // namespace elsai
