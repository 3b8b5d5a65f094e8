// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// SigV4 signer against the spec's golden vectors (remote-backends.md §4.4), AWS's published S3
// example and cases of AWS's SigV4 test suite (aws4_testsuite, cross-checked with botocore).

#include "sigv4.h"

#include <QTest>
#include <QTimeZone>

using namespace elsai::aws;

namespace {

const QString EXAMPLE_SECRET = QStringLiteral("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
const QDateTime VECTOR_TIME = QDateTime(QDate(2025, 7, 16), QTime(12, 0), QTimeZone::utc());

SigV4Signer exampleSigner(const QString &region, const QString &service, const QString &token = {})
{
    return SigV4Signer({QStringLiteral("AKIDEXAMPLE"), EXAMPLE_SECRET, token}, region, service);
}

QByteArray headerValue(const HeaderList &headers, const QByteArray &name)
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

QByteArray lastLine(const QByteArray &text)
{
    return text.mid(text.lastIndexOf('\n') + 1);
}

} // namespace

class TestSigV4 : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void uriEncoding_data();
    void uriEncoding();
    void canonicalQuerySortsPairs_data();
    void canonicalQuerySortsPairs();
    void hostIncludesNonDefaultPort();
    void vectorA_agentCoreInvoke();
    void vectorB_agentCoreStop();
    void vectorC_querySorting();
    void s3Vectors_data();
    void s3Vectors();
    void vectorG_virtualHostedTokenUnsigned();
    void awsPublishedS3Example();
    void awsTestSuite_data();
    void awsTestSuite();
    void headerValuesTrimmedAndCollapsed();
    void resigningReplacesOldSignature();
    void parseAuthorizationRoundTrip();
    void parseAuthorizationRejectsGarbage();
    void serverVerification();
    void environment();
};

void TestSigV4::uriEncoding_data()
{
    QTest::addColumn<QByteArray>("in");
    QTest::addColumn<bool>("keepSlash");
    QTest::addColumn<QByteArray>("out");
    QTest::newRow("unreserved") << QByteArray("Az09-_.~") << false << QByteArray("Az09-_.~");
    QTest::newRow("space") << QByteArray("a b") << false << QByteArray("a%20b");
    QTest::newRow("plus equals") << QByteArray("a+b=c") << false << QByteArray("a%2Bb%3Dc");
    QTest::newRow("slash kept") << QByteArray("a/b") << true << QByteArray("a/b");
    QTest::newRow("slash encoded") << QByteArray("a/b") << false << QByteArray("a%2Fb");
    QTest::newRow("utf8") << QString::fromUtf8("ü").toUtf8() << true << QByteArray("%C3%BC");
    QTest::newRow("percent") << QByteArray("%41") << true << QByteArray("%2541");
}

void TestSigV4::uriEncoding()
{
    QFETCH(QByteArray, in);
    QFETCH(bool, keepSlash);
    QFETCH(QByteArray, out);
    QCOMPARE(uriEncode(in, keepSlash), out);
}

void TestSigV4::canonicalQuerySortsPairs_data()
{
    QTest::addColumn<QByteArray>("query");
    QTest::addColumn<QByteArray>("canonical");
    QTest::newRow("empty") << QByteArray() << QByteArray();
    QTest::newRow("by key") << QByteArray("sessionId=S1&a=b%20c")
                            << QByteArray("a=b%20c&sessionId=S1");
    QTest::newRow("by value") << QByteArray("k=b&k=a") << QByteArray("k=a&k=b");
    // Pairs compare as pairs: "a" < "a-b" although "a=" > "a-" as joined strings.
    QTest::newRow("pairs") << QByteArray("a-b=1&a=2") << QByteArray("a=2&a-b=1");
    QTest::newRow("no value") << QByteArray("versions") << QByteArray("versions=");
    QTest::newRow("re-encoded") << QByteArray("x=%7e%2f") << QByteArray("x=~%2F");
    QTest::newRow("plus is literal") << QByteArray("x=a+b") << QByteArray("x=a%2Bb");
}

