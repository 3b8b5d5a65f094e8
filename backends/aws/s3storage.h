// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "httpclient.h"
#include "offload.h"
#include "sigv4.h"

#include <QHash>
#include <QList>
#include <QMutex>
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
///
/// Streamed content (storeStream) is one object per piece, `{handle}.part-NNNNNN`, then a
/// small manifest `{handle}.parts` (JSON: the piece sizes) written last, so a handle exists only
/// once every piece is there: memory about one piece, no multipart upload needed. Ranged
/// retrieval is a ranged GET (`Range: bytes=a-b`) of the one object, or of the pieces that
/// cover the range.
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
    /// Streamed content comes back whole (every piece).
    std::optional<QString> retrieve(const QString &handle) override;
    /// One PutObject per piece, then the manifest; on a failure the pieces put are deleted.
    std::optional<QString> storeStream(const OffloadSource &next) override;
    /// Ranged GetObject of the object, or of the pieces covering the range.
    std::optional<FileRange> retrieveRange(const QString &handle, qint64 offset,
                                           qint64 length) override;
    /// DeleteObject (idempotent); of streamed content, the manifest and every piece.
    void remove(const QString &handle);

    const Options &options() const { return m_options; }
    /// The object key of a handle.
    QString keyFor(const QString &handle) const;
    /// The URL of a key, strictly encoded (what is sent is what is signed).
    QUrl objectUrl(const QString &key) const;

    /// The keys of streamed content: its manifest, and piece `index`.
    QString manifestKeyFor(const QString &handle) const;
    QString partKeyFor(const QString &handle, qsizetype index) const;

private:
    remote::HttpResponse send(const QByteArray &method, const QString &key,
                              const QByteArray &body = {}, const remote::HttpHeaders &headers = {});
    /// Bytes [offset, offset + length) of one object (length > 0), and its size; none when
    /// it is missing. Throws for other failures.
    std::optional<FileRange> getRange(const QString &key, qint64 offset, qint64 length);
    /// The piece sizes of streamed content; none when the handle has no manifest.
    std::optional<QList<qint64>> parts(const QString &handle);
    /// True for the answers of a missing key (404 NoSuchKey, 403 AccessDenied).
    static bool isMissing(const remote::HttpResponse &response);

    Options m_options;
    SigV4Signer m_signer;
    QMutex m_partsMutex;
    QHash<QString, QList<qint64>> m_parts; ///< manifests read or written, by handle
};

} // namespace elsai::aws
