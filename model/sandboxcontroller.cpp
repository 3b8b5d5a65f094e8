// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sandboxcontroller.h"

#include "agentsmodel.h"
#include "audit.h"
#include "auditlogmodel.h"
#include "consolehistorymodel.h"
#include "errors.h"
#include "inputchecks.h"
#include "sandboxplugin.h"
#include "threadpriority.h"
#include "workspacetreemodel.h"

#include <QCoreApplication>
#include <QFutureWatcher>
#include <QJsonArray>
#include <QMutex>
#include <QtConcurrent>

namespace elsai {

/// Lets worker threads post to a QObject that the GUI thread may delete: the GUI thread
/// clears `target` under the mutex before deleting it.
struct QueuedRelay
{
    QMutex mutex;
    QObject *target = nullptr;

    template<typename Fn>
    void post(Fn &&fn)
    {
        QMutexLocker lock(&mutex);
        if (target)
            QMetaObject::invokeMethod(target, std::forward<Fn>(fn), Qt::QueuedConnection);
    }
    void clear()
    {
        QMutexLocker lock(&mutex);
        target = nullptr;
    }
};

namespace {

/// Progress callbacks fire per file; forward at most ~100 steps per run.
std::function<void(int, int)> throttled(std::function<void(int, int)> emitFn)
{
    auto last = std::make_shared<std::atomic_int>(-1);
    return [emitFn = std::move(emitFn), last](int done, int total) {
        const int step = total > 0 ? int(qint64(done) * 100 / total) : 100;
        if (step != last->exchange(step) || done == total)
            emitFn(done, total);
    };
}

/// A console command's result, with its output as bytes when the console will keep it whole.
struct ConsoleRun
{
    ExecuteResult result;
    std::optional<ConsoleHistoryModel::FullOutput> full;
};

const QStringList kToolEvents = {
    QStringLiteral("sandbox.execute"), QStringLiteral("sandbox.read_file"),
    QStringLiteral("sandbox.write_file"), QStringLiteral("sandbox.list_dir")};

/// The first three items, and how many more there are (messages stay a few lines long).
QString firstFew(const QStringList &items)
{
    constexpr int shown = 3;
    QString text = items.mid(0, shown).join(QStringLiteral("; "));
    if (items.size() > shown)
        text += QStringLiteral("; … %1 more").arg(items.size() - shown);
    return text;
}

} // namespace

QString seedProblems(const WorkspaceSeedResult &result)
{
    if (result.errors.isEmpty())
        return {};
    return QStringLiteral("the seed copied %1 file(s) but %2 failed: %3")
        .arg(result.filesSeeded)
        .arg(result.errors.size())
        .arg(firstFew(result.errors));
}

QString flushProblems(const WorkspaceSyncResult &result)
{
    QStringList parts;
    if (!result.conflicts.isEmpty()) {
        QStringList kept;
        for (const QString &path : result.conflicts)
            kept.append(result.conflictFiles.value(path, path));
        parts.append(QStringLiteral("%1 conflict(s): the host files were kept and the sandbox "
                                    "versions written beside them (%2)")
                         .arg(result.conflicts.size())
                         .arg(firstFew(kept)));
    }
    if (!result.errors.isEmpty())
        parts.append(QStringLiteral("%1 error(s): %2")
                         .arg(result.errors.size())
                         .arg(firstFew(result.errors)));
    return parts.join(QStringLiteral("; "));
}

std::optional<std::pair<QString, QString>> futureError(std::exception_ptr error)
{
    if (!error)
        return std::nullopt;
    const ErrorDescription d = describeError(error);
    return std::pair(d.type, d.message);
}

struct SandboxController::Entry
{
    SandboxPtr sandbox;
    SandboxSpec spec;
    SessionState state = SessionState::Stopped;
    QString message;
    QDateTime startedAt;
    WorkspaceTreeModel *tree = nullptr;
    ConsoleHistoryModel *console = nullptr;
    std::shared_ptr<QueuedRelay> consoleRelay = std::make_shared<QueuedRelay>();
    QHash<QString, AgentPtr> agents;
    QHash<QString, QList<AgentCall>> recentCalls;
    QList<quint64> commands;
    int closeListener = 0;
    /// The last start or stop: the next one runs after it (a Start pressed while the sandbox
    /// still stops would otherwise race it, and the earlier one's end could win).
    QFuture<void> lifecycle;
    quint64 lifecycleOps = 0; ///< a finished start or stop sets the state only if still the last
};

namespace {

void waitForPrevious(QFuture<void> previous)
{
    try {
        previous.waitForFinished();
    } catch (...) { // its failure was reported by its own watcher
    }
}

} // namespace

SandboxController::SandboxController(QObject *parent)
    : QObject(parent), m_sessions(new SessionsModel(this)), m_agents(new AgentsModel(this)),
      m_audit(new AuditLogModel(this))
{
    qRegisterMetaType<ExecuteResult>();
    m_pool.setObjectName(QStringLiteral("elsai-sandbox-pool"));
    m_pool.setMaxThreadCount(qMax(4, QThread::idealThreadCount() * 2));
    m_bulkPool.setObjectName(QStringLiteral("elsai-bulk-pool"));
    m_bulkPool.setMaxThreadCount(4);
    m_audit->subscribe();

    auto relay = std::make_shared<QueuedRelay>();
    relay->target = this;
    m_selfRelay = relay;
    m_auditSink = std::make_shared<CallbackAuditSink>(
        [relay, this](const AuditEvent &e) { relay->post([this, e] { onAuditEvent(e); }); });
    AuditLog::instance().addSink(m_auditSink);
    connect(&m_cleanupTimer, &QTimer::timeout, this, [this] {
        for (const Entry *e : std::as_const(m_entries)) {
            (void)QtConcurrent::run(&m_pool, [m = e->sandbox->manager()] { m->cleanupExpired(); });
        }
    });
    connect(&m_treeTimer, &QTimer::timeout, this, [this] {
        for (Entry *e : std::as_const(m_entries)) {
            if (e->state == SessionState::Running && !e->tree->isBusy())
                e->tree->refreshAll();
        }
    });
    connect(&m_panelTimer, &QTimer::timeout, this, &SandboxController::refreshPanels);
    setIntervals(5000, 3000, 1000);
}

SandboxController::~SandboxController()
{
    shutdown();
}

void SandboxController::shutdown()
{
    if (m_shuttingDown)
        return;
    m_shuttingDown = true;
    m_cleanupTimer.stop();
    m_treeTimer.stop();
    m_panelTimer.stop();
    cancelAllCommands();
    AuditLog::instance().removeSink(m_auditSink);
    m_selfRelay->clear();
    for (Entry *e : std::as_const(m_entries)) {
        e->sandbox->manager()->removeCloseListener(e->closeListener);
        e->consoleRelay->clear();
    }
    m_pool.waitForDone();
    m_bulkPool.waitForDone();
    // Every future has finished: their watchers' queued results would reach views that are
    // going away, so they go first.
    const auto watchers = findChildren<QFutureWatcherBase *>(Qt::FindDirectChildrenOnly);
    qDeleteAll(watchers);
    m_running.clear();
    for (Entry *e : std::as_const(m_entries)) {
        try {
            e->sandbox->stop(false); // the local workspace folder stays on disk
        } catch (const SandboxError &) {
        }
        delete e;
    }
    m_entries.clear();
    m_order.clear();
}

void SandboxController::setIntervals(int cleanupMs, int treeRefreshMs, int panelRefreshMs)
{
    m_cleanupTimer.start(cleanupMs);
    m_treeTimer.start(treeRefreshMs);
    m_panelTimer.start(panelRefreshMs);
}

SandboxController::Entry *SandboxController::entry(const QString &workspaceId) const
{
    return m_entries.value(workspaceId);
}

SandboxController::Entry &SandboxController::requireEntry(const QString &workspaceId) const
{
    if (m_shuttingDown)
        throw ValueError(QStringLiteral("the workbench is quitting"));
    Entry *e = entry(workspaceId);
    if (!e)
        throw ValueError(QStringLiteral("no sandbox '%1' in the workbench").arg(workspaceId));
    return *e;
}

WorkspaceTreeModel *SandboxController::treeModel(const QString &workspaceId) const
{
    const Entry *e = entry(workspaceId);
    return e ? e->tree : nullptr;
}

ConsoleHistoryModel *SandboxController::consoleModel(const QString &workspaceId) const
{
    const Entry *e = entry(workspaceId);
    return e ? e->console : nullptr;
}

SandboxPtr SandboxController::sandbox(const QString &workspaceId) const
{
    const Entry *e = entry(workspaceId);
    return e ? e->sandbox : SandboxPtr();
}

SandboxSpec SandboxController::spec(const QString &workspaceId) const
{
    const Entry *e = entry(workspaceId);
    return e ? e->spec : SandboxSpec();
}

QStringList SandboxController::workspaceIds() const
{
    return m_order;
}

SessionState SandboxController::state(const QString &workspaceId) const
{
    const Entry *e = entry(workspaceId);
    return e ? e->state : SessionState::Stopped;
}

template<typename T>
QFuture<T> SandboxController::track(const QString &workspaceId, const QString &operation,
                                    QFuture<T> future)
{
    auto *watcher = new QFutureWatcher<T>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, workspaceId, operation] {
        try {
            watcher->future().waitForFinished();
        } catch (...) {
            reportFailure(workspaceId, operation, std::current_exception());
        }
        refreshPanels(); // attach, detach and activity show at once, not at the next tick
        watcher->deleteLater();
    });
    watcher->setFuture(future);
    return future;
}

