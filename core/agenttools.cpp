// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agenttools.h"

#include "agent.h"
#include "audit.h"
#include "backgroundprocesses.h"
#include "boundedread.h"
#include "errors.h"
#include "sandbox.h"
#include "sandboxmanager.h"
#include "sandboxplugin.h"
#include "workspacefs.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>

#include <cmath>

namespace elsai {

namespace {

using schema::integer;
using schema::prop;
using schema::typed;

/// Length and a short hash of agent-given text the audit log must not hold (patterns, input).
QJsonObject textAuditFields(const QString &name, const QByteArray &utf8)
{
    return {{name + QStringLiteral("_bytes"), utf8.size()},
            {name + QStringLiteral("_sha256"),
             QString::fromLatin1(
                 QCryptographicHash::hash(utf8, QCryptographicHash::Sha256).toHex().left(12))}};
}

/// Runs `body` inside one audit record "sandbox.<tool>": the agent's mode is checked first
/// for a tool that changes the workspace (`mutation` set), the workspace resolved and touched.
template<typename Body>
auto audited(Agent &agent, const QString &tool, const QJsonObject &fields,
             const std::optional<QString> &mutation, Body body)
{
    AuditRecorder audit(QStringLiteral("sandbox.") + tool,
                        SandboxManager::resolveWorkspaceId(agent), agent.id(), fields);
    try {
        if (mutation)
            ensureSandboxMutationAllowed(agent, *mutation);
        const AgentWorkspace ws = agentWorkspace(agent);
        audit.setWorkspaceId(ws.workspaceId);
        ws.manager->touch(ws.workspaceId);
        auto result = body(ws, audit);
        audit.ok();
        return result;
    } catch (const SandboxError &e) {
        audit.fail(e);
        throw;
    }
}

qint64 boundedInt(const QJsonObject &a, const QString &key, const QString &tool, qint64 fallback,
                  qint64 min, qint64 max)
{
    const qint64 v = args::optionalInt(a, key, tool).value_or(fallback);
    if (v < min || v > max)
        throw ValueError(QStringLiteral("%1: argument '%2' must be between %3 and %4, got %5")
                             .arg(tool, key)
                             .arg(min)
                             .arg(max)
                             .arg(v));
    return v;
}

bool optionalBool(const QJsonObject &a, const QString &key, const QString &tool)
{
    const QJsonValue v = a.value(key);
    if (v.isUndefined() || v.isNull())
        return false;
    if (!v.isBool())
        throw ValueError(QStringLiteral("%1: argument '%2' must be true or false").arg(tool, key));
    return v.toBool();
}

QStringList stringList(const QJsonObject &a, const QString &key, const QString &tool, qsizetype max)
{
    const QJsonValue v = a.value(key);
    if (v.isUndefined() || v.isNull())
        return {};
    if (v.isString())
        return {v.toString()};
    if (!v.isArray())
        throw ValueError(
            QStringLiteral("%1: argument '%2' must be an array of strings").arg(tool, key));
    const QJsonArray array = v.toArray();
    if (array.size() > max)
        throw ValueError(QStringLiteral("%1: argument '%2' takes at most %3 items, got %4")
                             .arg(tool, key)
                             .arg(max)
                             .arg(array.size()));
    QStringList out;
    for (const QJsonValue &item : array) {
        if (!item.isString())
            throw ValueError(
                QStringLiteral("%1: argument '%2' must be an array of strings").arg(tool, key));
        out.append(item.toString());
    }
    return out;
}

QJsonObject stringArray(const QString &description)
{
    return {{QStringLiteral("type"), QStringLiteral("array")},
            {QStringLiteral("items"), typed("string")},
            {QStringLiteral("description"), description}};
}

QJsonObject enumeration(const QStringList &values, const QString &description)
{
    return {{QStringLiteral("type"), QStringLiteral("string")},
            {QStringLiteral("enum"), QJsonArray::fromStringList(values)},
            {QStringLiteral("description"), description}};
}

Tool makeTool(const char *name, const QString &title, const QString &description,
              const QJsonObject &properties, const QStringList &required,
              const QJsonObject &outputSchema, ToolHints hints)
{
    Tool t;
    t.name = QLatin1String(name);
    t.title = title;
    t.description = description;
    t.inputSchema = objectSchema(properties, required);
    t.provider = SandboxPlugin::providerName();
    t.outputSchema = outputSchema;
    t.hints = hints;
    return t;
}

constexpr ToolHints ReadOnly{true, false, true};

const QString kPathHelp = QStringLiteral("Workspace-relative path (\".\" = the root).");

// ---- search ---------------------------------------------------------------------------------

SearchScope scopeOf(Agent &agent, const QJsonObject &a, const QString &tool)
{
    SearchScope scope;
    scope.path =
        args::optionalString(a, QStringLiteral("path"), tool).value_or(QStringLiteral("."));
    scope.exclude = stringList(a, QStringLiteral("exclude"), tool, 64);
    if (!optionalBool(a, QStringLiteral("include_excluded"), tool))
        scope.skip = searchSkips(agent);
    return scope;
}

const QString kSkipHelp = QStringLiteral(
    "Also search what the sandbox's seed excludes leave out (.git, node_modules, .venv, .env, "
    "*.pem, secrets/, …); by default they are skipped unless `path` names such a folder.");

Tool grepTool()
{
    Tool t = makeTool(
        "grep", QStringLiteral("Search file contents"),
        QStringLiteral(
            "Search the workspace's text files for a regular expression (PCRE syntax, matched "
            "line by line) and return matching lines as path:line:text, or only file names, "
            "or counts per file. Filter files with include/exclude globs (`*.py`, "
            "`src/**/*.ts`, relative to `path`). Results stop at max_results with a "
            "[more: …] line; binary files and files over 8 MiB are skipped. Prefer this to "
            "running grep with execute."),
        {{QStringLiteral("pattern"),
          prop("string", QStringLiteral("Regular expression (PCRE), e.g. `def \\w+\\(` or "
                                        "`TODO|FIXME`.)"))},
         {QStringLiteral("path"), prop("string", QStringLiteral("Folder (or one file) to search; "
                                                                "default \".\"."))},
         {QStringLiteral("include"),
          stringArray(QStringLiteral("Only files matching one of these globs."))},
         {QStringLiteral("exclude"),
          stringArray(QStringLiteral("Skip files and folders matching these globs."))},
         {QStringLiteral("case_insensitive"),
          prop("boolean", QStringLiteral("Ignore case (default false)."))},
         {QStringLiteral("context"),
          integer(QStringLiteral("Lines of context before and after each match (0-20)."))},
         {QStringLiteral("before"), integer(QStringLiteral("Lines of context before (0-20)."))},
         {QStringLiteral("after"), integer(QStringLiteral("Lines of context after (0-20)."))},
         {QStringLiteral("output"),
          enumeration({QStringLiteral("content"), QStringLiteral("files"), QStringLiteral("count")},
                      QStringLiteral("content (default): matching lines with line numbers; "
                                     "files: names of matching files; count: matches per "
                                     "file."))},
         {QStringLiteral("max_results"),
          integer(QStringLiteral("Most lines (content) or files returned, 1-5000; default "
                                 "200."),
                  1)},
         {QStringLiteral("include_excluded"), prop("boolean", kSkipHelp)}},
        {QStringLiteral("pattern")},
        schema::result({{QStringLiteral("entries"), typed("array")},
                        {QStringLiteral("files_searched"), typed("integer")},
                        {QStringLiteral("matches"), typed("integer")},
                        {QStringLiteral("truncated"), typed("boolean")},
                        {QStringLiteral("stopped_early"), typed("boolean")},
                        {QStringLiteral("skipped_binary"), typed("integer")},
                        {QStringLiteral("skipped_large"), typed("integer")}},
                       {QStringLiteral("files_searched"), QStringLiteral("matches"),
                        QStringLiteral("truncated")}),
        ReadOnly);
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("grep");
        GrepRequest r;
        r.pattern = args::requiredString(a, QStringLiteral("pattern"), tool);
        r.scope = scopeOf(agent, a, tool);
        r.scope.include = stringList(a, QStringLiteral("include"), tool, 64);
        r.caseInsensitive = optionalBool(a, QStringLiteral("case_insensitive"), tool);
        const qint64 context = boundedInt(a, QStringLiteral("context"), tool, 0, 0, 20);
        r.contextBefore = int(boundedInt(a, QStringLiteral("before"), tool, context, 0, 20));
        r.contextAfter = int(boundedInt(a, QStringLiteral("after"), tool, context, 0, 20));
        const QString output = args::optionalString(a, QStringLiteral("output"), tool)
                                   .value_or(QStringLiteral("content"));
        if (output == QLatin1String("files"))
            r.output = GrepOutput::FilesWithMatches;
        else if (output == QLatin1String("count"))
            r.output = GrepOutput::Count;
        else if (output != QLatin1String("content"))
            throw ValueError(QStringLiteral("grep: output must be content, files or count"));
        r.maxResults = int(boundedInt(a, QStringLiteral("max_results"), tool, 200, 1, 5000));
        const GrepResult g = grepAs(agent, r);
        QJsonArray entries;
        qint64 matches = 0;
        for (const GrepFile &f : g.files) {
            matches += f.count;
            if (r.output == GrepOutput::Content) {
                for (const GrepLine &l : f.lines) {
                    QJsonObject o{{QStringLiteral("path"), f.path},
                                  {QStringLiteral("line"), l.line},
                                  {QStringLiteral("text"), l.text}};
                    if (!l.match)
                        o.insert(QStringLiteral("context"), true);
                    entries.append(o);
                }
            } else {
                entries.append(QJsonObject{{QStringLiteral("path"), f.path},
                                           {QStringLiteral("count"), f.count}});
            }
        }
        QJsonObject data{{QStringLiteral("entries"), entries},
                         {QStringLiteral("files_searched"), g.filesSearched},
                         {QStringLiteral("matches"), matches},
                         {QStringLiteral("truncated"), g.more || g.stoppedEarly},
                         {QStringLiteral("skipped_binary"), g.skippedBinary},
                         {QStringLiteral("skipped_large"), g.skippedLarge}};
        if (g.stoppedEarly)
            data.insert(QStringLiteral("stopped_early"), true);
        return ToolResult{formatGrep(r, g), data, false};
    };
    return t;
}

Tool globTool()
{
    Tool t = makeTool(
        "glob", QStringLiteral("Find files by name"),
        QStringLiteral(
            "Find files whose path matches a glob: `*` and `?` within one name, `**` across "
            "folders (`**/*.test.ts`, `src/**/CMakeLists.txt`); a pattern without `/` matches "
            "names at any depth; end it with `/` to find folders. Returns workspace-relative "
            "paths, newest first (or sorted by path), at most max_results with a [more: …] "
            "line."),
        {{QStringLiteral("pattern"), prop("string", QStringLiteral("The glob."))},
         {QStringLiteral("path"),
          prop("string", QStringLiteral("Folder the pattern is relative to; default \".\"."))},
         {QStringLiteral("exclude"),
          stringArray(QStringLiteral("Skip files and folders matching these globs."))},
         {QStringLiteral("order"),
          enumeration({QStringLiteral("newest"), QStringLiteral("path")},
                      QStringLiteral("newest (default): most recently modified first; path: "
                                     "sorted by path."))},
         {QStringLiteral("max_results"),
          integer(QStringLiteral("Most paths returned, 1-5000; default 500."), 1)},
         {QStringLiteral("include_excluded"), prop("boolean", kSkipHelp)}},
        {QStringLiteral("pattern")},
        schema::result({{QStringLiteral("entries"), typed("array")},
                        {QStringLiteral("total_matches"), typed("integer")},
                        {QStringLiteral("truncated"), typed("boolean")}},
                       {QStringLiteral("total_matches"), QStringLiteral("truncated")}),
        ReadOnly);
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("glob");
        GlobRequest r;
        r.scope = scopeOf(agent, a, tool);
        r.scope.include = {args::requiredString(a, QStringLiteral("pattern"), tool)};
        const QString order = args::optionalString(a, QStringLiteral("order"), tool)
                                  .value_or(QStringLiteral("newest"));
        if (order != QLatin1String("newest") && order != QLatin1String("path"))
            throw ValueError(QStringLiteral("glob: order must be newest or path"));
        r.order = order == QLatin1String("path") ? GlobOrder::Path : GlobOrder::Newest;
        r.maxResults = int(boundedInt(a, QStringLiteral("max_results"), tool, 500, 1, 5000));
        const GlobResult g = globAs(agent, r);
        QStringList lines;
        QJsonArray entries;
        for (const WalkEntry &e : g.files) {
            const bool dir = e.type == FileInfo::Type::Directory;
            lines.append(dir ? e.path + u'/' : e.path);
            QJsonObject o{{QStringLiteral("path"), e.path}};
            if (dir)
                o.insert(QStringLiteral("is_dir"), true);
            if (r.order == GlobOrder::Newest)
                o.insert(QStringLiteral("mtime_ms"), e.mtimeMs);
            entries.append(o);
        }
        if (lines.isEmpty())
            lines.append(QStringLiteral("No files match."));
        if (g.more)
            lines.append(QStringLiteral("[more: %1 matches, the first %2 shown; narrow the "
                                        "pattern or path, or raise max_results]")
                             .arg(g.matched)
                             .arg(r.maxResults));
        if (g.stoppedEarly)
            lines.append(QStringLiteral("[more: the search stopped after %1 entries of the tree; "
                                        "give a narrower path]")
                             .arg(r.scope.maxEntriesVisited));
        return ToolResult{lines.join(u'\n'),
                          {{QStringLiteral("entries"), entries},
                           {QStringLiteral("total_matches"), g.matched},
                           {QStringLiteral("truncated"), g.more || g.stoppedEarly}},
                          false};
    };
    return t;
}

