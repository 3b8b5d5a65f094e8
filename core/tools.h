// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace elsai {

class Agent;

/// What a tool returns: the text the agent sees, and the same result as structured data with
/// the spec's field names (exit_code, output, …) for scripts and the window.
/// An image a tool returns beside its text (read_file of a PNG, JPEG, GIF or WebP): MCP sends
/// it as image content, other front ends see the text and `data`.
struct ToolImage
{
    QString mimeType;
    QByteArray bytes;
};

struct ToolResult
{
    QString text;
    QJsonObject data;
    bool offloaded = false;
    std::optional<ToolImage> image{};
};

/// What calling a tool does, as MCP's tool annotations say it (readOnlyHint, destructiveHint,
/// idempotentHint); a tool without hints is described by its name (mcpsession.cpp).
struct ToolHints
{
    bool readOnly = false;
    bool destructive = true; ///< may replace or delete data (meaningless when readOnly)
    bool idempotent = false; ///< a second identical call changes nothing more
};

/// One callable tool. `invoke` throws the typed errors of errors.h on failure.
struct Tool
{
    QString name;
    QString description;     ///< what an LLM needs to use it well
    QJsonObject inputSchema; ///< JSON Schema of the arguments object
    QString provider;        ///< "sandbox", "host", "offload", …
    std::function<ToolResult(Agent &agent, const QJsonObject &args)> invoke;
    QString title{};            ///< a short human-readable name ("Run a shell command")
    QJsonObject outputSchema{}; ///< JSON Schema of ToolResult::data (empty: not described)
    std::optional<ToolHints> hints{};
};

/// An agent's tools by name. Thread-safe.
class ToolRegistry
{
public:
    /// Adds or replaces the tool of that name. A blocked name is refused: it is recorded in
    /// blocked() and false is returned.
    bool add(const Tool &tool);
    /// Names this registry refuses from now on, whichever way a tool arrives (sandbox mode
    /// blocks the host execution tools given at construction and any added later).
    void setBlockedNames(const QStringList &names);
    /// The blocked names something tried to add, in the order first tried.
    QStringList blocked() const;
    bool remove(const QString &name);
    /// Removes every tool of a provider; returns their names.
    QStringList removeProvider(const QString &provider);
    bool contains(const QString &name) const;
    std::optional<Tool> get(const QString &name) const;
    QStringList names() const; ///< sorted
    QList<Tool> tools() const;

private:
    mutable QMutex m_mutex;
    QList<Tool> m_tools;
    QStringList m_blockedNames;
    QStringList m_blocked;
};

/// Checks `arguments` against the tool's inputSchema before it runs (Agent::callTool): every
/// required property present and not null, every given property of its declared type
/// (string, integer, number, boolean, object, array) and not below its `minimum`; with
/// `additionalProperties: false` (objectSchema()), no argument the schema does not declare.
/// Throws ValueError naming the tool and the argument(s).
void validateToolArguments(const Tool &tool, const QJsonObject &arguments);

/// Argument helpers for tool implementations: throw ValueError naming the tool and argument.
namespace args {
QString requiredString(const QJsonObject &a, const QString &key, const QString &tool);
std::optional<QString> optionalString(const QJsonObject &a, const QString &key,
                                      const QString &tool);
std::optional<qint64> optionalInt(const QJsonObject &a, const QString &key, const QString &tool);
std::optional<double> optionalNumber(const QJsonObject &a, const QString &key, const QString &tool);
} // namespace args

/// Lines [offset, offset + limit) of `text`; lines keep their '\n' (the last may have none).
/// Used by every tool that reads by lines (read_file, retrieve_offloaded_content).
QString sliceLines(const QString &text, qint64 offset, std::optional<qint64> limit);

/// Builds a JSON Schema object: {"type":"object","properties":…,"required":[…]}.
QJsonObject objectSchema(const QJsonObject &properties, const QStringList &required);

/// Schema pieces the tool definitions share.
namespace schema {
/// {"type": type, "description": description}
QJsonObject prop(const char *type, const QString &description);
/// {"type": type}
QJsonObject typed(const char *type);
/// {"type":"integer","minimum":minimum,"description":…}
QJsonObject integer(const QString &description, qint64 minimum = 0);
/// The JSON Schema of a tool's structured result (ToolResult::data). The large fields
/// (output, stderr, content, entries) are never required: the offload policy drops them from
/// a result it shortens, and adds "offloaded" (so more properties are allowed).
QJsonObject result(const QJsonObject &properties, const QStringList &required);
} // namespace schema

} // namespace elsai
