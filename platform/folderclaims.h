// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>

namespace elsai {

/// Process-wide register of the host folders the engine writes on its own behalf (offload
/// FileStorage folders) and of the workspace roots agents control, so that the engine's own
/// files never live where an agent can plant links or read them.
///
/// The rule: an offload folder may not be a workspace root nor lie inside one. Whichever of
/// the two is opened second is refused with a ValueError naming both. Folders are compared by
/// relateFolders() (folderoverlap.h) at the time of the claim.
class FolderClaim
{
public:
    enum class Role { Workspace, Offload };

    FolderClaim() = default;
    /// Registers `path` (an existing folder) in `role`; throws ValueError on a conflict.
    FolderClaim(Role role, const QString &path);
    ~FolderClaim();
    FolderClaim(FolderClaim &&other) noexcept;
    FolderClaim &operator=(FolderClaim &&other) noexcept;
    FolderClaim(const FolderClaim &) = delete;
    FolderClaim &operator=(const FolderClaim &) = delete;

    /// Canonical form used for the comparison.
    static QString canonical(const QString &path);

private:
    void release();
    quint64 m_id = 0;
};

} // namespace elsai