void SandboxController::reportFailure(const QString &workspaceId, const QString &operation,
                                      std::exception_ptr error)
{
    if (const auto e = futureError(error))
        Q_EMIT operationFailed(workspaceId, operation, e->first, e->second);
}

SandboxPtr SandboxController::addSandbox(SandboxSpec spec, bool start)
{
    if (m_shuttingDown)
        throw ValueError(QStringLiteral("the workbench is quitting"));
    if (m_entries.contains(spec.workspaceId))
        throw ValueError(QStringLiteral("the workbench already has a sandbox '%1'; pick another "
                                        "workspace id")
                             .arg(spec.workspaceId));
    auto *e = new Entry;
    try {
        e->sandbox = spec.createSandbox();
    } catch (...) {
        delete e;
        throw;
    }
    e->closeListener = e->sandbox->manager()->addCloseListener(
        [relay = m_selfRelay, this](const QString &id, const QString &reason) {
            relay->post([this, id, reason] { onSessionClosed(id, reason); });
        });
    e->spec = spec;
    e->tree = new WorkspaceTreeModel(this);
    e->console = new ConsoleHistoryModel(this);
    // The console keeps what the engine may return: the sandbox's cap bounds its blocks.
    e->console->setOutputCap(spec.local.maxOutputBytes);
    e->consoleRelay->target = e->console;
    const QString id = spec.workspaceId;
    m_entries.insert(id, e);
    m_order.append(id);
    refreshPanels();
    Q_EMIT sandboxAdded(id);
    if (start)
        startSandbox(id);
    return e->sandbox;
}

