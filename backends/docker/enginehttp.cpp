// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "enginehttp.h"

#include "errors.h"
#include "process.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QLocalSocket>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslSocket>
#include <QTcpSocket>
#include <QUrl>

namespace elsai::docker {

// ---- endpoint -------------------------------------------------------------------------------

QString EngineEndpoint::display() const
{
    if (isUnix())
        return QStringLiteral("unix://") + socketPath;
    return QStringLiteral("tcp://%1:%2%3")
        .arg(hostName)
        .arg(port)
        .arg(isTls() ? QStringLiteral(" (TLS)") : QString());
}

EngineEndpoint EngineEndpoint::parse(const QString &host, const QString &certPath)
{
    EngineEndpoint e;
    if (host.startsWith(QLatin1String("unix://"))) {
        e.socketPath = host.mid(7);
        if (!e.socketPath.startsWith(QLatin1Char('/')))
            throw ValueError(QStringLiteral("the Docker host '%1' needs an absolute socket path, "
                                            "e.g. unix:///var/run/docker.sock")
                                 .arg(host));
        return e;
    }
    if (host.startsWith(QLatin1String("tcp://"))) {
        const QUrl url(host);
        if (!url.isValid() || url.host().isEmpty() || url.port() <= 0)
            throw ValueError(
                QStringLiteral("the Docker host '%1' needs tcp://HOST:PORT").arg(host));
        e.hostName = url.host();
        e.port = quint16(url.port());
        if (!certPath.isEmpty()) {
            e.caFile = certPath + QStringLiteral("/ca.pem");
            e.certFile = certPath + QStringLiteral("/cert.pem");
            e.keyFile = certPath + QStringLiteral("/key.pem");
        }
        return e;
    }
    throw ValueError(QStringLiteral("the Docker host '%1' is neither unix://PATH nor "
                                    "tcp://HOST:PORT (ssh:// is not supported: forward the "
                                    "socket with ssh -L and give unix://)")
                         .arg(host));
}

EngineEndpoint EngineEndpoint::fromEnvironment(const QString &host)
{
    QString h = host;
    if (h.isEmpty())
        h = qEnvironmentVariable("DOCKER_HOST");
    if (h.isEmpty())
        h = QStringLiteral("unix:///var/run/docker.sock");
    QString certs;
    if (!qEnvironmentVariable("DOCKER_TLS_VERIFY").isEmpty()) {
        certs = qEnvironmentVariable("DOCKER_CERT_PATH");
        if (certs.isEmpty())
            certs = QDir::homePath() + QStringLiteral("/.docker");
    }
    return parse(h, certs);
}

// ---- responses ------------------------------------------------------------------------------

QJsonObject EngineResponse::json() const
{
    return QJsonDocument::fromJson(body).object();
}

QString EngineResponse::message() const
{
    if (!error.isEmpty())
        return error;
    const QString m = json().value(QStringLiteral("message")).toString();
    if (!m.isEmpty())
        return m;
    const QString text = QString::fromUtf8(body.left(300)).trimmed();
    return text.isEmpty() ? QStringLiteral("HTTP status %1").arg(status) : text;
}

// ---- the client -----------------------------------------------------------------------------

namespace {

constexpr int kSliceMs = 100; ///< how often a wait looks at the cancel token

/// One request's connection and what it has read but not consumed.
class Exchange
{
public:
    Exchange(const EngineRequest &r) : m_request(r), m_deadline(QDeadlineTimer::Forever)
    {
        if (r.timeoutMs > 0)
            m_deadline = QDeadlineTimer(r.timeoutMs);
    }

    bool connectTo(const EngineEndpoint &e, EngineResponse &resp)
    {
        if (e.isUnix()) {
            auto *s = new QLocalSocket;
            m_socket.reset(s);
            s->connectToServer(e.socketPath);
            if (!s->waitForConnected(remainingMs(10000)))
                return fail(resp, QStringLiteral("cannot connect to the container engine at %1: "
                                                 "%2 (is dockerd or `podman system service` "
                                                 "running, and may you use its socket?)")
                                      .arg(e.display(), s->errorString()));
            return true;
        }
        if (e.isTls()) {
            auto *s = new QSslSocket;
            m_socket.reset(s);
            QSslConfiguration conf = s->sslConfiguration();
            conf.setCaCertificates(QSslCertificate::fromPath(e.caFile));
            const QList<QSslCertificate> certs = QSslCertificate::fromPath(e.certFile);
            if (!certs.isEmpty())
                conf.setLocalCertificate(certs.first());
            QFile key(e.keyFile);
            if (key.open(QIODevice::ReadOnly)) {
                const QByteArray pem = key.readAll();
                QSslKey k(pem, QSsl::Rsa);
                conf.setPrivateKey(k.isNull() ? QSslKey(pem, QSsl::Ec) : k);
            }
            conf.setPeerVerifyMode(QSslSocket::VerifyPeer);
            s->setSslConfiguration(conf);
            s->connectToHostEncrypted(e.hostName, e.port);
            if (!s->waitForEncrypted(remainingMs(15000)))
                return fail(resp, QStringLiteral("cannot open a TLS connection to the container "
                                                 "engine at %1: %2")
                                      .arg(e.display(), s->errorString()));
            return true;
        }
        auto *s = new QTcpSocket;
        m_socket.reset(s);
        s->connectToHost(e.hostName, e.port);
        if (!s->waitForConnected(remainingMs(15000)))
            return fail(resp, QStringLiteral("cannot connect to the container engine at %1: %2")
                                  .arg(e.display(), s->errorString()));
        return true;
    }

