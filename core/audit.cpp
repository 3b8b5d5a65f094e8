#include "audit.h"

#include "errors.h"
#include "faultinjection.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QRegularExpression>

#include <cstdio>

#include <unistd.h>

Q_LOGGING_CATEGORY(lcAudit, "elsai.sandbox.audit", QtInfoMsg)

namespace elsai {

QJsonObject AuditEvent::toJson() const
{
    QJsonObject o = fields;
    o.insert(QStringLiteral("timestamp"), timestamp.toString(Qt::ISODateWithMs));
    o.insert(QStringLiteral("event"), event);
    o.insert(QStringLiteral("workspace_id"), workspaceId);
    o.insert(QStringLiteral("actor"), actor);
    o.insert(QStringLiteral("outcome"), outcome);
    o.insert(QStringLiteral("seq"), sequence);
    return o;
}

AuditEvent AuditEvent::fromJson(const QJsonObject &o)
{
    AuditEvent e;
    e.timestamp =
        QDateTime::fromString(o.value(QStringLiteral("timestamp")).toString(), Qt::ISODateWithMs);
    e.event = o.value(QStringLiteral("event")).toString();
    e.workspaceId = o.value(QStringLiteral("workspace_id")).toString();
    e.actor = o.value(QStringLiteral("actor")).toString();
    e.outcome = o.value(QStringLiteral("outcome")).toString();
    e.sequence = o.value(QStringLiteral("seq")).toInteger();
    e.fields = o;
    for (const char *k : {"timestamp", "event", "workspace_id", "actor", "outcome", "seq"})
        e.fields.remove(QLatin1String(k));
    return e;
}

AuditSink::~AuditSink() = default;

JsonLinesAuditSink::JsonLinesAuditSink(const QString &path)
{
    const bool ok =
        path == QLatin1String("-")
            ? m_file.open(stderr, QIODevice::WriteOnly | QIODevice::Unbuffered)
            : (m_file.setFileName(path), m_file.open(QIODevice::WriteOnly | QIODevice::Append));
    if (!ok)
        throw OSError(QStringLiteral("cannot open audit log '%1' for appending: %2")
                          .arg(path, m_file.errorString()));
}

void JsonLinesAuditSink::record(const AuditEvent &event)
{
    const QByteArray line = QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact) + '\n';
    QMutexLocker lock(&m_mutex);
    m_file.write(line);
    m_file.flush();
    ELSAI_FAULT_POINT("audit-append");
}

void JsonLinesAuditSink::flush()
{
    QMutexLocker lock(&m_mutex);
    m_file.flush();
    if (m_file.handle() >= 0)
        ::fsync(m_file.handle());
}

AuditLog &AuditLog::instance()
{
    static AuditLog log;
    return log;
}

void AuditLog::addSink(const AuditSinkPtr &sink)
{
    QMutexLocker lock(&m_mutex);
    if (!m_sinks.contains(sink))
        m_sinks.append(sink);
}

void AuditLog::removeSink(const AuditSinkPtr &sink)
{
    QMutexLocker lock(&m_mutex);
    m_sinks.removeAll(sink);
}

void AuditLog::emitEvent(AuditEvent event)
{
    QList<AuditSinkPtr> sinks;
    {
        QMutexLocker lock(&m_mutex);
        event.sequence = ++m_sequence;
        sinks = m_sinks;
    }
    if (!event.timestamp.isValid())
        event.timestamp = QDateTime::currentDateTimeUtc();
    qCInfo(lcAudit).noquote() << QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact);
    for (const auto &sink : std::as_const(sinks))
        sink->record(event);
}

void AuditLog::flush()
{
    QList<AuditSinkPtr> sinks;
    {
        QMutexLocker lock(&m_mutex);
        sinks = m_sinks;
    }
    for (const auto &sink : std::as_const(sinks))
        sink->flush();
}

bool AuditLog::waitForOpenRecords(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    QMutexLocker lock(&m_mutex);
    while (m_openRecords > 0) {
        if (!m_recordsClosed.wait(&m_mutex, deadline))
            return false;
    }
    return true;
}

void AuditLog::emitEvent(const QString &event, const QString &workspaceId, const QString &actor,
                         const QString &outcome, const QJsonObject &fields)
{
    AuditEvent e;
    e.event = event;
    e.workspaceId = workspaceId;
    e.actor = actor;
    e.outcome = outcome;
    e.fields = fields;
    emitEvent(std::move(e));
}

QJsonObject commandAuditFields(const QString &command)
{
    const QByteArray utf8 = command.toUtf8();
    const QByteArray sha = QCryptographicHash::hash(utf8, QCryptographicHash::Sha256).toHex();
    return {{QStringLiteral("command_length"), utf8.size()},
            {QStringLiteral("command_sha256"), QString::fromLatin1(sha.left(12))},
            {QStringLiteral("inferred_op"), inferShellOperation(command)}};
}

