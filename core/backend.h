// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "process.h"
#include "treecopy.h"
#include "treesnapshot.h"
#include "treewatch.h"
#include "types.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

namespace elsai {

/// Part of a file, as ExecutionBackend::readFileRange() returns it.
struct FileRange
{
    QByteArray data;      ///< the bytes from the offset asked for (at most the count asked for)
    qint64 totalSize = 0; ///< the whole file's size when it was read
};

/// One entry of ExecutionBackend::walkTree().
struct WalkEntry
{
    QString path; ///< workspace-relative
    FileInfo::Type type = FileInfo::Type::File;
    std::optional<qint64> size; ///< files, when the walk was asked for sizes
    qint64 mtimeMs = 0;         ///< when the walk was asked for sizes
    int depth = 0;              ///< 0 for the entries of the folder walked
};

/// Some files of a folder that a walkTree() of it just listed, for
/// ExecutionBackend::fetchFiles().
struct FileFetch
{
    QString folder;          ///< the folder walked (WorkspaceFs::normalize(): "" is the root)
    QList<WalkEntry> listed; ///< every entry the walk visited, with sizes
    QStringList paths;       ///< the regular files wanted, workspace-relative, all in `listed`
    qint64 maxFileBytes = 0; ///< a longer file comes back cut after maxFileBytes + 1 bytes
};

/// What a walkTree() visitor wants next.
enum class WalkStep {
    Continue,   ///< go on (into this entry, when it is a folder)
    SkipFolder, ///< do not enter this folder
    Stop,       ///< end the walk
};

/// Minimal backend for file system and workspace operations (spec: ExecutionBackend).
///
/// Contract for every implementation:
/// - Calls are synchronous and may block (I/O, network); callers keep them off the GUI thread.
/// - Every method is thread-safe once create() has returned: agents call tools concurrently.
/// - Paths are workspace-relative and confined to the workspace; escapes raise PermissionError,
///   other failures the OSError subclasses of errors.h.
class ExecutionBackend
{
public:
    virtual ~ExecutionBackend();

    /// Stable identifier of this backend instance (e.g. "local:/tmp/ws").
    virtual QString id() const = 0;
    /// Class name, as SandboxRef.backend_type reports it.
    virtual QString typeName() const = 0;
    /// The host folder that holds the workspace (local, bwrap), or empty when the workspace
    /// lives elsewhere (a remote machine): host folders the engine seeds from or flushes to
    /// must not overlap it (requireSeparateFolders).
    virtual QString hostFolder() const { return {}; }

    /// Creates the workspace / remote session. Idempotent.
    virtual void create() = 0;
    /// Releases the session. Idempotent. A local workspace folder is kept on disk.
    virtual void close() = 0;
    virtual bool isCreated() const = 0;

    virtual QByteArray readFile(const QString &path) = 0;
    /// At most `maxBytes` bytes of a regular file from byte `offset` (past the end: none), and
    /// the file's size. The default reads the whole file with readFile() and cuts it (remote
    /// backends without a ranged read); the local backends read only the range (pread).
    virtual FileRange readFileRange(const QString &path, qint64 offset, qint64 maxBytes);
    /// True when readFileRange() reads only the range, so reading a file piece by piece costs
    /// no more than reading it once.
    virtual bool hasRangedRead() const { return false; }
    /// Atomic write; creates parent folders.
    virtual void writeFile(const QString &path, const QByteArray &content) = 0;
    virtual QList<FileInfo> listDir(const QString &path) = 0;
    /// listDir() for a text listing: a folder of more than `statLimit` entries may come back
    /// with types only (no size, no mtime) where that saves a stat per entry.
    virtual QList<FileInfo> listDirBrief(const QString &path, qsizetype statLimit)
    {
        Q_UNUSED(statLimit);
        return listDir(path);
    }
    /// listDirBrief() in the compact form a text listing uses (no string per entry). The
    /// default converts listDirBrief(); the local backends read the folder straight into it.
    virtual DirListing listDirCompact(const QString &path, qsizetype statLimit)
    {
        return DirListing::fromInfos(path, listDirBrief(path, statLimit));
    }
    /// Removes a file (or, with `recursive`, a folder).
    virtual void removeFile(const QString &path, bool recursive = false) = 0;
    /// lstat of one entry; FileNotFoundError when missing.
    virtual FileInfo stat(const QString &path) = 0;
    /// mkdir -p of a workspace folder.
    virtual void makeDirs(const QString &path) = 0;