Tool treeTool()
{
    Tool t = makeTool(
        "tree", QStringLiteral("Show a folder tree"),
        QStringLiteral("Show the folders and files beneath a folder as an indented outline to "
                       "a depth (default 3), files with their sizes; folders the seed excludes "
                       "leave out (node_modules, .git, …) are shown but not expanded. At most "
                       "max_entries lines, then a [more: …] line."),
        {{QStringLiteral("path"), prop("string", kPathHelp)},
         {QStringLiteral("depth"), integer(QStringLiteral("Levels shown, 1-10; default 3."), 1)},
         {QStringLiteral("max_entries"),
          integer(QStringLiteral("Most entries shown, 1-5000; default 500."), 1)},
         {QStringLiteral("exclude"),
          stringArray(QStringLiteral("Leave out files and folders matching these globs."))},
         {QStringLiteral("include_excluded"), prop("boolean", kSkipHelp)}},
        {},
        schema::result({{QStringLiteral("path"), typed("string")},
                        {QStringLiteral("entries"), typed("array")},
                        {QStringLiteral("truncated"), typed("boolean")}},
                       {QStringLiteral("path"), QStringLiteral("truncated")}),
        ReadOnly);
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("tree");
        TreeRequest r;
        r.scope = scopeOf(agent, a, tool);
        r.maxDepth = int(boundedInt(a, QStringLiteral("depth"), tool, 3, 1, 10));
        r.maxEntries = int(boundedInt(a, QStringLiteral("max_entries"), tool, 500, 1, 5000));
        const TreeResult tr =
            audited(agent, tool, {{QStringLiteral("path"), r.scope.path}}, std::nullopt,
                    [&](const AgentWorkspace &ws, AuditRecorder &audit) {
                        TreeResult out = treeWorkspace(*ws.backend, r);
                        audit.setField(QStringLiteral("entries"), out.entries.size());
                        return out;
                    });
        QJsonArray entries;
        for (const WalkEntry &e : tr.entries) {
            QJsonObject o{{QStringLiteral("path"), e.path},
                          {QStringLiteral("type"),
                           QLatin1String(e.type == FileInfo::Type::Directory ? "dir"
                                         : e.type == FileInfo::Type::Symlink ? "symlink"
                                         : e.type == FileInfo::Type::File    ? "file"
                                                                             : "other")}};
            if (e.size)
                o.insert(QStringLiteral("size"), *e.size);
            entries.append(o);
        }
        return ToolResult{tr.text,
                          {{QStringLiteral("path"), r.scope.path},
                           {QStringLiteral("entries"), entries},
                           {QStringLiteral("truncated"), tr.more}},
                          false};
    };
    return t;
}

