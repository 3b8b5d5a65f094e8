// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "daytonaapi.h"
#include "findrecord.h"
#include "firstentries.h"
#include "remoteflush.h"
#include "remotetree.h"
#include "treecopy.h"

#include <QHash>
#include <QJsonObject>
#include <QMap>
#include <QMutex>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace elsai {

class WorkspaceFs;

/// A Daytona sandbox driven over its control plane and toolbox HTTP APIs
/// (docs/backends/daytona.md). One backend = one remote sandbox.
///
/// - create(): POST /sandbox, then polls until `started`; the workspace is a folder in it.
/// - close(): deletes the sandbox (Options::deleteOnClose, the default) or stops it.
/// - execute(): one toolbox session per call (split stdout/stderr), the command wrapped so a
///   timeout kills its whole process group and answers 124; never retried.
/// - Paths are confined on the client (WorkspaceFs::normalize) before any request, then in the
///   sandbox: every file operation (and execute's cwd) is one confined shell command
///   (remote::confinedScript: `cd -P` per component, the kernel's answer checked, the last
///   component used without following a link), so a symlink swapped in mid-call cannot lead
///   outside the workspace. Writes rename a temp file over the entry (never in place).
/// - Seeding goes through a local shadow copy; a flush plans from the remote listing with the
///   core planner (the one decision table), its base persisted on the host (flushbase.h).
class DaytonaSandboxBackend : public SandboxBackend, public CappedListingBackend
{
public:
    struct Options
    {
        daytona::DaytonaConfig config = daytona::DaytonaConfig::fromEnvironment();
        QString name;                      ///< sandbox name; empty: the server picks one
        QString snapshot;                  ///< empty: the server's default snapshot
        QMap<QString, QString> sandboxEnv; ///< CreateSandbox.env
        QMap<QString, QString> labels;     ///< CreateSandbox.labels (plus elsai.workspace)
        int autoStopMinutes = 60;          ///< CreateSandbox.autoStopInterval; 0 disables
        /// Absolute workspace folder in the sandbox; empty: `<work-dir>/workspace`.
        QString remoteRoot;
        double timeout = 120;           ///< default command timeout, seconds
        qint64 maxOutputBytes = 100000; ///< cap on stdout + stderr kept
        QMap<QString, QString> env;     ///< extra variables of every command
        bool deleteOnClose = true;      ///< false: stop (keep the sandbox)
        int startTimeoutMs = 180000;    ///< wait for `started`
        int uploadBatchBytes = 8 << 20; ///< bulk-upload request size while seeding
        /// Reuse an existing sandbox (by id or name) instead of creating one.
        QString existingSandbox;
    };

    DaytonaSandboxBackend(QString workspaceId, Options options);
    ~DaytonaSandboxBackend() override;

    QString id() const override;
    QString typeName() const override { return QStringLiteral("DaytonaSandboxBackend"); }
    const Options &options() const { return m_options; }
    /// Sandbox id once created (empty before).
    QString sandboxId() const;
    /// Absolute workspace folder in the sandbox once created.
    QString remoteRoot() const;
    /// The sandbox's toolbox API base ({toolboxProxyUrl}/{sandboxId}); throws when not created.
    QUrl toolboxUrl() const;
    const daytona::DaytonaApi &api() const { return m_api; }

    void create() override;
    void close() override;
    bool isCreated() const override;

    QByteArray readFile(const QString &path) override;
    FileRange readFileRange(const QString &path, qint64 offset, qint64 maxBytes) override;
    bool hasRangedRead() const override { return true; }
    void writeFile(const QString &path, const QByteArray &content) override;
    QList<FileInfo> listDir(const QString &path) override;
    CappedListing listDirFirst(const QString &path, qsizetype maxEntries,
                               qsizetype statLimit) override;
    void removeFile(const QString &path, bool recursive = false) override;
    FileInfo stat(const QString &path) override;
    void walkTree(const QString &path, bool withStat,
                  const std::function<WalkStep(const WalkEntry &)> &visit) override;
    void makeDirs(const QString &path) override;
    /// One `archive-out` of the folder, the exclusions inline or uploaded (remotefetch.h).
    bool fetchesFiles() const override { return true; }
    std::optional<QHash<QString, QByteArray>> fetchFiles(const FileFetch &fetch) override;

