// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "types.h"

#include <QHash>
#include <QMutex>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace elsai {

class Agent;
class BackgroundProcesses;

/// One workspace's live state in a manager (spec: ManagedSandboxSession). Values returned by
/// the manager are snapshots; `backend` is the live, shared backend.
struct ManagedSandboxSession
{
    QString sessionId;
    BackendPtr backend;
    bool prepared = false;
    std::optional<WorkspaceSeedResult> seedResult;
    std::optional<QString> ownerId;
    double createdAt = 0;  ///< monotonic seconds
    double lastUsedAt = 0; ///< monotonic seconds, for TTL
};

/// Get-or-create sandbox sessions keyed by workspace id, with optional idle expiry
/// (spec: SandboxManager). Thread-safe: every method may be called from any thread. Backend
/// creation and closing run outside the manager's lock.
class SandboxManager
{
public:
    /// `ttlSeconds` none disables idle expiry. cleanupExpired() never runs by itself.
    explicit SandboxManager(std::optional<double> ttlSeconds = 3600.0);
    ~SandboxManager();

    std::optional<double> ttlSeconds() const;
    void setTtlSeconds(std::optional<double> ttl);

    /// `_sandbox_workspace_id` → SessionManager.session_id → agent id.
    static QString resolveWorkspaceId(const Agent &agent);
    /// Legacy alias of resolveWorkspaceId().
    static QString resolveSessionId(const Agent &agent) { return resolveWorkspaceId(agent); }

    std::optional<ManagedSandboxSession> getSession(const QString &sessionId) const;
    QList<ManagedSandboxSession> sessions() const;

    /// Returns the session, creating it (factory + backend create()) when missing.
    ManagedSandboxSession getOrCreate(const QString &sessionId, const BackendFactory &factory);

    /// Atomically claims a workspace for one Sandbox start cycle. Creates the session when
    /// missing; adopts an unowned one; throws SandboxStartError when another owner holds it.
    ManagedSandboxSession claimSession(const QString &sessionId, const BackendFactory &factory,
                                       const QString &ownerId);

    void markPrepared(const QString &sessionId,
                      std::optional<WorkspaceSeedResult> seedResult = std::nullopt);

    /// Records activity (resets the idle clock). Unknown ids are ignored.
    void touch(const QString &sessionId);

    /// Optionally syncs the agent's artifacts (per-agent path: to its workspace_root under its
    /// workspace_sync_policy), closes the backend and forgets the session. Unknown ids are
    /// ignored. Returns the sync result when a sync ran.
    std::optional<WorkspaceSyncResult>
    closeSession(const QString &sessionId, bool syncArtifacts = true, const Agent *agent = nullptr);

    /// Closes every session idle for longer than ttlSeconds (no sync). Returns their ids.
    QStringList cleanupExpired();

    /// A factory for `source`: build_for_session when the template has it, else the
    /// template's default build, else the instance itself.
    static BackendFactory backendFactoryForSession(const BackendSource &source,
                                                   const QString &sessionId);

    /// Called after a session is closed, with the reason ("closed" or "expired"); from the
    /// thread that closed it. Returns an id for removeCloseListener().
    using CloseListener = std::function<void(const QString &sessionId, const QString &reason)>;
    int addCloseListener(CloseListener listener);
    void removeCloseListener(int id);

    /// Monotonic clock in seconds; replaceable for tests.
    double now() const;
    void setClock(std::function<double()> clock);

    /// Forward-compatible hint reported in SandboxRef.manager_id.
    QString managerId() const { return m_id; }

    /// The background processes of this manager's workspaces (the process tools); a
    /// workspace's end when its session closes, all of them with the manager.
    BackgroundProcesses &backgroundProcesses() const { return *m_background; }

private:
    void closeEntry(const QString &sessionId, const QString &reason, bool syncArtifacts,
                    const Agent *agent, std::optional<WorkspaceSyncResult> *syncResult);

    mutable QMutex m_mutex;
    QHash<QString, ManagedSandboxSession> m_sessions;
    std::optional<double> m_ttl;
    std::function<double()> m_clock;
    QHash<int, CloseListener> m_listeners;
    int m_nextListener = 1;
    QString m_id;
    /// Last: destroyed first, so the processes end before anything they use.
    std::unique_ptr<BackgroundProcesses> m_background;
};

} // namespace elsai
