// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentplanpanel.h"

#include "errors.h"
#include "flowlayout.h"
#include "sandboxcontroller.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

namespace elsai {

namespace {

using Status = PlanStepsModel::Status;

/// Colours the model leaves to the view: the current step in bold on a highlight tint, passed
/// steps green, failed red, steps that did not run greyed.
class StepDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        if (index.data(PlanRoles::IsCurrentRole).toBool()) {
            option->font.setBold(true);
            QColor tint = option->palette.color(QPalette::Highlight);
            tint.setAlpha(60);
            option->backgroundBrush = tint;
        }
        QColor text;
        switch (Status(index.data(PlanRoles::StepStatusRole).toInt())) {
        case Status::Passed:
            text = QColor(0x1b, 0x7f, 0x37);
            break;
        case Status::Failed:
            text = QColor(0xc0, 0x1c, 0x28);
            break;
        case Status::Skipped:
        case Status::Cancelled:
            text = option->palette.color(QPalette::Disabled, QPalette::Text);
            break;
        case Status::Pending:
        case Status::Running:
            return;
        }
        option->palette.setColor(QPalette::Text, text); // a selected row keeps its contrast
    }
};

bool runInProgress(PlanRunner::State s)
{
    return s == PlanRunner::State::Running || s == PlanRunner::State::Stepping ||
           s == PlanRunner::State::Pausing || s == PlanRunner::State::Paused;
}

} // namespace

AgentPlanPanel::AgentPlanPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_runner(new PlanRunner(this))
{
    m_plans = new QComboBox(this);
    m_plans->setObjectName(QStringLiteral("planBox"));
    m_plans->setToolTip(tr("The plan to run: a bundled demo or a plan file"));
    for (const QString &name : AgentPlan::demoNames())
        m_plans->addItem(tr("Demo: %1").arg(name), AgentPlan::demoPrefix() + name);
    m_open = new QPushButton(tr("Open…"), this);
    m_open->setToolTip(tr("Open a plan file (JSON, format elsai-agent-plan)"));
    m_mode = new QComboBox(this);
    m_mode->setObjectName(QStringLiteral("agentModeBox"));
    m_mode->addItem(tr("Plan's mode"));
    m_mode->addItem(QStringLiteral("read_write"), int(SandboxAttachMode::ReadWrite));
    m_mode->addItem(QStringLiteral("read_only"), int(SandboxAttachMode::ReadOnly));
    m_mode->setToolTip(tr("Attach mode of the plan's agent for the next run"));

    auto button = [this](const QString &text, QStyle::StandardPixmap icon, const char *name) {
        auto *b = new QPushButton(style()->standardIcon(icon), text, this);
        b->setObjectName(QLatin1String(name));
        return b;
    };
    m_play = button(tr("Play"), QStyle::SP_MediaPlay, "playButton");
    m_pause = button(tr("Pause"), QStyle::SP_MediaPause, "pauseButton");
    m_step = button(tr("Step"), QStyle::SP_MediaSkipForward, "stepButton");
    m_stop = button(tr("Stop"), QStyle::SP_MediaStop, "stopButton");
    m_play->setToolTip(tr("Run the remaining steps (from the start when the run is over)"));
    m_pause->setToolTip(tr("Pause after the running step"));
    m_step->setToolTip(tr("Run the next step, then pause"));
    m_stop->setToolTip(tr("End the run: the remaining steps are cancelled"));

    m_info = new QLabel(this);
    m_info->setWordWrap(true);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("planStatus"));
    m_status->setWordWrap(true);
    m_recording = new SessionRecording(controller, this);
    m_recordingStatus = new QLabel(this);
    m_recordingStatus->setObjectName(QStringLiteral("recordingStatus"));
    m_recordingStatus->setWordWrap(true);
    m_recordingStatus->hide();

    m_view = new QTableView(this);
    m_view->setModel(m_runner->stepsModel());
    m_view->setItemDelegate(new StepDelegate(m_view));
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setWordWrap(false);
    m_details = new QPlainTextEdit(this);
    m_details->setReadOnly(true);
    m_details->setPlaceholderText(tr("Select a step to see its arguments and result"));

    // Both rows wrap when the panel is narrow (ui/flowlayout.h).
    auto *top = new FlowLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_plans, 1);
    top->addWidget(m_open);
    top->addWidget(m_mode);
    auto *controls = new FlowLayout;
    controls->setContentsMargins(0, 0, 0, 0);
    for (QPushButton *b : {m_play, m_pause, m_step, m_stop})
        controls->addWidget(b);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_view);
    split->addWidget(m_details);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_info);
    layout->addLayout(controls);
    layout->addWidget(split, 1);
    layout->addWidget(m_status);
    layout->addWidget(m_recordingStatus);

    connect(m_plans, &QComboBox::currentIndexChanged, this, &AgentPlanPanel::onPlanChosen);
    connect(m_open, &QPushButton::clicked, this, &AgentPlanPanel::openPlanFile);
    connect(m_mode, &QComboBox::currentIndexChanged, this, [this] {
        const QVariant mode = m_mode->currentData();
        m_runner->setAgentMode(mode.isValid() ? std::optional(SandboxAttachMode(mode.toInt()))
                                              : std::nullopt);
    });
    connect(m_play, &QPushButton::clicked, this, [this] {
        m_error.clear();
        if (restoreDeclined())
            return;
        if (m_runner->state() == PlanRunner::State::Ready ||
            m_runner->state() == PlanRunner::State::Finished)
            m_start.clear(); // a new run checks its start again
        m_runner->play();
    });
    connect(m_pause, &QPushButton::clicked, m_runner, &PlanRunner::pause);
    connect(m_step, &QPushButton::clicked, this, [this] {
        m_error.clear();
        if (restoreDeclined())
            return;
        if (m_runner->state() == PlanRunner::State::Ready ||
            m_runner->state() == PlanRunner::State::Finished)
            m_start.clear();
        m_runner->step();
    });
    connect(m_runner, &PlanRunner::startChecked, this, &AgentPlanPanel::showStart);
    connect(m_recording, &SessionRecording::statusChanged, this, [this] {
        m_recordingStatus->setText(m_recording->statusText());
        m_recordingStatus->setVisible(!m_recording->statusText().isEmpty());
    });
    connect(m_stop, &QPushButton::clicked, m_runner, &PlanRunner::stop);
    connect(m_runner, &PlanRunner::stateChanged, this, &AgentPlanPanel::updateControls);
    connect(m_runner, &PlanRunner::stepStarted, this, [this](int index) {
        m_view->scrollTo(m_runner->stepsModel()->index(index, 0));
        updateStatus();
    });
    connect(m_runner, &PlanRunner::stepFinished, this, [this] {
        updateStatus();
        updateDetails();
        // The agent shows in the agents panel while it is attached.
        if (m_controller)
            m_controller->refreshPanels();
    });
    connect(m_runner, &PlanRunner::runFailed, this,
            [this](const QString &type, const QString &message) {
                showError(type + QStringLiteral(": ") + message);
            });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &AgentPlanPanel::updateDetails);

    if (m_plans->count() > 0)
        onPlanChosen(0);
    updateControls();
}