void SandboxController::removeSandbox(const QString &workspaceId)
{
    Entry *e = m_entries.take(workspaceId);
    if (!e)
        return;
    m_order.removeAll(workspaceId);
    e->sandbox->manager()->removeCloseListener(e->closeListener);
    for (quint64 id : std::as_const(e->commands))
        cancelCommand(id);
    e->consoleRelay->clear();
    const SandboxPtr sandbox = e->sandbox;
    (void)QtConcurrent::run(&m_pool, [sandbox] {
        try {
            sandbox->stop(false);
        } catch (const SandboxError &) {
        }
    });
    e->tree->deleteLater();
    e->console->deleteLater();
    delete e;
    refreshPanels();
    Q_EMIT sandboxRemoved(workspaceId);
}

void SandboxController::setState(const QString &workspaceId, SessionState state,
                                 const QString &message)
{
    if (Entry *e = entry(workspaceId)) {
        e->state = state;
        e->message = message;
        refreshPanels();
    }
}

void SandboxController::ensureConsoleAgent(Entry &e)
{
    AgentPtr console = e.agents.value(consoleAgent());
    if (!console) {
        console = Agent::create(consoleAgent());
        e.agents.insert(consoleAgent(), console);
    }
    if (!console->attachedSandbox())
        e.sandbox->attach(console, SandboxAttachMode::ReadWrite);
}

