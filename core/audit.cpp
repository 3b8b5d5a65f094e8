// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "audit.h"

#include "errors.h"
#include "faultinjection.h"
#include "fdutil.h"
#include "hostfiles.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
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

void AuditSink::setHealthListener(std::function<void()> listener)
{
    QMutexLocker lock(&m_listenerMutex);
    m_listener = std::move(listener);
}

void AuditSink::notifyHealthChanged()
{
    std::function<void()> listener;
    {
        QMutexLocker lock(&m_listenerMutex);
        listener = m_listener;
    }
    if (listener)
        listener();
}

QString AuditHealth::stateName(State state)
{
    switch (state) {
    case State::Ok:
        return QStringLiteral("ok");
    case State::Degraded:
        return QStringLiteral("degraded");
    case State::Failing:
        return QStringLiteral("failing");
    }
    return QStringLiteral("ok");
}

QJsonObject AuditHealth::toJson() const
{
    return {{QStringLiteral("state"), stateName(state)},
            {QStringLiteral("records_dropped"), recordsDropped},
            {QStringLiteral("records_queued"), recordsQueued},
            {QStringLiteral("last_error"), lastError}};
}

QString AuditHealth::describe() const
{
    QString text = QStringLiteral("audit log %1").arg(stateName(state));
    QStringList parts;
    if (recordsDropped > 0)
        parts << QStringLiteral("%1 records dropped").arg(recordsDropped);
    if (recordsQueued > 0)
        parts << QStringLiteral("%1 waiting to be written").arg(recordsQueued);
    if (!parts.isEmpty())
        text += QStringLiteral(": ") + parts.join(QStringLiteral(", "));
    if (!lastError.isEmpty() && state != State::Ok)
        text += QStringLiteral(" (%1)").arg(lastError);
    return text;
}

namespace {

QByteArray jsonLine(const AuditEvent &event)
{
    return QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact) + '\n';
}

// A record the sink writes on its own (a note about the file, not about an operation).
QByteArray noteLine(const QString &event, const QJsonObject &fields)
{
    AuditEvent e;
    e.timestamp = QDateTime::currentDateTimeUtc();
    e.event = event;
    e.actor = QStringLiteral("host");
    e.outcome = QStringLiteral("error");
    e.fields = fields;
    e.sequence = AuditLog::instance().reserveSequence();
    return jsonLine(e);
}

QString errnoText(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

} // namespace

namespace {

/// The descriptor a path names when it names one of our standard streams ("-" is stderr;
/// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are links the kernel resolves to
/// our own descriptor, which the O_NOFOLLOW rule below would otherwise refuse), else -1.
int standardStreamFd(const QString &path)
{
    if (path == QLatin1String("-") || path == QLatin1String("/dev/stderr") ||
        path == QLatin1String("/dev/fd/2") || path == QLatin1String("/proc/self/fd/2"))
        return STDERR_FILENO;
    if (path == QLatin1String("/dev/stdout") || path == QLatin1String("/dev/fd/1") ||
        path == QLatin1String("/proc/self/fd/1"))
        return STDOUT_FILENO;
    return -1;
}

} // namespace

JsonLinesAuditSink::JsonLinesAuditSink(const QString &path) : JsonLinesAuditSink(path, Options()) {}

JsonLinesAuditSink::JsonLinesAuditSink(const QString &path, Options options)
    : m_options(options), m_path(path)
{
    m_options.maxQueuedRecords = std::max<qsizetype>(0, m_options.maxQueuedRecords);
    if (const int stream = standardStreamFd(path); stream >= 0) {
        m_fd = stream; // not ours: never closed, never cut back
    } else {
        // Beneath the trusted folder descriptor, the last component O_NOFOLLOW: a symlink an
        // agent put there (or swapped the folder for) cannot make the engine append elsewhere.
        const QFileInfo info(path);
        UniqueFd dir;
        try {
            dir = openHostFolder(info.absolutePath(), false);
        } catch (const PermissionError &e) {
            throw PermissionError(
                QStringLiteral("cannot open audit log '%1': %2").arg(path, e.message()),
                e.errnoValue());
        } catch (const OSError &e) {
            throw OSError(QStringLiteral("cannot open audit log '%1' for appending: %2")
                              .arg(path, e.message()),
                          e.errnoValue());
        }
        const QByteArray name = QFile::encodeName(info.fileName());
        // Read access too, to find a torn last line (not needed to append: fall back).
        const int flags = O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
        m_fd = ::openat(dir.get(), name.constData(), O_RDWR | flags, 0666);
        if (m_fd < 0 && errno == EACCES)
            m_fd = ::openat(dir.get(), name.constData(), O_WRONLY | flags, 0666);
        if (m_fd < 0 && errno == ELOOP)
            throw PermissionError(QStringLiteral("cannot open audit log '%1': it is a symbolic "
                                                 "link; name the file itself")
                                      .arg(path),
                                  ELOOP);
        if (m_fd < 0)
            throw OSError(QStringLiteral("cannot open audit log '%1' for appending: %2")
                              .arg(path, errnoText(errno)),
                          errno);
        // Appending through a second hard link would write into whatever file it also names.
        // (A device or a pipe a log collector reads is fine: only a file can be linked.)
        struct stat st
        {
        };
        const int statError = ::fstat(m_fd, &st) == 0 ? 0 : errno;
        const QString refusal =
            statError ? errnoText(statError)
            : S_ISREG(st.st_mode) && st.st_nlink > 1
                ? QStringLiteral("it has %1 hard links; an audit log must be a file of its own")
                      .arg(quint64(st.st_nlink))
                : QString();
        if (!refusal.isEmpty()) {
            ::close(m_fd);
            m_fd = -1;
            throw PermissionError(
                QStringLiteral("cannot open audit log '%1': %2").arg(path, refusal), EPERM);
        }
        m_ownsFd = true;
    }
    // Only our own file is ever cut back: stderr may be redirected into a file that holds
    // other output too.
    struct stat st
    {
    };
    m_seekable = m_ownsFd && ::fstat(m_fd, &st) == 0 && S_ISREG(st.st_mode);
    if (m_seekable)
        repairTornTail();
}

