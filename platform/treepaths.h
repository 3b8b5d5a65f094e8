// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>

namespace elsai {

/// Folder nesting deeper than this is reported as an error instead of entered, by every walk
/// of a tree (seed and flush, snapshots, the watcher, temp-file cleanup): a walk keeps one open
/// folder per level, and no real project comes close.
inline constexpr int MaxTreeDepth = 256;

/// The relative path of `name` inside the relative folder `dir` ("" is the root).
inline QByteArray joinRelative(const QByteArray &dir, const QByteArray &name)
{
    return dir.isEmpty() ? name : dir + '/' + name;
}

} // namespace elsai
