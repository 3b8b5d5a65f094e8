// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "errors.h"
#include "localsandboxbackend.h"
#include "mcphttpserver.h"
#include "testutil.h"

#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>

using namespace elsai;

namespace {
const QString kWriter = QStringLiteral("writer-token-0123456789");
const QString kReader = QStringLiteral("reader-token-0123456789");
} // namespace

/// The Streamable HTTP transport over loopback with QNetworkAccessManager: the order of the
/// checks (token, Origin, method, session, version), sessions, concurrency, revocation.
class TestMcpHttp : public QObject
{
    Q_OBJECT

    struct Reply
    {
        int status = 0;
        QByteArray body;
        QJsonObject json;
        QHash<QByteArray, QByteArray> headers; // lower-case names
    };

    QTemporaryDir m_tmp;
    SandboxPtr m_sandbox;
    std::unique_ptr<McpHttpServer> m_server;
    QNetworkAccessManager m_nam;
    int m_nextId = 1;

    QNetworkRequest makeRequest(const QString &token, const QByteArray &session = {},
                                const QByteArray &origin = {})
    {
        QNetworkRequest r(m_server->url());
        r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
        r.setRawHeader("Accept", "application/json, text/event-stream");
        if (!token.isEmpty())
            r.setRawHeader("Authorization", "Bearer " + token.toUtf8());
        if (!session.isEmpty())
            r.setRawHeader("Mcp-Session-Id", session);
        if (!origin.isEmpty())
            r.setRawHeader("Origin", origin);
        return r;
    }
    static Reply wait(QNetworkReply *reply)
    {
        if (!reply->isFinished()) {
            QEventLoop loop;
            QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
            loop.exec();
        }
        Reply r;
        r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        r.body = reply->readAll();
        r.json = QJsonDocument::fromJson(r.body).object();
        for (const auto &[name, value] : reply->rawHeaderPairs())
            r.headers.insert(name.toLower(), value);
        reply->deleteLater();
        return r;
    }
    Reply send(const QNetworkRequest &request, const QByteArray &verb, const QByteArray &body = {})
    {
        return wait(m_nam.sendCustomRequest(request, verb, body));
    }
    QByteArray rpc(const QString &method, const QJsonObject &params = {}, int id = 0)
    {
        QJsonObject o{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                      {QStringLiteral("id"), id ? id : m_nextId++},
                      {QStringLiteral("method"), method}};
        if (!params.isEmpty())
            o.insert(QStringLiteral("params"), params);
        return QJsonDocument(o).toJson(QJsonDocument::Compact);
    }
    QByteArray initialize(const QString &token)
    {
        const Reply r =
            send(makeRequest(token), "POST",
                 rpc(QStringLiteral("initialize"),
                     {{QStringLiteral("protocolVersion"), QStringLiteral("2025-06-18")},
                      {QStringLiteral("capabilities"), QJsonObject{}},
                      {QStringLiteral("clientInfo"),
                       QJsonObject{{QStringLiteral("name"), QStringLiteral("qnam")},
                                   {QStringLiteral("version"), QStringLiteral("1")}}}}));
        [&] { QCOMPARE(r.status, 200); }();
        return r.headers.value("mcp-session-id");
    }
    QByteArray callTool(const QString &name, const QJsonObject &args, int id = 0)
    {
        return rpc(QStringLiteral("tools/call"),
                   {{QStringLiteral("name"), name}, {QStringLiteral("arguments"), args}}, id);
    }
    int runningCalls() const
    {
        int n = 0;
        for (const McpSessionInfo &s : m_server->sessions())
            n += s.runningCalls;
        return n;
    }
    static QString resultText(const Reply &r)
    {
        return r.json.value(QLatin1String("result"))
            .toObject()
            .value(QLatin1String("content"))
            .toArray()
            .first()
            .toObject()
            .value(QLatin1String("text"))
            .toString();
    }

    void endAllSessions()
    {
        for (const McpSessionInfo &s : m_server->sessions())
            send(makeRequest(s.agent == QLatin1String("writer") ? kWriter : kReader,
                             s.sessionId.toLatin1()),
                 "DELETE");
        QVERIFY(m_server->sessions().isEmpty());
    }

private:
    static QJsonObject envelope(const QString &version = QStringLiteral("2026-07-28"),
                                bool tasks = false)
    {
        QJsonObject capabilities;
        if (tasks)
            capabilities.insert(
                QStringLiteral("extensions"),
                QJsonObject{{QStringLiteral("io.modelcontextprotocol/tasks"), QJsonObject{}}});
        return {{QStringLiteral("io.modelcontextprotocol/protocolVersion"), version},
                {QStringLiteral("io.modelcontextprotocol/clientCapabilities"), capabilities}};
    }
    /// A stateless POST as a 2026-07-28 client sends it: the standard headers mirror the body.
    QNetworkRequest modernRequest(const QString &token, const QString &method,
                                  const QString &name = {})
    {
        QNetworkRequest r = makeRequest(token);
        r.setRawHeader("MCP-Protocol-Version", "2026-07-28");
        r.setRawHeader("Mcp-Method", method.toUtf8());
        if (!name.isEmpty())
            r.setRawHeader("Mcp-Name", name.toUtf8());
        return r;
    }
    QByteArray modernRpc(const QString &method, QJsonObject params = {},
                         const QJsonObject &meta = envelope(), int id = 0)
    {
        params.insert(QStringLiteral("_meta"), meta);
        return rpc(method, params, id);
    }
    static int errorCode(const Reply &r)
    {
        return r.json.value(QLatin1String("error")).toObject().value(QLatin1String("code")).toInt();
    }

private Q_SLOTS:
    void initTestCase()
    {
        // No soft return: the calls here wait for files the test writes, whenever that is
        // on a loaded machine (the soft return has its own tests, tst_agenttools).
        Sandbox::Options options;
        options.executeSoftReturnSeconds = 0;
        m_sandbox = Sandbox::create(
            QStringLiteral("mcphttp"),
            std::make_shared<LocalSandboxBackend>(m_tmp.filePath(QStringLiteral("ws"))), 600,
            options);
        m_sandbox->start();
        m_sandbox->addFiles({{QStringLiteral("a.txt"), FileSource::text(QStringLiteral("hello"))}});
        m_server = std::make_unique<McpHttpServer>(
            m_sandbox,
            QList<McpAgentSpec>{{QStringLiteral("writer"), SandboxAttachMode::ReadWrite, kWriter},
                                {QStringLiteral("reader"), SandboxAttachMode::ReadOnly, kReader}});
        m_server->listen(QHostAddress::LocalHost, 0);
        QVERIFY(m_server->port() > 0);
        QCOMPARE(m_server->url().path(), QStringLiteral("/mcp"));
    }
    void cleanupTestCase()
    {
        m_server.reset();
        m_sandbox->stop(false);
    }

