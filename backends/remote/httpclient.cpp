// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "httpclient.h"

#include <QDateTime>
#include <QEventLoop>
#include <QLocale>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QThread>
#include <QTimeZone>
#include <QTimer>

#include <algorithm>
#include <cmath>

Q_LOGGING_CATEGORY(lcHttp, "elsai.remote.http")

namespace elsai::remote {

void HttpRequest::setHeader(const QByteArray &name, const QByteArray &value)
{
    headers.removeIf(
        [&](const auto &h) { return h.first.compare(name, Qt::CaseInsensitive) == 0; });
    headers.emplaceBack(name, value);
}

QByteArray HttpResponse::header(const QByteArray &name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    }
    return {};
}

bool isRetryableStatus(int status)
{
    return status == 429 || (status >= 500 && status <= 599);
}

int retryAfterMs(const QByteArray &value)
{
    const QByteArray v = value.trimmed();
    if (v.isEmpty())
        return -1;
    bool isNumber = false;
    const qint64 seconds = v.toLongLong(&isNumber);
    if (isNumber)
        return seconds < 0 ? -1 : int(std::min<qint64>(seconds, 24 * 3600) * 1000);
    // HTTP-date (RFC 9110 IMF-fixdate); Qt's RFC 2822 parser does not take the "GMT" zone.
    QDateTime at = QLocale::c().toDateTime(QString::fromLatin1(v),
                                           QStringLiteral("ddd, dd MMM yyyy HH:mm:ss 'GMT'"));
    at.setTimeZone(QTimeZone::utc());
    if (!at.isValid())
        return -1;
    return int(
        std::clamp<qint64>(QDateTime::currentDateTimeUtc().msecsTo(at), 0, 24 * 3600 * 1000));
}

namespace {

HttpResponse attempt(const HttpRequest &request)
{
    HttpResponse response;
    QNetworkAccessManager manager;
    // Explicit proxies only: a proxy picked up from the environment would break loopback tests
    // and leak bearer tokens to a host nobody configured.
    manager.setProxy(QNetworkProxy::NoProxy);

    QNetworkRequest qreq(request.url);
    qreq.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                      QNetworkRequest::NoLessSafeRedirectPolicy);
    qreq.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    for (const auto &h : request.headers)
        qreq.setRawHeader(h.first, h.second);

    QNetworkReply *reply = manager.sendCustomRequest(qreq, request.method, request.body);
    QEventLoop loop;
    QTimer deadline;
    deadline.setSingleShot(true);
    bool timedOut = false;
    QObject::connect(&deadline, &QTimer::timeout, &loop, [&] {
        timedOut = true;
        reply->abort();
    });
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    if (request.timeoutMs > 0)
        deadline.start(request.timeoutMs);
    if (!reply->isFinished())
        loop.exec(QEventLoop::ExcludeUserInputEvents);
    deadline.stop();

    const QVariant status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    if (timedOut) {
        response.timedOut = true;
        response.networkError = QStringLiteral("no complete response from %1 within %2 ms")
                                    .arg(request.url.toDisplayString(QUrl::RemoveQuery))
                                    .arg(request.timeoutMs);
    } else if (status.isValid()) {
        response.status = status.toInt();
        response.body = reply->readAll();
        for (const auto &h : reply->rawHeaderPairs())
            response.headers.append(h);
    } else {
        response.networkError = reply->errorString();
        if (response.networkError.isEmpty())
            response.networkError = QStringLiteral("network error %1").arg(int(reply->error()));
    }
    delete reply;
    return response;
}

int backoffMs(const RetryPolicy &retry, int failedAttempt)
{
    const double ms = retry.initialBackoffMs * std::pow(retry.multiplier, failedAttempt - 1);
    return int(std::clamp(ms, 0.0, double(std::max(0, retry.maxBackoffMs))));
}

} // namespace

HttpResponse send(HttpRequest request, const RetryPolicy &retry,
                  const std::function<void(HttpRequest &)> &sign)
{
    const int maxAttempts = std::max(1, retry.maxAttempts);
    HttpResponse response;
    for (int n = 1;; ++n) {
        HttpRequest signedRequest = request;
        if (sign)
            sign(signedRequest);
        response = attempt(signedRequest);
        response.attempts = n;
        const bool retryable = (!response.networkError.isEmpty() && !response.timedOut) ||
                               isRetryableStatus(response.status);
        if (!retryable || n >= maxAttempts)
            break;
        int waitMs = backoffMs(retry, n);
        const int askedMs = retryAfterMs(response.header("Retry-After"));
        if (askedMs > retry.maxBackoffMs)
            break; // the server wants more patience than the policy allows
        waitMs = std::max(waitMs, askedMs);
        qCDebug(lcHttp) << request.method << request.url.toDisplayString(QUrl::RemoveQuery)
                        << "attempt" << n << "failed:"
                        << (response.status ? QString::number(response.status)
                                            : response.networkError)
                        << "- retrying in" << waitMs << "ms";
        if (retry.onRetry)
            retry.onRetry(n, waitMs);
        QThread::msleep(ulong(waitMs));
    }
    return response;
}

} // namespace elsai::remote
