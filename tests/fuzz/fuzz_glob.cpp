// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// libFuzzer target: the gitignore-style glob matcher (platform/glob.h).
// Input: "<pattern>\n<path>"; the first byte's low bit says whether the path is a folder.
// Besides crashes and sanitizer reports, it checks two properties that must hold for every
// input: a pattern that matches a path also matches "the path or a parent", and a pattern
// that matches a folder also matches everything inside it.
#include "glob.h"

#include <QString>

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 4096)
        return 0;
    const bool isDir = data[0] & 1;
    const QByteArray input(reinterpret_cast<const char *>(data) + 1, qsizetype(size - 1));
    const qsizetype nl = input.indexOf('\n');
    const QString pattern = QString::fromUtf8(nl < 0 ? input : input.left(nl));
    const QString path = nl < 0 ? QStringLiteral("a/b") : QString::fromUtf8(input.mid(nl + 1));

    const elsai::GlobPattern glob(pattern);
    const bool self = glob.matches(path, isDir);
    const bool selfOrParent = glob.matchesPathOrParent(path, isDir);
    if (self && !selfOrParent)
        std::abort();
    if (self && isDir && !glob.matchesPathOrParent(path + QStringLiteral("/child"), false))
        std::abort();
    if (!glob.isValid() && (self || selfOrParent))
        std::abort(); // an invalid pattern matches nothing

    const elsai::GlobSet set(QStringList{pattern, QStringLiteral("*.md")});
    if (self && !set.matches(path, isDir))
        std::abort();
    return 0;
}
