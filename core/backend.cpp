// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "backend.h"

#include "errors.h"
#include "workspacefs.h"

#include <vector>

#include <cerrno>

namespace elsai {

ExecutionBackend::~ExecutionBackend() = default;

QHash<QString, FileStamp> ExecutionBackend::seedBaseline() const
{
    const std::optional<SeedManifest> manifest = seedManifest();
    return manifest ? manifest->workspaceStamps() : QHash<QString, FileStamp>();
}
BackendTemplate::~BackendTemplate() = default;

FileRange ExecutionBackend::readFileRange(const QString &path, qint64 offset, qint64 maxBytes)
{
    if (offset < 0 || maxBytes < 0)
        throw ValueError(QStringLiteral("a file range needs offset >= 0 and max_bytes >= 0"));
    FileRange range;
    range.data = readFile(path);
    range.totalSize = range.data.size();
    if (offset >= range.totalSize) {
        range.data.clear();
    } else if (offset > 0 || maxBytes < range.totalSize - offset) {
        range.data = range.data.sliced(qsizetype(offset),
                                       qsizetype(qMin(maxBytes, range.totalSize - offset)));
    }
    return range;
}

void ExecutionBackend::walkTree(const QString &path, bool withStat,
                                const std::function<WalkStep(const WalkEntry &)> &visit)
{
    // An explicit stack of listings (one per open folder), not recursion: depth is bounded
    // by MaxWalkDepth, memory by the folders on the way down.
    struct Level
    {
        DirListing listing;
        QString folder; ///< normalized: "" for the root
        qsizetype next = 0;
    };
    std::vector<Level> stack;
    stack.push_back({listDirCompact(path, withStat ? -1 : 0), WorkspaceFs::normalize(path), 0});
    while (!stack.empty()) {
        Level &level = stack.back();
        if (level.next >= level.listing.size()) {
            stack.pop_back();
            continue;
        }
        const DirListing::Entry &e = level.listing.entries[size_t(level.next++)];
        WalkEntry entry;
        // the name under our own spelling of the folder, whatever form the backend reports
        const QString reported = level.listing.path(e);
        const QStringView name = QStringView(reported).mid(reported.lastIndexOf(u'/') + 1);
        entry.path =
            level.folder.isEmpty() ? name.toString() : level.folder + u'/' + name.toString();
        entry.type = e.type;
        entry.size = e.size;
        entry.mtimeMs = e.mtimeMs;
        entry.depth = int(stack.size()) - 1;
        const WalkStep step = visit(entry);
        if (step == WalkStep::Stop)
            return;
        if (step == WalkStep::SkipFolder || entry.type != FileInfo::Type::Directory ||
            int(stack.size()) >= MaxWalkDepth)
            continue;
        DirListing inner;
        try {
            inner = listDirCompact(entry.path, withStat ? -1 : 0);
        } catch (const OSError &) {
            continue; // gone or unreadable since it was listed: the walk goes on without it
        }
        stack.push_back({std::move(inner), entry.path, 0});
    }
}

void ExecutionBackend::rename(const QString &source, const QString &dest, bool overwrite)
{
    const FileInfo from = stat(source);
    std::optional<FileInfo> to;
    try {
        to = stat(dest);
    } catch (const FileNotFoundError &) {
    }
    if (to && to->type == FileInfo::Type::Directory)
        throw IsADirectoryError(
            QStringLiteral("cannot move onto '%1': it is a folder, which a move never replaces")
                .arg(dest),
            EISDIR);
    if (to && !overwrite)
        throw FileExistsError(
            QStringLiteral("cannot move to '%1': it exists (pass overwrite to replace it)")
                .arg(dest),
            EEXIST);
    if (to && to->isSameFile(from))
        return;
    if (from.type == FileInfo::Type::File) {
        writeFile(dest, readFile(source));
        removeFile(source, false);
        return;
    }
    if (from.type != FileInfo::Type::Directory)
        throw PermissionError(QStringLiteral("cannot move '%1' on this backend: it is a symlink "
                                             "or special file; use execute with mv")
                                  .arg(source));
    // A folder: plan the whole tree first, so a link inside refuses before anything moved.
    QList<WalkEntry> entries;
    walkTree(source, false, [&](const WalkEntry &e) {
        if (e.type != FileInfo::Type::File && e.type != FileInfo::Type::Directory)
            throw PermissionError(QStringLiteral("cannot move '%1' on this backend: '%2' inside "
                                                 "it is a symlink or special file; use execute "
                                                 "with mv")
                                      .arg(source, e.path));
        entries.append(e);
        return WalkStep::Continue;
    });
    const QString src = WorkspaceFs::normalize(source);
    const auto target = [&](const QString &p) { return dest + p.mid(src.size()); };
    makeDirs(dest);
    for (const WalkEntry &e : std::as_const(entries)) {
        if (e.type == FileInfo::Type::Directory)
            makeDirs(target(e.path));
        else
            writeFile(target(e.path), readFile(e.path));
    }
    removeFile(source, true);
}

QList<FileTransferResult>
ExecutionBackend::uploadFiles(const QList<QPair<QString, QByteArray>> &files)
{
    QList<FileTransferResult> results;
    for (const auto &[path, content] : files) {
        FileTransferResult r{path, std::nullopt, std::nullopt};
        try {
            writeFile(path, content);
        } catch (const SandboxError &e) {
            r.error = e.display();
        }
        results.append(r);
    }
    return results;
}

QList<FileTransferResult> ExecutionBackend::downloadFiles(const QStringList &paths)
{
    QList<FileTransferResult> results;
    for (const QString &path : paths) {
        FileTransferResult r{path, std::nullopt, std::nullopt};
        try {
            r.content = readFile(path);
        } catch (const SandboxError &e) {
            r.error = e.display();
        }
        results.append(r);
    }
    return results;
}

TreeManifest ExecutionBackend::captureTree(const CaptureOptions &options)
{
    Q_UNUSED(options);
    throw OSError(QStringLiteral("the %1 backend cannot take checkpoints yet").arg(typeName()),
                  ENOTSUP);
}

ApplyResult ExecutionBackend::applyTree(const TreeManifest &current, const TreeManifest &target,
                                        const CheckpointStore &store, TreeHashCache *cache)
{
    Q_UNUSED(current);
    Q_UNUSED(target);
    Q_UNUSED(store);
    Q_UNUSED(cache);
    throw OSError(QStringLiteral("the %1 backend cannot restore checkpoints yet").arg(typeName()),
                  ENOTSUP);
}

RunningCommand::~RunningCommand() = default;

std::unique_ptr<RunningCommand> SandboxBackend::startCommand(const QString &, std::optional<double>,
                                                             const QString &,
                                                             const ExecuteOptions &)
{
    return nullptr;
}

bool supportsExecution(const ExecutionBackend *backend)
{
    return dynamic_cast<const SandboxBackend *>(backend) != nullptr;
}

QString BackendSource::typeName() const
{
    if (m_instance)
        return m_instance->typeName();
    if (m_template)
        return m_template->typeName();
    return {};
}

} // namespace elsai
