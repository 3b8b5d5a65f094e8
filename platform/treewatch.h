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
#include <QSet>

#include <functional>
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
    quint32 links = 1; ///< hard links (not compared: a link elsewhere changes nothing here)
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

/// The metadata of a tree by relative path (what a watch compares).
using PathStates = QMap<QByteArray, PathState>;

/// What changed from `before` to `after`, in path order (one pass over both).
QList<PathChange> diffPathStates(const PathStates &before, const PathStates &after);

/// A watch of the tree beneath a workspace for change tracking (docs/checkpoints.md): each
/// drain() says what changed since the previous one. Thread-safe.
class TreeWatch
{
public:
    TreeWatch() = default;
    virtual ~TreeWatch();
    TreeWatch(const TreeWatch &) = delete;
    TreeWatch &operator=(const TreeWatch &) = delete;

    /// What changed since the last drain (or the construction).
    virtual QList<PathChange> drain() = 0;
    /// Forgets what was seen and looks again (after a restore: no change is anybody's).
    virtual void reset() = 0;

    /// False while changes are found by walking (a listing of the whole tree per drain).
    virtual bool watching() const = 0;
    virtual int watchCount() const = 0;
    virtual qsizetype knownPaths() const = 0;

    /// The paths that may have changed since the last call (every path an event named, all of
    /// a folder that came, went or was replaced, every file with other hard links), so that a
    /// checkpoint looks at those only (CaptureOptions::touched); none when the watch cannot
    /// vouch for the rest since then (this default, the listing watch: it sees metadata only).
    /// Call right after drain(): what is still queued goes into the next set.
    virtual std::optional<QSet<QByteArray>> takeTouched() { return std::nullopt; }
    /// Whether takeTouched() can ever answer: a checkpoint drains a watch only for it (a
    /// listing watch's drain is one more whole listing, for nothing).
    virtual bool keepsTouched() const { return false; }
    /// Touched paths kept at most between two takes; past it the watch no longer vouches.
    static constexpr qsizetype MaxTouched = 200000;
};

/// A live metadata mirror of the tree beneath a folder (local, bwrap): inotify watches on every
/// folder (up to `maxWatches`), and at each drain() the paths the events name are stat'ed again
/// (beneath the root fd, never following a symlink) and compared with what was known. A folder
/// created or moved in is walked whole. When the kernel's event queue overflows, when inotify
/// is unavailable, or when there are more folders than `maxWatches`, drain() walks the whole
/// tree's metadata instead (rescan mode: correct, slower: one lstat per entry).
///
/// takeTouched() vouches only while nothing escaped the events since the previous take: not
/// after a walk in rescan mode, nor while a folder could not be watched (unreadable, too deep);
/// a file with other hard links is always touched (a write through a link elsewhere names no
/// path here). What no event reports at all is a write through a shared memory mapping while
/// the file stays open: its path is touched when the writer closes it (docs/checkpoints.md).
class InotifyTreeWatch : public TreeWatch
{
public:
    /// `rootFd`: any fd naming the folder (duplicated). Walks the tree once.
    InotifyTreeWatch(int rootFd, int maxWatches);
    ~InotifyTreeWatch() override;

    QList<PathChange> drain() override;
    void reset() override;
    bool watching() const override;
    int watchCount() const override;
    qsizetype knownPaths() const override;
    std::optional<QSet<QByteArray>> takeTouched() override;
    bool keepsTouched() const override { return true; }

private:
    using Known = PathStates;
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
    QSet<QByteArray> m_touched; ///< since the last takeTouched()
    QSet<QByteArray> m_linked;  ///< files known with more than one hard link
    bool m_vouch = true;        ///< nothing escaped the events since the last take
    bool m_blind = false;       ///< a folder is not watched (until a walk watches it)
    void touch(const QByteArray &path);
};

/// A watch by listing (ssh and the remote backends): every drain() takes a whole listing of
/// the tree's metadata (one remote command) and compares it with the previous one. No
/// notification, no state on the remote side; the cost is one listing per drain.
class ListingTreeWatch : public TreeWatch
{
public:
    /// `list` returns the tree's metadata now (throws SandboxError); called once here.
    explicit ListingTreeWatch(std::function<PathStates()> list);
    ~ListingTreeWatch() override;

    /// A listing that fails (the connection is gone) reports no change and keeps the last one.
    QList<PathChange> drain() override;
    void reset() override;
    bool watching() const override { return false; }
    int watchCount() const override { return 0; }
    qsizetype knownPaths() const override;

private:
    mutable QMutex m_mutex;
    std::function<PathStates()> m_list;
    PathStates m_known;
};

} // namespace elsai
