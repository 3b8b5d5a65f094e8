// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcppanel.h"

#include "clientconfig.h"
#include "errors.h"
#include "flowlayout.h"
#include "mcpservermodel.h"
#include "sandboxcontroller.h"

#include <QClipboard>
#include <QComboBox>
#include <QCoreApplication>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

namespace elsai {

McpPanel::McpPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_model(new McpServerModel(this)),
      m_port(new QSpinBox(this)), m_start(new QPushButton(tr("Start server"), this)),
      m_url(new QLabel(this)), m_view(new QTableView(this)), m_name(new QLineEdit(this)),
      m_mode(new QComboBox(this)), m_create(new QPushButton(tr("Create agent"), this)),
      m_copyHttp(new QPushButton(tr("Copy HTTP config"), this)),
      m_copyStdio(new QPushButton(tr("Copy stdio command"), this)),
      m_revoke(new QPushButton(tr("Revoke"), this)), m_client(new QComboBox(this)),
      m_status(new QLabel(this))
{
    m_port->setRange(0, 65535);
    m_port->setSpecialValueText(tr("any port"));
    m_port->setToolTip(tr("Loopback port of http://127.0.0.1:PORT/mcp (0: any free port)"));
    m_url->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_name->setPlaceholderText(tr("agent name"));
    m_mode->addItem(tr("read-only"), QStringLiteral("read_only"));
    m_mode->addItem(tr("read-write"), QStringLiteral("read_write"));
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("mcpStatus"));
    m_view->setAccessibleName(tr("MCP agents"));
    m_name->setAccessibleName(tr("MCP agent name"));
    m_mode->setAccessibleName(tr("MCP agent mode"));
    m_port->setAccessibleName(tr("MCP port"));
    // The configuration the copy buttons produce: a generic mcpServers JSON (HTTP) and command
    // line (stdio), or a given client's, every part headed by where it goes.
    m_client->addItem(tr("Generic"), QString());
    for (const McpClientKind &k : mcpClientKinds())
        m_client->addItem(k.name, k.id);
    m_client->setAccessibleName(tr("MCP client to configure"));
    m_client->setToolTip(tr("The client whose configuration Copy HTTP config and Copy stdio "
                            "command produce"));

    // The two button rows wrap when the panel is narrow (ui/flowlayout.h).
    auto *server = new FlowLayout;
    server->setContentsMargins(0, 0, 0, 0);
    server->addWidget(new QLabel(tr("Port"), this));
    server->addWidget(m_port);
    server->addWidget(m_start);
    server->addWidget(m_url, 1);
    auto *create = new QHBoxLayout;
    create->addWidget(m_name, 1);
    create->addWidget(m_mode);
    create->addWidget(m_create);
    auto *actions = new FlowLayout;
    actions->setContentsMargins(0, 0, 0, 0);
    actions->addWidget(new QLabel(tr("Client"), this));
    actions->addWidget(m_client);
    actions->addWidget(m_copyHttp);
    actions->addWidget(m_copyStdio);
    actions->addWidget(m_revoke);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(server);
    layout->addWidget(m_view, 1);
    layout->addLayout(create);
    layout->addLayout(actions);
    layout->addWidget(m_status);

    connect(m_start, &QPushButton::clicked, this, &McpPanel::toggleServer);
    connect(m_create, &QPushButton::clicked, this, &McpPanel::createAgent);
    connect(m_name, &QLineEdit::returnPressed, this, &McpPanel::createAgent);
    connect(m_copyHttp, &QPushButton::clicked, this, &McpPanel::copyHttpConfig);
    connect(m_copyStdio, &QPushButton::clicked, this, &McpPanel::copyStdioCommand);
    connect(m_revoke, &QPushButton::clicked, this, &McpPanel::revokeSelected);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &McpPanel::updateState);
    connect(m_model, &McpServerModel::runningChanged, this, &McpPanel::updateState);
    connect(m_model, &McpServerModel::sessionStarted, this,
            [this](const QString &agent) { m_status->setText(tr("%1 connected").arg(agent)); });
    connect(m_model, &McpServerModel::sessionEnded, this,
            [this](const QString &agent, const QString &reason) {
                m_status->setText(tr("%1 disconnected (%2)").arg(agent, reason));
            });
    updateState();
}

McpPanel::~McpPanel()
{
    // The server's sessions end as it stops: this panel is half destroyed by then.
    disconnect(m_model, nullptr, this, nullptr);
    m_model->stop();
}

void McpPanel::setWorkspace(const QString &workspaceId)
{
    m_workspaceId = workspaceId; // a running server keeps serving its own sandbox
    updateState();
}

