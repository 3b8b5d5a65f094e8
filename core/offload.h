// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "folderclaims.h"
#include "types.h"

#include <QByteArray>
#include <QDir>
#include <QHash>
#include <QJsonObject>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace elsai {

struct FileRange;

/// Content stored piece by piece (OffloadStorage::storeStream): each call returns the next
/// piece, an empty one at the end. It may throw; nothing is stored then.
using OffloadSource = std::function<QByteArray()>;

/// The most bytes one piece of streamed content holds (the rest of a capped read_file is read
/// and stored this much at a time).
constexpr qint64 OffloadStreamChunkBytes = 1024 * 1024;

/// Where offloaded tool results go. Thread-safe.
class OffloadStorage
{
public:
    virtual ~OffloadStorage();
    virtual QString typeName() const = 0;
    /// Stores `content` and returns its handle.
    virtual QString store(const QString &content) = 0;
    /// The content of a handle, or none when unknown.
    virtual std::optional<QString> retrieve(const QString &handle) = 0;

    /// Stores what `next` returns, piece by piece, never holding all of it where the storage
    /// keeps it elsewhere (FileStorage appends to one file, S3Storage puts one object per
    /// piece), and returns its handle. A failure (a throwing source included) leaves nothing
    /// retrievable and throws. None when this storage cannot take streamed content: the
    /// default, so a storage written before streams existed keeps working (nothing is streamed
    /// into it).
    virtual std::optional<QString> storeStream(const OffloadSource &next);
    /// Up to `length` bytes of a handle's content (as UTF-8) from byte `offset` (past the end:
    /// none), with the content's whole size; none when the handle is unknown. The storages here
    /// read only the range; the default cuts what retrieve() returns.
    virtual std::optional<FileRange> retrieveRange(const QString &handle, qint64 offset,
                                                   qint64 length);

    /// The session budget of streamed content (SandboxOutputOffloadPolicy::
    /// readRestSessionMaxBytes), counted per storage object: reserves up to `wanted` bytes
    /// so that no more than `cap` are ever reserved, and returns how many it granted.
    qint64 reserveStreamBytes(qint64 wanted, qint64 cap);
    /// Gives back reserved bytes that were not stored.
    void releaseStreamBytes(qint64 bytes);
    /// Bytes streamed (reserved) into this storage so far.
    qint64 streamedBytes() const { return m_streamed.load(); }

private:
    std::atomic<qint64> m_streamed{0};
};
using OffloadStoragePtr = std::shared_ptr<OffloadStorage>;

/// Keeps everything in this process's memory (streamed content too, as the pieces it came in:
/// no copy to join them; its size is bounded by the policy's read-rest caps, not by a piece).
class InMemoryStorage : public OffloadStorage
{
public:
    QString typeName() const override { return QStringLiteral("InMemoryStorage"); }
    QString store(const QString &content) override;
    std::optional<QString> retrieve(const QString &handle) override;
    std::optional<QString> storeStream(const OffloadSource &next) override;
    std::optional<FileRange> retrieveRange(const QString &handle, qint64 offset,
                                           qint64 length) override;

private:
    using Pieces = QList<QByteArray>; ///< UTF-8, in order
    QString insert(Pieces content);

    QMutex m_mutex;
    QHash<QString, Pieces> m_items;
};

/// One file per result under a folder (created when missing), written atomically.
/// The folder is opened once, at construction, and every file is created and read beneath that
/// descriptor (one component, O_NOFOLLOW): replacing the folder or a file with a link later
/// cannot redirect a write or a read. Handles are random hex names, so a handle cannot name a
/// path outside the folder. The folder may not be inside a workspace (FolderClaim): the
/// constructor, or a workspace opened later around it, throws ValueError naming both.
class FileStorage : public OffloadStorage
{
public:
    explicit FileStorage(const QString &directory);
    ~FileStorage() override;
    FileStorage(const FileStorage &) = delete;
    FileStorage &operator=(const FileStorage &) = delete;
    QString typeName() const override { return QStringLiteral("FileStorage"); }
    QString store(const QString &content) override;
    std::optional<QString> retrieve(const QString &handle) override;
    /// One file, written through the one atomic writer (temp + fsync + rename) a piece at a
    /// time: memory about one piece, whatever the size.
    std::optional<QString> storeStream(const OffloadSource &next) override;
    /// pread of the range.
    std::optional<FileRange> retrieveRange(const QString &handle, qint64 offset,
                                           qint64 length) override;
    QString directory() const { return m_path; }

private:
    /// The handle's file, opened beneath the folder (no link, no FIFO), or -1.
    int openItem(const QString &handle) const;

    QString m_path;
    int m_dirFd = -1;
    FolderClaim m_claim;
};

/// Token counting used by the offload policy: one token per 4 bytes of UTF-8, rounded up.
/// Deterministic and model-independent; close to common BPE tokenizers on code and English.
qint64 countTokens(const QString &text);
/// The longest prefix of `text` of at most `tokens` tokens, cut at a character boundary.
QString truncateToTokens(const QString &text, qint64 tokens);

/// Offload of large sandbox tool results (spec: SandboxOutputOffloadPolicy).
struct SandboxOutputOffloadPolicy
{
    OffloadStoragePtr storage;
    qint64 maxResultTokens = 2500;
    qint64 previewTokens = 1000;
    bool includeRetrievalTool = true;
    QStringList toolNames = SANDBOX_OFFLOAD_TOOL_NAMES;

    /// The rest of a read_file answer cut at its byte bound (what the answer does not show) is
    /// streamed to `storage`, at most this many bytes per call (0: never) ...
    qint64 readRestMaxBytes = qint64(64) << 20;
    /// ... and at most this many in all into one storage object (one headless run, one MCP
    /// server, one policy's storage in C++). Past it, a capped read says that its rest was not
    /// offloaded; nothing older is evicted.
    qint64 readRestSessionMaxBytes = qint64(1) << 30;

    /// When `text` is above maxResultTokens: stores it and returns the preview text with the
    /// handle and how to retrieve the rest; otherwise none.
    std::optional<QString> offload(const QString &text, QString *handle = nullptr) const;

    /// What offloadRest() did with the rest of a capped read.
    struct Rest
    {
        QString handle;        ///< empty: nothing stored (see `refused`)
        qint64 fromByte = 0;   ///< the file byte at the handle's byte 0
        qint64 bytes = 0;      ///< bytes stored
        qint64 totalBytes = 0; ///< the file's size
        QString refused;       ///< why nothing, or not all of the rest, was stored
        /// The result fields: `rest_offloaded` {handle, file_byte_offset, bytes} and/or
        /// `rest_not_offloaded` (the reason).
        void addTo(QJsonObject &data) const;
    };
    /// Streams bytes [from, total) of a file to the storage, `fetch`ing one piece
    /// (OffloadStreamChunkBytes) at a time, within readRestMaxBytes and what is left of
    /// readRestSessionMaxBytes. Never throws for a storage failure: it is the reason in
    /// `refused`.
    Rest offloadRest(const std::function<FileRange(qint64 pos, qint64 count)> &fetch, qint64 from,
                     qint64 total) const;
    /// The note a read_file answer ends with when its rest_* fields (Rest::addTo) are in
    /// `data`, naming the retrieval tool when the policy registers it; empty without them.
    QString restNote(const QJsonObject &data) const;
};

} // namespace elsai
