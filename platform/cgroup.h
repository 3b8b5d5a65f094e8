// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// cgroup plumbing shared by the engine's own cgroup (processguard.cpp) and bwrap's per-command
// pids cgroups (backends/bwrap/pidscgroup.cpp). Linux only; every function is safe to call
// where cgroups are missing, read-only or not delegated to us (they then report nothing).

#include <QByteArray>
#include <QString>

#include <sys/types.h>

namespace elsai::cgroup {

/// The whole of a small (kernel-made) file; empty when it cannot be read.
QByteArray readFile(const QString &path);
/// Writes `data` in one write(); false when the kernel refused it.
bool writeFile(const QString &path, const QByteArray &data);

/// The folders of this process's own cgroups, from /proc/self/cgroup and mountinfo: in the
/// cgroup v1 hierarchy with the pids controller, and in the v2 (unified) hierarchy. Empty
/// where that hierarchy is not mounted. Read afresh each call (a process may move).
struct OwnFolders
{
    QString v1Pids;
    QString v2;
};
OwnFolders ownFolders();

/// Whether this process may create folders (cgroups) in `folder`.
bool writable(const QString &folder);

/// The controllers listed in a v2 `cgroup.controllers` or `cgroup.subtree_control` file.
bool listsController(const QString &file, const QByteArray &controller);

/// SIGKILLs every process listed in `procsFile` (`cgroup.procs`, v1 `tasks`) except `spare`
/// (0: none). Returns how many were signalled.
int killListed(const QString &procsFile, pid_t spare = 0);

} // namespace elsai::cgroup
