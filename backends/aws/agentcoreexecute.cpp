// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentcorebackend.h"

#include "agentcoreinternal.h"
#include "confinedscript.h"
#include "errors.h"
#include "inputchecks.h"
#include "workspacefs.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QRandomGenerator>

#include <limits>

namespace elsai::aws {

using namespace agentcore;

namespace {

// Grace between TERM and KILL of a timed-out command (timeout -k).
constexpr int KILL_GRACE_S = 2;

} // namespace

// ---- backend: execute ----------------------------------------------------------------------

ExecuteResult AgentCoreSandboxBackend::execute(const QString &command,
                                               std::optional<double> timeoutSeconds,
                                               const QString &cwd, const ExecuteOptions &options)
{
    checkExecuteInput(command, cwd, options.env);
    QElapsedTimer timer;
    timer.start();
    const double timeout = timeoutSeconds.value_or(m_options.timeout);
    const QString dir = cwd.isEmpty() ? QString() : WorkspaceFs::normalize(cwd);
    QMap<QString, QString> env = m_options.env;
    for (auto it = options.env.cbegin(); it != options.env.cend(); ++it)
        env.insert(it.key(), it.value());
    checkEnvironment(env);

    ExecuteResult result;
    if (options.cancel && options.cancel->isCancelled()) {
        result.exitCode = 130;
        result.cancelled = true;
        return result;
    }

    // The folder as the kernel resolved it inside the workspace (loops, escapes and files
    // refused); the script enters it with `cd -P` and checks it got there.
    const QString where =
        dir.isEmpty() ? QString() : QString::fromUtf8(confined(QStringLiteral("cwd"), dir));

    // The service runs the script with no timeout, no cwd and no output cap: the wrapper adds
    // them. `timeout` runs the command in its own process group and signals the whole group
    // (TERM, KILL after the grace). Both streams go to files, and only their first N bytes
    // travel back; a trailer with a per-call nonce (which the command cannot guess) carries
    // the exit status and the full sizes.
    const QString nonce = QString::number(QRandomGenerator::system()->generate64(), 16);
    const qint64 cap = m_options.maxOutputBytes;
    QString script;
    if (!where.isEmpty())
        script += QStringLiteral("cd -P -- %1 && [ \"$(/bin/pwd -P)\" = %1 ] || { echo 'elsai: "
                                 "the working folder was replaced by a symlink; try again' >&2; "
                                 "exit 1; }\n")
                      .arg(shellQuote(where));
    for (auto it = env.cbegin(); it != env.cend(); ++it)
        script += QStringLiteral("export %1=%2\n").arg(it.key(), shellQuote(it.value()));
    script += QStringLiteral("__elsai_d=$(mktemp -d) || exit 125\n"
                             "__elsai_s=$(date +%s)\n");
    if (timeout > 0)
        script += QStringLiteral("timeout -k %1 %2 ")
                      .arg(KILL_GRACE_S)
                      .arg(QString::number(timeout, 'f', 3));
    // In the background so its pid is known: timeout(1) leads the command's process group,
    // which is killed once the command ends (work it left behind must not outlive the call).
    script += QStringLiteral("sh -c %1 </dev/null >\"$__elsai_d/o\" 2>\"$__elsai_d/e\" &\n"
                             "__elsai_p=$!\nwait \"$__elsai_p\"\n__elsai_rc=$?\n")
                  .arg(shellQuote(command));
    if (timeout > 0)
        script += QStringLiteral("kill -KILL -\"$__elsai_p\" 2>/dev/null\n");
    if (timeout > 0)
        // Killed after the grace: timeout(1) reports 137; the interface says 124.
        script += QStringLiteral("if [ \"$__elsai_rc\" -eq 137 ] && "
                                 "[ $(( $(date +%s) - __elsai_s )) -ge %1 ]; then "
                                 "__elsai_rc=124; fi\n")
                      .arg(qint64(timeout));
    script += QStringLiteral("head -c %1 \"$__elsai_d/o\"\n"
                             "head -c %1 \"$__elsai_d/e\" >&2\n"
                             "printf '\\n%2 %s %s %s\\n' \"$__elsai_rc\" "
                             "\"$(wc -c <\"$__elsai_d/o\")\" \"$(wc -c <\"$__elsai_d/e\")\" >&2\n"
                             "rm -rf \"$__elsai_d\"\n"
                             "exit \"$__elsai_rc\"\n")
                  .arg(cap)
                  .arg(nonce);

    const int httpTimeoutMs =
        timeout > 0 ? int(qMin(timeout * 1000.0 + KILL_GRACE_S * 1000 + m_options.executeGraceMs,
                               double(std::numeric_limits<int>::max())))
                    : std::numeric_limits<int>::max();
    ToolResult r;
    try {
        r = invoke(QStringLiteral("executeCommand"), {{QStringLiteral("command"), script}},
                   httpTimeoutMs, /*retryThrottling=*/false);
    } catch (const TimeoutError &e) {
        // No answer at all: report the interface's timeout rather than an exception.
        result.exitCode = 124;
        result.timedOut = true;
        result.stderr_ = e.message();
        result.durationMs = timer.elapsed();
        return result;
    }

    const QJsonValue stdoutValue = r.structured.value(QLatin1String("stdout"));
    QByteArray out = stdoutValue.isString() ? stdoutValue.toString().toUtf8() : r.text().toUtf8();
    QByteArray err = r.structured.value(QLatin1String("stderr")).toString().toUtf8();
    const QJsonValue code = r.structured.value(QLatin1String("exitCode"));
    result.exitCode = code.isDouble() ? code.toInt() : (r.isError ? 1 : 0);
    qint64 outSize = out.size();
    qint64 errSize = err.size();
    const qsizetype marker = err.lastIndexOf("\n" + nonce.toLatin1() + ' ');
    if (marker >= 0) {
        const QList<QByteArray> fields =
            err.mid(marker + 1).trimmed().split(' '); // nonce rc outSize errSize
        if (fields.size() == 4) {
            result.exitCode = fields.at(1).toInt();
            outSize = fields.at(2).toLongLong();
            errSize = fields.at(3).toLongLong();
        }
        err.truncate(marker);
    }
    // One cap for both streams together, stdout first (as the local backend keeps them).
    result.truncated = outSize + errSize > cap;
    out.truncate(qMin<qint64>(out.size(), cap));
    err.truncate(qMin<qint64>(err.size(), cap - out.size()));
    result.output = QString::fromUtf8(out);
    result.stderr_ = QString::fromUtf8(err);
    result.timedOut = timeout > 0 && result.exitCode == 124;
    result.durationMs = timer.elapsed();
    if (options.onOutput) {
        if (!out.isEmpty())
            options.onOutput(OutputChannel::Stdout, out);
        if (!err.isEmpty())
            options.onOutput(OutputChannel::Stderr, err);
    }
    return result;
}

} // namespace elsai::aws
