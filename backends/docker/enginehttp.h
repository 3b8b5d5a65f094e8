// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <functional>
#include <memory>

class QIODevice;

namespace elsai {
class CancellationToken;
}

namespace elsai::docker {

/// Where the container engine listens: `unix:///var/run/docker.sock` (the default, also
/// Podman's `podman system service`), or `tcp://host:port` — with TLS when the three PEM files
/// are given (DOCKER_CERT_PATH's ca.pem, cert.pem, key.pem).
struct EngineEndpoint
{
    QString socketPath; ///< unix socket; empty for tcp
    QString hostName;
    quint16 port = 0;
    QString caFile, certFile, keyFile; ///< all three: TLS (the server's certificate verified)

    bool isUnix() const { return !socketPath.isEmpty(); }
    bool isTls() const { return !caFile.isEmpty(); }
    QString display() const;

    /// Parses `unix://PATH` or `tcp://HOST:PORT`; ValueError naming what to give otherwise.
    /// `certPath` (a folder holding ca.pem, cert.pem and key.pem) turns TLS on for tcp.
    static EngineEndpoint parse(const QString &host, const QString &certPath = {});
    /// --docker-host, else DOCKER_HOST (with DOCKER_CERT_PATH when DOCKER_TLS_VERIFY is set),
    /// else unix:///var/run/docker.sock.
    static EngineEndpoint fromEnvironment(const QString &host = {});
};

struct EngineRequest
{
    QByteArray method = "GET";
    /// Path and query below the API version, e.g. "/containers/json?all=1".
    QByteArray path;
    QByteArray body;
    QByteArray contentType = "application/json";
    /// A body read from here instead (`bodySize` bytes): an archive streamed from a file.
    QIODevice *bodyDevice = nullptr;
    qint64 bodySize = 0;
    /// Exec start: asks to upgrade the connection; the body is then the raw stream until the
    /// engine closes it.
    bool upgrade = false;
    /// Deadline of the whole exchange; <= 0: none (a cancel token or the peer ends it).
    int timeoutMs = 60000;
    /// Receives the body as it arrives instead of keeping it; false stops reading.
    std::function<bool(const QByteArray &)> sink;
    std::shared_ptr<CancellationToken> cancel;
};

struct EngineResponse
{
    int status = 0;
    QByteArray body; ///< empty when a sink took it
    QString error;   ///< the connection failed (no status)
    bool timedOut = false;
    bool cancelled = false;

    bool ok() const { return error.isEmpty() && status >= 200 && status < 300; }
    QJsonObject json() const;
    /// The engine's own words ({"message": …}), else the status line's gist.
    QString message() const;
};

/// A small blocking HTTP/1.1 client for the Engine API: one connection per request (a unix
/// socket connects in microseconds, and an exec stream takes its connection over anyway),
/// versioned paths (/v1.41/…), Content-Length and chunked bodies, and the connection upgrade
/// of exec start. Callable from any thread; no event loop needed.
class EngineClient
{
public:
    explicit EngineClient(EngineEndpoint endpoint, QByteArray apiVersion = "v1.41");
    const EngineEndpoint &endpoint() const { return m_endpoint; }
    EngineResponse send(const EngineRequest &request) const;
    /// send() of a JSON body.
    EngineResponse post(const QByteArray &path, const QJsonObject &body,
                        int timeoutMs = 60000) const;

private:
    EngineEndpoint m_endpoint;
    QByteArray m_version;
};

/// Splits the multiplexed stream of a non-TTY exec (8-byte frames: stream, 0, 0, 0, size as
/// big-endian 32 bits) into stdout (1) and stderr (2), across chunk boundaries.
class StreamDemuxer
{
public:
    using Sink = std::function<void(int stream, const QByteArray &bytes)>;
    explicit StreamDemuxer(Sink sink) : m_sink(std::move(sink)) {}
    void feed(const QByteArray &chunk);
    /// Bytes of an unfinished frame at the end (0 when the stream ended cleanly).
    qsizetype pending() const { return m_buffer.size(); }

private:
    Sink m_sink;
    QByteArray m_buffer;
};

} // namespace elsai::docker