JsonLinesAuditSink::~JsonLinesAuditSink()
{
    QMutexLocker lock(&m_mutex);
    drainLocked();
    if (!m_queue.empty() || m_unreported > 0)
        qCWarning(lcAudit).noquote()
            << QStringLiteral("audit log '%1' closed with %2 records never written (%3)")
                   .arg(m_path)
                   .arg(qint64(m_queue.size()) + m_unreported)
                   .arg(m_lastError);
    if (m_ownsFd)
        ::close(m_fd);
}

// A crash in the middle of a write (or an older version of this sink on a full disk) can
// leave a last line without its newline: cut it off, so the next record starts a line of its
// own, and say so. Reads backwards from the end: linear in the torn tail's length.
void JsonLinesAuditSink::repairTornTail()
{
    struct stat st
    {
    };
    if (::fstat(m_fd, &st) != 0 || st.st_size == 0)
        return;
    char last = 0;
    if (::pread(m_fd, &last, 1, st.st_size - 1) != 1 || last == '\n')
        return;
    off_t end = st.st_size;
    off_t cut = 0; // the offset after the last '\n'
    char buf[65536];
    while (end > 0) {
        const off_t start = std::max<off_t>(0, end - off_t(sizeof buf));
        const ssize_t n = ::pread(m_fd, buf, size_t(end - start), start);
        if (n <= 0)
            return; // cannot read it: leave the file as it is
        const void *nl = ::memrchr(buf, '\n', size_t(n));
        if (nl) {
            cut = start + (static_cast<const char *>(nl) - buf) + 1;
            break;
        }
        end = start;
    }
    if (::ftruncate(m_fd, cut) != 0) {
        m_lastError = errnoText(errno);
        m_needsNewline = true; // at least keep the next records on lines of their own
        return;
    }
    const QByteArray note = noteLine(QStringLiteral("audit.torn_tail"),
                                     {{QStringLiteral("bytes_removed"), qint64(st.st_size - cut)},
                                      {QStringLiteral("offset"), qint64(cut)}});
    if (!writeLine(note)) {
        m_queue.push_back({note});
        m_queuedBytes += note.size();
        m_lastWriteOk = false;
    }
    m_state = healthLocked().state;
}