void McpPanel::toggleServer()
{
    if (m_model->isRunning()) {
        m_model->stop();
        m_status->setText(tr("MCP server stopped; its sessions were detached"));
        return;
    }
    try {
        m_model->start(m_controller->sandbox(m_workspaceId), quint16(m_port->value()));
        m_status->setText(
            tr("Serving '%1'. Create an agent, then copy its configuration.").arg(m_workspaceId));
    } catch (const SandboxError &e) {
        m_status->setText(e.display());
    }
}

void McpPanel::createAgent()
{
    try {
        const QString name = m_name->text().trimmed();
        // One name, one agent: a name the sandbox already has attached (from the Agents panel,
        // a plan) would show two modes for one name.
        const QString served = m_model->isRunning() ? m_model->workspaceId() : m_workspaceId;
        if (const SandboxPtr sb = m_controller->sandbox(served)) {
            for (const AttachedAgent &attached : sb->attachedAgents()) {
                if (attached.agent->id() == name)
                    throw ValueError(tr("an agent named '%1' is already attached to '%2' (%3); "
                                        "pick another name")
                                         .arg(name, served, toString(attached.mode)));
            }
        }
        const McpAgentSpec a =
            m_model->createAgent(name, attachModeFromString(m_mode->currentData().toString()));
        m_name->clear();
        m_view->selectRow(m_model->rowOf(a.name));
        m_status->setText(tr("Agent %1 created; Copy HTTP config puts its token on the "
                             "clipboard")
                              .arg(a.name));
    } catch (const SandboxError &e) {
        m_status->setText(e.display());
    }
}

QString McpPanel::clientId() const
{
    return m_client->currentData().toString();
}

void McpPanel::setClientId(const QString &id)
{
    m_client->setCurrentIndex(qMax(0, m_client->findData(id)));
}

void McpPanel::copyConfig(McpClientTransport transport, int row)
{
    const McpAgentSpec &agent = m_model->agent(row);
    McpClientTarget target;
    target.agent = agent.name;
    target.url = m_model->url();
    target.token = agent.token;
    target.program = QCoreApplication::applicationFilePath();
    target.arguments = m_model->stdioArguments(row);
    QGuiApplication::clipboard()->setText(
        mcpClientConfigText(mcpClientConfig(clientId(), transport, target)));
    m_status->setText(
        tr("%1 configuration of %2 for %3 copied: each part says where it goes%4")
            .arg(transport == McpClientTransport::Http ? tr("HTTP") : tr("stdio"), agent.name,
                 m_client->currentText(),
                 transport == McpClientTransport::Http ? tr(" (it holds the token)") : QString()));
}

void McpPanel::copyHttpConfig()
{
    const int row = selectedRow();
    if (row < 0)
        return;
    if (!clientId().isEmpty())
        return copyConfig(McpClientTransport::Http, row);
    QGuiApplication::clipboard()->setText(m_model->httpClientConfig(row));
    m_status->setText(
        tr("Client configuration of %1 copied (it holds the token)").arg(m_model->agent(row).name));
}

void McpPanel::copyStdioCommand()
{
    const int row = selectedRow();
    if (row < 0)
        return;
    if (!clientId().isEmpty())
        return copyConfig(McpClientTransport::Stdio, row);
    QGuiApplication::clipboard()->setText(
        m_model->stdioCommandLine(row, QCoreApplication::applicationFilePath()));
    m_status->setText(tr("stdio command line of %1 copied").arg(m_model->agent(row).name));
}

void McpPanel::revokeSelected()
{
    if (const int row = selectedRow(); row >= 0) {
        const QString name = m_model->agent(row).name;
        const int ended = m_model->revokeAgent(name);
        m_status->setText(tr("%1 revoked; %n session(s) detached", nullptr, ended).arg(name));
    }
}

int McpPanel::selectedRow() const
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.constFirst().row();
}

void McpPanel::updateState()
{
    const bool running = m_model->isRunning();
    m_start->setText(running ? tr("Stop server") : tr("Start server"));
    m_start->setEnabled(running || !m_workspaceId.isEmpty());
    m_port->setEnabled(!running);
    m_url->setText(running ? tr("%1 (%2)").arg(m_model->url().toString(), m_model->workspaceId())
                           : QString());
    const bool selected = selectedRow() >= 0;
    m_copyHttp->setEnabled(selected && running);
    m_copyStdio->setEnabled(selected);
    m_revoke->setEnabled(selected);
}

} // namespace elsai
