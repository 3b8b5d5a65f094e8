// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "boundedread.h"

#include "backend.h"
#include "errors.h"

#include <cstring>
#include <limits>

namespace elsai {

namespace {

constexpr qint64 ScanChunk = 256 * 1024;

// The bytes of a file from some offset: ranged reads where the backend has them, else slices
// of one whole read.
class BackendRanges
{
public:
    BackendRanges(ExecutionBackend &backend, const QString &path)
        : m_backend(backend), m_path(path), m_ranged(backend.hasRangedRead())
    {
    }

    FileRange fetch(qint64 pos, qint64 count)
    {
        if (m_ranged)
            return m_backend.readFileRange(m_path, pos, count);
        if (!m_whole) // once, on the first fetch (after the request was checked)
            m_whole = m_backend.readFileRange(m_path, 0, std::numeric_limits<qint64>::max());
        const qint64 size = m_whole->data.size();
        if (pos >= size)
            return {{}, m_whole->totalSize};
        return {m_whole->data.sliced(qsizetype(pos), qsizetype(qMin(count, size - pos))),
                m_whole->totalSize};
    }

private:
    ExecutionBackend &m_backend;
    QString m_path;
    bool m_ranged;
    std::optional<FileRange> m_whole;
};

// A RangeFetch that remembers the last size it saw.
class RangeReader
{
public:
    explicit RangeReader(const RangeFetch &fetch) : m_fetch(fetch) {}

    QByteArray fetch(qint64 pos, qint64 count)
    {
        FileRange r = m_fetch(pos, count);
        m_total = r.totalSize;
        return std::move(r.data);
    }

    qint64 total() const { return m_total; }

private:
    const RangeFetch &m_fetch;
    qint64 m_total = 0;
};

// Length of the UTF-8 sequence that starts with `lead` (1 for a stray byte).
qsizetype sequenceLength(uchar lead)
{
    if (lead >= 0xF0 && lead < 0xF8)
        return 4;
    if (lead >= 0xE0)
        return lead < 0xF0 ? 3 : 1;
    if (lead >= 0xC0)
        return 2;
    return 1;
}

} // namespace

std::optional<qint64> BoundedRead::nextLine() const
{
    if (!firstLine || endsMidLine)
        return std::nullopt;
    return *firstLine + bytes.count('\n') + (!bytes.isEmpty() && !bytes.endsWith('\n') ? 1 : 0);
}

BoundedRead readBounded(ExecutionBackend &backend, const QString &path,
                        const BoundedReadRequest &request)
{
    BackendRanges source(backend, path);
    return readBounded([&](qint64 pos, qint64 count) { return source.fetch(pos, count); }, request);
}

BoundedRead readBounded(const RangeFetch &fetch, const BoundedReadRequest &request)
{
    const auto negative = [](const char *name, qint64 value) {
        return ValueError(QStringLiteral("read_file: %1 must be >= 0, got %2")
                              .arg(QLatin1String(name))
                              .arg(value));
    };
    if (request.lineOffset < 0)
        throw negative("offset", request.lineOffset);
    if (request.lineLimit && *request.lineLimit < 0)
        throw negative("limit", *request.lineLimit);
    if (request.byteOffset && *request.byteOffset < 0)
        throw negative("byte_offset", *request.byteOffset);
    if (request.maxBytes < 1)
        throw ValueError(
            QStringLiteral("read_file: max_bytes must be >= 1, got %1").arg(request.maxBytes));
    const qint64 cap = qMin<qint64>(request.maxBytes, std::numeric_limits<qsizetype>::max() / 2);
    RangeReader source(fetch);
    BoundedRead out;
    qint64 pos = request.byteOffset.value_or(0);

    // Skip lineOffset lines, one scan buffer at a time.
    qint64 skipped = 0;
    while (skipped < request.lineOffset) {
        const QByteArray chunk = source.fetch(pos, ScanChunk);
        const char *p = chunk.constData();
        qsizetype i = 0;
        while (skipped < request.lineOffset && i < chunk.size()) {
            const void *nl = std::memchr(p + i, '\n', size_t(chunk.size() - i));
            if (!nl) {
                i = chunk.size();
                break;
            }
            i = static_cast<const char *>(nl) - p + 1;
            ++skipped;
        }
        pos += i;
        if (chunk.size() < ScanChunk)
            break; // end of file
    }
    if (!request.byteOffset)
        out.firstLine = skipped;

    // three bytes more than maxBytes: enough to see where the next character starts
    QByteArray window = source.fetch(pos, cap + 3);
    out.totalBytes = source.total();
    out.startByte = qMin(pos, out.totalBytes);
    qsizetype end = qsizetype(qMin<qint64>(window.size(), cap));
    bool limitReached = false;
    if (request.lineLimit) {
        qint64 lines = 0;
        qsizetype i = 0;
        while (lines < *request.lineLimit && i < end) {
            const void *nl = std::memchr(window.constData() + i, '\n', size_t(end - i));
            if (!nl)
                break;
            i = static_cast<const char *>(nl) - window.constData() + 1;
            ++lines;
        }
        if (lines == *request.lineLimit) {
            end = i;
            limitReached = true;
        }
    }
    out.cut = !limitReached && out.startByte + end < out.totalBytes;
    if (out.cut) {
        const qsizetype lastNl = end > 0 ? window.lastIndexOf('\n', end - 1) : -1;
        if (lastNl >= 0) {
            end = lastNl + 1;
        } else {
            out.endsMidLine = true;
            // cut at a character boundary, but always return at least one character
            while (end > 0 && end < window.size() && (uchar(window.at(end)) & 0xC0) == 0x80)
                --end;
            if (end == 0 && !window.isEmpty())
                end = qMin(window.size(), sequenceLength(uchar(window.at(0))));
        }
    }
    window.truncate(end);
    out.bytes = std::move(window);
    return out;
}

QString boundedReadNote(const BoundedRead &read, qint64 maxBytes, const QString &tool)
{
    QString note = QStringLiteral("\n[%1: bytes %2-%3 of %4 shown (at most %5 bytes per "
                                  "call). Read on with ")
                       .arg(tool)
                       .arg(read.startByte)
                       .arg(read.nextByte())
                       .arg(read.totalBytes)
                       .arg(maxBytes);
    if (const auto line = read.nextLine())
        note += QStringLiteral("offset=%1 (lines), or ").arg(*line);
    note += QStringLiteral("byte_offset=%1.]").arg(read.nextByte());
    return note;
}

} // namespace elsai
