// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sandbox.h"

#include "audit.h"
#include "checkpointtools.h"
#include "errors.h"
#include "folderoverlap.h"
#include "hostfiles.h"
#include "inputchecks.h"
#include "sandboxplugin.h"
#include "workspacefs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QStringDecoder>
#include <QUuid>

#include <cmath>
#include <limits>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcSandbox, "elsai.sandbox", QtInfoMsg)

namespace elsai {

namespace {

/// Workspace ids are registry keys for the whole process (spec: SandboxStartError when
/// "another Sandbox instance already owns this workspace_id in-process"), whatever manager
/// each sandbox uses.
class ProcessClaims
{
public:
    static ProcessClaims &instance()
    {
        static ProcessClaims claims;
        return claims;
    }
    bool claim(const QString &workspaceId, const void *owner)
    {
        QMutexLocker lock(&m_mutex);
        const auto it = m_owners.constFind(workspaceId);
        if (it != m_owners.constEnd() && *it != owner)
            return false;
        m_owners.insert(workspaceId, owner);
        return true;
    }
    void release(const QString &workspaceId, const void *owner)
    {
        QMutexLocker lock(&m_mutex);
        if (m_owners.value(workspaceId) == owner)
            m_owners.remove(workspaceId);
    }

private:
    QMutex m_mutex;
    QHash<QString, const void *> m_owners;
};

} // namespace

struct Sandbox::Private
{
    QString workspaceId;
    BackendSource source;
    std::optional<double> ttl;
    Options options;
    std::shared_ptr<SandboxManager> manager;
    int closeListener = 0;
    QMutex lifecycle; // serializes start() and stop(); never held by quick getters

