// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QString>

namespace elsai {

class ExecutionBackend;

/// One side of a comparison: a file's bytes when small enough, else its size and hash.
struct FileVersion
{
    enum class State {
        Absent,     ///< no such file on that side
        Read,       ///< `bytes` holds the whole file
        TooLarge,   ///< over textLimit(): size (and hash when hashLimit() allows) only
        Unreadable, ///< `problem` says why (not a regular file, an error)
    };
    State state = State::Absent;
    QByteArray bytes;
    qint64 size = -1;
    QByteArray sha256; ///< hex; empty when not hashed
    QString problem;

    /// Files up to this size are compared as text (2 MiB).
    static constexpr qint64 textLimit() { return 2 * 1024 * 1024; }
    /// Larger files are hashed up to this size where the side reads ranges (64 MiB).
    static constexpr qint64 hashLimit() { return 64 * 1024 * 1024; }
};

/// A file of a workspace, read through its backend (confined). Blocking.
FileVersion readWorkspaceVersion(ExecutionBackend &backend, const QString &path);
/// A file beneath a host folder, read without leaving it (no `..`, no symlink out:
/// WorkspaceFs). `*mtimeMs` gets its modification time when it exists. Blocking.
FileVersion readHostVersion(const QString &root, const QString &path, qint64 *mtimeMs = nullptr);

/// What a diff view shows for two versions.
struct FileDiff
{
    enum class Kind { Identical, Text, Binary, Summary };
    Kind kind = Kind::Identical;
    /// Lines of prose before the diff (what the versions are; why there is no text diff).
    QString note;
    /// The unified diff (Text), or the sizes and hashes (Binary, Summary).
    QString body;
    /// note + body, as a view shows them.
    QString text() const;
};

/// Compares two versions: a unified diff (platform/unifieddiff.h) when both are UTF-8 text
/// within the limits, else sizes and SHA-256 hashes ("binary", "too large"). An absent side
/// is /dev/null. Blocking (the diff is bounded work).
FileDiff diffFileVersions(const FileVersion &oldVersion, const QString &oldName,
                          const FileVersion &newVersion, const QString &newName);

/// A workspace file against its version in the backend's seed record: the seed folder's file
/// while it still has the recorded stamp, else its current version (said in the note), or
/// /dev/null for a file the seed did not have. Names: `seed/<path>`, `workspace/<path>`.
FileDiff diffAgainstSeed(ExecutionBackend &backend, const QString &path);

} // namespace elsai
