// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "calljournal.h"
#include "changetracker.h"
#include "checkpointstore.h"
#include "process.h"
#include "treesnapshot.h"

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QMutex>
#include <QString>
#include <QStringList>
#include <QWaitCondition>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace elsai {

/// How a sandbox keeps checkpoints and tracks changes (Sandbox::Options::timeTravel;
/// docs/checkpoints.md).
struct TimeTravelOptions
{
    /// Checkpoints at all (the store, the baseline, the API). Off: every checkpoint call raises.
    bool checkpoints = false;
    /// The store folder; empty: CheckpointStore::defaultFolder().
    QString folder;
    /// The store's bound: past it, the oldest automatic checkpoints go.
    qint64 sizeLimitBytes = qint64(4) * 1024 * 1024 * 1024;
    /// A checkpoint named "seed" (automatic) when the sandbox starts: the baseline.
    bool baseline = true;
    /// Agents whose every mutating call is preceded by an automatic checkpoint (cost: one
    /// metadata walk of the workspace plus a copy of each file changed since the last one).
    QStringList autoCheckpointAgents;
    /// The checkpoint tools for the sandbox's read-write agents (checkpointtools.h).
    bool agentTools = false;
    /// Record what every call changed (ChangeTracker).
    bool trackChanges = false;
    /// Folders watched at most (inotify); beyond it changes are found by a metadata walk.
    int maxWatches = 65536;
    /// Paths listed per class in a call's result (the counts are always whole).
    int maxListedPaths = 100;
    /// With checkpoints and tracking both on: the bounds of the contents kept per call for
    /// its diff (TimeTravel::callDiff()).
    CallJournal::Limits journal;
};

/// A checkpoint as checkpoints() lists it.
struct CheckpointInfo
{
    QString name;
    QString note;
    qint64 createdMs = 0;
    bool automatic = false;
    qint64 files = 0;
    qint64 bytes = 0;
    QStringList removedBySizeLimit; ///< checkpoint(): what the size limit removed to make room
    QJsonObject toJson() const;
    static CheckpointInfo fromManifest(const TreeManifest &m);
};

struct CheckpointDiffOptions
{
    int maxEntries = 1000;             ///< entries listed (the counts are whole)
    qint64 maxTextBytes = 1024 * 1024; ///< larger files: sizes only
    qint64 maxDiffBytes = 256 * 1024;  ///< unified diff text in all; past it, sizes only
    bool unified = true;               ///< false: no diff text at all
};

/// One path of a diff.
struct CheckpointDiffEntry
{
    QString path;
    QString change; ///< "added", "modified", "deleted"
    QString type;   ///< "file", "folder", "symlink"
    std::optional<qint64> sizeFrom, sizeTo;
    std::optional<quint32> modeFrom, modeTo;
    std::optional<QString> linkFrom, linkTo;
    bool binary = false;
    QString diff;             ///< unified diff of a text file
    bool diffOmitted = false; ///< a text file whose diff was left out (size, total bound)
    QJsonObject toJson() const;
};

struct CheckpointDiff
{
    QString from;
    QString to;
    qint64 added = 0, modified = 0, deleted = 0;
    QList<CheckpointDiffEntry> entries;
    bool truncated = false; ///< more entries than maxEntries
    QJsonObject toJson() const;
};

struct RestoreResult
{
    QString name;
    ApplyResult applied;
    int stoppedCalls = 0;        ///< calls whose commands were cancelled first
    bool wasInterrupted = false; ///< this finished an interrupted restore
    QJsonObject toJson() const;
};

/// One finished tool call as a call observer sees it (a session recorder): who called what
/// with which arguments, what it answered or raised, and what it changed.
struct FinishedCall
{
    QString actor;
    QString mode; ///< the actor's attach mode then ("read_write", "read_only"; empty: unknown)
    QString tool;
    QJsonObject args;
    bool ok = false;
    QString text;      ///< ok: what the agent saw
    QJsonObject data;  ///< ok: the structured result
    QString errorType; ///< not ok: the error's spec name
    QString errorMessage;
    CallChanges changes; ///< tracked only when the call could change the workspace
};
/// Told of every finished call, on the calling thread, before the call returns.
using CallObserver = std::function<void(const FinishedCall &)>;

/// The time travel of one started sandbox: its checkpoints, restores, the gate every tool
/// call passes (a restore waits for no one: it stops the calls in flight), and the change
/// tracker. Thread-safe. Made by Sandbox::start(), dropped by stop().
class TimeTravel
{
public:
    TimeTravel(const TimeTravelOptions &options, const QString &workspaceId, BackendPtr backend);
    ~TimeTravel();

    const TimeTravelOptions &options() const { return m_options; }

