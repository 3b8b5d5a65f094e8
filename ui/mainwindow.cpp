// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mainwindow.h"

#include "accessiblenames.h"
#include "agentplanpanel.h"
#include "agentspanel.h"
#include "appsettings.h"
#include "audithealthmonitor.h"
#include "auditpanel.h"
#include "changespanel.h"
#include "columnfit.h"
#include "confirm.h"
#include "consolepanel.h"
#include "errors.h"
#include "filetabs.h"
#include "flushpreviewdialog.h"
#include "icons.h"
#include "inputchecks.h"
#include "inspectpanel.h"
#include "mcppanel.h"
#include "mcpservermodel.h"
#include "newsandboxdialog.h"
#include "portspanel.h"
#include "processespanel.h"
#include "sandboxcontroller.h"
#include "sessionsmodel.h"
#include "sessionspanel.h"
#include "settingsdialog.h"
#include "shortcutsdialog.h"
#include "terminaldock.h"
#include "timelinepanel.h"
#include "welcomepage.h"
#include "workspacepanel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QCommandLinkButton>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QScreen>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QTreeView>

#include <algorithm>

namespace elsai {

namespace {

/// How a dock is placed by the default layout, relative to an `anchor` dock placed before it.
enum class Place {
    First,  ///< the first dock of its area
    Below,  ///< under the anchor (the anchor's column is split)
    Beside, ///< right of the anchor (the anchor's row is split)
    Tabbed, ///< a tab behind the anchor (the anchor stays in front)
};

struct DockPlacement
{
    const char *dock; ///< object name given to MainWindow::addPanel()
    Qt::DockWidgetArea area;
    Place place;
    const char *anchor;
};

/// The default layout, in placing order. A new dock is one line here; a dock not listed stays
/// in the area addPanel() gave it.
constexpr DockPlacement defaultPlacements[] = {
    {"sessionsDock", Qt::LeftDockWidgetArea, Place::First, nullptr},
    {"workspaceDock", Qt::LeftDockWidgetArea, Place::Below, "sessionsDock"},
    {"agentsDock", Qt::RightDockWidgetArea, Place::First, nullptr},
    {"agentPlanDock", Qt::RightDockWidgetArea, Place::Tabbed, "agentsDock"},
    {"mcpDock", Qt::RightDockWidgetArea, Place::Tabbed, "agentsDock"},
    {"consoleDock", Qt::BottomDockWidgetArea, Place::First, nullptr},
    {"auditDock", Qt::BottomDockWidgetArea, Place::Beside, "consoleDock"},
    {"changesDock", Qt::BottomDockWidgetArea, Place::Tabbed, "auditDock"},
    {"timelineDock", Qt::BottomDockWidgetArea, Place::Tabbed, "auditDock"},
    {"inspectDock", Qt::RightDockWidgetArea, Place::Tabbed, "agentsDock"},
    {"terminalDock", Qt::BottomDockWidgetArea, Place::Tabbed, "consoleDock"},
    {"processesDock", Qt::BottomDockWidgetArea, Place::Tabbed, "consoleDock"},
    {"portsDock", Qt::BottomDockWidgetArea, Place::Tabbed, "consoleDock"},
};

constexpr int recentSandboxLimit = AppSettings::recentLimit;

QString sandboxLabel(const QJsonObject &o)
{
    const QString id = o.value(QLatin1String("workspace_id")).toString();
    const QString where = o.value(QLatin1String("opened_folder")).toBool()
                              ? o.value(QLatin1String("workspace_root")).toString()
                              : o.value(QLatin1String("seed_from")).toString();
    const QString backend = o.value(QLatin1String("backend")).toString();
    return where.isEmpty() ? QStringLiteral("%1 (%2)").arg(id, backend)
                           : QStringLiteral("%1 (%2, %3)").arg(id, backend, where);
}

} // namespace

struct MainWindow::Private
{
    FileTabs *tabs = nullptr;
    QStackedWidget *centre = nullptr;
    WelcomePage *welcome = nullptr;
    QString demoWorkspace;
    QToolBar *toolBar = nullptr;
    QMenu *recentSandboxes = nullptr;
    QMenu *recentSeeds = nullptr;
    QHash<QString, Qt::DockWidgetArea> addedArea; ///< where addPanel() put each dock
    bool layoutRestored = false;                  ///< a saved layout of this version was applied
    bool shownOnce = false;
    SessionsPanel *sessions = nullptr;
    WorkspacePanel *workspace = nullptr;
    ConsolePanel *console = nullptr;
    AgentsPanel *agents = nullptr;
    AuditPanel *audit = nullptr;
    McpPanel *mcp = nullptr;
    QLabel *summary = nullptr;
    QLabel *auditHealth = nullptr; ///< shown while the audit log is not ok
    QProgressBar *progress = nullptr;
    QTimer statusTimer;
    QAction *start = nullptr, *stop = nullptr, *stopNoSync = nullptr, *flush = nullptr,
            *remove = nullptr;
    QPointer<NewSandboxDialog> newDialog;
    std::optional<SandboxSpec> newSpec; ///< what the dialog starts from; none: the defaults
    QMenu *viewMenu = nullptr;
    QMenu *sandboxMenu = nullptr;
    QMenu *workspaceMenu = nullptr;
    QList<QPointer<QDockWidget>> docks; ///< every registered panel (removed ones turn null)
    bool restored = false; ///< restoreState() ran: later panels use restoreDockWidget()
    bool shutDown = false;
};

MainWindow::MainWindow(SandboxController *controller, QWidget *parent)
    : QMainWindow(parent), m_controller(controller), d(new Private)
{
    setWindowTitle(tr("elsai workbench"));
    setObjectName(QStringLiteral("mainWindow"));
    setAccessibleName(tr("elsai workbench"));
    setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);

    // The centre: the file tabs, or the welcome page while none is open.
    d->tabs = new FileTabs(controller, this);
    d->tabs->setObjectName(QStringLiteral("fileTabs"));
    d->tabs->setAccessibleName(tr("Files"));
    d->welcome = new WelcomePage(this);
    d->centre = new QStackedWidget(this);
    d->centre->setObjectName(QStringLiteral("centre"));
    d->centre->addWidget(d->welcome);
    d->centre->addWidget(d->tabs);
    setCentralWidget(d->centre);
    connect(d->tabs, &FileTabs::tabCountChanged, this, &MainWindow::updateCentre);
    connect(d->welcome, &WelcomePage::stepRequested, this,
            [this](WelcomePage::Step step) { runWelcomeStep(int(step)); });

    // The menus come first so that addPanel() can list each dock in the View menu.
    createMenus();
    createToolBar();
    createPanels();
    createStatusBar();
    applyDefaultLayout();
    restoreLayout();

