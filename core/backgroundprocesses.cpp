// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "backgroundprocesses.h"

#include "errors.h"
#include "fdutil.h"
#include "processregistry.h"

#include <QDateTime>
#include <QJsonObject>
#include <QScopeGuard>

#include <algorithm>
#include <condition_variable>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

namespace elsai {

QJsonObject BackgroundProcessInfo::toJson() const
{
    QJsonObject o{{QStringLiteral("process_id"), id},
                  {QStringLiteral("command"), command},
                  {QStringLiteral("running"), running},
                  {QStringLiteral("accepts_input"), acceptsInput},
                  {QStringLiteral("started_at_ms"), startedAtMs},
                  {QStringLiteral("output_bytes"), outputBytes},
                  {QStringLiteral("dropped_bytes"), droppedBytes}};
    if (!cwd.isEmpty())
        o.insert(QStringLiteral("cwd"), cwd);
    if (result) {
        o.insert(QStringLiteral("exit_code"), result->exitCode);
        o.insert(QStringLiteral("timed_out"), result->timedOut);
        o.insert(QStringLiteral("cancelled"), result->cancelled);
        o.insert(QStringLiteral("duration_ms"), result->durationMs);
    }
    return o;
}

struct BackgroundProcesses::Job
{
    BackgroundProcessInfo info;
    std::shared_ptr<SandboxBackend> backend;
    std::shared_ptr<CancellationToken> cancel = std::make_shared<CancellationToken>();
    UniqueFd stdinWrite; ///< guarded by m
    qint64 bufferBytes = 0;
    /// Counts against maxRunning: started as a background process, or handed over by a soft
    /// return (an execute still waiting for its command counts as the execute it is).
    bool counted = true; ///< guarded by m

    // A job is held by whoever waits for its command (its thread's task, or the soft return's
    // caller) until the command has ended: none is ever destroyed while its command runs.
    mutable std::mutex m;
    std::condition_variable ended;
    QByteArray buffer;
    qint64 bufferStart = 0; ///< offset of buffer[0] in the whole output
    bool finished = false;
    ExecuteResult result;
    std::exception_ptr error; ///< what execute() threw, if it did
    std::function<void(OutputChannel, const QByteArray &)> observer;
    /// Its row in the Processes panel while it runs as a background process (from the start,
    /// or from a soft return's handover; the execute call lists it until then).
    ProcessRegistration listed; ///< guarded by m

    void append(OutputChannel channel, const QByteArray &chunk, bool observed = true)
    {
        std::lock_guard lock(m);
        buffer += chunk;
        info.outputBytes += chunk.size();
        // trimmed in steps of a quarter, so appending stays amortized O(chunk)
        if (buffer.size() > bufferBytes + bufferBytes / 4) {
            const qsizetype drop = buffer.size() - bufferBytes;
            buffer.remove(0, drop);
            bufferStart += drop;
        }
        if (observer && observed)
            observer(channel, chunk);
    }

    /// How the backend runs its command: cancelled by `cancel`, output into the buffer.
    ExecuteOptions executeOptions()
    {
        ExecuteOptions options;
        options.cancel = cancel;
        options.onOutput = [this](OutputChannel channel, const QByteArray &chunk) {
            append(channel, chunk);
        };
        return options;
    }

    /// The command did not start (or the backend failed): an ended process saying why; take()
    /// throws it again (the soft return's execute fails as execute does).
    ExecuteResult failed(const std::exception &e)
    {
        ExecuteResult r;
        r.exitCode = 127;
        r.stderr_ = describeError(e).display();
        // not to the observer: it may be what failed
        append(OutputChannel::Stderr, r.stderr_.toUtf8() + '\n', false);
        return r;
    }

    /// Records the end and wakes everyone waiting for it.
    void complete(ExecuteResult r, std::exception_ptr e = {})
    {
        {
            std::lock_guard lock(m);
            stdinWrite.reset();
            result = std::move(r);
            error = std::move(e);
            finished = true;
            listed.reset(); // out of the Processes panel (its output stays readable here)
        }
        ended.notify_all();
    }

    void waitUntilFinished()
    {
        std::unique_lock lock(m);
        ended.wait(lock, [this] { return finished; });
    }

