// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "timelinemodel.h"

#include "displaytext.h"
#include "errors.h"
#include "filediff.h"
#include "modelroles.h"
#include "sandboxcontroller.h"
#include "threadpriority.h"

#include <QDateTime>
#include <QFutureWatcher>
#include <QSet>
#include <QtConcurrent>

#include <algorithm>
#include <limits>

namespace elsai {

namespace {

constexpr int kDelayMs = 100;
constexpr int kPollMs = 500;
/// Checkpoint manifests read for their size per fetch (each is one file read and decode).
constexpr int kSizeReadsPerFetch = 16;
constexpr int kTooltipPaths = 8;

QString checkpointKey(const QString &name, qint64 createdMs)
{
    return QStringLiteral("k:%1@%2").arg(name).arg(createdMs);
}

QString clock(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms).toString(QStringLiteral("HH:mm:ss"));
}

} // namespace

QString TimelineRow::key() const
{
    switch (kind) {
    case Kind::Call:
        return QStringLiteral("c:") + QString::number(callId);
    case Kind::Checkpoint:
        return checkpointKey(name, timeMs);
    case Kind::Restore:
        return QStringLiteral("r:%1@%2").arg(name).arg(timeMs);
    case Kind::Now:
        break;
    }
    return QStringLiteral("now");
}

struct TimelineModel::Fetch
{
    QString problem;
    bool checkpointsOn = false;
    bool trackingOn = false;
    quint64 generation = 0;
    bool whole = true; ///< `calls` is the whole log (the last call the model had is not in it)
    QList<CallChangeRecord> calls;
    QList<CheckpointInfo> checkpoints;
    QList<TimeTravel::RestoreMark> restores;
    QHash<QString, std::pair<qint64, qint64>> sizes; ///< read now
};

TimelineModel::TimelineModel(SandboxController *controller, QObject *parent)
    : MergingTableModel(parent), m_controller(controller)
{
    m_delay.setSingleShot(true);
    m_delay.setInterval(kDelayMs);
    connect(&m_delay, &QTimer::timeout, this, &TimelineModel::startFetch);
    m_poll.setInterval(kPollMs);
    connect(&m_poll, &QTimer::timeout, this, &TimelineModel::poll);
    const auto ours = [this](const QString &id) {
        if (id == m_workspaceId)
            refresh();
    };
    connect(controller, &SandboxController::workspaceChanged, this, ours);
    connect(controller, &SandboxController::sandboxStarted, this, [this](const QString &id) {
        if (id != m_workspaceId)
            return;
        // A new start, a new change log (its ids start again): the calls of the last run go.
        QList<TimelineRow> kept;
        for (const TimelineRow &row : std::as_const(m_rows)) {
            if (row.kind != TimelineRow::Kind::Call)
                kept.append(row);
        }
        mergeRows(kept);
        m_haveGeneration = false;
        ++m_serial; // a fetch of the old run still on its way is dropped
        refresh();
    });
    connect(controller, &SandboxController::sandboxStopped, this, ours);
    connect(controller, &SandboxController::sandboxRemoved, this, [this](const QString &id) {
        if (id == m_workspaceId)
            setWorkspace(QString());
    });
}

TimelineModel::~TimelineModel() = default;

void TimelineModel::setWorkspace(const QString &workspaceId)
{
    if (workspaceId == m_workspaceId)
        return;
    m_workspaceId = workspaceId;
    ++m_serial;
    m_dirty = false;
    m_haveGeneration = false;
    m_problem.clear();
    m_sizes.clear();
    clearRows();
    if (!workspaceId.isEmpty())
        refresh();
}

void TimelineModel::setActive(bool active)
{
    if (active == m_active)
        return;
    m_active = active;
    if (active) {
        refresh();
    } else {
        m_poll.stop();
        m_delay.stop();
    }
}

void TimelineModel::refresh()
{
    if (!m_active || m_workspaceId.isEmpty())
        return;
    if (!m_poll.isActive())
        m_poll.start();
    if (m_fetching) {
        m_dirty = true; // one more fetch once this one is in
        return;
    }
    if (!m_delay.isActive())
        m_delay.start();
}

