#pragma once

#include <QWidget>

class QPushButton;
class QTableView;

namespace elsai {

class SandboxController;

/// Sessions table (every sandbox; selecting one makes it current; start/stop/remove actions).
class SessionsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit SessionsPanel(SandboxController *controller, QWidget *parent = nullptr);
    QTableView *view() const { return m_view; }
    /// Workspace id of the selected row (empty when none).
    QString selectedWorkspace() const;
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
    QString m_selected;
};

} // namespace elsai
