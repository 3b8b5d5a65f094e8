// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "treecopy.h"
#include "types.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace elsai {

class ExecutionBackend;

/// One file added, modified or deleted in a workspace since its seed.
struct WorkspaceChange
{
    enum class Kind { Added, Modified, Deleted };
    QString path; ///< workspace-relative
    Kind kind = Kind::Added;
    FileInfo::Type type = FileInfo::Type::File; ///< of the workspace entry (Deleted: File)
    qint64 size = -1;                           ///< in the workspace; -1 when deleted
    qint64 baseSize = -1;                       ///< as seeded; -1 when added
    qint64 mtimeMs = 0;                         ///< in the workspace; 0 when deleted
    bool operator==(const WorkspaceChange &) const = default;
};

/// What "since the seed" is measured against, for a backend.
enum class ChangeBase {
    Seed,    ///< the backend's seed record (SeedManifest), updated by flushes into that folder
    Empty,   ///< nothing was seeded: the base is the empty folder, every file is new
    Missing, ///< the sandbox was seeded but its record is gone (lost base file): as Empty
    Unknown, ///< this backend keeps no seed record: nothing can be told
};

struct ChangeScanLimits
{
    int maxEntries = 200'000; ///< entries walked (files and folders) before stopping
    int maxChanges = 20'000;  ///< changes kept
};

/// The changes of one workspace, sorted by path.
struct ChangeScan
{
    QList<WorkspaceChange> changes;
    ChangeBase base = ChangeBase::Unknown;
    QString baseRoot;       ///< the host folder the base was seeded from (Seed)
    int entriesWalked = 0;  ///< files and folders listed
    bool truncated = false; ///< a limit was reached: the list is partial, no deletions
    QStringList errors;     ///< folders that could not be listed (their files are skipped)
};

/// True when a workspace entry differs from its seed record (size, or mtime to the
/// millisecond: listings carry milliseconds). The one test of "changed since the seed".
bool stampChanged(const FileStamp &base, const FileInfo &now);

/// Walks the whole workspace (one listDir per folder, symlinks not followed) and compares it
/// with the backend's seed record: files not in it are Added (symlinks and special files
/// too: a seed copies regular files only), files whose stamp differs are Modified, recorded
/// files missing from the walk are Deleted (except beneath a folder that could not be listed,
/// and not at all when the walk was cut short). Blocking: call it off the GUI thread.
/// `seeded`: the sandbox has a seed folder (tells Missing from Empty).
ChangeScan scanWorkspaceChanges(ExecutionBackend &backend, bool seeded,
                                const ChangeScanLimits &limits = {});

} // namespace elsai
