// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "headless.h"

#include "agentplan.h"
#include "audit.h"
#include "demo.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "mcprunner.h"
#include "recording.h"
#include "runagent.h"
#include "sandbox.h"
#include "sandboxplugin.h"
#include "scriptrunner.h"
#include "sessionoptions.h"
#include "shutdownsignals.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QTextStream>

#include <cstdio>
#include <cstring>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcHeadless, "elsai.headless", QtInfoMsg)

namespace elsai {

bool wantsHeadless(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--headless") == 0)
            return true;
        if (std::strcmp(argv[i], "--") == 0)
            break;
    }
    return false;
}

static int runExec(const SandboxPtr &sandbox, const QStringList &commands,
                   HeadlessRecording &recording)
{
    // Commands must not run in a half-seeded workspace (and the final flush must not write
    // into a folder that was never a project).
    if (const auto seed = sandbox->start(); seed && !seed->success()) {
        for (const QString &e : seed->errors)
            printError(QStringLiteral("seeding: ") + e);
        sandbox->stop(false);
        return 1;
    }
    if (!recording.begin(sandbox)) {
        sandbox->stop(false);
        return 1;
    }
    AgentConfig config;
    config.sandbox = sandbox;
    config.sandboxMode = SandboxMode::Sandbox;
    const AgentPtr console = Agent::create(QStringLiteral("console"), config);
    int status = 0;
    QFile out, err;
    out.open(stdout, QIODevice::WriteOnly | QIODevice::Unbuffered);
    err.open(stderr, QIODevice::WriteOnly | QIODevice::Unbuffered);
    for (const QString &command : commands) {
        try {
            const ExecuteResult r = executeAs(*console, command);
            out.write(r.output.toUtf8());
            err.write(r.stderr_.toUtf8());
            if (r.truncated)
                err.write("elsai-workbench: output truncated (--max-output-bytes)\n");
            if (r.timedOut)
                err.write("elsai-workbench: command timed out (exit code 124)\n");
            status = r.exitCode;
        } catch (const SandboxError &e) {
            printError(e.display());
            status = 1;
        }
        if (shutdownRequested())
            awaitShutdownExit(); // not the next command, not the final flush
    }
    status = recording.finish(status);
    if (const auto sync = sandbox->stop(true)) {
        for (const QString &e : sync->errors)
            printError(QStringLiteral("flush: ") + e);
    }
    return status;
}

static int runHeadlessSession(int argc, char **argv);

int runHeadless(int argc, char **argv)
{
    const int status = runHeadlessSession(argc, argv);
    if (shutdownRequested())
        awaitShutdownExit(); // the status is 128 + the signal's
    // Nothing of the audit trail may go missing quietly: a last retry of whatever waits, and
    // a distinct exit status when records were lost (docs/headless.md: exit status 4).
    AuditLog::instance().flush();
    const AuditHealth audit = AuditLog::instance().health();
    const qint64 lost = audit.recordsDropped + audit.recordsQueued;
    if (lost > 0) {
        printError(
            QStringLiteral("%1 audit records were lost (%2); exit status %3")
                .arg(lost)
                .arg(audit.lastError.isEmpty() ? QStringLiteral("write failed") : audit.lastError)
                .arg(AuditRecordsLostExitCode));
        return AuditRecordsLostExitCode;
    }
    return status;
}

static int runHeadlessSession(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("elsai-workbench"));
    QCoreApplication::setApplicationVersion(QStringLiteral(ELSAI_VERSION));
    // The main thread runs the commands and reads the script: a signal ends the program from
    // the watcher thread. MCP serves from an event loop and switches to ShutdownExit::EventLoop.
    installShutdownSignals(ShutdownExit::Immediate);

    QCommandLineParser parser;
    SessionOptions::describe(parser, SessionOptions::Mode::Headless);
    parser.process(app);

    // Audit records go to --audit-log; on stderr they would mix with the commands' own
    // stderr, so they show there only with --verbose (QT_LOGGING_RULES still wins).
    if (!parser.isSet(QStringLiteral("verbose")))
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.sandbox.audit.info=false\n"
                                                        "elsai.headless.info=false"));

    SessionOptions options;
    try {
        options = SessionOptions::fromParser(parser);
    } catch (const SandboxError &e) {
        printError(e.display());
        return 2;
    }

    AuditSinkPtr auditSink;
    try {
        auditSink = options.installAuditLog();
        // No arguments at all (the README's start command on a machine without a display):
        // the same demo sandbox as the window, seeded from the sample project.
        // So does a demo plan without a project of its own.
        QTemporaryDir sampleDir;
        if (argc == 1 || options.runAgent.startsWith(AgentPlan::demoPrefix()))
            applyDemoDefaults(options, parser.isSet(QStringLiteral("workspace-id")), sampleDir);
        if (!options.runAgent.isEmpty()) {
            QFile out;
            out.open(stdout, QIODevice::WriteOnly | QIODevice::Unbuffered);
            return runAgentPlan(options, out);
        }
        const SandboxPtr sandbox = options.spec.createSandbox();
        qCInfo(lcHeadless).noquote()
            << "workspace" << sandbox->workspaceId() << "at" << options.spec.workspaceRoot;
        HeadlessRecording recording(options);
        if (!options.execCommands.isEmpty())
            return runExec(sandbox, options.execCommands, recording);
        if (options.wantsMcp())
            return runMcp(options, sandbox, recording);

        QFile in;
        const QString script =
            options.scriptPath.isEmpty() ? QStringLiteral("-") : options.scriptPath;
        const bool ok = script == QLatin1String("-")
                            ? in.open(stdin, QIODevice::ReadOnly)
                            : (in.setFileName(script), in.open(QIODevice::ReadOnly));
        if (!ok) {
            printError(QStringLiteral("cannot read script '%1': %2").arg(script, in.errorString()));
            return 2;
        }
        if (script == QLatin1String("-") && ::isatty(STDIN_FILENO))
            QTextStream(stderr) << "elsai-workbench: headless, workspace '"
                                << sandbox->workspaceId() << "' in " << options.spec.workspaceRoot
                                << "\nType one JSON operation per line, e.g. {\"op\":\"start\"} "
                                   "(Ctrl-D ends; --help lists them).\n";
        QFile out;
        out.open(stdout, QIODevice::WriteOnly | QIODevice::Unbuffered);
        ScriptRunner runner(sandbox, options.offloadPolicy());
        if (recording.wanted())
            runner.onStarted = [&recording](const SandboxPtr &s) { recording.begin(s); };
        const int failures = runner.runAll(in, out);
        const int status = recording.finish(failures == 0 ? 0 : 1);
        if (sandbox->isStarted())
            sandbox->stop(false);
        return status;
    } catch (const SandboxError &e) {
        printError(e.display());
        return 1;
    }
}

} // namespace elsai
