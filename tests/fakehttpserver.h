// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// A tiny loopback HTTP/1.1 server for protocol tests. It listens on 127.0.0.1 on a free port
// and runs in its own thread, so a blocking client (elsai::remote::send) can call it from the
// test thread. Every request is recorded; scripted responses (enqueue) are served first, then
// the handler. One request per connection (the server answers with "Connection: close").

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QPair>
#include <QPointer>
#include <QSemaphore>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <QTimer>
#include <QUrl>
#include <QUrlQuery>

#include <deque>
#include <functional>
#include <memory>

namespace elsai::test {

class FakeHttpServer
{
public:
    struct Request
    {
        QByteArray method;
        /// The request target as sent ("/api/sandbox?x=1").
        QByteArray target;
        QList<QPair<QByteArray, QByteArray>> headers;
        QByteArray body;

        QByteArray header(const QByteArray &name) const
        {
            for (const auto &h : headers) {
                if (h.first.compare(name, Qt::CaseInsensitive) == 0)
                    return h.second;
            }
            return {};
        }
        /// Decoded path, without the query.
        QString path() const { return QUrl::fromEncoded(target).path(); }
        QUrlQuery query() const { return QUrlQuery(QUrl::fromEncoded(target)); }
        /// A query item, fully decoded ('+' stays '+').
        QString queryItem(const QString &key) const
        {
            return query().queryItemValue(key, QUrl::FullyDecoded);
        }
    };

    struct Response
    {
        int status = 200;
        QList<QPair<QByteArray, QByteArray>> headers;
        QByteArray body;
        /// Answer only after this long (timeouts).
        int delayMs = 0;
        /// Close the connection without any answer (a broken server).
        bool dropConnection = false;

        static Response json(int status, const QByteArray &body)
        {
            Response r;
            r.status = status;
            r.headers.emplaceBack("Content-Type", "application/json");
            r.body = body;
            return r;
        }
    };

    using Handler = std::function<Response(const Request &)>;

    explicit FakeHttpServer(Handler handler = {}) : m_handler(std::move(handler))
    {
        m_context->moveToThread(&m_thread);
        m_thread.start();
        QSemaphore ready;
        QMetaObject::invokeMethod(m_context.get(), [this, &ready] {
            m_server = new QTcpServer();
            QObject::connect(m_server, &QTcpServer::newConnection, m_server,
                             [this] { acceptAll(); });
            m_server->listen(QHostAddress::LocalHost, 0);
            m_port = m_server->serverPort();
            ready.release();
        });
        ready.acquire();
    }

    ~FakeHttpServer()
    {
        QMetaObject::invokeMethod(
            m_context.get(), [this] { delete m_server; }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }

    FakeHttpServer(const FakeHttpServer &) = delete;
    FakeHttpServer &operator=(const FakeHttpServer &) = delete;

    quint16 port() const { return m_port; }

    /// Runs `f` on the server thread and waits for it (e.g. to clean up objects a handler made).
    void runInServerThread(const std::function<void()> &f)
    {
        QMetaObject::invokeMethod(m_context.get(), f, Qt::BlockingQueuedConnection);
    }
    /// "http://127.0.0.1:PORT" + path.
    QUrl url(const QString &path = {}) const
    {
        return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(m_port).arg(path));
    }

    void setHandler(Handler handler)
    {
        QMutexLocker lock(&m_mutex);
        m_handler = std::move(handler);
    }
    /// The largest response body sent since the last reset: what one call transferred.
    qint64 largestResponse() const
    {
        QMutexLocker lock(&m_mutex);
        return m_largestBody;
    }
    void resetLargestResponse()
    {
        QMutexLocker lock(&m_mutex);
        m_largestBody = 0;
    }
    /// Served (in order) before the handler is asked.
    void enqueue(const Response &response)
    {
        QMutexLocker lock(&m_mutex);
        m_script.push_back(response);
    }
    void enqueue(int status, const QByteArray &body = {},
                 const QList<QPair<QByteArray, QByteArray>> &headers = {})
    {
        Response r;
        r.status = status;
        r.body = body;
        r.headers = headers;
        enqueue(r);
    }