void TimelineModel::poll()
{
    if (!m_controller || m_fetching || m_delay.isActive())
        return;
    const SandboxPtr sandbox = m_controller->sandbox(m_workspaceId);
    const auto tt = sandbox ? sandbox->timeTravel() : nullptr;
    if (tt && (!m_haveGeneration || tt->historyGeneration() != m_generation))
        refresh();
}

void TimelineModel::startFetch()
{
    if (!m_controller || m_workspaceId.isEmpty() || m_fetching)
        return;
    const SandboxPtr sandbox = m_controller->sandbox(m_workspaceId);
    if (!sandbox || !sandbox->isStarted() || m_controller->isShuttingDown()) {
        if (!sandbox)
            m_problem.clear();
        else if (m_controller->state(m_workspaceId) == SessionState::Starting)
            m_problem = tr("The sandbox is starting.");
        else
            m_problem = m_rows.isEmpty()
                            ? tr("The sandbox is not running.")
                            : tr("The sandbox is not running: this is its history until it "
                                 "stopped.");
        m_haveGeneration = false;
        ++m_fetchCount;
        Q_EMIT fetched();
        return;
    }
    m_fetching = true;
    m_dirty = false;
    const quint64 serial = m_serial;
    quint64 lastCall = 0;
    for (auto it = m_rows.crbegin(); it != m_rows.crend() && lastCall == 0; ++it) {
        if (it->kind == TimelineRow::Kind::Call)
            lastCall = it->callId;
    }
    QSet<QString> knownSizes;
    for (auto it = m_sizes.cbegin(); it != m_sizes.cend(); ++it)
        knownSizes.insert(it.key());
    auto *watcher = new QFutureWatcher<Fetch>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial] {
        watcher->deleteLater();
        m_fetching = false;
        if (serial != m_serial) { // another sandbox meanwhile
            refresh();
            return;
        }
        try {
            Fetch f = watcher->result();
            apply(f);
        } catch (...) {
            const auto err = futureError(std::current_exception());
            m_problem = tr("Cannot read the history: %1").arg(err ? err->second : QString());
        }
        ++m_fetchCount;
        Q_EMIT fetched();
        if (m_dirty)
            refresh();
    });
    watcher->setFuture(QtConcurrent::run(m_controller->bulkPool(), [sandbox, lastCall, knownSizes] {
        lowerThreadPriority();
        Fetch f;
        const auto tt = sandbox->timeTravel();
        if (!tt) { // stopped meanwhile, or started with neither checkpoints nor tracking
            if (!sandbox->isStarted())
                f.problem = QStringLiteral("not running");
            return f;
        }
        // Read first: a change while the rest is read bumps it again, so nothing is missed.
        f.generation = tt->historyGeneration();
        f.checkpointsOn = tt->options().checkpoints;
        f.trackingOn = tt->tracker() != nullptr;
        if (const ChangeTracker *tracker = tt->tracker()) {
            const QList<CallChangeRecord> log = tracker->log();
            qsizetype from = 0;
            for (qsizetype i = log.size() - 1; lastCall != 0 && i >= 0; --i) {
                if (log.at(i).id == lastCall) {
                    from = i + 1;
                    f.whole = false;
                    break;
                }
            }
            f.calls = log.mid(from);
        }
        if (f.checkpointsOn) {
            f.restores = tt->restores();
            f.checkpoints = tt->checkpoints();
            int reads = 0;
            for (const CheckpointInfo &c : std::as_const(f.checkpoints)) {
                const QString key = checkpointKey(c.name, c.createdMs);
                if (knownSizes.contains(key) || reads >= kSizeReadsPerFetch)
                    continue;
                ++reads;
                try {
                    const TreeManifest m = tt->manifest(c.name);
                    f.sizes.insert(key, {m.fileCount(), m.byteCount()});
                } catch (const SandboxError &) {
                    f.sizes.insert(key, {-1, -1}); // deleted meanwhile, or damaged
                }
            }
        }
        return f;
    }));
}