    /// Lists it in the Processes panel (once); the caller holds m. `self` is this job: the
    /// panel may ask for the output after the job is gone, so the hook holds it weakly.
    void listLocked(const std::shared_ptr<Job> &self, const QString &backendName)
    {
        if (listed.id() || finished)
            return;
        ProcessEntry entry;
        entry.workspaceId = info.workspaceId;
        entry.kind = ProcessEntry::Kind::Background;
        entry.label = info.command.left(ProcessEntry::MaxLabel);
        entry.actor = info.owner;
        entry.backend = backendName;
        entry.cwd = info.cwd;
        entry.startedAt = QDateTime::fromMSecsSinceEpoch(info.startedAtMs);
        // The output stays in the job's buffer; the panel reads its tail from there.
        listed = ProcessRegistration(entry, {[token = cancel] { token->cancel(); },
                                             [weak = std::weak_ptr<Job>(self)] {
                                                 const auto job = weak.lock();
                                                 if (!job)
                                                     return QByteArray();
                                                 std::lock_guard lock(job->m);
                                                 return job->buffer.right(
                                                     ProcessRegistry::OutputTailBytes);
                                             }});
    }

    BackgroundProcessInfo snapshot() const
    {
        std::lock_guard lock(m);
        BackgroundProcessInfo i = info;
        i.running = !finished;
        i.droppedBytes = bufferStart;
        if (finished) {
            ExecuteResult r = result;
            r.output.clear();
            r.stderr_.clear();
            i.result = r;
        }
        return i;
    }
};

namespace {

/// A soft return's execute whose workspace was closed (which stopped its command) meanwhile.
ExecuteResult closedWhileRunning()
{
    ExecuteResult r;
    r.exitCode = 130;
    r.cancelled = true;
    r.stderr_ = QStringLiteral("the workspace was closed while the command ran");
    return r;
}

OSError noThreadError(const std::system_error &e)
{
    return OSError(QStringLiteral("Cannot start a thread for the command (%1); too many "
                                  "processes or threads are running")
                       .arg(QString::fromLocal8Bit(e.what())),
                   e.code().value());
}

} // namespace

BackgroundProcesses::BackgroundProcesses(Limits limits)
    : m_limits(limits), m_threads(std::chrono::seconds(30), limits.maxThreads)
{
}

BackgroundProcesses::BackgroundProcesses() : BackgroundProcesses(Limits()) {}

BackgroundProcesses::~BackgroundProcesses()
{
    QList<std::shared_ptr<Job>> jobs;
    {
        std::lock_guard lock(m_mutex);
        jobs = m_jobs.values();
        m_jobs.clear();
    }
    for (const auto &job : std::as_const(jobs))
        stopJob(job);
}

std::shared_ptr<BackgroundProcesses::Job>
BackgroundProcesses::newJob(const StartRequest &request) const
{
    if (!request.backend)
        throw ValueError(QStringLiteral("a background process needs a backend that runs "
                                        "commands"));
    if (!request.backend->cancelsRunningCommands())
        throw PermissionError(QStringLiteral("the %1 cannot stop a running command, so it runs "
                                             "no background processes; use execute")
                                  .arg(request.backend->typeName()));
    auto job = std::make_shared<Job>();
    job->backend = request.backend;
    job->bufferBytes = m_limits.bufferBytes;
    job->observer = request.observer;
    job->info.owner = request.owner;
    job->info.workspaceId = request.workspaceId;
    job->info.command = request.command;
    job->info.cwd = request.cwd;
    job->info.startedAtMs = QDateTime::currentMSecsSinceEpoch();
    job->counted = request.background;
    return job;
}

void BackgroundProcesses::addJob(const std::shared_ptr<Job> &job)
{
    std::lock_guard lock(m_mutex);
    if (job->counted) {
        qsizetype running = 0;
        for (const auto &j : std::as_const(m_jobs)) {
            std::lock_guard jobLock(j->m);
            running += j->info.workspaceId == job->info.workspaceId && !j->finished && j->counted;
        }
        if (running >= m_limits.maxRunning)
            throw ValueError(QStringLiteral("workspace '%1' already runs %2 background processes "
                                            "(the limit); stop one with process_stop first")
                                 .arg(job->info.workspaceId)
                                 .arg(running));
    }
    job->info.id = QStringLiteral("p%1").arg(++m_next);
    m_jobs.insert(job->info.id, job);
    prune(job->info.workspaceId);
}

bool BackgroundProcesses::removeJob(const QString &id)
{
    std::lock_guard lock(m_mutex);
    return m_jobs.remove(id) > 0;
}

QString BackgroundProcesses::start(StartRequest request)
{
    auto job = newJob(request);
    const bool streaming = request.background && request.backend->acceptsInput();
    job->info.acceptsInput = streaming;
    auto stdinRead = std::make_shared<UniqueFd>();
    if (streaming) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0)
            throwOsError(errno, QStringLiteral("Cannot make a stdin pipe"), QString());
        stdinRead->reset(fds[0]);
        job->stdinWrite.reset(fds[1]);
        ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    }
    ExecuteOptions options = job->executeOptions();
    options.streamOnly = streaming;
    options.stdinFd = stdinRead->get();
    addJob(job);
    if (request.background) {
        std::lock_guard lock(job->m);
        job->listLocked(job, request.backend->typeName());
    }
    try {
        m_threads.run([job, options, stdinRead, timeout = request.timeoutSeconds]() mutable {
            ExecuteResult r;
            std::exception_ptr error;
            try {
                r = job->backend->execute(job->info.command, timeout, job->info.cwd, options);
            } catch (const std::exception &e) {
                r = job->failed(e);
                error = std::current_exception();
            }
            stdinRead->reset();
            options = {}; // its output callback points at the job
            job->complete(std::move(r), std::move(error));
        });
    } catch (const std::system_error &e) {
        // No thread left (the user's process limit): the command never starts.
        removeJob(job->info.id);
        ExecuteResult never;
        never.exitCode = 126;
        job->complete(never); // a process_stop that found it meanwhile returns
        throw noThreadError(e);
    }
    return job->info.id;
}