    void refusesNonLoopbackWithoutOptIn()
    {
        McpHttpServer other(m_sandbox, {});
        QVERIFY_THROWS_EXCEPTION(ValueError, other.listen(QHostAddress::AnyIPv4, 0));
        QVERIFY(!other.isListening());
    }

    void tokenIsCheckedBeforeAnythingElse_data()
    {
        QTest::addColumn<QString>("token");
        QTest::addColumn<QByteArray>("verb");
        QTest::addColumn<QByteArray>("origin");
        QTest::addColumn<QByteArray>("body");
        QTest::newRow("none, POST")
            << QString() << QByteArray("POST") << QByteArray() << rpc(QStringLiteral("ping"));
        QTest::newRow("wrong, POST")
            << QStringLiteral("nope-0123456789abcdef") << QByteArray("POST") << QByteArray()
            << rpc(QStringLiteral("ping"));
        QTest::newRow("prefix of a real one")
            << kWriter.left(kWriter.size() - 1) << QByteArray("POST") << QByteArray()
            << rpc(QStringLiteral("ping"));
        QTest::newRow("none, foreign origin")
            << QString() << QByteArray("POST") << QByteArray("http://evil.example")
            << rpc(QStringLiteral("ping"));
        QTest::newRow("none, GET")
            << QString() << QByteArray("GET") << QByteArray() << QByteArray();
        QTest::newRow("none, DELETE")
            << QString() << QByteArray("DELETE") << QByteArray() << QByteArray();
        QTest::newRow("none, broken JSON")
            << QString() << QByteArray("POST") << QByteArray() << QByteArray("{broken");
    }
    void tokenIsCheckedBeforeAnythingElse()
    {
        QFETCH(QString, token);
        QFETCH(QByteArray, verb);
        QFETCH(QByteArray, origin);
        QFETCH(QByteArray, body);
        const Reply r = send(makeRequest(token, {}, origin), verb, body);
        QCOMPARE(r.status, 401);
        QVERIFY(r.headers.value("www-authenticate").startsWith("Bearer"));
        QVERIFY(m_server->sessions().isEmpty()); // nothing happened
    }

    void originIsValidated_data()
    {
        QTest::addColumn<QByteArray>("origin");
        QTest::addColumn<int>("status");
        QTest::newRow("foreign") << QByteArray("http://evil.example") << 403;
        QTest::newRow("rebinding name") << QByteArray("http://127.0.0.1.evil.example:8080") << 403;
        QTest::newRow("null") << QByteArray("null") << 403;
        QTest::newRow("localhost") << QByteArray("http://localhost:5173") << 200;
        QTest::newRow("127.0.0.1") << QByteArray("http://127.0.0.1") << 200;
        QTest::newRow("[::1]") << QByteArray("https://[::1]:8443") << 200;
    }
    void originIsValidated()
    {
        QFETCH(QByteArray, origin);
        QFETCH(int, status);
        const Reply r =
            send(makeRequest(kReader, {}, origin), "POST",
                 rpc(QStringLiteral("initialize"),
                     {{QStringLiteral("protocolVersion"), QStringLiteral("2025-06-18")}}));
        QCOMPARE(r.status, status);
        if (status == 200)
            send(makeRequest(kReader, r.headers.value("mcp-session-id")), "DELETE");
    }

    void getIsNotAllowed()
    {
        const Reply r = send(makeRequest(kReader), "GET");
        QCOMPARE(r.status, 405);
        QVERIFY(r.headers.value("allow").contains("POST"));
    }

