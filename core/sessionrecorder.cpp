// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sessionrecorder.h"

#include "agentplan.h"
#include "errors.h"
#include "hostfiles.h"
#include "sandbox.h"
#include "timetravel.h"
#include "treesnapshot.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMutex>

namespace elsai {

QString recordedHash(QByteArrayView bytes)
{
    return QStringLiteral("sha256:") +
           QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
}

QString workspaceEntryState(ExecutionBackend &backend, const QString &path, qint64 maxBytes)
{
    FileInfo info;
    try {
        info = backend.stat(path);
    } catch (const FileNotFoundError &) {
        return QStringLiteral("absent");
    }
    switch (info.type) {
    case FileInfo::Type::Directory:
        return QStringLiteral("folder");
    case FileInfo::Type::Symlink:
        return QStringLiteral("symlink");
    case FileInfo::Type::Other:
        return QStringLiteral("other");
    case FileInfo::Type::File:
        break;
    }
    if (info.isDir)
        return QStringLiteral("folder");
    const qint64 size = info.size.value_or(0);
    if (size > maxBytes)
        return QStringLiteral("size:%1").arg(size);
    if (!backend.hasRangedRead())
        return recordedHash(backend.readFile(path));
    // A piece at a time: memory of one piece, whatever the file's size.
    constexpr qint64 kPiece = 1024 * 1024;
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (qint64 offset = 0;;) {
        const FileRange range = backend.readFileRange(path, offset, kPiece);
        hash.addData(range.data);
        offset += range.data.size();
        if (range.data.isEmpty() || offset >= range.totalSize)
            break;
        if (offset > maxBytes) // it grew meanwhile
            return QStringLiteral("size:%1").arg(range.totalSize);
    }
    return QStringLiteral("sha256:") + QString::fromLatin1(hash.result().toHex());
}

QString listDirNamesHash(ExecutionBackend &backend, const QString &path)
{
    constexpr qsizetype kMaxNames = 10000;
    QList<FileInfo> entries;
    try {
        entries = backend.listDir(path);
    } catch (const FileNotFoundError &) {
        return QStringLiteral("absent");
    }
    if (entries.size() > kMaxNames)
        return QStringLiteral("folder of %1 entries").arg(entries.size());
    QStringList names;
    for (const FileInfo &e : std::as_const(entries)) {
        const QString name = e.path.section(u'/', -1);
        names.append(e.isDir ? name + u'/' : name);
    }
    names.sort();
    return recordedHash(names.join(u'\n').toUtf8());
}

// ---- the recorder -----------------------------------------------------------------------------

namespace {

/// The paths `ignore` does not match.
QStringList kept(const QStringList &paths, const GlobSet &ignore)
{
    QStringList out;
    for (const QString &p : paths) {
        if (!ignore.matchesPathOrParent(p, false))
            out.append(p);
    }
    return out;
}

/// A changed path class as an expectation: the exact list when it is whole (without the
/// ignored paths), else the count.
QJsonValue pathsOrCount(const QStringList &paths, qint64 count, const GlobSet &ignore)
{
    if (paths.size() != count)
        return count;
    return QJsonArray::fromStringList(kept(paths, ignore));
}

QString stepLabel(int number, const QString &tool, const QJsonObject &args)
{
    QString what = args.value(QStringLiteral("command")).toString();
    if (what.isEmpty())
        what = args.value(QStringLiteral("path")).toString();
    what = what.simplified();
    if (what.size() > 60)
        what = what.left(59) + QStringLiteral("…");
    return what.isEmpty() ? QStringLiteral("%1 %2").arg(number).arg(tool)
                          : QStringLiteral("%1 %2 %3").arg(number).arg(tool, what);
}

} // namespace

struct SessionRecorder::State
{
    mutable QMutex mutex;
    bool recording = true;
    QStringList agents;
    QStringList ignorePatterns;
    GlobSet ignore;
    QString checkpoint;
    QByteArray digest;
    QString name;
    QString workspaceId;
    QString startedAt;
    int maxSteps = 0;
    qint64 maxBytes = 0;
    qint64 bytes = 0;
    int dropped = 0;
    QList<QJsonObject> steps;
    QString firstActor, firstMode;
    std::weak_ptr<TimeTravel> timeTravel;
    quint64 observer = 0;
    std::weak_ptr<Sandbox> sandbox;

