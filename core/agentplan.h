// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agent.h"
#include "errors.h"
#include "offload.h"
#include "sandbox.h"

#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QMutex>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QWaitCondition>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace elsai {

class CancellationToken;

/// What a step must produce to pass (docs/agents.md). Without `error` the tool
/// call must succeed and every result check must hold; with `error` it must raise that type
/// (or a subclass: "OSError" accepts FileNotFoundError).
struct PlanExpectation
{
    std::optional<QString> error;
    std::optional<QString> errorContains;
    std::optional<int> exitCode; ///< execute only
    QStringList outputContains;  ///< substrings of the text the agent sees
    QStringList outputNotContains;
    std::optional<QRegularExpression> outputMatches;
    std::optional<QString> content; ///< read_file only: the exact content returned
    QJsonObject fields;             ///< fields of the structured result, compared as JSON
};

struct PlanStep
{
    QString name;
    QString tool;
    QJsonObject args;
    PlanExpectation expect;
    qint64 delayMs = 0; ///< waited before the call
};

/// A scripted agent: named tool calls with expectations, run as one agent attached to a
/// sandbox. Immutable once parsed; safe to copy between threads.
struct AgentPlan
{
    static constexpr int kVersion = 1;
    static QString formatName() { return QStringLiteral("elsai-agent-plan"); }
    static QString demoPrefix() { return QStringLiteral("demo:"); }

    QString name;
    QString description;
    QString agentName = QStringLiteral("plan-agent");
    SandboxAttachMode mode = SandboxAttachMode::ReadWrite;
    bool stopOnFailure = true;
    QList<PlanStep> steps;

    /// Parses and validates a plan; ValueError naming the plan, the step (number and name)
    /// and the field at fault. `fallbackName` is used when the plan has no "name".
    static AgentPlan parse(const QByteArray &json, const QString &fallbackName = QString());
    /// Loads a plan file, or a bundled demo plan given as "demo:NAME" (Qt resource
    /// ":/plans/NAME.json"). OSError when the file cannot be read or is not a regular file;
    /// ValueError for an unknown demo (the message lists the demos), a file over 16 MiB or
    /// an invalid plan.
    static AgentPlan load(const QString &source);
    /// Names of the bundled demo plans, sorted (empty when the resource is not linked).
    static QStringList demoNames();
};

enum class StepOutcome {
    Ok,        ///< the tool returned a result
    Error,     ///< the tool raised a typed error
    Skipped,   ///< not run: an earlier step failed and the plan stops on failure
    Cancelled, ///< not run (or its delay cut short): the run was stopped
};
QString toString(StepOutcome outcome); ///< "ok", "error", "skipped", "cancelled"

/// The result of one step: what happened, how long the call took, and whether the
/// expectation was met (`reason` says why not).
struct StepResult
{
    int index = -1; ///< 0-based
    QString name;
    QString tool;
    StepOutcome outcome = StepOutcome::Skipped;
    bool passed = false;
    QString reason;
    qint64 durationMs = 0; ///< the tool call only, not the delay
    QString text;          ///< what the agent saw
    QJsonObject data;      ///< the tool's structured result
    QString errorType;
    QString errorMessage;

    /// One JSON line of `--run-agent`: step (1-based), name, tool, outcome, passed, reason,
    /// duration_ms, and result or error.
    QJsonObject toJson() const;
};

/// Checks a finished call against a step's expectation; empty when it is met, else why not.
/// `errorTypes` lists the raised error's spec name and those of its bases (empty on success).
QString checkExpectation(const PlanStep &step, const QStringList &errorTypes, const QString &text,
                         const QJsonObject &data, const QString &errorMessage);

/// The spec names an error answers to: its own, then its bases' ("FileNotFoundError",
/// "OSError", "Exception").
QStringList errorTypeNames(const SandboxError &error);

/// Runs a plan's steps through a real Agent attached to `sandbox` with the plan's mode, so
/// the mode is enforced and every call is audited under the agent's name.
///
/// Threading: run steps from one thread at a time (any thread); cancel() may be called from
/// any thread and cuts a delay short at once; a command the execute tool runs is killed
/// (its process group) at once; another running tool call finishes first.
class AgentPlanRunner
{
public:
    using Clock = std::function<qint64()>;          ///< monotonic milliseconds
    using Sleeper = std::function<void(qint64 ms)>; ///< waits before a step

    struct Options
    {
        std::optional<QString> agentName;      ///< overrides the plan's
        std::optional<SandboxAttachMode> mode; ///< overrides the plan's
        std::optional<SandboxOutputOffloadPolicy> offload;
        Clock clock;     ///< default: a QElapsedTimer
        Sleeper sleeper; ///< default: a wait that cancel() interrupts
    };

    AgentPlanRunner(AgentPlan plan, SandboxPtr sandbox, Options options = {});
    ~AgentPlanRunner(); ///< detaches the agent
    AgentPlanRunner(const AgentPlanRunner &) = delete;
    AgentPlanRunner &operator=(const AgentPlanRunner &) = delete;

    const AgentPlan &plan() const { return m_plan; }
    QString agentName() const { return m_agentName; }
    SandboxAttachMode mode() const { return m_mode; }

    /// Creates the agent and attaches it (idempotent). SandboxAttachError when the sandbox
    /// is not started or another agent of that name is attached to it.
    AgentPtr attach();
    AgentPtr agent() const;
    void detach();

    /// Runs step `index` (attaching first when needed; SandboxAttachError then). Tool errors
    /// are results, never thrown.
    StepResult runStep(int index);
    /// A result for a step that will not run.
    StepResult notRun(int index, StepOutcome outcome, const QString &reason) const;
    /// Runs every step in order; after a failed step the rest are skipped when the plan
    /// stops on failure; after cancel() the rest are cancelled. `onStep` sees each result.
    QList<StepResult> run(const std::function<void(const StepResult &)> &onStep = {});

    void cancel();
    bool isCancelled() const { return m_cancelled.load(); }

private:
    void defaultSleep(qint64 ms);

    AgentPlan m_plan;
    SandboxPtr m_sandbox;
    QString m_agentName;
    SandboxAttachMode m_mode;
    Options m_options;
    mutable QMutex m_mutex; ///< guards m_agent and the delay wait
    QWaitCondition m_wake;
    AgentPtr m_agent;
    std::atomic_bool m_cancelled{false};
    /// Handed to each tool call (ToolCallCancelScope): cancel() kills a running command.
    const std::shared_ptr<CancellationToken> m_cancelToken;
};

} // namespace elsai

Q_DECLARE_METATYPE(elsai::StepResult)
