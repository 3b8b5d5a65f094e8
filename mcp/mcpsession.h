// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "jsonrpc.h"
#include "mcpagentspec.h"
#include "mcpera.h"
#include "mcptasks.h"
#include "offload.h"
#include "sandbox.h"

#include <QHash>
#include <QJsonObject>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <variant>

namespace elsai {

class CancellationToken;

/// One MCP client of an agent, served by an Agent attached to the sandbox with the agent's mode.
///
/// Both generations of the protocol (mcpera.h): a legacy session (the initialize handshake,
/// then ping, tools/list, tools/call and notifications/cancelled), and the stateless 2026-07-28
/// requests (server/discover, tools/list, tools/call, the Tasks extension's tasks/get,
/// tasks/update, tasks/cancel, and subscriptions/listen for task status), which carry their
/// version and capabilities in `_meta` and need no initialize. A request is served by the era
/// it belongs to (mcpera::classify); the HTTP transport keeps one session per agent for the
/// stateless requests, the stdio transport serves both eras with its one session.
///
/// Transport-neutral and thread-safe: handle() may run on several threads at once (a long
/// tools/call on a worker while notifications/cancelled arrives on another).
class McpSession
{
public:
    /// The answer to one message: the JSON-RPC response for a request (none for notifications
    /// and responses), and whether the request was cancelled while it ran.
    struct Reply
    {
        std::optional<QJsonObject> response;
        bool cancelled = false;
    };

    McpSession(QString id, McpAgentSpec agent, SandboxPtr sandbox,
               std::optional<SandboxOutputOffloadPolicy> offload = std::nullopt);
    ~McpSession();
    McpSession(const McpSession &) = delete;
    McpSession &operator=(const McpSession &) = delete;

    /// The session-based revisions initialize negotiates, oldest first; the last is the
    /// preferred one (mcpera::legacyVersions()).
    static QStringList supportedProtocolVersions();
    static QString latestProtocolVersion();
    /// True for a revision initialize can negotiate. initialize answers any other offer (an
    /// unknown date, the stateless 2026-07-28, which needs no initialize) with the latest
    /// session-based one, never an echo: the client then decides whether it can speak it.
    static bool isSupportedProtocolVersion(const QString &version);
    /// The methods of the stateless revision this server answers. Any other is refused before
    /// its envelope or headers are looked at (MethodNotFound; HTTP 404).
    static bool servesStatelessMethod(const QString &method);
    /// The refusal of a modern request whose client did not declare a capability it needs: the
    /// Tasks extension for tasks/get, tasks/update and tasks/cancel
    /// (MissingRequiredClientCapability; HTTP 400). None when it may run.
    static std::optional<jsonrpc::Fault> missingCapability(const jsonrpc::Message &message,
                                                           const mcpera::Envelope &envelope);
    /// Whether the negotiated revision lets a client send JSON-RPC batches (2025-03-26 only:
    /// 2025-06-18 removed them).
    static bool allowsBatches(const QString &version);

    /// Sends a serialized notification (compact JSON, no newline) to the client while a request
    /// runs: notifications/progress of a tools/call that carried `_meta.progressToken`. Called
    /// on another thread than the request's; never after handle() returned.
    using Notify = std::function<void(const QByteArray &notification)>;

    Reply handle(const jsonrpc::Message &message, const Notify &notify = {});

    /// The transport's side of one request.
    struct CallContext
    {
        /// Notifications about the request while it runs (progress; on subscriptions/listen
        /// the stream's notifications).
        Notify notify;
        /// Sends the response before handleSerialized() returns: a stateless tools/call whose
        /// client declared the Tasks extension and that still runs after taskThreshold() is
        /// answered with its task (CreateTaskResult) and runs on. Without it, never a task.
        Notify respond;
        /// The key the request runs under, for cancelRun(); empty: its JSON-RPC id. HTTP gives
        /// each stateless POST its own (their ids are unique per client, not per agent).
        QString runKey;
    };

    /// handle() as the transports need it: the response as compact JSON without a newline
    /// (empty for none). A tool's text is escaped straight into it, not put in a QJsonObject.
    struct SerializedReply
    {
        QByteArray bytes;
        bool cancelled = false;
        bool answered = false; ///< the response already went through CallContext::respond
        bool keepOpen = false; ///< subscriptions/listen: the stream stays open for notifications
    };
    SerializedReply handleSerialized(const jsonrpc::Message &message, const Notify &notify = {});
    SerializedReply handleSerialized(const jsonrpc::Message &message, const CallContext &context);

