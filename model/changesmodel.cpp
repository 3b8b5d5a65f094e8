// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "changesmodel.h"

#include "displaytext.h"
#include "errors.h"
#include "modelroles.h"
#include "sandboxcontroller.h"
#include "threadpriority.h"

#include <QFutureWatcher>
#include <QtConcurrent>

namespace elsai {

namespace {

constexpr int kCommandPollMs = 3000;

} // namespace

ChangesModel::ChangesModel(SandboxController *controller, QObject *parent)
    : MergingTableModel(parent), m_controller(controller)
{
    m_delay.setSingleShot(true);
    connect(&m_delay, &QTimer::timeout, this, &ChangesModel::startScan);
    m_commandPoll.setInterval(kCommandPollMs);
    connect(&m_commandPoll, &QTimer::timeout, this, [this] {
        // Commands change files without an event until they end.
        if (m_controller && m_controller->runningCommandCount(m_workspaceId) > 0)
            refresh();
    });
    connect(controller, &SandboxController::workspaceChanged, this, [this](const QString &id) {
        if (id == m_workspaceId)
            refresh();
    });
    connect(controller, &SandboxController::sandboxStarted, this, [this](const QString &id) {
        if (id == m_workspaceId)
            refresh();
    });
    connect(controller, &SandboxController::sandboxStopped, this, [this](const QString &id) {
        if (id == m_workspaceId)
            refresh(); // says it is not running; the last list stays
    });
    connect(controller, &SandboxController::sandboxRemoved, this, [this](const QString &id) {
        if (id == m_workspaceId)
            setWorkspace(QString());
    });
}

ChangesModel::~ChangesModel() = default;

void ChangesModel::setWorkspace(const QString &workspaceId)
{
    if (workspaceId == m_workspaceId)
        return;
    m_workspaceId = workspaceId;
    ++m_serial;
    m_dirty = false;
    m_scan = ChangeScan();
    m_problem.clear();
    clearRows();
    if (!workspaceId.isEmpty())
        refresh();
}

void ChangesModel::setActive(bool active)
{
    if (active == m_active)
        return;
    m_active = active;
    if (active) {
        m_commandPoll.start();
        refresh();
    } else {
        m_commandPoll.stop();
        m_delay.stop();
    }
}

int ChangesModel::scanDelayMs() const
{
    const SandboxPtr sandbox = m_controller ? m_controller->sandbox(m_workspaceId) : nullptr;
    const BackendPtr backend = sandbox ? sandbox->backend() : nullptr;
    return backend && backend->hostFolder().isEmpty() ? 2000 : 150;
}

void ChangesModel::refresh()
{
    if (!m_active || m_workspaceId.isEmpty())
        return;
    if (!m_commandPoll.isActive())
        m_commandPoll.start();
    if (m_scanning) {
        m_dirty = true; // one more scan once this one is in
        return;
    }
    if (!m_delay.isActive())
        m_delay.start(scanDelayMs());
}

void ChangesModel::startScan()
{
    if (!m_controller || m_workspaceId.isEmpty() || m_scanning)
        return;
    const SandboxPtr sandbox = m_controller->sandbox(m_workspaceId);
    if (!sandbox || !sandbox->isStarted() || m_controller->isShuttingDown()) {
        const SessionState state = m_controller->state(m_workspaceId);
        if (!sandbox)
            m_problem.clear();
        else if (state == SessionState::Starting)
            m_problem = tr("The sandbox is starting (seeding).");
        else
            m_problem = m_rows.isEmpty()
                            ? tr("The sandbox is not running.")
                            : tr("The sandbox is not running: the list is of its last scan.");
        ++m_scanCount;
        Q_EMIT scanned();
        return;
    }
    m_scanning = true;
    m_dirty = false;
    const bool seeded = sandbox->options().seedFrom.has_value();
    const quint64 serial = m_serial;
    auto *watcher = new QFutureWatcher<ChangeScan>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial] {
        watcher->deleteLater();
        m_scanning = false;
        if (serial != m_serial) { // another sandbox meanwhile
            refresh();
            return;
        }
        try {
            m_scan = watcher->result();
            m_problem.clear();
            mergeRows(m_scan.changes);
            m_scan.changes.clear(); // the rows hold them
        } catch (...) {
            const auto err = futureError(std::current_exception());
            m_problem = tr("Cannot list the changes: %1").arg(err ? err->second : QString());
        }
        ++m_scanCount;
        Q_EMIT scanned();
        if (m_dirty)
            refresh();
    });
    watcher->setFuture(QtConcurrent::run(m_controller->bulkPool(), [sandbox, seeded] {
        lowerThreadPriority();
        const BackendPtr backend = sandbox->backend();
        if (!backend)
            throw OSError(
                QStringLiteral("sandbox '%1' is not running").arg(sandbox->workspaceId()));
        return scanWorkspaceChanges(*backend, seeded);
    }));
}

