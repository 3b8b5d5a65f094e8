// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agent.h"
#include "audit.h"
#include "offload.h"
#include "sandboxspec.h"

#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

class QCommandLineParser;

namespace elsai {

/// The sandbox the command line describes (--workspace-id, --seed-from, …), shared by the
/// headless runner and the window.
struct SessionOptions
{
    enum class Mode { Headless, Gui };

    SandboxSpec spec;
    QString auditLog;

    QStringList execCommands;
    QString scriptPath;
    /// --run-agent: a plan file or "demo:NAME"; --agent-mode / --agent-name override the plan's.
    QString runAgent;
    std::optional<SandboxAttachMode> agentMode;
    std::optional<QString> agentName;
    /// --record FILE: the session's tool calls as a plan (implies --checkpoints and
    /// --track-changes); --record-agent NAME (repeatable): only these agents' calls.
    QString recordFile;
    QStringList recordAgents;

    bool offload = false;
    QString offloadDir;
    QString offloadS3Bucket; ///< --offload-s3: S3Storage in this bucket
    qint64 offloadMaxTokens = 2500;
    qint64 offloadPreviewTokens = 1000;

    // MCP server (mcp/): --mcp-http [HOST:]PORT, --mcp-stdio, --mcp-agent (repeatable).
    QString mcpHttp; ///< as given; parsed by mcpHttpAddress()
    bool mcpStdio = false;
    bool mcpAllowRemote = false;
    QStringList mcpAgents;          ///< NAME=read_write|read_only[:TOKEN]
    double mcpProgressInterval = 5; ///< --mcp-progress-interval SECONDS
    QString mcpConfig;              ///< --mcp-config CLIENT: print its configuration
    bool mcpCheckpoints = false;    ///< --mcp-checkpoints: the checkpoint tools for agents
    bool wantsMcp() const { return !mcpHttp.isEmpty() || mcpStdio; }

    /// Adds every option (and --help, --version) to the parser.
    static void describe(QCommandLineParser &parser, Mode mode);
    /// Reads the parsed options; ValueError on a bad value (message names the option).
    static SessionOptions fromParser(const QCommandLineParser &parser);

    std::optional<SandboxOutputOffloadPolicy> offloadPolicy() const;
    /// With --audit-log: opens the JSON-lines sink and registers it on AuditLog::instance()
    /// (OSError when the file cannot be opened). Keep the returned pointer for the run.
    AuditSinkPtr installAuditLog() const;
};

/// "elsai-workbench: <text>" on stderr.
void printError(const QString &text);

} // namespace elsai