    /// The step of one finished call: its arguments and what it was seen to do.
    QJsonObject step(const FinishedCall &call, ExecutionBackend *backend) const
    {
        QJsonObject expect;
        if (!call.ok) {
            expect.insert(QStringLiteral("error"), call.errorType);
        } else if (!call.data.value(QStringLiteral("running")).toBool()) {
            // (a command that outlived execute's soft return has no end to expect)
            if (call.tool == QLatin1String("execute") &&
                call.data.value(QStringLiteral("exit_code")).isDouble())
                expect.insert(QStringLiteral("exit_code"),
                              call.data.value(QStringLiteral("exit_code")).toInt());
            if (call.changes.tracked) {
                const CallChanges &c = call.changes;
                expect.insert(QStringLiteral("changes"),
                              QJsonObject{{QStringLiteral("added"),
                                           pathsOrCount(c.addedPaths, c.added, ignore)},
                                          {QStringLiteral("modified"),
                                           pathsOrCount(c.modifiedPaths, c.modified, ignore)},
                                          {QStringLiteral("deleted"),
                                           pathsOrCount(c.deletedPaths, c.deleted, ignore)}});
                QJsonObject files;
                if (backend) {
                    for (const QStringList *list : {&c.addedPaths, &c.modifiedPaths}) {
                        for (const QString &path : kept(*list, ignore)) {
                            try {
                                files.insert(path, workspaceEntryState(*backend, path));
                            } catch (const SandboxError &) {
                                files.insert(path, QStringLiteral("other")); // unreadable
                            }
                        }
                    }
                }
                if (!files.isEmpty())
                    expect.insert(QStringLiteral("files"), files);
            }
            const QJsonValue content = call.data.value(QStringLiteral("content"));
            if (call.tool == QLatin1String("read_file") && content.isString())
                expect.insert(QStringLiteral("content_sha256"),
                              recordedHash(content.toString().toUtf8()));
            const QJsonValue path = call.args.value(QStringLiteral("path"));
            if (call.tool == QLatin1String("list_dir") && backend && path.isString()) {
                try {
                    expect.insert(QStringLiteral("names_sha256"),
                                  listDirNamesHash(*backend, path.toString()));
                } catch (const SandboxError &) {
                    // unreadable now: nothing to expect
                }
            }
        }
        QJsonObject step{{QStringLiteral("tool"), call.tool}};
        if (!call.args.isEmpty())
            step.insert(QStringLiteral("args"), call.args);
        if (!expect.isEmpty())
            step.insert(QStringLiteral("expect"), expect);
        // The actor of each step: the plan's agent is named once, the others per step.
        step.insert(QStringLiteral("agent"),
                    QJsonObject{{QStringLiteral("name"), call.actor},
                                {QStringLiteral("mode"),
                                 call.mode.isEmpty() ? QStringLiteral("read_write") : call.mode}});
        return step;
    }

    void record(const FinishedCall &call)
    {
        {
            QMutexLocker lock(&mutex);
            if (!recording || (!agents.isEmpty() && !agents.contains(call.actor)))
                return;
        }
        const SandboxPtr box = sandbox.lock();
        const BackendPtr backend = box ? box->backend() : nullptr;
        const QJsonObject s = step(call, backend.get()); // reads files: outside the lock
        const qint64 size = QJsonDocument(s).toJson(QJsonDocument::Compact).size() + 128;
        QMutexLocker lock(&mutex);
        if (!recording)
            return;
        if (steps.size() >= maxSteps || bytes + size > maxBytes) {
            ++dropped;
            return;
        }
        if (steps.isEmpty()) {
            firstActor = call.actor;
            firstMode = s.value(QStringLiteral("agent"))
                            .toObject()
                            .value(QStringLiteral("mode"))
                            .toString();
        }
        bytes += size;
        steps.append(s);
    }

