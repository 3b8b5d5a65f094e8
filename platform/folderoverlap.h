// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>

namespace elsai {

/// How two host folders relate, judged on where they really are: symlinks in either path are
/// resolved (a missing tail is kept as spelled), and a folder reached by two routes (a bind
/// mount, a symlinked parent) is still recognised by device and inode of it and its parents.
enum class FolderRelation {
    Separate,
    Same,
    FirstInsideSecond,
    SecondInsideFirst,
};

FolderRelation relateFolders(const QString &first, const QString &second);

/// The rule for folders that must not overlap (seed_from, sync_dest, a flush's dest and an
/// offload FileStorage against a workspace folder): throws ValueError naming both folders and
/// their roles when they are the same folder or one lies inside the other. Either path may be
/// empty (nothing to check).
void requireSeparateFolders(const QString &firstRole, const QString &first,
                            const QString &secondRole, const QString &second);

} // namespace elsai
