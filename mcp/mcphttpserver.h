#pragma once

#include "mcpagentspec.h"
#include "mcpsession.h"
#include "offload.h"
#include "sandbox.h"

#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QThreadPool>
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

/// The MCP Streamable HTTP transport of one sandbox (revision 2025-06-18), on QHttpServer.
///
/// Endpoint `/mcp`: POST carries one JSON-RPC message and gets a JSON response (202 for
/// notifications), GET answers 405 (no server-initiated stream), DELETE ends a session.
/// Every request is checked in this order: bearer token (401), Origin and Host (403), method
/// (405), Mcp-Session-Id (400 missing / 404 unknown or another agent's), MCP-Protocol-Version
/// (400).
/// tools/call runs on a worker pool so a long command in one session never blocks another.
/// Lives on the thread that created it (its event loop serves the sockets).
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
    /// Sessions without a request for this long (and no call running) are ended, so clients
    /// that vanish without DELETE do not pile up. Default 30 minutes; checked every minute.
    void setSessionIdleTimeout(int seconds) { m_idleTimeoutMs = qint64(seconds) * 1000; }
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
    void endSession(const QString &id, const QString &reason);

    const SandboxPtr m_sandbox;
    const std::optional<SandboxOutputOffloadPolicy> m_offload;
    McpTokenTable m_tokens;
    std::unique_ptr<QHttpServer> m_http;
    QTcpServer *m_tcp = nullptr; // owned by m_http
    QHostAddress m_address;
    bool m_allowRemote = false;
    QHash<QString, McpSessionPtr> m_sessions;
    QHash<QString, qint64> m_lastSeen; ///< msecs since epoch of each session's last request
    qint64 m_idleTimeoutMs = 30 * 60 * 1000;
    QTimer m_idleTimer;
    QThreadPool m_pool;
};

} // namespace elsai