Tool statTool()
{
    Tool t = makeTool(
        "stat", QStringLiteral("Describe a path"),
        QStringLiteral("Tell whether a workspace path exists and what it is: type (file, dir, "
                       "symlink, other), size in bytes and modification time. A missing path "
                       "is an answer (exists: false), not an error."),
        {{QStringLiteral("path"), prop("string", kPathHelp)}}, {QStringLiteral("path")},
        schema::result({{QStringLiteral("path"), typed("string")},
                        {QStringLiteral("exists"), typed("boolean")},
                        {QStringLiteral("type"), typed("string")},
                        {QStringLiteral("is_dir"), typed("boolean")},
                        {QStringLiteral("size"), typed("integer")},
                        {QStringLiteral("mtime_ms"), typed("integer")}},
                       {QStringLiteral("path"), QStringLiteral("exists")}),
        ReadOnly);
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString path =
            args::requiredString(a, QStringLiteral("path"), QStringLiteral("stat"));
        const std::optional<FileInfo> info =
            audited(agent, QStringLiteral("stat"), {{QStringLiteral("path"), path}}, std::nullopt,
                    [&](const AgentWorkspace &ws, AuditRecorder &) -> std::optional<FileInfo> {
                        try {
                            return ws.backend->stat(path);
                        } catch (const FileNotFoundError &) {
                            return std::nullopt;
                        }
                    });
        if (!info)
            return ToolResult{QStringLiteral("%1: does not exist").arg(path),
                              {{QStringLiteral("path"), path}, {QStringLiteral("exists"), false}},
                              false};
        QJsonObject data = info->toJson();
        if (!info->size)
            data.remove(QStringLiteral("size")); // folders and links: no size rather than null
        data.insert(QStringLiteral("path"), path);
        data.insert(QStringLiteral("exists"), true);
        QString text =
            QStringLiteral("%1: %2").arg(path, data.value(QLatin1String("type")).toString());
        if (info->size)
            text += QStringLiteral(", %1 bytes").arg(*info->size);
        if (info->mtimeMs > 0)
            text += QStringLiteral(", modified %1")
                        .arg(QDateTime::fromMSecsSinceEpoch(info->mtimeMs)
                                 .toUTC()
                                 .toString(Qt::ISODateWithMs));
        return ToolResult{text, data, false};
    };
    return t;
}

Tool readManyTool()
{
    Tool t = makeTool(
        "read_many", QStringLiteral("Read several files"),
        QStringLiteral("Read up to 50 text files in one call, each under a `==> path <==` "
                       "header. The read_file byte bound is shared between them: a file cut "
                       "short ends with a note saying how to read on with read_file. A file "
                       "that cannot be read shows its error and the others are still read."),
        {{QStringLiteral("paths"), stringArray(QStringLiteral("Workspace-relative file paths "
                                                              "(1-50)."))},
         {QStringLiteral("line_numbers"),
          prop("boolean", QStringLiteral("Prefix each line with its number (default false)."))}},
        {QStringLiteral("paths")},
        schema::result({{QStringLiteral("entries"), typed("array")},
                        {QStringLiteral("files"), typed("integer")},
                        {QStringLiteral("failed"), typed("integer")}},
                       {QStringLiteral("files"), QStringLiteral("failed")}),
        ReadOnly);
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("read_many");
        const QStringList paths = stringList(a, QStringLiteral("paths"), tool, 50);
        if (paths.isEmpty())
            throw ValueError(QStringLiteral("read_many: paths is empty"));
        const bool numbers = optionalBool(a, QStringLiteral("line_numbers"), tool);
        const qint64 budget = readFileMaxBytes(agent);
        QString text;
        QJsonArray entries;
        qint64 failed = 0;
        audited(
            agent, tool, {{QStringLiteral("files"), paths.size()}}, std::nullopt,
            [&](const AgentWorkspace &ws, AuditRecorder &audit) {
                qint64 left = budget;
                for (qsizetype i = 0; i < paths.size(); ++i) {
                    const QString &path = paths[i];
                    text += QStringLiteral("==> %1 <==\n").arg(path);
                    QJsonObject entry{{QStringLiteral("path"), path}};
                    try {
                        BoundedReadRequest request;
                        // an even share of what is left, so later files get their part
                        request.maxBytes = qMax<qint64>(1024, left / (paths.size() - i));
                        const BoundedRead read = readBounded(*ws.backend, path, request);
                        if (QByteArrayView(read.bytes)
                                .first(qMin<qsizetype>(read.bytes.size(), 8192))
                                .contains('\0'))
                            throw ValueError(
                                QStringLiteral("a binary file (%1 bytes)").arg(read.totalBytes));
                        left = qMax<qint64>(0, left - read.bytes.size());
                        QString content = QString::fromUtf8(read.bytes);
                        if (numbers)
                            content = numberLines(content, 1);
                        text += content;
                        if (!text.endsWith(u'\n'))
                            text += u'\n';
                        if (read.cut)
                            text += boundedReadNote(read, request.maxBytes) + u'\n';
                        entry.insert(QStringLiteral("content"), content);
                        entry.insert(QStringLiteral("total_bytes"), read.totalBytes);
                        entry.insert(QStringLiteral("truncated"), read.cut);
                    } catch (const SandboxError &e) {
                        ++failed;
                        text += QStringLiteral("[error: %1]\n").arg(e.display());
                        entry.insert(QStringLiteral("error"), e.display());
                    }
                    entries.append(entry);
                }
                audit.setField(QStringLiteral("failed"), failed);
                return 0;
            });
        text.chop(text.endsWith(u'\n') ? 1 : 0);
        return ToolResult{text,
                          {{QStringLiteral("entries"), entries},
                           {QStringLiteral("files"), paths.size()},
                           {QStringLiteral("failed"), failed}},
                          false};
    };
    return t;
}

