// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "types.h"

#include <QString>

namespace elsai {

class ExecutionBackend;

// Agent listings are capped (listDirMaxEntries()); a capped listing costs in proportion to the
// cap, not to the folder (WorkspaceFs::listDirFirst() on the local backends; the remote
// listing command sorts, counts and sends only the first entries).

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

} // namespace elsai
