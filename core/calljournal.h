// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "treemanifest.h"
#include "treewatch.h"

#include <QHash>
#include <QList>
#include <QMutex>
#include <QString>

#include <deque>
#include <functional>
#include <memory>
#include <optional>

namespace elsai {

class CheckpointStore;

/// One path a call changed, as the journal keeps it: its state before and after the call.
/// A file entry with an empty hash is one whose content was not kept (over a bound, or
/// unreadable); its type, mode and size are still exact.
struct CallPathState
{
    QByteArray path;
    /// True: `before` is the path's entry in the journal's baseline checkpoint (the call was
    /// the first to change it since the baseline); looked up when the diff is made.
    bool beforeFromBaseline = false;
    /// True: nothing is known of the state before (the journal forgot it, over maxKnownPaths).
    bool beforeUnknown = false;
    std::optional<TreeEntry> before; ///< none: absent (unless beforeFromBaseline)
    std::optional<TreeEntry> after;  ///< none: absent
};

/// What one finished call changed, with its contents (CallJournal::call()).
struct CallJournalRecord
{
    quint64 id = 0;
    QString baseline;           ///< the checkpoint `beforeFromBaseline` paths are looked up in
    QList<CallPathState> paths; ///< sorted by path
    qint64 unjournaled = 0;     ///< changed paths over the per-call bound (not listed)
};

/// The contents behind "what did this call change?" (docs/window.md, Timeline): at each
/// tracked call's end, the after-content of every file it changed goes into the checkpoint
/// store (content-addressed: deduplicated with the checkpoints and with itself), so a call's
/// diff is exact: for each path, its state after the previous call that changed it (or in the
/// baseline checkpoint, `seed` or the last one restored) against its state after this call.
///
/// Bounded: a file over Limits::maxFileBytes, or past a call's maxCallBytes, keeps its
/// metadata but not its content; a call lists at most maxPathsPerCall paths; the contents the
/// journal holds are pinned in the store (CheckpointStore::pin(): this process's garbage
/// collection keeps them) up to maxPinnedBytes and maxCalls, the oldest calls' going first (a
/// call's diff then says its content is no longer kept). Thread-safe.
class CallJournal
{
public:
    struct Limits
    {
        qint64 maxFileBytes = 1024 * 1024;
        qint64 maxCallBytes = 16 * 1024 * 1024;
        int maxPathsPerCall = 1000;
        qint64 maxPinnedBytes = qint64(256) * 1024 * 1024;
        int maxCalls = 10000;
        int maxKnownPaths = 200000; ///< the latest state of this many paths at most
    };
    /// Reads a workspace file, none when it is unreadable, gone, or larger than `maxBytes`.
    using Reader =
        std::function<std::optional<QByteArray>(const QByteArray &path, qint64 maxBytes)>;

    CallJournal(std::shared_ptr<CheckpointStore> store, const QString &baseline,
                const Limits &limits);
    CallJournal(std::shared_ptr<CheckpointStore> store, const QString &baseline);
    ~CallJournal(); ///< unpins everything

    /// Records a finished call: `changed` as ChangeTracker::end() gives it, contents read by
    /// `read` and added to the store (under its shared lock). Throws nothing.
    void record(quint64 id, const QList<PathChange> &changed, const Reader &read);
    /// The workspace became `checkpoint` (a restore): the states known so far are forgotten.
    void rebase(const QString &checkpoint);

    std::optional<CallJournalRecord> call(quint64 id) const;
    QString baseline() const;
    qint64 pinnedBytes() const;

private:
    struct Stored
    {
        CallJournalRecord record;
        QList<std::pair<QByteArray, qint64>> pins; ///< one per pin() taken for this call
    };
    void pinLocked(Stored &call, const QByteArray &hash, qint64 size, bool storePinned);
    void evictLocked();

    std::shared_ptr<CheckpointStore> m_store;
    Limits m_limits;
    mutable QMutex m_mutex;
    QString m_baseline;
    std::deque<Stored> m_calls;
    QHash<QByteArray, std::optional<TreeEntry>> m_latest; ///< path → state after the last call
    bool m_forgotLatest = false; ///< m_latest was dropped (over maxKnownPaths) since the baseline
    QHash<QByteArray, int> m_pinCounts; ///< distinct pinned blob → pins
    qint64 m_pinnedBytes = 0;
};

} // namespace elsai
