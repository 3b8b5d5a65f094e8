// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "portsmodel.h"

#include "errors.h"
#include "modelroles.h"
#include "sandboxcontroller.h"

#include <QtConcurrent>

namespace elsai {

PortsModel::PortsModel(SandboxController *controller, QObject *parent)
    : QAbstractTableModel(parent), m_controller(controller)
{
    m_pool.setMaxThreadCount(1);
    m_timer.setInterval(3000);
    connect(&m_timer, &QTimer::timeout, this, &PortsModel::refresh);
    connect(&m_watcher, &QFutureWatcherBase::finished, this, [this] {
        if (m_pendingFor != m_workspace) {
            refresh(); // switched meanwhile
            return;
        }
        const auto [ports, error] = m_watcher.result();
        if (!error.isEmpty()) {
            Q_EMIT failed(error);
            return;
        }
        apply(ports);
        Q_EMIT refreshed();
    });
}

PortsModel::~PortsModel()
{
    m_timer.stop();
    m_watcher.waitForFinished();
    m_pool.waitForDone();
}

void PortsModel::setWorkspace(const QString &workspaceId)
{
    if (workspaceId == m_workspace)
        return;
    m_workspace = workspaceId;
    apply({});
    refresh();
}

void PortsModel::setActive(bool active)
{
    if (active) {
        refresh();
        m_timer.start();
    } else {
        m_timer.stop();
    }
}

void PortsModel::refresh()
{
    if (m_watcher.isRunning())
        return; // its answer triggers another read when the workspace changed
    const SandboxPtr sandbox = m_workspace.isEmpty() ? nullptr : m_controller->sandbox(m_workspace);
    const BackendPtr backend = sandbox ? sandbox->backend() : nullptr;
    if (!backend) {
        apply({});
        return;
    }
    m_pendingFor = m_workspace;
    m_watcher.setFuture(QtConcurrent::run(&m_pool, [backend, id = m_workspace] {
        try {
            return std::make_pair(listSandboxPorts(backend, id), QString());
        } catch (const SandboxError &e) {
            return std::make_pair(QList<SandboxPort>(), e.message());
        }
    }));
}

void PortsModel::apply(const QList<SandboxPort> &ports)
{
    if (ports == m_rows)
        return;
    beginResetModel();
    m_rows = ports;
    endResetModel();
}

QString PortsModel::reachName(SandboxPort::Reach reach)
{
    switch (reach) {
    case SandboxPort::Reach::Direct:
        return tr("this host");
    case SandboxPort::Reach::NamespaceProxy:
        return tr("loopback proxy into the sandbox");
    case SandboxPort::Reach::SshForward:
        return tr("ssh -L through the master");
    case SandboxPort::Reach::Preview:
        return tr("Daytona preview URL");
    }
    return {};
}

int PortsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int PortsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PortsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const SandboxPort &p = m_rows[index.row()];
    if (role == Roles::PortRole)
        return p.port;
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Port:
        return p.port;
    case Address:
        return p.address.isEmpty() ? QStringLiteral("–") : p.address;
    case Process:
        return p.process.isEmpty() ? QString()
               : p.pid > 0         ? QStringLiteral("%1 (%2)").arg(p.process).arg(p.pid)
                                   : p.process;
    case Reach:
        return reachName(p.reach);
    default:
        return {};
    }
}

QVariant PortsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Port:
        return tr("Port");
    case Address:
        return tr("Address");
    case Process:
        return tr("Program");
    case Reach:
        return tr("Opened through");
    default:
        return {};
    }
}

} // namespace elsai
