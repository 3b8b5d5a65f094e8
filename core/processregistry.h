// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace elsai {

/// One thing running in a sandbox, as the Processes panel lists it.
struct ProcessEntry
{
    /// Where it came from. A new source (the background processes of the agent tools) adds a
    /// kind and registers its processes the same way.
    enum class Kind { Terminal, Command, Background };

    quint64 id = 0;
    QString workspaceId;
    Kind kind = Kind::Command;
    QString label;   ///< the command (for people: the panel, never the audit log), or the shell
    QString actor;   ///< the agent's id, or "human" for a terminal
    QString backend; ///< the backend's class name
    QString cwd;     ///< workspace-relative; empty: the workspace
    QDateTime startedAt;
    qint64 pid = 0; ///< a host process that leads its tree (a local terminal's shell), or 0
    /// A terminal's program in the foreground now (its command line, e.g. `python3 -m
    /// http.server`); empty while only the shell runs or where the backend cannot tell.
    QString foreground;
    bool stopping = false;

    static QString kindName(Kind kind);         ///< "terminal", "command", "background"
    static constexpr qsizetype MaxLabel = 4096; ///< characters of a command kept for the panel
};

/// What a source hands the registry for one process.
struct ProcessHooks
{
    /// Asks it to stop: SIGTERM to its process group, SIGKILL after the grace (commands: their
    /// cancellation token; terminals: the session's terminate()). Called on any thread.
    std::function<void()> stop;
    /// Its output so far, when the source keeps it elsewhere (a background process's log);
    /// empty: the registry's own bounded tail (appendOutput()).
    std::function<QByteArray()> output;
};

/// The processes running in every sandbox of this engine (process-wide, thread-safe): agents'
/// commands register while they run, terminals while they are open. Lookups by id are safe
/// after the entry is gone (they then find nothing).
class ProcessRegistry
{
public:
    /// Bytes of output kept per process (the last ones).
    static constexpr qsizetype OutputTailBytes = 64 * 1024;

    static ProcessRegistry &instance();

    /// Registers a process; returns its id. `entry.id` and `startedAt` (when null) are filled.
    quint64 add(ProcessEntry entry, ProcessHooks hooks);
    void remove(quint64 id);
    void setPid(quint64 id, qint64 pid);
    /// A terminal's foreground program changed; `stopped`: the one a stop() was for is gone
    /// and the terminal stays (the entry is no longer stopping).
    void setForeground(quint64 id, const QString &command, bool stopped = false);
    /// Keeps the last OutputTailBytes of a process's output.
    void appendOutput(quint64 id, const QByteArray &bytes);

    /// The processes of one sandbox (all with an empty id), oldest first.
    QList<ProcessEntry> list(const QString &workspaceId = QString()) const;
    std::optional<ProcessEntry> find(quint64 id) const;
    QByteArray output(quint64 id) const;
    /// Asks the process to stop; false when it is gone.
    bool stop(quint64 id);
    /// Changes on every add, remove and stop: views refresh when it moved.
    quint64 generation() const;

private:
    struct Item
    {
        ProcessEntry entry;
        ProcessHooks hooks;
        QByteArray tail;
    };
    mutable QMutex m_mutex;
    QHash<quint64, Item> m_items;
    quint64 m_next = 1;
    quint64 m_generation = 0;
};

/// Registers a process for the lifetime of the object.
class ProcessRegistration
{
public:
    ProcessRegistration() = default;
    ProcessRegistration(ProcessEntry entry, ProcessHooks hooks);
    ~ProcessRegistration();
    ProcessRegistration(const ProcessRegistration &) = delete;
    ProcessRegistration &operator=(const ProcessRegistration &) = delete;
    ProcessRegistration(ProcessRegistration &&other) noexcept;
    ProcessRegistration &operator=(ProcessRegistration &&other) noexcept;

    quint64 id() const { return m_id; }
    void reset();

private:
    quint64 m_id = 0;
};

} // namespace elsai
