// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "fdutil.h"
#include "treemanifest.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QSet>
#include <QString>

#include <memory>
#include <optional>

namespace elsai {

// The checkpoint store (docs/checkpoints.md): content-addressed, deduplicated, OUTSIDE every
// workspace, so no agent command can rewrite a checkpoint.
//
//   <folder>/lock                      flock: writers shared, garbage collection exclusive
//   <folder>/blobs/<2 hex>/<62 hex>    one file per distinct content (BLAKE2b-256), 0400
//   <folder>/spaces/<32 hex>/          one per workspace (a hash of the backend id)
//       source                         the backend id, for people and for listings
//       <name>.ckpt                    a checkpoint's manifest (treemanifest.h)
//       restore.journal                the checkpoint a restore in progress is bringing back
//
// Crash safety: blobs are written (temp + rename, no fsync each), then one syncfs, then the
// manifest by the one atomic writer (fsync'ed, renamed into place, folder fsync'ed). A
// checkpoint is listed only once its manifest is in place and its checksum holds, so a crash
// leaves at most unreferenced blobs and temp files, which the next garbage collection and the
// next open remove.

class CheckpointStore;

/// The checkpoints of one workspace.
class CheckpointSpace
{
public:
    CheckpointSpace(std::shared_ptr<CheckpointStore> store, const QString &backendId);

    const std::shared_ptr<CheckpointStore> &store() const { return m_store; }
    const QString &folder() const { return m_folder; }

    /// Headers only (no entries), oldest first.
    QList<TreeManifest> list() const;
    /// The whole manifest; none when there is no such checkpoint. OSError when it exists but is
    /// unreadable or damaged (its message says why).
    std::optional<TreeManifest> load(const QString &name) const;
    bool exists(const QString &name) const;
    /// Makes the blobs durable (syncfs) and writes the manifest into place. FileExistsError when
    /// the name is taken and `replace` is false.
    void save(const TreeManifest &manifest, bool replace);
    /// False when there was none.
    bool remove(const QString &name);

    /// The restore journal: the checkpoint a restore is bringing back, written (durably) before
    /// the first change to the workspace and removed once it matches.
    void writeJournal(const QString &checkpoint);
    std::optional<QString> journal() const;
    void clearJournal();

    /// A name a caller may give: 1–100 characters of [A-Za-z0-9._-], not starting with '.' or
    /// '-', and not "now" (diff's name for the live workspace). ValueError otherwise.
    static void checkName(const QString &name);

private:
    QString manifestPath(const QString &name) const;
    std::shared_ptr<CheckpointStore> m_store;
    QString m_folder;
};

/// The store itself, one per folder and process (open()). Thread-safe.
class CheckpointStore : public std::enable_shared_from_this<CheckpointStore>
{
public:
    /// $ELSAI_CHECKPOINT_DIR, else `<XDG data home>/elsai/checkpoints`.
    static QString defaultFolder();
    /// The store in `folder` (created 0700 when missing); the same object for the same folder
    /// within a process. Removes temp files a crash left. Throws OSError.
    static std::shared_ptr<CheckpointStore> open(const QString &folder);

    const QString &folder() const { return m_folder; }

    /// An flock on the store's lock file, released on destruction. Checkpoints and restores
    /// hold it shared; garbage collection exclusive (it must not remove a blob a checkpoint in
    /// progress just reused).
    class Lock
    {
    public:
        Lock(const CheckpointStore &store, bool exclusive);
        Lock(Lock &&) = default;

    private:
        UniqueFd m_fd;
    };

    /// True when the blob is there with that size (a blob a power cut emptied is not reused).
    /// A blob this process saw or wrote since the last garbage collection (of any process:
    /// refreshPresence()) is known without a stat.
    bool hasBlob(const QByteArray &hash, qint64 size) const;
    /// Forgets the blobs known present when a garbage collection ran since (another process's
    /// included). Call with the lock held, before a checkpoint.
    void refreshPresence();
    /// Stores `data` under `hash` (its contentHash()); nothing when present. Not durable until
    /// syncBlobs(). Throws OSError.
    void addBlob(const QByteArray &hash, QByteArrayView data);
    /// Streams `size` bytes (at most; `*copied` says how many) of `fd` from its offset into the
    /// store, hashing on the way; returns the hash. For files too large to hold in memory.
    QByteArray addBlobFromFd(int fd, qint64 size, qint64 *copied);
    /// A read-only fd of the blob; OSError (FileNotFoundError) when missing.
    UniqueFd openBlob(const QByteArray &hash) const;
    QByteArray readBlob(const QByteArray &hash) const;
    /// syncfs of the store's file system.
    void syncBlobs();
    /// Bytes added by addBlob() since this object was made (what a size check adds).
    qint64 bytesAdded() const;
    /// Keeps a blob from this process's garbage collection while no checkpoint refers to it
    /// (the call journal's contents, core/calljournal.h); counted, unpin() once per pin().
    void pin(const QByteArray &hash);
    void unpin(const QByteArray &hash);

    /// Removes the oldest automatic checkpoints (of any workspace; a workspace's restore target
    /// is kept) until the distinct blobs of those left fit in `limitBytes`, then every blob no
    /// checkpoint refers to. Returns the checkpoints removed ("<source>: <name>") and sets
    /// `*usedBytes` to what the remaining checkpoints hold.
    QStringList collectGarbage(qint64 limitBytes, qint64 *usedBytes = nullptr);

private:
    explicit CheckpointStore(const QString &folder);
    QByteArray blobRel(const QByteArray &hash) const;
    QString m_folder;
    UniqueFd m_fd;      ///< the store folder, O_RDONLY|O_DIRECTORY
    UniqueFd m_blobsFd; ///< <folder>/blobs
    QByteArray generation() const;
    mutable QMutex m_mutex;
    qint64 m_bytesAdded = 0;
    mutable QSet<QByteArray> m_present; ///< blobs known present (m_mutex)
    QByteArray m_generation;            ///< of the last collection seen (m_mutex)
    QHash<QByteArray, int> m_pins;      ///< pin() counts (m_mutex)
};

} // namespace elsai
