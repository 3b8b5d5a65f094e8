// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcpagentspec.h"

#include "errors.h"
#include "inputchecks.h"

#include <QRandomGenerator>
#include <QSet>

namespace elsai {

static constexpr qsizetype kMinTokenLength = 16;

McpAgentSpec McpAgentSpec::parse(const QString &value)
{
    const qsizetype eq = value.indexOf(QLatin1Char('='));
    if (eq <= 0)
        throw ValueError(QStringLiteral("--mcp-agent '%1': expected NAME=read_write|read_only"
                                        "[:TOKEN]")
                             .arg(value));
    McpAgentSpec spec;
    spec.name = value.left(eq);
    checkName(spec.name, QStringLiteral("MCP agent name"));
    QString rest = value.mid(eq + 1);
    const qsizetype colon = rest.indexOf(QLatin1Char(':'));
    if (colon >= 0) {
        spec.token = rest.mid(colon + 1);
        rest.truncate(colon);
        if (spec.token.size() < kMinTokenLength)
            throw ValueError(QStringLiteral("--mcp-agent '%1': the token must have at least %2 "
                                            "characters; omit it to get a random one")
                                 .arg(spec.name)
                                 .arg(kMinTokenLength));
        for (const QChar c : std::as_const(spec.token)) {
            if (c.unicode() <= 0x20 || c.unicode() >= 0x7f)
                throw ValueError(QStringLiteral("--mcp-agent '%1': the token must be printable "
                                                "ASCII without spaces")
                                     .arg(spec.name));
        }
    } else {
        spec.token = generateMcpToken();
    }
    for (const QChar c : std::as_const(spec.name)) {
        if (!(c.isLetterOrNumber() || c == QLatin1Char('-') || c == QLatin1Char('_') ||
              c == QLatin1Char('.')))
            throw ValueError(QStringLiteral("--mcp-agent '%1': an agent name may hold letters, "
                                            "digits, '-', '_' and '.' only")
                                 .arg(spec.name));
    }
    spec.mode = attachModeFromString(rest);
    return spec;
}

QString generateMcpToken()
{
    quint32 words[8];
    QRandomGenerator::system()->fillRange(words);
    const QByteArray raw(reinterpret_cast<const char *>(words), sizeof words);
    return QString::fromLatin1(
        raw.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

McpTokenTable::McpTokenTable(const QList<McpAgentSpec> &agents) : m_agents(agents)
{
    QSet<QString> names, tokens;
    for (const McpAgentSpec &a : agents) {
        if (names.contains(a.name))
            throw ValueError(QStringLiteral("MCP agent '%1' is declared twice").arg(a.name));
        if (tokens.contains(a.token))
            throw ValueError(
                QStringLiteral("MCP agent '%1' reuses another agent's token").arg(a.name));
        if (a.token.size() < kMinTokenLength)
            throw ValueError(QStringLiteral("MCP agent '%1' has a token shorter than %2 "
                                            "characters")
                                 .arg(a.name)
                                 .arg(kMinTokenLength));
        names.insert(a.name);
        tokens.insert(a.token);
    }
}

static bool constantTimeEquals(const QByteArray &a, const QByteArray &b)
{
    unsigned diff = a.size() == b.size() ? 0u : 1u;
    const qsizetype n = qMin(a.size(), b.size());
    for (qsizetype i = 0; i < n; ++i)
        diff |= unsigned(uchar(a[i]) ^ uchar(b[i]));
    return diff == 0;
}

std::optional<McpAgentSpec> McpTokenTable::lookup(const QString &token) const
{
    if (token.isEmpty())
        return std::nullopt;
    const QByteArray given = token.toUtf8();
    std::optional<McpAgentSpec> found;
    for (const McpAgentSpec &a : m_agents) {
        if (constantTimeEquals(given, a.token.toUtf8()) && !found)
            found = a;
    }
    return found;
}

std::optional<McpAgentSpec> McpTokenTable::authorize(const QByteArray &header) const
{
    const QByteArray value = header.trimmed();
    static const QByteArray scheme("bearer ");
    if (value.size() <= scheme.size() || value.left(scheme.size()).toLower() != scheme)
        return std::nullopt;
    return lookup(QString::fromUtf8(value.mid(scheme.size()).trimmed()));
}

} // namespace elsai
