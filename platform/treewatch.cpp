// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "treewatch.h"

#include "confinedopen.h"
#include "errors.h"
#include "tempfiles.h"
#include "treepaths.h"

#include <QSet>

#include <algorithm>

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

namespace {

constexpr uint32_t WatchMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE |
                               IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
                               IN_ONLYDIR | IN_EXCL_UNLINK;

PathState stateOf(const struct stat &st)
{
    PathState s;
    s.type = S_ISDIR(st.st_mode)   ? TreeEntry::Type::Dir
             : S_ISLNK(st.st_mode) ? TreeEntry::Type::Symlink
                                   : TreeEntry::Type::File;
    s.mode = st.st_mode & 01777;
    s.size = st.st_size;
    s.mtimeNs = qint64(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    s.ino = st.st_ino;
    s.links = quint32(st.st_nlink);
    return s;
}

QByteArray linkText(int dirFd, const QByteArray &name, qint64 size)
{
    QByteArray target(qsizetype(size > 0 ? size : PATH_MAX) + 1, Qt::Uninitialized);
    const ssize_t n = ::readlinkat(dirFd, name.constData(), target.data(), size_t(target.size()));
    target.resize(n < 0 ? 0 : n);
    return target;
}

bool regularOrDirOrLink(mode_t m)
{
    return S_ISREG(m) || S_ISDIR(m) || S_ISLNK(m);
}

} // namespace

TreeWatch::~TreeWatch() = default;

QList<PathChange> diffPathStates(const PathStates &before, const PathStates &after)
{
    QList<PathChange> out;
    auto a = before.cbegin();
    auto b = after.cbegin();
    while (a != before.cend() || b != after.cend()) {
        if (b == after.cend() || (a != before.cend() && a.key() < b.key())) {
            out.append({a.key(), *a, std::nullopt});
            ++a;
        } else if (a == before.cend() || b.key() < a.key()) {
            out.append({b.key(), std::nullopt, *b});
            ++b;
        } else {
            if (!(*a == *b))
                out.append({a.key(), *a, *b});
            ++a;
            ++b;
        }
    }
    return out;
}

// ---- by listing ---------------------------------------------------------------------------

ListingTreeWatch::ListingTreeWatch(std::function<PathStates()> list) : m_list(std::move(list))
{
    m_known = m_list();
}

ListingTreeWatch::~ListingTreeWatch() = default;

QList<PathChange> ListingTreeWatch::drain()
{
    QMutexLocker lock(&m_mutex);
    PathStates fresh;
    try {
        fresh = m_list();
    } catch (const SandboxError &) {
        return {}; // the next drain that can list sees the changes
    }
    QList<PathChange> out = diffPathStates(m_known, fresh);
    m_known = std::move(fresh);
    return out;
}

void ListingTreeWatch::reset()
{
    drain();
}

qsizetype ListingTreeWatch::knownPaths() const
{
    QMutexLocker lock(&m_mutex);
    return m_known.size();
}

// ---- inotify ------------------------------------------------------------------------------

InotifyTreeWatch::InotifyTreeWatch(int rootFd, int maxWatches) : m_maxWatches(maxWatches)
{
    m_root.reset(::fcntl(rootFd, F_DUPFD_CLOEXEC, 0));
    if (!m_root.isValid())
        throwOsError(errno, QStringLiteral("cannot watch the workspace"), QStringLiteral("."));
    m_inotify.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    QMutexLocker lock(&m_mutex);
    walk(QByteArray(), m_known, m_inotify.isValid());
}

InotifyTreeWatch::~InotifyTreeWatch() = default;

bool InotifyTreeWatch::watching() const
{
    QMutexLocker lock(&m_mutex);
    return m_inotify.isValid() && !m_overBound;
}

int InotifyTreeWatch::watchCount() const
{
    QMutexLocker lock(&m_mutex);
    return int(m_watches.size());
}

qsizetype InotifyTreeWatch::knownPaths() const
{
    QMutexLocker lock(&m_mutex);
    return m_known.size();
}

void InotifyTreeWatch::addWatch(const QByteArray &rel)
{
    if (!m_inotify.isValid() || m_overBound)
        return;
    if (m_watches.size() >= m_maxWatches) {
        // Beyond the bound: no watch at all (a partial one would miss changes), walks instead.
        m_overBound = true;
        m_inotify.reset();
        m_watches.clear();
        return;
    }
    const UniqueFd fd = openConfined(m_root.get(), rel, O_PATH | O_DIRECTORY, ConfinedLinks::None);
    if (!fd.isValid())
        return; // gone again: its parent's events say so
    // The magic link names exactly the folder opened beneath the root (no path is looked up).
    const QByteArray proc = "/proc/self/fd/" + QByteArray::number(fd.get());
    const int wd = ::inotify_add_watch(m_inotify.get(), proc.constData(), WatchMask);
    if (wd < 0) {
        if (errno == ENOSPC) { // the user's inotify watch limit
            m_overBound = true;
            m_inotify.reset();
            m_watches.clear();
        } else if (errno != ENOENT) {
            m_blind = true; // changes in it would go unseen
        }
        return;
    }
    m_watches.insert(wd, rel);
}

void InotifyTreeWatch::walk(const QByteArray &from, Known &into, bool addWatches)
{
    std::vector<QByteArray> pending{from};
    while (!pending.empty()) {
        const QByteArray dirRel = std::move(pending.back());
        pending.pop_back();
        if (dirRel.count('/') >= MaxTreeDepth) {
            m_blind = true;
            continue;
        }
        UniqueFd dirFd =
            openConfined(m_root.get(), dirRel, O_RDONLY | O_DIRECTORY, ConfinedLinks::None);
        if (!dirFd.isValid()) {
            if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
                m_blind = true; // unreadable: neither listed nor watched
            continue;
        }
        if (addWatches)
            addWatch(dirRel);
        DIR *dir = ::fdopendir(dirFd.release());
        if (!dir)
            continue;
        const int fd = ::dirfd(dir);
        while (const dirent *e = ::readdir(dir)) {
            const char *n = e->d_name;
            if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
                continue;
            const QByteArray name(n);
            if (isStaleTempName(name))
                continue;
            struct stat st;
            if (::fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) != 0 || !regularOrDirOrLink(st.st_mode))
                continue;
            const QByteArray rel = joinRelative(dirRel, name);
            PathState s = stateOf(st);
            if (S_ISLNK(st.st_mode))
                s.target = linkText(fd, name, st.st_size);
            into.insert(rel, s);
            if (S_ISREG(st.st_mode) && st.st_nlink > 1)
                m_linked.insert(rel);
            if (S_ISDIR(st.st_mode))
                pending.push_back(rel);
        }
        ::closedir(dir);
    }
}

