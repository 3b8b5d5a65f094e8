#pragma once

// The listing format of the remote shells: `find -printf '%y\t%s\t%T@\t%D:%i\t%f\0'`,
// spoken by the SSH helper (backends/ssh) and the confined script of the HTTP backends
// (backends/remote). The device:inode field tells two paths of one file apart from two files.

#include "types.h"

#include <QByteArray>
#include <QList>
#include <QString>

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

} // namespace elsai
