// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "trackedcall.h"

#include "agent.h"
#include "errors.h"
#include "sandbox.h"

namespace elsai {

TrackedCall::TrackedCall(Agent &agent, const QString &tool, const QJsonObject &args,
                         std::shared_ptr<CancellationToken> cancel)
    : m_agent(agent), m_tool(tool), m_args(args)
{
    const SandboxPtr sandbox = agent.attachedSandbox();
    m_timeTravel = sandbox ? sandbox->timeTravel() : nullptr;
    if (!m_timeTravel)
        return;
    if (cancel)
        m_cancelScope.emplace(std::move(cancel), ToolCallCancelScope::currentOutputObserver());
    else if (!ToolCallCancelScope::current())
        m_cancelScope.emplace(std::make_shared<CancellationToken>(),
                              ToolCallCancelScope::currentOutputObserver());
    const bool mutating = isMutatingTool(tool);
    m_tracked = mutating && m_timeTravel->tracker();
    m_span = m_timeTravel->beginCall(agent.id(), tool, mutating);
    if (m_tracked) {
        m_changeFields.emplace([this] {
            return QJsonObject{{QStringLiteral("changes"), m_span->changes(false).auditJson()}};
        });
    }
}

TrackedCall::~TrackedCall() = default;

/// Who called what with which arguments, as an observer sees the call.
static FinishedCall callOf(Agent &agent, const QString &tool, const QJsonObject &args)
{
    FinishedCall call;
    call.actor = agent.id();
    if (const auto mode = agent.attachMode())
        call.mode = toString(*mode);
    call.tool = tool;
    call.args = args;
    return call;
}

FinishedCall TrackedCall::ended(bool ok)
{
    m_done = true;
    FinishedCall call = callOf(m_agent, m_tool, m_args);
    call.ok = ok;
    call.changes = m_span->changes(true);
    return call;
}

void TrackedCall::finished(ToolResult &result)
{
    if (!m_timeTravel || m_done)
        return;
    // the change log's outcome of the call (the Timeline shows it)
    if (const int code = result.data.value(QStringLiteral("exit_code")).toInt(); code != 0)
        m_span->setOutcome(QStringLiteral("exit %1").arg(code));
    FinishedCall call = ended(true);
    if (m_tracked)
        result.data.insert(QStringLiteral("changes"), call.changes.toJson());
    call.text = result.text;
    call.data = result.data;
    m_timeTravel->notifyCallFinished(call);
}

void TrackedCall::failed(const SandboxError &error)
{
    if (!m_timeTravel || m_done)
        return;
    m_span->setOutcome(error.specName());
    FinishedCall call = ended(false);
    call.errorType = error.specName();
    call.errorMessage = error.message();
    m_timeTravel->notifyCallFinished(call);
}

void TrackedCall::rejected(Agent &agent, const QString &tool, const QJsonObject &args,
                           const SandboxError &error)
{
    const SandboxPtr sandbox = agent.attachedSandbox();
    const auto tt = sandbox ? sandbox->timeTravel() : nullptr;
    if (!tt)
        return;
    FinishedCall call = callOf(agent, tool, args);
    call.errorType = error.specName();
    call.errorMessage = error.message();
    tt->notifyCallFinished(call);
}

} // namespace elsai
