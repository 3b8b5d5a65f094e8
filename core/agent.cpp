// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agent.h"

#include "agenttools.h"

#include "audit.h"
#include "errors.h"
#include "inputchecks.h"
#include "sandbox.h"
#include "sandboxmanager.h"
#include "sandboxplugin.h"
#include "timetravel.h"
#include "workspace.h"

#include <QJsonArray>

namespace elsai {

QString toString(SandboxMode mode)
{
    switch (mode) {
    case SandboxMode::Off:
        return QStringLiteral("off");
    case SandboxMode::Sandbox:
        return QStringLiteral("sandbox");
    case SandboxMode::LocalDev:
        break;
    }
    return QStringLiteral("local_dev");
}

QString toString(SandboxAttachMode mode)
{
    return mode == SandboxAttachMode::ReadOnly ? QStringLiteral("read_only")
                                               : QStringLiteral("read_write");
}

SandboxMode sandboxModeFromString(const QString &s)
{
    for (SandboxMode m : {SandboxMode::Off, SandboxMode::Sandbox, SandboxMode::LocalDev}) {
        if (s == toString(m))
            return m;
    }
    throw ValueError(
        QStringLiteral("unknown sandbox mode '%1'; use off, sandbox or local_dev").arg(s));
}

SandboxAttachMode attachModeFromString(const QString &s)
{
    for (SandboxAttachMode m : {SandboxAttachMode::ReadWrite, SandboxAttachMode::ReadOnly}) {
        if (s == toString(m))
            return m;
    }
    throw ValueError(
        QStringLiteral("unknown attach mode '%1'; use read_write or read_only").arg(s));
}

AgentHook::~AgentHook() = default;

bool isMutatingTool(const QString &name)
{
    // What a read-only agent may call cannot change the workspace; everything else may.
    static const QStringList readOnly = [] {
        QStringList names = SandboxPlugin::toolNames(SandboxAttachMode::ReadOnly, true);
        names << QStringLiteral("retrieve_offloaded_content") << QStringLiteral("checkpoints")
              << QStringLiteral("diff_checkpoints");
        return names;
    }();
    return !readOnly.contains(name);
}

struct Agent::Private
{
    QString id;
    AgentConfig config;
    ToolRegistry tools;
    std::shared_ptr<SandboxManager> manager;

