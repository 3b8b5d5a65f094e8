// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "errors.h"
#include "localsandboxbackend.h"
#include "mcpservermodel.h"

#include <QAbstractItemModelTester>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace elsai;

/// The window's MCP server model: agents and tokens, live session counts, revocation, the
/// client configuration.
class TestMcpServerModel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    SandboxPtr m_sandbox;
    QNetworkAccessManager m_nam;

    int post(const QUrl &url, const QString &token, const QByteArray &body,
             QByteArray *sessionId = nullptr)
    {
        QNetworkRequest r(url);
        r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
        r.setRawHeader("Authorization", "Bearer " + token.toUtf8());
        QNetworkReply *reply = m_nam.post(r, body);
        QEventLoop loop;
        connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        if (sessionId)
            *sessionId = reply->rawHeader("Mcp-Session-Id");
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        reply->deleteLater();
        return status;
    }
    static QByteArray initBody()
    {
        return R"({"jsonrpc":"2.0","id":1,"method":"initialize",)"
               R"("params":{"protocolVersion":"2025-06-18","capabilities":{}}})";
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_sandbox = Sandbox::create(
            QStringLiteral("mcpmodel"),
            std::make_shared<LocalSandboxBackend>(m_tmp.filePath(QStringLiteral("ws"))), 600);
        m_sandbox->start();
    }
    void cleanupTestCase() { m_sandbox->stop(false); }

    void refusesAStoppedSandbox()
    {
        McpServerModel model;
        auto stopped = Sandbox::create(
            QStringLiteral("mcpmodel-stopped"),
            std::make_shared<LocalSandboxBackend>(m_tmp.filePath(QStringLiteral("ws2"))), 600);
        QVERIFY_THROWS_EXCEPTION(SandboxStartError, model.start(stopped));
        QVERIFY(!model.isRunning());
    }

    void agentsSessionsAndRevocation()
    {
        McpServerModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const McpAgentSpec early =
            model.createAgent(QStringLiteral("early"), SandboxAttachMode::ReadOnly);
        QSignalSpy running(&model, &McpServerModel::runningChanged);
        model.start(m_sandbox);
        QVERIFY(model.isRunning());
        QCOMPARE(running.size(), 1);
        QCOMPARE(model.workspaceId(), QStringLiteral("mcpmodel"));
        const McpAgentSpec late =
            model.createAgent(QStringLiteral("late"), SandboxAttachMode::ReadWrite);
        QCOMPARE(model.rowCount(), 2);
        QVERIFY(late.token.size() >= 43);
        QVERIFY_THROWS_EXCEPTION(
            ValueError, model.createAgent(QStringLiteral("late"), SandboxAttachMode::ReadOnly));
        QVERIFY_THROWS_EXCEPTION(
            ValueError, model.createAgent(QStringLiteral("bad name"), SandboxAttachMode::ReadOnly));
        // The token is masked in the view.
        const QString shown =
            model
                .data(model.index(model.rowOf(QStringLiteral("late")), McpServerModel::TokenColumn))
                .toString();
        QVERIFY(!shown.contains(late.token));

        // Both the agent declared before start and the one added after can connect.
        QByteArray session;
        QCOMPARE(post(model.url(), early.token, initBody()), 200);
        QCOMPARE(post(model.url(), late.token, initBody(), &session), 200);
        QCOMPARE(model.sessionCount(QStringLiteral("late")), 1);
        QCOMPARE(model.data(model.index(1, McpServerModel::SessionsColumn)).toInt(), 1);

        QSignalSpy ended(&model, &McpServerModel::sessionEnded);
        QCOMPARE(model.revokeAgent(QStringLiteral("late")), 1);
        QCOMPARE(ended.size(), 1);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(post(model.url(), late.token, initBody()), 401);

        model.stop();
        QVERIFY(!model.isRunning());
        QCOMPARE(model.sessionCount(QStringLiteral("early")), 0);
    }

    void destroyedWithLiveSessionsIsQuiet()
    {
        // The crash on quit: the server's sessions ended while the model was half destroyed,
        // and their sessionEnded still reached it (and its listeners).
        auto *model = new McpServerModel;
        const McpAgentSpec a =
            model->createAgent(QStringLiteral("live"), SandboxAttachMode::ReadOnly);
        model->start(m_sandbox);
        QCOMPARE(post(model->url(), a.token, initBody()), 200);
        QCOMPARE(post(model->url(), a.token, initBody()), 200);
        QCOMPARE(model->sessionCount(QStringLiteral("live")), 2);
        int heard = 0;
        QObject listener;
        connect(model, &McpServerModel::sessionEnded, &listener, [&heard] { ++heard; });
        connect(model, &QAbstractItemModel::dataChanged, &listener, [&heard] { ++heard; });
        delete model;
        QCOMPARE(heard, 0);
        QVERIFY(m_sandbox->attachedAgents().isEmpty()); // the sessions' agents were detached
    }

    void clientConfiguration()
    {
        McpServerModel model;
        const McpAgentSpec a =
            model.createAgent(QStringLiteral("coder"), SandboxAttachMode::ReadWrite);
        model.start(m_sandbox);
        const QJsonObject config = QJsonDocument::fromJson(model.httpClientConfig(0).toUtf8())
                                       .object()
                                       .value(QLatin1String("mcpServers"))
                                       .toObject()
                                       .value(QLatin1String("elsai-mcpmodel"))
                                       .toObject();
        QCOMPARE(config.value(QLatin1String("url")).toString(), model.url().toString());
        QCOMPARE(config.value(QLatin1String("headers"))
                     .toObject()
                     .value(QLatin1String("Authorization"))
                     .toString(),
                 QStringLiteral("Bearer ") + a.token);
        const QString line = model.stdioCommandLine(0, QStringLiteral("/opt/elsai workbench"));
        QVERIFY(line.startsWith(QStringLiteral("'/opt/elsai workbench' --headless")));
        QVERIFY(line.contains(QStringLiteral("--workspace-root ")));
        QVERIFY(line.endsWith(QStringLiteral("--mcp-stdio --mcp-agent coder=read_write")));
        model.stop();
    }
};

QTEST_GUILESS_MAIN(TestMcpServerModel)
#include "tst_mcpservermodel.moc"
