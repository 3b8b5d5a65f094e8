// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mainwindow.h"

#include "agentplanpanel.h"
#include "agentspanel.h"
#include "audithealthmonitor.h"
#include "auditpanel.h"
#include "changespanel.h"
#include "confirm.h"
#include "consolepanel.h"
#include "errors.h"
#include "filetabs.h"
#include "flushpreviewdialog.h"
#include "inspectpanel.h"
#include "mcppanel.h"
#include "mcpservermodel.h"
#include "newsandboxdialog.h"
#include "sandboxcontroller.h"
#include "sessionsmodel.h"
#include "sessionspanel.h"
#include "workspacepanel.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>

namespace elsai {

struct MainWindow::Private
{
    FileTabs *tabs = nullptr;
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
    QList<QPointer<QDockWidget>> docks; ///< every registered panel (removed ones turn null)
    bool restored = false; ///< restoreState() ran: later panels use restoreDockWidget()
    bool shutDown = false;
};

static QSettings windowSettings()
{
    return QSettings(QStringLiteral("elsai"), QStringLiteral("workbench"));
}

MainWindow::MainWindow(SandboxController *controller, QWidget *parent)
    : QMainWindow(parent), m_controller(controller), d(new Private)
{
    setWindowTitle(tr("elsai workbench"));
    setObjectName(QStringLiteral("mainWindow"));
    setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);

    d->tabs = new FileTabs(controller, this);
    setCentralWidget(d->tabs);
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

    // The menus come first so that addPanel() can list each dock in the View menu.
    createMenus();
    QDockWidget *sessionsDock = addPanel(d->sessions, tr("Sessions"),
                                         QStringLiteral("sessionsDock"), Qt::LeftDockWidgetArea);
    QDockWidget *workspaceDock = addPanel(d->workspace, tr("Workspace"),
                                          QStringLiteral("workspaceDock"), Qt::LeftDockWidgetArea);
    QDockWidget *consoleDock = addPanel(d->console, tr("Console"), QStringLiteral("consoleDock"),
                                        Qt::BottomDockWidgetArea);
    QDockWidget *agentsDock =
        addPanel(d->agents, tr("Agents"), QStringLiteral("agentsDock"), Qt::RightDockWidgetArea);
    QDockWidget *auditDock =
        addPanel(d->audit, tr("Audit"), QStringLiteral("auditDock"), Qt::BottomDockWidgetArea);
    splitDockWidget(sessionsDock, workspaceDock, Qt::Vertical);
    resizeDocks({sessionsDock, workspaceDock}, {160, 400}, Qt::Vertical);
    resizeDocks({consoleDock}, {260}, Qt::Vertical);
    resizeDocks({sessionsDock, agentsDock}, {320, 300}, Qt::Horizontal);
    tabifyDockWidget(consoleDock, auditDock);
    consoleDock->raise();
    // Scripted agents: a dock beside the agents panel, opened from the Sandbox menu.
    QDockWidget *plansDock = addPanel(plans, tr("Scripted Agent"), QStringLiteral("agentPlanDock"),
                                      Qt::RightDockWidgetArea);
    tabifyDockWidget(agentsDock, plansDock);
    agentsDock->raise();
    QAction *runPlan =
        d->sandboxMenu->addAction(tr("Run a Scripted &Agent…"), plansDock, [plansDock] {
            plansDock->show();
            plansDock->raise();
        });
    runPlan->setObjectName(QStringLiteral("actionRunScriptedAgent"));
    d->mcp = new McpPanel(controller, this); // the MCP server of the current sandbox
    connect(this, &MainWindow::currentWorkspaceChanged, d->mcp, &McpPanel::setWorkspace);
    QDockWidget *mcpDock =
        addPanel(d->mcp, tr("MCP"), QStringLiteral("mcpDock"), Qt::RightDockWidgetArea);
    tabifyDockWidget(agentsDock, mcpDock);
    agentsDock->raise();
    // What happened and what it is: the Changes panel beside the audit log, Inspect beside the
    // agents (ui/changespanel.*, ui/inspectpanel.*).
    auto *changes = new ChangesPanel(controller, this);
    connect(this, &MainWindow::currentWorkspaceChanged, changes, &ChangesPanel::setWorkspace);
    QDockWidget *changesDock =
        addPanel(changes, tr("Changes"), QStringLiteral("changesDock"), Qt::BottomDockWidgetArea);
    tabifyDockWidget(auditDock, changesDock);
    auto *inspect = new InspectPanel(controller, this);
    inspect->setMcpModel(d->mcp->model());
    connect(this, &MainWindow::currentWorkspaceChanged, inspect, &InspectPanel::setWorkspace);
    QDockWidget *inspectDock =
        addPanel(inspect, tr("Inspect"), QStringLiteral("inspectDock"), Qt::RightDockWidgetArea);
    tabifyDockWidget(agentsDock, inspectDock);
    agentsDock->raise();
    consoleDock->raise();

