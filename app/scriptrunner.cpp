// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "scriptrunner.h"

#include "audit.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "processguard.h"

#include <QFileDevice>
#include <QIODevice>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QStringDecoder>
#include <QThread>

namespace elsai {

QJsonObject errorJson(const QString &type, const QString &message)
{
    return {{QStringLiteral("type"), type}, {QStringLiteral("message"), message}};
}

ScriptRunner::ScriptRunner(SandboxPtr sandbox, std::optional<SandboxOutputOffloadPolicy> offload)
    : m_sandbox(std::move(sandbox)), m_offload(std::move(offload))
{
}

std::optional<QJsonObject> ScriptRunner::runLine(const QByteArray &raw)
{
    const QByteArray line = raw.trimmed();
    if (line.isEmpty() || line.startsWith('#'))
        return std::nullopt;
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject()) {
        const QString msg = err.error != QJsonParseError::NoError
                                ? QStringLiteral("malformed JSON at offset %1: %2")
                                      .arg(err.offset)
                                      .arg(err.errorString())
                                : QStringLiteral("each line must be a JSON object");
        return QJsonObject{{QStringLiteral("op"), QJsonValue()},
                           {QStringLiteral("ok"), false},
                           {QStringLiteral("error"), errorJson(QStringLiteral("ValueError"), msg)}};
    }
    return run(doc.object());
}

QJsonObject ScriptRunner::run(const QJsonObject &o)
{
    const QJsonValue opValue = o.value(QStringLiteral("op"));
    QJsonObject out{{QStringLiteral("op"), opValue.isString() ? opValue : QJsonValue()}};
    try {
        if (!opValue.isString())
            throw ValueError(QStringLiteral("missing \"op\": each line needs an operation name"));
        out.insert(QStringLiteral("result"), dispatch(opValue.toString(), o));
        out.insert(QStringLiteral("ok"), true);
        // The audit trail's health beside the sessions (the result stays the spec's list).
        if (opValue.toString() == QLatin1String("sessions"))
            out.insert(QStringLiteral("audit"), AuditLog::instance().health().toJson());
    } catch (...) {
        const ErrorDescription e = describeCurrentError();
        out.insert(QStringLiteral("ok"), false);
        out.insert(QStringLiteral("error"), errorJson(e.type, e.message));
    }
    return out;
}

int ScriptRunner::runAll(QIODevice &in, QIODevice &out)
{
    int failures = 0;
    while (true) {
        QByteArray line = in.readLine();
        if (line.isEmpty()) {
            if (in.atEnd() || !in.waitForReadyRead(-1))
                break;
            continue;
        }
        const auto result = runLine(line);
        if (!result)
            continue;
        if (!result->value(QStringLiteral("ok")).toBool())
            ++failures;
        out.write(QJsonDocument(*result).toJson(QJsonDocument::Compact) + '\n');
        if (auto *file = qobject_cast<QFileDevice *>(&out))
            file->flush(); // one result line reaches a reader per operation, not per buffer
        if (commandsShutDown())
            break; // the engine is being stopped (a signal): no further operation
    }
    return failures;
}

// ---- argument helpers -----------------------------------------------------------------------

static QString str(const QJsonObject &o, const char *key)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (!v.isString())
        throw ValueError(QStringLiteral("\"%1\" must be a string").arg(QLatin1String(key)));
    return v.toString();
}

static bool boolean(const QJsonObject &o, const char *key, bool fallback)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull())
        return fallback;
    if (!v.isBool())
        throw ValueError(QStringLiteral("\"%1\" must be true or false").arg(QLatin1String(key)));
    return v.toBool();
}

static QJsonObject object(const QJsonObject &o, const char *key)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (!v.isObject())
        throw ValueError(QStringLiteral("\"%1\" must be an object").arg(QLatin1String(key)));
    return v.toObject();
}

