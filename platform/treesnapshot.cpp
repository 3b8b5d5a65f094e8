// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "treesnapshot.h"

#include "atomicwrite.h"
#include "checkpointstore.h"
#include "confinedopen.h"
#include "errors.h"
#include "faultinjection.h"
#include "parallel.h"
#include "tempfiles.h"
#include "treecopy.h"
#include "treepaths.h"
#include "workspacefs.h"

#include <QCryptographicHash>
#include <QSet>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace elsai {

// ---- the hash cache -------------------------------------------------------------------------

QByteArray TreeHashCache::lookup(const FileStampKey &key, qint64 walkStartNs) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_hashes.constFind(key);
    if (it == m_hashes.constEnd())
        return {};
    if (!it->written &&
        (key.ctimeNs >= walkStartNs - RacyWindowNs || key.mtimeNs >= walkStartNs - RacyWindowNs))
        return {};
    return it->hash;
}

void TreeHashCache::insert(const FileStampKey &key, const QByteArray &hash)
{
    QMutexLocker lock(&m_mutex);
    if (m_hashes.size() >= MaxEntries)
        m_hashes.clear();
    m_hashes.insert(key, {hash, false});
}

void TreeHashCache::insert(const TreeManifest &manifest)
{
    QMutexLocker lock(&m_mutex);
    if (m_hashes.size() + qsizetype(manifest.entries.size()) >= MaxEntries)
        m_hashes.clear();
    for (const TreeEntry &e : manifest.entries) {
        if (e.type == TreeEntry::Type::File && !e.hash.isEmpty())
            m_hashes.insert(e.stamp, {e.hash, false});
    }
}

void TreeHashCache::insertWritten(const FileStampKey &key, const QByteArray &hash)
{
    QMutexLocker lock(&m_mutex);
    if (m_hashes.size() >= MaxEntries)
        m_hashes.clear();
    m_hashes.insert(key, {hash, true});
}

qsizetype TreeHashCache::size() const
{
    QMutexLocker lock(&m_mutex);
    return m_hashes.size();
}

// ---- capture --------------------------------------------------------------------------------