void TimelineModel::apply(Fetch &f)
{
    if (f.problem == QLatin1String("not running")) {
        m_problem = tr("The sandbox is not running.");
        m_haveGeneration = false;
        return;
    }
    m_generation = f.generation;
    m_haveGeneration = true;
    m_checkpointsOn = f.checkpointsOn;
    m_trackingOn = f.trackingOn;
    if (!f.checkpointsOn && !f.trackingOn)
        m_problem = tr("This sandbox keeps no history: create it with \"Keep checkpoints\" and "
                       "\"Track changes per call\" on.");
    else if (!f.trackingOn)
        m_problem = tr("Calls are not tracked in this sandbox (\"Track changes per call\" is "
                       "off): only its checkpoints are listed.");
    else if (!f.checkpointsOn)
        m_problem = tr("This sandbox keeps no checkpoints (\"Keep checkpoints\" is off): the "
                       "calls are listed, without their diffs.");
    else
        m_problem.clear();
    for (auto it = f.sizes.cbegin(); it != f.sizes.cend(); ++it)
        m_sizes.insert(it.key(), it.value());

    QList<TimelineRow> next;
    next.reserve(m_rows.size() + f.calls.size() + 1);
    qsizetype calls = 0;
    if (!f.whole) {
        for (const TimelineRow &row : std::as_const(m_rows)) {
            if (row.kind == TimelineRow::Kind::Call) {
                next.append(row);
                ++calls;
            }
        }
    }
    for (const CallChangeRecord &r : std::as_const(f.calls)) {
        TimelineRow row;
        row.kind = TimelineRow::Kind::Call;
        row.timeMs = r.endedMs;
        row.callId = r.id;
        row.actor = r.actor;
        row.tool = r.tool;
        row.outcome = r.outcome;
        row.startedMs = r.startedMs;
        row.added = r.changes.added;
        row.modified = r.changes.modified;
        row.deleted = r.changes.deleted;
        row.shared = r.changes.shared;
        for (const QStringList *list :
             {&r.changes.addedPaths, &r.changes.modifiedPaths, &r.changes.deletedPaths}) {
            for (const QString &p : *list) {
                if (row.paths.size() < kTooltipPaths)
                    row.paths.append(p);
            }
        }
        next.append(row);
        ++calls;
    }
    // As many calls as the change log keeps: the oldest go first.
    if (const qsizetype over = calls - ChangeTracker::MaxLog; over > 0)
        next.remove(0, over);
    for (const CheckpointInfo &c : std::as_const(f.checkpoints)) {
        TimelineRow row;
        row.kind = TimelineRow::Kind::Checkpoint;
        row.timeMs = c.createdMs;
        row.name = c.name;
        row.note = c.note;
        row.automatic = c.automatic;
        const auto size = m_sizes.value(checkpointKey(c.name, c.createdMs), {-1, -1});
        row.files = size.first;
        row.bytes = size.second;
        next.append(row);
    }
    for (const TimeTravel::RestoreMark &r : std::as_const(f.restores)) {
        TimelineRow row;
        row.kind = TimelineRow::Kind::Restore;
        row.timeMs = r.ms;
        row.name = r.name;
        next.append(row);
    }
    if (!f.checkpointsOn && !f.trackingOn) {
        mergeRows({});
        return;
    }
    TimelineRow now;
    now.kind = TimelineRow::Kind::Now;
    now.timeMs = std::numeric_limits<qint64>::max();
    now.name = QStringLiteral("now");
    next.append(now);
    std::stable_sort(next.begin(), next.end(), [](const TimelineRow &a, const TimelineRow &b) {
        return a.timeMs < b.timeMs;
    });
    mergeRows(next);
}

void TimelineModel::clearRows()
{
    if (m_rows.isEmpty())
        return;
    beginRemoveRows({}, 0, int(m_rows.size()) - 1);
    m_rows.clear();
    endRemoveRows();
}

int TimelineModel::rowOfCall(quint64 id) const
{
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        if (m_rows.at(i).kind == TimelineRow::Kind::Call && m_rows.at(i).callId == id)
            return i;
    }
    return -1;
}

int TimelineModel::rowOfCheckpoint(const QString &name) const
{
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        const TimelineRow &r = m_rows.at(i);
        if ((r.kind == TimelineRow::Kind::Checkpoint || r.kind == TimelineRow::Kind::Now) &&
            r.name == name)
            return i;
    }
    return -1;
}

QStringList TimelineModel::checkpointNames() const
{
    QStringList names;
    for (const TimelineRow &r : m_rows) {
        if (r.kind == TimelineRow::Kind::Checkpoint)
            names.append(r.name);
    }
    return names;
}

