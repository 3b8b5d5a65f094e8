// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "timetravel.h"

#include "changetracker.h"
#include "errors.h"
#include "sandboxplugin.h"
#include "unifieddiff.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QStringDecoder>
#include <QThread>

#include <functional>

Q_LOGGING_CATEGORY(lcTimeTravel, "elsai.timetravel", QtInfoMsg)

namespace elsai {

namespace {

/// How long a restore waits for the calls it cancelled to return.
constexpr int StopCallsTimeoutMs = 30000;
constexpr char kNow[] = "now";

QString typeName(TreeEntry::Type t)
{
    switch (t) {
    case TreeEntry::Type::Dir:
        return QStringLiteral("folder");
    case TreeEntry::Type::Symlink:
        return QStringLiteral("symlink");
    case TreeEntry::Type::File:
        break;
    }
    return QStringLiteral("file");
}

QString octal(quint32 mode)
{
    return QString::number(mode, 8).rightJustified(4, u'0');
}

/// Text for a unified diff, or none for binary content (a NUL, or not UTF-8).
std::optional<QString> asText(const QByteArray &bytes)
{
    if (QByteArrayView(bytes).first(qMin<qsizetype>(bytes.size(), 8192)).contains('\0'))
        return std::nullopt;
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    QString text = decoder(bytes);
    if (decoder.hasError())
        return std::nullopt;
    return text;
}

/// Turns changes into CheckpointDiff entries: the counts whole, the entries and the diff text
/// bounded by the options. `content` reads one side's bytes (throws SandboxError when it
/// cannot: the entry then gets sizes only).
class DiffBuilder
{
public:
    using Content = std::function<QByteArray(const TreeEntry &, bool toSide)>;
    DiffBuilder(CheckpointDiff &out, const CheckpointDiffOptions &options, Content content)
        : m_out(out), m_options(options), m_content(std::move(content))
    {
    }

