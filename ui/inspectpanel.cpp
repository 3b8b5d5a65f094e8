// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "inspectpanel.h"

#include "agentsmodel.h"
#include "displaytext.h"
#include "mcpservermodel.h"
#include "resourcesampler.h"
#include "sandboxcontroller.h"
#include "sessionsmodel.h"

#include <QApplication>
#include <QClipboard>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QStyle>
#include <QUrl>
#include <QVBoxLayout>

namespace elsai {

namespace {

QString orNone(const std::optional<QString> &value, const QString &none)
{
    return value && !value->isEmpty() ? *value : none;
}

} // namespace

InspectPanel::InspectPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_sampler(new ResourceSampler(controller, this)),
      m_form(new QFormLayout), m_title(new QLabel(this)), m_open(new QPushButton(this)),
      m_copy(new QPushButton(this))
{
    m_title->setAccessibleName(tr("Inspected sandbox"));
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_title->setTextFormat(Qt::PlainText);
    m_open->setText(tr("Open in File Manager"));
    m_open->setAccessibleName(tr("Open the workspace folder in the file manager"));
    m_open->setIcon(style()->standardIcon(QStyle::SP_DirOpenIcon));
    m_copy->setText(tr("Copy Path"));
    m_copy->setAccessibleName(tr("Copy the workspace folder's path"));
    auto *folderButtons = new QWidget(this);
    auto *buttons = new QHBoxLayout(folderButtons);
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addWidget(m_open);
    buttons->addWidget(m_copy);
    buttons->addStretch(1);

    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_form->setLabelAlignment(Qt::AlignRight | Qt::AlignTop);
    addField(QStringLiteral("backend"), tr("Backend"));
    addField(QStringLiteral("state"), tr("State"));
    addField(QStringLiteral("folder"), tr("Workspace folder"), folderButtons);
    addField(QStringLiteral("seed"), tr("Seed source"));
    addField(QStringLiteral("sync"), tr("Sync destination"));
    addField(QStringLiteral("ttl"), tr("TTL"));
    addField(QStringLiteral("idle"), tr("Idle"));
    addField(QStringLiteral("timeout"), tr("Command timeout"));
    addField(QStringLiteral("outputCap"), tr("Output cap"));
    addField(QStringLiteral("agents"), tr("Agents"));
    addField(QStringLiteral("mcp"), tr("MCP endpoint"));
    addField(QStringLiteral("resources"), tr("Commands"));

    auto *content = new QWidget;
    auto *contentLayout = new QVBoxLayout(content);
    contentLayout->addWidget(m_title);
    contentLayout->addLayout(m_form);
    contentLayout->addStretch(1);
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(scroll);

    connect(m_open, &QPushButton::clicked, this, [this] {
        if (!m_folder.isEmpty())
            QDesktopServices::openUrl(QUrl::fromLocalFile(m_folder));
    });
    connect(m_copy, &QPushButton::clicked, this, [this] {
        const QString path = fieldLabel(QStringLiteral("folder"))->text();
        QApplication::clipboard()->setText(path);
    });
    connect(m_sampler, &ResourceSampler::sampled, this, &InspectPanel::updateResources);
    m_timer.setInterval(1000);
    connect(&m_timer, &QTimer::timeout, this, &InspectPanel::refresh);
    connect(controller, &SandboxController::sandboxStarted, this, &InspectPanel::refresh);
    connect(controller, &SandboxController::sandboxStopped, this, &InspectPanel::refresh);
    connect(controller->agentsModel(), &QAbstractItemModel::rowsInserted, this,
            &InspectPanel::refresh);
    connect(controller->agentsModel(), &QAbstractItemModel::rowsRemoved, this,
            &InspectPanel::refresh);
    refresh();
}

InspectPanel::~InspectPanel() = default;

QLabel *InspectPanel::addField(const QString &key, const QString &title, QWidget *extra)
{
    auto *value = new QLabel(this);
    value->setTextFormat(Qt::PlainText); // paths and names as they are
    value->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    value->setWordWrap(true);
    value->setAccessibleName(title);
    value->setObjectName(QStringLiteral("inspect_") + key);
    auto *label = new QLabel(title + QLatin1Char(':'), this);
    label->setBuddy(value);
    if (extra) {
        auto *box = new QWidget(this);
        auto *v = new QVBoxLayout(box);
        v->setContentsMargins(0, 0, 0, 0);
        v->addWidget(value);
        v->addWidget(extra);
        m_form->addRow(label, box);
    } else {
        m_form->addRow(label, value);
    }
    m_fields.insert(key, value);
    return value;
}

QLabel *InspectPanel::fieldLabel(const QString &key) const
{
    return m_fields.value(key);
}

QString InspectPanel::field(const QString &key) const
{
    const QLabel *label = m_fields.value(key);
    return label ? label->text() : QString();
}

void InspectPanel::setField(const QString &key, const QString &text, const QString &tip)
{
    if (QLabel *label = m_fields.value(key)) {
        if (label->text() != text)
            label->setText(text);
        label->setToolTip(tip);
        label->setAccessibleDescription(text);
    }
}

void InspectPanel::setMcpModel(McpServerModel *model)
{
    m_mcp = model;
    if (model) {
        connect(model, &McpServerModel::runningChanged, this, &InspectPanel::refresh);
        connect(model, &McpServerModel::sessionStarted, this, &InspectPanel::refresh);
        connect(model, &McpServerModel::sessionEnded, this, &InspectPanel::refresh);
    }
    refresh();
}

void InspectPanel::setWorkspace(const QString &workspaceId)
{
    m_workspaceId = workspaceId;
    m_sampler->setWorkspace(workspaceId);
    refresh();
}

void InspectPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    m_timer.start();
    m_sampler->setActive(true);
    refresh();
}

