// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agent.h"
#include "backend.h"
#include "boundedread.h"
#include "sandboxmanager.h"
#include "timetravel.h"
#include "treecopy.h"
#include "types.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QMutex>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <variant>

namespace elsai {

/// Content for Sandbox::addFiles: text, bytes, or a host file to copy.
struct FileSource
{
    struct HostPath
    {
        QString path;
    };
    std::variant<QString, QByteArray, HostPath> value;

    static FileSource text(const QString &s) { return {s}; }
    static FileSource bytes(const QByteArray &b) { return {b}; }
    static FileSource hostPath(const QString &p) { return {HostPath{p}}; }
};

/// An agent attached to a sandbox, as attachedAgents() reports it.
struct AttachedAgent
{
    AgentPtr agent;
    SandboxAttachMode mode = SandboxAttachMode::ReadWrite;
    QDateTime attachedAt;
};

/// Shared sandbox workspace for one or more agents (spec: Sandbox).
///
/// Create with Sandbox::create(); agents keep a reference to it. Every method is synchronous
/// and thread-safe: agents may call tools concurrently with host operations. Slow methods
/// (start, stop, flush, file transfers, execute) belong off the GUI thread.
///
/// Host-side operations (addFiles, downloadFiles, deleteFiles, moveFile, readFile, flush) are
/// audited with the actor "host" unless another is given, and are not limited by attach modes.
class Sandbox : public std::enable_shared_from_this<Sandbox>
{
    struct Private;

public:
    struct Options
    {
        /// none: a SandboxManager(ttl_seconds) of its own.
        std::shared_ptr<SandboxManager> manager;
        std::optional<QString> seedFrom;
        QStringList seedExclude; ///< merged with DEFAULT_SANDBOX_SEED_EXCLUDES
        std::optional<WorkspaceSyncPolicy> syncPolicy; ///< none: default_sandbox_sync_policy()
        std::optional<QString> syncDest;               ///< none: seed_from
        /// Bound of an agent's read_file answer, in bytes (>= 1; see readWorkspaceFile());
        /// none: DefaultReadFileMaxBytes.
        std::optional<qint64> readFileMaxBytes;
        /// Seconds after which an agent's execute answers while its command goes on as a
        /// background process (>= 0; 0: never); none: DefaultExecuteSoftReturnSeconds (45).
        std::optional<double> executeSoftReturnSeconds;
        /// Checkpoints and change tracking (docs/checkpoints.md); both off by default.
        TimeTravelOptions timeTravel;
    };
    using Progress = std::function<void(int done, int total)>;

    /// `ttlSeconds` is required (none disables idle expiry for an auto-created manager).
    static std::shared_ptr<Sandbox> create(const QString &workspaceId, const BackendSource &backend,
                                           std::optional<double> ttlSeconds, Options options = {});
    ~Sandbox();

    const QString &workspaceId() const;
    std::optional<double> ttlSeconds() const;
    const std::shared_ptr<SandboxManager> &manager() const;
    const Options &options() const;
    /// Seed excludes in force: DEFAULT_SANDBOX_SEED_EXCLUDES + seed_exclude.
    QStringList effectiveSeedExcludes() const;
    WorkspaceSyncPolicy effectiveSyncPolicy() const;
    std::optional<QString> effectiveSyncDest() const;
    QString backendTypeName() const;

    bool isStarted() const;
    std::optional<QString> ownerId() const;
    /// The live backend while started, else nullptr.
    BackendPtr backend() const;

    /// Creates the backend, claims the workspace and seeds from seed_from. Idempotent: returns
    /// none when already started or when there is nothing to seed. Seeding problems are in the
    /// result's `errors` (the sandbox still starts). SandboxStartError when another instance
    /// owns the workspace id in the manager.
    std::optional<WorkspaceSeedResult> start(const Progress &progress = {});

    /// Detaches every agent, flushes when `sync`, closes the backend session. Idempotent.
    /// Returns the flush result when one ran.
    std::optional<WorkspaceSyncResult> stop(bool sync = true);

    /// Writes files without an agent turn; returns the paths written. With `overwrite` false,
    /// existing paths are skipped. A host path that cannot be read raises OSError before
    /// anything is written.
    QStringList addFiles(const QList<QPair<QString, FileSource>> &files, bool overwrite = true,
                         const QString &actor = hostActor());
    /// Copies workspace files to host paths (atomic replace on the host; parents created);
    /// returns the workspace paths downloaded. With `overwrite` false, existing host files are
    /// skipped. Raises OSError when a file cannot be read or written.
    QStringList downloadFiles(const QList<QPair<QString, QString>> &files, bool overwrite = true,
                              const QString &actor = hostActor());
    /// Deletes workspace paths (folders recursively). Not limited by attach modes.
    void deleteFiles(const QStringList &paths, const QString &actor = hostActor());
    /// Creates a workspace folder and its parents (the window's "New folder").
    void makeFolder(const QString &path, const QString &actor = hostActor());
    /// Moves a file: read → write → delete. Returns false, moving nothing, when `src` and
    /// `dest` name one file (same path in another spelling, a link leading back, a hard link).
    bool moveFile(const QString &src, const QString &dest, const QString &actor = hostActor());
    QString readFile(const QString &path, const QString &actor = hostActor());
    QByteArray readFileBytes(const QString &path, const QString &actor = hostActor());

