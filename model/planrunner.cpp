// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "planrunner.h"

#include "errors.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QtConcurrent/QtConcurrentRun>

namespace elsai {

// ---- PlanStepsModel ---------------------------------------------------------------------------

PlanStepsModel::PlanStepsModel(QObject *parent) : QAbstractTableModel(parent) {}

void PlanStepsModel::setPlan(const AgentPlan &plan)
{
    beginResetModel();
    m_rows.clear();
    for (const PlanStep &s : plan.steps)
        m_rows.append({s, Status::Pending, std::nullopt});
    m_current = m_rows.isEmpty() ? -1 : 0;
    endResetModel();
}

void PlanStepsModel::clearResults()
{
    for (Row &r : m_rows) {
        r.status = Status::Pending;
        r.result.reset();
    }
    m_current = m_rows.isEmpty() ? -1 : 0;
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

void PlanStepsModel::rowChanged(int row)
{
    if (row >= 0 && row < m_rows.size())
        Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void PlanStepsModel::setRunning(int row)
{
    m_rows[row].status = Status::Running;
    m_rows[row].result.reset();
    rowChanged(row);
}

void PlanStepsModel::setResult(const StepResult &result)
{
    Row &r = m_rows[result.index];
    r.result = result;
    switch (result.outcome) {
    case StepOutcome::Skipped:
        r.status = Status::Skipped;
        break;
    case StepOutcome::Cancelled:
        r.status = Status::Cancelled;
        break;
    default:
        r.status = result.passed ? Status::Passed : Status::Failed;
    }
    rowChanged(result.index);
}

void PlanStepsModel::setCurrent(int row)
{
    if (row == m_current)
        return;
    const int old = m_current;
    m_current = row;
    rowChanged(old);
    rowChanged(row);
}

QString PlanStepsModel::statusText(Status status)
{
    switch (status) {
    case Status::Pending:
        return tr("pending");
    case Status::Running:
        return tr("running");
    case Status::Passed:
        return tr("passed");
    case Status::Failed:
        return tr("failed");
    case Status::Skipped:
        return tr("skipped");
    case Status::Cancelled:
        return tr("cancelled");
    }
    return QString();
}

int PlanStepsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int PlanStepsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

/// The last non-blank line of a text (a test runner's verdict, a command's last word).
static QString lastLine(const QString &text)
{
    const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
        if (!it->trimmed().isEmpty())
            return it->trimmed();
    }
    return QString();
}

/// The detail column: why a step failed, else a one-line summary of what it returned.
static QString detailText(const StepResult &r)
{
    if (!r.reason.isEmpty())
        return r.reason;
    if (r.outcome == StepOutcome::Error)
        return r.errorType + QStringLiteral(" (expected): ") + r.errorMessage;
    if (r.tool == QLatin1String("execute")) {
        const QString last =
            lastLine(r.data.value(QStringLiteral("stderr")).toString() + QLatin1Char('\n') +
                     r.data.value(QStringLiteral("output")).toString());
        const QString code = PlanStepsModel::tr("exit code %1")
                                 .arg(r.data.value(QStringLiteral("exit_code")).toInt());
        return last.isEmpty() ? code : code + QStringLiteral(" · ") + last;
    }
    if (r.tool == QLatin1String("read_file")) {
        const QString content = r.data.value(QStringLiteral("content")).toString();
        const qsizetype lines = content.count(u'\n') + (content.endsWith(u'\n') ? 0 : 1);
        return (content.isEmpty() ? PlanStepsModel::tr("empty: %1")
                : lines == 1      ? PlanStepsModel::tr("1 line of %1")
                                  : PlanStepsModel::tr("%1 lines of %2").arg(lines))
            .arg(r.data.value(QStringLiteral("path")).toString());
    }
    if (r.tool == QLatin1String("list_dir"))
        return PlanStepsModel::tr("%1 entries")
            .arg(r.data.value(QStringLiteral("entries")).toArray().size());
    QString text = r.text.simplified();
    if (text.size() > 160)
        text = text.left(160) + QStringLiteral("…");
    return text;
}

QVariant PlanStepsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &r = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case IndexColumn:
            return index.row() + 1;
        case NameColumn:
            return r.step.name;
        case ToolColumn:
            return r.step.tool;
        case StatusColumn:
            return statusText(r.status);
        case DurationColumn:
            return r.result && r.status != Status::Skipped && r.status != Status::Cancelled
                       ? QVariant(tr("%1 ms").arg(r.result->durationMs))
                       : QVariant();
        case DetailColumn:
            return r.result ? detailText(*r.result) : QVariant();
        }
        return {};
    case Qt::ToolTipRole:
        if (index.column() == DetailColumn && r.result)
            return r.result->reason.isEmpty() ? r.result->text : r.result->reason;
        return {};
    case PlanRoles::StepIndexRole:
        return index.row();
    case PlanRoles::StepNameRole:
        return r.step.name;
    case PlanRoles::StepToolRole:
        return r.step.tool;
    case PlanRoles::StepStatusRole:
        return int(r.status);
    case PlanRoles::IsCurrentRole:
        return index.row() == m_current;
    case PlanRoles::StepReasonRole:
        return r.result ? r.result->reason : QString();
    case PlanRoles::StepDurationRole:
        return r.result ? QVariant(r.result->durationMs) : QVariant();
    case PlanRoles::StepResultRole:
        return r.result ? QVariant(r.result->toJson()) : QVariant();
    case PlanRoles::StepArgsRole:
        return r.step.args;
    }
    return {};
}

