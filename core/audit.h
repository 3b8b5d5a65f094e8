// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QDateTime>
#include <QFile>
#include <QJsonObject>
#include <QList>
#include <QLoggingCategory>
#include <QMutex>
#include <QString>
#include <QWaitCondition>

#include <deque>
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
    QString outcome;     ///< "ok", "error", "denied", "invalid"
    QJsonObject fields;  ///< the event's own fields
    qint64 sequence = 0; ///< process-wide order

    QJsonObject toJson() const;
    static AuditEvent fromJson(const QJsonObject &o);
};

/// Whether the audit trail is complete (AuditLog::health(), AuditSink::health()).
///  - ok: every record so far reached its target;
///  - degraded: a write failed and records wait in memory for a retry, or records were lost
///    earlier (stays degraded once a record is lost: the trail has a hole);
///  - failing: writes fail and records are being dropped now (the retry queue is full).
struct AuditHealth
{
    enum class State { Ok, Degraded, Failing };
    State state = State::Ok;
    qint64 recordsDropped = 0; ///< lost for good, since the sink was opened
    qint64 recordsQueued = 0;  ///< waiting in memory for a retry
    QString lastError;         ///< the last write error ("No space left on device"), or empty

    bool isOk() const { return state == State::Ok; }
    static QString stateName(State state); ///< "ok", "degraded", "failing"
    /// {"state", "records_dropped", "records_queued", "last_error"}
    QJsonObject toJson() const;
    /// One line for people: "audit log degraded: 3 records dropped (No space left on device)".
    QString describe() const;
    bool operator==(const AuditHealth &) const = default;
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
    /// Retries whatever is waiting and makes every record received so far durable (fsync);
    /// a shutdown calls it through AuditLog::flush(). Default: nothing.
    virtual void flush() {}
    virtual AuditHealth health() const { return {}; }

    /// AuditLog registers itself here to hear of health changes (one listener).
    void setHealthListener(std::function<void()> listener);

protected:
    /// Call when health() changed state, outside the sink's own locks.
    void notifyHealthChanged();

private:
    QMutex m_listenerMutex;
    std::function<void()> m_listener;
};
using AuditSinkPtr = std::shared_ptr<AuditSink>;

/// Appends one JSON object per line to a file (or stderr for "-"). Each record is one write()
/// of its whole line; a write that fails (full disk, I/O error, permission) leaves no partial
/// line — the file is cut back to the last record boundary — and the record waits in a bounded
/// in-memory queue, retried in order before the next record and on flush(). When the queue is
/// full, new records are dropped, and once writing works again an `audit.dropped` record says
/// how many and over which time range. Opening a file whose last line is torn (a crash in the
/// middle of a write) cuts that line off and writes an `audit.torn_tail` note.
class JsonLinesAuditSink : public AuditSink
{
public:
    struct Options
    {
        qsizetype maxQueuedRecords = 4096;
        qint64 maxQueuedBytes = 4 * 1024 * 1024;
    };

    /// Throws OSError when the file cannot be opened for appending.
    explicit JsonLinesAuditSink(const QString &path);
    JsonLinesAuditSink(const QString &path, Options options);
    ~JsonLinesAuditSink() override;
    void record(const AuditEvent &event) override;
    void flush() override;
    AuditHealth health() const override;

private:
    struct Pending
    {
        QByteArray line;
    };
    bool writeLine(const QByteArray &line);
    bool drainLocked();
    void repairTornTail();
    AuditHealth healthLocked() const;
    /// Updates the state after an attempt; true when it changed (the caller notifies).
    bool updateStateLocked(bool lastWriteOk);

