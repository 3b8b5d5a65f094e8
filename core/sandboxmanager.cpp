// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sandboxmanager.h"

#include "agent.h"
#include "audit.h"
#include "backgroundprocesses.h"
#include "errors.h"

#include <QUuid>

#include <chrono>

namespace elsai {

static double steadySeconds()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

SandboxManager::SandboxManager(std::optional<double> ttlSeconds)
    : m_ttl(ttlSeconds), m_clock(steadySeconds),
      m_id(QUuid::createUuid().toString(QUuid::WithoutBraces)),
      m_background(std::make_unique<BackgroundProcesses>())
{
    if (m_ttl && *m_ttl < 0)
        throw ValueError(QStringLiteral("ttl_seconds must be >= 0 or none, got %1").arg(*m_ttl));
}

SandboxManager::~SandboxManager() = default;

std::optional<double> SandboxManager::ttlSeconds() const
{
    QMutexLocker lock(&m_mutex);
    return m_ttl;
}

void SandboxManager::setTtlSeconds(std::optional<double> ttl)
{
    QMutexLocker lock(&m_mutex);
    m_ttl = ttl;
}

double SandboxManager::now() const
{
    return m_clock();
}

void SandboxManager::setClock(std::function<double()> clock)
{
    QMutexLocker lock(&m_mutex);
    m_clock = clock ? std::move(clock) : std::function<double()>(steadySeconds);
}

QString SandboxManager::resolveWorkspaceId(const Agent &agent)
{
    if (const auto ws = agent.sandboxWorkspaceId())
        return *ws;
    if (agent.config().sessionId && !agent.config().sessionId->isEmpty())
        return *agent.config().sessionId;
    return agent.id();
}

std::optional<ManagedSandboxSession> SandboxManager::getSession(const QString &sessionId) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_sessions.constFind(sessionId);
    if (it == m_sessions.constEnd())
        return std::nullopt;
    return *it;
}

QList<ManagedSandboxSession> SandboxManager::sessions() const
{
    QMutexLocker lock(&m_mutex);
    return m_sessions.values();
}

ManagedSandboxSession SandboxManager::getOrCreate(const QString &sessionId,
                                                  const BackendFactory &factory)
{
    {
        QMutexLocker lock(&m_mutex);
        auto it = m_sessions.find(sessionId);
        if (it != m_sessions.end()) {
            it->lastUsedAt = m_clock();
            return *it;
        }
    }
    if (!factory)
        throw ValueError(QStringLiteral("no backend factory for workspace '%1'").arg(sessionId));
    BackendPtr backend = factory();
    if (!backend)
        throw WorkspacePrepareError(
            QStringLiteral("the backend factory of workspace '%1' built no backend")
                .arg(sessionId));
    backend->create();

    QMutexLocker lock(&m_mutex);
    auto it = m_sessions.find(sessionId);
    if (it != m_sessions.end()) {
        // Another thread created it meanwhile: keep theirs, release ours.
        lock.unlock();
        if (backend != it->backend)
            backend->close();
        lock.relock();
        return *m_sessions.find(sessionId);
    }
    ManagedSandboxSession s;
    s.sessionId = sessionId;
    s.backend = backend;
    s.createdAt = s.lastUsedAt = m_clock();
    m_sessions.insert(sessionId, s);
    return s;
}

ManagedSandboxSession SandboxManager::claimSession(const QString &sessionId,
                                                   const BackendFactory &factory,
                                                   const QString &ownerId)
{
    {
        QMutexLocker lock(&m_mutex);
        auto it = m_sessions.find(sessionId);
        if (it != m_sessions.end()) {
            if (it->ownerId && *it->ownerId != ownerId)
                throw SandboxStartError(
                    QStringLiteral("workspace '%1' is already owned by another Sandbox instance "
                                   "in this process; stop that sandbox first or choose another "
                                   "workspace_id")
                        .arg(sessionId));
            it->ownerId = ownerId;
            it->lastUsedAt = m_clock();
            return *it;
        }
        // Reserve the id so a concurrent claim fails fast instead of creating a second backend.
        ManagedSandboxSession reserved;
        reserved.sessionId = sessionId;
        reserved.ownerId = ownerId;
        reserved.createdAt = reserved.lastUsedAt = m_clock();
        m_sessions.insert(sessionId, reserved);
    }
    BackendPtr backend;
    try {
        if (!factory)
            throw ValueError(
                QStringLiteral("no backend factory for workspace '%1'").arg(sessionId));
        backend = factory();
        if (!backend)
            throw SandboxStartError(
                QStringLiteral("the backend of workspace '%1' could not be built").arg(sessionId));
        backend->create();
    } catch (...) {
        QMutexLocker lock(&m_mutex);
        m_sessions.remove(sessionId);
        throw;
    }
    QMutexLocker lock(&m_mutex);
    auto it = m_sessions.find(sessionId);
    it->backend = backend;
    it->lastUsedAt = m_clock();
    return *it;
}

