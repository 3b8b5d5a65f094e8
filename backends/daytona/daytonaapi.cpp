// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "daytonaapi.h"

#include "errors.h"

#include <QJsonArray>
#include <QProcessEnvironment>

#include <cerrno>

namespace elsai::daytona {

using remote::HttpRequest;
using remote::HttpResponse;

DaytonaConfig DaytonaConfig::fromEnvironment()
{
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    DaytonaConfig c;
    c.apiKey = env.value(QStringLiteral("DAYTONA_API_KEY"));
    c.jwtToken = env.value(QStringLiteral("DAYTONA_JWT_TOKEN"));
    c.organizationId = env.value(QStringLiteral("DAYTONA_ORGANIZATION_ID"));
    QString url = env.value(QStringLiteral("DAYTONA_API_URL"));
    if (url.isEmpty())
        url = env.value(QStringLiteral("DAYTONA_SERVER_URL"));
    if (!url.isEmpty())
        c.apiUrl = QUrl(url);
    c.target = env.value(QStringLiteral("DAYTONA_TARGET"));
    return c;
}

DaytonaApi::DaytonaApi(DaytonaConfig config) : m_config(std::move(config)) {}

QList<QPair<QByteArray, QByteArray>> DaytonaApi::headers() const
{
    QList<QPair<QByteArray, QByteArray>> h;
    const QString token = m_config.apiKey.isEmpty() ? m_config.jwtToken : m_config.apiKey;
    h.append({"Authorization", "Bearer " + token.toUtf8()});
    if (m_config.apiKey.isEmpty() && !m_config.organizationId.isEmpty())
        h.append({"X-Daytona-Organization-ID", m_config.organizationId.toUtf8()});
    h.append({QByteArray("X-Daytona-Source"), QByteArray("elsai-workbench")});
    // >= 0.167.0: session exec then answers with stdout and stderr already split (§1.5).
    h.append({QByteArray("X-Daytona-SDK-Version"), QByteArray("0.190.0")});
    return h;
}

HttpResponse DaytonaApi::send(HttpRequest request, bool retry) const
{
    for (const auto &[name, value] : headers())
        request.setHeader(name, value);
    remote::RetryPolicy policy = m_config.retry;
    if (!retry)
        policy.maxAttempts = 1;
    return remote::send(std::move(request), policy);
}

HttpResponse DaytonaApi::control(const QByteArray &method, const QString &path,
                                 const QJsonObject &body, bool hasBody) const
{
    HttpRequest r;
    r.method = method;
    QUrl url = m_config.apiUrl;
    url.setPath(url.path() + path);
    r.url = url;
    r.timeoutMs = m_config.requestTimeoutMs;
    if (hasBody) {
        r.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
        r.headers.emplaceBack("Content-Type", "application/json");
    }
    return send(std::move(r), true);
}

HttpResponse DaytonaApi::toolbox(const QUrl &toolboxBase, const QByteArray &method,
                                 const QString &path, const QUrlQuery &query,
                                 const QByteArray &body, const QByteArray &contentType,
                                 int timeoutMs, bool retry) const
{
    HttpRequest r;
    r.method = method;
    QUrl url = toolboxBase;
    url.setPath(url.path() + path);
    url.setQuery(query);
    r.url = url;
    r.body = body;
    if (!contentType.isEmpty())
        r.headers.emplaceBack("Content-Type", contentType);
    r.timeoutMs = timeoutMs > 0 ? timeoutMs : m_config.requestTimeoutMs;
    return send(std::move(r), retry);
}

QJsonObject DaytonaApi::object(const HttpResponse &response)
{
    return QJsonDocument::fromJson(response.body).object();
}

QString DaytonaApi::serverMessage(const HttpResponse &response)
{
    const QJsonValue message = object(response).value(QStringLiteral("message"));
    if (message.isString())
        return message.toString();
    if (message.isArray()) {
        QStringList parts;
        for (const QJsonValue &v : message.toArray())
            parts.append(v.toString());
        return parts.join(QStringLiteral(", "));
    }
    return QString::fromUtf8(response.body.left(200)).trimmed();
}

void DaytonaApi::raise(const HttpResponse &response, CallKind kind, const QString &what,
                       const QString &path)
{
    const QString subject = path.isEmpty() ? what : QStringLiteral("%1 '%2'").arg(what, path);
    if (response.timedOut)
        throw TimeoutError(QStringLiteral("Daytona %1 timed out: %2; retry, or raise the request "
                                          "timeout")
                               .arg(subject, response.networkError),
                           ETIMEDOUT);
    if (!response.networkError.isEmpty()) {
        const QString text = QStringLiteral("cannot reach Daytona for %1: %2; check "
                                            "DAYTONA_API_URL and the network")
                                 .arg(subject, response.networkError);
        if (kind == CallKind::ControlPlane)
            throw SandboxStartError(text);
        throw OSError(text, ECONNREFUSED);
    }
    const QString server = serverMessage(response);
    const QString detail = QStringLiteral("HTTP %1%2")
                               .arg(response.status)
                               .arg(server.isEmpty() ? QString() : QStringLiteral(": ") + server);
    if (response.status == 401)
        throw PermissionError(QStringLiteral("Daytona rejected the credentials for %1 (%2); set "
                                             "DAYTONA_API_KEY to a valid API key")
                                  .arg(subject, detail),
                              EACCES);
    if (kind == CallKind::ControlPlane)
        throw SandboxStartError(QStringLiteral("Daytona %1 failed (%2)").arg(subject, detail));
    switch (response.status) {
    case 403:
        throw PermissionError(QStringLiteral("%1: permission denied (%2)").arg(subject, detail),
                              EACCES);
    case 404:
        if (kind == CallKind::Execute)
            throw OSError(QStringLiteral("%1: the sandbox or its toolbox is gone (%2); create "
                                         "the sandbox again")
                              .arg(subject, detail),
                          ENOENT);
        throw FileNotFoundError(
            QStringLiteral("%1: no such file or folder (%2)").arg(subject, detail), ENOENT);
    case 408:
        throw TimeoutError(QStringLiteral("%1 timed out on the sandbox (%2)").arg(subject, detail),
                           ETIMEDOUT);
    case 409:
        throw FileExistsError(QStringLiteral("%1: already exists (%2)").arg(subject, detail),
                              EEXIST);
    case 400:
        if (kind == CallKind::File &&
            (server.contains(QStringLiteral("directory"), Qt::CaseInsensitive) ||
             server.contains(QStringLiteral("must be a file"), Qt::CaseInsensitive)))
            throw IsADirectoryError(QStringLiteral("%1: is a folder (%2)").arg(subject, detail),
                                    EISDIR);
        if (kind == CallKind::Folder)
            throw NotADirectoryError(QStringLiteral("%1: not a folder (%2)").arg(subject, detail),
                                     ENOTDIR);
        break;
    default:
        break;
    }
    throw OSError(QStringLiteral("Daytona %1 failed (%2)").arg(subject, detail), EIO);
}

} // namespace elsai::daytona
