// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <utility>

namespace elsai::remote {

/// The exclusion list of the confined `archive-out` (confinedscript.h) that leaves, of a
/// folder whose entries are `entries` (path relative to the folder, and whether it is a
/// folder), only the `wanted` files and the folders on the way to them: one `./name` a line,
/// each unwanted entry whose parent stays (tar then skips all beneath it). A name holding a
/// line end cannot be written here: the archive brings it, and the caller leaves it out.
QByteArray archiveExclusions(const QList<std::pair<QString, bool>> &entries,
                             const QSet<QString> &wanted);

/// The arguments of `archive-out` after the folder: where the exclusions come from — "-"
/// (stdin) when `upload` is null; else inline as "=<base64>" up to kInlineExclusionBytes, or
/// the name of `exclusionsFile` once `upload` put it into the workspace root (the script reads
/// and removes it) — then the most bytes the sandbox sends: maxBytes + 1, so that an answer
/// over the bound shows.
QStringList archiveOutArgs(const QByteArray &exclusions, const QString &exclusionsFile,
                           qint64 maxBytes, const std::function<void(const QString &)> &upload);
inline constexpr qsizetype kInlineExclusionBytes = 48 * 1024;

/// How a backend runs ONE `archive-out` of the workspace folder `folder` (normalized, "" the
/// root): `exclusions` is the list, also in the local file `exclusionsFile` (whose name is a
/// confinedTempName(), for a transport that uploads it); archiveOutArgs() makes the
/// arguments. A transport that captures the answer caps it after `maxBytes` + 1 bytes too.
/// Returns the tar; throws the typed refusal.
using ArchiveOut = std::function<QByteArray(const QString &folder, const QByteArray &exclusions,
                                            const QString &exclusionsFile, qint64 maxBytes)>;

/// ExecutionBackend::fetchFiles() of the backends that speak the confined script: ONE
/// `archive-out` of the folder with everything but the wanted files excluded (never a name
/// list: tar would open those as whole paths, through symlinks), bounded by the wanted
/// files' listed sizes plus the archive's headers and room for growth; the wanted names are
/// unpacked into a private folder under `scratchParent` (the system's temporary folder when
/// empty) and read from there without leaving it. std::nullopt when the answer is larger
/// than the bound.
std::optional<QHash<QString, QByteArray>>
fetchByArchive(const FileFetch &fetch, const QString &scratchParent, const ArchiveOut &archiveOut);

} // namespace elsai::remote
