// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "treesnapshot.h"

#include "atomicwrite.h"
#include "checkpointstore.h"
#include "confinedopen.h"
#include "errors.h"
#include "faultinjection.h"
#include "tempfiles.h"
#include "treecopy.h"
#include "workspacefs.h"

#include <QCryptographicHash>

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

constexpr int MaxDepth = 256;
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

QByteArray join(const QByteArray &dir, const QByteArray &name)
{
    return dir.isEmpty() ? name : dir + '/' + name;
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

} // namespace

TreeManifest captureTree(int rootFd, const CaptureOptions &options)
{
    const qint64 walkStart = realtimeNs();
    TreeManifest m;
    // Pre-order, each folder's names in byte order: the entries come out in pathLess() order,
    // so the tree is never sorted as a whole. One fd per level (at most MaxDepth).
    struct Frame
    {
        UniqueFd fd;
        QByteArray rel;
        QByteArrayList names;
        qsizetype next = 0;
    };
    std::vector<Frame> stack;
    const auto enter = [&](int parentFd, const QByteArray &name, const QByteArray &rel) {
        if (stack.size() >= size_t(MaxDepth))
            throw OSError(QStringLiteral("cannot checkpoint '%1': folders nested deeper than %2 "
                                         "levels")
                              .arg(shown(rel))
                              .arg(MaxDepth),
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
    enter(rootFd, QByteArray(), QByteArray());
    while (!stack.empty()) {
        Frame &top = stack.back();
        if (top.next >= top.names.size()) {
            stack.pop_back();
            continue;
        }
        const QByteArray name = top.names.at(top.next++);
        const int dirFd = top.fd.get();
        const QByteArray rel = join(top.rel, name);
        struct stat st;
        if (::fstatat(dirFd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                continue;
            throwOsError(errno, QStringLiteral("cannot read for a checkpoint"), shown(rel));
        }
        TreeEntry e;
        e.path = rel;
        e.mode = st.st_mode & 01777;
        if (S_ISDIR(st.st_mode)) {
            e.type = TreeEntry::Type::Dir;
            m.entries.push_back(std::move(e));
            enter(dirFd, name, rel); // `top` is not used past this point
            continue;
        }
        if (S_ISREG(st.st_mode)) {
            e.type = TreeEntry::Type::File;
            e.size = st.st_size;
            e.stamp = stampOf(st);
            e.hash = hashFile(dirFd, name, rel, e, options, walkStart);
            if (e.hash.isEmpty())
                continue;
        } else if (S_ISLNK(st.st_mode)) {
            e.type = TreeEntry::Type::Symlink;
            e.mode = 0777;
            QByteArray target(qsizetype(st.st_size > 0 ? st.st_size : PATH_MAX) + 1,
                              Qt::Uninitialized);
            const ssize_t n =
                ::readlinkat(dirFd, name.constData(), target.data(), size_t(target.size()));
            if (n < 0) {
                if (errno == ENOENT || errno == EINVAL)
                    continue;
                throwOsError(errno, QStringLiteral("cannot read the link for a checkpoint"),
                             shown(rel));
            }
            target.resize(n);
            e.target = target;
            e.size = n;
        } else {
            m.skipped.append(QString::fromUtf8(rel));
            continue;
        }
        m.entries.push_back(std::move(e));
    }
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
            const int fd = parent.open(dir);
            const QByteArray temp = atomicTempName(name);
            if (::symlinkat(e.target.constData(), fd, temp.constData()) != 0)
                throwOsError(errno, QStringLiteral("cannot restore the link"), shown(e.path));
            ELSAI_FAULT_POINT("symlink");
            if (::renameat(fd, temp.constData(), fd, name.constData()) != 0) {
                const int err = errno;
                ::unlinkat(fd, temp.constData(), 0);
                throwOsError(err, QStringLiteral("cannot restore the link"), shown(e.path));
            }
            ELSAI_FAULT_POINT("rename");
            ++result.linked;
            break;
        }
        }
    }
    parent.forget();

    // 3. Folder modes last (a read-only folder is filled first), deepest first.
    for (auto it = target.entries.rbegin(); it != target.entries.rend(); ++it) {
        if (it->type == TreeEntry::Type::Dir &&
            chmodFolder(rootFd, it->path, mode_t(it->mode & 01777), true)) {
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
