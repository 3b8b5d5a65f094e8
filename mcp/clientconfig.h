// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

namespace elsai {

/// What a client configuration connects to: one agent of a server, over Streamable HTTP (its
/// URL and bearer token) or stdio (the command line that serves the same sandbox to it).
struct McpClientTarget
{
    QString agent;         ///< the agent's name; the server is listed as `elsai-<agent>`
    QUrl url;              ///< HTTP: http://HOST:PORT/mcp
    QString token;         ///< HTTP: the agent's bearer token
    QString program;       ///< stdio: the elsai-workbench executable
    QStringList arguments; ///< stdio: its options (--headless … --mcp-stdio --mcp-agent …)
};

enum class McpClientTransport { Http, Stdio };

/// One ready piece of configuration: what it is, where it goes, and its text.
struct McpClientSnippet
{
    enum class Format { Shell, Json, Toml };
    QString title;    ///< e.g. "claude mcp add", ".mcp.json"
    QString location; ///< where it goes: a file, or "a terminal"
    Format format = Format::Shell;
    QString text;
    /// The one paste that connects the client (the window copies it); the others are
    /// alternatives (a project file instead of a command, the token's variable).
    bool primary = false;
};

/// A client a configuration can be written for.
struct McpClientKind
{
    QString
        id; ///< the --mcp-config value: claude-code, codex, vscode, cursor, gemini, zed, opencode
    QString name; ///< as the client calls itself
};

/// The clients, in the order the window lists them.
const QList<McpClientKind> &mcpClientKinds();

/// The configuration of `clientId` for the target. Configuration files never hold the token
/// (a project's .mcp.json is easily committed): they read it from mcpTokenVariable(), set by
/// the first snippet (`export …`), or ask for it (VS Code's password input). Commands that
/// store it in the client's own per-user settings (`claude mcp add`, `gemini mcp add`) and
/// Zed's user settings (no variables there) carry the token itself. ValueError for an unknown
/// client, naming the known ones.
QList<McpClientSnippet> mcpClientConfig(const QString &clientId, McpClientTransport transport,
                                        const McpClientTarget &target);

/// The snippets as one text: each under a `# title — location` line (what --mcp-config prints).
QString mcpClientConfigText(const QList<McpClientSnippet> &snippets);

/// ELSAI_MCP_TOKEN_<AGENT>: the environment variable configurations read an agent's token from
/// (upper case; characters a variable name cannot hold become `_`).
QString mcpTokenVariable(const QString &agent);

} // namespace elsai
