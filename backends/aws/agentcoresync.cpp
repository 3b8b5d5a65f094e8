// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentcorebackend.h"

#include "agentcoreinternal.h"
#include "errors.h"
#include "glob.h"
#include "hostfiles.h"
#include "workspacefs.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <sys/stat.h>

namespace elsai::aws {

using namespace agentcore;

namespace {

FileStamp hostStamp(const QString &path)
{
    struct stat st;
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        return {};
    return {qint64(st.st_size), qint64(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

QByteArray sha256(const QByteArray &data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256);
}

} // namespace

// ---- backend: seeding and flush ------------------------------------------------------------

WorkspaceSeedResult
AgentCoreSandboxBackend::seedWorkspace(const QString &source, const QStringList &excludes,
                                       const std::function<void(int, int)> &progress)
{
    requireSession();
    const QString root = QDir(source).absolutePath();
    const SeedPlan plan = planSeed(root, GlobSet(excludes));
    WorkspaceSeedResult result;
    result.errors = plan.errors;
    QStringList dirs;
    QList<SeedPlanEntry> files;
    for (const SeedPlanEntry &e : plan.entries) {
        if (e.action != SeedPlanEntry::Action::Copy)
            result.skippedPaths.append(e.path);
        else if (e.isDir)
            dirs.append(e.path);
        else
            files.append(e);
    }
    // Folders first (empty ones would not appear otherwise), many per call.
    for (qsizetype i = 0; i < dirs.size(); i += 200) {
        QString script = QStringLiteral("mkdir -p --");
        for (const QString &d : dirs.mid(i, 200))
            script += QLatin1Char(' ') + shellQuote(d);
        const ScriptOutcome o = runScript(script, m_options.requestTimeoutMs);
        if (o.exitCode != 0)
            result.errors.append(QStringLiteral("cannot create folders in the AgentCore "
                                                "workspace: %1")
                                     .arg(QString::fromUtf8(o.err).trimmed()));
    }

    QHash<QString, ManifestEntry> manifest;
    QList<QPair<QString, QByteArray>> batch;
    QList<FileStamp> stamps;
    qint64 batchBytes = 0;
    int done = 0;
    const int total = int(files.size());
    auto flush = [&] {
        if (batch.isEmpty())
            return;
        QStringList paths;
        for (const auto &entry : std::as_const(batch))
            paths.append(entry.first);
        const QStringList escaping = escapingPaths(paths);
        for (qsizetype i = batch.size() - 1; i >= 0; --i) {
            if (escaping.contains(batch.at(i).first)) {
                result.errors.append(escapeMessage(batch.at(i).first));
                batch.removeAt(i);
                stamps.removeAt(i);
                ++done;
            }
        }
        const QList<FileTransferResult> results =
            batch.isEmpty() ? QList<FileTransferResult>() : writeBatch(batch);
        for (int i = 0; i < results.size(); ++i) {
            const auto &[path, data] = batch.at(i);
            if (!results.at(i).success()) {
                result.errors.append(*results.at(i).error);
                continue;
            }
            ++result.filesSeeded;
            result.bytesSeeded += data.size();
            manifest.insert(path, {stamps.at(i), sha256(data)});
        }
        done += int(batch.size());
        if (progress)
            progress(done, total);
        batch.clear();
        stamps.clear();
        batchBytes = 0;
    };
    for (const SeedPlanEntry &e : std::as_const(files)) {
        const QString hostPath = root + QLatin1Char('/') + e.path;
        QByteArray data;
        try {
            data = readHostFile(hostPath);
        } catch (const SandboxError &err) {
            result.errors.append(err.message());
            ++done;
            continue;
        }
        if (batchBytes + data.size() > BATCH_BYTES || batch.size() >= BATCH_FILES)
            flush();
        stamps.append(hostStamp(hostPath));
        batch.append({e.path, data});
        batchBytes += data.size();
    }
    flush();

    QMutexLocker lock(&m_manifestMutex);
    m_manifestRoot = root;
    m_manifest = std::move(manifest);
    return result;
}

/// A flush of AgentCore runs the core planner and executor (the one decision table): the
/// selected files are downloaded into a private local staging folder, "changed since the base"
/// is the content hash against the record, and the host side is compared and written exactly
/// as for a local workspace (atomic writes beneath the destination, conflict files never
/// replaced, re-check before writing).
struct AgentCoreSandboxBackend::Snapshot
{
    std::unique_ptr<QTemporaryDir> dir;
    std::unique_ptr<WorkspaceFs> fs; ///< the staged copies
    SyncPlan plan;
    QHash<QString, QByteArray> hashes; ///< sha256 of each staged file
};

AgentCoreSandboxBackend::Snapshot
AgentCoreSandboxBackend::snapshot(const QString &root, const WorkspaceSyncPolicy &policy)
{
    Snapshot snap;
    snap.dir = std::make_unique<QTemporaryDir>(QDir::tempPath() +
                                               QStringLiteral("/elsai-agentcore-flush-XXXXXX"));
    if (!snap.dir->isValid())
        throw OSError(QStringLiteral("cannot create a local staging folder for the flush under "
                                     "%1")
                          .arg(QDir::tempPath()));
    snap.fs = std::make_unique<WorkspaceFs>(snap.dir->path());
    const GlobSet includes(policy.syncIncludePatterns.value_or(DEFAULT_SANDBOX_SYNC_INCLUDE));
    const GlobSet excludes(policy.excludePatterns);
    QStringList errors;

    // One call lists every non-folder with its type and size, NUL-separated (any name works).
    const ScriptOutcome listing =
        runScript(QStringLiteral("find . -mindepth 1 ! -type d -printf '%y %s %P\\0'"),
                  m_options.requestTimeoutMs);
    if (listing.exitCode != 0)
        errors.append(QStringLiteral("listing the AgentCore workspace failed: %1")
                          .arg(QString::fromUtf8(listing.err).trimmed()));
    QList<SyncItem> items;
    QStringList regular;
    QHash<QString, qint64> sizes;
    for (const QByteArray &record : listing.out.split('\0')) {
        const QList<QByteArray> fields = record.split(' ');
        if (fields.size() < 3)
            continue;
        const QString path =
            QString::fromUtf8(record.mid(fields.at(0).size() + fields.at(1).size() + 2));
        if (!includes.matchesPathOrParent(path, false) || excludes.matchesPathOrParent(path, false))
            continue;
        if (fields.at(0) == "f") {
            regular.append(path);
            sizes.insert(path, fields.at(1).toLongLong());
        } else {
            items.append({path,
                          fields.at(0) == "l" ? SyncItem::Kind::Symlink : SyncItem::Kind::Special,
                          0,
                          {}});
        }
    }
    std::sort(regular.begin(), regular.end());

    // The base, when this destination has one; "changed" comes from the content hash.
    const bool haveBase = !m_manifestRoot.isEmpty() && m_manifestRoot == root;
    SeedManifest base{root, {}};
    if (haveBase) {
        for (auto it = m_manifest.cbegin(); it != m_manifest.cend(); ++it)
            base.files.insert(it.key(), {it->host, {}});
    }
    auto stageBatch = [&](const QStringList &batch) {
        const QHash<QString, QByteArray> got = readBatch(batch, &errors);
        for (const QString &path : batch) {
            const auto data = got.constFind(path);
            if (data == got.cend()) {
                base.files.remove(path); // an error already; not a deletion either
                continue;
            }
            try {
                snap.fs->writeFile(path, *data);
            } catch (const SandboxError &e) {
                errors.append(
                    QStringLiteral("cannot stage '%1' for the flush: %2").arg(path, e.message()));
                base.files.remove(path);
                continue;
            }
            const QByteArray hash = sha256(*data);
            const auto rec = m_manifest.constFind(path);
            items.append({path,
                          SyncItem::Kind::File,
                          data->size(),
                          {},
                          haveBase && rec != m_manifest.cend()
                              ? std::optional<bool>(rec->sha256 != hash)
                              : std::nullopt});
            snap.hashes.insert(path, hash);
        }
    };
    QStringList batch;
    qint64 batchBytes = 0;
    for (const QString &path : std::as_const(regular)) {
        if (!batch.isEmpty() &&
            (batchBytes + sizes.value(path) > BATCH_BYTES || batch.size() >= BATCH_FILES)) {
            stageBatch(batch);
            batch.clear();
            batchBytes = 0;
        }
        batch.append(path);
        batchBytes += sizes.value(path);
    }
    if (!batch.isEmpty())
        stageBatch(batch);

    snap.plan = planSyncItems(items, *snap.fs, root, includes, excludes, haveBase ? &base : nullptr,
                              policy.noBaseConflict);
    snap.plan.errors = errors + snap.plan.errors;
    return snap;
}

SyncPlan AgentCoreSandboxBackend::planSync(const QString &dest, const WorkspaceSyncPolicy &policy)
{
    requireSession();
    QMutexLocker lock(&m_manifestMutex);
    return snapshot(QDir(dest).absolutePath(), policy).plan;
}

WorkspaceSyncResult
AgentCoreSandboxBackend::syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                                       const std::function<void(int, int)> &progress)
{
    requireSession();
    const QString root = QDir(dest).absolutePath();
    QMutexLocker lock(&m_manifestMutex);
    const Snapshot snap = snapshot(root, policy);
    // The executor records the host stamps it wrote; the record keeps them with the hashes.
    SeedManifest written{root, {}};
    if (m_manifestRoot == root) {
        for (auto it = m_manifest.cbegin(); it != m_manifest.cend(); ++it)
            written.files.insert(it.key(), {it->host, {}});
    }
    WorkspaceSyncResult result = executeSync(snap.plan, *snap.fs, &written, progress);
    const bool recordWrites = m_manifestRoot.isEmpty() || m_manifestRoot == root;
    // the base moves for what was written and for what converged (same bytes on both sides)
    const QStringList moved = result.added + result.updated + convergedPaths(snap.plan);
    if (recordWrites && !moved.isEmpty()) {
        m_manifestRoot = root;
        for (const QString &path : moved)
            m_manifest.insert(path, {written.files.value(path).host, snap.hashes.value(path)});
    }
    return result;
}

} // namespace elsai::aws
