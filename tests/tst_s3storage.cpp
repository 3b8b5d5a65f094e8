// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// S3Storage against the loopback S3 (tests/fakes3.*), which verifies every signature.

#include "errors.h"
#include "fakes3.h"
#include "offload.h"
#include "s3storage.h"
#include "sessionoptions.h"

#include <QCommandLineParser>

#include <QTest>

using namespace elsai;
using namespace elsai::aws;
using elsai::test::FakeS3;

namespace {

const Credentials TEST_CREDENTIALS{
    QStringLiteral("AKIDTEST"), QStringLiteral("test/secret+key"), {}};

S3Storage::Options optionsFor(const FakeS3 &s3, const QString &bucket = QStringLiteral("offload"))
{
    S3Storage::Options o;
    o.bucket = bucket;
    o.endpoint = s3.endpoint();
    o.credentials = s3.credentials();
    o.retry.initialBackoffMs = 1;
    o.retry.maxBackoffMs = 5;
    return o;
}

} // namespace

class TestS3Storage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void storeAndRetrieveRoundTrip();
    void keysNeedingEncodingAreSignedAsSent();
    void emptySegmentsAreSignedAsSent();
    void unknownHandles();
    void wrongSecretIsPermissionError();
    void sessionTokenIsSentAndSigned();
    void retriesServerErrorsWithFreshSignatures();
    void givesUpAfterRetries();
    void existingKeyPicksAnotherHandle();
    void missingBucketIsFileNotFound();
    void removeIsIdempotent();
    void addressingStyles();
    void optionsFromEnvironment();
    void constructorValidates();
    void offloadPolicyStoresInS3();
    void offloadS3OptionBuildsS3Storage();
};

void TestS3Storage::storeAndRetrieveRoundTrip()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    S3Storage storage(optionsFor(s3));
    QCOMPARE(storage.typeName(), QStringLiteral("S3Storage"));
    const QString content = QString::fromUtf8("héllo\n") + QString(200000, QLatin1Char('x'));
    const QString handle = storage.store(content);
    QVERIFY(QRegularExpression(QStringLiteral("^[0-9a-f]{32}$")).match(handle).hasMatch());
    const auto objects = s3.objects();
    QCOMPARE(objects.size(), 1);
    QCOMPARE(objects.value(QStringLiteral("offload/elsai-offload/") + handle + ".txt"),
             content.toUtf8());
    QCOMPARE(storage.retrieve(handle), std::optional<QString>(content));
    QVERIFY(s3.rejections().isEmpty());
    // The PUT was create-only and carried its length.
    const auto put = s3.server().requests().first();
    QCOMPARE(put.method, QByteArray("PUT"));
    QCOMPARE(put.header("if-none-match"), QByteArray("*"));
    QCOMPARE(put.header("x-amz-content-sha256"), sha256Hex(content.toUtf8()));
    QVERIFY(put.header("authorization").startsWith("AWS4-HMAC-SHA256 Credential=AKIDTEST/"));
}

void TestS3Storage::keysNeedingEncodingAreSignedAsSent()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    S3Storage::Options o = optionsFor(s3);
    o.prefix = QString::fromUtf8("runs/a+b=c ü~/");
    S3Storage storage(o);
    const QString handle = storage.store(QStringLiteral("data"));
    const auto request = s3.server().requests().first();
    QVERIFY2(request.target.startsWith("/offload/runs/a%2Bb%3Dc%20%C3%BC~/"), request.target);
    QVERIFY(s3.objects().contains(QString::fromUtf8("offload/runs/a+b=c ü~/") + handle + ".txt"));
    QCOMPARE(storage.retrieve(handle), std::optional<QString>(QStringLiteral("data")));
    QVERIFY(s3.rejections().isEmpty());
}