    if (const QStringList ids = controller->workspaceIds(); !ids.isEmpty())
        setCurrentWorkspace(ids.constFirst());
    else
        setCurrentWorkspace(QString());
    d->centre->setCurrentWidget(d->welcome);
    // The keyboard starts on the welcome page's first step (Space opens it).
    d->welcome->button(WelcomePage::Step::OpenFile)->setFocus(Qt::OtherFocusReason);
}

void MainWindow::createPanels()
{
    SandboxController *controller = m_controller;
    d->sessions = new SessionsPanel(controller, this);
    d->workspace = new WorkspacePanel(controller, this);
    d->console = new ConsolePanel(controller, this);
    d->agents = new AgentsPanel(controller, this);
    d->audit = new AuditPanel(controller, this);
    connect(this, &MainWindow::currentWorkspaceChanged, d->workspace,
            &WorkspacePanel::setWorkspace);
    connect(this, &MainWindow::currentWorkspaceChanged, d->console, &ConsolePanel::setWorkspace);
    connect(this, &MainWindow::currentWorkspaceChanged, d->agents, &AgentsPanel::setWorkspace);
    auto *plans = new AgentPlanPanel(controller, this);
    connect(this, &MainWindow::currentWorkspaceChanged, plans, &AgentPlanPanel::setWorkspace);

    // Where each dock goes is applyDefaultLayout()'s table; here they are only registered.
    addPanel(d->sessions, tr("Sessions"), QStringLiteral("sessionsDock"), Qt::LeftDockWidgetArea);
    addPanel(d->workspace, tr("Workspace"), QStringLiteral("workspaceDock"),
             Qt::LeftDockWidgetArea);
    addPanel(d->console, tr("Console"), QStringLiteral("consoleDock"), Qt::BottomDockWidgetArea);
    addPanel(d->agents, tr("Agents"), QStringLiteral("agentsDock"), Qt::RightDockWidgetArea);
    addPanel(d->audit, tr("Audit"), QStringLiteral("auditDock"), Qt::BottomDockWidgetArea);
    // Scripted agents: a dock beside the agents panel, opened from the Sandbox menu.
    QDockWidget *plansDock = addPanel(plans, tr("Scripted Agent"), QStringLiteral("agentPlanDock"),
                                      Qt::RightDockWidgetArea);
    QAction *runPlan =
        d->sandboxMenu->addAction(tr("Run a Scripted &Agent…"), plansDock, [plansDock] {
            plansDock->show();
            plansDock->raise();
        });
    runPlan->setObjectName(QStringLiteral("actionRunScriptedAgent"));
    runPlan->setIcon(themeIcon(QStringLiteral("system-run")));
    runPlan->setIconText(tr("Scripted Agent"));
    d->toolBar->addAction(runPlan);
    d->mcp = new McpPanel(controller, this); // the MCP server of the current sandbox
    connect(this, &MainWindow::currentWorkspaceChanged, d->mcp, &McpPanel::setWorkspace);
    addPanel(d->mcp, tr("MCP"), QStringLiteral("mcpDock"), Qt::RightDockWidgetArea);
    // What happened and what it is: the Changes panel beside the audit log, Inspect beside the
    // agents (ui/changespanel.*, ui/inspectpanel.*; placed by defaultPlacements).
    auto *changes = new ChangesPanel(controller, this);
    connect(this, &MainWindow::currentWorkspaceChanged, changes, &ChangesPanel::setWorkspace);
    addPanel(changes, tr("Changes"), QStringLiteral("changesDock"), Qt::BottomDockWidgetArea);
    // Each call's changes and the checkpoints, to compare, restore or fork (ui/timelinepanel.*).
    auto *timeline = new TimelinePanel(controller, this);
    connect(this, &MainWindow::currentWorkspaceChanged, timeline, &TimelinePanel::setWorkspace);
    addPanel(timeline, tr("Timeline"), QStringLiteral("timelineDock"), Qt::BottomDockWidgetArea);
    auto *inspect = new InspectPanel(controller, this);
    inspect->setMcpModel(d->mcp->model());
    connect(this, &MainWindow::currentWorkspaceChanged, inspect, &InspectPanel::setWorkspace);
    addPanel(inspect, tr("Inspect"), QStringLiteral("inspectDock"), Qt::RightDockWidgetArea);

    // Terminals, processes and ports of the current sandbox (docs/terminal.md): tabbed with the
    // console (placed by defaultPlacements). The panels find each other through the window
    // (findChild) only.
    auto *terminals = new TerminalDock(controller, this);
    auto *processes = new ProcessesPanel(this);
    auto *ports = new PortsPanel(controller, this);
    connect(this, &MainWindow::currentWorkspaceChanged, terminals, &TerminalDock::setWorkspace);
    connect(this, &MainWindow::currentWorkspaceChanged, processes, &ProcessesPanel::setWorkspace);
    connect(this, &MainWindow::currentWorkspaceChanged, ports, &PortsPanel::setWorkspace);
    QDockWidget *terminalDock = addPanel(terminals, tr("Terminal"), QStringLiteral("terminalDock"),
                                         Qt::BottomDockWidgetArea);
    addPanel(processes, tr("Processes"), QStringLiteral("processesDock"), Qt::BottomDockWidgetArea);
    addPanel(ports, tr("Ports"), QStringLiteral("portsDock"), Qt::BottomDockWidgetArea);
    QAction *newTerminal = terminals->newTerminalAction();
    d->sandboxMenu->insertAction(runPlan, newTerminal);
    d->toolBar->insertAction(runPlan, newTerminal);
    connect(newTerminal, &QAction::triggered, terminalDock, [terminalDock] {
        terminalDock->show();
        terminalDock->raise();
    });
    auto say = [this](const QString &text) { statusBar()->showMessage(text, 15000); };
    connect(terminals, &TerminalDock::message, this, say);
    // Record and replay (docs/agents.md): the recording of the current sandbox's calls.
    d->sandboxMenu->insertActions(
        runPlan, {plans->recording()->recordAction(), plans->recording()->stopAction()});
    connect(plans->recording(), &SessionRecording::statusChanged, this, [say](const QString &m) {
        if (!m.isEmpty())
            say(m);
    });
    connect(ports, &PortsPanel::message, this, say);

    connect(d->sessions, &SessionsPanel::currentWorkspaceChanged, this,
            &MainWindow::setCurrentWorkspace);
    connect(d->workspace, &WorkspacePanel::fileActivated, d->tabs, &FileTabs::openFileAndFocus);

    // The Workspace menu: the tree's own actions (their shortcuts act where it has focus).
    using A = WorkspacePanel::Action;
    const std::pair<A, const char *> entries[] = {
        {A::Open, "actionOpen"},         {A::AddFiles, "actionAddFiles"},
        {A::NewFile, "actionNewFile"},   {A::NewFolder, "actionNewFolder"},
        {A::Rename, "actionRename"},     {A::Download, "actionDownload"},
        {A::CopyPath, "actionCopyPath"}, {A::Delete, "actionDelete"},
    };
    for (const auto &[which, name] : entries) {
        QAction *a = d->workspace->action(which);
        a->setObjectName(QLatin1String(name));
        if (which == A::Rename || which == A::CopyPath || which == A::Delete)
            d->workspaceMenu->addSeparator();
        d->workspaceMenu->addAction(a);
    }
}

