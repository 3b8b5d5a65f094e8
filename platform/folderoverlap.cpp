// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "folderoverlap.h"

#include "errors.h"

#include <QDir>
#include <QFileInfo>

#include <sys/stat.h>

namespace elsai {

namespace {

/// The absolute, symlink-free form of `path`: its longest existing prefix resolved by the
/// kernel (realpath), the rest appended as spelled and cleaned.
QString realLocation(const QString &path)
{
    QString existing = QDir::cleanPath(QDir(path).absolutePath());
    QStringList tail;
    while (!QFileInfo::exists(existing) && existing != QLatin1String("/")) {
        tail.prepend(QFileInfo(existing).fileName());
        existing = QFileInfo(existing).path();
    }
    QString real = QFileInfo(existing).canonicalFilePath();
    if (real.isEmpty())
        real = existing;
    for (const QString &name : std::as_const(tail))
        real += (real.endsWith(QLatin1Char('/')) ? QString() : QStringLiteral("/")) + name;
    return QDir::cleanPath(real);
}

bool isWithin(const QString &inner, const QString &outer)
{
    if (outer == QLatin1String("/"))
        return true;
    return inner.startsWith(outer) && inner.size() > outer.size() && inner.at(outer.size()) == u'/';
}

struct Identity
{
    dev_t dev = 0;
    ino_t ino = 0;
    bool valid = false;
};

Identity identityOf(const QString &path)
{
    struct stat st;
    if (::stat(QFile::encodeName(path).constData(), &st) != 0)
        return {};
    return {st.st_dev, st.st_ino, true};
}

/// True when `outer` (an existing folder) is `inner` or one of inner's existing parents, by
/// device and inode: the route-independent check behind the path comparison.
bool hasAncestor(const QString &inner, const Identity &outer, bool *same)
{
    if (!outer.valid)
        return false;
    QString p = inner;
    for (int depth = 0; depth < 4096; ++depth) {
        const Identity id = identityOf(p);
        if (id.valid && id.dev == outer.dev && id.ino == outer.ino) {
            *same = depth == 0;
            return true;
        }
        if (p == QLatin1String("/"))
            break;
        p = QFileInfo(p).path();
    }
    return false;
}

} // namespace

FolderRelation relateFolders(const QString &first, const QString &second)
{
    const QString a = realLocation(first);
    const QString b = realLocation(second);
    if (a == b)
        return FolderRelation::Same;
    if (isWithin(a, b))
        return FolderRelation::FirstInsideSecond;
    if (isWithin(b, a))
        return FolderRelation::SecondInsideFirst;
    bool same = false;
    if (hasAncestor(a, identityOf(b), &same))
        return same ? FolderRelation::Same : FolderRelation::FirstInsideSecond;
    if (hasAncestor(b, identityOf(a), &same))
        return same ? FolderRelation::Same : FolderRelation::SecondInsideFirst;
    return FolderRelation::Separate;
}

void requireSeparateFolders(const QString &firstRole, const QString &first,
                            const QString &secondRole, const QString &second)
{
    if (first.isEmpty() || second.isEmpty())
        return;
    QString how;
    switch (relateFolders(first, second)) {
    case FolderRelation::Separate:
        return;
    case FolderRelation::Same:
        how = QStringLiteral("is the same folder as");
        break;
    case FolderRelation::FirstInsideSecond:
        how = QStringLiteral("lies inside");
        break;
    case FolderRelation::SecondInsideFirst:
        how = QStringLiteral("contains");
        break;
    }
    throw ValueError(QStringLiteral("%1 '%2' %3 %4 '%5': the two must be separate folders "
                                    "(neither inside the other); choose another %1")
                         .arg(firstRole, first, how, secondRole, second));
}

} // namespace elsai
