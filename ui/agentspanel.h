// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QWidget>

class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace elsai {

class MessageBar;
class SandboxController;

/// Attached agents of the current sandbox: attach / detach / change mode, each agent's tools
/// and recent calls. Attaching a name already attached is refused in the panel's message bar
/// (Change mode is the explicit way to change an agent's mode); so is a name with a control
/// character.
class AgentsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit AgentsPanel(SandboxController *controller, QWidget *parent = nullptr);
    QTableView *view() const { return m_view; }
    QLineEdit *nameEdit() const { return m_name; }
    QComboBox *modeBox() const { return m_mode; }
    QPushButton *attachButton() const { return m_attach; }
    QPlainTextEdit *details() const { return m_details; }
    MessageBar *messageBar() const { return m_bar; }
public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
    void attach();
    void detachSelected();
    void toggleModeOfSelected();

private:
    int selectedSourceRow() const;
    void updateDetails();
    SandboxController *m_controller;
    QString m_workspaceId;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLineEdit *m_name;
    QComboBox *m_mode;
    QPushButton *m_attach, *m_detach, *m_changeMode;
    QPlainTextEdit *m_details;
    MessageBar *m_bar;
};

} // namespace elsai
