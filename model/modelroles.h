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
    // Processes and ports (a sandbox's running processes, its listening ports)
    ProcessIdRole,   ///< quint64 ProcessRegistry id
    ProcessKindRole, ///< "terminal", "command", "background"
    PortRole,        ///< int TCP port
    UrlRole,         ///< QString: where a browser reaches it (may need a forward first)
    // Timeline (calls and checkpoints in time order)
    TimelineKindRole,   ///< TimelineRow::Kind as int
    CallIdRole,         ///< quint64 CallChangeRecord::id
    CheckpointNameRole, ///< QString
    AutomaticRole,      ///< bool: an automatic checkpoint
    AddedRole,          ///< qint64 paths a call added
    ModifiedRole,       ///< qint64 paths a call modified
    DeletedRole,        ///< qint64 paths a call deleted
    SharedRole,         ///< bool: its changes are attributed to other calls too
};
} // namespace Roles

} // namespace elsai
