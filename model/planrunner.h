// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agentplan.h"
#include "sandbox.h"

#include <QAbstractTableModel>
#include <QFutureWatcher>
#include <QList>
#include <QObject>
#include <QThreadPool>

#include <memory>
#include <optional>

namespace elsai {

/// Roles of PlanStepsModel. They start far above Roles (modelroles.h) so the two enums can
/// grow independently without colliding.
namespace PlanRoles {
enum : int {
    StepIndexRole = Qt::UserRole + 500, ///< int, 0-based
    StepNameRole,
    StepToolRole,
    StepStatusRole,   ///< PlanStepsModel::Status as int
    IsCurrentRole,    ///< bool: the step running, or the next to run
    StepReasonRole,   ///< why the expectation was not met (empty when it was)
    StepDurationRole, ///< qint64 ms, invalid until the step ran
    StepResultRole,   ///< QJsonObject: StepResult::toJson(), invalid until the step ran
    StepArgsRole,     ///< QJsonObject: the step's arguments
};
} // namespace PlanRoles

/// The steps of one plan and how each went. Columns: #, Step, Tool, Status, Duration, Detail.
/// GUI thread only; colours are the view's business (StepStatusRole, IsCurrentRole).
class PlanStepsModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column {
        IndexColumn,
        NameColumn,
        ToolColumn,
        StatusColumn,
        DurationColumn,
        DetailColumn,
        ColumnCount
    };
    enum class Status { Pending, Running, Passed, Failed, Skipped, Cancelled };
    Q_ENUM(Status)

    explicit PlanStepsModel(QObject *parent = nullptr);

    /// Resets the model to the plan's steps, all pending.
    void setPlan(const AgentPlan &plan);
    /// Marks every step pending again (a rerun).
    void clearResults();
    void setRunning(int index);
    void setResult(const StepResult &result);
    /// -1 for none.
    void setCurrent(int index);
    int current() const { return m_current; }
    Status status(int index) const { return m_rows.at(index).status; }
    std::optional<StepResult> result(int index) const { return m_rows.at(index).result; }
    static QString statusText(Status status);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    struct Row
    {
        PlanStep step;
        Status status = Status::Pending;
        std::optional<StepResult> result;
    };
    void rowChanged(int index);
    QList<Row> m_rows;
    int m_current = -1;
};

/// Runs a plan in the window: one step at a time on a private thread, driven by play, pause,
/// step and stop from the GUI thread. The agent is attached to the sandbox (with the plan's
/// mode, or the override) when the first step runs, so it shows in the agents panel and
/// every call is audited under its name; it is detached when the run ends.
///
/// Threading: call every method on the GUI thread; the signals are emitted there. Stop cuts a
/// step's delay short and kills a running command at once; another running tool call finishes
/// first. The destructor stops and waits for the running step.
class PlanRunner : public QObject
{
    Q_OBJECT

public:
    enum class State {
        Empty,    ///< no plan
        Ready,    ///< loaded, nothing run yet
        Running,  ///< playing: steps follow one another
        Stepping, ///< one step running, then paused
        Pausing,  ///< pause requested: the running step finishes, then paused
        Paused,
        Finished, ///< every step ran, was skipped, or the run was stopped
    };
    Q_ENUM(State)

    explicit PlanRunner(QObject *parent = nullptr);
    ~PlanRunner() override;

    /// Replaces the plan (stopping a run in progress) and resets the steps.
    void setPlan(const AgentPlan &plan);
    /// AgentPlan::load(source), then setPlan(); throws its ValueError / OSError.
    void loadPlan(const QString &source);
    const std::optional<AgentPlan> &plan() const { return m_plan; }
    /// The sandbox the next run attaches to (must be started when the first step runs).
    void setSandbox(SandboxPtr sandbox);
    SandboxPtr sandbox() const { return m_sandbox; }
    /// Overrides for the next run (none: the plan's).
    void setAgentMode(std::optional<SandboxAttachMode> mode) { m_options.mode = mode; }
    void setAgentName(std::optional<QString> name) { m_options.agentName = std::move(name); }
    /// Replaces the delay wait (tests); the default is interrupted by stop().
    void setSleeper(AgentPlanRunner::Sleeper sleeper) { m_options.sleeper = std::move(sleeper); }

    PlanStepsModel *stepsModel() const { return m_model; }
    State state() const { return m_state; }
    bool isBusy() const; ///< a step is running (or its result not yet taken)
    /// The index of the step that runs next (or is running); plan size when done.
    int nextStep() const { return m_next; }
    int passedCount() const { return m_passed; }
    int failedCount() const { return m_failed; }

public Q_SLOTS:
    /// Runs the remaining steps; from Finished, starts over.
    void play();
    /// Pauses after the running step.
    void pause();
    /// Runs one step, then pauses; from Finished, starts over with the first step.
    void step();
    /// Ends the run: the rest of the steps are cancelled and the agent detached.
    void stop();
    /// Quitting: cancels the run, waits for the running step (a command is killed) and
    /// detaches the agent, without a signal. After it the runner runs no step.
    void shutdown();

Q_SIGNALS:
    void stateChanged(elsai::PlanRunner::State state);
    void stepStarted(int index);
    void stepFinished(const elsai::StepResult &result);
    /// Every step has a result (passed / failed count the steps that ran).
    void runFinished(int passed, int failed, int notRun);
    /// The run could not go on: no sandbox, or the agent could not attach.
    void runFailed(const QString &errorType, const QString &message);
    /// A recorded plan's run began: how its start was found (restored, matched, diverged).
    void startChecked(const elsai::StartCheck &check);

private:
    /// A step's result, or why the run could not go on (the agent did not attach).
    struct Attempt
    {
        std::optional<StartCheck> start; ///< the first step of a recorded plan's run
        std::optional<StepResult> result;
        QString errorType;
        QString errorMessage;
    };
    void setState(State state);
    bool ensureRunner();
    void startStep();
    void onStepDone();
    void finish(StepOutcome outcome, const QString &reason);
    void resetRun();

    QThreadPool m_pool; ///< one thread: steps never overlap
    PlanStepsModel *m_model;
    std::optional<AgentPlan> m_plan;
    SandboxPtr m_sandbox;
    AgentPlanRunner::Options m_options;
    std::shared_ptr<AgentPlanRunner> m_runner;
    QFutureWatcher<Attempt> m_watcher;
    State m_state = State::Empty;
    int m_next = 0;
    int m_passed = 0;
    int m_failed = 0;
    bool m_stopping = false;     ///< stop() came while a step was running
    bool m_busy = false;         ///< a step started and onStepDone() has not seen it yet
    bool m_shutDown = false;     ///< shutdown() ran: no step starts
    bool m_startChecked = false; ///< this run's start was brought about (a recorded plan)
};

} // namespace elsai
