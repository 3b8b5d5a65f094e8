// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "treecopy.h"
#include "types.h"

#include <QByteArray>
#include <QHash>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace elsai::remote {

/// The flush bases of one REMOTE workspace (SSH, Daytona, containers) and the flush that uses
/// them, whatever the transport. The base of each host folder keeps the REMOTE stamps (what
/// the next listing is compared with) and is saved on the host (saveRemoteFlushBases), named
/// by the backend id and the workspace folder's identity, so it survives a restart.
///
/// A flush feeds the core planner (planSyncItems: the one decision table) with the remote
/// listing, compared with the base's workspace side. Only the selected files whose remote copy
/// changed since the base (or that have none) are fetched, into a private staging folder the
/// planner compares and the core executor writes from exactly as for a local workspace (atomic
/// writes, conflict files, symlink refusals, re-check before writing). One flush at a time:
/// it moves the base forward. Thread-safe.
class RemoteFlush
{
public:
    /// What a backend supplies: its workspace listing by relative path, and how the bytes of
    /// some files of it arrive.
    struct Transport
    {
        std::function<QHash<QString, FindRecord>()> list;
        /// Fetches the workspace-relative `paths` (sorted; all in `listing`) into the empty
        /// folder `files`, using `scratch` (private, beside it) for its own files. Returns
        /// the errors to report: a file that did not arrive is planned as missing.
        std::function<QStringList(const QStringList &paths,
                                  const QHash<QString, FindRecord> &listing, const QString &scratch,
                                  const QString &files)>
            fetch;
        /// Where the staging folder goes (a private folder of the backend); the system's
        /// temporary folder when empty.
        QString scratchParent;
    };

    /// Names the workspace: the backend's id and its folder (device:inode, a volume name…).
    /// The first time it is known, adopts the bases saved for it. Returns a warning to log (a
    /// saved base that could not be read: flushes then apply the safe no-base rule), or empty.
    /// Until then, bases are kept but cannot be saved.
    QString identify(const QString &backendId, const QByteArray &identity);

    /// Records what a seed of `root` put in the workspace and saves the bases. Returns the
    /// error line for the seed's result when they could not be saved, or empty.
    QString recordSeed(const QString &root, SeedManifest manifest);
    /// The base of the last seed (Sandbox's seed manifest).
    std::optional<SeedManifest> seedManifest() const;

    SyncPlan planSync(const QString &dest, const WorkspaceSyncPolicy &policy,
                      const Transport &transport);
    WorkspaceSyncResult syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                                      const Transport &transport,
                                      const std::function<void(int, int)> &progress);

private:
    struct Staged;
    Staged stage(const QString &root, const WorkspaceSyncPolicy &policy, const SeedManifest *base,
                 const Transport &transport) const;
    QString save(); ///< m_mutex held

    mutable QMutex m_mutex;
    QString m_backendId;
    QHash<QString, SeedManifest> m_manifests; ///< by absolute host folder
    QString m_seedRoot;
    QByteArray m_identity;
};

} // namespace elsai::remote
