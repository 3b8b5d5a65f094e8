// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "treemanifest.h"

#include <QByteArray>
#include <QHash>
#include <QMutex>
#include <QSet>
#include <QStringList>

namespace elsai {

class CheckpointStore;

/// Content hashes by stat stamp (device, inode, size, mtime, ctime): a file whose stamp is
/// unchanged is not read again. A stamp whose ctime is within RacyWindowNs of the walk that
/// would use it is not trusted (a write in the same clock tick leaves mtime and ctime as they
/// were). Bounded: past MaxEntries it starts afresh. Thread-safe.
class TreeHashCache
{
public:
    static constexpr qint64 RacyWindowNs = 2'000'000'000;
    static constexpr qsizetype MaxEntries = 4'000'000;

    QByteArray lookup(const FileStampKey &key, qint64 walkStartNs) const;
    void insert(const FileStampKey &key, const QByteArray &hash);
    /// Every file entry of a manifest (a checkpoint read back after a restart).
    void insert(const TreeManifest &manifest);
    /// Trusted whatever its ctime: a file the engine itself just wrote from a blob.
    void insertWritten(const FileStampKey &key, const QByteArray &hash);
    qsizetype size() const;

private:
    struct Cached
    {
        QByteArray hash;
        bool written = false; ///< insertWritten(): trusted whatever its ctime
    };
    mutable QMutex m_mutex;
    QHash<FileStampKey, Cached> m_hashes;
};

struct CaptureOptions
{
    /// Where the content of each file goes; none: hashes only (a diff against "now").
    CheckpointStore *store = nullptr;
    TreeHashCache *cache = nullptr;
    /// Both or neither: a capture the tree is known to equal except at the `touched` paths (a
    /// change tracker's word, TreeWatch::takeTouched()). Only those are looked at: a folder
    /// among them that is not the one `base` has there (device and inode) is walked whole, the
    /// rest of `base` is kept (a kept file whose content the store lacks is read again). A
    /// backend may ignore them (a full capture is never wrong).
    const TreeManifest *base = nullptr;
    const QSet<QByteArray> *touched = nullptr;
    /// Set to whether the whole tree was walked (no base, or the base could not be used).
    bool *walkedWhole = nullptr;
};

/// Walks the tree beneath `rootFd` (any fd naming a folder) without following any symlink:
/// folders, regular files (hashed, and stored when `options.store`), symlinks as their text.
/// Special files, our own temp files and entries that vanish meanwhile are left out (special
/// files are named in `skipped`). Permission bits are recorded without setuid/setgid (restore
/// never sets them, as seeding does not). Folders deeper than 256 levels are an error.
/// Throws OSError (an unreadable folder or file fails the capture: a checkpoint is whole or
/// nothing). Files the cache does not know are read on several threads (parallel.h). With
/// `options.base`, only the touched paths (see there); when one of them lies in a folder `base`
/// does not have, the tracker missed something and the whole tree is walked after all.
TreeManifest captureTree(int rootFd, const CaptureOptions &options);

/// What applyTree() did.
struct ApplyResult
{
    qint64 written = 0; ///< files written from the store (content or mode differed)
    qint64 linked = 0;  ///< symlinks made
    qint64 created = 0; ///< folders made
    qint64 removed = 0; ///< entries removed (a folder with everything in it counts once)
    qint64 modes = 0;   ///< folder modes set
};

/// Makes the tree beneath `rootFd` equal to `target`, given `current` (a capture of it): removes
/// what `target` lacks (deepest first), makes folders, writes files from `store` (the one
/// atomic writer: temp + rename, exact mode, mtime restored), makes symlinks (temp + rename), and
/// sets folder modes last. Every parent is opened by the confined resolver without following a
/// symlink. Files written are entered in `cache` as trusted. Not durable until the caller's
/// syncfs. Throws OSError at the first failure (a restore is finished by running it again).
ApplyResult applyTree(int rootFd, const TreeManifest &current, const TreeManifest &target,
                      const CheckpointStore &store, TreeHashCache *cache);

/// The hex digest of a tree's state (types, paths, modes, contents, link texts): equal digests,
/// equal trees. What the tests compare.
QByteArray treeDigest(const TreeManifest &manifest);

} // namespace elsai