static QStringList stringList(const QJsonObject &o, const char *key)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (!v.isArray())
        throw ValueError(
            QStringLiteral("\"%1\" must be an array of strings").arg(QLatin1String(key)));
    QStringList out;
    for (const QJsonValue &item : v.toArray()) {
        if (!item.isString())
            throw ValueError(
                QStringLiteral("\"%1\" must be an array of strings").arg(QLatin1String(key)));
        out.append(item.toString());
    }
    return out;
}

static FileSource fileSource(const QString &path, const QJsonValue &v)
{
    if (v.isString())
        return FileSource::text(v.toString());
    if (v.isObject()) {
        const QJsonObject spec = v.toObject();
        if (spec.size() == 1 && spec.value(QStringLiteral("base64")).isString()) {
            const auto decoded = QByteArray::fromBase64Encoding(
                spec.value(QStringLiteral("base64")).toString().toLatin1(),
                QByteArray::AbortOnBase64DecodingErrors);
            if (!decoded)
                throw ValueError(QStringLiteral("files[\"%1\"]: invalid base64").arg(path));
            return FileSource::bytes(*decoded);
        }
        if (spec.size() == 1 && spec.value(QStringLiteral("host")).isString())
            return FileSource::hostPath(spec.value(QStringLiteral("host")).toString());
    }
    throw ValueError(QStringLiteral("files[\"%1\"] must be a string, {\"base64\": …} or "
                                    "{\"host\": \"/abs/path\"}")
                         .arg(path));
}

static QJsonValue textOrBase64(const QByteArray &bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = decoder(bytes);
    if (!decoder.hasError())
        return text;
    return QJsonObject{{QStringLiteral("base64"), QString::fromLatin1(bytes.toBase64())}};
}

static QJsonObject sessionJson(const ManagedSandboxSession &s, double now)
{
    QJsonObject o{{QStringLiteral("session_id"), s.sessionId},
                  {QStringLiteral("backend"), s.backend ? s.backend->typeName() : QString()},
                  {QStringLiteral("prepared"), s.prepared},
                  {QStringLiteral("owner_id"), s.ownerId ? QJsonValue(*s.ownerId) : QJsonValue()},
                  {QStringLiteral("created_at"), s.createdAt},
                  {QStringLiteral("last_used_at"), s.lastUsedAt},
                  {QStringLiteral("idle_seconds"), now - s.lastUsedAt}};
    o.insert(QStringLiteral("seed_result"),
             s.seedResult ? QJsonValue(s.seedResult->toJson()) : QJsonValue());
    return o;
}

// ---- operations -------------------------------------------------------------------------------

AgentPtr ScriptRunner::requireAgent(const QJsonObject &o) const
{
    const QString name = str(o, "agent");
    const AgentPtr a = m_agents.value(name);
    if (!a)
        throw ValueError(QStringLiteral("no agent '%1'; attach it first with "
                                        "{\"op\":\"attach\",\"agent\":\"%1\"}")
                             .arg(name));
    return a;
}

