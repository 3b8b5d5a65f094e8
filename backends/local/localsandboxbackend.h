// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "firstentries.h"
#include "treecopy.h"

#include <QHash>
#include <QMap>
#include <QMutex>
#include <QString>

#include <memory>
#include <optional>

namespace elsai {

class WorkspaceFs;

/// Host-folder workspace whose commands run as subprocesses of this process
/// (spec: LocalSandboxBackend). NOT isolated: commands run with the user's rights and can
/// reach anything the user can. File operations are confined to the workspace (WorkspaceFs);
/// commands are not.
class LocalSandboxBackend : public SandboxBackend, public CappedListingBackend
{
public:
    struct Options
    {
        double timeout = 120;           ///< default command timeout, seconds
        qint64 maxOutputBytes = 100000; ///< cap on stdout + stderr kept
        bool inheritEnv = true;
        QMap<QString, QString> env; ///< extra variables (merged when inheritEnv)
        int killGraceMs = 1000;     ///< TERM → KILL grace after a timeout
    };

    explicit LocalSandboxBackend(const QString &workspaceRoot, Options options);
    explicit LocalSandboxBackend(const QString &workspaceRoot);
    ~LocalSandboxBackend() override;

    QString id() const override;
    QString typeName() const override { return QStringLiteral("LocalSandboxBackend"); }
    const QString &workspaceRoot() const { return m_root; }
    QString hostFolder() const override { return m_root; }
    const Options &options() const { return m_options; }

    void create() override;
    void close() override;
    bool isCreated() const override;

    QByteArray readFile(const QString &path) override;
    FileRange readFileRange(const QString &path, qint64 offset, qint64 maxBytes) override;
    bool hasRangedRead() const override { return true; }
    void writeFile(const QString &path, const QByteArray &content) override;
    QList<FileInfo> listDir(const QString &path) override;
    QList<FileInfo> listDirBrief(const QString &path, qsizetype statLimit) override;
    DirListing listDirCompact(const QString &path, qsizetype statLimit) override;
    CappedListing listDirFirst(const QString &path, qsizetype maxEntries,
                               qsizetype statLimit) override;
    void removeFile(const QString &path, bool recursive = false) override;
    FileInfo stat(const QString &path) override;
    void makeDirs(const QString &path) override;
    void rename(const QString &source, const QString &dest, bool overwrite) override;

    WorkspaceSeedResult seedWorkspace(const QString &source, const QStringList &excludes,
                                      const std::function<void(int, int)> &progress = {}) override;
    WorkspaceSyncResult syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                                      const std::function<void(int, int)> &progress = {}) override;
    SyncPlan planSync(const QString &dest, const WorkspaceSyncPolicy &policy) override;
    std::optional<SeedManifest> seedManifest() const override;

    bool supportsCheckpoints() const override { return true; }
    TreeManifest captureTree(const CaptureOptions &options) override;
    ApplyResult applyTree(const TreeManifest &current, const TreeManifest &target,
                          const CheckpointStore &store, TreeHashCache *cache) override;
    std::unique_ptr<TreeWatch> watchTree(int maxWatches) override;

    /// startCommand() waited for to its end on the calling thread (a subclass changes how
    /// commands start by overriding startCommand(); one that overrides execute() must also
    /// override startCommand(), which the soft return calls instead).
    ExecuteResult execute(const QString &command, std::optional<double> timeoutSeconds = {},
                          const QString &cwd = {}, const ExecuteOptions &options = {}) override;
    std::unique_ptr<RunningCommand> startCommand(const QString &command,
                                                 std::optional<double> timeoutSeconds,
                                                 const QString &cwd,
                                                 const ExecuteOptions &options) override;
    QList<qint64> runningProcessGroups() const override;
    double defaultTimeoutSeconds() const override { return m_options.timeout; }
    bool acceptsInput() const override { return true; }

    /// The environment a command gets (without the per-call extras): with inherit_env, the
    /// engine's environment as it was when the backend was made (built once, not per call).
    QStringList baseEnvironment() const { return m_baseEnvironment; }

protected:
    /// The confined workspace; OSError when closed.
    std::shared_ptr<WorkspaceFs> fs() const;
    /// Starts `spec` (RunningProcess), with the command's process group in
    /// runningProcessGroups() while it runs; `keep` (a per-call cgroup) lives as long as the
    /// command.
    std::unique_ptr<RunningCommand> startProcess(ProcessSpec spec, std::shared_ptr<void> keep = {});

private:
    /// Writes m_manifests and m_seedRoot beside the workspace (flushbase.h); the error line for
    /// a result when that failed, else empty. Caller holds m_manifestMutex.
    QString saveBases();

    QString m_root;
    Options m_options;
    QStringList m_baseEnvironment;
    mutable QMutex m_mutex;
    std::shared_ptr<WorkspaceFs> m_fs;
    /// What each host folder held when we last seeded from or flushed to it, by clean
    /// absolute path: the base for conflict detection. Guarded by m_manifestMutex, which also
    /// serializes flushes.
    QHash<QString, SeedManifest> m_manifests;
    mutable QMutex m_manifestMutex;
    QString m_seedRoot;     ///< host folder of the last seed (guarded by m_manifestMutex)
    QList<qint64> m_groups; ///< of the running commands (guarded by m_mutex)
    friend class LocalRunningCommand;
};

} // namespace elsai
