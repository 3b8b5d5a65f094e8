// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "dirlistingcache.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include <linux/magic.h>
#include <sys/vfs.h>

namespace elsai {

namespace {

qint64 nanoseconds(const timespec &t)
{
    return qint64(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

bool sameTime(const timespec &a, const timespec &b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// Everything that changes when an entry of the folder is added, removed or renamed.
bool unchanged(const struct stat &a, const struct stat &b)
{
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino && sameTime(a.st_ctim, b.st_ctim) &&
           sameTime(a.st_mtim, b.st_mtim) && a.st_size == b.st_size && a.st_nlink == b.st_nlink;
}

} // namespace

DirListingCache::Start DirListingCache::now()
{
    timespec real{}, mono{};
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    return {nanoseconds(real), nanoseconds(real) - nanoseconds(mono)};
}

// File systems that set a folder's ctime from the kernel clock on every entry change.
bool DirListingCache::trustedFileSystem(int dirFd)
{
    struct statfs fs;
    if (fstatfs(dirFd, &fs) != 0)
        return false;
    switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC: // also ext2/ext3
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
        return true;
    default:
        return false;
    }
}

bool DirListingCache::enabled()
{
    static const bool on = qEnvironmentVariable("ELSAI_LIST_CACHE") != QLatin1String("0");
    return on;
}

std::optional<DirListing> DirListingCache::find(const struct stat &st)
{
    QMutexLocker lock(&m_mutex);
    const auto it = std::find_if(m_slots.begin(), m_slots.end(), [&](const Slot &s) {
        return s.st.st_dev == st.st_dev && s.st.st_ino == st.st_ino;
    });
    if (it == m_slots.end())
        return std::nullopt;
    if (!unchanged(it->st, st) ||
        std::llabs(now().realMinusMonoNs - it->realMinusMonoNs) > 5'000'000) {
        m_slots.erase(it);
        return std::nullopt;
    }
    it->lastUse = ++m_clock;
    ++m_hits;
    return it->listing;
}

void DirListingCache::insert(int dirFd, const Start &start, const struct stat &before,
                             const struct stat &after, const DirListing &listing)
{
    if (!unchanged(before, after) || nanoseconds(after.st_ctim) + kRacyMarginNs >= start.realNs ||
        listing.names.size() > kMaxNameBytes || !trustedFileSystem(dirFd))
        return;
    QMutexLocker lock(&m_mutex);
    Slot slot{after, start.realMinusMonoNs, listing, ++m_clock};
    slot.listing.folder.clear();
    const auto same = std::find_if(m_slots.begin(), m_slots.end(), [&](const Slot &s) {
        return s.st.st_dev == after.st_dev && s.st.st_ino == after.st_ino;
    });
    if (same != m_slots.end()) {
        *same = std::move(slot);
        return;
    }
    if (m_slots.size() >= kMaxFolders) {
        m_slots.erase(
            std::min_element(m_slots.begin(), m_slots.end(),
                             [](const Slot &a, const Slot &b) { return a.lastUse < b.lastUse; }));
    }
    m_slots.push_back(std::move(slot));
}

quint64 DirListingCache::hits() const
{
    QMutexLocker lock(&m_mutex);
    return m_hits;
}

void DirListingCache::clear()
{
    QMutexLocker lock(&m_mutex);
    m_slots.clear();
}

} // namespace elsai
