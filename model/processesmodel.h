// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "processregistry.h"

#include <QAbstractTableModel>
#include <QList>
#include <QTimer>

namespace elsai {

/// What runs in one sandbox (the ProcessRegistry: terminals, the agents' commands, background
/// processes), one row each, refreshed once a second (the durations tick).
class ProcessesModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column { Kind, What, Actor, Started, Duration, Cwd, ColumnCount };

    explicit ProcessesModel(QObject *parent = nullptr);

    void setWorkspace(const QString &workspaceId);
    QString workspace() const { return m_workspace; }
    /// Re-reads the registry now (the timer does it every `intervalMs`).
    void refresh();
    void setInterval(int intervalMs) { m_timer.setInterval(intervalMs); }

    quint64 processId(int row) const;
    int rowOf(quint64 id) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    /// "1 h 02 min", "3 min 05 s", "12 s".
    static QString formatDuration(qint64 ms);

private:
    QString m_workspace;
    QList<ProcessEntry> m_rows;
    quint64 m_generation = ~quint64(0);
    QTimer m_timer;
};

} // namespace elsai
