// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "treecopy.h"
#include "types.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <memory>

class QTemporaryDir;

namespace elsai::remote {

/// A seed that travels as one tar (SSH's archive-in, a container's archive endpoint): the
/// planner's entries of the host folder packed by the host's GNU tar, folders before their
/// files (so a link standing in the workspace where a folder goes is replaced, not followed),
/// setuid/setgid bits cleared as in local seeding.
class SeedArchive
{
public:
    /// Plans the seed of `source` (planSeed with `excludes`) and packs it in a private folder
    /// under `workParent`; `tarArgs` are added to tar's (e.g. the owner of the files).
    SeedArchive(const QString &source, const QStringList &excludes, const QString &workParent,
                const QStringList &tarArgs = {});
    ~SeedArchive();

    const QString &root() const { return m_root; }
    /// The tar to send; empty when nothing is to be copied.
    const QString &tarFile() const { return m_tar; }
    /// A file beside the tar for the caller's use (e.g. the answer of archive-in).
    QString scratchFile(const QString &name) const;
    int fileCount() const { return m_total; }

    /// The result once the workspace's files are listed after unpacking (`remote`: relative
    /// path → the workspace's stamp): counts, skipped paths, the planner's and tar's errors,
    /// and the manifest (host and workspace stamps of every file that arrived).
    WorkspaceSeedResult finish(const QHash<QString, FileStamp> &remote, SeedManifest *manifest,
                               const QString &where) const;

private:
    QString m_root;
    SeedPlan m_plan;
    QHash<QString, FileStamp> m_hostStamps;
    std::unique_ptr<QTemporaryDir> m_work;
    QString m_tar;
    QStringList m_errors;
    int m_total = 0;
};

} // namespace elsai::remote
