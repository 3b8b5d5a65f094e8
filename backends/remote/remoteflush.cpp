// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "remoteflush.h"

#include "errors.h"
#include "flushbase.h"
#include "glob.h"
#include "workspacefs.h"

#include <QDir>
#include <QTemporaryDir>

#include <memory>

namespace elsai::remote {

struct RemoteFlush::Staged
{
    std::unique_ptr<QTemporaryDir> dir;
    std::unique_ptr<WorkspaceFs> fs; ///< the fetched files, what the planner compares
    QHash<QString, FindRecord> listing;
    SyncPlan plan;
};

QString RemoteFlush::identify(const QString &backendId, const QByteArray &identity)
{
    QMutexLocker lock(&m_mutex);
    m_backendId = backendId;
    m_identity = identity;
    if (!m_manifests.isEmpty() || identity.isEmpty())
        return {};
    QString error;
    if (auto bases = loadRemoteFlushBases(m_backendId, identity, &error)) {
        m_manifests = std::move(bases->manifests);
        m_seedRoot = bases->seedRoot;
    }
    return error;
}

QString RemoteFlush::recordSeed(const QString &root, SeedManifest manifest)
{
    QMutexLocker lock(&m_mutex);
    m_manifests.insert(root, std::move(manifest));
    m_seedRoot = root;
    return save();
}

std::optional<SeedManifest> RemoteFlush::seedManifest() const
{
    QMutexLocker lock(&m_mutex);
    return m_manifests.value(m_seedRoot);
}

RemoteFlush::Staged RemoteFlush::stage(const QString &root, const WorkspaceSyncPolicy &policy,
                                       const SeedManifest *base, const Transport &transport) const
{
    Staged st;
    const QString parent =
        transport.scratchParent.isEmpty() ? QDir::tempPath() : transport.scratchParent;
    st.dir = std::make_unique<QTemporaryDir>(parent + QStringLiteral("/elsai-flush-XXXXXX"));
    if (!st.dir->isValid())
        throw OSError(QStringLiteral("cannot create a local staging folder for the flush under %1")
                          .arg(parent));
    const QString files = st.dir->path() + QStringLiteral("/files");
    st.fs = std::make_unique<WorkspaceFs>(files);
    st.listing = transport.list();

    const GlobSet includes(policy.syncIncludePatterns.value_or(DEFAULT_SANDBOX_SYNC_INCLUDE));
    const GlobSet excludes(policy.excludePatterns);
    const RemoteSyncSelection selection = selectRemoteSync(st.listing, includes, excludes, base);
    QStringList errors;
    if (!selection.fetch.isEmpty())
        errors = transport.fetch(selection.fetch, st.listing, st.dir->path(), files);
    st.plan = planSyncItems(selection.items, *st.fs, root, includes, excludes, base,
                            policy.noBaseConflict);
    st.plan.errors = errors + st.plan.errors;
    return st;
}

SyncPlan RemoteFlush::planSync(const QString &dest, const WorkspaceSyncPolicy &policy,
                               const Transport &transport)
{
    const QString root = QDir(dest).absolutePath();
    QMutexLocker lock(&m_mutex);
    const auto it = m_manifests.constFind(root);
    return stage(root, policy, it == m_manifests.constEnd() ? nullptr : &*it, transport).plan;
}

WorkspaceSyncResult RemoteFlush::syncArtifacts(const QString &dest,
                                               const WorkspaceSyncPolicy &policy,
                                               const Transport &transport,
                                               const std::function<void(int, int)> &progress)
{
    const QString root = QDir(dest).absolutePath();
    QMutexLocker lock(&m_mutex); // one flush at a time: it moves the base forward
    const auto known = m_manifests.constFind(root);
    const SeedManifest *base = known == m_manifests.constEnd() ? nullptr : &*known;
    const Staged st = stage(root, policy, base, transport);
    // The executor records against the staged copies; the base keeps the remote stamps.
    SeedManifest staged = base ? *base : SeedManifest{root, {}};
    WorkspaceSyncResult result = executeSync(st.plan, *st.fs, &staged, progress);
    SeedManifest next = base ? *base : SeedManifest{root, {}};
    if (!recordRemoteSync(next, st.plan, result, staged, st.listing))
        return result;
    m_manifests.insert(root, std::move(next));
    if (const QString error = save(); !error.isEmpty())
        result.errors << error;
    return result;
}

QString RemoteFlush::save()
{
    try {
        if (m_identity.isEmpty())
            throw OSError(QStringLiteral("the workspace folder could not be identified"));
        saveRemoteFlushBases(m_backendId, m_identity, {m_manifests, m_seedRoot});
    } catch (const SandboxError &e) {
        return QStringLiteral("the flush base was not saved (%1): a flush after a restart will "
                              "treat every file as having no base")
            .arg(e.message());
    }
    return {};
}

} // namespace elsai::remote