QString TimelineModel::countsText(qint64 added, qint64 modified, qint64 deleted)
{
    return QStringLiteral("+%1 ~%2 −%3").arg(added).arg(modified).arg(deleted);
}

int TimelineModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TimelineModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const TimelineRow &r = m_rows.at(index.row());
    using K = TimelineRow::Kind;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn:
            return r.kind == K::Now ? tr("now") : clock(r.timeMs);
        case AgentColumn:
            if (r.kind == K::Call)
                return r.actor;
            if (r.kind == K::Restore)
                return tr("restore");
            return r.kind == K::Checkpoint
                       ? (r.automatic ? tr("auto checkpoint") : tr("checkpoint"))
                       : QString();
        case CallColumn:
            if (r.kind == K::Call)
                return r.tool;
            if (r.kind == K::Restore)
                return QStringLiteral("↺ ") + r.name;
            return r.kind == K::Checkpoint ? QStringLiteral("◆ ") + r.name
                                           : tr("the workspace now");
        case OutcomeColumn:
            if (r.kind == K::Restore)
                return tr("the workspace became %1").arg(r.name);
            return r.kind == K::Call ? r.outcome : r.note;
        case ChangesColumn:
            if (r.kind == K::Call) {
                const QString counts = countsText(r.added, r.modified, r.deleted);
                return r.shared ? tr("%1 shared").arg(counts) : counts;
            }
            if (r.kind == K::Checkpoint && r.files >= 0)
                return tr("%n file(s), %1", nullptr, int(qMin<qint64>(r.files, INT_MAX)))
                    .arg(sizeText(r.bytes));
            return {};
        }
        return {};
    case Qt::ToolTipRole:
        if (r.kind == K::Call) {
            QString tip = tr("Call %1: %2 by %3, %4–%5 (%6)")
                              .arg(r.callId)
                              .arg(r.tool, r.actor, clock(r.startedMs), clock(r.timeMs),
                                   r.outcome.isEmpty() ? tr("outcome unknown") : r.outcome);
            tip +=
                QLatin1Char('\n') +
                tr("%1 added, %2 modified, %3 deleted").arg(r.added).arg(r.modified).arg(r.deleted);
            if (r.shared)
                tip += QLatin1Char('\n') + tr("Shared: another call was running when these "
                                              "changes happened; they are its changes too.");
            if (r.tool == QLatin1String("process_start"))
                tip += QLatin1Char('\n') +
                       tr("A background process: what it changes after this call returned is "
                          "no call's (or the calls' running then), and a replay of a recording "
                          "reports it as a divergence.");
            if (!r.paths.isEmpty())
                tip += QLatin1Char('\n') + r.paths.join(QLatin1Char('\n'));
            return tip;
        }
        if (r.kind == K::Checkpoint)
            return tr("Checkpoint %1 (%2), %3%4")
                .arg(r.name, r.automatic ? tr("automatic") : tr("named"),
                     QDateTime::fromMSecsSinceEpoch(r.timeMs).toString(Qt::ISODate),
                     r.note.isEmpty() ? QString() : QStringLiteral("\n") + r.note);
        if (r.kind == K::Restore)
            return tr("Restored to checkpoint %1: the calls after this start from it").arg(r.name);
        return tr("The workspace as it is now");
    case Qt::AccessibleTextRole:
        if (r.kind == K::Call)
            return tr("call %1 by %2 at %3, %4, %5 added %6 modified %7 deleted")
                .arg(r.tool, r.actor, clock(r.timeMs), r.outcome)
                .arg(r.added)
                .arg(r.modified)
                .arg(r.deleted);
        if (r.kind == K::Checkpoint)
            return tr("checkpoint %1 at %2").arg(r.name, clock(r.timeMs));
        if (r.kind == K::Restore)
            return tr("restored to %1 at %2").arg(r.name, clock(r.timeMs));
        return tr("the workspace now");
    case Roles::TimelineKindRole:
        return int(r.kind);
    case Roles::CallIdRole:
        return r.kind == K::Call ? QVariant(r.callId) : QVariant();
    case Roles::CheckpointNameRole:
        return r.kind == K::Checkpoint || r.kind == K::Now ? QVariant(r.name) : QVariant();
    case Roles::AutomaticRole:
        return r.automatic;
    case Roles::AddedRole:
        return r.added;
    case Roles::ModifiedRole:
        return r.modified;
    case Roles::DeletedRole:
        return r.deleted;
    case Roles::SharedRole:
        return r.shared;
    case Roles::ActorRole:
        return r.actor;
    case Roles::OutcomeRole:
        return r.outcome;
    case Roles::TimestampRole:
        return r.kind == K::Now ? QVariant() : QVariant(QDateTime::fromMSecsSinceEpoch(r.timeMs));
    case Roles::SizeRole:
        return r.kind == K::Checkpoint && r.bytes >= 0 ? QVariant(r.bytes) : QVariant();
    }
    return {};
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case AgentColumn:
        return tr("Agent");
    case CallColumn:
        return tr("Call");
    case OutcomeColumn:
        return tr("Outcome");
    case ChangesColumn:
        return tr("Changes");
    }
    return {};
}

