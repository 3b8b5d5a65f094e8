// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// The few QtHttpServer calls whose signatures changed between Qt 6.4 (Debian 12) and 6.8:
// the responder parameter of a route, header lookup, and writing a response with headers.

#include <QAbstractHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QList>
#include <QPair>
#include <QtGlobal>

#if QT_VERSION >= QT_VERSION_CHECK(6, 8, 0)
#include <QHttpHeaders>
#endif

namespace elsai::httpcompat {

#if QT_VERSION >= QT_VERSION_CHECK(6, 8, 0)
using RouteResponder = QHttpServerResponder &;
#else
using RouteResponder = QHttpServerResponder &&;
#endif

using HeaderPairs = QList<QPair<QByteArray, QByteArray>>;

/// Hands a listening QTcpServer to the HTTP server (6.4 returns nothing, 6.8 whether it took it).
inline bool bind(QAbstractHttpServer &server, QTcpServer *tcp)
{
#if QT_VERSION >= QT_VERSION_CHECK(6, 8, 0)
    return server.bind(tcp);
#else
    server.bind(tcp);
    return true;
#endif
}

/// A request header's value (case-insensitive name), empty when absent.
inline QByteArray header(const QHttpServerRequest &request, const char *name)
{
#if QT_VERSION >= QT_VERSION_CHECK(6, 8, 0)
    return request.headers().value(QAnyStringView(name)).toByteArray();
#else
    return request.value(name);
#endif
}

/// Writes one complete response.
inline void write(QHttpServerResponder &responder, QHttpServerResponder::StatusCode status,
                  const HeaderPairs &headers, const QByteArray &body)
{
#if QT_VERSION >= QT_VERSION_CHECK(6, 8, 0)
    QHttpHeaders h;
    for (const auto &[name, value] : headers)
        h.append(name, value);
    responder.write(body, h, status);
#else
    responder.writeStatusLine(status);
    for (const auto &[name, value] : headers)
        responder.writeHeader(name, value);
    responder.writeHeader("Content-Length", QByteArray::number(body.size()));
    responder.writeBody(body);
#endif
}

/// Starts a response whose body follows in chunks (Transfer-Encoding: chunked), for a
/// server-sent event stream that stays open while a request runs.
inline void beginChunked(QHttpServerResponder &responder, QHttpServerResponder::StatusCode status,
                         const HeaderPairs &headers)
{
#if QT_VERSION >= QT_VERSION_CHECK(6, 8, 0)
    QHttpHeaders h;
    for (const auto &[name, value] : headers)
        h.append(name, value);
    responder.writeBeginChunked(h, status);
#else
    responder.writeStatusLine(status);
    for (const auto &[name, value] : headers)
        responder.writeHeader(name, value);
    responder.writeHeader("Transfer-Encoding", "chunked");
#endif
}

/// One chunk of a response begun with beginChunked() (not empty: an empty chunk ends it).
inline void writeChunk(QHttpServerResponder &responder, const QByteArray &data)
{
    if (data.isEmpty())
        return;
#if QT_VERSION >= QT_VERSION_CHECK(6, 8, 0)
    responder.writeChunk(data);
#else
    responder.writeBody(QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n");
#endif
}

/// The last chunk (may be empty) and the end of the response.
inline void endChunked(QHttpServerResponder &responder, const QByteArray &data)
{
#if QT_VERSION >= QT_VERSION_CHECK(6, 8, 0)
    responder.writeEndChunked(data);
#else
    writeChunk(responder, data);
    responder.writeBody(QByteArrayLiteral("0\r\n\r\n"));
#endif
}

} // namespace elsai::httpcompat
