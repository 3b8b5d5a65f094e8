// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "types.h"

#include "errors.h"

#include <QJsonArray>
#include <QVariantMap>

#include <algorithm>

#include <dirent.h>

namespace elsai {

QJsonObject ExecuteResult::toJson() const
{
    return {{QStringLiteral("output"), output},       {QStringLiteral("exit_code"), exitCode},
            {QStringLiteral("truncated"), truncated}, {QStringLiteral("stderr"), stderr_},
            {QStringLiteral("success"), success()},   {QStringLiteral("timed_out"), timedOut},
            {QStringLiteral("cancelled"), cancelled}, {QStringLiteral("duration_ms"), durationMs}};
}

static QString typeName(FileInfo::Type t)
{
    switch (t) {
    case FileInfo::Type::File:
        return QStringLiteral("file");
    case FileInfo::Type::Directory:
        return QStringLiteral("dir");
    case FileInfo::Type::Symlink:
        return QStringLiteral("symlink");
    case FileInfo::Type::Other:
        break;
    }
    return QStringLiteral("other");
}

FileInfo::Type FileInfo::typeOfDirent(unsigned char dtype)
{
    switch (dtype) {
    case DT_REG:
        return Type::File;
    case DT_DIR:
        return Type::Directory;
    case DT_LNK:
        return Type::Symlink;
    default:
        return Type::Other;
    }
}

QJsonObject FileInfo::toJson() const
{
    QJsonObject o{{QStringLiteral("path"), path},
                  {QStringLiteral("is_dir"), isDir},
                  {QStringLiteral("type"), typeName(type)},
                  {QStringLiteral("mtime_ms"), mtimeMs}};
    o.insert(QStringLiteral("size"), size ? QJsonValue(*size) : QJsonValue());
    return o;
}

QString DirListing::path(const Entry &e) const
{
    const QByteArrayView n = name(e);
    QString p;
    p.reserve(folder.size() + 1 + n.size());
    p += folder;
    if (!folder.isEmpty())
        p += u'/';
    if (ascii)
        p += QLatin1StringView(n.data(), n.size());
    else
        p += QString::fromUtf8(n);
    return p;
}

FileInfo DirListing::info(const Entry &e) const
{
    FileInfo fi;
    fi.path = path(e);
    fi.type = e.type;
    fi.isDir = e.type == FileInfo::Type::Directory;
    fi.size = e.size;
    fi.mtimeMs = e.mtimeMs;
    return fi;
}

DirListing DirListing::fromInfos(const QString &folder, const QList<FileInfo> &infos)
{
    DirListing l;
    const QString prefix = folder.isEmpty() ? QString() : folder + u'/';
    // Names relative to the folder when every path is beneath it; otherwise the whole paths.
    const bool beneath = std::all_of(infos.cbegin(), infos.cend(), [&](const FileInfo &fi) {
        return fi.path.startsWith(prefix) && fi.path.size() > prefix.size();
    });
    if (beneath)
        l.folder = folder;
    l.entries.reserve(size_t(infos.size()));
    for (const FileInfo &fi : infos) {
        const QByteArray name =
            (beneath ? QStringView(fi.path).mid(prefix.size()) : QStringView(fi.path)).toUtf8();
        for (const char c : name)
            l.ascii = l.ascii && uchar(c) < 0x80;
        l.entries.push_back({l.names.size(), name.size(), fi.type, fi.size, fi.mtimeMs});
        l.names += name;
    }
    return l;
}

QJsonObject WorkspaceSeedResult::toJson() const
{
    return {{QStringLiteral("files_seeded"), filesSeeded},
            {QStringLiteral("bytes_seeded"), bytesSeeded},
            {QStringLiteral("skipped_paths"), QJsonArray::fromStringList(skippedPaths)},
            {QStringLiteral("errors"), QJsonArray::fromStringList(errors)},
            {QStringLiteral("success"), success()}};
}

QJsonObject WorkspaceSyncResult::toJson() const
{
    QVariantMap conflictMap;
    for (auto it = conflictFiles.cbegin(); it != conflictFiles.cend(); ++it)
        conflictMap.insert(it.key(), it.value());
    return {{QStringLiteral("files_synced"), filesSynced},
            {QStringLiteral("bytes_synced"), bytesSynced},
            {QStringLiteral("errors"), QJsonArray::fromStringList(errors)},
            {QStringLiteral("skipped_paths"), QJsonArray::fromStringList(skippedPaths)},
            {QStringLiteral("conflicts"), QJsonArray::fromStringList(conflicts)},
            {QStringLiteral("conflict_files"), QJsonObject::fromVariantMap(conflictMap)},
            {QStringLiteral("added"), QJsonArray::fromStringList(added)},
            {QStringLiteral("updated"), QJsonArray::fromStringList(updated)},
            {QStringLiteral("kept_host"), QJsonArray::fromStringList(keptHost)},
            {QStringLiteral("host_deleted"), QJsonArray::fromStringList(hostDeleted)},
            {QStringLiteral("sandbox_deleted"), QJsonArray::fromStringList(sandboxDeleted)},
            {QStringLiteral("success"), success()}};
}

NoBaseConflict noBaseConflictFromString(const QString &name)
{
    if (name == QLatin1String("keep-both"))
        return NoBaseConflict::KeepBoth;
    if (name == QLatin1String("overwrite"))
        return NoBaseConflict::Overwrite;
    throw ValueError(QStringLiteral("unknown no-base flush rule '%1'; use keep-both (the "
                                    "default: the host file stays, the sandbox version is "
                                    "written beside it) or overwrite")
                         .arg(name));
}

QString noBaseConflictName(NoBaseConflict policy)
{
    return policy == NoBaseConflict::Overwrite ? QStringLiteral("overwrite")
                                               : QStringLiteral("keep-both");
}

WorkspaceSyncPolicy defaultSandboxSyncPolicy()
{
    return {DEFAULT_SANDBOX_SEED_EXCLUDES, DEFAULT_SANDBOX_SYNC_INCLUDE};
}

QString workspaceIdForRun(const QString &runId)
{
    return QStringLiteral("graph-") + runId;
}

QString workspaceIdForContext(const QString &contextId, bool shared)
{
    return shared ? contextId + QStringLiteral(":shared-ws") : contextId;
}

} // namespace elsai