    QList<FileTransferResult> uploadFiles(const QList<QPair<QString, QByteArray>> &files) override;

    WorkspaceSeedResult seedWorkspace(const QString &source, const QStringList &excludes,
                                      const std::function<void(int, int)> &progress = {}) override;
    WorkspaceSyncResult syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                                      const std::function<void(int, int)> &progress = {}) override;
    SyncPlan planSync(const QString &dest, const WorkspaceSyncPolicy &policy) override;
    std::optional<SeedManifest> seedManifest() const override;

    ExecuteResult execute(const QString &command, std::optional<double> timeoutSeconds = {},
                          const QString &cwd = {}, const ExecuteOptions &options = {}) override;
    double defaultTimeoutSeconds() const override { return m_options.timeout; }

    /// Checkpoints and change tracking through remote::RemoteTree: one listing command, one
    /// tar each way (in: uploaded beside the workspace root; out: in the command's answer).
    bool supportsCheckpoints() const override { return true; }
    TreeManifest captureTree(const CaptureOptions &options) override;
    ApplyResult applyTree(const TreeManifest &current, const TreeManifest &target,
                          const CheckpointStore &store, TreeHashCache *cache) override;
    std::unique_ptr<TreeWatch> watchTree(int maxWatches) override;

private:
    struct Remote
    {
        QString sandboxId;
        QUrl toolbox; ///< {toolboxProxyUrl}/{sandboxId}
        QString root;
    };
    Remote remote() const; ///< throws when not created
    /// Runs one operation of remote::confinedScript() through /process/execute: the path
    /// check and its use in one command. Returns the payload; throws the typed refusal.
    QByteArray confined(const Remote &r, const QString &op, const QString &rel,
                        const QStringList &args = {});
    /// Replaces `rel` with `content` (temp file + rename inside the sandbox, never in place).
    void writeConfined(const Remote &r, const QString &rel, const QByteArray &content);
    QJsonObject waitForState(const QString &sandboxId, const QStringList &wanted);
    /// POST /files/bulk-upload of {absolute path in the sandbox, content} (in place: seeding).
    void uploadBatch(const Remote &r, const QList<QPair<QString, QByteArray>> &files);
    /// Every entry of the workspace (the confined `tree`), by relative path.
    QHash<QString, FindRecord> remoteTree(const Remote &r);
    /// The flush's transport: the `tree` listing, the changed files by bulk download.
    remote::RemoteFlush::Transport flushTransport(const Remote &r);
    /// RemoteTree's transport: the confined operations, input uploaded as a temp file.
    remote::TreeTransport treeTransport(const Remote &r);
    /// Names the workspace folder (device:inode) to the flush bases once created.
    void identifyWorkspace(const Remote &r);
    /// POST /files/bulk-download; the files that came back whole, by relative path.
    QHash<QString, QByteArray> bulkDownload(const Remote &r, const QStringList &paths);

    QString m_workspaceId;
    Options m_options;
    daytona::DaytonaApi m_api;
    QMutex m_lifecycleMutex; ///< serializes create() and close()
    mutable QMutex m_mutex;  ///< guards m_created and m_remote only
    bool m_created = false;
    Remote m_remote;

    // Seeding copies into a local shadow first (the confined local copy), then uploads it;
    // m_seedMutex guards the shadow.
    mutable QMutex m_seedMutex;
    std::unique_ptr<QTemporaryDir> m_shadowDir;
    std::unique_ptr<WorkspaceFs> m_shadow;
    /// The flush bases (with the REMOTE stamps), kept on the host; the flush that uses them.
    remote::RemoteFlush m_flush;
    remote::RemoteTree m_tree;
};

/// Builds one Daytona sandbox per workspace id (spec: templates with build_for_session).
class DaytonaSandboxTemplate : public BackendTemplate
{
public:
    explicit DaytonaSandboxTemplate(DaytonaSandboxBackend::Options options = {});
    QString typeName() const override { return QStringLiteral("DaytonaSandboxBackend"); }
    BackendPtr buildForSession(const QString &sessionId) override;
    BackendPtr buildDefault() override;
    const DaytonaSandboxBackend::Options &options() const { return m_options; }

private:
    DaytonaSandboxBackend::Options m_options;
};

} // namespace elsai
