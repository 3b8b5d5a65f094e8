// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "jsonrpc.h"
#include "mcpagentspec.h"
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

/// One MCP client: the initialize handshake, then ping, tools/list, tools/call and
/// notifications/cancelled, served by an Agent attached to the sandbox with the client's mode.
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

    /// Revisions this server implements, oldest first; the last is the preferred one.
    static QStringList supportedProtocolVersions();
    static QString latestProtocolVersion();
    /// True for a revision this server implements. initialize answers any other offer (an
    /// unknown date, a later revision such as the stateless 2026-07-28) with the latest
    /// supported one, never an echo: the client then decides whether it can speak it.
    static bool isSupportedProtocolVersion(const QString &version);
    /// Whether the negotiated revision lets a client send JSON-RPC batches (2025-03-26 only:
    /// 2025-06-18 removed them).
    static bool allowsBatches(const QString &version);

    /// Sends a serialized notification (compact JSON, no newline) to the client while a request
    /// runs: notifications/progress of a tools/call that carried `_meta.progressToken`. Called
    /// on another thread than the request's; never after handle() returned.
    using Notify = std::function<void(const QByteArray &notification)>;

    Reply handle(const jsonrpc::Message &message, const Notify &notify = {});

    /// handle() as the transports need it: the response as compact JSON without a newline
    /// (empty for none). A tool's text is escaped straight into it, not put in a QJsonObject.
    struct SerializedReply
    {
        QByteArray bytes;
        bool cancelled = false;
    };
    SerializedReply handleSerialized(const jsonrpc::Message &message, const Notify &notify = {});

    /// How often a tools/call with a progress token reports progress (default 5 s). Set before
    /// the first call.
    void setProgressInterval(std::chrono::milliseconds interval) { m_progressInterval = interval; }
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
    };
    Answer answer(const jsonrpc::Message &message, const Notify &notify);
    QJsonObject initialize(const QJsonObject &params);
    QJsonObject listTools() const;
    /// A tools/call result object (its text content item empty) and the text, or a JSON-RPC
    /// fault (unknown tool, bad params).
    struct ToolCallResult
    {
        QJsonObject result;
        QString text;
    };
    std::variant<ToolCallResult, jsonrpc::Fault> callTool(const QJsonValue &id,
                                                          const QJsonObject &params,
                                                          const Notify &notify, bool *cancelled);
    void cancelRequest(const QJsonValue &requestId);

    const QString m_id;
    const McpAgentSpec m_spec;
    const SandboxPtr m_sandbox;
    const std::optional<SandboxOutputOffloadPolicy> m_offload;
    std::chrono::milliseconds m_progressInterval = defaultProgressInterval();

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
