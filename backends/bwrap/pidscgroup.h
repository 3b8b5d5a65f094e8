// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>

#include <memory>

namespace elsai {

/// A throwaway cgroup with a `pids.max`, made per command where the process may create one
/// (cgroup v1 `pids` hierarchy, or a cgroup v2 folder whose subtree has the pids controller).
/// RLIMIT_NPROC does not bind root, and counts every process of a user; a pids cgroup bounds
/// exactly the sandbox's processes, whoever runs it.
class PidsCgroup
{
public:
    /// A new cgroup limited to `maxPids` tasks, or nullptr when none can be had here.
    static std::unique_ptr<PidsCgroup> create(int maxPids);
    /// The folder new cgroups are made in; empty when there is none (why: see the log).
    static QString parentFolder();

    /// Kills whatever is still inside and removes the folder.
    ~PidsCgroup();
    PidsCgroup(const PidsCgroup &) = delete;
    PidsCgroup &operator=(const PidsCgroup &) = delete;

    const QString &folder() const { return m_folder; }
    /// Writing a pid here moves that process (and its future children) in.
    QString procsFile() const { return m_folder + QStringLiteral("/cgroup.procs"); }
    /// The file a single-threaded child writes "0" to before exec to join: v1 `tasks` (moves
    /// one thread without the global threadgroup lock and its RCU wait), else `cgroup.procs`.
    QString joinFile() const;

private:
    explicit PidsCgroup(QString folder) : m_folder(std::move(folder)) {}
    QString m_folder;
};

} // namespace elsai