void TestSigV4::canonicalQuerySortsPairs()
{
    QFETCH(QByteArray, query);
    QFETCH(QByteArray, canonical);
    QCOMPARE(canonicalQuery(query), canonical);
}

void TestSigV4::hostIncludesNonDefaultPort()
{
    QCOMPARE(hostHeader(QUrl(QStringLiteral("http://127.0.0.1:19000/x"))), "127.0.0.1:19000");
    QCOMPARE(hostHeader(QUrl(QStringLiteral("http://example.com:80/x"))), "example.com");
    QCOMPARE(hostHeader(QUrl(QStringLiteral("https://example.com:443/x"))), "example.com");
    QCOMPARE(hostHeader(QUrl(QStringLiteral("https://example.com:8443/"))), "example.com:8443");
    QCOMPARE(hostHeader(QUrl(QStringLiteral("http://[::1]:9/"))), "[::1]:9");
}

void TestSigV4::vectorA_agentCoreInvoke()
{
    const SigV4Signer signer =
        exampleSigner(QStringLiteral("us-east-1"), QStringLiteral("bedrock-agentcore"));
    HeaderList headers{{"Content-Type", "application/json"},
                       {"x-amzn-code-interpreter-session-id", "01JZEXAMPLESESSION"}};
    const QByteArray body = R"({"name":"executeCommand","arguments":{"command":"ls -l"}})";
    const SignatureParts parts = signer.sign(
        "POST",
        QUrl(QStringLiteral(
            "http://127.0.0.1:18777/code-interpreters/aws.codeinterpreter.v1/tools/invoke")),
        headers, body, VECTOR_TIME);
    QCOMPARE(parts.canonicalRequest,
             QByteArray("POST\n/code-interpreters/aws.codeinterpreter.v1/tools/invoke\n\n"
                        "content-type:application/json\nhost:127.0.0.1:18777\n"
                        "x-amz-date:20250716T120000Z\n"
                        "x-amzn-code-interpreter-session-id:01JZEXAMPLESESSION\n\n"
                        "content-type;host;x-amz-date;x-amzn-code-interpreter-session-id\n"
                        "8122598e8af3f3605865d667a42e988a93e1614b237f929c201afbd298c79dc4"));
    QCOMPARE(lastLine(parts.stringToSign),
             "3128d450bb2d0be57f2377ca7e7d404ff8bd6871df59c9f0038a951ac4230e28");
    QCOMPARE(parts.signature, "ef15cb2e52e361aea0803f836269ed7df8eb9af51abe5c19854535dd0ba1d501");
    QCOMPARE(headerValue(headers, "x-amz-date"), "20250716T120000Z");
    QCOMPARE(headerValue(headers, "authorization"),
             "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250716/us-east-1/bedrock-agentcore/"
             "aws4_request, SignedHeaders=content-type;host;x-amz-date;"
             "x-amzn-code-interpreter-session-id, "
             "Signature=ef15cb2e52e361aea0803f836269ed7df8eb9af51abe5c19854535dd0ba1d501");
    // Not S3: no content hash header.
    QVERIFY(headerValue(headers, "x-amz-content-sha256").isEmpty());
}

void TestSigV4::vectorB_agentCoreStop()
{
    const SigV4Signer signer =
        exampleSigner(QStringLiteral("us-west-2"), QStringLiteral("bedrock-agentcore"));
    HeaderList headers{{"content-type", "application/json"}};
    const SignatureParts parts = signer.sign(
        "PUT",
        QUrl(QStringLiteral("http://127.0.0.1:18778/code-interpreters/aws.codeinterpreter.v1/"
                            "sessions/stop?sessionId=01JZEXAMPLESESSION")),
        headers, R"({"clientToken":"6f1c3b9e-3c1d-4b8e-9a3f-0d2c5e7a9b10"})", VECTOR_TIME);
    QCOMPARE(parts.canonicalRequest.split('\n').at(2), "sessionId=01JZEXAMPLESESSION");
    QCOMPARE(parts.signedHeaders, "content-type;host;x-amz-date");
    QCOMPARE(lastLine(parts.canonicalRequest),
             "01b016edb4f2d1d0926f2f32443b7c9adb6300a2efe0309564bbd64ee8bd86f9");
    QCOMPARE(lastLine(parts.stringToSign),
             "4f85afef055f1f7275605e355e3bd6f0b33b03df078fcf89c8ad78412ac0a1e9");
    QCOMPARE(parts.signature, "4831d65fbe25d50bf28d5c77c95f06f3fbd821f04f308e48fc1ad924ab435b49");
}

