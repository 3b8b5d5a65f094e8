#include "agentsmodel.h"

#include "modelroles.h"

#include <QSet>

namespace elsai {

namespace {

using AgentKey = std::pair<QString, QString>;

AgentKey keyOf(const AgentRow &row)
{
    return {row.workspaceId, row.name};
}

QString timeText(const QDateTime &t)
{
    return t.isValid() ? t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd hh:mm:ss"))
                       : QString();
}

QString modeText(const QString &mode)
{
    if (mode == QLatin1String("read_write"))
        return AgentsModel::tr("read-write");
    if (mode == QLatin1String("read_only"))
        return AgentsModel::tr("read-only");
    return mode;
}

QString recentCallsText(const AgentRow &row)
{
    QStringList lines;
    for (const AgentCall &call : row.recentCalls) {
        lines.append(QStringLiteral("%1  %2  %3")
                         .arg(call.at.toLocalTime().toString(QStringLiteral("hh:mm:ss")),
                              call.tool, call.outcome));
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace

AgentsModel::AgentsModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void AgentsModel::setAgents(const QList<AgentRow> &rows)
{
    QList<AgentRow> next;
    QSet<AgentKey> nextKeys;
    for (const AgentRow &row : rows) {
        if (!nextKeys.contains(keyOf(row))) { // first of a duplicated key wins
            nextKeys.insert(keyOf(row));
            next.append(row);
        }
    }

    // Gone rows, as contiguous ranges from the back so earlier rows keep their numbers.
    for (int last = int(m_rows.size()) - 1; last >= 0; --last) {
        if (nextKeys.contains(keyOf(m_rows.at(last))))
            continue;
        int first = last;
        while (first > 0 && !nextKeys.contains(keyOf(m_rows.at(first - 1))))
            --first;
        beginRemoveRows({}, first, last);
        m_rows.remove(first, last - first + 1);
        endRemoveRows();
        last = first;
    }

    // Walk the new order: update in place, move a known row up, or insert a run of new rows.
    QSet<AgentKey> known;
    for (const AgentRow &row : std::as_const(m_rows))
        known.insert(keyOf(row));
    for (int i = 0; i < next.size();) {
        const AgentKey key = keyOf(next.at(i));
        if (i < m_rows.size() && keyOf(m_rows.at(i)) == key) {
            if (m_rows.at(i) != next.at(i)) {
                m_rows[i] = next.at(i);
                Q_EMIT dataChanged(index(i, 0), index(i, ColumnCount - 1));
            }
            ++i;
        } else if (known.contains(key)) {
            int from = i + 1;
            while (keyOf(m_rows.at(from)) != key)
                ++from;
            beginMoveRows({}, from, from, {}, i);
            m_rows.move(from, i);
            endMoveRows(); // the next pass updates its data
        } else {
            int end = i + 1;
            while (end < next.size() && !known.contains(keyOf(next.at(end))))
                ++end;
            beginInsertRows({}, i, end - 1);
            for (int j = i; j < end; ++j)
                m_rows.insert(j, next.at(j));
            endInsertRows();
            i = end;
        }
    }
}

int AgentsModel::rowOf(const QString &workspaceId, const QString &name) const
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).workspaceId == workspaceId && m_rows.at(row).name == name)
            return row;
    }
    return -1;
}

int AgentsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int AgentsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AgentsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const AgentRow &a = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return a.name;
        case WorkspaceColumn:
            return a.workspaceId;
        case ModeColumn:
            return modeText(a.mode);
        case AttachedColumn:
            return timeText(a.attachedAt);
        case CallsColumn:
            return a.toolCalls;
        case LastToolColumn:
            return a.lastTool;
        case LastOutcomeColumn:
            return a.lastOutcome;
        }
        return {};
    case Qt::ToolTipRole:
        switch (index.column()) {
        case NameColumn:
            return a.tools.isEmpty() ? QVariant()
                                     : tr("Tools: %1").arg(a.tools.join(QStringLiteral(", ")));
        case LastToolColumn:
        case LastOutcomeColumn:
            return a.recentCalls.isEmpty() ? QVariant() : QVariant(recentCallsText(a));
        }
        return {};
    case Roles::WorkspaceIdRole:
        return a.workspaceId;
    case Roles::AgentNameRole:
        return a.name;
    case Roles::AttachModeRole:
        return a.mode;
    case Roles::ToolCallsRole:
        return a.toolCalls;
    }
    return {};
}

QVariant AgentsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Agent");
    case WorkspaceColumn:
        return tr("Workspace");
    case ModeColumn:
        return tr("Mode");
    case AttachedColumn:
        return tr("Attached");
    case CallsColumn:
        return tr("Calls");
    case LastToolColumn:
        return tr("Last tool");
    case LastOutcomeColumn:
        return tr("Last outcome");
    }
    return {};
}

} // namespace elsai
