// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "enginehttp.h"
#include "findrecord.h"
#include "firstentries.h"
#include "remoteflush.h"
#include "remotetree.h"
#include "treecopy.h"

#include <QHash>
#include <QMap>
#include <QMutex>
#include <QString>

#include <memory>
#include <optional>

namespace elsai {

/// A container per sandbox, through the Docker Engine API (docs/backends/docker.md): Docker
/// over its unix socket or tcp (TLS), and Podman's Docker-compatible service alike. No CLI.
///
/// - create(): the container of this workspace id when one is left (labels: a restarted
///   workbench reattaches), else a new one from Options::image with the workspace in a
///   volume at /workspace, hardened: no network, all capabilities dropped, no new
///   privileges, a read-only root file system with a tmpfs /tmp, the image's user, and
///   memory / CPU / pids limits. close() removes container and volume (Options::keep: stops
///   the container and keeps both).
/// - Every file operation and execute() is one exec of the shared remote command protocol
///   (backends/remote/: the confined script, the command wrapper), its multiplexed stream
///   demultiplexed, its exit status from exec inspect.
/// - Seeding sends one tar (PUT /containers/{id}/archive); a flush lists the workspace,
///   fetches one tar of it (GET archive) when a selected file changed, unpacks the changed
///   files into a private staging folder and plans there with the core planner.
class DockerSandboxBackend : public SandboxBackend, public CappedListingBackend
{
public:
    struct Options
    {
        /// unix:///… or tcp://…; empty: DOCKER_HOST, else unix:///var/run/docker.sock.
        QString host;
        /// A folder with ca.pem, cert.pem, key.pem for tcp with TLS; empty: DOCKER_CERT_PATH
        /// when DOCKER_TLS_VERIFY is set.
        QString tlsCertPath;
        QString image;        ///< required; must hold /bin/sh, coreutils, findutils, tar, setsid
        bool network = false; ///< false: NetworkMode none
        bool keep = false;    ///< close() stops instead of removing
        qint64 memoryBytes = qint64(2) << 30; ///< 0: no limit
        double cpus = 2;                      ///< 0: no limit
        int pidsLimit = 512;                  ///< 0: no limit
        qint64 tmpBytes = qint64(256) << 20;  ///< size of the tmpfs /tmp
        double timeout = 120;                 ///< default command timeout, seconds
        qint64 maxOutputBytes = 100000;       ///< cap on stdout + stderr kept
        QMap<QString, QString> env;           ///< extra variables of every command
        double killGraceSeconds = 1;          ///< TERM → KILL grace after a timeout
        int operationTimeoutSeconds = 600;    ///< file operations, archives
        QByteArray apiVersion = "v1.41";      ///< Docker 20.10+, Podman 3+
        /// The workspace inside the container: the volume's mount point (/workspace) or a
        /// folder beneath it.
        QString workspacePath = QStringLiteral("/workspace");
        QMap<QString, QString> labels; ///< extra labels of the container and its volume
    };

    DockerSandboxBackend(QString workspaceId, Options options);
    /// Does not close(): a container left running is found again by its labels (reattach
    /// after a restart, or removeLabelled()). Sandbox::stop() closes it.
    ~DockerSandboxBackend() override;

    QString id() const override;
    QString typeName() const override { return QStringLiteral("DockerSandboxBackend"); }
    const Options &options() const { return m_options; }
    const QString &workspaceId() const { return m_workspaceId; }
    /// The container's id once created (empty before and after close()).
    QString containerId() const;
    /// The workspace volume's name once created.
    QString volumeName() const;

    /// Removes every container and volume of the engine `options` names that carries all of
    /// `labels` ("name=value") besides the workbench's own: the cleanup of sandboxes a
    /// workbench left behind (killed, or --docker-keep). Returns how many containers went.
    static int removeLabelled(const Options &options, const QStringList &labels);

    /// The label every container and volume of the workbench carries, and the one naming
    /// the workspace id.
    static QString ownerLabel() { return QStringLiteral("dev.elsai.workbench"); }
    static QString workspaceLabel() { return QStringLiteral("dev.elsai.workbench.workspace"); }

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
    /// One exec of the `tree` operation for the whole walk instead of one listing per folder.
    void walkTree(const QString &path, bool withStat,
                  const std::function<WalkStep(const WalkEntry &)> &visit) override;
    /// One `archive-out` of the folder, the exclusions inline or uploaded (remotefetch.h).
    bool fetchesFiles() const override { return true; }
    std::optional<QHash<QString, QByteArray>> fetchFiles(const FileFetch &fetch) override;

    /// Checkpoints and change tracking through remote::RemoteTree: one listing exec, one tar
    /// each way (in: the archive endpoint; out: the exec's output).
    bool supportsCheckpoints() const override { return true; }
    TreeManifest captureTree(const CaptureOptions &options) override;
    ApplyResult applyTree(const TreeManifest &current, const TreeManifest &target,
                          const CheckpointStore &store, TreeHashCache *cache) override;
    std::unique_ptr<TreeWatch> watchTree(int maxWatches) override;

    /// Where the workspace volume is mounted.
    static QString volumeMount() { return QStringLiteral("/workspace"); }

private:
    struct Exec
    {
        int exitCode = -1;
        QByteArray out, err;
        bool timedOut = false, cancelled = false;
        qint64 dropped = 0;
    };
    /// Runs `argv` in the container (exec create + start + inspect); `user` empty: the
    /// container's.
    struct ExecSpec
    {
        QStringList argv;
        QString user;
        int timeoutMs = 0;
        qint64 cap = -1; ///< keep at most this much of stdout + stderr together; -1: all
        std::function<void(OutputChannel, const QByteArray &)> onOutput;
        std::shared_ptr<CancellationToken> cancel;
    };
    Exec exec(const QString &container, const ExecSpec &spec) const;
    /// One operation of the confined script; the payload, or the typed refusal thrown.
    QByteArray confined(const QString &op, const QString &rel, const QStringList &args = {});
    QString requireContainer() const;
    /// Throws what a failed engine call means (SandboxStartError while starting, OSError
    /// otherwise), in the engine's own words.
    [[noreturn]] void raise(const docker::EngineResponse &response, const QString &what,
                            bool starting = false) const;
    /// The container's user as numbers ("uid:gid"), for the owner of archives sent in.
    QString numericUser(const QString &container);
    /// Sends `member` of the local folder `localParent` (a file or a folder) as one archive,
    /// owned by the container's user, into the container's folder `dir`.
    void putArchive(const QString &dir, const QString &localParent, const QString &member,
                    const QString &what);
    /// PUT /containers/{id}/archive of the local tar into the container's folder `dir`.
    void putTar(const QString &dir, const QString &tarFile, const QString &what);
    /// RemoteTree's transport: the confined operations, input by the archive endpoint.
    remote::TreeTransport treeTransport();
    /// The flush's transport: the `tree` listing, the changed files from one archive.
    remote::RemoteFlush::Transport flushTransport();
    QHash<QString, FindRecord> tree();

    QString m_workspaceId;
    Options m_options;
    docker::EngineClient m_engine;
    QMutex m_lifecycleMutex;
    mutable QMutex m_mutex;
    QString m_container;
    QString m_volume;
    QString m_owner; ///< the container user's "uid:gid" (archives sent in are theirs)

    /// The flush bases (with the container's stamps), kept on the host and named by the
    /// volume; the flush that uses them.
    remote::RemoteFlush m_flush;
    remote::RemoteTree m_tree;
};

} // namespace elsai