QString inferShellOperation(const QString &command)
{
    // Ordered: the first matching rule wins. Words are matched at a command position
    // (start, or after ; & | ( ` or "sudo ").
    struct Rule
    {
        const char *op;
        const char *regex;
    };
    static const Rule rules[] = {
        {"package_install",
         R"((python3?\s+-m\s+pip|pip3?|npm|pnpm|yarn|apt(-get)?|cargo|gem|go|brew|conda|uv)\s+)"
         R"((install|add|get)\b)"},
        {"network", R"((curl|wget|nc|ncat|ssh|scp|sftp|rsync|telnet|ftp|ping)\b)"},
        {"git", R"(git\b)"},
        {"shell_delete", R"((rm|rmdir|unlink|shred)\b|find\b[^;&|\n]*\s-delete\b)"},
        {"shell_move", R"((mv|rename)\b)"},
        {"shell_write", R"((cp|touch|mkdir|tee|dd|install|ln|chmod|chown|sed\s+-i|truncate)\b)"},
        {"python", R"((python3?|pytest|pip3?)\b)"},
        {"build", R"((make|cmake|ninja|gcc|g\+\+|clang|cc|npm|node|cargo|go)\b)"},
        {"read", R"((cat|head|tail|less|grep|rg|find|ls|wc|diff|stat)\b)"},
    };
    // A command position: the start, after a separator or an opening quote (sh -c '…'), then
    // any of sudo / env / xargs / VAR=value, then an optional folder (/bin/rm).
    static const QString prefix = QStringLiteral(
        R"((?:^|[;&|(`\n'"]|\$\()\s*(?:(?:sudo|env|nohup|time|xargs(?:\s+-\S+)*)\s+|\w+=\S*\s+)*)"
        R"((?:[\w./-]*/)?(?:)");
    static const auto compiled = [] {
        QList<QPair<QString, QRegularExpression>> out;
        for (const Rule &r : rules)
            out.append(
                {QString::fromLatin1(r.op),
                 QRegularExpression(prefix + QString::fromLatin1(r.regex) + QStringLiteral(")"))});
        return out;
    }();
    // Output redirection into a file is a write even without a write command ("cat a > b",
    // "make &> log", "ls 2> err"), but not into /dev/null or another fd (2>&1). Quoted text
    // is not a redirection.
    static const QRegularExpression quoted(QStringLiteral(R"('[^']*'|"(?:[^"\\]|\\.)*")"));
    static const QRegularExpression redirect(
        QStringLiteral(R"((?:[0-9]|&)?>{1,2}\s*(?!&|/dev/null\b)[^\s;&|<>])"));
    const QString unquoted = QString(command).replace(quoted, QStringLiteral("''"));
    const bool redirects = redirect.match(unquoted).hasMatch();
    for (const auto &[op, re] : compiled) {
        if (op == QLatin1String("python") && redirects)
            return QStringLiteral("shell_write");
        if (re.match(command).hasMatch())
            return op;
    }
    return redirects ? QStringLiteral("shell_write") : QStringLiteral("shell");
}

} // namespace elsai

namespace elsai {

AuditRecorder::AuditRecorder(QString event, QString workspaceId, QString actor, QJsonObject fields)
{
    m_event.event = std::move(event);
    m_event.workspaceId = std::move(workspaceId);
    m_event.actor = std::move(actor);
    m_event.fields = std::move(fields);
    AuditLog &log = AuditLog::instance();
    QMutexLocker lock(&log.m_mutex);
    ++log.m_openRecords;
}

AuditRecorder::~AuditRecorder()
{
    if (!m_done)
        finish(QStringLiteral("error"));
}

void AuditRecorder::ok()
{
    finish(QStringLiteral("ok"));
}

void AuditRecorder::fail(const SandboxError &error, bool withMessage)
{
    const QString type = error.specName();
    setField(QStringLiteral("error_type"), type);
    if (withMessage)
        setField(QStringLiteral("error"), error.message());
    const bool denied = type == QLatin1String("SandboxMutationDeniedError") ||
                        type == QLatin1String("AgentSandboxDetachedError") ||
                        type == QLatin1String("PermissionError");
    finish(denied ? QStringLiteral("denied") : QStringLiteral("error"));
}

void AuditRecorder::finish(const QString &outcome)
{
    if (m_done)
        return;
    m_done = true;
    m_event.outcome = outcome;
    AuditLog &log = AuditLog::instance();
    log.emitEvent(std::move(m_event));
    QMutexLocker lock(&log.m_mutex);
    if (--log.m_openRecords == 0)
        log.m_recordsClosed.wakeAll();
}

} // namespace elsai
