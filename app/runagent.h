// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>

class QIODevice;

namespace elsai {

struct SessionOptions;

/// Exit statuses of `--run-agent` (docs/agents.md).
enum RunAgentStatus : int {
    RunAgentPassed = 0,     ///< every step met its expectation
    RunAgentFailed = 1,     ///< a step did not (the rest may be skipped)
    RunAgentUsageError = 2, ///< bad options, unreadable or invalid plan
    RunAgentSetupError = 3, ///< the sandbox did not start cleanly or the agent could not attach
};

/// Loads options.runAgent (before anything is created), creates and starts the sandbox the
/// options describe, runs the plan as its agent and writes one JSON line per step to `out`,
/// then a summary line. Stops the sandbox without sync (the workspace stays on disk).
/// Returns a RunAgentStatus.
int runAgentPlan(SessionOptions &options, QIODevice &out);

} // namespace elsai
