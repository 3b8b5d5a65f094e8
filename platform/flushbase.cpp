// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "flushbase.h"

#include "errors.h"
#include "fdutil.h"
#include "hostfiles.h"
#include "tempfiles.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

// Format: records ended by NUL (no path holds one); fields by TAB, the free-text field last
// (so a name may hold tabs and newlines):
//   elsai-flush-base 1
//   I <st_dev> <st_ino>            the workspace folder
//   S <seed root>
//   D <host root>                  a manifest; its files follow
//   F <host size> <host mtime ns> <workspace size> <workspace mtime ns> <relative path>

namespace {

constexpr char kMagic[] = "elsai-flush-base 1";
/// A base file larger than this is refused (about 3 million files).
constexpr qint64 kMaxBaseBytes = qint64(512) * 1024 * 1024;

QString cleanRoot(const QString &path)
{
    return path.isEmpty() ? QString() : QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

std::optional<QByteArray> identityOf(const QString &root)
{
    struct stat st;
    if (::stat(QFile::encodeName(root).constData(), &st) != 0)
        return std::nullopt;
    return QByteArray::number(quint64(st.st_dev)) + '\t' + QByteArray::number(quint64(st.st_ino));
}

/// A workspace-relative path as seeding records them: no leading '/', no '.', '..' or empty
/// component.
bool plainRelative(const QString &rel)
{
    if (rel.isEmpty() || rel.startsWith(u'/'))
        return false;
    for (const QStringView part : QStringView(rel).split(u'/')) {
        if (part.isEmpty() || part == u"." || part == u"..")
            return false;
    }
    return true;
}

} // namespace

QString flushBasePath(const QString &workspaceRoot)
{
    const QString root = cleanRoot(workspaceRoot);
    const QFileInfo info(root);
    if (root.isEmpty() || info.fileName().isEmpty())
        return {};
    return info.path() + QStringLiteral("/.") + info.fileName() +
           QStringLiteral(".elsai-flush-base");
}

QByteArray encodeFlushBases(const QByteArray &identity, const FlushBases &bases)
{
    QByteArray out;
    out += kMagic;
    out += '\0';
    out += "I\t" + identity + '\0';
    out += "S\t" + bases.seedRoot.toUtf8() + '\0';
    for (auto m = bases.manifests.cbegin(); m != bases.manifests.cend(); ++m) {
        out += "D\t" + m.key().toUtf8() + '\0';
        for (auto f = m->files.cbegin(); f != m->files.cend(); ++f) {
            out += "F\t" + QByteArray::number(f->host.size) + '\t' +
                   QByteArray::number(f->host.mtimeNs) + '\t' +
                   QByteArray::number(f->workspace.size) + '\t' +
                   QByteArray::number(f->workspace.mtimeNs) + '\t' + f.key().toUtf8() + '\0';
        }
    }
    return out;
}

void saveFlushBases(const QString &workspaceRoot, const FlushBases &bases)
{
    const QString file = flushBasePath(workspaceRoot);
    const auto identity = identityOf(cleanRoot(workspaceRoot));
    if (file.isEmpty() || !identity)
        throw OSError(QStringLiteral("no place beside the workspace folder '%1' for its flush "
                                     "base")
                          .arg(workspaceRoot));
    writeHostFileAtomic(file, encodeFlushBases(*identity, bases), 0600);
}

int removeOrphanFlushBases(const QString &workspaceRoot)
{
    const QString file = flushBasePath(workspaceRoot);
    if (file.isEmpty())
        return 0;
    const QString parent = QFileInfo(file).path();
    UniqueFd dir;
    try {
        dir = openHostFolder(parent, false);
    } catch (const SandboxError &) {
        return 0; // no folder, or a link where it was: nothing of ours to sweep
    }
    // Only regular files, removed beneath the folder's descriptor (never by a path again).
    const auto removeFile = [&](const QByteArray &name) {
        struct stat st;
        return ::fstatat(dir.get(), name.constData(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISREG(st.st_mode) && ::unlinkat(dir.get(), name.constData(), 0) == 0;
    };
    // One pass over the names, as bytes: the parent may be a folder of thousands (/tmp), and
    // this runs whenever a local workspace is made.
    constexpr QByteArrayView suffix(".elsai-flush-base");
    // A crash during saveFlushBases() leaves a temp file of the one writer beside the base.
    const QByteArray baseName = QFile::encodeName(QFileInfo(file).fileName());
    QList<QByteArray> temps, bases;
    {
        const int fd = ::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *listing = fd >= 0 ? ::fdopendir(fd) : nullptr;
        if (!listing) {
            if (fd >= 0)
                ::close(fd);
            return 0;
        }
        while (const dirent *e = ::readdir(listing)) {
            const QByteArrayView name(e->d_name);
            if (!name.startsWith('.') || e->d_type == DT_DIR)
                continue;
            if (isTempNameFor(name, baseName))
                temps.append(name.toByteArray());
            else if (name.endsWith(suffix) && name.size() > suffix.size() + 1)
                bases.append(name.toByteArray());
        }
        ::closedir(listing);
    }
    int removed = 0;
    for (const QByteArray &name : std::as_const(temps))
        removed += removeFile(name) ? 1 : 0;
    for (const QByteArray &name : std::as_const(bases)) {
        // ".<folder>.elsai-flush-base" whose folder is gone
        const QByteArray folder = name.mid(1, name.size() - 1 - suffix.size());
        struct stat st;
        if (::fstatat(dir.get(), folder.constData(), &st, AT_SYMLINK_NOFOLLOW) == 0 ||
            errno != ENOENT) {
            continue;
        }
        removed += removeFile(name) ? 1 : 0;
    }
    return removed;
}

namespace {

/// Reads the base file `file` written for `identity`: none when missing or another's, and
/// `*error` set when it is unusable.
std::optional<FlushBases> readBaseFile(const QString &file,
                                       const std::optional<QByteArray> &identity, QString *error)
{
    auto bad = [&](const QString &why) -> std::optional<FlushBases> {
        if (error)
            *error = QStringLiteral("ignoring the flush base '%1': %2").arg(file, why);
        return std::nullopt;
    };
    if (file.isEmpty())
        return std::nullopt;
    // Beneath the folder's descriptor, never through a link (as saveFlushBases writes it).
    UniqueFd dir;
    try {
        dir = openHostFolder(QFileInfo(file).path(), false);
    } catch (const SandboxError &) {
        return std::nullopt; // no folder, or a link where it was: no base of ours
    }
    const QByteArray name = QFile::encodeName(QFileInfo(file).fileName());
    struct stat st;
    if (::fstatat(dir.get(), name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return std::nullopt;
    if (!S_ISREG(st.st_mode))
        return bad(QStringLiteral("not a regular file"));
    if (st.st_size > kMaxBaseBytes)
        return bad(QStringLiteral("larger than %1 bytes").arg(kMaxBaseBytes));
    QByteArray data;
    try {
        data = readHostFileAt(dir.get(), name, file);
    } catch (const SandboxError &e) {
        return bad(e.message());
    }
    const QList<QByteArray> records = data.split('\0');
    if (records.isEmpty() || records.first() != kMagic || !data.endsWith('\0'))
        return bad(QStringLiteral("not a flush base of this version"));
    FlushBases bases;
    SeedManifest *current = nullptr;
    bool identified = false;
    for (qsizetype i = 1; i + 1 < records.size(); ++i) { // the last one is empty (after NUL)
        const QByteArray &r = records.at(i);
        if (r.startsWith("I\t")) {
            if (!identity || r.mid(2) != *identity)
                return std::nullopt; // written for another folder of this name: not ours
            identified = true;
        } else if (r.startsWith("S\t")) {
            bases.seedRoot = QString::fromUtf8(r.mid(2));
        } else if (r.startsWith("D\t")) {
            const QString root = cleanRoot(QString::fromUtf8(r.mid(2)));
            if (root.isEmpty())
                return bad(QStringLiteral("record %1: empty host folder").arg(i));
            current = &bases.manifests[root];
            current->hostRoot = root;
        } else if (r.startsWith("F\t") && current) {
            const QList<QByteArray> f = r.split('\t');
            bool ok[4] = {false, false, false, false};
            SeedManifest::Entry e;
            if (f.size() >= 6) {
                e.host = {f[1].toLongLong(&ok[0]), f[2].toLongLong(&ok[1])};
                e.workspace = {f[3].toLongLong(&ok[2]), f[4].toLongLong(&ok[3])};
            }
            // the path is everything after the fifth tab
            qsizetype at = 0;
            for (int t = 0; t < 5 && at >= 0; ++t) {
                at = r.indexOf('\t', at);
                if (at >= 0)
                    ++at;
            }
            const QString rel = at > 0 ? QString::fromUtf8(r.mid(at)) : QString();
            if (!(ok[0] && ok[1] && ok[2] && ok[3]) || !plainRelative(rel))
                return bad(QStringLiteral("record %1 is malformed").arg(i));
            current->files.insert(rel, e);
        } else {
            return bad(QStringLiteral("record %1 is malformed").arg(i));
        }
    }
    if (!identified)
        return bad(QStringLiteral("it does not name its workspace folder"));
    return bases;
}

} // namespace

std::optional<FlushBases> loadFlushBases(const QString &workspaceRoot, QString *error)
{
    return readBaseFile(flushBasePath(workspaceRoot), identityOf(cleanRoot(workspaceRoot)), error);
}

QString remoteFlushBaseFolder()
{
    const QByteArray overridden = qgetenv("ELSAI_FLUSH_BASE_DIR");
    if (!overridden.isEmpty())
        return QDir::cleanPath(QFile::decodeName(overridden));
    const QString data = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    return data.isEmpty() ? QString() : data + QStringLiteral("/elsai/flush-bases");
}

QString remoteFlushBasePath(const QString &backendId)
{
    const QString folder = remoteFlushBaseFolder();
    if (folder.isEmpty() || backendId.isEmpty())
        return {};
    // a hash: a backend id holds '/', ':' and user text, and may be long
    return folder + u'/' +
           QString::fromLatin1(
               QCryptographicHash::hash(backendId.toUtf8(), QCryptographicHash::Sha256)
                   .toHex()
                   .left(32)) +
           QStringLiteral(".elsai-flush-base");
}

void saveRemoteFlushBases(const QString &backendId, const QByteArray &identity,
                          const FlushBases &bases)
{
    const QString file = remoteFlushBasePath(backendId);
    if (file.isEmpty())
        throw OSError(QStringLiteral("no data folder on this machine for the flush base of '%1' "
                                     "(set ELSAI_FLUSH_BASE_DIR)")
                          .arg(backendId));
    const QString folder = QFileInfo(file).path();
    if (!QDir().mkpath(folder))
        throw OSError(QStringLiteral("cannot create the flush base folder '%1'").arg(folder));
    ::chmod(QFile::encodeName(folder).constData(), 0700);
    writeHostFileAtomic(file, encodeFlushBases(backendId.toUtf8() + '\t' + identity, bases), 0600);
}

std::optional<FlushBases> loadRemoteFlushBases(const QString &backendId, const QByteArray &identity,
                                               QString *error)
{
    return readBaseFile(remoteFlushBasePath(backendId), backendId.toUtf8() + '\t' + identity,
                        error);
}

} // namespace elsai