// "a//b" is a key of its own: it goes out, and is signed, exactly as given (botocore's S3
// rule), where a normalizing signer or client would name "a/b".
void TestS3Storage::emptySegmentsAreSignedAsSent()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    S3Storage::Options o = optionsFor(s3);
    o.prefix = QStringLiteral("runs//a///");
    S3Storage storage(o);
    const QString handle = storage.store(QStringLiteral("data"));
    const auto request = s3.server().requests().first();
    QVERIFY2(request.target.startsWith("/offload/runs//a///"), request.target);
    QVERIFY(s3.objects().contains(QStringLiteral("offload/runs//a///") + handle + ".txt"));
    QCOMPARE(storage.retrieve(handle), std::optional<QString>(QStringLiteral("data")));
    QVERIFY(s3.rejections().isEmpty());
}

void TestS3Storage::unknownHandles()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    S3Storage storage(optionsFor(s3));
    QCOMPARE(storage.retrieve(QString(32, QLatin1Char('a'))), std::nullopt); // 404 NoSuchKey
    s3.setHideMissingKeys(true);
    QCOMPARE(storage.retrieve(QString(32, QLatin1Char('b'))), std::nullopt); // 403 AccessDenied
    const int before = s3.server().requestCount();
    // Malformed handles never reach the server: they could name other keys.
    QCOMPARE(storage.retrieve(QStringLiteral("../secret")), std::nullopt);
    QCOMPARE(storage.retrieve(QStringLiteral("ABCDEF")), std::nullopt);
    QCOMPARE(s3.server().requestCount(), before);
}

void TestS3Storage::wrongSecretIsPermissionError()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    S3Storage::Options o = optionsFor(s3);
    o.credentials.secretAccessKey = QStringLiteral("wrong");
    S3Storage storage(o);
    try {
        storage.store(QStringLiteral("x"));
        QFAIL("no error");
    } catch (const PermissionError &e) {
        QVERIFY2(e.message().contains(QLatin1String("SignatureDoesNotMatch")), e.what());
        QVERIFY(e.message().contains(QLatin1String("AWS_SECRET_ACCESS_KEY")));
    }
    QCOMPARE(s3.rejections().size(), 1);
    QVERIFY(s3.rejections().first().contains(QLatin1String("signature mismatch")));
    // A signature failure on GET is an error too, not "missing".
    QVERIFY_THROWS_EXCEPTION(PermissionError, storage.retrieve(QString(32, QLatin1Char('c'))));
    QVERIFY(s3.objects().isEmpty());
}

void TestS3Storage::sessionTokenIsSentAndSigned()
{
    Credentials temporary = TEST_CREDENTIALS;
    temporary.sessionToken = QStringLiteral("IQoJTOKEN");
    FakeS3 s3(temporary);
    s3.createBucket(QStringLiteral("offload"));
    S3Storage storage(optionsFor(s3));
    const QString handle = storage.store(QStringLiteral("t"));
    const auto request = s3.server().requests().first();
    QCOMPARE(request.header("x-amz-security-token"), QByteArray("IQoJTOKEN"));
    QVERIFY(request.header("authorization").contains("x-amz-security-token"));
    QVERIFY(storage.retrieve(handle).has_value());

    S3Storage::Options noToken = optionsFor(s3);
    noToken.credentials.sessionToken.clear();
    S3Storage withoutToken(noToken);
    QVERIFY_THROWS_EXCEPTION(PermissionError, withoutToken.store(QStringLiteral("t")));
}

void TestS3Storage::retriesServerErrorsWithFreshSignatures()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    s3.server().enqueue(503, FakeS3::errorXml("SlowDown", QStringLiteral("Reduce your rate")));
    s3.server().enqueue(500, FakeS3::errorXml("InternalError", QStringLiteral("oops")));
    S3Storage storage(optionsFor(s3));
    const QString handle = storage.store(QStringLiteral("after retries"));
    QCOMPARE(s3.server().requestCount(), 3);
    for (const auto &request : s3.server().requests())
        QVERIFY(!request.header("authorization").isEmpty());
    QCOMPARE(storage.retrieve(handle), std::optional<QString>(QStringLiteral("after retries")));
}

