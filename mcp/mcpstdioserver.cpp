// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcpstdioserver.h"

#include "jsonrpc.h"

#include <QLoggingCategory>
#include <QThread>

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcMcpStdio, "elsai.mcp.stdio", QtInfoMsg)

namespace elsai {

McpStdioServer::McpStdioServer(SandboxPtr sandbox, McpAgentSpec agent,
                               std::optional<SandboxOutputOffloadPolicy> offload, int inputFd,
                               int outputFd, QObject *parent)
    : QObject(parent),
      m_session(std::make_shared<McpSession>(QStringLiteral("stdio"), std::move(agent),
                                             std::move(sandbox), std::move(offload))),
      m_inFd(inputFd), m_outFd(outputFd)
{
    m_pool.setMaxThreadCount(16);
    // O_CLOEXEC: a command given its write end could stop this server's reader.
    if (::pipe2(m_wakePipe, O_CLOEXEC) != 0)
        m_wakePipe[0] = m_wakePipe[1] = -1;
}

McpStdioServer::~McpStdioServer()
{
    m_session->close();
    if (m_reader) {
        // Wakes a reader still waiting for input (the server is stopped by a signal).
        const char c = 1;
        [[maybe_unused]] const ssize_t n = ::write(m_wakePipe[1], &c, 1);
        m_reader->wait();
        delete m_reader;
    }
    m_pool.waitForDone();
    for (int fd : m_wakePipe) {
        if (fd >= 0)
            ::close(fd);
    }
}

void McpStdioServer::start()
{
    m_reader = QThread::create([this] { readLoop(); });
    m_reader->setObjectName(QStringLiteral("mcp-stdio-reader"));
    m_reader->start();
}

void McpStdioServer::readLoop()
{
    QByteArray buffer;       // the line so far
    bool discarding = false; // the line is over the cap: dropped up to its newline
    jsonrpc::IdScanner scanner;
    char chunk[65536];
    auto startDiscarding = [&](QByteArrayView more) {
        discarding = true;
        scanner = {};
        scanner.feed(buffer);
        scanner.feed(more);
        buffer.clear();
    };
    for (;;) {
        pollfd fds[2] = {{m_inFd, POLLIN, 0}, {m_wakePipe[0], POLLIN, 0}};
        if (::poll(fds, m_wakePipe[0] >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[1].revents)
            break;
        const ssize_t n = ::read(m_inFd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        QByteArrayView data(chunk, n);
        while (!data.isEmpty()) {
            const qsizetype nl = data.indexOf('\n');
            if (discarding) {
                scanner.feed(nl < 0 ? data : data.first(nl));
                if (nl < 0)
                    break;
                refuseOversized(scanner.id());
                discarding = false;
            } else if (nl < 0) {
                if (buffer.size() + data.size() > m_maxMessageBytes)
                    startDiscarding(data);
                else
                    buffer.append(data);
                break;
            } else if (buffer.size() + nl > m_maxMessageBytes) {
                startDiscarding(data.first(nl));
                refuseOversized(scanner.id());
                discarding = false;
            } else if (buffer.isEmpty()) {
                dispatch(data.first(nl).toByteArray());
            } else {
                buffer.append(data.first(nl));
                dispatch(buffer);
                buffer.clear();
            }
            data = data.sliced(nl + 1);
        }
    }
    if (discarding)
        refuseOversized(scanner.id());
    else if (!buffer.trimmed().isEmpty())
        dispatch(buffer);
    qCInfo(lcMcpStdio) << "input closed; ending the session";
    m_session->close(); // cancels running commands: the client is gone
    m_pool.waitForDone();
    QMetaObject::invokeMethod(this, &McpStdioServer::finished, Qt::QueuedConnection);
}

void McpStdioServer::refuseOversized(const QJsonValue &id)
{
    // The id is recovered from the dropped bytes when it was there; otherwise JSON-RPC's rule
    // for an undeterminable id applies: null.
    send(jsonrpc::errorResponse(
        id, jsonrpc::InvalidRequest,
        QStringLiteral("message over this server's limit of %1 bytes dropped; send less per "
                       "message (write large files in parts)")
            .arg(m_maxMessageBytes)));
}

void McpStdioServer::dispatch(const QByteArray &line)
{
    if (line.trimmed().isEmpty())
        return;
    jsonrpc::Payload payload = jsonrpc::parsePayload(line);
    if (payload.batch) {
        if (!m_session->acceptsBatches())
            return send(jsonrpc::errorResponse(
                QJsonValue::Null, jsonrpc::InvalidRequest,
                QStringLiteral("JSON-RPC batches are part of MCP 2025-03-26 only, and this "
                               "session speaks %1: send one message per line")
                    .arg(m_session->protocolVersion())));
        m_pool.start([this, batch = std::move(*payload.batch)] {
            QByteArray out = m_session->handleBatch(batch);
            if (!out.isEmpty())
                sendBytes(std::move(out));
        });
        return;
    }
    const jsonrpc::ParseResult &parsed = payload.single;
    if (const auto *fault = std::get_if<jsonrpc::Fault>(&parsed))
        return send(jsonrpc::errorResponse(*fault));
    const jsonrpc::Message &message = std::get<jsonrpc::Message>(parsed);
    // Progress and task status go inline, between the other messages; a tools/call of the
    // stateless revision that became a task has its answer sent from the call (respond).
    McpSession::CallContext context;
    context.notify = [this](const QByteArray &n) { sendBytes(n); };
    context.respond = context.notify;
    if (message.isRequest() && message.method == QLatin1String("tools/call")) {
        m_pool.start([this, message, context] {
            McpSession::SerializedReply reply = m_session->handleSerialized(message, context);
            if (!reply.bytes.isEmpty() && !reply.cancelled && !reply.answered)
                sendBytes(std::move(reply.bytes));
        });
        return;
    }
    McpSession::SerializedReply reply = m_session->handleSerialized(message, context);
    if (!reply.bytes.isEmpty())
        sendBytes(std::move(reply.bytes));
}

void McpStdioServer::send(const QJsonObject &message)
{
    sendBytes(jsonrpc::serialize(message));
}

void McpStdioServer::sendBytes(QByteArray bytes)
{
    bytes.append('\n');
    QMutexLocker lock(&m_writeMutex);
    const char *p = bytes.constData();
    qsizetype left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(m_outFd, p, size_t(left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            qCWarning(lcMcpStdio) << "cannot write to the client:" << qt_error_string(errno);
            return;
        }
        p += n;
        left -= n;
    }
}

} // namespace elsai
