// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "mergingtablemodel.h"
#include "workspacechanges.h"

#include <QPointer>
#include <QTimer>

namespace elsai {

class SandboxController;

/// The files added, modified and deleted in one sandbox since its seed (workspacechanges.h
/// says what "since the seed" is for each backend), sorted by path.
///
/// Live: every mutation the controller reports (SandboxController::workspaceChanged — the
/// audit stream: tool calls, the window's edits, commands when they end, flushes) schedules
/// a scan, and so does a timer while a console command runs. Scans run on the controller's
/// bulk pool (below the GUI thread's priority), one at a time; mutations that arrive meanwhile are
/// coalesced into one more scan after it (and into one per scanDelayMs()). Each result is merged
/// row by row (MergingTableModel): never a reset, selections survive. GUI thread only.
///
/// Columns: Path, Change (added / modified / deleted), Size ("1 KB → 2 KB" when modified).
class ChangesModel : public MergingTableModel<WorkspaceChange, QString>
{
    Q_OBJECT

public:
    enum Column { PathColumn, ChangeColumn, SizeColumn, ColumnCount };

    explicit ChangesModel(SandboxController *controller, QObject *parent = nullptr);
    ~ChangesModel() override;

    /// Follows another sandbox (empty: none): its rows are removed, then it is scanned.
    void setWorkspace(const QString &workspaceId);
    QString workspaceId() const { return m_workspaceId; }
    /// While inactive (the panel is hidden) nothing is scanned; turning it on scans once.
    void setActive(bool active);
    bool isActive() const { return m_active; }
    /// Scans soon (after scanDelayMs(), coalesced).
    void refresh();
    /// Mutations within this many ms make one scan: 150 for a local workspace, 2000 for a
    /// remote one (each folder is one round trip there).
    int scanDelayMs() const;
    bool isScanning() const { return m_scanning; }

    const WorkspaceChange &change(int row) const { return m_rows.at(row); }
    int rowOf(const QString &path) const;
    int count(WorkspaceChange::Kind kind) const;
    /// Of the last scan.
    ChangeBase base() const { return m_scan.base; }
    QString baseRoot() const { return m_scan.baseRoot; }
    bool isTruncated() const { return m_scan.truncated; }
    QStringList errors() const { return m_scan.errors; }
    /// Why there is no list now (not running, failed scan); empty when there is one.
    QString problem() const { return m_problem; }
    /// Scans finished (merged or failed) since construction.
    int scanCount() const { return m_scanCount; }

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    static QString kindName(WorkspaceChange::Kind kind);

Q_SIGNALS:
    /// A scan finished and its result is in the rows (or problem() says why not).
    void scanned();

protected:
    QString keyOf(const WorkspaceChange &row) const override { return row.path; }

private:
    void startScan();
    void clearRows();
    QPointer<SandboxController> m_controller;
    QString m_workspaceId;
    bool m_active = true;
    bool m_scanning = false;
    bool m_dirty = false;
    quint64 m_serial = 0; ///< bumped by setWorkspace(): stale results are dropped
    QTimer m_delay;
    QTimer m_commandPoll;
    ChangeScan m_scan;
    QString m_problem;
    int m_scanCount = 0;
};

} // namespace elsai
