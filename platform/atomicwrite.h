// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <functional>
#include <optional>

#include <sys/stat.h>

namespace elsai {

// The one atomic writer of the engine: every workspace write (WorkspaceFs::writeFile), every
// host-side write (downloads, flush, conflict files, offload files, the flush base) and every
// seeded file goes through writeAtomicAt(). It writes
// beneath a folder descriptor the caller resolved and trusts, so no path is looked up by name
// again and no link an agent made can redirect it.

/// The temp name writeAtomicAt() uses for `name`: ".<stem>.elsai-tmp-<12 hex>", where <stem> is
/// `name` shortened at a UTF-8 character boundary so the whole name fits NAME_MAX (255 bytes)
/// for any valid `name`. isStaleTempName() (tempfiles.h) recognises it.
QByteArray atomicTempName(QByteArrayView name);

struct AtomicWriteOptions
{
    /// Permission bits of a new file at creation (the umask applies).
    mode_t createMode = 0644;
    /// Set exactly with fchmod before the rename (not subject to the umask).
    std::optional<mode_t> exactMode;
    /// An existing regular target keeps its permission bits (wins over exactMode).
    bool keepExistingMode = false;
    /// Never replace an existing entry: the rename fails with EEXIST instead.
    bool noReplace = false;
    /// fsync the file before the rename and the folder after it. False only for a caller that
    /// makes many writes durable at once afterwards (the seed: one syncfs at its end; see
    /// executeSeed); `dirFd` may then be O_PATH.
    bool durable = true;
};

/// What a failed writeAtomicAt() was doing.
enum class AtomicWriteStage { Create, Fill, Mode, Sync, Rename, SyncFolder };

struct AtomicWriteError
{
    int error = 0; ///< errno
    AtomicWriteStage stage = AtomicWriteStage::Create;
};

/// Writes the entry `name` (one component, no '/') of the folder `dirFd` atomically: a temp
/// file created with O_CREAT|O_EXCL|O_NOFOLLOW beside it, `fill(fd)` writes the content
/// (returns false with errno set on failure), fsync, rename over `name`, fsync of the folder.
/// The rename replaces the directory entry, so an existing hard link or symlink at `name` is
/// replaced, never written through. The temp file is removed on every failure.
/// With `options.durable`, `dirFd` must be readable (not O_PATH): the folder is fsync'ed.
/// `written`, when given, receives the fstat of the new file. Returns the error, or none.
std::optional<AtomicWriteError> writeAtomicAt(int dirFd, QByteArrayView name,
                                              const std::function<bool(int fd)> &fill,
                                              const AtomicWriteOptions &options = {},
                                              struct stat *written = nullptr);

/// writeAtomicAt() of a buffer.
std::optional<AtomicWriteError> writeAtomicAt(int dirFd, QByteArrayView name,
                                              QByteArrayView content,
                                              const AtomicWriteOptions &options = {},
                                              struct stat *written = nullptr);

/// The same for a symbolic link: `name` becomes a link to `target` atomically (a temp link of
/// atomicTempName() beside it, renamed over `name`; the folder fsync'ed with
/// `options.durable`). Only `noReplace` and `durable` of `options` apply. Returns the error, or
/// none.
std::optional<AtomicWriteError> symlinkAtomicAt(int dirFd, QByteArrayView name,
                                                QByteArrayView target,
                                                const AtomicWriteOptions &options = {});

/// write(2) of all of `data`, retrying short writes and EINTR. False with errno set on failure.
bool writeAllFd(int fd, const char *data, qsizetype size);

} // namespace elsai
