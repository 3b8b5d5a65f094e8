// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "findrecord.h"
#include "types.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace elsai::remote {

/// How a sandbox's exec channel carries a script's answer back.
enum class Channel {
    /// stdout is binary-safe and stderr comes apart (SSH, a container's exec stream): the
    /// payload travels raw on stdout, a refusal on stderr; stdin can carry data in.
    Binary,
    /// One text stream (Daytona's /process/execute merges stdout and stderr, AgentCore answers
    /// in JSON strings): the payload in base64 on stdout, a refusal after it on stdout,
    /// stderr discarded; data in travels as a base64 argument.
    Text,
};

/// The file operations of every remote backend (SSH, Daytona, AgentCore, containers): one
/// POSIX sh script per operation checks the path and uses it in the same process. It enters
/// each folder with `cd -P` (the kernel follows a link and the shell stays pinned to the
/// folder it reached, wherever it is renamed later), asks the kernel where it is (coreutils
/// `pwd -P`: a shell's own may answer from the text it was given) before any effect, and
/// touches the last component relative to that folder without following a link (dd
/// iflag=nofollow, find without -L, O_EXCL creation, a rename within the folder). Nothing is
/// checked as a string and then opened by name in a later call. Needs GNU coreutils,
/// findutils and (for the archives) tar in the sandbox.
///
/// Operations (`path` is workspace-relative, already normalized by the client; "" = root):
///   read | range (args: offset, count; the file's size on a line, then at most `count`
///   bytes from `offset`) | list (arg: an optional cap; with it the count of all entries on a
///   line, then the first `cap` records by name) | tree (every entry beneath the folder,
///   paths relative to it) | stat | remove (arg: 1 = recursive) | mkdirs | cwd (prints the
///   folder as the kernel names it) |
///   write (args: the temp name, then the content in base64 on a Text channel; on a Binary
///   one the content comes on stdin: temp file + rename, never in place) |
///   prepare (makes the parent, prints it) + commit (arg: the temp name; renames the
///   uploaded temp file over the entry) | discard (arg: the temp name) |
///   archive-in (Binary: a tar on stdin extracted into the folder; prints the `tree` of its
///   files; exit status tar's) | archive-out (args: where the newline-separated `./` names
///   NOT wanted come from — "" or "-" stdin, "=" and base64 inline, else a temp file of the
///   workspace root, read and removed — and an optional bound: the stream is cut after that
///   many bytes; a tar of the rest of the folder on stdout; remotefetch.h) |
///   run (arg: a script, see commandwrapper.h: run with /bin/sh in the folder) |
///   manifest, pack, apply (checkpoints and change tracking, remotetree.h: the tree's
///   metadata and the hashes of the files changed since a time; a tar of the listed names;
///   a restore's plan run from a tar of the plan and the files to write)
/// A refusal is one line "\x01elsai:<errno name>:<message>" with exit kConfinedRefusal.
QString confinedScript(Channel channel, const QString &root, const QString &op, const QString &path,
                       const QStringList &args = {});

inline constexpr int kConfinedRefusal = 253;

/// The path every confined operation takes, confined on the client first: "" for the root
/// ("" or "."), else WorkspaceFs::normalize() (`..`, absolute paths and NUL refused before
/// anything is sent).
QString confinedPath(const QString &path);

/// The temp name `write` / `commit` use beside `entryName`: the local writer's own format
/// (atomicTempName: ".<name>.elsai-tmp-<12 hex>"), so one recogniser (tempfiles.h) knows both.
QString confinedTempName(const QString &entryName);

/// Throws the typed error of a refusal in the answer (throwErrnoError: ENOENT is
/// FileNotFoundError, EACCES and ELOOP are PermissionError, … as on the local backend);
/// returns when the answer holds none.
void throwIfRefused(Channel channel, int exitCode, const QByteArray &out, const QByteArray &err);

/// The payload of a successful run (decoded from base64 on a Text channel); throws the
/// refusal, or OSError naming `service` for any other failure (the script did not run).
QByteArray confinedPayload(Channel channel, int exitCode, const QByteArray &out,
                           const QByteArray &err, const QString &service);

/// The arguments of `range` for ExecutionBackend::readFileRange() (ValueError when negative).
QStringList confinedRangeArgs(qint64 offset, qint64 maxBytes);
/// The payload of `range` split into the file's size and the bytes (OSError when malformed);
/// never more than `maxBytes` bytes.
FileRange confinedRange(const QByteArray &payload, qint64 maxBytes, const QString &service);

/// Entries of `list` / `stat` (find's `%y\t%s\t%T@\t%D:%i\t%f\0`), paths joined to `dir`.
QList<FileInfo> confinedEntries(const QByteArray &payload, const QString &dir);

/// Entries of `tree` by their path relative to the folder listed; a name that could leave it
/// (empty, absolute, a `.` or `..` segment) is dropped.
QHash<QString, FindRecord> confinedTree(const QByteArray &payload);

/// ExecutionBackend::walkTree() over one `tree` answer for the folder `dir`: each entry's path
/// joined to `dir`, depth first, each folder's entries in name order, a folder the visitor
/// skips left out, nothing deeper than MaxWalkDepth. One round trip for the search tools'
/// walk instead of one listing per folder.
void walkConfinedTree(const QByteArray &payload, const QString &dir,
                      const std::function<WalkStep(const WalkEntry &)> &visit);

} // namespace elsai::remote
