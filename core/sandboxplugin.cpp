// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sandboxplugin.h"

#include "agenttools.h"
#include "audit.h"
#include "errors.h"
#include "firstentries.h"
#include "inputchecks.h"
#include "processregistry.h"
#include "sandbox.h"
#include "sandboxmanager.h"
#include "trackedcall.h"
#include "workspace.h"
#include "workspacesearch.h"

#include <QJsonArray>

#include <limits>

namespace elsai {

namespace {
thread_local std::shared_ptr<CancellationToken> t_toolCallCancel;
thread_local ToolCallCancelScope::OutputObserver t_toolCallOutput;
} // namespace

ToolCallCancelScope::ToolCallCancelScope(std::shared_ptr<CancellationToken> token,
                                         OutputObserver onOutput)
    : m_previous(std::exchange(t_toolCallCancel, std::move(token))),
      m_previousObserver(std::exchange(t_toolCallOutput, std::move(onOutput)))
{
}

ToolCallCancelScope::~ToolCallCancelScope()
{
    t_toolCallCancel = std::move(m_previous);
    t_toolCallOutput = std::move(m_previousObserver);
}

std::shared_ptr<CancellationToken> ToolCallCancelScope::current()
{
    return t_toolCallCancel;
}

ToolCallCancelScope::OutputObserver ToolCallCancelScope::currentOutputObserver()
{
    return t_toolCallOutput;
}

AgentWorkspace agentWorkspace(Agent &agent)
{
    if (const SandboxPtr sandbox = agent.attachedSandbox()) {
        BackendPtr backend = sandbox->backend();
        if (!backend)
            throw AgentSandboxDetachedError(
                QStringLiteral("sandbox '%1' is stopped, so agent '%2' has no workspace; start "
                               "the sandbox and attach the agent again")
                    .arg(sandbox->workspaceId(), agent.id()));
        return {backend, sandbox->workspaceId(), sandbox->manager(),
                agent.attachMode().value_or(SandboxAttachMode::ReadOnly)};
    }
    if (agent.isDetached())
        throw AgentSandboxDetachedError(
            QStringLiteral("agent '%1' was detached from its sandbox; attach it again to use the "
                           "workspace")
                .arg(agent.id()));
    if (sandboxIsActive(agent)) {
        prepareWorkspace(agent);
        const auto manager = agent.sandboxManager();
        const QString id = SandboxManager::resolveWorkspaceId(agent);
        const auto session = manager->getSession(id);
        if (!session || !session->backend)
            throw AgentSandboxDetachedError(
                QStringLiteral("the workspace '%1' of agent '%2' was closed").arg(id, agent.id()));
        return {session->backend, id, manager, agent.config().sandboxAttachMode};
    }
    throw AgentSandboxDetachedError(
        QStringLiteral("agent '%1' is not attached to a sandbox; attach it with Sandbox::attach() "
                       "or configure a sandbox backend")
            .arg(agent.id()));
}

void ensureSandboxMutationAllowed(Agent &agent, const QString &operation)
{
    const QString what = operation.isEmpty() ? QStringLiteral("mutate the workspace") : operation;
    if (agent.attachedSandbox()) {
        if (agent.attachMode() == SandboxAttachMode::ReadOnly)
            throw SandboxMutationDeniedError(
                QStringLiteral("agent '%1' is attached read-only and may not %2; attach it "
                               "read_write to allow changes")
                    .arg(agent.id(), what));
        return;
    }
    if (agent.isDetached() || !sandboxIsActive(agent))
        throw AgentSandboxDetachedError(
            QStringLiteral("agent '%1' is not attached to a sandbox and may not %2")
                .arg(agent.id(), what));
    if (agent.config().sandboxAttachMode == SandboxAttachMode::ReadOnly)
        throw SandboxMutationDeniedError(
            QStringLiteral("agent '%1' is read-only and may not %2").arg(agent.id(), what));
}

void auditedCommand(Agent &agent, const QString &event, const QString &command,
                    const std::optional<QString> &cwd, const QMap<QString, QString> &env,
                    const CommandRunner &run, ExecuteOptions *listed)
{
    AuditRecorder audit(event, SandboxManager::resolveWorkspaceId(agent), agent.id(),
                        commandAuditFields(command));
    try {
        checkExecuteInput(command, cwd.value_or(QString()), env);
        ensureSandboxMutationAllowed(agent, QStringLiteral("execute commands"));
        const AgentWorkspace ws = agentWorkspace(agent);
        audit.setWorkspaceId(ws.workspaceId);
        auto *exec = dynamic_cast<SandboxBackend *>(ws.backend.get());
        if (!exec)
            throw ToolNotFoundError(
                QStringLiteral("the backend of workspace '%1' cannot run commands")
                    .arg(ws.workspaceId));
        if (cwd)
            audit.setField(QStringLiteral("cwd"), *cwd);
        ws.manager->touch(ws.workspaceId);
        ProcessRegistration registration; // none unless listed
        if (listed) {
            // Listed in the Processes panel while it runs, which can read its output and stop it.
            if (!listed->cancel)
                listed->cancel = std::make_shared<CancellationToken>();
            ProcessEntry entry;
            entry.workspaceId = ws.workspaceId;
            entry.kind = ProcessEntry::Kind::Command;
            entry.label = command.left(ProcessEntry::MaxLabel);
            entry.actor = agent.id();
            entry.backend = ws.backend->typeName();
            entry.cwd = cwd.value_or(QString());
            registration = ProcessRegistration(
                entry, ProcessHooks{[token = listed->cancel] { token->cancel(); }, {}});
            listed->onOutput = [id = registration.id(), next = listed->onOutput](
                                   OutputChannel channel, const QByteArray &bytes) {
                ProcessRegistry::instance().appendOutput(id, bytes);
                if (next)
                    next(channel, bytes);
            };
        }
        run(*exec, ws, audit);
        ws.manager->touch(ws.workspaceId);
        audit.ok();
    } catch (const SandboxError &e) {
        audit.fail(e, false);
        throw;
    }
}

void recordExecuteResult(AuditRecorder &audit, const ExecuteResult &r)
{
    audit.setField(QStringLiteral("exit_code"), r.exitCode);
    audit.setField(QStringLiteral("duration_ms"), r.durationMs);
    audit.setField(QStringLiteral("truncated"), r.truncated);
    audit.setField(QStringLiteral("timed_out"), r.timedOut);
}

ExecuteResult executeAs(Agent &agent, const QString &command, const std::optional<QString> &cwd,
                        const ExecuteOptions &options, std::optional<double> timeoutSeconds)
{
    ExecuteResult r;
    ExecuteOptions run = options;
    if (!run.cancel)
        run.cancel = std::make_shared<CancellationToken>(); // so a restore can stop it
    // The console's commands are calls of "execute" like an agent's: tracked, observed.
    QJsonObject args{{QStringLiteral("command"), command}};
    if (cwd)
        args.insert(QStringLiteral("cwd"), *cwd);
    if (timeoutSeconds)
        args.insert(QStringLiteral("timeout"), *timeoutSeconds);
    TrackedCall tracked(agent, QStringLiteral("execute"), args, run.cancel);
    try {
        auditedCommand(
            agent, QStringLiteral("sandbox.execute"), command, cwd, options.env,
            [&](SandboxBackend &exec, const AgentWorkspace &, AuditRecorder &audit) {
                r = exec.execute(command, timeoutSeconds, cwd.value_or(QString()), run);
                recordExecuteResult(audit, r);
            },
            &run);
    } catch (const SandboxError &e) {
        tracked.failed(e);
        throw;
    }
    if (tracked.isActive()) {
        ToolResult result{formatExecuteResult(r), r.toJson(), false};
        tracked.finished(result);
    }
    return r;
}

QString formatExecuteResult(const ExecuteResult &r)
{
    QString text = r.output;
    if (!r.stderr_.isEmpty()) {
        if (!text.isEmpty() && !text.endsWith(QLatin1Char('\n')))
            text += QLatin1Char('\n');
        text += QStringLiteral("[stderr]\n") + r.stderr_;
    }
    if (!text.isEmpty() && !text.endsWith(QLatin1Char('\n')))
        text += QLatin1Char('\n');
    text += QStringLiteral("[exit code: %1").arg(r.exitCode);
    if (r.truncated)
        text += QStringLiteral(", output truncated");
    if (r.timedOut)
        text += QStringLiteral(", timed out");
    if (r.cancelled)
        text += QStringLiteral(", cancelled");
    return text + QLatin1Char(']');
}

QString runCommand(Agent &agent, const QString &command, const std::optional<QString> &cwd)
{
    return formatExecuteResult(executeAs(agent, command, cwd));
}

/// Binary, as read_file and retrieve_offloaded_content judge text: a NUL in the first 8 KiB.
static bool isBinary(const QByteArray &bytes)
{
    return QByteArrayView(bytes).first(qMin<qsizetype>(bytes.size(), 8192)).contains('\0');
}

qint64 readFileMaxBytes(Agent &agent)
{
    if (agent.config().readFileMaxBytes)
        return *agent.config().readFileMaxBytes;
    SandboxPtr sandbox = agent.attachedSandbox();
    if (!sandbox)
        sandbox = agent.config().sandbox;
    if (sandbox && sandbox->options().readFileMaxBytes)
        return *sandbox->options().readFileMaxBytes;
    return DefaultReadFileMaxBytes;
}

BoundedRead readWorkspaceRange(Agent &agent, const QString &path, BoundedReadRequest request,
                               SandboxOutputOffloadPolicy::Rest *rest)
{
    AuditRecorder audit(QStringLiteral("sandbox.read_file"),
                        SandboxManager::resolveWorkspaceId(agent), agent.id(),
                        {{QStringLiteral("path"), path}});
    try {
        checkNoNul(path, QStringLiteral("path"));
        request.maxBytes = qMin(request.maxBytes, readFileMaxBytes(agent));
        const AgentWorkspace ws = agentWorkspace(agent);
        audit.setWorkspaceId(ws.workspaceId);
        ws.manager->touch(ws.workspaceId);
        BoundedRead read = readBounded(*ws.backend, path, request);
        audit.setField(QStringLiteral("bytes"), read.bytes.size());
        audit.setField(QStringLiteral("total_bytes"), read.totalBytes);
        if (isBinary(read.bytes))
            throw ValueError(QStringLiteral("'%1' is a binary file (%2 bytes); read_file returns "
                                            "text — use execute with base64 or xxd to inspect it")
                                 .arg(path)
                                 .arg(read.totalBytes));
        const auto &offload = agent.config().sandboxOutputOffload;
        if (rest && read.cut && request.maxBytes == readFileMaxBytes(agent) && offload &&
            offload->toolNames.contains(QStringLiteral("read_file"))) {
            // the rest streams a piece at a time: memory about one piece, whatever the size
            ExecutionBackend &backend = *ws.backend;
            *rest = offload->offloadRest(
                [&](qint64 pos, qint64 count) { return backend.readFileRange(path, pos, count); },
                read.nextByte(), read.totalBytes);
            audit.setField(QStringLiteral("rest_offloaded_bytes"), rest->bytes);
        }
        audit.ok();
        return read;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

QString readWorkspaceFile(Agent &agent, const QString &path, qint64 offset,
                          std::optional<qint64> limit)
{
    BoundedReadRequest request;
    request.lineOffset = offset;
    request.lineLimit = limit;
    request.maxBytes = readFileMaxBytes(agent);
    const BoundedRead read = readWorkspaceRange(agent, path, request);
    QString text = QString::fromUtf8(read.bytes);
    if (read.cut)
        text += boundedReadNote(read, request.maxBytes);
    return text;
}

QString writeWorkspaceFile(Agent &agent, const QString &path, const QString &content)
{
    AuditRecorder audit(QStringLiteral("sandbox.write_file"),
                        SandboxManager::resolveWorkspaceId(agent), agent.id(),
                        {{QStringLiteral("path"), path}});
    try {
        ensureSandboxMutationAllowed(agent, QStringLiteral("write files"));
        const AgentWorkspace ws = agentWorkspace(agent);
        audit.setWorkspaceId(ws.workspaceId);
        const QByteArray bytes = content.toUtf8();
        ws.manager->touch(ws.workspaceId);
        ws.backend->writeFile(path, bytes);
        audit.setField(QStringLiteral("bytes"), bytes.size());
        audit.ok();
        return QStringLiteral("Wrote %1 bytes to %2").arg(bytes.size()).arg(path);
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

// Audits one list_dir call around `list` (the backend call).
template<typename List>
static auto auditedListing(Agent &agent, const QString &path, List list)
{
    AuditRecorder audit(QStringLiteral("sandbox.list_dir"),
                        SandboxManager::resolveWorkspaceId(agent), agent.id(),
                        {{QStringLiteral("path"), path}});
    try {
        const AgentWorkspace ws = agentWorkspace(agent);
        audit.setWorkspaceId(ws.workspaceId);
        ws.manager->touch(ws.workspaceId);
        auto entries = list(*ws.backend);
        if constexpr (std::is_same_v<decltype(entries), CappedListing>) {
            audit.setField(QStringLiteral("entries"), qint64(entries.listing.size()));
            if (entries.totalEntries > entries.listing.size())
                audit.setField(QStringLiteral("total_entries"), entries.totalEntries);
        } else {
            audit.setField(QStringLiteral("entries"), qint64(entries.size()));
        }
        audit.ok();
        return entries;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

QList<FileInfo> listWorkspaceEntries(Agent &agent, const QString &path, qsizetype statLimit)
{
    return auditedListing(agent, path, [&](ExecutionBackend &backend) {
        return statLimit < 0 ? backend.listDir(path) : backend.listDirBrief(path, statLimit);
    });
}

CappedListing listWorkspaceFirst(Agent &agent, const QString &path, qsizetype maxEntries,
                                 qsizetype statLimit)
{
    return auditedListing(agent, path, [&](ExecutionBackend &backend) {
        return listDirFirst(backend, path, maxEntries, statLimit);
    });
}

/// Appends the line of one entry to `out` (no temporary string per entry: a listing can have
/// thousands).
static void appendEntry(QString &out, const DirListing &listing, const DirListing::Entry &e,
                        const QString &prefix)
{
    out += prefix;
    const QByteArrayView name = listing.name(e);
    if (listing.ascii)
        out += QLatin1StringView(name.data(), name.size());
    else
        out += QString::fromUtf8(name);
    appendEntryKind(out, e.type, e.size);
}

/// The last line of a listing cut at listDirMaxEntries().
static QString moreEntriesNote(qint64 shown, qint64 total)
{
    return QStringLiteral("[%1 more entries not shown (%2 in all, the first %3 by name above); "
                          "list a subfolder, or run a filtered `ls` or `find` with execute]")
        .arg(total - shown)
        .arg(total)
        .arg(shown);
}

QString listWorkspaceDir(Agent &agent, const QString &path)
{
    const CappedListing first =
        listWorkspaceFirst(agent, path, listDirMaxEntries(), listingSizeLimit());
    const DirListing &listing = first.listing;
    if (listing.entries.empty() && first.totalEntries <= 0)
        return QStringLiteral("(empty folder)");
    const QString prefix = listing.folder.isEmpty() ? QString() : listing.folder + u'/';
    QString text;
    text.reserve(qsizetype(listing.entries.size()) * (prefix.size() + 2) + listing.names.size() +
                 64);
    bool sizesOmitted = false;
    const qsizetype shown = qMin(listing.size(), listDirMaxEntries());
    const qint64 count = qMax<qint64>(first.totalEntries, listing.size());
    for (qsizetype i = 0; i < shown; ++i) {
        const DirListing::Entry &e = listing.entries[size_t(i)];
        if (!text.isEmpty())
            text += u'\n';
        appendEntry(text, listing, e, prefix);
        sizesOmitted = sizesOmitted || (e.type == FileInfo::Type::File && !e.size);
    }
    if (shown < count)
        text += u'\n' + moreEntriesNote(shown, count);
    else if (sizesOmitted && count > listingSizeLimit())
        text += QStringLiteral("\n[%1 entries; file sizes are shown for folders of up to %2]")
                    .arg(count)
                    .arg(listingSizeLimit());
    return text;
}

// ---- Tools --------------------------------------------------------------------------------

using schema::prop;
using schema::typed;
static QJsonObject resultSchema(const QJsonObject &properties, const QStringList &required)
{
    return schema::result(properties, required);
}

/// An integer argument of at least `minimum`.
static QJsonObject integerArg(const QString &description, int minimum = 0)
{
    return {{QStringLiteral("type"), QStringLiteral("integer")},
            {QStringLiteral("minimum"), minimum},
            {QStringLiteral("description"), description}};
}

/// The result fields of a bounded read (read_file, retrieve_offloaded_content) besides its
/// content, and their schema.
static QJsonObject boundedReadFields(const BoundedRead &read)
{
    QJsonObject data{{QStringLiteral("total_bytes"), read.totalBytes},
                     {QStringLiteral("byte_offset"), read.startByte},
                     {QStringLiteral("bytes"), read.bytes.size()},
                     {QStringLiteral("truncated"), read.cut}};
    if (read.cut) {
        data.insert(QStringLiteral("next_byte_offset"), read.nextByte());
        if (const auto line = read.nextLine())
            data.insert(QStringLiteral("next_offset"), *line);
    }
    return data;
}

static QJsonObject boundedReadSchema(QJsonObject properties)
{
    for (const char *name :
         {"total_bytes", "byte_offset", "bytes", "next_byte_offset", "next_offset"})
        properties.insert(QLatin1String(name), typed("integer"));
    properties.insert(QStringLiteral("truncated"), typed("boolean"));
    properties.insert(QStringLiteral("content"), typed("string"));
    return properties;
}

static Tool executeTool()
{
    Tool t;
    t.name = QStringLiteral("execute");
    t.title = QStringLiteral("Run a shell command");
    t.outputSchema = resultSchema({{QStringLiteral("output"), typed("string")},
                                   {QStringLiteral("stderr"), typed("string")},
                                   {QStringLiteral("exit_code"), typed("integer")},
                                   {QStringLiteral("success"), typed("boolean")},
                                   {QStringLiteral("truncated"), typed("boolean")},
                                   {QStringLiteral("timed_out"), typed("boolean")},
                                   {QStringLiteral("cancelled"), typed("boolean")},
                                   {QStringLiteral("duration_ms"), typed("integer")},
                                   {QStringLiteral("running"), typed("boolean")},
                                   {QStringLiteral("process_id"), typed("string")},
                                   {QStringLiteral("next_offset"), typed("integer")}},
                                  {QStringLiteral("exit_code"), QStringLiteral("success"),
                                   QStringLiteral("truncated"), QStringLiteral("timed_out"),
                                   QStringLiteral("cancelled"), QStringLiteral("duration_ms")});
    t.provider = SandboxPlugin::providerName();
    t.description = QStringLiteral(
        "Run a shell command (/bin/sh -c) in the sandbox workspace and return its stdout, its "
        "stderr after a [stderr] line, and a final [exit code: N] line. Stdin is empty; long "
        "output is truncated; a command that runs past the timeout is killed with exit code "
        "124. A command still running after the soft-return time is not killed: the answer "
        "says so, with its output so far and a process_id for process_output / process_stop "
        "(use process_start for servers and watchers from the outset).");
    t.inputSchema = objectSchema(
        {{QStringLiteral("command"), prop("string", QStringLiteral("Shell command to run."))},
         {QStringLiteral("cwd"),
          prop("string", QStringLiteral("Working folder, relative to the workspace root "
                                        "(default: the root)."))},
         {QStringLiteral("timeout"),
          QJsonObject{{QStringLiteral("type"), QStringLiteral("number")},
                      {QStringLiteral("exclusiveMinimum"), 0},
                      {QStringLiteral("description"),
                       QStringLiteral("Extension: seconds before the command is killed (at "
                                      "most the sandbox's timeout, which is the default).")}}}},
        {QStringLiteral("command")});
    t.hints = ToolHints{false, true, false};
    t.invoke = executeToolCall; // agenttools.cpp: the per-call timeout and the soft return
    return t;
}

static Tool readFileTool()
{
    Tool t;
    t.name = QStringLiteral("read_file");
    t.title = QStringLiteral("Read a file");
    t.hints = ToolHints{true, false, true};
    t.outputSchema = resultSchema(
        boundedReadSchema({{QStringLiteral("path"), typed("string")},
                           {QStringLiteral("mime_type"), typed("string")},
                           {QStringLiteral("rest_offloaded"), typed("object")},
                           {QStringLiteral("rest_not_offloaded"), typed("string")}}),
        {QStringLiteral("path"), QStringLiteral("total_bytes"), QStringLiteral("byte_offset"),
         QStringLiteral("bytes"), QStringLiteral("truncated")});
    t.provider = SandboxPlugin::providerName();
    t.description = QStringLiteral(
        "Read a text file of the sandbox workspace. Optional offset (first line, 0-based) and "
        "limit (number of lines) read part of a long file. One call returns at most a bounded "
        "number of bytes; a longer answer ends with a note giving the file's size and the "
        "offset (or byte_offset) that reads on. A PNG, JPEG, GIF or WebP image (up to 5 MiB) "
        "comes back as an image.");
    QJsonObject offset = integerArg(QStringLiteral("Line offset (0-based)."));
    offset.insert(QStringLiteral("default"), 0);
    t.inputSchema = objectSchema(
        {{QStringLiteral("path"), prop("string", QStringLiteral("Workspace-relative file path."))},
         {QStringLiteral("offset"), offset},
         {QStringLiteral("limit"), integerArg(QStringLiteral("Maximum number of lines to read."))},
         {QStringLiteral("byte_offset"),
          integerArg(QStringLiteral("Extension: start at this byte instead of the first line "
                                    "(offset then counts lines from there)."))},
         {QStringLiteral("max_bytes"),
          integerArg(QStringLiteral("Extension: return at most this many bytes (never more "
                                    "than the configured bound)."),
                     1)},
         {QStringLiteral("line_numbers"),
          prop("boolean", QStringLiteral("Extension: prefix each line with its 1-based number "
                                         "and a tab, as cat -n does (default false)."))}},
        {QStringLiteral("path")});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("read_file");
        const QString path = args::requiredString(a, QStringLiteral("path"), tool);
        const bool numbered = a.value(QLatin1String("line_numbers")).toBool();
        if (!imageMimeType(path).isEmpty() && !a.contains(QLatin1String("offset")) &&
            !a.contains(QLatin1String("limit")) && !a.contains(QLatin1String("byte_offset"))) {
            ToolImage image = readWorkspaceImage(agent, path);
            return ToolResult{
                QStringLiteral("[%1 image, %2 bytes]").arg(image.mimeType).arg(image.bytes.size()),
                {{QStringLiteral("path"), path},
                 {QStringLiteral("mime_type"), image.mimeType},
                 {QStringLiteral("total_bytes"), image.bytes.size()},
                 {QStringLiteral("byte_offset"), 0},
                 {QStringLiteral("bytes"), image.bytes.size()},
                 {QStringLiteral("truncated"), false}},
                false,
                std::move(image)};
        }
        BoundedReadRequest request;
        request.lineOffset = args::optionalInt(a, QStringLiteral("offset"), tool).value_or(0);
        request.lineLimit = args::optionalInt(a, QStringLiteral("limit"), tool);
        request.byteOffset = args::optionalInt(a, QStringLiteral("byte_offset"), tool);
        request.maxBytes = args::optionalInt(a, QStringLiteral("max_bytes"), tool)
                               .value_or(std::numeric_limits<qint64>::max());
        SandboxOutputOffloadPolicy::Rest rest;
        const BoundedRead read = readWorkspaceRange(agent, path, request, &rest);
        const qint64 bound = qMin(request.maxBytes, readFileMaxBytes(agent));
        QString content = QString::fromUtf8(read.bytes);
        QJsonObject data = boundedReadFields(read);
        data.insert(QStringLiteral("path"), path);
        rest.addTo(data);
        if (numbered) {
            if (!read.firstLine)
                throw ValueError(QStringLiteral("read_file: line_numbers needs a line offset, "
                                                "not byte_offset"));
            content = numberLines(content, *read.firstLine + 1);
        }
        QString text = read.cut ? content + boundedReadNote(read, bound) : content;
        if (const auto &offload = agent.config().sandboxOutputOffload)
            text += offload->restNote(data);
        data.insert(QStringLiteral("content"), content);
        return ToolResult{text, data, false};
    };
    return t;
}

static Tool writeFileTool()
{
    Tool t;
    t.name = QStringLiteral("write_file");
    t.title = QStringLiteral("Write a file");
    t.hints = ToolHints{false, true, true};
    t.outputSchema = resultSchema(
        {{QStringLiteral("path"), typed("string")}, {QStringLiteral("bytes"), typed("integer")}},
        {QStringLiteral("path"), QStringLiteral("bytes")});
    t.provider = SandboxPlugin::providerName();
    t.description = QStringLiteral(
        "Create or replace a text file in the sandbox workspace (parent folders are created). "
        "The whole content is written at once.");
    t.inputSchema = objectSchema(
        {{QStringLiteral("path"), prop("string", QStringLiteral("Workspace-relative file path."))},
         {QStringLiteral("content"), prop("string", QStringLiteral("Text content to write."))}},
        {QStringLiteral("path"), QStringLiteral("content")});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("write_file");
        const QString path = args::requiredString(a, QStringLiteral("path"), tool);
        const QString content = args::requiredString(a, QStringLiteral("content"), tool);
        const QString text = writeWorkspaceFile(agent, path, content);
        return ToolResult{
            text,
            {{QStringLiteral("path"), path}, {QStringLiteral("bytes"), content.toUtf8().size()}},
            false};
    };
    return t;
}

static Tool listDirTool()
{
    Tool t;
    t.name = QStringLiteral("list_dir");
    t.title = QStringLiteral("List a folder");
    t.hints = ToolHints{true, false, true};
    t.outputSchema = resultSchema({{QStringLiteral("path"), typed("string")},
                                   {QStringLiteral("entries"), typed("array")},
                                   {QStringLiteral("truncated"), typed("boolean")},
                                   {QStringLiteral("total_entries"), typed("integer")}},
                                  {QStringLiteral("path")});
    t.provider = SandboxPlugin::providerName();
    t.description = QStringLiteral(
        "List a folder of the sandbox workspace: one entry per line, folders end with '/', "
        "files show their size. Use \".\" for the workspace root.");
    t.inputSchema = objectSchema(
        {{QStringLiteral("path"),
          prop("string", QStringLiteral("Workspace-relative folder path (\".\" = root)."))}},
        {QStringLiteral("path")});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString path =
            args::requiredString(a, QStringLiteral("path"), QStringLiteral("list_dir"));
        QJsonArray entries;
        // only the entries shown are ever held (listDirFirst), whatever the folder's size
        const CappedListing first = listWorkspaceFirst(agent, path, listDirMaxEntries());
        const DirListing &listing = first.listing;
        const qsizetype shown = qMin(listing.size(), listDirMaxEntries());
        // The lines straight from the listing's names: no string per entry.
        const QString prefix = listing.folder.isEmpty() ? QString() : listing.folder + u'/';
        QString text;
        text.reserve(shown * (prefix.size() + 16));
        for (qsizetype i = 0; i < shown; ++i) {
            const DirListing::Entry &e = listing.entries[size_t(i)];
            entries.append(listing.info(e).toJson());
            if (i > 0)
                text += u'\n';
            appendEntry(text, listing, e, prefix);
        }
        const qint64 total = qMax<qint64>(first.totalEntries, listing.size());
        QJsonObject data{{QStringLiteral("path"), path}, {QStringLiteral("entries"), entries}};
        if (shown < total) {
            text +=
                (text.isEmpty() ? QString() : QStringLiteral("\n")) + moreEntriesNote(shown, total);
            data.insert(QStringLiteral("truncated"), true);
            data.insert(QStringLiteral("total_entries"), total);
        }
        return ToolResult{text.isEmpty() ? QStringLiteral("(empty folder)") : text, data, false};
    };
    return t;
}

QStringList SandboxPlugin::toolNames(SandboxAttachMode mode, bool canExecute)
{
    QStringList names;
    for (const Tool &t : tools(mode, canExecute))
        names.append(t.name);
    return names;
}

QList<Tool> SandboxPlugin::tools(SandboxAttachMode mode, bool canExecute)
{
    QList<Tool> out;
    if (mode == SandboxAttachMode::ReadOnly) {
        out = {readFileTool(), listDirTool()};
        out += agentReadTools();
        return out;
    }
    if (canExecute)
        out.append(executeTool());
    out.append({readFileTool(), writeFileTool(), listDirTool()});
    out += agentReadTools();
    out += agentWriteTools();
    if (canExecute)
        out += processTools();
    return out;
}

void SandboxPlugin::registerTools(Agent &agent, SandboxAttachMode mode, bool canExecute)
{
    agent.tools().removeProvider(providerName());
    for (const Tool &t : tools(mode, canExecute))
        agent.tools().add(t);
}

QStringList SandboxPlugin::unregisterTools(Agent &agent)
{
    return agent.tools().removeProvider(providerName());
}

Tool retrieveOffloadedContentTool(const SandboxOutputOffloadPolicy &policy)
{
    Tool t;
    t.name = QStringLiteral("retrieve_offloaded_content");
    t.title = QStringLiteral("Read offloaded output");
    t.outputSchema = resultSchema(boundedReadSchema({{QStringLiteral("handle"), typed("string")}}),
                                  {QStringLiteral("handle")});
    t.provider = QStringLiteral("offload");
    t.description = QStringLiteral(
        "Read a tool result that was too large and was offloaded, or the offloaded rest of a "
        "long file. Pass the handle from the note; optional offset (first line, 0-based) and "
        "limit (lines), or byte_offset and length (bytes). One call returns at most as many "
        "bytes as read_file; a longer answer ends with a note giving the offset that reads on.");
    t.inputSchema = objectSchema(
        {{QStringLiteral("handle"), prop("string", QStringLiteral("The offload handle."))},
         {QStringLiteral("offset"), integerArg(QStringLiteral("Line offset (0-based)."))},
         {QStringLiteral("limit"), integerArg(QStringLiteral("Maximum number of lines."))},
         {QStringLiteral("byte_offset"),
          integerArg(QStringLiteral("Start at this byte (offset then counts lines from there)."))},
         {QStringLiteral("length"),
          integerArg(QStringLiteral("Return at most this many bytes (never more than the "
                                    "configured bound)."),
                     1)}},
        {QStringLiteral("handle")});
    const OffloadStoragePtr storage = policy.storage;
    t.invoke = [storage](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("retrieve_offloaded_content");
        const QString handle = args::requiredString(a, QStringLiteral("handle"), tool);
        BoundedReadRequest request;
        request.lineOffset = args::optionalInt(a, QStringLiteral("offset"), tool).value_or(0);
        request.lineLimit = args::optionalInt(a, QStringLiteral("limit"), tool);
        request.byteOffset = args::optionalInt(a, QStringLiteral("byte_offset"), tool);
        const auto maxLength = args::optionalInt(a, QStringLiteral("length"), tool);
        if (request.lineOffset < 0 || (request.lineLimit && *request.lineLimit < 0) ||
            (request.byteOffset && *request.byteOffset < 0) || (maxLength && *maxLength < 1))
            throw ValueError(QStringLiteral("%1: offset, limit and byte_offset must be >= 0, "
                                            "length >= 1")
                                 .arg(tool));
        const auto unknown = [&] {
            return FileNotFoundError(
                QStringLiteral("no offloaded content with handle '%1'").arg(handle), ENOENT);
        };
        if (!storage)
            throw unknown();
        // Ranged, like read_file: never more than the bound plus one scan buffer in memory,
        // whatever the size of what was offloaded.
        const qint64 bound = readFileMaxBytes(agent);
        request.maxBytes = qMin(maxLength.value_or(bound), bound);
        const BoundedRead read = readBounded(
            [&](qint64 pos, qint64 count) {
                auto range = storage->retrieveRange(handle, pos, count);
                if (!range)
                    throw unknown();
                return std::move(*range);
            },
            request);
        if (isBinary(read.bytes))
            throw ValueError(QStringLiteral("bytes %1-%2 of offloaded content '%3' are binary "
                                            "(NUL bytes): not returned as text")
                                 .arg(read.startByte)
                                 .arg(read.nextByte())
                                 .arg(handle));
        const QString content = QString::fromUtf8(read.bytes);
        QJsonObject data = boundedReadFields(read);
        data.insert(QStringLiteral("handle"), handle);
        data.insert(QStringLiteral("content"), content);
        return ToolResult{read.cut ? content + boundedReadNote(read, request.maxBytes, tool)
                                   : content,
                          data, false};
    };
    return t;
}

} // namespace elsai