QFuture<std::optional<WorkspaceSeedResult>>
SandboxController::startSandbox(const QString &workspaceId)
{
    Entry &e = requireEntry(workspaceId);
    setState(workspaceId, SessionState::Starting);
    const SandboxPtr sandbox = e.sandbox;
    auto relay = m_selfRelay;
    auto progress = throttled([relay, this, workspaceId](int done, int total) {
        relay->post(
            [this, workspaceId, done, total] { Q_EMIT seedProgress(workspaceId, done, total); });
    });
    auto future = QtConcurrent::run(&m_bulkPool, [sandbox, progress, previous = e.lifecycle] {
        waitForPrevious(previous);
        lowerThreadPriority(); // the seed's copy threads inherit it
        return sandbox->start(progress);
    });
    e.lifecycle = QFuture<void>(future);
    const quint64 op = ++e.lifecycleOps;
    auto *watcher = new QFutureWatcher<std::optional<WorkspaceSeedResult>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, workspaceId, op] {
        watcher->deleteLater();
        Entry *e = entry(workspaceId);
        if (!e)
            return;
        try {
            const std::optional<WorkspaceSeedResult> seed = watcher->future().result();
            if (e->lifecycleOps != op) // a stop asked for since then has the last word
                return;
            ensureConsoleAgent(*e);
            e->startedAt = QDateTime::currentDateTime();
            const QString problems = seed ? seedProblems(*seed) : QString();
            setState(workspaceId, SessionState::Running, problems);
            if (!problems.isEmpty())
                Q_EMIT operationWarning(workspaceId, QStringLiteral("seed"), problems);
            const SandboxPtr sb = e->sandbox;
            QThreadPool *pool = &m_pool;
            e->tree->setSeedBaseline(sb->backend() ? sb->backend()->seedBaseline()
                                                   : QHash<QString, FileStamp>());
            e->tree->setLister([sb, pool](const QString &path) {
                return QtConcurrent::run(pool, [sb, path] {
                    const BackendPtr b = sb->backend();
                    if (!b)
                        throw OSError(
                            QStringLiteral("sandbox '%1' is not running").arg(sb->workspaceId()));
                    return b->listDir(path);
                });
            });
            Q_EMIT sandboxStarted(workspaceId);
        } catch (...) {
            reportFailure(workspaceId, QStringLiteral("start"), std::current_exception());
            if (e->lifecycleOps != op)
                return;
            const auto err = futureError(std::current_exception());
            setState(workspaceId, SessionState::Failed,
                     err ? err->first + QStringLiteral(": ") + err->second : QString());
            Q_EMIT sandboxStopped(workspaceId, e->message);
        }
    });
    watcher->setFuture(future);
    return future;
}

QFuture<std::optional<WorkspaceSyncResult>>
SandboxController::stopSandbox(const QString &workspaceId, bool sync)
{
    Entry &e = requireEntry(workspaceId);
    for (quint64 id : std::as_const(e.commands))
        cancelCommand(id);
    setState(workspaceId, SessionState::Stopping);
    const SandboxPtr sandbox = e.sandbox;
    auto future = QtConcurrent::run(&m_bulkPool, [sandbox, sync, previous = e.lifecycle] {
        waitForPrevious(previous);
        lowerThreadPriority();
        return sandbox->stop(sync);
    });
    e.lifecycle = QFuture<void>(future);
    const quint64 op = ++e.lifecycleOps;
    auto *watcher = new QFutureWatcher<std::optional<WorkspaceSyncResult>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, workspaceId, op] {
        watcher->deleteLater();
        Entry *e = entry(workspaceId);
        QString reason = QStringLiteral("stopped");
        try {
            if (const auto synced = watcher->future().result()) {
                if (const QString problems = flushProblems(*synced); !problems.isEmpty()) {
                    reason = QStringLiteral("stopped; the flush: %1").arg(problems);
                    Q_EMIT operationWarning(workspaceId, QStringLiteral("stop"), problems);
                }
            }
        } catch (...) {
            const auto err = futureError(std::current_exception());
            reason =
                QStringLiteral("stopped; the flush failed: %1").arg(err ? err->second : QString());
            reportFailure(workspaceId, QStringLiteral("stop"), std::current_exception());
        }
        if (!e || e->lifecycleOps != op) // a start asked for since then has the last word
            return;
        e->tree->setLister({});
        setState(workspaceId, SessionState::Stopped, reason);
        Q_EMIT sandboxStopped(workspaceId, reason);
    });
    watcher->setFuture(future);
    return future;
}

