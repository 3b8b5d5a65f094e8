// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "httpclient.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QUrl>
#include <QUrlQuery>

namespace elsai::daytona {

/// Connection settings (docs/backends/daytona.md, "Configuration").
struct DaytonaConfig
{
    QString apiKey;                                                   ///< DAYTONA_API_KEY
    QString jwtToken;                                                 ///< DAYTONA_JWT_TOKEN
    QString organizationId;                                           ///< DAYTONA_ORGANIZATION_ID
    QUrl apiUrl = QUrl(QStringLiteral("https://app.daytona.io/api")); ///< DAYTONA_API_URL
    QString target;                                                   ///< DAYTONA_TARGET
    int requestTimeoutMs = 60000; ///< per HTTP attempt (execute adds the command timeout)
    remote::RetryPolicy retry;

    /// Reads the DAYTONA_* variables (DAYTONA_SERVER_URL as the deprecated alias of the URL).
    static DaytonaConfig fromEnvironment();
};

/// What a failed call was doing, so a status maps to the right typed error.
enum class CallKind { ControlPlane, File, Folder, Execute };

/// The HTTP mechanics of both Daytona APIs: auth headers, JSON, and status → typed error.
class DaytonaApi
{
public:
    explicit DaytonaApi(DaytonaConfig config);

    const DaytonaConfig &config() const { return m_config; }

    /// Control plane: `{apiUrl}{path}`.
    remote::HttpResponse control(const QByteArray &method, const QString &path,
                                 const QJsonObject &body = {}, bool hasBody = false) const;
    /// Toolbox: `{toolboxBase}{path}?{query}`. `retry` false sends exactly once (execute).
    remote::HttpResponse toolbox(const QUrl &toolboxBase, const QByteArray &method,
                                 const QString &path, const QUrlQuery &query = {},
                                 const QByteArray &body = {}, const QByteArray &contentType = {},
                                 int timeoutMs = -1, bool retry = true) const;

    /// Throws the typed error a failed response stands for. `what` names the operation
    /// ("read", "create sandbox"), `path` the workspace path (may be empty).
    [[noreturn]] static void raise(const remote::HttpResponse &response, CallKind kind,
                                   const QString &what, const QString &path = {});
    /// The server's message, parsed best-effort from either error shape (§1.7).
    static QString serverMessage(const remote::HttpResponse &response);

    static QJsonObject object(const remote::HttpResponse &response);

    /// The headers every request carries (authentication, source): the toolbox's WebSocket
    /// (the terminal) sends them too.
    QList<QPair<QByteArray, QByteArray>> headers() const;

private:
    remote::HttpResponse send(remote::HttpRequest request, bool retry) const;

    DaytonaConfig m_config;
};

} // namespace elsai::daytona
