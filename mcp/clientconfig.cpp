// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "clientconfig.h"

#include "errors.h"
#include "shellquote.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace elsai {

namespace {

using Format = McpClientSnippet::Format;

QString serverName(const McpClientTarget &t)
{
    return QStringLiteral("elsai-") + t.agent;
}

QString json(const QJsonObject &o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented));
}

// A TOML basic string.
QString toml(const QString &s)
{
    QString out = QStringLiteral("\"");
    for (const QChar c : s) {
        if (c == QLatin1Char('"') || c == QLatin1Char('\\'))
            out += QLatin1Char('\\') + c;
        else if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            out += QStringLiteral("\\u%1").arg(c.unicode(), 4, 16, QLatin1Char('0'));
        else
            out += c;
    }
    return out + QLatin1Char('"');
}

QString tomlArray(const QStringList &items)
{
    QStringList quoted;
    for (const QString &i : items)
        quoted.append(toml(i));
    return QLatin1Char('[') + quoted.join(QStringLiteral(", ")) + QLatin1Char(']');
}

QString commandLine(const McpClientTarget &t)
{
    QStringList words{shellWord(t.program)};
    for (const QString &a : t.arguments)
        words.append(shellWord(a));
    return words.join(QLatin1Char(' '));
}

QJsonObject stdioEntry(const McpClientTarget &t)
{
    return {{QStringLiteral("command"), t.program},
            {QStringLiteral("args"), QJsonArray::fromStringList(t.arguments)}};
}

QString bearer(const QString &secret)
{
    return QStringLiteral("Bearer ") + secret;
}

McpClientSnippet exportToken(const McpClientTarget &t)
{
    return {QStringLiteral("the token"), QStringLiteral("the shell the client starts from"),
            Format::Shell,
            QStringLiteral("export %1=%2\n").arg(mcpTokenVariable(t.agent), shellWord(t.token)),
            false};
}

QList<McpClientSnippet> claudeCode(McpClientTransport transport, const McpClientTarget &t)
{
    const QString name = serverName(t);
    if (transport == McpClientTransport::Stdio) {
        QJsonObject entry = stdioEntry(t);
        entry.insert(QStringLiteral("type"), QStringLiteral("stdio"));
        return {{QStringLiteral("claude mcp add"), QStringLiteral("a terminal"), Format::Shell,
                 QStringLiteral("claude mcp add %1 -- %2\n").arg(name, commandLine(t)), true},
                {QStringLiteral(".mcp.json"), QStringLiteral(".mcp.json in the project"),
                 Format::Json, json({{QStringLiteral("mcpServers"), QJsonObject{{name, entry}}}}),
                 false}};
    }
    // Options go before the name. The command stores the header in the user's own settings.
    return {{QStringLiteral("claude mcp add"), QStringLiteral("a terminal"), Format::Shell,
             QStringLiteral("claude mcp add --transport http --header %1 %2 %3\n")
                 .arg(shellWord(QStringLiteral("Authorization: ") + bearer(t.token)), name,
                      shellWord(t.url.toString())),
             true},
            exportToken(t),
            {QStringLiteral(".mcp.json"), QStringLiteral(".mcp.json in the project"), Format::Json,
             json({{QStringLiteral("mcpServers"),
                    QJsonObject{
                        {name, QJsonObject{{QStringLiteral("type"), QStringLiteral("http")},
                                           {QStringLiteral("url"), t.url.toString()},
                                           {QStringLiteral("headers"),
                                            QJsonObject{{QStringLiteral("Authorization"),
                                                         bearer(QStringLiteral("${%1}").arg(
                                                             mcpTokenVariable(t.agent)))}}}}}}}}),
             false}};
}

QList<McpClientSnippet> codex(McpClientTransport transport, const McpClientTarget &t)
{
    const QString name = serverName(t);
    const QString table = QStringLiteral("[mcp_servers.%1]\n").arg(name);
    if (transport == McpClientTransport::Stdio)
        return {{QStringLiteral("codex mcp add"), QStringLiteral("a terminal"), Format::Shell,
                 QStringLiteral("codex mcp add %1 -- %2\n").arg(name, commandLine(t)), true},
                {QStringLiteral("config.toml"), QStringLiteral("~/.codex/config.toml"),
                 Format::Toml,
                 table + QStringLiteral("command = %1\nargs = %2\n")
                             .arg(toml(t.program), tomlArray(t.arguments)),
                 false}};
    // Codex takes the token only from a variable (an inline bearer_token is refused).
    const McpClientSnippet token = exportToken(t);
    return {{QStringLiteral("codex mcp add"), QStringLiteral("a terminal"), Format::Shell,
             token.text + QStringLiteral("codex mcp add %1 --url %2 --bearer-token-env-var %3\n")
                              .arg(name, shellWord(t.url.toString()), mcpTokenVariable(t.agent)),
             true},
            token,
            {QStringLiteral("config.toml"), QStringLiteral("~/.codex/config.toml"), Format::Toml,
             table + QStringLiteral("url = %1\nbearer_token_env_var = %2\n")
                         .arg(toml(t.url.toString()), toml(mcpTokenVariable(t.agent))),
             false}};
}

