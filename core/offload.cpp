// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "offload.h"

#include "atomicwrite.h"
#include "errors.h"
#include "fdutil.h"
#include "hostfiles.h"
#include "inputchecks.h"

#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

OffloadStorage::~OffloadStorage() = default;

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

QString InMemoryStorage::store(const QString &content)
{
    const QString handle = newHandle();
    QMutexLocker lock(&m_mutex);
    m_items.insert(handle, content);
    return handle;
}

std::optional<QString> InMemoryStorage::retrieve(const QString &handle)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_items.constFind(handle);
    if (it == m_items.constEnd())
        return std::nullopt;
    return *it;
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

std::optional<QString> FileStorage::retrieve(const QString &handle)
{
    if (!isHandle(handle))
        return std::nullopt;
    // Never follow a link or block on a FIFO planted in the folder under a handle's name.
    const QByteArray name = QFile::encodeName(handle + QStringLiteral(".txt"));
    const int fd =
        ::openat(m_dirFd, name.constData(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return std::nullopt;
    }
    QFile f;
    if (!f.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle))
        return std::nullopt;
    return QString::fromUtf8(f.readAll());
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

} // namespace elsai
