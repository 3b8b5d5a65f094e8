// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "clientconfig.h"
#include "errors.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace elsai;
using Format = McpClientSnippet::Format;

namespace {

// POSIX shell words of one line: single quotes, double quotes (no expansion needed here) and
// backslash escapes outside quotes, as a shell splits them.
QStringList shellWords(const QString &line)
{
    QStringList words;
    QString word;
    bool inWord = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line.at(i);
        if (c == QLatin1Char('\'')) {
            const qsizetype end = line.indexOf(QLatin1Char('\''), i + 1);
            word += line.mid(i + 1, end - i - 1);
            i = end;
            inWord = true;
        } else if (c == QLatin1Char('"')) {
            const qsizetype end = line.indexOf(QLatin1Char('"'), i + 1);
            word += line.mid(i + 1, end - i - 1);
            i = end;
            inWord = true;
        } else if (c == QLatin1Char('\\') && i + 1 < line.size()) {
            word += line.at(++i);
            inWord = true;
        } else if (c.isSpace()) {
            if (inWord)
                words.append(word);
            word.clear();
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (inWord)
        words.append(word);
    return words;
}

// The subset of TOML the generator writes: one [table], `key = "string"` and
// `key = ["string", …]`, basic strings with \" \\ and \uXXXX escapes.
QHash<QString, QVariant> parseToml(const QString &text, QString *table)
{
    QHash<QString, QVariant> values;
    auto parseString = [](const QString &s, qsizetype *pos) {
        QString out;
        qsizetype i = *pos + 1; // after the opening quote
        for (; i < s.size() && s.at(i) != QLatin1Char('"'); ++i) {
            if (s.at(i) == QLatin1Char('\\')) {
                const QChar e = s.at(++i);
                if (e == QLatin1Char('u')) {
                    out += QChar(s.mid(i + 1, 4).toUShort(nullptr, 16));
                    i += 4;
                } else {
                    out += e;
                }
            } else {
                out += s.at(i);
            }
        }
        *pos = i + 1;
        return out;
    };
    for (const QString &raw : text.split(QLatin1Char('\n'))) {
        const QString line = raw.trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        if (line.startsWith(QLatin1Char('['))) {
            *table = line.mid(1, line.size() - 2);
            continue;
        }
        const qsizetype eq = line.indexOf(QStringLiteral(" = "));
        const QString key = line.left(eq);
        qsizetype pos = eq + 3;
        if (line.at(pos) == QLatin1Char('"')) {
            values.insert(key, parseString(line, &pos));
        } else {
            QStringList items;
            ++pos;
            while (pos < line.size() && line.at(pos) != QLatin1Char(']')) {
                if (line.at(pos) == QLatin1Char('"'))
                    items.append(parseString(line, &pos));
                else
                    ++pos;
            }
            values.insert(key, items);
        }
    }
    return values;
}

McpClientTarget target()
{
    McpClientTarget t;
    t.agent = QStringLiteral("coder");
    t.url = QUrl(QStringLiteral("http://127.0.0.1:8765/mcp"));
    t.token = QStringLiteral("tok'en-0123456789\"abc$HOME");
    t.program = QStringLiteral("/opt/my apps/elsai-workbench");
    t.arguments = {QStringLiteral("--headless"),         QStringLiteral("--workspace-root"),
                   QStringLiteral("/tmp/ws with space"), QStringLiteral("--mcp-stdio"),
                   QStringLiteral("--mcp-agent"),        QStringLiteral("coder=read_write")};
    return t;
}

} // namespace

/// The client configurations, parsed back: JSON documents, TOML tables and shell command lines
/// for every client and both transports, with a token and paths that need quoting.
class TestMcpClientConfig : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void configurations_data()
    {
        QTest::addColumn<QString>("client");
        QTest::addColumn<bool>("http");
        for (const McpClientKind &k : mcpClientKinds()) {
            QTest::newRow(qPrintable(k.id + QStringLiteral(" http"))) << k.id << true;
            QTest::newRow(qPrintable(k.id + QStringLiteral(" stdio"))) << k.id << false;
        }
    }
    void configurations()
    {
        QFETCH(QString, client);
        QFETCH(bool, http);
        const McpClientTarget t = target();
        const QString variable = mcpTokenVariable(t.agent);
        const QList<McpClientSnippet> snippets =
            mcpClientConfig(client, http ? McpClientTransport::Http : McpClientTransport::Stdio, t);
        QCOMPARE(std::count_if(snippets.cbegin(), snippets.cend(),
                               [](const McpClientSnippet &s) { return s.primary; }),
                 1);
        bool sawServer = false;
        for (const McpClientSnippet &s : snippets) {
            QVERIFY2(!s.title.isEmpty() && !s.location.isEmpty(), qPrintable(s.text));
            // A file in a project never holds the token: it is easily committed.
            if (s.location.contains(QLatin1String("project")) ||
                s.location.startsWith(QLatin1String(".vscode")))
                QVERIFY2(!s.text.contains(t.token), qPrintable(s.location));
            switch (s.format) {
            case Format::Json: {
                QJsonParseError error;
                const QJsonObject doc = QJsonDocument::fromJson(s.text.toUtf8(), &error).object();
                QCOMPARE(error.error, QJsonParseError::NoError);
                const QString root =
                    doc.contains(QLatin1String("mcpServers")) ? QStringLiteral("mcpServers")
                    : doc.contains(QLatin1String("servers"))  ? QStringLiteral("servers")
                    : doc.contains(QLatin1String("context_servers"))
                        ? QStringLiteral("context_servers")
                        : QStringLiteral("mcp");
                QJsonObject servers = doc.value(root).toObject();
                if (root == QLatin1String("mcp"))
                    servers = servers.value(QLatin1String("servers")).toObject();
                QCOMPARE(servers.keys(), QStringList{QStringLiteral("elsai-coder")});
                const QJsonObject e = servers.value(QLatin1String("elsai-coder")).toObject();
                if (http) {
                    const QString url =
                        e.value(
                             QLatin1String(client == QLatin1String("gemini") ? "httpUrl" : "url"))
                            .toString();
                    QCOMPARE(url, t.url.toString());
                    const QString auth = e.value(QLatin1String("headers"))
                                             .toObject()
                                             .value(QLatin1String("Authorization"))
                                             .toString();
                    QVERIFY2(auth == QLatin1String("Bearer ") + t.token ||
                                 auth == QStringLiteral("Bearer ${%1}").arg(variable) ||
                                 auth == QStringLiteral("Bearer ${env:%1}").arg(variable) ||
                                 auth == QStringLiteral("Bearer {env:%1}").arg(variable) ||
                                 auth == QLatin1String("Bearer ${input:elsai-coder-token}"),
                             qPrintable(auth));
                    if (auth.contains(QLatin1String("${input:"))) { // VS Code asks for it
                        const QJsonObject input =
                            doc.value(QLatin1String("inputs")).toArray().first().toObject();
                        QCOMPARE(input.value(QLatin1String("id")).toString(),
                                 QStringLiteral("elsai-coder-token"));
                        QVERIFY(input.value(QLatin1String("password")).toBool());
                    }
                } else if (root == QLatin1String("mcp")) { // OpenCode: one command array
                    QCOMPARE(e.value(QLatin1String("command")).toVariant().toStringList(),
                             QStringList{t.program} + t.arguments);
                } else {
                    QCOMPARE(e.value(QLatin1String("command")).toString(), t.program);
                    QCOMPARE(e.value(QLatin1String("args")).toVariant().toStringList(),
                             t.arguments);
                }
                sawServer = true;
                break;
            }
            case Format::Toml: {
                QString table;
                const auto values = parseToml(s.text, &table);
                QCOMPARE(table, QStringLiteral("mcp_servers.elsai-coder"));
                if (http) {
                    QCOMPARE(values.value(QStringLiteral("url")).toString(), t.url.toString());
                    QCOMPARE(values.value(QStringLiteral("bearer_token_env_var")).toString(),
                             variable);
                    QVERIFY(!values.contains(QStringLiteral("bearer_token")));
                } else {
                    QCOMPARE(values.value(QStringLiteral("command")).toString(), t.program);
                    QCOMPARE(values.value(QStringLiteral("args")).toStringList(), t.arguments);
                }
                sawServer = true;
                break;
            }
            case Format::Shell:
                for (const QString &line : s.text.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
                    const QStringList words = shellWords(line);
                    if (words.first() == QLatin1String("export")) {
                        QCOMPARE(words.size(), 2);
                        QCOMPARE(words.at(1), variable + QLatin1Char('=') + t.token);
                        continue;
                    }
                    QVERIFY2(QStringList({QStringLiteral("claude"), QStringLiteral("codex"),
                                          QStringLiteral("gemini")})
                                 .contains(words.first()),
                             qPrintable(line));
                    QCOMPARE(words.mid(1, 2),
                             QStringList({QStringLiteral("mcp"), QStringLiteral("add")}));
                    QVERIFY(words.contains(QStringLiteral("elsai-coder")));
                    if (http) {
                        QVERIFY(words.contains(t.url.toString()));
                        QVERIFY(
                            words.contains(QStringLiteral("Authorization: Bearer ") + t.token) ||
                            words.contains(variable));
                        // Options before the name (Claude Code and Gemini CLI need it).
                        QVERIFY(words.indexOf(QStringLiteral("elsai-coder")) >
                                    words.indexOf(QStringLiteral("--transport")) ||
                                !words.contains(QStringLiteral("--transport")));
                    } else {
                        const qsizetype dashes = words.indexOf(QStringLiteral("--"));
                        QVERIFY(dashes > 0);
                        QCOMPARE(words.mid(dashes + 1), QStringList{t.program} + t.arguments);
                    }
                    sawServer = true;
                }
                break;
            }
        }
        QVERIFY(sawServer);
        // The text --mcp-config prints: every snippet under a heading.
        const QString text = mcpClientConfigText(snippets);
        QCOMPARE(text.count(QStringLiteral("\n# ")) + 1, snippets.size());
    }

    void unknownClientsAreNamed()
    {
        try {
            mcpClientConfig(QStringLiteral("emacs"), McpClientTransport::Http, target());
            QFAIL("no exception");
        } catch (const ValueError &e) {
            QVERIFY(e.message().contains(QLatin1String("'emacs'")));
            QVERIFY(e.message().contains(QLatin1String("claude-code")));
        }
    }

    void tokenVariables_data()
    {
        QTest::addColumn<QString>("agent");
        QTest::addColumn<QString>("variable");
        QTest::newRow("plain") << "coder"
                               << "ELSAI_MCP_TOKEN_CODER";
        QTest::newRow("dash and dot") << "code-r.1"
                                      << "ELSAI_MCP_TOKEN_CODE_R_1";
        QTest::newRow("non-ASCII") << QStringLiteral("caf\u00e9") << "ELSAI_MCP_TOKEN_CAF_";
    }
    void tokenVariables()
    {
        QFETCH(QString, agent);
        QFETCH(QString, variable);
        QCOMPARE(mcpTokenVariable(agent), variable);
    }
};

QTEST_GUILESS_MAIN(TestMcpClientConfig)
#include "tst_mcpclientconfig.moc"
