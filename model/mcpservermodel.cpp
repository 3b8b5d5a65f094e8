// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcpservermodel.h"

#include "clientconfig.h"

#include "errors.h"
#include "localsandboxbackend.h"
#include "mcphttpserver.h"
#include "shellquote.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace elsai {

McpServerModel::McpServerModel(QObject *parent) : QAbstractTableModel(parent) {}

McpServerModel::~McpServerModel()
{
    // Closing the server ends its sessions, and each reports sessionEnded: that must not reach
    // this model while its members are being destroyed (the heap corruption on quit).
    if (m_server) {
        disconnect(m_server.get(), nullptr, this, nullptr);
        m_server->close();
        m_server.reset();
    }
}

void McpServerModel::start(const SandboxPtr &sandbox, quint16 port)
{
    if (!sandbox || !sandbox->isStarted())
        throw SandboxStartError(QStringLiteral("start the sandbox before serving it over MCP"));
    stop();
    auto server = std::make_unique<McpHttpServer>(sandbox, m_agents);
    server->listen(QHostAddress::LocalHost, port);
    connect(server.get(), &McpHttpServer::sessionStarted, this,
            [this](const QString &, const QString &agent) {
                countSession(agent, +1);
                Q_EMIT sessionStarted(agent);
            });
    connect(server.get(), &McpHttpServer::sessionEnded, this,
            [this](const QString &, const QString &agent, const QString &reason) {
                countSession(agent, -1);
                Q_EMIT sessionEnded(agent, reason);
            });
    m_server = std::move(server);
    m_sandbox = sandbox;
    Q_EMIT runningChanged(true);
}

void McpServerModel::stop()
{
    if (!m_server)
        return;
    m_server->close(); // ends every session (counted down through sessionEnded)
    m_server.reset();
    m_sandbox.reset();
    m_sessions.clear();
    if (!m_agents.isEmpty())
        Q_EMIT dataChanged(index(0, SessionsColumn), index(rowCount() - 1, SessionsColumn));
    Q_EMIT runningChanged(false);
}

bool McpServerModel::isRunning() const
{
    return m_server && m_server->isListening();
}

QString McpServerModel::workspaceId() const
{
    return m_sandbox ? m_sandbox->workspaceId() : QString();
}

QUrl McpServerModel::url() const
{
    return m_server ? m_server->url() : QUrl();
}

McpAgentSpec McpServerModel::createAgent(const QString &name, SandboxAttachMode mode)
{
    const McpAgentSpec spec =
        McpAgentSpec::parse(name + QLatin1Char('=') + toString(mode)); // validates, new token
    QList<McpAgentSpec> agents = m_agents;
    agents.append(spec);
    McpTokenTable validated(agents); // duplicate names are refused here
    Q_UNUSED(validated);
    if (m_server)
        m_server->addAgent(spec);
    beginInsertRows({}, int(m_agents.size()), int(m_agents.size()));
    m_agents.append(spec);
    endInsertRows();
    return spec;
}

int McpServerModel::revokeAgent(const QString &name)
{
    const int row = rowOf(name);
    if (row < 0)
        return 0;
    const int ended = m_server ? m_server->revokeAgent(name) : 0;
    beginRemoveRows({}, row, row);
    m_agents.removeAt(row);
    m_sessions.remove(name);
    endRemoveRows();
    return ended;
}

int McpServerModel::rowOf(const QString &name) const
{
    for (int i = 0; i < m_agents.size(); ++i) {
        if (m_agents.at(i).name == name)
            return i;
    }
    return -1;
}

void McpServerModel::countSession(const QString &agent, int delta)
{
    m_sessions[agent] = qMax(0, m_sessions.value(agent) + delta);
    if (const int row = rowOf(agent); row >= 0)
        Q_EMIT dataChanged(index(row, SessionsColumn), index(row, SessionsColumn));
}

QString McpServerModel::httpClientConfig(int row) const
{
    const McpAgentSpec &a = m_agents.at(row);
    const QString url =
        m_server ? m_server->url().toString() : QStringLiteral("http://127.0.0.1:PORT/mcp");
    const QJsonObject server{
        {QStringLiteral("type"), QStringLiteral("http")},
        {QStringLiteral("url"), url},
        {QStringLiteral("headers"),
         QJsonObject{{QStringLiteral("Authorization"), QStringLiteral("Bearer ") + a.token}}}};
    const QJsonObject config{
        {QStringLiteral("mcpServers"),
         QJsonObject{{QStringLiteral("elsai-") +
                          (m_sandbox ? m_sandbox->workspaceId() : QStringLiteral("sandbox")),
                      server}}}};
    return QString::fromUtf8(QJsonDocument(config).toJson(QJsonDocument::Indented));
}

QStringList McpServerModel::stdioArguments(int row) const
{
    const McpAgentSpec &a = m_agents.at(row);
    QStringList args{QStringLiteral("--headless")};
    if (m_sandbox) {
        const BackendPtr backend = m_sandbox->backend();
        if (const auto *local = dynamic_cast<const LocalSandboxBackend *>(backend.get()))
            args << QStringLiteral("--workspace-root") << local->workspaceRoot();
    }
    args << QStringLiteral("--mcp-stdio") << QStringLiteral("--mcp-agent")
         << a.name + QLatin1Char('=') + toString(a.mode);
    return args;
}

QString McpServerModel::stdioCommandLine(int row, const QString &program) const
{
    QStringList quoted{shellWord(program)};
    for (const QString &arg : stdioArguments(row))
        quoted.append(shellWord(arg));
    return quoted.join(QLatin1Char(' '));
}

int McpServerModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_agents.size());
}

int McpServerModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant McpServerModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const McpAgentSpec &a = m_agents.at(index.row());
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case AgentColumn:
            return a.name;
        case ModeColumn:
            return toString(a.mode);
        case SessionsColumn:
            return m_sessions.value(a.name);
        case TokenColumn:
            // Shown masked: the full token is copied, never displayed in a screenshot.
            return a.token.left(4) + QStringLiteral("…");
        }
    }
    if (role == Qt::ToolTipRole && index.column() == TokenColumn)
        return tr("Use Copy config to get the full token");
    return {};
}

QVariant McpServerModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case AgentColumn:
        return tr("Agent");
    case ModeColumn:
        return tr("Mode");
    case SessionsColumn:
        return tr("Sessions");
    case TokenColumn:
        return tr("Token");
    }
    return {};
}

} // namespace elsai
