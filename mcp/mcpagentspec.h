// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agent.h"

#include <QList>
#include <QString>

#include <optional>

namespace elsai {

/// One agent the MCP server admits: a name (the audit actor), a mode and its bearer token.
struct McpAgentSpec
{
    QString name;
    SandboxAttachMode mode = SandboxAttachMode::ReadOnly;
    QString token;

    /// Parses `NAME=read_write|read_only[:TOKEN]` (the --mcp-agent value). Without a token a
    /// random one is generated. ValueError naming the problem otherwise.
    static McpAgentSpec parse(const QString &value);
};

/// A fresh bearer token: 256 bits from the system CSPRNG, base64url without padding.
QString generateMcpToken();

/// Tokens → agents. Lookup compares in constant time per token, so the time of a refusal does
/// not tell how much of a token was right.
class McpTokenTable
{
public:
    McpTokenTable() = default;
    /// ValueError on a duplicate name or token, or a token shorter than 16 characters.
    explicit McpTokenTable(const QList<McpAgentSpec> &agents);
    std::optional<McpAgentSpec> lookup(const QString &token) const;
    /// The agent for an `Authorization` header value ("Bearer TOKEN"), if any.
    std::optional<McpAgentSpec> authorize(const QByteArray &authorizationHeader) const;
    const QList<McpAgentSpec> &agents() const { return m_agents; }

private:
    QList<McpAgentSpec> m_agents;
};

} // namespace elsai
