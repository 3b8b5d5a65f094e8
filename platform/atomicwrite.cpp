// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "atomicwrite.h"

#include "faultinjection.h"
#include "fdutil.h"

#include <QRandomGenerator>

#include <cerrno>

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

namespace elsai {

namespace {

constexpr qsizetype MaxNameBytes = 255;
constexpr QByteArrayView TempTag(".elsai-tmp-");
constexpr int HexDigits = 12;
constexpr int MaxCreateAttempts = 16;

// Never replaces an existing entry. Where RENAME_NOREPLACE is unsupported, link() refuses an
// existing target too; the temp name is then unlinked.
int renameNoReplace(int dirFd, const char *from, const char *to)
{
    if (::renameat2(dirFd, from, dirFd, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return errno;
    if (::linkat(dirFd, from, dirFd, to, 0) != 0)
        return errno;
    ::unlinkat(dirFd, from, 0);
    return 0;
}

} // namespace

QByteArray atomicTempName(QByteArrayView name)
{
    const quint64 random = QRandomGenerator::system()->generate64() & 0xffffffffffffULL;
    const QByteArray hex = QByteArray::number(random, 16).rightJustified(HexDigits, '0');
    const qsizetype room = MaxNameBytes - 1 - TempTag.size() - HexDigits;
    qsizetype cut = qMin(name.size(), room);
    // back up to the start of a UTF-8 sequence so no character is split
    while (cut > 0 && cut < name.size() && (uchar(name[cut]) & 0xC0) == 0x80)
        --cut;
    QByteArray tmp;
    tmp.reserve(1 + cut + TempTag.size() + HexDigits);
    tmp += '.';
    tmp += name.first(cut);
    tmp += TempTag;
    tmp += hex;
    return tmp;
}

bool writeAllFd(int fd, const char *data, qsizetype size)
{
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size_t(size));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (n == 0) {
            errno = EIO;
            return false;
        }
        ELSAI_FAULT_POINT("write");
        data += n;
        size -= n;
    }
    return true;
}

std::optional<AtomicWriteError> writeAtomicAt(int dirFd, QByteArrayView name,
                                              const std::function<bool(int fd)> &fill,
                                              const AtomicWriteOptions &options,
                                              struct stat *written)
{
    const QByteArray target = name.toByteArray();
    if (target.isEmpty() || target.contains('/') || target.contains('\0') || target == "." ||
        target == "..") {
        return AtomicWriteError{EINVAL, AtomicWriteStage::Create};
    }
    QByteArray tmp;
    UniqueFd fd;
    for (int attempt = 0; attempt < MaxCreateAttempts && !fd.isValid(); ++attempt) {
        tmp = atomicTempName(target);
        fd.reset(::openat(dirFd, tmp.constData(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          options.createMode & 0777));
        if (!fd.isValid() && errno != EEXIST)
            return AtomicWriteError{errno, AtomicWriteStage::Create};
    }
    if (!fd.isValid())
        return AtomicWriteError{EEXIST, AtomicWriteStage::Create};

    bool renamed = false;
    const auto fail = [&](int error, AtomicWriteStage stage) {
        fd.reset();
        if (!renamed)
            ::unlinkat(dirFd, tmp.constData(), 0);
        return AtomicWriteError{error, stage};
    };

    if (!fill(fd.get()))
        return fail(errno ? errno : EIO, AtomicWriteStage::Fill);
    std::optional<mode_t> mode = options.exactMode;
    if (options.keepExistingMode) {
        struct stat old;
        if (::fstatat(dirFd, target.constData(), &old, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(old.st_mode)) {
            mode = old.st_mode & 0777; // set-id bits are dropped as on any foreign write
        }
    }
    if (mode && ::fchmod(fd.get(), *mode & 0777) != 0)
        return fail(errno, AtomicWriteStage::Mode);
    if (options.durable) {
        if (::fsync(fd.get()) != 0)
            return fail(errno, AtomicWriteStage::Sync);
        ELSAI_FAULT_POINT("fsync");
    }
    if (written && ::fstat(fd.get(), written) != 0)
        return fail(errno, AtomicWriteStage::Sync);
    if (::close(fd.release()) != 0)
        return fail(errno, AtomicWriteStage::Sync);

    const int err =
        options.noReplace
            ? renameNoReplace(dirFd, tmp.constData(), target.constData())
            : (::renameat(dirFd, tmp.constData(), dirFd, target.constData()) == 0 ? 0 : errno);
    if (err)
        return fail(err, AtomicWriteStage::Rename);
    renamed = true;
    ELSAI_FAULT_POINT("rename");
    if (options.durable) {
        if (::fsync(dirFd) != 0)
            return fail(errno, AtomicWriteStage::SyncFolder);
        ELSAI_FAULT_POINT("fsync-dir");
    }
    return std::nullopt;
}

std::optional<AtomicWriteError> writeAtomicAt(int dirFd, QByteArrayView name,
                                              QByteArrayView content,
                                              const AtomicWriteOptions &options,
                                              struct stat *written)
{
    return writeAtomicAt(
        dirFd, name, [content](int fd) { return writeAllFd(fd, content.data(), content.size()); },
        options, written);
}

std::optional<AtomicWriteError> symlinkAtomicAt(int dirFd, QByteArrayView name,
                                                QByteArrayView target,
                                                const AtomicWriteOptions &options)
{
    const QByteArray tmp = atomicTempName(name);
    const QByteArray link = name.toByteArray();
    if (::symlinkat(target.toByteArray().constData(), dirFd, tmp.constData()) != 0)
        return AtomicWriteError{errno, AtomicWriteStage::Create};
    ELSAI_FAULT_POINT("symlink");
    const int err =
        options.noReplace
            ? renameNoReplace(dirFd, tmp.constData(), link.constData())
            : (::renameat(dirFd, tmp.constData(), dirFd, link.constData()) == 0 ? 0 : errno);
    if (err) {
        ::unlinkat(dirFd, tmp.constData(), 0);
        return AtomicWriteError{err, AtomicWriteStage::Rename};
    }
    ELSAI_FAULT_POINT("rename");
    if (options.durable && ::fsync(dirFd) != 0)
        return AtomicWriteError{errno, AtomicWriteStage::SyncFolder};
    return std::nullopt;
}

} // namespace elsai
