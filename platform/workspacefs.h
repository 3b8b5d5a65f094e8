// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "folderclaims.h"
#include "types.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>

namespace elsai {

class DirListingCache;

/// Removes the folder `name` of the folder `parentFd` with everything in it, never following a
/// symlink (each child is opened O_NOFOLLOW beneath its parent's fd; a link is unlinked). Depth
/// is bounded (OSError beyond 256 levels); `path` names it in errors.
void removeTreeAt(int parentFd, const QByteArray &name, const QString &path);

/// Confined file access beneath one workspace folder (SECURITY.md, "The hostile paths").
///
/// Every path is workspace-relative and resolved beneath the root fd by the one confined
/// resolver (confinedopen.h, ConfinedLinks::StayBeneath): symlinks are followed while they stay
/// inside, any that leave the root are refused. Never "check a string, then open by name".
///
/// Path rules (normalize()): NUL bytes, empty paths, absolute paths, `..` components and a `~`
/// are handled as: NUL / empty / absolute / any `..` → PermissionError (ValueError for NUL and
/// empty); `~` is a literal name; `a//b` ≡ `a/b`; `./a/./b` ≡ `a/b`; `.` is the root; a trailing
/// `/` demands a folder (NotADirectoryError on a file). A component over 255 bytes or a path over
/// 4095 bytes is refused with an OSError (ENAMETOOLONG).
///
/// Errors are thrown as the OSError subclasses of errors.h.
/// Thread safety: immutable after construction (but for the listing cache, which locks);
/// every method may run concurrently.
class WorkspaceFs
{
public:
    /// Opens (creating it with parents when missing) the host folder `rootPath`.
    /// Throws OSError when it cannot be opened as a folder, ValueError when an offload folder
    /// of the process lies inside it (see FolderClaim).
    explicit WorkspaceFs(const QString &rootPath);
    ~WorkspaceFs();
    WorkspaceFs(const WorkspaceFs &) = delete;
    WorkspaceFs &operator=(const WorkspaceFs &) = delete;

    const QString &rootPath() const { return m_rootPath; }
    /// O_PATH|O_DIRECTORY fd of the root; owned by this object.
    int rootFd() const { return m_rootFd; }

    /// Canonical relative form ("" for the root); throws as described above.
    /// `*wantsDir` is set when the path ended with `/`.
    static QString normalize(const QString &relPath, bool *wantsDir = nullptr);

    /// Reads a regular file. FIFOs, sockets and devices fail at once (O_NONBLOCK + fstat).
    /// `maxBytes` >= 0 refuses larger files with an OSError (EFBIG) naming the size.
    QByteArray readFile(const QString &path, qint64 maxBytes = -1) const;
    /// At most `count` bytes of a regular file from byte `offset` (pread: nothing else is read
    /// or held), and in `*totalSize` the file's size. Same refusals as readFile().
    QByteArray readRange(const QString &path, qint64 offset, qint64 count, qint64 *totalSize) const;

    /// Atomic replace: temp file (O_CREAT|O_EXCL|O_NOFOLLOW) in the target folder, write, fsync,
    /// rename, fsync the folder. Creates missing parent folders. Refuses to write onto a symlink
    /// or a folder; never writes through a hard link. With `overwrite` false, an existing
    /// target raises FileExistsError. `mode` applies to a new file (an existing file keeps its
    /// permission bits).
    void writeFile(const QString &path, const QByteArray &content, bool overwrite = true,
                   int mode = 0644);

    /// Entries of a folder, sorted by name, with lstat data (symlinks are not followed).
    /// A folder of more than `statLimit` entries is listed from the directory entries' types
    /// alone: no stat per entry (the cost of a large listing), so `size` stays empty and
    /// `mtimeMs` 0; the type is exact (an entry whose type the file system does not report is
    /// still stat'ed).
    QList<FileInfo> listDir(const QString &path, qsizetype statLimit = -1) const;
    /// listDir() in the compact form (names in one buffer; what a text listing needs).
    /// A brief listing (over `statLimit` entries) of a folder that is provably unchanged since
    /// it was last read is reused (see DirListingCache).
    DirListing listDirCompact(const QString &path, qsizetype statLimit = -1) const;
    /// The first `maxEntries` entries of listDirCompact() by name (all when negative), and in
    /// `totalEntries` how many the folder has. Memory is proportional to `maxEntries`, not to
    /// the folder (a million entries are streamed, and pruned as they come); `statLimit`
    /// counts the whole folder. A folder within the cap goes through the listing cache.
    DirListing listDirFirst(const QString &path, qsizetype maxEntries, qsizetype statLimit,
                            qint64 *totalEntries) const;
    /// Tests: how many brief listings were reused.
    quint64 listingCacheHits() const;

    /// lstat of one entry (the last component is not followed; a trailing `/` follows a final
    /// symlink that stays inside, as POSIX does).
    FileInfo stat(const QString &path) const;
    /// False for a missing entry or a missing folder on the way; refused paths still throw.
    bool exists(const QString &path) const;

    /// Removes a file or symlink; a folder only when `recursive` (never following symlinks;
    /// depth is bounded, deeper trees fail with an OSError). The root itself is refused.
    void remove(const QString &path, bool recursive = false);

    /// mkdir -p beneath the root.
    void makeDirs(const QString &path);

    /// Renames within the workspace (both ends confined), creating dest's missing parent
    /// folders. Fails when dest exists and `overwrite` is false. Symlinks are moved, not followed.
    void rename(const QString &src, const QString &dest, bool overwrite = false);

    /// Opens a folder beneath the root for use as a working directory (O_RDONLY|O_DIRECTORY|
    /// O_CLOEXEC). The caller closes the fd.
    int openDirectory(const QString &path) const;

private:
    QString m_rootPath;
    int m_rootFd = -1;
    FolderClaim m_claim;
    std::unique_ptr<DirListingCache> m_listingCache; ///< thread-safe itself
};

} // namespace elsai
