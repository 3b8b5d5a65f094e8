// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace elsai {

/// Result of one shell command (spec: ExecuteResult).
struct ExecuteResult
{
    QString output; ///< stdout, decoded as UTF-8 (invalid bytes become U+FFFD)
    int exitCode = 0;
    bool truncated = false;
    QString stderr_;        ///< stderr, captured separately ("stderr" is a macro in <cstdio>)
    bool timedOut = false;  ///< extension: the timeout fired (exitCode is then 124)
    bool cancelled = false; ///< extension: the caller cancelled the call
    qint64 durationMs = 0;  ///< extension: wall time of the call
    bool success() const { return exitCode == 0; }
    QJsonObject toJson() const;
};

/// One directory entry (spec: FileInfo, with a few extensions the workbench needs).
struct FileInfo
{
    enum class Type { File, Directory, Symlink, Other };
    QString path; ///< workspace-relative path
    bool isDir = false;
    std::optional<qint64> size;
    Type type = Type::File; ///< extension: entry type, symlinks are not followed
    qint64 mtimeMs = 0;     ///< extension: modification time, ms since the epoch
    /// Extension: the entry's identity where the backend knows it (0 = unknown). Two paths
    /// name one file when both have an inode and device and inode are equal.
    quint64 device = 0;
    quint64 inode = 0;
    bool isSameFile(const FileInfo &other) const
    {
        return inode != 0 && inode == other.inode && device == other.device;
    }
    QJsonObject toJson() const;
    /// The type of a readdir() entry's d_type (DT_REG, DT_DIR, DT_LNK; anything else: Other).
    static Type typeOfDirent(unsigned char dtype);
};

/// A folder's entries in the compact form a text listing uses: the names in one buffer, no
/// string per entry (a listing of thousands of entries is dominated by per-entry allocations).
struct DirListing
{
    struct Entry
    {
        qsizetype offset = 0; ///< of the name in `names`
        qsizetype length = 0;
        FileInfo::Type type = FileInfo::Type::File;
        std::optional<qint64> size; ///< files only, when stat'ed
        qint64 mtimeMs = 0;         ///< when stat'ed
    };
    QString folder;   ///< workspace-relative path the names are relative to; "" for the root
    QByteArray names; ///< the entries' names, UTF-8, one after the other
    std::vector<Entry> entries; ///< sorted by name, in QString order
    bool ascii = true;          ///< every name is ASCII (a name is then its own Latin-1 form)

    qsizetype size() const { return qsizetype(entries.size()); }
    QByteArrayView name(const Entry &e) const { return {names.constData() + e.offset, e.length}; }
    /// The workspace-relative path of an entry: `folder/name`.
    QString path(const Entry &e) const;
    FileInfo info(const Entry &e) const;
    /// From full FileInfo entries (sorted); names become their paths relative to `folder`.
    static DirListing fromInfos(const QString &folder, const QList<FileInfo> &infos);
};

/// Result of one file moved between host and workspace (spec: FileTransferResult).
struct FileTransferResult
{
    QString path;
    std::optional<QByteArray> content;
    std::optional<QString> error;
    bool success() const { return !error.has_value(); }
};

/// Summary of seeding a workspace from a host folder (spec: WorkspaceSeedResult).
struct WorkspaceSeedResult
{
    int filesSeeded = 0;
    qint64 bytesSeeded = 0;
    QStringList skippedPaths; ///< excluded paths, symlinks and special files (not followed)
    QStringList errors;
    bool success() const { return errors.isEmpty(); }
    QJsonObject toJson() const;
};

/// Summary of syncing workspace artifacts back to the host (spec: WorkspaceSyncResult).
/// The extension lists name every path of each class of the three-way flush (base = what was
/// seeded or last flushed, ours = the workspace, theirs = the host); unchanged files are not
/// listed.
struct WorkspaceSyncResult
{
    int filesSynced = 0;
    qint64 bytesSynced = 0;
    QStringList errors;
    QStringList skippedPaths; ///< extension: symlinks and special files not synced
    /// extension: both sides changed (or, with no base, differ); the host file is kept and the
    /// sandbox version written beside it, under the name in conflictFiles.
    QStringList conflicts;
    /// extension: conflict path → host-relative name of the file holding the sandbox version
    /// (`<path>.sandbox-conflict`, or `-2`, `-3`… when an earlier one differs).
    QMap<QString, QString> conflictFiles;
    QStringList added;       ///< extension: written, new on the host
    QStringList updated;     ///< extension: written over a host file unchanged since the base
    QStringList keptHost;    ///< extension: changed on the host only; the host file stays
    QStringList hostDeleted; ///< extension: deleted on the host, unchanged here; stays deleted
    /// extension: deleted in the sandbox but still on the host; the host file is kept (a
    /// flush never deletes host files).
    QStringList sandboxDeleted;
    bool success() const { return errors.isEmpty(); }
    QJsonObject toJson() const;
};

