// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "tools.h"

#include <QList>

namespace elsai {

/// The checkpoint tools of a read-write agent when its sandbox offers them
/// (TimeTravelOptions::agentTools, --mcp-checkpoints): checkpoint, checkpoints,
/// diff_checkpoints, restore_checkpoint, delete_checkpoint. Provider "sandbox", so they come
/// and go with the sandbox tools. Each acts on the agent's attached sandbox as the agent.
QList<Tool> checkpointTools();

} // namespace elsai