    /// Syncs artifacts to `dest` (default sync_dest, then seed_from) per sync_policy, as a
    /// three-way merge with what was seeded or last flushed there. `noBase` overrides the
    /// policy's rule for a destination without a base. Returns none when no destination is
    /// configured.
    std::optional<WorkspaceSyncResult> flush(const std::optional<QString> &dest = std::nullopt,
                                             const Progress &progress = {},
                                             const QString &actor = hostActor(),
                                             std::optional<NoBaseConflict> noBase = {});
    /// What flush(dest) would do (the flush preview), or none without a destination.
    std::optional<SyncPlan> planFlush(const std::optional<QString> &dest = std::nullopt,
                                      std::optional<NoBaseConflict> noBase = {});

    /// Wires an agent to this sandbox: registers the sandbox tools its mode allows.
    /// SandboxAttachError when not started, when the agent is attached to another sandbox or
    /// configured for another instance, or when registration fails. Attaching an attached
    /// agent again changes its mode.
    void attach(const AgentPtr &agent, SandboxAttachMode mode = SandboxAttachMode::ReadWrite);
    /// Removes the binding and the sandbox tools. Idempotent.
    void detach(const AgentPtr &agent);
    QList<AttachedAgent> attachedAgents() const;

    SandboxRef ref() const;

    // ---- Time travel (docs/checkpoints.md) ----------------------------------------------
    // Each raises ValueError when the sandbox was created without checkpoints, OSError when
    // it is not started. Audited as sandbox.checkpoint, sandbox.restore, … under `actor`.

    /// The time travel of the started sandbox, or nullptr (not started, or both off).
    std::shared_ptr<TimeTravel> timeTravel() const;
    /// Records the workspace as it is now. An empty name makes an automatic one ("auto-…",
    /// removable under the size limit). FileExistsError when the name is taken.
    CheckpointInfo checkpoint(const QString &name, const QString &note = {},
                              const QString &actor = hostActor());
    QList<CheckpointInfo> checkpoints() const;
    /// `from` and `to`: checkpoint names or "now".
    CheckpointDiff diffCheckpoints(const QString &from, const QString &to = QStringLiteral("now"),
                                   const CheckpointDiffOptions &options = {},
                                   const QString &actor = hostActor());
    /// Makes the workspace exactly the checkpoint; the commands agents are running are stopped
    /// first and new calls wait until it is done. Also finishes an interrupted restore.
    RestoreResult restore(const QString &name, const QString &actor = hostActor());
    /// A new sandbox `workspaceId` on `backend`, started, whose workspace is the checkpoint
    /// (its own baseline when its options keep checkpoints). The new workspace must be empty:
    /// nothing in it is replaced (FileExistsError).
    std::shared_ptr<Sandbox> fork(const QString &name, const QString &workspaceId,
                                  const BackendSource &backend, Options options = {},
                                  const QString &actor = hostActor());
    /// False when there was no such checkpoint.
    bool deleteCheckpoint(const QString &name, const QString &actor = hostActor());
    /// The checkpoint an interrupted restore was bringing back (restore() it to finish).
    std::optional<QString> interruptedRestore() const;

    static QString hostActor() { return QStringLiteral("host"); }

private:
    Sandbox(const QString &workspaceId, const BackendSource &backend,
            std::optional<double> ttlSeconds, Options options);
    BackendPtr requireBackend() const;
    std::shared_ptr<TimeTravel> requireTimeTravel() const;
    /// seed_from and sync_dest against the backend's host folder (requireSeparateFolders).
    void requireSeparateHostFolders(const ExecutionBackend &backend) const;
    /// Clears the started state and releases the process-wide claim; false if not started.
    bool markStopped();
    void onSessionClosed(const QString &reason);
    std::unique_ptr<Private> d;
};
using SandboxPtr = std::shared_ptr<Sandbox>;

/// What `async with Sandbox(...)` does: start() on construction, stop(sync=true) on
/// destruction (errors from stop are logged, never thrown from the destructor).
class SandboxScope
{
public:
    explicit SandboxScope(SandboxPtr sandbox);
    ~SandboxScope();
    SandboxScope(const SandboxScope &) = delete;
    SandboxScope &operator=(const SandboxScope &) = delete;
    Sandbox *operator->() const { return m_sandbox.get(); }
    const SandboxPtr &sandbox() const { return m_sandbox; }
    const std::optional<WorkspaceSeedResult> &seedResult() const { return m_seed; }

private:
    SandboxPtr m_sandbox;
    std::optional<WorkspaceSeedResult> m_seed;
};

} // namespace elsai