void TestSigV4::vectorC_querySorting()
{
    const SigV4Signer signer =
        exampleSigner(QStringLiteral("us-east-1"), QStringLiteral("bedrock-agentcore"));
    HeaderList headers;
    const SignatureParts parts =
        signer.sign("GET",
                    QUrl::fromEncoded("http://127.0.0.1:18779/code-interpreters/x/sessions/get"
                                      "?sessionId=S1&a=b%20c"),
                    headers, {}, VECTOR_TIME);
    QCOMPARE(parts.canonicalRequest.split('\n').at(2), "a=b%20c&sessionId=S1");
    QCOMPARE(parts.signedHeaders, "host;x-amz-date");
    QCOMPARE(lastLine(parts.stringToSign),
             "8330c42f1f6eaf78a3730f10385a7b004dc8ac1a086aa46155dd3cfff615d910");
    QCOMPARE(parts.signature, "b1bdb024a0071a7f9072c3353f04707294482e95e1bf879f6097042b685ea1c1");
    QVERIFY(parts.signature != "fd99a1af77d2a9f204b4d1b5574077f5c58c82ec249a9d50b1549974881e2e51");
}

void TestSigV4::s3Vectors_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("url");
    QTest::addColumn<QByteArray>("contentType");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("canonicalUri");
    QTest::addColumn<QByteArray>("signedHeaders");
    QTest::addColumn<QByteArray>("stringToSignHash");
    QTest::addColumn<QByteArray>("signature");
    QTest::newRow("D put")
        << QByteArray("PUT")
        << QByteArray("http://127.0.0.1:19000/offload/runs/r1/tool%20output.txt")
        << QByteArray("text/plain") << QByteArray("hello offload\n")
        << QByteArray("/offload/runs/r1/tool%20output.txt")
        << QByteArray("content-type;host;x-amz-content-sha256;x-amz-date")
        << QByteArray("72fcf776cc38d227ecb336d103642e2b21789520478545b45c8441c665128517")
        << QByteArray("e886089ad6aa36d2b3717608bfe263147ef2934c4628721386faf8e248993b47");
    QTest::newRow("E get")
        << QByteArray("GET")
        << QByteArray("http://127.0.0.1:19000/offload/runs/r1/tool%20output.txt") << QByteArray()
        << QByteArray() << QByteArray("/offload/runs/r1/tool%20output.txt")
        << QByteArray("host;x-amz-content-sha256;x-amz-date")
        << QByteArray("f6a34b503e1316af235059291f8976aaeb35f315e77653269de9c862bb013878")
        << QByteArray("63fd6eced45b3ac76c1ef0b4d1665e0df7a2490c3e573087758d3c186a7fba58");
    QTest::newRow("F delete")
        << QByteArray("DELETE") << QByteArray("http://127.0.0.1:19000/offload/a%2Bb%3Dc/%C3%BC.txt")
        << QByteArray() << QByteArray() << QByteArray("/offload/a%2Bb%3Dc/%C3%BC.txt")
        << QByteArray("host;x-amz-content-sha256;x-amz-date")
        << QByteArray("7f2ab3488c4075634ed87ae43f28b42f776f766e7795d9823aae20203b79a23c")
        << QByteArray("efc8a1599e4207e0352758980e8c9dec0c00098ab4ffb59059f002267a63ea55");
}