QVariant PlanStepsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case IndexColumn:
        return tr("#");
    case NameColumn:
        return tr("Step");
    case ToolColumn:
        return tr("Tool");
    case StatusColumn:
        return tr("Status");
    case DurationColumn:
        return tr("Duration");
    case DetailColumn:
        return tr("Detail");
    }
    return {};
}

QHash<int, QByteArray> PlanStepsModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractTableModel::roleNames();
    names.insert(PlanRoles::StepIndexRole, "stepIndex");
    names.insert(PlanRoles::StepNameRole, "stepName");
    names.insert(PlanRoles::StepToolRole, "tool");
    names.insert(PlanRoles::StepStatusRole, "status");
    names.insert(PlanRoles::IsCurrentRole, "isCurrent");
    names.insert(PlanRoles::StepReasonRole, "reason");
    names.insert(PlanRoles::StepDurationRole, "durationMs");
    names.insert(PlanRoles::StepResultRole, "result");
    names.insert(PlanRoles::StepArgsRole, "args");
    return names;
}

// ---- PlanRunner -------------------------------------------------------------------------------

PlanRunner::PlanRunner(QObject *parent) : QObject(parent), m_model(new PlanStepsModel(this))
{
    m_pool.setMaxThreadCount(1);
    connect(&m_watcher, &QFutureWatcher<Attempt>::finished, this, &PlanRunner::onStepDone);
}

PlanRunner::~PlanRunner()
{
    shutdown();
}

void PlanRunner::shutdown()
{
    m_shutDown = true;
    if (m_runner)
        m_runner->cancel();
    m_watcher.disconnect(this);
    m_pool.waitForDone();
    m_runner.reset(); // detaches the agent
    m_busy = false;
}

void PlanRunner::setPlan(const AgentPlan &plan)
{
    if (m_runner)
        m_runner->cancel();
    m_watcher.waitForFinished();
    m_busy = false; // a finished() still queued belongs to the old plan: onStepDone() drops it
    m_runner.reset();
    m_plan = plan;
    m_model->setPlan(plan);
    m_next = m_passed = m_failed = 0;
    m_stopping = false;
    m_startChecked = false;
    setState(State::Ready);
}

void PlanRunner::loadPlan(const QString &source)
{
    setPlan(AgentPlan::load(source));
}

void PlanRunner::setSandbox(SandboxPtr sandbox)
{
    m_sandbox = std::move(sandbox);
}

bool PlanRunner::isBusy() const
{
    return m_busy;
}

