// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QUrl>

#include <functional>

namespace elsai::remote {

using HttpHeaders = QList<QPair<QByteArray, QByteArray>>;

struct HttpRequest
{
    QByteArray method = "GET";
    QUrl url;
    HttpHeaders headers;
    QByteArray body;
    /// Hard deadline of one attempt (connect + send + wait + receive).
    int timeoutMs = 30000;

    /// Replaces every header called `name` (case-insensitive) by one with `value`.
    void setHeader(const QByteArray &name, const QByteArray &value);
};

struct HttpResponse
{
    int status = 0;
    HttpHeaders headers;
    QByteArray body;
    /// Empty when an HTTP status arrived.
    QString networkError;
    /// The attempt hit HttpRequest::timeoutMs (networkError says so too).
    bool timedOut = false;
    /// How many attempts send() made.
    int attempts = 0;

    /// First header called `name` (case-insensitive), empty when absent.
    QByteArray header(const QByteArray &name) const;
    bool ok() const { return networkError.isEmpty() && status >= 200 && status < 300; }
};

struct RetryPolicy
{
    int maxAttempts = 4;
    int initialBackoffMs = 200;
    double multiplier = 2.0;
    /// Cap of one wait. A Retry-After longer than this is not waited for: send() returns the
    /// 429/503 response instead, so a caller never blocks for minutes.
    int maxBackoffMs = 5000;
    /// Called before each wait (attempt number that failed, milliseconds about to be waited).
    std::function<void(int, int)> onRetry;
};

/// Blocking; callable from any thread with a QCoreApplication alive (own QNetworkAccessManager
/// + event loop per call).
/// Retries network errors, 429 and 5xx with exponential backoff (Retry-After honoured);
/// `sign` is called on the request before every attempt (SigV4 needs a fresh date).
/// A timed-out attempt is not retried: the server may have acted on it (a command may have run).
HttpResponse send(HttpRequest request, const RetryPolicy &retry = {},
                  const std::function<void(HttpRequest &)> &sign = {});

/// True for the statuses send() retries (429 and 5xx).
bool isRetryableStatus(int status);

/// Milliseconds a Retry-After value asks for (delta-seconds or HTTP-date); -1 when absent or
/// unparsable.
int retryAfterMs(const QByteArray &value);

} // namespace elsai::remote
