// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "textedit.h"
#include "tools.h"
#include "workspacesearch.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace elsai {

class Agent;

// The coding-agent tools beyond the spec's four (docs/tools.md): search, exact edits, file
// management and background processes. Each call is audited under the agent's id as
// "sandbox.<tool>" (one record per call; patterns, commands and input by length and hash).

/// The read-only tools every attached agent gets: grep, glob, read_many, stat, tree.
QList<Tool> agentReadTools();
/// The tools that change the workspace, for read-write agents: edit_file, move, delete, mkdir.
QList<Tool> agentWriteTools();
/// The background process tools (read-write agents on a backend that runs commands):
/// process_start, process_list, process_output, process_input, process_stop.
QList<Tool> processTools();
/// For a sandbox tool that changes the workspace (or runs commands), what it does ("edit
/// files", …) as ensureSandboxMutationAllowed() names it; none for others.
std::optional<QString> sandboxMutation(const QString &toolName);

/// The execute tool's call: the per-call `timeout` (bounded by the backend's) and the soft
/// return after executeSoftReturnSeconds(agent).
ToolResult executeToolCall(Agent &agent, const QJsonObject &arguments);

/// Seconds after which the execute tool answers while its command goes on: the agent's
/// sandbox's Sandbox::Options::executeSoftReturnSeconds, else DefaultExecuteSoftReturnSeconds.
/// 0: never (the command runs to its end or timeout).
double executeSoftReturnSeconds(Agent &agent);
constexpr double DefaultExecuteSoftReturnSeconds = 45;

/// The seed excludes the search tools skip for `agent` (its sandbox's effective ones, else
/// DEFAULT_SANDBOX_SEED_EXCLUDES).
QStringList searchSkips(Agent &agent);

/// `text` with each line prefixed by its number (from `firstLine`), right-aligned in six
/// columns and a tab, as `cat -n` does (read_file and read_many with line_numbers).
QString numberLines(const QString &text, qint64 firstLine);

/// The most bytes of an image read_file returns as image content.
constexpr qint64 MaxImageBytes = 5 * 1024 * 1024;
/// The image type of a file name (png, jpg/jpeg, gif, webp), or empty.
QString imageMimeType(const QString &path);
/// read_file of an image: the bytes (at most MaxImageBytes), checked against the type's
/// signature; ValueError when the file is larger or not that kind of image. Audited as
/// sandbox.read_file.
ToolImage readWorkspaceImage(Agent &agent, const QString &path);

// Typed, audited forms of the tools for the C++ API.
GrepResult grepAs(Agent &agent, const GrepRequest &request);
GlobResult globAs(Agent &agent, const GlobRequest &request);
/// Without `dryRun`, writes the edited file through the backend's atomic write.
TextEdit editFileAs(Agent &agent, const QString &path, const QString &oldText,
                    const QString &newText, bool replaceAll = false, bool dryRun = false);

} // namespace elsai