BackgroundProcesses::SoftReturn
BackgroundProcesses::runWithSoftReturn(StartRequest request, int softMs,
                                       const std::shared_ptr<CancellationToken> &cancel)
{
    request.background = false; // its result keeps execute's form and output cap
    // The command starts on this thread where the backend can; its parent-death signal then
    // follows this thread, which must outlive it once handed over.
    if (!callingThreadOutlivesCommands())
        return softReturnOnThread(request, softMs, cancel);
    const auto job = newJob(request);
    std::unique_ptr<RunningCommand> running = request.backend->startCommand(
        request.command, request.timeoutSeconds, request.cwd, job->executeOptions());
    if (!running)
        return softReturnOnThread(request, softMs, cancel);
    addJob(job); // listed, and stopped with its workspace
    // Whatever ends this call early (an output observer that throws) ends the command, and
    // the job with it: a stop waiting for the job must not wait forever.
    auto abandon = qScopeGuard([&] {
        running.reset();
        job->complete(ExecuteResult());
        removeJob(job->info.id);
    });

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(softMs);
    bool mayHandOver = true;
    for (;;) {
        if (cancel && cancel->isCancelled())
            job->cancel->cancel(); // the caller cancelled: the command ends
        const bool ending = job->cancel->isCancelled();
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (!ending && mayHandOver && left <= 0) {
            if (handOver(job, running)) {
                abandon.dismiss();
                return {std::nullopt, job->info.id};
            }
            mayHandOver = false; // no thread to take it: the call waits for its end
        }
        // Slices: the caller's token has no descriptor the command's wait could watch.
        const int slice = ending ? -1 : int(std::clamp<qint64>(mayHandOver ? left : 50, 1, 50));
        if (running->waitFor(slice))
            break;
    }
    ExecuteResult r = running->takeResult();
    abandon.dismiss();
    running.reset();
    job->complete(r);
    if (!removeJob(job->info.id))
        return {closedWhileRunning(), {}}; // stopWorkspace() took it meanwhile
    return {std::move(r), {}};
}

