// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sessionsmodel.h"

#include "modelroles.h"

#include <cmath>

namespace elsai {

QString toString(SessionState state)
{
    switch (state) {
    case SessionState::Stopped:
        return QStringLiteral("stopped");
    case SessionState::Starting:
        return QStringLiteral("starting");
    case SessionState::Running:
        return QStringLiteral("running");
    case SessionState::Stopping:
        return QStringLiteral("stopping");
    case SessionState::Expired:
        return QStringLiteral("expired");
    case SessionState::Failed:
        return QStringLiteral("failed");
    }
    return {};
}

std::optional<double> SessionRow::ttlRemaining() const
{
    if (state != SessionState::Running || !ttlSeconds)
        return std::nullopt;
    return qMax(0.0, *ttlSeconds - idleSeconds);
}

QString formatDuration(std::optional<double> seconds)
{
    if (!seconds || !std::isfinite(*seconds))
        return QStringLiteral("—");
    const qint64 total = qMax<qint64>(0, qint64(*seconds));
    const auto two = [](qint64 n) { return QStringLiteral("%1").arg(n, 2, 10, QLatin1Char('0')); };
    if (total >= 3600)
        return QStringLiteral("%1h %2m").arg(total / 3600).arg(two(total % 3600 / 60));
    if (total >= 60)
        return QStringLiteral("%1m %2s").arg(total / 60).arg(two(total % 60));
    return QStringLiteral("%1s").arg(total);
}

SessionsModel::SessionsModel(QObject *parent) : MergingTableModel(parent) {}

void SessionsModel::setSessions(const QList<SessionRow> &rows)
{
    mergeRows(rows);
}

int SessionsModel::rowOf(const QString &workspaceId) const
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).workspaceId == workspaceId)
            return row;
    }
    return -1;
}

int SessionsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString SessionsModel::backendShortName(const QString &typeName)
{
    // The name --backend takes: "LocalSandboxBackend" → "local", "AgentCoreSandboxBackend" →
    // "agentcore" (a narrow column; the tooltip keeps the class name).
    for (const QLatin1String suffix : {QLatin1String("SandboxBackend"), QLatin1String("Backend")}) {
        if (typeName.endsWith(suffix) && typeName.size() > suffix.size())
            return typeName.chopped(suffix.size()).toLower();
    }
    return typeName;
}

QVariant SessionsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const SessionRow &s = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case WorkspaceColumn:
            return s.workspaceId;
        case BackendColumn:
            return backendShortName(s.backend);
        case StateColumn:
            return toString(s.state);
        case OwnerColumn:
            return s.ownerId;
        case StartedColumn:
            return s.startedAt.isValid()
                       ? s.startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd hh:mm:ss"))
                       : QString();
        case IdleColumn:
            return formatDuration(s.idleSeconds);
        case TtlColumn:
            return formatDuration(s.ttlRemaining());
        }
        return {};
    case Qt::ToolTipRole:
        switch (index.column()) {
        case WorkspaceColumn:
            return s.workspaceRoot.isEmpty() ? QVariant() : QVariant(s.workspaceRoot);
        case BackendColumn:
            return s.backend;
        case StateColumn:
            return s.message.isEmpty() ? QVariant() : QVariant(s.message);
        }
        return {};
    case Roles::WorkspaceIdRole:
        return s.workspaceId;
    case Roles::SessionStateRole:
        return int(s.state);
    case Roles::TtlRemainingRole:
        if (const auto left = s.ttlRemaining())
            return *left;
        return {};
    }
    return {};
}

QVariant SessionsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case WorkspaceColumn:
        return tr("Workspace");
    case BackendColumn:
        return tr("Backend");
    case StateColumn:
        return tr("State");
    case OwnerColumn:
        return tr("Owner");
    case StartedColumn:
        return tr("Started");
    case IdleColumn:
        return tr("Idle");
    case TtlColumn:
        return tr("TTL left");
    }
    return {};
}

} // namespace elsai