void MainWindow::createStatusBar()
{
    SandboxController *controller = m_controller;
    // Status bar: a summary of the current sandbox, progress, transient errors.
    d->summary = new QLabel(this);
    d->summary->setObjectName(QStringLiteral("statusSummary"));
    d->summary->setAccessibleName(tr("Current sandbox"));
    d->progress = new QProgressBar(this);
    d->progress->setAccessibleName(tr("Progress"));
    d->progress->setMaximumWidth(180);
    d->progress->setTextVisible(true);
    d->progress->hide();
    statusBar()->addPermanentWidget(d->progress);
    statusBar()->addPermanentWidget(d->summary);
    // The audit log's trouble stays visible (not a transient message) until it is fixed.
    d->auditHealth = new QLabel(this);
    d->auditHealth->setObjectName(QStringLiteral("auditHealthLabel"));
    d->auditHealth->setAccessibleName(tr("Audit log health"));
    d->auditHealth->setStyleSheet(QStringLiteral("color: #b00020; font-weight: bold"));
    statusBar()->addPermanentWidget(d->auditHealth);
    auto *auditMonitor = new AuditHealthMonitor(this);
    auto showAuditHealth = [this, auditMonitor] {
        d->auditHealth->setText(auditMonitor->statusText());
        d->auditHealth->setVisible(!auditMonitor->statusText().isEmpty());
        d->audit->showHealth(auditMonitor->statusText());
    };
    connect(auditMonitor, &AuditHealthMonitor::healthChanged, this, showAuditHealth);
    connect(&d->statusTimer, &QTimer::timeout, auditMonitor, &AuditHealthMonitor::refresh);
    showAuditHealth();

    connect(controller, &SandboxController::sandboxAdded, this, [this](const QString &id) {
        if (m_current.isEmpty())
            setCurrentWorkspace(id);
    });
    connect(controller, &SandboxController::sandboxRemoved, this, [this](const QString &id) {
        if (id != m_current)
            return;
        const QStringList ids = m_controller->workspaceIds();
        setCurrentWorkspace(ids.isEmpty() ? QString() : ids.constFirst());
    });
    auto progress = [this](const QString &id, int done, int total, const QString &what) {
        if (done >= total) {
            d->progress->hide();
            return;
        }
        d->progress->setRange(0, qMax(1, total));
        d->progress->setValue(done);
        d->progress->setFormat(QStringLiteral("%1 %2: %v/%m").arg(what, id));
        d->progress->show();
    };
    connect(controller, &SandboxController::seedProgress, this,
            [progress](const QString &id, int done, int total) {
                progress(id, done, total, tr("seeding"));
            });
    connect(controller, &SandboxController::flushProgress, this,
            [progress](const QString &id, int done, int total) {
                progress(id, done, total, tr("flushing"));
            });
    connect(controller, &SandboxController::sandboxStarted, d->progress, &QWidget::hide);
    connect(controller, &SandboxController::sandboxStopped, this,
            [this](const QString &id, const QString &reason) {
                d->progress->hide();
                if (reason != QLatin1String("stopped"))
                    statusBar()->showMessage(QStringLiteral("%1: %2").arg(id, reason), 15000);
            });
    connect(controller, &SandboxController::operationFailed, this,
            [this](const QString &id, const QString &operation, const QString &type,
                   const QString &message) {
                Q_UNUSED(operation)
                showError(id.isEmpty() ? QStringLiteral("%1: %2").arg(type, message)
                                       : QStringLiteral("%1: %2 (%3)").arg(type, message, id));
            });
    connect(controller->sessionsModel(), &QAbstractItemModel::dataChanged, this,
            &MainWindow::updateActions);
    connect(&d->statusTimer, &QTimer::timeout, this, &MainWindow::updateStatus);
    d->statusTimer.start(1000);
}

