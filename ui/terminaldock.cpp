// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "terminaldock.h"

#include "icons.h"
#include "ptyfactory.h"
#include "ptysession.h"
#include "sandboxcontroller.h"
#include "terminalwidget.h"

#include <QAction>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QStackedWidget>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace elsai {

// ---- one tab

TerminalPane::TerminalPane(PtySession *session, QWidget *parent)
    : QWidget(parent), m_session(session), m_view(new TerminalWidget(this)),
      m_findBar(new QWidget(this)), m_findText(new QLineEdit(m_findBar)),
      m_endBar(new QWidget(this)), m_endLabel(new QLabel(m_endBar))
{
    session->setParent(this);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_view, 1);

    auto *find = new QHBoxLayout(m_findBar);
    find->setContentsMargins(4, 2, 4, 2);
    m_findText->setPlaceholderText(tr("Find in the terminal"));
    m_findText->setAccessibleName(tr("Find in the terminal"));
    m_findText->setClearButtonEnabled(true);
    auto *previous = new QPushButton(tr("&Previous"), m_findBar);
    auto *next = new QPushButton(tr("&Next"), m_findBar);
    auto *close = new QToolButton(m_findBar);
    close->setText(tr("Close"));
    close->setAccessibleName(tr("Close the find bar"));
    find->addWidget(m_findText, 1);
    find->addWidget(previous);
    find->addWidget(next);
    find->addWidget(close);
    layout->addWidget(m_findBar);
    m_findBar->hide();
    connect(m_findText, &QLineEdit::returnPressed, this, [this] { this->find(true); });
    connect(previous, &QPushButton::clicked, this, [this] { this->find(true); });
    connect(next, &QPushButton::clicked, this, [this] { this->find(false); });
    connect(close, &QToolButton::clicked, this, [this] {
        m_findBar->hide();
        m_view->setFocus();
    });
    connect(m_view, &TerminalWidget::findRequested, this, &TerminalPane::showFindBar);

    auto *end = new QHBoxLayout(m_endBar);
    end->setContentsMargins(4, 2, 4, 2);
    auto *restart = new QPushButton(tr("&Restart"), m_endBar);
    restart->setAccessibleName(tr("Restart the terminal"));
    end->addWidget(m_endLabel, 1);
    end->addWidget(restart);
    layout->addWidget(m_endBar);
    m_endBar->hide();
    connect(restart, &QPushButton::clicked, this, &TerminalPane::restartRequested);

    m_view->setSession(session);
    connect(m_view, &TerminalWidget::titleChanged, this, [this](const QString &t) {
        m_programTitle = t;
        Q_EMIT titleChanged();
    });
    connect(session, &PtySession::started, this, &TerminalPane::titleChanged);
    connect(session, &PtySession::finished, this, [this](int code, const QString &error) {
        m_endLabel->setText(error.isEmpty() ? tr("The shell ended (exit code %1).").arg(code)
                                            : tr("The terminal ended: %1").arg(error));
        m_endBar->show();
        Q_EMIT titleChanged();
    });
}

TerminalPane::~TerminalPane() = default;

QString TerminalPane::title() const
{
    QString t = m_programTitle.isEmpty() ? m_session->programName() : m_programTitle;
    if (t.size() > 32)
        t = t.left(31) + QChar(0x2026);
    return m_session->state() == PtySession::State::Finished ? tr("%1 (ended)").arg(t) : t;
}

void TerminalPane::showFindBar()
{
    m_findBar->show();
    m_findText->setFocus();
    m_findText->selectAll();
}

void TerminalPane::find(bool backwards)
{
    if (!m_view->find(m_findText->text(), backwards))
        m_findText->setStyleSheet(QStringLiteral("color: #b00020"));
    else
        m_findText->setStyleSheet(QString());
}

// ---- the panel