bool BackgroundProcesses::handOver(const std::shared_ptr<Job> &job,
                                   std::unique_ptr<RunningCommand> &running)
{
    std::function<void(OutputChannel, const QByteArray &)> observer;
    {
        std::lock_guard lock(job->m);
        observer = std::exchange(job->observer, {}); // the call answers now: no progress after it
        job->counted = true;                         // a background process from now on
        job->listLocked(job, job->backend->typeName());
    }
    auto held = std::make_shared<std::unique_ptr<RunningCommand>>(std::move(running));
    try {
        m_threads.run([job, held] {
            ExecuteResult r;
            std::exception_ptr error;
            try {
                (*held)->waitFor(-1);
                r = (*held)->takeResult();
            } catch (const std::exception &e) { // out of memory: the command is killed
                r = job->failed(e);
                error = std::current_exception();
            }
            held->reset();
            job->complete(std::move(r), std::move(error));
        });
        return true;
    } catch (const std::system_error &) {
        running = std::move(*held);
        std::lock_guard lock(job->m);
        job->observer = std::move(observer);
        job->counted = false;
        job->listed.reset();
        return false;
    }
}

BackgroundProcesses::SoftReturn
BackgroundProcesses::softReturnOnThread(const StartRequest &request, int softMs,
                                        const std::shared_ptr<CancellationToken> &cancel)
{
    const QString id = start(request);
    bool ended = wait(id, softMs, cancel);
    if (!ended && cancel && cancel->isCancelled()) {
        stop(id, request.owner); // the caller cancelled: the command ends
        ended = true;
    }
    if (!ended) {
        detachObserver(id);
        return {std::nullopt, id};
    }
    if (auto taken = take(id))
        return {std::move(*taken), {}};
    return {closedWhileRunning(), {}}; // stopWorkspace() took it meanwhile
}

std::shared_ptr<BackgroundProcesses::Job> BackgroundProcesses::find(const QString &id,
                                                                    const QString &owner) const
{
    std::lock_guard lock(m_mutex);
    const auto job = m_jobs.value(id);
    if (!job || job->info.owner != owner)
        throw FileNotFoundError(QStringLiteral("no background process '%1'; process_list shows "
                                               "yours")
                                    .arg(id.left(64)),
                                ENOENT);
    return job;
}

bool BackgroundProcesses::wait(const QString &id, int timeoutMs,
                               const std::shared_ptr<CancellationToken> &cancel)
{
    std::shared_ptr<Job> job;
    {
        std::lock_guard lock(m_mutex);
        job = m_jobs.value(id);
    }
    if (!job)
        return true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    std::unique_lock lock(job->m);
    while (!job->finished) {
        if (cancel && cancel->isCancelled())
            return false;
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline)
            return false;
        // short slices: a cancellation token has no condition variable of its own
        job->ended.wait_for(lock, std::min<std::chrono::steady_clock::duration>(
                                      deadline - now, std::chrono::milliseconds(50)));
    }
    return true;
}

std::optional<ExecuteResult> BackgroundProcesses::take(const QString &id)
{
    std::shared_ptr<Job> job;
    {
        std::lock_guard lock(m_mutex);
        job = m_jobs.value(id);
        if (!job)
            return std::nullopt;
        std::lock_guard jobLock(job->m);
        if (!job->finished)
            return std::nullopt;
        m_jobs.remove(id);
    }
    std::lock_guard lock(job->m);
    if (job->error)
        std::rethrow_exception(job->error);
    return job->result;
}

void BackgroundProcesses::detachObserver(const QString &id)
{
    std::shared_ptr<Job> job;
    {
        std::lock_guard lock(m_mutex);
        job = m_jobs.value(id);
    }
    if (job) {
        std::lock_guard lock(job->m);
        job->observer = {};
        job->counted = true; // handed over: a background process from now on
        job->listLocked(job, job->backend->typeName());
    }
}

QList<BackgroundProcessInfo> BackgroundProcesses::list(const QString &workspaceId,
                                                       const QString &owner) const
{
    QList<std::shared_ptr<Job>> jobs;
    {
        std::lock_guard lock(m_mutex);
        for (const auto &j : m_jobs) {
            if (j->info.workspaceId == workspaceId && j->info.owner == owner)
                jobs.append(j);
        }
    }
    QList<BackgroundProcessInfo> out;
    for (const auto &j : std::as_const(jobs))
        out.append(j->snapshot());
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
        return a.id.mid(1).toULongLong() < b.id.mid(1).toULongLong();
    });
    return out;
}

