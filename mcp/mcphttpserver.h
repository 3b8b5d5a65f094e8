// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "fairscheduler.h"
#include "httpbodylimit.h"
#include "jsonrpc.h"
#include "mcpagentspec.h"
#include "mcpsession.h"
#include "offload.h"
#include "sandbox.h"

#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QTimer>
#include <QUrl>

#include <memory>
#include <optional>

class QHttpServer;
class QHttpServerRequest;
class QHttpServerResponder;
class QTcpServer;

namespace elsai {

/// A connected MCP session as the window and the tests see it.
struct McpSessionInfo
{
    QString sessionId;
    QString agent;
    SandboxAttachMode mode = SandboxAttachMode::ReadOnly;
    QString clientName;
    QString protocolVersion;
    int runningCalls = 0;
};

/// The MCP Streamable HTTP transport of one sandbox, on QHttpServer: the session-based revisions
/// 2024-11-05 to 2025-11-25 and the stateless 2026-07-28 on the same endpoint, chosen per request
/// (mcpera::classify).
///
/// Endpoint `/mcp`: POST carries one JSON-RPC message and gets a JSON response (202 for
/// notifications; a tools/call with a progress token may get an SSE stream instead), GET answers
/// 405 (no server-initiated stream), DELETE ends a session. Every request is checked in this order:
/// bearer token (401), Origin and Host (403), method (405); then a session request its
/// Mcp-Session-Id (400 missing / 404 unknown or another agent's) and MCP-Protocol-Version (400),
/// a stateless one its `_meta` and standard headers (400 with the spec's error; 404 for an
/// unknown method). tools/call runs on a worker pool so a long command in one session never
/// blocks another. Lives on the thread that created it (its event loop serves the sockets).
class McpHttpServer : public QObject
{
    Q_OBJECT

public:
    McpHttpServer(SandboxPtr sandbox, const QList<McpAgentSpec> &agents,
                  std::optional<SandboxOutputOffloadPolicy> offload = std::nullopt,
                  QObject *parent = nullptr);
    ~McpHttpServer() override;

    /// Listens on address:port (0 = any free port). A non-loopback address is refused with
    /// ValueError unless `allowRemote`; OSError when the port cannot be bound.
    void listen(const QHostAddress &address, quint16 port, bool allowRemote = false);
    bool isListening() const;
    quint16 port() const;
    /// http://HOST:PORT/mcp
    QUrl url() const;

    const McpTokenTable &tokens() const { return m_tokens; }
    /// Adds an agent (ValueError on a duplicate name or token).
    void addAgent(const McpAgentSpec &agent);
    /// Removes the agent's token and ends its sessions at once (their agents detach).
    /// Returns the number of sessions ended.
    int revokeAgent(const QString &name);