QList<McpClientSnippet> vscode(McpClientTransport transport, const McpClientTarget &t)
{
    const QString name = serverName(t);
    if (transport == McpClientTransport::Stdio) {
        QJsonObject entry = stdioEntry(t);
        entry.insert(QStringLiteral("type"), QStringLiteral("stdio"));
        return {{QStringLiteral(".vscode/mcp.json"), QStringLiteral(".vscode/mcp.json"),
                 Format::Json, json({{QStringLiteral("servers"), QJsonObject{{name, entry}}}}),
                 true}};
    }
    // VS Code asks for the token when it starts the server and keeps it in its secret store.
    const QString input = name + QStringLiteral("-token");
    return {
        {QStringLiteral(".vscode/mcp.json"), QStringLiteral(".vscode/mcp.json"), Format::Json,
         json({{QStringLiteral("inputs"),
                QJsonArray{
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("promptString")},
                                {QStringLiteral("id"), input},
                                {QStringLiteral("description"),
                                 QStringLiteral("Bearer token of elsai agent %1").arg(t.agent)},
                                {QStringLiteral("password"), true}}}},
               {QStringLiteral("servers"),
                QJsonObject{{name, QJsonObject{{QStringLiteral("type"), QStringLiteral("http")},
                                               {QStringLiteral("url"), t.url.toString()},
                                               {QStringLiteral("headers"),
                                                QJsonObject{{QStringLiteral("Authorization"),
                                                             bearer(QStringLiteral("${input:%1}")
                                                                        .arg(input))}}}}}}}}),
         true}};
}

// Clients whose file has a `mcpServers` map (Cursor, Gemini CLI), with their name for the URL
// key and their form of a variable reference.
QList<McpClientSnippet> mcpServersFile(McpClientTransport transport, const McpClientTarget &t,
                                       const QString &file, const QString &urlKey,
                                       const QString &variableForm)
{
    const QString name = serverName(t);
    if (transport == McpClientTransport::Stdio)
        return {{file, file, Format::Json,
                 json({{QStringLiteral("mcpServers"), QJsonObject{{name, stdioEntry(t)}}}}), true}};
    const QString reference = variableForm.arg(mcpTokenVariable(t.agent));
    return {exportToken(t),
            {file, file, Format::Json,
             json({{QStringLiteral("mcpServers"),
                    QJsonObject{{name, QJsonObject{{urlKey, t.url.toString()},
                                                   {QStringLiteral("headers"),
                                                    QJsonObject{{QStringLiteral("Authorization"),
                                                                 bearer(reference)}}}}}}}}),
             true}};
}

QList<McpClientSnippet> gemini(McpClientTransport transport, const McpClientTarget &t)
{
    // httpUrl is Streamable HTTP (url would be the old SSE transport).
    QList<McpClientSnippet> out =
        mcpServersFile(transport, t, QStringLiteral("~/.gemini/settings.json"),
                       QStringLiteral("httpUrl"), QStringLiteral("${%1}"));
    if (transport == McpClientTransport::Http) {
        out.last().primary = false;
        out.prepend({QStringLiteral("gemini mcp add"), QStringLiteral("a terminal"), Format::Shell,
                     QStringLiteral("gemini mcp add --scope user --transport http --header %1 %2 "
                                    "%3\n")
                         .arg(shellWord(QStringLiteral("Authorization: ") + bearer(t.token)),
                              serverName(t), shellWord(t.url.toString())),
                     true});
    }
    return out;
}

