// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "changetracker.h"
#include "mergingtablemodel.h"
#include "timetravel.h"

#include <QHash>
#include <QPointer>
#include <QTimer>

namespace elsai {

class SandboxController;
struct FileDiff;

/// One row of the Timeline: a finished call, a checkpoint, a restore, or "now" (the live
/// workspace).
struct TimelineRow
{
    enum class Kind { Call, Checkpoint, Now, Restore };
    Kind kind = Kind::Call;
    qint64 timeMs = 0; ///< a call's end, a checkpoint's creation, a restore's end
    // a call
    quint64 callId = 0;
    QString actor;
    QString tool;
    QString outcome; ///< "ok", an error type, "exit N"; empty: unknown
    qint64 startedMs = 0;
    qint64 added = 0, modified = 0, deleted = 0;
    bool shared = false;
    QStringList paths; ///< the first few changed paths (a tooltip)
    // a checkpoint (a restore: the checkpoint restored)
    QString name;
    QString note;
    bool automatic = false;
    qint64 files = -1, bytes = -1; ///< -1: not read yet

    QString key() const;
    bool operator==(const TimelineRow &) const = default;
};

/// One sandbox's history in time order (docs/window.md, Timeline): every finished call the
/// change tracker logged (time, agent, tool, outcome, files changed, attribution) and its
/// checkpoints as marker rows (name, note, automatic or not, size), the restores done since the
/// sandbox started (which checkpoint), then a last "now" row.
///
/// Live: a finished call, a checkpoint, a restore or a deletion bumps the sandbox's
/// TimeTravel::historyGeneration(); while active, the model looks at it on a short timer (a
/// read of one counter) and on the controller's workspaceChanged(), and fetches only then, on
/// the controller's bulk pool: the calls logged after the last one it has, the checkpoint
/// list, and the size of each checkpoint it has not seen (one manifest read each). Merged row
/// by row (MergingTableModel): rows are inserted and removed, never reset; selections survive.
/// The change log lives as long as the sandbox runs: when it starts again, the calls of the
/// last run are removed (its checkpoints stay). GUI thread only.
///
/// Columns: Time, Agent, Call (the tool, or the checkpoint's name), Outcome (or the note),
/// Changes ("+2 ~1 −0", "shared" when attributed to several calls; a checkpoint's size).
class TimelineModel : public MergingTableModel<TimelineRow, QString>
{
    Q_OBJECT

public:
    enum Column { TimeColumn, AgentColumn, CallColumn, OutcomeColumn, ChangesColumn, ColumnCount };
    // Roles (modelroles.h): TimelineKindRole, CallIdRole, CheckpointNameRole ("now" on the now
    // row), AutomaticRole, AddedRole, ModifiedRole, DeletedRole, SharedRole, ActorRole,
    // OutcomeRole, TimestampRole (QDateTime), SizeRole (a checkpoint's bytes).

    explicit TimelineModel(SandboxController *controller, QObject *parent = nullptr);
    ~TimelineModel() override;

    /// Follows another sandbox (empty: none): its rows are removed, then it is fetched.
    void setWorkspace(const QString &workspaceId);
    QString workspaceId() const { return m_workspaceId; }
    /// While inactive (the panel is hidden) nothing is fetched; turning it on fetches once.
    void setActive(bool active);
    bool isActive() const { return m_active; }
    /// Fetches soon (coalesced).
    void refresh();
    /// How often the history counter is looked at while active (ms; tests make it short).
    void setPollInterval(int ms) { m_poll.setInterval(ms); }
    bool isFetching() const { return m_fetching; }
    /// Fetches finished since construction.
    int fetchCount() const { return m_fetchCount; }
    /// Why there is no history (not running, time travel off); empty when there is one.
    QString problem() const { return m_problem; }
    bool checkpointsOn() const { return m_checkpointsOn; }
    bool trackingOn() const { return m_trackingOn; }

    const TimelineRow &rowAt(int row) const { return m_rows.at(row); }
    /// The row of a call / a checkpoint; -1 when none.
    int rowOfCall(quint64 id) const;
    int rowOfCheckpoint(const QString &name) const;
    /// Checkpoint names, oldest first.
    QStringList checkpointNames() const;

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    /// "+2 ~1 −0".
    static QString countsText(qint64 added, qint64 modified, qint64 deleted);

Q_SIGNALS:
    /// A fetch finished and its result is in the rows (or problem() says why not).
    void fetched();

protected:
    QString keyOf(const TimelineRow &row) const override { return row.key(); }

private:
    struct Fetch;
    void startFetch();
    void apply(Fetch &fetch);
    void clearRows();
    void poll();

    QPointer<SandboxController> m_controller;
    QString m_workspaceId;
    bool m_active = true;
    bool m_fetching = false;
    bool m_dirty = false;
    quint64 m_serial = 0;
    quint64 m_generation = 0; ///< of the last fetch
    bool m_haveGeneration = false;
    QTimer m_delay;
    QTimer m_poll;
    QString m_problem;
    bool m_checkpointsOn = false;
    bool m_trackingOn = false;
    int m_fetchCount = 0;
    QHash<QString, std::pair<qint64, qint64>> m_sizes; ///< checkpoint key → files, bytes
};

/// What a Timeline diff shows: `title` and the counts as the note, then per path a line
/// naming the change (type, sizes, mode, link) and its unified diff when there is one.
FileDiff timelineDiffText(const CheckpointDiff &diff, const QString &title);

} // namespace elsai
