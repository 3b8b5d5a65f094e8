// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "treewatch.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <deque>
#include <memory>
#include <optional>

namespace elsai {

/// What one call changed in the workspace (docs/checkpoints.md, "Changes per call").
struct CallChanges
{
    bool tracked = false; ///< false: tracking is off here (the counts mean nothing)
    qint64 added = 0, modified = 0, deleted = 0;
    qint64 symlinks = 0; ///< of the added: symlinks made
    /// Sorted, at most TimeTravelOptions::maxListedPaths each.
    QStringList addedPaths, modifiedPaths, deletedPaths;
    bool pathsTruncated = false;
    /// "shared": another call was running when some of these changes happened, and they are
    /// attributed to it too.
    bool shared = false;

    QString attribution() const
    {
        return shared ? QStringLiteral("shared") : QStringLiteral("exclusive");
    }
    /// {"added", "modified", "deleted", "symlinks", "attribution", "paths": {…},
    ///  "paths_truncated"} — what a call's result carries.
    QJsonObject toJson() const;
    /// The counts and the attribution only — what its audit record carries.
    QJsonObject auditJson() const;
};

/// One finished call as the change log keeps it (what a Timeline shows, what a recorder saves).
struct CallChangeRecord
{
    quint64 id = 0; ///< increasing per sandbox
    QString actor;
    QString tool;
    qint64 startedMs = 0;
    qint64 endedMs = 0;
    CallChanges changes;
    /// "ok", the error type raised (`OSError`, …), "exit N" (non-zero), "error" (unsaid).
    QString outcome;
};

/// Attributes the workspace's changes to the calls running when they happened. A drain of the
/// workspace watch (TreeWatch) runs at every call's begin and end, so between two drains the
/// set of running calls is fixed and every change found there belongs to each of them
/// (`attribution: "shared"` when there are several). A call's change of a path is its state
/// when the call first saw it change against its state at the call's end: a file created and
/// removed within one call is no change. Thread-safe.
class ChangeTracker
{
public:
    /// Throws OSError when the backend has no watch (ExecutionBackend::watchTree()).
    ChangeTracker(const BackendPtr &backend, int maxWatches, int maxListedPaths);
    ~ChangeTracker();

    void begin(quint64 id, const QString &actor, const QString &tool);
    CallChanges peek(quint64 id);
    /// Ends the call: its record goes to the log with `outcome`; `*changed` (when given) gets
    /// every path it changed (not capped) with the states before and after.
    CallChanges end(quint64 id, const QString &outcome = {}, QList<PathChange> *changed = nullptr);
    /// Forgets the changes seen so far (a restore's are nobody's).
    void rescan();
    /// The paths that may have changed since the last call, for a checkpoint that looks at
    /// those only (TreeWatch::takeTouched()); none when the watch cannot vouch for the rest.
    /// Drains first: the changes go to the calls running (`attribute`), or to nobody. A watch
    /// that keeps no touched paths (a listing) is not drained; without `attribute` it is reset.
    std::optional<QSet<QByteArray>> takeTouched(bool attribute);

    /// The last finished calls, oldest first (at most MaxLog).
    QList<CallChangeRecord> log() const;
    static constexpr int MaxLog = 10000;

    bool watching() const { return m_watch->watching(); }
    int watchCount() const { return m_watch->watchCount(); }

private:
    struct Call
    {
        QString actor;
        QString tool;
        qint64 startedMs = 0;
        QHash<QByteArray, std::pair<std::optional<PathState>, std::optional<PathState>>> paths;
        bool shared = false;
    };
    void drainLocked();
    CallChanges summarize(const Call &call) const;

    std::unique_ptr<TreeWatch> m_watch;
    int m_maxListed;
    mutable QMutex m_mutex;
    QHash<quint64, Call> m_running;
    std::deque<CallChangeRecord> m_log;
};

} // namespace elsai