QList<McpClientSnippet> zed(McpClientTransport transport, const McpClientTarget &t)
{
    const QString name = serverName(t);
    const QString file = QStringLiteral("~/.config/zed/settings.json");
    if (transport == McpClientTransport::Stdio)
        return {{file, file, Format::Json,
                 json({{QStringLiteral("context_servers"), QJsonObject{{name, stdioEntry(t)}}}}),
                 true}};
    // Zed's settings take no variables: the token is written into the user's settings.
    return {{file, file, Format::Json,
             json({{QStringLiteral("context_servers"),
                    QJsonObject{{name, QJsonObject{{QStringLiteral("url"), t.url.toString()},
                                                   {QStringLiteral("headers"),
                                                    QJsonObject{{QStringLiteral("Authorization"),
                                                                 bearer(t.token)}}}}}}}}),
             true}};
}

QList<McpClientSnippet> opencode(McpClientTransport transport, const McpClientTarget &t)
{
    const QString name = serverName(t);
    const QString file = QStringLiteral("opencode.json");
    QJsonObject entry;
    if (transport == McpClientTransport::Stdio) {
        entry = {{QStringLiteral("type"), QStringLiteral("local")},
                 {QStringLiteral("command"),
                  QJsonArray::fromStringList(QStringList{t.program} + t.arguments)}};
    } else {
        // Headers given: OpenCode does not try OAuth for this server.
        entry = {
            {QStringLiteral("type"), QStringLiteral("remote")},
            {QStringLiteral("url"), t.url.toString()},
            {QStringLiteral("headers"),
             QJsonObject{{QStringLiteral("Authorization"),
                          bearer(QStringLiteral("{env:%1}").arg(mcpTokenVariable(t.agent)))}}}};
    }
    McpClientSnippet file_{
        file, file + QStringLiteral(" in the project"), Format::Json,
        json({{QStringLiteral("mcp"),
               QJsonObject{{QStringLiteral("servers"), QJsonObject{{name, entry}}}}}}),
        true};
    if (transport == McpClientTransport::Stdio)
        return {file_};
    return {exportToken(t), file_};
}

} // namespace

const QList<McpClientKind> &mcpClientKinds()
{
    static const QList<McpClientKind> kinds{
        {QStringLiteral("claude-code"), QStringLiteral("Claude Code")},
        {QStringLiteral("codex"), QStringLiteral("Codex")},
        {QStringLiteral("vscode"), QStringLiteral("VS Code")},
        {QStringLiteral("cursor"), QStringLiteral("Cursor")},
        {QStringLiteral("gemini"), QStringLiteral("Gemini CLI")},
        {QStringLiteral("zed"), QStringLiteral("Zed")},
        {QStringLiteral("opencode"), QStringLiteral("OpenCode")},
    };
    return kinds;
}

QList<McpClientSnippet> mcpClientConfig(const QString &clientId, McpClientTransport transport,
                                        const McpClientTarget &target)
{
    if (clientId == QLatin1String("claude-code"))
        return claudeCode(transport, target);
    if (clientId == QLatin1String("codex"))
        return codex(transport, target);
    if (clientId == QLatin1String("vscode"))
        return vscode(transport, target);
    if (clientId == QLatin1String("cursor"))
        return mcpServersFile(transport, target, QStringLiteral("~/.cursor/mcp.json"),
                              QStringLiteral("url"), QStringLiteral("${env:%1}"));
    if (clientId == QLatin1String("gemini"))
        return gemini(transport, target);
    if (clientId == QLatin1String("zed"))
        return zed(transport, target);
    if (clientId == QLatin1String("opencode"))
        return opencode(transport, target);
    QStringList ids;
    for (const McpClientKind &k : mcpClientKinds())
        ids.append(k.id);
    throw ValueError(QStringLiteral("unknown MCP client '%1'; configurations are written for %2")
                         .arg(clientId, ids.join(QStringLiteral(", "))));
}

QString mcpClientConfigText(const QList<McpClientSnippet> &snippets)
{
    QString out;
    for (const McpClientSnippet &s : snippets) {
        if (!out.isEmpty())
            out += QLatin1Char('\n');
        out += QStringLiteral("# %1 — %2\n").arg(s.title, s.location);
        out += s.text;
        if (!s.text.endsWith(QLatin1Char('\n')))
            out += QLatin1Char('\n');
    }
    return out;
}

QString mcpTokenVariable(const QString &agent)
{
    QString name = QStringLiteral("ELSAI_MCP_TOKEN_") + agent.toUpper();
    for (QChar &c : name) {
        if (!(c.isLetterOrNumber() && c.unicode() < 0x80) && c != QLatin1Char('_'))
            c = QLatin1Char('_');
    }
    return name;
}

} // namespace elsai