void AgentPlanPanel::setWorkspace(const QString &workspaceId)
{
    m_workspaceId = workspaceId;
    m_recording->setWorkspace(workspaceId);
    m_runner->setSandbox(m_controller && !workspaceId.isEmpty() ? m_controller->sandbox(workspaceId)
                                                                : SandboxPtr());
    updateControls();
}

bool AgentPlanPanel::loadPlan(const QString &source)
{
    int index = m_plans->findData(source);
    if (index < 0) {
        m_plans->addItem(QFileInfo(source).fileName(), source);
        index = m_plans->count() - 1;
        m_plans->setItemData(index, source, Qt::ToolTipRole);
    }
    if (m_plans->currentIndex() != index) {
        m_plans->setCurrentIndex(index); // loads through onPlanChosen
    } else {
        onPlanChosen(index);
    }
    return m_error.isEmpty();
}

void AgentPlanPanel::openPlanFile()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a plan"), QString(),
                                                      tr("Agent plans (*.json);;All files (*)"));
    if (!path.isEmpty())
        loadPlan(path);
}

void AgentPlanPanel::onPlanChosen(int index)
{
    m_error.clear();
    const QString source = m_plans->itemData(index).toString();
    if (source.isEmpty())
        return;
    m_start.clear();
    try {
        m_runner->loadPlan(source);
        const AgentPlan &plan = *m_runner->plan();
        m_info->setText(tr("<b>%1</b> — agent <i>%2</i>, %3<br>%4")
                            .arg(plan.name.toHtmlEscaped(), plan.agentName.toHtmlEscaped(),
                                 toString(plan.mode), plan.description.toHtmlEscaped()));
        if (plan.start)
            m_info->setText(m_info->text() +
                            tr("<br>Recorded: replays from checkpoint <i>%1</i> and reports "
                               "every divergence")
                                .arg(plan.start->checkpoint.toHtmlEscaped()));
    } catch (const SandboxError &e) {
        m_info->clear();
        showError(e.display());
    }
    m_details->clear();
    for (int c = PlanStepsModel::IndexColumn; c < PlanStepsModel::DetailColumn; ++c)
        m_view->resizeColumnToContents(c);
    updateControls();
}

