// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "treecopy.h"

#include "atomicwrite.h"
#include "confinedopen.h"
#include "errors.h"
#include "faultinjection.h"
#include "fdutil.h"
#include "hostfiles.h"
#include "parallel.h"
#include "treepaths.h"
#include "workspacefs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QSet>

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

namespace {

using Fd = UniqueFd;

QString errnoText(int e)
{
    char buf[256];
    return QString::fromLocal8Bit(strerror_r(e, buf, sizeof buf));
}

QString cleanAbsolute(const QString &path)
{
    return path.isEmpty() ? QString() : QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

FileStamp stampOf(const struct stat &st)
{
    return {qint64(st.st_size), qint64(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

// "a/b/c" → ("a/b", "c"); "c" → ("", "c")
std::pair<QByteArray, QByteArray> splitParent(const QByteArray &rel)
{
    const qsizetype slash = rel.lastIndexOf('/');
    if (slash < 0)
        return {QByteArray(), rel};
    return {rel.left(slash), rel.mid(slash + 1)};
}

QString parentOf(const QString &rel)
{
    const qsizetype slash = rel.lastIndexOf(u'/');
    return slash < 0 ? QString() : rel.left(slash);
}

/// Trees are walked and written without following any symlink (confinedopen.h): fails with
/// -1 and errno ELOOP (or ENOTDIR) at a symlink, EXDEV for an escape.
int openBeneath(int dirFd, const QByteArray &rel, int flags)
{
    return openConfined(dirFd, rel, flags, ConfinedLinks::None).release();
}

// ---- Walking a tree -----------------------------------------------------------------------

enum class EntryType { Dir, File, Symlink, Special };

EntryType typeOfMode(mode_t m)
{
    if (S_ISDIR(m))
        return EntryType::Dir;
    if (S_ISREG(m))
        return EntryType::File;
    if (S_ISLNK(m))
        return EntryType::Symlink;
    return EntryType::Special;
}

/// Depth-first walk from the folder `rootFd` (borrowed) that never follows a symlink: folders
/// are opened with openat(O_NOFOLLOW|O_DIRECTORY) relative to their parent's fd, entries are
/// examined with fstatat(AT_SYMLINK_NOFOLLOW). Entries come sorted by name, a folder before its
/// contents. `visit(rel, type, st)` returns whether to enter a folder; `st` is filled for files
/// and special files. Iterative with an explicit stack bounded by MaxTreeDepth.
template<typename Visit>
void walkTree(int rootFd, QStringList &errors, Visit &&visit)
{
    struct Frame
    {
        DIR *dir = nullptr;
        QString rel;
        std::vector<std::pair<QByteArray, unsigned char>> names;
        size_t next = 0;
    };
    auto openFrame = [&](int fd, const QString &rel, Frame *frame) {
        DIR *dir = ::fdopendir(fd);
        if (!dir) {
            const int e = errno;
            ::close(fd);
            errors << QStringLiteral("cannot read folder '%1': %2")
                          .arg(rel.isEmpty() ? QStringLiteral(".") : rel, errnoText(e));
            return false;
        }
        frame->dir = dir;
        frame->rel = rel;
        for (;;) {
            errno = 0;
            const dirent *de = ::readdir(dir);
            if (!de) {
                if (errno != 0) {
                    errors << QStringLiteral("cannot read folder '%1': %2")
                                  .arg(rel.isEmpty() ? QStringLiteral(".") : rel, errnoText(errno));
                }
                break;
            }
            const char *n = de->d_name;
            if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0)))
                continue;
            frame->names.emplace_back(QByteArray(n), de->d_type);
        }
        std::sort(frame->names.begin(), frame->names.end());
        return true;
    };

    std::vector<Frame> stack;
    stack.reserve(16);
    const int rootCopy = ::openat(rootFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootCopy < 0) {
        errors << QStringLiteral("cannot open folder: %1").arg(errnoText(errno));
        return;
    }
    stack.emplace_back();
    if (!openFrame(rootCopy, QString(), &stack.back()))
        return;

    while (!stack.empty()) {
        Frame &top = stack.back();
        if (top.next >= top.names.size()) {
            ::closedir(top.dir);
            stack.pop_back();
            continue;
        }
        const auto &[name, dtype] = top.names[top.next++];
        const int dfd = ::dirfd(top.dir);
        const QString decoded = QFile::decodeName(name);
        const QString rel = top.rel.isEmpty() ? decoded : top.rel + u'/' + decoded;
        if (QFile::encodeName(decoded) != name) {
            // the entry could not be opened again by this name; refuse rather than guess
            errors << QStringLiteral("'%1': file name is not valid UTF-8; skipped").arg(rel);
            continue;
        }

        struct stat st;
        std::memset(&st, 0, sizeof st);
        EntryType type;
        switch (dtype) {
        case DT_DIR:
            type = EntryType::Dir; // confirmed by the O_NOFOLLOW|O_DIRECTORY open below
            break;
        case DT_LNK:
            type = EntryType::Symlink;
            break;
        case DT_REG:
        case DT_UNKNOWN:
        case DT_FIFO:
        case DT_SOCK:
        case DT_CHR:
        case DT_BLK:
        default:
            if (::fstatat(dfd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
                if (errno != ENOENT) // vanished meanwhile: nothing to report
                    errors << QStringLiteral("cannot stat '%1': %2").arg(rel, errnoText(errno));
                continue;
            }
            type = typeOfMode(st.st_mode);
            break;
        }

        if (!visit(rel, type, st) || type != EntryType::Dir)
            continue;
        if (int(stack.size()) > MaxTreeDepth) {
            errors << QStringLiteral("'%1': folders nested deeper than %2 levels; not entered")
                          .arg(rel)
                          .arg(MaxTreeDepth);
            continue;
        }
        const int fd =
            ::openat(dfd, name.constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            errors << QStringLiteral("cannot open folder '%1': %2").arg(rel, errnoText(errno));
            continue;
        }
        Frame child;
        if (openFrame(fd, rel, &child))
            stack.push_back(std::move(child)); // `top` is invalid from here on
    }
}

/// The process umask, read without changing it (umask() would race with other threads).
mode_t currentUmask()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (status.open(QIODevice::ReadOnly)) {
        for (const QByteArray &line : status.readAll().split('\n')) {
            if (line.startsWith("Umask:"))
                return mode_t(line.mid(6).trimmed().toUInt(nullptr, 8));
        }
    }
    return 0777; // unknown: always chmod explicitly
}

} // namespace

bool copyContent(int in, int out, qint64 size, qint64 *copied)
{
    *copied = 0;
    bool fallback = false;
    while (*copied < size) {
        const ssize_t r = ::copy_file_range(in, nullptr, out, nullptr, size_t(size - *copied), 0);
        if (r > 0) {
            *copied += r;
            continue;
        }
        if (r == 0) {
            // some file systems report 0 instead of an error; read() decides whether this is EOF
            fallback = true;
            break;
        }
        if (errno == EINTR)
            continue;
        if (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ||
            errno == EBADF || errno == EPERM) {
            fallback = true;
            break;
        }
        return false;
    }
    if (!fallback)
        return true;
    std::vector<char> buf(size_t(256) * 1024);
    while (*copied < size) {
        const ssize_t r =
            ::read(in, buf.data(), size_t(std::min<qint64>(qint64(buf.size()), size - *copied)));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (r == 0)
            break; // the file shrank
        if (!writeAllFd(out, buf.data(), r))
            return false;
        *copied += r;
    }
    return true;
}

// ---- Seeding ------------------------------------------------------------------------------

int SeedPlan::fileCount() const
{
    return int(std::count_if(entries.cbegin(), entries.cend(), [](const SeedPlanEntry &e) {
        return e.action == SeedPlanEntry::Action::Copy && !e.isDir;
    }));
}

qint64 SeedPlan::byteCount() const
{
    qint64 total = 0;
    for (const SeedPlanEntry &e : entries) {
        if (e.action == SeedPlanEntry::Action::Copy && !e.isDir)
            total += e.size;
    }
    return total;
}

SeedPlan planSeed(const QString &sourceRoot, const GlobSet &excludes)
{
    SeedPlan plan;
    plan.sourceRoot = cleanAbsolute(sourceRoot);
    // The root itself is the caller's choice and may be reached through a symlink; nothing
    // below it is.
    const Fd root(
        ::open(QFile::encodeName(plan.sourceRoot).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root.isValid()) {
        plan.errors << QStringLiteral("cannot open source folder '%1': %2")
                           .arg(plan.sourceRoot, errnoText(errno));
        return plan;
    }
    walkTree(root.get(), plan.errors,
             [&](const QString &rel, EntryType type, const struct stat &st) {
                 SeedPlanEntry e;
                 e.path = rel;
                 e.isDir = type == EntryType::Dir;
                 const int excluded = excludes.matchIndex(rel, e.isDir);
                 if (excluded >= 0) {
                     e.action = SeedPlanEntry::Action::Excluded;
                     e.pattern = excludes.patterns().at(excluded).pattern();
                     plan.entries.append(std::move(e));
                     return false;
                 }
                 switch (type) {
                 case EntryType::Dir:
                     break;
                 case EntryType::File:
                     e.size = st.st_size;
                     break;
                 case EntryType::Symlink:
                     e.action = SeedPlanEntry::Action::SkippedSymlink;
                     break;
                 case EntryType::Special:
                     e.action = SeedPlanEntry::Action::SkippedSpecial;
                     break;
                 }
                 plan.entries.append(std::move(e));
                 return type == EntryType::Dir;
             });
    return plan;
}

WorkspaceSeedResult executeSeed(const SeedPlan &plan, const WorkspaceFs &ws, SeedManifest *manifest,
                                const TreeProgress &progress)
{
    WorkspaceSeedResult result;
    result.errors = plan.errors;
    for (const SeedPlanEntry &e : plan.entries) {
        if (e.action != SeedPlanEntry::Action::Copy)
            result.skippedPaths << e.path;
    }
    const Fd src(
        ::open(QFile::encodeName(plan.sourceRoot).constData(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!src.isValid()) {
        // planSeed already reported an unopenable source; say it once.
        const QString error = QStringLiteral("cannot open source folder '%1': %2")
                                  .arg(plan.sourceRoot, errnoText(errno));
        if (!result.errors.contains(error))
            result.errors << error;
        return result;
    }
    const int wsRoot = ws.rootFd();

    // 1. Folders, in plan order (parents first), on this thread. A stack of open workspace
    //    folders follows the depth-first order so each mkdirat is relative to its parent's fd.
    struct DirFrame
    {
        QString rel;
        Fd fd;
    };
    struct DirFix
    {
        QByteArray rel;
        mode_t mode;
        struct timespec times[2];
    };
    std::vector<DirFrame> stack;
    stack.push_back({QString(), Fd(::openat(wsRoot, ".", O_PATH | O_DIRECTORY | O_CLOEXEC))});
    QSet<QString> okDirs{QString()};
    std::vector<DirFix> fixes;
    for (const SeedPlanEntry &e : plan.entries) {
        if (e.action != SeedPlanEntry::Action::Copy || !e.isDir)
            continue;
        const QString parent = parentOf(e.path);
        if (!okDirs.contains(parent))
            continue; // inside a refused folder: reported once, at that folder
        while (stack.size() > 1 && stack.back().rel != parent)
            stack.pop_back();
        if (stack.back().rel != parent) {
            // not in depth-first order (a hand-made plan): resolve the parent afresh
            Fd pfd(openBeneath(wsRoot, QFile::encodeName(parent), O_PATH | O_DIRECTORY));
            if (!pfd.isValid()) {
                result.errors << QStringLiteral("cannot open workspace folder '%1': %2")
                                     .arg(parent, errnoText(errno));
                continue;
            }
            stack.push_back({parent, std::move(pfd)});
        }
        const int parentFd = stack.back().fd.get();
        const QByteArray rel = QFile::encodeName(e.path);
        const QByteArray name = splitParent(rel).second;
        if (::mkdirat(parentFd, name.constData(), 0700) != 0 && errno != EEXIST) {
            result.errors << QStringLiteral("cannot create workspace folder '%1': %2")
                                 .arg(e.path, errnoText(errno));
            continue;
        }
        Fd fd(::openat(parentFd, name.constData(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!fd.isValid()) {
            if (errno == ELOOP || errno == ENOTDIR) {
                result.errors << QStringLiteral("refusing to seed '%1': the workspace already "
                                                "has a symlink or a file there")
                                     .arg(e.path);
            } else {
                result.errors << QStringLiteral("cannot open workspace folder '%1': %2")
                                     .arg(e.path, errnoText(errno));
            }
            continue;
        }
        okDirs.insert(e.path);
        stack.push_back({e.path, std::move(fd)});
        DirFix fix{rel, 0755, {{0, UTIME_OMIT}, {0, UTIME_OMIT}}};
        const Fd sdir(openBeneath(src.get(), rel, O_PATH | O_DIRECTORY));
        struct stat st;
        if (sdir.isValid() && ::fstat(sdir.get(), &st) == 0) {
            fix.mode = st.st_mode & 0777;
            fix.times[0] = st.st_atim;
            fix.times[1] = st.st_mtim;
        }
        fixes.push_back(std::move(fix));
    }
    stack.clear();

    // 2. Files, on several threads. Work comes in chunks of files from one folder: both parent
    //    folders are resolved once per chunk and each file is a single-component openat, and
    //    no two threads create entries in the same folder at once.
    struct FileJob
    {
        QString path;
        QByteArray name;
    };
    struct Chunk
    {
        QByteArray parent;
        std::vector<int> jobs;
    };
    struct FileOutcome
    {
        bool ok = false;
        qint64 bytes = 0;
        FileStamp host;
        FileStamp workspace;
        QString error;
    };
    std::vector<FileJob> jobs;
    std::vector<Chunk> chunks;
    {
        QHash<QString, std::vector<int>> byParent;
        QStringList parentOrder;
        for (const SeedPlanEntry &e : plan.entries) {
            if (e.action != SeedPlanEntry::Action::Copy || e.isDir)
                continue;
            const QString parent = parentOf(e.path);
            if (!okDirs.contains(parent))
                continue;
            auto it = byParent.find(parent);
            if (it == byParent.end()) {
                it = byParent.insert(parent, {});
                parentOrder << parent;
            }
            it->push_back(int(jobs.size()));
            jobs.push_back({e.path, splitParent(QFile::encodeName(e.path)).second});
        }
        for (const QString &parent : std::as_const(parentOrder)) {
            const std::vector<int> &ids = byParent[parent];
            for (size_t i = 0; i < ids.size(); i += kFilesPerThread) {
                const auto first = ids.begin() + qsizetype(i);
                const auto last =
                    ids.begin() + qsizetype(std::min(ids.size(), i + kFilesPerThread));
                chunks.push_back({QFile::encodeName(parent), std::vector<int>(first, last)});
            }
        }
    }
    std::vector<FileOutcome> outcomes(jobs.size());
    const mode_t umaskBits = currentUmask();
    const bool wantStamps = manifest != nullptr;

    auto copyOne = [&](int srcDir, int dstDir, const FileJob &job, FileOutcome &out) {
        auto fail = [&](const QString &what, int e) {
            out.error = QStringLiteral("%1 '%2': %3").arg(what, job.path, errnoText(e));
        };
        const char *name = job.name.constData();
        const Fd in(::openat(srcDir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (!in.isValid())
            return fail(QStringLiteral("cannot open source file"), errno);
        struct stat st;
        if (::fstat(in.get(), &st) != 0)
            return fail(QStringLiteral("cannot stat source file"), errno);
        if (!S_ISREG(st.st_mode)) {
            out.error =
                QStringLiteral("'%1' is no longer a regular file; not copied").arg(job.path);
            return;
        }
        // permission bits without setuid/setgid/sticky, set at creation where the umask allows
        const mode_t mode = st.st_mode & 0777;
        // The one writer (atomicwrite.h): a temp file beside the entry, renamed over it, so an
        // entry already there (a symlink, a hard link to a file outside) is replaced, never
        // written through. Not durable per file: the seed syncs the file system once at its
        // end (see below).
        AtomicWriteOptions options;
        options.createMode = mode;
        if ((mode & umaskBits) != 0)
            options.exactMode = mode;
        options.durable = false;
        const struct timespec times[2] = {st.st_atim, st.st_mtim};
        bool timesFailed = false;
        struct stat dstSt;
        const auto err = writeAtomicAt(
            dstDir, job.name,
            [&](int fd) {
                if (!copyContent(in.get(), fd, qint64(st.st_size), &out.bytes))
                    return false;
                // the mtime too, so stamps stay meaningful (the mode and the rename keep it)
                timesFailed = ::futimens(fd, times) != 0;
                return !timesFailed;
            },
            options, &dstSt);
        if (err) {
            switch (err->stage) {
            case AtomicWriteStage::Create:
                return fail(QStringLiteral("cannot create workspace file"), err->error);
            case AtomicWriteStage::Fill:
                return fail(timesFailed ? QStringLiteral("cannot set attributes of")
                                        : QStringLiteral("cannot copy"),
                            err->error);
            case AtomicWriteStage::Mode:
                return fail(QStringLiteral("cannot set attributes of"), err->error);
            case AtomicWriteStage::Rename:
                return fail(QStringLiteral("cannot replace workspace entry"), err->error);
            case AtomicWriteStage::Sync:
            case AtomicWriteStage::SyncFolder:
                return fail(QStringLiteral("cannot write workspace file"), err->error);
            }
        }
        out.host = stampOf(st);
        if (wantStamps)
            out.workspace = stampOf(dstSt);
        out.ok = true;
    };
    auto copyChunk = [&](int index, std::atomic<int> &done) {
        const Chunk &chunk = chunks[size_t(index)];
        Fd srcDir, dstDir;
        if (!chunk.parent.isEmpty()) {
            srcDir.reset(openBeneath(src.get(), chunk.parent, O_PATH | O_DIRECTORY));
            const int srcErr = errno;
            dstDir.reset(openBeneath(wsRoot, chunk.parent, O_PATH | O_DIRECTORY));
            const int dstErr = errno;
            if (!srcDir.isValid() || !dstDir.isValid()) {
                const QString what =
                    srcDir.isValid() ? QStringLiteral("workspace") : QStringLiteral("source");
                for (int j : chunk.jobs) {
                    outcomes[size_t(j)].error =
                        QStringLiteral("cannot open %1 folder of '%2': %3")
                            .arg(what, jobs[size_t(j)].path,
                                 errnoText(srcDir.isValid() ? dstErr : srcErr));
                }
                done.fetch_add(int(chunk.jobs.size()), std::memory_order_relaxed);
                return;
            }
        }
        const int sfd = chunk.parent.isEmpty() ? src.get() : srcDir.get();
        const int dfd = chunk.parent.isEmpty() ? wsRoot : dstDir.get();
        for (int j : chunk.jobs) {
            copyOne(sfd, dfd, jobs[size_t(j)], outcomes[size_t(j)]);
            done.fetch_add(1, std::memory_order_relaxed);
        }
    };
    runParallel(int(chunks.size()), int(jobs.size()), progress, copyChunk);

    // 3. Folder modes and times last: writing files into a folder changes its mtime, and a
    //    read-only source folder must not block the copy.
    for (auto it = fixes.rbegin(); it != fixes.rend(); ++it) {
        const Fd d(openBeneath(wsRoot, it->rel, O_RDONLY | O_DIRECTORY));
        if (!d.isValid() || ::fchmod(d.get(), it->mode) != 0 ||
            ::futimens(d.get(), it->times) != 0) {
            result.errors << QStringLiteral("cannot set attributes of workspace folder '%1': %2")
                                 .arg(QFile::decodeName(it->rel), errnoText(errno));
        }
    }

    // 4. Durability once for the whole seed, not per file: fsync of 20,000 files and their
    //    folders would cost seconds to minutes on a disk, while a seed that a crash interrupts
    //    is not worth keeping anyway (a partly seeded workspace, never a damaged project: the
    //    source is only read). syncfs writes back the workspace's file system, so the manifest
    //    (and the flush base saved from it) describes files that are on disk.
    if (!jobs.empty() || !fixes.empty()) {
        const Fd sync(::openat(wsRoot, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!sync.isValid() || ::syncfs(sync.get()) != 0) {
            result.errors << QStringLiteral("cannot flush the seeded workspace to disk: %1")
                                 .arg(errnoText(errno));
        }
        ELSAI_FAULT_POINT("fsync");
    }

    if (manifest && cleanAbsolute(manifest->hostRoot) != plan.sourceRoot) {
        manifest->files.clear();
        manifest->hostRoot = plan.sourceRoot;
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
        const FileOutcome &out = outcomes[i];
        if (!out.ok) {
            result.errors << out.error;
            continue;
        }
        ++result.filesSeeded;
        result.bytesSeeded += out.bytes;
        if (manifest)
            manifest->files.insert(jobs[i].path, {out.host, out.workspace});
    }
    return result;
}

// ---- Sync ---------------------------------------------------------------------------------

namespace {

bool sameContent(int fdA, int fdB)
{
    struct stat a, b;
    if (::fstat(fdA, &a) != 0 || ::fstat(fdB, &b) != 0 || !S_ISREG(a.st_mode) ||
        !S_ISREG(b.st_mode) || a.st_size != b.st_size) {
        return false;
    }
    std::vector<char> bufA(size_t(64) * 1024), bufB(size_t(64) * 1024);
    qint64 left = a.st_size;
    auto readFull = [](int fd, char *buf, size_t len) {
        size_t got = 0;
        while (got < len) {
            const ssize_t r = ::read(fd, buf + got, len - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return false;
            got += size_t(r);
        }
        return true;
    };
    while (left > 0) {
        const size_t len = size_t(std::min<qint64>(left, qint64(bufA.size())));
        if (!readFull(fdA, bufA.data(), len) || !readFull(fdB, bufB.data(), len) ||
            std::memcmp(bufA.data(), bufB.data(), len) != 0) {
            return false;
        }
        left -= qint64(len);
    }
    return true;
}

const int kReadFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/// Opens the folder `rel` beneath `rootFd` for writing into it (O_RDONLY, so it can be
/// fsync'ed), creating missing folders one component at a time, never through a symlink.
int openOrCreateDir(int rootFd, const QByteArray &rel)
{
    return openOrCreateConfinedDirs(rootFd, rel, O_RDONLY, ConfinedLinks::None).release();
}

enum class WriteStatus { Ok, HostChanged, Failed };

struct HostWrite
{
    qint64 bytes = 0;
    FileStamp host;
    FileStamp workspace;
    QString error;
};

/// Atomically writes the workspace file `path` to `<dest>/<parent of path>/<target>`: temp file
/// (O_CREAT|O_EXCL|O_NOFOLLOW) in the same folder, copy, fsync, rename, fsync the folder.
/// `noReplace`: an existing host file is not replaced (HostChanged). `expectedHost`: the host
/// file, if present, must still have this stamp (HostChanged otherwise).
WriteStatus writeHostFile(int wsRoot, int destFd, const QString &path, const QByteArray &target,
                          bool noReplace, const FileStamp *expectedHost, HostWrite *out)
{
    auto fail = [&](const QString &what, int e) {
        out->error = QStringLiteral("%1 '%2': %3").arg(what, path, errnoText(e));
        return WriteStatus::Failed;
    };
    const QByteArray rel = QFile::encodeName(path);
    const Fd in(openBeneath(wsRoot, rel, kReadFlags));
    if (!in.isValid())
        return fail(QStringLiteral("cannot open workspace file"), errno);
    struct stat st;
    if (::fstat(in.get(), &st) != 0)
        return fail(QStringLiteral("cannot stat workspace file"), errno);
    if (!S_ISREG(st.st_mode)) {
        out->error = QStringLiteral("'%1' is no longer a regular file; not synced").arg(path);
        return WriteStatus::Failed;
    }
    const Fd dir(openOrCreateDir(destFd, splitParent(rel).first));
    if (!dir.isValid()) {
        if (errno == ELOOP || errno == ENOTDIR || errno == EXDEV) {
            out->error = QStringLiteral("'%1': a folder on its host path is a symlink or not a "
                                        "folder; not synced")
                             .arg(path);
            return WriteStatus::Failed;
        }
        return fail(QStringLiteral("cannot open host folder of"), errno);
    }
    struct stat old;
    const bool hasOld = ::fstatat(dir.get(), target.constData(), &old, AT_SYMLINK_NOFOLLOW) == 0;
    if (hasOld && !S_ISREG(old.st_mode)) {
        out->error = QStringLiteral("'%1': the host path is %2; not replaced")
                         .arg(QFile::decodeName(target),
                              S_ISLNK(old.st_mode) ? QStringLiteral("a symlink")
                                                   : QStringLiteral("not a regular file"));
        return WriteStatus::Failed;
    }
    if (hasOld && (noReplace || (expectedHost && stampOf(old) != *expectedHost)))
        return WriteStatus::HostChanged;

    // an existing host file keeps its permission bits; a new one gets the workspace's
    AtomicWriteOptions options;
    options.createMode = 0600;
    options.exactMode = (hasOld ? old.st_mode : st.st_mode) & 0777;
    options.noReplace = noReplace;
    struct stat written;
    const auto err = writeAtomicAt(
        dir.get(), target,
        [&](int fd) { return copyContent(in.get(), fd, qint64(st.st_size), &out->bytes); }, options,
        &written);
    if (err) {
        switch (err->stage) {
        case AtomicWriteStage::Create:
            return fail(QStringLiteral("cannot create a temporary file for"), err->error);
        case AtomicWriteStage::Fill:
            return fail(QStringLiteral("cannot write"), err->error);
        case AtomicWriteStage::Mode:
            return fail(QStringLiteral("cannot set the mode of"), err->error);
        case AtomicWriteStage::Sync:
            return fail(QStringLiteral("fsync failed for"), err->error);
        case AtomicWriteStage::Rename:
            if (err->error == EEXIST)
                return WriteStatus::HostChanged;
            return fail(QStringLiteral("cannot move into place"), err->error);
        case AtomicWriteStage::SyncFolder:
            return fail(QStringLiteral("fsync of the host folder failed for"), err->error);
        }
    }
    out->host = stampOf(written);
    out->workspace = stampOf(st);
    return WriteStatus::Ok;
}

/// Names tried for one conflict file: `<name>.sandbox-conflict`, then `-2` up to this.
constexpr int kMaxConflictNames = 100;

/// Writes the sandbox version of a conflicting file beside the host file, never over another
/// file: the first free name of `<name>.sandbox-conflict`, `-2`, `-3`… An existing candidate
/// holding the same bytes is the answer (`*reused`, nothing rewritten); one with other bytes,
/// or that is not a regular file, is passed over. `*fileName` is the destination-relative name.
WriteStatus writeConflictFile(int wsRoot, int destFd, const QString &path, QString *fileName,
                              bool *reused, HostWrite *out)
{
    const QByteArray rel = QFile::encodeName(path);
    const QByteArray name = splitParent(rel).second;
    // missing (the host deleted the folder): writeHostFile creates it; refused: it says why
    const Fd dir(openBeneath(destFd, splitParent(rel).first, O_PATH | O_DIRECTORY));
    *reused = false;
    for (int i = 1; i <= kMaxConflictNames; ++i) {
        QByteArray target = name + QFile::encodeName(conflictSuffix());
        if (i > 1)
            target += '-' + QByteArray::number(i);
        const QString candidate = path + QFile::decodeName(target.mid(name.size()));
        if (dir.isValid()) {
            struct stat st;
            if (::fstatat(dir.get(), target.constData(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISREG(st.st_mode)) {
                    const Fd a(openBeneath(wsRoot, rel, kReadFlags));
                    const Fd b(::openat(dir.get(), target.constData(), kReadFlags | O_CLOEXEC));
                    if (a.isValid() && b.isValid() && sameContent(a.get(), b.get())) {
                        *reused = true;
                        *fileName = candidate;
                        return WriteStatus::Ok;
                    }
                }
                continue; // the user's (maybe edited) file: never replaced
            }
            if (errno != ENOENT) {
                out->error = QStringLiteral("cannot stat host file '%1': %2")
                                 .arg(candidate, errnoText(errno));
                return WriteStatus::Failed;
            }
        }
        const WriteStatus s = writeHostFile(wsRoot, destFd, path, target, true, nullptr, out);
        if (s == WriteStatus::Ok)
            *fileName = candidate;
        if (s != WriteStatus::HostChanged)
            return s;
        // created meanwhile: try the next name
    }
    out->error = QStringLiteral("'%1': no free name for the conflict file (%1%2 to %1%2-%3 all "
                                "hold other content); not written")
                     .arg(path, conflictSuffix())
                     .arg(kMaxConflictNames);
    return WriteStatus::Failed;
}

/// Plans a flush from workspace entries given one by one (a folder walk or a remote listing):
/// looks each up on the host and in the manifest, and asks decideSync().
class SyncPlanner
{
public:
    SyncPlanner(const WorkspaceFs &content, const QString &destRoot, const SeedManifest *manifest,
                NoBaseConflict noBase)
        : m_content(content), m_noBase(noBase)
    {
        m_plan.destRoot = cleanAbsolute(destRoot);
        if (manifest && cleanAbsolute(manifest->hostRoot) == m_plan.destRoot)
            m_manifest = manifest;
        m_dest.reset(::open(QFile::encodeName(m_plan.destRoot).constData(),
                            O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!m_dest.isValid() && errno != ENOENT) { // a missing root is created by executeSync
            m_plan.errors << QStringLiteral("cannot open destination folder '%1': %2")
                                 .arg(m_plan.destRoot, errnoText(errno));
            m_failed = true;
        }
    }

    bool failed() const { return m_failed; }
    SyncPlan &plan() { return m_plan; }

    void addSkipped(const QString &rel, SyncPlanEntry::Action action)
    {
        if (m_manifest)
            m_seen.insert(rel);
        m_plan.entries.append({rel, action, 0});
    }

    void addFile(const QString &rel, qint64 size, const FileStamp &stamp,
                 std::optional<bool> changed)
    {
        if (m_manifest)
            m_seen.insert(rel);
        SyncSides sides;
        struct stat hostSt;
        int pfd = -1;
        QByteArray name;
        switch (lookupHost(rel, true, &hostSt, &pfd, &name)) {
        case Host::Refused:
            return;
        case Host::Missing:
            break;
        case Host::File:
            sides.theirsExists = true;
            break;
        }
        const SeedManifest::Entry *rec = nullptr;
        if (m_manifest) {
            const auto it = m_manifest->files.constFind(rel);
            if (it != m_manifest->files.cend())
                rec = &*it;
        }
        sides.haveBase = m_manifest != nullptr;
        sides.inBase = rec != nullptr;
        sides.oursExists = true;
        sides.oursChanged = changed ? *changed : (!rec || stamp != rec->workspace);
        sides.theirsChanged = !rec || !sides.theirsExists || stampOf(hostSt) != rec->host;
        bool same = false;
        auto identical = [&] {
            const Fd a(openBeneath(m_content.rootFd(), QFile::encodeName(rel), kReadFlags));
            const Fd b(::openat(pfd, name.constData(), kReadFlags | O_CLOEXEC));
            same = a.isValid() && b.isValid() && sameContent(a.get(), b.get());
            return same;
        };
        SyncPlanEntry e;
        e.path = rel;
        e.size = size;
        e.host = sides.theirsExists ? stampOf(hostSt) : FileStamp{};
        e.workspace = stamp;
        e.action = decideSync(sides, m_noBase, identical);
        // decideSync compares only where a change meets a change (or there is no record)
        e.converged = e.action == SyncPlanEntry::Action::Unchanged && same;
        m_plan.entries.append(e);
    }

    /// Adds the manifest's selected paths that no entry named: deleted in the workspace.
    SyncPlan finish(const GlobSet &includes, const GlobSet &excludes)
    {
        if (!m_manifest)
            return std::move(m_plan);
        QStringList gone;
        for (auto it = m_manifest->files.cbegin(); it != m_manifest->files.cend(); ++it) {
            if (!m_seen.contains(it.key()) && includes.matchesPathOrParent(it.key(), false) &&
                !excludes.matchesPathOrParent(it.key(), false)) {
                gone << it.key();
            }
        }
        gone.sort();
        for (const QString &rel : std::as_const(gone)) {
            struct stat hostSt;
            int pfd = -1;
            QByteArray name;
            if (lookupHost(rel, false, &hostSt, &pfd, &name) != Host::File)
                continue; // deleted on both sides, or nothing the flush could keep
            const SeedManifest::Entry &rec = *m_manifest->files.constFind(rel);
            SyncSides sides;
            sides.haveBase = sides.inBase = sides.theirsExists = true;
            sides.theirsChanged = stampOf(hostSt) != rec.host;
            const auto action = decideSync(sides, m_noBase, [] { return false; });
            if (action != SyncPlanEntry::Action::Unchanged)
                m_plan.entries.append({rel, action, qint64(hostSt.st_size), stampOf(hostSt)});
        }
        return std::move(m_plan);
    }

private:
    enum class Host { Missing, File, Refused };

    /// The host side of `rel`: a regular file (`st`, its folder `*pfd` and `*name`), missing,
    /// or refused (a symlink or non-folder on the way, a non-regular file; an error when
    /// `report`).
    Host lookupHost(const QString &rel, bool report, struct stat *st, int *pfd, QByteArray *name)
    {
        if (!m_dest.isValid())
            return Host::Missing;
        const auto [parent, base] = splitParent(QFile::encodeName(rel));
        *name = base;
        // files come grouped by folder, so one cached host folder saves most lookups
        if (!m_parentFd.isValid() || m_parentErrno != 0 || m_parent != parent) {
            m_parent = parent;
            m_parentFd.reset(openBeneath(m_dest.get(), parent, O_PATH | O_DIRECTORY));
            m_parentErrno = m_parentFd.isValid() ? 0 : errno;
        }
        if (!m_parentFd.isValid()) {
            if (m_parentErrno == ENOENT)
                return Host::Missing;
            if (!report)
                return Host::Refused;
            if (m_parentErrno == ELOOP || m_parentErrno == ENOTDIR || m_parentErrno == EXDEV) {
                m_plan.errors << QStringLiteral("'%1': a folder on its host path is a symlink or "
                                                "not a folder; not synced")
                                     .arg(rel);
            } else {
                m_plan.errors << QStringLiteral("cannot open host folder of '%1': %2")
                                     .arg(rel, errnoText(m_parentErrno));
            }
            return Host::Refused;
        }
        *pfd = m_parentFd.get();
        if (::fstatat(*pfd, base.constData(), st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                return Host::Missing;
            if (report)
                m_plan.errors
                    << QStringLiteral("cannot stat host file '%1': %2").arg(rel, errnoText(errno));
            return Host::Refused;
        }
        if (!S_ISREG(st->st_mode)) {
            if (report)
                m_plan.errors << QStringLiteral("'%1': the host path is %2; not replaced")
                                     .arg(rel, S_ISLNK(st->st_mode)
                                                   ? QStringLiteral("a symlink")
                                                   : QStringLiteral("not a regular file"));
            return Host::Refused;
        }
        return Host::File;
    }

    const WorkspaceFs &m_content;
    NoBaseConflict m_noBase;
    const SeedManifest *m_manifest = nullptr;
    SyncPlan m_plan;
    Fd m_dest;
    bool m_failed = false;
    QByteArray m_parent;
    Fd m_parentFd;
    int m_parentErrno = 0;
    QSet<QString> m_seen; ///< paths the workspace has (only with a manifest)
};

} // namespace

SyncPlanEntry::Action decideSync(const SyncSides &s, NoBaseConflict noBase,
                                 const std::function<bool()> &identical)
{
    using A = SyncPlanEntry::Action;
    if (!s.oursExists) // a deletion in the sandbox is reported, never carried to the host
        return s.inBase && s.theirsExists ? A::SandboxDeleted : A::Unchanged;
    if (!s.inBase) {
        if (!s.theirsExists)
            return A::Add;
        if (identical())
            return A::Unchanged;
        // with a base that lacks the path, both sides added it: always keep both
        return !s.haveBase && noBase == NoBaseConflict::Overwrite ? A::Update : A::Conflict;
    }
    if (!s.oursChanged) // the host's state wins, a deletion included
        return !s.theirsExists ? A::HostDeleted : s.theirsChanged ? A::KeepHost : A::Unchanged;
    if (!s.theirsExists)
        return A::Conflict; // changed here, deleted there: the sandbox version goes beside
    if (!s.theirsChanged)
        return A::Update;
    return identical() ? A::Unchanged : A::Conflict;
}

SyncPlan planSync(const WorkspaceFs &ws, const QString &destRoot, const GlobSet &includes,
                  const GlobSet &excludes, const SeedManifest *manifest, NoBaseConflict noBase)
{
    SyncPlanner planner(ws, destRoot, manifest, noBase);
    if (planner.failed())
        return std::move(planner.plan());
    const Fd wsDir(::openat(ws.rootFd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!wsDir.isValid()) {
        planner.plan().errors
            << QStringLiteral("cannot open the workspace: %1").arg(errnoText(errno));
        return std::move(planner.plan());
    }
    walkTree(wsDir.get(), planner.plan().errors,
             [&](const QString &rel, EntryType type, const struct stat &st) {
                 if (type == EntryType::Dir)
                     return excludes.matchIndex(rel, true) < 0;
                 if (!includes.matchesPathOrParent(rel, false) || excludes.matches(rel, false))
                     return false;
                 switch (type) {
                 case EntryType::Symlink:
                     planner.addSkipped(rel, SyncPlanEntry::Action::SkippedSymlink);
                     break;
                 case EntryType::Special:
                     planner.addSkipped(rel, SyncPlanEntry::Action::SkippedSpecial);
                     break;
                 case EntryType::File:
                     planner.addFile(rel, st.st_size, stampOf(st), std::nullopt);
                     break;
                 case EntryType::Dir:
                     break;
                 }
                 return false;
             });
    return planner.finish(includes, excludes);
}

SyncPlan planSyncItems(const QList<SyncItem> &items, const WorkspaceFs &content,
                       const QString &destRoot, const GlobSet &includes, const GlobSet &excludes,
                       const SeedManifest *manifest, NoBaseConflict noBase)
{
    SyncPlanner planner(content, destRoot, manifest, noBase);
    if (planner.failed())
        return std::move(planner.plan());
    // by path, so the host folders come grouped as in a walk
    std::vector<qsizetype> order(size_t(items.size()));
    for (qsizetype i = 0; i < items.size(); ++i)
        order[size_t(i)] = i;
    std::sort(order.begin(), order.end(),
              [&](qsizetype a, qsizetype b) { return items[a].path < items[b].path; });
    for (const qsizetype i : order) {
        const SyncItem &item = items[i];
        switch (item.kind) {
        case SyncItem::Kind::Symlink:
            planner.addSkipped(item.path, SyncPlanEntry::Action::SkippedSymlink);
            break;
        case SyncItem::Kind::Special:
            planner.addSkipped(item.path, SyncPlanEntry::Action::SkippedSpecial);
            break;
        case SyncItem::Kind::File:
            planner.addFile(item.path, item.size, item.stamp, item.changed);
            break;
        }
    }
    return planner.finish(includes, excludes);
}

RemoteSyncSelection selectRemoteSync(const QHash<QString, FindRecord> &listing,
                                     const GlobSet &includes, const GlobSet &excludes,
                                     const SeedManifest *base)
{
    RemoteSyncSelection out;
    for (auto it = listing.cbegin(); it != listing.cend(); ++it) {
        const QString &rel = it.key();
        if (it->type == 'd')
            continue;
        if (!includes.matchesPathOrParent(rel, false) || excludes.matchesPathOrParent(rel, false))
            continue;
        if (it->type != 'f') { // links and special files never reach the host; reported
            out.items.append(
                {rel, it->type == 'l' ? SyncItem::Kind::Symlink : SyncItem::Kind::Special, 0, {}});
            continue;
        }
        const FileStamp stamp{it->size, it->mtimeNs};
        out.items.append({rel, SyncItem::Kind::File, it->size, stamp});
        if (base) {
            const auto rec = base->files.constFind(rel);
            if (rec != base->files.cend() && rec->workspace == stamp)
                continue; // unchanged in the sandbox: decided without its bytes
        }
        out.fetch.append(rel);
    }
    out.fetch.sort();
    return out;
}

QStringList convergedPaths(const SyncPlan &plan)
{
    QStringList out;
    for (const SyncPlanEntry &e : plan.entries) {
        if (e.converged)
            out << e.path;
    }
    return out;
}

bool recordRemoteSync(SeedManifest &base, const SyncPlan &plan, const WorkspaceSyncResult &result,
                      const SeedManifest &staged, const QHash<QString, FindRecord> &listing)
{
    const QStringList moved = result.added + result.updated + convergedPaths(plan);
    if (moved.isEmpty())
        return false;
    base.hostRoot = plan.destRoot;
    for (const QString &path : moved) {
        const FindRecord rec = listing.value(path);
        base.files.insert(path, {staged.files.value(path).host, {rec.size, rec.mtimeNs}});
    }
    return true;
}

WorkspaceSyncResult executeSync(const SyncPlan &plan, const WorkspaceFs &ws, SeedManifest *manifest,
                                const TreeProgress &progress)
{
    using A = SyncPlanEntry::Action;
    WorkspaceSyncResult result;
    result.errors = plan.errors;
    // records are only meaningful for the folder they were taken against
    const bool track = manifest && (manifest->hostRoot.isEmpty() ||
                                    cleanAbsolute(manifest->hostRoot) == plan.destRoot);
    if (track && manifest->hostRoot.isEmpty())
        manifest->hostRoot = plan.destRoot;
    int total = 0;
    for (const SyncPlanEntry &e : plan.entries) {
        switch (e.action) {
        case A::SkippedSymlink:
        case A::SkippedSpecial:
            result.skippedPaths << e.path;
            break;
        case A::KeepHost:
            result.keptHost << e.path;
            break;
        case A::HostDeleted:
            result.hostDeleted << e.path;
            break;
        case A::SandboxDeleted:
            result.sandboxDeleted << e.path;
            break;
        case A::Unchanged:
            // same bytes on both sides: the base moves forward (nothing is written)
            if (e.converged && track)
                manifest->files.insert(e.path, {e.host, e.workspace});
            break;
        case A::Add:
        case A::Update:
        case A::Conflict:
            ++total;
            break;
        }
    }
    if (total == 0)
        return result;

    // The destination root is the caller's choice (like the seed source); below it, nothing
    // is followed.
    // An existing destination is opened as named; a missing one is created as every host
    // folder the engine makes (openHostFolder: nothing followed or created through a link).
    Fd dest(
        ::open(QFile::encodeName(plan.destRoot).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dest.isValid() && errno == ENOENT) {
        try {
            dest = openHostFolder(plan.destRoot, true);
        } catch (const SandboxError &e) {
            result.errors
                << QStringLiteral("cannot create destination folder: %1").arg(e.message());
            return result;
        }
    }
    if (!dest.isValid()) {
        result.errors << QStringLiteral("cannot open destination folder '%1': %2")
                             .arg(plan.destRoot, errnoText(errno));
        return result;
    }
    int done = 0;
    for (const SyncPlanEntry &e : plan.entries) {
        if (e.action != A::Add && e.action != A::Update && e.action != A::Conflict)
            continue;
        const QByteArray name = splitParent(QFile::encodeName(e.path)).second;
        bool conflict = e.action == A::Conflict;
        if (!conflict) {
            // only over the host file the plan saw (a hand-made plan without one: the record)
            const FileStamp *expected = nullptr;
            FileStamp recorded;
            if (e.action == A::Update && e.host.size >= 0) {
                recorded = e.host;
                expected = &recorded;
            } else if (e.action == A::Update && track) {
                const auto it = manifest->files.constFind(e.path);
                if (it != manifest->files.cend()) {
                    recorded = it->host;
                    expected = &recorded;
                }
            }
            HostWrite w;
            switch (writeHostFile(ws.rootFd(), dest.get(), e.path, name, e.action == A::Add,
                                  expected, &w)) {
            case WriteStatus::Ok:
                ++result.filesSynced;
                result.bytesSynced += w.bytes;
                (e.action == A::Add ? result.added : result.updated) << e.path;
                if (track)
                    manifest->files.insert(e.path, {w.host, w.workspace});
                break;
            case WriteStatus::Failed:
                result.errors << w.error;
                break;
            case WriteStatus::HostChanged: // since planning: keep it, as for a planned conflict
                conflict = true;
                break;
            }
        }
        if (conflict) {
            QString fileName;
            bool reused = false;
            HostWrite w;
            const bool written = writeConflictFile(ws.rootFd(), dest.get(), e.path, &fileName,
                                                   &reused, &w) == WriteStatus::Ok;
            if (!written)
                result.errors << w.error;
            result.conflicts << e.path;
            if (written)
                result.conflictFiles.insert(e.path, fileName);
            const bool recorded = track && manifest->files.contains(e.path);
            const bool hostGone = e.action == A::Conflict && e.host.size < 0;
            QString line = recorded && hostGone
                               ? QStringLiteral("conflict: %1 was deleted on the host and "
                                                "changed in the sandbox since it was seeded")
                           : recorded ? QStringLiteral("conflict: %1 changed on the host since it "
                                                       "was seeded")
                                      : QStringLiteral("conflict: %1 already exists on the host "
                                                       "with other content");
            line = line.arg(e.path);
            if (written)
                line += QStringLiteral("; the sandbox version is in %1%2")
                            .arg(fileName,
                                 reused ? QStringLiteral(" (from an earlier flush)") : QString());
            result.errors << line;
        }
        if (progress)
            progress(++done, total);
    }
    return result;
}

QHash<QString, FileStamp> SeedManifest::workspaceStamps() const
{
    QHash<QString, FileStamp> out;
    out.reserve(files.size());
    for (auto f = files.cbegin(); f != files.cend(); ++f)
        out.insert(f.key(), f->workspace);
    return out;
}

} // namespace elsai