void MainWindow::createMenus()
{
    auto make = [this](QMenu *menu, const QString &text, const char *name, const char *icon,
                       const QKeySequence &key, auto slot) {
        QAction *a = menu->addAction(text, this, slot);
        a->setObjectName(QLatin1String(name));
        if (icon)
            a->setIcon(themeIcon(QLatin1String(icon)));
        if (!key.isEmpty())
            a->setShortcut(key);
        return a;
    };

    QMenu *file = menuBar()->addMenu(tr("&File"));
    make(file, tr("&New Sandbox…"), "actionNewSandbox", "document-new", QKeySequence::New,
         &MainWindow::newSandbox);
    make(file, tr("&Open Workspace Folder…"), "actionOpenWorkspaceFolder", "folder-open",
         QKeySequence(Qt::CTRL | Qt::Key_O), [this] {
             const QString folder = QFileDialog::getExistingDirectory(
                 this, tr("Open Workspace Folder"), QDir::homePath());
             if (!folder.isEmpty())
                 openWorkspaceFolder(folder);
         });
    d->recentSandboxes = file->addMenu(tr("Recent &Sandboxes"));
    d->recentSandboxes->setObjectName(QStringLiteral("menuRecentSandboxes"));
    d->recentSeeds = file->addMenu(tr("Recent Seed &Folders"));
    d->recentSeeds->setObjectName(QStringLiteral("menuRecentSeedFolders"));
    connect(AppSettings::instance(), &AppSettings::recentChanged, this,
            &MainWindow::updateRecentMenus);
    updateRecentMenus();
    file->addSeparator();
    make(file, tr("&Save"), "actionSave", "document-save", QKeySequence::Save,
         [this] { d->tabs->saveCurrent(); });
    make(file, tr("&Export Audit Log…"), "actionExportAuditLog", nullptr, QKeySequence(),
         &MainWindow::exportAuditLog);
    file->addSeparator();
    QAction *settings = make(file, tr("Se&ttings…"), "actionSettings", "preferences-system",
                             QKeySequence(Qt::CTRL | Qt::Key_Comma), &MainWindow::showSettings);
    settings->setMenuRole(QAction::PreferencesRole);
    file->addSeparator();
    QAction *quit = make(file, tr("&Quit"), "actionQuit", nullptr,
                         QKeySequence(Qt::CTRL | Qt::Key_Q), &QWidget::close);
    quit->setMenuRole(QAction::QuitRole);

    // The file tabs' editing actions (their shortcuts act where the tabs have focus).
    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    using E = FileTabs::EditAction;
    for (E which : {E::Find, E::FindNext, E::FindPrevious, E::Replace, E::GoToLine}) {
        if (which == E::GoToLine)
            edit->addSeparator();
        QAction *a = d->tabs->editAction(which);
        // From the menu the current tab is meant wherever the focus is.
        edit->addAction(a);
    }

    // Sandbox actions report synchronous errors (unknown id) like the asynchronous ones.
    auto onCurrent = [this](auto fn) {
        return [this, fn] {
            if (m_current.isEmpty())
                return;
            try {
                fn(m_current);
            } catch (const SandboxError &e) {
                showError(QStringLiteral("%1: %2").arg(e.specName(), e.message()));
            }
        };
    };
    QMenu *sandbox = menuBar()->addMenu(tr("&Sandbox"));
    d->sandboxMenu = sandbox;
    // A program running in one of the sandbox's terminals: ask before it is ended.
    auto terminalsAgree = [this](const QString &id) {
        auto *terminals = findChild<TerminalDock *>();
        return !terminals || terminals->confirmStop(id);
    };
    d->start = make(sandbox, tr("S&tart"), "actionStart", "media-playback-start", QKeySequence(),
                    onCurrent([this](const QString &id) { m_controller->startSandbox(id); }));
    d->stop = make(sandbox, tr("St&op (sync)"), "actionStop", "media-playback-stop", QKeySequence(),
                   onCurrent([this, terminalsAgree](const QString &id) {
                       if (terminalsAgree(id))
                           m_controller->stopSandbox(id, true);
                   }));
    d->stopNoSync = make(sandbox, tr("Stop &without sync"), "actionStopWithoutSync", nullptr,
                         QKeySequence(), onCurrent([this, terminalsAgree](const QString &id) {
                             if (terminalsAgree(id))
                                 m_controller->stopSandbox(id, false);
                         }));
    sandbox->addSeparator();
    d->flush = make(sandbox, tr("&Flush preview…"), "actionFlushPreview", "document-export",
                    QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F), &MainWindow::flushPreview);
    sandbox->addSeparator();
    d->remove =
        make(sandbox, tr("&Remove…"), "actionRemove", "edit-delete", QKeySequence(),
             onCurrent([this](const QString &id) { d->sessions->removeSandboxAsking(id); }));
    d->start->setToolTip(tr("Start the current sandbox"));
    d->stop->setToolTip(tr("Stop the current sandbox, flushing its files to the host"));
    d->remove->setToolTip(tr("Remove the current sandbox (asks first)"));

    // The workspace panel's own actions (their shortcuts act where the tree has focus).
    QMenu *workspace = menuBar()->addMenu(tr("&Workspace"));
    d->workspaceMenu = workspace;

    d->viewMenu = menuBar()->addMenu(tr("&View"));
    d->viewMenu->addAction(d->tabs->editAction(E::WordWrap));
    make(d->viewMenu, tr("&Reset Layout"), "actionResetLayout", nullptr, QKeySequence(),
         &MainWindow::resetLayout);
    // F6 / Shift+F6, as in browsers and many editors: every panel by keyboard alone.
    make(d->viewMenu, tr("Next &Panel"), "actionNextPanel", nullptr, QKeySequence(Qt::Key_F6),
         [this] { focusNextPanel(1); });
    make(d->viewMenu, tr("Pre&vious Panel"), "actionPreviousPanel", nullptr,
         QKeySequence(Qt::SHIFT | Qt::Key_F6), [this] { focusNextPanel(-1); });
    d->viewMenu->addSeparator();
    d->viewMenu->addSection(tr("Panels"));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    make(help, tr("&Keyboard Shortcuts"), "actionShortcuts", nullptr,
         QKeySequence(Qt::CTRL | Qt::Key_F1), &MainWindow::showShortcuts);
    QAction *about = make(help, tr("&About elsai workbench"), "actionAbout", "help-about",
                          QKeySequence(), &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
}

void MainWindow::createToolBar()
{
    d->toolBar = addToolBar(tr("Main Toolbar"));
    d->toolBar->setObjectName(QStringLiteral("mainToolBar")); // its key in the saved layout
    d->toolBar->setAccessibleName(tr("Main Toolbar"));
    d->toolBar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    d->toolBar->setIconSize(QSize(16, 16));
    for (const char *name :
         {"actionNewSandbox", "actionOpenWorkspaceFolder", "", "actionStart", "actionStop",
          "actionFlushPreview", "actionRemove", "", "actionSave"}) {
        if (!*name)
            d->toolBar->addSeparator();
        else if (QAction *a = action(QLatin1String(name)))
            d->toolBar->addAction(a);
    }
    d->toolBar->addAction(d->tabs->editAction(FileTabs::EditAction::Find));
    d->toolBar->addSeparator();
    // Short texts beside the icons where the menu's are long.
    for (auto [name, text] :
         {std::pair{"actionNewSandbox", tr("New")},
          std::pair{"actionOpenWorkspaceFolder", tr("Open Folder")},
          std::pair{"actionStop", tr("Stop")}, std::pair{"actionFlushPreview", tr("Flush")},
          std::pair{"actionRemove", tr("Remove")}, std::pair{"actionFind", tr("Find")}}) {
        if (QAction *a = action(QLatin1String(name)))
            a->setIconText(text);
    }
    QAction *toggle = d->toolBar->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionShowToolbar"));
    d->viewMenu->insertAction(action(QStringLiteral("actionResetLayout")), toggle);
}

void MainWindow::updateRecentMenus()
{
    AppSettings *settings = AppSettings::instance();
    d->recentSandboxes->clear();
    for (const QString &json : settings->recentSandboxes()) {
        const QJsonObject o = QJsonDocument::fromJson(json.toUtf8()).object();
        if (o.isEmpty())
            continue;
        QAction *a = d->recentSandboxes->addAction(sandboxLabel(o), this,
                                                   [this, json] { openRecentSandbox(json); });
        a->setToolTip(json);
    }
    d->recentSeeds->clear();
    for (const QString &folder : settings->recentSeedFolders()) {
        d->recentSeeds->addAction(QDir::toNativeSeparators(folder), this, [this, folder] {
            SandboxSpec spec = d->newSpec.value_or(SandboxSpec());
            spec.seedFrom = folder;
            spec.workspaceRoot.clear();
            spec.workspaceId = QFileInfo(folder).fileName();
            newSandboxFrom(spec);
        });
    }
    for (QMenu *menu : {d->recentSandboxes, d->recentSeeds}) {
        if (menu->isEmpty()) {
            menu->addAction(tr("(none yet)"))->setEnabled(false);
        } else {
            menu->addSeparator();
            menu->addAction(tr("&Clear Recent Lists"), AppSettings::instance(),
                            &AppSettings::clearRecent);
        }
    }
}

