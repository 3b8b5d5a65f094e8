// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "firstentries.h"

#include "backend.h"

namespace elsai {

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
