// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agent.h"
#include "backend.h"
#include "boundedread.h"
#include "tools.h"
#include "types.h"

#include <QString>

#include <optional>

namespace elsai {

struct CappedListing; // firstentries.h

/// The workspace an agent's sandbox tools act on: its attached Sandbox's, or the per-agent
/// session (prepared on first use).
struct AgentWorkspace
{
    BackendPtr backend;
    QString workspaceId;
    std::shared_ptr<SandboxManager> manager;
    SandboxAttachMode mode = SandboxAttachMode::ReadWrite;
};

/// Resolves the agent's workspace; AgentSandboxDetachedError when it has none (detached,
/// never attached, or its sandbox is stopped).
AgentWorkspace agentWorkspace(Agent &agent);

/// Raises AgentSandboxDetachedError for a detached agent and SandboxMutationDeniedError for a
/// read-only one; `operation` names what was attempted in the message.
void ensureSandboxMutationAllowed(Agent &agent, const QString &operation = QString());

/// What the front end that runs one tool call (an MCP request, a plan step) gives that call, on
/// its thread, for the length of the call: a cancellation token — the execute tool hands it to
/// its command, so cancelling it kills the command's process group at once (without a scope, a
/// command ends at its own timeout) — and an optional observer of the command's output as it
/// arrives (MCP's progress notifications count it).
class ToolCallCancelScope
{
public:
    using OutputObserver = std::function<void(OutputChannel, const QByteArray &)>;
    explicit ToolCallCancelScope(std::shared_ptr<CancellationToken> token,
                                 OutputObserver onOutput = {});
    ~ToolCallCancelScope();
    ToolCallCancelScope(const ToolCallCancelScope &) = delete;
    ToolCallCancelScope &operator=(const ToolCallCancelScope &) = delete;
    /// The token of the innermost scope on this thread (nullptr when none).
    static std::shared_ptr<CancellationToken> current();
    /// The output observer of the innermost scope on this thread (empty when none).
    static OutputObserver currentOutputObserver();

private:
    std::shared_ptr<CancellationToken> m_previous;
    OutputObserver m_previousObserver;
};

// Custom tool helpers (spec: elsai.plugins.sandbox). Each call is audited under the agent's id.
/// Runs a shell command and returns formatExecuteResult() of it.
QString runCommand(Agent &agent, const QString &command,
                   const std::optional<QString> &cwd = std::nullopt);
/// The structured form run_command and the execute tool use. `timeoutSeconds` none: the
/// backend's default.
ExecuteResult executeAs(Agent &agent, const QString &command,
                        const std::optional<QString> &cwd = std::nullopt,
                        const ExecuteOptions &options = {},
                        std::optional<double> timeoutSeconds = std::nullopt);
class AuditRecorder;
using CommandRunner =
    std::function<void(SandboxBackend &backend, const AgentWorkspace &ws, AuditRecorder &audit)>;
/// The audited frame of every command an agent runs (execute, its soft return,
/// process_start): checks the command and the agent's mode, resolves the workspace and
/// records one audit event `event` with the command's length and hash (never its text);
/// `run` runs it and adds its fields.
void auditedCommand(Agent &agent, const QString &event, const QString &command,
                    const std::optional<QString> &cwd, const QMap<QString, QString> &env,
                    const CommandRunner &run);
/// The exit code, duration, truncated and timed_out fields of an execute record.
void recordExecuteResult(AuditRecorder &audit, const ExecuteResult &result);
/// Lines [offset, offset+limit) of a text file (lines end with '\n'; the last may not), but
/// at most readFileMaxBytes(agent) bytes: a longer answer is cut at a line end (or a character
/// boundary) and ends with a note giving the file's size and the offset / byte_offset that
/// read on (boundedReadNote()).
QString readWorkspaceFile(Agent &agent, const QString &path, qint64 offset = 0,
                          std::optional<qint64> limit = std::nullopt);
/// The bounded read behind readWorkspaceFile() and the read_file tool, audited; `request`'s
/// maxBytes is lowered to readFileMaxBytes(agent). ValueError for a binary file (a NUL in
/// the first 8 KiB read). With `rest`, when the agent's offload policy covers read_file and
/// the answer was cut at readFileMaxBytes(agent) (not at a lower max_bytes the caller asked
/// for), the rest of the file is streamed to the policy's storage
/// (SandboxOutputOffloadPolicy::offloadRest) and `*rest` says what was stored.
BoundedRead readWorkspaceRange(Agent &agent, const QString &path, BoundedReadRequest request,
                               SandboxOutputOffloadPolicy::Rest *rest = nullptr);
/// The read_file byte bound of `agent`: AgentConfig::readFileMaxBytes, else its attached
/// sandbox's Sandbox::Options::readFileMaxBytes, else DefaultReadFileMaxBytes.
qint64 readFileMaxBytes(Agent &agent);
/// Writes a text file atomically; returns a confirmation line.
QString writeWorkspaceFile(Agent &agent, const QString &path, const QString &content);
/// One line per entry: "name/" for folders, "name (N bytes)" for files, "name (symlink)",
/// "name (special file)". A folder of more than listingSizeLimit() entries is listed without
/// file sizes (no stat per entry), which a last line says.
QString listWorkspaceDir(Agent &agent, const QString &path);
/// Folders with more entries than this are listed by listWorkspaceDir without sizes.
constexpr qsizetype listingSizeLimit()
{
    return 256;
}
/// At most this many entries of one folder reach an agent (the list_dir tool, both forms); a
/// last line says how many more there are and how to see them, and the structured result has
/// `truncated` and `total_entries`.
constexpr qsizetype listDirMaxEntries()
{
    return 2000;
}
/// The entries with lstat data; with `statLimit` >= 0, a folder of more entries may come back
/// with types only (see ExecutionBackend::listDirBrief).
QList<FileInfo> listWorkspaceEntries(Agent &agent, const QString &path, qsizetype statLimit = -1);
/// The first `maxEntries` entries by name and the folder's count: the audited backend listing
/// the list_dir tool and listWorkspaceDir() use, held in memory proportional to `maxEntries`
/// (firstentries.h).
CappedListing listWorkspaceFirst(Agent &agent, const QString &path, qsizetype maxEntries,
                                 qsizetype statLimit = -1);
/// Formats an ExecuteResult the way the execute tool shows it to the agent:
/// stdout, then "[stderr]" and stderr when there is any, then a status line
/// "[exit code: N]" with ", output truncated" / ", timed out" when they apply.
QString formatExecuteResult(const ExecuteResult &result);

/// Registers the workspace tools (execute, read_file, write_file, list_dir) on agents
/// (spec: SandboxPlugin). execute is omitted when the backend cannot execute; read-only agents
/// get read_file and list_dir only.
class SandboxPlugin
{
public:
    static QString providerName() { return QStringLiteral("sandbox"); }
    static QStringList toolNames(SandboxAttachMode mode, bool canExecute);
    static QList<Tool> tools(SandboxAttachMode mode, bool canExecute);
    /// Replaces the agent's sandbox tools with those of `mode`.
    static void registerTools(Agent &agent, SandboxAttachMode mode, bool canExecute);
    static QStringList unregisterTools(Agent &agent);
};

/// The retrieve_offloaded_content tool of an offload policy.
Tool retrieveOffloadedContentTool(const SandboxOutputOffloadPolicy &policy);

} // namespace elsai
