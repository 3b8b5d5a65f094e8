// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "daytonapty.h"

#include "errors.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QMutex>
#include <QNetworkRequest>
#include <QRandomGenerator>
#include <QThreadPool>
#include <QWebSocket>

namespace elsai {

namespace {
constexpr int MaxCells = 1000;             // the daemon refuses more
constexpr qsizetype MaxFrameBytes = 32768; // below the daemon's 64 KiB read limit
constexpr int CallTimeoutMs = 30000;
} // namespace

struct DaytonaPtySession::Shared
{
    explicit Shared(daytona::DaytonaApi a, QUrl t) : api(std::move(a)), toolbox(std::move(t)) {}
    const daytona::DaytonaApi api;
    const QUrl toolbox;
    QMutex mutex;
    int cols = 0; ///< the size to send next (0: none pending)
    int rows = 0;
    bool resizing = false;
};

QUrl daytonaWebSocketUrl(const QUrl &toolbox, const QString &path)
{
    QUrl url = toolbox;
    url.setScheme(toolbox.scheme() == QLatin1String("https") ? QStringLiteral("wss")
                                                             : QStringLiteral("ws"));
    QString base = url.path();
    while (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    url.setPath(base + path);
    return url;
}

DaytonaPtySession::DaytonaPtySession(QString workspaceId, daytona::DaytonaApi api, QUrl toolbox,
                                     QString cwd, QMap<QString, QString> env, QObject *parent)
    : PtySession(std::move(workspaceId), QStringLiteral("DaytonaSandboxBackend"), parent),
      m_shared(std::make_shared<Shared>(std::move(api), std::move(toolbox))), m_cwd(std::move(cwd)),
      m_env(std::move(env))
{
    quint64 raw;
    QRandomGenerator::system()->fillRange(&raw, 1);
    m_id = QStringLiteral("elsai-") + QString::number(raw, 16);
    setProgramName(QStringLiteral("daytona shell"));
}

DaytonaPtySession::~DaytonaPtySession()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
    if (state() == State::Running || state() == State::Starting)
        deleteRemote();
}

void DaytonaPtySession::doStart(int cols, int rows)
{
    QJsonObject envs{{QStringLiteral("TERM"), QStringLiteral("xterm-256color")},
                     {QStringLiteral("COLORTERM"), QStringLiteral("truecolor")}};
    for (auto it = m_env.cbegin(); it != m_env.cend(); ++it)
        envs.insert(it.key(), it.value());
    QJsonObject body{{QStringLiteral("id"), m_id},
                     {QStringLiteral("envs"), envs},
                     {QStringLiteral("cols"), std::min(cols, MaxCells)},
                     {QStringLiteral("rows"), std::min(rows, MaxCells)}};
    if (!m_cwd.isEmpty())
        body.insert(QStringLiteral("cwd"), m_cwd);
    const QByteArray json = QJsonDocument(body).toJson(QJsonDocument::Compact);
    QPointer<DaytonaPtySession> self(this);
    QThreadPool::globalInstance()->start([self, shared = m_shared, json] {
        QString error;
        try {
            const remote::HttpResponse r =
                shared->api.toolbox(shared->toolbox, "POST", QStringLiteral("/process/pty"), {},
                                    json, "application/json", CallTimeoutMs);
            if (!r.ok())
                daytona::DaytonaApi::raise(r, daytona::CallKind::Execute,
                                           QStringLiteral("open a terminal"));
        } catch (const SandboxError &e) {
            error = e.message();
        }
        // Posted to the application (it outlives us); the session is checked there, on the
        // GUI thread, where it is deleted too.
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, error] {
                if (!self)
                    return;
                if (!error.isEmpty()) {
                    self->reportFinished(-1, error);
                } else if (self->m_terminating) {
                    self->deleteRemote();
                    self->reportFinished(-1, tr("the terminal was closed while it started"));
                } else {
                    self->connectSocket();
                }
            },
            Qt::QueuedConnection);
    });
}

void DaytonaPtySession::connectSocket()
{
    m_socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest, this);
    connect(m_socket, &QWebSocket::textMessageReceived, this, &DaytonaPtySession::onText);
    connect(m_socket, &QWebSocket::binaryMessageReceived, this,
            [this](const QByteArray &data) { reportOutput(data); });
    connect(m_socket, &QWebSocket::disconnected, this, &DaytonaPtySession::onDisconnected);
    QNetworkRequest request(daytonaWebSocketUrl(
        m_shared->toolbox, QStringLiteral("/process/pty/%1/connect").arg(m_id)));
    for (const auto &[name, value] : m_shared->api.headers())
        request.setRawHeader(name, value);
    m_socket->open(request);
}

