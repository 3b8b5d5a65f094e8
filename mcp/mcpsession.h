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
    /// True for a revision this server implements or a later one (the client's choice is kept:
    /// the tools subset has not changed incompatibly).
    static bool isAcceptableProtocolVersion(const QString &version);

    Reply handle(const jsonrpc::Message &message);

    /// handle() as the transports need it: the response as compact JSON without a newline
    /// (empty for none). A tool's text is escaped straight into it, not put in a QJsonObject.
    struct SerializedReply
    {
        QByteArray bytes;
        bool cancelled = false;
    };
    SerializedReply handleSerialized(const jsonrpc::Message &message);

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
    Answer answer(const jsonrpc::Message &message);
    QJsonObject initialize(const QJsonObject &params);
    QJsonObject listTools() const;
    /// A tools/call result object (its text content item empty) and the text, or a JSON-RPC
    /// fault (unknown tool, bad params).
    struct ToolCallResult
    {
        QJsonObject result;
        QString text;
    };
    std::variant<ToolCallResult, jsonrpc::Fault>
    callTool(const QJsonValue &id, const QJsonObject &params, bool *cancelled);
    void cancelRequest(const QJsonValue &requestId);

    const QString m_id;
    const McpAgentSpec m_spec;
    const SandboxPtr m_sandbox;
    const std::optional<SandboxOutputOffloadPolicy> m_offload;

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