void TestS3Storage::givesUpAfterRetries()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    S3Storage::Options o = optionsFor(s3);
    o.retry.maxAttempts = 3;
    for (int i = 0; i < 3; ++i)
        s3.server().enqueue(503, FakeS3::errorXml("SlowDown", QStringLiteral("Reduce")));
    S3Storage storage(o);
    try {
        storage.store(QStringLiteral("x"));
        QFAIL("no error");
    } catch (const OSError &e) {
        QCOMPARE(e.specName(), QStringLiteral("OSError"));
        QVERIFY2(e.message().contains(QLatin1String("503 SlowDown")), e.what());
    }
    QCOMPARE(s3.server().requestCount(), 3);
}

void TestS3Storage::existingKeyPicksAnotherHandle()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    s3.server().enqueue(412, FakeS3::errorXml("PreconditionFailed", QStringLiteral("exists")));
    S3Storage storage(optionsFor(s3));
    const QString handle = storage.store(QStringLiteral("second try"));
    const auto requests = s3.server().requests();
    QCOMPARE(requests.size(), 2);
    QVERIFY(requests.at(0).target != requests.at(1).target);
    QVERIFY(requests.at(1).target.contains(handle.toLatin1()));
}

void TestS3Storage::missingBucketIsFileNotFound()
{
    FakeS3 s3(TEST_CREDENTIALS);
    S3Storage storage(optionsFor(s3, QStringLiteral("nobucket")));
    try {
        storage.store(QStringLiteral("x"));
        QFAIL("no error");
    } catch (const FileNotFoundError &e) {
        QVERIFY2(e.message().contains(QLatin1String("NoSuchBucket")), e.what());
        QVERIFY(e.message().contains(QLatin1String("s3://nobucket/")));
    }
}

void TestS3Storage::removeIsIdempotent()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    S3Storage storage(optionsFor(s3));
    const QString handle = storage.store(QStringLiteral("gone soon"));
    storage.remove(handle);
    QVERIFY(s3.objects().isEmpty());
    storage.remove(handle);
    QCOMPARE(storage.retrieve(handle), std::nullopt);
    QVERIFY_THROWS_EXCEPTION(ValueError, storage.remove(QStringLiteral("../../x")));
}

void TestS3Storage::addressingStyles()
{
    S3Storage::Options o;
    o.bucket = QStringLiteral("my-bucket");
    o.region = QStringLiteral("eu-central-1");
    o.credentials = TEST_CREDENTIALS;
    QCOMPARE(S3Storage(o).objectUrl(QStringLiteral("a b/c")).toEncoded(),
             QByteArray("https://my-bucket.s3.eu-central-1.amazonaws.com/a%20b/c"));
    o.forcePathStyle = true;
    QCOMPARE(S3Storage(o).objectUrl(QStringLiteral("k")).toEncoded(),
             QByteArray("https://s3.eu-central-1.amazonaws.com/my-bucket/k"));
    o.forcePathStyle = false;
    o.bucket = QStringLiteral("dotted.bucket");
    QCOMPARE(S3Storage(o).objectUrl(QStringLiteral("k")).toEncoded(),
             QByteArray("https://s3.eu-central-1.amazonaws.com/dotted.bucket/k"));
    o.endpoint = QUrl(QStringLiteral("http://127.0.0.1:9000/minio/"));
    QCOMPARE(S3Storage(o).objectUrl(QStringLiteral("x+y")).toEncoded(),
             QByteArray("http://127.0.0.1:9000/minio/dotted.bucket/x%2By"));
    // the China partition: amazonaws.com.cn
    o.endpoint.clear();
    o.bucket = QStringLiteral("my-bucket");
    o.region = QStringLiteral("cn-northwest-1");
    QCOMPARE(S3Storage(o).objectUrl(QStringLiteral("k")).toEncoded(),
             QByteArray("https://my-bucket.s3.cn-northwest-1.amazonaws.com.cn/k"));
}

void TestS3Storage::optionsFromEnvironment()
{
    qputenv("AWS_ACCESS_KEY_ID", "AKIDENV");
    qputenv("AWS_SECRET_ACCESS_KEY", "secret");
    qputenv("AWS_REGION", "ap-south-1");
    qputenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1234");
    const S3Storage::Options o = S3Storage::optionsFromEnvironment(QStringLiteral("b"));
    QCOMPARE(o.credentials.accessKeyId, QStringLiteral("AKIDENV"));
    QCOMPARE(o.region, QStringLiteral("ap-south-1"));
    QCOMPARE(o.endpoint.port(), 1234);
    qunsetenv("AWS_ACCESS_KEY_ID");
    qunsetenv("AWS_SECRET_ACCESS_KEY");
    qunsetenv("AWS_REGION");
    qunsetenv("AWS_ENDPOINT_URL_S3");
}