void SandboxController::onSessionClosed(const QString &workspaceId, const QString &reason)
{
    Entry *e = entry(workspaceId);
    if (!e || reason != QLatin1String("expired") || e->state != SessionState::Running)
        return;
    const auto ttl = e->sandbox->ttlSeconds();
    const QString message =
        ttl ? QStringLiteral("expired after %1 idle (TTL)").arg(formatDuration(*ttl))
            : QStringLiteral("expired");
    e->tree->setLister({});
    setState(workspaceId, SessionState::Expired, message);
    Q_EMIT sandboxStopped(workspaceId, message);
}

QFuture<QByteArray> SandboxController::readFile(const QString &workspaceId, const QString &path)
{
    const SandboxPtr sb = requireEntry(workspaceId).sandbox;
    return track(workspaceId, QStringLiteral("read_file"), QtConcurrent::run(&m_pool, [sb, path] {
                     // The window's reads are not agent actions: no audit noise per open.
                     const BackendPtr b = sb->backend();
                     if (!b)
                         throw OSError(
                             QStringLiteral("sandbox '%1' is not running").arg(sb->workspaceId()));
                     return b->readFile(path);
                 }));
}

QFuture<FileInfo> SandboxController::statFile(const QString &workspaceId, const QString &path)
{
    const Entry *e = entry(workspaceId);
    const SandboxPtr sb = e ? e->sandbox : SandboxPtr();
    return QtConcurrent::run(&m_pool, [sb, workspaceId, path] {
        if (!sb)
            throw ValueError(QStringLiteral("no sandbox '%1' in the window").arg(workspaceId));
        const BackendPtr b = sb->backend();
        if (!b)
            throw OSError(
                QStringLiteral("sandbox '%1' is not running; start it first").arg(workspaceId));
        return b->stat(path);
    });
}

QFuture<void> SandboxController::writeFile(const QString &workspaceId, const QString &path,
                                           const QByteArray &content)
{
    const SandboxPtr sb = requireEntry(workspaceId).sandbox;
    return track(workspaceId, QStringLiteral("write_file"),
                 QtConcurrent::run(
                     &m_pool, [sb, path, content] { sb->writeFile(path, content, humanActor()); }));
}

QFuture<QStringList> SandboxController::addFiles(const QString &workspaceId,
                                                 const QList<QPair<QString, FileSource>> &files,
                                                 bool overwrite)
{
    const SandboxPtr sb = requireEntry(workspaceId).sandbox;
    return track(workspaceId, QStringLiteral("add_files"),
                 QtConcurrent::run(&m_bulkPool, [sb, files, overwrite] {
                     lowerThreadPriority();
                     return sb->addFiles(files, overwrite, humanActor());
                 }));
}

QFuture<QStringList> SandboxController::downloadFiles(const QString &workspaceId,
                                                      const QList<QPair<QString, QString>> &files,
                                                      bool overwrite)
{
    const SandboxPtr sb = requireEntry(workspaceId).sandbox;
    return track(workspaceId, QStringLiteral("download_files"),
                 QtConcurrent::run(&m_bulkPool, [sb, files, overwrite] {
                     lowerThreadPriority();
                     return sb->downloadFiles(files, overwrite, humanActor());
                 }));
}

QFuture<void> SandboxController::deleteFiles(const QString &workspaceId, const QStringList &paths)
{
    const SandboxPtr sb = requireEntry(workspaceId).sandbox;
    return track(workspaceId, QStringLiteral("delete_files"),
                 QtConcurrent::run(&m_pool, [sb, paths] { sb->deleteFiles(paths, humanActor()); }));
}

QFuture<void> SandboxController::moveFile(const QString &workspaceId, const QString &src,
                                          const QString &dest)
{
    const SandboxPtr sb = requireEntry(workspaceId).sandbox;
    return track(
        workspaceId, QStringLiteral("move_file"),
        QtConcurrent::run(&m_pool, [sb, src, dest] { sb->moveFile(src, dest, humanActor()); }));
}