void MainWindow::rememberSandbox(const SandboxSpec &spec, bool openedFolder)
{
    // Only what is not secret and identifies the sandbox: never keys, tokens or environments.
    QJsonObject o{{QStringLiteral("workspace_id"), spec.workspaceId},
                  {QStringLiteral("backend"), spec.backend}};
    if ((spec.backend == QLatin1String("local") || spec.backend == QLatin1String("bwrap")) &&
        !spec.workspaceRoot.isEmpty())
        o.insert(QStringLiteral("workspace_root"), spec.workspaceRoot);
    if (spec.seedFrom)
        o.insert(QStringLiteral("seed_from"), *spec.seedFrom);
    if (openedFolder)
        o.insert(QStringLiteral("opened_folder"), true);
    AppSettings *settings = AppSettings::instance();
    settings->addRecentSandbox(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)));
    if (spec.seedFrom)
        settings->addRecentSeedFolder(*spec.seedFrom);
}

void MainWindow::openRecentSandbox(const QString &json)
{
    const QJsonObject o = QJsonDocument::fromJson(json.toUtf8()).object();
    if (o.value(QLatin1String("opened_folder")).toBool()) {
        openWorkspaceFolder(o.value(QLatin1String("workspace_root")).toString());
        return;
    }
    // Through the New Sandbox dialog: the user sees what will be created and confirms.
    SandboxSpec spec = d->newSpec.value_or(SandboxSpec());
    spec.workspaceId = o.value(QLatin1String("workspace_id")).toString(spec.workspaceId);
    spec.backend = o.value(QLatin1String("backend")).toString(spec.backend);
    spec.workspaceRoot = o.value(QLatin1String("workspace_root")).toString();
    if (const QString seed = o.value(QLatin1String("seed_from")).toString(); !seed.isEmpty())
        spec.seedFrom = seed;
    else
        spec.seedFrom.reset();
    newSandboxFrom(spec);
}

QDockWidget *MainWindow::addPanel(QWidget *panel, const QString &title, const QString &objectName,
                                  Qt::DockWidgetArea area)
{
    auto *dock = new QDockWidget(title, this);
    dock->setObjectName(objectName); // saveState() keys docks by object name
    dock->setAccessibleName(title);
    if (panel->accessibleName().isEmpty())
        panel->setAccessibleName(title);
    dock->setWidget(panel);
    addDockWidget(area, dock);
    d->docks.append(dock);
    d->addedArea.insert(objectName, area);
    // Columns as wide as their headers and what they show (states grow: "running", "failed").
    const auto views = panel->findChildren<QAbstractItemView *>();
    for (QAbstractItemView *view : views)
        fitColumnsToContent(view);
    nameUnnamedControls(panel, title);
    // View → the panel: opens a closed panel, brings one behind another's tab to the front
    // (both with the focus in it: the keyboard's way to a tabbed panel), hides the one in front.
    auto *toggle = new QAction(title, dock);
    toggle->setObjectName(QStringLiteral("actionShow_") + objectName);
    toggle->setCheckable(true);
    toggle->setChecked(!dock->isHidden());
    connect(dock->toggleViewAction(), &QAction::toggled, toggle, &QAction::setChecked);
    connect(toggle, &QAction::triggered, dock, [this, dock, toggle](bool checked) {
        const bool inFront = !dock->isHidden() && !dock->visibleRegion().isEmpty();
        if (!checked && inFront) {
            dock->close();
        } else {
            dock->show();
            dock->raise();
            focusPanel(dock->widget());
        }
        toggle->setChecked(!dock->isHidden());
    });
    d->viewMenu->addAction(toggle);
    // A panel registered after construction (an extension) gets its saved place back.
    if (d->restored)
        restoreDockWidget(dock);
    return dock;
}

void MainWindow::focusNextPanel(int step)
{
    // The panels on screen, in reading order: a dock hidden behind another's tab is not.
    QList<QWidget *> panels;
    for (QDockWidget *dock : std::as_const(d->docks)) {
        if (dock && dock->isVisible() && dock->widget() && !dock->visibleRegion().isEmpty())
            panels.append(dock);
    }
    std::sort(panels.begin(), panels.end(), [this](QWidget *a, QWidget *b) {
        const QPoint pa = a->mapTo(this, QPoint()), pb = b->mapTo(this, QPoint());
        return pa.y() != pb.y() ? pa.y() < pb.y() : pa.x() < pb.x();
    });
    if (QWidget *central = centralWidget())
        panels.prepend(central);
    if (panels.isEmpty())
        return;
    const QWidget *focus = QApplication::focusWidget();
    qsizetype at = -1;
    for (qsizetype i = 0; i < panels.size() && focus; ++i) {
        if (panels[i] == focus || panels[i]->isAncestorOf(focus))
            at = i;
    }
    const qsizetype n = panels.size();
    // Without a focused panel, F6 starts at the centre and Shift+F6 at the last panel.
    const qsizetype start = at >= 0 ? at : (step > 0 ? n - 1 : 0);
    for (qsizetype k = 1; k <= n; ++k) {
        QWidget *panel = panels[(start + k * step % n + n) % n];
        if (auto *dock = qobject_cast<QDockWidget *>(panel))
            panel = dock->widget();
        if (focusPanel(panel))
            return;
    }
}

bool MainWindow::focusPanel(QWidget *panel)
{
    if (!panel)
        return false;
    // Its last focused control, else the first that takes focus by Tab.
    QWidget *target = panel->focusWidget();
    for (QWidget *w = panel; !target && w;) {
        w = w->nextInFocusChain();
        if (w == panel || !panel->isAncestorOf(w))
            break;
        if ((w->focusPolicy() & Qt::TabFocus) && w->isVisible() && w->isEnabled())
            target = w;
    }
    if (target)
        target->setFocus(Qt::ShortcutFocusReason);
    return target;
}

QDockWidget *MainWindow::panelDock(const QString &objectName) const
{
    for (QDockWidget *dock : std::as_const(d->docks)) {
        if (dock && dock->objectName() == objectName)
            return dock;
    }
    return nullptr;
}

QAction *MainWindow::action(const QString &objectName) const
{
    // Menu actions belong to the window or to the panel that implements them.
    return findChild<QAction *>(objectName);
}

MainWindow::~MainWindow()
{
    delete d;
}

QSize MainWindow::defaultSize(const QRect &available)
{
    if (available.isEmpty())
        return {1280, 800};
    // Most of the screen, leaving a margin to see that it is a window; at least what the
    // panels need where the screen has it.
    const QSize most(available.width() * 9 / 10, available.height() * 9 / 10);
    return most.expandedTo(QSize(1024, 700)).boundedTo(available.size());
}