void ChangesModel::clearRows()
{
    if (m_rows.isEmpty())
        return;
    beginRemoveRows({}, 0, int(m_rows.size()) - 1);
    m_rows.clear();
    endRemoveRows();
}

int ChangesModel::rowOf(const QString &path) const
{
    // Sorted by path (scanWorkspaceChanges): a binary search.
    const auto it =
        std::lower_bound(m_rows.cbegin(), m_rows.cend(), path,
                         [](const WorkspaceChange &c, const QString &p) { return c.path < p; });
    return it != m_rows.cend() && it->path == path ? int(it - m_rows.cbegin()) : -1;
}

int ChangesModel::count(WorkspaceChange::Kind kind) const
{
    return int(std::count_if(m_rows.cbegin(), m_rows.cend(),
                             [kind](const WorkspaceChange &c) { return c.kind == kind; }));
}

QString ChangesModel::kindName(WorkspaceChange::Kind kind)
{
    switch (kind) {
    case WorkspaceChange::Kind::Added:
        return tr("added");
    case WorkspaceChange::Kind::Modified:
        return tr("modified");
    case WorkspaceChange::Kind::Deleted:
        return tr("deleted");
    }
    return {};
}

int ChangesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ChangesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const WorkspaceChange &c = m_rows.at(index.row());
    using K = WorkspaceChange::Kind;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case PathColumn:
            return c.path;
        case ChangeColumn:
            if (c.type == FileInfo::Type::Symlink)
                return tr("%1 (link)").arg(kindName(c.kind));
            if (c.type == FileInfo::Type::Other)
                return tr("%1 (special)").arg(kindName(c.kind));
            return kindName(c.kind);
        case SizeColumn:
            if (c.kind == K::Modified && c.baseSize != c.size)
                return QStringLiteral("%1 → %2").arg(sizeText(c.baseSize), sizeText(c.size));
            return sizeText(c.kind == K::Deleted ? c.baseSize : c.size);
        }
        return {};
    case Qt::ToolTipRole:
        if (c.kind == K::Deleted)
            return tr("%1: in the seed (%2), gone from the workspace")
                .arg(c.path, sizeText(c.baseSize));
        if (c.kind == K::Added)
            return tr("%1: not in the seed").arg(c.path);
        return tr("%1: changed since the seed (%2 → %3)")
            .arg(c.path, sizeText(c.baseSize), sizeText(c.size));
    case Qt::TextAlignmentRole:
        if (index.column() == SizeColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Roles::PathRole:
        return c.path;
    case Roles::ChangeKindRole:
        return int(c.kind);
    case Roles::SizeRole:
        return c.size < 0 ? QVariant() : QVariant(c.size);
    case Roles::FileTypeRole:
        return int(c.type);
    }
    return {};
}

QVariant ChangesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case PathColumn:
        return tr("Path");
    case ChangeColumn:
        return tr("Change");
    case SizeColumn:
        return tr("Size");
    }
    return {};
}

QHash<int, QByteArray> ChangesModel::roleNames() const
{
    QHash<int, QByteArray> names = MergingTableModel::roleNames();
    names.insert(Roles::PathRole, "path");
    names.insert(Roles::ChangeKindRole, "changeKind");
    names.insert(Roles::SizeRole, "size");
    names.insert(Roles::FileTypeRole, "fileType");
    return names;
}

} // namespace elsai
