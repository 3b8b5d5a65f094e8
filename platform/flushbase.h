// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "treecopy.h"

#include <QHash>
#include <QString>

#include <optional>

namespace elsai {

// The base of a three-way flush (what was seeded from, or last flushed to, each host folder)
// kept with a workspace folder, so a flush after the workbench restarts still knows it.
//
// It lives BESIDE the workspace folder, never in it: `<parent>/.<name>.elsai-flush-base`. A
// seed, a flush or a listing of the workspace never sees it, and a bwrap agent (whose only
// writable bind is the workspace) cannot reach it to forge a base. A local-backend agent runs
// as the user and can (that backend isolates nothing). The file names the workspace folder's
// device and inode: a base left by a deleted folder is not taken for a new one of that name.

/// Every base of one workspace, by clean absolute host folder.
struct FlushBases
{
    QHash<QString, SeedManifest> manifests;
    QString seedRoot; ///< host folder of the last seed
};

/// The base file of the workspace folder `workspaceRoot` (empty for "/" or an empty path).
QString flushBasePath(const QString &workspaceRoot);

/// Writes the bases of `workspaceRoot` atomically (temp + fsync + rename + folder fsync).
/// Throws the OSError subclasses of errors.h.
void saveFlushBases(const QString &workspaceRoot, const FlushBases &bases);

/// Removes the base files beside `workspaceRoot` (in its parent folder) whose workspace folder
/// no longer exists: they can never be used again, and throwaway workspaces would otherwise
/// leave one each. Also removes the temp files a crash left while this workspace's own base
/// was being written (nothing else of the parent folder is touched). Best effort; returns how
/// many were removed.
int removeOrphanFlushBases(const QString &workspaceRoot);

/// Reads them back: none when there is no base file, when it belongs to another folder of that
/// name, or when it is malformed (then `*error` says why; nothing of it is used).
std::optional<FlushBases> loadFlushBases(const QString &workspaceRoot, QString *error = nullptr);

/// The bases of a REMOTE workspace (SSH, Daytona), kept on the host: the workspace lives on
/// another machine, and the base must not be where the sandbox's commands can rewrite it.
/// One file per backend id in remoteFlushBaseFolder(), named by a hash of the id; it names
/// the id and `identity` (the remote workspace folder's device:inode as the remote reports
/// it), so a base is never taken for a recreated workspace of the same id. The workspace
/// stamps are the REMOTE ones.
///
/// The folder: $ELSAI_FLUSH_BASE_DIR, else `<XDG data home>/elsai/flush-bases` (0700).
QString remoteFlushBaseFolder();
QString remoteFlushBasePath(const QString &backendId);
void saveRemoteFlushBases(const QString &backendId, const QByteArray &identity,
                          const FlushBases &bases);
std::optional<FlushBases> loadRemoteFlushBases(const QString &backendId, const QByteArray &identity,
                                               QString *error = nullptr);

} // namespace elsai
