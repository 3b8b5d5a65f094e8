// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "offload.h"

#include "atomicwrite.h"
#include "backend.h"
#include "errors.h"
#include "fdutil.h"
#include "hostfiles.h"
#include "inputchecks.h"

#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <exception>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

OffloadStorage::~OffloadStorage() = default;

std::optional<QString> OffloadStorage::storeStream(const OffloadSource &)
{
    return std::nullopt;
}

/// [offset, offset + length) of `bytes`, cut to its end.
static FileRange rangeOf(const QByteArray &bytes, qint64 offset, qint64 length)
{
    if (offset < 0 || length < 0)
        throw ValueError(QStringLiteral("an offloaded range needs offset >= 0 and length >= 0"));
    FileRange r;
    r.totalSize = bytes.size();
    if (offset < r.totalSize)
        r.data = bytes.sliced(qsizetype(offset), qsizetype(qMin(length, r.totalSize - offset)));
    return r;
}

std::optional<FileRange> OffloadStorage::retrieveRange(const QString &handle, qint64 offset,
                                                       qint64 length)
{
    const auto content = retrieve(handle);
    if (!content)
        return std::nullopt;
    return rangeOf(content->toUtf8(), offset, length);
}

qint64 OffloadStorage::reserveStreamBytes(qint64 wanted, qint64 cap)
{
    qint64 used = m_streamed.load();
    for (;;) {
        const qint64 granted = qBound<qint64>(0, qMin(wanted, cap - used), wanted);
        if (granted == 0 || m_streamed.compare_exchange_weak(used, used + granted))
            return granted;
    }
}

void OffloadStorage::releaseStreamBytes(qint64 bytes)
{
    m_streamed.fetch_sub(bytes);
}

static QString newHandle()
{
    quint64 words[2];
    QRandomGenerator::system()->fillRange(words);
    return QStringLiteral("off-%1%2")
        .arg(words[0], 16, 16, QLatin1Char('0'))
        .arg(words[1], 16, 16, QLatin1Char('0'));
}

static bool isHandle(const QString &handle)
{
    static const QRegularExpression re(QStringLiteral("^off-[0-9a-f]{32}$"));
    return re.match(handle).hasMatch();
}

QString InMemoryStorage::insert(Pieces content)
{
    const QString handle = newHandle();
    QMutexLocker lock(&m_mutex);
    m_items.insert(handle, std::move(content));
    return handle;
}

QString InMemoryStorage::store(const QString &content)
{
    return insert({content.toUtf8()});
}

std::optional<QString> InMemoryStorage::retrieve(const QString &handle)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_items.constFind(handle);
    if (it == m_items.constEnd())
        return std::nullopt;
    QByteArray all;
    for (const QByteArray &piece : *it)
        all += piece;
    return QString::fromUtf8(all);
}

std::optional<QString> InMemoryStorage::storeStream(const OffloadSource &next)
{
    Pieces content;
    for (QByteArray piece = next(); !piece.isEmpty(); piece = next())
        content.append(std::move(piece));
    return insert(std::move(content));
}

std::optional<FileRange> InMemoryStorage::retrieveRange(const QString &handle, qint64 offset,
                                                        qint64 length)
{
    if (offset < 0 || length < 0)
        throw ValueError(QStringLiteral("an offloaded range needs offset >= 0 and length >= 0"));
    QMutexLocker lock(&m_mutex);
    const auto it = m_items.constFind(handle);
    if (it == m_items.constEnd())
        return std::nullopt;
    FileRange r;
    for (const QByteArray &piece : *it)
        r.totalSize += piece.size();
    const qint64 end = qMin(r.totalSize, offset + length);
    qint64 start = 0; // of the piece
    for (const QByteArray &piece : *it) {
        const qint64 from = qMax(offset, start), to = qMin(end, start + piece.size());
        if (from < to)
            r.data.append(
                QByteArrayView(piece).sliced(qsizetype(from - start), qsizetype(to - from)));
        start += piece.size();
        if (start >= end)
            break;
    }
    return r;
}

FileStorage::FileStorage(const QString &directory)
    : m_path(QDir::cleanPath(QFileInfo(directory).absoluteFilePath()))
{
    if (directory.isEmpty())
        throw ValueError(QStringLiteral("FileStorage needs a folder"));
    checkNoNul(directory, QStringLiteral("offload folder"));
    // Opened once, the last component O_NOFOLLOW, missing folders created without following
    // anything (openHostFolder); O_RDONLY (not O_PATH): the folder is fsync'ed after each file.
    UniqueFd dir = openHostFolder(m_path, true);
    m_claim = FolderClaim(FolderClaim::Role::Offload, m_path);
    m_dirFd = dir.release();
}

