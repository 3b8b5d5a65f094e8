// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "awserror.h"

#include "httpclient.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QXmlStreamReader>

namespace elsai::aws {

AwsErrorInfo parseAwsError(const remote::HttpResponse &response)
{
    AwsErrorInfo info;
    info.requestId = QString::fromLatin1(response.header("x-amzn-RequestId"));
    if (info.requestId.isEmpty())
        info.requestId = QString::fromLatin1(response.header("x-amz-request-id"));

    QByteArray type = response.header("x-amzn-ErrorType");
    const QByteArray body = response.body.trimmed();
    if (body.startsWith('<')) {
        QXmlStreamReader xml(body);
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement)
                continue;
            if (xml.name() == QLatin1String("Code"))
                info.code = xml.readElementText();
            else if (xml.name() == QLatin1String("Message"))
                info.message = xml.readElementText();
        }
    } else {
        const QJsonObject json = QJsonDocument::fromJson(body).object();
        if (type.isEmpty())
            type = json.value(QLatin1String("code")).toString().toUtf8();
        if (type.isEmpty())
            type = json.value(QLatin1String("__type")).toString().toUtf8();
        info.message = json.value(QLatin1String("message")).toString();
        if (info.message.isEmpty())
            info.message = json.value(QLatin1String("Message")).toString();
    }
    if (!type.isEmpty()) {
        // "aws.protocoltests#FooError:http://…" → "FooError" (botocore's rule).
        type = type.left(type.indexOf(':') < 0 ? type.size() : type.indexOf(':'));
        type = type.mid(type.lastIndexOf('#') + 1);
        info.code = QString::fromUtf8(type);
    }
    return info;
}

void throwForResponse(const remote::HttpResponse &response, const QString &what)
{
    if (!response.networkError.isEmpty()) {
        const QString message = QStringLiteral("%1 failed: %2. Check the endpoint and the "
                                               "network, then retry.")
                                    .arg(what, response.networkError);
        if (response.timedOut)
            throw TimeoutError(message);
        throw OSError(message);
    }
    const AwsErrorInfo info = parseAwsError(response);
    QString detail = QStringLiteral("HTTP %1").arg(response.status);
    if (!info.code.isEmpty())
        detail += QLatin1Char(' ') + info.code;
    if (!info.message.isEmpty())
        detail += QStringLiteral(": ") + info.message;
    if (!info.requestId.isEmpty())
        detail += QStringLiteral(" (request id %1)").arg(info.requestId);
    const QString message = QStringLiteral("%1 failed with %2").arg(what, detail);
    switch (response.status) {
    case 401:
    case 403:
        throw PermissionError(message + QStringLiteral(". Check AWS_ACCESS_KEY_ID, "
                                                       "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, "
                                                       "the region and the IAM policy."));
    case 404:
        throw FileNotFoundError(message + QStringLiteral("."));
    case 408:
        throw TimeoutError(message + QStringLiteral(". Retry, or raise the timeout."));
    case 400:
        throw ValueError(message + QStringLiteral("."));
    default:
        if (remote::isRetryableStatus(response.status))
            throw OSError(message + QStringLiteral(". The service is throttling or unavailable "
                                                   "even after retries; try again later."));
        throw OSError(message + QStringLiteral("."));
    }
}

} // namespace elsai::aws