// The whole line or nothing: one write() normally; a short write is continued, and if the
// rest cannot be written the partial line is cut off again (or, on a stream, ended).
bool JsonLinesAuditSink::writeLine(const QByteArray &line)
{
    if (m_pendingCut >= 0) {
        if (::ftruncate(m_fd, m_pendingCut) != 0) {
            m_lastError = errnoText(errno);
            return false;
        }
        m_pendingCut = -1;
    }
    QByteArray data = line;
    if (m_needsNewline)
        data.prepend('\n');
    const off_t boundary = m_seekable ? ::lseek(m_fd, 0, SEEK_END) : off_t(-1);
    qsizetype done = 0;
    int err = 0;
    while (done < data.size()) {
        const ssize_t n = ELSAI_FAULT_WRITE("audit-append", m_fd, data.constData() + done,
                                            size_t(data.size() - done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            break;
        }
        done += n;
    }
    if (done == data.size()) {
        m_needsNewline = false;
        ELSAI_FAULT_POINT("audit-append");
        return true;
    }
    m_lastError = errnoText(err);
    if (done > 0) {
        if (boundary >= 0) {
            if (::ftruncate(m_fd, boundary) != 0)
                m_pendingCut = boundary;
        } else {
            m_needsNewline = true;
        }
    }
    return false;
}

// Writes the queue in order, then the note of what was dropped. Stops at the first failure.
bool JsonLinesAuditSink::drainLocked()
{
    while (!m_queue.empty()) {
        if (!writeLine(m_queue.front().line))
            return false;
        m_queuedBytes -= m_queue.front().line.size();
        m_queue.pop_front();
    }
    if (m_unreported > 0) {
        const QByteArray note =
            noteLine(QStringLiteral("audit.dropped"),
                     {{QStringLiteral("records_dropped"), m_unreported},
                      {QStringLiteral("first_dropped_at"), m_dropFirst.toString(Qt::ISODateWithMs)},
                      {QStringLiteral("last_dropped_at"), m_dropLast.toString(Qt::ISODateWithMs)},
                      {QStringLiteral("error"), m_lastError}});
        if (!writeLine(note))
            return false;
        m_unreported = 0;
    }
    return true;
}

void JsonLinesAuditSink::record(const AuditEvent &event)
{
    const QByteArray line = jsonLine(event);
    bool changed = false;
    {
        QMutexLocker lock(&m_mutex);
        bool ok = drainLocked() && writeLine(line);
        if (!ok) {
            const bool full = qsizetype(m_queue.size()) >= m_options.maxQueuedRecords ||
                              m_queuedBytes + line.size() > m_options.maxQueuedBytes;
            if (full) {
                ++m_dropped;
                ++m_unreported;
                const QDateTime at =
                    event.timestamp.isValid() ? event.timestamp : QDateTime::currentDateTimeUtc();
                if (m_unreported == 1)
                    m_dropFirst = at;
                m_dropLast = at;
            } else {
                m_queue.push_back({line});
                m_queuedBytes += line.size();
            }
        }
        changed = updateStateLocked(ok);
    }
    if (changed)
        notifyHealthChanged();
}

void JsonLinesAuditSink::flush()
{
    bool changed = false;
    {
        QMutexLocker lock(&m_mutex);
        if (!m_queue.empty() || m_unreported != 0 || m_pendingCut >= 0)
            changed = updateStateLocked(drainLocked());
        // What was written is made durable: a shutdown calls this last.
        if (m_fd >= 0 && m_seekable)
            ::fsync(m_fd);
    }
    if (changed)
        notifyHealthChanged();
}

bool JsonLinesAuditSink::updateStateLocked(bool lastWriteOk)
{
    m_lastWriteOk = lastWriteOk;
    const AuditHealth::State now = healthLocked().state;
    if (now == m_state)
        return false;
    m_state = now;
    return true;
}

AuditHealth JsonLinesAuditSink::healthLocked() const
{
    AuditHealth h;
    h.recordsDropped = m_dropped;
    h.recordsQueued = qint64(m_queue.size());
    h.lastError = m_lastError;
    if (!m_lastWriteOk && m_unreported > 0)
        h.state = AuditHealth::State::Failing;
    else if (!m_lastWriteOk || m_dropped > 0 || !m_queue.empty())
        h.state = AuditHealth::State::Degraded;
    return h;
}

AuditHealth JsonLinesAuditSink::health() const
{
    QMutexLocker lock(&m_mutex);
    return healthLocked();
}

namespace {
thread_local quint64 t_threadEvents = 0;
} // namespace

AuditLog &AuditLog::instance()
{
    static AuditLog log;
    return log;
}

void AuditLog::addSink(const AuditSinkPtr &sink)
{
    {
        QMutexLocker lock(&m_mutex);
        if (m_sinks.contains(sink))
            return;
        m_sinks.append(sink);
    }
    sink->setHealthListener([this] { sinkHealthChanged(); });
    if (!sink->health().isOk())
        sinkHealthChanged();
}

void AuditLog::removeSink(const AuditSinkPtr &sink)
{
    {
        QMutexLocker lock(&m_mutex);
        if (!m_sinks.removeAll(sink))
            return;
    }
    sink->setHealthListener({});
}

qint64 AuditLog::reserveSequence()
{
    QMutexLocker lock(&m_mutex);
    return ++m_sequence;
}

quint64 AuditLog::threadEventCount()
{
    return t_threadEvents;
}

AuditHealth AuditLog::health() const
{
    QList<AuditSinkPtr> sinks;
    {
        QMutexLocker lock(&m_mutex);
        sinks = m_sinks;
    }
    AuditHealth out;
    for (const auto &sink : std::as_const(sinks)) {
        const AuditHealth h = sink->health();
        out.recordsDropped += h.recordsDropped;
        out.recordsQueued += h.recordsQueued;
        if (int(h.state) > int(out.state) || (out.lastError.isEmpty() && !h.isOk())) {
            if (int(h.state) > int(out.state))
                out.state = h.state;
            out.lastError = h.lastError;
        }
    }
    return out;
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

int AuditLog::addHealthObserver(std::function<void(const AuditHealth &)> observer)
{
    QMutexLocker lock(&m_healthMutex);
    const int id = m_nextObserver++;
    m_observers.append({id, std::move(observer)});
    return id;
}

void AuditLog::removeHealthObserver(int id)
{
    QMutexLocker lock(&m_healthMutex);
    m_observers.removeIf([id](const auto &o) { return o.first == id; });
}

// Warns once per change of state (not per record) and tells the observers.
void AuditLog::sinkHealthChanged()
{
    const AuditHealth h = health();
    // Observers run under the lock: once removeHealthObserver() returns, none is running.
    QMutexLocker lock(&m_healthMutex);
    if (h.state == m_reportedState)
        return;
    m_reportedState = h.state;
    qCWarning(lcAudit).noquote() << h.describe();
    for (const auto &o : std::as_const(m_observers))
        o.second(h);
}

void AuditLog::emitEvent(AuditEvent event)
{
    QList<AuditSinkPtr> sinks;
    {
        QMutexLocker lock(&m_mutex);
        event.sequence = ++m_sequence;
        sinks = m_sinks;
    }
    ++t_threadEvents;
    if (!event.timestamp.isValid())
        event.timestamp = QDateTime::currentDateTimeUtc();
    qCInfo(lcAudit).noquote() << QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact);
    for (const auto &sink : std::as_const(sinks))
        sink->record(event);
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

void auditInvalidToolCall(const QString &toolName, const QString &workspaceId, const QString &actor,
                          const QString &errorType, const QString &message)
{
    static const QStringList sandboxTools = {QStringLiteral("execute"), QStringLiteral("read_file"),
                                             QStringLiteral("write_file"),
                                             QStringLiteral("list_dir")};
    constexpr qsizetype maxName = 128; // an agent chooses the name: bound what is logged
    const bool known = sandboxTools.contains(toolName);
    QJsonObject fields{{QStringLiteral("error_type"), errorType}};
    if (!message.isEmpty())
        fields.insert(QStringLiteral("error"), message.left(1024));
    if (!known)
        fields.insert(QStringLiteral("tool"), toolName.left(maxName));
    AuditLog::instance().emitEvent(
        known ? QStringLiteral("sandbox.") + toolName : QStringLiteral("tool.call"), workspaceId,
        actor.left(maxName), QStringLiteral("invalid"), fields);
}

QJsonObject commandAuditFields(const QString &command)
{
    const QByteArray utf8 = command.toUtf8();
    const QByteArray sha = QCryptographicHash::hash(utf8, QCryptographicHash::Sha256).toHex();
    // command_length is Python's len(): characters (code points), as the reference records
    // it; command_bytes is the UTF-8 size the shell gets. The hash is of those bytes.
    qsizetype characters = command.size();
    for (const QChar c : command)
        characters -= c.isLowSurrogate() ? 1 : 0;
    return {{QStringLiteral("command_length"), characters},
            {QStringLiteral("command_bytes"), utf8.size()},
            {QStringLiteral("command_sha256"), QString::fromLatin1(sha.left(12))},
            {QStringLiteral("inferred_op"), inferShellOperation(command)}};
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
    // Refused for its input (a bad argument, a NUL in a command, an unknown tool): invalid.
    const bool invalid = dynamic_cast<const ValueError *>(&error) != nullptr;
    finish(denied    ? QStringLiteral("denied")
           : invalid ? QStringLiteral("invalid")
                     : QStringLiteral("error"));
}

namespace {
thread_local AuditFieldsScope::Provider t_auditFields;
} // namespace

AuditFieldsScope::AuditFieldsScope(Provider provider)
    : m_previous(std::exchange(t_auditFields, std::move(provider)))
{
}

AuditFieldsScope::~AuditFieldsScope()
{
    t_auditFields = std::move(m_previous);
}

QJsonObject AuditFieldsScope::current()
{
    return t_auditFields ? t_auditFields() : QJsonObject();
}

void AuditRecorder::finish(const QString &outcome)
{
    if (m_done)
        return;
    m_done = true;
    m_event.outcome = outcome;
    const QJsonObject extra = AuditFieldsScope::current();
    for (auto it = extra.begin(); it != extra.end(); ++it)
        m_event.fields.insert(it.key(), it.value());
    AuditLog &log = AuditLog::instance();
    log.emitEvent(std::move(m_event));
    QMutexLocker lock(&log.m_mutex);
    if (--log.m_openRecords == 0)
        log.m_recordsClosed.wakeAll();
}

} // namespace elsai
