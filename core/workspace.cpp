// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "workspace.h"

#include "audit.h"
#include "errors.h"
#include "sandbox.h"
#include "sandboxmanager.h"

namespace elsai {

static bool perAgentPath(const Agent &agent)
{
    const AgentConfig &c = agent.config();
    return !c.sandbox && c.sandboxMode != SandboxMode::Off && !c.executionBackend.isNull();
}

bool sandboxIsActive(const Agent &agent)
{
    if (agent.attachedSandbox())
        return true;
    return perAgentPath(agent) && !agent.isDetached();
}

bool workspaceIsPrepared(const Agent &agent)
{
    if (const SandboxPtr sandbox = agent.attachedSandbox()) {
        const auto s = sandbox->manager()->getSession(sandbox->workspaceId());
        return sandbox->isStarted() && s && s->prepared;
    }
    if (!perAgentPath(agent) || !agent.sandboxManager())
        return false;
    const auto s = agent.sandboxManager()->getSession(SandboxManager::resolveWorkspaceId(agent));
    return s && s->prepared;
}

static QString joinErrors(const QStringList &errors)
{
    QStringList head = errors.mid(0, 5);
    if (errors.size() > 5)
        head.append(QStringLiteral("… and %1 more").arg(errors.size() - 5));
    return head.join(QStringLiteral("; "));
}

std::optional<WorkspaceSeedResult> prepareWorkspace(Agent &agent)
{
    if (agent.attachedSandbox() || !perAgentPath(agent))
        return std::nullopt;
    const auto manager = agent.sandboxManager();
    const QString id = SandboxManager::resolveWorkspaceId(agent);
    if (const auto s = manager->getSession(id); s && s->prepared)
        return std::nullopt;

    const AgentConfig &c = agent.config();
    AuditRecorder audit(QStringLiteral("sandbox.prepare"), id, agent.id());
    try {
        const ManagedSandboxSession session = manager->getOrCreate(
            id, SandboxManager::backendFactoryForSession(c.executionBackend, id));
        if (session.prepared) {
            audit.ok();
            return std::nullopt;
        }
        std::optional<WorkspaceSeedResult> seed;
        if (c.workspaceRoot) {
            seed = session.backend->seedWorkspace(*c.workspaceRoot,
                                                  c.workspaceSyncPolicy.excludePatterns);
            audit.setField(QStringLiteral("files_seeded"), seed->filesSeeded);
            audit.setField(QStringLiteral("bytes_seeded"), seed->bytesSeeded);
            if (!seed->success())
                throw WorkspacePrepareError(
                    QStringLiteral("seeding workspace '%1' from '%2' failed: %3")
                        .arg(id, *c.workspaceRoot, joinErrors(seed->errors)));
        }
        // A template's backend may turn out unable to execute: drop the tool then.
        if (!supportsExecution(session.backend.get()))
            agent.tools().remove(QStringLiteral("execute"));
        manager->markPrepared(id, seed);
        audit.ok();
        return seed;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

std::optional<WorkspaceSyncResult> syncWorkspaceArtifacts(Agent &agent)
{
    std::optional<WorkspaceSyncResult> result;
    QString id;
    if (const SandboxPtr sandbox = agent.attachedSandbox()) {
        id = sandbox->workspaceId();
        result = sandbox->flush(std::nullopt, {}, agent.id());
    } else {
        if (!perAgentPath(agent) || !agent.config().workspaceRoot)
            return std::nullopt;
        id = SandboxManager::resolveWorkspaceId(agent);
        const auto session = agent.sandboxManager()->getSession(id);
        if (!session || !session->backend)
            throw AgentSandboxDetachedError(
                QStringLiteral("agent '%1' has no open workspace to sync").arg(agent.id()));
        AuditRecorder audit(QStringLiteral("sandbox.flush"), id, agent.id(),
                            {{QStringLiteral("dest"), *agent.config().workspaceRoot}});
        try {
            result = session->backend->syncArtifacts(*agent.config().workspaceRoot,
                                                     agent.config().workspaceSyncPolicy);
            audit.setField(QStringLiteral("files_synced"), result->filesSynced);
            audit.setField(QStringLiteral("conflicts"), result->conflicts.size());
            audit.ok();
        } catch (const SandboxError &e) {
            audit.fail(e);
            throw;
        }
    }
    if (result && !result->success())
        throw WorkspacePrepareError(QStringLiteral("syncing workspace '%1' reported errors: %2")
                                        .arg(id, joinErrors(result->errors)));
    return result;
}

std::optional<WorkspaceSyncResult> closeSandboxWorkspace(Agent &agent, bool syncArtifacts)
{
    if (!perAgentPath(agent) || !agent.sandboxManager())
        return std::nullopt;
    return agent.sandboxManager()->closeSession(SandboxManager::resolveWorkspaceId(agent),
                                                syncArtifacts, &agent);
}

std::optional<WorkspaceSyncResult> syncWorkspaceForSandbox(Sandbox &sandbox,
                                                           const std::optional<QString> &dest)
{
    return sandbox.flush(dest);
}

void WorkspaceOrchestrator::beforeInvocation(Agent &agent)
{
    prepareWorkspace(agent);
}

} // namespace elsai
