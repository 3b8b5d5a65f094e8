// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "fdutil.h"
#include "treemanifest.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMap>
#include <QMutex>

#include <optional>

namespace elsai {

/// The metadata of one path as a TreeWatch last saw it (no content hash: a change of size,
/// mtime, inode, mode or link text is a change).
struct PathState
{
    TreeEntry::Type type = TreeEntry::Type::File;
    quint32 mode = 0;
    qint64 size = 0;
    qint64 mtimeNs = 0;
    quint64 ino = 0;
    QByteArray target; ///< symlinks
    bool operator==(const PathState &o) const
    {
        // a folder's own mtime and size change with its entries: those are their own paths
        return type == o.type && mode == o.mode && target == o.target && ino == o.ino &&
               (type == TreeEntry::Type::Dir || (size == o.size && mtimeNs == o.mtimeNs));
    }
};

/// One path that changed since the previous drain (none = absent).
struct PathChange
{
    QByteArray path;
    std::optional<PathState> before;
    std::optional<PathState> after;
};

/// A live metadata mirror of the tree beneath a folder (change tracking, docs/checkpoints.md):
/// inotify watches on every folder (up to `maxWatches`), and at each drain() the paths the
/// events name are stat'ed again (beneath the root fd, never following a symlink) and compared
/// with what was known. A folder created or moved in is walked whole. When the kernel's event
/// queue overflows, when inotify is unavailable, or when there are more folders than
/// `maxWatches`, drain() walks the whole tree's metadata instead (rescan mode: correct, slower:
/// one lstat per entry). Thread-safe.
class TreeWatch
{
public:
    /// `rootFd`: any fd naming the folder (duplicated). Walks the tree once.
    TreeWatch(int rootFd, int maxWatches);
    virtual ~TreeWatch();
    TreeWatch(const TreeWatch &) = delete;
    TreeWatch &operator=(const TreeWatch &) = delete;

    /// What changed since the last drain (or the construction).
    QList<PathChange> drain();
    /// Forgets what was seen and walks again (after a restore: no change is anybody's).
    void reset();

    /// False while changes are found by walking (see above).
    bool watching() const;
    int watchCount() const;
    qsizetype knownPaths() const;

private:
    using Known = QMap<QByteArray, PathState>;
    void walk(const QByteArray &from, Known &into, bool addWatches);
    void addWatch(const QByteArray &rel);
    std::optional<PathState> statPath(const QByteArray &rel) const;
    QList<PathChange> rescan();

    mutable QMutex m_mutex;
    UniqueFd m_root;
    UniqueFd m_inotify;
    int m_maxWatches;
    bool m_overBound = false;
    QHash<int, QByteArray> m_watches; ///< wd → folder
    Known m_known;
};

} // namespace elsai