// ---- changes ----------------------------------------------------------------------------------

Tool editFileTool()
{
    Tool t = makeTool(
        "edit_file", QStringLiteral("Edit a file"),
        QStringLiteral(
            "Replace an exact piece of a text file: old_string must occur exactly once (give "
            "enough surrounding lines to make it unique) unless replace_all is true. Whitespace "
            "and line ends must match exactly. Returns a unified diff of the change; dry_run "
            "returns the diff without writing. Read the file first; to create a file use "
            "write_file."),
        {{QStringLiteral("path"), prop("string", QStringLiteral("Workspace-relative file path."))},
         {QStringLiteral("old_string"), prop("string", QStringLiteral("The exact text to "
                                                                      "replace."))},
         {QStringLiteral("new_string"), prop("string", QStringLiteral("The text to put in its "
                                                                      "place."))},
         {QStringLiteral("replace_all"),
          prop("boolean", QStringLiteral("Replace every occurrence (default false)."))},
         {QStringLiteral("dry_run"),
          prop("boolean", QStringLiteral("Only return the diff; change nothing (default "
                                         "false)."))}},
        {QStringLiteral("path"), QStringLiteral("old_string"), QStringLiteral("new_string")},
        schema::result(
            {{QStringLiteral("path"), typed("string")},
             {QStringLiteral("replacements"), typed("integer")},
             {QStringLiteral("dry_run"), typed("boolean")},
             {QStringLiteral("bytes"), typed("integer")},
             {QStringLiteral("diff"), typed("string")}},
            {QStringLiteral("path"), QStringLiteral("replacements"), QStringLiteral("dry_run")}),
        ToolHints{false, true, false});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("edit_file");
        const QString path = args::requiredString(a, QStringLiteral("path"), tool);
        const QString oldText = args::requiredString(a, QStringLiteral("old_string"), tool);
        const QString newText = args::requiredString(a, QStringLiteral("new_string"), tool);
        const bool all = optionalBool(a, QStringLiteral("replace_all"), tool);
        const bool dryRun = optionalBool(a, QStringLiteral("dry_run"), tool);
        const TextEdit e = editFileAs(agent, path, oldText, newText, all, dryRun);
        const QString head =
            QStringLiteral("%1 %2: %3 replacement%4")
                .arg(dryRun ? QStringLiteral("Would edit") : QStringLiteral("Edited"), path)
                .arg(e.replacements)
                .arg(e.replacements == 1 ? QString() : QStringLiteral("s"));
        return ToolResult{head + u'\n' + e.diff,
                          {{QStringLiteral("path"), path},
                           {QStringLiteral("replacements"), e.replacements},
                           {QStringLiteral("dry_run"), dryRun},
                           {QStringLiteral("bytes"), e.content.size()},
                           {QStringLiteral("diff"), e.diff}},
                          false};
    };
    return t;
}

QString normalizedOrRefused(const QString &path, const QString &tool, const char *what)
{
    const QString n = WorkspaceFs::normalize(path);
    if (n.isEmpty())
        throw PermissionError(
            QStringLiteral("%1: the workspace root cannot be %2").arg(tool, QLatin1String(what)));
    return n;
}

Tool moveTool()
{
    Tool t = makeTool(
        "move", QStringLiteral("Move or rename"),
        QStringLiteral("Move or rename a file or folder inside the workspace; destination is "
                       "the new path itself (missing parent folders are created). An existing "
                       "destination file is replaced only with overwrite: true; a folder is "
                       "never replaced."),
        {{QStringLiteral("source"), prop("string", QStringLiteral("Path to move."))},
         {QStringLiteral("destination"), prop("string", QStringLiteral("Its new path."))},
         {QStringLiteral("overwrite"),
          prop("boolean", QStringLiteral("Replace an existing destination file (default "
                                         "false)."))}},
        {QStringLiteral("source"), QStringLiteral("destination")},
        schema::result({{QStringLiteral("source"), typed("string")},
                        {QStringLiteral("destination"), typed("string")}},
                       {QStringLiteral("source"), QStringLiteral("destination")}),
        ToolHints{false, true, false});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("move");
        const QString source = args::requiredString(a, QStringLiteral("source"), tool);
        const QString dest = args::requiredString(a, QStringLiteral("destination"), tool);
        const bool overwrite = optionalBool(a, QStringLiteral("overwrite"), tool);
        audited(agent, tool,
                {{QStringLiteral("path"), source}, {QStringLiteral("destination"), dest}},
                QStringLiteral("move files"), [&](const AgentWorkspace &ws, AuditRecorder &) {
                    const QString from = normalizedOrRefused(source, tool, "moved");
                    const QString to = normalizedOrRefused(dest, tool, "replaced");
                    if (to == from || to.startsWith(from + u'/'))
                        throw ValueError(QStringLiteral("move: '%1' cannot move into itself "
                                                        "('%2')")
                                             .arg(source, dest));
                    ws.backend->rename(from, to, overwrite);
                    return 0;
                });
        return ToolResult{
            QStringLiteral("Moved %1 to %2").arg(source, dest),
            {{QStringLiteral("source"), source}, {QStringLiteral("destination"), dest}},
            false};
    };
    return t;
}

