// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agent.h"
#include "sandbox.h"

#include <QHash>
#include <QJsonObject>
#include <QString>

#include <functional>
#include <optional>

class QIODevice;

namespace elsai {

/// Runs the headless JSON-lines API against one sandbox: one operation per input line, one
/// result line per operation, in order (format in docs/headless.md, "Headless script API").
/// Not thread-safe: one runner per script.
class ScriptRunner
{
public:
    /// `offload`, when set, is given to every agent the script attaches.
    explicit ScriptRunner(SandboxPtr sandbox,
                          std::optional<SandboxOutputOffloadPolicy> offload = std::nullopt);

    /// Parses and runs one line; never throws. Empty lines and lines starting with '#' give
    /// no result (none).
    std::optional<QJsonObject> runLine(const QByteArray &line);
    /// Runs one parsed operation; never throws.
    QJsonObject run(const QJsonObject &operation);

    /// Reads `in` to the end (or until the engine shuts down on a signal, commandsShutDown()),
    /// writing one compact JSON line per result to `out` (flushed per line). Returns the
    /// number of operations that failed.
    int runAll(QIODevice &in, QIODevice &out);

    AgentPtr agent(const QString &name) const { return m_agents.value(name); }

    /// Called after each successful "start" operation (--record begins there).
    std::function<void(const SandboxPtr &)> onStarted;

private:
    QJsonValue dispatch(const QString &op, const QJsonObject &o);
    AgentPtr requireAgent(const QJsonObject &o) const;

    SandboxPtr m_sandbox;
    std::optional<SandboxOutputOffloadPolicy> m_offload;
    QHash<QString, AgentPtr> m_agents;
};

/// The error object of a result line: {"type": spec name, "message": …}.
QJsonObject errorJson(const QString &type, const QString &message);

} // namespace elsai
