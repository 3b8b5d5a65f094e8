// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agent.h"
#include "sandbox.h"
#include "sandboxspec.h"
#include "sessionsmodel.h"

#include <QFuture>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QThreadPool>
#include <QTimer>

#include <memory>
#include <optional>

namespace elsai {

class AgentsModel;
class AuditLogModel;
class AuditSink;
struct QueuedRelay;
class ConsoleHistoryModel;
class WorkspaceTreeModel;
struct AuditEvent;

/// Owns the open sandboxes of the window, runs every backend call on a private thread pool,
/// and keeps the item models up to date. Each sandbox has its own SandboxManager (the spec's
/// auto-created one), so each keeps its own idle TTL; the controller runs cleanup_expired on
/// every manager on a timer and shows why a sandbox went away.
///
/// Threading contract: call every method on the GUI thread. Slow work (start, stop, flush, file
/// transfers, listings, commands) runs on pool(); its QFuture is returned, and the controller
/// itself reacts on the GUI thread when it finishes: models are refreshed and a failure is also
/// reported by operationFailed() (so a view that ignores the future still shows the error).
/// Workspace trees are refreshed from the audit stream (every mutation, whoever made it) and,
/// for changes made by commands, on a timer. The destructor waits for the pool.
class SandboxController : public QObject
{
    Q_OBJECT

public:
    /// The agent the console runs commands as, and the actor of the window's own edits.
    static QString consoleAgent() { return QStringLiteral("console"); }
    static QString humanActor() { return QStringLiteral("human"); }

    explicit SandboxController(QObject *parent = nullptr);
    ~SandboxController() override;

    QThreadPool *pool() { return &m_pool; }
    /// Long file work that yields to the GUI thread: seeding, stopping with a flush, flushing,
    /// adding and downloading files, and the views' own scans and diffs. Its tasks lower their
    /// thread's priority (lowerThreadPriority(), nice 10), so a 20,000-file seed does not
    /// take the cores from the GUI thread. Commands stay on pool(): they keep the priority the
    /// user gave the workbench.
    QThreadPool *bulkPool() { return &m_bulkPool; }
    SessionsModel *sessionsModel() const { return m_sessions; }
    AgentsModel *agentsModel() const { return m_agents; }
    AuditLogModel *auditModel() const { return m_audit; }
    /// Per-sandbox models; nullptr for an unknown id.
    WorkspaceTreeModel *treeModel(const QString &workspaceId) const;
    ConsoleHistoryModel *consoleModel(const QString &workspaceId) const;

    /// Creates a sandbox from `spec` (ValueError / OSError for bad input, thrown here) and
    /// starts it in the background when `start`.
    SandboxPtr addSandbox(SandboxSpec spec, bool start = true);
    /// Stops (without sync) and forgets a sandbox; its workspace folder stays on disk.
    void removeSandbox(const QString &workspaceId);
    SandboxPtr sandbox(const QString &workspaceId) const;
    /// What the sandbox was made from (for display: backend options, timeout, output cap);
    /// a default spec for an unknown id.
    SandboxSpec spec(const QString &workspaceId) const;
    QStringList workspaceIds() const;
    SessionState state(const QString &workspaceId) const;

    QFuture<std::optional<WorkspaceSeedResult>> startSandbox(const QString &workspaceId);
    QFuture<std::optional<WorkspaceSyncResult>> stopSandbox(const QString &workspaceId,
                                                            bool sync = true);

    QFuture<QByteArray> readFile(const QString &workspaceId, const QString &path);
    /// lstat of one workspace entry (size, mtime, type) on pool(): cheap change detection for
    /// views that poll. A probe: its failures (FileNotFoundError for a vanished file, ValueError
    /// for an unknown sandbox) are only in the future, never reported by operationFailed().
    QFuture<FileInfo> statFile(const QString &workspaceId, const QString &path);
    /// Saves through the sandbox as humanActor() (atomic write).
    QFuture<void> writeFile(const QString &workspaceId, const QString &path,
                            const QByteArray &content);
    QFuture<QStringList> addFiles(const QString &workspaceId,
                                  const QList<QPair<QString, FileSource>> &files,
                                  bool overwrite = true);
    QFuture<QStringList> downloadFiles(const QString &workspaceId,
                                       const QList<QPair<QString, QString>> &files,
                                       bool overwrite = true);
    QFuture<void> deleteFiles(const QString &workspaceId, const QStringList &paths);
    QFuture<void> moveFile(const QString &workspaceId, const QString &src, const QString &dest);
    QFuture<void> makeFolder(const QString &workspaceId, const QString &path);
    QFuture<std::optional<SyncPlan>> planFlush(const QString &workspaceId,
                                               const std::optional<QString> &dest = {});
    QFuture<std::optional<WorkspaceSyncResult>> flush(const QString &workspaceId,
                                                      const std::optional<QString> &dest = {});

    /// Runs a command as consoleAgent(); output streams into the sandbox's console model.
    /// Returns the request id (0 when the sandbox is unknown or not running).
    quint64 execute(const QString &workspaceId, const QString &command,
                    const QString &cwd = QString());
    void cancelCommand(quint64 requestId);
    /// Cancels every running command (of every sandbox).
    void cancelAllCommands();
    bool isCommandRunning(quint64 requestId) const;