    mutable QMutex mutex; // guards the state below
    bool started = false;
    std::optional<QString> ownerId;
    BackendPtr backend;
    /// Weak: agents hold their sandbox (AgentConfig::sandbox), so a strong reference back
    /// would keep both alive forever.
    struct Binding
    {
        std::weak_ptr<Agent> agent;
        SandboxAttachMode mode;
        QDateTime attachedAt;
    };
    QList<Binding> agents;
    std::shared_ptr<TimeTravel> timeTravel;
};

std::shared_ptr<Sandbox> Sandbox::create(const QString &workspaceId, const BackendSource &backend,
                                         std::optional<double> ttlSeconds, Options options)
{
    std::shared_ptr<Sandbox> s(new Sandbox(workspaceId, backend, ttlSeconds, std::move(options)));
    std::weak_ptr<Sandbox> weak = s;
    s->d->closeListener =
        s->d->manager->addCloseListener([weak](const QString &sessionId, const QString &reason) {
            if (const auto self = weak.lock(); self && sessionId == self->workspaceId())
                self->onSessionClosed(reason);
        });
    return s;
}

Sandbox::Sandbox(const QString &workspaceId, const BackendSource &backend,
                 std::optional<double> ttlSeconds, Options options)
    : d(std::make_unique<Private>())
{
    if (workspaceId.isEmpty())
        throw ValueError(QStringLiteral("Sandbox needs a non-empty workspace_id"));
    checkName(workspaceId, QStringLiteral("workspace_id"));
    if (backend.isNull())
        throw ValueError(
            QStringLiteral("Sandbox '%1' needs a backend instance or template").arg(workspaceId));
    if (ttlSeconds && *ttlSeconds < 0)
        throw ValueError(QStringLiteral("ttl_seconds must be >= 0, got %1").arg(*ttlSeconds));
    checkNoNul(workspaceId, QStringLiteral("workspace_id"));
    if (options.readFileMaxBytes && *options.readFileMaxBytes < 1)
        throw ValueError(QStringLiteral("read_file_max_bytes must be >= 1, got %1")
                             .arg(*options.readFileMaxBytes));
    if (options.executeSoftReturnSeconds && !(*options.executeSoftReturnSeconds >= 0 &&
                                              std::isfinite(*options.executeSoftReturnSeconds)))
        throw ValueError(QStringLiteral("execute_soft_return_seconds must be >= 0 (0: never), "
                                        "got %1")
                             .arg(*options.executeSoftReturnSeconds));
    if (options.seedFrom)
        checkNoNul(*options.seedFrom, QStringLiteral("seed_from folder"));
    if (options.syncDest)
        checkNoNul(*options.syncDest, QStringLiteral("sync_dest folder"));
    d->workspaceId = workspaceId;
    d->source = backend;
    d->ttl = ttlSeconds;
    d->options = std::move(options);
    d->manager =
        d->options.manager ? d->options.manager : std::make_shared<SandboxManager>(ttlSeconds);
    if (const BackendPtr &instance = d->source.instance())
        requireSeparateHostFolders(*instance);
}

void Sandbox::requireSeparateHostFolders(const ExecutionBackend &backend) const
{
    const QString workspace = backend.hostFolder();
    if (d->options.seedFrom)
        requireSeparateFolders(QStringLiteral("seed_from"), *d->options.seedFrom,
                               QStringLiteral("workspace folder"), workspace);
    if (d->options.syncDest)
        requireSeparateFolders(QStringLiteral("sync_dest"), *d->options.syncDest,
                               QStringLiteral("workspace folder"), workspace);
}

Sandbox::~Sandbox()
{
    d->manager->removeCloseListener(d->closeListener);
    // A sandbox dropped while started releases its claim (without sync: there is no caller to
    // report a sync result to; the local workspace folder stays on disk).
    bool started;
    {
        QMutexLocker lock(&d->mutex);
        started = d->started;
    }
    if (started) {
        ProcessClaims::instance().release(d->workspaceId, this);
        try {
            d->manager->closeSession(d->workspaceId, false);
        } catch (const SandboxError &e) {
            qCWarning(lcSandbox) << "closing workspace" << d->workspaceId
                                 << "failed:" << e.display();
        }
    }
}

const QString &Sandbox::workspaceId() const
{
    return d->workspaceId;
}

std::optional<double> Sandbox::ttlSeconds() const
{
    return d->ttl;
}

const std::shared_ptr<SandboxManager> &Sandbox::manager() const
{
    return d->manager;
}

const Sandbox::Options &Sandbox::options() const
{
    return d->options;
}

QStringList Sandbox::effectiveSeedExcludes() const
{
    QStringList out = DEFAULT_SANDBOX_SEED_EXCLUDES;
    for (const QString &p : d->options.seedExclude) {
        if (!out.contains(p))
            out.append(p);
    }
    return out;
}

WorkspaceSyncPolicy Sandbox::effectiveSyncPolicy() const
{
    WorkspaceSyncPolicy p = d->options.syncPolicy.value_or(defaultSandboxSyncPolicy());
    if (!p.syncIncludePatterns)
        p.syncIncludePatterns = DEFAULT_SANDBOX_SYNC_INCLUDE;
    return p;
}

std::optional<QString> Sandbox::effectiveSyncDest() const
{
    if (d->options.syncDest)
        return d->options.syncDest;
    return d->options.seedFrom;
}

QString Sandbox::backendTypeName() const
{
    return d->source.typeName();
}

bool Sandbox::isStarted() const
{
    QMutexLocker lock(&d->mutex);
    return d->started;
}

std::optional<QString> Sandbox::ownerId() const
{
    QMutexLocker lock(&d->mutex);
    return d->ownerId;
}

BackendPtr Sandbox::backend() const
{
    QMutexLocker lock(&d->mutex);
    return d->started ? d->backend : BackendPtr();
}

BackendPtr Sandbox::requireBackend() const
{
    if (BackendPtr b = backend())
        return b;
    throw OSError(
        QStringLiteral("sandbox '%1' is not started; call start() first").arg(d->workspaceId));
}

std::optional<WorkspaceSeedResult> Sandbox::start(const Progress &progress)
{
    QMutexLocker lifecycle(&d->lifecycle);
    if (isStarted())
        return std::nullopt;
    const QString owner = QUuid::createUuid().toString(QUuid::WithoutBraces);
    AuditRecorder audit(QStringLiteral("sandbox.start"), d->workspaceId, hostActor(),
                        {{QStringLiteral("backend"), backendTypeName()}});
    try {
        if (!ProcessClaims::instance().claim(d->workspaceId, this))
            throw SandboxStartError(
                QStringLiteral("workspace '%1' is already owned by another Sandbox instance in "
                               "this process; stop that sandbox first or choose another "
                               "workspace_id")
                    .arg(d->workspaceId));
        ManagedSandboxSession session;
        try {
            session = d->manager->claimSession(
                d->workspaceId, SandboxManager::backendFactoryForSession(d->source, d->workspaceId),
                owner);
        } catch (...) {
            ProcessClaims::instance().release(d->workspaceId, this);
            throw;
        }
        std::optional<WorkspaceSeedResult> seed;
        try {
            // A template's backend is known only now: its folder is checked before any seed.
            requireSeparateHostFolders(*session.backend);
        } catch (...) {
            d->manager->closeSession(d->workspaceId, false);
            ProcessClaims::instance().release(d->workspaceId, this);
            throw;
        }
        if (d->options.seedFrom) {
            audit.setField(QStringLiteral("seed_from"), *d->options.seedFrom);
            try {
                seed = session.backend->seedWorkspace(*d->options.seedFrom, effectiveSeedExcludes(),
                                                      progress);
            } catch (...) {
                d->manager->closeSession(d->workspaceId, false);
                ProcessClaims::instance().release(d->workspaceId, this);
                throw;
            }
            audit.setField(QStringLiteral("files_seeded"), seed->filesSeeded);
            audit.setField(QStringLiteral("bytes_seeded"), seed->bytesSeeded);
            audit.setField(QStringLiteral("skipped"), seed->skippedPaths.size());
            audit.setField(QStringLiteral("seed_errors"), seed->errors.size());
        }
        std::shared_ptr<TimeTravel> timeTravel;
        const TimeTravelOptions &tto = d->options.timeTravel;
        if (tto.checkpoints || tto.trackChanges) {
            try {
                timeTravel = std::make_shared<TimeTravel>(tto, d->workspaceId, session.backend);
                const auto pending = timeTravel->interruptedRestore();
                if (pending)
                    audit.setField(QStringLiteral("interrupted_restore"), *pending);
                // A workspace a restore left half-way is no baseline: the restore's target is.
                if (tto.checkpoints && tto.baseline && !pending) {
                    timeTravel->checkpoint(QStringLiteral("seed"),
                                           QStringLiteral("the workspace as the sandbox started"),
                                           true, true);
                }
            } catch (...) {
                d->manager->closeSession(d->workspaceId, false);
                ProcessClaims::instance().release(d->workspaceId, this);
                throw;
            }
        }
        d->manager->markPrepared(d->workspaceId, seed);
        {
            QMutexLocker lock(&d->mutex);
            d->started = true;
            d->ownerId = owner;
            d->backend = session.backend;
            d->timeTravel = timeTravel;
        }
        audit.ok();
        return seed;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

std::optional<WorkspaceSyncResult> Sandbox::stop(bool sync)
{
    QMutexLocker lifecycle(&d->lifecycle);
    if (!isStarted())
        return std::nullopt;
    const QList<AttachedAgent> agents = attachedAgents();
    for (const AttachedAgent &a : agents)
        detach(a.agent);

    AuditRecorder audit(QStringLiteral("sandbox.stop"), d->workspaceId, hostActor(),
                        {{QStringLiteral("sync"), sync}});
    std::optional<WorkspaceSyncResult> result;
    try {
        if (sync)
            result = flush();
    } catch (const SandboxError &e) {
        // The session is closed all the same: a failed flush must not leave a zombie claim.
        markStopped();
        d->manager->closeSession(d->workspaceId, false);
        audit.fail(e);
        throw;
    }
    markStopped();
    d->manager->closeSession(d->workspaceId, false);
    audit.ok();
    return result;
}

bool Sandbox::markStopped()
{
    {
        QMutexLocker lock(&d->mutex);
        if (!d->started)
            return false;
        d->started = false;
        d->ownerId.reset();
        d->backend.reset();
        d->timeTravel.reset();
    }
    ProcessClaims::instance().release(d->workspaceId, this);
    return true;
}

void Sandbox::onSessionClosed(const QString &reason)
{
    if (!markStopped())
        return;
    const QList<AttachedAgent> agents = attachedAgents();
    qCInfo(lcSandbox) << "sandbox" << d->workspaceId << "stopped:" << reason;
    for (const AttachedAgent &a : std::as_const(agents))
        detach(a.agent);
}

namespace {

/// A host operation (the window's edits, a script's) as a call of the change log: the
/// Timeline lists it with what it changed, and a restore waits for it. Nothing without time
/// travel.
struct HostCall
{
    HostCall(const std::shared_ptr<TimeTravel> &timeTravel, const QString &actor,
             const QString &tool)
        : tt(timeTravel), span(tt ? tt->beginCall(actor, tool, true) : nullptr)
    {
    }
    void ok()
    {
        if (span)
            span->changes(true);
    }
    void fail(const SandboxError &e)
    {
        if (span)
            span->setOutcome(e.specName());
    }
    std::shared_ptr<TimeTravel> tt; // outlives the span
    std::unique_ptr<TimeTravel::CallSpan> span;
};

} // namespace

QStringList Sandbox::addFiles(const QList<QPair<QString, FileSource>> &files, bool overwrite,
                              const QString &actor)
{
    AuditRecorder audit(
        QStringLiteral("sandbox.add_files"), d->workspaceId, actor,
        {{QStringLiteral("count"), files.size()}, {QStringLiteral("overwrite"), overwrite}});
    HostCall call(timeTravel(), actor, QStringLiteral("add_files"));
    try {
        const BackendPtr b = requireBackend();
        // Resolve every content first, so an unreadable host file fails before any write.
        QList<QPair<QString, QByteArray>> contents;
        for (const auto &[path, src] : files) {
            QByteArray data;
            if (const auto *t = std::get_if<QString>(&src.value))
                data = t->toUtf8();
            else if (const auto *bytes = std::get_if<QByteArray>(&src.value))
                data = *bytes;
            else
                data = readHostFile(std::get<FileSource::HostPath>(src.value).path);
            contents.append({path, data});
        }
        QStringList written;
        qint64 bytes = 0;
        for (const auto &[path, data] : std::as_const(contents)) {
            if (!overwrite) {
                bool exists = true;
                try {
                    b->stat(path);
                } catch (const FileNotFoundError &) {
                    exists = false;
                }
                if (exists)
                    continue;
            }
            b->writeFile(path, data);
            written.append(path);
            bytes += data.size();
        }
        d->manager->touch(d->workspaceId);
        audit.setField(QStringLiteral("paths"), QJsonArray::fromStringList(written));
        audit.setField(QStringLiteral("bytes"), bytes);
        call.ok();
        audit.ok();
        return written;
    } catch (const SandboxError &e) {
        call.fail(e);
        audit.fail(e);
        throw;
    }
}

QStringList Sandbox::downloadFiles(const QList<QPair<QString, QString>> &files, bool overwrite,
                                   const QString &actor)
{
    AuditRecorder audit(
        QStringLiteral("sandbox.download_files"), d->workspaceId, actor,
        {{QStringLiteral("count"), files.size()}, {QStringLiteral("overwrite"), overwrite}});
    try {
        const BackendPtr b = requireBackend();
        QStringList done;
        for (const auto &[wsPath, hostPath] : files) {
            if (hostPath.isEmpty())
                throw ValueError(QStringLiteral("download of '%1': empty host path").arg(wsPath));
            checkNoNul(hostPath, QStringLiteral("host path"));
        }
        for (const auto &[wsPath, hostPath] : files) {
            if (!overwrite && QFileInfo::exists(QFileInfo(hostPath).absoluteFilePath()))
                continue;
            try {
                writeHostFileAtomic(hostPath, b->readFile(wsPath), 0644, overwrite);
            } catch (const FileExistsError &) {
                if (overwrite)
                    throw;
                continue; // created meanwhile: kept, as any existing host file
            }
            done.append(wsPath);
        }
        d->manager->touch(d->workspaceId);
        audit.setField(QStringLiteral("paths"), QJsonArray::fromStringList(done));
        audit.ok();
        return done;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

void Sandbox::deleteFiles(const QStringList &paths, const QString &actor)
{
    AuditRecorder audit(QStringLiteral("sandbox.delete_files"), d->workspaceId, actor,
                        {{QStringLiteral("paths"), QJsonArray::fromStringList(paths)}});
    HostCall call(timeTravel(), actor, QStringLiteral("delete_files"));
    try {
        const BackendPtr b = requireBackend();
        for (const QString &p : paths)
            b->removeFile(p, true);
        d->manager->touch(d->workspaceId);
        call.ok();
        audit.ok();
    } catch (const SandboxError &e) {
        call.fail(e);
        audit.fail(e);
        throw;
    }
}

void Sandbox::writeFile(const QString &path, const QByteArray &content, const QString &actor)
{
    AuditRecorder audit(
        QStringLiteral("sandbox.write_file"), d->workspaceId, actor,
        {{QStringLiteral("path"), path}, {QStringLiteral("bytes"), content.size()}});
    HostCall call(timeTravel(), actor, QStringLiteral("write_file"));
    try {
        requireBackend()->writeFile(path, content);
        d->manager->touch(d->workspaceId);
        call.ok();
        audit.ok();
    } catch (const SandboxError &e) {
        call.fail(e);
        audit.fail(e);
        throw;
    }
}

void Sandbox::makeFolder(const QString &path, const QString &actor)
{
    AuditRecorder audit(QStringLiteral("sandbox.make_folder"), d->workspaceId, actor,
                        {{QStringLiteral("path"), path}});
    HostCall call(timeTravel(), actor, QStringLiteral("make_folder"));
    try {
        requireBackend()->makeDirs(path);
        d->manager->touch(d->workspaceId);
        call.ok();
        audit.ok();
    } catch (const SandboxError &e) {
        call.fail(e);
        audit.fail(e);
        throw;
    }
}

bool Sandbox::moveFile(const QString &src, const QString &dest, const QString &actor)
{
    AuditRecorder audit(QStringLiteral("sandbox.move_file"), d->workspaceId, actor,
                        {{QStringLiteral("src"), src}, {QStringLiteral("dest"), dest}});
    HostCall call(timeTravel(), actor, QStringLiteral("move_file"));
    try {
        const BackendPtr b = requireBackend();
        const FileInfo from = b->stat(src);
        if (from.type != FileInfo::Type::File)
            throw IsADirectoryError(
                QStringLiteral("move_file moves files only; '%1' is not a regular file").arg(src),
                EISDIR);
        // read → write → delete would delete a file moved onto itself: the same spelling, a
        // `./` one, a folder link leading back, or a hard link. The backend's own answer on
        // identity (device + inode after confined resolution) decides, not the strings.
        bool same = WorkspaceFs::normalize(src) == WorkspaceFs::normalize(dest);
        if (!same) {
            try {
                same = from.isSameFile(b->stat(dest));
            } catch (const FileNotFoundError &) {
            }
        }
        if (same) {
            audit.setField(QStringLiteral("same_file"), true);
            call.ok();
            audit.ok();
            return false;
        }
        // read → write → delete, as the spec says: the source goes only once the copy is safe.
        b->writeFile(dest, b->readFile(src));
        b->removeFile(src);
        d->manager->touch(d->workspaceId);
        call.ok();
        audit.ok();
        return true;
    } catch (const SandboxError &e) {
        call.fail(e);
        audit.fail(e);
        throw;
    }
}

QByteArray Sandbox::readFileBytes(const QString &path, const QString &actor)
{
    AuditRecorder audit(QStringLiteral("sandbox.read_file"), d->workspaceId, actor,
                        {{QStringLiteral("path"), path}});
    try {
        QByteArray data = requireBackend()->readFile(path);
        d->manager->touch(d->workspaceId);
        audit.setField(QStringLiteral("bytes"), data.size());
        audit.ok();
        return data;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

QString Sandbox::readFile(const QString &path, const QString &actor)
{
    const BackendPtr b = requireBackend();
    if (!b->hasRangedRead())
        return QString::fromUtf8(readFileBytes(path, actor));
    // Decoded one piece at a time into a string sized once: about 2x the file (UTF-16), not
    // the 3x of bytes and string held together.
    constexpr qint64 Chunk = 1024 * 1024;
    AuditRecorder audit(QStringLiteral("sandbox.read_file"), d->workspaceId, actor,
                        {{QStringLiteral("path"), path}});
    try {
        FileRange range = b->readFileRange(path, 0, Chunk);
        // the size at the start bounds the loop: a file that grows meanwhile is not chased
        const qint64 total = range.totalSize;
        QString text;
        text.reserve(qsizetype(qMin<qint64>(total, std::numeric_limits<qsizetype>::max())));
        QStringDecoder decoder(QStringDecoder::Utf8);
        qint64 pos = 0;
        while (!range.data.isEmpty()) {
            text += decoder(range.data);
            pos += range.data.size();
            if (pos >= total)
                break;
            range = b->readFileRange(path, pos, qMin(Chunk, total - pos));
        }
        text += decoder(QByteArrayView()); // a truncated last sequence becomes U+FFFD
        d->manager->touch(d->workspaceId);
        audit.setField(QStringLiteral("bytes"), pos);
        audit.ok();
        return text;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

static std::optional<QString> checkedDest(const std::optional<QString> &dest)
{
    if (dest && dest->isEmpty())
        throw ValueError(QStringLiteral("flush destination is empty; give a host folder"));
    if (dest)
        checkNoNul(*dest, QStringLiteral("flush destination"));
    return dest;
}

std::optional<WorkspaceSyncResult> Sandbox::flush(const std::optional<QString> &dest,
                                                  const Progress &progress, const QString &actor,
                                                  std::optional<NoBaseConflict> noBase)
{
    const std::optional<QString> target = checkedDest(dest ? dest : effectiveSyncDest());
    if (!target)
        return std::nullopt;
    AuditRecorder audit(QStringLiteral("sandbox.flush"), d->workspaceId, actor,
                        {{QStringLiteral("dest"), *target}});
    try {
        WorkspaceSyncPolicy policy = effectiveSyncPolicy();
        if (noBase)
            policy.noBaseConflict = *noBase;
        const WorkspaceSyncResult r = requireBackend()->syncArtifacts(*target, policy, progress);
        d->manager->touch(d->workspaceId);
        audit.setField(QStringLiteral("files_synced"), r.filesSynced);
        audit.setField(QStringLiteral("bytes_synced"), r.bytesSynced);
        audit.setField(QStringLiteral("conflicts"), r.conflicts.size());
        audit.setField(QStringLiteral("sandbox_deleted"), r.sandboxDeleted.size());
        audit.setField(QStringLiteral("skipped"), r.skippedPaths.size());
        audit.setField(QStringLiteral("sync_errors"), r.errors.size());
        audit.ok();
        return r;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

std::optional<SyncPlan> Sandbox::planFlush(const std::optional<QString> &dest,
                                           std::optional<NoBaseConflict> noBase)
{
    const std::optional<QString> target = checkedDest(dest ? dest : effectiveSyncDest());
    if (!target)
        return std::nullopt;
    WorkspaceSyncPolicy policy = effectiveSyncPolicy();
    if (noBase)
        policy.noBaseConflict = *noBase;
    return requireBackend()->planSync(*target, policy);
}

void Sandbox::attach(const AgentPtr &agent, SandboxAttachMode mode)
{
    if (!agent)
        throw SandboxAttachError(QStringLiteral("attach needs an agent"));
    AuditRecorder audit(QStringLiteral("attach"), d->workspaceId, agent->id(),
                        {{QStringLiteral("mode"), toString(mode)}});
    try {
        QMutexLocker lock(&d->mutex);
        if (!d->started)
            throw SandboxAttachError(
                QStringLiteral("sandbox '%1' is not started; call start() before attaching "
                               "agent '%2'")
                    .arg(d->workspaceId, agent->id()));
        if (agent->config().sandbox && agent->config().sandbox.get() != this)
            throw SandboxAttachError(
                QStringLiteral("agent '%1' is configured for another Sandbox instance")
                    .arg(agent->id()));
        if (const SandboxPtr other = agent->attachedSandbox(); other && other.get() != this)
            throw SandboxAttachError(
                QStringLiteral("agent '%1' is already attached to sandbox '%2'; detach it first")
                    .arg(agent->id(), other->workspaceId()));
        // One name, one mode: the window's panels and the audit show agents by name.
        for (const Private::Binding &b : d->agents) {
            const AgentPtr other = b.agent.lock();
            if (other && other != agent && other->id() == agent->id() && b.mode != mode)
                throw SandboxAttachError(
                    QStringLiteral("another agent named '%1' is attached to sandbox '%2' %3; "
                                   "agents of one name share one mode: pick another name or "
                                   "detach it first")
                        .arg(agent->id(), d->workspaceId, toString(b.mode)));
        }
        const bool canExecute = supportsExecution(d->backend.get());
        try {
            SandboxPlugin::registerTools(*agent, mode, canExecute);
            if (mode == SandboxAttachMode::ReadWrite && d->options.timeTravel.checkpoints &&
                d->options.timeTravel.agentTools) {
                for (const Tool &t : checkpointTools())
                    agent->tools().add(t);
            }
            agent->bindSandbox(shared_from_this(), mode);
        } catch (const std::exception &e) {
            SandboxPlugin::unregisterTools(*agent);
            agent->unbindSandbox();
            throw SandboxAttachError(QStringLiteral("attaching agent '%1' failed: %2")
                                         .arg(agent->id(), QString::fromUtf8(e.what())));
        }
        bool found = false;
        for (Private::Binding &a : d->agents) {
            if (a.agent.lock() == agent) {
                audit.setField(QStringLiteral("previous_mode"), toString(a.mode));
                a.mode = mode;
                found = true;
            }
        }
        if (!found)
            d->agents.append({agent, mode, QDateTime::currentDateTimeUtc()});
        d->agents.removeIf([](const Private::Binding &b) { return b.agent.expired(); });
        audit.setField(QStringLiteral("tools"),
                       QJsonArray::fromStringList(SandboxPlugin::toolNames(mode, canExecute)));
        lock.unlock();
        d->manager->touch(d->workspaceId);
        audit.ok();
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

void Sandbox::detach(const AgentPtr &agent)
{
    if (!agent)
        return;
    {
        QMutexLocker lock(&d->mutex);
        const qsizetype removed =
            d->agents.removeIf([&](const Private::Binding &a) { return a.agent.lock() == agent; });
        if (removed == 0)
            return;
    }
    SandboxPlugin::unregisterTools(*agent);
    agent->unbindSandbox();
    AuditLog::instance().emitEvent(QStringLiteral("detach"), d->workspaceId, agent->id(),
                                   QStringLiteral("ok"));
}

QList<AttachedAgent> Sandbox::attachedAgents() const
{
    QMutexLocker lock(&d->mutex);
    QList<AttachedAgent> out;
    for (const Private::Binding &b : d->agents) {
        if (AgentPtr a = b.agent.lock())
            out.append({a, b.mode, b.attachedAt});
    }
    return out;
}

SandboxRef Sandbox::ref() const
{
    return {d->workspaceId, backendTypeName(), d->manager->managerId()};
}

// ---- time travel ----------------------------------------------------------------------------

std::shared_ptr<TimeTravel> Sandbox::timeTravel() const
{
    QMutexLocker lock(&d->mutex);
    return d->started ? d->timeTravel : nullptr;
}

std::shared_ptr<TimeTravel> Sandbox::requireTimeTravel() const
{
    requireBackend(); // "not started" first
    const auto tt = timeTravel();
    if (!tt || !tt->options().checkpoints)
        throw ValueError(QStringLiteral("checkpoints are off for sandbox '%1'; create it with "
                                        "checkpoints on (--checkpoints)")
                             .arg(d->workspaceId));
    return tt;
}

CheckpointInfo Sandbox::checkpoint(const QString &name, const QString &note, const QString &actor)
{
    AuditRecorder audit(QStringLiteral("sandbox.checkpoint"), d->workspaceId, actor,
                        {{QStringLiteral("name"), name}});
    try {
        const CheckpointInfo info = requireTimeTravel()->checkpoint(name, note);
        d->manager->touch(d->workspaceId);
        audit.setField(QStringLiteral("name"), info.name);
        audit.setField(QStringLiteral("files"), info.files);
        audit.setField(QStringLiteral("bytes"), info.bytes);
        if (!info.removedBySizeLimit.isEmpty())
            audit.setField(QStringLiteral("removed_by_size_limit"),
                           qint64(info.removedBySizeLimit.size()));
        audit.ok();
        return info;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

QList<CheckpointInfo> Sandbox::checkpoints() const
{
    return requireTimeTravel()->checkpoints();
}

CheckpointDiff Sandbox::diffCheckpoints(const QString &from, const QString &to,
                                        const CheckpointDiffOptions &options, const QString &actor)
{
    AuditRecorder audit(QStringLiteral("sandbox.diff"), d->workspaceId, actor,
                        {{QStringLiteral("from"), from}, {QStringLiteral("to"), to}});
    try {
        const CheckpointDiff diff = requireTimeTravel()->diff(from, to, options);
        audit.setField(QStringLiteral("added"), diff.added);
        audit.setField(QStringLiteral("modified"), diff.modified);
        audit.setField(QStringLiteral("deleted"), diff.deleted);
        audit.ok();
        return diff;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

RestoreResult Sandbox::restore(const QString &name, const QString &actor)
{
    AuditRecorder audit(QStringLiteral("sandbox.restore"), d->workspaceId, actor,
                        {{QStringLiteral("name"), name}});
    try {
        const RestoreResult r = requireTimeTravel()->restore(name);
        d->manager->touch(d->workspaceId);
        audit.setField(QStringLiteral("files_written"), r.applied.written);
        audit.setField(QStringLiteral("removed"), r.applied.removed);
        audit.setField(QStringLiteral("stopped_calls"), r.stoppedCalls);
        audit.setField(QStringLiteral("finished_interrupted_restore"), r.wasInterrupted);
        audit.ok();
        return r;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

SandboxPtr Sandbox::fork(const QString &name, const QString &workspaceId,
                         const BackendSource &backend, Options options, const QString &actor)
{
    AuditRecorder audit(
        QStringLiteral("sandbox.fork"), d->workspaceId, actor,
        {{QStringLiteral("name"), name}, {QStringLiteral("new_workspace_id"), workspaceId}});
    try {
        const auto tt = requireTimeTravel();
        const TreeManifest target = tt->manifest(name);
        options.seedFrom.reset(); // the checkpoint is the seed
        const bool baseline = options.timeTravel.baseline;
        options.timeTravel.baseline = false;
        const SandboxPtr forked = Sandbox::create(workspaceId, backend, d->ttl, options);
        forked->start();
        try {
            const BackendPtr b = forked->backend();
            CaptureOptions capture;
            const TreeManifest current = b->captureTree(capture);
            if (!current.entries.empty())
                throw FileExistsError(QStringLiteral("the workspace of the fork '%1' is not empty "
                                                     "(%2 entries); fork into a new or empty "
                                                     "folder: nothing is replaced")
                                          .arg(workspaceId)
                                          .arg(current.entries.size()),
                                      EEXIST);
            b->applyTree(current, target, tt->store(), nullptr);
            if (const auto ftt = forked->timeTravel();
                ftt && ftt->options().checkpoints && baseline) {
                ftt->checkpoint(
                    QStringLiteral("seed"),
                    QStringLiteral("forked from '%1' of '%2'").arg(name, d->workspaceId), true,
                    true);
            }
        } catch (...) {
            forked->stop(false);
            throw;
        }
        audit.setField(QStringLiteral("files"), target.fileCount());
        audit.ok();
        return forked;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

bool Sandbox::deleteCheckpoint(const QString &name, const QString &actor)
{
    AuditRecorder audit(QStringLiteral("sandbox.delete_checkpoint"), d->workspaceId, actor,
                        {{QStringLiteral("name"), name}});
    try {
        const bool removed = requireTimeTravel()->deleteCheckpoint(name);
        audit.setField(QStringLiteral("deleted"), removed);
        audit.ok();
        return removed;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

std::optional<QString> Sandbox::interruptedRestore() const
{
    const auto tt = timeTravel();
    return tt ? tt->interruptedRestore() : std::nullopt;
}

SandboxScope::SandboxScope(SandboxPtr sandbox) : m_sandbox(std::move(sandbox))
{
    m_seed = m_sandbox->start();
}

SandboxScope::~SandboxScope()
{
    try {
        m_sandbox->stop(true);
    } catch (const SandboxError &e) {
        qCWarning(lcSandbox) << "stopping sandbox" << m_sandbox->workspaceId()
                             << "failed:" << e.display();
    }
}

} // namespace elsai
