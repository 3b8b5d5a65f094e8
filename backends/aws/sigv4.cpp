// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sigv4.h"

#include <QCryptographicHash>
#include <QMessageAuthenticationCode>
#include <QRegularExpression>
#include <QTimeZone>

#include <algorithm>

namespace elsai::aws {

namespace {

QByteArray hmac(const QByteArray &key, const QByteArray &data)
{
    return QMessageAuthenticationCode::hash(data, key, QCryptographicHash::Sha256);
}

bool isUnreserved(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '~';
}

// Trims and collapses inner whitespace runs, as botocore's canonical header values do.
QByteArray canonicalHeaderValue(const QByteArray &value)
{
    return value.simplified();
}

// RFC 3986 remove_dot_segments on an encoded path (botocore's _normalize_url_path).
QByteArray removeDotSegments(const QByteArray &path)
{
    if (path.isEmpty())
        return QByteArrayLiteral("/");
    QList<QByteArray> out;
    const QList<QByteArray> parts = path.split('/');
    for (const QByteArray &part : parts) {
        if (part == ".")
            continue;
        if (part == "..") {
            if (!out.isEmpty())
                out.removeLast();
            continue;
        }
        if (!part.isEmpty())
            out.append(part);
    }
    QByteArray result = '/' + out.join('/');
    if (path.endsWith('/') && result.size() > 1)
        result += '/';
    return result;
}

const QList<QByteArray> &signatureHeaderNames()
{
    static const QList<QByteArray> names = {"authorization", "x-amz-date", "x-amz-security-token",
                                            "x-amz-content-sha256"};
    return names;
}

} // namespace

Credentials Credentials::fromEnvironment()
{
    Credentials c;
    c.accessKeyId = qEnvironmentVariable("AWS_ACCESS_KEY_ID");
    c.secretAccessKey = qEnvironmentVariable("AWS_SECRET_ACCESS_KEY");
    c.sessionToken = qEnvironmentVariable("AWS_SESSION_TOKEN");
    if (c.sessionToken.isEmpty())
        c.sessionToken = qEnvironmentVariable("AWS_SECURITY_TOKEN");
    return c;
}

QString regionFromEnvironment()
{
    const QString region = qEnvironmentVariable("AWS_REGION");
    return region.isEmpty() ? qEnvironmentVariable("AWS_DEFAULT_REGION") : region;
}

QString dnsSuffix(const QString &region)
{
    return region.startsWith(QLatin1String("cn-")) ? QStringLiteral("amazonaws.com.cn")
                                                   : QStringLiteral("amazonaws.com");
}

QUrl endpointOverrideFromEnvironment(const QString &serviceId)
{
    QString suffix = serviceId.toUpper();
    suffix.replace(QLatin1Char('-'), QLatin1Char('_')).replace(QLatin1Char(' '), QLatin1Char('_'));
    QString value = qEnvironmentVariable(qPrintable(QStringLiteral("AWS_ENDPOINT_URL_") + suffix));
    if (value.isEmpty())
        value = qEnvironmentVariable("AWS_ENDPOINT_URL");
    return value.isEmpty() ? QUrl() : QUrl(value);
}

QByteArray uriEncode(const QByteArray &bytes, bool keepSlash)
{
    static const char hex[] = "0123456789ABCDEF";
    QByteArray out;
    out.reserve(bytes.size() * 3);
    for (const char c : bytes) {
        if (isUnreserved(c) || (keepSlash && c == '/')) {
            out += c;
        } else {
            const auto u = static_cast<unsigned char>(c);
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 0xf];
        }
    }
    return out;
}

QByteArray canonicalQuery(const QByteArray &encodedQuery)
{
    if (encodedQuery.isEmpty())
        return {};
    QList<QPair<QByteArray, QByteArray>> pairs;
    for (const QByteArray &item : encodedQuery.split('&')) {
        if (item.isEmpty())
            continue;
        const qsizetype eq = item.indexOf('=');
        const QByteArray key = eq < 0 ? item : item.left(eq);
        const QByteArray value = eq < 0 ? QByteArray() : item.mid(eq + 1);
        // '+' in a query means a space only in forms; SigV4 treats it as a literal plus.
        pairs.append({uriEncode(QByteArray::fromPercentEncoding(key)),
                      uriEncode(QByteArray::fromPercentEncoding(value))});
    }
    std::sort(pairs.begin(), pairs.end());
    QByteArray out;
    for (const auto &[key, value] : pairs) {
        if (!out.isEmpty())
            out += '&';
        out += key + '=' + value;
    }
    return out;
}