void MainWindow::applyDefaultLayout()
{
    // Every dock out first: placing them one by one into the old arrangement passes through
    // layouts taller than the window (a dock in a second bottom row before its neighbour moves),
    // and the window would keep that growth.
    const QSize before = size();
    for (QDockWidget *dock : std::as_const(d->docks)) {
        if (!dock)
            continue;
        dock->setFloating(false);
        removeDockWidget(dock);
    }
    for (const DockPlacement &p : defaultPlacements) {
        QDockWidget *dock = panelDock(QLatin1String(p.dock));
        QDockWidget *anchor = p.anchor ? panelDock(QLatin1String(p.anchor)) : nullptr;
        if (!dock)
            continue;
        dock->setFloating(false);
        if (!anchor || p.place == Place::First)
            addDockWidget(p.area, dock);
        else if (p.place == Place::Below)
            splitDockWidget(anchor, dock, Qt::Vertical);
        else if (p.place == Place::Beside)
            splitDockWidget(anchor, dock, Qt::Horizontal);
        else
            tabifyDockWidget(anchor, dock);
        dock->show();
    }
    // Docks the table does not know: back to the area they were added to.
    for (QDockWidget *dock : std::as_const(d->docks)) {
        if (!dock)
            continue;
        const bool known = std::any_of(
            std::begin(defaultPlacements), std::end(defaultPlacements),
            [dock](const DockPlacement &p) { return dock->objectName() == QLatin1String(p.dock); });
        if (!known) {
            dock->setFloating(false);
            addDockWidget(d->addedArea.value(dock->objectName(), Qt::RightDockWidgetArea), dock);
            dock->show();
        }
    }
    // The first of each tab group in front.
    for (const DockPlacement &p : defaultPlacements) {
        if (p.place == Place::Tabbed) {
            if (QDockWidget *anchor = panelDock(QLatin1String(p.anchor)))
                anchor->raise();
        }
    }
    if (d->toolBar) {
        addToolBar(Qt::TopToolBarArea, d->toolBar);
        d->toolBar->show();
    }
    if (!isMaximized() && !isFullScreen())
        resize(before.expandedTo(minimumSizeHint()));
    applyDefaultSizes();
}

void MainWindow::applyDefaultSizes()
{
    // Proportions of the window: the side columns a quarter each at most, the bottom row (the
    // console and the audit log side by side, half the width each) a third of the height.
    const QSize size = this->size();
    auto dock = [this](const char *name) { return panelDock(QLatin1String(name)); };
    QDockWidget *sessions = dock("sessionsDock"), *workspace = dock("workspaceDock"),
                *agents = dock("agentsDock"), *console = dock("consoleDock"),
                *audit = dock("auditDock");
    if (sessions && agents)
        resizeDocks(
            {sessions, agents},
            {qBound(300, size.width() * 24 / 100, 480), qBound(300, size.width() * 22 / 100, 460)},
            Qt::Horizontal);
    if (console)
        resizeDocks({console}, {qMax(240, size.height() * 36 / 100)}, Qt::Vertical);
    if (console && audit)
        resizeDocks({console, audit}, {size.width() / 2, size.width() / 2}, Qt::Horizontal);
    if (sessions && workspace) {
        const int column = size.height() * 64 / 100;
        resizeDocks({sessions, workspace}, {column * 30 / 100, column * 70 / 100}, Qt::Vertical);
    }
}

void MainWindow::resetLayout()
{
    applyDefaultLayout();
}

void MainWindow::restoreLayout()
{
    QSettings settings = AppSettings::store();
    const QByteArray geometry =
        settings.value(QLatin1String(SettingsKey::WindowGeometry)).toByteArray();
    if (geometry.isEmpty() || !restoreGeometry(geometry)) {
        const QScreen *screen = this->screen();
        const QRect available = screen ? screen->availableGeometry() : QRect();
        resize(defaultSize(available));
        if (!available.isEmpty())
            move(available.center() - rect().center());
        applyDefaultSizes();
    }
    // A layout of another version (an older default) is ignored: the default applies.
    d->layoutRestored =
        restoreState(settings.value(QLatin1String(SettingsKey::WindowState)).toByteArray(),
                     AppSettings::layoutVersion);
    d->restored = true;
}

void MainWindow::saveLayout()
{
    QSettings settings = AppSettings::store();
    settings.setValue(QLatin1String(SettingsKey::WindowGeometry), saveGeometry());
    settings.setValue(QLatin1String(SettingsKey::WindowState),
                      saveState(AppSettings::layoutVersion));
    // The keys of the layouts before versioning.
    settings.remove(QStringLiteral("geometry"));
    settings.remove(QStringLiteral("windowState"));
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (d->shownOnce)
        return;
    d->shownOnce = true;
    // The dock sizes take once the window has its real size.
    if (!d->layoutRestored)
        applyDefaultSizes();
}

WelcomePage *MainWindow::welcomePage() const
{
    return d->welcome;
}

void MainWindow::setDemoWorkspace(const QString &workspaceId)
{
    d->demoWorkspace = workspaceId;
    d->welcome->setDemo(!m_current.isEmpty() && m_current == d->demoWorkspace);
}

void MainWindow::updateCentre()
{
    const bool welcome = d->tabs->count() == 0;
    if (welcome == (d->centre->currentWidget() == d->welcome))
        return;
    // The last tab closed with the focus in it: the focus goes to the welcome page's first
    // step rather than nowhere.
    const QWidget *focus = QApplication::focusWidget();
    const bool focusInTabs = !focus || d->tabs->isAncestorOf(focus);
    d->centre->setCurrentWidget(welcome ? static_cast<QWidget *>(d->welcome) : d->tabs);
    if (welcome && focusInTabs)
        d->welcome->button(WelcomePage::Step::OpenFile)->setFocus(Qt::OtherFocusReason);
}

void MainWindow::runWelcomeStep(int step)
{
    using S = WelcomePage::Step;
    const bool demo = d->welcome->isDemo();
    auto showDock = [this](const char *name) {
        if (QDockWidget *dock = panelDock(QLatin1String(name))) {
            dock->show();
            dock->raise();
        }
    };
    switch (S(step)) {
    case S::OpenFile:
        if (demo && !m_current.isEmpty()) {
            d->tabs->openFileAndFocus(m_current, QStringLiteral("src/calc/ops.py"));
        } else {
            showDock("workspaceDock");
            d->workspace->view()->setFocus(Qt::OtherFocusReason);
        }
        break;
    case S::RunCommand:
        showDock("consoleDock");
        if (demo && !m_current.isEmpty())
            d->console->runCommand(QStringLiteral("python3 -m unittest discover -s tests -t ."));
        d->console->input()->setFocus(Qt::OtherFocusReason);
        break;
    case S::RunAgent:
        showDock("agentPlanDock");
        if (auto *plans = findChild<AgentPlanPanel *>(); plans && demo) {
            if (plans->loadPlan(QStringLiteral("demo:fix-failing-test")))
                plans->runner()->play();
        }
        break;
    case S::NewSandbox:
        newSandbox();
        break;
    case S::OpenFolder:
        if (QAction *a = action(QStringLiteral("actionOpenWorkspaceFolder")))
            a->trigger();
        break;
    case S::Shortcuts:
        showShortcuts();
        break;
    }
}

