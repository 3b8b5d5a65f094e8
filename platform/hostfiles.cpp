// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "hostfiles.h"

#include "atomicwrite.h"
#include "confinedopen.h"
#include "errors.h"
#include "fdutil.h"
#include "inputchecks.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

UniqueFd openHostFolder(const QString &dir, bool create)
{
    checkNoNul(dir, QStringLiteral("host folder"));
    const QString abs = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    const auto refuseLink = [](const QString &folder) {
        throw PermissionError(QStringLiteral("the host folder '%1' is a symbolic link; name the "
                                             "folder it points to")
                                  .arg(folder),
                              ELOOP);
    };
    QString existing = abs;
    QStringList missing; // below `existing`, outermost first
    for (;;) {
        UniqueFd fd(::open(QFile::encodeName(existing).constData(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (fd.isValid()) {
            if (missing.isEmpty())
                return fd;
            QByteArray failedAt;
            UniqueFd made =
                openOrCreateConfinedDirs(fd.get(), QFile::encodeName(missing.join(u'/')), O_RDONLY,
                                         ConfinedLinks::None, &failedAt);
            if (made.isValid())
                return made;
            const QString at = existing + u'/' + QFile::decodeName(failedAt);
            if (errno == ELOOP)
                refuseLink(at);
            throwOsError(errno, QStringLiteral("cannot create host folder"), at);
        }
        const int err = errno;
        if (err == ELOOP || (err == ENOTDIR && QFileInfo(existing).isSymLink()))
            refuseLink(existing);
        const QString parent = QFileInfo(existing).path();
        if (err != ENOENT || !create || parent == existing)
            throwOsError(err, QStringLiteral("cannot open host folder"), existing);
        missing.prepend(QFileInfo(existing).fileName());
        existing = parent;
    }
}

namespace {

// Takes ownership of `fd`.
QByteArray readOpened(int fd, const QString &path)
{
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        ::close(fd);
        if (e == EISDIR)
            throwOsError(e, QStringLiteral("cannot read host file"), path);
        throw OSError(QStringLiteral("cannot read host file '%1': not a regular file").arg(path),
                      e);
    }
    QFile f;
    if (!f.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle))
        throwOsError(EIO, QStringLiteral("cannot read host file"), path);
    QByteArray data = f.readAll();
    if (f.error() != QFileDevice::NoError)
        throw OSError(QStringLiteral("cannot read host file '%1': %2").arg(path, f.errorString()));
    return data;
}

} // namespace

QByteArray readHostFile(const QString &path)
{
    checkNoNul(path, QStringLiteral("host path"));
    const QByteArray name = QFile::encodeName(path);
    const int fd = ::open(name.constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        throwOsError(errno, QStringLiteral("cannot read host file"), path);
    return readOpened(fd, path);
}

QByteArray readHostFileAt(int dirFd, const QByteArray &name, const QString &path)
{
    const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    const int fd = ::openat(dirFd, name.constData(), flags);
    if (fd < 0 && errno == ELOOP)
        throw PermissionError(
            QStringLiteral("cannot read host file '%1': it is a symbolic link").arg(path), ELOOP);
    if (fd < 0)
        throwOsError(errno, QStringLiteral("cannot read host file"), path);
    return readOpened(fd, path);
}

void writeHostFileAtomic(const QString &path, const QByteArray &data, int mode, bool overwrite)
{
    checkNoNul(path, QStringLiteral("host path"));
    const QFileInfo fi(path);
    const UniqueFd dfd = openHostFolder(fi.absolutePath(), true);
    AtomicWriteOptions options;
    options.createMode = mode_t(mode & 0777);
    options.noReplace = !overwrite;
    if (const auto err = writeAtomicAt(dfd.get(), QFile::encodeName(fi.fileName()),
                                       QByteArrayView(data), options)) {
        const QString what =
            err->stage == AtomicWriteStage::Create   ? QStringLiteral("cannot create host file")
            : err->stage == AtomicWriteStage::Rename ? QStringLiteral("cannot replace host file")
                                                     : QStringLiteral("cannot write host file");
        throwOsError(err->error, what, path);
    }
}

} // namespace elsai