BackgroundProcessInfo BackgroundProcesses::info(const QString &id, const QString &owner) const
{
    return find(id, owner)->snapshot();
}

BackgroundOutput BackgroundProcesses::read(const QString &id, const QString &owner, qint64 offset,
                                           qint64 maxBytes) const
{
    if (offset < 0 || maxBytes < 1)
        throw ValueError(QStringLiteral("process_output needs offset >= 0 and max_bytes >= 1"));
    const auto job = find(id, owner);
    std::lock_guard lock(job->m);
    BackgroundOutput out;
    const qint64 end = job->bufferStart + job->buffer.size();
    out.offset = qBound(job->bufferStart, offset, end);
    out.skipped = qMax<qint64>(0, job->bufferStart - offset);
    qint64 count = qMin(maxBytes, end - out.offset);
    const QByteArrayView held(job->buffer);
    const qsizetype from = qsizetype(out.offset - job->bufferStart);
    // whole UTF-8 characters: a cut never splits one (the next read starts at it)
    if (out.offset + count < end) {
        while (count > 0 && (uchar(held[from + count]) & 0xC0) == 0x80)
            --count;
    }
    out.data = held.sliced(from, qsizetype(count)).toByteArray();
    out.nextOffset = out.offset + count;
    out.running = !job->finished;
    return out;
}

qint64 BackgroundProcesses::write(const QString &id, const QString &owner, const QByteArray &bytes,
                                  bool close)
{
    const auto job = find(id, owner);
    std::lock_guard lock(job->m);
    if (!job->info.acceptsInput)
        throw PermissionError(QStringLiteral("background process '%1' takes no input: this "
                                             "backend runs commands with an empty stdin (input "
                                             "works on the local and bwrap backends)")
                                  .arg(id));
    if (job->finished || !job->stdinWrite.isValid())
        throw OSError(QStringLiteral("background process '%1' %2; it takes no more input")
                          .arg(id, job->finished ? QStringLiteral("has ended")
                                                 : QStringLiteral("had its input closed")),
                      EPIPE);
    qint64 written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(job->stdinWrite.get(), bytes.constData() + written,
                                  size_t(bytes.size() - written));
        if (n > 0) {
            written += n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break; // the pipe is full: the caller learns how much went in
        throwOsError(errno, QStringLiteral("Cannot write to background process"), id);
    }
    if (close)
        job->stdinWrite.reset();
    return written;
}

void BackgroundProcesses::stopJob(const std::shared_ptr<Job> &job)
{
    job->cancel->cancel();
    job->waitUntilFinished(); // the backend's TERM, grace, KILL: bounded by its kill grace
}

BackgroundProcessInfo BackgroundProcesses::stop(const QString &id, const QString &owner)
{
    const auto job = find(id, owner);
    job->cancel->cancel();
    job->waitUntilFinished();
    return job->snapshot();
}

void BackgroundProcesses::stopWorkspace(const QString &workspaceId)
{
    QList<std::shared_ptr<Job>> jobs;
    {
        std::lock_guard lock(m_mutex);
        for (auto it = m_jobs.begin(); it != m_jobs.end();) {
            if ((*it)->info.workspaceId == workspaceId) {
                jobs.append(*it);
                it = m_jobs.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (const auto &job : std::as_const(jobs))
        stopJob(job);
}

void BackgroundProcesses::prune(const QString &workspaceId)
{
    // The oldest ended processes of the workspace beyond maxFinished are forgotten. Never a
    // soft return's command that has not been handed over: its execute call is still waiting
    // to take() the result (many ending at once would lose their answers).
    QList<std::pair<quint64, QString>> ended;
    for (const auto &j : std::as_const(m_jobs)) {
        if (j->info.workspaceId != workspaceId)
            continue;
        std::lock_guard lock(j->m);
        if (j->finished && j->counted)
            ended.append({j->info.id.mid(1).toULongLong(), j->info.id});
    }
    if (ended.size() <= m_limits.maxFinished)
        return;
    std::sort(ended.begin(), ended.end());
    for (qsizetype i = 0; i < ended.size() - m_limits.maxFinished; ++i)
        m_jobs.remove(ended[i].second);
}

} // namespace elsai
