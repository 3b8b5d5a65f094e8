// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "confinedopen.h"

#include "faultinjection.h"

#include <QByteArrayList>

#include <atomic>
#include <cerrno>
#include <climits>
#include <deque>
#include <vector>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace elsai {

namespace {

constexpr int MaxSymlinkHops = 40;     // the kernel's MAXSYMLINKS
constexpr int MaxEagainRetries = 1000; // openat2 asks for a retry after a concurrent rename

std::atomic<bool> s_forceFallback{false};

QByteArrayList components(QByteArrayView path)
{
    QByteArrayList parts;
    for (const QByteArray &part : path.toByteArray().split('/')) {
        if (!part.isEmpty() && part != ".")
            parts.append(part);
    }
    return parts;
}

long openat2Raw(int dirFd, const char *path, int flags, ConfinedLinks links)
{
    open_how how{};
    how.flags = quint64(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    if (links == ConfinedLinks::None)
        how.resolve |= RESOLVE_NO_SYMLINKS;
    return ::syscall(SYS_openat2, dirFd, path, &how, sizeof how);
}

// What openat2(RESOLVE_BENEATH) does, for kernels without it: one component at a time with
// O_NOFOLLOW; a relative symlink target (where `links` allows one) is spliced into the rest of
// the walk, `..` pops a folder we entered. Returns 0 or an errno.
int walkBeneath(int rootFd, QByteArrayView rel, int flags, ConfinedLinks links, UniqueFd *out)
{
    if (rel.startsWith('/'))
        return EXDEV;
    std::vector<UniqueFd> entered;
    const auto current = [&] { return entered.empty() ? rootFd : entered.back().get(); };
    const QByteArrayList initial = components(rel);
    std::deque<QByteArray> todo(initial.cbegin(), initial.cend());
    int hops = 0;
    // A symlink is followed only where `links` allows it, and at most MaxSymlinkHops times.
    const auto mayFollow = [&] {
        return links == ConfinedLinks::StayBeneath && ++hops <= MaxSymlinkHops;
    };

    while (!todo.empty()) {
        const QByteArray name = todo.front();
        todo.pop_front();
        if (name == "..") {
            if (entered.empty())
                return EXDEV;
            entered.pop_back();
            continue;
        }
        UniqueFd node(::openat(current(), name.constData(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!node.isValid())
            return errno;
        struct stat st;
        if (::fstat(node.get(), &st) != 0)
            return errno;

        if (S_ISLNK(st.st_mode)) {
            if (!mayFollow())
                return ELOOP;
            QByteArray target(PATH_MAX, '\0');
            const ssize_t n = ::readlinkat(node.get(), "", target.data(), size_t(target.size()));
            if (n < 0)
                return errno;
            if (n >= target.size())
                return ENAMETOOLONG;
            target.truncate(n);
            if (target.isEmpty())
                return ENOENT;
            if (target.startsWith('/'))
                return EXDEV;
            const QByteArrayList parts = components(target);
            todo.insert(todo.begin(), parts.cbegin(), parts.cend());
            continue;
        }

        if (todo.empty()) {
            // Reopen with the caller's flags. O_NOFOLLOW catches a swap to a symlink since the
            // check above (with O_PATH it would open the link itself: checked); then the
            // component is walked again.
            UniqueFd fd(::openat(current(), name.constData(), flags | O_NOFOLLOW | O_CLOEXEC));
            const int err = fd.isValid() ? ELOOP : errno;
            struct stat now;
            if (fd.isValid()) {
                if ((flags & O_PATH) && ::fstat(fd.get(), &now) != 0)
                    return errno;
                if (!(flags & O_PATH) || !S_ISLNK(now.st_mode)) {
                    *out = std::move(fd);
                    return 0;
                }
            }
            if (::fstatat(current(), name.constData(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISLNK(now.st_mode)) {
                if (!mayFollow())
                    return ELOOP;
                todo.push_front(name); // walked again: its target is checked as any link's
                continue;
            }
            return err;
        }
        if (!S_ISDIR(st.st_mode))
            return ENOTDIR;
        entered.push_back(std::move(node));
    }

    // The folder itself, or a path that ended in `..`.
    UniqueFd fd(::openat(current(), ".", flags | O_CLOEXEC));
    if (!fd.isValid())
        return errno;
    *out = std::move(fd);
    return 0;
}

int openBeneath(int dirFd, QByteArrayView rel, int flags, ConfinedLinks links, UniqueFd *out)
{
    Q_ASSERT(!(flags & O_CREAT));
    if (!s_forceFallback.load(std::memory_order_relaxed) && confinedOpenat2Available()) {
        const QByteArray path = rel.isEmpty() ? QByteArray(".") : rel.toByteArray();
        for (int attempt = 0;; ++attempt) {
            const long fd = openat2Raw(dirFd, path.constData(), flags, links);
            if (fd >= 0) {
                out->reset(int(fd));
                return 0;
            }
            if ((errno == EAGAIN || errno == EINTR) && attempt < MaxEagainRetries)
                continue;
            if (errno != ENOSYS)
                return errno;
            break; // blocked since the probe: walk
        }
    }
    return walkBeneath(dirFd, rel, flags, links, out);
}

// Best effort: a new folder's entry reaches the disk with its parent.
void syncFolder(int dirFd)
{
    const UniqueFd readable(::openat(dirFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (readable.isValid())
        ::fsync(readable.get());
}

} // namespace

UniqueFd openConfined(int dirFd, QByteArrayView rel, int flags, ConfinedLinks links)
{
    UniqueFd fd;
    const int err = openBeneath(dirFd, rel, flags, links, &fd);
    errno = err; // after the walk's own fds are closed
    return fd;
}

UniqueFd openOrCreateConfinedDirs(int dirFd, QByteArrayView rel, int flags, ConfinedLinks links,
                                  QByteArray *failedAt)
{
    const auto fail = [&](int err, const QByteArray &where) {
        if (failedAt)
            *failedAt = where;
        errno = err;
        return UniqueFd();
    };
    UniqueFd dir;
    int err = openBeneath(dirFd, rel, flags | O_DIRECTORY, links, &dir);
    if (err == 0)
        return dir;
    if (err != ENOENT)
        return fail(err, rel.toByteArray());

    UniqueFd parent;
    QByteArray prefix;
    for (const QByteArray &part : components(rel)) {
        prefix += prefix.isEmpty() ? part : '/' + part;
        UniqueFd next;
        err = openBeneath(dirFd, prefix, O_PATH | O_DIRECTORY, links, &next);
        if (err == ENOENT) {
            const int at = parent.isValid() ? parent.get() : dirFd;
            if (::mkdirat(at, part.constData(), 0777) != 0 && errno != EEXIST)
                return fail(errno, prefix);
            ELSAI_FAULT_POINT("mkdir");
            syncFolder(at);
            err = openBeneath(dirFd, prefix, O_PATH | O_DIRECTORY, links, &next);
        }
        if (err)
            return fail(err, prefix);
        parent = std::move(next);
    }
    err = openBeneath(dirFd, rel, flags | O_DIRECTORY, links, &dir);
    if (err)
        return fail(err, rel.toByteArray());
    return dir;
}

bool confinedOpenat2Available()
{
    static const bool available = [] {
        const UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!root.isValid())
            return false;
        const long fd = openat2Raw(root.get(), ".", O_PATH | O_DIRECTORY, ConfinedLinks::None);
        if (fd < 0)
            return false;
        ::close(int(fd));
        return true;
    }();
    return available;
}

void setConfinedOpenForceFallback(bool force)
{
    s_forceFallback.store(force, std::memory_order_relaxed);
}

} // namespace elsai