    CheckpointInfo checkpoint(const QString &name, const QString &note, bool automatic = false,
                              bool replace = false);
    QList<CheckpointInfo> checkpoints() const;
    /// `from` / `to`: a checkpoint name or "now".
    CheckpointDiff diff(const QString &from, const QString &to,
                        const CheckpointDiffOptions &options = {});
    RestoreResult restore(const QString &name);
    /// What the finished call `callId` (CallChangeRecord::id) changed, with unified diffs:
    /// each path's state after the previous call that changed it (or in the baseline
    /// checkpoint) against its state after this call (CallJournal). `from` is
    /// "before call N", `to` "call N". ValueError when checkpoints or tracking are off,
    /// FileNotFoundError when the journal no longer has the call.
    CheckpointDiff callDiff(quint64 callId, const CheckpointDiffOptions &options = {});
    /// The restores done since the sandbox started (the last 1,000): which checkpoint, when.
    struct RestoreMark
    {
        QString name;
        qint64 ms = 0;
    };
    QList<RestoreMark> restores() const;
    /// Bumped by every finished tracked call, checkpoint, restore and deletion: a view polls
    /// it to know when to look again (cheap, any thread).
    quint64 historyGeneration() const { return m_generation.load(std::memory_order_relaxed); }
    bool deleteCheckpoint(const QString &name);
    /// The checkpoint an interrupted restore was bringing back (a kill mid-restore), if any:
    /// restore() of it finishes the job.
    std::optional<QString> interruptedRestore() const;
    /// The whole manifest of a checkpoint (fork, the tests).
    TreeManifest manifest(const QString &name) const;
    CheckpointStore &store() const { return *m_store; }
    /// A capture of the workspace now (hashes, no copies).
    TreeManifest captureNow();
    /// The whole-tree walks checkpoints and restores made so far; with change tracking, only
    /// the first and those after the tracker could not vouch for what changed (the tests, the
    /// bench).
    quint64 treeWalks() const { return m_treeWalks.load(std::memory_order_relaxed); }

    /// One tool call (or host operation) that may change the workspace, from begin to end:
    /// waits while a restore runs, makes the call's command cancellable by a restore, takes
    /// the automatic checkpoint when the agent asks for one, and tracks the changes.
    class CallSpan
    {
    public:
        ~CallSpan();
        /// What the call changed so far (the counts and capped paths); ends the span on
        /// `finish` (outcome "ok").
        CallChanges changes(bool finish);
        /// The log record's outcome when it is not "ok" (finished) / "error" (unfinished): the
        /// error type the call raised, "exit N" for a command's non-zero exit.
        void setOutcome(const QString &outcome) { m_outcome = outcome; }

    private:
        friend class TimeTravel;
        CallSpan() = default;
        TimeTravel *m_owner = nullptr;
        quint64 m_id = 0;
        bool m_finished = false;
        QString m_outcome;
    };
    std::unique_ptr<CallSpan> beginCall(const QString &actor, const QString &tool, bool mutating);

    ChangeTracker *tracker() const { return m_tracker.get(); }
    /// The contents of the calls' changes; none unless checkpoints and tracking are both on.
    CallJournal *journal() const { return m_journal.get(); }

    /// Observers of every finished tool call (TrackedCall tells them); an id to remove it.
    quint64 addCallObserver(const CallObserver &observer);
    void removeCallObserver(quint64 id);
    void notifyCallFinished(const FinishedCall &call) const;

private:
    struct InFlight
    {
        quint64 id;
        Qt::HANDLE thread;
        std::shared_ptr<CancellationToken> cancel;
    };
    void endCall(quint64 id);
    CallChanges finishTracking(quint64 id, const QString &outcome);
    void bumpGeneration() { m_generation.fetch_add(1, std::memory_order_relaxed); }
    CheckpointSpace &space() const;
    std::optional<TreeManifest> loadManifest(const QString &name) const;
    void enforceLimit(CheckpointInfo &info);
    /// A capture of the workspace, its files stored when `store` is given: from the last one
    /// and the paths the tracker saw touched since, when it vouches for them, else a walk
    /// (CaptureOptions::base). The tracker's drain first: its changes go to the calls running
    /// (`attribute`) or to nobody (a restore's). With m_checkpointMutex held.
    TreeManifest captureTracked(CheckpointStore *store, bool attribute);

    TimeTravelOptions m_options;
    QString m_workspaceId;
    BackendPtr m_backend;
    std::shared_ptr<CheckpointStore> m_store;
    std::unique_ptr<CheckpointSpace> m_space;
    TreeHashCache m_cache;
    std::unique_ptr<ChangeTracker> m_tracker;
    std::unique_ptr<CallJournal> m_journal;
    std::atomic<quint64> m_generation{0};
    std::atomic<quint64> m_treeWalks{0};
    QMutex m_checkpointMutex;               // one checkpoint / restore at a time per workspace
    std::optional<TreeManifest> m_lastTree; ///< the last captureTracked() (m_checkpointMutex)

    mutable QMutex m_gateMutex;
    QWaitCondition m_gateChanged;
    bool m_restoring = false;
    quint64 m_nextCall = 1;
    QList<InFlight> m_inFlight;
    QList<RestoreMark> m_restores; // m_gateMutex
    bool m_gcDone = false;

    mutable QMutex m_observerMutex;
    QMap<quint64, CallObserver> m_observers;
    quint64 m_nextObserver = 1;
};

} // namespace elsai
