// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// Shared by the AgentCore backend's source files; not part of its interface.

#include "shellquote.h"

#include <QString>

namespace elsai::aws::agentcore {

// One writeFiles / readFiles call carries at most this much (JSON + base64 overhead aside).
constexpr qint64 BATCH_BYTES = 4 * 1024 * 1024;
constexpr int BATCH_FILES = 100;
/// Writes up to this size travel inside the command (one call, base64, under the kernel's
/// 128 KiB limit of one argument); larger ones go through writeFiles to a temp file.
constexpr qsizetype INLINE_WRITE_BYTES = 48 * 1024;

/// The refusal of a path that a symlink takes out of the workspace.
inline QString escapeMessage(const QString &path)
{
    return QStringLiteral("'%1' resolves outside the workspace (through a symlink); refused")
        .arg(path);
}

} // namespace elsai::aws::agentcore
