// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <Qt>

namespace elsai {

/// Item-data roles shared by the models and the views (one enum so roles never collide).
namespace Roles {
enum : int {
    // Sessions
    WorkspaceIdRole = Qt::UserRole + 1,
    SessionStateRole, ///< SessionState as int
    TtlRemainingRole, ///< double seconds, or invalid when no TTL
    // Workspace tree
    PathRole, ///< workspace-relative path
    IsDirRole,
    FileTypeRole,   ///< FileInfo::Type as int
    SizeRole,       ///< qint64 bytes, invalid for folders
    MTimeRole,      ///< QDateTime
    ChangeMarkRole, ///< ChangeMark as int (changed since seeding)
    // Agents
    AgentNameRole,
    AttachModeRole, ///< "read_write" / "read_only"
    ToolCallsRole,
    // Audit
    AuditEventRole, ///< the whole AuditEvent (QVariant)
    AuditJsonRole,  ///< QJsonObject of the record
    TimestampRole,  ///< QDateTime
    EventNameRole,
    ActorRole,
    OutcomeRole,
    SequenceRole,
    // Console
    CommandRole,
    ExitCodeRole, ///< int, invalid while running
    RunningRole,
    OutputRole,   ///< captured stdout (bounded)
    StderrRole,   ///< captured stderr (bounded)
    DurationRole, ///< qint64 ms
    // Changes since the seed
    ChangeKindRole, ///< WorkspaceChange::Kind as int
};
} // namespace Roles

} // namespace elsai
