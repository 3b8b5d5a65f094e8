#pragma once

#include <QDateTime>
#include <QFile>
#include <QJsonObject>
#include <QList>
#include <QLoggingCategory>
#include <QMutex>
#include <QString>
#include <QWaitCondition>

#include <functional>
#include <memory>

Q_DECLARE_LOGGING_CATEGORY(lcAudit) // "elsai.sandbox.audit"

namespace elsai {

/// One audit record. Never holds command text: execute records carry its length and a SHA-256
/// prefix only.
struct AuditEvent
{
    QDateTime timestamp; ///< UTC
    QString event;       ///< "sandbox.start", "sandbox.execute", "attach", …
    QString workspaceId;
    QString actor;       ///< agent id, or "host"
    QString outcome;     ///< "ok", "error", "denied"
    QJsonObject fields;  ///< the event's own fields
    qint64 sequence = 0; ///< process-wide order

    QJsonObject toJson() const;
    static AuditEvent fromJson(const QJsonObject &o);
};

/// Receives audit events. Called on the thread that produced the event, outside the log's
/// lock: calls from different threads may overlap and arrive out of sequence order, and a call
/// already running may still be in progress when removeSink() returns. Implementations must be
/// thread-safe and fast (queue and return) and must guard their own target's lifetime.
class AuditSink
{
public:
    virtual ~AuditSink();
    virtual void record(const AuditEvent &event) = 0;
    /// Makes every record received so far durable (a shutdown calls it). Default: nothing.
    virtual void flush() {}
};
using AuditSinkPtr = std::shared_ptr<AuditSink>;

/// Appends one JSON object per line to a file (or stderr for "-"), flushed per record so a
/// crash loses at most the record being written.
class JsonLinesAuditSink : public AuditSink
{
public:
    /// Throws OSError when the file cannot be opened for appending.
    explicit JsonLinesAuditSink(const QString &path);
    void record(const AuditEvent &event) override;
    void flush() override; ///< fsync

private:
    QMutex m_mutex;
    QFile m_file;
};

/// Calls a function for every event (the window's audit model subscribes this way).
class CallbackAuditSink : public AuditSink
{
public:
    explicit CallbackAuditSink(std::function<void(const AuditEvent &)> fn) : m_fn(std::move(fn)) {}
    void record(const AuditEvent &event) override { m_fn(event); }

private:
    std::function<void(const AuditEvent &)> m_fn;
};

/// Process-wide audit dispatcher: logs every event to `elsai.sandbox.audit` at info level and
/// hands it to every registered sink. Thread-safe.
class AuditLog
{
public:
    static AuditLog &instance();

    void addSink(const AuditSinkPtr &sink);
    void removeSink(const AuditSinkPtr &sink);

    void emitEvent(AuditEvent event);
    /// Convenience: timestamp and sequence are filled in.
    void emitEvent(const QString &event, const QString &workspaceId, const QString &actor,
                   const QString &outcome, const QJsonObject &fields = {});
    /// Flushes every sink (AuditSink::flush).
    void flush();
    /// Waits until no AuditRecorder is open (every operation begun has its record), at most
    /// `timeoutMs`; a shutdown calls it after stopping the commands. True when none is open.
    bool waitForOpenRecords(int timeoutMs);

private:
    friend class AuditRecorder;
    QMutex m_mutex;
    QList<AuditSinkPtr> m_sinks;
    qint64 m_sequence = 0;
    QWaitCondition m_recordsClosed;
    int m_openRecords = 0;
};

/// Fields describing a command without its text: `command_length`, `command_sha256` (first 12
/// hex digits) and a best-effort `inferred_op`.
QJsonObject commandAuditFields(const QString &command);

/// Best-effort label of what a shell command does: shell_delete, shell_move, shell_write,
/// network, package_install, git, python, build, read, or "shell".
QString inferShellOperation(const QString &command);

} // namespace elsai

namespace elsai {

class SandboxError;

/// Emits exactly one audit event for one operation: ok() or fail() (or "error" from the
/// destructor when neither was called, e.g. on an unexpected exception).
class AuditRecorder
{
public:
    AuditRecorder(QString event, QString workspaceId, QString actor, QJsonObject fields = {});
    ~AuditRecorder();
    AuditRecorder(const AuditRecorder &) = delete;
    AuditRecorder &operator=(const AuditRecorder &) = delete;

    void setField(const QString &key, const QJsonValue &value)
    {
        m_event.fields.insert(key, value);
    }
    void setWorkspaceId(const QString &id) { m_event.workspaceId = id; }
    void ok();
    /// outcome "denied" for SandboxMutationDeniedError / AgentSandboxDetachedError /
    /// PermissionError, else "error"; records `error_type`, and `error` (the message) only when
    /// `withMessage` — execute passes false so no text derived from a command is logged.
    void fail(const SandboxError &error, bool withMessage = true);

private:
    void finish(const QString &outcome);
    AuditEvent m_event;
    bool m_done = false;
};

} // namespace elsai