QFuture<void> SandboxController::makeFolder(const QString &workspaceId, const QString &path)
{
    const SandboxPtr sb = requireEntry(workspaceId).sandbox;
    return track(workspaceId, QStringLiteral("make_folder"),
                 QtConcurrent::run(&m_pool, [sb, path] { sb->makeFolder(path, humanActor()); }));
}

QFuture<std::optional<SyncPlan>> SandboxController::planFlush(const QString &workspaceId,
                                                              const std::optional<QString> &dest)
{
    const SandboxPtr sb = requireEntry(workspaceId).sandbox;
    return track(workspaceId, QStringLiteral("plan_flush"),
                 QtConcurrent::run(&m_pool, [sb, dest] { return sb->planFlush(dest); }));
}

QFuture<std::optional<WorkspaceSyncResult>>
SandboxController::flush(const QString &workspaceId, const std::optional<QString> &dest)
{
    const SandboxPtr sb = requireEntry(workspaceId).sandbox;
    auto relay = m_selfRelay;
    auto progress = throttled([relay, this, workspaceId](int done, int total) {
        relay->post(
            [this, workspaceId, done, total] { Q_EMIT flushProgress(workspaceId, done, total); });
    });
    auto future = track(workspaceId, QStringLiteral("flush"),
                        QtConcurrent::run(&m_bulkPool, [sb, dest, progress] {
                            lowerThreadPriority();
                            return sb->flush(dest, progress, humanActor());
                        }));
    auto *watcher = new QFutureWatcher<std::optional<WorkspaceSyncResult>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, workspaceId] {
        watcher->deleteLater();
        try {
            if (const auto synced = watcher->future().result()) {
                if (const QString problems = flushProblems(*synced); !problems.isEmpty())
                    Q_EMIT operationWarning(workspaceId, QStringLiteral("flush"), problems);
            }
        } catch (...) {
            // A failed flush is reported by track() through operationFailed.
        }
    });
    watcher->setFuture(future);
    return future;
}

quint64 SandboxController::execute(const QString &workspaceId, const QString &command,
                                   const QString &cwd)
{
    Entry *e = entry(workspaceId);
    if (!e || e->state != SessionState::Running || m_shuttingDown)
        return 0;
    ensureConsoleAgent(*e);
    const quint64 id = m_nextRequest++;
    const AgentPtr agent = e->agents.value(consoleAgent());
    auto token = std::make_shared<CancellationToken>();
    m_running.insert(id, token);
    e->commands.append(id);
    e->console->beginCommand(id, command, cwd, consoleAgent());
    const std::shared_ptr<QueuedRelay> relay = e->consoleRelay;
    ConsoleHistoryModel *console = e->console;
    ExecuteOptions options;
    options.cancel = token;
    options.onOutput = [relay, console, id](OutputChannel channel, const QByteArray &chunk) {
        relay->post([console, id, channel, chunk] { console->appendOutput(id, channel, chunk); });
    };
    // More than the console keeps: its bytes for "save output", converted on the pool.
    const qint64 kept = console->keptBytes();
    // A console command is a call like an agent's (executeAs, core/trackedcall.h): the
    // Timeline lists it with what it changed, and a restore stops it.
    auto future = QtConcurrent::run(&m_pool, [agent, command, cwd, options, kept] {
        ConsoleRun run;
        run.result =
            executeAs(*agent, command, cwd.isEmpty() ? std::nullopt : std::optional(cwd), options);
        if (run.result.output.size() + run.result.stderr_.size() > kept)
            run.full = ConsoleHistoryModel::FullOutput{run.result.output.toUtf8(),
                                                       run.result.stderr_.toUtf8()};
        return run;
    });
    auto *watcher = new QFutureWatcher<ConsoleRun>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, workspaceId, id] {
        watcher->deleteLater();
        m_running.remove(id);
        Entry *e = entry(workspaceId);
        if (!e)
            return;
        e->commands.removeAll(id);
        try {
            ConsoleRun run = watcher->future().result();
            e->console->finishCommand(id, run.result, std::move(run.full));
            Q_EMIT commandFinished(workspaceId, id, run.result);
        } catch (...) {
            const auto err = futureError(std::current_exception());
            e->console->failCommand(id, err ? err->first : QString(),
                                    err ? err->second : QString());
            reportFailure(workspaceId, QStringLiteral("execute"), std::current_exception());
            ExecuteResult failed;
            failed.exitCode = -1;
            failed.stderr_ = err ? err->first + QStringLiteral(": ") + err->second : QString();
            Q_EMIT commandFinished(workspaceId, id, failed);
        }
    });
    watcher->setFuture(future);
    return id;
}