    void detach()
    {
        quint64 id = 0;
        {
            QMutexLocker lock(&mutex);
            recording = false;
            id = std::exchange(observer, 0);
        }
        if (const auto tt = timeTravel.lock(); tt && id)
            tt->removeCallObserver(id);
    }
};

SessionRecorder::SessionRecorder(SandboxPtr sandbox, Options options)
    : m_state(std::make_shared<State>())
{
    if (!sandbox)
        throw ValueError(QStringLiteral("a session recorder needs a sandbox"));
    const TimeTravelOptions &tto = sandbox->options().timeTravel;
    if (!tto.checkpoints || !tto.trackChanges)
        throw ValueError(QStringLiteral("recording sandbox '%1' needs checkpoints and change "
                                        "tracking (--checkpoints and --track-changes)")
                             .arg(sandbox->workspaceId()));
    const auto tt = sandbox->timeTravel();
    if (!tt)
        throw OSError(QStringLiteral("sandbox '%1' is not started: start it, then record")
                          .arg(sandbox->workspaceId()));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    State &s = *m_state;
    s.agents = options.agents;
    s.ignorePatterns = options.ignore;
    s.ignore = GlobSet(options.ignore);
    s.checkpoint =
        options.checkpoint.isEmpty()
            ? QStringLiteral("recording-") + now.toString(QStringLiteral("yyyyMMdd-hhmmss"))
            : options.checkpoint;
    s.name = options.name.isEmpty() ? s.checkpoint : options.name;
    s.workspaceId = sandbox->workspaceId();
    s.startedAt = now.toString(Qt::ISODate);
    s.maxSteps = options.maxSteps;
    s.maxBytes = options.maxPlanBytes;
    s.sandbox = sandbox;
    s.timeTravel = tt;
    sandbox->checkpoint(s.checkpoint, QStringLiteral("the start of a recorded session"));
    s.digest = treeDigest(tt->manifest(s.checkpoint));
    // The observer holds the state, not the recorder: a call ending on another thread while
    // the recorder goes away finds it still there, and no longer recording.
    s.observer =
        tt->addCallObserver([state = std::weak_ptr<State>(m_state)](const FinishedCall &call) {
            if (const auto s = state.lock())
                s->record(call);
        });
}

SessionRecorder::~SessionRecorder()
{
    m_state->detach();
}

void SessionRecorder::stop()
{
    m_state->detach();
}

bool SessionRecorder::isRecording() const
{
    QMutexLocker lock(&m_state->mutex);
    return m_state->recording;
}

QString SessionRecorder::checkpoint() const
{
    return m_state->checkpoint;
}

QByteArray SessionRecorder::startDigest() const
{
    return m_state->digest;
}

int SessionRecorder::steps() const
{
    QMutexLocker lock(&m_state->mutex);
    return int(m_state->steps.size());
}

int SessionRecorder::dropped() const
{
    QMutexLocker lock(&m_state->mutex);
    return m_state->dropped;
}

QJsonObject SessionRecorder::plan() const
{
    const State &s = *m_state;
    QMutexLocker lock(&s.mutex);
    if (s.steps.isEmpty())
        throw ValueError(QStringLiteral("nothing was recorded in sandbox '%1' (no tool call%2 "
                                        "since the recording started)")
                             .arg(s.workspaceId, s.agents.isEmpty() ? QString()
                                                                    : QStringLiteral(" of %1").arg(
                                                                          s.agents.join(u", "))));
    QJsonArray steps;
    for (int i = 0; i < s.steps.size(); ++i) {
        QJsonObject step = s.steps.at(i);
        step.insert(QStringLiteral("name"),
                    stepLabel(i + 1, step.value(QStringLiteral("tool")).toString(),
                              step.value(QStringLiteral("args")).toObject()));
        const QJsonObject agent = step.value(QStringLiteral("agent")).toObject();
        if (agent.value(QStringLiteral("name")).toString() == s.firstActor &&
            agent.value(QStringLiteral("mode")).toString() == s.firstMode)
            step.remove(QStringLiteral("agent"));
        steps.append(step);
    }
    QString description = QStringLiteral("Recorded in sandbox '%1' from %2: %3 calls")
                              .arg(s.workspaceId, s.startedAt)
                              .arg(s.steps.size());
    if (s.dropped > 0)
        description +=
            QStringLiteral("; %1 more calls were left out (the recording's bounds)").arg(s.dropped);
    return {{QStringLiteral("format"), AgentPlan::formatName()},
            {QStringLiteral("version"), AgentPlan::kVersion},
            {QStringLiteral("name"), s.name},
            {QStringLiteral("description"), description},
            {QStringLiteral("agent"), QJsonObject{{QStringLiteral("name"), s.firstActor},
                                                  {QStringLiteral("mode"), s.firstMode}}},
            // every divergence of every step is worth seeing
            {QStringLiteral("stop_on_failure"), false},
            {QStringLiteral("start"),
             QJsonObject{{QStringLiteral("checkpoint"), s.checkpoint},
                         {QStringLiteral("digest"), QString::fromLatin1(s.digest)}}},
            {QStringLiteral("ignore"), QJsonArray::fromStringList(s.ignorePatterns)},
            {QStringLiteral("steps"), steps}};
}

void SessionRecorder::save(const QString &file) const
{
    writeHostFileAtomic(file, QJsonDocument(plan()).toJson(QJsonDocument::Indented), 0600);
}

} // namespace elsai
