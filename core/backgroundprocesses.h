// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "workerthreads.h"

#include <QByteArray>
#include <QHash>
#include <QString>

#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>

namespace elsai {

/// What a background process is doing, as the process tools report it.
struct BackgroundProcessInfo
{
    QString id;
    QString owner; ///< the agent that started it
    QString workspaceId;
    QString command;
    QString cwd;
    qint64 startedAtMs = 0; ///< since the epoch
    bool running = true;
    bool acceptsInput = false;
    qint64 outputBytes = 0;              ///< all output seen so far (stdout and stderr together)
    qint64 droppedBytes = 0;             ///< output no longer held (the buffer keeps the last part)
    std::optional<ExecuteResult> result; ///< once ended (output fields empty: read them)
    QJsonObject toJson() const;
};

/// Output of a background process from an offset.
struct BackgroundOutput
{
    QByteArray data;
    qint64 offset = 0;     ///< where `data` starts in the whole output
    qint64 nextOffset = 0; ///< pass it to read on
    qint64 skipped = 0;    ///< bytes before `offset` asked for but no longer held
    bool running = true;
};

/// The background processes of one SandboxManager's workspaces (the process_* tools and
/// execute's soft return).
///
/// Each process runs `SandboxBackend::execute()` on a thread of its own (reused threads; a soft
/// return's command may start on its caller's thread, see runWithSoftReturn()). Its output
/// (stdout and stderr interleaved as they arrive) goes into a buffer holding the last bufferBytes;
/// where the backend acceptsInput() (local, bwrap) the command gets a stdin pipe and streams past
/// the backend's output cap, elsewhere (ssh, daytona) stdin is empty and the cap ends what is kept.
/// stop() cancels the call: the backend's TERM, grace, KILL of the process group. A process
/// belongs to the agent that started it: the others see no such process. Every process of a
/// workspace ends when the workspace is closed (stopWorkspace()), all of them with the manager.
/// Thread-safe.
class BackgroundProcesses
{
public:
    struct Limits
    {
        qint64 bufferBytes = 1024 * 1024; ///< output held per process
        int maxRunning = 16;              ///< per workspace
        int maxFinished = 32;             ///< ended processes kept for reading, per workspace
        /// Threads for commands at once, in all (the user's process limit is the bound that
        /// matters; a smaller one lets a test reach it).
        int maxThreads = std::numeric_limits<int>::max();
    };

    explicit BackgroundProcesses(Limits limits);
    BackgroundProcesses();
    ~BackgroundProcesses(); ///< stops every process
    BackgroundProcesses(const BackgroundProcesses &) = delete;
    BackgroundProcesses &operator=(const BackgroundProcesses &) = delete;

    const Limits &limits() const { return m_limits; }

    /// How start() runs the command.
    struct StartRequest
    {
        std::shared_ptr<SandboxBackend> backend;
        QString workspaceId;
        QString owner;
        QString command;
        QString cwd;
        std::optional<double> timeoutSeconds; ///< none: the backend's default
        /// Stream past the output cap and take input where the backend can (process_start);
        /// off: an ordinary execute() whose result keeps its usual form (the soft return).
        bool background = true;
        /// Sees each output chunk until detachObserver() (execute's MCP progress).
        std::function<void(OutputChannel, const QByteArray &)> observer;
    };
    /// Starts the command on a thread of its own; returns its id. ValueError when the
    /// workspace already runs maxRunning background processes (a soft-return execute still
    /// waiting is not one); OSError when no thread can be made.
    QString start(StartRequest request);

    /// What runWithSoftReturn() came to: the result, or the id of the background process the
    /// command became.
    struct SoftReturn
    {
        std::optional<ExecuteResult> result;
        QString processId;
    };
    /// execute's soft return: runs the command until it ends (its result) or `softMs` passes,
    /// when it goes on as a background process of `request.owner` whose output so far stays
    /// readable from offset 0. `cancel` (the caller's) ends the command and returns its result.
    /// Where the backend starts commands on the calling thread (startCommand()) and this thread
    /// outlives them (the main thread), the command runs here until the soft-return time and
    /// only one still running moves to a thread: a short command costs no hand-over between
    /// threads. Throws what execute() throws.
    SoftReturn runWithSoftReturn(StartRequest request, int softMs,
                                 const std::shared_ptr<CancellationToken> &cancel);

    /// Waits until the process ends, `timeoutMs` passes or `cancel` is cancelled; true when
    /// it ended.
    bool wait(const QString &id, int timeoutMs,
              const std::shared_ptr<CancellationToken> &cancel = {});
    /// The result of an ended process, removing it (the soft return's normal end); throws
    /// again what the backend's execute() threw.
    std::optional<ExecuteResult> take(const QString &id);
    /// No more observer calls after this returns; the process counts against maxRunning
    /// from now on (the soft return hands it over).
    void detachObserver(const QString &id);

    /// The processes of `owner` in `workspaceId`, oldest first.
    QList<BackgroundProcessInfo> list(const QString &workspaceId, const QString &owner) const;
    /// FileNotFoundError for an unknown id (or another agent's).
    BackgroundProcessInfo info(const QString &id, const QString &owner) const;
    BackgroundOutput read(const QString &id, const QString &owner, qint64 offset,
                          qint64 maxBytes) const;
    /// Writes to the process's stdin without blocking; returns the bytes taken (a full pipe
    /// takes fewer). `close` ends stdin afterwards. PermissionError where the backend gives
    /// no input, OSError once the process has ended.
    qint64 write(const QString &id, const QString &owner, const QByteArray &bytes, bool close);
    /// Cancels the process (TERM to its group, KILL after the grace) and waits for it to end.
    BackgroundProcessInfo stop(const QString &id, const QString &owner);
    /// Stops and forgets every process of a workspace (its session is closing).
    void stopWorkspace(const QString &workspaceId);

private:
    struct Job;
    /// A job for `request` (checked), not yet listed.
    std::shared_ptr<Job> newJob(const StartRequest &request) const;
    /// Gives it an id and lists it; ValueError over maxRunning (counted jobs only).
    void addJob(const std::shared_ptr<Job> &job);
    bool removeJob(const QString &id); ///< false when it was gone already
    /// Moves a soft return's running command to a thread of its own; false (and `running`
    /// left as it was) when no thread can be made.
    bool handOver(const std::shared_ptr<Job> &job, std::unique_ptr<RunningCommand> &running);
    /// runWithSoftReturn() for a backend that runs commands only through execute(): on a
    /// thread of its own from the start.
    SoftReturn softReturnOnThread(const StartRequest &request, int softMs,
                                  const std::shared_ptr<CancellationToken> &cancel);
    std::shared_ptr<Job> find(const QString &id, const QString &owner) const;
    void stopJob(const std::shared_ptr<Job> &job);
    void prune(const QString &workspaceId); ///< caller holds m_mutex

    Limits m_limits;
    mutable std::mutex m_mutex;
    QHash<QString, std::shared_ptr<Job>> m_jobs;
    quint64 m_next = 0;
    /// Runs each job's execute(). Threads are reused: a new thread for every execute cost
    /// more than the rest of the call's own work. Destroyed after every job was stopped.
    WorkerThreads m_threads;
};

} // namespace elsai
