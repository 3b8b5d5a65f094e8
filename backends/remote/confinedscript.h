// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "types.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace elsai::remote {

/// File operations for remote backends whose only race-free tool is a shell command (Daytona's
/// toolbox and AgentCore's executeCommand have no openat-style file call). One POSIX sh script
/// per operation checks the path and uses it in the same process: it enters each folder with
/// `cd -P` (the kernel follows a link and the shell stays pinned to the folder it reached),
/// asks the kernel where it is (`/bin/pwd -P`) before any effect, and touches the last
/// component relative to that folder without following a link. Nothing is checked as a string
/// and then opened by name in a later call. Needs GNU coreutils and findutils in the sandbox.
///
/// Operations (`path` is workspace-relative, already normalized by the client):
///   read | range (args: offset, count; the payload is the file's size, a newline, then at
///   most `count` bytes from `offset`: one call moves only that range) | list (arg: an optional
///   cap; with it the payload is the count of all entries on a line, then the first `cap`
///   records by name) | tree (every entry beneath the folder, paths relative to it: what a
///   flush plans from) | stat | remove (arg: 1 = recursive) | mkdirs | cwd (prints the folder) |
///   write (args: token, base64 content; temp file + rename, never in place) |
///   prepare (makes the parent, prints it) + commit (arg: token; renames the uploaded
///   `.elsai-tmp-<token>` over the entry) | discard (arg: token)
/// Everything goes to stdout: the payload in base64 (binary-safe through a JSON string), or a
/// refusal line "\x01elsai:<kind>:<message>" with exit kConfinedRefusal. Stderr is discarded,
/// so a service that merges the streams (Daytona's /process/execute) is read the same way.
QString confinedScript(const QString &root, const QString &op, const QString &path,
                       const QStringList &args = {});

inline constexpr int kConfinedRefusal = 253;

/// The scratch name `write`/`commit` use beside the entry (a per-call random token).
QString confinedTempName(const QString &token);

/// The decoded payload of a successful run; throws the matching error of errors.h on a
/// refusal, OSError naming `service` for anything else (the script did not run).
QByteArray confinedPayload(int exitCode, const QByteArray &output, const QString &service);

/// The arguments of `range` for ExecutionBackend::readFileRange() (ValueError when negative).
QStringList confinedRangeArgs(qint64 offset, qint64 maxBytes);
/// The payload of `range` split into the file's size and the bytes (OSError when malformed).
FileRange confinedRange(const QByteArray &payload, const QString &service);

/// Entries of `list` / `stat` (find's `%y\t%s\t%T@\t%D:%i\t%f\0`), paths joined to `dir`.
QList<FileInfo> confinedEntries(const QByteArray &payload, const QString &dir);

} // namespace elsai::remote
