// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agent.h"
#include "types.h"

#include <optional>

namespace elsai {

class Sandbox;

/// True when the agent's sandbox tools have a backend: attached to a Sandbox, or
/// sandbox_mode != off with an execution_backend (per-agent path).
bool sandboxIsActive(const Agent &agent);
/// True after the agent's workspace was prepared (seeded, or started without seed).
bool workspaceIsPrepared(const Agent &agent);

/// Per-agent path: creates the session's backend and seeds it from workspace_root with the
/// policy's excludes, once. WorkspacePrepareError when seeding reports errors. A no-op
/// returning none for an agent attached to a Sandbox (start() seeds) or when already prepared.
std::optional<WorkspaceSeedResult> prepareWorkspace(Agent &agent);
/// Syncs artifacts to the host: the Sandbox's flush() for an attached agent, else to
/// workspace_root under workspace_sync_policy. WorkspacePrepareError when the sync reports
/// errors (conflicts included); none when there is nowhere to sync.
std::optional<WorkspaceSyncResult> syncWorkspaceArtifacts(Agent &agent);
/// Optional sync, then closes the agent's per-agent session.
std::optional<WorkspaceSyncResult> closeSandboxWorkspace(Agent &agent, bool syncArtifacts = true);
/// Alias of sandbox.flush(dest).
std::optional<WorkspaceSyncResult>
syncWorkspaceForSandbox(Sandbox &sandbox, const std::optional<QString> &dest = std::nullopt);

/// Hook that prepares the workspace before each agent invocation.
class WorkspaceOrchestrator : public AgentHook
{
public:
    void beforeInvocation(Agent &agent) override;
};

} // namespace elsai
