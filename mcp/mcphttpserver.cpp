#include "mcphttpserver.h"

#include "errors.h"
#include "httpcompat.h"
#include "jsonrpc.h"

#include <QDateTime>
#include <QHttpServer>
#include <QLoggingCategory>
#include <QPointer>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>

Q_LOGGING_CATEGORY(lcMcpHttp, "elsai.mcp.http", QtInfoMsg)

namespace elsai {

using Status = QHttpServerResponder::StatusCode;

namespace {

constexpr int kMaxSessions = 256;
constexpr int kMaxConcurrentCalls = 64;

QString newSessionId()
{
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    return QString::fromLatin1(
        QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex());
}

const QByteArray kJson("application/json");

} // namespace

/// A response that is written later, on the server thread, after a worker finished.
struct McpHttpServer::Pending
{
    explicit Pending(QHttpServerResponder &&r)
        : responder(std::move(r))
#if QT_VERSION < QT_VERSION_CHECK(6, 8, 0)
          ,
          socket(responder.socket())
#endif
    {
    }
    void send(Status status, const httpcompat::HeaderPairs &headers, const QByteArray &body)
    {
#if QT_VERSION < QT_VERSION_CHECK(6, 8, 0)
        // Qt 6.4's responder keeps a raw socket pointer: a client that hung up (an aborted
        // request) must not be written to.
        if (!socket)
            return;
#endif
        httpcompat::write(responder, status, headers, body);
    }
    QHttpServerResponder responder;
#if QT_VERSION < QT_VERSION_CHECK(6, 8, 0)
    QPointer<QTcpSocket> socket;
#endif
};

static void replyError(QHttpServerResponder &r, Status status, const QString &message,
                       httpcompat::HeaderPairs headers = {})
{
    headers.append({"Content-Type", kJson});
    httpcompat::write(r, status, headers,
                      jsonrpc::serialize(jsonrpc::errorResponse(QJsonValue::Null,
                                                                jsonrpc::InvalidRequest, message)));
}

McpHttpServer::McpHttpServer(SandboxPtr sandbox, const QList<McpAgentSpec> &agents,
                             std::optional<SandboxOutputOffloadPolicy> offload, QObject *parent)
    : QObject(parent), m_sandbox(std::move(sandbox)), m_offload(std::move(offload)),
      m_tokens(agents), m_http(std::make_unique<QHttpServer>())
{
    m_pool.setMaxThreadCount(kMaxConcurrentCalls);
    m_idleTimer.setInterval(60 * 1000);
    connect(&m_idleTimer, &QTimer::timeout, this, &McpHttpServer::expireIdleSessions);
    m_idleTimer.start();
    // Qt 6.4 answers bool, 6.8 the rule; either way the route is registered.
    [[maybe_unused]] const auto rule =
        m_http->route(QStringLiteral("/mcp"),
                      [this](const QHttpServerRequest &request,
                             httpcompat::RouteResponder responder) { serve(request, responder); });
}

McpHttpServer::~McpHttpServer()
{
    close();
}

void McpHttpServer::listen(const QHostAddress &address, quint16 port, bool allowRemote)
{
    if (!address.isLoopback() && !allowRemote)
        throw ValueError(QStringLiteral("refusing to serve MCP on %1, which is not a loopback "
                                        "address: anyone on the network could try tokens. Use "
                                        "127.0.0.1, or pass --mcp-allow-remote")
                             .arg(address.toString()));
    if (m_tcp)
        throw ValueError(
            QStringLiteral("the MCP server is already listening on port %1").arg(port));
    auto tcp = std::make_unique<QTcpServer>();
    if (!tcp->listen(address, port))
        throw OSError(QStringLiteral("cannot listen on %1:%2 for MCP: %3")
                          .arg(address.toString())
                          .arg(port)
                          .arg(tcp->errorString()));
    m_tcp = tcp.release();
    m_tcp->setParent(m_http.get());
    if (!httpcompat::bind(*m_http, m_tcp))
        throw OSError(
            QStringLiteral("cannot serve MCP on %1:%2").arg(address.toString()).arg(port));
    m_address = address;
    m_allowRemote = allowRemote;
    qCInfo(lcMcpHttp).noquote() << "MCP server on" << url().toString();
}

bool McpHttpServer::isListening() const
{
    return m_tcp && m_tcp->isListening();
}

quint16 McpHttpServer::port() const
{
    return m_tcp ? m_tcp->serverPort() : 0;
}

QUrl McpHttpServer::url() const
{
    QUrl u;
    u.setScheme(QStringLiteral("http"));
    u.setHost(m_address.toString());
    u.setPort(port());
    u.setPath(QStringLiteral("/mcp"));
    return u;
}

void McpHttpServer::addAgent(const McpAgentSpec &agent)
{
    QList<McpAgentSpec> agents = m_tokens.agents();
    agents.append(agent);
    m_tokens = McpTokenTable(agents); // validates
    Q_EMIT agentsChanged();
}

int McpHttpServer::revokeAgent(const QString &name)
{
    QList<McpAgentSpec> agents = m_tokens.agents();
    agents.removeIf([&](const McpAgentSpec &a) { return a.name == name; });
    m_tokens = McpTokenTable(agents);
    QStringList ended;
    for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
        if (it.value()->agentSpec().name == name)
            ended.append(it.key());
    }
    for (const QString &id : std::as_const(ended))
        endSession(id, QStringLiteral("token revoked"));
    Q_EMIT agentsChanged();
    return int(ended.size());
}

