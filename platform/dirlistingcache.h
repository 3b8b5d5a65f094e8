// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "types.h"

#include <QMutex>

#include <optional>
#include <vector>

#include <sys/stat.h>

namespace elsai {

/// Brief listings (types, no sizes) of large folders, reused while a folder is provably
/// unchanged: reading 1,000 entries costs ~0.25 ms of kernel time (ext4 hashes and sorts every
/// name on each read), the bulk of an MCP list_dir.
///
/// Validity: any change to a folder's entries (create, unlink, rename, mkdir, rmdir, link,
/// symlink) sets its ctime to the current (coarse) clock, and ctime cannot be set by users.
/// A listing is kept only when the folder's fstat was the same before and after the read and
/// its ctime was more than kRacyMarginNs older than the clock when the read began, so a change
/// racing with the read, or within the same timestamp tick, can never share that ctime (the
/// "racy git" rule). A hit needs device, inode, ctime, mtime, size and link count unchanged,
/// and the wall clock not stepped since (CLOCK_REALTIME − CLOCK_MONOTONIC moved < 5 ms).
/// Only local file systems whose timestamps follow this are trusted (ext4, XFS, Btrfs, tmpfs);
/// a listing that needed a stat per entry (sizes, or an unknown d_type) is never kept.
class DirListingCache
{
public:
    static constexpr qint64 kRacyMarginNs = 100'000'000; ///< >> a timestamp tick (≤ 10 ms)
    static constexpr size_t kMaxFolders = 16;
    static constexpr qsizetype kMaxNameBytes = 8 * 1024 * 1024;

    /// The clock readings a read starts with (before the folder's first fstat).
    struct Start
    {
        qint64 realNs = 0;
        qint64 realMinusMonoNs = 0;
    };
    static Start now();
    /// False when the environment has ELSAI_LIST_CACHE=0 (benchmarks, debugging).
    static bool enabled();
    /// Whether listings of the folder open as `dirFd` may be kept (its file system).
    static bool trustedFileSystem(int dirFd);

    /// The listing of the folder with stat `st` (taken after it was opened), if still valid.
    /// Its `folder` is left for the caller to set.
    std::optional<DirListing> find(const struct stat &st);
    /// Keeps `listing` when the rules above allow it. `dirFd` is the listed folder.
    void insert(int dirFd, const Start &start, const struct stat &before, const struct stat &after,
                const DirListing &listing);

    quint64 hits() const; ///< for tests
    void clear();

private:
    struct Slot
    {
        struct stat st;
        qint64 realMinusMonoNs = 0;
        DirListing listing;
        quint64 lastUse = 0;
    };
    mutable QMutex m_mutex;
    std::vector<Slot> m_slots;
    quint64 m_clock = 0;
    quint64 m_hits = 0;
};

} // namespace elsai
