// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "firstentries.h"

#include "backend.h"
#include "errors.h"

#include <QScopeGuard>
#include <QStringList>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

namespace {

bool byName(const FirstEntries::Kept &a, const FirstEntries::Kept &b)
{
    return a.name < b.name;
}

} // namespace

void FirstEntries::add(QByteArrayView name, FileInfo::Type type, QByteArrayView record)
{
    ++m_total;
    if (m_max == 0)
        return;
    if (qsizetype(m_heap.size()) == m_max) {
        if (!(name < QByteArrayView(m_heap.front().name)))
            return;
        std::pop_heap(m_heap.begin(), m_heap.end(), byName);
        Kept &slot = m_heap.back();
        slot.name = name.toByteArray(); // reuses the slot's buffers where they fit
        slot.type = type;
        slot.record = record.toByteArray();
    } else {
        m_heap.push_back({name.toByteArray(), type, record.toByteArray()});
    }
    std::push_heap(m_heap.begin(), m_heap.end(), byName);
}

std::vector<FirstEntries::Kept> FirstEntries::take()
{
    std::vector<Kept> out = std::move(m_heap);
    m_heap.clear();
    std::sort_heap(out.begin(), out.end(), byName);
    // UTF-8 byte order is code point order; QString's (UTF-16) differs beyond the BMP only
    const bool ascii = std::all_of(out.cbegin(), out.cend(), [](const Kept &k) {
        return std::all_of(k.name.cbegin(), k.name.cend(), [](char c) { return uchar(c) < 0x80; });
    });
    if (!ascii) {
        std::stable_sort(out.begin(), out.end(), [](const Kept &a, const Kept &b) {
            return QString::fromUtf8(a.name) < QString::fromUtf8(b.name);
        });
    }
    return out;
}

CappedListing listFirstEntries(int dirFd, const QString &folder, const QString &shownPath,
                               qsizetype maxEntries, qsizetype statLimit)
{
    const QString what = QStringLiteral("cannot list");
    DIR *dir = ::fdopendir(dirFd);
    if (!dir) {
        const int e = errno;
        ::close(dirFd);
        throwOsError(e, what, shownPath);
    }
    const auto closer = qScopeGuard([dir] { ::closedir(dir); });
    FirstEntries first(maxEntries);
    for (;;) {
        errno = 0;
        const dirent *e = ::readdir(dir);
        if (!e) {
            if (errno)
                throwOsError(errno, what, shownPath);
            break;
        }
        const char *n = e->d_name;
        if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
            continue;
        // DT_UNKNOWN travels as a one-byte record: such an entry is always stat'ed
        const char unknown = e->d_type == DT_UNKNOWN ? 1 : 0;
        first.add(QByteArrayView(n, qsizetype(std::strlen(n))), FileInfo::typeOfDirent(e->d_type),
                  unknown ? QByteArrayView(&unknown, 1) : QByteArrayView());
    }
    CappedListing out;
    out.totalEntries = first.total();
    DirListing &listing = out.listing;
    listing.folder = folder;
    const bool statAll = statLimit < 0 || first.total() <= statLimit;
    for (FirstEntries::Kept &k : first.take()) {
        DirListing::Entry entry{listing.names.size(), k.name.size(), k.type, std::nullopt, 0};
        if (statAll || !k.record.isEmpty()) {
            struct stat st;
            if (::fstatat(::dirfd(dir), k.name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
                if (errno == ENOENT) // removed since readdir()
                    continue;
                throwOsError(errno, what, shownPath);
            }
            entry.type = S_ISREG(st.st_mode)   ? FileInfo::Type::File
                         : S_ISDIR(st.st_mode) ? FileInfo::Type::Directory
                         : S_ISLNK(st.st_mode) ? FileInfo::Type::Symlink
                                               : FileInfo::Type::Other;
            if (S_ISREG(st.st_mode))
                entry.size = st.st_size;
            entry.mtimeMs = qint64(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
        }
        for (const char c : std::as_const(k.name))
            listing.ascii = listing.ascii && uchar(c) < 0x80;
        listing.names += k.name;
        listing.entries.push_back(entry);
    }
    return out;
}

CappedListingBackend::~CappedListingBackend() = default;

CappedListing listDirFirst(ExecutionBackend &backend, const QString &path, qsizetype maxEntries,
                           qsizetype statLimit)
{
    if (auto *capped = dynamic_cast<CappedListingBackend *>(&backend))
        return capped->listDirFirst(path, maxEntries, statLimit);
    CappedListing out{backend.listDirCompact(path, statLimit), 0};
    out.totalEntries = out.listing.size();
    const qsizetype keep = qMax<qsizetype>(0, maxEntries);
    if (out.listing.size() > keep)
        out.listing.entries.resize(size_t(keep)); // the names stay whole: no copies
    return out;
}

} // namespace elsai
