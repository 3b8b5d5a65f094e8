// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "runagent.h"

#include "agentplan.h"
#include "errors.h"
#include "recording.h"
#include "sandbox.h"
#include "sessionoptions.h"

#include <QFileDevice>
#include <QIODevice>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace elsai {

static void writeLine(QIODevice &out, const QJsonObject &o)
{
    out.write(QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n');
    if (auto *file = qobject_cast<QFileDevice *>(&out))
        file->flush(); // a watcher sees each step as it ends
}

int runAgentPlan(SessionOptions &options, QIODevice &out)
{
    AgentPlan plan;
    try {
        plan = AgentPlan::load(options.runAgent);
    } catch (const SandboxError &e) {
        printError(e.display());
        return RunAgentUsageError;
    }

    if (plan.start) {
        // A recorded plan: a start to restore, and the changes of each call to compare.
        options.spec.timeTravel.checkpoints = true;
        options.spec.timeTravel.trackChanges = true;
    }
    SandboxPtr sandbox;
    try {
        sandbox = options.spec.createSandbox();
        // Steps must not run in a half-seeded workspace: their expectations would fail for
        // the wrong reason.
        if (const auto seed = sandbox->start(); seed && !seed->success()) {
            for (const QString &e : seed->errors)
                printError(QStringLiteral("seeding: ") + e);
            sandbox->stop(false);
            return RunAgentSetupError;
        }
    } catch (const SandboxError &e) {
        printError(e.display());
        return RunAgentSetupError;
    }

    // Made whole, not assigned field by field: GCC 14 at -O1 takes the assignment of the
    // optional name for a read of an uninitialized string.
    const AgentPlanRunner::Options runOptions{
        options.agentName, options.agentMode, options.offloadPolicy(), {}, {}};
    int status = RunAgentPassed;
    {
        AgentPlanRunner runner(plan, sandbox, runOptions);
        try {
            runner.attach();
        } catch (const SandboxError &e) {
            printError(e.display());
            sandbox->stop(false);
            return RunAgentSetupError;
        }
        StartCheck start;
        try {
            start = runner.prepareStart();
        } catch (const SandboxError &e) {
            printError(e.display());
            sandbox->stop(false);
            return RunAgentSetupError;
        }
        if (start.diverged())
            printError(start.message); // the run goes on: its steps say what that changed
        HeadlessRecording recording(options);
        if (!recording.begin(sandbox)) {
            sandbox->stop(false);
            return RunAgentSetupError;
        }
        int passed = 0, failed = 0, notRun = 0, divergences = 0;
        QJsonArray diverged;
        runner.run([&](const StepResult &r) {
            if (!r.divergences.isEmpty()) {
                divergences += int(r.divergences.size());
                diverged.append(r.index + 1);
            }
            if (r.outcome == StepOutcome::Skipped || r.outcome == StepOutcome::Cancelled)
                ++notRun;
            else if (r.passed)
                ++passed;
            else
                ++failed;
            writeLine(out, r.toJson());
        });
        const bool ok = failed == 0 && notRun == 0 && !start.diverged();
        QJsonObject summary{{QStringLiteral("plan"), plan.name},
                            {QStringLiteral("agent"), runner.agentName()},
                            {QStringLiteral("mode"), toString(runner.mode())},
                            {QStringLiteral("steps"), int(plan.steps.size())},
                            {QStringLiteral("passed"), passed},
                            {QStringLiteral("failed"), failed},
                            {QStringLiteral("not_run"), notRun},
                            {QStringLiteral("ok"), ok},
                            {QStringLiteral("workspace_root"), options.spec.workspaceRoot}};
        if (plan.start) {
            summary.insert(QStringLiteral("start"), start.toJson());
            summary.insert(QStringLiteral("diverged_steps"), diverged);
            summary.insert(QStringLiteral("divergences"), divergences);
        }
        writeLine(out, summary);
        status = recording.finish(ok ? RunAgentPassed : RunAgentFailed);
    }
    sandbox->stop(false);
    return status;
}

} // namespace elsai
