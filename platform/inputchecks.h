// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QMap>
#include <QString>

namespace elsai {

// Checks of the text that reaches a backend: commands, working folders, environment variables
// and host paths. One place, so every backend and front end refuses the same inputs the same
// way (ValueError), before anything runs or is audited as if it had.

/// The longest command the engine runs, in UTF-8 bytes. Longer commands are refused with
/// ValueError: write a script with write_file and run that. (Some backends take less, e.g. SSH.)
constexpr qsizetype MaxCommandBytes = 1024 * 1024;

/// The longest command a local backend can hand to `/bin/sh -c`: Linux limits one argument to
/// 32 pages (MAX_ARG_STRLEN, 131072 bytes with its terminating NUL).
constexpr qsizetype MaxArgumentBytes = 131071;

/// ValueError when the command is longer than `maxBytes` UTF-8 bytes, naming the backend and
/// what to do instead (a backend that passes the command as one argument, or over a channel
/// with a smaller limit, calls it after checkCommandText()).
void checkCommandFits(const QString &command, qsizetype maxBytes, const QString &backend);

/// ValueError when `text` holds a NUL character: the C string a backend hands the kernel would
/// end there and silently drop the rest. `what` names the value ("command", "cwd", "path").
void checkNoNul(const QString &text, const QString &what);

/// A name the user or an agent gives (a file or folder name, a workspace id, an agent name):
/// ValueError when it is empty or holds a control character (C0, DEL or C1: a newline, a tab,
/// NUL…), which would split or hide it in listings, logs and the window. `what` names the
/// field ("agent name", "workspace_id", "file name").
void checkName(const QString &name, const QString &what);
/// The first control character of `text` (C0, DEL, C1), or -1.
qsizetype firstControlCharacter(const QString &text);

/// A command: no NUL, at most MaxCommandBytes of UTF-8.
void checkCommandText(const QString &command);

/// A portable environment variable name: [A-Za-z_][A-Za-z0-9_]*.
bool isValidEnvName(const QString &name);

/// Every name valid (isValidEnvName) and no value holding a NUL; ValueError naming the first
/// bad one.
void checkEnvironment(const QMap<QString, QString> &env);

/// checkCommandText(command), checkNoNul(cwd, "cwd") and checkEnvironment(env): what every
/// SandboxBackend::execute() does first.
void checkExecuteInput(const QString &command, const QString &cwd,
                       const QMap<QString, QString> &env);

/// A size option's value in bytes: a whole number with an optional binary K, M or G suffix
/// ("512M"); 0 stays 0 (unlimited). ValueError naming --`option` otherwise.
qint64 parseByteSize(const QString &option, const QString &value);

} // namespace elsai
