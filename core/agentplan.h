// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agent.h"
#include "errors.h"
#include "glob.h"
#include "offload.h"
#include "sandbox.h"

#include <QJsonObject>
#include <QList>
#include <QMap>
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

    // Version 2, what a recording saw (docs/agents.md, "Recorded plans"):
    /// "added", "modified", "deleted": the exact path list, or a count (a list too long to
    /// record); a kind not given is not checked.
    QJsonObject changes;
    QMap<QString, QString> files;         ///< path → workspaceEntryState() after the call
    std::optional<QString> contentSha256; ///< read_file: recordedHash() of the content
    std::optional<QString> namesSha256;   ///< list_dir: listDirNamesHash() of its path
};

struct PlanStep
{
    QString name;
    QString tool;
    QJsonObject args;
    PlanExpectation expect;
    qint64 delayMs = 0; ///< waited before the call
    /// Version 2: the agent that makes this call, when not the plan's (a recorded session of
    /// several agents, the console among them).
    std::optional<QString> agentName;
    SandboxAttachMode agentMode = SandboxAttachMode::ReadWrite;
};

/// Version 2: where a recorded plan starts — a checkpoint, and the digest of the whole tree
/// there (treeDigest()), so a fresh workspace can be recognised as that start.
struct PlanStart
{
    QString checkpoint;
    QString digest;
};

/// One difference between what a recorded step saw and what its replay saw.
struct Divergence
{
    QString check; ///< "start", "error", "exit_code", "changes.added", "file", "content_sha256", …
    QString path;  ///< "file": the path
    QJsonValue expected;
    QJsonValue seen;
    QStringList missing;    ///< a path list: recorded but not seen
    QStringList unexpected; ///< … seen but not recorded
    QJsonObject toJson() const;
    QString describe() const; ///< one line
};

/// A scripted agent: named tool calls with expectations, run as one agent attached to a
/// sandbox. Immutable once parsed; safe to copy between threads.
struct AgentPlan
{
    /// The version written (recorded plans); version 1 plans are read too.
    static constexpr int kVersion = 2;
    static QString formatName() { return QStringLiteral("elsai-agent-plan"); }
    static QString demoPrefix() { return QStringLiteral("demo:"); }

    QString name;
    QString description;
    QString agentName = QStringLiteral("plan-agent");
    SandboxAttachMode mode = SandboxAttachMode::ReadWrite;
    bool stopOnFailure = true;
    QList<PlanStep> steps;
    int version = kVersion;
    std::optional<PlanStart> start; ///< version 2: a recorded plan's start
    /// Version 2: globs (as seed excludes: a path or a parent folder matching) of paths whose
    /// changes are not compared — build products that differ from run to run.
    QStringList ignore;

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
    QList<Divergence> divergences; ///< a recorded plan's: every one of this step

    /// One JSON line of `--run-agent`: step (1-based), name, tool, outcome, passed, reason,
    /// duration_ms, and result or error.
    QJsonObject toJson() const;
};

/// Checks a finished call against a step's expectation; empty when it is met, else why not.
/// `errorTypes` lists the raised error's spec name and those of its bases (empty on success).
QString checkExpectation(const PlanStep &step, const QStringList &errorTypes, const QString &text,
                         const QJsonObject &data, const QString &errorMessage);

/// How a replay reads the workspace after a call: workspaceEntryState() of a path and
/// listDirNamesHash() of a folder (injectable for tests).
struct WorkspaceProbe
{
    std::function<QString(const QString &path)> entryState;
    std::function<QString(const QString &path)> namesHash;
};

/// Compares what a step's call did with what its recording saw: the changes, the files, the
/// hashes of read_file's content and list_dir's names and — when `recorded` (a plan with a
/// start) — the error raised (`errorType`, empty when none), the exit code, and a
/// `background_process` divergence for each process_start (what a background process does
/// between the calls is not recorded, so its replay cannot be compared). Every difference, in
/// that order; empty when none.
/// Paths matching `ignore` (AgentPlan::ignore) are left out of the changes seen, as the
/// recording left them out.
QList<Divergence> compareRecorded(const PlanStep &step, bool recorded, const QString &errorType,
                                  const QJsonObject &data, const WorkspaceProbe &probe,
                                  const GlobSet &ignore = GlobSet());

/// How a replay found its start (AgentPlanRunner::prepareStart()).
struct StartCheck
{
    enum class Outcome {
        None,     ///< the plan names no start
        Restored, ///< the starting checkpoint was restored
        Matched,  ///< not in the store, but the workspace's digest is the recorded one
        Diverged, ///< the workspace is not the recorded start (the run goes on)
    };
    Outcome outcome = Outcome::None;
    QString checkpoint;
    QString expectedDigest;
    QString seenDigest;
    QString message; ///< one line for people
    bool diverged() const { return outcome == Outcome::Diverged; }
    QJsonObject toJson() const;
};
QString toString(StartCheck::Outcome outcome); ///< "none", "restored", "matched", "diverged"

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

    /// Brings the workspace to a recorded plan's start (nothing for a plan without one):
    /// restores the starting checkpoint when the store has it, else compares the workspace's
    /// digest with the recorded one. ValueError when the sandbox keeps no checkpoints.
    StartCheck prepareStart();

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
    /// The agent of a step: the plan's, or the step's own (attached on first use).
    AgentPtr agentFor(const PlanStep &step);

    AgentPlan m_plan;
    SandboxPtr m_sandbox;
    QString m_agentName;
    SandboxAttachMode m_mode;
    Options m_options;
    mutable QMutex m_mutex; ///< guards m_agent and the delay wait
    QWaitCondition m_wake;
    AgentPtr m_agent;
    QMap<QString, AgentPtr> m_stepAgents; ///< the steps' own agents, by the name in the plan
    std::atomic_bool m_cancelled{false};
    /// Handed to each tool call (ToolCallCancelScope): cancel() kills a running command.
    const std::shared_ptr<CancellationToken> m_cancelToken;
};

} // namespace elsai

Q_DECLARE_METATYPE(elsai::StepResult)
Q_DECLARE_METATYPE(elsai::StartCheck)