    void initializeWithAnUnsupportedVersionHeaderOpensNoSession()
    {
        QNetworkRequest r = makeRequest(kReader);
        r.setRawHeader("MCP-Protocol-Version", "2026-07-28");
        const Reply refused =
            send(r, "POST",
                 rpc(QStringLiteral("initialize"),
                     {{QStringLiteral("protocolVersion"), QStringLiteral("2026-07-28")}}));
        QCOMPARE(refused.status, 400);
        QVERIFY(!refused.headers.contains("mcp-session-id"));
        QVERIFY(m_server->sessions().isEmpty());
        // Offered in the body only, the stateless revision gets the latest session-based one.
        const Reply answered =
            send(makeRequest(kReader), "POST",
                 rpc(QStringLiteral("initialize"),
                     {{QStringLiteral("protocolVersion"), QStringLiteral("2026-07-28")}}));
        QCOMPARE(answered.status, 200);
        QCOMPARE(answered.json.value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("protocolVersion"))
                     .toString(),
                 QStringLiteral("2025-11-25"));
        QCOMPARE(
            send(makeRequest(kReader, answered.headers.value("mcp-session-id")), "DELETE").status,
            200);
    }

    void sessionLifecycle()
    {
        const QByteArray session = initialize(kReader);
        QVERIFY(session.size() >= 32);
        QCOMPARE(m_server->sessions().size(), 1);
        QCOMPARE(m_server->sessions().first().agent, QStringLiteral("reader"));
        QCOMPARE(m_server->sessions().first().clientName, QStringLiteral("qnam"));

        // A notification is accepted without a body.
        const Reply n = send(makeRequest(kReader, session), "POST",
                             R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
        QCOMPARE(n.status, 202);
        QVERIFY(n.body.isEmpty());

        QCOMPARE(send(makeRequest(kReader), "POST", rpc(QStringLiteral("ping"))).status, 400);
        QCOMPARE(send(makeRequest(kReader, "0123456789abcdef0123456789abcdef"), "POST",
                      rpc(QStringLiteral("ping")))
                     .status,
                 404);
        // Another agent's token cannot use the session.
        QCOMPARE(send(makeRequest(kWriter, session), "POST", rpc(QStringLiteral("ping"))).status,
                 404);

        // An unsupported version header is 400 on every revision.
        for (const QByteArray &version :
             {QByteArray("1999-01-01"), QByteArray("2099-01-01"), QByteArray("2026-07-28"),
              QByteArray("banana"), QByteArray("2025-05-01")}) {
            QNetworkRequest bad = makeRequest(kReader, session);
            bad.setRawHeader("MCP-Protocol-Version", version);
            const Reply refused = send(bad, "POST", rpc(QStringLiteral("ping")));
            QVERIFY2(refused.status == 400, version.constData());
            QVERIFY(refused.json.value(QLatin1String("error"))
                        .toObject()
                        .value(QLatin1String("message"))
                        .toString()
                        .contains(QString::fromLatin1(version)));
        }
        QNetworkRequest badDelete = makeRequest(kReader, session);
        badDelete.setRawHeader("MCP-Protocol-Version", "2099-01-01");
        QCOMPARE(send(badDelete, "DELETE").status, 400);
        QNetworkRequest good = makeRequest(kReader, session);
        good.setRawHeader("MCP-Protocol-Version", "2025-06-18");
        const Reply ping = send(good, "POST", rpc(QStringLiteral("ping"), {}, 77));
        QCOMPARE(ping.status, 200);
        QCOMPARE(ping.json.value(QLatin1String("id")).toInt(), 77);
        QVERIFY(ping.json.value(QLatin1String("result")).isObject());

        // Malformed JSON is a JSON-RPC parse error with HTTP 400.
        const Reply broken = send(makeRequest(kReader, session), "POST", "{nope");
        QCOMPARE(broken.status, 400);
        QCOMPARE(broken.json.value(QLatin1String("error"))
                     .toObject()
                     .value(QLatin1String("code"))
                     .toInt(),
                 int(jsonrpc::ParseError));

        QCOMPARE(send(makeRequest(kReader, session), "DELETE").status, 200);
        QVERIFY(m_server->sessions().isEmpty());
        QCOMPARE(send(makeRequest(kReader, session), "POST", rpc(QStringLiteral("ping"))).status,
                 404);
        QCOMPARE(send(makeRequest(kReader, session), "DELETE").status, 404);
    }

    // A raw connection: the status line and body of the server's answer to `bytes`, written
    // at once, or as the server reads them (the event loop runs: the server lives here).
    QByteArray rawExchange(const QByteArray &bytes, qsizetype piece = 0, int responses = 1)
    {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, m_server->port());
        QByteArray received;
        connect(&socket, &QTcpSocket::readyRead, &socket, [&] { received += socket.readAll(); });
        bool closed = false;
        connect(&socket, &QTcpSocket::disconnected, &socket, [&] { closed = true; });
        for (int i = 0; i < 2000 && socket.state() != QAbstractSocket::ConnectedState; ++i)
            QTest::qWait(5);
        if (piece <= 0)
            piece = bytes.size();
        for (qsizetype i = 0; i < bytes.size(); i += piece) { // the server reads each apart
            socket.write(bytes.mid(i, piece));
            socket.flush();
            QTest::qWait(5);
        }
        for (int i = 0; i < 2000 && !closed && received.count("\"jsonrpc\"") < responses; ++i)
            QTest::qWait(10);
        return received;
    }

    void bodiesOverTheCapAreRefusedBeforeTheyArrive()
    {
        m_server->setMaxMessageBytes(4096);
        const QByteArray session = initialize(kWriter); // a connection made under the new cap
        const QByteArray head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                                kWriter.toUtf8() + "\r\nMcp-Session-Id: " + session +
                                "\r\nContent-Type: application/json\r\n";
        // 200 MB announced, none of it sent: the answer comes from the headers alone.
        const QByteArray announced = rawExchange(head + "Content-Length: 209715200\r\n\r\n");
        QVERIFY2(announced.startsWith("HTTP/1.1 413"), announced.constData());
        QVERIFY(announced.contains("limit of 4096 bytes"));
        QVERIFY(announced.contains("\"jsonrpc\":\"2.0\""));
        // Chunked: refused when the chunks pass the cap.
        const QByteArray chunked =
            rawExchange(head + "Transfer-Encoding: chunked\r\n\r\n800\r\n" + QByteArray(2048, ' ') +
                        "\r\n900\r\n" + QByteArray(100, ' '));
        QVERIFY2(chunked.startsWith("HTTP/1.1 413"), chunked.constData());
        // Under the cap, in pieces the server reads one by one, headers split too: the guard
        // follows the framing across reads (two requests on one connection).
        const QByteArray ping =
            rpc(QStringLiteral("ping"), {}, 32).chopped(1) + QByteArray(3000, ' ') + '}';
        const QByteArray pingPost =
            head + "Content-Length: " + QByteArray::number(ping.size()) + "\r\n\r\n" + ping;
        const QByteArray twice = rawExchange(pingPost + pingPost, 700, 2);
        QVERIFY2(twice.startsWith("HTTP/1.1 200"), twice.constData());
        QCOMPARE(twice.count("HTTP/1.1 200"), 2);
        QCOMPARE(twice.count("\"id\":32"), 2);
        // Under the cap, the same padding is a request like any other.
        const QByteArray padded =
            rpc(QStringLiteral("ping"), {}, 31).chopped(1) + QByteArray(3000, ' ') + '}';
        const Reply fine = send(makeRequest(kWriter, session), "POST", padded);
        QCOMPARE(fine.status, 200);
        QCOMPARE(fine.json.value(QLatin1String("id")).toInt(), 31);
        m_server->setMaxMessageBytes(kDefaultMaxMcpMessageBytes);
        send(makeRequest(kWriter, session), "DELETE");
    }

    void batchesFollowTheNegotiatedRevision()
    {
        auto open = [&](const char *version) {
            const Reply r =
                send(makeRequest(kReader), "POST",
                     rpc(QStringLiteral("initialize"),
                         {{QStringLiteral("protocolVersion"), QLatin1String(version)}}));
            return r.headers.value("mcp-session-id");
        };
        const QByteArray old = open("2025-03-26");
        const QByteArray batch = "[" + rpc(QStringLiteral("ping"), {}, 41) +
                                 R"(,{"jsonrpc":"2.0","method":"notifications/initialized"},)" +
                                 callTool(QStringLiteral("read_file"),
                                          {{QStringLiteral("path"), QStringLiteral("a.txt")}}, 42) +
                                 "," + rpc(QStringLiteral("initialize"), {}, 43) + "]";
        const Reply answered = send(makeRequest(kReader, old), "POST", batch);
        QCOMPARE(answered.status, 200);
        const QJsonArray responses = QJsonDocument::fromJson(answered.body).array();
        QCOMPARE(responses.size(), 3); // none for the notification
        QCOMPARE(responses.at(0).toObject().value(QLatin1String("id")).toInt(), 41);
        QCOMPARE(responses.at(1).toObject().value(QLatin1String("id")).toInt(), 42);
        QCOMPARE(responses.at(1)
                     .toObject()
                     .value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("content"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QLatin1String("text"))
                     .toString(),
                 QStringLiteral("hello"));
        QVERIFY(responses.at(2).toObject().contains(QLatin1String("error"))); // initialize
        const Reply onlyNotifications = send(makeRequest(kReader, old), "POST",
                                             R"([{"jsonrpc":"2.0","method":"notifications/x"}])");
        QCOMPARE(onlyNotifications.status, 202);

        const QByteArray current = open("2025-06-18");
        const Reply refused =
            send(makeRequest(kReader, current), "POST", "[" + rpc(QStringLiteral("ping")) + "]");
        QCOMPARE(refused.status, 400);
        QVERIFY(refused.json.value(QLatin1String("error"))
                    .toObject()
                    .value(QLatin1String("message"))
                    .toString()
                    .contains(QLatin1String("2025-03-26 only")));
        send(makeRequest(kReader, old), "DELETE");
        send(makeRequest(kReader, current), "DELETE");
    }

    void modesAreEnforced()
    {
        const QByteArray ro = initialize(kReader);
        const QByteArray rw = initialize(kWriter);
        const Reply list =
            send(makeRequest(kReader, ro), "POST", rpc(QStringLiteral("tools/list")));
        QStringList names;
        for (const QJsonValue &t : list.json.value(QLatin1String("result"))
                                       .toObject()
                                       .value(QLatin1String("tools"))
                                       .toArray())
            names.append(t.toObject().value(QLatin1String("name")).toString());
        names.sort();
        QCOMPARE(names, elsai::test::sortedSandboxTools(SandboxAttachMode::ReadOnly));

        const Reply denied = send(makeRequest(kReader, ro), "POST",
                                  callTool(QStringLiteral("write_file"),
                                           {{QStringLiteral("path"), QStringLiteral("a.txt")},
                                            {QStringLiteral("content"), QStringLiteral("x")}}));
        QCOMPARE(denied.status, 200);
        QVERIFY(denied.json.value(QLatin1String("result"))
                    .toObject()
                    .value(QLatin1String("isError"))
                    .toBool());
        QVERIFY(resultText(denied).startsWith(QStringLiteral("SandboxMutationDeniedError")));
        QCOMPARE(m_sandbox->readFile(QStringLiteral("a.txt")), QStringLiteral("hello"));

        const Reply written =
            send(makeRequest(kWriter, rw), "POST",
                 callTool(QStringLiteral("write_file"),
                          {{QStringLiteral("path"), QStringLiteral("b.txt")},
                           {QStringLiteral("content"), QStringLiteral("by writer")}}));
        QVERIFY(!written.json.value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("isError"))
                     .toBool());
        QCOMPARE(m_sandbox->readFile(QStringLiteral("b.txt")), QStringLiteral("by writer"));
        send(makeRequest(kReader, ro), "DELETE");
        send(makeRequest(kWriter, rw), "DELETE");
    }

    void aLongCallBlocksNoOtherSession()
    {
        // Session A waits for a file that only session B can create: if the server served one
        // request at a time, neither would ever finish.
        const QByteArray a = initialize(kWriter);
        const QByteArray b = initialize(kWriter);
        QNetworkReply *waiting = m_nam.sendCustomRequest(
            makeRequest(kWriter, a), "POST",
            callTool(
                QStringLiteral("execute"),
                {{QStringLiteral("command"),
                  QStringLiteral("while [ ! -f release ]; do sleep 0.02; done; echo released")}}));
        QTRY_COMPARE_WITH_TIMEOUT(runningCalls(), 1, 20000);
        QCOMPARE(send(makeRequest(kWriter, b), "POST", rpc(QStringLiteral("ping"))).status, 200);
        const Reply release = send(makeRequest(kWriter, b), "POST",
                                   callTool(QStringLiteral("write_file"),
                                            {{QStringLiteral("path"), QStringLiteral("release")},
                                             {QStringLiteral("content"), QString()}}));
        QCOMPARE(release.status, 200);
        const Reply done = wait(waiting);
        QCOMPARE(done.status, 200);
        QVERIFY(resultText(done).startsWith(QStringLiteral("released")));
        send(makeRequest(kWriter, a), "DELETE");
        send(makeRequest(kWriter, b), "DELETE");
    }

    void cancelledNotificationKillsTheCommand()
    {
        const QByteArray s = initialize(kWriter);
        QNetworkReply *running = m_nam.sendCustomRequest(
            makeRequest(kWriter, s), "POST",
            callTool(QStringLiteral("execute"),
                     {{QStringLiteral("command"), QStringLiteral("sleep 300")}}, 9001));
        QTRY_COMPARE_WITH_TIMEOUT(runningCalls(), 1, 20000);
        const Reply cancel = send(makeRequest(kWriter, s), "POST",
                                  R"({"jsonrpc":"2.0","method":"notifications/cancelled",)"
                                  R"("params":{"requestId":9001,"reason":"test"}})");
        QCOMPARE(cancel.status, 202);
        const Reply done = wait(running);
        QCOMPARE(done.status, 200);
        QVERIFY(resultText(done).contains(QStringLiteral("cancelled")));
        send(makeRequest(kWriter, s), "DELETE");
    }

    void aClientThatHangsUpDoesNotHurtTheServer()
    {
        // The answer to an aborted request is dropped (Qt 6.4's responder keeps a raw socket).
        const QByteArray s = initialize(kWriter);
        QNetworkReply *running = m_nam.sendCustomRequest(
            makeRequest(kWriter, s), "POST",
            callTool(QStringLiteral("execute"),
                     {{QStringLiteral("command"), QStringLiteral("sleep 300")}}, 9100));
        QTRY_COMPARE_WITH_TIMEOUT(runningCalls(), 1, 20000);
        running->abort();
        running->deleteLater();
        QCOMPARE(send(makeRequest(kWriter, s), "POST",
                      R"({"jsonrpc":"2.0","method":"notifications/cancelled",)"
                      R"("params":{"requestId":9100}})")
                     .status,
                 202);
        QTRY_COMPARE_WITH_TIMEOUT(runningCalls(), 0, 20000);
        QCOMPARE(send(makeRequest(kWriter, s), "POST", rpc(QStringLiteral("ping"))).status, 200);
        send(makeRequest(kWriter, s), "DELETE");
    }

    void idleSessionsExpire()
    {
        const QByteArray busy = initialize(kWriter);
        const QByteArray idle = initialize(kReader);
        QNetworkReply *running = m_nam.sendCustomRequest(
            makeRequest(kWriter, busy), "POST",
            callTool(QStringLiteral("execute"),
                     {{QStringLiteral("command"),
                       QStringLiteral("while [ ! -f idle-release ]; do sleep 0.02; done")}}));
        QTRY_COMPARE_WITH_TIMEOUT(runningCalls(), 1, 20000);
        m_server->setSessionIdleTimeout(0);
        QCOMPARE(m_server->expireIdleSessions(), 1); // not the one with a running call
        QCOMPARE(send(makeRequest(kReader, idle), "POST", rpc(QStringLiteral("ping"))).status, 404);
        m_sandbox->addFiles({{QStringLiteral("idle-release"), FileSource::text(QString())}});
        QCOMPARE(wait(running).status, 200);
        m_server->setSessionIdleTimeout(30 * 60);
        send(makeRequest(kWriter, busy), "DELETE");
    }

    void revokingATokenEndsItsSessions()
    {
        McpHttpServer server(m_sandbox, {{QStringLiteral("temp"), SandboxAttachMode::ReadOnly,
                                          QStringLiteral("temp-token-0123456789")}});
        server.listen(QHostAddress::LocalHost, 0);
        QSignalSpy ended(&server, &McpHttpServer::sessionEnded);
        QNetworkRequest r(server.url());
        r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
        r.setRawHeader("Authorization", "Bearer temp-token-0123456789");
        const Reply init =
            send(r, "POST",
                 rpc(QStringLiteral("initialize"),
                     {{QStringLiteral("protocolVersion"), QStringLiteral("2025-06-18")}}));
        QCOMPARE(init.status, 200);
        AgentPtr agent;
        for (const AttachedAgent &a : m_sandbox->attachedAgents()) {
            if (a.agent->id() == QLatin1String("temp"))
                agent = a.agent;
        }
        QVERIFY(agent);
        QCOMPARE(server.revokeAgent(QStringLiteral("temp")), 1);
        QCOMPARE(ended.size(), 1);
        QVERIFY(agent->isDetached());
        r.setRawHeader("Mcp-Session-Id", init.headers.value("mcp-session-id"));
        QCOMPARE(send(r, "POST", rpc(QStringLiteral("ping"))).status, 401);
    }

    void revokingATokenCancelsItsRunningCalls()
    {
        McpHttpServer server(m_sandbox, {{QStringLiteral("temprw"), SandboxAttachMode::ReadWrite,
                                          QStringLiteral("temprw-token-0123456789")}});
        server.listen(QHostAddress::LocalHost, 0);
        QNetworkRequest r(server.url());
        r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
        r.setRawHeader("Authorization", "Bearer temprw-token-0123456789");
        const Reply init = send(r, "POST", rpc(QStringLiteral("initialize")));
        r.setRawHeader("Mcp-Session-Id", init.headers.value("mcp-session-id"));
        QNetworkReply *running = m_nam.sendCustomRequest(
            r, "POST",
            callTool(QStringLiteral("execute"),
                     {{QStringLiteral("command"), QStringLiteral("sleep 300")}}));
        // Running in the session (not only given a worker): the command has started.
        QTRY_COMPARE_WITH_TIMEOUT(server.sessions().value(0).runningCalls, 1, 20000);
        QCOMPARE(server.revokeAgent(QStringLiteral("temprw")), 1);
        const Reply done = wait(running); // at once, not after 300 s
        QVERIFY2(resultText(done).contains(QStringLiteral("cancelled")), done.body.constData());
        QTRY_COMPARE_WITH_TIMEOUT(server.runningCalls(QStringLiteral("temprw")), 0, 20000);
    }

    // Clients that never send DELETE (SDK 1.x close() does not) cannot lock anyone out.
    void leakedSessionsLockNobodyOut()
    {
        QList<QByteArray> leaked;
        for (int i = 0; i < 300; ++i) {
            leaked.append(initialize(kWriter));
            QVERIFY(!leaked.last().isEmpty());
            if (i == 0) { // the first stays in use: least recently used is not the oldest
                QCOMPARE(
                    send(makeRequest(kWriter, leaked.first()), "POST", rpc(QStringLiteral("ping")))
                        .status,
                    200);
            }
            if (i % 32 == 0)
                send(makeRequest(kWriter, leaked.first()), "POST", rpc(QStringLiteral("ping")));
        }
        QCOMPARE(m_server->sessions().size(), 64); // the per-agent cap
        QCOMPARE(
            send(makeRequest(kWriter, leaked.first()), "POST", rpc(QStringLiteral("ping"))).status,
            200);
        QCOMPARE(
            send(makeRequest(kWriter, leaked.at(1)), "POST", rpc(QStringLiteral("ping"))).status,
            404); // evicted: the client initializes again
        QCOMPARE(
            send(makeRequest(kWriter, leaked.last()), "POST", rpc(QStringLiteral("ping"))).status,
            200);
        // Another agent is not affected.
        const QByteArray reader = initialize(kReader);
        QCOMPARE(send(makeRequest(kReader, reader), "POST", rpc(QStringLiteral("ping"))).status,
                 200);
        endAllSessions();

        // The total cap evicts the least recently used idle session of any agent.
        m_server->setSessionLimits(4, 3);
        const QByteArray w1 = initialize(kWriter);
        const QByteArray w2 = initialize(kWriter);
        const QByteArray r1 = initialize(kReader);
        const QByteArray r2 = initialize(kReader);
        send(makeRequest(kWriter, w1), "POST", rpc(QStringLiteral("ping")));
        initialize(kReader); // full: w2 is the least recently used
        QCOMPARE(send(makeRequest(kWriter, w2), "POST", rpc(QStringLiteral("ping"))).status, 404);
        QCOMPARE(send(makeRequest(kReader, r1), "POST", rpc(QStringLiteral("ping"))).status, 200);
        endAllSessions();

        // A session running a call is never evicted: 503 names what to do.
        m_server->setSessionLimits(4, 1);
        const QByteArray busy = initialize(kWriter);
        QNetworkReply *running = m_nam.sendCustomRequest(
            makeRequest(kWriter, busy), "POST",
            callTool(QStringLiteral("execute"),
                     {{QStringLiteral("command"),
                       QStringLiteral("while [ ! -f evict-release ]; do sleep 0.02; done")}}));
        QTRY_COMPARE_WITH_TIMEOUT(runningCalls(), 1, 20000);
        const Reply full = send(makeRequest(kWriter), "POST", rpc(QStringLiteral("initialize")));
        QCOMPARE(full.status, 503);
        QVERIFY(full.body.contains("running a call"));
        QVERIFY(!initialize(kReader).isEmpty()); // the other agent still gets in
        m_sandbox->addFiles({{QStringLiteral("evict-release"), FileSource::text(QString())}});
        QCOMPARE(wait(running).status, 200);
        m_server->setSessionLimits(256, 64);
        endAllSessions();
        Q_UNUSED(r2);
    }

    // A call waiting for a worker (not yet running in its session) keeps the session too.
    void queuedCallsKeepTheirSessions()
    {
        m_server->setCallLimits(1, 1);
        m_server->setSessionLimits(8, 2);
        const QByteArray running = initialize(kWriter);
        const QByteArray queued = initialize(kWriter);
        const QByteArray command = "while [ ! -f queue-release ]; do sleep 0.02; done; echo ok";
        QNetworkReply *first = m_nam.sendCustomRequest(
            makeRequest(kWriter, running), "POST",
            callTool(QStringLiteral("execute"),
                     {{QStringLiteral("command"), QString::fromLatin1(command)}}));
        QTRY_COMPARE_WITH_TIMEOUT(m_server->runningCalls(QStringLiteral("writer")), 1, 20000);
        QNetworkReply *second = m_nam.sendCustomRequest(
            makeRequest(kWriter, queued), "POST",
            callTool(QStringLiteral("execute"),
                     {{QStringLiteral("command"), QString::fromLatin1(command)}}));
        QTRY_COMPARE_WITH_TIMEOUT(m_server->queuedCalls(QStringLiteral("writer")), 1, 20000);
        const Reply full = send(makeRequest(kWriter), "POST", rpc(QStringLiteral("initialize")));
        QCOMPARE(full.status, 503); // neither session is idle
        m_sandbox->addFiles({{QStringLiteral("queue-release"), FileSource::text(QString())}});
        QVERIFY(resultText(wait(first)).startsWith(QStringLiteral("ok")));
        QVERIFY(resultText(wait(second)).startsWith(QStringLiteral("ok")));
        m_server->setCallLimits(64, 48);
        m_server->setSessionLimits(256, 64);
        endAllSessions();
    }

    // Ordering, not timing: 64 calls of one agent wait for a file the test writes only after
    // another agent's read_file has been answered. On one shared pool of 64 workers it would
    // wait behind them forever (bounded here by the test's timeout).
    void oneAgentsLongCallsDoNotQueueAnother()
    {
        const QByteArray writer = initialize(kWriter);
        const QByteArray reader = initialize(kReader);
        std::vector<std::unique_ptr<QTcpSocket>> sockets;
        QList<QByteArray> answers(64);
        for (int i = 0; i < 64; ++i) { // 64 connections: QNetworkAccessManager would use 6
            const QByteArray body =
                callTool(QStringLiteral("execute"),
                         {{QStringLiteral("command"),
                           QStringLiteral(
                               "while [ ! -f fair-release ]; do sleep 0.05; done; echo released")}},
                         5000 + i);
            const QByteArray post =
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                kWriter.toUtf8() + "\r\nMcp-Session-Id: " + writer +
                "\r\nContent-Type: application/json\r\nContent-Length: " +
                QByteArray::number(body.size()) + "\r\n\r\n" + body;
            auto socket = std::make_unique<QTcpSocket>();
            QTcpSocket *raw = socket.get();
            connect(raw, &QTcpSocket::readyRead, raw,
                    [&answers, raw, i] { answers[i] += raw->readAll(); });
            raw->connectToHost(QHostAddress::LocalHost, m_server->port());
            raw->write(post);
            sockets.push_back(std::move(socket));
        }
        QTRY_COMPARE_WITH_TIMEOUT(m_server->runningCalls(QStringLiteral("writer")) +
                                      m_server->queuedCalls(QStringLiteral("writer")),
                                  64, 30000);
        QCOMPARE(m_server->runningCalls(QStringLiteral("writer")), 48); // its share
        QCOMPARE(m_server->queuedCalls(QStringLiteral("writer")), 16);
        const Reply read = send(makeRequest(kReader, reader), "POST",
                                callTool(QStringLiteral("read_file"),
                                         {{QStringLiteral("path"), QStringLiteral("a.txt")}}));
        QCOMPARE(resultText(read), QStringLiteral("hello"));
        // Not one of the writer's calls could have finished before this point.
        for (const QByteArray &a : std::as_const(answers))
            QVERIFY(!a.contains("released"));
        m_sandbox->addFiles({{QStringLiteral("fair-release"), FileSource::text(QString())}});
        QTRY_VERIFY_WITH_TIMEOUT(
            std::all_of(answers.cbegin(), answers.cend(),
                        [](const QByteArray &a) { return a.contains("released"); }),
            60000);
        QCOMPARE(m_server->queuedCalls(QStringLiteral("writer")), 0);
        endAllSessions();
    }

    // --- The stateless revision (2026-07-28) ---------------------------------------------

    void statelessRequestsNeedNoSession()
    {
        const Reply discover = send(modernRequest(kReader, QStringLiteral("server/discover")),
                                    "POST", modernRpc(QStringLiteral("server/discover")));
        QCOMPARE(discover.status, 200);
        QVERIFY(!discover.headers.contains("mcp-session-id"));
        const QJsonObject result = discover.json.value(QLatin1String("result")).toObject();
        QCOMPARE(result.value(QLatin1String("supportedVersions")).toArray().first().toString(),
                 QStringLiteral("2026-07-28"));
        QVERIFY(result.value(QLatin1String("instructions"))
                    .toString()
                    .contains(QStringLiteral("reader")));
        const Reply read =
            send(modernRequest(kReader, QStringLiteral("tools/call"), QStringLiteral("read_file")),
                 "POST",
                 modernRpc(QStringLiteral("tools/call"),
                           {{QStringLiteral("name"), QStringLiteral("read_file")},
                            {QStringLiteral("arguments"),
                             QJsonObject{{QStringLiteral("path"), QStringLiteral("a.txt")}}}}));
        QCOMPARE(read.status, 200);
        QCOMPARE(resultText(read), QStringLiteral("hello"));
        // The read-only token's mode holds without a session too.
        const Reply write =
            send(modernRequest(kReader, QStringLiteral("tools/call"), QStringLiteral("write_file")),
                 "POST",
                 modernRpc(QStringLiteral("tools/call"),
                           {{QStringLiteral("name"), QStringLiteral("write_file")},
                            {QStringLiteral("arguments"),
                             QJsonObject{{QStringLiteral("path"), QStringLiteral("a.txt")},
                                         {QStringLiteral("content"), QStringLiteral("x")}}}}));
        QVERIFY(write.json.value(QLatin1String("result"))
                    .toObject()
                    .value(QLatin1String("isError"))
                    .toBool());
        QVERIFY(resultText(write).startsWith(QStringLiteral("SandboxMutationDeniedError")));
        QVERIFY(m_server->sessions().isEmpty()); // stateless clients hold no session slots
        // A legacy session on the same endpoint at the same time.
        const QByteArray session = initialize(kReader);
        QCOMPARE(send(makeRequest(kReader, session), "POST", rpc(QStringLiteral("ping"))).status,
                 200);
        endAllSessions();
    }

    void statelessRequestsGetTheSpecsAnswers_data()
    {
        QTest::addColumn<QByteArray>("headerVersion"); // "-" = none
        QTest::addColumn<QByteArray>("headerMethod");  // "-" = none
        QTest::addColumn<QByteArray>("headerName");    // "-" = none
        QTest::addColumn<QString>("method");
        QTest::addColumn<QJsonValue>("meta"); // Undefined = no _meta
        QTest::addColumn<int>("status");
        QTest::addColumn<int>("code");
        const QJsonValue ok = envelope();
        const QJsonValue future = envelope(QStringLiteral("v999.0.0"));
        QJsonObject noCaps = envelope();
        noCaps.remove(QStringLiteral("io.modelcontextprotocol/clientCapabilities"));
        const QByteArray readFileB64 = "=?base64?" + QByteArray("read_file").toBase64() + "?=";
        const QString discover = QStringLiteral("server/discover");
        const QString call = QStringLiteral("tools/call");
        // clang-format off
        QTest::newRow("complete")                 << QByteArray("2026-07-28") << QByteArray("server/discover") << QByteArray("-") << discover << ok << 200 << 0;
        QTest::newRow("unknown version")          << QByteArray("v999.0.0") << QByteArray("server/discover") << QByteArray("-") << discover << future << 400 << int(jsonrpc::UnsupportedProtocolVersion);
        QTest::newRow("unknown version, header only") << QByteArray("2099-01-01") << QByteArray("tools/list") << QByteArray("-") << QStringLiteral("tools/list") << QJsonValue(QJsonValue::Undefined) << 400 << int(jsonrpc::UnsupportedProtocolVersion);
        QTest::newRow("header and body disagree") << QByteArray("2026-07-28") << QByteArray("server/discover") << QByteArray("-") << discover << future << 400 << int(jsonrpc::HeaderMismatch);
        QTest::newRow("no version header")        << QByteArray("-") << QByteArray("server/discover") << QByteArray("-") << discover << ok << 400 << int(jsonrpc::HeaderMismatch);
        QTest::newRow("no Mcp-Method")            << QByteArray("2026-07-28") << QByteArray("-") << QByteArray("-") << discover << ok << 400 << int(jsonrpc::HeaderMismatch);
        QTest::newRow("Mcp-Method disagrees")     << QByteArray("2026-07-28") << QByteArray("tools/list") << QByteArray("-") << discover << ok << 400 << int(jsonrpc::HeaderMismatch);
        QTest::newRow("no Mcp-Name on a call")    << QByteArray("2026-07-28") << QByteArray("tools/call") << QByteArray("-") << call << ok << 400 << int(jsonrpc::HeaderMismatch);
        QTest::newRow("Mcp-Name disagrees")       << QByteArray("2026-07-28") << QByteArray("tools/call") << QByteArray("list_dir") << call << ok << 400 << int(jsonrpc::HeaderMismatch);
        QTest::newRow("Mcp-Name in base64")       << QByteArray("2026-07-28") << QByteArray("tools/call") << readFileB64 << call << ok << 200 << 0;
        QTest::newRow("no _meta")                 << QByteArray("2026-07-28") << QByteArray("server/discover") << QByteArray("-") << discover << QJsonValue(QJsonValue::Undefined) << 400 << int(jsonrpc::InvalidParams);
        QTest::newRow("no capabilities")          << QByteArray("2026-07-28") << QByteArray("server/discover") << QByteArray("-") << discover << QJsonValue(noCaps) << 400 << int(jsonrpc::InvalidParams);
        QTest::newRow("unknown method")           << QByteArray("2026-07-28") << QByteArray("ping") << QByteArray("-") << QStringLiteral("ping") << ok << 404 << int(jsonrpc::MethodNotFound);
        QTest::newRow("legacy method")            << QByteArray("2026-07-28") << QByteArray("resources/list") << QByteArray("-") << QStringLiteral("resources/list") << ok << 404 << int(jsonrpc::MethodNotFound);
        // clang-format on
    }
    void statelessRequestsGetTheSpecsAnswers()
    {
        QFETCH(QByteArray, headerVersion);
        QFETCH(QByteArray, headerMethod);
        QFETCH(QByteArray, headerName);
        QFETCH(QString, method);
        QFETCH(QJsonValue, meta);
        QFETCH(int, status);
        QFETCH(int, code);
        QNetworkRequest r = makeRequest(kReader);
        if (headerVersion != "-")
            r.setRawHeader("MCP-Protocol-Version", headerVersion);
        if (headerMethod != "-")
            r.setRawHeader("Mcp-Method", headerMethod);
        if (headerName != "-")
            r.setRawHeader("Mcp-Name", headerName);
        QJsonObject params;
        if (method == QLatin1String("tools/call"))
            params = {{QStringLiteral("name"), QStringLiteral("read_file")},
                      {QStringLiteral("arguments"),
                       QJsonObject{{QStringLiteral("path"), QStringLiteral("a.txt")}}}};
        if (!meta.isUndefined())
            params.insert(QStringLiteral("_meta"), meta);
        const Reply reply = send(r, "POST", rpc(method, params, 4711));
        QCOMPARE(reply.status, status);
        QCOMPARE(errorCode(reply), code);
        if (code) // errors answer the request's id
            QCOMPARE(reply.json.value(QLatin1String("id")).toInt(), 4711);
        if (code == jsonrpc::UnsupportedProtocolVersion)
            QVERIFY(reply.json.value(QLatin1String("error"))
                        .toObject()
                        .value(QLatin1String("data"))
                        .toObject()
                        .value(QLatin1String("supported"))
                        .toArray()
                        .contains(QStringLiteral("2025-11-25")));
        QVERIFY(!reply.headers.contains("mcp-session-id"));
        QVERIFY(m_server->sessions().isEmpty());
    }

    // This revision's cancellation: closing the response stream.
    void aStatelessCallEndsWhenTheClientHangsUp()
    {
        const QString pidFile = m_tmp.filePath(QStringLiteral("ws/hangup.pid"));
        QNetworkReply *running = m_nam.sendCustomRequest(
            modernRequest(kWriter, QStringLiteral("tools/call"), QStringLiteral("execute")), "POST",
            modernRpc(QStringLiteral("tools/call"),
                      {{QStringLiteral("name"), QStringLiteral("execute")},
                       {QStringLiteral("arguments"),
                        QJsonObject{{QStringLiteral("command"),
                                     QStringLiteral("sleep 300 & echo $! > hangup.pid; wait")}}}}));
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(pidFile) &&
                                     !elsai::test::readHostFile(pidFile).trimmed().isEmpty(),
                                 20000);
        const pid_t child = elsai::test::readHostFile(pidFile).trimmed().toInt();
        QVERIFY(child > 0 && ::kill(child, 0) == 0);
        running->abort();
        running->deleteLater();
        QTRY_VERIFY_WITH_TIMEOUT(::kill(child, 0) != 0, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(m_server->runningCalls(QStringLiteral("writer")), 0, 20000);
    }

    // Ordering, not timing: the command waits for a file written only after the POST was
    // answered with a task; tasks/get then returns the whole output.
    void aLongStatelessCallBecomesATask()
    {
        // Polled on the keep-alive connection of the call: Qt 6.8 serves it only once the
        // call's responder is released, which answering with the task must do.
        m_server->setTaskThreshold(std::chrono::milliseconds(50));
        const Reply created = send(
            modernRequest(kWriter, QStringLiteral("tools/call"), QStringLiteral("execute")), "POST",
            modernRpc(QStringLiteral("tools/call"),
                      {{QStringLiteral("name"), QStringLiteral("execute")},
                       {QStringLiteral("arguments"),
                        QJsonObject{{QStringLiteral("command"),
                                     QStringLiteral("while [ ! -f http-task-go ]; do sleep "
                                                    "0.02; done; echo finished")}}}},
                      envelope(QStringLiteral("2026-07-28"), true)));
        QCOMPARE(created.status, 200);
        const QJsonObject task = created.json.value(QLatin1String("result")).toObject();
        QCOMPARE(task.value(QLatin1String("resultType")).toString(), QStringLiteral("task"));
        const QString taskId = task.value(QLatin1String("taskId")).toString();
        auto get = [&](const QString &token) {
            return send(modernRequest(token, QStringLiteral("tasks/get"), taskId), "POST",
                        modernRpc(QStringLiteral("tasks/get"), {{QStringLiteral("taskId"), taskId}},
                                  envelope(QStringLiteral("2026-07-28"), true)));
        };
        QCOMPARE(get(kWriter)
                     .json.value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("status"))
                     .toString(),
                 QStringLiteral("working"));
        QCOMPARE(errorCode(get(kReader)), int(jsonrpc::InvalidParams)); // another agent's task
        m_sandbox->addFiles({{QStringLiteral("http-task-go"), FileSource::text(QString())}});
        QJsonObject done;
        QTRY_VERIFY_WITH_TIMEOUT(
            (done = get(kWriter).json.value(QLatin1String("result")).toObject())
                    .value(QLatin1String("status"))
                    .toString() == QLatin1String("completed"),
            20000);
        QCOMPARE(done.value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("content"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QLatin1String("text"))
                     .toString(),
                 QStringLiteral("finished\n[exit code: 0]"));
        m_server->setTaskThreshold(McpSession::defaultProgressInterval());
    }

    void revokingATokenEndsItsStatelessService()
    {
        McpHttpServer server(m_sandbox, {{QStringLiteral("temp"), SandboxAttachMode::ReadOnly,
                                          QStringLiteral("temp-token-0123456789")}});
        server.listen(QHostAddress::LocalHost, 0);
        const int attached = int(m_sandbox->attachedAgents().size());
        QNetworkRequest r(server.url());
        r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
        r.setRawHeader("Authorization", "Bearer temp-token-0123456789");
        r.setRawHeader("MCP-Protocol-Version", "2026-07-28");
        r.setRawHeader("Mcp-Method", "tools/list");
        QCOMPARE(send(r, "POST", modernRpc(QStringLiteral("tools/list"))).status, 200);
        QCOMPARE(int(m_sandbox->attachedAgents().size()), attached + 1);
        server.revokeAgent(QStringLiteral("temp"));
        QCOMPARE(int(m_sandbox->attachedAgents().size()), attached);
        QCOMPARE(send(r, "POST", modernRpc(QStringLiteral("tools/list"))).status, 401);
    }
};

QTEST_GUILESS_MAIN(TestMcpHttp)
#include "tst_mcphttp.moc"