void InspectPanel::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    m_timer.stop();
    m_sampler->setActive(false);
}

void InspectPanel::refresh()
{
    const SandboxPtr sandbox = m_controller->sandbox(m_workspaceId);
    const bool known = bool(sandbox);
    for (QLabel *label : std::as_const(m_fields))
        label->setEnabled(known);
    m_open->setEnabled(false);
    m_copy->setEnabled(known);
    if (!known) {
        m_title->setText(tr("No sandbox"));
        for (auto it = m_fields.cbegin(); it != m_fields.cend(); ++it)
            setField(it.key(), QStringLiteral("—"));
        m_folder.clear();
        return;
    }
    const SandboxSpec spec = m_controller->spec(m_workspaceId);
    const SessionState state = m_controller->state(m_workspaceId);
    m_title->setText(m_workspaceId);
    const BackendPtr backend = sandbox->backend();
    setField(QStringLiteral("backend"), sandbox->backendTypeName(),
             backend ? backend->id() : QString());
    const SessionsModel *sessions = m_controller->sessionsModel();
    const int row = sessions->rowOf(m_workspaceId);
    const QString message = row >= 0 ? sessions->session(row).message : QString();
    setField(QStringLiteral("state"),
             message.isEmpty() ? toString(state)
                               : QStringLiteral("%1 — %2").arg(toString(state), message));

    // The folder: local backends have it on this machine; remote ones show where it is.
    const QString hostFolder = backend ? backend->hostFolder() : QString();
    const bool local = !spec.workspaceRoot.isEmpty() && QFileInfo(spec.workspaceRoot).isDir() &&
                       (spec.backend == QLatin1String("local") ||
                        spec.backend == QLatin1String("bwrap") || !hostFolder.isEmpty());
    m_folder = local ? QDir(spec.workspaceRoot).absolutePath() : QString();
    setField(QStringLiteral("folder"),
             local ? m_folder : (backend ? backend->id() : spec.workspaceRoot),
             local ? tr("On this machine") : tr("On the sandbox's machine"));
    m_open->setEnabled(local);
    setField(QStringLiteral("seed"), orNone(sandbox->options().seedFrom, tr("none (not seeded)")));
    setField(QStringLiteral("sync"),
             orNone(sandbox->effectiveSyncDest(), tr("none (nothing to flush into)")));

    const std::optional<double> ttl = sandbox->ttlSeconds();
    const auto &manager = sandbox->manager();
    const auto session = manager->getSession(m_workspaceId);
    // seconds since the last call; negative when there is no session (not running)
    const double idle = session && state == SessionState::Running
                            ? qMax(0.0, manager->now() - session->lastUsedAt)
                            : -1.0;
    if (!ttl)
        setField(QStringLiteral("ttl"), tr("none (never expires when idle)"));
    else if (idle >= 0)
        setField(QStringLiteral("ttl"),
                 tr("%1 (expires after %2 more idle)")
                     .arg(formatDuration(*ttl), formatDuration(qMax(0.0, *ttl - idle))));
    else
        setField(QStringLiteral("ttl"), formatDuration(*ttl));
    setField(QStringLiteral("idle"), idle >= 0 ? formatDuration(idle) : tr("—"));
    setField(QStringLiteral("timeout"),
             tr("%1 per command").arg(formatDuration(spec.local.timeout)));
    setField(
        QStringLiteral("outputCap"),
        tr("%1 per command (stdout and stderr together)").arg(sizeText(spec.local.maxOutputBytes)));

    QStringList agents;
    const AgentsModel *agentRows = m_controller->agentsModel();
    for (int r = 0; r < agentRows->rowCount(); ++r) {
        const AgentRow &a = agentRows->agent(r);
        if (a.workspaceId == m_workspaceId)
            agents.append(QStringLiteral("%1 (%2)").arg(
                a.name, QString(a.mode).replace(QLatin1Char('_'), QLatin1Char('-'))));
    }
    setField(QStringLiteral("agents"),
             agents.isEmpty() ? tr("none") : agents.join(QLatin1String(", ")));

    if (m_mcp && m_mcp->isRunning() && m_mcp->workspaceId() == m_workspaceId) {
        int sessionsOpen = 0;
        for (int r = 0; r < m_mcp->rowCount(); ++r)
            sessionsOpen += m_mcp->sessionCount(m_mcp->agent(r).name);
        setField(QStringLiteral("mcp"), tr("%1 — %n agent token(s), ", nullptr, m_mcp->rowCount())
                                                .arg(m_mcp->url().toString()) +
                                            tr("%n session(s) open", nullptr, sessionsOpen));
    } else {
        setField(QStringLiteral("mcp"), tr("not serving (start it in the MCP panel)"));
    }
    updateResources();
}

void InspectPanel::updateResources()
{
    const SandboxPtr sandbox = m_controller->sandbox(m_workspaceId);
    if (!sandbox)
        return;
    if (!m_sampler->isSupported()) {
        setField(QStringLiteral("resources"),
                 sandbox->isStarted() ? tr("not measured: commands run on the sandbox's machine")
                                      : tr("— (not running)"));
        return;
    }
    const ResourceSampler::Sample &s = m_sampler->last();
    if (!s.valid) {
        setField(QStringLiteral("resources"), tr("measuring…"));
        return;
    }
    if (s.commands == 0) {
        setField(QStringLiteral("resources"), tr("no command running"));
        return;
    }
    setField(QStringLiteral("resources"),
             tr("%n running: ", nullptr, s.commands) +
                 tr("%n process(es), ", nullptr, s.processes) +
                 tr("CPU %1 %, memory %2")
                     .arg(QLocale().toString(s.cpuPercent, 'f', 0), sizeText(s.rssBytes)),
             tr("Summed over the commands' processes from /proc, sampled each second; 100 % is "
                "one core."));
}

} // namespace elsai
