// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "mcpagentspec.h"
#include "sandbox.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>

#include <memory>

namespace elsai {

class McpHttpServer;

/// The MCP server of one sandbox as the window shows it: start/stop on a loopback port, the
/// agents (one row each: name, mode, live sessions, token masked), create an agent and get its
/// token, revoke one (its sessions end at once), and the client configuration to paste.
/// GUI thread only (the server's sockets live on it; tool calls run on the server's pool).
class McpServerModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column { AgentColumn, ModeColumn, SessionsColumn, TokenColumn, ColumnCount };

    explicit McpServerModel(QObject *parent = nullptr);
    ~McpServerModel() override;

    /// Serves `sandbox` (which must be started) on 127.0.0.1:port (0 = any free port), with the
    /// agents created so far. Stops a server already running. Throws the typed errors of
    /// McpHttpServer::listen.
    void start(const SandboxPtr &sandbox, quint16 port = 0);
    void stop();
    bool isRunning() const;
    QString workspaceId() const; ///< of the served sandbox; empty when stopped
    QUrl url() const;            ///< empty when stopped

    /// Creates an agent with a random token; ValueError on a bad or duplicate name.
    McpAgentSpec createAgent(const QString &name, SandboxAttachMode mode);
    /// Removes the agent and ends its sessions; returns how many ended.
    int revokeAgent(const QString &name);
    const McpAgentSpec &agent(int row) const { return m_agents.at(row); }
    int rowOf(const QString &name) const;
    int sessionCount(const QString &name) const { return m_sessions.value(name); }

    /// The `mcpServers` JSON for an HTTP client with the agent's bearer header.
    QString httpClientConfig(int row) const;
    /// The stdio command line serving the same sandbox folder to this agent.
    QString stdioCommandLine(int row, const QString &program) const;
    /// The options of that command line (after the program).
    QStringList stdioArguments(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    void runningChanged(bool running);
    /// A client connected or disconnected (sessionEnded carries the reason).
    void sessionStarted(const QString &agent);
    void sessionEnded(const QString &agent, const QString &reason);

private:
    void countSession(const QString &agent, int delta);

    std::unique_ptr<McpHttpServer> m_server;
    SandboxPtr m_sandbox;
    QList<McpAgentSpec> m_agents;
    QHash<QString, int> m_sessions; ///< live sessions per agent name
};

} // namespace elsai
