#pragma once

#include "glob.h"
#include "types.h"

#include <QHash>
#include <QList>
#include <QString>

#include <functional>

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

// Nothing here throws for a file or folder that cannot be handled: each problem becomes one line
// in `errors` (so `success()` is false) and the rest goes on. Folders nested deeper than 256
// levels are reported and not entered.

// ---- Seeding: host folder → workspace -----------------------------------------------------

/// One entry of a seed plan (the "seed preview" of the window lists these).
struct SeedPlanEntry
{
    enum class Action { Copy, Excluded, SkippedSymlink, SkippedSpecial };
    QString path;     ///< relative to the source folder
    Action action = Action::Copy;
    bool isDir = false;
    qint64 size = 0;
    QString pattern;  ///< for Excluded: the exclude pattern that matched
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

/// Copies the plan's files into the workspace: folders created with mkdirat, files created
/// O_CREAT|O_EXCL|O_NOFOLLOW (an existing workspace entry is unlinked first, never written
/// through), content by copy_file_range (reflink where the file system can), mode bits (no
/// setuid/setgid) and mtimes kept. Runs on several threads. Never writes outside the workspace
/// even if the workspace already holds symlinks: a planned folder whose workspace entry is a
/// symlink or a file is refused with an error, with everything below it. Fills `manifest` when
/// given (hostRoot = the plan's source; entries of another hostRoot are dropped first).
WorkspaceSeedResult executeSeed(const SeedPlan &plan, const WorkspaceFs &ws,
                                SeedManifest *manifest = nullptr,
                                const TreeProgress &progress = {});

// ---- Sync (flush): workspace → host folder ------------------------------------------------

struct SyncPlanEntry
{
    enum class Action {
        Add,            ///< not on the host yet
        Update,         ///< host unchanged since seeding/last flush, workspace changed
        Unchanged,      ///< same content on both sides (nothing to do)
        KeepHost,       ///< host changed since seeding, workspace did not: host wins silently
        Conflict,       ///< both changed (or no record and the contents differ): keep both
        SkippedSymlink, ///< never created on the host
        SkippedSpecial,
    };
    QString path; ///< workspace-relative
    Action action = Action::Add;
    qint64 size = 0;
};

struct SyncPlan
{
    QString destRoot;
    QList<SyncPlanEntry> entries; ///< only paths the include/exclude rules select
    QStringList errors;
};

/// Lists the workspace files selected by `includes` (path or a parent folder matches) and not
/// by `excludes`, and compares each with the host file under `destRoot` and the manifest.
/// The manifest counts only when its hostRoot is `destRoot`. A host path whose folder is a
/// symlink or not a folder, or which is itself a symlink or not a regular file, is an error.
SyncPlan planSync(const WorkspaceFs &ws, const QString &destRoot, const GlobSet &includes,
                  const GlobSet &excludes, const SeedManifest *manifest);

/// Carries out Add/Update (atomic replace in the destination: parents resolved with
/// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, temp + fsync + rename + folder fsync) and Conflict
/// (the workspace version is written to `<path>.sandbox-conflict`, the host file kept, and the
/// path listed in `conflicts` and, as a readable line, in `errors`). Re-checks the host file
/// just before writing: one that appeared or changed since planning is handled as a conflict.
/// Updates `manifest` for what it wrote (when its hostRoot is empty or `destRoot`).
/// filesSynced/bytesSynced count Add and Update, not `.sandbox-conflict` files.
WorkspaceSyncResult executeSync(const SyncPlan &plan, const WorkspaceFs &ws,
                                SeedManifest *manifest = nullptr,
                                const TreeProgress &progress = {});

} // namespace elsai
