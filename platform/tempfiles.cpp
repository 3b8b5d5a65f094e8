// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "tempfiles.h"

#include "fdutil.h"
#include "treepaths.h"

#include <QByteArray>
#include <QList>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

namespace elsai {

namespace {

bool allHex(QByteArrayView s, qsizetype minLen, qsizetype maxLen)
{
    if (s.size() < minLen || s.size() > maxLen)
        return false;
    for (const char c : s) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

int sweep(int dirFd, bool recursive, int depth)
{
    // dirFd may be O_PATH: reopen it readable for getdents
    const int fd = ::openat(dirFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    DIR *dir = ::fdopendir(fd);
    if (!dir) {
        ::close(fd);
        return 0;
    }
    int removed = 0;
    QList<QByteArray> subfolders;
    while (const dirent *e = ::readdir(dir)) {
        const QByteArrayView name(e->d_name);
        if (name == "." || name == "..")
            continue;
        struct stat st;
        if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISREG(st.st_mode) && isStaleTempName(name)) {
            if (::unlinkat(fd, e->d_name, 0) == 0)
                ++removed;
        } else if (S_ISDIR(st.st_mode) && recursive && depth < MaxTreeDepth) {
            subfolders.append(QByteArray(e->d_name));
        }
    }
    for (const QByteArray &sub : subfolders) {
        const UniqueFd child(
            ::openat(fd, sub.constData(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (child.isValid())
            removed += sweep(child.get(), recursive, depth + 1);
    }
    ::closedir(dir);
    return removed;
}

} // namespace

bool isStaleTempName(QByteArrayView name)
{
    if (!name.startsWith('.'))
        return false;
    constexpr QByteArrayView flushTag(".sandbox-tmp-");
    if (name.startsWith(flushTag))
        return allHex(name.sliced(flushTag.size()), 1, 16);
    constexpr QByteArrayView writeTag(".elsai-tmp-");
    const qsizetype at = QByteArray(name.toByteArray()).lastIndexOf(writeTag.toByteArray());
    if (at <= 1) // needs a non-empty name between the leading dot and the tag
        return false;
    const QByteArrayView hex = name.sliced(at + writeTag.size());
    return allHex(hex, 12, 12) || allHex(hex, 16, 16);
}

bool isTempNameFor(QByteArrayView name, QByteArrayView target)
{
    constexpr QByteArrayView writeTag(".elsai-tmp-");
    if (!isStaleTempName(name) || name.startsWith(QByteArrayView(".sandbox-tmp-")))
        return false;
    const qsizetype at = name.toByteArray().lastIndexOf(writeTag.toByteArray());
    const QByteArrayView stem = name.sliced(1, at - 1);
    return target.startsWith(stem);
}

int removeStaleTempFiles(int dirFd, bool recursive)
{
    return sweep(dirFd, recursive, 0);
}

} // namespace elsai