void TestSigV4::s3Vectors()
{
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, url);
    QFETCH(QByteArray, contentType);
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, canonicalUri);
    QFETCH(QByteArray, signedHeaders);
    QFETCH(QByteArray, stringToSignHash);
    QFETCH(QByteArray, signature);
    const SigV4Signer signer = exampleSigner(QStringLiteral("us-east-1"), QStringLiteral("s3"));
    HeaderList headers;
    if (!contentType.isEmpty())
        headers.append({"Content-Type", contentType});
    const QUrl qurl = QUrl::fromEncoded(url);
    // What Qt sends is what was signed.
    QCOMPARE(qurl.path(QUrl::FullyEncoded).toLatin1(), canonicalUri);
    const SignatureParts parts = signer.sign(method, qurl, headers, body, VECTOR_TIME);
    QCOMPARE(parts.canonicalRequest.split('\n').at(1), canonicalUri);
    QCOMPARE(parts.signedHeaders, signedHeaders);
    QCOMPARE(headerValue(headers, "x-amz-content-sha256"), sha256Hex(body));
    QCOMPARE(lastLine(parts.stringToSign), stringToSignHash);
    QCOMPARE(parts.signature, signature);
}

void TestSigV4::vectorG_virtualHostedTokenUnsigned()
{
    const SigV4Signer signer = exampleSigner(QStringLiteral("eu-central-1"), QStringLiteral("s3"),
                                             QStringLiteral("IQoJb3JpZ2luX2VjEXAMPLETOKEN"));
    HeaderList headers{{"Content-Type", "application/json"}};
    const SignatureParts parts =
        signer.sign("PUT",
                    QUrl(QStringLiteral(
                        "https://offload-bucket.s3.eu-central-1.amazonaws.com/runs/r1/out.json")),
                    headers, R"({"ok":true})", VECTOR_TIME, /*unsignedPayload=*/true);
    QCOMPARE(parts.canonicalRequest.split('\n').at(1), "/runs/r1/out.json");
    QCOMPARE(parts.signedHeaders,
             "content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token");
    QCOMPARE(lastLine(parts.canonicalRequest), "UNSIGNED-PAYLOAD");
    QCOMPARE(headerValue(headers, "x-amz-security-token"), "IQoJb3JpZ2luX2VjEXAMPLETOKEN");
    QCOMPARE(headerValue(headers, "x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
    QCOMPARE(lastLine(parts.stringToSign),
             "4fd62ddcd54c052c65e8a20c2c5470d4070613c807dcdf117e337f11f55addf2");
    QCOMPARE(parts.signature, "d1cb02dfddd873c9a3afaf8a3212a1321381252fc9fda702803f6c90398455cf");
}

void TestSigV4::awsPublishedS3Example()
{
    const SigV4Signer signer({QStringLiteral("AKIAIOSFODNN7EXAMPLE"),
                              QStringLiteral("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                              {}},
                             QStringLiteral("us-east-1"), QStringLiteral("s3"));
    HeaderList headers{{"Range", "bytes=0-9"}};
    const SignatureParts parts =
        signer.sign("GET", QUrl(QStringLiteral("https://examplebucket.s3.amazonaws.com/test.txt")),
                    headers, {}, QDateTime(QDate(2013, 5, 24), QTime(0, 0), QTimeZone::utc()));
    QCOMPARE(parts.signedHeaders, "host;range;x-amz-content-sha256;x-amz-date");
    QCOMPARE(parts.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

void TestSigV4::awsTestSuite_data()
{
    // aws4_testsuite: service "service", us-east-1, 20150830T123600Z, host example.amazonaws.com.
    QTest::addColumn<QByteArray>("url");
    QTest::addColumn<QByteArray>("canonicalUri");
    QTest::addColumn<QByteArray>("signature");
    const QByteArray vanilla = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";
    QTest::newRow("get-vanilla") << QByteArray("https://example.amazonaws.com/") << QByteArray("/")
                                 << vanilla;
    QTest::newRow("get-vanilla-query-order-key-case")
        << QByteArray("https://example.amazonaws.com/?Param2=value2&Param1=value1")
        << QByteArray("/")
        << QByteArray("b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
    QTest::newRow("get-vanilla-query-order-value")
        << QByteArray("https://example.amazonaws.com/?Param1=value2&Param1=Value1")
        << QByteArray("/")
        << QByteArray("eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1");
    QTest::newRow("get-relative-relative")
        << QByteArray("https://example.amazonaws.com/example1/example2/../..") << QByteArray("/")
        << vanilla;
    QTest::newRow("get-slash-dot-slash")
        << QByteArray("https://example.amazonaws.com/./") << QByteArray("/") << vanilla;
    QTest::newRow("get-unreserved")
        << QByteArray("https://example.amazonaws.com/"
                      "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        << QByteArray("/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        << QByteArray("07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f");
}

void TestSigV4::awsTestSuite()
{
    QFETCH(QByteArray, url);
    QFETCH(QByteArray, canonicalUri);
    QFETCH(QByteArray, signature);
    const SigV4Signer signer({QStringLiteral("AKIDEXAMPLE"), EXAMPLE_SECRET, {}},
                             QStringLiteral("us-east-1"), QStringLiteral("service"));
    HeaderList headers;
    const SignatureParts parts =
        signer.sign("GET", QUrl::fromEncoded(url), headers, {},
                    QDateTime(QDate(2015, 8, 30), QTime(12, 36), QTimeZone::utc()));
    QCOMPARE(parts.canonicalRequest.split('\n').at(1), canonicalUri);
    QCOMPARE(parts.signature, signature);
}

void TestSigV4::headerValuesTrimmedAndCollapsed()
{
    const SigV4Signer signer = exampleSigner(QStringLiteral("us-east-1"), QStringLiteral("svc"));
    HeaderList headers{{"X-Custom", "  a   b \t c  "}, {"x-custom", "d"}};
    const SignatureParts parts =
        signer.sign("GET", QUrl(QStringLiteral("http://h/")), headers, {}, VECTOR_TIME);
    QVERIFY(parts.canonicalRequest.contains("\nx-custom:a b c,d\n"));
    QCOMPARE(parts.signedHeaders, "host;x-amz-date;x-custom");
}

void TestSigV4::resigningReplacesOldSignature()
{
    const SigV4Signer signer =
        exampleSigner(QStringLiteral("us-east-1"), QStringLiteral("s3"), QStringLiteral("TOKEN"));
    HeaderList headers{{"Content-Type", "text/plain"}};
    const QUrl url(QStringLiteral("http://127.0.0.1:9/b/k"));
    signer.sign("PUT", url, headers, "x", VECTOR_TIME);
    const SignatureParts second = signer.sign("PUT", url, headers, "x", VECTOR_TIME.addSecs(60));
    QCOMPARE(headers.size(), 5); // content-type, date, token, content hash, authorization
    QCOMPARE(headerValue(headers, "x-amz-date"), "20250716T120100Z");
    QCOMPARE(headerValue(headers, "authorization"), second.authorization);
}

void TestSigV4::parseAuthorizationRoundTrip()
{
    const SigV4Signer signer = exampleSigner(QStringLiteral("us-east-1"), QStringLiteral("s3"));
    HeaderList headers;
    const SignatureParts parts = signer.sign("GET", QUrl(QStringLiteral("http://127.0.0.1:9/b/k")),
                                             headers, {}, VECTOR_TIME);
    const ParsedAuthorization parsed = parseAuthorization(parts.authorization);
    QVERIFY(parsed.valid);
    QCOMPARE(parsed.accessKeyId, QStringLiteral("AKIDEXAMPLE"));
    QCOMPARE(parsed.day, "20250716");
    QCOMPARE(parsed.region, QStringLiteral("us-east-1"));
    QCOMPARE(parsed.service, QStringLiteral("s3"));
    QCOMPARE(parsed.signedHeaders,
             (QList<QByteArray>{"host", "x-amz-content-sha256", "x-amz-date"}));
    QCOMPARE(parsed.signature, parts.signature);
    // A server recomputing from the parsed parts gets the same signature.
    const SignatureParts again =
        signer.compute("GET", QUrl(QStringLiteral("http://127.0.0.1:9/b/k")), headers,
                       parsed.signedHeaders, EMPTY_PAYLOAD_SHA256);
    QCOMPARE(again.signature, parts.signature);
}

void TestSigV4::parseAuthorizationRejectsGarbage()
{
    QVERIFY(!parseAuthorization("").valid);
    QVERIFY(!parseAuthorization("Bearer abc").valid);
    QVERIFY(!parseAuthorization("AWS4-HMAC-SHA256 Credential=AK/2025/us/s3/aws4_request, "
                                "SignedHeaders=host, Signature=00")
                 .valid);
}

void TestSigV4::serverVerification()
{
    const Credentials creds{QStringLiteral("AKIDEXAMPLE"), EXAMPLE_SECRET, QStringLiteral("TOK")};
    const SigV4Signer signer(creds, QStringLiteral("us-east-1"), QStringLiteral("s3"));
    const QUrl url = QUrl::fromEncoded("http://127.0.0.1:19000/b/a%2Bb?x=1&a=2");
    HeaderList headers{{"Content-Type", "text/plain"}};
    signer.sign("PUT", url, headers, "body", VECTOR_TIME);
    headers.emplaceBack("Host", "127.0.0.1:19000");
    headers.emplaceBack("User-Agent", "unsigned is fine");
    const QByteArray target = "/b/a%2Bb?x=1&a=2";
    auto verify = [&](const HeaderList &h, const QByteArray &body, const Credentials &c,
                      const QDateTime &now) {
        return verifySignedRequest("PUT", target, h, body, c, QStringLiteral("us-east-1"),
                                   QStringLiteral("s3"), now);
    };
    QCOMPARE(verify(headers, "body", creds, VECTOR_TIME), QString());
    QVERIFY(verify(headers, "tampered", creds, VECTOR_TIME).contains(QLatin1String("body")));
    Credentials wrong = creds;
    wrong.secretAccessKey = QStringLiteral("other");
    QVERIFY(verify(headers, "body", wrong, VECTOR_TIME).contains(QLatin1String("mismatch")));
    wrong = creds;
    wrong.sessionToken.clear();
    QVERIFY(verify(headers, "body", wrong, VECTOR_TIME).contains(QLatin1String("Token")));
    QVERIFY(verify(headers, "body", creds, VECTOR_TIME.addSecs(16 * 60))
                .contains(QLatin1String("skewed")));
    HeaderList extra = headers;
    extra.emplaceBack("x-amz-meta-sneaky", "1");
    QVERIFY(verify(extra, "body", creds, VECTOR_TIME).contains(QLatin1String("not signed")));
    HeaderList otherHost = headers;

    otherHost[otherHost.size() - 2].second = "127.0.0.1:19001";
    QVERIFY(verify(otherHost, "body", creds, VECTOR_TIME).contains(QLatin1String("mismatch")));
    QVERIFY(!verifySignedRequest("PUT", target, headers, "body", creds, QStringLiteral("eu-west-1"),
                                 QStringLiteral("s3"), VECTOR_TIME)
                 .isEmpty());
}

void TestSigV4::environment()
{
    qputenv("AWS_ACCESS_KEY_ID", "AKID");
    qputenv("AWS_SECRET_ACCESS_KEY", "SECRET");
    qunsetenv("AWS_SESSION_TOKEN");
    qputenv("AWS_SECURITY_TOKEN", "LEGACY");
    qunsetenv("AWS_REGION");
    qputenv("AWS_DEFAULT_REGION", "eu-west-1");
    qputenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1");
    qputenv("AWS_ENDPOINT_URL_BEDROCK_AGENTCORE", "http://127.0.0.1:2");
    const Credentials c = Credentials::fromEnvironment();
    QVERIFY(c.isValid());
    QCOMPARE(c.sessionToken, QStringLiteral("LEGACY"));
    QCOMPARE(regionFromEnvironment(), QStringLiteral("eu-west-1"));
    qputenv("AWS_REGION", "us-west-2");
    QCOMPARE(regionFromEnvironment(), QStringLiteral("us-west-2"));
    QCOMPARE(endpointOverrideFromEnvironment(QStringLiteral("bedrock-agentcore")).port(), 2);
    QCOMPARE(endpointOverrideFromEnvironment(QStringLiteral("s3")).port(), 1);
    qunsetenv("AWS_SECRET_ACCESS_KEY");
    QVERIFY(!Credentials::fromEnvironment().isValid());
}

QTEST_GUILESS_MAIN(TestSigV4)
#include "tst_sigv4.moc"