QByteArray hostHeader(const QUrl &url)
{
    QByteArray host = url.host(QUrl::FullyEncoded).toLatin1();
    if (host.contains(':'))
        host = '[' + host + ']'; // IPv6 literal
    const int port = url.port(-1);
    const int defaultPort = url.scheme() == QLatin1String("https") ? 443 : 80;
    if (port != -1 && port != defaultPort)
        host += ':' + QByteArray::number(port);
    return host;
}

QByteArray sha256Hex(const QByteArray &data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}

QByteArray amzDate(const QDateTime &utc)
{
    return utc.toUTC().toString(QStringLiteral("yyyyMMdd'T'HHmmss'Z'")).toLatin1();
}

SigV4Signer::SigV4Signer(Credentials credentials, QString region, QString service)
    : m_credentials(std::move(credentials)), m_region(std::move(region)),
      m_service(std::move(service))
{
}

QByteArray SigV4Signer::canonicalUri(const QByteArray &encodedPath) const
{
    if (isS3())
        return encodedPath.isEmpty() ? QByteArrayLiteral("/") : encodedPath;
    return uriEncode(removeDotSegments(encodedPath), true);
}

QByteArray SigV4Signer::signingKey(const QByteArray &day) const
{
    const QByteArray kDate = hmac("AWS4" + m_credentials.secretAccessKey.toUtf8(), day);
    const QByteArray kRegion = hmac(kDate, m_region.toUtf8());
    const QByteArray kService = hmac(kRegion, m_service.toUtf8());
    return hmac(kService, QByteArrayLiteral("aws4_request"));
}

SignatureParts SigV4Signer::compute(const QByteArray &method, const QUrl &url,
                                    const HeaderList &headers,
                                    const QList<QByteArray> &signedHeaderNames,
                                    const QByteArray &payloadHash) const
{
    QList<QByteArray> names;
    for (const QByteArray &name : signedHeaderNames)
        names.append(name.toLower());
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());

    QByteArray date;
    QByteArray canonicalHeaders;
    for (const QByteArray &name : std::as_const(names)) {
        QList<QByteArray> values;
        for (const auto &[key, value] : headers) {
            if (key.toLower() == name)
                values.append(canonicalHeaderValue(value));
        }
        if (values.isEmpty() && name == "host")
            values.append(hostHeader(url));
        if (name == "x-amz-date" && !values.isEmpty())
            date = values.constFirst();
        canonicalHeaders += name + ':' + values.join(',') + '\n';
    }

    SignatureParts parts;
    parts.signedHeaders = names.join(';');
    parts.canonicalRequest = method.toUpper() + '\n' +
                             canonicalUri(url.path(QUrl::FullyEncoded).toLatin1()) + '\n' +
                             canonicalQuery(url.query(QUrl::FullyEncoded).toLatin1()) + '\n' +
                             canonicalHeaders + '\n' + parts.signedHeaders + '\n' + payloadHash;

    const QByteArray day = date.left(8);
    const QByteArray scope =
        day + '/' + m_region.toUtf8() + '/' + m_service.toUtf8() + "/aws4_request";
    parts.stringToSign =
        "AWS4-HMAC-SHA256\n" + date + '\n' + scope + '\n' + sha256Hex(parts.canonicalRequest);
    parts.signature = hmac(signingKey(day), parts.stringToSign).toHex();
    parts.authorization = "AWS4-HMAC-SHA256 Credential=" + m_credentials.accessKeyId.toUtf8() +
                          '/' + scope + ", SignedHeaders=" + parts.signedHeaders +
                          ", Signature=" + parts.signature;
    return parts;
}

SignatureParts SigV4Signer::sign(const QByteArray &method, const QUrl &url, HeaderList &headers,
                                 const QByteArray &body, const QDateTime &nowUtc,
                                 bool unsignedPayload) const
{
    headers.removeIf([](const QPair<QByteArray, QByteArray> &h) {
        return signatureHeaderNames().contains(h.first.toLower());
    });
    const QByteArray payloadHash = isS3() && unsignedPayload ? UNSIGNED_PAYLOAD : sha256Hex(body);
    headers.append({QByteArrayLiteral("X-Amz-Date"), amzDate(nowUtc)});
    if (!m_credentials.sessionToken.isEmpty())
        headers.append(
            {QByteArrayLiteral("X-Amz-Security-Token"), m_credentials.sessionToken.toUtf8()});
    if (isS3())
        headers.append({QByteArrayLiteral("x-amz-content-sha256"), payloadHash});

    QList<QByteArray> names{QByteArrayLiteral("host")};
    for (const auto &header : std::as_const(headers))
        names.append(header.first.toLower());
    SignatureParts parts = compute(method, url, headers, names, payloadHash);
    headers.append({QByteArrayLiteral("Authorization"), parts.authorization});
    return parts;
}