void AgentPlanPanel::updateControls()
{
    const PlanRunner::State s = m_runner->state();
    using S = PlanRunner::State;
    const bool loaded = s != S::Empty;
    const bool idle = s == S::Ready || s == S::Finished;
    m_play->setEnabled(loaded && s != S::Running);
    m_pause->setEnabled(s == S::Running || s == S::Stepping);
    m_step->setEnabled(idle || s == S::Paused);
    m_stop->setEnabled(runInProgress(s));
    m_plans->setEnabled(!runInProgress(s));
    m_open->setEnabled(!runInProgress(s));
    m_mode->setEnabled(!runInProgress(s));
    updateStatus();
}

void AgentPlanPanel::updateStatus()
{
    if (!m_error.isEmpty()) {
        m_status->setText(m_error);
        return;
    }
    updateRunStatus();
    if (!m_start.isEmpty() && m_runner->state() != PlanRunner::State::Ready)
        m_status->setText(m_start + u'\n' + m_status->text());
}

void AgentPlanPanel::updateRunStatus()
{
    const auto &plan = m_runner->plan();
    if (!plan) {
        m_status->setText(tr("No plan loaded"));
        return;
    }
    const int total = int(plan->steps.size());
    const QString counts =
        tr("%1 passed, %2 failed").arg(m_runner->passedCount()).arg(m_runner->failedCount());
    using S = PlanRunner::State;
    switch (m_runner->state()) {
    case S::Empty:
    case S::Ready:
        m_status->setText(m_workspaceId.isEmpty()
                              ? tr("%1 steps · no sandbox selected").arg(total)
                              : tr("%1 steps · ready to run in %2").arg(total).arg(m_workspaceId));
        return;
    case S::Running:
    case S::Stepping:
    case S::Pausing:
        m_status->setText(tr("Step %1 of %2 · %3")
                              .arg(qMin(m_runner->nextStep() + 1, total))
                              .arg(total)
                              .arg(counts));
        return;
    case S::Paused:
        m_status->setText(tr("Paused before step %1 of %2 · %3")
                              .arg(m_runner->nextStep() + 1)
                              .arg(total)
                              .arg(counts));
        return;
    case S::Finished: {
        const int notRun = total - m_runner->passedCount() - m_runner->failedCount();
        m_status->setText(notRun > 0 ? tr("Finished · %1, %2 not run").arg(counts).arg(notRun)
                                     : tr("Finished · %1").arg(counts));
        return;
    }
    }
}

void AgentPlanPanel::updateDetails()
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    if (!current.isValid()) {
        m_details->clear();
        return;
    }
    const QModelIndex row = current.siblingAtColumn(0);
    QJsonObject shown{{QStringLiteral("args"), row.data(PlanRoles::StepArgsRole).toJsonObject()}};
    const QVariant result = row.data(PlanRoles::StepResultRole);
    if (result.isValid())
        shown.insert(QStringLiteral("outcome"), result.toJsonObject());
    m_details->setPlainText(
        QString::fromUtf8(QJsonDocument(shown).toJson(QJsonDocument::Indented)));
}

bool AgentPlanPanel::restoreDeclined()
{
    using S = PlanRunner::State;
    const auto &plan = m_runner->plan();
    const SandboxPtr sandbox = m_runner->sandbox();
    if (!m_confirmRestore || !plan || !plan->start || !sandbox ||
        (m_runner->state() != S::Ready && m_runner->state() != S::Finished))
        return false;
    bool inStore = false;
    try {
        for (const CheckpointInfo &c : sandbox->checkpoints())
            inStore = inStore || c.name == plan->start->checkpoint;
    } catch (const SandboxError &) {
        return false; // no checkpoints here: the run says so
    }
    if (!inStore)
        return false;
    return QMessageBox::question(
               this, tr("Replay a Recorded Session"),
               tr("Replaying \"%1\" restores checkpoint \"%2\" first: the changes made in "
                  "sandbox %3 since then are replaced. Replay?")
                   .arg(plan->name, plan->start->checkpoint, m_workspaceId),
               QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) != QMessageBox::Yes;
}

void AgentPlanPanel::showStart(const StartCheck &check)
{
    m_start = check.diverged() ? tr("Start diverged: %1").arg(check.message)
                               : tr("Start: %1").arg(check.message);
    updateStatus();
}

void AgentPlanPanel::showError(const QString &text)
{
    m_error = text;
    m_status->setText(text);
}

} // namespace elsai
