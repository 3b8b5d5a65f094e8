// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sessionspanel.h"

#include "agentsmodel.h"
#include "confirm.h"
#include "errors.h"
#include "messagebar.h"
#include "modelroles.h"
#include "panelwidgets.h"
#include "sandboxcontroller.h"
#include "sessionsmodel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace elsai {

SessionsPanel::SessionsPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_view(makeTable(this)),
      m_start(new QPushButton(tr("Start"), this)), m_stop(new QPushButton(tr("Stop"), this)),
      m_remove(new QPushButton(tr("Remove"), this)), m_bar(new MessageBar(this))
{
    m_bar->setObjectName(QStringLiteral("sessionsMessageBar"));
    m_view->setAccessibleName(tr("Sandboxes"));
    SessionsModel *model = controller->sessionsModel();
    m_view->setModel(model);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_stop->setToolTip(tr("Stop and sync the allowed artifacts back to the host"));
    m_remove->setToolTip(tr("Stop without sync and forget the sandbox (its folder stays)"));

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_start);
    buttons->addWidget(m_stop);
    buttons->addWidget(m_remove);
    buttons->addStretch();
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_bar);
    layout->addWidget(m_view);
    layout->addLayout(buttons);

    connect(controller, &SandboxController::operationWarning, this,
            [this](const QString &id, const QString &operation, const QString &message) {
                if (operation != QLatin1String("seed")) // the workspace panel shows those
                    m_bar->showMessage(tr("%1 of '%2' — %3").arg(operation, id, message),
                                       MessageBar::Type::Warning);
            });
    connect(controller, &SandboxController::operationFailed, this,
            [this](const QString &id, const QString &operation, const QString &type,
                   const QString &message) {
                if (operation == QLatin1String("start") || operation == QLatin1String("stop") ||
                    operation == QLatin1String("flush"))
                    m_bar->showMessage(
                        tr("%1 of '%2' failed — %3: %4").arg(operation, id, type, message),
                        MessageBar::Type::Error);
            });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                const QString id = current.data(Roles::WorkspaceIdRole).toString();
                updateButtons();
                if (id == m_selected)
                    return;
                m_selected = id;
                Q_EMIT currentWorkspaceChanged(id);
            });
    connect(model, &QAbstractItemModel::dataChanged, this, &SessionsPanel::updateButtons);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &SessionsPanel::updateButtons);
    // Errors of these calls reach the status bar through operationFailed.
    auto guarded = [this](auto fn) {
        return [this, fn] {
            const QString id = selectedWorkspace();
            if (id.isEmpty())
                return;
            try {
                fn(id);
            } catch (const SandboxError &e) {
                Q_EMIT m_controller->operationFailed(id, QString(), e.specName(), e.message());
            }
        };
    };
    connect(m_start, &QPushButton::clicked, this,
            guarded([this](const QString &id) { m_controller->startSandbox(id); }));
    connect(m_stop, &QPushButton::clicked, this,
            guarded([this](const QString &id) { m_controller->stopSandbox(id, true); }));
    connect(m_remove, &QPushButton::clicked, this,
            guarded([this](const QString &id) { removeSandboxAsking(id); }));
    updateButtons();
}

bool SessionsPanel::removeSandboxAsking(const QString &workspaceId)
{
    const SandboxPtr sandbox = m_controller->sandbox(workspaceId);
    if (!sandbox)
        return false;
    const SessionState state = m_controller->state(workspaceId);
    const int row = m_controller->sessionsModel()->rowOf(workspaceId);
    const QString folder =
        row >= 0 ? m_controller->sessionsModel()->session(row).workspaceRoot : QString();
    Confirmation q;
    q.kind = QStringLiteral("remove-sandbox");
    q.title = tr("Remove %1").arg(workspaceId);
    q.acceptText = tr("Remove");
    q.text = tr("Remove sandbox '%1' from the workbench? It is stopped without a flush: "
                "changes not flushed are not copied back to the host.")
                 .arg(workspaceId);
    if (!folder.isEmpty())
        q.text += QLatin1Char(' ') + tr("Its workspace folder stays on disk (%1).").arg(folder);
    if (state == SessionState::Running || state == SessionState::Starting) {
        q.items.append(tr("it is %1 now").arg(toString(state)));
        const AgentsModel *agents = m_controller->agentsModel();
        QStringList names;
        for (int r = 0; r < agents->rowCount(); ++r) {
            const AgentRow &a = agents->agent(r);
            if (a.workspaceId == workspaceId && a.name != SandboxController::consoleAgent())
                names.append(QStringLiteral("%1 (%2)").arg(a.name, a.mode));
        }
        if (!names.isEmpty())
            q.items.append(
                tr("attached agents are detached: %1").arg(names.join(QStringLiteral(", "))));
        if (const int running = m_controller->runningCommandCount(workspaceId); running > 0)
            q.items.append(tr("%n running command(s) are killed", nullptr, running));
    }
    if (confirm(this, q) != ConfirmAnswer::Accept)
        return false;
    m_controller->removeSandbox(workspaceId);
    return true;
}

QString SessionsPanel::selectedWorkspace() const
{
    return m_view->selectionModel()->currentIndex().data(Roles::WorkspaceIdRole).toString();
}

void SessionsPanel::selectWorkspace(const QString &workspaceId)
{
    const int row = m_controller->sessionsModel()->rowOf(workspaceId);
    if (row < 0) {
        m_view->selectionModel()->clearCurrentIndex();
        return;
    }
    const QModelIndex index = m_controller->sessionsModel()->index(row, 0);
    m_view->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
}

void SessionsPanel::updateButtons()
{
    const QString id = selectedWorkspace();
    const SessionState state = m_controller->state(id);
    const bool known = !id.isEmpty() && m_controller->sandbox(id);
    m_start->setEnabled(known && (state == SessionState::Stopped ||
                                  state == SessionState::Expired || state == SessionState::Failed));
    m_stop->setEnabled(known && state == SessionState::Running);
    m_remove->setEnabled(known);
}

} // namespace elsai