void SandboxController::cancelCommand(quint64 requestId)
{
    if (const auto token = m_running.value(requestId))
        token->cancel();
}

void SandboxController::cancelAllCommands()
{
    for (const auto &token : std::as_const(m_running))
        token->cancel();
}

int SandboxController::runningCommandCount(const QString &workspaceId) const
{
    if (workspaceId.isEmpty())
        return int(m_running.size());
    const Entry *e = entry(workspaceId);
    return e ? int(e->commands.size()) : 0;
}

bool SandboxController::isCommandRunning(quint64 requestId) const
{
    return m_running.contains(requestId);
}

QFuture<void> SandboxController::attachAgent(const QString &workspaceId, const QString &name,
                                             SandboxAttachMode mode)
{
    Entry &e = requireEntry(workspaceId);
    checkName(name, QStringLiteral("agent name"));
    for (const AttachedAgent &a : e.sandbox->attachedAgents()) {
        if (a.agent->id() != name)
            continue;
        const bool ours = e.agents.value(name) == a.agent;
        throw ValueError(
            ours ? QStringLiteral("agent '%1' is already attached to '%2' (%3); select it and use "
                                  "Change mode, or detach it first")
                       .arg(name, workspaceId, toString(a.mode))
                 : QStringLiteral("an agent named '%1' is already attached to '%2' (%3, by an "
                                  "MCP session or a plan); pick another name")
                       .arg(name, workspaceId, toString(a.mode)));
    }
    AgentPtr agent = e.agents.value(name);
    if (!agent) {
        agent = Agent::create(name);
        e.agents.insert(name, agent);
    }
    const SandboxPtr sb = e.sandbox;
    return track(workspaceId, QStringLiteral("attach"),
                 QtConcurrent::run(&m_pool, [sb, agent, mode] { sb->attach(agent, mode); }));
}

QFuture<void> SandboxController::changeAgentMode(const QString &workspaceId, const QString &name,
                                                 SandboxAttachMode mode)
{
    Entry &e = requireEntry(workspaceId);
    const AgentPtr agent = e.agents.value(name);
    bool attached = false;
    for (const AttachedAgent &a : e.sandbox->attachedAgents()) {
        if (a.agent->id() != name)
            continue;
        if (a.agent != agent)
            throw ValueError(QStringLiteral("agent '%1' was attached by an MCP session or a plan; "
                                            "its mode is set there (the MCP panel's token, the "
                                            "plan's mode)")
                                 .arg(name));
        attached = true;
    }
    if (!attached)
        throw ValueError(
            QStringLiteral("agent '%1' is not attached to '%2'").arg(name, workspaceId));
    if (name == consoleAgent())
        throw ValueError(QStringLiteral("the console agent stays read-write"));
    const SandboxPtr sb = e.sandbox;
    return track(workspaceId, QStringLiteral("attach"),
                 QtConcurrent::run(&m_pool, [sb, agent, mode] { sb->attach(agent, mode); }));
}

QFuture<void> SandboxController::detachAgent(const QString &workspaceId, const QString &name)
{
    Entry &e = requireEntry(workspaceId);
    const AgentPtr agent = e.agents.value(name);
    const SandboxPtr sb = e.sandbox;
    return track(workspaceId, QStringLiteral("detach"),
                 QtConcurrent::run(&m_pool, [sb, agent] { sb->detach(agent); }));
}

AgentPtr SandboxController::agent(const QString &workspaceId, const QString &name) const
{
    const Entry *e = entry(workspaceId);
    if (!e)
        return {};
    if (AgentPtr a = e->agents.value(name))
        return a;
    for (const AttachedAgent &a : e->sandbox->attachedAgents()) {
        if (a.agent->id() == name)
            return a.agent;
    }
    return {};
}