Tool deleteTool()
{
    Tool t = makeTool(
        "delete", QStringLiteral("Delete a file or folder"),
        QStringLiteral("Delete a file, symlink or empty folder of the workspace; a folder with "
                       "contents only with recursive: true. There is no undo."),
        {{QStringLiteral("path"), prop("string", QStringLiteral("Workspace-relative path."))},
         {QStringLiteral("recursive"),
          prop("boolean", QStringLiteral("Delete a folder with everything in it (default "
                                         "false)."))}},
        {QStringLiteral("path")},
        schema::result({{QStringLiteral("path"), typed("string")}}, {QStringLiteral("path")}),
        ToolHints{false, true, true});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("delete");
        const QString path = args::requiredString(a, QStringLiteral("path"), tool);
        const bool recursive = optionalBool(a, QStringLiteral("recursive"), tool);
        audited(agent, tool,
                {{QStringLiteral("path"), path}, {QStringLiteral("recursive"), recursive}},
                QStringLiteral("delete files"), [&](const AgentWorkspace &ws, AuditRecorder &) {
                    const QString rel = normalizedOrRefused(path, tool, "deleted");
                    const bool folder = ws.backend->stat(rel).type == FileInfo::Type::Directory;
                    if (folder && !recursive && !ws.backend->listDirBrief(rel, 0).isEmpty())
                        throw OSError(QStringLiteral("delete: '%1' is a folder that is not "
                                                     "empty; pass recursive: true to delete it "
                                                     "with its contents")
                                          .arg(path),
                                      ENOTEMPTY);
                    // the backends remove a folder only recursively: an empty one is just that
                    ws.backend->removeFile(rel, recursive || folder);
                    return 0;
                });
        return ToolResult{
            QStringLiteral("Deleted %1").arg(path), {{QStringLiteral("path"), path}}, false};
    };
    return t;
}

Tool mkdirTool()
{
    Tool t = makeTool(
        "mkdir", QStringLiteral("Create a folder"),
        QStringLiteral("Create a folder and any missing parents (an existing "
                       "folder is fine)."),
        {{QStringLiteral("path"), prop("string", QStringLiteral("Workspace-relative "
                                                                "folder path."))}},
        {QStringLiteral("path")},
        schema::result({{QStringLiteral("path"), typed("string")}}, {QStringLiteral("path")}),
        ToolHints{false, false, true});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString path =
            args::requiredString(a, QStringLiteral("path"), QStringLiteral("mkdir"));
        audited(agent, QStringLiteral("mkdir"), {{QStringLiteral("path"), path}},
                QStringLiteral("create folders"), [&](const AgentWorkspace &ws, AuditRecorder &) {
                    ws.backend->makeDirs(path);
                    return 0;
                });
        return ToolResult{
            QStringLiteral("Created %1").arg(path), {{QStringLiteral("path"), path}}, false};
    };
    return t;
}

// ---- background processes -----------------------------------------------------------------

const QString kProcessMutation = QStringLiteral("run background processes");

std::shared_ptr<SandboxBackend> commandBackend(const AgentWorkspace &ws)
{
    auto exec = std::dynamic_pointer_cast<SandboxBackend>(ws.backend);
    if (!exec)
        throw ToolNotFoundError(QStringLiteral("the backend of workspace '%1' cannot run commands")
                                    .arg(ws.workspaceId));
    return exec;
}

std::optional<double> checkedTimeout(const QJsonObject &a, const QString &tool,
                                     const SandboxBackend &backend, bool bounded)
{
    const auto timeout = args::optionalNumber(a, QStringLiteral("timeout"), tool);
    if (!timeout)
        return std::nullopt;
    if (!(*timeout > 0))
        throw ValueError(
            QStringLiteral("%1: timeout must be a positive number of seconds").arg(tool));
    if (bounded && *timeout > backend.defaultTimeoutSeconds())
        throw ValueError(QStringLiteral("%1: timeout %2 s is longer than the sandbox's timeout "
                                        "of %3 s; for longer work use process_start")
                             .arg(tool)
                             .arg(*timeout)
                             .arg(backend.defaultTimeoutSeconds()));
    return timeout;
}

/// A background process's state as the agent reads it.
QString describeProcess(const BackgroundProcessInfo &p)
{
    QString s = QStringLiteral("%1: %2").arg(p.id, p.running ? QStringLiteral("running")
                                                             : QStringLiteral("ended"));
    if (p.result) {
        s += QStringLiteral(", exit code %1").arg(p.result->exitCode);
        if (p.result->timedOut)
            s += QStringLiteral(", timed out");
        if (p.result->cancelled)
            s += QStringLiteral(", stopped");
    }
    s += QStringLiteral(", %1 bytes of output").arg(p.outputBytes);
    if (p.droppedBytes)
        s += QStringLiteral(" (the first %1 no longer held)").arg(p.droppedBytes);
    QString command = p.command.simplified();
    if (command.size() > 80)
        command = command.left(79) + QChar(0x2026);
    return s + QStringLiteral(": ") + command;
}

Tool processStartTool()
{
    Tool t = makeTool(
        "process_start", QStringLiteral("Start a background process"),
        QStringLiteral(
            "Start a shell command in the background and return at once with its process_id: "
            "for servers, watchers and long builds. Read its output with process_output, send "
            "input with process_input (local and bwrap backends), end it with process_stop. It "
            "runs until it exits, its optional timeout, or the sandbox stops."),
        {{QStringLiteral("command"), prop("string", QStringLiteral("Shell command to run."))},
         {QStringLiteral("cwd"), prop("string", QStringLiteral("Working folder, relative to the "
                                                               "workspace root."))},
         {QStringLiteral("timeout"),
          QJsonObject{{QStringLiteral("type"), QStringLiteral("number")},
                      {QStringLiteral("description"),
                       QStringLiteral("Seconds before it is killed (default: none).")}}}},
        {QStringLiteral("command")},
        schema::result({{QStringLiteral("process_id"), typed("string")},
                        {QStringLiteral("accepts_input"), typed("boolean")}},
                       {QStringLiteral("process_id"), QStringLiteral("accepts_input")}),
        ToolHints{false, true, false});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("process_start");
        const QString command = args::requiredString(a, QStringLiteral("command"), tool);
        const auto cwd = args::optionalString(a, QStringLiteral("cwd"), tool);
        BackgroundProcessInfo info;
        auditedCommand(agent, QStringLiteral("sandbox.process_start"), command, cwd, {},
                       [&](SandboxBackend &exec, const AgentWorkspace &ws, AuditRecorder &audit) {
                           if (cwd)
                               WorkspaceFs::normalize(*cwd); // refused now, not in the process
                           BackgroundProcesses::StartRequest r;
                           r.backend = commandBackend(ws);
                           r.workspaceId = ws.workspaceId;
                           r.owner = agent.id();
                           r.command = command;
                           r.cwd = cwd.value_or(QString());
                           // none: until stopped (a week is the most a process spec takes)
                           r.timeoutSeconds =
                               checkedTimeout(a, tool, exec, false).value_or(7 * 86400.0);
                           auto &processes = ws.manager->backgroundProcesses();
                           const QString id = processes.start(r);
                           info = processes.info(id, agent.id());
                           audit.setField(QStringLiteral("process_id"), id);
                       });
        return ToolResult{
            QStringLiteral("Started background process %1%2. Read its output with process_output "
                           "{\"process_id\": \"%1\"}; stop it with process_stop.")
                .arg(info.id, info.acceptsInput ? QStringLiteral(" (takes input)") : QString()),
            {{QStringLiteral("process_id"), info.id},
             {QStringLiteral("accepts_input"), info.acceptsInput}},
            false};
    };
    return t;
}

