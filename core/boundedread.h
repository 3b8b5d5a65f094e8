// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QString>

#include <functional>
#include <optional>

namespace elsai {

class ExecutionBackend;
struct FileRange;

/// The most bytes the agent tool read_file returns by default (Sandbox::Options,
/// AgentConfig::readFileMaxBytes and --read-file-max-bytes change it).
constexpr qint64 DefaultReadFileMaxBytes = 256 * 1024;

/// What part of a file to read: `lineOffset` lines skipped from `byteOffset` (0: the start),
/// then up to `lineLimit` lines (none: to the end), but never more than `maxBytes` bytes.
struct BoundedReadRequest
{
    qint64 lineOffset = 0;
    std::optional<qint64> lineLimit;
    std::optional<qint64> byteOffset;
    qint64 maxBytes = DefaultReadFileMaxBytes;
};

/// The part read, cut at a line end where one falls within `maxBytes`, else at a UTF-8
/// character boundary.
struct BoundedRead
{
    QByteArray bytes;
    qint64 totalBytes = 0; ///< the file's size
    qint64 startByte = 0;  ///< where `bytes` starts in the file
    /// The 0-based line `bytes` starts at; none when counting started at a byte offset.
    std::optional<qint64> firstLine;
    /// The request asked for more than `maxBytes` allowed: the rest is not in `bytes`.
    bool cut = false;
    /// `bytes` ends inside a line (only when `cut`).
    bool endsMidLine = false;

    qint64 nextByte() const { return startByte + bytes.size(); }
    /// The line the next read starts at (when firstLine is known and not endsMidLine).
    std::optional<qint64> nextLine() const;
};

/// Reads `request` of `path`. With a backend that has a ranged read (hasRangedRead()), no more
/// than maxBytes plus one scan buffer (256 KiB) is held at any time, whatever the file's size;
/// others read the whole file once. ValueError for negative values or maxBytes < 1.
BoundedRead readBounded(ExecutionBackend &backend, const QString &path,
                        const BoundedReadRequest &request);

/// Up to `count` bytes from byte `pos` of some content, and the content's whole size.
using RangeFetch = std::function<FileRange(qint64 pos, qint64 count)>;

/// readBounded() over any ranged source (an offloaded item: OffloadStorage::retrieveRange).
/// Holds no more than maxBytes plus one scan buffer, as above.
BoundedRead readBounded(const RangeFetch &fetch, const BoundedReadRequest &request);

/// The note read_file appends when `read.cut`: what was shown of how much, and the arguments
/// that read on (offset in lines, or byte_offset). `tool` names the tool in the note.
QString boundedReadNote(const BoundedRead &read, qint64 maxBytes,
                        const QString &tool = QStringLiteral("read_file"));

} // namespace elsai
