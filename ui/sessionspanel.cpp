#include "sessionspanel.h"

#include "errors.h"
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
    : QWidget(parent)
    , m_controller(controller)
    , m_view(makeTable(this))
    , m_start(new QPushButton(tr("Start"), this))
    , m_stop(new QPushButton(tr("Stop"), this))
    , m_remove(new QPushButton(tr("Remove"), this))
{
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
    layout->addWidget(m_view);
    layout->addLayout(buttons);

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
            guarded([this](const QString &id) { m_controller->removeSandbox(id); }));
    updateButtons();
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
    m_view->selectionModel()->setCurrentIndex(
        index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void SessionsPanel::updateButtons()
{
    const QString id = selectedWorkspace();
    const SessionState state = m_controller->state(id);
    const bool known = !id.isEmpty() && m_controller->sandbox(id);
    m_start->setEnabled(known
                        && (state == SessionState::Stopped || state == SessionState::Expired
                            || state == SessionState::Failed));
    m_stop->setEnabled(known && state == SessionState::Running);
    m_remove->setEnabled(known);
}

} // namespace elsai
