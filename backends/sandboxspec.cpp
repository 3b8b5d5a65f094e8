// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sandboxspec.h"

#include "backendregistry.h"
#include "errors.h"

namespace elsai {

QStringList SandboxSpec::availableBackends()
{
    return BackendRegistry::names();
}

BackendPtr SandboxSpec::createBackend()
{
    const BackendDescriptor &d = BackendRegistry::get(backend);
    if (workspaceId.isEmpty())
        throw ValueError(QStringLiteral("the workspace id must not be empty"));
    BackendPtr b = d.create(*this);
    if (workspaceRoot.isEmpty())
        workspaceRoot = b->id(); // not a host folder: shown for display
    return b;
}

SandboxPtr SandboxSpec::createSandbox(std::shared_ptr<SandboxManager> manager)
{
    const BackendPtr b = createBackend();
    Sandbox::Options so;
    so.manager = std::move(manager);
    so.seedFrom = seedFrom;
    so.seedExclude = seedExclude;
    so.syncDest = syncDest;
    so.readFileMaxBytes = readFileMaxBytes;
    so.executeSoftReturnSeconds = executeSoftReturnSeconds;
    so.timeTravel = timeTravel;
    if (syncInclude) {
        WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
        policy.excludePatterns += seedExclude;
        policy.syncIncludePatterns = *syncInclude;
        policy.noBaseConflict = noBaseConflict;
        so.syncPolicy = policy;
    } else if (noBaseConflict != NoBaseConflict::KeepBoth) {
        WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
        policy.noBaseConflict = noBaseConflict;
        so.syncPolicy = policy;
    }
    return Sandbox::create(workspaceId, b, ttlSeconds, so);
}

} // namespace elsai