    /// Attaches a new agent created by the window. Refused with ValueError (thrown here, naming
    /// what to do) when an agent of that name is already attached to the sandbox, whoever
    /// attached it (the window, an MCP session, a plan): a mode changes only explicitly,
    /// through changeAgentMode(), so the panels and the audit never disagree on it.
    QFuture<void> attachAgent(const QString &workspaceId, const QString &name,
                              SandboxAttachMode mode);
    /// Re-attaches an attached agent of the window with another mode (audited with its
    /// previous_mode). Refused with ValueError for an agent the window did not attach: an MCP
    /// agent's mode is its token's (the MCP panel), a plan's is the plan's.
    QFuture<void> changeAgentMode(const QString &workspaceId, const QString &name,
                                  SandboxAttachMode mode);
    QFuture<void> detachAgent(const QString &workspaceId, const QString &name);
    /// Agents created through attachAgent() plus the console agent, by name.
    AgentPtr agent(const QString &workspaceId, const QString &name) const;

    /// Intervals of the housekeeping timers (ms): cleanup_expired, tree refresh, panel refresh.
    void setIntervals(int cleanupMs, int treeRefreshMs, int panelRefreshMs);
    /// Refreshes the sessions and agents models now (the timer does it periodically).
    void refreshPanels();

    /// Waits until every background call has finished (tests, shutdown).
    void waitForIdle();

    /// Quitting, in this order: stops accepting work (execute() returns 0, the other calls
    /// throw ValueError), cancels every command (its process group is killed), waits for the
    /// pool, stops every sandbox without sync (a local workspace folder stays on disk) and
    /// forgets them, and drops the results still queued: after it, the controller emits
    /// nothing. Its models stay for the views that show them until it is destroyed. Idempotent;
    /// the destructor calls it. The window calls it once its plans and MCP servers stopped.
    void shutdown();
    bool isShuttingDown() const { return m_shuttingDown; }
    /// Console commands still running: of one sandbox, or of all with an empty id.
    int runningCommandCount(const QString &workspaceId = QString()) const;

Q_SIGNALS:
    void sandboxAdded(const QString &workspaceId);
    void sandboxRemoved(const QString &workspaceId);
    void sandboxStarted(const QString &workspaceId);
    /// `reason`: "stopped", "expired after N s idle", or the failure.
    void sandboxStopped(const QString &workspaceId, const QString &reason);
    void seedProgress(const QString &workspaceId, int done, int total);
    void flushProgress(const QString &workspaceId, int done, int total);
    void operationFailed(const QString &workspaceId, const QString &operation,
                         const QString &errorType, const QString &message);
    /// An operation finished but not cleanly, and the user must hear of it: "seed" (files that
    /// could not be seeded, a seed folder that does not exist), "flush" and "stop" (conflicts
    /// kept beside the host files, files that could not be written).
    void operationWarning(const QString &workspaceId, const QString &operation,
                          const QString &message);
    void commandFinished(const QString &workspaceId, quint64 requestId,
                         const elsai::ExecuteResult &result);
    /// A mutation of a running sandbox's workspace succeeded, whoever made it (from the audit
    /// stream): `paths` it touched, or empty when anything may have changed (a command, a
    /// flush that moved the seed base).
    void workspaceChanged(const QString &workspaceId, const QStringList &paths);

private:
    struct Entry;
    Entry *entry(const QString &workspaceId) const;
    Entry &requireEntry(const QString &workspaceId) const;
    template<typename T>
    QFuture<T> track(const QString &workspaceId, const QString &operation, QFuture<T> future);
    void reportFailure(const QString &workspaceId, const QString &operation,
                       std::exception_ptr error);
    void onAuditEvent(const AuditEvent &event);
    void onSessionClosed(const QString &workspaceId, const QString &reason);
    void setState(const QString &workspaceId, SessionState state, const QString &message = {});
    void ensureConsoleAgent(Entry &e);

    QThreadPool m_pool;
    QThreadPool m_bulkPool;
    SessionsModel *m_sessions;
    AgentsModel *m_agents;
    AuditLogModel *m_audit;
    QHash<QString, Entry *> m_entries;
    QStringList m_order;
    QTimer m_cleanupTimer, m_treeTimer, m_panelTimer;
    quint64 m_nextRequest = 1;
    bool m_shuttingDown = false;
    QHash<quint64, std::shared_ptr<CancellationToken>> m_running;
    std::shared_ptr<QueuedRelay> m_selfRelay; ///< posts from worker threads to this object
    std::shared_ptr<AuditSink> m_auditSink;
};

/// What the user must hear of a seed or flush result (empty when it went cleanly): the number
/// of errors and conflicts with the first few paths.
QString seedProblems(const WorkspaceSeedResult &result);
QString flushProblems(const WorkspaceSyncResult &result);

/// The spec name and message of an exception stored in a finished future (QtConcurrent wraps
/// std exceptions in QUnhandledException); none when the future has no exception.
std::optional<std::pair<QString, QString>> futureError(std::exception_ptr error);

} // namespace elsai
