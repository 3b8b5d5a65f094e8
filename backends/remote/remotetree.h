// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "treesnapshot.h"
#include "treewatch.h"

#include <QByteArray>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

namespace elsai {
class CheckpointStore;
}

namespace elsai::remote {

/// How RemoteTree reaches a remote workspace: the backend's way of running one operation of
/// the confined script (confinedscript.h) on the workspace root and of handing it a local file.
struct TreeTransport
{
    /// Runs the confined operation `op` on the workspace root with `args`; with `input` (a
    /// local file) on its stdin. Returns the payload; throws the typed refusal or failure.
    std::function<QByteArray(const QString &op, const QStringList &args, const QString &input)> run;
    /// Optional, for a transport that streams: run() with the payload written to the local
    /// file `output` instead of held in memory (a capture's tar).
    std::function<void(const QString &op, const QStringList &args, const QString &input,
                       const QString &output)>
        runToFile;
    /// For a transport without stdin: puts the local file into the workspace root under its
    /// own name (a temp name, confinedTempName()). Empty: run() takes `input` on stdin.
    std::function<void(const QString &file)> upload;
    /// Optional, for an engine that unpacks archives itself (a container's PUT archive):
    /// puts the local folder, under its own name (a temp name), into the workspace root, its
    /// files owned by the sandbox's user. Empty: the restore's files travel as one tar by
    /// stdin or upload().
    std::function<void(const QString &folder)> sendFolder;
    /// Where the local staging goes; the system's temporary folder when empty.
    QString scratchParent;
};

/// Checkpoints and change tracking of a remote workspace (docs/checkpoints.md), whatever the
/// transport: SSH, containers and Daytona all use this one implementation.
///
/// - capture(): ONE `manifest` command lists the tree's metadata (find) and the BLAKE2b-256 of
///   every file changed since the previous capture (b2sum -l 256: the store's own hash, so a
///   remote hash is a store key); the others come from the TreeHashCache by their stamp. The
///   files the store lacks (or whose hash is unknown) then come back as ONE tar (`pack`), are
///   hashed again locally and must match their listing (else the capture is taken again, at
///   most three times).
/// - apply(): ONE tar (the plan and the files to write) and ONE `apply` command that
///   removes, makes folders, writes files (temp + rename, mode, mtime), links and folder
///   modes, each path walked to from the root without following a link.
/// - watch(): a ListingTreeWatch whose every drain is one `manifest` command without hashes.
/// Thread-safe.
class RemoteTree
{
public:
    TreeManifest capture(const TreeTransport &transport, const CaptureOptions &options);
    ApplyResult apply(const TreeTransport &transport, const TreeManifest &current,
                      const TreeManifest &target, const CheckpointStore &store,
                      TreeHashCache *cache);
    static std::unique_ptr<TreeWatch> watch(TreeTransport transport);

private:
    TreeManifest captureOnce(const TreeTransport &transport, const CaptureOptions &options);
    mutable QMutex m_mutex;
    const TreeHashCache *m_lastCache = nullptr; ///< the cache the last capture filled
    qint64 m_lastStartNs = 0;                   ///< and when (the sandbox's clock)
};

} // namespace elsai::remote
