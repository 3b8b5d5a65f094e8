#pragma once

#include <QMainWindow>

namespace elsai {

class AgentsPanel;
class AuditPanel;
class ConsolePanel;
class FileTabs;
class SandboxController;
class SessionsPanel;
class WorkspacePanel;

/// The workbench window: dockable panels (sessions, workspace tree, console, agents, audit
/// log) around the file tabs, a status bar (workspace id, backend, TTL countdown), keyboard
/// shortcuts for the common actions, and its layout saved and restored with QSettings.
/// The "current sandbox" is the one selected in the sessions panel; every panel follows it.
class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(SandboxController *controller, QWidget *parent = nullptr);
    ~MainWindow() override;

    SandboxController *controller() const { return m_controller; }
    QString currentWorkspace() const { return m_current; }
    WorkspacePanel *workspacePanel() const;
    FileTabs *fileTabs() const;
    SessionsPanel *sessionsPanel() const;
    ConsolePanel *consolePanel() const;
    AgentsPanel *agentsPanel() const;
    AuditPanel *auditPanel() const;
    /// The status bar's sandbox summary ("id · backend · state · TTL left").
    QString statusSummary() const;

public Q_SLOTS:
    void setCurrentWorkspace(const QString &workspaceId);
    void newSandbox();     ///< the New Sandbox dialog
    void flushPreview();   ///< the flush preview of the current sandbox

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void updateStatus();
    void updateActions();
    void showError(const QString &text);
    SandboxController *m_controller;
    QString m_current;
    struct Private;
    Private *d;
};

} // namespace elsai