TerminalDock::TerminalDock(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller),
      m_newAction(new QAction(tr("New &Terminal"), this)), m_stack(new QStackedWidget(this)),
      m_empty(new QLabel(this))
{
    m_newAction->setObjectName(QStringLiteral("actionNewTerminal"));
    // Ctrl+Alt+T reaches the program inside a terminal (it takes every Ctrl/Alt key); from
    // there Ctrl+Shift+T opens another one, as in Konsole and GNOME Terminal.
    m_newAction->setShortcuts({QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_T),
                               QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T)});
    m_newAction->setIcon(themeIcon(QStringLiteral("utilities-terminal")));
    m_newAction->setIconText(tr("Terminal"));
    connect(m_newAction, &QAction::triggered, this, [this] { openTerminal(); });

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(4, 2, 4, 2);
    auto *newButton = new QToolButton(this);
    newButton->setDefaultAction(m_newAction);
    newButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    auto *note = new QLabel(tr("A terminal is yours, not an agent's: agents' read-only attach "
                               "modes do not apply to it."),
                            this);
    note->setWordWrap(true);
    note->setObjectName(QStringLiteral("terminalModeNote"));
    QFont small = note->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    note->setFont(small);
    bar->addWidget(newButton);
    bar->addWidget(note, 1);
    layout->addLayout(bar);
    layout->addWidget(m_stack, 1);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_stack->addWidget(m_empty);

    connect(controller, &SandboxController::sandboxStarted, this, &TerminalDock::updateAction);
    connect(controller, &SandboxController::sandboxStopped, this,
            [this](const QString &id, const QString &reason) {
                const QStringList running = runningPrograms(id);
                closeTerminals(id);
                if (!running.isEmpty())
                    Q_EMIT message(tr("%1 stopped (%2): its terminals were closed, ending %3")
                                       .arg(id, reason, running.join(QStringLiteral(", "))));
                updateAction();
            });
    connect(controller, &SandboxController::sandboxRemoved, this, [this](const QString &id) {
        closeTerminals(id);
        if (QTabWidget *tabs = m_tabs.take(id))
            tabs->deleteLater();
        updateAction();
    });
    setWorkspace(QString());
}

TerminalDock::~TerminalDock() = default;

QTabWidget *TerminalDock::tabsFor(const QString &workspaceId)
{
    if (QTabWidget *tabs = m_tabs.value(workspaceId))
        return tabs;
    auto *tabs = new QTabWidget(m_stack);
    tabs->setAccessibleName(tr("Terminals of %1").arg(workspaceId));
    tabs->setTabsClosable(true);
    tabs->setMovable(true);
    tabs->setDocumentMode(true);
    connect(tabs, &QTabWidget::tabCloseRequested, this,
            [this, tabs](int index) { closeTab(tabs, index, true); });
    m_stack->addWidget(tabs);
    m_tabs.insert(workspaceId, tabs);
    return tabs;
}

void TerminalDock::setWorkspace(const QString &workspaceId)
{
    m_current = workspaceId;
    QTabWidget *tabs = m_tabs.value(workspaceId);
    if (tabs && tabs->count() > 0) {
        m_stack->setCurrentWidget(tabs);
    } else {
        m_stack->setCurrentWidget(m_empty);
    }
    updateAction();
}

void TerminalDock::updateAction()
{
    const SandboxPtr sandbox = m_current.isEmpty() ? nullptr : m_controller->sandbox(m_current);
    const PtySupport support = ptySupport(sandbox ? sandbox->backend().get() : nullptr);
    m_newAction->setEnabled(support.available);
    const QString tip =
        support.available ? tr("Open a terminal in %1").arg(m_current) : support.reason;
    m_newAction->setToolTip(tip);
    m_newAction->setStatusTip(tip);
    m_empty->setText(m_current.isEmpty() ? tr("No sandbox is selected.")
                     : support.available ? tr("No terminal is open in %1. New Terminal opens a "
                                              "shell in its workspace.")
                                               .arg(m_current)
                                         : support.reason);
}

