// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "clientconfig.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableView;

namespace elsai {

class McpServerModel;
class SandboxController;

/// The MCP server of the current sandbox: start/stop it on a loopback port, create agents with
/// a mode and get their tokens, copy a ready-to-paste client configuration (HTTP with the
/// bearer header, or the stdio command line; generic, or for a chosen client such as Claude
/// Code, Codex or VS Code), see live sessions per agent, revoke an agent
/// (its sessions are detached at once). Connected sessions also appear in the Agents panel.
class McpPanel : public QWidget
{
    Q_OBJECT
public:
    explicit McpPanel(SandboxController *controller, QWidget *parent = nullptr);
    ~McpPanel() override;
    McpServerModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    QPushButton *startButton() const { return m_start; }
    QLineEdit *nameEdit() const { return m_name; }
    QComboBox *modeBox() const { return m_mode; }
    QLabel *statusLabel() const { return m_status; }
    /// The client the copy buttons configure (clientconfig.h ids; empty: generic).
    QString clientId() const;
    void setClientId(const QString &id);
public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
    void toggleServer();
    void createAgent();
    void copyHttpConfig();
    void copyStdioCommand();
    void revokeSelected();

private:
    int selectedRow() const;
    void copyConfig(McpClientTransport transport, int row);
    void updateState();
    SandboxController *m_controller;
    McpServerModel *m_model;
    QString m_workspaceId;
    QSpinBox *m_port;
    QPushButton *m_start;
    QLabel *m_url;
    QTableView *m_view;
    QLineEdit *m_name;
    QComboBox *m_mode;
    QPushButton *m_create, *m_copyHttp, *m_copyStdio, *m_revoke;
    QComboBox *m_client;
    QLabel *m_status;
};

} // namespace elsai