WorkspacePanel *MainWindow::workspacePanel() const
{
    return d->workspace;
}
FileTabs *MainWindow::fileTabs() const
{
    return d->tabs;
}
SessionsPanel *MainWindow::sessionsPanel() const
{
    return d->sessions;
}
ConsolePanel *MainWindow::consolePanel() const
{
    return d->console;
}
AgentsPanel *MainWindow::agentsPanel() const
{
    return d->agents;
}
AuditPanel *MainWindow::auditPanel() const
{
    return d->audit;
}

void MainWindow::setCurrentWorkspace(const QString &workspaceId)
{
    m_current = workspaceId;
    d->welcome->setDemo(!workspaceId.isEmpty() && workspaceId == d->demoWorkspace);
    d->sessions->selectWorkspace(workspaceId);
    Q_EMIT currentWorkspaceChanged(workspaceId);
    setWindowTitle(workspaceId.isEmpty() ? tr("elsai workbench")
                                         : tr("%1 — elsai workbench").arg(workspaceId));
    updateActions();
    updateStatus();
}

void MainWindow::setNewSandboxSpec(const SandboxSpec &spec)
{
    d->newSpec = spec;
}

void MainWindow::newSandbox()
{
    if (d->newSpec)
        newSandboxFrom(*d->newSpec);
    else
        newSandboxFrom(std::nullopt);
}

void MainWindow::newSandboxFrom(const std::optional<SandboxSpec> &from)
{
    if (d->newDialog) {
        d->newDialog->raise();
        d->newDialog->activateWindow();
        return;
    }
    // Window-modal and asynchronous (open(), not exec()): the GUI keeps running underneath.
    auto *dialog = new NewSandboxDialog(this);
    nameUnnamedControls(dialog, dialog->windowTitle());
    d->newDialog = dialog;
    if (from)
        dialog->setSpec(NewSandboxDialog::withFreeWorkspaceId(*from, m_controller->workspaceIds()));
    connect(dialog, &QDialog::finished, this, [this, dialog](int result) {
        if (result != QDialog::Accepted) {
            dialog->deleteLater();
            return;
        }
        SandboxSpec spec;
        try {
            spec = dialog->spec();
        } catch (const SandboxError &e) {
            // Dialog-time validation: say what is wrong and give the fields back.
            QMessageBox::warning(dialog, tr("New Sandbox"), e.message());
            dialog->open();
            return;
        }
        dialog->deleteLater();
        try {
            m_controller->addSandbox(spec);
            setCurrentWorkspace(spec.workspaceId);
            rememberSandbox(spec, false);
        } catch (const SandboxError &e) {
            showError(QStringLiteral("%1: %2").arg(e.specName(), e.message()));
        }
    });
    dialog->open();
}

