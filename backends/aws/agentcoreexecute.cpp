// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentcorebackend.h"

#include "agentcoreinternal.h"
#include "commandwrapper.h"
#include "confinedscript.h"
#include "errors.h"
#include "inputchecks.h"
#include "workspacefs.h"

#include <QElapsedTimer>
#include <QJsonArray>

#include <limits>

namespace elsai::aws {

using namespace agentcore;

namespace {

// Grace between TERM and KILL of a timed-out command.
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

    ExecuteResult result;
    if (options.cancel && options.cancel->isCancelled()) {
        result.exitCode = 130;
        result.cancelled = true;
        return result;
    }

    // The folder as the kernel resolved it inside the workspace (loops, escapes and files
    // refused); the wrapper enters it with `cd -P` and checks it got there.
    const QString where =
        dir.isEmpty() ? QString() : QString::fromUtf8(confined(QStringLiteral("cwd"), dir));

    // The service runs the script with no timeout, no cwd and no output cap: the wrapper adds
    // them (backends/remote/commandwrapper.h). Only the first maxOutputBytes of each stream
    // travel back; a trailer with a per-call tag (which the command cannot guess) carries the
    // exit status and the bytes dropped.
    remote::WrappedCommand wrapped;
    wrapped.command = command;
    wrapped.dir = where;
    wrapped.verifyDir = !where.isEmpty();
    wrapped.env = m_options.env;
    wrapped.env.insert(options.env);
    wrapped.timeoutSeconds = timeout;
    wrapped.killGraceSeconds = KILL_GRACE_S;
    wrapped.streamCap = m_options.maxOutputBytes;
    wrapped.trailerTag = remote::newTrailerTag();
    const QString script = remote::wrapCommand(wrapped);
    const qint64 cap = m_options.maxOutputBytes;

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
    qint64 dropped = 0;
    if (const auto trailer = remote::takeTrailer(err, wrapped.trailerTag)) {
        result.exitCode = trailer->exitCode;
        dropped = trailer->droppedOut + trailer->droppedErr;
    }
    // One cap for both streams together, stdout first (as the local backend keeps them).
    remote::capOutput(out, err, cap, &dropped);
    result.truncated = dropped > 0;
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