QJsonValue ScriptRunner::dispatch(const QString &op, const QJsonObject &o)
{
    if (op == QLatin1String("start")) {
        const auto seed = m_sandbox->start();
        if (onStarted)
            onStarted(m_sandbox);
        if (const auto interrupted = m_sandbox->interruptedRestore()) {
            // the seed result stays what it was; the restore to finish is said beside it
            QJsonObject r = seed ? seed->toJson() : QJsonObject();
            r.insert(QStringLiteral("interrupted_restore"), *interrupted);
            return r;
        }
        return seed ? QJsonValue(seed->toJson()) : QJsonValue();
    }
    if (op == QLatin1String("stop")) {
        const auto r = m_sandbox->stop(boolean(o, "sync", true));
        return r ? QJsonValue(r->toJson()) : QJsonValue();
    }
    if (op == QLatin1String("add_files")) {
        const QJsonObject files = object(o, "files");
        QList<QPair<QString, FileSource>> list;
        for (auto it = files.begin(); it != files.end(); ++it)
            list.append({it.key(), fileSource(it.key(), it.value())});
        return QJsonArray::fromStringList(m_sandbox->addFiles(list, boolean(o, "overwrite", true)));
    }
    if (op == QLatin1String("download_files")) {
        const QJsonObject files = object(o, "files");
        QList<QPair<QString, QString>> list;
        for (auto it = files.begin(); it != files.end(); ++it) {
            if (!it.value().isString())
                throw ValueError(QStringLiteral("files[\"%1\"] must be a host path").arg(it.key()));
            list.append({it.key(), it.value().toString()});
        }
        return QJsonArray::fromStringList(
            m_sandbox->downloadFiles(list, boolean(o, "overwrite", true)));
    }
    if (op == QLatin1String("delete_files")) {
        m_sandbox->deleteFiles(stringList(o, "paths"));
        return QJsonValue();
    }
    if (op == QLatin1String("move_file")) {
        const bool moved = m_sandbox->moveFile(str(o, "src"), str(o, "dest"));
        QJsonObject r{{QStringLiteral("moved"), moved}};
        if (!moved) {
            r.insert(QStringLiteral("same_file"), true);
            r.insert(QStringLiteral("message"),
                     QStringLiteral("src and dest are one file; nothing was moved"));
        }
        return r;
    }
    if (op == QLatin1String("read_file"))
        return textOrBase64(m_sandbox->readFileBytes(str(o, "path")));
    if (op == QLatin1String("flush")) {
        std::optional<QString> dest;
        if (o.contains(QStringLiteral("dest")) && !o.value(QStringLiteral("dest")).isNull())
            dest = str(o, "dest");
        std::optional<NoBaseConflict> noBase;
        if (o.contains(QStringLiteral("no_base")))
            noBase = noBaseConflictFromString(str(o, "no_base"));
        const auto r = m_sandbox->flush(dest, {}, Sandbox::hostActor(), noBase);
        return r ? QJsonValue(r->toJson()) : QJsonValue();
    }
    if (op == QLatin1String("attach")) {
        const QString name = str(o, "agent");
        const SandboxAttachMode mode = o.contains(QStringLiteral("mode"))
                                           ? attachModeFromString(str(o, "mode"))
                                           : SandboxAttachMode::ReadWrite;
        AgentPtr agent = m_agents.value(name);
        if (agent) {
            m_sandbox->attach(agent, mode);
        } else {
            AgentConfig config;
            config.sandbox = m_sandbox;
            config.sandboxAttachMode = mode;
            config.sandboxMode = SandboxMode::Sandbox;
            config.sandboxOutputOffload = m_offload;
            agent = Agent::create(name, config);
            m_agents.insert(name, agent);
        }
        return QJsonObject{
            {QStringLiteral("agent"), name},
            {QStringLiteral("mode"), toString(mode)},
            {QStringLiteral("tools"), QJsonArray::fromStringList(agent->tools().names())}};
    }
    if (op == QLatin1String("detach")) {
        m_sandbox->detach(requireAgent(o));
        return QJsonValue();
    }
    if (op == QLatin1String("call")) {
        // A call rejected here never reaches the agent: it gets its `invalid` record from the
        // same helper the core uses (Agent::callTool audits every call that gets that far).
        AgentPtr agent;
        QString tool;
        const QJsonValue a = o.value(QStringLiteral("args"));
        try {
            agent = requireAgent(o);
            tool = str(o, "tool");
            if (!a.isUndefined() && !a.isObject())
                throw ValueError(QStringLiteral("\"args\" must be an object"));
        } catch (const ValueError &e) {
            const QJsonValue toolValue = o.value(QStringLiteral("tool"));
            auditInvalidToolCall(toolValue.isString() ? toolValue.toString() : QString(),
                                 agent ? SandboxManager::resolveWorkspaceId(*agent)
                                       : m_sandbox->workspaceId(),
                                 agent ? agent->id() : o.value(QStringLiteral("agent")).toString(),
                                 e.specName(), e.message());
            throw;
        }
        const ToolResult r = agent->callTool(tool, a.toObject());
        QJsonObject result = r.data;
        result.insert(QStringLiteral("text"), r.text);
        result.insert(QStringLiteral("offloaded"),
                      r.offloaded ? r.data.value(QStringLiteral("offloaded")) : QJsonValue(false));
        return result;
    }
    if (op == QLatin1String("tools"))
        return QJsonArray::fromStringList(requireAgent(o)->tools().names());
    if (op == QLatin1String("checkpoint")) {
        const QString name = o.contains(QStringLiteral("name")) ? str(o, "name") : QString();
        const QString note = o.contains(QStringLiteral("note")) ? str(o, "note") : QString();
        return m_sandbox->checkpoint(name, note).toJson();
    }
    if (op == QLatin1String("checkpoints")) {
        QJsonArray list;
        for (const CheckpointInfo &i : m_sandbox->checkpoints())
            list.append(i.toJson());
        const auto interrupted = m_sandbox->interruptedRestore();
        return QJsonObject{{QStringLiteral("checkpoints"), list},
                           {QStringLiteral("interrupted_restore"),
                            interrupted ? QJsonValue(*interrupted) : QJsonValue()}};
    }
    if (op == QLatin1String("diff")) {
        CheckpointDiffOptions options;
        options.unified = boolean(o, "unified", true);
        if (o.contains(QStringLiteral("max_entries"))) {
            const int n = o.value(QStringLiteral("max_entries")).toInt(-1);
            if (n < 0)
                throw ValueError(QStringLiteral("\"max_entries\" must be a whole number >= 0"));
            options.maxEntries = n;
        }
        const QString to = o.contains(QStringLiteral("to")) ? str(o, "to") : QStringLiteral("now");
        return m_sandbox->diffCheckpoints(str(o, "from"), to, options).toJson();
    }
    if (op == QLatin1String("restore"))
        return m_sandbox->restore(str(o, "name")).toJson();
    if (op == QLatin1String("delete_checkpoint"))
        return QJsonObject{
            {QStringLiteral("deleted"), m_sandbox->deleteCheckpoint(str(o, "name"))}};
    if (op == QLatin1String("fork")) {
        // A fork is a local workspace folder (empty or new) that becomes the checkpoint; it is
        // stopped again at once: start a sandbox on it with --workspace-root.
        const QString root = str(o, "workspace_root");
        const QString id = o.contains(QStringLiteral("workspace_id"))
                               ? str(o, "workspace_id")
                               : m_sandbox->workspaceId() + QStringLiteral("-fork");
        Sandbox::Options options;
        options.timeTravel = m_sandbox->options().timeTravel;
        options.timeTravel.trackChanges = false;
        const SandboxPtr forked = m_sandbox->fork(
            str(o, "name"), id, std::make_shared<LocalSandboxBackend>(root), options);
        forked->stop(false);
        return QJsonObject{{QStringLiteral("workspace_id"), id},
                           {QStringLiteral("workspace_root"), root}};
    }
    if (op == QLatin1String("cleanup_expired"))
        return QJsonArray::fromStringList(m_sandbox->manager()->cleanupExpired());
    if (op == QLatin1String("sessions")) {
        QJsonArray out;
        const double now = m_sandbox->manager()->now();
        for (const ManagedSandboxSession &s : m_sandbox->manager()->sessions())
            out.append(sessionJson(s, now));
        return out;
    }
    if (op == QLatin1String("sleep")) {
        const double seconds = o.value(QStringLiteral("seconds")).toDouble(-1);
        if (!(seconds >= 0 && seconds <= 60))
            throw ValueError(QStringLiteral("\"seconds\" must be a number from 0 to 60"));
        QThread::msleep(static_cast<unsigned long>(seconds * 1000));
        return QJsonValue();
    }
    throw ValueError(QStringLiteral("unknown op '%1'; see --help for the operations").arg(op));
}

} // namespace elsai