QList<McpSessionInfo> McpHttpServer::sessions() const
{
    QList<McpSessionInfo> out;
    for (const McpSessionPtr &s : m_sessions) {
        out.append({s->id(), s->agentSpec().name, s->agentSpec().mode,
                    s->clientInfo().value(QLatin1String("name")).toString(), s->protocolVersion(),
                    s->runningCalls()});
    }
    return out;
}

void McpHttpServer::close()
{
    const QStringList ids = m_sessions.keys();
    for (const QString &id : ids)
        endSession(id, QStringLiteral("server stopped"));
    m_pool.waitForDone();
    if (m_tcp)
        m_tcp->close();
}

int McpHttpServer::expireIdleSessions()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QStringList idle;
    for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
        if (it.value()->runningCalls() == 0 &&
            now - m_lastSeen.value(it.key(), now) >= m_idleTimeoutMs)
            idle.append(it.key());
    }
    for (const QString &id : std::as_const(idle))
        endSession(id, QStringLiteral("idle"));
    return int(idle.size());
}

void McpHttpServer::endSession(const QString &id, const QString &reason)
{
    m_lastSeen.remove(id);
    const McpSessionPtr session = m_sessions.take(id);
    if (!session)
        return;
    session->close();
    qCInfo(lcMcpHttp).noquote() << "session" << id << "of" << session->agentSpec().name
                                << "ended:" << reason;
    Q_EMIT sessionEnded(id, session->agentSpec().name, reason);
}

bool McpHttpServer::hostAllowed(const QString &host) const
{
    const QString h = host.toLower();
    if (h == QLatin1String("localhost") || QHostAddress(h).isLoopback())
        return true;
    return m_allowRemote && !h.isEmpty() && QHostAddress(h) == m_address;
}

bool McpHttpServer::originAllowed(const QByteArray &origin, const QByteArray &hostHeader) const
{
    // A rebound name reaches this server with the attacker's name in Host (and Origin).
    if (!hostHeader.isEmpty()) {
        const QUrl host(QStringLiteral("http://") + QString::fromLatin1(hostHeader));
        if (!host.isValid() || !hostAllowed(host.host()))
            return false;
    }
    if (origin.isEmpty())
        return true; // not a browser
    const QUrl url(QString::fromUtf8(origin));
    if (!url.isValid() || url.host().isEmpty())
        return false; // "null" and garbage
    return hostAllowed(url.host());
}

void McpHttpServer::serve(const QHttpServerRequest &request, QHttpServerResponder &responder)
{
    // The token comes first: without one, nothing else about the server is revealed.
    const auto agent = m_tokens.authorize(httpcompat::header(request, "Authorization"));
    if (!agent) {
        qCInfo(lcMcpHttp).noquote()
            << "refused a request without a valid token from" << request.remoteAddress().toString();
        return replyError(responder, Status::Unauthorized,
                          QStringLiteral("missing or wrong bearer token: send "
                                         "'Authorization: Bearer <token>' with the token printed "
                                         "for your agent"),
                          {{"WWW-Authenticate", "Bearer realm=\"elsai-mcp\""}});
    }
    if (!originAllowed(httpcompat::header(request, "Origin"), httpcompat::header(request, "Host")))
        return replyError(responder, Status::Forbidden,
                          QStringLiteral("foreign Origin or Host refused (DNS rebinding "
                                         "protection); connect to 127.0.0.1 from a local client"));
    const QByteArray sessionId = httpcompat::header(request, "Mcp-Session-Id");
    switch (request.method()) {
    case QHttpServerRequest::Method::Post:
        return servePost(request, responder, *agent);
    case QHttpServerRequest::Method::Delete: {
        const McpSessionPtr session = m_sessions.value(QString::fromLatin1(sessionId));
        if (sessionId.isEmpty())
            return replyError(responder, Status::BadRequest,
                              QStringLiteral("DELETE needs the Mcp-Session-Id header"));
        if (!session || session->agentSpec().name != agent->name)
            return replyError(responder, Status::NotFound,
                              QStringLiteral("unknown MCP session; it may have ended already"));
        endSession(session->id(), QStringLiteral("closed by the client"));
        return httpcompat::write(responder, Status::Ok, {}, {});
    }
    default:
        return replyError(responder, Status::MethodNotAllowed,
                          QStringLiteral("this MCP endpoint takes POST (messages) and DELETE "
                                         "(end a session); it opens no server-sent event stream"),
                          {{"Allow", "POST, DELETE"}});
    }
}