    QList<McpSessionInfo> sessions() const;
    /// Session caps: at most `total` sessions, at most `perAgent` of one agent (defaults 256
    /// and 64). A new session over a cap ends the least recently used idle session (no call
    /// running) of that agent, or of all agents for the total cap: clients that never send
    /// DELETE cannot lock anyone out, and an evicted client gets 404 and initializes again.
    /// 503 only when every session in the way is running a call.
    void setSessionLimits(int total, int perAgent);
    /// Tool calls run on `total` workers, at most `perAgent` of them for one agent (defaults
    /// 64 and 48), queued tasks taken round-robin over the agents (FairScheduler).
    void setCallLimits(int total, int perAgent) { m_calls.setLimits(total, perAgent); }
    /// Tool calls of an agent running / waiting for a worker.
    int runningCalls(const QString &agent) const { return m_calls.running(agent); }
    int queuedCalls(const QString &agent) const { return m_calls.queued(agent); }
    /// Sessions without a request for this long (and no call running) are ended, so clients
    /// that vanish without DELETE do not pile up. Default 30 minutes; checked every minute.
    void setSessionIdleTimeout(int seconds) { m_idleTimeoutMs = qint64(seconds) * 1000; }
    /// How often a long tools/call that asked for progress reports it (default 5 s): the
    /// response becomes a server-sent event stream carrying notifications/progress.
    void setProgressInterval(std::chrono::milliseconds interval) { m_progressInterval = interval; }
    /// How long a stateless tools/call runs before it becomes a task, for clients that declared
    /// the Tasks extension (default: the progress interval).
    void setTaskThreshold(std::chrono::milliseconds threshold) { m_taskThreshold = threshold; }
    /// The largest request body taken (default kDefaultMaxMcpMessageBytes, as for stdio): a
    /// bigger one is refused with 413 before it is buffered.
    void setMaxMessageBytes(qint64 bytes);
    qint64 maxMessageBytes() const { return m_maxMessageBytes; }
    /// Ends the idle sessions now; returns how many.
    int expireIdleSessions();
    /// Ends every session (running calls are cancelled) and stops listening.
    void close();

Q_SIGNALS:
    void sessionStarted(const QString &sessionId, const QString &agent);
    void sessionEnded(const QString &sessionId, const QString &agent, const QString &reason);
    void agentsChanged();

private:
    struct Pending;
    void serve(const QHttpServerRequest &request, QHttpServerResponder &responder);
    bool hostAllowed(const QString &host) const;
    /// Origin (when sent) and Host must name this server: loopback, or its own address with
    /// --mcp-allow-remote.
    bool originAllowed(const QByteArray &origin, const QByteArray &hostHeader) const;
    void servePost(const QHttpServerRequest &request, QHttpServerResponder &responder,
                   const McpAgentSpec &agent);
    /// The session a request names (Mcp-Session-Id of this agent, a version header that fits
    /// it), marked as seen; null after answering why not.
    McpSessionPtr requestSession(const QHttpServerRequest &request, QHttpServerResponder &responder,
                                 const McpAgentSpec &agent, const QString &missingMessage);
    void serveBatch(const QHttpServerRequest &request, QHttpServerResponder &responder,
                    const McpAgentSpec &agent, QList<jsonrpc::ParseResult> batch);
    /// A request of the stateless revision: envelope and standard headers checked (400 with
    /// the spec's error), unknown methods 404, then served by the agent's stateless session.
    void serveModern(const QHttpServerRequest &request, QHttpServerResponder &responder,
                     const McpAgentSpec &agent, const jsonrpc::Message &message);
    /// The agent's session for stateless requests (made on the first one).
    McpSessionPtr statelessSession(const McpAgentSpec &agent);
    /// The connection a request came on (to notice a client that hangs up), if known.
    QTcpSocket *connectionOf(const QHttpServerRequest &request,
                             QHttpServerResponder &responder) const;
    void endSession(const QString &id, const QString &reason);
    /// Whether a tool call of the session is queued or running (it is then never evicted).
    bool busy(const QString &id) const;
    /// A call handed to m_calls was answered (server thread).
    void callDone(const QString &id);
    /// Notes a request of the session (idle expiry, LRU order).
    void touch(const QString &id);
    /// Makes room for a new session of `agent` under the caps; the refusal message if none.
    QString admitSession(const QString &agent);
    /// Ends the least recently used session without a running call (of `agent` when given).
    bool evictIdleSession(const QString &agent);

    const SandboxPtr m_sandbox;
    const std::optional<SandboxOutputOffloadPolicy> m_offload;
    McpTokenTable m_tokens;
    std::unique_ptr<QHttpServer> m_http;
    BodyLimitedTcpServer *m_tcp = nullptr; // owned by m_http
    qint64 m_maxMessageBytes = kDefaultMaxMcpMessageBytes;
    QHostAddress m_address;
    bool m_allowRemote = false;
    QHash<QString, McpSessionPtr> m_sessions;
    /// Per agent name: the session serving its stateless (2026-07-28) requests, whatever
    /// client sends them. Not counted against the session caps; ends with revocation.
    QHash<QString, McpSessionPtr> m_stateless;
    quint64 m_statelessRuns = 0;
    std::optional<std::chrono::milliseconds> m_taskThreshold;
    QHash<QString, qint64> m_lastSeen; ///< msecs since epoch of each session's last request
    QHash<QString, quint64> m_lastUse; ///< m_useCounter at each session's last request (LRU)
    quint64 m_useCounter = 0;
    QHash<QString, int> m_inFlight; ///< tool calls handed to m_calls and not yet answered
    qint64 m_idleTimeoutMs = 30 * 60 * 1000;
    std::chrono::milliseconds m_progressInterval = McpSession::defaultProgressInterval();
    QTimer m_idleTimer;
    int m_maxSessions = 256;
    int m_maxSessionsPerAgent = 64;
    FairScheduler m_calls{64, 48};
};

} // namespace elsai
