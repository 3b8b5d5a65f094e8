// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "changetracker.h"

#include "errors.h"

#include <QDateTime>
#include <QJsonArray>

#include <algorithm>

namespace elsai {

QJsonObject CallChanges::toJson() const
{
    return {{QStringLiteral("added"), added},
            {QStringLiteral("modified"), modified},
            {QStringLiteral("deleted"), deleted},
            {QStringLiteral("symlinks"), symlinks},
            {QStringLiteral("attribution"), attribution()},
            {QStringLiteral("paths"),
             QJsonObject{{QStringLiteral("added"), QJsonArray::fromStringList(addedPaths)},
                         {QStringLiteral("modified"), QJsonArray::fromStringList(modifiedPaths)},
                         {QStringLiteral("deleted"), QJsonArray::fromStringList(deletedPaths)}}},
            {QStringLiteral("paths_truncated"), pathsTruncated}};
}

QJsonObject CallChanges::auditJson() const
{
    return {{QStringLiteral("added"), added},
            {QStringLiteral("modified"), modified},
            {QStringLiteral("deleted"), deleted},
            {QStringLiteral("attribution"), attribution()}};
}

ChangeTracker::ChangeTracker(const BackendPtr &backend, int maxWatches, int maxListedPaths)
    : m_maxListed(qMax(0, maxListedPaths))
{
    m_watch = backend->watchTree(qMax(1, maxWatches));
    if (!m_watch)
        throw OSError(QStringLiteral("the %1 backend cannot track changes yet; start the sandbox "
                                     "without change tracking")
                          .arg(backend->typeName()),
                      ENOTSUP);
}

ChangeTracker::~ChangeTracker() = default;

void ChangeTracker::drainLocked()
{
    const QList<PathChange> changes = m_watch->drain();
    if (changes.isEmpty() || m_running.isEmpty())
        return; // nobody's: a host edit, a background process between calls
    const bool shared = m_running.size() > 1;
    for (Call &call : m_running) {
        call.shared = call.shared || shared;
        for (const PathChange &c : changes) {
            auto it = call.paths.find(c.path);
            if (it == call.paths.end())
                call.paths.insert(c.path, {c.before, c.after});
            else
                it->second = c.after;
        }
    }
}

void ChangeTracker::begin(quint64 id, const QString &actor, const QString &tool)
{
    QMutexLocker lock(&m_mutex);
    drainLocked(); // what happened before belongs to the calls running then
    m_running.insert(id, {actor, tool, QDateTime::currentMSecsSinceEpoch(), {}, false});
}

CallChanges ChangeTracker::summarize(const Call &call) const
{
    CallChanges out;
    out.tracked = true;
    out.shared = call.shared;
    QList<QByteArray> paths = call.paths.keys();
    std::sort(paths.begin(), paths.end());
    const auto list = [&](QStringList &into, const QByteArray &path) {
        if (into.size() < m_maxListed)
            into.append(QString::fromUtf8(path));
        else
            out.pathsTruncated = true;
    };
    for (const QByteArray &p : std::as_const(paths)) {
        const auto &[before, after] = call.paths.value(p);
        const bool retyped = before && after && before->type != after->type;
        if (before && (!after || retyped)) {
            ++out.deleted;
            list(out.deletedPaths, p);
        }
        if (after && (!before || retyped)) {
            ++out.added;
            out.symlinks += after->type == TreeEntry::Type::Symlink ? 1 : 0;
            list(out.addedPaths, p);
        }
        if (before && after && !retyped && !(*before == *after)) {
            ++out.modified;
            list(out.modifiedPaths, p);
        }
    }
    return out;
}

CallChanges ChangeTracker::peek(quint64 id)
{
    QMutexLocker lock(&m_mutex);
    drainLocked();
    const auto it = m_running.constFind(id);
    return it == m_running.constEnd() ? CallChanges() : summarize(*it);
}

CallChanges ChangeTracker::end(quint64 id, const QString &outcome, QList<PathChange> *changed)
{
    QMutexLocker lock(&m_mutex);
    drainLocked();
    const auto it = m_running.constFind(id);
    if (it == m_running.constEnd())
        return {};
    CallChangeRecord record{id,
                            it->actor,
                            it->tool,
                            it->startedMs,
                            QDateTime::currentMSecsSinceEpoch(),
                            summarize(*it),
                            outcome};
    if (changed) {
        for (auto p = it->paths.cbegin(); p != it->paths.cend(); ++p) {
            const auto &[before, after] = p.value();
            if (before.has_value() != after.has_value() || (before && !(*before == *after)))
                changed->append({p.key(), before, after});
        }
    }
    m_running.erase(it);
    m_log.push_back(record);
    while (m_log.size() > size_t(MaxLog))
        m_log.pop_front();
    return record.changes;
}

void ChangeTracker::rescan()
{
    QMutexLocker lock(&m_mutex);
    m_watch->reset();
}

std::optional<QSet<QByteArray>> ChangeTracker::takeTouched(bool attribute)
{
    QMutexLocker lock(&m_mutex);
    if (!m_watch->keepsTouched()) {
        // a listing watch: no drain for a capture that walks anyway; what a restore did is
        // nobody's (the next drain starts from the tree as it is now)
        if (!attribute)
            m_watch->reset();
        return std::nullopt;
    }
    if (attribute)
        drainLocked();
    else
        m_watch->drain();
    return m_watch->takeTouched();
}

QList<CallChangeRecord> ChangeTracker::log() const
{
    QMutexLocker lock(&m_mutex);
    return QList<CallChangeRecord>(m_log.begin(), m_log.end());
}

} // namespace elsai
