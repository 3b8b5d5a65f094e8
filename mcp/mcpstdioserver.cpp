#include "mcpstdioserver.h"

#include "jsonrpc.h"

#include <QLoggingCategory>
#include <QThread>

#include <cerrno>
#include <poll.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcMcpStdio, "elsai.mcp.stdio", QtInfoMsg)

namespace elsai {

namespace {
constexpr qsizetype kMaxLine = 64 * 1024 * 1024; // a bigger message is a broken client
}

McpStdioServer::McpStdioServer(SandboxPtr sandbox, McpAgentSpec agent,
                               std::optional<SandboxOutputOffloadPolicy> offload, int inputFd,
                               int outputFd, QObject *parent)
    : QObject(parent),
      m_session(std::make_shared<McpSession>(QStringLiteral("stdio"), std::move(agent),
                                             std::move(sandbox), std::move(offload))),
      m_inFd(inputFd), m_outFd(outputFd)
{
    m_pool.setMaxThreadCount(16);
    if (::pipe(m_wakePipe) != 0)
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
    QByteArray buffer;
    char chunk[65536];
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
        buffer.append(chunk, n);
        qsizetype start = 0;
        for (qsizetype nl; (nl = buffer.indexOf('\n', start)) >= 0; start = nl + 1)
            dispatch(buffer.mid(start, nl - start));
        buffer.remove(0, start);
        if (buffer.size() > kMaxLine) {
            send(jsonrpc::errorResponse(QJsonValue::Null, jsonrpc::InvalidRequest,
                                        QStringLiteral("message over 64 MiB dropped")));
            buffer.clear();
        }
    }
    if (!buffer.trimmed().isEmpty())
        dispatch(buffer);
    qCInfo(lcMcpStdio) << "input closed; ending the session";
    m_session->close(); // cancels running commands: the client is gone
    m_pool.waitForDone();
    QMetaObject::invokeMethod(this, &McpStdioServer::finished, Qt::QueuedConnection);
}

void McpStdioServer::dispatch(const QByteArray &line)
{
    if (line.trimmed().isEmpty())
        return;
    const jsonrpc::ParseResult parsed = jsonrpc::parse(line);
    if (const auto *fault = std::get_if<jsonrpc::Fault>(&parsed))
        return send(jsonrpc::errorResponse(*fault));
    const jsonrpc::Message &message = std::get<jsonrpc::Message>(parsed);
    if (message.isRequest() && message.method == QLatin1String("tools/call")) {
        m_pool.start([this, message] {
            McpSession::SerializedReply reply = m_session->handleSerialized(message);
            if (!reply.bytes.isEmpty() && !reply.cancelled)
                sendBytes(std::move(reply.bytes));
        });
        return;
    }
    McpSession::SerializedReply reply = m_session->handleSerialized(message);
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