namespace {

/// Files up to this size are read into memory once (hash and blob from one buffer); larger
/// ones are streamed.
constexpr qint64 WholeReadBytes = 8 * 1024 * 1024;

FileStampKey stampOf(const struct stat &st)
{
    return {quint64(st.st_dev), quint64(st.st_ino), qint64(st.st_size),
            qint64(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
            qint64(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
}

qint64 realtimeNs()
{
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

QString shown(const QByteArray &rel)
{
    return rel.isEmpty() ? QStringLiteral(".") : QString::fromUtf8(rel);
}

std::pair<QByteArray, QByteArray> splitParent(const QByteArray &rel)
{
    const qsizetype slash = rel.lastIndexOf('/');
    return slash < 0 ? std::pair{QByteArray(), rel}
                     : std::pair{rel.left(slash), rel.mid(slash + 1)};
}

/// Reads all of `fd` (at most `size` bytes, the size fstat gave).
bool readAllFd(int fd, qint64 size, QByteArray *out)
{
    out->resize(size);
    qint64 done = 0;
    while (done < size) {
        const ssize_t r = ::read(fd, out->data() + done, size_t(size - done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return false;
        if (r == 0)
            break;
        done += r;
    }
    out->resize(done);
    return true;
}

/// The hash of one file, its content stored when asked. Empty when it vanished or is no longer
/// a regular file.
QByteArray hashFile(int dirFd, const QByteArray &name, const QByteArray &rel, TreeEntry &entry,
                    const CaptureOptions &options, qint64 walkStart)
{
    if (options.cache) {
        const QByteArray cached = options.cache->lookup(entry.stamp, walkStart);
        if (!cached.isEmpty() && (!options.store || options.store->hasBlob(cached, entry.size)))
            return cached;
    }
    const UniqueFd fd(::openat(dirFd, name.constData(),
                               O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd.isValid()) {
        if (errno == ENOENT || errno == ELOOP)
            return {}; // gone, or replaced by a link, since the listing
        throwOsError(errno, QStringLiteral("cannot read for a checkpoint"), shown(rel));
    }
    QByteArray hash;
    // A file written while it is read is read again (a few times): the hash is of one state.
    for (int attempt = 0; attempt < 3; ++attempt) {
        struct stat before;
        if (::fstat(fd.get(), &before) != 0 || !S_ISREG(before.st_mode))
            return {};
        entry.stamp = stampOf(before);
        entry.size = before.st_size;
        entry.mode = before.st_mode & 01777;
        if (::lseek(fd.get(), 0, SEEK_SET) != 0)
            throwOsError(errno, QStringLiteral("cannot read for a checkpoint"), shown(rel));
        if (before.st_size <= WholeReadBytes) {
            QByteArray data;
            if (!readAllFd(fd.get(), before.st_size, &data))
                throwOsError(errno, QStringLiteral("cannot read for a checkpoint"), shown(rel));
            entry.size = data.size();
            hash = contentHash(data);
            if (options.store)
                options.store->addBlob(hash, data);
        } else if (options.store) {
            hash = options.store->addBlobFromFd(fd.get(), before.st_size, &entry.size);
        } else {
            QCryptographicHash h(QCryptographicHash::Blake2b_256);
            QByteArray chunk(1 << 20, Qt::Uninitialized);
            qint64 total = 0;
            for (;;) {
                const ssize_t r = ::read(fd.get(), chunk.data(), size_t(chunk.size()));
                if (r < 0 && errno == EINTR)
                    continue;
                if (r < 0)
                    throwOsError(errno, QStringLiteral("cannot read for a checkpoint"), shown(rel));
                if (r == 0)
                    break;
                h.addData(QByteArrayView(chunk.constData(), r));
                total += r;
            }
            entry.size = total;
            hash = h.result();
        }
        struct stat after;
        if (::fstat(fd.get(), &after) == 0 && stampOf(after) == entry.stamp) {
            if (options.cache)
                options.cache->insert(entry.stamp, hash);
            return hash;
        }
    }
    return hash; // still changing: the last read is what the checkpoint holds
}

/// The entry of what `st` describes (the lstat of `name` in `dirFd`): a folder, a symlink with
/// its text, or a file with its hash when the cache knows it and the store has its content
/// (else none yet: hashFile()). None for a special file or a link that vanished.
std::optional<TreeEntry> entryOf(int dirFd, const QByteArray &name, const QByteArray &rel,
                                 const struct stat &st, const CaptureOptions &options,
                                 qint64 walkStart)
{
    TreeEntry e;
    e.path = rel;
    e.mode = st.st_mode & 01777;
    e.stamp = stampOf(st); // a folder's too: an incremental capture tells folders apart by it
    if (S_ISDIR(st.st_mode)) {
        e.type = TreeEntry::Type::Dir;
    } else if (S_ISREG(st.st_mode)) {
        e.type = TreeEntry::Type::File;
        e.size = st.st_size;
        if (options.cache) {
            const QByteArray cached = options.cache->lookup(e.stamp, walkStart);
            if (!cached.isEmpty() && (!options.store || options.store->hasBlob(cached, e.size)))
                e.hash = cached;
        }
    } else if (S_ISLNK(st.st_mode)) {
        e.type = TreeEntry::Type::Symlink;
        e.mode = 0777;
        e.stamp = {};
        QByteArray target(qsizetype(st.st_size > 0 ? st.st_size : PATH_MAX) + 1, Qt::Uninitialized);
        const ssize_t n =
            ::readlinkat(dirFd, name.constData(), target.data(), size_t(target.size()));
        if (n < 0) {
            if (errno == ENOENT || errno == EINVAL)
                return std::nullopt;
            throwOsError(errno, QStringLiteral("cannot read the link for a checkpoint"),
                         shown(rel));
        }
        target.resize(n);
        e.target = target;
        e.size = n;
    } else {
        return std::nullopt;
    }
    return e;
}

/// Files of a capture still to hash: indexes into its entries, in walk order.
using Pending = std::vector<size_t>;

/// Appends what the folder `startRel` beneath `rootFd` holds (not the folder itself) to `m`, in
/// pathLess() order: folders, links, and files with their hash when the cache knows it (and the
/// store has the content), else with none and their index in `pending`. `depth`: the levels of
/// `startRel`. Pre-order, each folder's names in byte order, so the tree is never sorted as a
/// whole; one fd per level (at most MaxTreeDepth).
void walkInto(int rootFd, const QByteArray &startRel, int depth, TreeManifest &m, Pending &pending,
              const CaptureOptions &options, qint64 walkStart)
{
    struct Frame
    {
        UniqueFd fd;
        QByteArray rel;
        QByteArrayList names;
        qsizetype next = 0;
    };
    std::vector<Frame> stack;
    const auto enter = [&](int parentFd, const QByteArray &name, const QByteArray &rel) {
        if (int(stack.size()) + depth >= MaxTreeDepth)
            throw OSError(QStringLiteral("cannot checkpoint '%1': folders nested deeper than %2 "
                                         "levels")
                              .arg(shown(rel))
                              .arg(MaxTreeDepth),
                          ENAMETOOLONG);
        UniqueFd fd = openConfined(parentFd, name, O_RDONLY | O_DIRECTORY, ConfinedLinks::None);
        if (!fd.isValid()) {
            if (!rel.isEmpty() && (errno == ENOENT || errno == ELOOP || errno == ENOTDIR))
                return; // replaced since it was listed: its entry is what it was then
            throwOsError(errno, QStringLiteral("cannot read the folder for a checkpoint"),
                         shown(rel));
        }
        DIR *dir = ::fdopendir(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
        if (!dir)
            throwOsError(errno, QStringLiteral("cannot read the folder for a checkpoint"),
                         shown(rel));
        QByteArrayList names;
        for (;;) {
            errno = 0;
            const dirent *e = ::readdir(dir);
            if (!e)
                break;
            const char *n = e->d_name;
            if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
                continue;
            if (!isStaleTempName(QByteArrayView(n)))
                names.append(QByteArray(n)); // an atomic write's temp: its target counts
        }
        const int readErrno = errno;
        ::closedir(dir);
        if (readErrno)
            throwOsError(readErrno, QStringLiteral("cannot read the folder for a checkpoint"),
                         shown(rel));
        std::sort(names.begin(), names.end());
        stack.push_back({std::move(fd), rel, std::move(names), 0});
    };
    enter(rootFd, startRel, startRel);
    while (!stack.empty()) {
        Frame &top = stack.back();
        if (top.next >= top.names.size()) {
            stack.pop_back();
            continue;
        }
        const QByteArray name = top.names.at(top.next++);
        const int dirFd = top.fd.get();
        const QByteArray rel = joinRelative(top.rel, name);
        struct stat st;
        if (::fstatat(dirFd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                continue;
            throwOsError(errno, QStringLiteral("cannot read for a checkpoint"), shown(rel));
        }
        std::optional<TreeEntry> e = entryOf(dirFd, name, rel, st, options, walkStart);
        if (!e) {
            m.skipped.append(QString::fromUtf8(rel));
            continue;
        }
        if (e->type == TreeEntry::Type::File && e->hash.isEmpty())
            pending.push_back(m.entries.size());
        const bool isDir = e->type == TreeEntry::Type::Dir;
        m.entries.push_back(std::move(*e));
        if (isDir)
            enter(dirFd, name, rel); // `top` is not used past this point
    }
}

/// Hashes (and stores) the pending files on several threads (parallel.h), a chunk of one
/// folder's files at a time. A file that vanished keeps no hash (dropVanished()). Throws the
/// first failure.
void hashPending(int rootFd, std::vector<TreeEntry> &entries, const Pending &pending,
                 const CaptureOptions &options, qint64 walkStart)
{
    struct Chunk
    {
        QByteArray parent;
        size_t first, last; // into `pending`
    };
    std::vector<Chunk> chunks;
    for (size_t i = 0; i < pending.size();) {
        const QByteArray parent = splitParent(entries[pending[i]].path).first;
        size_t j = i + 1;
        while (j < pending.size() && j - i < size_t(kFilesPerThread) &&
               splitParent(entries[pending[j]].path).first == parent)
            ++j;
        chunks.push_back({parent, i, j});
        i = j;
    }
    std::mutex failMutex;
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
    runParallel(int(chunks.size()), int(pending.size()), {}, [&](int unit, std::atomic<int> &done) {
        const Chunk &c = chunks[size_t(unit)];
        done.fetch_add(int(c.last - c.first), std::memory_order_relaxed);
        if (failed.load(std::memory_order_relaxed))
            return;
        try {
            const UniqueFd dir =
                openConfined(rootFd, c.parent, O_PATH | O_DIRECTORY, ConfinedLinks::None);
            if (!dir.isValid()) {
                if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
                    return; // gone since the listing, with its files
                throwOsError(errno, QStringLiteral("cannot read the folder for a checkpoint"),
                             shown(c.parent));
            }
            for (size_t i = c.first; i < c.last; ++i) {
                TreeEntry &e = entries[pending[i]];
                e.hash =
                    hashFile(dir.get(), splitParent(e.path).second, e.path, e, options, walkStart);
            }
        } catch (...) {
            const std::lock_guard lock(failMutex);
            if (!failure)
                failure = std::current_exception();
            failed.store(true, std::memory_order_relaxed);
        }
    });
    if (failure)
        std::rethrow_exception(failure);
}

/// Removes the files that vanished before they were read (no hash).
void dropVanished(std::vector<TreeEntry> &entries)
{
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const TreeEntry &e) {
                                     return e.type == TreeEntry::Type::File && e.hash.isEmpty();
                                 }),
                  entries.end());
}

/// captureTree() from options.base and the touched paths only.
std::optional<TreeManifest> captureChanged(int rootFd, const CaptureOptions &options)
{
    const qint64 walkStart = realtimeNs();
    const TreeManifest &base = *options.base;
    QByteArrayList paths(options.touched->cbegin(), options.touched->cend());
    std::sort(paths.begin(), paths.end(), pathLess);

    // 1. The state now of each touched path, and all of a folder that is not the one `base`
    //    has there (new, or another in its place): `fresh`, in pathLess() order, one range per
    //    path.
    struct Override
    {
        QByteArray path;
        size_t first = 0, last = 0; // into fresh.entries
        bool dropBeneath = false;   // what `base` has beneath the path goes
    };
    TreeManifest fresh;
    Pending unused;
    std::vector<Override> overrides;
    QSet<QByteArray> freshDirs;
    QByteArray covered; // a folder walked or gone whole: the touched paths beneath it are done
    for (const QByteArray &p : std::as_const(paths)) {
        if (p.isEmpty())
            continue; // the root itself: not an entry
        if (!covered.isEmpty() && p.size() > covered.size() && p.startsWith(covered) &&
            p.at(covered.size()) == '/')
            continue;
        const TreeEntry *was = base.find(p);
        const bool wasDir = was && was->type == TreeEntry::Type::Dir;
        const auto [dir, name] = splitParent(p);
        Override o{p, fresh.entries.size(), 0, wasDir};
        struct stat st;
        bool there = false;
        if (!isStaleTempName(name)) {
            const UniqueFd parent =
                openConfined(rootFd, dir, O_PATH | O_DIRECTORY, ConfinedLinks::None);
            if (parent.isValid()) {
                there = ::fstatat(parent.get(), name.constData(), &st, AT_SYMLINK_NOFOLLOW) == 0;
                if (!there && errno != ENOENT)
                    throwOsError(errno, QStringLiteral("cannot read for a checkpoint"), shown(p));
                if (there) {
                    const TreeEntry *pe = dir.isEmpty() ? nullptr : base.find(dir);
                    if (!dir.isEmpty() && !freshDirs.contains(dir) &&
                        !(pe && pe->type == TreeEntry::Type::Dir))
                        return std::nullopt; // its folder is not known: the watch missed it
                }
                if (there) {
                    std::optional<TreeEntry> e =
                        entryOf(parent.get(), name, p, st, options, walkStart);
                    if (!e) {
                        fresh.skipped.append(QString::fromUtf8(p));
                    } else if (e->type == TreeEntry::Type::Dir) {
                        const bool same = wasDir && was->stamp.ino != 0 &&
                                          was->stamp.dev == e->stamp.dev &&
                                          was->stamp.ino == e->stamp.ino;
                        fresh.entries.push_back(std::move(*e));
                        freshDirs.insert(p);
                        o.dropBeneath = !same;
                        if (!same) // new here: all of it
                            walkInto(rootFd, p, int(p.count('/')) + 1, fresh, unused, options,
                                     walkStart);
                    } else {
                        fresh.entries.push_back(std::move(*e));
                    }
                }
            } else if (errno != ENOENT && errno != ELOOP && errno != ENOTDIR) {
                throwOsError(errno, QStringLiteral("cannot read the folder for a checkpoint"),
                             shown(dir));
            }
        }
        if (o.dropBeneath)
            covered = p;
        o.last = fresh.entries.size();
        overrides.push_back(std::move(o));
    }

    // 2. `base` with those ranges in place of what it has there; the files without a hash
    //    (not in the cache, or their content is not in the store) are read.
    TreeManifest out;
    out.entries.reserve(base.entries.size() + fresh.entries.size());
    Pending pending;
    const auto append = [&](const TreeEntry &e) {
        out.entries.push_back(e);
        TreeEntry &added = out.entries.back();
        if (added.type != TreeEntry::Type::File)
            return;
        if (!added.hash.isEmpty() && options.store &&
            !options.store->hasBlob(added.hash, added.size))
            added.hash.clear(); // collected since (or never stored): read it again
        if (added.hash.isEmpty())
            pending.push_back(out.entries.size() - 1);
    };
    const std::vector<TreeEntry> &b = base.entries;
    size_t i = 0;
    for (const Override &o : overrides) {
        while (i < b.size() && pathLess(b[i].path, o.path))
            append(b[i++]);
        if (i < b.size() && b[i].path == o.path)
            ++i;
        if (o.dropBeneath) {
            const QByteArray prefix = o.path + '/';
            while (i < b.size() && b[i].path.startsWith(prefix))
                ++i;
        }
        for (size_t k = o.first; k < o.last; ++k)
            append(fresh.entries[k]);
    }
    while (i < b.size())
        append(b[i++]);
    hashPending(rootFd, out.entries, pending, options, walkStart);
    dropVanished(out.entries);

    // 3. The special files: those of `base` no touched path replaced, and the new ones.
    for (const QString &s : base.skipped) {
        const QByteArray rel = s.toUtf8();
        bool gone = options.touched->contains(rel);
        for (const Override &o : overrides) {
            if (gone)
                break;
            gone = o.dropBeneath && rel.startsWith(o.path + '/');
        }
        if (!gone)
            out.skipped.append(s);
    }
    out.skipped += fresh.skipped;
    return out;
}

} // namespace

TreeManifest captureTree(int rootFd, const CaptureOptions &options)
{
    if (options.walkedWhole)
        *options.walkedWhole = false;
    if (options.base && options.touched) {
        if (auto m = captureChanged(rootFd, options))
            return std::move(*m);
    }
    if (options.walkedWhole)
        *options.walkedWhole = true;
    const qint64 walkStart = realtimeNs();
    TreeManifest m;
    Pending pending;
    walkInto(rootFd, QByteArray(), 0, m, pending, options, walkStart);
    hashPending(rootFd, m.entries, pending, options, walkStart);
    dropVanished(m.entries);
    return m;
}

// ---- apply ----------------------------------------------------------------------------------

namespace {

/// The folder of the entries being handled, opened once for a run of siblings.
class ParentFolder
{
public:
    explicit ParentFolder(int rootFd) : m_rootFd(rootFd) {}
    int open(const QByteArray &rel)
    {
        if (m_fd.isValid() && rel == m_rel)
            return m_fd.get();
        m_fd = openConfined(m_rootFd, rel, O_RDONLY | O_DIRECTORY, ConfinedLinks::None);
        if (!m_fd.isValid())
            throwOsError(errno, QStringLiteral("cannot open the folder to restore into"),
                         shown(rel));
        m_rel = rel;
        return m_fd.get();
    }
    void forget() { m_fd.reset(); }

private:
    int m_rootFd;
    QByteArray m_rel;
    UniqueFd m_fd;
};

/// chmod of a folder without following a link: opened O_PATH|O_NOFOLLOW, changed through its
/// /proc/self/fd entry (fchmod refuses an O_PATH fd; the folder may have no read permission).
bool chmodFolder(int rootFd, const QByteArray &rel, mode_t mode, bool onlyIfDifferent)
{
    const UniqueFd fd = openConfined(rootFd, rel, O_PATH | O_DIRECTORY, ConfinedLinks::None);
    if (!fd.isValid())
        throwOsError(errno, QStringLiteral("cannot open the folder to restore its mode"),
                     shown(rel));
    struct stat st;
    if (onlyIfDifferent && ::fstat(fd.get(), &st) == 0 && (st.st_mode & 07777) == mode)
        return false;
    const QByteArray proc = "/proc/self/fd/" + QByteArray::number(fd.get());
    if (::chmod(proc.constData(), mode) != 0)
        throwOsError(errno, QStringLiteral("cannot restore the folder's mode"), shown(rel));
    return true;
}

} // namespace

ApplyResult applyTree(int rootFd, const TreeManifest &current, const TreeManifest &target,
                      const CheckpointStore &store, TreeHashCache *cache)
{
    ApplyResult result;
    const std::vector<TreeChange> changes = diffManifests(current, target);
    ParentFolder parent(rootFd);

    // 1. Removals, deepest first (the list is sorted, a folder before its contents).
    for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
        if (it->kind != TreeChange::Kind::Deleted)
            continue;
        const auto [dir, name] = splitParent(it->path);
        const int fd = parent.open(dir);
        if (it->from->type == TreeEntry::Type::Dir) {
            struct stat st;
            if (::fstatat(fd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISDIR(st.st_mode)) {
                removeTreeAt(fd, name, shown(it->path));
            } else if (::unlinkat(fd, name.constData(), 0) != 0 && errno != ENOENT) {
                throwOsError(errno, QStringLiteral("cannot remove"), shown(it->path));
            }
        } else if (::unlinkat(fd, name.constData(), 0) != 0 && errno != ENOENT) {
            if (errno != EISDIR)
                throwOsError(errno, QStringLiteral("cannot remove"), shown(it->path));
            removeTreeAt(fd, name, shown(it->path)); // became a folder since the capture
        }
        ELSAI_FAULT_POINT("unlink");
        ++result.removed;
    }

    // 2. Folders, files and links, parents first.
    for (const TreeChange &c : changes) {
        if (c.kind == TreeChange::Kind::Deleted)
            continue;
        const TreeEntry &e = *c.to;
        const auto [dir, name] = splitParent(e.path);
        switch (e.type) {
        case TreeEntry::Type::Dir:
            if (c.kind == TreeChange::Kind::Added) {
                const int fd = parent.open(dir);
                if (::mkdirat(fd, name.constData(), 0700) != 0 && errno != EEXIST)
                    throwOsError(errno, QStringLiteral("cannot create the folder"), shown(e.path));
                ELSAI_FAULT_POINT("mkdir");
                ++result.created;
            }
            break; // its mode: step 3
        case TreeEntry::Type::File: {
            const int fd = parent.open(dir);
            const UniqueFd blob = store.openBlob(e.hash);
            AtomicWriteOptions options;
            options.createMode = 0600;
            options.exactMode = mode_t(e.mode & 01777);
            options.durable = false; // the caller's syncfs, once
            const auto fill = [&](int out) {
                qint64 copied = 0;
                if (!copyContent(blob.get(), out, e.size, &copied))
                    return false;
                if (copied != e.size) {
                    errno = EIO; // the blob is shorter than its record
                    return false;
                }
                const struct timespec times[2] = {
                    {0, UTIME_OMIT},
                    {time_t(e.stamp.mtimeNs / 1000000000), long(e.stamp.mtimeNs % 1000000000)}};
                if (e.stamp.mtimeNs > 0)
                    ::futimens(out, times);
                return true;
            };
            if (const auto err = writeAtomicAt(fd, name, fill, options))
                throwOsError(err->error, QStringLiteral("cannot restore the file"), shown(e.path));
            ++result.written;
            struct stat st;
            if (cache && ::fstatat(fd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(st.st_mode)) {
                cache->insertWritten(stampOf(st), e.hash);
            }
            break;
        }
        case TreeEntry::Type::Symlink: {
            AtomicWriteOptions options;
            options.durable = false; // the caller's syncfs, once
            if (const auto err = symlinkAtomicAt(parent.open(dir), name, e.target, options))
                throwOsError(err->error, QStringLiteral("cannot restore the link"), shown(e.path));
            ++result.linked;
            break;
        }
        }
    }
    parent.forget();

    // 3. Folder modes last (a read-only folder is filled first), deepest first: of the folders
    //    made and of those whose mode differs (the others' are right already).
    for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
        if (it->kind != TreeChange::Kind::Deleted && it->to->type == TreeEntry::Type::Dir &&
            chmodFolder(rootFd, it->path, mode_t(it->to->mode & 01777), true)) {
            ++result.modes;
        }
    }
    return result;
}

QByteArray treeDigest(const TreeManifest &m)
{
    QCryptographicHash h(QCryptographicHash::Blake2b_256);
    for (const TreeEntry &e : m.entries) {
        h.addData(QByteArrayView(&reinterpret_cast<const char &>(e.type), 1));
        h.addData(e.path);
        h.addData(QByteArrayView("\0", 1));
        h.addData(QByteArray::number(e.mode, 8));
        h.addData(QByteArrayView("\0", 1));
        h.addData(e.type == TreeEntry::Type::Symlink ? e.target : e.hash);
        h.addData(QByteArrayView("\0", 1));
    }
    return h.result().toHex();
}

} // namespace elsai
