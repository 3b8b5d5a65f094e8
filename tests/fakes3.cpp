// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "fakes3.h"

#include <QCryptographicHash>

namespace elsai::test {

namespace {

FakeHttpServer::Response xmlError(int status, const QByteArray &code, const QString &message)
{
    FakeHttpServer::Response r;
    r.status = status;
    r.headers = {{"Content-Type", "application/xml"}, {"x-amz-request-id", "FAKE0001"}};
    r.body = FakeS3::errorXml(code, message);
    return r;
}

} // namespace

FakeS3::FakeS3(aws::Credentials credentials, QString region)
    : m_credentials(std::move(credentials)), m_region(std::move(region))
{
    m_server.setHandler([this](const FakeHttpServer::Request &r) { return handle(r); });
}

QByteArray FakeS3::errorXml(const QByteArray &code, const QString &message)
{
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code + "</Code><Message>" +
           message.toHtmlEscaped().toUtf8() + "</Message><RequestId>FAKE0001</RequestId></Error>";
}

void FakeS3::createBucket(const QString &bucket)
{
    QMutexLocker lock(&m_mutex);
    m_buckets.insert(bucket);
}

QHash<QString, QByteArray> FakeS3::objects() const
{
    QMutexLocker lock(&m_mutex);
    return m_objects;
}

void FakeS3::putObject(const QString &bucket, const QString &key, const QByteArray &data)
{
    QMutexLocker lock(&m_mutex);
    m_objects.insert(bucket + QLatin1Char('/') + key, data);
}

void FakeS3::setHideMissingKeys(bool hide)
{
    QMutexLocker lock(&m_mutex);
    m_hideMissing = hide;
}

QStringList FakeS3::rejections() const
{
    QMutexLocker lock(&m_mutex);
    return m_rejections;
}

FakeHttpServer::Response FakeS3::handle(const FakeHttpServer::Request &request)
{
    const QString why = aws::verifySignedRequest(
        request.method, request.target, request.headers, request.body, m_credentials, m_region,
        QStringLiteral("s3"), QDateTime::currentDateTimeUtc());
    QMutexLocker lock(&m_mutex);
    if (!why.isEmpty()) {
        m_rejections.append(why);
        return xmlError(403, "SignatureDoesNotMatch", why);
    }

    const QByteArray rawPath = request.target.left(
        request.target.indexOf('?') < 0 ? request.target.size() : request.target.indexOf('?'));
    const qsizetype slash = rawPath.indexOf('/', 1);
    if (slash < 0)
        return xmlError(400, "InvalidRequest", QStringLiteral("path-style /bucket/key expected"));
    const QString bucket =
        QString::fromUtf8(QByteArray::fromPercentEncoding(rawPath.mid(1, slash - 1)));
    const QByteArray rawKey = rawPath.mid(slash + 1);
    const QByteArray key = QByteArray::fromPercentEncoding(rawKey);
    // S3 re-encodes the decoded key strictly; a client that sent another encoding signed
    // something else.
    if (aws::uriEncode(key, true) != rawKey)
        return xmlError(400, "InvalidURI", QStringLiteral("key not strictly encoded"));
    if (!m_buckets.contains(bucket))
        return xmlError(404, "NoSuchBucket", QStringLiteral("The specified bucket does not exist"));
    const QString id = bucket + QLatin1Char('/') + QString::fromUtf8(key);

    FakeHttpServer::Response ok;
    ok.headers = {{"x-amz-request-id", "FAKE0001"}};
    if (request.method == "PUT") {
        if (request.header("content-length").isEmpty())
            return xmlError(411, "MissingContentLength", QStringLiteral("Content-Length needed"));
        if (request.header("if-none-match") == "*" && m_objects.contains(id))
            return xmlError(412, "PreconditionFailed", QStringLiteral("object exists"));
        m_objects.insert(id, request.body);
        ok.headers.emplaceBack(
            "ETag",
            '"' + QCryptographicHash::hash(request.body, QCryptographicHash::Md5).toHex() + '"');
        return ok;
    }
    if (request.method == "GET") {
        if (!m_objects.contains(id)) {
            if (m_hideMissing)
                return xmlError(403, "AccessDenied", QStringLiteral("Access Denied"));
            return xmlError(404, "NoSuchKey", QStringLiteral("The specified key does not exist."));
        }
        ok.headers.emplaceBack("Content-Type", "text/plain; charset=utf-8");
        ok.body = m_objects.value(id);
        // Range: bytes=a-b (b optional), as S3 answers it: 206 with Content-Range, or 416
        const QByteArray range = request.header("range");
        if (range.startsWith("bytes=")) {
            const QList<QByteArray> ends = range.mid(6).split('-');
            const qint64 size = ok.body.size();
            const qint64 first = ends.value(0).toLongLong();
            const qint64 last = ends.value(1).isEmpty() ? size - 1 : ends.value(1).toLongLong();
            if (first >= size || last < first) {
                FakeHttpServer::Response r =
                    xmlError(416, "InvalidRange", QStringLiteral("range not satisfiable"));
                r.headers.emplaceBack("Content-Range", "bytes */" + QByteArray::number(size));
                return r;
            }
            const qint64 end = qMin(last, size - 1);
            ok.status = 206;
            ok.headers.emplaceBack("Content-Range", "bytes " + QByteArray::number(first) + '-' +
                                                        QByteArray::number(end) + '/' +
                                                        QByteArray::number(size));
            ok.body = ok.body.mid(qsizetype(first), qsizetype(end - first + 1));
        }
        return ok;
    }
    if (request.method == "DELETE") {
        m_objects.remove(id);
        ok.status = 204;
        return ok;
    }
    return xmlError(405, "MethodNotAllowed", QStringLiteral("not supported by the fake"));
}

} // namespace elsai::test
