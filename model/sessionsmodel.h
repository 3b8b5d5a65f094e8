// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "mergingtablemodel.h"

#include <QDateTime>
#include <QList>
#include <optional>

namespace elsai {

enum class SessionState { Stopped, Starting, Running, Stopping, Expired, Failed };
QString toString(SessionState state);

/// A snapshot of one sandbox, built by the controller.
struct SessionRow
{
    QString workspaceId;
    QString backend;       ///< backend type name
    QString workspaceRoot; ///< host folder, when local
    SessionState state = SessionState::Stopped;
    QString ownerId;
    QDateTime startedAt;
    double idleSeconds = 0;
    std::optional<double> ttlSeconds;
    QString message; ///< why it stopped / failed ("expired after 7200 s idle", an error)
    bool operator==(const SessionRow &) const = default;
    /// Seconds until expiry, or none without a TTL or when not running.
    std::optional<double> ttlRemaining() const;
};

/// Every sandbox the controller knows. Columns: Workspace, Backend, State, Owner, Started,
/// Idle, TTL left. setSessions() merges by workspace id (dataChanged / insert / remove; never
/// a reset). GUI thread only.
class SessionsModel : public MergingTableModel<SessionRow, QString>
{
    Q_OBJECT

public:
    enum Column {
        WorkspaceColumn,
        BackendColumn,
        StateColumn,
        OwnerColumn,
        StartedColumn,
        IdleColumn,
        TtlColumn,
        ColumnCount
    };

    explicit SessionsModel(QObject *parent = nullptr);

    void setSessions(const QList<SessionRow> &rows);
    const SessionRow &session(int row) const { return m_rows.at(row); }
    int rowOf(const QString &workspaceId) const;
    /// The backend as --backend names it ("local", "ssh", …) from its class name.
    static QString backendShortName(const QString &typeName);

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

protected:
    QString keyOf(const SessionRow &row) const override { return row.workspaceId; }
};

/// "1h 02m", "45s", "—" for display of durations.
QString formatDuration(std::optional<double> seconds);

} // namespace elsai
