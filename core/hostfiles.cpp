#include "hostfiles.h"

#include "errors.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QUuid>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

QByteArray readHostFile(const QString &path)
{
    const QByteArray name = QFile::encodeName(path);
    const int fd = ::open(name.constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        throwOsError(errno, QStringLiteral("cannot read host file"), path);
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

void writeHostFileAtomic(const QString &path, const QByteArray &data, int mode)
{
    const QFileInfo fi(path);
    const QString dir = fi.absolutePath();
    if (!QDir().mkpath(dir))
        throw OSError(QStringLiteral("cannot create host folder '%1'").arg(dir));
    const QByteArray dirName = QFile::encodeName(dir);
    const int dfd = ::open(dirName.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        throwOsError(errno, QStringLiteral("cannot open host folder"), dir);
    const QByteArray base = QFile::encodeName(fi.fileName());
    const QByteArray tmp =
        "." + base + ".elsai-tmp-" + QUuid::createUuid().toString(QUuid::Id128).left(12).toLatin1();
    auto fail = [&](int e, const QString &what) {
        ::unlinkat(dfd, tmp.constData(), 0);
        ::close(dfd);
        throwOsError(e, what, path);
    };
    const int fd =
        ::openat(dfd, tmp.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        const int e = errno;
        ::close(dfd);
        throwOsError(e, QStringLiteral("cannot create host file"), path);
    }
    qint64 done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.constData() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int e = n < 0 ? errno : EIO;
            ::close(fd);
            fail(e, QStringLiteral("cannot write host file"));
        }
        done += n;
    }
    if (::fsync(fd) != 0) {
        const int e = errno;
        ::close(fd);
        fail(e, QStringLiteral("cannot sync host file"));
    }
    ::close(fd);
    if (::renameat(dfd, tmp.constData(), dfd, base.constData()) != 0)
        fail(errno, QStringLiteral("cannot replace host file"));
    ::fsync(dfd);
    ::close(dfd);
}

} // namespace elsai
