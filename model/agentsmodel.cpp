// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentsmodel.h"

#include "modelroles.h"

namespace elsai {

namespace {

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
                         .arg(call.at.toLocalTime().toString(QStringLiteral("hh:mm:ss")), call.tool,
                              call.outcome));
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace

AgentsModel::AgentsModel(QObject *parent) : MergingTableModel(parent) {}

void AgentsModel::setAgents(const QList<AgentRow> &rows)
{
    mergeRows(rows);
}

int AgentsModel::rowOf(const QString &workspaceId, const QString &name) const
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).workspaceId == workspaceId && m_rows.at(row).name == name)
            return row;
    }
    return -1;
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