    /// `from` none for an added path, or for a modified one whose earlier state is unknown.
    void add(TreeChange::Kind kind, const QByteArray &path, const TreeEntry *from,
             const TreeEntry *to, bool contentChanged)
    {
        qint64 &count = kind == TreeChange::Kind::Added      ? m_out.added
                        : kind == TreeChange::Kind::Modified ? m_out.modified
                                                             : m_out.deleted;
        ++count;
        if (m_out.entries.size() >= m_options.maxEntries) {
            m_out.truncated = true;
            return;
        }
        const TreeEntry *any = to ? to : from;
        CheckpointDiffEntry e;
        e.path = QString::fromUtf8(path);
        e.change = toString(kind);
        e.type = any ? typeName(any->type) : typeName(TreeEntry::Type::File);
        if (from) {
            if (from->type == TreeEntry::Type::File)
                e.sizeFrom = from->size;
            if (from->type != TreeEntry::Type::Symlink)
                e.modeFrom = from->mode;
            else
                e.linkFrom = QString::fromUtf8(from->target);
        }
        if (to) {
            if (to->type == TreeEntry::Type::File)
                e.sizeTo = to->size;
            if (to->type != TreeEntry::Type::Symlink)
                e.modeTo = to->mode;
            else
                e.linkTo = QString::fromUtf8(to->target);
        }
        if (e.modeFrom && e.modeTo && *e.modeFrom == *e.modeTo) {
            e.modeFrom.reset();
            e.modeTo.reset();
        }
        if (!m_options.unified || !any || any->type != TreeEntry::Type::File || !contentChanged) {
            m_out.entries.append(e);
            return;
        }
        const qint64 biggest = qMax(from ? from->size : 0, to ? to->size : 0);
        const bool unknownBefore = kind == TreeChange::Kind::Modified && !from;
        if (unknownBefore || biggest > m_options.maxTextBytes ||
            m_diffBytes >= m_options.maxDiffBytes) {
            e.diffOmitted = true;
            m_out.entries.append(e);
            return;
        }
        try {
            const auto oldText = from ? asText(m_content(*from, false)) : QString();
            const auto newText = to ? asText(m_content(*to, true)) : QString();
            if (!oldText || !newText) {
                e.binary = true;
            } else {
                e.diff =
                    unifiedDiff(*oldText, *newText,
                                from ? QStringLiteral("a/") + e.path : QStringLiteral("/dev/null"),
                                to ? QStringLiteral("b/") + e.path : QStringLiteral("/dev/null"));
                if (m_diffBytes + e.diff.size() > m_options.maxDiffBytes) {
                    e.diff.clear();
                    e.diffOmitted = true;
                }
                m_diffBytes += e.diff.size();
            }
        } catch (const SandboxError &) {
            e.diffOmitted = true; // changed again meanwhile, gone, or not kept: sizes only
        }
        m_out.entries.append(e);
    }

private:
    CheckpointDiff &m_out;
    const CheckpointDiffOptions &m_options;
    Content m_content;
    qint64 m_diffBytes = 0;
};

} // namespace

// ---- results ----------------------------------------------------------------------------------

CheckpointInfo CheckpointInfo::fromManifest(const TreeManifest &m)
{
    CheckpointInfo i;
    i.name = m.name;
    i.note = m.note;
    i.createdMs = m.createdMs;
    i.automatic = m.automatic;
    i.files = m.fileCount();
    i.bytes = m.byteCount();
    return i;
}

QJsonObject CheckpointInfo::toJson() const
{
    QJsonObject o{{QStringLiteral("name"), name},
                  {QStringLiteral("note"), note},
                  {QStringLiteral("created_at"),
                   QDateTime::fromMSecsSinceEpoch(createdMs).toUTC().toString(Qt::ISODateWithMs)},
                  {QStringLiteral("automatic"), automatic}};
    if (files >= 0) {
        o.insert(QStringLiteral("files"), files);
        o.insert(QStringLiteral("bytes"), bytes);
    }
    if (!removedBySizeLimit.isEmpty())
        o.insert(QStringLiteral("removed_by_size_limit"),
                 QJsonArray::fromStringList(removedBySizeLimit));
    return o;
}

QJsonObject CheckpointDiffEntry::toJson() const
{
    QJsonObject o{{QStringLiteral("path"), path},
                  {QStringLiteral("change"), change},
                  {QStringLiteral("type"), type}};
    if (sizeFrom)
        o.insert(QStringLiteral("size_from"), *sizeFrom);
    if (sizeTo)
        o.insert(QStringLiteral("size_to"), *sizeTo);
    if (modeFrom)
        o.insert(QStringLiteral("mode_from"), octal(*modeFrom));
    if (modeTo)
        o.insert(QStringLiteral("mode_to"), octal(*modeTo));
    if (linkFrom)
        o.insert(QStringLiteral("link_from"), *linkFrom);
    if (linkTo)
        o.insert(QStringLiteral("link_to"), *linkTo);
    if (binary)
        o.insert(QStringLiteral("binary"), true);
    if (!diff.isEmpty())
        o.insert(QStringLiteral("diff"), diff);
    if (diffOmitted)
        o.insert(QStringLiteral("diff_omitted"), true);
    return o;
}

QJsonObject CheckpointDiff::toJson() const
{
    QJsonArray list;
    for (const CheckpointDiffEntry &e : entries)
        list.append(e.toJson());
    return {{QStringLiteral("from"), from},          {QStringLiteral("to"), to},
            {QStringLiteral("added"), added},        {QStringLiteral("modified"), modified},
            {QStringLiteral("deleted"), deleted},    {QStringLiteral("entries"), list},
            {QStringLiteral("truncated"), truncated}};
}

QJsonObject RestoreResult::toJson() const
{
    return {{QStringLiteral("name"), name},
            {QStringLiteral("files_written"), applied.written},
            {QStringLiteral("links_made"), applied.linked},
            {QStringLiteral("folders_made"), applied.created},
            {QStringLiteral("removed"), applied.removed},
            {QStringLiteral("folder_modes_set"), applied.modes},
            {QStringLiteral("stopped_calls"), stoppedCalls},
            {QStringLiteral("finished_interrupted_restore"), wasInterrupted}};
}

// ---- TimeTravel ---------------------------------------------------------------------------

TimeTravel::TimeTravel(const TimeTravelOptions &options, const QString &workspaceId,
                       BackendPtr backend)
    : m_options(options), m_workspaceId(workspaceId), m_backend(std::move(backend))
{
    if (m_options.checkpoints) {
        if (!m_backend->supportsCheckpoints())
            throw OSError(QStringLiteral("the %1 backend cannot take checkpoints yet; start the "
                                         "sandbox without checkpoints")
                              .arg(m_backend->typeName()),
                          ENOTSUP);
        if (m_options.sizeLimitBytes < 0)
            throw ValueError(QStringLiteral("the checkpoint size limit must be >= 0"));
        m_store = CheckpointStore::open(
            m_options.folder.isEmpty() ? CheckpointStore::defaultFolder() : m_options.folder);
        m_space = std::make_unique<CheckpointSpace>(m_store, m_backend->id());
        if (const auto pending = m_space->journal()) {
            qCWarning(lcTimeTravel).noquote()
                << QStringLiteral("workspace '%1': a restore of the checkpoint '%2' was "
                                  "interrupted; restore it again to finish")
                       .arg(workspaceId, *pending);
        }
    }
    if (m_options.trackChanges)
        m_tracker = std::make_unique<ChangeTracker>(m_backend, m_options.maxWatches,
                                                    m_options.maxListedPaths);
    if (m_tracker && m_space)
        m_journal =
            std::make_unique<CallJournal>(m_store, QStringLiteral("seed"), m_options.journal);
}

TimeTravel::~TimeTravel() = default;

CheckpointSpace &TimeTravel::space() const
{
    if (!m_space)
        throw ValueError(QStringLiteral("checkpoints are off for workspace '%1'; start it with "
                                        "checkpoints on (--checkpoints)")
                             .arg(m_workspaceId));
    return *m_space;
}

std::optional<TreeManifest> TimeTravel::loadManifest(const QString &name) const
{
    return space().load(name);
}

TreeManifest TimeTravel::manifest(const QString &name) const
{
    auto m = loadManifest(name);
    if (!m)
        throw FileNotFoundError(
            QStringLiteral("no checkpoint named '%1' in workspace '%2'; list them with "
                           "checkpoints")
                .arg(name, m_workspaceId),
            ENOENT);
    return std::move(*m);
}

TreeManifest TimeTravel::captureNow()
{
    CaptureOptions options;
    options.cache = &m_cache;
    return m_backend->captureTree(options);
}

TreeManifest TimeTravel::captureTracked(CheckpointStore *store, bool attribute)
{
    std::optional<QSet<QByteArray>> touched;
    if (m_tracker)
        touched = m_tracker->takeTouched(attribute);
    CaptureOptions options;
    options.store = store;
    options.cache = &m_cache;
    std::optional<TreeManifest> last;
    last.swap(m_lastTree); // a capture that fails leaves no base: its touched paths are taken
    if (touched && last) {
        options.base = &*last;
        options.touched = &*touched;
    }
    bool walked = true; // a backend that does not say walked
    options.walkedWhole = &walked;
    TreeManifest m = m_backend->captureTree(options);
    if (walked)
        m_treeWalks.fetch_add(1, std::memory_order_relaxed);
    if (m_tracker)
        m_lastTree = m;
    return m;
}

CheckpointInfo TimeTravel::checkpoint(const QString &name, const QString &note, bool automatic,
                                      bool replace)
{
    CheckpointSpace &s = space();
    QString chosen = name;
    if (chosen.isEmpty()) {
        automatic = true;
        chosen = QStringLiteral("auto-") +
                 QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
    }
    CheckpointSpace::checkName(chosen);
    if (note.size() > 4096)
        throw ValueError(QStringLiteral("a checkpoint note is at most 4096 characters"));
    QMutexLocker lock(&m_checkpointMutex);
    const QString base = chosen;
    for (int n = 2; name.isEmpty() && s.exists(chosen); ++n)
        chosen = base + u'-' + QString::number(n); // two in one millisecond
    if (!replace && s.exists(chosen))
        throw FileExistsError(QStringLiteral("a checkpoint named '%1' exists; delete it first or "
                                             "choose another name")
                                  .arg(chosen),
                              EEXIST);
    TreeManifest m;
    {
        const CheckpointStore::Lock storeLock(*m_store, false);
        m_store->refreshPresence();
        m = captureTracked(m_store.get(), true);
        m.name = chosen;
        m.note = note;
        m.automatic = automatic;
        m.createdMs = QDateTime::currentMSecsSinceEpoch();
        m.source = m_backend->id();
        s.save(m, replace);
    }
    CheckpointInfo info = CheckpointInfo::fromManifest(m);
    enforceLimit(info);
    bumpGeneration();
    return info;
}

void TimeTravel::enforceLimit(CheckpointInfo &info)
{
    // The whole store is read once per sandbox start, then again each time this workspace
    // has added an eighth of the limit.
    if (m_gcDone && m_store->bytesAdded() < m_options.sizeLimitBytes / 8)
        return;
    m_gcDone = true;
    qint64 used = 0;
    info.removedBySizeLimit = m_store->collectGarbage(m_options.sizeLimitBytes, &used);
    if (used > m_options.sizeLimitBytes)
        qCWarning(lcTimeTravel).noquote()
            << QStringLiteral("the checkpoint store '%1' holds %2 bytes, over its limit of %3: "
                              "only named checkpoints are left; delete some")
                   .arg(m_store->folder())
                   .arg(used)
                   .arg(m_options.sizeLimitBytes);
}

QList<CheckpointInfo> TimeTravel::checkpoints() const
{
    QList<CheckpointInfo> out;
    for (const TreeManifest &m : space().list()) {
        CheckpointInfo i = CheckpointInfo::fromManifest(m);
        i.files = -1; // the header alone: not counted
        out.append(i);
    }
    return out;
}

QList<TimeTravel::RestoreMark> TimeTravel::restores() const
{
    QMutexLocker gate(&m_gateMutex);
    return m_restores;
}

std::optional<QString> TimeTravel::interruptedRestore() const
{
    return m_space ? m_space->journal() : std::nullopt;
}

bool TimeTravel::deleteCheckpoint(const QString &name)
{
    QMutexLocker lock(&m_checkpointMutex);
    const bool removed = space().remove(name);
    bumpGeneration();
    return removed;
}

CheckpointDiff TimeTravel::diff(const QString &from, const QString &to,
                                const CheckpointDiffOptions &options)
{
    const auto side = [&](const QString &name) {
        return name == QLatin1String(kNow) ? captureNow() : manifest(name);
    };
    const TreeManifest a = side(from);
    const TreeManifest b = side(to);
    CheckpointDiff out;
    out.from = from;
    out.to = to;
    DiffBuilder builder(out, options, [&](const TreeEntry &e, bool toSide) {
        if ((toSide ? to : from) == QLatin1String(kNow))
            return m_backend->readFile(e.displayPath());
        return m_store->readBlob(e.hash);
    });
    for (const TreeChange &c : diffManifests(a, b))
        builder.add(c.kind, c.path, c.from, c.to, c.contentChanged);
    return out;
}

CheckpointDiff TimeTravel::callDiff(quint64 callId, const CheckpointDiffOptions &options)
{
    if (!m_journal)
        throw ValueError(QStringLiteral("the diff of a call needs checkpoints and change "
                                        "tracking both on for workspace '%1'")
                             .arg(m_workspaceId));
    const std::optional<CallJournalRecord> record = m_journal->call(callId);
    if (!record)
        throw FileNotFoundError(QStringLiteral("the changes of call %1 are no longer kept (the "
                                               "journal keeps the most recent calls); diff two "
                                               "checkpoints instead")
                                    .arg(callId),
                                ENOENT);
    CheckpointDiff out;
    out.from = QStringLiteral("before call %1").arg(callId);
    out.to = QStringLiteral("call %1").arg(callId);
    DiffBuilder builder(out, options, [this](const TreeEntry &e, bool) {
        if (e.hash.isEmpty())
            throw OSError(QStringLiteral("the content of '%1' was not kept").arg(e.displayPath()));
        return m_store->readBlob(e.hash);
    });
    std::optional<TreeManifest> baseline;
    bool baselineRead = false;
    using Kind = TreeChange::Kind;
    for (const CallPathState &p : record->paths) {
        std::optional<TreeEntry> before = p.before;
        bool unknown = p.beforeUnknown;
        if (p.beforeFromBaseline) {
            if (!baselineRead) {
                baselineRead = true;
                try {
                    baseline = loadManifest(record->baseline);
                } catch (const SandboxError &) {
                    // damaged or gone: what was before is unknown
                }
            }
            if (!baseline)
                unknown = true;
            else if (const TreeEntry *e = baseline->find(p.path))
                before = *e;
        }
        const TreeEntry *from = before ? &*before : nullptr;
        const TreeEntry *to = p.after ? &*p.after : nullptr;
        if (unknown) {
            builder.add(to ? Kind::Modified : Kind::Deleted, p.path, nullptr, to, true);
        } else if (from && to && from->type != to->type) {
            builder.add(Kind::Deleted, p.path, from, nullptr, true);
            builder.add(Kind::Added, p.path, nullptr, to, true);
        } else if (from && to) {
            builder.add(Kind::Modified, p.path, from, to,
                        from->hash != to->hash || from->target != to->target ||
                            (to->type == TreeEntry::Type::File && to->hash.isEmpty()));
        } else if (from || to) {
            builder.add(from ? Kind::Deleted : Kind::Added, p.path, from, to, true);
        }
    }
    if (record->unjournaled > 0)
        out.truncated = true;
    return out;
}

RestoreResult TimeTravel::restore(const QString &name)
{
    CheckpointSpace &s = space();
    const TreeManifest target = manifest(name);
    RestoreResult result;
    result.name = name;
    result.wasInterrupted = s.journal().has_value();
    QMutexLocker lock(&m_checkpointMutex);

    // Stop the calls in flight (not this thread's own: an agent may restore from a tool call),
    // and hold new ones at the gate until the workspace is the checkpoint.
    {
        QMutexLocker gate(&m_gateMutex);
        m_restoring = true;
        const Qt::HANDLE self = QThread::currentThreadId();
        for (const InFlight &c : std::as_const(m_inFlight)) {
            if (c.thread != self && c.cancel) {
                c.cancel->cancel();
                ++result.stoppedCalls;
            }
        }
        QDeadlineTimer deadline(StopCallsTimeoutMs);
        const auto others = [&] {
            return std::count_if(m_inFlight.cbegin(), m_inFlight.cend(),
                                 [&](const InFlight &c) { return c.thread != self; });
        };
        while (others() > 0) {
            if (!m_gateChanged.wait(&m_gateMutex, deadline)) {
                m_restoring = false;
                m_gateChanged.wakeAll();
                throw TimeoutError(QStringLiteral("restore of '%1': %2 tool calls did not stop "
                                                  "within %3 s; nothing was changed")
                                       .arg(name)
                                       .arg(others())
                                       .arg(StopCallsTimeoutMs / 1000),
                                   ETIMEDOUT);
            }
        }
    }
    const auto reopen = qScopeGuard([this] {
        QMutexLocker gate(&m_gateMutex);
        m_restoring = false;
        m_gateChanged.wakeAll();
    });

    const CheckpointStore::Lock storeLock(*m_store, false);
    s.writeJournal(name);
    const TreeManifest current = captureTracked(nullptr, true);
    result.applied = m_backend->applyTree(current, target, *m_store, &m_cache);
    // Exactly the checkpoint, or an error that says what differs (the journal stays). With
    // the tracker: what the restore changed goes to nobody's call.
    const TreeManifest after = captureTracked(nullptr, false);
    const std::vector<TreeChange> left = diffManifests(after, target);
    if (!left.empty()) {
        QStringList paths;
        for (size_t i = 0; i < left.size() && i < 5; ++i)
            paths.append(QString::fromUtf8(left[i].path));
        throw OSError(QStringLiteral("restore of '%1' left %2 paths different (%3); something "
                                     "changed the workspace meanwhile: restore again")
                          .arg(name)
                          .arg(left.size())
                          .arg(paths.join(QStringLiteral(", "))));
    }
    s.clearJournal();
    if (m_journal)
        m_journal->rebase(name); // the next call's "before" is the checkpoint
    {
        QMutexLocker gate(&m_gateMutex);
        m_restores.append({name, QDateTime::currentMSecsSinceEpoch()});
        if (m_restores.size() > 1000)
            m_restores.removeFirst();
    }
    bumpGeneration();
    return result;
}

// ---- the gate -------------------------------------------------------------------------------

std::unique_ptr<TimeTravel::CallSpan> TimeTravel::beginCall(const QString &actor,
                                                            const QString &tool, bool mutating)
{
    std::unique_ptr<CallSpan> span(new CallSpan);
    span->m_owner = this;
    {
        QMutexLocker gate(&m_gateMutex);
        while (m_restoring)
            m_gateChanged.wait(&m_gateMutex);
        span->m_id = m_nextCall++;
        m_inFlight.append({span->m_id, QThread::currentThreadId(), ToolCallCancelScope::current()});
    }
    if (mutating && m_space && m_options.autoCheckpointAgents.contains(actor)) {
        try {
            checkpoint(QString(), QStringLiteral("before %1 by %2").arg(tool, actor), true);
        } catch (const SandboxError &e) {
            qCWarning(lcTimeTravel).noquote()
                << QStringLiteral("the automatic checkpoint before %1 by %2 failed: %3")
                       .arg(tool, actor, e.display());
        }
    }
    if (mutating && m_tracker)
        m_tracker->begin(span->m_id, actor, tool);
    return span;
}

void TimeTravel::endCall(quint64 id)
{
    QMutexLocker gate(&m_gateMutex);
    m_inFlight.removeIf([id](const InFlight &c) { return c.id == id; });
    m_gateChanged.wakeAll();
}

CallChanges TimeTravel::finishTracking(quint64 id, const QString &outcome)
{
    if (!m_tracker)
        return {};
    QList<PathChange> changed;
    const CallChanges c = m_tracker->end(id, outcome, m_journal ? &changed : nullptr);
    if (m_journal && !changed.isEmpty()) {
        m_journal->record(
            id, changed,
            [this](const QByteArray &path, qint64 maxBytes) -> std::optional<QByteArray> {
                const QString name = QString::fromUtf8(path);
                if (name.toUtf8() != path)
                    return std::nullopt; // not UTF-8: the backend cannot name it
                try {
                    const FileRange r = m_backend->readFileRange(name, 0, maxBytes);
                    if (r.totalSize > maxBytes)
                        return std::nullopt;
                    return r.data;
                } catch (const SandboxError &) {
                    return std::nullopt; // gone or changed into a folder since
                }
            });
    }
    if (c.tracked)
        bumpGeneration();
    return c;
}

TimeTravel::CallSpan::~CallSpan()
{
    if (!m_finished && m_owner) {
        m_owner->finishTracking(m_id, m_outcome.isEmpty() ? QStringLiteral("error") : m_outcome);
        m_owner->endCall(m_id);
    }
}

CallChanges TimeTravel::CallSpan::changes(bool finish)
{
    CallChanges c;
    if (m_finished || !m_owner)
        return c;
    if (finish)
        c = m_owner->finishTracking(m_id, m_outcome.isEmpty() ? QStringLiteral("ok") : m_outcome);
    else if (m_owner->m_tracker)
        c = m_owner->m_tracker->peek(m_id);
    if (finish) {
        m_finished = true;
        m_owner->endCall(m_id);
    }
    return c;
}

// ---- call observers --------------------------------------------------------------------------

quint64 TimeTravel::addCallObserver(const CallObserver &observer)
{
    QMutexLocker lock(&m_observerMutex);
    const quint64 id = m_nextObserver++;
    m_observers.insert(id, observer);
    return id;
}

void TimeTravel::removeCallObserver(quint64 id)
{
    QMutexLocker lock(&m_observerMutex);
    m_observers.remove(id);
}

void TimeTravel::notifyCallFinished(const FinishedCall &call) const
{
    QList<CallObserver> observers;
    {
        QMutexLocker lock(&m_observerMutex);
        observers = m_observers.values();
    }
    for (const CallObserver &o : std::as_const(observers))
        o(call); // outside the lock: an observer may read the workspace, or remove itself
}

} // namespace elsai
