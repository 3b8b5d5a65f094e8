// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "offload.h"
#include "tools.h"
#include "types.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QMutex>
#include <QString>

#include <memory>
#include <optional>

namespace elsai {

class Sandbox;
class SandboxManager;
class Agent;

enum class SandboxMode { Off, Sandbox, LocalDev };
enum class SandboxAttachMode { ReadWrite, ReadOnly };

QString toString(SandboxMode mode);       ///< "off", "sandbox", "local_dev"
QString toString(SandboxAttachMode mode); ///< "read_write", "read_only"
/// Parses the spec's value names; throws ValueError listing the valid ones.
SandboxMode sandboxModeFromString(const QString &s);
SandboxAttachMode attachModeFromString(const QString &s);

/// True for a tool that can change the workspace: every tool but those a read-only agent gets
/// and the ones that only read (offload retrieval, checkpoint listings and diffs). Change
/// tracking and automatic checkpoints apply to these.
bool isMutatingTool(const QString &name);

/// Hook around agent invocations (WorkspaceOrchestrator is one).
class AgentHook
{
public:
    virtual ~AgentHook();
    virtual void beforeInvocation(Agent &agent) = 0;
};
using AgentHookPtr = std::shared_ptr<AgentHook>;

/// The sandbox fields of an agent's configuration (spec: AgentConfig).
struct AgentConfig
{
    std::shared_ptr<Sandbox> sandbox;
    SandboxAttachMode sandboxAttachMode = SandboxAttachMode::ReadWrite;
    SandboxMode sandboxMode = SandboxMode::Off;
    std::optional<SandboxOutputOffloadPolicy> sandboxOutputOffload;
    // Advanced per-agent path (no Sandbox):
    BackendSource executionBackend;
    std::optional<QString> workspaceRoot;
    WorkspaceSyncPolicy workspaceSyncPolicy;
    std::shared_ptr<SandboxManager> sandboxManager;
    /// Prebuilt tools to register (e.g. hostExecutionTools()); the host execution tools among
    /// them are blocked when sandboxMode is Sandbox.
    QList<Tool> tools;
    /// Bound of the read_file tool's answer in bytes; none: the attached sandbox's
    /// (Sandbox::Options::readFileMaxBytes, default DefaultReadFileMaxBytes).
    std::optional<qint64> readFileMaxBytes;
    /// SessionManager.session_id of the agent's conversation, if any (workspace id fallback).
    std::optional<QString> sessionId;
};

/// Statistics the agents panel shows.
struct AgentActivity
{
    int toolCalls = 0;
    QString lastTool;
    QString lastOutcome; ///< "ok" or the error's spec name
    QDateTime lastCallAt;
};

/// An agent: an id, a tool registry and its sandbox binding. Create with Agent::create().
/// Thread-safe: tools may be called from several threads at once.
class Agent : public std::enable_shared_from_this<Agent>
{
    struct Private;

public:
    /// Validates `config` (the spec's four invalid combinations raise ValueError), registers
    /// the prebuilt tools (host execution tools blocked in sandbox mode), sets up the per-agent
    /// path (manager auto-created, WorkspaceOrchestrator hook) and attaches to config.sandbox
    /// (which must be started, else SandboxAttachError).
    static std::shared_ptr<Agent> create(const QString &id, AgentConfig config = {});
    ~Agent();

    const QString &id() const;
    const AgentConfig &config() const;
    ToolRegistry &tools();
    const ToolRegistry &tools() const;
    /// Tool names dropped because sandbox mode blocks host execution tools.
    QStringList blockedTools() const;

    void addHook(const AgentHookPtr &hook);
    /// Runs every hook's beforeInvocation (e.g. prepares the per-agent workspace).
    void beginInvocation();

    /// Calls a tool by name: runs the invocation hooks, invokes it, applies output offload,
    /// records activity. Throws the tool's typed error; ToolNotFoundError for unknown or
    /// blocked tools.
    ToolResult callTool(const QString &name, const QJsonObject &arguments = {});

    // Sandbox binding (maintained by Sandbox::attach/detach).
    std::shared_ptr<Sandbox> attachedSandbox() const;
    std::optional<SandboxAttachMode> attachMode() const;
    /// True once the agent was detached from a sandbox and not re-attached.
    bool isDetached() const;
    /// `_sandbox_workspace_id`: the attached sandbox's workspace id.
    std::optional<QString> sandboxWorkspaceId() const;
    /// The per-agent path's manager (config's, or the auto-created one).
    std::shared_ptr<SandboxManager> sandboxManager() const;

    AgentActivity activity() const;

    /// Internal: called by Sandbox only.
    void bindSandbox(const std::shared_ptr<Sandbox> &sandbox, SandboxAttachMode mode);
    void unbindSandbox();

private:
    Agent(const QString &id, AgentConfig config);
    std::unique_ptr<Private> d;
};
using AgentPtr = std::shared_ptr<Agent>;

} // namespace elsai
