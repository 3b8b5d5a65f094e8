// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The MCP panel offscreen: create an agent, start the server of the current sandbox, a client
// connects over loopback, the configuration is copied, revoking detaches the session.
#include "mcppanel.h"
#include "mcpservermodel.h"
#include "sandboxcontroller.h"
#include "sessionsmodel.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPushButton>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace elsai;

class TestMcpPanel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;

    static int initialize(const QUrl &url, const QString &token)
    {
        QNetworkAccessManager nam;
        QNetworkRequest r(url);
        r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
        r.setRawHeader("Authorization", "Bearer " + token.toUtf8());
        QNetworkReply *reply = nam.post(r, R"({"jsonrpc":"2.0","id":1,"method":"initialize",)"
                                           R"("params":{"protocolVersion":"2025-06-18"}})");
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        delete reply;
        return status;
    }

private Q_SLOTS:
    void serveCreateCopyRevoke()
    {
        SandboxController controller;
        SandboxSpec spec;
        spec.workspaceId = QStringLiteral("mcppanel");
        spec.workspaceRoot = m_tmp.filePath(QStringLiteral("ws"));
        controller.addSandbox(spec);
        QTRY_COMPARE(toString(controller.state(spec.workspaceId)), toString(SessionState::Running));

        McpPanel panel(&controller);
        panel.show();
        QVERIFY(!panel.startButton()->isEnabled()); // no sandbox chosen yet
        panel.setWorkspace(spec.workspaceId);
        QVERIFY(panel.startButton()->isEnabled());

        panel.nameEdit()->setText(QStringLiteral("reviewer"));
        panel.modeBox()->setCurrentIndex(panel.modeBox()->findData(QStringLiteral("read_only")));
        QTest::keyClick(panel.nameEdit(), Qt::Key_Return);
        QCOMPARE(panel.model()->rowCount(), 1);
        QVERIFY(panel.nameEdit()->text().isEmpty());
        const McpAgentSpec agent = panel.model()->agent(0);
        QCOMPARE(toString(agent.mode), QStringLiteral("read_only"));

        panel.startButton()->click();
        QVERIFY(panel.model()->isRunning());
        QCOMPARE(panel.startButton()->text(), QStringLiteral("Stop server"));

        panel.view()->selectRow(0);
        QPushButton *copyHttp = nullptr;
        QPushButton *revoke = nullptr;
        for (QPushButton *b : panel.findChildren<QPushButton *>()) {
            if (b->text() == QLatin1String("Copy HTTP config"))
                copyHttp = b;
            if (b->text() == QLatin1String("Revoke"))
                revoke = b;
        }
        QVERIFY(copyHttp && revoke);
        copyHttp->click();
        const QJsonObject config =
            QJsonDocument::fromJson(QGuiApplication::clipboard()->text().toUtf8()).object();
        QVERIFY(QJsonDocument(config).toJson().contains(agent.token.toUtf8()));
        // A chosen client's configuration: the generator's, each part under its heading.
        panel.setClientId(QStringLiteral("vscode"));
        copyHttp->click();
        const QString vscode = QGuiApplication::clipboard()->text();
        QVERIFY(vscode.startsWith(QStringLiteral("# .vscode/mcp.json")));
        QVERIFY(vscode.contains(panel.model()->url().toString()));
        QVERIFY(vscode.contains(QStringLiteral("${input:elsai-reviewer-token}")));
        QVERIFY(!vscode.contains(agent.token)); // VS Code asks for it
        panel.setClientId(QStringLiteral("claude-code"));
        for (QPushButton *b : panel.findChildren<QPushButton *>()) {
            if (b->text() == QLatin1String("Copy stdio command"))
                b->click();
        }
        const QString claude = QGuiApplication::clipboard()->text();
        QVERIFY(claude.contains(QStringLiteral("claude mcp add elsai-reviewer -- ")));
        QVERIFY(claude.contains(QStringLiteral("--mcp-stdio --mcp-agent reviewer=read_only")));
        QVERIFY(panel.statusLabel()->text().contains(QStringLiteral("Claude Code")));
        panel.setClientId(QString());

        QCOMPARE(initialize(panel.model()->url(), agent.token), 200);
        QTRY_COMPARE(panel.model()->sessionCount(QStringLiteral("reviewer")), 1);
        QVERIFY(panel.statusLabel()->text().contains(QStringLiteral("reviewer connected")));

        revoke->click();
        QCOMPARE(panel.model()->rowCount(), 0);
        QVERIFY(panel.statusLabel()->text().contains(QStringLiteral("1 session")));
        QCOMPARE(initialize(panel.model()->url(), agent.token), 401);

        panel.startButton()->click();
        QVERIFY(!panel.model()->isRunning());
    }
};

QTEST_MAIN(TestMcpPanel)
#include "tst_mcppanel.moc"
