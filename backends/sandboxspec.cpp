#include "sandboxspec.h"

#include "errors.h"

#include <QDir>
#include <QRegularExpression>
#include <QTemporaryDir>

namespace elsai {

QStringList SandboxSpec::availableBackends()
{
    return {QStringLiteral("local"), QStringLiteral("daytona"), QStringLiteral("agentcore")};
}

BackendPtr SandboxSpec::createBackend()
{
    if (!availableBackends().contains(backend))
        throw ValueError(QStringLiteral("unknown backend '%1'; available: %2")
                             .arg(backend, availableBackends().join(QStringLiteral(", "))));
    if (workspaceId.isEmpty())
        throw ValueError(QStringLiteral("the workspace id must not be empty"));
    if (backend == QLatin1String("daytona")) {
        DaytonaSandboxBackend::Options o = daytona;
        o.timeout = local.timeout;
        o.maxOutputBytes = local.maxOutputBytes;
        o.env.insert(local.env);
        return std::make_shared<DaytonaSandboxBackend>(workspaceId, o);
    }
    if (backend == QLatin1String("agentcore"))
        return createAgentCoreBackend();
    if (workspaceRoot.isEmpty()) {
        QString safeId = workspaceId;
        safeId.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("_"));
        QTemporaryDir dir(QDir::tempPath() + QStringLiteral("/elsai-") + safeId +
                          QStringLiteral("-XXXXXX"));
        if (!dir.isValid())
            throw OSError(QStringLiteral("cannot create a workspace folder under %1: %2")
                              .arg(QDir::tempPath(), dir.errorString()));
        dir.setAutoRemove(false);
        workspaceRoot = dir.path();
    }
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
    if (syncInclude) {
        WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
        policy.excludePatterns += seedExclude;
        policy.syncIncludePatterns = *syncInclude;
        so.syncPolicy = policy;
    }
    return Sandbox::create(workspaceId, b, ttlSeconds, so);
}

} // namespace elsai
