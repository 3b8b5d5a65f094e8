// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "localsandboxbackend.h"

#include <QMutex>
#include <QString>
#include <QStringList>

namespace elsai {

/// A host-folder workspace whose commands run isolated by bubblewrap (`bwrap`).
///
/// Files, seeding and flush are the local backend's (the workspace is a host folder); only
/// execute() differs: each command runs in new user, pid, ipc, uts, cgroup and (unless
/// `network`) network namespaces, sees the host's /usr and a few /etc files read-only, the
/// workspace at /workspace, a private /tmp, an environment built from an allowlist (never the
/// host's), and runs under resource limits. See docs/backends/bwrap.md for the boundary.
class BwrapSandboxBackend : public LocalSandboxBackend
{
public:
    struct Options
    {
        bool network = false;   ///< share the host's network namespace (off: loopback only)
        int maxProcesses = 256; ///< pids cgroup where one can be had, and RLIMIT_NPROC
        qint64 maxFileSizeBytes = qint64(1) << 30; ///< RLIMIT_FSIZE; 0 = unlimited
        qint64 maxMemoryBytes = qint64(4) << 30;   ///< RLIMIT_DATA; 0 = unlimited
        /// Extra host paths bound read-only at the same place (e.g. /opt/tool); missing ones
        /// are skipped.
        QStringList readOnlyBinds;
        QString bwrapPath; ///< empty: `bwrap` from PATH
        /// Bound the processes with a per-call pids cgroup where one can be had (root, or a
        /// delegated cgroup v2 subtree); RLIMIT_NPROC alone does not bind root.
        bool pidsCgroup = true;
    };

    /// `base` holds what the local backend has too: timeout, max output bytes, env (added to
    /// the allowlist; `inheritEnv` is ignored, the host environment never goes in) and the
    /// kill grace.
    BwrapSandboxBackend(const QString &workspaceRoot, LocalSandboxBackend::Options base,
                        Options options);
    explicit BwrapSandboxBackend(const QString &workspaceRoot);

    /// Where the workspace appears inside the sandbox.
    static QString sandboxWorkspace() { return QStringLiteral("/workspace"); }

    QString id() const override;
    QString typeName() const override { return QStringLiteral("BwrapSandboxBackend"); }
    const Options &bwrapOptions() const { return m_bwrap; }

    /// Finds bwrap and checks once that it can create the namespaces here (OSError saying why
    /// not, e.g. user namespaces disabled).
    void create() override;

    std::unique_ptr<RunningCommand> startCommand(const QString &command,
                                                 std::optional<double> timeoutSeconds,
                                                 const QString &cwd,
                                                 const ExecuteOptions &options) override;

    /// The bwrap program and the arguments execute() gives it for `command` run in `insideCwd`
    /// (relative to /workspace). Public for the benchmark and the tests.
    QString bwrapProgram() const { return m_bwrapProgram; }
    QStringList bwrapArguments(const QString &command, const QString &insideCwd = {},
                               bool readOnlyWorkspace = false,
                               const QMap<QString, QString> &extraEnv = {}) const;
    /// The complete environment a command gets (allowlist + configured env + `extraEnv`).
    QMap<QString, QString> sandboxEnvironment(const QMap<QString, QString> &extraEnv = {}) const;

private:
    /// The workspace-relative folder `cwd` names, checked against the workspace.
    QString insideCwd(const QString &cwd) const;

    Options m_bwrap;
    mutable QMutex m_createMutex; ///< guards the three paths below while create() sets them
    QString m_bwrapProgram;       ///< absolute path, set by create()
    QString m_prlimit;            ///< absolute path of prlimit (util-linux); empty: no rlimits
    QString m_canonicalRoot;      ///< the workspace folder with symlinks resolved
};

} // namespace elsai
