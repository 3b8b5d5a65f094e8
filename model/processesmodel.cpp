// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "processesmodel.h"

#include "modelroles.h"

#include <QDateTime>

#include <algorithm>

namespace elsai {

ProcessesModel::ProcessesModel(QObject *parent) : QAbstractTableModel(parent)
{
    m_timer.setInterval(1000);
    connect(&m_timer, &QTimer::timeout, this, &ProcessesModel::refresh);
    m_timer.start();
}

void ProcessesModel::setWorkspace(const QString &workspaceId)
{
    if (workspaceId == m_workspace)
        return;
    m_workspace = workspaceId;
    m_generation = ~quint64(0);
    refresh();
}

void ProcessesModel::refresh()
{
    const quint64 generation = ProcessRegistry::instance().generation();
    if (generation == m_generation) {
        // Only the durations moved.
        if (!m_rows.isEmpty())
            Q_EMIT dataChanged(index(0, Duration), index(int(m_rows.size()) - 1, Duration),
                               {Qt::DisplayRole});
        return;
    }
    m_generation = generation;
    const QList<ProcessEntry> fresh = m_workspace.isEmpty()
                                          ? QList<ProcessEntry>()
                                          : ProcessRegistry::instance().list(m_workspace);
    // Rows keep their place by id: removals first, then updates, then additions at the end
    // (the registry lists oldest first, and ids only grow).
    for (int row = int(m_rows.size()) - 1; row >= 0; --row) {
        const quint64 id = m_rows[row].id;
        if (std::none_of(fresh.begin(), fresh.end(),
                         [id](const ProcessEntry &e) { return e.id == id; })) {
            beginRemoveRows({}, row, row);
            m_rows.removeAt(row);
            endRemoveRows();
        }
    }
    for (const ProcessEntry &e : fresh) {
        const int row = rowOf(e.id);
        if (row >= 0) {
            m_rows[row] = e;
            Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
        } else {
            beginInsertRows({}, int(m_rows.size()), int(m_rows.size()));
            m_rows.append(e);
            endInsertRows();
        }
    }
}

quint64 ProcessesModel::processId(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[row].id : 0;
}

int ProcessesModel::rowOf(quint64 id) const
{
    for (int i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].id == id)
            return i;
    }
    return -1;
}

int ProcessesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ProcessesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString ProcessesModel::formatDuration(qint64 ms)
{
    const qint64 s = std::max<qint64>(0, ms / 1000);
    if (s >= 3600)
        return tr("%1 h %2 min").arg(s / 3600).arg((s / 60) % 60, 2, 10, QLatin1Char('0'));
    if (s >= 60)
        return tr("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return tr("%1 s").arg(s);
}

QVariant ProcessesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ProcessEntry &e = m_rows[index.row()];
    // A terminal with a program in the foreground: the shell and that program.
    const QString command =
        e.foreground.isEmpty() ? e.label : tr("%1: %2").arg(e.label, e.foreground);
    switch (role) {
    case Roles::ProcessIdRole:
        return e.id;
    case Roles::ProcessKindRole:
        return ProcessEntry::kindName(e.kind);
    case Roles::CommandRole:
        return command;
    case Roles::TimestampRole:
        return e.startedAt;
    case Roles::DurationRole:
        return e.startedAt.msecsTo(QDateTime::currentDateTimeUtc());
    case Roles::RunningRole:
        return !e.stopping;
    case Qt::ToolTipRole:
        if (index.column() == What)
            return command;
        break;
    case Qt::DisplayRole:
        switch (index.column()) {
        case Kind:
            return e.stopping ? tr("%1 (stopping)").arg(ProcessEntry::kindName(e.kind))
                              : ProcessEntry::kindName(e.kind);
        case What: {
            const QString first = command.section(QLatin1Char('\n'), 0, 0);
            return first.size() > 200 || command.contains(QLatin1Char('\n'))
                       ? first.left(200) + QChar(0x2026)
                       : first;
        }
        case Actor:
            return e.actor;
        case Started:
            return e.startedAt.toLocalTime().toString(QStringLiteral("HH:mm:ss"));
        case Duration:
            return formatDuration(e.startedAt.msecsTo(QDateTime::currentDateTimeUtc()));
        case Cwd:
            return e.cwd.isEmpty() ? QStringLiteral(".") : e.cwd;
        default:
            break;
        }
        break;
    default:
        break;
    }
    return {};
}

QVariant ProcessesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Kind:
        return tr("Kind");
    case What:
        return tr("Command");
    case Actor:
        return tr("Agent");
    case Started:
        return tr("Started");
    case Duration:
        return tr("Duration");
    case Cwd:
        return tr("Folder");
    default:
        return {};
    }
}

} // namespace elsai
