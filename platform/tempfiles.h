// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArrayView>

namespace elsai {

/// Is `name` one of our own temp-file names (an atomic write that a crash interrupted)?
///   ".<name>.elsai-tmp-<12 hex>"  every atomic write (atomicwrite.h; <name> shortened to fit)
/// and, left by older versions: ".<name>.elsai-tmp-<16 hex>", ".sandbox-tmp-<1-16 hex>".
bool isStaleTempName(QByteArrayView name);

/// Is `name` a temp name writeAtomicAt() makes when it writes `target` (the stem of the name,
/// maybe shortened to fit NAME_MAX, is a prefix of `target`)?
bool isTempNameFor(QByteArrayView name, QByteArrayView target);

/// Removes leftover temp files of ours in the folder `dirFd` (any fd naming a folder, O_PATH
/// included) and, with `recursive`, in its subfolders. Only regular files whose name
/// isStaleTempName() are removed; symlinks are never followed and never removed; folders deeper
/// than 256 levels are not visited. Errors are ignored (best effort). Returns the count removed.
/// A write in progress in another process at that moment fails cleanly (its rename finds no
/// temp file), it never loses data.
int removeStaleTempFiles(int dirFd, bool recursive);

} // namespace elsai