    bool write(const QByteArray &data, EngineResponse &resp)
    {
        m_socket->write(data);
        while (m_socket->bytesToWrite() > 0) {
            if (!waitSlice(resp, [&](int ms) { return m_socket->waitForBytesWritten(ms); }))
                return false;
        }
        return true;
    }

    bool writeDevice(QIODevice *in, qint64 size, EngineResponse &resp)
    {
        QByteArray chunk;
        while (size > 0) {
            chunk = in->read(std::min<qint64>(size, 256 * 1024));
            if (chunk.isEmpty())
                return fail(resp, QStringLiteral("the request body ended early"));
            size -= chunk.size();
            if (!write(chunk, resp))
                return false;
        }
        return true;
    }

    /// More bytes into m_buffer; false at the end of the stream or on a failure (`resp` says).
    bool fill(EngineResponse &resp)
    {
        for (;;) {
            if (m_socket->bytesAvailable() > 0) {
                m_buffer += m_socket->readAll();
                return true;
            }
            if (!isOpen())
                return false; // the peer closed: the end
            if (!waitSlice(resp, [&](int ms) { return m_socket->waitForReadyRead(ms); }) &&
                (!resp.error.isEmpty() || m_socket->bytesAvailable() == 0))
                return false;
        }
    }

    QByteArray &buffer() { return m_buffer; }

private:
    bool isOpen() const
    {
        if (auto *l = qobject_cast<QLocalSocket *>(m_socket.get()))
            return l->state() == QLocalSocket::ConnectedState;
        auto *t = static_cast<QAbstractSocket *>(m_socket.get());
        return t->state() == QAbstractSocket::ConnectedState;
    }

    int remainingMs(int cap) const
    {
        return m_deadline.isForever() ? cap
                                      : int(std::min<qint64>(cap, m_deadline.remainingTime()));
    }

    /// One bounded wait; false (and `resp` set) on a timeout, a cancel or a dead connection.
    template<typename Wait>
    bool waitSlice(EngineResponse &resp, Wait wait)
    {
        for (;;) {
            if (m_request.cancel && m_request.cancel->isCancelled()) {
                resp.cancelled = true;
                return fail(resp, QStringLiteral("cancelled"));
            }
            if (m_deadline.hasExpired()) {
                resp.timedOut = true;
                return fail(resp, QStringLiteral("the container engine did not answer within "
                                                 "%1 s")
                                      .arg(m_request.timeoutMs / 1000.0));
            }
            if (wait(remainingMs(kSliceMs)))
                return true;
            if (!isOpen())
                return false; // closed: the caller sees the end of the stream
        }
    }

    static bool fail(EngineResponse &resp, const QString &why)
    {
        if (resp.error.isEmpty())
            resp.error = why;
        return false;
    }