template<typename Body>
auto processCall(Agent &agent, const QString &tool, const QJsonObject &fields, Body body)
{
    return audited(agent, tool, fields, kProcessMutation,
                   [&](const AgentWorkspace &ws, AuditRecorder &audit) {
                       return body(ws.manager->backgroundProcesses(), ws, audit);
                   });
}

Tool processListTool()
{
    Tool t = makeTool("process_list", QStringLiteral("List background processes"),
                      QStringLiteral("List your background processes in this workspace (running "
                                     "and recently ended) with their state, exit code and "
                                     "output size."),
                      {}, {},
                      schema::result({{QStringLiteral("entries"), typed("array")},
                                      {QStringLiteral("running"), typed("integer")}},
                                     {QStringLiteral("running")}),
                      ReadOnly);
    t.invoke = [](Agent &agent, const QJsonObject &) {
        const auto list =
            processCall(agent, QStringLiteral("process_list"), {},
                        [&](BackgroundProcesses &p, const AgentWorkspace &ws, AuditRecorder &) {
                            return p.list(ws.workspaceId, agent.id());
                        });
        QStringList lines;
        QJsonArray entries;
        qint64 running = 0;
        for (const BackgroundProcessInfo &p : list) {
            lines.append(describeProcess(p));
            entries.append(p.toJson());
            running += p.running ? 1 : 0;
        }
        return ToolResult{
            lines.isEmpty() ? QStringLiteral("No background processes.") : lines.join(u'\n'),
            {{QStringLiteral("entries"), entries}, {QStringLiteral("running"), running}},
            false};
    };
    return t;
}

Tool processOutputTool()
{
    Tool t = makeTool(
        "process_output", QStringLiteral("Read a background process's output"),
        QStringLiteral("Read a background process's output (stdout and stderr as they came) "
                       "from an offset: pass the next_offset of the last answer to read on. "
                       "wait (seconds) waits for the process to end first. The last 1 MiB is "
                       "held; older output is reported as skipped."),
        {{QStringLiteral("process_id"), prop("string", QStringLiteral("From process_start or "
                                                                      "execute."))},
         {QStringLiteral("offset"), integer(QStringLiteral("Byte offset to read from (default "
                                                           "0)."))},
         {QStringLiteral("max_bytes"),
          integer(QStringLiteral("Most bytes returned, 1-1048576; default 65536."), 1)},
         {QStringLiteral("wait"),
          QJsonObject{{QStringLiteral("type"), QStringLiteral("number")},
                      {QStringLiteral("minimum"), 0},
                      {QStringLiteral("description"),
                       QStringLiteral("Seconds to wait for the process to end before reading "
                                      "(at most the soft-return time; default 0).")}}}},
        {QStringLiteral("process_id")},
        schema::result({{QStringLiteral("process_id"), typed("string")},
                        {QStringLiteral("output"), typed("string")},
                        {QStringLiteral("offset"), typed("integer")},
                        {QStringLiteral("next_offset"), typed("integer")},
                        {QStringLiteral("skipped"), typed("integer")},
                        {QStringLiteral("running"), typed("boolean")},
                        {QStringLiteral("exit_code"), typed("integer")}},
                       {QStringLiteral("process_id"), QStringLiteral("offset"),
                        QStringLiteral("next_offset"), QStringLiteral("running")}),
        ReadOnly);
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("process_output");
        const QString id = args::requiredString(a, QStringLiteral("process_id"), tool);
        const qint64 offset = boundedInt(a, QStringLiteral("offset"), tool, 0, 0, qint64(9e15));
        const qint64 maxBytes =
            boundedInt(a, QStringLiteral("max_bytes"), tool, 65536, 1, 1024 * 1024);
        const double soft = executeSoftReturnSeconds(agent);
        const double wait = qMin(args::optionalNumber(a, QStringLiteral("wait"), tool).value_or(0),
                                 soft > 0 ? soft : DefaultExecuteSoftReturnSeconds);
        BackgroundOutput out;
        BackgroundProcessInfo info;
        processCall(agent, tool, {{QStringLiteral("process_id"), id}},
                    [&](BackgroundProcesses &p, const AgentWorkspace &, AuditRecorder &audit) {
                        p.info(id, agent.id()); // unknown ids fail before any wait
                        if (wait > 0)
                            p.wait(id, int(wait * 1000), ToolCallCancelScope::current());
                        out = p.read(id, agent.id(), offset, maxBytes);
                        info = p.info(id, agent.id());
                        audit.setField(QStringLiteral("bytes"), out.data.size());
                        return 0;
                    });
        QString text = QString::fromUtf8(out.data);
        QJsonObject data{{QStringLiteral("process_id"), id},
                         {QStringLiteral("output"), text},
                         {QStringLiteral("offset"), out.offset},
                         {QStringLiteral("next_offset"), out.nextOffset},
                         {QStringLiteral("running"), info.running}};
        QString status;
        if (out.skipped) {
            data.insert(QStringLiteral("skipped"), out.skipped);
            text.prepend(QStringLiteral("[%1 bytes before offset %2 are no longer held]\n")
                             .arg(out.skipped)
                             .arg(out.offset));
        }
        if (info.result)
            data.insert(QStringLiteral("exit_code"), info.result->exitCode);
        const qint64 rest = info.outputBytes - out.nextOffset;
        if (!text.isEmpty() && !text.endsWith(u'\n'))
            text += u'\n';
        text +=
            QStringLiteral("[%1; next_offset %2%3]")
                .arg(describeProcess(info).section(QStringLiteral(": "), 1, 1),
                     QString::number(out.nextOffset),
                     rest > 0 ? QStringLiteral(", %1 more bytes to read").arg(rest) : QString());
        return ToolResult{text, data, false};
    };
    return t;
}