void TestS3Storage::constructorValidates()
{
    S3Storage::Options o;
    o.credentials = TEST_CREDENTIALS;
    QVERIFY_THROWS_EXCEPTION(ValueError, S3Storage{o}); // no bucket
    o.bucket = QStringLiteral("b");
    o.credentials = {};
    QVERIFY_THROWS_EXCEPTION(ValueError, S3Storage{o}); // no credentials
    o.credentials = TEST_CREDENTIALS;
    o.prefix = QString(1100, QLatin1Char('p'));
    QVERIFY_THROWS_EXCEPTION(ValueError, S3Storage{o}); // keys over 1024 bytes
    // dot segments: the HTTP layer would resolve them and name another key
    for (const char *prefix : {"runs/./", "runs/../x/", "./", "a/.."}) {
        o.prefix = QString::fromLatin1(prefix);
        QVERIFY_THROWS_EXCEPTION(ValueError, S3Storage{o});
    }
    o.prefix = QStringLiteral("runs/.hidden/..x/"); // dots inside a name are fine
    S3Storage{o};
    o.prefix.clear();
    o.endpoint = QUrl(QStringLiteral("ftp://127.0.0.1/"));
    QVERIFY_THROWS_EXCEPTION(ValueError, S3Storage{o});
}

void TestS3Storage::offloadPolicyStoresInS3()
{
    FakeS3 s3(TEST_CREDENTIALS);
    s3.createBucket(QStringLiteral("offload"));
    SandboxOutputOffloadPolicy policy;
    policy.storage = std::make_shared<S3Storage>(optionsFor(s3));
    policy.maxResultTokens = 10;
    policy.previewTokens = 5;
    const QString big = QString(400, QLatin1Char('z'));
    QString handle;
    const std::optional<QString> preview = policy.offload(big, &handle);
    QVERIFY(preview.has_value());
    QVERIFY(preview->contains(handle));
    QCOMPARE(s3.objects().size(), 1);
    QCOMPARE(policy.storage->retrieve(handle), std::optional<QString>(big));
}

void TestS3Storage::offloadS3OptionBuildsS3Storage()
{
    // --offload-s3 BUCKET: credentials, region and endpoint come from the environment.
    FakeS3 s3(TEST_CREDENTIALS, QStringLiteral("eu-west-3"));
    s3.createBucket(QStringLiteral("from-cli"));
    qputenv("AWS_ACCESS_KEY_ID", TEST_CREDENTIALS.accessKeyId.toUtf8());
    qputenv("AWS_SECRET_ACCESS_KEY", TEST_CREDENTIALS.secretAccessKey.toUtf8());
    qputenv("AWS_REGION", "eu-west-3");
    qputenv("AWS_ENDPOINT_URL_S3", s3.endpoint().toEncoded());
    QCommandLineParser parser;
    SessionOptions::describe(parser, SessionOptions::Mode::Headless);
    QVERIFY(parser.parse({QStringLiteral("elsai-workbench"), QStringLiteral("--offload-s3"),
                          QStringLiteral("from-cli")}));
    const SessionOptions options = SessionOptions::fromParser(parser);
    QVERIFY(options.offload);
    const auto policy = options.offloadPolicy();
    QVERIFY(policy.has_value());
    QCOMPARE(policy->storage->typeName(), QStringLiteral("S3Storage"));
    const QString handle = policy->storage->store(QStringLiteral("via the command line"));
    QCOMPARE(s3.objects().value(QStringLiteral("from-cli/elsai-offload/") + handle + ".txt"),
             QByteArray("via the command line"));
    QVERIFY(s3.rejections().isEmpty());
    for (const char *name :
         {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL_S3"})
        qunsetenv(name);
}

QTEST_GUILESS_MAIN(TestS3Storage)
#include "tst_s3storage.moc"