    QList<Request> requests() const
    {
        QMutexLocker lock(&m_mutex);
        return m_requests;
    }
    int requestCount() const
    {
        QMutexLocker lock(&m_mutex);
        return m_requests.size();
    }
    void clearRequests()
    {
        QMutexLocker lock(&m_mutex);
        m_requests.clear();
    }

    static QByteArray reasonPhrase(int status)
    {
        static const QHash<int, QByteArray> phrases = {{200, "OK"},
                                                       {201, "Created"},
                                                       {202, "Accepted"},
                                                       {204, "No Content"},
                                                       {400, "Bad Request"},
                                                       {401, "Unauthorized"},
                                                       {403, "Forbidden"},
                                                       {404, "Not Found"},
                                                       {408, "Request Timeout"},
                                                       {409, "Conflict"},
                                                       {429, "Too Many Requests"},
                                                       {500, "Internal Server Error"},
                                                       {502, "Bad Gateway"},
                                                       {503, "Service Unavailable"}};
        return phrases.value(status, "Status");
    }

private:
    qint64 m_largestBody = 0; ///< guarded by m_mutex
    struct Connection
    {
        QByteArray buffer;
        bool answered = false;
    };

    void acceptAll()
    {
        while (QTcpSocket *socket = m_server->nextPendingConnection()) {
            auto state = std::make_shared<Connection>();
            QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket, state] {
                state->buffer += socket->readAll();
                if (!state->answered)
                    tryAnswer(socket, *state);
            });
        }
    }

    // Parses one complete request out of the buffer, or waits for more bytes.
    void tryAnswer(QTcpSocket *socket, Connection &state)
    {
        const qsizetype headerEnd = state.buffer.indexOf("\r\n\r\n");
        if (headerEnd < 0)
            return;
        Request req;
        const QList<QByteArray> lines = state.buffer.left(headerEnd).split('\n');
        const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
        req.method = requestLine.value(0);
        req.target = requestLine.value(1);
        qsizetype contentLength = 0;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const QByteArray line = lines.at(i).trimmed();
            const qsizetype colon = line.indexOf(':');
            if (colon <= 0)
                continue;
            const QByteArray name = line.left(colon).trimmed();
            const QByteArray value = line.mid(colon + 1).trimmed();
            req.headers.emplaceBack(name, value);
            if (name.compare("Content-Length", Qt::CaseInsensitive) == 0)
                contentLength = value.toLongLong();
        }
        const qsizetype bodyStart = headerEnd + 4;
        if (state.buffer.size() - bodyStart < contentLength)
            return;
        req.body = state.buffer.mid(bodyStart, contentLength);
        state.answered = true;

        Response response;
        {
            QMutexLocker lock(&m_mutex);
            m_requests.append(req);
            if (!m_script.empty()) {
                response = m_script.front();
                m_script.pop_front();
            } else if (m_handler) {
                Handler handler = m_handler;
                lock.unlock();
                response = handler(req);
            } else {
                response.status = 404;
            }
        }
        {
            QMutexLocker lock(&m_mutex);
            m_largestBody = qMax(m_largestBody, qint64(response.body.size()));
        }
        QPointer<QTcpSocket> guard(socket);
        auto write = [guard, response] {
            if (!guard)
                return;
            if (response.dropConnection) {
                guard->abort();
                return;
            }
            QByteArray out = "HTTP/1.1 " + QByteArray::number(response.status) + ' ' +
                             reasonPhrase(response.status) + "\r\n";
            for (const auto &h : response.headers)
                out += h.first + ": " + h.second + "\r\n";
            out += "Content-Length: " + QByteArray::number(response.body.size()) + "\r\n";
            out += "Connection: close\r\n\r\n";
            out += response.body;
            guard->write(out);
            guard->disconnectFromHost();
        };
        if (response.delayMs > 0)
            QTimer::singleShot(response.delayMs, socket, write);
        else
            write();
    }

    Handler m_handler;
    mutable QMutex m_mutex;
    std::deque<Response> m_script;
    QList<Request> m_requests;
    QThread m_thread;
    std::unique_ptr<QObject> m_context = std::make_unique<QObject>();
    QTcpServer *m_server = nullptr;
    quint16 m_port = 0;
};

} // namespace elsai::test
