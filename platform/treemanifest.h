// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <optional>
#include <vector>

namespace elsai {

// A workspace tree as a checkpoint records it (docs/checkpoints.md): every folder, regular file
// and symlink beneath the root, with the content hash of each file. Paths are the raw bytes of
// the names ('/'-separated, no leading '/', never "." or ".."): a name that is not UTF-8 is
// recorded and restored as it is.

/// The stat fields a content hash is cached by (checkpointstore.h, TreeHashCache).
struct FileStampKey
{
    quint64 dev = 0;
    quint64 ino = 0;
    qint64 size = -1;
    qint64 mtimeNs = 0;
    qint64 ctimeNs = 0;
    bool operator==(const FileStampKey &) const = default;
};
size_t qHash(const FileStampKey &key, size_t seed = 0) noexcept;

/// One entry of a tree.
struct TreeEntry
{
    enum class Type : char { File = 'f', Dir = 'd', Symlink = 'l' };
    QByteArray path;
    Type type = Type::File;
    quint32 mode = 0;   ///< permission bits (st_mode & 07777)
    qint64 size = 0;    ///< file: bytes; symlink: target length; folder: 0
    QByteArray hash;    ///< file: the BLAKE2b-256 of its content (32 raw bytes)
    QByteArray target;  ///< symlink: the link text, never followed
    FileStampKey stamp; ///< as the walk saw it (the hash cache's key)

    /// Same content, type, mode and link: what restore must reproduce.
    bool sameState(const TreeEntry &o) const
    {
        return type == o.type && mode == o.mode && hash == o.hash && target == o.target &&
               (type != Type::File || size == o.size);
    }
    QString displayPath() const { return QString::fromUtf8(path); }
};

/// The order of a tree's entries: byte order with '/' before every other byte, so that a
/// folder's whole contents follow it directly (what a pre-order walk with each folder's names
/// in byte order yields, without sorting the whole tree).
bool pathLess(const QByteArray &a, const QByteArray &b);

/// A whole tree in pathLess() order (a folder before its contents), plus what the header of a
/// checkpoint says about it.
struct TreeManifest
{
    QString name;
    QString note;
    qint64 createdMs = 0;   ///< ms since the epoch, UTC
    bool automatic = false; ///< made by the engine, not by name: removable under the size limit
    QString source;         ///< the backend id it was taken from
    std::vector<TreeEntry> entries;
    QStringList skipped; ///< special files and unreadable entries, not recorded

    qint64 fileCount() const;
    qint64 byteCount() const;                            ///< sum of the file sizes
    const TreeEntry *find(const QByteArray &path) const; ///< binary search
    void sort();
};

/// Hashes `data` as the store does (BLAKE2b-256, 32 bytes).
QByteArray contentHash(QByteArrayView data);

/// The file format: NUL-terminated records, a header, one record per entry, and a trailer with
/// the count and a hash of everything before it (a file cut short or altered is refused).
QByteArray encodeManifest(const TreeManifest &manifest);
/// Decodes it; none and `*error` when it is not a whole manifest of this version.
/// `headerOnly` stops after the header (listing many checkpoints reads no entries).
std::optional<TreeManifest> decodeManifest(const QByteArray &data, QString *error = nullptr,
                                           bool headerOnly = false);

/// What changed from one tree to another. A path whose type changed is deleted and added.
struct TreeChange
{
    enum class Kind { Added, Modified, Deleted };
    Kind kind = Kind::Added;
    QByteArray path;
    const TreeEntry *from = nullptr; ///< into the `from` manifest (none for Added)
    const TreeEntry *to = nullptr;   ///< into the `to` manifest (none for Deleted)
    bool contentChanged = false;     ///< Modified: bytes or link text (else mode only)
};
/// One pass over both sorted lists; the pointers stay valid while both manifests live.
std::vector<TreeChange> diffManifests(const TreeManifest &from, const TreeManifest &to);

QString toString(TreeChange::Kind kind); ///< "added", "modified", "deleted"

} // namespace elsai