    /// Extension (the search tools): visits every entry beneath the folder `path`, depth
    /// first, each folder's entries in name order, symlinks reported and never followed.
    /// `withStat` fills sizes and modification times. Folders deeper than MaxWalkDepth are
    /// not entered. The default lists folder by folder with listDirCompact(); a remote backend
    /// may list the whole tree in one call.
    virtual void walkTree(const QString &path, bool withStat,
                          const std::function<WalkStep(const WalkEntry &)> &visit);
    static constexpr int MaxWalkDepth = 128;
    /// Extension (grep): true when fetchFiles() brings many files in one round trip, so a
    /// search reads a remote tree without one request per file.
    virtual bool fetchesFiles() const { return false; }
    /// Extension (grep): the contents of `fetch.paths` by path, in one round trip (the remote
    /// backends: one archive of the folder). A file missing from the answer could not be read
    /// (gone, replaced, no permission). The transfer is bounded by the listed sizes of the
    /// files (plus the archive's headers and some room for growth): std::nullopt when the
    /// folder sent more (files grew since listed), or when the backend has no such transfer.
    virtual std::optional<QHash<QString, QByteArray>> fetchFiles(const FileFetch &fetch)
    {
        Q_UNUSED(fetch);
        return std::nullopt;
    }
    /// Extension (the move tool): renames `source` to `dest` (both workspace paths; dest's
    /// parent folders are created). FileExistsError when dest exists and `overwrite` is false;
    /// a folder is never replaced. The default copies a file (read, write, remove) or a
    /// folder's tree of files and folders (a symlink inside refuses the move before anything
    /// is copied); the local backends rename atomically.
    virtual void rename(const QString &source, const QString &dest, bool overwrite);

    /// Copies `source` (a host folder) into the workspace, skipping `excludes`.
    virtual WorkspaceSeedResult
    seedWorkspace(const QString &source, const QStringList &excludes,
                  const std::function<void(int, int)> &progress = {}) = 0;
    /// Copies the artifacts selected by `policy` to the host folder `dest`.
    virtual WorkspaceSyncResult
    syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                  const std::function<void(int, int)> &progress = {}) = 0;
    /// What syncArtifacts would do, without doing it (the flush preview).
    virtual SyncPlan planSync(const QString &dest, const WorkspaceSyncPolicy &policy) = 0;
    /// The record of the last seed (its host folder and each file's host and workspace stamps,
    /// as later flushes into that folder updated them): the base "changed since the seed" is
    /// measured against. An empty manifest (no hostRoot) when nothing was seeded; none when
    /// this backend keeps no such record.
    virtual std::optional<SeedManifest> seedManifest() const { return std::nullopt; }
    /// Workspace-relative path → stamp of each file as the last seed left it (marks files
    /// changed since seeding); empty when unknown.
    QHash<QString, FileStamp> seedBaseline() const;

    /// Writes each (path, content); one result per file, failures as results.
    virtual QList<FileTransferResult> uploadFiles(const QList<QPair<QString, QByteArray>> &files);
    /// Reads each path; one result per file, failures as results.
    virtual QList<FileTransferResult> downloadFiles(const QStringList &paths);

    // ---- Time travel (docs/checkpoints.md) ----------------------------------------------
    /// True when captureTree() and applyTree() work here (the default implementations throw).
    virtual bool supportsCheckpoints() const { return false; }
    /// The whole workspace as a tree, never following a symlink; with `options.store`, the
    /// content of every file the store lacks goes into it. Local and bwrap walk the folder; a
    /// remote backend lists it in one command and brings the missing files in one archive.
    virtual TreeManifest captureTree(const CaptureOptions &options);
    /// Makes the workspace exactly `target` (contents, modes, symlinks, empty folders,
    /// deletions), given `current`, a captureTree() of it, durably (a remote backend sends the
    /// files the workspace lacks in one archive and the removals in one command).
    virtual ApplyResult applyTree(const TreeManifest &current, const TreeManifest &target,
                                  const CheckpointStore &store, TreeHashCache *cache);
    /// A watch of the workspace's changes for change tracking (local, bwrap: inotify; the
    /// remote backends: a listing per drain, remote::RemoteTree), or none where there is none.
    virtual std::unique_ptr<TreeWatch> watchTree(int maxWatches)
    {
        Q_UNUSED(maxWatches);
        return {};
    }
};

/// Options of one execute() call beyond the spec's (command, timeout, cwd).
struct ExecuteOptions
{
    /// Streams output while the command runs (called on the executing thread).
    std::function<void(OutputChannel, const QByteArray &)> onOutput;
    std::shared_ptr<CancellationToken> cancel;
    /// Extra variables for this call only.
    QMap<QString, QString> env;
    /// The caller may only read the workspace (a read-only agent): a backend that can bind the
    /// workspace read-only does so for this call; one that cannot refuses (PermissionError).
    bool readOnlyWorkspace = false;
    /// Extension (background processes): the command's stdin is this pipe's read end instead
    /// of /dev/null (-1). Only where SandboxBackend::acceptsInput() is true.
    int stdinFd = -1;
    /// Extension (background processes): every byte goes to onOutput, none is kept in the
    /// result (so the output cap does not end the stream). Only where acceptsInput() is true.
    bool streamOnly = false;
};

