// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "httpbodylimit.h"

#include "jsonrpc.h"

#include <QTcpSocket>
#include <QTimer>

#include <sys/socket.h>

namespace elsai {

namespace {
constexpr qint64 kMaxHeadBytes = 64 * 1024; // QHttpServer's parser takes no more either
constexpr qint64 kMaxChunkLine = 1024;      // a chunk size line (hex size and extensions)
constexpr int kLingerMs = 2000;             // reading and dropping the rest after a refusal
} // namespace

BodyLimitedTcpServer::BodyLimitedTcpServer(qint64 maxBodyBytes, QObject *parent)
    : QTcpServer(parent), m_maxBodyBytes(maxBodyBytes)
{
}

void BodyLimitedTcpServer::incomingConnection(qintptr descriptor)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(descriptor)) {
        delete socket;
        return;
    }
    // Connected before QHttpServer takes the socket, so it sees each read first.
    new HttpBodyGuard(socket, m_maxBodyBytes);
    m_connections.removeIf([](const QPointer<QTcpSocket> &s) { return s.isNull(); });
    m_connections.append(socket);
    addPendingConnection(socket);
}

QTcpSocket *BodyLimitedTcpServer::connectionFrom(const QHostAddress &address, quint16 port) const
{
    for (const QPointer<QTcpSocket> &s : m_connections) {
        if (s && s->peerPort() == port && s->peerAddress().isEqual(address))
            return s;
    }
    return nullptr;
}

HttpBodyGuard::HttpBodyGuard(QTcpSocket *socket, qint64 maxBodyBytes)
    : QObject(socket), m_socket(socket), m_cap(maxBodyBytes)
{
    if (socket)
        connect(socket, &QTcpSocket::readyRead, this, &HttpBodyGuard::inspect);
}

void HttpBodyGuard::inspect()
{
    if (!m_socket)
        return;
    if (m_refused) {
        if (m_socket->isTransactionStarted())
            m_socket->commitTransaction(); // drop what the parser kept for a retry
        m_socket->readAll();
        return;
    }
    const QByteArray available = m_socket->peek(m_socket->bytesAvailable());
    const qint64 skip = qMin<qint64>(m_leftover, available.size());
    feed(available.constData() + skip, available.size() - skip);
    m_leftover = available.size();
    if (!m_afterConnected) {
        // Connected now, QHttpServer's reader is already there: this one runs after it, from
        // the next read on, and notes what it left unread (Qt 6.4 reads everything each time,
        // which is assumed for this first read; later versions may keep pipelined requests).
        connect(m_socket, &QTcpSocket::readyRead, this, &HttpBodyGuard::afterRead);
        m_afterConnected = true;
        m_leftover = 0;
    }
    if (m_refused) {
        if (m_socket->isTransactionStarted())
            m_socket->commitTransaction();
        m_socket->readAll(); // QHttpServer's reader, next, finds nothing
    }
}

void HttpBodyGuard::afterRead()
{
    if (m_socket)
        m_leftover = m_socket->bytesAvailable();
}

bool HttpBodyGuard::feed(const char *data, qint64 size)
{
    qint64 i = 0;
    while (i < size && !m_refused) {
        switch (m_state) {
        case State::Head: {
            const char c = data[i++];
            m_line.append(c);
            if (c == '\n' && m_line.endsWith("\r\n\r\n")) {
                if (m_line.trimmed().isEmpty()) { // stray CRLF between requests
                    m_line.clear();
                    break;
                }
                if (!headComplete())
                    return false;
            } else if (m_line.size() > kMaxHeadBytes) {
                refuse(QStringLiteral("request headers over %1 bytes").arg(kMaxHeadBytes));
            }
            break;
        }
        case State::Body: {
            const qint64 n = qMin(m_remaining, size - i);
            i += n;
            m_remaining -= n;
            if (m_remaining == 0)
                m_state = State::Head;
            break;
        }
        case State::ChunkSize:
        case State::Trailer:
        case State::ChunkEnd: {
            const char c = data[i++];
            m_line.append(c);
            if (c != '\n') {
                if (m_line.size() > kMaxChunkLine)
                    refuse(QStringLiteral("a chunk line over %1 bytes").arg(kMaxChunkLine));
                break;
            }
            const QByteArray line = m_line.trimmed();
            m_line.clear();
            if (m_state == State::ChunkEnd) {
                m_state = State::ChunkSize; // the CRLF after a chunk's data
            } else if (m_state == State::Trailer) {
                if (line.isEmpty())
                    m_state = State::Head; // end of the chunked body
            } else if (!chunkSizeLine(line)) {
                return false;
            }
            break;
        }
        case State::ChunkData: {
            const qint64 n = qMin(m_remaining, size - i);
            i += n;
            m_remaining -= n;
            if (m_remaining == 0)
                m_state = State::ChunkEnd;
            break;
        }
        }
    }
    return !m_refused;
}

bool HttpBodyGuard::headComplete()
{
    const QByteArray head = m_line;
    m_line.clear();
    qint64 length = 0;
    bool chunked = false;
    const QList<QByteArray> lines = head.split('\n');
    for (qsizetype n = 1; n < lines.size(); ++n) { // the first is the request line
        const QByteArray &line = lines[n];
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length") {
            bool ok = false;
            length = value.toLongLong(&ok);
            if (!ok || length < 0) {
                refuse(QStringLiteral("a Content-Length that is not a number"));
                return false;
            }
        } else if (name == "transfer-encoding" && value.toLower().contains("chunked")) {
            chunked = true;
        }
    }
    if (chunked) {
        m_bodySoFar = 0;
        m_state = State::ChunkSize;
    } else if (length > m_cap) {
        refuse(QStringLiteral("a request body of %1 bytes").arg(length));
        return false;
    } else if (length > 0) {
        m_remaining = length;
        m_state = State::Body;
    }
    return true;
}

bool HttpBodyGuard::chunkSizeLine(const QByteArray &line)
{
    const qsizetype semicolon = line.indexOf(';'); // chunk extensions are ignored
    const QByteArray hex = (semicolon < 0 ? line : line.left(semicolon)).trimmed();
    bool ok = false;
    const qint64 chunk = hex.toLongLong(&ok, 16);
    if (!ok || chunk < 0 || hex.size() > 15) {
        refuse(QStringLiteral("a malformed chunk size"));
        return false;
    }
    if (chunk == 0) {
        m_state = State::Trailer;
        return true;
    }
    m_bodySoFar += chunk;
    if (m_bodySoFar > m_cap) {
        refuse(QStringLiteral("a chunked request body of more than %1 bytes").arg(m_cap));
        return false;
    }
    m_remaining = chunk;
    m_state = State::ChunkData;
    return true;
}

void HttpBodyGuard::refuse(const QString &what)
{
    m_refused = true;
    m_reason = QStringLiteral("%1 is over this server's limit of %2 bytes per MCP message; send "
                              "less per request (write large files in parts)")
                   .arg(what)
                   .arg(m_cap);
    if (!m_socket)
        return;
    const QByteArray body = jsonrpc::serialize(
        jsonrpc::errorResponse(QJsonValue::Null, jsonrpc::InvalidRequest, m_reason));
    m_socket->write("HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
                    "Connection: close\r\nContent-Length: " +
                    QByteArray::number(body.size()) + "\r\n\r\n" + body);
    m_socket->flush();
    // The answer is out; FIN, and keep reading (dropping) the upload for a moment so the
    // client is not reset before it reads the answer.
    ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
    QTimer::singleShot(kLingerMs, m_socket, [socket = m_socket] {
        if (socket)
            socket->abort();
    });
}

} // namespace elsai
