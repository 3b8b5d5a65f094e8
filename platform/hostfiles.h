// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "fdutil.h"

#include <QByteArray>
#include <QString>

namespace elsai {

// Files on the HOST side (downloads, offload storage): paths the user or the application
// chose, not agent-controlled workspace paths (those go through WorkspaceFs).

/// The host folder `dir` opened once as the trusted folder descriptor every engine write on the
/// host works beneath (writeAtomicAt(), openat(O_NOFOLLOW)): its last component is opened with
/// O_NOFOLLOW, so a folder that is (or was swapped for) a symlink is refused with a
/// PermissionError naming it; the folders above it are followed as the user named them. With
/// `create`, missing folders are created one at a time beneath the deepest existing one
/// (which must not be a symlink either) through the confined resolver (confinedopen.h,
/// ConfinedLinks::None): nothing is followed or created through a link. The fd is O_RDONLY
/// (it can be fsync'ed). Throws the OSError subclasses of errors.h.
UniqueFd openHostFolder(const QString &dir, bool create);

/// Reads a regular host file; FIFOs, sockets and devices fail at once (O_NONBLOCK + fstat).
/// Throws the OSError subclasses of errors.h.
QByteArray readHostFile(const QString &path);

/// readHostFile() of the entry `name` of a trusted folder (openHostFolder()), never following a
/// symlink there (PermissionError); `path` names it in messages.
QByteArray readHostFileAt(int dirFd, const QByteArray &name, const QString &path);

/// Atomic replace through writeAtomicAt() (atomicwrite.h) beneath openHostFolder() of the
/// target's folder (created when missing): a symlink or hard link at `path` is replaced, never
/// written through; the temp file is removed on any failure. `mode` applies to the new file. With
/// `overwrite` false an existing entry is never replaced (FileExistsError), race-free.
void writeHostFileAtomic(const QString &path, const QByteArray &data, int mode = 0644,
                         bool overwrite = true);

} // namespace elsai