void McpHttpServer::servePost(const QHttpServerRequest &request, QHttpServerResponder &responder,
                              const McpAgentSpec &agent)
{
    const QByteArray contentType = httpcompat::header(request, "Content-Type").toLower();
    if (!contentType.isEmpty() && !contentType.startsWith(kJson))
        return replyError(responder, Status::UnsupportedMediaType,
                          QStringLiteral("POST a JSON-RPC message as application/json"));
    const QByteArray accept = httpcompat::header(request, "Accept").toLower();
    if (!accept.isEmpty() && !accept.contains(kJson) && !accept.contains("*/*"))
        return replyError(responder, Status::NotAcceptable,
                          QStringLiteral("this server answers application/json; accept it"));

    const jsonrpc::ParseResult parsed = jsonrpc::parse(request.body());
    if (const auto *fault = std::get_if<jsonrpc::Fault>(&parsed))
        return httpcompat::write(responder, Status::BadRequest, {{"Content-Type", kJson}},
                                 jsonrpc::serialize(jsonrpc::errorResponse(*fault)));
    const jsonrpc::Message &message = std::get<jsonrpc::Message>(parsed);
    const QByteArray sessionHeader = httpcompat::header(request, "Mcp-Session-Id");

    if (message.isRequest() && message.method == QLatin1String("initialize")) {
        if (m_sessions.size() >= kMaxSessions)
            return replyError(responder, Status::ServiceUnavailable,
                              QStringLiteral("too many MCP sessions (%1); end unused ones with "
                                             "DELETE")
                                  .arg(kMaxSessions));
        auto session = std::make_shared<McpSession>(newSessionId(), agent, m_sandbox, m_offload);
        const McpSession::Reply reply = session->handle(message);
        const bool ok = session->isInitialized();
        if (ok) {
            m_sessions.insert(session->id(), session);
            m_lastSeen.insert(session->id(), QDateTime::currentMSecsSinceEpoch());
            Q_EMIT sessionStarted(session->id(), agent.name);
        }
        httpcompat::HeaderPairs headers{{"Content-Type", kJson}};
        if (ok)
            headers.append({"Mcp-Session-Id", session->id().toLatin1()});
        return httpcompat::write(responder, Status::Ok, headers,
                                 jsonrpc::serialize(*reply.response));
    }

    if (sessionHeader.isEmpty())
        return replyError(responder, Status::BadRequest,
                          QStringLiteral("missing Mcp-Session-Id header: send initialize first "
                                         "and repeat the id it returns"));
    const McpSessionPtr session = m_sessions.value(QString::fromLatin1(sessionHeader));
    if (!session || session->agentSpec().name != agent.name)
        return replyError(responder, Status::NotFound,
                          QStringLiteral("unknown MCP session (ended, revoked, or another "
                                         "agent's); initialize a new one"));
    const QByteArray version = httpcompat::header(request, "MCP-Protocol-Version");
    if (!version.isEmpty() &&
        !McpSession::isAcceptableProtocolVersion(QString::fromLatin1(version)))
        return replyError(
            responder, Status::BadRequest,
            QStringLiteral("unsupported MCP-Protocol-Version '%1'; supported: %2")
                .arg(QString::fromLatin1(version),
                     McpSession::supportedProtocolVersions().join(QStringLiteral(", "))));

    m_lastSeen.insert(session->id(), QDateTime::currentMSecsSinceEpoch());
    if (!message.isRequest()) {
        session->handle(message); // notifications (cancel) are quick: answer inline
        return httpcompat::write(responder, Status::Accepted, {}, {});
    }
    if (message.method != QLatin1String("tools/call")) {
        return httpcompat::write(responder, Status::Ok, {{"Content-Type", kJson}},
                                 session->handleSerialized(message).bytes);
    }
    // A tool call may run for minutes: off the server thread, answered when done.
    auto pending = std::make_shared<Pending>(std::move(responder));
    m_pool.start([this, pending, session, message] {
        const QByteArray body = session->handleSerialized(message).bytes;
        QMetaObject::invokeMethod(
            this,
            [pending, body] {
                pending->send(Status::Ok, {{"Content-Type", kJson}}, body);
            },
            Qt::QueuedConnection);
    });
}

} // namespace elsai
