// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "s3storage.h"

#include "awserror.h"

#include <QRandomGenerator>
#include <QRegularExpression>

namespace elsai::aws {

namespace {

bool isValidHandle(const QString &handle)
{
    static const QRegularExpression re(QStringLiteral("^[0-9a-f]{32}$"));
    return re.match(handle).hasMatch();
}

QString newHandle()
{
    quint64 words[2];
    QRandomGenerator::system()->fillRange(words);
    return QString::fromLatin1(
        QByteArray(reinterpret_cast<const char *>(words), sizeof(words)).toHex());
}

} // namespace

S3Storage::Options S3Storage::optionsFromEnvironment(const QString &bucket)
{
    Options o;
    o.bucket = bucket;
    o.credentials = Credentials::fromEnvironment();
    const QString region = regionFromEnvironment();
    if (!region.isEmpty())
        o.region = region;
    o.endpoint = endpointOverrideFromEnvironment(QStringLiteral("s3"));
    return o;
}

S3Storage::S3Storage(Options options)
    : m_options(std::move(options)),
      m_signer(m_options.credentials, m_options.region, QStringLiteral("s3"))
{
    if (m_options.bucket.isEmpty())
        throw ValueError(QStringLiteral("S3Storage needs a bucket name."));
    if (!m_options.credentials.isValid())
        throw ValueError(QStringLiteral("S3Storage needs AWS credentials: set AWS_ACCESS_KEY_ID "
                                        "and AWS_SECRET_ACCESS_KEY."));
    if (m_options.region.isEmpty())
        throw ValueError(QStringLiteral("S3Storage needs a region: set AWS_REGION."));
    if (m_options.endpoint.isValid() && !m_options.endpoint.isEmpty() &&
        m_options.endpoint.scheme() != QLatin1String("http") &&
        m_options.endpoint.scheme() != QLatin1String("https"))
        throw ValueError(QStringLiteral("S3 endpoint '%1' is not an http(s) URL.")
                             .arg(m_options.endpoint.toString()));
    // A key travels as it is signed (S3 signs the path as sent), but Qt's HTTP layer resolves
    // "." and ".." segments on the wire: such a request would name another key. Empty
    // segments ("a//b") go out as they are.
    for (const QString &segment : m_options.prefix.split(QLatin1Char('/'))) {
        if (segment == QLatin1String(".") || segment == QLatin1String(".."))
            throw ValueError(QStringLiteral("S3Storage prefix '%1' has a '%2' segment, which the "
                                            "HTTP layer would resolve (the request would name "
                                            "another key); use a prefix without one.")
                                 .arg(m_options.prefix, segment));
    }
    if (keyFor(QString(32, QLatin1Char('0'))).toUtf8().size() > 1024)
        throw ValueError(QStringLiteral("S3Storage prefix is too long: keys are limited to "
                                        "1024 bytes."));
}

QString S3Storage::keyFor(const QString &handle) const
{
    return m_options.prefix + handle + QStringLiteral(".txt");
}

QUrl S3Storage::objectUrl(const QString &key) const
{
    const QByteArray encodedKey = uriEncode(key.toUtf8(), true);
    const QByteArray bucket = m_options.bucket.toUtf8();
    if (!m_options.endpoint.isEmpty()) {
        QByteArray base = m_options.endpoint.toEncoded(QUrl::RemoveQuery | QUrl::RemoveFragment);
        while (base.endsWith('/'))
            base.chop(1);
        return QUrl::fromEncoded(base + '/' + uriEncode(bucket) + '/' + encodedKey);
    }
    const QByteArray region = m_options.region.toUtf8();
    const QByteArray suffix = dnsSuffix(m_options.region).toUtf8();
    if (m_options.forcePathStyle || bucket.contains('.'))
        return QUrl::fromEncoded("https://s3." + region + '.' + suffix + '/' + uriEncode(bucket) +
                                 '/' + encodedKey);
    return QUrl::fromEncoded("https://" + bucket + ".s3." + region + '.' + suffix + '/' +
                             encodedKey);
}

remote::HttpResponse S3Storage::send(const QByteArray &method, const QString &key,
                                     const QByteArray &body, const remote::HttpHeaders &headers)
{
    remote::HttpRequest request;
    request.method = method;
    request.url = objectUrl(key);
    request.headers = headers;
    request.body = body;
    request.timeoutMs = m_options.timeoutMs;
    return remote::send(request, m_options.retry, [this](remote::HttpRequest &r) {
        m_signer.sign(r.method, r.url, r.headers, r.body, QDateTime::currentDateTimeUtc());
    });
}

QString S3Storage::store(const QString &content)
{
    const QByteArray body = content.toUtf8();
    // A random 128-bit name collides only in theory; a 412 picks another one.
    for (int attempt = 0; attempt < 3; ++attempt) {
        const QString handle = newHandle();
        const QString key = keyFor(handle);
        const remote::HttpResponse response =
            send("PUT", key, body,
                 {{"Content-Type", "text/plain; charset=utf-8"}, {"If-None-Match", "*"}});
        if (response.ok())
            return handle;
        if (response.networkError.isEmpty() && response.status == 412)
            continue;
        throwForResponse(response, QStringLiteral("S3 PUT s3://%1/%2").arg(m_options.bucket, key));
    }
    throw OSError(QStringLiteral("S3 PUT into s3://%1/%2 kept finding existing objects; check "
                                 "the bucket's prefix.")
                      .arg(m_options.bucket, m_options.prefix));
}

std::optional<QString> S3Storage::retrieve(const QString &handle)
{
    if (!isValidHandle(handle))
        return std::nullopt;
    const QString key = keyFor(handle);
    const remote::HttpResponse response = send("GET", key);
    if (response.ok())
        return QString::fromUtf8(response.body);
    if (response.networkError.isEmpty() && (response.status == 404 || response.status == 403)) {
        const QString code = parseAwsError(response).code;
        if (code == QLatin1String("NoSuchKey") || code == QLatin1String("AccessDenied") ||
            (response.status == 404 && code.isEmpty()))
            return std::nullopt;
    }
    throwForResponse(response, QStringLiteral("S3 GET s3://%1/%2").arg(m_options.bucket, key));
}

void S3Storage::remove(const QString &handle)
{
    if (!isValidHandle(handle))
        throw ValueError(QStringLiteral("'%1' is not an S3Storage handle.").arg(handle));
    const QString key = keyFor(handle);
    const remote::HttpResponse response = send("DELETE", key);
    if (!response.ok())
        throwForResponse(response,
                         QStringLiteral("S3 DELETE s3://%1/%2").arg(m_options.bucket, key));
}

} // namespace elsai::aws
