// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "audit.h"
#include "sandboxplugin.h"
#include "timetravel.h"
#include "tools.h"

#include <QJsonObject>
#include <QString>

#include <memory>
#include <optional>

namespace elsai {

class Agent;
class SandboxError;

/// One tool call through the engine, from its begin to its end — the one place every front
/// end's calls pass (Agent::callTool for MCP, scripts and scripted agents; executeAs for the
/// console). When the agent's sandbox keeps time travel: the gate a restore closes, a command a
/// restore can cancel, the changes of a call that can change the workspace (in its audit
/// record and its result), and the call observers (a session recorder) told of its end.
/// Without time travel it does nothing. Lives on the calling thread, for one call.
class TrackedCall
{
public:
    /// `cancel`: the call's own token (the console's); none: the current ToolCallCancelScope's,
    /// else a new one, so a restore can stop the call's command.
    TrackedCall(Agent &agent, const QString &tool, const QJsonObject &args,
                std::shared_ptr<CancellationToken> cancel = {});
    ~TrackedCall();
    TrackedCall(const TrackedCall &) = delete;
    TrackedCall &operator=(const TrackedCall &) = delete;

    /// False without time travel: finished() and failed() do nothing then.
    bool isActive() const { return m_timeTravel != nullptr; }
    /// Ends a call that answered: its changes go into `result.data` ("changes", when tracked)
    /// and the observers see it.
    void finished(ToolResult &result);
    /// Ends a call that raised.
    void failed(const SandboxError &error);

    /// Tells the observers of a call refused before it began (a denied mutation, an unknown
    /// tool, invalid arguments): it is a call a replay makes again, and it raised.
    static void rejected(Agent &agent, const QString &tool, const QJsonObject &args,
                         const SandboxError &error);

private:
    FinishedCall ended(bool ok);

    Agent &m_agent;
    QString m_tool;
    QJsonObject m_args;
    std::shared_ptr<TimeTravel> m_timeTravel;
    std::optional<ToolCallCancelScope> m_cancelScope;
    std::unique_ptr<TimeTravel::CallSpan> m_span;
    std::optional<AuditFieldsScope> m_changeFields;
    bool m_tracked = false;
    bool m_done = false;
};

} // namespace elsai