void SandboxManager::markPrepared(const QString &sessionId,
                                  std::optional<WorkspaceSeedResult> seedResult)
{
    QMutexLocker lock(&m_mutex);
    auto it = m_sessions.find(sessionId);
    if (it == m_sessions.end())
        return;
    it->prepared = true;
    it->seedResult = std::move(seedResult);
    it->lastUsedAt = m_clock();
}

void SandboxManager::touch(const QString &sessionId)
{
    QMutexLocker lock(&m_mutex);
    auto it = m_sessions.find(sessionId);
    if (it != m_sessions.end())
        it->lastUsedAt = m_clock();
}

std::optional<WorkspaceSyncResult>
SandboxManager::closeSession(const QString &sessionId, bool syncArtifacts, const Agent *agent)
{
    std::optional<WorkspaceSyncResult> result;
    closeEntry(sessionId, QStringLiteral("closed"), syncArtifacts, agent, &result);
    return result;
}

void SandboxManager::closeEntry(const QString &sessionId, const QString &reason, bool syncArtifacts,
                                const Agent *agent, std::optional<WorkspaceSyncResult> *syncResult)
{
    ManagedSandboxSession s;
    {
        QMutexLocker lock(&m_mutex);
        auto it = m_sessions.find(sessionId);
        if (it == m_sessions.end())
            return;
        s = *it;
        m_sessions.erase(it);
    }
    // Before the flush: its files are then what the commands left, and none is still writing.
    m_background->stopWorkspace(sessionId);
    if (s.backend && syncArtifacts && agent && agent->config().workspaceRoot) {
        const WorkspaceSyncPolicy &policy = agent->config().workspaceSyncPolicy;
        AuditRecorder audit(QStringLiteral("sandbox.flush"), sessionId, agent->id());
        try {
            *syncResult = s.backend->syncArtifacts(*agent->config().workspaceRoot, policy);
            audit.setField(QStringLiteral("files_synced"), (*syncResult)->filesSynced);
            audit.ok();
        } catch (const SandboxError &e) {
            audit.fail(e);
        }
    }
    if (s.backend)
        s.backend->close();
    QList<CloseListener> listeners;
    {
        QMutexLocker lock(&m_mutex);
        listeners = m_listeners.values();
    }
    for (const auto &l : std::as_const(listeners))
        l(sessionId, reason);
}

QStringList SandboxManager::cleanupExpired()
{
    QStringList expired;
    {
        QMutexLocker lock(&m_mutex);
        if (!m_ttl)
            return {};
        const double now = m_clock();
        for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
            if (it->backend && now - it->lastUsedAt > *m_ttl)
                expired.append(it.key());
        }
    }
    expired.sort();
    for (const QString &id : std::as_const(expired)) {
        AuditRecorder audit(QStringLiteral("sandbox.expired"), id, QStringLiteral("host"));
        closeEntry(id, QStringLiteral("expired"), false, nullptr, nullptr);
        audit.ok();
    }
    return expired;
}

BackendFactory SandboxManager::backendFactoryForSession(const BackendSource &source,
                                                        const QString &sessionId)
{
    if (const BackendTemplatePtr t = source.templ()) {
        return [t, sessionId]() -> BackendPtr {
            if (BackendPtr b = t->buildForSession(sessionId))
                return b;
            return t->buildDefault();
        };
    }
    const BackendPtr instance = source.instance();
    return [instance]() { return instance; };
}

int SandboxManager::addCloseListener(CloseListener listener)
{
    QMutexLocker lock(&m_mutex);
    const int id = m_nextListener++;
    m_listeners.insert(id, std::move(listener));
    return id;
}

void SandboxManager::removeCloseListener(int id)
{
    QMutexLocker lock(&m_mutex);
    m_listeners.remove(id);
}

} // namespace elsai
