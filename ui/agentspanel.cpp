// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentspanel.h"

#include "agentsmodel.h"
#include "errors.h"
#include "messagebar.h"
#include "modelroles.h"
#include "panelwidgets.h"
#include "sandboxcontroller.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace elsai {

AgentsPanel::AgentsPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_proxy(new QSortFilterProxyModel(this)),
      m_view(makeTable(this)), m_name(new QLineEdit(this)), m_mode(new QComboBox(this)),
      m_attach(new QPushButton(tr("Attach"), this)), m_detach(new QPushButton(tr("Detach"), this)),
      m_changeMode(new QPushButton(tr("Change mode"), this)), m_details(makeDetails(this)),
      m_bar(new MessageBar(this))
{
    m_bar->setObjectName(QStringLiteral("agentsMessageBar"));
    m_view->setAccessibleName(tr("Attached agents"));
    m_name->setAccessibleName(tr("Agent name"));
    m_mode->setAccessibleName(tr("Attach mode"));
    m_details->setAccessibleName(tr("Agent details"));
    m_proxy->setSourceModel(controller->agentsModel());
    m_proxy->setFilterRole(Roles::WorkspaceIdRole);
    m_proxy->setFilterKeyColumn(AgentsModel::NameColumn);
    m_view->setModel(m_proxy);
    m_view->hideColumn(AgentsModel::WorkspaceColumn);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    setWorkspace(QString());

    m_name->setPlaceholderText(tr("agent name"));
    m_mode->addItem(tr("read-write"), QStringLiteral("read_write"));
    m_mode->addItem(tr("read-only"), QStringLiteral("read_only"));
    m_changeMode->setToolTip(tr("Re-attach the selected agent read-only / read-write"));
    m_attach->setAccessibleName(tr("Attach agent"));
    m_detach->setAccessibleName(tr("Detach agent"));
    m_changeMode->setAccessibleName(tr("Change mode of the agent"));

    auto *form = new QHBoxLayout;
    form->addWidget(new QLabel(tr("Attach…"), this));
    form->addWidget(m_name, 1);
    form->addWidget(m_mode);
    form->addWidget(m_attach);
    auto *actions = new QHBoxLayout;
    actions->addWidget(m_detach);
    actions->addWidget(m_changeMode);
    actions->addStretch();

    auto *top = new QWidget(this);
    auto *topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(m_view);
    topLayout->addLayout(actions);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(top);
    splitter->addWidget(m_details);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_bar);
    layout->addLayout(form);
    layout->addWidget(splitter, 1);

    // A refused or failed attach (also from the pool: the sandbox's own refusal) shows here.
    connect(controller, &SandboxController::operationFailed, this,
            [this](const QString &ws, const QString &operation, const QString &type,
                   const QString &message) {
                if (ws == m_workspaceId &&
                    (operation == QLatin1String("attach") || operation == QLatin1String("detach")))
                    m_bar->showMessage(tr("%1 refused — %2: %3").arg(operation, type, message),
                                       MessageBar::Type::Error);
            });
    connect(m_attach, &QPushButton::clicked, this, &AgentsPanel::attach);
    connect(m_name, &QLineEdit::returnPressed, this, &AgentsPanel::attach);
    connect(m_detach, &QPushButton::clicked, this, &AgentsPanel::detachSelected);
    connect(m_changeMode, &QPushButton::clicked, this, &AgentsPanel::toggleModeOfSelected);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &AgentsPanel::updateDetails);
    connect(m_proxy, &QAbstractItemModel::dataChanged, this, &AgentsPanel::updateDetails);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &AgentsPanel::updateDetails);
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &AgentsPanel::updateDetails);
    updateDetails();
}

void AgentsPanel::setWorkspace(const QString &workspaceId)
{
    m_workspaceId = workspaceId;
    m_proxy->setFilterRegularExpression(
        QRegularExpression(QStringLiteral("^%1$").arg(QRegularExpression::escape(workspaceId))));
    m_attach->setEnabled(!workspaceId.isEmpty());
    updateDetails();
}

int AgentsPanel::selectedSourceRow() const
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    return current.isValid() ? m_proxy->mapToSource(current).row() : -1;
}

void AgentsPanel::attach()
{
    const QString name = m_name->text().trimmed();
    if (name.isEmpty() || m_workspaceId.isEmpty())
        return;
    try {
        const SandboxAttachMode mode = attachModeFromString(m_mode->currentData().toString());
        m_controller->attachAgent(m_workspaceId, name, mode);
        m_name->clear();
        m_bar->dismiss();
    } catch (const SandboxError &e) {
        Q_EMIT m_controller->operationFailed(m_workspaceId, QStringLiteral("attach"), e.specName(),
                                             e.message());
    }
}

void AgentsPanel::detachSelected()
{
    const int row = selectedSourceRow();
    if (row < 0)
        return;
    const AgentRow a = m_controller->agentsModel()->agent(row);
    try {
        m_controller->detachAgent(a.workspaceId, a.name);
    } catch (const SandboxError &e) {
        Q_EMIT m_controller->operationFailed(a.workspaceId, QStringLiteral("detach"), e.specName(),
                                             e.message());
    }
}

void AgentsPanel::toggleModeOfSelected()
{
    const int row = selectedSourceRow();
    if (row < 0)
        return;
    const AgentRow a = m_controller->agentsModel()->agent(row);
    const SandboxAttachMode mode = a.mode == QLatin1String("read_write")
                                       ? SandboxAttachMode::ReadOnly
                                       : SandboxAttachMode::ReadWrite;
    try {
        m_controller->changeAgentMode(a.workspaceId, a.name, mode);
    } catch (const SandboxError &e) {
        Q_EMIT m_controller->operationFailed(a.workspaceId, QStringLiteral("attach"), e.specName(),
                                             e.message());
    }
}

void AgentsPanel::updateDetails()
{
    const int row = selectedSourceRow();
    m_detach->setEnabled(row >= 0);
    m_changeMode->setEnabled(row >= 0);
    if (row < 0) {
        m_details->setPlainText(m_workspaceId.isEmpty()
                                    ? tr("No sandbox selected.")
                                    : tr("Select an agent to see its tools and recent calls."));
        return;
    }
    const AgentRow &a = m_controller->agentsModel()->agent(row);
    QStringList lines{
        QStringLiteral("%1 (%2), attached %3")
            .arg(a.name, a.mode, a.attachedAt.toLocalTime().toString(QStringLiteral("hh:mm:ss"))),
        tr("Tools: %1").arg(a.tools.join(QStringLiteral(", "))), tr("Calls: %1").arg(a.toolCalls),
        QString(), tr("Recent calls:")};
    if (a.recentCalls.isEmpty())
        lines << tr("  (none)");
    for (auto it = a.recentCalls.crbegin(); it != a.recentCalls.crend(); ++it)
        lines << QStringLiteral("  %1  %2  %3")
                     .arg(it->at.toLocalTime().toString(QStringLiteral("hh:mm:ss")),
                          it->tool.leftJustified(10), it->outcome);
    const QString text = lines.join(QLatin1Char('\n'));
    if (m_details->toPlainText() != text)
        m_details->setPlainText(text);
}

} // namespace elsai
