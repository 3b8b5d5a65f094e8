// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "s3storage.h"

#include "awserror.h"
#include "backend.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <exception>

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

QString S3Storage::manifestKeyFor(const QString &handle) const
{
    return m_options.prefix + handle + QStringLiteral(".parts");
}

QString S3Storage::partKeyFor(const QString &handle, qsizetype index) const
{
    return m_options.prefix + handle + QStringLiteral(".part-%1").arg(index, 6, 10, QChar(u'0'));
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

bool S3Storage::isMissing(const remote::HttpResponse &response)
{
    if (!response.networkError.isEmpty() || (response.status != 404 && response.status != 403))
        return false;
    const QString code = parseAwsError(response).code;
    return code == QLatin1String("NoSuchKey") || code == QLatin1String("AccessDenied") ||
           (response.status == 404 && code.isEmpty());
}

std::optional<QString> S3Storage::retrieve(const QString &handle)
{
    if (!isValidHandle(handle))
        return std::nullopt;
    const QString key = keyFor(handle);
    const remote::HttpResponse response = send("GET", key);
    if (response.ok())
        return QString::fromUtf8(response.body);
    if (!isMissing(response))
        throwForResponse(response, QStringLiteral("S3 GET s3://%1/%2").arg(m_options.bucket, key));
    const auto sizes = parts(handle);
    if (!sizes)
        return std::nullopt;
    QByteArray all;
    for (qsizetype i = 0; i < sizes->size(); ++i) {
        if (sizes->at(i) == 0)
            continue;
        const auto piece = getRange(partKeyFor(handle, i), 0, sizes->at(i));
        if (!piece)
            return std::nullopt; // a piece was deleted since
        all += piece->data;
    }
    return QString::fromUtf8(all);
}

std::optional<FileRange> S3Storage::getRange(const QString &key, qint64 offset, qint64 length)
{
    const QByteArray range =
        "bytes=" + QByteArray::number(offset) + '-' + QByteArray::number(offset + length - 1);
    const remote::HttpResponse response = send("GET", key, {}, {{"Range", range}});
    const QString what = QStringLiteral("S3 GET s3://%1/%2").arg(m_options.bucket, key);
    if (isMissing(response))
        return std::nullopt;
    const QByteArray contentRange = response.header("Content-Range"); // "bytes a-b/total"
    const auto totalOf = [&]() -> qint64 {
        bool ok = false;
        const qint64 total = contentRange.mid(contentRange.lastIndexOf('/') + 1).toLongLong(&ok);
        if (!ok)
            throw OSError(QStringLiteral("%1: the answer has no usable Content-Range").arg(what));
        return total;
    };
    if (response.networkError.isEmpty() && response.status == 416) {
        // past the end: the probe of the first byte says the size (416 again: empty object)
        if (offset == 0)
            return FileRange{{}, 0};
        const auto first = getRange(key, 0, 1);
        return first ? std::optional<FileRange>(FileRange{{}, first->totalSize}) : std::nullopt;
    }
    if (!response.ok())
        throwForResponse(response, what);
    if (response.status == 206)
        return FileRange{response.body.left(qsizetype(length)), totalOf()};
    // a server that ignores Range sends the whole object
    FileRange whole{{}, response.body.size()};
    if (offset < whole.totalSize)
        whole.data = response.body.mid(qsizetype(offset), qsizetype(length));
    return whole;
}

std::optional<QList<qint64>> S3Storage::parts(const QString &handle)
{
    {
        QMutexLocker lock(&m_partsMutex);
        const auto it = m_parts.constFind(handle);
        if (it != m_parts.cend())
            return *it;
    }
    const QString key = manifestKeyFor(handle);
    const remote::HttpResponse response = send("GET", key);
    if (isMissing(response))
        return std::nullopt;
    if (!response.ok())
        throwForResponse(response, QStringLiteral("S3 GET s3://%1/%2").arg(m_options.bucket, key));
    QList<qint64> sizes;
    const QJsonArray array = QJsonDocument::fromJson(response.body)
                                 .object()
                                 .value(QStringLiteral("part_sizes"))
                                 .toArray();
    for (const QJsonValue &v : array) {
        if (v.toInteger(-1) < 0)
            throw OSError(QStringLiteral("S3 object s3://%1/%2 is not a manifest of pieces")
                              .arg(m_options.bucket, key));
        sizes.append(v.toInteger());
    }
    QMutexLocker lock(&m_partsMutex);
    m_parts.insert(handle, sizes);
    return sizes;
}

std::optional<QString> S3Storage::storeStream(const OffloadSource &next)
{
    QString handle;
    QList<qint64> sizes;
    try {
        for (QByteArray piece = next(); !piece.isEmpty(); piece = next()) {
            for (int attempt = 0;; ++attempt) {
                if (sizes.isEmpty())
                    handle = newHandle();
                const QString key = partKeyFor(handle, sizes.size());
                const remote::HttpResponse response =
                    send("PUT", key, piece,
                         {{"Content-Type", "application/octet-stream"}, {"If-None-Match", "*"}});
                if (response.ok())
                    break;
                // a taken name: only the first piece may pick another handle
                if (sizes.isEmpty() && attempt < 2 && response.networkError.isEmpty() &&
                    response.status == 412)
                    continue;
                throwForResponse(response,
                                 QStringLiteral("S3 PUT s3://%1/%2").arg(m_options.bucket, key));
            }
            sizes.append(piece.size());
        }
        if (handle.isEmpty())
            handle = newHandle();
        QJsonArray array;
        for (const qint64 size : std::as_const(sizes))
            array.append(size);
        const QString key = manifestKeyFor(handle);
        const remote::HttpResponse response =
            send("PUT", key,
                 QJsonDocument(QJsonObject{{QStringLiteral("part_sizes"), array}})
                     .toJson(QJsonDocument::Compact),
                 {{"Content-Type", "application/json"}, {"If-None-Match", "*"}});
        if (!response.ok())
            throwForResponse(response,
                             QStringLiteral("S3 PUT s3://%1/%2").arg(m_options.bucket, key));
    } catch (...) {
        // nothing half-stored stays behind (best effort: the failure is what is reported)
        for (qsizetype i = 0; i < sizes.size(); ++i)
            send("DELETE", partKeyFor(handle, i));
        throw;
    }
    QMutexLocker lock(&m_partsMutex);
    m_parts.insert(handle, sizes);
    return handle;
}

std::optional<FileRange> S3Storage::retrieveRange(const QString &handle, qint64 offset,
                                                  qint64 length)
{
    if (offset < 0 || length < 0)
        throw ValueError(QStringLiteral("an offloaded range needs offset >= 0 and length >= 0"));
    if (!isValidHandle(handle))
        return std::nullopt;
    bool streamed;
    {
        QMutexLocker lock(&m_partsMutex);
        streamed = m_parts.contains(handle);
    }
    if (!streamed) {
        // one ranged GET (a zero length still asks for one byte: the size comes with it)
        if (auto range = getRange(keyFor(handle), offset, qMax<qint64>(length, 1))) {
            range->data.truncate(qsizetype(length));
            return range;
        }
    }
    const auto sizes = parts(handle);
    if (!sizes)
        return std::nullopt;
    FileRange out;
    for (const qint64 size : *sizes)
        out.totalSize += size;
    qint64 start = 0; // of the piece
    const qint64 end = qMin(out.totalSize, offset + length);
    for (qsizetype i = 0; i < sizes->size() && start < end; start += sizes->at(i), ++i) {
        const qint64 from = qMax(offset, start), to = qMin(end, start + sizes->at(i));
        if (from >= to)
            continue;
        const auto piece = getRange(partKeyFor(handle, i), from - start, to - from);
        if (!piece)
            return std::nullopt; // deleted since
        out.data += piece->data;
    }
    return out;
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
    const auto sizes = parts(handle);
    if (!sizes)
        return;
    QStringList keys{manifestKeyFor(handle)}; // first: the handle is gone at once
    for (qsizetype i = 0; i < sizes->size(); ++i)
        keys << partKeyFor(handle, i);
    for (const QString &k : std::as_const(keys)) {
        const remote::HttpResponse r = send("DELETE", k);
        if (!r.ok())
            throwForResponse(r, QStringLiteral("S3 DELETE s3://%1/%2").arg(m_options.bucket, k));
    }
    QMutexLocker lock(&m_partsMutex);
    m_parts.remove(handle);
}

} // namespace elsai::aws