    mutable QMutex m_mutex;
    Options m_options;
    QString m_path;
    int m_fd = -1;
    bool m_ownsFd = false;
    bool m_seekable = false;     ///< a regular file: a partial line can be cut off
    qint64 m_pendingCut = -1;    ///< a cut that failed: retried before the next write
    bool m_needsNewline = false; ///< a stream got a partial line: end it before the next
    std::deque<Pending> m_queue;
    qint64 m_queuedBytes = 0;
    qint64 m_dropped = 0;    ///< since opened
    qint64 m_unreported = 0; ///< dropped, not yet told by an audit.dropped record
    QDateTime m_dropFirst, m_dropLast;
    bool m_lastWriteOk = true;
    QString m_lastError;
    AuditHealth::State m_state = AuditHealth::State::Ok;
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
    /// The next sequence number, for records a sink writes on its own (audit.dropped).
    qint64 reserveSequence();
    /// Records emitted on the calling thread so far (Agent::callTool uses it to see whether a
    /// tool call produced its record).
    static quint64 threadEventCount();

    /// The worst health of the registered sinks; dropped and queued counts summed.
    AuditHealth health() const;
    /// Retries every sink's queue and makes the records durable (AuditSink::flush).
    void flush();
    /// Waits until no AuditRecorder is open (every operation begun has its record), at most
    /// `timeoutMs`; a shutdown calls it after stopping the commands. True when none is open.
    bool waitForOpenRecords(int timeoutMs);
    /// Called on every change of health() state, on the thread where the change happened
    /// (a write on any thread), under a lock: keep it short (queue and return) and do not add
    /// or remove observers from it. Returns an id for removeHealthObserver().
    int addHealthObserver(std::function<void(const AuditHealth &)> observer);
    void removeHealthObserver(int id);

private:
    friend class AuditRecorder;
    void sinkHealthChanged();

    mutable QMutex m_mutex;
    QList<AuditSinkPtr> m_sinks;
    qint64 m_sequence = 0;
    QWaitCondition m_recordsClosed;
    int m_openRecords = 0; ///< guarded by m_mutex
    QMutex m_healthMutex;
    AuditHealth::State m_reportedState = AuditHealth::State::Ok;
    QList<std::pair<int, std::function<void(const AuditHealth &)>>> m_observers;
    int m_nextObserver = 1;
};

/// The one record of a tool call that never reached its tool: unknown tool, arguments that are
/// missing or of the wrong type, or a front end (MCP, script, plan) that rejected the call.
/// Event `sandbox.<tool>` for the sandbox tools, else `tool.call` with the tool's name (cut to
/// 128 characters); outcome `invalid`, `error_type` and `error` (the message, cut to 1024
/// characters; pass none when it might quote a command). `toolName` may be empty when the
/// caller gave none.
void auditInvalidToolCall(const QString &toolName, const QString &workspaceId, const QString &actor,
                          const QString &errorType, const QString &message);

/// Fields describing a command without its text: `command_length`, `command_sha256` (first 12
/// hex digits) and a best-effort `inferred_op`.
QJsonObject commandAuditFields(const QString &command);

/// Best-effort label of what a shell command does: shell_delete, shell_move, shell_write,
/// network, package_install, git, python, build, read, or "shell".
QString inferShellOperation(const QString &command);

} // namespace elsai

namespace elsai {

class SandboxError;

/// Fields every audit record finished on this thread gets while the scope lives (the newest
/// scope's): Agent::callTool adds the changes its call made so far, so the tool's own record
/// carries them (docs/checkpoints.md). The provider runs when a record is finished.
class AuditFieldsScope
{
public:
    using Provider = std::function<QJsonObject()>;
    explicit AuditFieldsScope(Provider provider);
    ~AuditFieldsScope();
    AuditFieldsScope(const AuditFieldsScope &) = delete;
    AuditFieldsScope &operator=(const AuditFieldsScope &) = delete;
    /// The fields of the innermost scope (empty when none).
    static QJsonObject current();

private:
    Provider m_previous;
};

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
    /// PermissionError, "invalid" for ValueError and its subclasses, else "error"; records
    /// `error_type`, and `error` (the message) only when `withMessage` — execute passes false so no
    /// text derived from a command is logged.
    void fail(const SandboxError &error, bool withMessage = true);

private:
    void finish(const QString &outcome);
    AuditEvent m_event;
    bool m_done = false;
};

} // namespace elsai
