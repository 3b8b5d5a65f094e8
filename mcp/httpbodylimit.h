// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "mcplimits.h"

#include <QByteArray>
#include <QList>
#include <QPointer>
#include <QTcpServer>

class QTcpSocket;

namespace elsai {

/// A QTcpServer for QHttpServer whose connections refuse a request body over a cap before it
/// is buffered: QHttpServer reads a whole request into memory before a route sees it, so the
/// cap is applied on the socket, ahead of its parser. A Content-Length over the cap is refused
/// as soon as the headers are in; a chunked body when its chunks pass the cap. The refusal is
/// `413` with a JSON-RPC error (no id) and `Connection: close`; the rest of the upload is
/// read and dropped for a moment so the client sees the answer, then the connection closes.
class BodyLimitedTcpServer : public QTcpServer
{
    Q_OBJECT

public:
    explicit BodyLimitedTcpServer(qint64 maxBodyBytes, QObject *parent = nullptr);
    void setMaxBodyBytes(qint64 bytes) { m_maxBodyBytes = bytes; }
    qint64 maxBodyBytes() const { return m_maxBodyBytes; }
    /// The open connection from that peer, if any: how a request's connection is found where
    /// the responder does not tell it (Qt 6.8), to notice a client that hangs up.
    QTcpSocket *connectionFrom(const QHostAddress &address, quint16 port) const;

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    qint64 m_maxBodyBytes;
    QList<QPointer<QTcpSocket>> m_connections;
};

/// Follows the requests on one connection (headers, Content-Length or chunked framing) with
/// the bytes QHttpServer is about to read, and answers 413 for a body over the cap.
class HttpBodyGuard : public QObject
{
    Q_OBJECT

public:
    /// `socket` may be null (the framing alone, for tests).
    HttpBodyGuard(QTcpSocket *socket, qint64 maxBodyBytes);

    /// Feeds bytes of the connection, in order; false once the connection is refused.
    /// Public for the unit test of the framing.
    bool feed(const char *data, qint64 size);
    bool refused() const { return m_refused; }
    /// Why it was refused (the 413 message).
    const QString &reason() const { return m_reason; }

private:
    void inspect();   ///< readyRead, before QHttpServer reads
    void afterRead(); ///< readyRead, after QHttpServer read
    void refuse(const QString &message);
    bool headComplete();
    bool chunkSizeLine(const QByteArray &line);

    enum class State { Head, Body, ChunkSize, ChunkData, ChunkEnd, Trailer };
    QPointer<QTcpSocket> m_socket;
    const qint64 m_cap;
    State m_state = State::Head;
    QByteArray m_line;      ///< the head (State::Head) or the current line being collected
    qint64 m_remaining = 0; ///< body or chunk bytes still to come
    qint64 m_bodySoFar = 0; ///< chunked: the body size so far
    qint64 m_leftover = 0;  ///< bytes at the front of the socket buffer already fed
    bool m_afterConnected = false;
    bool m_refused = false;
    QString m_reason;
};

} // namespace elsai
