// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QWidget>

class QPushButton;
class QTableView;

namespace elsai {

class MessageBar;
class SandboxController;

/// Sessions table (every sandbox; selecting one makes it current; start/stop/remove actions).
/// Its message bar shows what went wrong in starting and stopping a sandbox and the conflicts
/// of a flush. Remove asks first, naming what goes (confirm()).
class SessionsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit SessionsPanel(SandboxController *controller, QWidget *parent = nullptr);
    QTableView *view() const { return m_view; }
    /// Workspace id of the selected row (empty when none).
    QString selectedWorkspace() const;
    MessageBar *messageBar() const { return m_bar; }
    QPushButton *removeButton() const { return m_remove; }
    /// Asks whether to remove the sandbox (stopped without sync; more is said when it runs:
    /// its commands, agents and unflushed changes) and removes it when the user agrees.
    /// Returns whether it was removed.
    bool removeSandboxAsking(const QString &workspaceId);
public Q_SLOTS:
    /// Selects the row of `workspaceId` (no signal when it is already selected).
    void selectWorkspace(const QString &workspaceId);
Q_SIGNALS:
    void currentWorkspaceChanged(const QString &workspaceId);

private:
    void updateButtons();
    SandboxController *m_controller;
    QTableView *m_view;
    QPushButton *m_start, *m_stop, *m_remove;
    MessageBar *m_bar;
    QString m_selected;
};

} // namespace elsai
