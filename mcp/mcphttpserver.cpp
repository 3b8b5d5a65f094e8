// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcphttpserver.h"

#include "errors.h"
#include "httpcompat.h"
#include "jsonrpc.h"
#include "mcpera.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QHttpServer>
#include <QLoggingCategory>
#include <QPointer>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>

#include <algorithm>
#include <limits>
#include <optional>

Q_LOGGING_CATEGORY(lcMcpHttp, "elsai.mcp.http", QtInfoMsg)

namespace elsai {

using Status = QHttpServerResponder::StatusCode;

namespace {

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
    Pending(QHttpServerResponder &&r, QTcpSocket *connection)
        : responder(std::in_place, std::move(r)), socket(connection), tracked(connection != nullptr)
    {
    }
    ~Pending() { QObject::disconnect(hangUp); }
    bool connected() const
    {
        // A client that hung up (an aborted request) must not be written to: Qt 6.4's
        // responder keeps a raw socket pointer.
        return responder && (!tracked || !socket.isNull());
    }
    /// Qt 6.8 serves the next request on a keep-alive connection only once the responder of
    /// the one before is destroyed: a call answered with a task must let the connection go
    /// although the call itself still runs (and holds this object).
    void release() { responder.reset(); }
    void send(Status status, const httpcompat::HeaderPairs &headers, const QByteArray &body)
    {
        done = true;
        QObject::disconnect(hangUp);
        if (connected())
            httpcompat::write(*responder, status, headers, body);
        release();
    }
    /// A notification about the running request: the response becomes a server-sent event
    /// stream with the first one (a call that ends before needs none and answers JSON).
    void notify(const QByteArray &message)
    {
        if (done || !connected())
            return;
        if (!streaming) {
            httpcompat::beginChunked(*responder, Status::Ok,
                                     {{"Content-Type", "text/event-stream"},
                                      {"Cache-Control", "no-cache"},
                                      {"X-Accel-Buffering", "no"}});
            streaming = true;
        }
        httpcompat::writeChunk(*responder, sseEvent(message));
    }
    /// The JSON-RPC response: the last event of the stream, or the JSON body. Once only.
    void finish(const QByteArray &response)
    {
        if (done)
            return;
        done = true;
        QObject::disconnect(hangUp);
        if (connected()) {
            if (streaming)
                httpcompat::endChunked(*responder, sseEvent(response));
            else
                httpcompat::write(*responder, Status::Ok, {{"Content-Type", kJson}}, response);
        }
        release();
    }
    /// Calls `onHangUp` (on the server thread) if the client closes the connection before the
    /// response is complete: how a stateless request is cancelled.
    void watchHangUp(QObject *context, std::function<void()> onHangUp)
    {
        if (socket)
            hangUp =
                QObject::connect(socket, &QTcpSocket::disconnected, context, std::move(onHangUp));
    }
    static QByteArray sseEvent(const QByteArray &message)
    {
        return "event: message\ndata: " + message + "\n\n"; // compact JSON has no newline
    }
    bool streaming = false;
    bool done = false;
    std::optional<QHttpServerResponder> responder;
    QPointer<QTcpSocket> socket;
    const bool tracked;
    QMetaObject::Connection hangUp;
};

// Why a request's MCP-Protocol-Version header cannot be served (none when it can). The header
// is defined from 2025-06-18 on; without it the negotiated revision applies (the spec's
// fallback to 2025-03-26 is for servers that do not know it). A version this server does not
// implement gets 400 with UnsupportedProtocolVersionError, listing the ones it does, on every
// request and in both eras: the server speaks the stateless revision too, so the modern error
// is the truthful one. One it implements but that differs from the negotiated version is
// served: the spec only says clients SHOULD send the negotiated one.
static std::optional<jsonrpc::Fault> protocolVersionProblem(const QHttpServerRequest &request,
                                                            const QJsonValue &id = {})
{
    const QString version =
        QString::fromLatin1(httpcompat::header(request, "MCP-Protocol-Version"));
    if (version.isEmpty() || mcpera::isSupportedVersion(version))
        return std::nullopt;
    return mcpera::unsupportedVersion(id.isUndefined() ? QJsonValue::Null : id, version);
}

static void replyFault(QHttpServerResponder &r, Status status, const jsonrpc::Fault &fault,
                       httpcompat::HeaderPairs headers = {})
{
    headers.append({"Content-Type", kJson});
    httpcompat::write(r, status, headers, jsonrpc::serialize(jsonrpc::errorResponse(fault)));
}

static void replyError(QHttpServerResponder &r, Status status, const QString &message,
                       httpcompat::HeaderPairs headers = {})
{
    replyFault(r, status, jsonrpc::Fault{jsonrpc::InvalidRequest, message}, std::move(headers));
}

// A standard request header's value as the client meant it: `=?base64?…?=` is decoded (names
// that are not plain ASCII travel that way).
static QString decodedHeader(const QHttpServerRequest &request, const char *name, bool *present)
{
    const QByteArray raw = httpcompat::header(request, name);
    *present = !raw.isEmpty();
    if (raw.startsWith("=?base64?") && raw.endsWith("?=") && raw.size() >= 11)
        return QString::fromUtf8(QByteArray::fromBase64(raw.mid(9, raw.size() - 11)));
    return QString::fromUtf8(raw);
}

// The standard headers of a stateless request against its body (SEP-2243): MCP-Protocol-Version
// (its value was checked against _meta already), Mcp-Method, and Mcp-Name where the method
// names something (a tool, a task). Intermediaries may route on them, so they must agree.
static std::optional<jsonrpc::Fault> headerMismatch(const QHttpServerRequest &request,
                                                    const jsonrpc::Message &m)
{
    auto mismatch = [&](const QString &what) {
        return jsonrpc::Fault{jsonrpc::HeaderMismatch,
                              QStringLiteral("Header mismatch: %1").arg(what), m.id};
    };
    bool present = false;
    if (httpcompat::header(request, "MCP-Protocol-Version").isEmpty())
        return mismatch(QStringLiteral("the MCP-Protocol-Version header is missing"));
    const QString method = decodedHeader(request, "Mcp-Method", &present);
    if (!present)
        return mismatch(QStringLiteral("the Mcp-Method header is missing"));
    if (method != m.method)
        return mismatch(QStringLiteral("Mcp-Method header value '%1' does not match body "
                                       "value '%2'")
                            .arg(method, m.method));
    QJsonValue named;
    if (m.method == QLatin1String("tools/call"))
        named = m.params.value(QLatin1String("name"));
    else if (m.method.startsWith(QLatin1String("tasks/")))
        named = m.params.value(QLatin1String("taskId"));
    if (!named.isString())
        return std::nullopt; // nothing to mirror (the params check answers a missing one)
    const QString name = decodedHeader(request, "Mcp-Name", &present);
    if (!present)
        return mismatch(
            QStringLiteral("the Mcp-Name header is missing (%1 needs it)").arg(m.method));
    if (name != named.toString())
        return mismatch(QStringLiteral("Mcp-Name header value '%1' does not match body value "
                                       "'%2'")
                            .arg(name, named.toString()));
    return std::nullopt;
}

McpHttpServer::McpHttpServer(SandboxPtr sandbox, const QList<McpAgentSpec> &agents,
                             std::optional<SandboxOutputOffloadPolicy> offload, QObject *parent)
    : QObject(parent), m_sandbox(std::move(sandbox)), m_offload(std::move(offload)),
      m_tokens(agents), m_http(std::make_unique<QHttpServer>())
{
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
    auto tcp = std::make_unique<BodyLimitedTcpServer>(m_maxMessageBytes);
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

void McpHttpServer::setMaxMessageBytes(qint64 bytes)
{
    m_maxMessageBytes = bytes;
    if (m_tcp)
        m_tcp->setMaxBodyBytes(bytes);
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
    if (const McpSessionPtr stateless = m_stateless.take(name))
        stateless->close(); // its calls and tasks are cancelled, its agent detached
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
    for (const McpSessionPtr &stateless : std::as_const(m_stateless))
        stateless->close();
    m_stateless.clear();
    m_calls.waitForDone();
    // The calls that ended have queued their answers to this object: deliver them now, while
    // the connections their responders write to still exist. Left in the queue, they would be
    // destroyed with this object after QHttpServer, and a responder outliving its server
    // crashes on Qt 6.8.
    if (thread() == QThread::currentThread())
        QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
    if (m_tcp)
        m_tcp->close();
}

int McpHttpServer::expireIdleSessions()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QStringList idle;
    for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
        if (!busy(it.key()) && now - m_lastSeen.value(it.key(), now) >= m_idleTimeoutMs)
            idle.append(it.key());
    }
    for (const QString &id : std::as_const(idle))
        endSession(id, QStringLiteral("idle"));
    return int(idle.size());
}

