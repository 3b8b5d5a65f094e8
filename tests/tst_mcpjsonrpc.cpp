// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "errors.h"
#include "httpbodylimit.h"
#include "jsonrpc.h"
#include "mcpagentspec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QtTest>

using namespace elsai;
using Kind = jsonrpc::Message::Kind;

/// The JSON-RPC 2.0 parser and the --mcp-agent / token rules.
class TestMcpJsonRpc : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesMessages_data()
    {
        QTest::addColumn<QByteArray>("payload");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("idKey");

        QTest::newRow("request, integer id")
            << QByteArray(R"({"jsonrpc":"2.0","id":7,"method":"ping"})") << int(Kind::Request)
            << "ping"
            << "n:7";
        QTest::newRow("request, string id, params")
            << QByteArray(R"({"jsonrpc":"2.0","id":"a-1","method":"tools/call",)"
                          R"("params":{"name":"x"}})")
            << int(Kind::Request) << "tools/call"
            << "s:a-1";
        QTest::newRow("request, id 0")
            << QByteArray(R"({"jsonrpc":"2.0","id":0,"method":"p"})") << int(Kind::Request) << "p"
            << "n:0";
        QTest::newRow("notification")
            << QByteArray(R"({"jsonrpc":"2.0","method":"notifications/initialized"})")
            << int(Kind::Notification) << "notifications/initialized"
            << "n:0";
        QTest::newRow("response") << QByteArray(R"({"jsonrpc":"2.0","id":3,"result":{}})")
                                  << int(Kind::Response) << ""
                                  << "n:3";
        QTest::newRow("error response")
            << QByteArray(R"({"jsonrpc":"2.0","id":"q","error":{"code":-1,"message":"m"}})")
            << int(Kind::ErrorResponse) << ""
            << "s:q";
        QTest::newRow("whitespace around")
            << QByteArray(" \n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n")
            << int(Kind::Request) << "ping"
            << "n:1";
    }
    void parsesMessages()
    {
        QFETCH(QByteArray, payload);
        QFETCH(int, kind);
        QFETCH(QString, method);
        QFETCH(QString, idKey);
        const jsonrpc::ParseResult r = jsonrpc::parse(payload);
        if (const auto *f = std::get_if<jsonrpc::Fault>(&r))
            QFAIL(qPrintable(f->message));
        const auto &m = std::get<jsonrpc::Message>(r);
        QCOMPARE(int(m.kind), kind);
        QCOMPARE(m.method, method);
        if (m.kind != Kind::Notification)
            QCOMPARE(jsonrpc::idKey(m.id), idKey);
    }

    void refusesFaults_data()
    {
        QTest::addColumn<QByteArray>("payload");
        QTest::addColumn<int>("code");
        QTest::addColumn<QJsonValue>("answerId");

        const QJsonValue null(QJsonValue::Null);
        QTest::newRow("not JSON") << QByteArray("{nope") << int(jsonrpc::ParseError) << null;
        QTest::newRow("empty") << QByteArray("") << int(jsonrpc::ParseError) << null;
        QTest::newRow("batch (only in 2025-03-26: parsePayload)")
            << QByteArray(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])")
            << int(jsonrpc::InvalidRequest) << null;
        QTest::newRow("scalar") << QByteArray("42") << int(jsonrpc::ParseError) << null;
        QTest::newRow("wrong version") << QByteArray(R"({"jsonrpc":"1.0","id":5,"method":"ping"})")
                                       << int(jsonrpc::InvalidRequest) << QJsonValue(5);
        QTest::newRow("no version") << QByteArray(R"({"id":5,"method":"ping"})")
                                    << int(jsonrpc::InvalidRequest) << QJsonValue(5);
        QTest::newRow("null id") << QByteArray(R"({"jsonrpc":"2.0","id":null,"method":"ping"})")
                                 << int(jsonrpc::InvalidRequest) << null;
        QTest::newRow("fractional id")
            << QByteArray(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})")
            << int(jsonrpc::InvalidRequest) << null;
        QTest::newRow("object id") << QByteArray(R"({"jsonrpc":"2.0","id":{},"method":"ping"})")
                                   << int(jsonrpc::InvalidRequest) << null;
        QTest::newRow("method not a string")
            << QByteArray(R"({"jsonrpc":"2.0","id":"x","method":3})")
            << int(jsonrpc::InvalidRequest) << QJsonValue(QStringLiteral("x"));
        QTest::newRow("empty method") << QByteArray(R"({"jsonrpc":"2.0","id":2,"method":""})")
                                      << int(jsonrpc::InvalidRequest) << QJsonValue(2);
        QTest::newRow("positional params")
            << QByteArray(R"({"jsonrpc":"2.0","id":2,"method":"m","params":[1]})")
            << int(jsonrpc::InvalidRequest) << QJsonValue(2);
        QTest::newRow("neither method nor id")
            << QByteArray(R"({"jsonrpc":"2.0"})") << int(jsonrpc::InvalidRequest) << null;
        QTest::newRow("response with result and error")
            << QByteArray(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1}})")
            << int(jsonrpc::InvalidRequest) << QJsonValue(1);
        QTest::newRow("response with neither") << QByteArray(R"({"jsonrpc":"2.0","id":1})")
                                               << int(jsonrpc::InvalidRequest) << QJsonValue(1);
        QTest::newRow("error without code")
            << QByteArray(R"({"jsonrpc":"2.0","id":1,"error":{"message":"m"}})")
            << int(jsonrpc::InvalidRequest) << QJsonValue(1);
    }
    void refusesFaults()
    {
        QFETCH(QByteArray, payload);
        QFETCH(int, code);
        QFETCH(QJsonValue, answerId);
        const jsonrpc::ParseResult r = jsonrpc::parse(payload);
        QVERIFY(std::holds_alternative<jsonrpc::Fault>(r));
        const auto &f = std::get<jsonrpc::Fault>(r);
        QCOMPARE(f.code, code);
        QCOMPARE(f.id, answerId);
        QVERIFY(!f.message.isEmpty());
        // The error response built from a fault is itself a valid error response.
        const auto echoed = jsonrpc::parse(jsonrpc::serialize(jsonrpc::errorResponse(f)));
        if (!f.id.isNull()) {
            QVERIFY(std::holds_alternative<jsonrpc::Message>(echoed));
            QCOMPARE(int(std::get<jsonrpc::Message>(echoed).kind), int(Kind::ErrorResponse));
        }
    }

    void scansTheIdOfAnOversizedMessage_data()
    {
        QTest::addColumn<QByteArray>("payload");
        QTest::addColumn<QJsonValue>("id");
        const QJsonValue null(QJsonValue::Null);
        QTest::newRow("id first") << QByteArray(R"({"id":7,"jsonrpc":"2.0","method":"x"})")
                                  << QJsonValue(7);
        QTest::newRow("id after big params")
            << QByteArray(
                   R"({"jsonrpc":"2.0","method":"tools/call","params":{"arguments":)"
                   "{\"content\":\"a \\\"id\\\":3 , {\\\"id\\\":4}\",\"id\":5}},\"id\":\"req-9\"}")
            << QJsonValue(QStringLiteral("req-9"));
        QTest::newRow("spaces") << QByteArray("{ \"id\" :\n -12 }") << QJsonValue(-12);
        QTest::newRow("escaped string id")
            << QByteArray("{\"id\":\"a\\\"b\"}") << QJsonValue(QStringLiteral("a\"b"));
        QTest::newRow("nested id only")
            << QByteArray(R"({"params":{"id":1},"method":"m"})") << null;
        QTest::newRow("null id") << QByteArray(R"({"id":null})") << null;
        QTest::newRow("fractional id") << QByteArray(R"({"id":1.5})") << null;
        QTest::newRow("key ending in id") << QByteArray(R"({"xid":3,"method":"m"})") << null;
        QTest::newRow("a value spelled id") << QByteArray(R"({"method":"id","x":1})") << null;
        QTest::newRow("batch") << QByteArray(R"([{"id":1}])") << null;
        QTest::newRow("not JSON") << QByteArray("garbage") << null;
    }
    void scansTheIdOfAnOversizedMessage()
    {
        QFETCH(QByteArray, payload);
        QFETCH(QJsonValue, id);
        jsonrpc::IdScanner whole;
        whole.feed(payload);
        QCOMPARE(whole.id(), id);
        // Byte by byte (the reads of a stream) gives the same.
        jsonrpc::IdScanner bytes;
        for (const char c : payload)
            bytes.feed(QByteArrayView(&c, 1));
        QCOMPARE(bytes.id(), id);
    }

    void parsesBatches()
    {
        const jsonrpc::Payload single =
            jsonrpc::parsePayload(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
        QVERIFY(!single.batch);
        QVERIFY(std::holds_alternative<jsonrpc::Message>(single.single));
        const jsonrpc::Payload batch = jsonrpc::parsePayload(
            R"( [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},3,[]])");
        QVERIFY(batch.batch);
        QCOMPARE(batch.batch->size(), 4);
        QVERIFY(std::get<jsonrpc::Message>(batch.batch->at(0)).isRequest());
        QVERIFY(std::get<jsonrpc::Message>(batch.batch->at(1)).isNotification());
        QVERIFY(std::holds_alternative<jsonrpc::Fault>(batch.batch->at(2)));
        QVERIFY(std::holds_alternative<jsonrpc::Fault>(batch.batch->at(3)));
        const jsonrpc::Payload empty = jsonrpc::parsePayload("[]");
        QVERIFY(!empty.batch);
        QCOMPARE(std::get<jsonrpc::Fault>(empty.single).code, int(jsonrpc::InvalidRequest));
        const jsonrpc::Payload broken = jsonrpc::parsePayload("[{");
        QVERIFY(!broken.batch);
        QCOMPARE(std::get<jsonrpc::Fault>(broken.single).code, int(jsonrpc::ParseError));
    }

    // The framing the HTTP body cap follows, fed as a stream in pieces of every size.
    void bodyGuardFollowsRequests_data()
    {
        QTest::addColumn<QByteArray>("stream");
        QTest::addColumn<bool>("refused");
        const QByteArray small = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
        QTest::newRow("two small requests") << small + small << false;
        QTest::newRow("no body") << QByteArray("GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n") + small
                                 << false;
        QTest::newRow("length at the cap")
            << QByteArray("POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n") + QByteArray(100, 'x')
            << false;
        QTest::newRow("length over the cap, no body sent yet")
            << QByteArray("POST / HTTP/1.1\r\ncontent-length: 101\r\n\r\n") << true;
        QTest::newRow("huge length")
            << QByteArray("POST / HTTP/1.1\r\nContent-Length: 209715200\r\n\r\n") << true;
        QTest::newRow("second request over the cap")
            << small + "POST / HTTP/1.1\r\nContent-Length: 500\r\n\r\n"
            << true;
        const QByteArray chunkedHead = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        QTest::newRow("chunked under the cap")
            << chunkedHead + "32\r\n" + QByteArray(50, 'x') + "\r\n32;ext=1\r\n" +
                   QByteArray(50, 'y') + "\r\n0\r\n\r\n" + small
            << false;
        QTest::newRow("chunked over the cap")
            << chunkedHead + "32\r\n" + QByteArray(50, 'x') + "\r\n33\r\n"
            << true;
        QTest::newRow("one huge chunk") << chunkedHead + "fffffffff\r\n" << true;
        QTest::newRow("malformed chunk size") << chunkedHead + "zz\r\n" << true;
    }
    void bodyGuardFollowsRequests()
    {
        QFETCH(QByteArray, stream);
        QFETCH(bool, refused);
        for (const qsizetype piece : {qsizetype(1), qsizetype(7), stream.size()}) {
            HttpBodyGuard guard(nullptr, 100);
            for (qsizetype i = 0; i < stream.size(); i += piece)
                guard.feed(stream.constData() + i, qMin(piece, stream.size() - i));
            QCOMPARE(guard.refused(), refused);
            if (refused)
                QVERIFY(guard.reason().contains(QLatin1String("limit of 100 bytes")));
        }
    }

    void buildsResponses()
    {
        const QJsonObject r = jsonrpc::resultResponse(QJsonValue(QStringLiteral("id9")),
                                                      QJsonObject{{QStringLiteral("a"), 1}});
        QCOMPARE(r.value(QLatin1String("jsonrpc")).toString(), QStringLiteral("2.0"));
        QCOMPARE(r.value(QLatin1String("id")).toString(), QStringLiteral("id9"));
        QVERIFY(!r.contains(QLatin1String("error")));
        const QJsonObject e =
            jsonrpc::errorResponse(3, jsonrpc::MethodNotFound, QStringLiteral("no"), QJsonValue(1));
        QCOMPARE(e.value(QLatin1String("error")).toObject().value(QLatin1String("code")).toInt(),
                 -32601);
        QCOMPARE(e.value(QLatin1String("error")).toObject().value(QLatin1String("data")).toInt(),
                 1);
        QVERIFY(!jsonrpc::serialize(r).contains('\n')); // one line on stdio
        const QJsonObject n = jsonrpc::notification(QStringLiteral("x/y"));
        QVERIFY(!n.contains(QLatin1String("id")));
        QVERIFY(!n.contains(QLatin1String("params")));
    }

    void idKeysTellTypesApart()
    {
        QVERIFY(jsonrpc::idKey(QJsonValue(1)) != jsonrpc::idKey(QJsonValue(QStringLiteral("1"))));
        QCOMPARE(jsonrpc::idKey(QJsonValue(1)), jsonrpc::idKey(QJsonValue(1.0)));
    }

    void parsesAgentSpecs_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("token"); // empty: generated

        QTest::newRow("read_write, random token") << "coder=read_write"
                                                  << "coder"
                                                  << "read_write"
                                                  << "";
        QTest::newRow("read_only with token") << "rev=read_only:0123456789abcdefXYZ"
                                              << "rev"
                                              << "read_only"
                                              << "0123456789abcdefXYZ";
        QTest::newRow("token with colons") << "a.b-c_d=read_only:x:y:0123456789abcdef"
                                           << "a.b-c_d"
                                           << "read_only"
                                           << "x:y:0123456789abcdef";
    }
    void parsesAgentSpecs()
    {
        QFETCH(QString, value);
        QFETCH(QString, name);
        QFETCH(QString, mode);
        QFETCH(QString, token);
        const McpAgentSpec spec = McpAgentSpec::parse(value);
        QCOMPARE(spec.name, name);
        QCOMPARE(toString(spec.mode), mode);
        if (token.isEmpty())
            QVERIFY(spec.token.size() >= 43); // 256 bits, base64url
        else
            QCOMPARE(spec.token, token);
    }

    void refusesBadAgentSpecs_data()
    {
        QTest::addColumn<QString>("value");
        QTest::newRow("no mode") << "coder";
        QTest::newRow("empty name") << "=read_write";
        QTest::newRow("unknown mode") << "coder=admin";
        QTest::newRow("short token") << "coder=read_write:short";
        QTest::newRow("token with space") << "coder=read_write:0123456789 abcdefgh";
        QTest::newRow("name with slash") << "a/b=read_only";
    }
    void refusesBadAgentSpecs()
    {
        QFETCH(QString, value);
        QVERIFY_THROWS_EXCEPTION(ValueError, McpAgentSpec::parse(value));
    }

    void randomTokensDiffer()
    {
        QSet<QString> seen;
        for (int i = 0; i < 200; ++i)
            seen.insert(generateMcpToken());
        QCOMPARE(seen.size(), 200);
        const QByteArray raw =
            QByteArray::fromBase64(generateMcpToken().toLatin1(), QByteArray::Base64UrlEncoding);
        QVERIFY(raw.size() * 8 >= 128);
    }

    void tokenTableAuthorizes()
    {
        const McpTokenTable table({McpAgentSpec::parse("a=read_write:aaaaaaaaaaaaaaaaaaaa"),
                                   McpAgentSpec::parse("b=read_only:bbbbbbbbbbbbbbbbbbbb")});
        QCOMPARE(table.authorize("Bearer aaaaaaaaaaaaaaaaaaaa")->name, QStringLiteral("a"));
        QCOMPARE(table.authorize("bearer   bbbbbbbbbbbbbbbbbbbb ")->name, QStringLiteral("b"));
        QVERIFY(!table.authorize("Bearer aaaaaaaaaaaaaaaaaaa"));   // prefix
        QVERIFY(!table.authorize("Bearer aaaaaaaaaaaaaaaaaaaaa")); // longer
        QVERIFY(!table.authorize("Basic aaaaaaaaaaaaaaaaaaaa"));
        QVERIFY(!table.authorize("aaaaaaaaaaaaaaaaaaaa"));
        QVERIFY(!table.authorize("Bearer "));
        QVERIFY(!table.authorize(""));
        QVERIFY_THROWS_EXCEPTION(
            ValueError, McpTokenTable({McpAgentSpec::parse("a=read_write:aaaaaaaaaaaaaaaaaaaa"),
                                       McpAgentSpec::parse("b=read_only:aaaaaaaaaaaaaaaaaaaa")}));
        QVERIFY_THROWS_EXCEPTION(ValueError, McpTokenTable({McpAgentSpec::parse("a=read_write"),
                                                            McpAgentSpec::parse("a=read_only")}));
    }

    // The tools/call text is escaped by hand into the serialized response: whatever it holds,
    // a JSON parser must read back exactly the text.
    void escapedTextRoundTrips_data()
    {
        QTest::addColumn<QString>("text");
        QString controls;
        for (char16_t c = 0; c < 0x20; ++c)
            controls += QChar(c);
        QTest::newRow("empty") << QString();
        QTest::newRow("plain") << QStringLiteral("many/file-0001.txt\nmany/file-0002.txt");
        QTest::newRow("quotes and backslashes")
            << QStringLiteral(R"(a "quoted" \ path\\ "content":[{"text":"")");
        QTest::newRow("every control character") << controls + QStringLiteral("end");
        QTest::newRow("DEL and non-ASCII")
            << QString::fromUtf8("\x7f caf\xc3\xa9 \xe2\x80\xa8 \xef\xbf\xbd \xf0\x9f\x98\x80");
        QTest::newRow("only escapes") << QStringLiteral("\"\"\\\\\n\t\r\b\f");
    }
    void escapedTextRoundTrips()
    {
        QFETCH(QString, text);
        QByteArray json = "[\"";
        jsonrpc::appendEscaped(json, text.toUtf8());
        json += "\"]";
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(doc.array().at(0).toString(), text);
        // Appends: what was in the buffer stays.
        QByteArray prefixed = "x";
        jsonrpc::appendEscaped(prefixed, "a\nb");
        QCOMPARE(prefixed, QByteArray("xa\\nb"));
    }
};

QTEST_GUILESS_MAIN(TestMcpJsonRpc)
#include "tst_mcpjsonrpc.moc"
