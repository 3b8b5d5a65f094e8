#include "agentcorebackend.h"

#include "agentcoreinternal.h"
#include "errors.h"
#include "glob.h"
#include "hostfiles.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>

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

// Why a host path cannot be written by a flush (a symlink or a non-folder on the way), or empty.
QString hostPathProblem(const QString &root, const QString &relPath)
{
    const QStringList parts = relPath.split(QLatin1Char('/'));
    QString path = root;
    for (int i = 0; i < parts.size(); ++i) {
        path += QLatin1Char('/') + parts.at(i);
        const QFileInfo info(path);
        const bool last = i == parts.size() - 1;
        if (info.isSymLink())
            return QStringLiteral("host path '%1' is a symlink; not written").arg(path);
        if (!info.exists())
            return {};
        if (!last && !info.isDir())
            return QStringLiteral("host path '%1' is not a folder").arg(path);
        if (last && !info.isFile())
            return QStringLiteral("host path '%1' is not a regular file").arg(path);
    }
    return {};
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

struct AgentCoreSandboxBackend::Snapshot
{
    SyncPlan plan;
    QHash<QString, QByteArray> contents; ///< workspace content of Add/Update/Conflict entries
};

AgentCoreSandboxBackend::Snapshot
AgentCoreSandboxBackend::snapshot(const QString &root, const WorkspaceSyncPolicy &policy)
{
    Snapshot snap;
    snap.plan.destRoot = root;
    const GlobSet includes(policy.syncIncludePatterns.value_or(DEFAULT_SANDBOX_SYNC_INCLUDE));
    const GlobSet excludes(policy.excludePatterns);

    // One call lists every non-folder with its type and size, NUL-separated (any name works).
    const ScriptOutcome listing =
        runScript(QStringLiteral("find . -mindepth 1 ! -type d -printf '%y %s %P\\0'"),
                  m_options.requestTimeoutMs);
    if (listing.exitCode != 0)
        snap.plan.errors.append(QStringLiteral("listing the AgentCore workspace failed: %1")
                                    .arg(QString::fromUtf8(listing.err).trimmed()));
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
        SyncPlanEntry entry;
        entry.path = path;
        entry.size = fields.at(1).toLongLong();
        if (fields.at(0) == "l") {
            entry.action = SyncPlanEntry::Action::SkippedSymlink;
            snap.plan.entries.append(entry);
        } else if (fields.at(0) != "f") {
            entry.action = SyncPlanEntry::Action::SkippedSpecial;
            snap.plan.entries.append(entry);
        } else {
            regular.append(path);
            sizes.insert(path, entry.size);
        }
    }
    std::sort(regular.begin(), regular.end());

    QHash<QString, QByteArray> contents;
    QStringList batch;
    qint64 batchBytes = 0;
    for (const QString &path : std::as_const(regular)) {
        if (!batch.isEmpty() &&
            (batchBytes + sizes.value(path) > BATCH_BYTES || batch.size() >= BATCH_FILES)) {
            contents.insert(readBatch(batch, &snap.plan.errors));
            batch.clear();
            batchBytes = 0;
        }
        batch.append(path);
        batchBytes += sizes.value(path);
    }
    contents.insert(readBatch(batch, &snap.plan.errors));

    const bool haveManifest = m_manifestRoot == root;
    for (const QString &path : std::as_const(regular)) {
        if (!contents.contains(path))
            continue; // already an error
        const QByteArray &data = contents[path];
        SyncPlanEntry entry;
        entry.path = path;
        entry.size = data.size();
        const QString problem = hostPathProblem(root, path);
        if (!problem.isEmpty()) {
            snap.plan.errors.append(problem);
            continue;
        }
        const QString hostPath = root + QLatin1Char('/') + path;
        if (!QFileInfo::exists(hostPath)) {
            entry.action = SyncPlanEntry::Action::Add;
        } else {
            QByteArray hostData;
            try {
                hostData = readHostFile(hostPath);
            } catch (const SandboxError &e) {
                snap.plan.errors.append(e.message());
                continue;
            }
            const auto record = m_manifest.constFind(path);
            if (hostData == data)
                entry.action = SyncPlanEntry::Action::Unchanged;
            else if (!haveManifest || record == m_manifest.constEnd())
                entry.action = SyncPlanEntry::Action::Conflict;
            else if (hostStamp(hostPath) == record->host)
                entry.action = SyncPlanEntry::Action::Update;
            else if (sha256(data) == record->sha256)
                entry.action = SyncPlanEntry::Action::KeepHost;
            else
                entry.action = SyncPlanEntry::Action::Conflict;
        }
        snap.plan.entries.append(entry);
        snap.contents.insert(path, data);
    }
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
    WorkspaceSyncResult result;
    result.errors = snap.plan.errors;
    const bool recordWrites = m_manifestRoot.isEmpty() || m_manifestRoot == root;
    if (recordWrites && m_manifestRoot.isEmpty())
        m_manifestRoot = root;
    int done = 0;
    const int total = int(snap.plan.entries.size());
    for (const SyncPlanEntry &entry : snap.plan.entries) {
        const QString hostPath = root + QLatin1Char('/') + entry.path;
        const QByteArray data = snap.contents.value(entry.path);
        try {
            switch (entry.action) {
            case SyncPlanEntry::Action::Add:
            case SyncPlanEntry::Action::Update:
                writeHostFileAtomic(hostPath, data);
                ++result.filesSynced;
                result.bytesSynced += data.size();
                if (recordWrites)
                    m_manifest.insert(entry.path, {hostStamp(hostPath), sha256(data)});
                break;
            case SyncPlanEntry::Action::Conflict:
                writeHostFileAtomic(hostPath + conflictSuffix(), data);
                result.conflicts.append(entry.path);
                result.errors.append(QStringLiteral("conflict: '%1' changed on the host and in "
                                                    "the sandbox; the host file was kept and the "
                                                    "sandbox version written to '%1%2'")
                                         .arg(entry.path, conflictSuffix()));
                break;
            case SyncPlanEntry::Action::SkippedSymlink:
            case SyncPlanEntry::Action::SkippedSpecial:
                result.skippedPaths.append(entry.path);
                break;
            case SyncPlanEntry::Action::Unchanged:
            case SyncPlanEntry::Action::KeepHost:
                break;
            }
        } catch (const SandboxError &e) {
            result.errors.append(e.message());
        }
        if (progress)
            progress(++done, total);
    }
    return result;
}

} // namespace elsai::aws
