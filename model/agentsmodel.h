// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "mergingtablemodel.h"

#include <QDateTime>
#include <QList>
#include <QStringList>

namespace elsai {

/// One recent tool call shown in the agents panel.
struct AgentCall
{
    QDateTime at;
    QString tool;
    QString outcome; ///< "ok", "denied", "error" (+ error type)
    bool operator==(const AgentCall &) const = default;
};

/// A snapshot of one attached agent, built off the GUI thread by the controller.
struct AgentRow
{
    QString workspaceId;
    QString name;
    QString mode; ///< "read_write" / "read_only"
    QDateTime attachedAt;
    int toolCalls = 0;
    QString lastTool;
    QString lastOutcome;
    QStringList tools;
    QList<AgentCall> recentCalls; ///< newest last, bounded by the controller
    bool operator==(const AgentRow &) const = default;
};

/// Attached agents of every sandbox. Columns: Agent, Workspace, Mode, Attached, Calls,
/// Last tool, Last outcome. setAgents() merges row by row (keyed by workspace + name): changed
/// rows emit dataChanged, new rows are inserted, gone rows removed — never a reset, so the
/// selection survives refreshes. GUI thread only.
class AgentsModel : public MergingTableModel<AgentRow, std::pair<QString, QString>>
{
    Q_OBJECT

public:
    enum Column {
        NameColumn,
        WorkspaceColumn,
        ModeColumn,
        AttachedColumn,
        CallsColumn,
        LastToolColumn,
        LastOutcomeColumn,
        ColumnCount
    };

    explicit AgentsModel(QObject *parent = nullptr);

    void setAgents(const QList<AgentRow> &rows);
    const AgentRow &agent(int row) const { return m_rows.at(row); }
    int rowOf(const QString &workspaceId, const QString &name) const;

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

protected:
    std::pair<QString, QString> keyOf(const AgentRow &row) const override
    {
        return {row.workspaceId, row.name};
    }
};

} // namespace elsai