/// A command started on the calling thread whose end has not been waited for yet
/// (SandboxBackend::startCommand()). One thread at a time may use it; the waiting may move to
/// another thread between calls.
class RunningCommand
{
public:
    virtual ~RunningCommand();
    /// True once the command ended; false when `timeoutMs` passed first (-1: no limit). Its
    /// output reaches ExecuteOptions::onOutput on the waiting thread.
    virtual bool waitFor(int timeoutMs) = 0;
    /// Its result, once waitFor() returned true (once).
    virtual ExecuteResult takeResult() = 0;
};

/// ExecutionBackend that can run shell commands (spec: SandboxBackend).
class SandboxBackend : public ExecutionBackend
{
public:
    /// Runs `command` with /bin/sh -c in the workspace (or `cwd` beneath it).
    /// `timeoutSeconds` none = the backend's default. Timeout → exit code 124.
    virtual ExecuteResult execute(const QString &command, std::optional<double> timeoutSeconds = {},
                                  const QString &cwd = {}, const ExecuteOptions &options = {}) = 0;
    /// execute() in two steps, where the backend can: the command starts on the calling thread
    /// and its end may be waited for on another (execute's soft return runs a short command
    /// without a second thread that way). Throws what execute() throws; null where the backend
    /// cannot (the caller then runs execute() on a thread of its own). Destroying the result
    /// before the command's end kills the command. The backend must outlive the result, and
    /// the calling thread must outlive the command (callingThreadOutlivesCommands() in
    /// platform/process.h) unless it waits for its end itself.
    virtual std::unique_ptr<RunningCommand> startCommand(const QString &command,
                                                         std::optional<double> timeoutSeconds,
                                                         const QString &cwd,
                                                         const ExecuteOptions &options);
    /// The process groups of the commands running now, where they run on this machine (local,
    /// bwrap); empty elsewhere. A snapshot: a group may end at any moment.
    virtual QList<qint64> runningProcessGroups() const { return {}; }
    /// The timeout of a call that names none, in seconds (a per-call timeout may only be
    /// shorter).
    virtual double defaultTimeoutSeconds() const = 0;
    /// True when execute() honours ExecuteOptions::stdinFd and streamOnly (the local backends):
    /// a background process can then take input and stream past the output cap.
    virtual bool acceptsInput() const { return false; }
    /// True when execute() stops a running command once its ExecuteOptions::cancel fires
    /// (background processes and the soft return need it: a stop must not wait for the
    /// command's own end).
    virtual bool cancelsRunningCommands() const { return true; }
};

/// True when execute tools should register (the backend implements SandboxBackend).
bool supportsExecution(const ExecutionBackend *backend);

using BackendPtr = std::shared_ptr<ExecutionBackend>;
using BackendFactory = std::function<BackendPtr()>;

/// A backend template builds one backend per workspace / session (spec: templates with
/// `build_for_session`). Templates that do not override it return nullptr and the manager
/// falls back to buildDefault().
class BackendTemplate
{
public:
    virtual ~BackendTemplate();
    /// The class name of the backends it builds, never the template's own: SandboxRef's
    /// backend_type is the spec's "Backend class name" whichever source a sandbox was given.
    virtual QString typeName() const = 0;
    /// Builds the backend of one workspace id, or nullptr when the template has no per-session
    /// builder.
    virtual BackendPtr buildForSession(const QString &sessionId)
    {
        Q_UNUSED(sessionId);
        return {};
    }
    /// Builds a backend when there is no per-session builder.
    virtual BackendPtr buildDefault() = 0;
};
using BackendTemplatePtr = std::shared_ptr<BackendTemplate>;

/// "Backend instance or template", as Sandbox and AgentConfig take it.
class BackendSource
{
public:
    BackendSource() = default;
    BackendSource(BackendPtr instance) : m_instance(std::move(instance)) {}
    BackendSource(BackendTemplatePtr tmpl) : m_template(std::move(tmpl)) {}
    template<typename T>
    requires std::is_base_of_v<ExecutionBackend, T> BackendSource(std::shared_ptr<T> instance)
        : m_instance(std::move(instance))
    {
    }
    template<typename T>
    requires std::is_base_of_v<BackendTemplate, T> BackendSource(std::shared_ptr<T> tmpl)
        : m_template(std::move(tmpl))
    {
    }

    bool isNull() const { return !m_instance && !m_template; }
    const BackendPtr &instance() const { return m_instance; }
    const BackendTemplatePtr &templ() const { return m_template; }
    QString typeName() const;

private:
    BackendPtr m_instance;
    BackendTemplatePtr m_template;
};

} // namespace elsai