void PlanRunner::setState(State state)
{
    if (state == m_state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void PlanRunner::resetRun()
{
    m_startChecked = false;
    m_runner.reset();
    m_model->clearResults();
    m_next = m_passed = m_failed = 0;
    m_stopping = false;
}

void PlanRunner::play()
{
    switch (m_state) {
    case State::Empty:
    case State::Running:
        return;
    case State::Stepping:
    case State::Pausing:
        setState(State::Running); // the running step is followed by the next
        return;
    case State::Finished:
        resetRun();
        [[fallthrough]];
    case State::Ready:
    case State::Paused:
        setState(State::Running);
        startStep();
    }
}

void PlanRunner::pause()
{
    if (m_state == State::Running || m_state == State::Stepping)
        setState(isBusy() ? State::Pausing : State::Paused);
}

void PlanRunner::step()
{
    switch (m_state) {
    case State::Empty:
    case State::Stepping:
    case State::Pausing:
        return;
    case State::Running:
        setState(State::Pausing);
        return;
    case State::Finished:
        resetRun();
        [[fallthrough]];
    case State::Ready:
    case State::Paused:
        setState(State::Stepping);
        startStep();
    }
}

void PlanRunner::stop()
{
    if (m_state == State::Empty || m_state == State::Finished)
        return;
    if (isBusy()) {
        m_stopping = true;
        m_runner->cancel(); // cuts a delay short; onStepDone() finishes the run
        return;
    }
    finish(StepOutcome::Cancelled, tr("the run was stopped"));
}

bool PlanRunner::ensureRunner()
{
    if (m_runner)
        return true;
    try {
        if (!m_sandbox)
            throw SandboxAttachError(
                tr("no sandbox to run the plan in; select or create one first"));
        m_runner = std::make_shared<AgentPlanRunner>(*m_plan, m_sandbox, m_options);
        return true;
    } catch (const SandboxError &e) {
        Q_EMIT runFailed(e.specName(), e.message());
        return false;
    }
}

void PlanRunner::startStep()
{
    if (m_shutDown)
        return;
    if (m_next >= m_plan->steps.size()) {
        finish(StepOutcome::Cancelled, QString());
        return;
    }
    if (!ensureRunner()) {
        finish(StepOutcome::Cancelled, tr("the run could not start"));
        return;
    }
    const int index = m_next;
    m_model->setCurrent(index);
    m_model->setRunning(index);
    Q_EMIT stepStarted(index);
    m_busy = true;
    const std::shared_ptr<AgentPlanRunner> runner = m_runner;
    const bool checkStart = m_plan->start && !std::exchange(m_startChecked, true);
    m_watcher.setFuture(QtConcurrent::run(&m_pool, [runner, index, checkStart] {
        Attempt a;
        try {
            if (checkStart) // a recorded plan: its start first (a restore is slow work)
                a.start = runner->prepareStart();
            a.result = runner->runStep(index); // tool errors are results; attach errors throw
        } catch (const SandboxError &e) {
            a.errorType = e.specName();
            a.errorMessage = e.message();
        }
        return a;
    }));
}

void PlanRunner::onStepDone()
{
    if (!m_busy)
        return;
    m_busy = false;
    const Attempt a = m_watcher.result();
    if (a.start)
        Q_EMIT startChecked(*a.start);
    if (!a.result) {
        Q_EMIT runFailed(a.errorType, a.errorMessage);
        finish(StepOutcome::Cancelled, tr("the agent could not attach: %1").arg(a.errorMessage));
        return;
    }
    const StepResult &r = *a.result;
    m_model->setResult(r);
    if (r.outcome == StepOutcome::Ok || r.outcome == StepOutcome::Error)
        ++(r.passed ? m_passed : m_failed);
    ++m_next;
    Q_EMIT stepFinished(r);

    if (m_stopping || r.outcome == StepOutcome::Cancelled)
        finish(StepOutcome::Cancelled, tr("the run was stopped"));
    else if (!r.passed && m_plan->stopOnFailure)
        finish(StepOutcome::Skipped, tr("step %1 ('%2') failed").arg(r.index + 1).arg(r.name));
    else if (m_next >= m_plan->steps.size())
        finish(StepOutcome::Cancelled, QString());
    else if (m_state == State::Running)
        startStep();
    else {
        m_model->setCurrent(m_next);
        setState(State::Paused);
    }
}

void PlanRunner::finish(StepOutcome outcome, const QString &reason)
{
    for (int i = m_next; i < m_plan->steps.size(); ++i) {
        StepResult r;
        r.index = i;
        r.name = m_plan->steps.at(i).name;
        r.tool = m_plan->steps.at(i).tool;
        r.outcome = outcome;
        r.reason = reason;
        m_model->setResult(r);
        Q_EMIT stepFinished(r);
    }
    m_next = int(m_plan->steps.size());
    m_model->setCurrent(-1);
    m_runner.reset(); // detaches the agent
    m_stopping = false;
    setState(State::Finished);
    Q_EMIT runFinished(m_passed, m_failed, int(m_plan->steps.size()) - m_passed - m_failed);
}

} // namespace elsai
