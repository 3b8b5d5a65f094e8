// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "filediff.h"

#include "backend.h"
#include "displaytext.h"
#include "errors.h"
#include "unifieddiff.h"
#include "workspacechanges.h"
#include "workspacefs.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QLocale>
#include <QStringDecoder>

namespace elsai {

namespace {

constexpr qint64 kChunk = 1024 * 1024;

QString tr(const char *text)
{
    return QCoreApplication::translate("FileDiff", text);
}

/// Reads a file through `range(offset, count, &total)`: whole when within the text limit,
/// else hashed chunk by chunk up to the hash limit (when `ranged`; a side that cannot read
/// ranges gives the size only).
template<typename Range>
FileVersion readVersion(Range range, bool ranged)
{
    FileVersion v;
    qint64 total = 0;
    QByteArray first = range(0, FileVersion::textLimit() + 1, &total);
    v.size = total;
    if (total <= FileVersion::textLimit() && first.size() == total) {
        v.state = FileVersion::State::Read;
        v.bytes = std::move(first);
        v.sha256 = QCryptographicHash::hash(v.bytes, QCryptographicHash::Sha256).toHex();
        return v;
    }
    v.state = FileVersion::State::TooLarge;
    if (!ranged || total > FileVersion::hashLimit())
        return v;
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(first);
    qint64 offset = first.size();
    while (offset < total) {
        qint64 now = 0;
        const QByteArray chunk = range(offset, kChunk, &now);
        if (chunk.isEmpty() || now != total)
            return v; // changed while being read: no hash rather than a wrong one
        hash.addData(chunk);
        offset += chunk.size();
    }
    v.sha256 = hash.result().toHex();
    return v;
}

FileVersion unreadable(const QString &problem)
{
    FileVersion v;
    v.state = FileVersion::State::Unreadable;
    v.problem = problem;
    return v;
}

/// The text of a version, or none when it is not UTF-8 text (NUL bytes or invalid UTF-8).
std::optional<QString> textOf(const FileVersion &v)
{
    if (v.state == FileVersion::State::Absent)
        return QString();
    if (v.state != FileVersion::State::Read || v.bytes.contains('\0'))
        return std::nullopt;
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decoder.decode(v.bytes);
    if (decoder.hasError())
        return std::nullopt;
    return text;
}

QString summaryLine(const QString &name, const FileVersion &v)
{
    switch (v.state) {
    case FileVersion::State::Absent:
        return QStringLiteral("%1: %2").arg(name, tr("absent"));
    case FileVersion::State::Unreadable:
        return QStringLiteral("%1: %2").arg(name, v.problem);
    case FileVersion::State::Read:
    case FileVersion::State::TooLarge:
        break;
    }
    QString line = QStringLiteral("%1: %2 (%3 bytes)").arg(name, sizeText(v.size)).arg(v.size);
    line += v.sha256.isEmpty() ? QStringLiteral(", %1").arg(tr("not hashed (too large)"))
                               : QStringLiteral(", sha256 %1").arg(QLatin1String(v.sha256));
    return line;
}

} // namespace

QString FileDiff::text() const
{
    if (note.isEmpty())
        return body;
    if (body.isEmpty())
        return note;
    return note + QLatin1Char('\n') + body;
}

FileVersion readWorkspaceVersion(ExecutionBackend &backend, const QString &path)
{
    try {
        const FileInfo info = backend.stat(path);
        if (info.type != FileInfo::Type::File)
            return unreadable(info.type == FileInfo::Type::Symlink ? tr("a symbolic link")
                                                                   : tr("not a regular file"));
        return readVersion(
            [&backend, &path](qint64 offset, qint64 count, qint64 *total) {
                FileRange r = backend.readFileRange(path, offset, count);
                *total = r.totalSize;
                return std::move(r.data);
            },
            backend.hasRangedRead());
    } catch (const FileNotFoundError &) {
        return {};
    } catch (const SandboxError &e) {
        return unreadable(e.message());
    }
}

FileVersion readHostVersion(const QString &root, const QString &path, qint64 *mtimeMs)
{
    try {
        const WorkspaceFs fs(root);
        const FileInfo info = fs.stat(path);
        if (mtimeMs)
            *mtimeMs = info.mtimeMs;
        if (info.type != FileInfo::Type::File)
            return unreadable(info.type == FileInfo::Type::Symlink ? tr("a symbolic link")
                                                                   : tr("not a regular file"));
        return readVersion(
            [&fs, &path](qint64 offset, qint64 count, qint64 *total) {
                return fs.readRange(path, offset, count, total);
            },
            true);
    } catch (const FileNotFoundError &) {
        return {};
    } catch (const SandboxError &e) {
        return unreadable(e.message());
    }
}

FileDiff diffFileVersions(const FileVersion &oldVersion, const QString &oldName,
                          const FileVersion &newVersion, const QString &newName)
{
    FileDiff diff;
    const bool oldAbsent = oldVersion.state == FileVersion::State::Absent;
    const bool newAbsent = newVersion.state == FileVersion::State::Absent;
    const QString shownOld = oldAbsent ? QStringLiteral("/dev/null") : oldName;
    const QString shownNew = newAbsent ? QStringLiteral("/dev/null") : newName;
    const bool readable = oldVersion.state != FileVersion::State::Unreadable &&
                          newVersion.state != FileVersion::State::Unreadable;
    if (readable && oldVersion.state == newVersion.state && oldVersion.size == newVersion.size &&
        oldVersion.sha256 == newVersion.sha256 && (oldAbsent || !oldVersion.sha256.isEmpty())) {
        diff.kind = FileDiff::Kind::Identical;
        diff.note = tr("The two versions are identical.");
        return diff;
    }
    const std::optional<QString> oldText = textOf(oldVersion);
    const std::optional<QString> newText = textOf(newVersion);
    if (oldText && newText) {
        diff.kind = FileDiff::Kind::Text;
        diff.body = unifiedDiff(*oldText, *newText, shownOld, shownNew);
        if (diff.body.isEmpty()) // same text, other bytes (a BOM-less re-encoding cannot, but)
            diff.note = tr("The two versions read as the same text.");
        return diff;
    }
    const bool tooLarge = oldVersion.state == FileVersion::State::TooLarge ||
                          newVersion.state == FileVersion::State::TooLarge;
    diff.kind = readable && !tooLarge ? FileDiff::Kind::Binary : FileDiff::Kind::Summary;
    if (!readable)
        diff.note = tr("No text diff: a version cannot be read.");
    else if (tooLarge)
        diff.note = tr("No text diff: larger than %1.").arg(sizeText(FileVersion::textLimit()));
    else
        diff.note = tr("Binary files differ.");
    diff.body = summaryLine(shownOld, oldVersion) + QLatin1Char('\n') +
                summaryLine(shownNew, newVersion) + QLatin1Char('\n');
    return diff;
}

FileDiff diffAgainstSeed(ExecutionBackend &backend, const QString &path)
{
    const QString oldName = QStringLiteral("seed/") + path;
    const QString newName = QStringLiteral("workspace/") + path;
    const FileVersion now = readWorkspaceVersion(backend, path);
    const std::optional<SeedManifest> manifest = backend.seedManifest();
    FileVersion base;
    QString note;
    if (!manifest) {
        note = tr("This backend keeps no record of its seed: shown against an empty file.");
    } else if (const auto it = manifest->files.constFind(path);
               it != manifest->files.cend() && !manifest->hostRoot.isEmpty()) {
        qint64 mtimeMs = 0;
        base = readHostVersion(manifest->hostRoot, path, &mtimeMs);
        FileInfo seen;
        seen.size = base.size;
        seen.mtimeMs = mtimeMs;
        if (base.state == FileVersion::State::Absent) {
            note = tr("The seed folder (%1) no longer has this file: its seeded version is "
                      "unknown.")
                       .arg(manifest->hostRoot);
            base = unreadable(tr("gone from the seed folder"));
        } else if (stampChanged(it->host, seen)) {
            note = tr("The seed folder's copy changed after the seed: compared with its "
                      "current version in %1.")
                       .arg(manifest->hostRoot);
        }
    }
    FileDiff diff = diffFileVersions(base, oldName, now, newName);
    if (!note.isEmpty())
        diff.note = diff.note.isEmpty() ? note : note + QLatin1Char('\n') + diff.note;
    return diff;
}

} // namespace elsai