bool McpHttpServer::busy(const QString &id) const
{
    const McpSessionPtr session = m_sessions.value(id);
    return m_inFlight.value(id) > 0 || (session && session->runningCalls() > 0);
}

void McpHttpServer::callDone(const QString &id)
{
    auto it = m_inFlight.find(id);
    if (it != m_inFlight.end() && --it.value() <= 0)
        m_inFlight.erase(it);
}

void McpHttpServer::touch(const QString &id)
{
    m_lastSeen.insert(id, QDateTime::currentMSecsSinceEpoch());
    m_lastUse.insert(id, ++m_useCounter); // a strict order, where clock readings may tie
}

void McpHttpServer::setSessionLimits(int total, int perAgent)
{
    m_maxSessions = qMax(1, total);
    m_maxSessionsPerAgent = qBound(1, perAgent, m_maxSessions);
}

QString McpHttpServer::admitSession(const QString &agent)
{
    const auto mine =
        std::count_if(m_sessions.cbegin(), m_sessions.cend(),
                      [&](const McpSessionPtr &s) { return s->agentSpec().name == agent; });
    if (mine >= m_maxSessionsPerAgent && !evictIdleSession(agent))
        return QStringLiteral("agent '%1' has %2 MCP sessions, each running a call; wait for "
                              "one to finish or end one with DELETE")
            .arg(agent)
            .arg(mine);
    if (m_sessions.size() >= m_maxSessions && !evictIdleSession(QString()))
        return QStringLiteral("%1 MCP sessions, each running a call; try again when one "
                              "finishes")
            .arg(m_sessions.size());
    return {};
}

