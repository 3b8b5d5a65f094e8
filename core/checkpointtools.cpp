// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "checkpointtools.h"

#include "agent.h"
#include "errors.h"
#include "sandbox.h"
#include "sandboxplugin.h"

#include <QJsonArray>

namespace elsai {

namespace {

SandboxPtr sandboxOf(Agent &agent, const QString &tool)
{
    const SandboxPtr s = agent.attachedSandbox();
    if (!s)
        throw AgentSandboxDetachedError(
            QStringLiteral("%1: agent '%2' is not attached to a sandbox").arg(tool, agent.id()));
    return s;
}

QJsonObject str(const QString &description)
{
    return {{QStringLiteral("type"), QStringLiteral("string")},
            {QStringLiteral("description"), description}};
}

Tool make(const char *name, const char *title, const QString &description,
          const QJsonObject &properties, const QStringList &required)
{
    Tool t;
    t.name = QLatin1String(name);
    t.title = QLatin1String(title);
    t.provider = SandboxPlugin::providerName();
    t.description = description;
    t.inputSchema = objectSchema(properties, required);
    return t;
}

} // namespace

QList<Tool> checkpointTools()
{
    QList<Tool> out;
    Tool checkpoint = make(
        "checkpoint", "Checkpoint the workspace",
        QStringLiteral("Record the whole workspace as it is now under a name, to diff "
                       "against or restore later. Without a name an automatic one is "
                       "made (removable when the store is full)."),
        {{QStringLiteral("name"), str(QStringLiteral("1-100 letters, digits, '.', '_' or '-'."))},
         {QStringLiteral("note"), str(QStringLiteral("What this point is."))}},
        {});
    checkpoint.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("checkpoint");
        const CheckpointInfo info =
            sandboxOf(agent, tool)
                ->checkpoint(
                    args::optionalString(a, QStringLiteral("name"), tool).value_or(QString()),
                    args::optionalString(a, QStringLiteral("note"), tool).value_or(QString()),
                    agent.id());
        return ToolResult{QStringLiteral("Checkpoint '%1': %2 files, %3 bytes")
                              .arg(info.name)
                              .arg(info.files)
                              .arg(info.bytes),
                          info.toJson(), false};
    };
    out.append(checkpoint);

    Tool list = make("checkpoints", "List checkpoints",
                     QStringLiteral("List the workspace's checkpoints, oldest first."), {}, {});
    list.invoke = [](Agent &agent, const QJsonObject &) {
        QJsonArray items;
        QStringList lines;
        for (const CheckpointInfo &i :
             sandboxOf(agent, QStringLiteral("checkpoints"))->checkpoints()) {
            items.append(i.toJson());
            lines.append(QStringLiteral("%1  %2%3")
                             .arg(i.name, i.toJson().value(QStringLiteral("created_at")).toString(),
                                  i.note.isEmpty() ? QString() : QStringLiteral("  ") + i.note));
        }
        return ToolResult{lines.isEmpty() ? QStringLiteral("(no checkpoints)") : lines.join(u'\n'),
                          {{QStringLiteral("checkpoints"), items}},
                          false};
    };
    out.append(list);

    Tool diff =
        make("diff_checkpoints", "Diff checkpoints",
             QStringLiteral("What changed between two checkpoints, or between a "
                            "checkpoint and the workspace now (\"now\"): added, modified "
                            "and deleted paths, with unified diffs of text files."),
             {{QStringLiteral("from"), str(QStringLiteral("A checkpoint name or \"now\"."))},
              {QStringLiteral("to"),
               str(QStringLiteral("A checkpoint name or \"now\" (default: now)."))}},
             {QStringLiteral("from")});
    diff.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("diff_checkpoints");
        const CheckpointDiff d =
            sandboxOf(agent, tool)
                ->diffCheckpoints(args::requiredString(a, QStringLiteral("from"), tool),
                                  args::optionalString(a, QStringLiteral("to"), tool)
                                      .value_or(QStringLiteral("now")),
                                  {}, agent.id());
        QString text = QStringLiteral("%1 added, %2 modified, %3 deleted\n")
                           .arg(d.added)
                           .arg(d.modified)
                           .arg(d.deleted);
        for (const CheckpointDiffEntry &e : d.entries) {
            text += e.change + u' ' + e.path +
                    (e.type == QLatin1String("folder") ? QStringLiteral("/") : QString()) + u'\n';
            text += e.diff;
        }
        if (d.truncated)
            text += QStringLiteral("[more entries not shown]\n");
        return ToolResult{text, d.toJson(), false};
    };
    out.append(diff);

    Tool restore =
        make("restore_checkpoint", "Restore a checkpoint",
             QStringLiteral("Make the workspace exactly as it was at a checkpoint: every file, "
                            "folder, mode and link; what was added since is deleted. Commands "
                            "other calls are running are stopped first."),
             {{QStringLiteral("name"), str(QStringLiteral("The checkpoint."))}},
             {QStringLiteral("name")});
    restore.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("restore_checkpoint");
        const RestoreResult r =
            sandboxOf(agent, tool)
                ->restore(args::requiredString(a, QStringLiteral("name"), tool), agent.id());
        return ToolResult{QStringLiteral("Restored '%1': %2 files written, %3 entries removed")
                              .arg(r.name)
                              .arg(r.applied.written)
                              .arg(r.applied.removed),
                          r.toJson(), false};
    };
    out.append(restore);

    Tool remove = make("delete_checkpoint", "Delete a checkpoint",
                       QStringLiteral("Delete a checkpoint (the workspace is not touched)."),
                       {{QStringLiteral("name"), str(QStringLiteral("The checkpoint."))}},
                       {QStringLiteral("name")});
    remove.invoke = [](Agent &agent, const QJsonObject &a) {
        const QString tool = QStringLiteral("delete_checkpoint");
        const QString name = args::requiredString(a, QStringLiteral("name"), tool);
        const bool deleted = sandboxOf(agent, tool)->deleteCheckpoint(name, agent.id());
        return ToolResult{deleted ? QStringLiteral("Deleted '%1'").arg(name)
                                  : QStringLiteral("No checkpoint '%1'").arg(name),
                          {{QStringLiteral("name"), name}, {QStringLiteral("deleted"), deleted}},
                          false};
    };
    out.append(remove);
    return out;
}

} // namespace elsai