TerminalPane *TerminalDock::openTerminal()
{
    const SandboxPtr sandbox = m_current.isEmpty() ? nullptr : m_controller->sandbox(m_current);
    const BackendPtr backend = sandbox ? sandbox->backend() : nullptr;
    const PtySupport support = ptySupport(backend.get());
    if (!support.available) {
        Q_EMIT message(support.reason);
        return nullptr;
    }
    const QString id = m_current;
    PtySession *session = createPtySession(backend, id);
    if (!session)
        return nullptr;
    // Typing keeps the sandbox from expiring under an active terminal.
    session->setActivityCallback([manager = sandbox->manager(), id] { manager->touch(id); });
    QTabWidget *tabs = tabsFor(id);
    auto *pane = new TerminalPane(session, tabs);
    const int index = tabs->addTab(pane, pane->title());
    tabs->setCurrentIndex(index);
    m_stack->setCurrentWidget(tabs);
    connect(pane, &TerminalPane::titleChanged, this, [tabs, pane] {
        const int i = tabs->indexOf(pane);
        if (i >= 0) {
            tabs->setTabText(i, pane->title());
            tabs->setTabToolTip(i, pane->title());
        }
    });
    connect(pane, &TerminalPane::restartRequested, this, [this, tabs, pane, id] {
        const int i = tabs->indexOf(pane);
        if (i >= 0)
            closeTab(tabs, i, false);
        if (m_current == id)
            openTerminal();
    });
    const QSize cells(pane->view()->screen()->columns(), pane->view()->screen()->rows());
    session->start(cells.width(), cells.height());
    pane->view()->setFocus();
    return pane;
}

QList<TerminalPane *> TerminalDock::terminals(const QString &workspaceId) const
{
    QList<TerminalPane *> out;
    if (QTabWidget *tabs = m_tabs.value(workspaceId)) {
        for (int i = 0; i < tabs->count(); ++i) {
            if (auto *pane = qobject_cast<TerminalPane *>(tabs->widget(i)))
                out.append(pane);
        }
    }
    return out;
}

QStringList TerminalDock::runningPrograms(const QString &workspaceId) const
{
    QStringList out;
    for (auto it = m_tabs.cbegin(); it != m_tabs.cend(); ++it) {
        if (!workspaceId.isEmpty() && it.key() != workspaceId)
            continue;
        for (TerminalPane *pane : terminals(it.key())) {
            if (pane->session()->hasForegroundProgram())
                out << tr("a program in the terminal '%1' of %2").arg(pane->title(), it.key());
        }
    }
    return out;
}

bool TerminalDock::confirmStop(const QString &workspaceId)
{
    const QStringList running = runningPrograms(workspaceId);
    if (running.isEmpty())
        return true;
    return QMessageBox::question(
               this, tr("Stop %1").arg(workspaceId),
               tr("Stopping the sandbox closes its terminals and ends what runs in them:\n%1\n\n"
                  "Stop it anyway?")
                   .arg(running.join(QLatin1Char('\n'))),
               QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) == QMessageBox::Yes;
}

void TerminalDock::closeTerminals(const QString &workspaceId)
{
    QTabWidget *tabs = m_tabs.value(workspaceId);
    if (!tabs)
        return;
    while (tabs->count() > 0)
        closeTab(tabs, tabs->count() - 1, false);
}

void TerminalDock::closeAll()
{
    for (const QString &id : m_tabs.keys())
        closeTerminals(id);
}

void TerminalDock::closeTab(QTabWidget *tabs, int index, bool ask)
{
    auto *pane = qobject_cast<TerminalPane *>(tabs->widget(index));
    if (!pane)
        return;
    if (ask && pane->session()->hasForegroundProgram() &&
        QMessageBox::question(this, tr("Close terminal"),
                              tr("A program is still running in '%1'. Closing the terminal ends "
                                 "it. Close anyway?")
                                  .arg(pane->title()),
                              QMessageBox::Close | QMessageBox::Cancel,
                              QMessageBox::Cancel) != QMessageBox::Close)
        return;
    tabs->removeTab(index);
    discard(pane);
    if (tabs->count() == 0 && m_stack->currentWidget() == tabs)
        m_stack->setCurrentWidget(m_empty);
}

void TerminalDock::discard(TerminalPane *pane)
{
    // The session ends in the background (its process tree gets HUP, TERM, then KILL after the
    // grace); the pane goes once it has: the window never waits for it.
    pane->hide();
    pane->setParent(this);
    PtySession *session = pane->session();
    if (session->state() == PtySession::State::Finished) {
        pane->deleteLater();
        return;
    }
    connect(session, &PtySession::finished, pane, &QObject::deleteLater);
    session->terminate();
}

} // namespace elsai
