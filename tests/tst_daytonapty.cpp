// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The Daytona terminal (backends/daytona/daytonapty.h) against a fake toolbox built from the
// daemon's message shapes: POST /process/pty, the WebSocket on /process/pty/{id}/connect (a
// text control message, binary output, input back, a close frame carrying {"exitCode"}),
// POST …/resize, DELETE …; the API's headers on the socket; the audit records.

#include "daytonapty.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpServer>
#include <QTcpSocket>
#include <QWebSocket>
#include <QWebSocketServer>
#include <QtTest>

using namespace elsai;

namespace {

constexpr int Wait = 15000; // ms; a bound, never a measurement

/// The toolbox of one sandbox at http://127.0.0.1:PORT/toolbox/sb-1, on the test's thread.
class FakeToolbox : public QObject
{
public:
    struct Call
    {
        QByteArray method;
        QByteArray path;
        QJsonObject body;
    };
    QList<Call> calls;
    QByteArray socketAuthorization; ///< what the WebSocket's upgrade request carried
    bool refuseConnect = false;     ///< answer the connect with an error control message
    QList<QWebSocket *> sockets;

    FakeToolbox()
    {
        m_ws.setParent(this);
        server.listen(QHostAddress::LocalHost, 0);
        connect(&server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = server.nextPendingConnection())
                connect(s, &QTcpSocket::readyRead, this, [this, s] { onData(s); });
        });
        connect(&m_ws, &QWebSocketServer::newConnection, this, [this] {
            while (QWebSocket *ws = m_ws.nextPendingConnection()) {
                ws->setParent(this); // the caller owns it (Qt 6.8 gives it no parent)
                sockets.append(ws);
                socketAuthorization = ws->request().rawHeader("Authorization");
                if (refuseConnect) {
                    ws->sendTextMessage(QStringLiteral(
                        R"({"type":"control","status":"error","error":"Failed to connect to PTY session: no such session"})"));
                    ws->close();
                    continue;
                }
                ws->sendTextMessage(QStringLiteral(R"({"type":"control","status":"connected"})"));
                connect(ws, &QWebSocket::binaryMessageReceived, this, [ws](const QByteArray &data) {
                    if (data.startsWith("exit ")) {
                        const int code = data.mid(5).trimmed().toInt();
                        ws->close(QWebSocketProtocol::CloseCodeBadOperation,
                                  QStringLiteral(R"({"exitCode":%1,"exitReason":"non-zero exit"})")
                                      .arg(code));
                        return;
                    }
                    ws->sendBinaryMessage("echo:" + data);
                });
            }
        });
    }
    QUrl url() const
    {
        return QUrl(QStringLiteral("http://127.0.0.1:%1/toolbox/sb-1").arg(server.serverPort()));
    }
    QList<Call> named(const QByteArray &method, const QByteArray &suffix) const
    {
        QList<Call> out;
        for (const Call &c : calls) {
            if (c.method == method && c.path.endsWith(suffix))
                out.append(c);
        }
        return out;
    }

    QTcpServer server;

private:
    void onData(QTcpSocket *s)
    {
        const QByteArray head = s->peek(64 * 1024);
        const qsizetype end = head.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        const QList<QByteArray> lines = head.left(end).split('\n');
        const QList<QByteArray> first = lines.first().trimmed().split(' ');
        const QByteArray method = first.value(0);
        const QByteArray path = first.value(1);
        if (path.endsWith("/connect")) {
            disconnect(s, nullptr, this, nullptr);
            m_ws.handleConnection(s); // the upgrade request is still unread
            return;
        }
        qsizetype length = 0;
        for (const QByteArray &l : lines) {
            if (l.toLower().startsWith("content-length:"))
                length = l.mid(15).trimmed().toLongLong();
        }
        if (head.size() < end + 4 + length)
            return;
        s->read(end + 4);
        const QByteArray body = s->read(length);
        calls.append({method, path, QJsonDocument::fromJson(body).object()});
        int status = 200;
        QByteArray reply = "{}";
        if (method == "POST" && path.endsWith("/process/pty")) {
            status = 201;
            reply = QJsonDocument(QJsonObject{{QStringLiteral("sessionId"),
                                               calls.last().body.value(QStringLiteral("id"))}})
                        .toJson(QJsonDocument::Compact);
        }
        s->write("HTTP/1.1 " + QByteArray::number(status) +
                 " X\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                 QByteArray::number(reply.size()) + "\r\n\r\n" + reply);
        s->disconnectFromHost();
    }

    QWebSocketServer m_ws{QStringLiteral("fake toolbox"), QWebSocketServer::NonSecureMode};
};

struct Driver
{
    explicit Driver(PtySession *s) : session(s)
    {
        QObject::connect(session.get(), &PtySession::output, session.get(),
                         [this](const QByteArray &b) { out += b; });
        QObject::connect(session.get(), &PtySession::finished, session.get(),
                         [this](int code, const QString &e) {
                             exitCode = code;
                             error = e;
                             done = true;
                         });
    }
    std::unique_ptr<PtySession> session;
    QByteArray out;
    bool done = false;
    int exitCode = -2;
    QString error;
};

daytona::DaytonaApi api()
{
    daytona::DaytonaConfig config;
    config.apiKey = QStringLiteral("test-key");
    config.retry.maxAttempts = 1;
    return daytona::DaytonaApi(config);
}

} // namespace