Tool processInputTool()
{
    Tool t = makeTool(
        "process_input", QStringLiteral("Send input to a background process"),
        QStringLiteral("Write text to a background process's stdin (local and bwrap backends); "
                       "include \"\\n\" to end a line. close: true ends its input afterwards "
                       "(EOF). Returns how many bytes it took (fewer when its pipe is full)."),
        {{QStringLiteral("process_id"), prop("string", QStringLiteral("From process_start."))},
         {QStringLiteral("input"), prop("string", QStringLiteral("Text to send."))},
         {QStringLiteral("close"),
          prop("boolean", QStringLiteral("Close stdin after writing (default false)."))}},
        {QStringLiteral("process_id"), QStringLiteral("input")},
        schema::result({{QStringLiteral("process_id"), typed("string")},
                        {QStringLiteral("bytes"), typed("integer")},
                        {QStringLiteral("closed"), typed("boolean")}},
                       {QStringLiteral("process_id"), QStringLiteral("bytes")}),
        ToolHints{false, true, false});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("process_input");
        const QString id = args::requiredString(a, QStringLiteral("process_id"), tool);
        const QByteArray input = args::requiredString(a, QStringLiteral("input"), tool).toUtf8();
        const bool close = optionalBool(a, QStringLiteral("close"), tool);
        QJsonObject fields = textAuditFields(QStringLiteral("input"), input);
        fields.insert(QStringLiteral("process_id"), id);
        const qint64 written =
            processCall(agent, tool, fields,
                        [&](BackgroundProcesses &p, const AgentWorkspace &, AuditRecorder &) {
                            return p.write(id, agent.id(), input, close);
                        });
        QString text =
            QStringLiteral("Sent %1 of %2 bytes to %3").arg(written).arg(input.size()).arg(id);
        if (written < input.size())
            text += QStringLiteral(" (its input pipe is full: send the rest once it has read)");
        if (close)
            text += QStringLiteral("; its input is closed");
        return ToolResult{text,
                          {{QStringLiteral("process_id"), id},
                           {QStringLiteral("bytes"), written},
                           {QStringLiteral("closed"), close}},
                          false};
    };
    return t;
}

Tool processStopTool()
{
    Tool t = makeTool(
        "process_stop", QStringLiteral("Stop a background process"),
        QStringLiteral("Stop a background process and everything it started (SIGTERM, then "
                       "SIGKILL after a grace period). Its output stays readable with "
                       "process_output."),
        {{QStringLiteral("process_id"), prop("string", QStringLiteral("From process_start or "
                                                                      "execute."))}},
        {QStringLiteral("process_id")},
        schema::result({{QStringLiteral("process_id"), typed("string")},
                        {QStringLiteral("exit_code"), typed("integer")},
                        {QStringLiteral("output_bytes"), typed("integer")}},
                       {QStringLiteral("process_id")}),
        ToolHints{false, true, true});
    t.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString id =
            args::requiredString(a, QStringLiteral("process_id"), QStringLiteral("process_stop"));
        const BackgroundProcessInfo info =
            processCall(agent, QStringLiteral("process_stop"), {{QStringLiteral("process_id"), id}},
                        [&](BackgroundProcesses &p, const AgentWorkspace &, AuditRecorder &audit) {
                            BackgroundProcessInfo i = p.stop(id, agent.id());
                            if (i.result)
                                audit.setField(QStringLiteral("exit_code"), i.result->exitCode);
                            return i;
                        });
        QJsonObject data{{QStringLiteral("process_id"), id},
                         {QStringLiteral("output_bytes"), info.outputBytes}};
        if (info.result)
            data.insert(QStringLiteral("exit_code"), info.result->exitCode);
        return ToolResult{QStringLiteral("Stopped ") + describeProcess(info), data, false};
    };
    return t;
}

} // namespace

QString numberLines(const QString &text, qint64 firstLine)
{
    QString out;
    out.reserve(text.size() + text.size() / 8 + 8);
    qint64 n = firstLine;
    qsizetype pos = 0;
    while (pos < text.size()) {
        const qsizetype nl = text.indexOf(u'\n', pos);
        const qsizetype end = nl < 0 ? text.size() : nl + 1;
        out += QStringLiteral("%1\t").arg(n++, 6);
        out += QStringView(text).mid(pos, end - pos);
        pos = end;
    }
    return out;
}

QList<Tool> agentReadTools()
{
    return {grepTool(), globTool(), readManyTool(), statTool(), treeTool()};
}

QList<Tool> agentWriteTools()
{
    return {editFileTool(), moveTool(), deleteTool(), mkdirTool()};
}

QList<Tool> processTools()
{
    return {processStartTool(), processListTool(), processOutputTool(), processInputTool(),
            processStopTool()};
}

std::optional<QString> sandboxMutation(const QString &toolName)
{
    static const QHash<QString, QString> operations{
        {QStringLiteral("execute"), QStringLiteral("execute commands")},
        {QStringLiteral("write_file"), QStringLiteral("write files")},
        {QStringLiteral("edit_file"), QStringLiteral("edit files")},
        {QStringLiteral("move"), QStringLiteral("move files")},
        {QStringLiteral("delete"), QStringLiteral("delete files")},
        {QStringLiteral("mkdir"), QStringLiteral("create folders")},
        {QStringLiteral("process_start"), kProcessMutation},
        {QStringLiteral("process_list"), kProcessMutation},
        {QStringLiteral("process_output"), kProcessMutation},
        {QStringLiteral("process_input"), kProcessMutation},
        {QStringLiteral("process_stop"), kProcessMutation},
    };
    const auto it = operations.constFind(toolName);
    if (it == operations.constEnd())
        return std::nullopt;
    return *it;
}

double executeSoftReturnSeconds(Agent &agent)
{
    SandboxPtr sandbox = agent.attachedSandbox();
    if (!sandbox)
        sandbox = agent.config().sandbox;
    if (sandbox && sandbox->options().executeSoftReturnSeconds)
        return *sandbox->options().executeSoftReturnSeconds;
    return DefaultExecuteSoftReturnSeconds;
}

QStringList searchSkips(Agent &agent)
{
    SandboxPtr sandbox = agent.attachedSandbox();
    if (!sandbox)
        sandbox = agent.config().sandbox;
    return sandbox ? sandbox->effectiveSeedExcludes() : DEFAULT_SANDBOX_SEED_EXCLUDES;
}