ParsedAuthorization parseAuthorization(const QByteArray &value)
{
    // AWS4-HMAC-SHA256 Credential=AKID/20250716/us-east-1/s3/aws4_request,
    //   SignedHeaders=host;x-amz-date, Signature=hex
    static const QRegularExpression re(
        QStringLiteral(R"(^AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)/(\d{8})/([^/,\s]+)/([^/,\s]+))"
                       R"(/aws4_request\s*,)"
                       R"(\s*SignedHeaders=([a-z0-9;_.-]+)\s*,\s*Signature=([0-9a-f]{64})$)"));
    ParsedAuthorization parsed;
    const QRegularExpressionMatch m = re.match(QString::fromLatin1(value));
    if (!m.hasMatch())
        return parsed;
    parsed.accessKeyId = m.captured(1);
    parsed.day = m.captured(2).toLatin1();
    parsed.region = m.captured(3);
    parsed.service = m.captured(4);
    parsed.signedHeaders = m.captured(5).toLatin1().split(';');
    parsed.signature = m.captured(6).toLatin1();
    parsed.valid = true;
    return parsed;
}

QString verifySignedRequest(const QByteArray &method, const QByteArray &target,
                            const HeaderList &headers, const QByteArray &body,
                            const Credentials &credentials, const QString &region,
                            const QString &service, const QDateTime &nowUtc)
{
    auto header = [&headers](const QByteArray &name) {
        for (const auto &[key, value] : headers) {
            if (key.compare(name, Qt::CaseInsensitive) == 0)
                return value;
        }
        return QByteArray();
    };
    const ParsedAuthorization auth = parseAuthorization(header("authorization"));
    if (!auth.valid)
        return QStringLiteral("missing or malformed Authorization header");
    if (auth.accessKeyId != credentials.accessKeyId)
        return QStringLiteral("unknown access key %1").arg(auth.accessKeyId);
    if (auth.region != region || auth.service != service)
        return QStringLiteral("credential scope %1/%2, expected %3/%4")
            .arg(auth.region, auth.service, region, service);
    const QByteArray date = header("x-amz-date");
    const QDateTime signedAt =
        QDateTime::fromString(QString::fromLatin1(date), QStringLiteral("yyyyMMdd'T'HHmmss'Z'"));
    if (!signedAt.isValid() || date.left(8) != auth.day)
        return QStringLiteral("X-Amz-Date '%1' missing or not the scope's day")
            .arg(QString::fromLatin1(date));
    QDateTime utc = signedAt;
    utc.setTimeZone(QTimeZone::utc());
    if (qAbs(utc.secsTo(nowUtc)) > 15 * 60)
        return QStringLiteral("request time too skewed");
    const bool s3 = service == QLatin1String("s3");
    for (const auto &[key, value] : headers) {
        const QByteArray name = key.toLower();
        if ((name.startsWith("x-amz-") || name == "host" || name == "content-type") &&
            !auth.signedHeaders.contains(name))
            return QStringLiteral("header %1 is not signed").arg(QString::fromLatin1(name));
    }
    if (header("x-amz-security-token") != credentials.sessionToken.toUtf8())
        return QStringLiteral("wrong or missing X-Amz-Security-Token");
    QByteArray payloadHash = sha256Hex(body);
    if (s3) {
        const QByteArray declared = header("x-amz-content-sha256");
        if (declared != payloadHash && declared != UNSIGNED_PAYLOAD)
            return QStringLiteral("x-amz-content-sha256 does not match the body");
        payloadHash = declared;
    }
    const QUrl url = QUrl::fromEncoded("http://" + header("host") + target);
    const SigV4Signer signer(credentials, region, service);
    const SignatureParts expected =
        signer.compute(method, url, headers, auth.signedHeaders, payloadHash);
    if (expected.signature != auth.signature)
        return QStringLiteral("signature mismatch; canonical request:\n%1")
            .arg(QString::fromUtf8(expected.canonicalRequest));
    return {};
}

} // namespace elsai::aws