/// Suffix of the file a flush writes beside a conflicting host file.
inline QString conflictSuffix()
{
    return QStringLiteral(".sandbox-conflict");
}

/// Forward-compatible handle (spec: SandboxRef).
struct SandboxRef
{
    QString workspaceId;
    QString backendType;
    std::optional<QString> managerId;
};

/// What a flush does with a host file that differs from the workspace's when there is no
/// base at all (nothing was seeded from or flushed to that folder by this workspace).
enum class NoBaseConflict {
    KeepBoth,  ///< keep the host file, write the sandbox version beside it (a conflict)
    Overwrite, ///< replace the host file with the sandbox version
};

/// "keep-both" / "overwrite" (command line, scripts); ValueError for anything else.
NoBaseConflict noBaseConflictFromString(const QString &name);
QString noBaseConflictName(NoBaseConflict policy);

// The spec's constants.
inline const QStringList DEFAULT_SANDBOX_SEED_EXCLUDES = {
    QStringLiteral(".git"),
    QStringLiteral("node_modules"),
    QStringLiteral("__pycache__"),
    QStringLiteral(".venv"),
    QStringLiteral(".env"),
    QStringLiteral("*.pem"),
    QStringLiteral("credentials.json"),
    QStringLiteral("secrets/"),
};
inline const QStringList DEFAULT_SANDBOX_SYNC_INCLUDE = {
    QStringLiteral("src/**"), QStringLiteral("tests/**"), QStringLiteral("*.md"),
    QStringLiteral("*.py"),   QStringLiteral("*.json"),   QStringLiteral("*.yaml"),
    QStringLiteral("*.yml"),  QStringLiteral("dist/**"),  QStringLiteral("build/**"),
};
/// The WorkspaceSyncPolicy field default: `.git, node_modules, __pycache__, .venv`.
inline const QStringList DEFAULT_WORKSPACE_POLICY_EXCLUDES = {
    QStringLiteral(".git"),
    QStringLiteral("node_modules"),
    QStringLiteral("__pycache__"),
    QStringLiteral(".venv"),
};

/// Include/exclude globs for seeding and artifact sync (spec: WorkspaceSyncPolicy).
struct WorkspaceSyncPolicy
{
    /// Skipped when seeding (and syncing); the spec's field default.
    QStringList excludePatterns = DEFAULT_WORKSPACE_POLICY_EXCLUDES;
    std::optional<QStringList> syncIncludePatterns; ///< copied back on flush; none = default
    /// extension: the flush rule where there is no base (see NoBaseConflict).
    NoBaseConflict noBaseConflict = NoBaseConflict::KeepBoth;
};

inline const QStringList HOST_EXECUTION_TOOL_NAMES = {
    QStringLiteral("shell"),      QStringLiteral("python_repl"), QStringLiteral("file_read"),
    QStringLiteral("file_write"), QStringLiteral("environment"),
};
inline const QStringList SANDBOX_OFFLOAD_TOOL_NAMES = {
    QStringLiteral("execute"),
    QStringLiteral("read_file"),
    QStringLiteral("write_file"),
    QStringLiteral("list_dir"),
};

/// Seed excludes = DEFAULT_SANDBOX_SEED_EXCLUDES, sync includes = DEFAULT_SANDBOX_SYNC_INCLUDE.
WorkspaceSyncPolicy defaultSandboxSyncPolicy();

/// `graph-{run_id}`
QString workspaceIdForRun(const QString &runId);
/// `context_id`, or `{context_id}:shared-ws` when shared.
QString workspaceIdForContext(const QString &contextId, bool shared = false);

} // namespace elsai

Q_DECLARE_METATYPE(elsai::ExecuteResult)
Q_DECLARE_METATYPE(elsai::FileInfo)
Q_DECLARE_METATYPE(elsai::WorkspaceSeedResult)
Q_DECLARE_METATYPE(elsai::WorkspaceSyncResult)
