// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QPair>
#include <QString>
#include <QUrl>

namespace elsai::aws {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

/// Static or temporary AWS credentials.
struct Credentials
{
    QString accessKeyId;
    QString secretAccessKey;
    QString sessionToken; ///< empty for static credentials

    bool isValid() const { return !accessKeyId.isEmpty() && !secretAccessKey.isEmpty(); }
    /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (legacy
    /// AWS_SECURITY_TOKEN), as the AWS SDKs read them.
    static Credentials fromEnvironment();
};

/// AWS_REGION, else AWS_DEFAULT_REGION, else empty.
QString regionFromEnvironment();
/// The DNS suffix of the region's partition, as the SDKs' endpoint rules give it:
/// "amazonaws.com.cn" in China (cn-north-1, cn-northwest-1), else "amazonaws.com".
QString dnsSuffix(const QString &region);
/// AWS_ENDPOINT_URL_<SERVICE_ID> (uppercase, '-' and ' ' as '_'), else AWS_ENDPOINT_URL, else
/// an empty URL.
QUrl endpointOverrideFromEnvironment(const QString &serviceId);

/// Percent-encodes every byte except A-Za-z0-9-_.~ (and '/' when `keepSlash`), uppercase hex,
/// as SigV4 requires (space is %20, never '+').
QByteArray uriEncode(const QByteArray &bytes, bool keepSlash = false);
/// The canonical query of an already-encoded query string: each key and value decoded, encoded
/// again strictly, pairs sorted by key then value, joined with '&'.
QByteArray canonicalQuery(const QByteArray &encodedQuery);
/// `host` or `host:port` for a non-default port: the Host header Qt sends.
QByteArray hostHeader(const QUrl &url);
/// Lowercase hex SHA-256.
QByteArray sha256Hex(const QByteArray &data);
/// YYYYMMDD'T'HHMMSS'Z' of `utc`.
QByteArray amzDate(const QDateTime &utc);

inline const QByteArray EMPTY_PAYLOAD_SHA256 =
    QByteArrayLiteral("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
inline const QByteArray UNSIGNED_PAYLOAD = QByteArrayLiteral("UNSIGNED-PAYLOAD");

/// Everything one signature is made of, kept for tests and for diagnosing a 403.
struct SignatureParts
{
    QByteArray canonicalRequest;
    QByteArray stringToSign;
    QByteArray signedHeaders; ///< "content-type;host;x-amz-date"
    QByteArray signature;     ///< lowercase hex
    QByteArray authorization; ///< the Authorization header value
};

/// AWS Signature Version 4 (header-based) for one service in one region.
///
/// S3 differs from every other service (spec §4.2): its canonical URI is the encoded path as
/// sent (not normalized, not encoded twice) and it requires a signed x-amz-content-sha256.
class SigV4Signer
{
public:
    SigV4Signer(Credentials credentials, QString region, QString service);

    const Credentials &credentials() const { return m_credentials; }
    const QString &region() const { return m_region; }
    const QString &service() const { return m_service; }
    bool isS3() const { return m_service == QLatin1String("s3"); }

    /// Signs a request: removes any previous signature headers, then adds X-Amz-Date,
    /// X-Amz-Security-Token (temporary credentials), x-amz-content-sha256 (S3; the body hash,
    /// or UNSIGNED-PAYLOAD when `unsignedPayload`) and Authorization to `headers`. Every header
    /// already in `headers` is signed, so pass only headers you send yourself (not the ones
    /// QNetworkAccessManager adds).
    SignatureParts sign(const QByteArray &method, const QUrl &url, HeaderList &headers,
                        const QByteArray &body, const QDateTime &nowUtc,
                        bool unsignedPayload = false) const;

    /// The signature of a request whose headers already hold X-Amz-Date (and the other
    /// x-amz-* headers), signing exactly `signedHeaderNames` (lowercase) of `headers` plus
    /// host. Used by sign() and by servers that verify signatures.
    SignatureParts compute(const QByteArray &method, const QUrl &url, const HeaderList &headers,
                           const QList<QByteArray> &signedHeaderNames,
                           const QByteArray &payloadHash) const;

    /// The canonical URI of an encoded path for this service.
    QByteArray canonicalUri(const QByteArray &encodedPath) const;
    /// HMAC key of one day (yyyymmdd).
    QByteArray signingKey(const QByteArray &day) const;

private:
    Credentials m_credentials;
    QString m_region;
    QString m_service;
};

/// The parts of an Authorization header, for servers that verify a request.
struct ParsedAuthorization
{
    QString accessKeyId;
    QByteArray day;
    QString region;
    QString service;
    QList<QByteArray> signedHeaders;
    QByteArray signature;
    bool valid = false;
};
ParsedAuthorization parseAuthorization(const QByteArray &value);

/// Server side of SigV4, for protocol test servers: recomputes the signature of a received
/// request (`target` = the request target as sent, `headers` as received, Host included) with
/// `credentials` and checks the scope, the clock skew (15 min), that host and every x-amz-*
/// header are signed, the session token and, for S3, x-amz-content-sha256 against the body.
/// Returns an empty string when the request is authentic, else why it is not.
QString verifySignedRequest(const QByteArray &method, const QByteArray &target,
                            const HeaderList &headers, const QByteArray &body,
                            const Credentials &credentials, const QString &region,
                            const QString &service, const QDateTime &nowUtc);

} // namespace elsai::aws
