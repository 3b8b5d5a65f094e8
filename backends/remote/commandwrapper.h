// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QMap>
#include <QString>

#include <optional>

namespace elsai::remote {

/// One command as a remote sandbox runs it for execute(): in a process group of its own,
/// bounded in time and in output, and never outliving its call. What a service adds (an SSH
/// channel, Daytona's session exec, AgentCore's executeCommand, a container exec) only
/// carries the script that wrapCommand() writes.
struct WrappedCommand
{
    QString command; ///< run by /bin/sh -c
    /// Entered with `cd -P` first (empty: the shell's folder, as the confined `run` left it).
    QString dir;
    /// Refuse (exit 1, a message on stderr) unless `cd -P` ends exactly at `dir`: `dir` is
    /// the confined `cwd` answer, so a symlink swapped in since is caught.
    bool verifyDir = false;
    QMap<QString, QString> env; ///< exported for the command (names checked: ValueError)
    /// After this the command's group is signalled and the exit status is 124; 0: no limit.
    double timeoutSeconds = 0;
    /// TERM first, KILL after this grace; 0: KILL at once.
    double killGraceSeconds = 0;
    /// Each stream passes on its first N bytes and only counts the rest (a reader per stream
    /// through a FIFO, so output still streams live and a flood never fills the service's
    /// log); negative: the streams are passed through untouched.
    qint64 streamCap = -1;
    /// Non-empty: the last line on stderr is `\n<tag> <exit> <dropped stdout> <dropped
    /// stderr>\n` (a per-call tag the command cannot guess), for services whose exit status
    /// or stream ends are unreliable; read it with takeTrailer().
    QByteArray trailerTag;
    /// Non-empty: the file receives the command's group id while it runs (a later call can
    /// kill the group by it).
    QString pidFile;
    /// Non-empty: every process of the call carries ELSAI_CALL=<marker> in its environment,
    /// so sweepScript() finds what a lost connection left behind.
    QString marker;
};

/// The POSIX sh script that runs `c` (give it to `/bin/sh -c`). Needs coreutils (mkfifo,
/// head, wc, sleep) and setsid (util-linux) in the sandbox. ValueError for an invalid
/// environment name.
QString wrapCommand(const WrappedCommand &c);

/// The exit status of a command the wrapper's watchdog stopped.
inline constexpr int kTimeoutExit = 124;

/// A script that kills (SIGKILL) every process carrying ELSAI_CALL=<marker>, repeating while
/// any is found (a fork may race the first pass). Needs /proc.
QString sweepScript(const QString &marker);

/// A fresh random trailer tag.
QByteArray newTrailerTag();

struct Trailer
{
    int exitCode = -1;
    qint64 droppedOut = 0; ///< what the stdout reader counted but did not pass on
    qint64 droppedErr = 0;
};

/// Removes the trailer tagged `tag` from the end of `stream` and reads it; none (stream
/// unchanged) when there is none. The last occurrence counts: a command can print a
/// look-alike, but only before the real one.
std::optional<Trailer> takeTrailer(QByteArray &stream, const QByteArray &tag);

/// Cuts stdout and stderr to one cap on both together, stdout first (as the local backend
/// keeps them); the bytes cut are added to `*dropped`.
void capOutput(QByteArray &out, QByteArray &err, qint64 cap, qint64 *dropped);

} // namespace elsai::remote