QHash<int, QByteArray> TimelineModel::roleNames() const
{
    QHash<int, QByteArray> names = MergingTableModel::roleNames();
    names.insert(Roles::TimelineKindRole, "kind");
    names.insert(Roles::CallIdRole, "callId");
    names.insert(Roles::CheckpointNameRole, "checkpoint");
    names.insert(Roles::AutomaticRole, "automatic");
    names.insert(Roles::AddedRole, "added");
    names.insert(Roles::ModifiedRole, "modified");
    names.insert(Roles::DeletedRole, "deleted");
    names.insert(Roles::SharedRole, "shared");
    names.insert(Roles::ActorRole, "actor");
    names.insert(Roles::OutcomeRole, "outcome");
    names.insert(Roles::TimestampRole, "timestamp");
    names.insert(Roles::SizeRole, "size");
    return names;
}

FileDiff timelineDiffText(const CheckpointDiff &diff, const QString &title)
{
    FileDiff out;
    out.note = title + QLatin1Char('\n') +
               TimelineModel::tr("%1 added · %2 modified · %3 deleted")
                   .arg(diff.added)
                   .arg(diff.modified)
                   .arg(diff.deleted);
    if (diff.truncated)
        out.note += QLatin1Char('\n') + TimelineModel::tr("(only the first %n path(s) are shown)",
                                                          nullptr, int(diff.entries.size()));
    if (diff.entries.isEmpty()) {
        out.kind = FileDiff::Kind::Identical;
        return out;
    }
    bool text = false;
    QStringList parts;
    for (const CheckpointDiffEntry &e : diff.entries) {
        QStringList facts{e.type};
        if (e.sizeFrom && e.sizeTo && *e.sizeFrom != *e.sizeTo)
            facts.append(QStringLiteral("%1 → %2").arg(sizeText(*e.sizeFrom), sizeText(*e.sizeTo)));
        else if (e.sizeTo || e.sizeFrom)
            facts.append(sizeText(e.sizeTo.value_or(e.sizeFrom.value_or(0))));
        if (e.modeFrom && e.modeTo)
            facts.append(TimelineModel::tr("mode %1 → %2")
                             .arg(QString::number(*e.modeFrom, 8), QString::number(*e.modeTo, 8)));
        if (e.linkTo)
            facts.append(TimelineModel::tr("link to %1").arg(*e.linkTo));
        else if (e.linkFrom)
            facts.append(TimelineModel::tr("was a link to %1").arg(*e.linkFrom));
        if (e.binary)
            facts.append(TimelineModel::tr("binary"));
        if (e.diffOmitted)
            facts.append(TimelineModel::tr("content not compared (too large, not kept, or unknown "
                                           "before)"));
        // A prose line (not ' ', '+', '-', '@', '\\'): the view shows it as a note.
        QString part = QStringLiteral("%1 %2 (%3)").arg(e.change, e.path, facts.join(u", "));
        if (!e.diff.isEmpty()) {
            text = true;
            part += QLatin1Char('\n') + e.diff;
            if (part.endsWith(QLatin1Char('\n')))
                part.chop(1);
        }
        parts.append(part);
    }
    out.kind = text ? FileDiff::Kind::Text : FileDiff::Kind::Summary;
    out.body = parts.join(QLatin1Char('\n')) + QLatin1Char('\n');
    return out;
}

} // namespace elsai