void MainWindow::flushPreview()
{
    if (m_current.isEmpty() || !m_controller->sandbox(m_current))
        return;
    auto *dialog = new FlushPreviewDialog(m_controller, m_current, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    nameUnnamedControls(dialog, dialog->windowTitle());
    dialog->open();
}

void MainWindow::exportAuditLog()
{
    if (QDockWidget *dock = panelDock(QStringLiteral("auditDock")))
        dock->raise(); // the panel confirms what was written: the path and the record count
    d->audit->exportWithDialog();
}

bool MainWindow::openWorkspaceFolder(const QString &path)
{
    const QFileInfo info(path);
    const QString folder = info.canonicalFilePath();
    auto refuse = [this](const QString &text) {
        QMessageBox::warning(this, tr("Open Workspace Folder"), text);
        return false;
    };
    if (!info.isDir() || folder.isEmpty())
        return refuse(tr("'%1' is not an existing folder.").arg(path));
    if (folder == QDir::rootPath() || folder == QDir(QDir::homePath()).canonicalPath())
        return refuse(tr("'%1' is too broad to open as a workspace; choose a project folder.")
                          .arg(QDir::toNativeSeparators(folder)));
    // One sandbox per folder: two would run commands in the same files unaware of each other.
    const SessionsModel *sessions = m_controller->sessionsModel();
    for (int r = 0; r < sessions->rowCount(); ++r) {
        const SessionRow &row = sessions->session(r);
        if (QFileInfo(row.workspaceRoot).canonicalFilePath() == folder) {
            setCurrentWorkspace(row.workspaceId);
            statusBar()->showMessage(tr("%1 is already open as '%2'").arg(folder, row.workspaceId),
                                     8000);
            return false;
        }
    }
    Confirmation q;
    q.kind = QStringLiteral("open-folder");
    q.title = tr("Open Workspace Folder");
    q.text = tr("Open %1 in place, as a local sandbox? Nothing is copied: saving a file, a "
                "console command and any read-write agent change the real files at once, "
                "with no flush to review and no undo. Attach agents read-only to only look. "
                "Stopping or removing the sandbox leaves the folder as it is.")
                 .arg(QDir::toNativeSeparators(folder));
    q.acceptText = tr("Open in Place");
    if (confirm(this, q) != ConfirmAnswer::Accept)
        return false;

    SandboxSpec spec;
    spec.backend = QStringLiteral("local");
    spec.workspaceRoot = folder;
    spec.seedFrom.reset(); // nothing seeded
    spec.syncDest.reset(); // and nothing to flush to: the workspace is the destination
    QString id = QFileInfo(folder).fileName();
    try {
        checkName(id, tr("workspace id"));
    } catch (const SandboxError &) {
        id = QStringLiteral("folder");
    }
    spec.workspaceId = id.isEmpty() ? QStringLiteral("folder") : id;
    spec = NewSandboxDialog::withFreeWorkspaceId(spec, m_controller->workspaceIds());
    try {
        m_controller->addSandbox(spec);
    } catch (const SandboxError &e) {
        showError(QStringLiteral("%1: %2").arg(e.specName(), e.message()));
        return false;
    }
    setCurrentWorkspace(spec.workspaceId);
    rememberSandbox(spec, true);
    return true;
}

void MainWindow::showSettings()
{
    auto *dialog = new SettingsDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

void MainWindow::showShortcuts()
{
    auto *dialog = new ShortcutsDialog(this, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

void MainWindow::showAbout()
{
    auto *box = new QMessageBox(this);
    box->setObjectName(QStringLiteral("aboutDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowTitle(tr("About elsai workbench"));
    box->setAccessibleName(tr("About elsai workbench"));
    box->setIconPixmap(QApplication::windowIcon().pixmap(64, 64));
    box->setTextFormat(Qt::RichText);
    box->setText(tr("<h3>elsai workbench %1</h3>"
                    "<p>A desktop workbench, headless engine and MCP server for AI-agent "
                    "sandboxes.</p>"
                    "<p>Licence: MIT. Built with Qt %2 (running on Qt %3).</p>"
                    "<p><a href=\"https://elsai.dev/\">https://elsai.dev/</a></p>")
                     .arg(QStringLiteral(ELSAI_VERSION), QStringLiteral(QT_VERSION_STR),
                          QString::fromLatin1(qVersion())));
    box->setTextInteractionFlags(Qt::TextBrowserInteraction);
    box->setStandardButtons(QMessageBox::Close);
    box->open();
}

QString MainWindow::statusSummary() const
{
    return d->summary->text();
}

void MainWindow::updateStatus()
{
    const SessionsModel *model = m_controller->sessionsModel();
    const int row = m_current.isEmpty() ? -1 : model->rowOf(m_current);
    if (row < 0) {
        d->summary->setText(tr("no sandbox"));
        return;
    }
    const SessionRow &s = model->session(row);
    QStringList parts{s.workspaceId, s.backend, toString(s.state)};
    if (s.ttlSeconds) {
        const auto left = s.ttlRemaining();
        parts << (left ? tr("TTL %1").arg(formatDuration(left)) : tr("TTL —"));
    } else {
        parts << tr("no TTL");
    }
    d->summary->setText(parts.join(QStringLiteral(" · ")));
    d->summary->setToolTip(s.workspaceRoot);
}

void MainWindow::updateActions()
{
    const bool known = !m_current.isEmpty() && m_controller->sandbox(m_current);
    const SessionState state = m_controller->state(m_current);
    const bool running = known && state == SessionState::Running;
    d->start->setEnabled(known && !running && state != SessionState::Starting &&
                         state != SessionState::Stopping);
    d->stop->setEnabled(running);
    d->stopNoSync->setEnabled(running);
    d->flush->setEnabled(running);
    d->remove->setEnabled(known);
}

void MainWindow::showError(const QString &text)
{
    statusBar()->showMessage(text, 15000);
}

QStringList MainWindow::busyWork() const
{
    QStringList busy;
    if (d->shutDown)
        return busy;
    if (const int commands = m_controller->runningCommandCount(); commands > 0)
        busy.append(tr("%n console command(s) running — killed", nullptr, commands));
    const auto plans = findChildren<AgentPlanPanel *>();
    for (const AgentPlanPanel *panel : plans) {
        const PlanRunner *runner = panel->runner();
        const PlanRunner::State state = runner->state();
        if (runner->isBusy() || state == PlanRunner::State::Running ||
            state == PlanRunner::State::Stepping || state == PlanRunner::State::Pausing)
            busy.append(tr("scripted agent '%1' playing — stopped")
                            .arg(runner->plan() ? runner->plan()->name : QString()));
    }
    if (const McpServerModel *mcp = d->mcp->model(); mcp->isRunning()) {
        int sessions = 0;
        for (int r = 0; r < mcp->rowCount(); ++r)
            sessions += mcp->sessionCount(mcp->agent(r).name);
        busy.append(sessions > 0 ? tr("MCP server of '%1' with %n session(s) connected — ended",
                                      nullptr, sessions)
                                       .arg(mcp->workspaceId())
                                 : tr("MCP server of '%1' — stopped").arg(mcp->workspaceId()));
    }
    if (const auto *terminals = findChild<TerminalDock *>())
        for (const QString &program : terminals->runningPrograms())
            busy.append(tr("%1 — ended").arg(program));
    return busy;
}

bool MainWindow::isShutDown() const
{
    return d->shutDown;
}

void MainWindow::shutdown()
{
    if (d->shutDown)
        return;
    d->shutDown = true;
    // 1. Stop accepting work: no menu, shortcut or panel starts anything now.
    d->statusTimer.stop();
    menuBar()->setEnabled(false);
    for (QAction *a : findChildren<QAction *>())
        a->setEnabled(false);
    if (QWidget *central = centralWidget())
        central->setEnabled(false);
    for (QDockWidget *dock : std::as_const(d->docks)) {
        if (dock)
            dock->setEnabled(false);
    }
    if (d->newDialog)
        d->newDialog->reject();
    // 2. Cancel the plans (their running command is killed; each waits for its step) and the
    //    console's commands.
    const auto plans = findChildren<AgentPlanPanel *>();
    for (AgentPlanPanel *panel : plans)
        panel->runner()->shutdown();
    m_controller->cancelAllCommands();
    for (TerminalDock *terminals : findChildren<TerminalDock *>())
        terminals->closeAll(); // each ends its process tree in the background
    // 3. End the MCP sessions (their calls are cancelled) and stop the servers.
    d->mcp->model()->stop();
    // 4. The controller: waits for its pool, stops every sandbox, emits nothing more.
    m_controller->shutdown();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!d->shutDown) {
        if (const QStringList unsaved = d->tabs->modifiedFiles(); !unsaved.isEmpty()) {
            Confirmation q;
            q.kind = QStringLiteral("unsaved");
            q.title = tr("Quit");
            q.text = tr("%n file(s) have unsaved changes. Save them before quitting? Discard "
                        "loses them.",
                        nullptr, int(unsaved.size()));
            q.items = unsaved;
            q.offerSave = true;
            const ConfirmAnswer answer = confirm(this, q);
            if (answer == ConfirmAnswer::Cancel) {
                event->ignore();
                return;
            }
            QString error;
            if (answer == ConfirmAnswer::Save && !d->tabs->saveAllAndWait(&error)) {
                showError(tr("Not quitting: saving failed — %1").arg(error));
                event->ignore();
                return;
            }
        }
        if (const QStringList busy = busyWork(); !busy.isEmpty()) {
            Confirmation q;
            q.kind = QStringLiteral("quit-busy");
            q.title = tr("Quit");
            q.text = tr("Work is still running. Quit anyway? What runs is stopped; the "
                        "sandboxes stop without a flush (their folders stay on disk).");
            q.items = busy;
            q.acceptText = tr("Quit");
            if (confirm(this, q) != ConfirmAnswer::Accept) {
                event->ignore();
                return;
            }
        }
    }
    saveLayout();
    // The teardown itself is shutdown(), run by the application once its event loop ended
    // (the last window closed): a window closed while others share the controller (tests)
    // leaves it running.
    QMainWindow::closeEvent(event);
}

} // namespace elsai
