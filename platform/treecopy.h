// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "findrecord.h"
#include "glob.h"
#include "types.h"

#include <QHash>
#include <QList>
#include <QString>

#include <functional>
#include <optional>

namespace elsai {

class WorkspaceFs;

/// Identity of a file's content at one moment, cheap to take (fstat).
struct FileStamp
{
    qint64 size = -1;
    qint64 mtimeNs = 0;
    bool operator==(const FileStamp &) const = default;
};

/// What seeding copied, so a later flush can tell who changed a file since (conflicts).
/// Keyed by workspace-relative path. `host` is the source file when it was copied (or the
/// host file a flush last wrote); `workspace` is the workspace copy right after that.
struct SeedManifest
{
    struct Entry
    {
        FileStamp host;
        FileStamp workspace;
    };
    QString hostRoot; ///< absolute host folder the entries refer to
    QHash<QString, Entry> files;

    /// Path → stamp of each file in the workspace as this manifest recorded it (the baseline of
    /// ExecutionBackend::seedBaseline()).
    QHash<QString, FileStamp> workspaceStamps() const;
};

/// Progress: files done so far, total files planned. Always called on the thread that called
/// executeSeed / executeSync (never from a copying thread), so it needs no locking.
using TreeProgress = std::function<void(int done, int total)>;

/// Copies `size` bytes from the current offsets of `in` to `out` (the size fstat reported, so
/// the copy matches the stamp taken): copy_file_range first (in-kernel, a reflink where the file
/// system can), read/write where it cannot. Stops early when the file shrinks. False with errno
/// set on failure. The one content copy of the seed, the flush and the checkpoint store.
bool copyContent(int in, int out, qint64 size, qint64 *copied);

// Nothing here throws for a file or folder that cannot be handled: each problem becomes one line
// in `errors` (so `success()` is false) and the rest goes on. Folders nested deeper than 256
// levels are reported and not entered.

// ---- Seeding: host folder → workspace -----------------------------------------------------

/// One entry of a seed plan (the "seed preview" of the window lists these).
struct SeedPlanEntry
{
    enum class Action { Copy, Excluded, SkippedSymlink, SkippedSpecial };
    QString path; ///< relative to the source folder
    Action action = Action::Copy;
    bool isDir = false;
    qint64 size = 0;
    QString pattern; ///< for Excluded: the exclude pattern that matched
};

struct SeedPlan
{
    QString sourceRoot;
    QList<SeedPlanEntry> entries; ///< folders before their contents; excluded folders not entered
    QStringList errors;           ///< unreadable folders etc.
    int fileCount() const;
    qint64 byteCount() const;
};

/// Walks `sourceRoot` without following any symlink (openat O_NOFOLLOW from the source fd).
/// Excluded folders are listed once and not entered; symlinks and special files are listed and
/// skipped. `sourceRoot` itself is the caller's choice and may be reached through a symlink.
/// Names that are not valid UTF-8 are reported as errors (they could not be opened again).
SeedPlan planSeed(const QString &sourceRoot, const GlobSet &excludes);

/// Copies the plan's files into the workspace: folders created with mkdirat, files written by
/// the one atomic writer (writeAtomicAt: a temp file beside the entry, renamed over it, so an
/// existing workspace entry — a symlink, a hard link to a file outside — is replaced, never
/// written through), content by copy_file_range (reflink where the file system can), mode bits
/// (no setuid/setgid) and mtimes kept. Files are not fsync'ed one by one: one syncfs of the
/// workspace's file system at the end makes the whole seed durable (a failure is an error).
/// Runs on several threads. Never writes outside the workspace even if the workspace already
/// holds symlinks: a planned folder whose workspace entry is a symlink or a file is refused with
/// an error, with everything below it. Fills `manifest` when given (hostRoot = the plan's
/// source; entries of another hostRoot are dropped first).
WorkspaceSeedResult executeSeed(const SeedPlan &plan, const WorkspaceFs &ws,
                                SeedManifest *manifest = nullptr,
                                const TreeProgress &progress = {});

// ---- Sync (flush): workspace → host folder ------------------------------------------------
//
// A flush is a three-way merge: base = what was seeded or last flushed (the SeedManifest of
// the destination), ours = the workspace, theirs = the host folder. decideSync() is the one
// decision table; every backend's plan comes from it (planSync for a folder, planSyncItems for
// a remote listing), and executeSync carries every plan out.

struct SyncPlanEntry
{
    enum class Action {
        Add,            ///< not on the host, and no base says it was deleted there
        Update,         ///< host unchanged since the base, workspace changed (or no base and
                        ///< NoBaseConflict::Overwrite)
        Unchanged,      ///< nothing to do: unchanged in the workspace, or same bytes
        KeepHost,       ///< host changed since the base, workspace did not: host wins
        Conflict,       ///< both changed (or no base and the contents differ): keep both
        SkippedSymlink, ///< never created on the host
        SkippedSpecial,
        HostDeleted,    ///< deleted on the host since the base, unchanged here: stays deleted
        SandboxDeleted, ///< in the base, gone from the workspace: the host file is kept
    };
    QString path; ///< workspace-relative
    Action action = Action::Add;
    qint64 size = 0;
    /// The host file when planned (size -1: none); executeSync writes only over this one.
    FileStamp host = {};
    /// Unchanged because both sides hold the same bytes although at least one changed since
    /// the base (or there was none for the path): executeSync moves the base to {host,
    /// workspace}, so a later change on one side only is decided as that side's, not as a
    /// conflict.
    bool converged = false;
    /// The workspace file's stamp when planned (the one a base records: for a remote listing,
    /// the remote stamp).
    FileStamp workspace = {};
};

struct SyncPlan
{
    QString destRoot;
    QList<SyncPlanEntry> entries; ///< only paths the include/exclude rules select
    QStringList errors;
};

/// One path's three sides, as a flush planner sees them.
struct SyncSides
{
    bool haveBase = false;     ///< the destination has a base (a seed from it, or a flush to it)
    bool inBase = false;       ///< the path has a record in that base
    bool oursExists = false;   ///< a regular file in the workspace
    bool oursChanged = true;   ///< the workspace file differs from its record (inBase only)
    bool theirsExists = false; ///< a regular file on the host
    bool theirsChanged = true; ///< the host file differs from its record (inBase only)
};

/// The decision table of every flush. `identical` compares the workspace and host contents; it
/// is called only when both exist and the answer matters. Unchanged also means "nothing to do"
/// for a path the workspace does not have (deleted on both sides, or never ours).
SyncPlanEntry::Action decideSync(const SyncSides &sides, NoBaseConflict noBase,
                                 const std::function<bool()> &identical);

/// Lists the workspace files selected by `includes` (path or a parent folder matches) and not
/// by `excludes`, and decides each with the host file under `destRoot` and the manifest, plus
/// one SandboxDeleted entry for each selected path of the manifest that is gone from the
/// workspace but still on the host. The manifest counts only when its hostRoot is `destRoot`;
/// without one there is no base and `noBase` decides differing files. A host path whose folder
/// is a symlink or not a folder, or which is itself a symlink or not a regular file, is an
/// error.
SyncPlan planSync(const WorkspaceFs &ws, const QString &destRoot, const GlobSet &includes,
                  const GlobSet &excludes, const SeedManifest *manifest,
                  NoBaseConflict noBase = NoBaseConflict::KeepBoth);

/// One workspace entry as a remote backend lists it, for planSyncItems().
struct SyncItem
{
    enum class Kind { File, Symlink, Special };
    QString path;
    Kind kind = Kind::File;
    qint64 size = 0;
    FileStamp stamp; ///< compared with the record's workspace side
    /// Set by a backend that tells "changed since the base" otherwise (a content hash).
    std::optional<bool> changed = {};
};

/// planSync() over a listing instead of a folder walk: `items` are the selected entries (the
/// caller applied the include/exclude rules; `includes`/`excludes` select the manifest's
/// paths for SandboxDeleted). `content` holds the bytes of the files that may be compared or
/// written (a staging folder; a file missing there counts as different from the host's).
SyncPlan planSyncItems(const QList<SyncItem> &items, const WorkspaceFs &content,
                       const QString &destRoot, const GlobSet &includes, const GlobSet &excludes,
                       const SeedManifest *manifest,
                       NoBaseConflict noBase = NoBaseConflict::KeepBoth);

/// What a flush of a REMOTE workspace (SSH, Daytona, Docker) plans from: its listing (`find`
/// records by workspace-relative path) turned into the selected entries for planSyncItems()
/// (folders left out, links and special files as such, files with their remote stamp), and the
/// files whose bytes must be fetched into the staging folder first: every selected file that
/// changed since `base` recorded it, or that it does not record, sorted. A file unchanged since the
/// base is decided without its bytes.
struct RemoteSyncSelection
{
    QList<SyncItem> items;
    QStringList fetch;
};
RemoteSyncSelection selectRemoteSync(const QHash<QString, FindRecord> &listing,
                                     const GlobSet &includes, const GlobSet &excludes,
                                     const SeedManifest *base);

/// After executeSync() over a staged copy of a remote workspace: moves `base` forward for every
/// path the flush wrote (added, updated) or found converged, with the host side executeSync
/// recorded in `staged` and the workspace side the REMOTE stamp of `listing` (what the next
/// listing is compared with). Returns true when `base` changed (so it is saved).
bool recordRemoteSync(SeedManifest &base, const SyncPlan &plan, const WorkspaceSyncResult &result,
                      const SeedManifest &staged, const QHash<QString, FindRecord> &listing);

/// The paths of `plan` whose entry is converged (executeSync moves their base).
QStringList convergedPaths(const SyncPlan &plan);

/// Carries out Add/Update (atomic replace in the destination: parents resolved with
/// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, temp + fsync + rename + folder fsync) and Conflict
/// (the workspace version is written beside the host file, which is kept: to
/// `<path>.sandbox-conflict`, or `-2`, `-3`… when that name holds other bytes, so a conflict
/// file is never replaced; one with the same bytes is reused). Re-checks the host file just
/// before writing: one that appeared or changed since planning is handled as a conflict.
/// Every path lands in its class list of the result; conflicts are also readable lines in
/// `errors`. Updates `manifest` for what it wrote and for each converged entry (when its
/// hostRoot is empty or `destRoot`). filesSynced/bytesSynced count Add and Update, not
/// conflict files.
WorkspaceSyncResult executeSync(const SyncPlan &plan, const WorkspaceFs &ws,
                                SeedManifest *manifest = nullptr,
                                const TreeProgress &progress = {});

} // namespace elsai
