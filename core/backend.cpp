// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "backend.h"

#include "errors.h"

#include <cerrno>

namespace elsai {

ExecutionBackend::~ExecutionBackend() = default;
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
