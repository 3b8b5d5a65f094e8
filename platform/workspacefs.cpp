// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "workspacefs.h"

#include "atomicwrite.h"
#include "confinedopen.h"
#include "dirlistingcache.h"
#include "errors.h"
#include "faultinjection.h"
#include "fdutil.h"
#include "inputchecks.h"

#include <QDir>
#include <QFileInfo>
#include <QScopeGuard>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

namespace {

constexpr size_t MaxRemoveDepth = 256; // remove() holds one fd per level
constexpr qsizetype MaxNameBytes = 255;
constexpr qsizetype MaxPathBytes = 4095;

// Paths can be 4 KB long; keep messages readable.
QString shown(const QString &path)
{
    constexpr qsizetype maxChars = 160;
    return path.size() <= maxChars ? path : path.left(maxChars) + QStringLiteral("...");
}

[[noreturn]] void throwResolveError(int err, const QString &what, const QString &path)
{
    if (err == EXDEV) {
        throw PermissionError(
            QStringLiteral("'%1' resolves outside the workspace (symbolic link)").arg(shown(path)),
            err);
    }
    if (err == ELOOP) {
        throw PermissionError(QStringLiteral("'%1': too many symbolic links, or a link that "
                                             "cannot be followed safely")
                                  .arg(shown(path)),
                              err);
    }
    throwOsError(err, what, shown(path));
}

// Workspace paths: symlinks are followed while they stay beneath the root.
UniqueFd resolve(int rootFd, const QByteArray &rel, int flags, const QString &what,
                 const QString &path)
{
    UniqueFd fd = openConfined(rootFd, rel, flags, ConfinedLinks::StayBeneath);
    if (!fd.isValid())
        throwResolveError(errno, what, path);
    return fd;
}

// Opens the folder `rel`, creating missing folders one at a time (see confinedopen.h).
UniqueFd openOrCreateDirs(int rootFd, const QByteArray &rel, int flags, const QString &path)
{
    QByteArray failedAt;
    UniqueFd dir =
        openOrCreateConfinedDirs(rootFd, rel, flags, ConfinedLinks::StayBeneath, &failedAt);
    if (!dir.isValid()) {
        throwResolveError(errno, QStringLiteral("cannot create folder"),
                          failedAt == rel ? path : QString::fromUtf8(failedAt));
    }
    return dir;
}

struct Entry
{
    UniqueFd parent;
    QByteArray name;
};

// The confined parent folder of `rel` (non-empty) and its last component, for the *at() calls
// that must not follow the last component.
Entry openEntry(int rootFd, const QByteArray &rel, int parentFlags, bool createParents,
                const QString &what, const QString &path)
{
    const qsizetype slash = rel.lastIndexOf('/');
    const QByteArray parentRel = slash < 0 ? QByteArray() : rel.left(slash);
    Entry entry;
    entry.name = rel.mid(slash + 1);
    if (createParents)
        entry.parent = openOrCreateDirs(rootFd, parentRel, parentFlags, path);
    else
        entry.parent = resolve(rootFd, parentRel, parentFlags | O_DIRECTORY, what, path);
    return entry;
}

FileInfo makeInfo(const QString &rel, const struct stat &st)
{
    FileInfo info;
    info.path = rel;
    info.isDir = S_ISDIR(st.st_mode);
    if (S_ISREG(st.st_mode)) {
        info.type = FileInfo::Type::File;
        info.size = st.st_size;
    } else if (S_ISDIR(st.st_mode)) {
        info.type = FileInfo::Type::Directory;
    } else if (S_ISLNK(st.st_mode)) {
        info.type = FileInfo::Type::Symlink;
    } else {
        info.type = FileInfo::Type::Other;
    }
    info.mtimeMs = qint64(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
    info.device = quint64(st.st_dev);
    info.inode = quint64(st.st_ino);
    return info;
}

// Never replaces anything when !overwrite; the fallback check is racy but stays inside the root.
int renameEntry(int fromDir, const char *from, int toDir, const char *to, bool overwrite)
{
    if (!overwrite) {
        if (renameat2(fromDir, from, toDir, to, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EINVAL && errno != ENOSYS)
            return errno;
        struct stat st;
        if (fstatat(toDir, to, &st, AT_SYMLINK_NOFOLLOW) == 0)
            return EEXIST;
    }
    return renameat(fromDir, from, toDir, to) == 0 ? 0 : errno;
}

struct DirCloser
{
    void operator()(DIR *d) const { closedir(d); }
};
using DirPtr = std::unique_ptr<DIR, DirCloser>;

// Takes ownership of `fd`.
DirPtr openDirStream(UniqueFd fd, const QString &what, const QString &path)
{
    DirPtr dir(fdopendir(fd.get()));
    if (!dir)
        throwOsError(errno, what, shown(path));
    fd.release();
    return dir;
}

bool isDotOrDotDot(const char *name)
{
    return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

QByteArrayList readNames(int dirFd, const QString &what, const QString &path)
{
    UniqueFd copy(fcntl(dirFd, F_DUPFD_CLOEXEC, 0));
    if (!copy.isValid())
        throwOsError(errno, what, shown(path));
    const DirPtr dir = openDirStream(std::move(copy), what, path);
    QByteArrayList names;
    for (;;) {
        errno = 0;
        const dirent *e = readdir(dir.get());
        if (!e) {
            if (errno)
                throwOsError(errno, what, shown(path));
            return names;
        }
        if (!isDotOrDotDot(e->d_name))
            names.append(QByteArray(e->d_name));
    }
}

} // namespace

// Iterative, so the depth bound is the fd budget rather than the stack. Children are opened
// with O_NOFOLLOW relative to their parent's fd: a symlink is unlinked, never descended.
void removeTreeAt(int parentFd, const QByteArray &name, const QString &path)
{
    const QString what = QStringLiteral("cannot remove");
    struct Level
    {
        UniqueFd fd;
        QByteArray name;
        QByteArrayList pending;
    };
    std::vector<Level> stack;
    const auto enter = [&](int atFd, const QByteArray &child) {
        if (stack.size() >= MaxRemoveDepth) {
            throw OSError(QStringLiteral("cannot remove '%1': the folder tree is deeper than %2 "
                                         "levels")
                              .arg(shown(path))
                              .arg(MaxRemoveDepth),
                          ENAMETOOLONG);
        }
        UniqueFd fd(openat(atFd, child.constData(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (!fd.isValid())
            throwOsError(errno, what, shown(path));
        QByteArrayList names = readNames(fd.get(), what, path);
        stack.push_back({std::move(fd), child, std::move(names)});
    };

    enter(parentFd, name);
    while (!stack.empty()) {
        if (stack.back().pending.isEmpty()) {
            const QByteArray done = stack.back().name;
            stack.pop_back();
            const int at = stack.empty() ? parentFd : stack.back().fd.get();
            if (unlinkat(at, done.constData(), AT_REMOVEDIR) != 0)
                throwOsError(errno, what, shown(path));
            ELSAI_FAULT_POINT("rmdir");
            continue;
        }
        const int dirFd = stack.back().fd.get();
        const QByteArray child = stack.back().pending.takeLast();
        struct stat st;
        if (fstatat(dirFd, child.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                continue;
            throwOsError(errno, what, shown(path));
        }
        if (S_ISDIR(st.st_mode))
            enter(dirFd, child);
        else if (unlinkat(dirFd, child.constData(), 0) != 0 && errno != ENOENT)
            throwOsError(errno, what, shown(path));
        else
            ELSAI_FAULT_POINT("unlink");
    }
}

WorkspaceFs::WorkspaceFs(const QString &rootPath)
    : m_listingCache(std::make_unique<DirListingCache>())
{
    if (rootPath.isEmpty())
        throw ValueError(QStringLiteral("empty workspace root path"));
    checkNoNul(rootPath, QStringLiteral("workspace root path"));
    m_rootPath = QDir::cleanPath(QFileInfo(rootPath).absoluteFilePath());
    QDir().mkpath(m_rootPath); // a failure shows up as the open error below
    m_claim = FolderClaim(FolderClaim::Role::Workspace, m_rootPath);
    m_rootFd = ::open(QFile::encodeName(m_rootPath).constData(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (m_rootFd < 0)
        throwOsError(errno, QStringLiteral("cannot open workspace"), m_rootPath);
}

WorkspaceFs::~WorkspaceFs()
{
    if (m_rootFd >= 0)
        ::close(m_rootFd);
}

QString WorkspaceFs::normalize(const QString &relPath, bool *wantsDir)
{
    if (relPath.contains(QChar(u'\0')))
        throw ValueError(QStringLiteral("path contains a NUL byte"));
    if (relPath.isEmpty())
        throw ValueError(QStringLiteral("empty path; use '.' for the workspace root"));
    if (relPath.startsWith(u'/')) {
        throw PermissionError(QStringLiteral("'%1': absolute paths are not allowed; use a "
                                             "workspace-relative path")
                                  .arg(shown(relPath)),
                              EACCES);
    }
    QStringList parts;
    for (const QString &part : relPath.split(u'/', Qt::SkipEmptyParts)) {
        if (part == u".")
            continue;
        if (part == u"..") {
            throw PermissionError(QStringLiteral("'%1' escapes the workspace ('..' is not allowed)")
                                      .arg(shown(relPath)),
                                  EACCES);
        }
        if (part.toUtf8().size() > MaxNameBytes) {
            throw OSError(QStringLiteral("'%1': a path component is longer than %2 bytes")
                              .arg(shown(relPath))
                              .arg(MaxNameBytes),
                          ENAMETOOLONG);
        }
        parts.append(part);
    }
    QString result = parts.join(u'/');
    if (result.toUtf8().size() > MaxPathBytes) {
        throw OSError(QStringLiteral("'%1': the path is longer than %2 bytes")
                          .arg(shown(relPath))
                          .arg(MaxPathBytes),
                      ENAMETOOLONG);
    }
    if (wantsDir)
        *wantsDir = relPath.endsWith(u'/') || relPath.endsWith(u"/.") || relPath == u".";
    return result;
}

namespace {

// Opens a regular file beneath the root for reading; FIFOs, sockets and devices fail at once.
UniqueFd openRegularFile(int rootFd, const QString &path, struct stat *st)
{
    bool wantsDir = false;
    const QByteArray rel = WorkspaceFs::normalize(path, &wantsDir).toUtf8();
    const QString what = QStringLiteral("cannot read");
    UniqueFd fd = resolve(rootFd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, what, path);
    if (fstat(fd.get(), st) != 0)
        throwOsError(errno, what, shown(path));
    if (S_ISDIR(st->st_mode))
        throwOsError(EISDIR, what, shown(path));
    if (wantsDir)
        throwOsError(ENOTDIR, what, shown(path));
    if (!S_ISREG(st->st_mode)) {
        throw OSError(QStringLiteral("cannot read '%1': not a regular file (FIFO, socket or "
                                     "device)")
                          .arg(shown(path)),
                      EINVAL);
    }
    return fd;
}

} // namespace

QByteArray WorkspaceFs::readRange(const QString &path, qint64 offset, qint64 count,
                                  qint64 *totalSize) const
{
    if (offset < 0 || count < 0)
        throw ValueError(QStringLiteral("a file range needs offset >= 0 and count >= 0"));
    struct stat st;
    const UniqueFd fd = openRegularFile(m_rootFd, path, &st);
    *totalSize = st.st_size;
    const qint64 want = qBound<qint64>(0, qMin(count, qint64(st.st_size) - offset),
                                       std::numeric_limits<qsizetype>::max());
    QByteArray data(qsizetype(want), Qt::Uninitialized);
    qint64 done = 0;
    while (done < want) {
        const ssize_t n =
            ::pread(fd.get(), data.data() + done, size_t(want - done), off_t(offset + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throwOsError(errno, QStringLiteral("cannot read"), shown(path));
        }
        if (n == 0)
            break; // the file shrank
        done += n;
    }
    data.truncate(qsizetype(done));
    return data;
}

QByteArray WorkspaceFs::readFile(const QString &path, qint64 maxBytes) const
{
    const QString what = QStringLiteral("cannot read");
    struct stat st;
    const UniqueFd fd = openRegularFile(m_rootFd, path, &st);
    const auto tooBig = [&](qint64 size) {
        return OSError(QStringLiteral("cannot read '%1': %2 bytes is over the limit of %3 bytes")
                           .arg(shown(path))
                           .arg(size)
                           .arg(maxBytes),
                       EFBIG);
    };
    if (maxBytes >= 0 && st.st_size > maxBytes)
        throw tooBig(st.st_size);

    QByteArray data;
    data.reserve(qsizetype(st.st_size));
    char buffer[64 * 1024];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throwOsError(errno, what, shown(path));
        }
        if (n == 0)
            break;
        data.append(buffer, n);
        if (maxBytes >= 0 && data.size() > maxBytes) // grew while we read
            throw tooBig(data.size());
    }
    return data;
}

void WorkspaceFs::writeFile(const QString &path, const QByteArray &content, bool overwrite,
                            int mode)
{
    bool wantsDir = false;
    const QByteArray rel = normalize(path, &wantsDir).toUtf8();
    const QString what = QStringLiteral("cannot write");
    if (rel.isEmpty() || wantsDir) {
        throw IsADirectoryError(
            QStringLiteral("cannot write '%1': the path names a folder").arg(shown(path)), EISDIR);
    }
    // O_RDONLY rather than O_PATH: the folder is fsync'ed after the rename.
    const Entry entry = openEntry(m_rootFd, rel, O_RDONLY, true, what, path);
    const int dirFd = entry.parent.get();

    struct stat st;
    const bool exists = fstatat(dirFd, entry.name.constData(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists && errno != ENOENT)
        throwOsError(errno, what, shown(path));
    if (exists) {
        if (S_ISLNK(st.st_mode)) {
            throw PermissionError(QStringLiteral("cannot write '%1': it is a symbolic link; "
                                                 "remove it first")
                                      .arg(shown(path)),
                                  EPERM);
        }
        if (S_ISDIR(st.st_mode))
            throwOsError(EISDIR, what, shown(path));
        if (!overwrite)
            throwOsError(EEXIST, what, shown(path));
    }

    AtomicWriteOptions options;
    options.createMode = mode_t(mode & 0777);
    options.keepExistingMode = exists;
    options.noReplace = !overwrite;
    if (const auto err = writeAtomicAt(dirFd, entry.name, QByteArrayView(content), options))
        throwOsError(err->error, what, shown(path));
}

namespace {

// Sorts entries by their names' bytes (strcmp order). Each entry gets a key: the 8 bytes that
// follow the prefix all names share, big-endian, so most comparisons are one integer compare
// ("file-0001.txt" … "file-0999.txt" differ only after "file-0"); equal keys fall back to
// comparing the rest. A NUL ends every name in `base`.
template<typename Entry>
void sortByName(std::vector<Entry> &entries, const char *base)
{
    if (entries.size() < 2)
        return;
    size_t common = size_t(entries.front().length);
    const char *first = base + entries.front().offset;
    for (const Entry &e : entries) {
        const char *name = base + e.offset;
        size_t i = 0;
        while (i < common && name[i] == first[i])
            ++i;
        common = i;
    }
    struct Keyed
    {
        quint64 key;
        Entry entry;
    };
    std::vector<Keyed> keyed;
    keyed.reserve(entries.size());
    for (const Entry &e : entries) {
        const char *rest = base + e.offset + common;
        const size_t left = size_t(e.length) - common;
        quint64 key = 0;
        for (size_t i = 0; i < 8; ++i)
            key = (key << 8) | (i < left ? uchar(rest[i]) : 0u);
        keyed.push_back({key, e});
    }
    std::sort(keyed.begin(), keyed.end(), [&](const Keyed &a, const Keyed &b) {
        if (a.key != b.key)
            return a.key < b.key;
        // Equal keys: the names agree up to the key's end, where either may end (a name ending
        // inside the key would have a 0 where the other has a byte, so then both end there).
        const size_t skip = common + 8;
        return std::strcmp(base + a.entry.offset + std::min(size_t(a.entry.length), skip),
                           base + b.entry.offset + std::min(size_t(b.entry.length), skip)) < 0;
    });
    for (size_t i = 0; i < entries.size(); ++i)
        entries[i] = keyed[i].entry;
}

} // namespace

DirListing WorkspaceFs::listDirCompact(const QString &path, qsizetype statLimit) const
{
    return listDirFirst(path, -1, statLimit, nullptr);
}

namespace {

struct RawEntry
{
    qsizetype offset;
    qsizetype length;
    unsigned char type;
};

// Keeps the `keep` first entries by name (byte order) and packs their names (each followed by
// a NUL) into a new buffer.
void keepFirst(std::vector<RawEntry> &raw, QByteArray &names, size_t keep)
{
    sortByName(raw, names.constData());
    raw.resize(std::min(raw.size(), keep));
    QByteArray packed;
    for (RawEntry &r : raw) {
        const qsizetype offset = packed.size();
        packed.append(names.constData() + r.offset, r.length + 1);
        r.offset = offset;
    }
    names = std::move(packed);
}

} // namespace

DirListing WorkspaceFs::listDirFirst(const QString &path, qsizetype maxEntries, qsizetype statLimit,
                                     qint64 *totalEntries) const
{
    const QString rel = normalize(path);
    const QString what = QStringLiteral("cannot list");
    UniqueFd fd = resolve(m_rootFd, rel.toUtf8(), O_RDONLY | O_DIRECTORY | O_NONBLOCK, what, path);
    const bool brief = statLimit >= 0 && DirListingCache::enabled();
    struct stat before = {};
    DirListingCache::Start start;
    if (brief) {
        start = DirListingCache::now(); // before the fstat: see DirListingCache
        if (fstat(fd.get(), &before) != 0)
            throwOsError(errno, what, shown(path));
        if (std::optional<DirListing> hit = m_listingCache->find(before);
            hit && hit->size() > statLimit) {
            hit->folder = rel;
            if (totalEntries)
                *totalEntries = hit->size();
            if (maxEntries >= 0 && hit->size() > maxEntries)
                hit->entries.resize(size_t(maxEntries)); // the names stay whole: no copies
            return std::move(*hit);
        }
    }
    const DirPtr dir = openDirStream(std::move(fd), what, path);
    DirListing listing;
    listing.folder = rel;
    // Names go into one buffer, each followed by a NUL (for fstatat and the sort). Past the
    // cap, the first entries are kept whenever twice as many have come in.
    QByteArray &names = listing.names;
    std::vector<RawEntry> raw;
    const size_t keep = maxEntries < 0 ? std::numeric_limits<size_t>::max() : size_t(maxEntries);
    const size_t pruneAt = maxEntries < 0 ? keep : 2 * keep + 1024;
    qint64 total = 0;
    for (;;) {
        errno = 0;
        const dirent *e = readdir(dir.get());
        if (!e) {
            if (errno)
                throwOsError(errno, what, shown(path));
            break;
        }
        if (isDotOrDotDot(e->d_name))
            continue;
        ++total;
        if (keep == 0)
            continue;
        const size_t length = std::strlen(e->d_name);
        raw.push_back({names.size(), qsizetype(length), e->d_type});
        names.append(e->d_name, qsizetype(length) + 1);
        if (raw.size() >= pruneAt)
            keepFirst(raw, names, keep);
    }
    if (raw.size() > keep)
        keepFirst(raw, names, keep);
    const bool whole = total == qint64(raw.size()); // nothing left out: the listing may be kept
    if (totalEntries)
        *totalEntries = total;
    bool ascii = true;
    for (const RawEntry &r : raw) {
        for (qsizetype i = 0; i < r.length && ascii; ++i)
            ascii = uchar(names.at(r.offset + i)) < 0x80;
    }
    listing.ascii = ascii;
    const char *base = names.constData();
    // For ASCII names byte order is QString's order; other names are sorted as QStrings below.
    if (ascii && whole)
        sortByName(raw, base);
    const bool statAll = statLimit < 0 || total <= statLimit;
    bool statted = false; // sizes or types from stat can change without the folder changing
    listing.entries.reserve(raw.size());
    for (const RawEntry &r : raw) {
        DirListing::Entry entry{r.offset, r.length, FileInfo::typeOfDirent(r.type), std::nullopt,
                                0};
        if (statAll || r.type == DT_UNKNOWN) {
            statted = true;
            struct stat st;
            if (fstatat(dirfd(dir.get()), base + r.offset, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                if (errno == ENOENT) // removed since readdir()
                    continue;
                throwOsError(errno, what, shown(path));
            }
            const FileInfo fi = makeInfo(QString(), st);
            entry.type = fi.type;
            entry.size = fi.size;
            entry.mtimeMs = fi.mtimeMs;
        }
        listing.entries.push_back(entry);
    }
    if (!ascii) {
        // UTF-16 order differs from UTF-8 byte order beyond the BMP: sort as QString does.
        std::vector<std::pair<QString, DirListing::Entry>> named;
        named.reserve(listing.entries.size());
        for (const DirListing::Entry &e : listing.entries)
            named.emplace_back(QString::fromUtf8(listing.name(e)), e);
        std::sort(named.begin(), named.end(),
                  [](const auto &a, const auto &b) { return a.first < b.first; });
        for (size_t i = 0; i < named.size(); ++i)
            listing.entries[i] = named[i].second;
    }
    struct stat after;
    if (brief && whole && !statted && fstat(dirfd(dir.get()), &after) == 0)
        m_listingCache->insert(dirfd(dir.get()), start, before, after, listing);
    return listing;
}

quint64 WorkspaceFs::listingCacheHits() const
{
    return m_listingCache->hits();
}

QList<FileInfo> WorkspaceFs::listDir(const QString &path, qsizetype statLimit) const
{
    const DirListing listing = listDirCompact(path, statLimit);
    QList<FileInfo> entries;
    entries.reserve(qsizetype(listing.entries.size()));
    for (const DirListing::Entry &e : listing.entries)
        entries.append(listing.info(e));
    return entries;
}

FileInfo WorkspaceFs::stat(const QString &path) const
{
    bool wantsDir = false;
    const QString rel = normalize(path, &wantsDir);
    const QString what = QStringLiteral("cannot stat");
    struct stat st;
    if (rel.isEmpty() || wantsDir) {
        // A trailing slash follows a final symlink, as POSIX has it (still confined).
        const UniqueFd fd = resolve(m_rootFd, rel.toUtf8(), O_PATH | O_DIRECTORY, what, path);
        if (fstat(fd.get(), &st) != 0)
            throwOsError(errno, what, shown(path));
    } else {
        const Entry entry = openEntry(m_rootFd, rel.toUtf8(), O_PATH, false, what, path);
        if (fstatat(entry.parent.get(), entry.name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            throwOsError(errno, what, shown(path));
    }
    return makeInfo(rel, st);
}

bool WorkspaceFs::exists(const QString &path) const
{
    try {
        stat(path);
        return true;
    } catch (const FileNotFoundError &) {
        return false;
    } catch (const NotADirectoryError &) {
        return false;
    }
}

void WorkspaceFs::remove(const QString &path, bool recursive)
{
    bool wantsDir = false;
    const QByteArray rel = normalize(path, &wantsDir).toUtf8();
    const QString what = QStringLiteral("cannot remove");
    if (rel.isEmpty()) {
        throw PermissionError(
            QStringLiteral("refusing to remove the workspace root ('%1')").arg(shown(path)), EPERM);
    }
    const Entry entry = openEntry(m_rootFd, rel, O_PATH, false, what, path);
    const char *name = entry.name.constData();
    struct stat st;
    if (fstatat(entry.parent.get(), name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        throwOsError(errno, what, shown(path));
    if (!S_ISDIR(st.st_mode)) {
        if (wantsDir)
            throwOsError(ENOTDIR, what, shown(path));
        if (unlinkat(entry.parent.get(), name, 0) != 0)
            throwOsError(errno, what, shown(path));
        ELSAI_FAULT_POINT("unlink");
        return;
    }
    if (!recursive) {
        throw IsADirectoryError(
            QStringLiteral("cannot remove '%1': it is a folder (remove it recursively)")
                .arg(shown(path)),
            EISDIR);
    }
    removeTreeAt(entry.parent.get(), entry.name, path);
}

void WorkspaceFs::makeDirs(const QString &path)
{
    const QByteArray rel = normalize(path).toUtf8();
    openOrCreateDirs(m_rootFd, rel, O_PATH, path);
}

void WorkspaceFs::rename(const QString &src, const QString &dest, bool overwrite)
{
    bool srcWantsDir = false;
    bool destWantsDir = false;
    const QByteArray srcRel = normalize(src, &srcWantsDir).toUtf8();
    const QByteArray destRel = normalize(dest, &destWantsDir).toUtf8();
    const QString what = QStringLiteral("cannot move");
    if (srcRel.isEmpty() || destRel.isEmpty()) {
        throw PermissionError(QStringLiteral("cannot move '%1' to '%2': the workspace root "
                                             "cannot be moved or replaced")
                                  .arg(shown(src), shown(dest)),
                              EPERM);
    }
    const Entry from = openEntry(m_rootFd, srcRel, O_PATH, false, what, src);
    struct stat st;
    if (fstatat(from.parent.get(), from.name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        throwOsError(errno, what, shown(src));
    if ((srcWantsDir || destWantsDir) && !S_ISDIR(st.st_mode))
        throwOsError(ENOTDIR, what, shown(src));
    const Entry to = openEntry(m_rootFd, destRel, O_PATH, true, what, dest);
    if (const int err = renameEntry(from.parent.get(), from.name.constData(), to.parent.get(),
                                    to.name.constData(), overwrite)) {
        throwOsError(err, what, shown(err == EEXIST ? dest : src));
    }
    ELSAI_FAULT_POINT("rename");
}

int WorkspaceFs::openDirectory(const QString &path) const
{
    const QByteArray rel = normalize(path).toUtf8();
    return resolve(m_rootFd, rel, O_RDONLY | O_DIRECTORY, QStringLiteral("cannot open folder"),
                   path)
        .release();
}

} // namespace elsai
