// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// The listing format of the remote shells: `find -printf '%y\t%s\t%T@\t%D:%i\t%f\0'`,
// spoken by the SSH helper (backends/ssh) and the confined script of the HTTP backends
// (backends/remote). The device:inode field tells two paths of one file apart from two files.

#include "types.h"

#include <QByteArray>
#include <QList>
#include <QString>

/// The shell lines that write a capped listing's answer (parseCappedListing) for the folder
/// the shell is in, the cap in
/// `$cap` (digits only; GNU find, sort, head and wc): a string literal, so that both remote
/// scripts (backends/ssh/remotescript.cpp, backends/remote/confinedscript.cpp) splice in this
/// one copy. sort's key is the name: from the fifth TAB-separated field to the record's end
/// (a name may hold tabs), in byte order like the local listing's.
#define ELSAI_CAPPED_LISTING_SH                                                                    \
    "find . -mindepth 1 -maxdepth 1 -printf . | wc -c\n"                                           \
    "find . -mindepth 1 -maxdepth 1 -printf '%y\\t%s\\t%T@\\t%D:%i\\t%f\\0' |\n"                   \
    "  LC_ALL=C sort -z -t \"$(printf '\\t')\" -k5 | head -z -n \"$cap\"\n"

namespace elsai {

struct FindRecord
{
    char type = 'f'; ///< find's %y: f, d, l, or another letter for special files
    qint64 size = 0;
    qint64 mtimeNs = 0;
    quint64 device = 0;
    quint64 inode = 0;
    QString name; ///< may hold tabs: everything after the fourth field

    /// The entry at `path`, typed like the local backend's: a size for regular files only.
    FileInfo toInfo(const QString &path) const;
};

/// Parses NUL-separated records; malformed ones are dropped.
QList<FindRecord> parseFindRecords(const QByteArray &data);
/// A time as find prints it (%T@, %C@: "1732881234.1234567890") in nanoseconds.
qint64 parseFindTimeNs(const QByteArray &text);

/// The answer of a capped listing (`<count of all entries>\n` then the first records by
/// name, as the remote `list` operations send it with a cap) as a DirListing of `dir`, and in
/// `*total` the count. Names that could leave the folder (empty, `.`, `..`, holding `/`) are
/// dropped; at most `maxEntries` entries are kept, whatever the answer holds. False when the
/// count line is missing.
bool parseCappedListing(const QByteArray &payload, const QString &dir, qsizetype maxEntries,
                        DirListing *out, qint64 *total);

} // namespace elsai