bool McpHttpServer::evictIdleSession(const QString &agent)
{
    QString oldest;
    quint64 oldestUse = std::numeric_limits<quint64>::max();
    for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
        if ((!agent.isEmpty() && it.value()->agentSpec().name != agent) || busy(it.key()))
            continue;
        const quint64 use = m_lastUse.value(it.key());
        if (use < oldestUse) {
            oldestUse = use;
            oldest = it.key();
        }
    }
    if (oldest.isEmpty())
        return false;
    endSession(oldest, QStringLiteral("evicted: least recently used at the session limit"));
    return true;
}

void McpHttpServer::endSession(const QString &id, const QString &reason)
{
    m_lastSeen.remove(id);
    m_lastUse.remove(id);
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
        if (const auto problem = protocolVersionProblem(request))
            return replyFault(responder, Status::BadRequest, *problem);
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

McpSessionPtr McpHttpServer::requestSession(const QHttpServerRequest &request,
                                            QHttpServerResponder &responder,
                                            const McpAgentSpec &agent,
                                            const QString &missingMessage)
{
    const QByteArray sessionHeader = httpcompat::header(request, "Mcp-Session-Id");
    if (sessionHeader.isEmpty()) {
        replyError(responder, Status::BadRequest, missingMessage);
        return nullptr;
    }
    const McpSessionPtr session = m_sessions.value(QString::fromLatin1(sessionHeader));
    if (!session || session->agentSpec().name != agent.name) {
        replyError(responder, Status::NotFound,
                   QStringLiteral("unknown MCP session (ended, revoked, or another agent's); "
                                  "initialize a new one"));
        return nullptr;
    }
    if (const auto problem = protocolVersionProblem(request)) {
        replyFault(responder, Status::BadRequest, *problem);
        return nullptr;
    }
    touch(session->id());
    return session;
}

void McpHttpServer::serveBatch(const QHttpServerRequest &request, QHttpServerResponder &responder,
                               const McpAgentSpec &agent, QList<jsonrpc::ParseResult> batch)
{
    const McpSessionPtr session = requestSession(
        request, responder, agent,
        QStringLiteral("a JSON-RPC batch needs an Mcp-Session-Id header (and initialize may "
                       "not be part of one)"));
    if (!session)
        return;
    if (!session->acceptsBatches())
        return replyError(responder, Status::BadRequest,
                          QStringLiteral("JSON-RPC batches are part of MCP 2025-03-26 only, and "
                                         "this session speaks %1: send one message per request")
                              .arg(session->protocolVersion()));
    const bool hasRequest = std::any_of(batch.cbegin(), batch.cend(), [](const auto &item) {
        const auto *m = std::get_if<jsonrpc::Message>(&item);
        return !m || m->isRequest(); // an invalid item is answered with an error
    });
    if (!hasRequest) {
        session->handleBatch(batch);
        return httpcompat::write(responder, Status::Accepted, {}, {});
    }
    // It may hold tool calls: off the server thread, like one.
    auto pending =
        std::make_shared<Pending>(std::move(responder), connectionOf(request, responder));
    ++m_inFlight[session->id()];
    m_calls.start(agent.name, [this, pending, session, batch = std::move(batch)] {
        const QByteArray body = session->handleBatch(batch);
        QMetaObject::invokeMethod(
            this,
            [this, id = session->id(), pending, body] {
                callDone(id);
                if (body.isEmpty()) // every request was cancelled
                    pending->send(Status::Accepted, {}, {});
                else
                    pending->finish(body);
            },
            Qt::QueuedConnection);
    });
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

    if (request.body().size() > m_maxMessageBytes) // the socket guard refuses these earlier
        return replyError(responder, Status::PayloadTooLarge,
                          QStringLiteral("request body over %1 bytes").arg(m_maxMessageBytes));
    jsonrpc::Payload payload = jsonrpc::parsePayload(request.body());
    if (payload.batch)
        return serveBatch(request, responder, agent, std::move(*payload.batch));
    const jsonrpc::ParseResult &parsed = payload.single;
    if (const auto *fault = std::get_if<jsonrpc::Fault>(&parsed))
        return httpcompat::write(responder, Status::BadRequest, {{"Content-Type", kJson}},
                                 jsonrpc::serialize(jsonrpc::errorResponse(*fault)));
    const jsonrpc::Message &message = std::get<jsonrpc::Message>(parsed);
    const QString versionHeader =
        QString::fromLatin1(httpcompat::header(request, "MCP-Protocol-Version"));
    if (mcpera::classify(message, versionHeader) == mcpera::Era::Modern)
        return serveModern(request, responder, agent, message);

    if (message.isRequest() && message.method == QLatin1String("initialize")) {
        if (const auto problem = protocolVersionProblem(request, message.id))
            return replyFault(responder, Status::BadRequest, *problem);
        if (!versionHeader.isEmpty() && !mcpera::isLegacyVersion(versionHeader))
            return replyFault(
                responder, Status::BadRequest,
                {jsonrpc::InvalidRequest,
                 QStringLiteral("initialize opens a session of a session-based revision, but "
                                "MCP-Protocol-Version says %1, which needs no initialize: send "
                                "its requests (with params._meta) directly")
                     .arg(versionHeader),
                 message.id});
        if (const QString full = admitSession(agent.name); !full.isEmpty())
            return replyError(responder, Status::ServiceUnavailable, full);
        auto session = std::make_shared<McpSession>(newSessionId(), agent, m_sandbox, m_offload);
        session->setProgressInterval(m_progressInterval);
        const McpSession::Reply reply = session->handle(message);
        const bool ok = session->isInitialized();
        if (ok) {
            m_sessions.insert(session->id(), session);
            touch(session->id());
            Q_EMIT sessionStarted(session->id(), agent.name);
        }
        httpcompat::HeaderPairs headers{{"Content-Type", kJson}};
        if (ok)
            headers.append({"Mcp-Session-Id", session->id().toLatin1()});
        return httpcompat::write(responder, Status::Ok, headers,
                                 jsonrpc::serialize(*reply.response));
    }

    const McpSessionPtr session = requestSession(
        request, responder, agent,
        QStringLiteral("missing Mcp-Session-Id header: send initialize first and repeat the id "
                       "it returns"));
    if (!session)
        return;
    if (!message.isRequest()) {
        session->handle(message); // notifications (cancel) are quick: answer inline
        return httpcompat::write(responder, Status::Accepted, {}, {});
    }
    if (message.method != QLatin1String("tools/call")) {
        return httpcompat::write(responder, Status::Ok, {{"Content-Type", kJson}},
                                 session->handleSerialized(message).bytes);
    }
    // A tool call may run for minutes: off the server thread, answered when done. Its
    // progress notifications (when it asked for them) go on an SSE stream of this response.
    const bool acceptsStream = accept.contains("text/event-stream");
    QTcpSocket *connection = connectionOf(request, responder);
    auto pending = std::make_shared<Pending>(std::move(responder), connection);
    ++m_inFlight[session->id()]; // queued calls count: the session is not idle
    m_calls.start(agent.name, [this, pending, session, message, acceptsStream] {
        McpSession::Notify notify;
        if (acceptsStream) {
            notify = [this, pending](const QByteArray &notification) {
                QMetaObject::invokeMethod(
                    this, [pending, notification] { pending->notify(notification); },
                    Qt::QueuedConnection);
            };
        }
        const QByteArray body = session->handleSerialized(message, notify).bytes;
        QMetaObject::invokeMethod(
            this,
            [this, id = session->id(), pending, body] {
                callDone(id);
                pending->finish(body);
            },
            Qt::QueuedConnection);
    });
}

QTcpSocket *McpHttpServer::connectionOf(const QHttpServerRequest &request,
                                        QHttpServerResponder &responder) const
{
#if QT_VERSION < QT_VERSION_CHECK(6, 8, 0)
    Q_UNUSED(request);
    return responder.socket();
#else
    Q_UNUSED(responder);
    return m_tcp ? m_tcp->connectionFrom(request.remoteAddress(), request.remotePort()) : nullptr;
#endif
}

McpSessionPtr McpHttpServer::statelessSession(const McpAgentSpec &agent)
{
    McpSessionPtr &session = m_stateless[agent.name];
    if (!session) {
        session = std::make_shared<McpSession>(QStringLiteral("stateless:") + agent.name, agent,
                                               m_sandbox, m_offload);
        session->setProgressInterval(m_progressInterval);
        if (m_taskThreshold)
            session->setTaskThreshold(*m_taskThreshold);
    }
    return session;
}

void McpHttpServer::serveModern(const QHttpServerRequest &request, QHttpServerResponder &responder,
                                const McpAgentSpec &agent, const jsonrpc::Message &message)
{
    // A notification POST: accepted and dropped. This revision defines none over HTTP (a
    // request is cancelled by closing its response stream), and an id in a
    // notifications/cancelled would be ambiguous across the stateless clients of an agent.
    if (message.isNotification())
        return httpcompat::write(responder, Status::Accepted, {}, {});
    if (!message.isRequest())
        return replyError(responder, Status::BadRequest,
                          QStringLiteral("clients send requests and notifications only; this "
                                         "server sends no requests to answer"));
    // An unsupported version header is 400 in both eras, and so is the stateless revision's
    // header on a request of a session (sessions speak the version they negotiated).
    if (const auto problem = protocolVersionProblem(request, message.id))
        return replyFault(responder, Status::BadRequest, *problem);
    if (!httpcompat::header(request, "Mcp-Session-Id").isEmpty())
        return replyFault(
            responder, Status::BadRequest,
            {jsonrpc::InvalidRequest,
             QStringLiteral("MCP-Protocol-Version '%1' on a request of a session: "
                            "a session speaks the version its initialize "
                            "negotiated, and MCP %1 has no sessions")
                 .arg(QString::fromLatin1(httpcompat::header(request, "MCP-Protocol-Version"))),
             message.id});
    // An unknown method (or one this revision removed: initialize, ping, tasks/result) is
    // refused before anything else about the request is judged.
    if (!McpSession::servesStatelessMethod(message.method))
        return replyFault(responder, Status::NotFound,
                          {jsonrpc::MethodNotFound,
                           QStringLiteral("Method not found: '%1' is not part of MCP %2 here")
                               .arg(message.method, mcpera::modernVersion()),
                           message.id});
    const QString versionHeader =
        QString::fromLatin1(httpcompat::header(request, "MCP-Protocol-Version"));
    const auto envelope = mcpera::parseEnvelope(message, versionHeader);
    if (const auto *fault = std::get_if<jsonrpc::Fault>(&envelope))
        return replyFault(responder, Status::BadRequest, *fault);
    if (const auto mismatch = headerMismatch(request, message))
        return replyFault(responder, Status::BadRequest, *mismatch);
    if (const auto missing =
            McpSession::missingCapability(message, std::get<mcpera::Envelope>(envelope)))
        return replyFault(responder, Status::BadRequest, *missing);
    const McpSessionPtr session = statelessSession(agent);
    const QByteArray accept = httpcompat::header(request, "Accept").toLower();
    const bool acceptsStream = accept.contains("text/event-stream");
    const bool calls = message.method == QLatin1String("tools/call");
    const bool listens = message.method == QLatin1String("subscriptions/listen");
    if (!calls && !listens) {
        const McpSession::SerializedReply reply = session->handleSerialized(message);
        return httpcompat::write(responder, Status::Ok, {{"Content-Type", kJson}}, reply.bytes);
    }
    // A call may run for minutes, and a listen stream stays open: both are answered later. The
    // client closing the connection cancels them (this revision's cancellation).
    QTcpSocket *connection = connectionOf(request, responder);
    auto pending = std::make_shared<Pending>(std::move(responder), connection);
    const QString runKey = QStringLiteral("h:%1").arg(++m_statelessRuns);
    pending->watchHangUp(this, [session, runKey] { session->cancelRun(runKey); });
    McpSession::CallContext context;
    context.runKey = runKey;
    if (acceptsStream) {
        context.notify = [this, pending](const QByteArray &notification) {
            QMetaObject::invokeMethod(
                this, [pending, notification] { pending->notify(notification); },
                Qt::QueuedConnection);
        };
    }
    if (listens) {
        const McpSession::SerializedReply reply = session->handleSerialized(message, context);
        if (!reply.keepOpen)
            pending->finish(reply.bytes); // refused: an error response
        return;
    }
    context.respond = [this, pending](const QByteArray &response) {
        QMetaObject::invokeMethod(
            this, [pending, response] { pending->finish(response); }, Qt::QueuedConnection);
    };
    ++m_inFlight[session->id()];
    m_calls.start(agent.name, [this, pending, session, message, context] {
        const McpSession::SerializedReply reply = session->handleSerialized(message, context);
        QMetaObject::invokeMethod(
            this,
            [this, id = session->id(), pending, reply] {
                callDone(id);
                if (!reply.answered)
                    pending->finish(reply.bytes);
            },
            Qt::QueuedConnection);
    });
}

} // namespace elsai
