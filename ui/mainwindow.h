// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QMainWindow>

#include <optional>

class QAction;
class QDockWidget;

namespace elsai {

class AgentsPanel;
class AuditPanel;
class ConsolePanel;
class FileTabs;
class SandboxController;
class SessionsPanel;
class WelcomePage;
class WorkspacePanel;
struct SandboxSpec;

/// The workbench window: dockable panels (sessions, workspace tree, console, agents, audit
/// log) around the file tabs — or a welcome page while no file is open —, a toolbar, a status
/// bar (workspace id, backend, TTL countdown), keyboard shortcuts for the common actions, and
/// its layout saved and restored with QSettings (versioned: AppSettings::layoutVersion).
/// The "current sandbox" is the one selected in the sessions panel; every panel follows it.
///
/// The first start (or View → Reset Layout) uses most of the screen and places the docks by
/// one table (applyDefaultLayout()): sessions above the workspace tree on the left, agents on
/// the right, console beside the audit log along the bottom with a third of the height.
///
/// Closing the window (Quit) asks first when edits are unsaved (Save / Discard / Cancel) and
/// when work is running (commands, plans, MCP sessions); once the application's loop ended,
/// shutdown() tears down in a defined order so that no signal reaches a half-destroyed object.
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

    /// The one place panels become docks: wraps `panel` in a QDockWidget named `objectName`
    /// (the key of the saved layout), puts it in `area` and lists it in the View menu. Panels
    /// added after construction get their saved position back too. A panel that follows the
    /// current sandbox connects currentWorkspaceChanged() to its own setWorkspace().
    QDockWidget *addPanel(QWidget *panel, const QString &title, const QString &objectName,
                          Qt::DockWidgetArea area);
    /// A registered dock by object name (nullptr when none).
    QDockWidget *panelDock(const QString &objectName) const;
    /// The centre's page while no file is open.
    WelcomePage *welcomePage() const;
    /// Marks `workspaceId` as the bundled demo (app/gui.cpp): the welcome page then suggests
    /// the demo's three steps while it is the current sandbox.
    void setDemoWorkspace(const QString &workspaceId);
    /// The size of a first start: most of the available screen geometry.
    static QSize defaultSize(const QRect &available);
    /// A menu-bar action by object name (actionNewSandbox, actionAddFiles, …), for tests and
    /// extensions that add entries next to it.
    QAction *action(const QString &objectName) const;

    /// Quitting, in order: stops accepting work (menus and panels disabled), stops the plans
    /// (a running command is killed) and cancels the console's commands, ends the MCP sessions
    /// and stops the MCP servers, then shuts the controller down (it waits for its pool and
    /// stops every sandbox without sync). Idempotent. The application calls it after its event
    /// loop, whatever ended it: the window closed (closeEvent() asked first) or a signal.
    /// Destroying the window (views) and then the controller (its models) after it emits
    /// nothing.
    void shutdown();
    bool isShutDown() const;
    /// What a quit now would interrupt, one line each (commands, plans, MCP sessions).
    QStringList busyWork() const;

Q_SIGNALS:
    /// The current sandbox changed (empty when there is none).
    void currentWorkspaceChanged(const QString &workspaceId);

public Q_SLOTS:
    void setCurrentWorkspace(const QString &workspaceId);
    void newSandbox(); ///< the New Sandbox dialog
    /// The New Sandbox dialog starts from `spec` (the command line's: another sandbox like
    /// the first is one click away), under a workspace id no sandbox has yet.
    void setNewSandboxSpec(const SandboxSpec &spec);
    void flushPreview();   ///< the flush preview of the current sandbox
    void exportAuditLog(); ///< the audit panel's visible rows, through a save dialog
    /// Puts every registered dock back where the default layout has it, shown, with the
    /// default sizes (View → Reset Layout). Docks the table does not know go back to the area
    /// they were added to.
    void resetLayout();
    /// File → Open Workspace Folder: inspects an existing host folder as a local sandbox, in
    /// place — nothing is seeded or copied, nothing deleted when it stops or is removed, no
    /// flush destination. Asks first (commands, saves and read-write agents change the real
    /// files); refuses the file system root, the home folder itself, a missing folder, and a
    /// folder another sandbox already uses (that one becomes current). Returns true when the
    /// sandbox was added.
    bool openWorkspaceFolder(const QString &path);
    /// Moves the keyboard focus to the next (`step` 1, F6) or previous (-1, Shift+F6) panel
    /// on screen: the centre, then the shown docks in reading order (a tabbed dock counts when
    /// its tab is the current one). The panel's last focused control gets it, else its first.
    void focusNextPanel(int step = 1);
    void showSettings();  ///< File → Settings (SettingsDialog)
    void showShortcuts(); ///< Help → Keyboard Shortcuts
    void showAbout();     ///< Help → About

protected:
    void closeEvent(QCloseEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    void createPanels();
    /// Focuses the panel's last focused control, else its first that takes focus by Tab.
    bool focusPanel(QWidget *panel);
    void createStatusBar();
    void createMenus();
    void createToolBar();
    void updateRecentMenus();
    void rememberSandbox(const SandboxSpec &spec, bool openedFolder);
    void openRecentSandbox(const QString &json);
    void newSandboxFrom(const std::optional<SandboxSpec> &from);
    void applyDefaultLayout();
    void applyDefaultSizes();
    void restoreLayout();
    void saveLayout();
    void updateCentre();
    void runWelcomeStep(int step);
    void updateStatus();
    void updateActions();
    void showError(const QString &text);
    SandboxController *m_controller;
    QString m_current;
    struct Private;
    Private *d;
};

} // namespace elsai
