#include "sessionsmodel.h"

#include "modelroles.h"

#include <QSet>

#include <cmath>

namespace elsai {

QString toString(SessionState state)
{
    switch (state) {
    case SessionState::Stopped:
        return QStringLiteral("stopped");
    case SessionState::Starting:
        return QStringLiteral("starting");
    case SessionState::Running:
        return QStringLiteral("running");
    case SessionState::Stopping:
        return QStringLiteral("stopping");
    case SessionState::Expired:
        return QStringLiteral("expired");
    case SessionState::Failed:
        return QStringLiteral("failed");
    }
    return {};
}

std::optional<double> SessionRow::ttlRemaining() const
{
    if (state != SessionState::Running || !ttlSeconds)
        return std::nullopt;
    return qMax(0.0, *ttlSeconds - idleSeconds);
}

QString formatDuration(std::optional<double> seconds)
{
    if (!seconds || !std::isfinite(*seconds))
        return QStringLiteral("—");
    const qint64 total = qMax<qint64>(0, qint64(*seconds));
    const auto two = [](qint64 n) { return QStringLiteral("%1").arg(n, 2, 10, QLatin1Char('0')); };
    if (total >= 3600)
        return QStringLiteral("%1h %2m").arg(total / 3600).arg(two(total % 3600 / 60));
    if (total >= 60)
        return QStringLiteral("%1m %2s").arg(total / 60).arg(two(total % 60));
    return QStringLiteral("%1s").arg(total);
}

SessionsModel::SessionsModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void SessionsModel::setSessions(const QList<SessionRow> &rows)
{
    QList<SessionRow> next;
    QSet<QString> nextKeys;
    for (const SessionRow &row : rows) {
        if (!nextKeys.contains(row.workspaceId)) { // first of a duplicated id wins
            nextKeys.insert(row.workspaceId);
            next.append(row);
        }
    }

    // Gone rows, as contiguous ranges from the back so earlier rows keep their numbers.
    for (int last = int(m_rows.size()) - 1; last >= 0; --last) {
        if (nextKeys.contains(m_rows.at(last).workspaceId))
            continue;
        int first = last;
        while (first > 0 && !nextKeys.contains(m_rows.at(first - 1).workspaceId))
            --first;
        beginRemoveRows({}, first, last);
        m_rows.remove(first, last - first + 1);
        endRemoveRows();
        last = first;
    }

    // Walk the new order: update in place, move a known row up, or insert a run of new rows.
    QSet<QString> known;
    for (const SessionRow &row : std::as_const(m_rows))
        known.insert(row.workspaceId);
    for (int i = 0; i < next.size();) {
        const QString &key = next.at(i).workspaceId;
        if (i < m_rows.size() && m_rows.at(i).workspaceId == key) {
            if (m_rows.at(i) != next.at(i)) {
                m_rows[i] = next.at(i);
                Q_EMIT dataChanged(index(i, 0), index(i, ColumnCount - 1));
            }
            ++i;
        } else if (known.contains(key)) {
            int from = i + 1;
            while (m_rows.at(from).workspaceId != key)
                ++from;
            beginMoveRows({}, from, from, {}, i);
            m_rows.move(from, i);
            endMoveRows(); // the next pass updates its data
        } else {
            int end = i + 1;
            while (end < next.size() && !known.contains(next.at(end).workspaceId))
                ++end;
            beginInsertRows({}, i, end - 1);
            for (int j = i; j < end; ++j)
                m_rows.insert(j, next.at(j));
            endInsertRows();
            i = end;
        }
    }
}

int SessionsModel::rowOf(const QString &workspaceId) const
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).workspaceId == workspaceId)
            return row;
    }
    return -1;
}

int SessionsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SessionsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SessionsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const SessionRow &s = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case WorkspaceColumn:
            return s.workspaceId;
        case BackendColumn:
            return s.backend;
        case StateColumn:
            return toString(s.state);
        case OwnerColumn:
            return s.ownerId;
        case StartedColumn:
            return s.startedAt.isValid()
                       ? s.startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd hh:mm:ss"))
                       : QString();
        case IdleColumn:
            return formatDuration(s.idleSeconds);
        case TtlColumn:
            return formatDuration(s.ttlRemaining());
        }
        return {};
    case Qt::ToolTipRole:
        switch (index.column()) {
        case WorkspaceColumn:
            return s.workspaceRoot.isEmpty() ? QVariant() : QVariant(s.workspaceRoot);
        case StateColumn:
            return s.message.isEmpty() ? QVariant() : QVariant(s.message);
        }
        return {};
    case Roles::WorkspaceIdRole:
        return s.workspaceId;
    case Roles::SessionStateRole:
        return int(s.state);
    case Roles::TtlRemainingRole:
        if (const auto left = s.ttlRemaining())
            return *left;
        return {};
    }
    return {};
}

QVariant SessionsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case WorkspaceColumn:
        return tr("Workspace");
    case BackendColumn:
        return tr("Backend");
    case StateColumn:
        return tr("State");
    case OwnerColumn:
        return tr("Owner");
    case StartedColumn:
        return tr("Started");
    case IdleColumn:
        return tr("Idle");
    case TtlColumn:
        return tr("TTL left");
    }
    return {};
}

} // namespace elsai
