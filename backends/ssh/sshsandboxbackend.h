// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "firstentries.h"
#include "remoteflush.h"
#include "remotetree.h"
#include "sshconnection.h"
#include "treecopy.h"

#include <QHash>
#include <QMap>
#include <QMutex>
#include <QSet>
#include <QString>

#include <memory>
#include <optional>

namespace elsai {

/// Workspace folder on a remote host reached over OpenSSH; commands run there as the remote
/// user. One ControlMaster connection per backend; every call is one ssh channel over it.
/// Isolation is whatever the remote account gives: a command can do anything the remote user
/// can. File operations are confined to the remote workspace folder (checked on the client,
/// then resolved on the remote, see docs/backends/ssh.md).
class SshSandboxBackend : public SandboxBackend, public CappedListingBackend
{
public:
    struct Options
    {
        ssh::SshTarget target;
        /// Remote folder holding the workspaces (relative: to the remote home).
        QString remoteRoot = QStringLiteral(".elsai/workspaces");
        /// Name of this workspace's folder under remoteRoot (sanitized workspace id).
        QString workspaceName = QStringLiteral("workbench");
        double timeout = 120;              ///< default command timeout, seconds
        qint64 maxOutputBytes = 100000;    ///< cap on stdout + stderr kept
        QMap<QString, QString> env;        ///< extra variables for every command
        double killGraceSeconds = 1;       ///< TERM → KILL grace after a timeout
        int operationTimeoutSeconds = 600; ///< file operations, seeding, flushing
    };

    explicit SshSandboxBackend(Options options);
    ~SshSandboxBackend() override;

    QString id() const override;
    QString typeName() const override { return QStringLiteral("SshSandboxBackend"); }
    const Options &options() const { return m_options; }
    /// Canonical absolute workspace folder on the remote (empty before create()).
    QString remoteWorkspace() const;
    /// The connection (null before create()); benchmarks run bare ssh clients over it.
    std::shared_ptr<ssh::SshConnection> connection() const;

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
    void makeDirs(const QString &path) override;

    WorkspaceSeedResult seedWorkspace(const QString &source, const QStringList &excludes,
                                      const std::function<void(int, int)> &progress = {}) override;
    WorkspaceSyncResult syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                                      const std::function<void(int, int)> &progress = {}) override;
    SyncPlan planSync(const QString &dest, const WorkspaceSyncPolicy &policy) override;
    std::optional<SeedManifest> seedManifest() const override;

    ExecuteResult execute(const QString &command, std::optional<double> timeoutSeconds = {},
                          const QString &cwd = {}, const ExecuteOptions &options = {}) override;
    double defaultTimeoutSeconds() const override { return m_options.timeout; }
    /// One remote `find` of the folder (the `tree` operation) instead of one listing per
    /// folder: the search tools' walk costs one round trip.
    void walkTree(const QString &path, bool withStat,
                  const std::function<WalkStep(const WalkEntry &)> &visit) override;
    /// One `archive-out` of the folder, the exclusions on stdin (remotefetch.h).
    bool fetchesFiles() const override { return true; }
    std::optional<QHash<QString, QByteArray>> fetchFiles(const FileFetch &fetch) override;

    /// Checkpoints and change tracking through remote::RemoteTree: one listing command, one
    /// tar each way over the connection.
    bool supportsCheckpoints() const override { return true; }
    TreeManifest captureTree(const CaptureOptions &options) override;
    ApplyResult applyTree(const TreeManifest &current, const TreeManifest &target,
                          const CheckpointStore &store, TreeHashCache *cache) override;
    std::unique_ptr<TreeWatch> watchTree(int maxWatches) override;

private:
    struct Session
    {
        std::shared_ptr<ssh::SshConnection> conn;
        QString root; ///< canonical remote workspace
    };
    Session session() const;
    /// Runs one helper operation; throws the helper's refusals and connection failures.
    ProcessOutcome op(const Session &s, const QString &name, const QStringList &args,
                      const QString &stdinFile = {}, const QString &stdoutFile = {}) const;
    /// Throws what `o` of the operation `name` failed with (timeout, connection, refusal).
    ProcessOutcome checked(const Session &s, const QString &name, ProcessOutcome o) const;
    QHash<QString, FindRecord> listAll(const Session &s) const;
    /// The flush's transport: the `tree` listing, and the changed files in one tar stream.
    remote::RemoteFlush::Transport flushTransport(const Session &s) const;
    /// RemoteTree's transport: the confined operations over `s`, input on stdin.
    remote::TreeTransport treeTransport(const Session &s) const;
    /// Names the remote folder (device:inode) to the flush bases, once connected.
    void identifyWorkspace();

    Options m_options;
    mutable QMutex m_mutex;
    std::shared_ptr<ssh::SshConnection> m_conn;
    QString m_root;
    /// The flush bases (with the REMOTE stamps), kept on the host; the flush that uses them.
    remote::RemoteFlush m_flush;
    remote::RemoteTree m_tree;
};

} // namespace elsai