    /// Cancels what runs under `runKey` (a call, or a subscriptions/listen stream): the
    /// transport's cancellation (HTTP: the client closed the response stream).
    void cancelRun(const QString &runKey);

    /// How long a stateless tools/call runs before it becomes a task (when the client declared
    /// the Tasks extension); also the task's suggested poll interval. Default: the progress
    /// interval.
    void setTaskThreshold(std::chrono::milliseconds threshold);
    std::chrono::milliseconds taskThreshold() const { return m_taskThreshold; }
    const McpTaskStore &tasks() const { return m_tasks; }

    /// How often a tools/call with a progress token reports progress (default 5 s); also the
    /// task threshold unless setTaskThreshold() chose another. Set before the first call.
    void setProgressInterval(std::chrono::milliseconds interval);
    std::chrono::milliseconds progressInterval() const { return m_progressInterval; }
    static constexpr std::chrono::milliseconds defaultProgressInterval()
    {
        return std::chrono::seconds(5);
    }

    /// A JSON-RPC batch (the transport checked acceptsBatches()): each message handled in
    /// order, the responses as one serialized array, empty when there are none (only
    /// notifications, or cancelled requests). initialize may not be part of one.
    QByteArray handleBatch(const QList<jsonrpc::ParseResult> &batch);
    /// Whether the negotiated revision has batches (allowsBatches()).
    bool acceptsBatches() const { return allowsBatches(protocolVersion()); }

    /// Cancels running calls and detaches the agent. Later requests are refused. Idempotent.
    void close();

    const QString &id() const { return m_id; }
    const McpAgentSpec &agentSpec() const { return m_spec; }
    bool isInitialized() const;
    bool isClosed() const;
    QString protocolVersion() const; ///< negotiated; empty before initialize
    QJsonObject clientInfo() const;
    AgentPtr agent() const;
    int runningCalls() const;

private:
    /// A response whose text content item (content[0].text, empty in `response`) is `text`:
    /// the text of a large result is added where it is serialized, never copied into JSON
    /// values first.
    struct Answer
    {
        std::optional<QJsonObject> response;
        std::optional<QString> text;
        bool cancelled = false;
        bool answered = false;
        bool keepOpen = false;
    };
    Answer answer(const jsonrpc::Message &message, const CallContext &context);
    /// A request of the stateless revision (the era of the message says so).
    Answer answerModern(const jsonrpc::Message &message, const CallContext &context);
    Answer answerTasks(const jsonrpc::Message &message);
    Answer listen(const jsonrpc::Message &message, const CallContext &context);
    QJsonObject initialize(const QJsonObject &params);
    /// The session's agent, attached on first use (initialize, or the first stateless request).
    AgentPtr ensureAgent();
    QJsonObject discover() const;
    QString instructions() const;
    QJsonObject listTools() const;
    /// A tools/call result object (its text content item empty) and the text, or a JSON-RPC
    /// fault (unknown tool, bad params).
    struct ToolCallResult
    {
        QJsonObject result;
        QString text;
    };
    /// How a tools/call ended: answered here, or handed to a task (its response already sent).
    struct CallOutcome
    {
        bool cancelled = false;
        bool becameTask = false;
    };
    std::variant<ToolCallResult, jsonrpc::Fault> callTool(const jsonrpc::Message &message,
                                                          const CallContext &context,
                                                          bool withTasks, CallOutcome *outcome);
    void cancelRequest(const QJsonValue &requestId);

    const QString m_id;
    const McpAgentSpec m_spec;
    const SandboxPtr m_sandbox;
    const std::optional<SandboxOutputOffloadPolicy> m_offload;
    std::chrono::milliseconds m_progressInterval = defaultProgressInterval();
    std::chrono::milliseconds m_taskThreshold = defaultProgressInterval();
    bool m_taskThresholdSet = false;
    McpTaskStore m_tasks{defaultProgressInterval()};

    mutable QMutex m_mutex;
    AgentPtr m_agent;
    QString m_protocolVersion;
    QJsonObject m_clientInfo;
    bool m_closed = false;
    QHash<QString, std::shared_ptr<CancellationToken>> m_running; ///< by jsonrpc::idKey
};
using McpSessionPtr = std::shared_ptr<McpSession>;

/// The MCP form of a tool: name, description, inputSchema and annotations.
QJsonObject mcpToolDescription(const Tool &tool);

} // namespace elsai
