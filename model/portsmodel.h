// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "sandboxports.h"

#include <QAbstractTableModel>
#include <QFutureWatcher>
#include <QThreadPool>
#include <QTimer>

namespace elsai {

class SandboxController;

/// The TCP ports listening in one sandbox (listSandboxPorts()), read off the GUI thread every
/// few seconds while `active`; a failure keeps the last rows and is reported by failed().
class PortsModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column { Port, Address, Process, Reach, ColumnCount };

    explicit PortsModel(SandboxController *controller, QObject *parent = nullptr);
    ~PortsModel() override;

    void setWorkspace(const QString &workspaceId);
    QString workspace() const { return m_workspace; }
    /// Polls while true (a visible panel); refresh() reads once.
    void setActive(bool active);
    void setInterval(int ms) { m_timer.setInterval(ms); }
    void refresh();
    bool isRefreshing() const { return m_watcher.isRunning(); }

    SandboxPort port(int row) const { return m_rows.value(row); }
    static QString reachName(SandboxPort::Reach reach);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    void refreshed();
    void failed(const QString &message);

private:
    void apply(const QList<SandboxPort> &ports);

    SandboxController *m_controller;
    QString m_workspace;
    QList<SandboxPort> m_rows;
    QThreadPool m_pool; ///< one thread: a slow remote listing never piles up
    QFutureWatcher<std::pair<QList<SandboxPort>, QString>> m_watcher; ///< ports, or why not
    QString m_pendingFor; ///< the workspace the running listing is for
    QTimer m_timer;
};

} // namespace elsai