ToolResult executeToolCall(Agent &agent, const QJsonObject &a)
{
    const QString tool = QStringLiteral("execute");
    const QString command = args::requiredString(a, QStringLiteral("command"), tool);
    const auto cwd = args::optionalString(a, QStringLiteral("cwd"), tool);
    ExecuteOptions options;
    options.cancel = ToolCallCancelScope::current(); // an MCP request's, a plan step's
    options.onOutput = ToolCallCancelScope::currentOutputObserver();
    const double soft = executeSoftReturnSeconds(agent);
    ExecuteResult r;
    std::optional<BackgroundOutput> still; // set when the soft return answered
    QString processId;
    auditedCommand(
        agent, QStringLiteral("sandbox.execute"), command, cwd, options.env,
        [&](SandboxBackend &exec, const AgentWorkspace &ws, AuditRecorder &audit) {
            const std::optional<double> timeout = checkedTimeout(a, tool, exec, true);
            if (!(soft > 0) || timeout.value_or(exec.defaultTimeoutSeconds()) <= soft ||
                !exec.cancelsRunningCommands()) {
                r = exec.execute(command, timeout, cwd.value_or(QString()), options);
                recordExecuteResult(audit, r);
                return;
            }
            // Still running at the soft-return time, the command goes on as a background
            // process and the answer says so.
            auto &processes = ws.manager->backgroundProcesses();
            BackgroundProcesses::StartRequest request;
            request.backend = commandBackend(ws);
            request.workspaceId = ws.workspaceId;
            request.owner = agent.id();
            request.command = command;
            request.cwd = cwd.value_or(QString());
            request.timeoutSeconds = timeout;
            request.observer = options.onOutput;
            auto ran = processes.runWithSoftReturn(request, int(soft * 1000), options.cancel);
            if (ran.result) {
                r = std::move(*ran.result);
                recordExecuteResult(audit, r);
                return;
            }
            processId = ran.processId;
            still = processes.read(processId, agent.id(), 0, processes.limits().bufferBytes);
            r.exitCode = -1;
            r.durationMs = qint64(soft * 1000);
            audit.setField(QStringLiteral("soft_return"), true);
            audit.setField(QStringLiteral("process_id"), processId);
        },
        &options);
    if (!still)
        return ToolResult{formatExecuteResult(r), r.toJson(), false};
    r.output = QString::fromUtf8(still->data);
    QJsonObject data = r.toJson();
    data.insert(QStringLiteral("running"), true);
    data.insert(QStringLiteral("process_id"), processId);
    data.insert(QStringLiteral("next_offset"), still->nextOffset);
    QString text = r.output;
    if (!text.isEmpty() && !text.endsWith(u'\n'))
        text += u'\n';
    text += QStringLiteral("[still running after %1 s as background process %2 (stdout and "
                           "stderr together above); read on with process_output "
                           "{\"process_id\": \"%2\", \"offset\": %3, \"wait\": %1}, stop it with "
                           "process_stop]")
                .arg(soft)
                .arg(processId)
                .arg(still->nextOffset);
    return ToolResult{text, data, false};
}

QString imageMimeType(const QString &path)
{
    const QString suffix = path.section(u'.', -1).toLower();
    if (!path.contains(u'.'))
        return {};
    if (suffix == QLatin1String("png"))
        return QStringLiteral("image/png");
    if (suffix == QLatin1String("jpg") || suffix == QLatin1String("jpeg"))
        return QStringLiteral("image/jpeg");
    if (suffix == QLatin1String("gif"))
        return QStringLiteral("image/gif");
    if (suffix == QLatin1String("webp"))
        return QStringLiteral("image/webp");
    return {};
}

static bool hasImageSignature(const QString &mime, const QByteArray &b)
{
    if (mime == QLatin1String("image/png"))
        return b.startsWith("\x89PNG\r\n\x1a\n");
    if (mime == QLatin1String("image/jpeg"))
        return b.startsWith("\xFF\xD8\xFF");
    if (mime == QLatin1String("image/gif"))
        return b.startsWith("GIF87a") || b.startsWith("GIF89a");
    if (mime == QLatin1String("image/webp"))
        return b.size() >= 12 && b.startsWith("RIFF") && b.mid(8, 4) == "WEBP";
    return false;
}

ToolImage readWorkspaceImage(Agent &agent, const QString &path)
{
    const QString mime = imageMimeType(path);
    return audited(
        agent, QStringLiteral("read_file"),
        {{QStringLiteral("path"), path}, {QStringLiteral("image"), true}}, std::nullopt,
        [&](const AgentWorkspace &ws, AuditRecorder &audit) {
            const FileRange range = ws.backend->readFileRange(path, 0, MaxImageBytes + 1);
            if (range.totalSize > MaxImageBytes)
                throw ValueError(QStringLiteral("'%1' is an image of %2 bytes, more than "
                                                "the %3 bytes read_file returns")
                                     .arg(path)
                                     .arg(range.totalSize)
                                     .arg(MaxImageBytes));
            if (mime.isEmpty() || !hasImageSignature(mime, range.data))
                throw ValueError(QStringLiteral("'%1' is not a %2 image (its first "
                                                "bytes do not match)")
                                     .arg(path, mime.isEmpty() ? QStringLiteral("known") : mime));
            audit.setField(QStringLiteral("bytes"), range.data.size());
            return ToolImage{mime, range.data};
        });
}

GrepResult grepAs(Agent &agent, const GrepRequest &request)
{
    QJsonObject fields = textAuditFields(QStringLiteral("pattern"), request.pattern.toUtf8());
    fields.insert(QStringLiteral("path"), request.scope.path);
    return audited(agent, QStringLiteral("grep"), fields, std::nullopt,
                   [&](const AgentWorkspace &ws, AuditRecorder &audit) {
                       GrepResult r = grepWorkspace(*ws.backend, request);
                       audit.setField(QStringLiteral("files"), r.files.size());
                       audit.setField(QStringLiteral("files_searched"), r.filesSearched);
                       audit.setField(QStringLiteral("truncated"), r.more || r.stoppedEarly);
                       return r;
                   });
}

GlobResult globAs(Agent &agent, const GlobRequest &request)
{
    return audited(agent, QStringLiteral("glob"),
                   {{QStringLiteral("path"), request.scope.path},
                    {QStringLiteral("pattern"), request.scope.include.join(u' ').left(256)}},
                   std::nullopt, [&](const AgentWorkspace &ws, AuditRecorder &audit) {
                       GlobResult r = globWorkspace(*ws.backend, request);
                       audit.setField(QStringLiteral("matches"), r.matched);
                       return r;
                   });
}

TextEdit editFileAs(Agent &agent, const QString &path, const QString &oldText,
                    const QString &newText, bool replaceAll, bool dryRun)
{
    constexpr qint64 MaxEditBytes = 16 * 1024 * 1024;
    return audited(
        agent, QStringLiteral("edit_file"),
        {{QStringLiteral("path"), path}, {QStringLiteral("dry_run"), dryRun}},
        dryRun ? std::nullopt : std::optional(QStringLiteral("edit files")),
        [&](const AgentWorkspace &ws, AuditRecorder &audit) {
            const FileRange range = ws.backend->readFileRange(path, 0, MaxEditBytes + 1);
            if (range.totalSize > MaxEditBytes)
                throw ValueError(QStringLiteral("edit_file: '%1' has %2 bytes, more than the %3 "
                                                "an edit reads; use execute (sed, a script)")
                                     .arg(path)
                                     .arg(range.totalSize)
                                     .arg(MaxEditBytes));
            if (QByteArrayView(range.data)
                    .first(qMin<qsizetype>(range.data.size(), 8192))
                    .contains('\0'))
                throw ValueError(QStringLiteral("edit_file: '%1' is a binary file").arg(path));
            TextEdit e =
                applyExactEdit(path, range.data, oldText.toUtf8(), newText.toUtf8(), replaceAll);
            if (!dryRun)
                ws.backend->writeFile(path, e.content);
            audit.setField(QStringLiteral("replacements"), e.replacements);
            audit.setField(QStringLiteral("bytes"), e.content.size());
            return e;
        });
}

} // namespace elsai
