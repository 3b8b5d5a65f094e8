// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "remotefetch.h"

#include "confinedscript.h"
#include "errors.h"
#include "localtar.h"
#include "workspacefs.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cerrno>

namespace elsai::remote {

namespace {

/// What one archive member costs beyond its content: its header, the padding to the next
/// block, and for a name too long for the header a pax extended header holding it (the
/// bounded `archive-out` writes no times).
qint64 memberOverhead(const QString &rel)
{
    const qint64 name = rel.toUtf8().size() + 2;
    return 2 * 512 + (name > 100 ? 2 * 512 + name : 0);
}

} // namespace

QByteArray archiveExclusions(const QList<std::pair<QString, bool>> &entries,
                             const QSet<QString> &wanted)
{
    QSet<QString> onTheWay;
    for (const QString &rel : wanted) {
        for (qsizetype slash = rel.indexOf(u'/'); slash > 0; slash = rel.indexOf(u'/', slash + 1))
            onTheWay.insert(rel.left(slash));
    }
    QByteArray out;
    for (const auto &[rel, folder] : entries) {
        if (wanted.contains(rel) || (folder && onTheWay.contains(rel)) || rel.contains(u'\n'))
            continue;
        const qsizetype slash = rel.lastIndexOf(u'/');
        if (slash < 0 || onTheWay.contains(rel.left(slash))) // top-most: tar skips the rest
            out += "./" + rel.toUtf8() + '\n';
    }
    return out;
}

QStringList archiveOutArgs(const QByteArray &exclusions, const QString &exclusionsFile,
                           qint64 maxBytes, const std::function<void(const QString &)> &upload)
{
    QString source = QStringLiteral("-");
    if (upload && exclusions.size() <= kInlineExclusionBytes) {
        source = u'=' + QString::fromLatin1(exclusions.toBase64());
    } else if (upload) {
        upload(exclusionsFile);
        source = QFileInfo(exclusionsFile).fileName();
    }
    return {source, QString::number(maxBytes + 1)};
}

std::optional<QHash<QString, QByteArray>>
fetchByArchive(const FileFetch &fetch, const QString &scratchParent, const ArchiveOut &archiveOut)
{
    QHash<QString, QByteArray> out;
    if (fetch.paths.isEmpty())
        return out;
    const qsizetype prefix = fetch.folder.isEmpty() ? 0 : fetch.folder.size() + 1;
    QSet<QString> wanted;
    for (const QString &path : fetch.paths)
        wanted.insert(path.mid(prefix));
    // The bound: what was listed, an eighth more for files that grew since, the headers, and
    // the end of the archive. Files created since the listing, or names the exclusions cannot
    // express, count against it.
    qint64 content = 0;
    qint64 bound = 64 * 1024;
    QList<std::pair<QString, bool>> entries;
    entries.reserve(fetch.listed.size());
    for (const WalkEntry &e : fetch.listed) {
        QString rel = e.path.mid(prefix);
        const bool folder = e.type == FileInfo::Type::Directory;
        if (wanted.contains(rel)) {
            content += e.size.value_or(fetch.maxFileBytes + 1);
            bound += memberOverhead(rel);
        } else if (folder) {
            bound += memberOverhead(rel); // on the way to a wanted file, or excluded
        }
        entries.append({std::move(rel), folder});
    }
    bound += content + content / 8;

    const QString parent = scratchParent.isEmpty() ? QDir::tempPath() : scratchParent;
    QTemporaryDir work(parent + QStringLiteral("/elsai-fetch-XXXXXX"));
    if (!work.isValid())
        throw OSError(QStringLiteral("cannot create a local staging folder under %1").arg(parent));
    const QByteArray exclusions = archiveExclusions(entries, wanted);
    const QString exclusionsFile = work.filePath(confinedTempName(QStringLiteral("fetch")));
    if (!writeLocalFile(exclusionsFile, exclusions))
        throw OSError(QStringLiteral("cannot write the archive's exclusions locally"));
    const QByteArray tar = archiveOut(fetch.folder, exclusions, exclusionsFile, bound);
    if (tar.size() > bound)
        return std::nullopt;
    if (tar.size() < 1024) // even an empty archive has its two end blocks
        throw OSError(QStringLiteral("the sandbox sent no archive of '%1' (GNU tar missing?)")
                          .arg(fetch.folder.isEmpty() ? QStringLiteral(".") : fetch.folder),
                      EIO);

    // Only the wanted names are unpacked (the archive may hold more: names the exclusions
    // cannot express, files created since the listing); GNU tar refuses `..` and absolute
    // members and delays links, and the folder is ours alone.
    QByteArray names;
    for (const QString &rel : std::as_const(wanted))
        names += "./" + rel.toUtf8() + '\0';
    const QString tarFile = work.filePath(QStringLiteral("files.tar"));
    const QString namesFile = work.filePath(QStringLiteral("names"));
    const QString files = work.filePath(QStringLiteral("files"));
    if (!writeLocalFile(tarFile, tar) || !writeLocalFile(namesFile, names) || !QDir().mkpath(files))
        throw OSError(QStringLiteral("cannot stage the fetched archive locally"));
    // a member missing (gone, unreadable in the sandbox) is a file left out of the answer
    runLocalTar({QStringLiteral("-x"), QStringLiteral("-f"), tarFile, QStringLiteral("-C"), files,
                 QStringLiteral("--no-same-owner"), QStringLiteral("--no-same-permissions"),
                 QStringLiteral("--no-recursion"), QStringLiteral("--null"), QStringLiteral("-T"),
                 namesFile});
    const WorkspaceFs staging(files);
    for (const QString &path : fetch.paths) {
        try {
            qint64 total = 0;
            out.insert(path,
                       staging.readRange(path.mid(prefix), 0, fetch.maxFileBytes + 1, &total));
        } catch (const SandboxError &) {
            // not a regular file any more, or missing: unreadable
        }
    }
    return out;
}

} // namespace elsai::remote