    const EngineRequest &m_request;
    QDeadlineTimer m_deadline;
    std::unique_ptr<QIODevice> m_socket;
    QByteArray m_buffer;
};

/// Passes body bytes on (the sink) or keeps them.
bool deliver(const EngineRequest &req, EngineResponse &resp, const QByteArray &bytes)
{
    if (bytes.isEmpty())
        return true;
    if (req.sink)
        return req.sink(bytes);
    resp.body += bytes;
    return true;
}

} // namespace

EngineClient::EngineClient(EngineEndpoint endpoint, QByteArray apiVersion)
    : m_endpoint(std::move(endpoint)), m_version(std::move(apiVersion))
{
}

EngineResponse EngineClient::post(const QByteArray &path, const QJsonObject &body,
                                  int timeoutMs) const
{
    EngineRequest r;
    r.method = "POST";
    r.path = path;
    r.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    r.timeoutMs = timeoutMs;
    return send(r);
}

EngineResponse EngineClient::send(const EngineRequest &req) const
{
    EngineResponse resp;
    Exchange x(req);
    if (!x.connectTo(m_endpoint, resp))
        return resp;
    const qint64 length = req.bodyDevice ? req.bodySize : req.body.size();
    QByteArray head = req.method + " /" + m_version + req.path + " HTTP/1.1\r\n" +
                      "Host: docker\r\nUser-Agent: elsai-workbench\r\n";
    if (req.upgrade)
        head += "Connection: Upgrade\r\nUpgrade: tcp\r\n";
    else
        head += "Connection: close\r\n";
    if (length > 0 || req.method == "POST" || req.method == "PUT")
        head += "Content-Type: " + req.contentType +
                "\r\nContent-Length: " + QByteArray::number(length) + "\r\n";
    head += "\r\n";
    if (!x.write(head + (req.bodyDevice ? QByteArray() : req.body), resp))
        return resp;
    if (req.bodyDevice && !x.writeDevice(req.bodyDevice, req.bodySize, resp))
        return resp;

    // The status line and headers.
    QByteArray &buf = x.buffer();
    qsizetype end;
    while ((end = buf.indexOf("\r\n\r\n")) < 0) {
        if (buf.size() > 64 * 1024 || !x.fill(resp)) {
            if (resp.error.isEmpty())
                resp.error = QStringLiteral("the container engine closed the connection without "
                                            "an answer");
            return resp;
        }
    }
    const QList<QByteArray> lines = buf.left(end).split('\n');
    buf.remove(0, end + 4);
    const QList<QByteArray> statusLine = lines.value(0).trimmed().split(' ');
    bool ok = false;
    resp.status = statusLine.value(1).toInt(&ok);
    if (!ok) {
        resp.error = QStringLiteral("the container engine answered something that is not HTTP");
        return resp;
    }
    qint64 contentLength = -1;
    bool chunked = false;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines.at(i).trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length")
            contentLength = value.toLongLong();
        else if (name == "transfer-encoding" && value.toLower().contains("chunked"))
            chunked = true;
    }
    const bool raw =
        resp.status == 101 || (req.upgrade && resp.status == 200 && !chunked && contentLength < 0);
    if (raw || (!chunked && contentLength < 0)) {
        // the hijacked stream (or a body that ends with the connection)
        for (;;) {
            if (!deliver(req, resp, buf))
                return resp;
            buf.clear();
            if (!x.fill(resp))
                return resp;
        }
    }
    if (!chunked) {
        qint64 left = contentLength;
        for (;;) {
            const QByteArray part = buf.left(qsizetype(std::min<qint64>(left, buf.size())));
            buf.remove(0, part.size());
            left -= part.size();
            if (!deliver(req, resp, part) || left == 0)
                return resp;
            if (!x.fill(resp)) {
                if (resp.error.isEmpty())
                    resp.error = QStringLiteral("the container engine's answer ended early");
                return resp;
            }
        }
    }
    for (;;) { // chunked: size line, data, CRLF; a zero size ends it
        qsizetype nl;
        while ((nl = buf.indexOf("\r\n")) < 0) {
            if (!x.fill(resp)) {
                if (resp.error.isEmpty())
                    resp.error = QStringLiteral("the container engine's answer ended early");
                return resp;
            }
        }
        bool hexOk = false;
        const qint64 size = buf.left(nl).split(';').value(0).trimmed().toLongLong(&hexOk, 16);
        if (!hexOk || size < 0) {
            resp.error = QStringLiteral("the container engine sent a malformed chunk");
            return resp;
        }
        buf.remove(0, nl + 2);
        if (size == 0)
            return resp;
        while (buf.size() < size + 2) {
            if (!x.fill(resp)) {
                if (resp.error.isEmpty())
                    resp.error = QStringLiteral("the container engine's answer ended early");
                return resp;
            }
        }
        if (!deliver(req, resp, buf.left(qsizetype(size))))
            return resp;
        buf.remove(0, qsizetype(size) + 2);
    }
}

// ---- the exec stream ------------------------------------------------------------------------

void StreamDemuxer::feed(const QByteArray &chunk)
{
    m_buffer += chunk;
    qsizetype at = 0;
    while (m_buffer.size() - at >= 8) {
        const auto *h = reinterpret_cast<const uchar *>(m_buffer.constData() + at);
        const quint32 size =
            (quint32(h[4]) << 24) | (quint32(h[5]) << 16) | (quint32(h[6]) << 8) | quint32(h[7]);
        if (m_buffer.size() - at - 8 < qsizetype(size))
            break;
        if (size > 0)
            m_sink(h[0], m_buffer.mid(at + 8, qsizetype(size)));
        at += 8 + qsizetype(size);
    }
    m_buffer.remove(0, at);
}

} // namespace elsai::docker