void DaytonaPtySession::onText(const QString &message)
{
    const QJsonObject o = QJsonDocument::fromJson(message.toUtf8()).object();
    if (o.value(QStringLiteral("type")).toString() != QLatin1String("control")) {
        reportOutput(message.toUtf8()); // a daemon that sends output as text
        return;
    }
    const QString status = o.value(QStringLiteral("status")).toString();
    if (status == QLatin1String("connected") && !m_connected) {
        m_connected = true;
        reportStarted();
        m_shared->mutex.lock();
        const bool pending = m_shared->cols > 0;
        m_shared->mutex.unlock();
        if (pending)
            sendResize();
    } else if (status == QLatin1String("error")) {
        const QString error = o.value(QStringLiteral("error")).toString();
        m_socket->disconnect(this); // abort() would report the end first, without the reason
        m_socket->abort();
        deleteRemote();
        reportFinished(-1, error.isEmpty() ? tr("the Daytona terminal refused the connection")
                                           : error.left(1024));
    }
}

void DaytonaPtySession::onDisconnected()
{
    // The daemon ends a session with a close frame whose reason is {"exitCode": N, …}.
    const QJsonObject reason = QJsonDocument::fromJson(m_socket->closeReason().toUtf8()).object();
    int exitCode = -1;
    QString error;
    if (reason.contains(QStringLiteral("exitCode")))
        exitCode = reason.value(QStringLiteral("exitCode")).toInt();
    else if (m_terminating)
        exitCode = 130; // closed by us, as a local terminal closed by its tab reports
    else
        error = m_socket->errorString().isEmpty()
                    ? tr("the connection to the Daytona terminal closed (%1)")
                          .arg(int(m_socket->closeCode()))
                    : m_socket->errorString();
    if (!m_connected && error.isEmpty() && exitCode < 0)
        error = tr("the Daytona terminal could not be reached");
    deleteRemote();
    reportFinished(exitCode, error);
}

void DaytonaPtySession::doWrite(const QByteArray &bytes)
{
    if (!m_socket || !m_connected)
        return;
    for (qsizetype at = 0; at < bytes.size(); at += MaxFrameBytes)
        m_socket->sendBinaryMessage(bytes.mid(at, MaxFrameBytes));
}

void DaytonaPtySession::doResize(int cols, int rows)
{
    {
        QMutexLocker lock(&m_shared->mutex);
        m_shared->cols = std::min(cols, MaxCells);
        m_shared->rows = std::min(rows, MaxCells);
    }
    if (m_connected)
        sendResize();
}

void DaytonaPtySession::sendResize()
{
    {
        QMutexLocker lock(&m_shared->mutex);
        if (m_shared->resizing)
            return; // the call in flight sends the latest size when it is done
        m_shared->resizing = true;
    }
    const QString path = QStringLiteral("/process/pty/%1/resize").arg(m_id);
    QThreadPool::globalInstance()->start([shared = m_shared, path] {
        for (;;) {
            int cols, rows;
            {
                QMutexLocker lock(&shared->mutex);
                if (shared->cols <= 0) {
                    shared->resizing = false;
                    return;
                }
                cols = std::exchange(shared->cols, 0);
                rows = shared->rows;
            }
            const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("cols"), cols},
                                                              {QStringLiteral("rows"), rows}})
                                        .toJson(QJsonDocument::Compact);
            try {
                shared->api.toolbox(shared->toolbox, "POST", path, {}, body, "application/json",
                                    CallTimeoutMs);
            } catch (const SandboxError &) {
                // a lost resize leaves the old size: the next one corrects it
            }
        }
    });
}

void DaytonaPtySession::doTerminate()
{
    m_terminating = true;
    if (!m_socket)
        return; // still creating: the create's answer ends it
    deleteRemote();
    m_socket->close();
}

void DaytonaPtySession::deleteRemote()
{
    if (m_deleted)
        return;
    m_deleted = true;
    const QString path = QStringLiteral("/process/pty/%1").arg(m_id);
    QThreadPool::globalInstance()->start([shared = m_shared, path] {
        try {
            shared->api.toolbox(shared->toolbox, "DELETE", path, {}, {}, {}, CallTimeoutMs);
        } catch (const SandboxError &) {
            // gone already, or the sandbox is: nothing left to end
        }
    });
}

} // namespace elsai
