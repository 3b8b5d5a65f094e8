// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// A loopback S3 for tests: path-style PutObject / GetObject / DeleteObject on FakeHttpServer.
// Every request's SigV4 signature is recomputed with the test credentials (403
// SignatureDoesNotMatch on any mismatch); the path must be strictly encoded as S3 canonicalises
// it (400 otherwise); errors come as S3's XML bodies.

#include "fakehttpserver.h"
#include "sigv4.h"

#include <QHash>
#include <QMutex>
#include <QSet>

namespace elsai::test {

class FakeS3
{
public:
    explicit FakeS3(aws::Credentials credentials, QString region = QStringLiteral("us-east-1"));

    FakeHttpServer &server() { return m_server; }
    QUrl endpoint() const { return m_server.url(); }
    const aws::Credentials &credentials() const { return m_credentials; }

    void createBucket(const QString &bucket);
    /// Objects by "bucket/key" (key decoded).
    QHash<QString, QByteArray> objects() const;
    void putObject(const QString &bucket, const QString &key, const QByteArray &data);
    /// Answer a missing key with 403 AccessDenied, as S3 does without s3:ListBucket.
    void setHideMissingKeys(bool hide);
    /// Requests refused for their signature so far, with why.
    QStringList rejections() const;

    static QByteArray errorXml(const QByteArray &code, const QString &message);

private:
    FakeHttpServer::Response handle(const FakeHttpServer::Request &request);

    aws::Credentials m_credentials;
    QString m_region;
    mutable QMutex m_mutex;
    QSet<QString> m_buckets;
    QHash<QString, QByteArray> m_objects;
    QStringList m_rejections;
    bool m_hideMissing = false;
    FakeHttpServer m_server; // last: its thread stops before the state above goes away
};

} // namespace elsai::test
