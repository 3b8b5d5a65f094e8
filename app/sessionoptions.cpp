// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sessionoptions.h"

#include "backendregistry.h"
#include "errors.h"
#include "inputchecks.h"
#include "s3storage.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QTextStream>

#include <algorithm>
#include <cmath>
#include <limits>

namespace elsai {

static const char *const kScriptHelp = R"(
Actions (headless): --exec CMD (repeatable) runs each command as the read-write agent
"console", prints its stdout then stderr, stops with sync, and exits with the last command's
exit code. Otherwise a script of JSON lines is read (--script FILE, or standard input):
one operation per line, one JSON result line per operation on stdout, in order:
  {"op":"start"}  {"op":"stop","sync":true}
  {"op":"add_files","files":{"p":"text"|{"base64":"…"}|{"host":"/abs"}},"overwrite":true}
  {"op":"download_files","files":{"ws/path":"/host/path"},"overwrite":true}
  {"op":"delete_files","paths":["…"]}  {"op":"move_file","src":"…","dest":"…"}
  {"op":"read_file","path":"…"}  {"op":"flush","dest":"…","no_base":"keep-both"|"overwrite"}
  {"op":"attach","agent":"name","mode":"read_write"|"read_only"}  {"op":"detach","agent":"name"}
  {"op":"call","agent":"name","tool":"execute|read_file|write_file|list_dir|
        retrieve_offloaded_content","args":{…}}
  {"op":"tools","agent":"name"}  {"op":"cleanup_expired"}  {"op":"sessions"}
  {"op":"sleep","seconds":N}
  With --checkpoints: {"op":"checkpoint","name":"…","note":"…"}  {"op":"checkpoints"}
  {"op":"diff","from":"…","to":"now"}  {"op":"restore","name":"…"}
  {"op":"fork","name":"…","workspace_root":"/new/dir"}  {"op":"delete_checkpoint","name":"…"}
Result: {"op":…,"ok":true,"result":…}
     or {"op":…,"ok":false,"error":{"type":…,"message":…}}.
The exit status is 0 when every operation succeeded, 1 otherwise, 2 on usage errors, 4 when
audit records were lost, 128+N when stopped by signal N.
--run-agent PLAN runs a scripted agent (a plan file, or demo:explore-readonly,
demo:fix-failing-test, demo:readonly-denied) and prints one JSON line per step, then a
summary line; exit status 0 when every expectation is met, 1 when one is not, 2 on a usage
error or an invalid plan, 3 when the sandbox cannot start or the agent cannot attach.
--record FILE records the tool calls of the session (MCP, script, --exec, --run-agent) as a
plan; --run-agent FILE replays it and reports every divergence from the recording.)";

void SessionOptions::describe(QCommandLineParser &p, Mode mode)
{
    p.setApplicationDescription(
        QStringLiteral("Workbench for agent sandboxes: a shared workspace that agents use "
                       "through execute, read_file, write_file and list_dir.") +
        (mode == Mode::Headless ? QString::fromUtf8(kScriptHelp) : QString()));
    p.addHelpOption();
    p.addVersionOption();
    p.addOptions({
        {QStringLiteral("headless"), QStringLiteral("Run without a window (no display needed).")},
        {QStringLiteral("verbose"),
         QStringLiteral("Log audit records and progress to stderr too.")},
        {QStringLiteral("workspace-id"), QStringLiteral("Workspace id (default: workbench)."),
         QStringLiteral("ID")},
        {QStringLiteral("workspace-root"),
         QStringLiteral("Host folder of the workspace (default: a new temporary folder, kept)."),
         QStringLiteral("DIR")},
        {QStringLiteral("seed-from"), QStringLiteral("Project folder copied in on start."),
         QStringLiteral("DIR")},
        {QStringLiteral("seed-exclude"),
         QStringLiteral("Extra seed exclude glob, merged with the defaults (repeatable)."),
         QStringLiteral("GLOB")},
        {QStringLiteral("sync-include"),
         QStringLiteral("Glob synced back on flush (repeatable; default: the spec's list)."),
         QStringLiteral("GLOB")},
        {QStringLiteral("sync-dest"), QStringLiteral("Host folder for flush (default: seed-from)."),
         QStringLiteral("DIR")},
        {QStringLiteral("flush-no-base"),
         QStringLiteral("Flush into a folder with no base (never seeded from or flushed to): "
                        "keep-both (default: the host file stays, the sandbox version is "
                        "written beside it) or overwrite."),
         QStringLiteral("RULE")},
        {QStringLiteral("ttl"), QStringLiteral("Idle TTL in seconds, or 'none' (default: 7200)."),
         QStringLiteral("SECONDS")},
        {QStringLiteral("timeout"), QStringLiteral("Command timeout in seconds (default: 120)."),
         QStringLiteral("SECONDS")},
        {QStringLiteral("max-output-bytes"),
         QStringLiteral("Cap on captured stdout+stderr (default: 100000)."), QStringLiteral("N")},
        {QStringLiteral("read-file-max-bytes"),
         QStringLiteral("Most bytes one read_file call of an agent returns; longer files are "
                        "read in parts (default: 262144)."),
         QStringLiteral("N")},
        {QStringLiteral("execute-soft-return"),
         QStringLiteral("Seconds after which an agent's execute answers while its command goes "
                        "on as a background process (output so far and a process_id); 0 = "
                        "never (default: 45, below the 60 s request timeout of common MCP "
                        "clients)."),
         QStringLiteral("SECONDS")},
        {QStringLiteral("env"), QStringLiteral("Extra variable for commands (repeatable)."),
         QStringLiteral("NAME=VALUE")},
        {QStringLiteral("no-inherit-env"),
         QStringLiteral("Commands get only --env variables (and a default PATH).")},
        {QStringLiteral("backend"), QStringLiteral("Backend: %1.").arg(BackendRegistry::helpText()),
         QStringLiteral("NAME")},
        {QStringLiteral("offload-s3"),
         QStringLiteral("Offload to the S3 bucket BUCKET (implies --offload; credentials, "
                        "region and AWS_ENDPOINT_URL_S3 from the environment)."),
         QStringLiteral("BUCKET")},
        {QStringLiteral("audit-log"),
         QStringLiteral("Append audit records as JSON lines to FILE ('-' = stderr)."),
         QStringLiteral("FILE")},
        {QStringLiteral("offload"),
         QStringLiteral("Offload large tool results (in memory) and register "
                        "retrieve_offloaded_content.")},
        {QStringLiteral("offload-dir"),
         QStringLiteral("Offload to files in DIR (implies --offload)."), QStringLiteral("DIR")},
        {QStringLiteral("offload-max-tokens"),
         QStringLiteral("Offload results above N tokens (default: 2500)."), QStringLiteral("N")},
        {QStringLiteral("offload-preview-tokens"),
         QStringLiteral("Tokens kept as preview (default: 1000)."), QStringLiteral("N")},
        {QStringLiteral("exec"), QStringLiteral("Run CMD in the workspace (repeatable)."),
         QStringLiteral("CMD")},
        {QStringLiteral("script"),
         QStringLiteral("Run JSON-lines operations from FILE ('-' = stdin)."),
         QStringLiteral("FILE")},
        {QStringLiteral("run-agent"),
         QStringLiteral("Run a scripted agent: a plan file or demo:NAME."), QStringLiteral("PLAN")},
        {QStringLiteral("agent-mode"),
         QStringLiteral("Attach mode of the --run-agent agent: read_write or read_only "
                        "(default: the plan's)."),
         QStringLiteral("MODE")},
        {QStringLiteral("agent-name"),
         QStringLiteral("Name of the --run-agent agent (default: the plan's)."),
         QStringLiteral("NAME")},
        {QStringLiteral("record"),
         QStringLiteral("Record the session's tool calls (MCP agents, the script's, the "
                        "console's, a scripted agent's) as a plan FILE to replay with "
                        "--run-agent (headless; implies --checkpoints and --track-changes)."),
         QStringLiteral("FILE")},
        {QStringLiteral("record-agent"),
         QStringLiteral("Record only the calls of agent NAME (repeatable; needs --record)."),
         QStringLiteral("NAME")},
        {QStringLiteral("mcp-http"),
         QStringLiteral("Serve the sandbox over MCP Streamable HTTP at http://HOST:PORT/mcp "
                        "(host default 127.0.0.1; port 0 = any free one)."),
         QStringLiteral("[HOST:]PORT")},
        {QStringLiteral("mcp-stdio"),
         QStringLiteral("Serve the sandbox over MCP on stdin/stdout to one agent (headless).")},
        {QStringLiteral("mcp-agent"),
         QStringLiteral("MCP agent and its bearer token (repeatable; random token when "
                        "omitted)."),
         QStringLiteral("NAME=read_write|read_only[:TOKEN]")},
        {QStringLiteral("mcp-allow-remote"),
         QStringLiteral("Allow --mcp-http on a non-loopback address.")},
        {QStringLiteral("checkpoints"),
         QStringLiteral("Keep checkpoints of the workspace (a baseline 'seed' at start; the "
                        "checkpoint, diff, restore, fork operations; docs/checkpoints.md).")},
        {QStringLiteral("checkpoint-dir"),
         QStringLiteral("Checkpoint store folder (implies --checkpoints; default: "
                        "ELSAI_CHECKPOINT_DIR, else elsai/checkpoints in the data folder)."),
         QStringLiteral("DIR")},
        {QStringLiteral("checkpoint-limit"),
         QStringLiteral("Size bound of the checkpoint store, bytes or K/M/G; past it the "
                        "oldest automatic checkpoints go (default: 4G)."),
         QStringLiteral("SIZE")},
        {QStringLiteral("auto-checkpoint"),
         QStringLiteral("Take an automatic checkpoint before each call of agent NAME that can "
                        "change the workspace (implies --checkpoints; repeatable)."),
         QStringLiteral("NAME")},
        {QStringLiteral("track-changes"),
         QStringLiteral("Record what every call changed (added, modified, deleted paths) in "
                        "its result and audit record.")},
        {QStringLiteral("mcp-checkpoints"),
         QStringLiteral("Give read-write agents the checkpoint tools (checkpoint, checkpoints, "
                        "diff_checkpoints, restore_checkpoint, delete_checkpoint; implies "
                        "--checkpoints).")},
        {QStringLiteral("mcp-progress-interval"),
         QStringLiteral("Seconds between MCP progress notifications of a running tool call "
                        "that carries a progress token (default: 5); a stateless (2026-07-28) "
                        "call of a client with the Tasks extension becomes a task after one."),
         QStringLiteral("SECONDS")},
        {QStringLiteral("mcp-config"),
         QStringLiteral("Print a ready client configuration for each agent instead of the "
                        "start-up lines (with --mcp-http, then serve; with --mcp-stdio, then "
                        "exit): claude-code, codex, vscode, cursor, gemini, zed, opencode or "
                        "all."),
         QStringLiteral("CLIENT")},
    });
    for (const BackendDescriptor &d : BackendRegistry::all())
        p.addOptions(d.options);
}

static double positiveNumber(const QString &option, const QString &value)
{
    bool ok = false;
    const double v = value.toDouble(&ok);
    if (!ok || !(v > 0) || !std::isfinite(v))
        throw ValueError(
            QStringLiteral("--%1 needs a positive number, got '%2'").arg(option, value));
    return v;
}

static qint64 nonNegativeInt(const QString &option, const QString &value)
{
    bool ok = false;
    const qint64 v = value.toLongLong(&ok);
    if (!ok || v < 0)
        throw ValueError(
            QStringLiteral("--%1 needs a whole number >= 0, got '%2'").arg(option, value));
    return v;
}

SessionOptions SessionOptions::fromParser(const QCommandLineParser &p)
{
    SessionOptions o;
    auto has = [&](const char *name) { return p.isSet(QLatin1String(name)); };
    auto val = [&](const char *name) { return p.value(QLatin1String(name)); };
    SandboxSpec &spec = o.spec;
    if (has("workspace-id")) {
        spec.workspaceId = val("workspace-id");
        if (spec.workspaceId.isEmpty())
            throw ValueError(QStringLiteral("--workspace-id must not be empty"));
    }
    if (has("workspace-root"))
        spec.workspaceRoot = val("workspace-root");
    if (has("seed-from"))
        spec.seedFrom = val("seed-from");
    spec.seedExclude = p.values(QStringLiteral("seed-exclude"));
    if (has("sync-include"))
        spec.syncInclude = p.values(QStringLiteral("sync-include"));
    if (has("sync-dest"))
        spec.syncDest = val("sync-dest");
    if (has("flush-no-base"))
        spec.noBaseConflict = noBaseConflictFromString(val("flush-no-base"));
    if (has("ttl")) {
        const QString ttl = val("ttl");
        spec.ttlSeconds = ttl == QLatin1String("none")
                              ? std::nullopt
                              : std::optional(positiveNumber(QStringLiteral("ttl"), ttl));
    }
    if (has("timeout"))
        spec.local.timeout = positiveNumber(QStringLiteral("timeout"), val("timeout"));
    if (has("max-output-bytes"))
        spec.local.maxOutputBytes =
            nonNegativeInt(QStringLiteral("max-output-bytes"), val("max-output-bytes"));
    if (has("read-file-max-bytes")) {
        spec.readFileMaxBytes =
            nonNegativeInt(QStringLiteral("read-file-max-bytes"), val("read-file-max-bytes"));
        if (spec.readFileMaxBytes < 1)
            throw ValueError(QStringLiteral("--read-file-max-bytes must be at least 1"));
    }
    if (has("execute-soft-return")) {
        bool ok = false;
        const QString value = val("execute-soft-return");
        const double v = value.toDouble(&ok);
        if (!ok || !(v >= 0) || !std::isfinite(v))
            throw ValueError(QStringLiteral("--execute-soft-return needs a number of seconds >= 0 "
                                            "(0: never), got '%1'")
                                 .arg(value));
        spec.executeSoftReturnSeconds = v;
    }
    for (const QString &kv : p.values(QStringLiteral("env"))) {
        const qsizetype eq = kv.indexOf(QLatin1Char('='));
        if (eq <= 0)
            throw ValueError(QStringLiteral("--env needs NAME=VALUE, got '%1'").arg(kv));
        spec.local.env.insert(kv.left(eq), kv.mid(eq + 1));
    }
    spec.local.inheritEnv = !has("no-inherit-env");
    if (has("backend"))
        spec.backend = val("backend");
    // Each backend reads its own options; another backend's are refused, not ignored.
    const BackendDescriptor &chosen = BackendRegistry::get(spec.backend);
    for (const BackendDescriptor &d : BackendRegistry::all()) {
        if (&d == &chosen)
            continue;
        for (const QCommandLineOption &option : d.options) {
            if (p.isSet(option.names().constFirst()))
                throw ValueError(QStringLiteral("--%1 is an option of the %2 backend: the %2 "
                                                "options need --backend %2")
                                     .arg(option.names().constFirst(), d.name));
        }
    }
    TimeTravelOptions &tt = spec.timeTravel;
    tt.checkpoints = has("checkpoints") || has("checkpoint-dir") || has("auto-checkpoint") ||
                     has("mcp-checkpoints");
    if (has("checkpoint-dir")) {
        tt.folder = val("checkpoint-dir");
        if (tt.folder.isEmpty())
            throw ValueError(QStringLiteral("--checkpoint-dir must not be empty"));
    }
    if (has("checkpoint-limit"))
        tt.sizeLimitBytes =
            parseByteSize(QStringLiteral("checkpoint-limit"), val("checkpoint-limit"));
    tt.autoCheckpointAgents = p.values(QStringLiteral("auto-checkpoint"));
    tt.trackChanges = has("track-changes");
    if (has("record")) {
        o.recordFile = val("record");
        if (o.recordFile.isEmpty())
            throw ValueError(QStringLiteral("--record needs the plan file to write"));
        tt.checkpoints = tt.trackChanges = true; // a start to restore, the changes to expect
    }
    o.recordAgents = p.values(QStringLiteral("record-agent"));
    if (!o.recordAgents.isEmpty() && o.recordFile.isEmpty())
        throw ValueError(QStringLiteral("--record-agent needs --record FILE"));
    o.mcpCheckpoints = has("mcp-checkpoints");
    tt.agentTools = o.mcpCheckpoints;
    if (chosen.readOptions)
        chosen.readOptions(p, spec);
    if (has("audit-log"))
        o.auditLog = val("audit-log");
    o.execCommands = p.values(QStringLiteral("exec"));
    if (has("script"))
        o.scriptPath = val("script");
    if (!o.execCommands.isEmpty() && !o.scriptPath.isEmpty())
        throw ValueError(QStringLiteral("--exec and --script cannot be combined; pick one action"));
    if (has("run-agent")) {
        o.runAgent = val("run-agent");
        if (o.runAgent.isEmpty())
            throw ValueError(QStringLiteral("--run-agent needs a plan file or demo:NAME"));
        if (!o.execCommands.isEmpty() || !o.scriptPath.isEmpty())
            throw ValueError(QStringLiteral(
                "--run-agent cannot be combined with --exec or --script; pick one action"));
    }
    if ((has("agent-mode") || has("agent-name")) && o.runAgent.isEmpty())
        throw ValueError(QStringLiteral("--agent-mode and --agent-name need --run-agent"));
    if (has("agent-mode")) {
        try {
            o.agentMode = attachModeFromString(val("agent-mode"));
        } catch (const ValueError &e) {
            throw ValueError(QStringLiteral("--agent-mode: ") + e.message());
        }
    }
    if (has("agent-name")) {
        o.agentName = val("agent-name");
        if (o.agentName->isEmpty())
            throw ValueError(QStringLiteral("--agent-name must not be empty"));
    }
    o.offload = has("offload") || has("offload-dir") || has("offload-s3");
    if (has("offload-s3"))
        o.offloadS3Bucket = val("offload-s3");
    if (has("offload-dir"))
        o.offloadDir = val("offload-dir");
    if (has("offload-max-tokens"))
        o.offloadMaxTokens =
            nonNegativeInt(QStringLiteral("offload-max-tokens"), val("offload-max-tokens"));
    if (has("offload-preview-tokens"))
        o.offloadPreviewTokens =
            nonNegativeInt(QStringLiteral("offload-preview-tokens"), val("offload-preview-tokens"));
    if (has("mcp-http")) {
        o.mcpHttp = val("mcp-http");
        if (o.mcpHttp.isEmpty())
            throw ValueError(QStringLiteral("--mcp-http needs [HOST:]PORT"));
    }
    o.mcpStdio = has("mcp-stdio");
    o.mcpAllowRemote = has("mcp-allow-remote");
    o.mcpAgents = p.values(QStringLiteral("mcp-agent"));
    if (has("mcp-progress-interval"))
        o.mcpProgressInterval =
            positiveNumber(QStringLiteral("mcp-progress-interval"), val("mcp-progress-interval"));
    if (o.wantsMcp() &&
        (!o.execCommands.isEmpty() || !o.scriptPath.isEmpty() || !o.runAgent.isEmpty()))
        throw ValueError(QStringLiteral("--mcp-http/--mcp-stdio serve agents until stopped; they "
                                        "cannot be combined with --exec, --script or "
                                        "--run-agent"));
    if (!o.mcpAgents.isEmpty() && !o.wantsMcp())
        throw ValueError(QStringLiteral("--mcp-agent needs --mcp-http or --mcp-stdio"));
    if (has("mcp-config")) {
        o.mcpConfig = val("mcp-config");
        if (!o.wantsMcp())
            throw ValueError(QStringLiteral("--mcp-config prints the configuration of a server: "
                                            "give --mcp-http or --mcp-stdio and --mcp-agent"));
    }
    return o;
}

std::optional<SandboxOutputOffloadPolicy> SessionOptions::offloadPolicy() const
{
    if (!offload)
        return std::nullopt;
    SandboxOutputOffloadPolicy p;
    if (!offloadS3Bucket.isEmpty())
        p.storage = std::make_shared<aws::S3Storage>(
            aws::S3Storage::optionsFromEnvironment(offloadS3Bucket));
    else if (offloadDir.isEmpty())
        p.storage = std::make_shared<InMemoryStorage>();
    else
        p.storage = std::make_shared<FileStorage>(offloadDir);
    p.maxResultTokens = offloadMaxTokens;
    p.previewTokens = offloadPreviewTokens;
    return p;
}

AuditSinkPtr SessionOptions::installAuditLog() const
{
    if (auditLog.isEmpty())
        return {};
    auto sink = std::make_shared<JsonLinesAuditSink>(auditLog);
    AuditLog::instance().addSink(sink);
    return sink;
}

void printError(const QString &text)
{
    QTextStream(stderr) << "elsai-workbench: " << text << Qt::endl;
}

} // namespace elsai