class TestDaytonaPty : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void webSocketUrl()
    {
        QCOMPARE(daytonaWebSocketUrl(QUrl(QStringLiteral("https://proxy.example/toolbox/sb/")),
                                     QStringLiteral("/process/pty/x/connect")),
                 QUrl(QStringLiteral("wss://proxy.example/toolbox/sb/process/pty/x/connect")));
        QCOMPARE(
            daytonaWebSocketUrl(QUrl(QStringLiteral("http://127.0.0.1:9/t")), QStringLiteral("/p")),
            QUrl(QStringLiteral("ws://127.0.0.1:9/t/p")));
    }

    void sessionLifecycle()
    {
        FakeToolbox fake;
        test::AuditCapture audit;
        auto *session = new DaytonaPtySession(QStringLiteral("dt"), api(), fake.url(),
                                              QStringLiteral("/home/daytona/workspace"),
                                              {{QStringLiteral("FOO"), QStringLiteral("bar")}});
        Driver d(session);
        session->start(100, 30);
        QTRY_VERIFY2_WITH_TIMEOUT(session->isRunning(), qPrintable(d.error), Wait);

        const auto creates = fake.named("POST", "/toolbox/sb-1/process/pty");
        QCOMPARE(creates.size(), 1);
        const QJsonObject body = creates.first().body;
        QCOMPARE(body.value(QStringLiteral("id")).toString(), session->sessionId());
        QVERIFY(session->sessionId().startsWith(QLatin1String("elsai-")));
        QCOMPARE(body.value(QStringLiteral("cwd")).toString(),
                 QStringLiteral("/home/daytona/workspace"));
        QCOMPARE(body.value(QStringLiteral("cols")).toInt(), 100);
        QCOMPARE(body.value(QStringLiteral("rows")).toInt(), 30);
        const QJsonObject envs = body.value(QStringLiteral("envs")).toObject();
        QCOMPARE(envs.value(QStringLiteral("TERM")).toString(), QStringLiteral("xterm-256color"));
        QCOMPARE(envs.value(QStringLiteral("FOO")).toString(), QStringLiteral("bar"));
        QCOMPARE(fake.socketAuthorization, QByteArray("Bearer test-key"));

        session->write("hello\r");
        QTRY_VERIFY_WITH_TIMEOUT(d.out.contains("echo:hello\r"), Wait);
        session->resize(120, 40);
        QTRY_COMPARE_WITH_TIMEOUT(fake.named("POST", "/resize").size(), 1, Wait);
        const QJsonObject resize = fake.named("POST", "/resize").first().body;
        QCOMPARE(resize.value(QStringLiteral("cols")).toInt(), 120);
        QCOMPARE(resize.value(QStringLiteral("rows")).toInt(), 40);
        QVERIFY(fake.named("POST", "/resize").first().path.contains(session->sessionId().toUtf8()));

        session->write("exit 7");
        QTRY_VERIFY_WITH_TIMEOUT(d.done, Wait);
        QVERIFY2(d.exitCode == 7, qPrintable(QStringLiteral("%1 %2").arg(d.exitCode).arg(d.error)));
        QVERIFY2(d.error.isEmpty(), qPrintable(d.error));
        QTRY_COMPARE_WITH_TIMEOUT(fake.named("DELETE", session->sessionId().toUtf8()).size(), 1,
                                  Wait);

        const auto closes = audit.named(QStringLiteral("terminal.close"));
        QCOMPARE(closes.size(), 1);
        QCOMPARE(closes.first().fields.value(QStringLiteral("backend")).toString(),
                 QStringLiteral("DaytonaSandboxBackend"));
        QCOMPARE(closes.first().fields.value(QStringLiteral("bytes_in")).toInteger(), qint64(12));
        QCOMPARE(closes.first().fields.value(QStringLiteral("exit_code")).toInt(), 7);
    }

    void closingTheTabDeletesTheSession()
    {
        FakeToolbox fake;
        auto *session = new DaytonaPtySession(QStringLiteral("dt"), api(), fake.url(), {}, {});
        Driver d(session);
        session->start(80, 24);
        QTRY_VERIFY_WITH_TIMEOUT(session->isRunning(), Wait);
        session->terminate();
        QTRY_VERIFY_WITH_TIMEOUT(d.done, Wait);
        QVERIFY2(d.error.isEmpty(), qPrintable(d.error));
        QTRY_COMPARE_WITH_TIMEOUT(fake.named("DELETE", session->sessionId().toUtf8()).size(), 1,
                                  Wait);
    }

    void refusedConnectionAndUnreachableToolbox()
    {
        FakeToolbox fake;
        fake.refuseConnect = true;
        Driver refused(new DaytonaPtySession(QStringLiteral("dt"), api(), fake.url(), {}, {}));
        refused.session->start(80, 24);
        QTRY_VERIFY_WITH_TIMEOUT(refused.done, Wait);
        QCOMPARE(refused.exitCode, -1);
        QVERIFY2(refused.error.contains(QLatin1String("no such session")),
                 qPrintable(refused.error));

        QTcpServer closed;
        QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
        const QUrl nowhere(
            QStringLiteral("http://127.0.0.1:%1/toolbox/x").arg(closed.serverPort()));
        closed.close();
        Driver unreachable(new DaytonaPtySession(QStringLiteral("dt"), api(), nowhere, {}, {}));
        unreachable.session->start(80, 24);
        QTRY_VERIFY_WITH_TIMEOUT(unreachable.done, Wait);
        QCOMPARE(unreachable.exitCode, -1);
        QVERIFY(!unreachable.error.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestDaytonaPty)
#include "tst_daytonapty.moc"
