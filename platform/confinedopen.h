// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "fdutil.h"

#include <QByteArray>
#include <QByteArrayView>

namespace elsai {

// The one confined resolver of the engine: every path beneath a folder descriptor — workspace
// paths (WorkspaceFs), the trees seeding copies, a flush's host destination, the folders a
// host-side write creates — is opened here. The kernel resolves it: openat2(RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS [| RESOLVE_NO_SYMLINKS]); where openat2 is missing (or blocked), a
// component-by-component openat(O_NOFOLLOW) walk does the same. Never "check a string, then
// open by name".

/// Which symlinks a confined open may follow.
enum class ConfinedLinks {
    /// Symlinks are followed while they stay beneath the folder (workspace paths).
    StayBeneath,
    /// No symlink anywhere on the way, the last component included (host folders below a
    /// trusted root, trees that are copied without following links).
    None,
};

/// Opens `rel` beneath the folder `dirFd` (any fd naming a folder, O_PATH included) with
/// `flags` (O_CLOEXEC is added; O_CREAT is not allowed: nothing is created). An empty `rel`, or
/// one of only `.` components, is the folder itself; `a//b` ≡ `a/b`; `..` may step back only
/// into folders the path entered. Returns an invalid fd with errno set on failure: EXDEV for a
/// path (or a symlink) that would leave the folder, an absolute path included; ELOOP for a
/// symlink `links` refuses or more than 40 hops; otherwise the open's own error.
/// openat2's EAGAIN (a rename raced with the lookup) is retried.
UniqueFd openConfined(int dirFd, QByteArrayView rel, int flags, ConfinedLinks links);

/// Opens the folder `rel` beneath `dirFd` with `flags` (O_DIRECTORY is added), creating
/// missing folders (mode 0777, the umask applies) one at a time. Each folder is entered through
/// openConfined(), so a symlink (or one swapped in meanwhile) can make it neither create nor
/// open anything outside. The folder a new one was created in is fsync'ed (best effort).
/// On failure: an invalid fd, errno set, and `*failedAt` (when given) = the prefix of `rel`
/// that could not be created or opened.
UniqueFd openOrCreateConfinedDirs(int dirFd, QByteArrayView rel, int flags, ConfinedLinks links,
                                  QByteArray *failedAt = nullptr);

/// Whether openat2 works here (probed once: ENOSYS on old kernels, EPERM or ENOSYS under a
/// seccomp filter).
bool confinedOpenat2Available();

/// Tests only: use the openat(O_NOFOLLOW) walk even where openat2 works (process-wide).
void setConfinedOpenForceFallback(bool force);

} // namespace elsai