std::optional<PathState> InotifyTreeWatch::statPath(const QByteArray &rel) const
{
    const qsizetype slash = rel.lastIndexOf('/');
    const QByteArray dir = slash < 0 ? QByteArray() : rel.left(slash);
    const QByteArray name = slash < 0 ? rel : rel.mid(slash + 1);
    const UniqueFd parent =
        openConfined(m_root.get(), dir, O_PATH | O_DIRECTORY, ConfinedLinks::None);
    struct stat st;
    if (!parent.isValid() ||
        ::fstatat(parent.get(), name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !regularOrDirOrLink(st.st_mode))
        return std::nullopt;
    PathState s = stateOf(st);
    if (S_ISLNK(st.st_mode))
        s.target = linkText(parent.get(), name, st.st_size);
    return s;
}

QList<PathChange> InotifyTreeWatch::rescan()
{
    if (m_inotify.isValid()) { // what is queued is covered by the walk
        char buf[16384];
        while (::read(m_inotify.get(), buf, sizeof buf) > 0) {
        }
    }
    Known fresh;
    m_vouch = false; // the walk sees metadata only
    m_touched.clear();
    m_linked.clear();
    m_blind = false;
    walk(QByteArray(), fresh, m_inotify.isValid() && !m_overBound);
    QList<PathChange> out = diffPathStates(m_known, fresh);
    m_known = std::move(fresh);
    return out;
}

void InotifyTreeWatch::touch(const QByteArray &path)
{
    if (!m_vouch)
        return;
    m_touched.insert(path);
    if (m_touched.size() > MaxTouched) {
        m_touched.clear();
        m_vouch = false;
    }
}

std::optional<QSet<QByteArray>> InotifyTreeWatch::takeTouched()
{
    QMutexLocker lock(&m_mutex);
    std::optional<QSet<QByteArray>> out;
    if (m_vouch && !m_blind && m_inotify.isValid() && !m_overBound &&
        m_linked.size() <= MaxTouched) {
        out = std::move(m_touched);
        out->unite(m_linked);
    }
    m_touched = {};
    m_vouch = true;
    return out;
}

void InotifyTreeWatch::reset()
{
    QMutexLocker lock(&m_mutex);
    rescan();
}

QList<PathChange> InotifyTreeWatch::drain()
{
    QMutexLocker lock(&m_mutex);
    if (!m_inotify.isValid() || m_overBound)
        return rescan();
    QSet<QByteArray> dirty;
    QSet<QByteArray> madeDirs; // a folder made or moved in: walked even when its inode is reused
    alignas(struct inotify_event) char buf[65536];
    for (;;) {
        const ssize_t n = ::read(m_inotify.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t at = 0; at < n;) {
            const auto *ev = reinterpret_cast<const struct inotify_event *>(buf + at);
            at += ssize_t(sizeof(struct inotify_event)) + ev->len;
            if (ev->mask & IN_Q_OVERFLOW)
                return rescan();
            if (ev->mask & IN_IGNORED) {
                m_watches.remove(ev->wd);
                continue;
            }
            const auto it = m_watches.constFind(ev->wd);
            if (it == m_watches.constEnd())
                continue;
            const QByteArray name = ev->len ? QByteArray(ev->name) : QByteArray();
            if (!name.isEmpty() && isStaleTempName(name))
                continue;
            const QByteArray path = name.isEmpty() ? *it : joinRelative(*it, name);
            if (path.isEmpty())
                continue;
            dirty.insert(path);
            if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO)))
                madeDirs.insert(path);
        }
    }
    QList<QByteArray> paths(dirty.cbegin(), dirty.cend());
    std::sort(paths.begin(), paths.end());
    QList<PathChange> out;
    for (const QByteArray &p : std::as_const(paths)) {
        touch(p);
        const std::optional<PathState> now = statPath(p);
        const auto known = m_known.constFind(p);
        const std::optional<PathState> before =
            known == m_known.constEnd() ? std::nullopt : std::optional(*known);
        const bool wasDir = before && before->type == TreeEntry::Type::Dir;
        const bool isDir = now && now->type == TreeEntry::Type::Dir;
        // made again under the same inode (a file system that reuses them): another folder
        const bool remade = wasDir && isDir && madeDirs.contains(p);
        if (before == now && !remade)
            continue;
        if (!(before == now))
            out.append({p, before, now});
        if (now)
            m_known.insert(p, *now);
        else
            m_known.remove(p);
        if (now && now->type == TreeEntry::Type::File && now->links > 1)
            m_linked.insert(p);
        else
            m_linked.remove(p);
        if (wasDir && (!isDir || before->ino != now->ino || remade)) {
            // the folder went (or another took its name): everything known beneath it went
            const QByteArray prefix = p + '/';
            for (auto it = m_known.lowerBound(prefix);
                 it != m_known.end() && it.key().startsWith(prefix);) {
                out.append({it.key(), *it, std::nullopt});
                touch(it.key());
                m_linked.remove(it.key());
                it = m_known.erase(it);
            }
        }
        if (isDir && (!wasDir || before->ino != now->ino || remade)) {
            // created or moved in: all of it is new here (and watched from now on)
            Known sub;
            walk(p, sub, true);
            for (auto it = sub.cbegin(); it != sub.cend(); ++it) {
                touch(it.key());
                const auto old = m_known.constFind(it.key());
                const std::optional<PathState> was =
                    old == m_known.constEnd() ? std::nullopt : std::optional(*old);
                if (was != std::optional(*it))
                    out.append({it.key(), was, *it});
                m_known.insert(it.key(), *it);
            }
        }
    }
    return out; // past the bound now (a walk above added too many): the next drain walks
}

} // namespace elsai