    mutable QMutex mutex; // guards everything below
    QList<AgentHookPtr> hooks;
    std::weak_ptr<Sandbox> sandbox;
    std::optional<SandboxAttachMode> mode;
    std::optional<QString> workspaceId;
    bool detached = false;
    AgentActivity activity;
};

Agent::Agent(const QString &id, AgentConfig config) : d(std::make_unique<Private>())
{
    d->id = id;
    d->config = std::move(config);
}

Agent::~Agent() = default;

std::shared_ptr<Agent> Agent::create(const QString &id, AgentConfig config)
{
    if (id.isEmpty())
        throw ValueError(QStringLiteral("an agent needs a non-empty id"));
    checkName(id, QStringLiteral("agent id"));
    if (config.readFileMaxBytes && *config.readFileMaxBytes < 1)
        throw ValueError(QStringLiteral("read_file_max_bytes must be >= 1, got %1")
                             .arg(*config.readFileMaxBytes));
    // The spec's invalid combinations, in its order.
    if (config.sandbox && !config.executionBackend.isNull())
        throw ValueError(QStringLiteral("Dual config — use Sandbox only: sandbox= and "
                                        "execution_backend= cannot be combined"));
    if (config.sandbox && config.workspaceRoot)
        throw ValueError(QStringLiteral("Use Sandbox(seed_from=...) instead of workspace_root= "
                                        "together with sandbox="));
    if (config.sandbox && config.sandboxManager)
        throw ValueError(QStringLiteral("Manager is owned by Sandbox: do not pass "
                                        "sandbox_manager= together with sandbox="));
    if (config.sandboxMode == SandboxMode::Sandbox && config.executionBackend.isNull() &&
        !config.sandbox)
        throw ValueError(QStringLiteral("Missing backend: sandbox_mode=sandbox needs "
                                        "execution_backend= or sandbox="));

    // The spec marks SandboxOutputOffloadPolicy.storage required: without it nothing would
    // ever be offloaded while the retrieval tool is still offered.
    if (config.sandboxOutputOffload && !config.sandboxOutputOffload->storage)
        throw ValueError(QStringLiteral("sandbox_output_offload needs a storage (InMemoryStorage, "
                                        "FileStorage or S3Storage); it is required"));

    std::shared_ptr<Agent> agent(new Agent(id, std::move(config)));
    Private &p = *agent->d;
    // Blocked in the registry itself: a host execution tool added later is refused too.
    if (p.config.sandboxMode == SandboxMode::Sandbox)
        p.tools.setBlockedNames(HOST_EXECUTION_TOOL_NAMES);
    for (const Tool &t : p.config.tools)
        p.tools.add(t);
    if (p.config.sandboxOutputOffload && p.config.sandboxOutputOffload->includeRetrievalTool)
        p.tools.add(retrieveOffloadedContentTool(*p.config.sandboxOutputOffload));

    // The spec: a manager is auto-created "when sandbox mode is enabled without sandbox=",
    // local_dev included, with or without a backend yet.
    if (!p.config.sandbox && p.config.sandboxMode != SandboxMode::Off)
        p.manager =
            p.config.sandboxManager ? p.config.sandboxManager : std::make_shared<SandboxManager>();
    const bool perAgent = !p.config.sandbox && p.config.sandboxMode != SandboxMode::Off &&
                          !p.config.executionBackend.isNull();
    if (perAgent) {
        const BackendSource &src = p.config.executionBackend;
        // Whether execute registers depends on the backend, known here for an instance and
        // after the first prepare for a template.
        const bool canExecute = src.instance() ? supportsExecution(src.instance().get()) : true;
        SandboxPlugin::registerTools(*agent, p.config.sandboxAttachMode, canExecute);
        agent->addHook(std::make_shared<WorkspaceOrchestrator>());
    }
    if (p.config.sandbox)
        p.config.sandbox->attach(agent, p.config.sandboxAttachMode);
    return agent;
}

const QString &Agent::id() const
{
    return d->id;
}

const AgentConfig &Agent::config() const
{
    return d->config;
}

ToolRegistry &Agent::tools()
{
    return d->tools;
}

const ToolRegistry &Agent::tools() const
{
    return d->tools;
}

QStringList Agent::blockedTools() const
{
    return d->tools.blocked();
}

void Agent::addHook(const AgentHookPtr &hook)
{
    QMutexLocker lock(&d->mutex);
    d->hooks.append(hook);
}

void Agent::beginInvocation()
{
    QList<AgentHookPtr> hooks;
    {
        QMutexLocker lock(&d->mutex);
        hooks = d->hooks;
    }
    for (const auto &h : std::as_const(hooks))
        h->beforeInvocation(*this);
}

ToolResult Agent::callTool(const QString &name, const QJsonObject &arguments)
{
    auto record = [this, &name](const QString &outcome) {
        QMutexLocker lock(&d->mutex);
        ++d->activity.toolCalls;
        d->activity.lastTool = name;
        d->activity.lastOutcome = outcome;
        d->activity.lastCallAt = QDateTime::currentDateTimeUtc();
    };
    try {
        const auto tool = d->tools.get(name);
        const std::optional<QString> mutation = tool ? std::nullopt : sandboxMutation(name);
        if (mutation && (attachedSandbox() || isDetached())) {
            // Mode enforcement, second layer: the tool is unregistered for read-only and
            // detached agents, and calling it anyway is a denied mutation, audited as such.
            try {
                ensureSandboxMutationAllowed(*this, *mutation);
            } catch (const SandboxError &e) {
                const QJsonValue command = arguments.value(QStringLiteral("command"));
                QJsonObject fields;
                if (command.isString())
                    fields = commandAuditFields(command.toString());
                else if (arguments.value(QStringLiteral("path")).isString())
                    fields.insert(QStringLiteral("path"), arguments.value(QStringLiteral("path")));
                AuditRecorder audit(QStringLiteral("sandbox.") + name,
                                    SandboxManager::resolveWorkspaceId(*this), d->id, fields);
                audit.fail(e, false);
                throw;
            }
        }
        if (!tool) {
            // Not a denied mutation (audited above): an unknown or blocked tool, audited as an
            // invalid call by the one helper every front end uses.
            auto invalid = [&](const ToolNotFoundError &e) {
                auditInvalidToolCall(name, SandboxManager::resolveWorkspaceId(*this), d->id,
                                     e.specName(), e.message());
                return e;
            };
            if (d->config.sandboxMode == SandboxMode::Sandbox &&
                HOST_EXECUTION_TOOL_NAMES.contains(name)) {
                const ToolNotFoundError e(
                    QStringLiteral("tool '%1' is blocked in sandbox mode (a host execution "
                                   "tool); use the sandbox tools execute, read_file, write_file "
                                   "and list_dir instead")
                        .arg(name));
                AuditLog::instance().emitEvent(QStringLiteral("tool.call"),
                                               SandboxManager::resolveWorkspaceId(*this), d->id,
                                               QStringLiteral("denied"),
                                               {{QStringLiteral("tool"), name.left(128)},
                                                {QStringLiteral("error_type"), e.specName()}});
                throw e;
            }
            throw invalid(ToolNotFoundError(
                QStringLiteral("agent '%1' has no tool '%2'; its tools: %3")
                    .arg(d->id, name, d->tools.names().join(QStringLiteral(", ")))));
        }
        try {
            validateToolArguments(*tool, arguments);
        } catch (const ValueError &e) {
            auditInvalidToolCall(name, SandboxManager::resolveWorkspaceId(*this), d->id,
                                 e.specName(), e.message());
            throw;
        }
        beginInvocation();
        // Time travel: the gate a restore closes, a cancellable command, the changes of a call
        // that can change the workspace (in its result and in its audit record).
        std::optional<ToolCallCancelScope> cancelScope;
        std::unique_ptr<TimeTravel::CallSpan> span;
        std::optional<AuditFieldsScope> changeFields;
        bool tracked = false;
        if (const SandboxPtr sandbox = attachedSandbox()) {
            if (const auto tt = sandbox->timeTravel()) {
                if (!ToolCallCancelScope::current())
                    cancelScope.emplace(std::make_shared<CancellationToken>(),
                                        ToolCallCancelScope::currentOutputObserver());
                const bool mutating = isMutatingTool(name);
                tracked = mutating && tt->tracker();
                span = tt->beginCall(d->id, name, mutating);
                if (tracked) {
                    changeFields.emplace([&span] {
                        return QJsonObject{
                            {QStringLiteral("changes"), span->changes(false).auditJson()}};
                    });
                }
            }
        }
        // Every call has one record: the tool's own (execute, read_file, …) or, for a tool that
        // audits nothing itself (host tools, offload retrieval, custom tools), this one.
        const quint64 recordsBefore = AuditLog::threadEventCount();
        ToolResult result;
        try {
            result = tool->invoke(*this, arguments);
        } catch (const SandboxError &e) {
            if (span)
                span->setOutcome(e.specName()); // the change log's outcome of the call
            if (AuditLog::threadEventCount() == recordsBefore) {
                if (dynamic_cast<const ValueError *>(&e)) {
                    // a tool's own argument check; its message is not ours to log
                    auditInvalidToolCall(name, SandboxManager::resolveWorkspaceId(*this), d->id,
                                         e.specName(), QString());
                } else {
                    AuditRecorder audit(QStringLiteral("tool.call"),
                                        SandboxManager::resolveWorkspaceId(*this), d->id,
                                        {{QStringLiteral("tool"), name.left(128)}});
                    audit.fail(e, false);
                }
            }
            throw;
        }
        if (AuditLog::threadEventCount() == recordsBefore)
            AuditLog::instance().emitEvent(
                QStringLiteral("tool.call"), SandboxManager::resolveWorkspaceId(*this), d->id,
                QStringLiteral("ok"), {{QStringLiteral("tool"), name.left(128)}});
        const auto &offload = d->config.sandboxOutputOffload;
        if (offload && offload->toolNames.contains(name)) {
            QString handle;
            const qint64 totalTokens = countTokens(result.text);
            if (auto preview = offload->offload(result.text, &handle)) {
                // the note on read_file's offloaded rest must outlive the preview's cut
                result.text = *preview + offload->restNote(result.data);
                result.offloaded = true;
                // The structured copy would carry the full output again: keep only small fields.
                for (const char *big : {"output", "stderr", "content", "entries"})
                    result.data.remove(QLatin1String(big));
                result.data.insert(QStringLiteral("offloaded"),
                                   QJsonObject{{QStringLiteral("handle"), handle},
                                               {QStringLiteral("tokens"), totalTokens}});
            }
        }
        if (tracked) {
            if (const int code = result.data.value(QStringLiteral("exit_code")).toInt(); code != 0)
                span->setOutcome(QStringLiteral("exit %1").arg(code));
            result.data.insert(QStringLiteral("changes"), span->changes(true).toJson());
        }
        record(QStringLiteral("ok"));
        return result;
    } catch (const SandboxError &e) {
        record(e.specName());
        throw;
    }
}

std::shared_ptr<Sandbox> Agent::attachedSandbox() const
{
    QMutexLocker lock(&d->mutex);
    return d->sandbox.lock();
}

std::optional<SandboxAttachMode> Agent::attachMode() const
{
    QMutexLocker lock(&d->mutex);
    return d->sandbox.expired() ? std::nullopt : d->mode;
}

bool Agent::isDetached() const
{
    QMutexLocker lock(&d->mutex);
    return d->detached;
}

std::optional<QString> Agent::sandboxWorkspaceId() const
{
    QMutexLocker lock(&d->mutex);
    return d->workspaceId;
}

std::shared_ptr<SandboxManager> Agent::sandboxManager() const
{
    return d->manager;
}

AgentActivity Agent::activity() const
{
    QMutexLocker lock(&d->mutex);
    return d->activity;
}

void Agent::bindSandbox(const std::shared_ptr<Sandbox> &sandbox, SandboxAttachMode mode)
{
    QMutexLocker lock(&d->mutex);
    d->sandbox = sandbox;
    d->mode = mode;
    d->workspaceId = sandbox->workspaceId();
    d->detached = false;
}

void Agent::unbindSandbox()
{
    QMutexLocker lock(&d->mutex);
    d->sandbox.reset();
    d->mode.reset();
    d->detached = true;
    // The workspace id stays: the agent still belongs to that workspace for resolution.
}

} // namespace elsai
