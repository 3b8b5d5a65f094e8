// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "commandwrapper.h"

#include "inputchecks.h"
#include "shellquote.h"

#include <QRandomGenerator>
#include <QStringList>

#include <algorithm>

namespace elsai::remote {

namespace {

QString seconds(double s)
{
    return QString::number(std::max(s, 0.001), 'f', 3);
}

} // namespace

QString wrapCommand(const WrappedCommand &c)
{
    checkEnvironment(c.env);
    QStringList lines;
    if (!c.dir.isEmpty()) {
        lines << QStringLiteral("cd -P -- %1 || exit 1").arg(shellQuote(c.dir));
        if (c.verifyDir)
            lines << QStringLiteral("[ \"$(/bin/pwd -P)\" = %1 ] || { echo 'elsai: the working "
                                    "folder was replaced by a symlink; try again' >&2; exit 1; }")
                         .arg(shellQuote(c.dir));
    }
    for (auto it = c.env.cbegin(); it != c.env.cend(); ++it)
        lines << QStringLiteral("export %1=%2").arg(it.key(), shellQuote(it.value()));
    if (!c.marker.isEmpty())
        lines << QStringLiteral("export ELSAI_CALL=%1").arg(shellQuote(c.marker));
    QString out = QStringLiteral("\"$d/o\""), err = QStringLiteral("\"$d/e\"");
    if (c.streamCap >= 0) {
        // Each stream goes through a FIFO whose reader passes on its first streamCap bytes
        // (live, so output still streams) and counts the rest without keeping it: the command
        // is never cut short by a closed pipe (`yes` runs until its timeout), and what the
        // service sees stays under 2 × streamCap plus a trailer line. head(1) writes through
        // stdio, which holds a pipe's output until 4 KiB or exit: `stdbuf -o0` (coreutils)
        // makes it pass each read on at once.
        lines << QStringLiteral("d=$(mktemp -d) || exit 125")
              << QStringLiteral("mkfifo \"$d/o\" \"$d/e\" || exit 125")
              << QStringLiteral("u=; command -v stdbuf >/dev/null 2>&1 && u='stdbuf -o0'")
              << QStringLiteral("{ $u head -c %1; wc -c >\"$d/on\"; } <\"$d/o\" &").arg(c.streamCap)
              << QStringLiteral("ro=$!")
              << QStringLiteral("{ $u head -c %1 >&2; wc -c >\"$d/en\"; } <\"$d/e\" &")
                     .arg(c.streamCap)
              << QStringLiteral("re=$!");
    } else {
        out = QStringLiteral("&1");
        err = QStringLiteral("&2");
        if (c.timeoutSeconds > 0)
            lines << QStringLiteral("d=$(mktemp -d) || exit 125");
    }
    // setsid: the command leads its own process group (a background job of a non-interactive
    // shell is not a group leader, so setsid execs in place and $! is the group's id), and
    // the watchdog's kill reaches every process it started.
    // (`--`: a command that starts with `-` is a command, not an option of sh)
    lines << QStringLiteral("setsid /bin/sh -c -- %1 </dev/null >%2 2>%3 &")
                 .arg(shellQuote(c.command), out, err)
          << QStringLiteral("p=$!");
    if (!c.pidFile.isEmpty())
        lines << QStringLiteral("echo \"$p\" > %1").arg(shellQuote(c.pidFile));
    if (c.timeoutSeconds > 0) {
        // The watchdog marks the timeout in a file before it signals the command's group:
        // exit statuses alone cannot tell "killed by the watchdog" from "killed by itself".
        QString kill = c.killGraceSeconds > 0
                           ? QStringLiteral("kill -TERM -$0; sleep %1; kill -KILL -$0")
                                 .arg(seconds(c.killGraceSeconds))
                           : QStringLiteral("kill -KILL -$0");
        const QString watchdog =
            QStringLiteral("sleep %1; echo t > \"$1\"; %2").arg(seconds(c.timeoutSeconds), kill);
        lines << QStringLiteral("setsid /bin/sh -c %1 \"$p\" \"$d/t\" </dev/null >/dev/null 2>&1 &")
                     .arg(shellQuote(watchdog))
              << QStringLiteral("w=$!");
    }
    lines << QStringLiteral("wait \"$p\" 2>/dev/null; rc=$?")
          // what the command left running in its group must not outlive the call
          << QStringLiteral("kill -KILL -\"$p\" 2>/dev/null");
    if (c.timeoutSeconds > 0)
        lines << QStringLiteral("kill -KILL -\"$w\" 2>/dev/null; kill -KILL \"$w\" 2>/dev/null")
              << QStringLiteral("wait \"$w\" 2>/dev/null")
              << QStringLiteral("if [ -s \"$d/t\" ]; then rc=%1; fi").arg(kTimeoutExit);
    if (c.streamCap >= 0) {
        // The readers end once the group is gone (nothing holds the FIFOs open any more).
        lines << QStringLiteral("wait \"$ro\" \"$re\" 2>/dev/null")
              // GNU head -c reads no more than it passes on: wc counts exactly the rest
              << QStringLiteral("on=$(cat \"$d/on\" 2>/dev/null); en=$(cat \"$d/en\" 2>/dev/null)")
              << QStringLiteral("on=${on:-0} en=${en:-0}");
    } else {
        lines << QStringLiteral("on=0 en=0");
    }
    // The trailer, on stderr after everything else, gives the bytes each reader dropped.
    if (!c.trailerTag.isEmpty())
        lines << QStringLiteral("printf '\\n%s %s %s %s\\n' %1 \"$rc\" \"$on\" \"$en\" >&2")
                     .arg(shellQuote(QString::fromLatin1(c.trailerTag)));
    if (c.streamCap >= 0 || c.timeoutSeconds > 0)
        lines << QStringLiteral("rm -rf \"$d\"");
    if (!c.pidFile.isEmpty())
        lines << QStringLiteral("rm -f %1").arg(shellQuote(c.pidFile));
    lines << QStringLiteral("exit \"$rc\"");
    return lines.join(QLatin1Char('\n'));
}

QString sweepScript(const QString &marker)
{
    // grep exits 2 for processes that vanished meanwhile; three passes catch what forked
    // during the first.
    return QStringLiteral(
               "for i in 1 2 3; do\n"
               "  l=$(grep -las -F -- %1 /proc/[0-9]*/environ)\n"
               "  [ -n \"$l\" ] || break\n"
               "  for f in $l; do f=${f#/proc/}; kill -9 \"${f%/environ}\" 2>/dev/null; done\n"
               "done\n")
        .arg(shellQuote(QStringLiteral("ELSAI_CALL=") + marker));
}

QByteArray newTrailerTag()
{
    return "elsai-" + QByteArray::number(QRandomGenerator::system()->generate64(), 16);
}

std::optional<Trailer> takeTrailer(QByteArray &stream, const QByteArray &tag)
{
    const qsizetype at = stream.lastIndexOf("\n" + tag + ' ');
    if (at < 0)
        return std::nullopt;
    const qsizetype end = stream.indexOf('\n', at + 1);
    if (end < 0)
        return std::nullopt; // not whole yet (one printf writes it at once)
    const QList<QByteArray> fields =
        stream.mid(at + 1, end - at - 1).split(' '); // tag rc droppedOut droppedErr
    bool ok[3] = {};
    Trailer t;
    t.exitCode = fields.value(1).toInt(&ok[0]);
    t.droppedOut = fields.value(2).trimmed().toLongLong(&ok[1]);
    t.droppedErr = fields.value(3).trimmed().toLongLong(&ok[2]);
    if (fields.size() != 4 || !ok[0] || !ok[1] || !ok[2])
        return std::nullopt;
    stream.truncate(at);
    return t;
}

void capOutput(QByteArray &out, QByteArray &err, qint64 cap, qint64 *dropped)
{
    cap = std::max<qint64>(0, cap);
    if (out.size() + err.size() <= cap)
        return;
    *dropped += out.size() + err.size() - cap;
    out.truncate(qsizetype(std::min<qint64>(out.size(), cap)));
    err.truncate(qsizetype(std::min<qint64>(err.size(), cap - out.size())));
}

} // namespace elsai::remote
