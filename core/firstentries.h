// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "types.h"

#include <QByteArray>
#include <QString>

namespace elsai {

class ExecutionBackend;

// Agent listings are capped (listDirMaxEntries()); these make the cost of a capped listing
// proportional to the cap, not to the folder: a folder of a million entries is streamed once
// and only the first entries by name are kept.

/// Keeps the `maxEntries` smallest names (byte order) of a stream of names and counts them
/// all. Memory: the kept names only.
class FirstEntries
{
public:
    explicit FirstEntries(qsizetype maxEntries) : m_max(qMax<qsizetype>(0, maxEntries)) {}
    /// Offers one entry (`record` travels with its name, e.g. its find(1) fields).
    void add(QByteArrayView name, FileInfo::Type type, QByteArrayView record = {});
    qint64 total() const { return m_total; }
    struct Kept
    {
        QByteArray name;
        FileInfo::Type type;
        QByteArray record;
    };
    /// The kept entries, sorted in QString order of their names (what listings use).
    std::vector<Kept> take();

private:
    qsizetype m_max;
    qint64 m_total = 0;
    std::vector<Kept> m_heap; ///< a max-heap by name: the first one is the largest kept
};

/// The first entries of a folder by name, and how many it has.
struct CappedListing
{
    DirListing listing;      ///< the first entries by name
    qint64 totalEntries = 0; ///< all the folder's entries
};

/// A backend whose listing can stop at a cap: every backend of this project (local: readdir
/// streamed; remote: the listing command sorts, counts and sends only the first entries).
/// A mixin rather than a virtual of ExecutionBackend, so that a backend without it still
/// works (listDirFirst() then cuts a full listing).
class CappedListingBackend
{
public:
    virtual ~CappedListingBackend();
    /// The first `maxEntries` entries by name (a negative count is 0), with lstat data as
    /// listDirBrief() gives it for `statLimit`, in memory proportional to `maxEntries`.
    virtual CappedListing listDirFirst(const QString &path, qsizetype maxEntries,
                                       qsizetype statLimit) = 0;
};

/// `backend`'s capped listing where it has one, else its full listing cut.
CappedListing listDirFirst(ExecutionBackend &backend, const QString &path, qsizetype maxEntries,
                           qsizetype statLimit);

/// The first `maxEntries` entries by name of the folder `dirFd` (which is consumed: the call
/// closes it), and the count of all of them. Entries are
/// lstat'ed (size, mtime) when the folder has at most `statLimit` entries (< 0: always);
/// otherwise only those whose type the file system does not report. `folder` and `shownPath`
/// name the folder in the listing and in errors.
CappedListing listFirstEntries(int dirFd, const QString &folder, const QString &shownPath,
                               qsizetype maxEntries, qsizetype statLimit);

} // namespace elsai