void SandboxController::onAuditEvent(const AuditEvent &event)
{
    Entry *e = entry(event.workspaceId);
    if (!e)
        return;
    if (kToolEvents.contains(event.event) && event.actor != QLatin1String("host") &&
        event.actor != humanActor()) {
        QList<AgentCall> &calls = e->recentCalls[event.actor];
        QString outcome = event.outcome;
        if (const QString type = event.fields.value(QStringLiteral("error_type")).toString();
            !type.isEmpty())
            outcome += QStringLiteral(" (") + type + QLatin1Char(')');
        calls.append({event.timestamp, event.event.mid(8), outcome});
        if (calls.size() > 20)
            calls.removeFirst();
    }
    if (event.outcome != QLatin1String("ok") || e->state != SessionState::Running)
        return;
    // Incremental tree updates for every mutation, whoever made it.
    QStringList paths;
    const QJsonObject &f = event.fields;
    if (event.event == QLatin1String("sandbox.execute") ||
        event.event == QLatin1String("sandbox.restore")) {
        e->tree->refreshAll();
        Q_EMIT workspaceChanged(event.workspaceId, {});
        return;
    }
    if (event.event == QLatin1String("sandbox.flush")) {
        Q_EMIT workspaceChanged(event.workspaceId, {}); // the base moved
        return;
    }
    if (event.event == QLatin1String("sandbox.add_files") ||
        event.event == QLatin1String("sandbox.delete_files")) {
        for (const QJsonValue &v : f.value(QStringLiteral("paths")).toArray())
            paths.append(v.toString());
    } else if (event.event == QLatin1String("sandbox.move_file")) {
        paths = {f.value(QStringLiteral("src")).toString(),
                 f.value(QStringLiteral("dest")).toString()};
    } else if (event.event == QLatin1String("sandbox.write_file") ||
               event.event == QLatin1String("sandbox.make_folder")) {
        paths = {f.value(QStringLiteral("path")).toString()};
    }
    if (!paths.isEmpty()) {
        e->tree->pathsChanged(paths);
        Q_EMIT workspaceChanged(event.workspaceId, paths);
    }
}

void SandboxController::refreshPanels()
{
    QList<SessionRow> sessions;
    QList<AgentRow> agents;
    for (const QString &id : std::as_const(m_order)) {
        const Entry *e = m_entries.value(id);
        const auto &manager = e->sandbox->manager();
        SessionRow row;
        row.workspaceId = id;
        row.backend = e->sandbox->backendTypeName();
        row.workspaceRoot = e->spec.workspaceRoot;
        row.state = e->state;
        row.ownerId = e->sandbox->ownerId().value_or(QString());
        row.startedAt = e->state == SessionState::Running ? e->startedAt : QDateTime();
        row.ttlSeconds = e->sandbox->ttlSeconds();
        row.message = e->message;
        if (const auto s = manager->getSession(id))
            row.idleSeconds = qMax(0.0, manager->now() - s->lastUsedAt);
        sessions.append(row);

        for (const AttachedAgent &a : e->sandbox->attachedAgents()) {
            AgentRow ar;
            ar.workspaceId = id;
            ar.name = a.agent->id();
            ar.mode = toString(a.mode);
            ar.attachedAt = a.attachedAt;
            const AgentActivity act = a.agent->activity();
            ar.toolCalls = act.toolCalls;
            ar.lastTool = act.lastTool;
            ar.lastOutcome = act.lastOutcome;
            ar.tools = a.agent->tools().names();
            ar.recentCalls = e->recentCalls.value(ar.name);
            if (ar.toolCalls == 0 && !ar.recentCalls.isEmpty()) {
                // Agents driven through helpers (the console) count their audited calls.
                ar.toolCalls = ar.recentCalls.size();
                ar.lastTool = ar.recentCalls.last().tool;
                ar.lastOutcome = ar.recentCalls.last().outcome;
            }
            agents.append(ar);
        }
    }
    m_sessions->setSessions(sessions);
    m_agents->setAgents(agents);
}

void SandboxController::waitForIdle()
{
    for (int i = 0; i < 3; ++i) {
        m_pool.waitForDone();
        m_bulkPool.waitForDone();
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
    }
}

} // namespace elsai
