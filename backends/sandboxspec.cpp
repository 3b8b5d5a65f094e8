// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sandboxspec.h"

#include "errors.h"
#include "sshsandboxbackend.h"

#include <QDir>
#include <QRegularExpression>
#include <QTemporaryDir>

namespace elsai {

QStringList SandboxSpec::availableBackends()
{
    return {QStringLiteral("local"), QStringLiteral("bwrap"), QStringLiteral("ssh"),
            QStringLiteral("daytona"), QStringLiteral("agentcore")};
}

BackendPtr SandboxSpec::createBackend()
{
    if (!availableBackends().contains(backend))
        throw ValueError(QStringLiteral("unknown backend '%1'; available: %2")
                             .arg(backend, availableBackends().join(QStringLiteral(", "))));
    if (workspaceId.isEmpty())
        throw ValueError(QStringLiteral("the workspace id must not be empty"));
    QString safeId = workspaceId;
    safeId.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("_"));
    if (backend == QLatin1String("ssh")) {
        SshSandboxBackend::Options o;
        o.target = ssh;
        o.remoteRoot = sshRemoteRoot;
        // "." and ".." are valid ids but not folder names
        o.workspaceName = safeId.startsWith(QLatin1Char('.')) ? QLatin1Char('_') + safeId : safeId;
        o.timeout = local.timeout;
        o.maxOutputBytes = local.maxOutputBytes;
        o.env = local.env;
        o.killGraceSeconds = local.killGraceMs / 1000.0;
        auto b = std::make_shared<SshSandboxBackend>(o);
        if (workspaceRoot.isEmpty())
            workspaceRoot = b->id();
        return b;
    }
    if (backend == QLatin1String("daytona")) {
        DaytonaSandboxBackend::Options o = daytona;
        o.timeout = local.timeout;
        o.maxOutputBytes = local.maxOutputBytes;
        o.env.insert(local.env);
        BackendPtr b = std::make_shared<DaytonaSandboxBackend>(workspaceId, o);
        if (workspaceRoot.isEmpty())
            workspaceRoot = b->id(); // not a host folder: shown for display
        return b;
    }
    if (backend == QLatin1String("agentcore")) {
        BackendPtr b = createAgentCoreBackend();
        if (workspaceRoot.isEmpty())
            workspaceRoot = b->id();
        return b;
    }
    if (workspaceRoot.isEmpty()) {
        QTemporaryDir dir(QDir::tempPath() + QStringLiteral("/elsai-") + safeId +
                          QStringLiteral("-XXXXXX"));
        if (!dir.isValid())
            throw OSError(QStringLiteral("cannot create a workspace folder under %1: %2")
                              .arg(QDir::tempPath(), dir.errorString()));
        dir.setAutoRemove(false);
        workspaceRoot = dir.path();
    }
    if (backend == QLatin1String("bwrap"))
        return std::make_shared<BwrapSandboxBackend>(workspaceRoot, local, bwrap);
    return std::make_shared<LocalSandboxBackend>(workspaceRoot, local);
}

BackendPtr SandboxSpec::createAgentCoreBackend() const
{
    aws::AgentCoreOptions options = agentcore;
    const aws::AgentCoreOptions env = aws::AgentCoreOptions::fromEnvironment();
    if (!options.credentials.isValid())
        options.credentials = env.credentials;
    if (options.region.isEmpty())
        options.region = env.region;
    if (options.endpoint.isEmpty())
        options.endpoint = env.endpoint;
    options.timeout = local.timeout;
    options.maxOutputBytes = local.maxOutputBytes;
    // Only explicit variables travel: the host environment is not the remote one.
    options.env.insert(local.env);
    return aws::AgentCoreSandboxTemplate(options).buildForSession(workspaceId);
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
