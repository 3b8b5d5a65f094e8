#include "types.h"

#include <QJsonArray>

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

QJsonObject FileInfo::toJson() const
{
    QJsonObject o{{QStringLiteral("path"), path},
                  {QStringLiteral("is_dir"), isDir},
                  {QStringLiteral("type"), typeName(type)},
                  {QStringLiteral("mtime_ms"), mtimeMs}};
    o.insert(QStringLiteral("size"), size ? QJsonValue(*size) : QJsonValue());
    return o;
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
    return {{QStringLiteral("files_synced"), filesSynced},
            {QStringLiteral("bytes_synced"), bytesSynced},
            {QStringLiteral("errors"), QJsonArray::fromStringList(errors)},
            {QStringLiteral("skipped_paths"), QJsonArray::fromStringList(skippedPaths)},
            {QStringLiteral("conflicts"), QJsonArray::fromStringList(conflicts)},
            {QStringLiteral("success"), success()}};
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
