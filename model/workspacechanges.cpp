// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "workspacechanges.h"

#include "backend.h"
#include "errors.h"

#include <QSet>

#include <algorithm>

namespace elsai {

namespace {

// Floor, not truncation, so pre-1970 stamps round the same way as FileInfo::mtimeMs.
qint64 floorDiv(qint64 a, qint64 b)
{
    const qint64 q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

QString cleanPath(QString path)
{
    while (path.startsWith(QLatin1String("./")))
        path.remove(0, 2);
    return path == QLatin1String(".") ? QString() : path;
}

bool beneath(const QString &path, const QStringList &folders)
{
    return std::any_of(folders.cbegin(), folders.cend(), [&path](const QString &folder) {
        return folder.isEmpty() || path.startsWith(folder + QLatin1Char('/'));
    });
}

} // namespace

bool stampChanged(const FileStamp &base, const FileInfo &now)
{
    return base.size != now.size.value_or(-1) || floorDiv(base.mtimeNs, 1000000) != now.mtimeMs;
}

ChangeScan scanWorkspaceChanges(ExecutionBackend &backend, bool seeded,
                                const ChangeScanLimits &limits)
{
    ChangeScan scan;
    const std::optional<SeedManifest> manifest = backend.seedManifest();
    if (!manifest)
        return scan; // Unknown: nothing to compare with
    if (!manifest->hostRoot.isEmpty()) {
        scan.base = ChangeBase::Seed;
        scan.baseRoot = manifest->hostRoot;
    } else {
        scan.base = seeded ? ChangeBase::Missing : ChangeBase::Empty;
    }
    const QHash<QString, SeedManifest::Entry> &base = manifest->files;

    QSet<QString> seen;
    seen.reserve(base.size());
    QStringList unlisted; // folders whose listing failed: no deletions claimed beneath them
    QStringList folders{QString()};
    auto keep = [&scan, &limits](WorkspaceChange change) {
        if (scan.changes.size() >= limits.maxChanges) {
            scan.truncated = true;
            return;
        }
        scan.changes.append(std::move(change));
    };
    while (!folders.isEmpty()) {
        const QString folder = folders.takeLast();
        QList<FileInfo> entries;
        try {
            entries = backend.listDir(folder.isEmpty() ? QStringLiteral(".") : folder);
        } catch (const SandboxError &e) {
            scan.errors.append(QStringLiteral("%1: %2").arg(
                folder.isEmpty() ? QStringLiteral(".") : folder, e.message()));
            unlisted.append(folder);
            continue;
        }
        for (const FileInfo &info : std::as_const(entries)) {
            if (++scan.entriesWalked > limits.maxEntries) {
                scan.truncated = true;
                break;
            }
            const QString path = cleanPath(info.path);
            if (path.isEmpty())
                continue;
            if (info.type == FileInfo::Type::Directory) {
                folders.append(path);
                continue;
            }
            WorkspaceChange change;
            change.path = path;
            change.type = info.type;
            change.size = info.size.value_or(-1);
            change.mtimeMs = info.mtimeMs;
            const auto it = base.constFind(path);
            if (it == base.cend() || info.type != FileInfo::Type::File) {
                change.kind = WorkspaceChange::Kind::Added;
                if (it != base.cend()) {
                    seen.insert(path); // a recorded file replaced by a link: modified
                    change.kind = WorkspaceChange::Kind::Modified;
                    change.baseSize = it->workspace.size;
                }
                keep(std::move(change));
                continue;
            }
            seen.insert(path);
            if (stampChanged(it->workspace, info)) {
                change.kind = WorkspaceChange::Kind::Modified;
                change.baseSize = it->workspace.size;
                keep(std::move(change));
            }
        }
        if (scan.entriesWalked > limits.maxEntries)
            break;
    }
    if (!scan.truncated) {
        for (auto it = base.cbegin(); it != base.cend(); ++it) {
            if (seen.contains(it.key()) || beneath(it.key(), unlisted))
                continue;
            WorkspaceChange change;
            change.path = it.key();
            change.kind = WorkspaceChange::Kind::Deleted;
            change.baseSize = it->workspace.size;
            keep(std::move(change));
        }
    }
    std::sort(scan.changes.begin(), scan.changes.end(),
              [](const WorkspaceChange &a, const WorkspaceChange &b) { return a.path < b.path; });
    return scan;
}

} // namespace elsai
