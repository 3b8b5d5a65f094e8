// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace elsai::ssh {

/// The POSIX sh helper every remote operation runs in the login shell of the remote user
/// (`set -- ROOT OP ARGS…; <helper>`), so no extra process starts for it. It needs GNU
/// coreutils (/bin/pwd, dd, readlink, timeout, sync), findutils and tar on the remote.
///
/// Operations (ROOT = the canonical workspace folder; paths are workspace-relative and already
/// normalized by the client):
///   read P | range P OFFSET COUNT (the file's size on a line, then at most COUNT bytes from
///   OFFSET) | write P TOKEN (content on stdin) | list P [CAP] (with CAP: the count of all
///   entries on a line, then the first CAP records by name) | stat P | remove P 0|1 | mkdirs P |
///   listall | seed (tar on stdin) | pack (newline-separated `./` names NOT wanted on stdin,
///   tar of the rest of the workspace on stdout) |
///   exec CWD TIMEOUT GRACE TOKEN COMMAND [NAME=VALUE…] | sweep TOKEN
///
/// A refusal or failure of the helper itself exits with kHelperExit and one stderr line
/// "\x01elsai:<kind>:<message>" (kind: ENOENT EEXIST EISDIR ENOTDIR EACCES EIO).
QByteArray helperScript();

inline constexpr int kHelperExit = 253;

/// The remote command line: `set -- ROOT OP ARGS…; <helper>`.
QByteArray helperCommand(const QString &root, const QString &op, const QStringList &args);

struct HelperError
{
    QString kind; ///< ENOENT, EACCES, … (empty: the output is not a helper refusal)
    QString message;
};

/// Parses a helper refusal from an exit code and stderr.
HelperError parseHelperError(int exitCode, const QByteArray &stderrData);

/// Throws the error class of errors.h that matches `error.kind`.
[[noreturn]] void throwHelperError(const HelperError &error);

} // namespace elsai::ssh