    // Status bar: a summary of the current sandbox, progress, transient errors.
    d->summary = new QLabel(this);
    d->progress = new QProgressBar(this);
    d->progress->setMaximumWidth(180);
    d->progress->setTextVisible(true);
    d->progress->hide();
    statusBar()->addPermanentWidget(d->progress);
    statusBar()->addPermanentWidget(d->summary);
    // The audit log's trouble stays visible (not a transient message) until it is fixed.
    d->auditHealth = new QLabel(this);
    d->auditHealth->setObjectName(QStringLiteral("auditHealthLabel"));
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

    connect(d->sessions, &SessionsPanel::currentWorkspaceChanged, this,
            &MainWindow::setCurrentWorkspace);
    connect(d->workspace, &WorkspacePanel::fileActivated, d->tabs, &FileTabs::openFile);
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

    resize(1280, 800);
    QSettings settings = windowSettings();
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
    d->restored = true;

    if (const QStringList ids = controller->workspaceIds(); !ids.isEmpty())
        setCurrentWorkspace(ids.constFirst());
    else
        setCurrentWorkspace(QString());
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *newAction = file->addAction(tr("&New Sandbox…"), this, &MainWindow::newSandbox);
    newAction->setObjectName(QStringLiteral("actionNewSandbox"));
    newAction->setShortcut(QKeySequence::New);
    QAction *save = file->addAction(tr("&Save"), this, [this] { d->tabs->saveCurrent(); });
    save->setObjectName(QStringLiteral("actionSave"));
    save->setShortcut(QKeySequence::Save);
    QAction *exportAudit =
        file->addAction(tr("&Export Audit Log…"), this, &MainWindow::exportAuditLog);
    exportAudit->setObjectName(QStringLiteral("actionExportAuditLog"));
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setObjectName(QStringLiteral("actionQuit"));
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quit->setMenuRole(QAction::QuitRole);

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
    d->start = sandbox->addAction(tr("S&tart"), this, onCurrent([this](const QString &id) {
                                      m_controller->startSandbox(id);
                                  }));
    d->start->setObjectName(QStringLiteral("actionStart"));
    d->stop = sandbox->addAction(tr("St&op (sync)"), this, onCurrent([this](const QString &id) {
                                     m_controller->stopSandbox(id, true);
                                 }));
    d->stop->setObjectName(QStringLiteral("actionStop"));
    d->stopNoSync = sandbox->addAction(
        tr("Stop &without sync"), this,
        onCurrent([this](const QString &id) { m_controller->stopSandbox(id, false); }));
    d->stopNoSync->setObjectName(QStringLiteral("actionStopWithoutSync"));
    sandbox->addSeparator();
    d->flush = sandbox->addAction(tr("&Flush preview…"), this, &MainWindow::flushPreview);
    d->flush->setObjectName(QStringLiteral("actionFlushPreview"));
    d->flush->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
    sandbox->addSeparator();
    d->remove = sandbox->addAction(tr("&Remove…"), this, onCurrent([this](const QString &id) {
                                       d->sessions->removeSandboxAsking(id);
                                   }));
    d->remove->setObjectName(QStringLiteral("actionRemove"));

    // The workspace panel's own actions (their shortcuts act where the tree has focus).
    QMenu *workspace = menuBar()->addMenu(tr("&Workspace"));
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
            workspace->addSeparator();
        workspace->addAction(a);
    }

    d->viewMenu = menuBar()->addMenu(tr("&View"));
}

QDockWidget *MainWindow::addPanel(QWidget *panel, const QString &title, const QString &objectName,
                                  Qt::DockWidgetArea area)
{
    auto *dock = new QDockWidget(title, this);
    dock->setObjectName(objectName); // saveState() keys docks by object name
    dock->setWidget(panel);
    addDockWidget(area, dock);
    d->docks.append(dock);
    QAction *toggle = dock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionShow_") + objectName);
    d->viewMenu->addAction(toggle);
    // A panel registered after construction (an extension) gets its saved place back.
    if (d->restored)
        restoreDockWidget(dock);
    return dock;
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
    if (d->newDialog) {
        d->newDialog->raise();
        d->newDialog->activateWindow();
        return;
    }
    // Window-modal and asynchronous (open(), not exec()): the GUI keeps running underneath.
    auto *dialog = new NewSandboxDialog(this);
    d->newDialog = dialog;
    if (d->newSpec)
        dialog->setSpec(
            NewSandboxDialog::withFreeWorkspaceId(*d->newSpec, m_controller->workspaceIds()));
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
    dialog->open();
}

void MainWindow::exportAuditLog()
{
    if (QDockWidget *dock = panelDock(QStringLiteral("auditDock")))
        dock->raise(); // the panel confirms what was written: the path and the record count
    d->audit->exportWithDialog();
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
    QSettings settings = windowSettings();
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState());
    // The teardown itself is shutdown(), run by the application once its event loop ended
    // (the last window closed): a window closed while others share the controller (tests)
    // leaves it running.
    QMainWindow::closeEvent(event);
}

} // namespace elsai