FileStorage::~FileStorage()
{
    if (m_dirFd >= 0)
        ::close(m_dirFd);
}

QString FileStorage::store(const QString &content)
{
    const QString handle = newHandle();
    const QByteArray name = QFile::encodeName(handle + QStringLiteral(".txt"));
    AtomicWriteOptions options;
    options.createMode = 0600;
    options.noReplace = true; // a random handle; never replaces anything planted there
    if (const auto err = writeAtomicAt(m_dirFd, name, QByteArrayView(content.toUtf8()), options))
        throwOsError(err->error, QStringLiteral("cannot store offloaded content in"), m_path);
    return handle;
}

int FileStorage::openItem(const QString &handle) const
{
    if (!isHandle(handle))
        return -1;
    // Never follow a link or block on a FIFO planted in the folder under a handle's name.
    const QByteArray name = QFile::encodeName(handle + QStringLiteral(".txt"));
    UniqueFd fd(
        ::openat(m_dirFd, name.constData(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st;
    if (!fd.isValid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    return fd.release();
}

std::optional<QString> FileStorage::retrieve(const QString &handle)
{
    const int fd = openItem(handle);
    if (fd < 0)
        return std::nullopt;
    QFile f;
    if (!f.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        return std::nullopt;
    }
    return QString::fromUtf8(f.readAll());
}

std::optional<QString> FileStorage::storeStream(const OffloadSource &next)
{
    const QString handle = newHandle();
    const QByteArray name = QFile::encodeName(handle + QStringLiteral(".txt"));
    AtomicWriteOptions options;
    options.createMode = 0600;
    options.noReplace = true;
    std::exception_ptr failure; // the source's, carried past the C-style writer
    const auto err = writeAtomicAt(
        m_dirFd, name,
        [&](int fd) {
            try {
                for (QByteArray piece = next(); !piece.isEmpty(); piece = next()) {
                    if (!writeAllFd(fd, piece.constData(), piece.size()))
                        return false;
                }
                return true;
            } catch (...) {
                failure = std::current_exception();
                errno = ECANCELED;
                return false;
            }
        },
        options);
    if (failure)
        std::rethrow_exception(failure);
    if (err)
        throwOsError(err->error, QStringLiteral("cannot store offloaded content in"), m_path);
    return handle;
}

std::optional<FileRange> FileStorage::retrieveRange(const QString &handle, qint64 offset,
                                                    qint64 length)
{
    if (offset < 0 || length < 0)
        throw ValueError(QStringLiteral("an offloaded range needs offset >= 0 and length >= 0"));
    const UniqueFd fd(openItem(handle));
    struct stat st;
    if (!fd.isValid() || ::fstat(fd.get(), &st) != 0)
        return std::nullopt;
    FileRange r;
    r.totalSize = st.st_size;
    if (offset >= r.totalSize)
        return r;
    r.data.resize(qsizetype(qMin(length, r.totalSize - offset)));
    qsizetype got = 0;
    while (got < r.data.size()) {
        const ssize_t n = ::pread(fd.get(), r.data.data() + got, size_t(r.data.size() - got),
                                  off_t(offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throwOsError(errno, QStringLiteral("cannot read offloaded content in"), m_path);
        if (n == 0)
            break; // cut since the fstat
        got += n;
    }
    r.data.truncate(got);
    return r;
}

qint64 countTokens(const QString &text)
{
    const qint64 bytes = text.toUtf8().size();
    return (bytes + 3) / 4;
}

QString truncateToTokens(const QString &text, qint64 tokens)
{
    const QByteArray utf8 = text.toUtf8();
    qint64 cut = qMin<qint64>(utf8.size(), tokens * 4);
    // Back up to the start of a UTF-8 sequence so no character is split.
    while (cut > 0 && cut < utf8.size() && (static_cast<uchar>(utf8[cut]) & 0xC0) == 0x80)
        --cut;
    return QString::fromUtf8(utf8.left(cut));
}

std::optional<QString> SandboxOutputOffloadPolicy::offload(const QString &text,
                                                           QString *handleOut) const
{
    if (!storage)
        return std::nullopt;
    const qint64 tokens = countTokens(text);
    if (tokens <= maxResultTokens)
        return std::nullopt;
    const QString handle = storage->store(text);
    if (handleOut)
        *handleOut = handle;
    const QString preview = truncateToTokens(text, previewTokens);
    QString note = QStringLiteral("\n[output offloaded: %1 tokens in all, the first %2 shown. ")
                       .arg(tokens)
                       .arg(previewTokens);
    note += includeRetrievalTool
                ? QStringLiteral("Read the rest with retrieve_offloaded_content(handle=\"%1\", "
                                 "offset=<line>, limit=<lines>).]")
                      .arg(handle)
                : QStringLiteral("Handle: %1.]").arg(handle);
    return preview + note;
}

void SandboxOutputOffloadPolicy::Rest::addTo(QJsonObject &data) const
{
    if (!handle.isEmpty())
        data.insert(QStringLiteral("rest_offloaded"),
                    QJsonObject{{QStringLiteral("handle"), handle},
                                {QStringLiteral("file_byte_offset"), fromByte},
                                {QStringLiteral("bytes"), bytes}});
    if (!refused.isEmpty())
        data.insert(QStringLiteral("rest_not_offloaded"), refused);
}

SandboxOutputOffloadPolicy::Rest
SandboxOutputOffloadPolicy::offloadRest(const std::function<FileRange(qint64, qint64)> &fetch,
                                        qint64 from, qint64 total) const
{
    Rest rest;
    rest.fromByte = from;
    rest.totalBytes = total;
    const qint64 wanted = qMax<qint64>(0, total - from);
    if (!storage || wanted == 0)
        return rest;
    const qint64 perCall = qMin(wanted, qMax<qint64>(0, readRestMaxBytes));
    if (perCall == 0) {
        rest.refused = QStringLiteral("offloading the rest of a file is off "
                                      "(readRestMaxBytes is 0); read on with read_file "
                                      "byte_offset=%1")
                           .arg(from);
        return rest;
    }
    const qint64 granted = storage->reserveStreamBytes(perCall, readRestSessionMaxBytes);
    if (granted == 0) {
        rest.refused = QStringLiteral("this session's offload budget for the rest of files "
                                      "(%1 bytes) is spent; read on with read_file "
                                      "byte_offset=%2")
                           .arg(readRestSessionMaxBytes)
                           .arg(from);
        return rest;
    }
    qint64 pos = from;
    const qint64 end = from + granted;
    try {
        const auto handle = storage->storeStream([&]() -> QByteArray {
            if (pos >= end)
                return {};
            FileRange piece = fetch(pos, qMin(OffloadStreamChunkBytes, end - pos));
            pos += piece.data.size();
            if (piece.data.isEmpty())
                pos = end; // the file got shorter: stop there
            return std::move(piece.data);
        });
        if (!handle) {
            storage->releaseStreamBytes(granted);
            rest.refused = QStringLiteral("%1 does not take streamed content; read on with "
                                          "read_file byte_offset=%2")
                               .arg(storage->typeName())
                               .arg(from);
            return rest;
        }
        rest.handle = *handle;
        rest.bytes = qMin(pos, end) - from;
    } catch (const SandboxError &e) {
        storage->releaseStreamBytes(granted);
        rest.refused = QStringLiteral("storing it failed (%1); read on with read_file "
                                      "byte_offset=%2")
                           .arg(e.message())
                           .arg(from);
        return rest;
    }
    storage->releaseStreamBytes(granted - rest.bytes);
    const qint64 next = from + rest.bytes;
    if (next < total && rest.bytes == granted) { // not cut by the file getting shorter
        const QString why =
            granted < perCall
                ? QStringLiteral("this session's offload budget for the rest of files (%1 "
                                 "bytes) is spent")
                      .arg(readRestSessionMaxBytes)
                : QStringLiteral("at most %1 bytes are offloaded per read").arg(readRestMaxBytes);
        rest.refused = QStringLiteral("bytes from %1 on: %2; read them with read_file "
                                      "byte_offset=%1")
                           .arg(next)
                           .arg(why);
    }
    return rest;
}

QString SandboxOutputOffloadPolicy::restNote(const QJsonObject &data) const
{
    QString note;
    const QJsonObject rest = data.value(QStringLiteral("rest_offloaded")).toObject();
    if (!rest.isEmpty()) {
        const QString handle = rest.value(QStringLiteral("handle")).toString();
        const qint64 from = rest.value(QStringLiteral("file_byte_offset")).toInteger();
        const qint64 bytes = rest.value(QStringLiteral("bytes")).toInteger();
        note = QStringLiteral("\n[read_file: bytes %1-%2 of the file are offloaded as handle %3 "
                              "(its byte 0 is byte %1 of the file).")
                   .arg(from)
                   .arg(from + bytes)
                   .arg(handle);
        if (includeRetrievalTool)
            note += QStringLiteral(" Read them with retrieve_offloaded_content(handle=\"%1\", "
                                   "byte_offset=<n>, length=<bytes>) or by lines (offset=<line>, "
                                   "limit=<lines>).")
                        .arg(handle);
        note += u']';
    }
    const QString refused = data.value(QStringLiteral("rest_not_offloaded")).toString();
    if (!refused.isEmpty())
        note += QStringLiteral("\n[read_file: not offloaded: %1.]").arg(refused);
    return note;
}

} // namespace elsai
