// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "httpclient.h"
#include "offload.h"
#include "sigv4.h"

#include <QString>
#include <QUrl>

#include <optional>

namespace elsai::aws {

/// Offload storage in an S3 bucket (or an S3-compatible server: MinIO, LocalStack), one object
/// per stored result, SigV4-signed with a signed payload hash.
///
/// Addressing: virtual-hosted (`https://{bucket}.s3.{region}.amazonaws.com/{key}`) on AWS,
/// path style (`{endpoint}/{bucket}/{key}`) with a custom endpoint, for bucket names with dots
/// (TLS wildcard) and when forcePathStyle is set. Handles are random 32-hex names, so a handle
/// can never name another key; objects are created with `If-None-Match: *` and never overwritten.
class S3Storage : public OffloadStorage
{
public:
    struct Options
    {
        QString bucket;
        QString prefix = QStringLiteral("elsai-offload/"); ///< key prefix of every object
        QString region = QStringLiteral("us-east-1");
        QUrl endpoint; ///< empty: AWS's regional endpoint
        bool forcePathStyle = false;
        Credentials credentials;
        remote::RetryPolicy retry;
        int timeoutMs = 30000;
    };

    /// Credentials, region (AWS_REGION, AWS_DEFAULT_REGION) and endpoint (AWS_ENDPOINT_URL_S3,
    /// AWS_ENDPOINT_URL) from the environment.
    static Options optionsFromEnvironment(const QString &bucket);

    /// Throws ValueError for an empty bucket, missing credentials or region, or a prefix whose
    /// keys would exceed S3's 1024 bytes.
    explicit S3Storage(Options options);

    QString typeName() const override { return QStringLiteral("S3Storage"); }
    /// PutObject; throws the typed errors of throwForResponse().
    QString store(const QString &content) override;
    /// GetObject; none for a malformed handle, a missing key (404 NoSuchKey) or one the
    /// credentials may not list (403 AccessDenied, as S3 answers without s3:ListBucket).
    std::optional<QString> retrieve(const QString &handle) override;
    /// DeleteObject (idempotent).
    void remove(const QString &handle);

    const Options &options() const { return m_options; }
    /// The object key of a handle.
    QString keyFor(const QString &handle) const;
    /// The URL of a key, strictly encoded (what is sent is what is signed).
    QUrl objectUrl(const QString &key) const;

private:
    remote::HttpResponse send(const QByteArray &method, const QString &key,
                              const QByteArray &body = {}, const remote::HttpHeaders &headers = {});

    Options m_options;
    SigV4Signer m_signer;
};

} // namespace elsai::aws
