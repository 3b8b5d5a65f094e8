// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "calljournal.h"

#include "checkpointstore.h"
#include "errors.h"

#include <QLoggingCategory>

#include <algorithm>

Q_LOGGING_CATEGORY(lcCallJournal, "elsai.calljournal", QtInfoMsg)

namespace elsai {

namespace {

TreeEntry entryOf(const QByteArray &path, const PathState &s)
{
    TreeEntry e;
    e.path = path;
    e.type = s.type;
    e.mode = s.mode;
    e.size = s.type == TreeEntry::Type::Dir ? 0 : s.size;
    e.target = s.target;
    return e;
}

} // namespace

CallJournal::CallJournal(std::shared_ptr<CheckpointStore> store, const QString &baseline,
                         const Limits &limits)
    : m_store(std::move(store)), m_limits(limits), m_baseline(baseline)
{
}

CallJournal::CallJournal(std::shared_ptr<CheckpointStore> store, const QString &baseline)
    : CallJournal(std::move(store), baseline, Limits())
{
}

CallJournal::~CallJournal()
{
    for (const Stored &call : m_calls) {
        for (const auto &pin : call.pins)
            m_store->unpin(pin.first);
    }
}

void CallJournal::pinLocked(Stored &call, const QByteArray &hash, qint64 size, bool storePinned)
{
    if (!storePinned)
        m_store->pin(hash);
    call.pins.append({hash, size});
    if (m_pinCounts[hash]++ == 0)
        m_pinnedBytes += size;
}

void CallJournal::record(quint64 id, const QList<PathChange> &changed, const Reader &read)
{
    QList<PathChange> sorted = changed;
    std::sort(sorted.begin(), sorted.end(),
              [](const PathChange &a, const PathChange &b) { return pathLess(a.path, b.path); });
    const qsizetype listed = qMin<qsizetype>(sorted.size(), qMax(0, m_limits.maxPathsPerCall));

    // The contents first, outside the journal's lock: each one read, stored and pinned while
    // the store's shared lock keeps its garbage collection out.
    QHash<QByteArray, QByteArray> hashes; // path → hash of the content kept
    qint64 callBytes = 0;
    try {
        const CheckpointStore::Lock storeLock(*m_store, false);
        for (qsizetype i = 0; i < listed; ++i) {
            const PathChange &c = sorted.at(i);
            if (!c.after || c.after->type != TreeEntry::Type::File ||
                c.after->size > m_limits.maxFileBytes ||
                callBytes + c.after->size > m_limits.maxCallBytes)
                continue;
            const std::optional<QByteArray> bytes =
                read(c.path, qMin(m_limits.maxFileBytes, m_limits.maxCallBytes - callBytes));
            if (!bytes)
                continue;
            const QByteArray hash = contentHash(*bytes);
            m_store->addBlob(hash, *bytes);
            m_store->pin(hash);
            hashes.insert(c.path, hash);
            callBytes += bytes->size();
        }
    } catch (const SandboxError &e) {
        qCWarning(lcCallJournal).noquote()
            << QStringLiteral("call %1: its changed contents are not all kept: %2")
                   .arg(id)
                   .arg(e.display());
    }

    QMutexLocker lock(&m_mutex);
    Stored stored;
    stored.record.id = id;
    stored.record.baseline = m_baseline;
    stored.record.unjournaled = sorted.size() - listed;
    if (m_latest.size() + sorted.size() > m_limits.maxKnownPaths) {
        m_latest.clear(); // what was before these paths is unknown from now on
        m_forgotLatest = true;
    }
    for (qsizetype i = 0; i < sorted.size(); ++i) {
        const PathChange &c = sorted.at(i);
        std::optional<TreeEntry> after;
        if (c.after) {
            after = entryOf(c.path, *c.after);
            after->hash = hashes.value(c.path);
        }
        if (i < listed) {
            CallPathState p;
            p.path = c.path;
            const auto known = m_latest.constFind(c.path);
            if (known != m_latest.constEnd()) {
                p.before = *known;
                if (p.before && !p.before->hash.isEmpty())
                    pinLocked(stored, p.before->hash, p.before->size, false);
            } else if (m_forgotLatest) {
                p.beforeUnknown = true;
            } else {
                p.beforeFromBaseline = true;
            }
            p.after = after;
            if (after && !after->hash.isEmpty())
                pinLocked(stored, after->hash, after->size, true);
            stored.record.paths.append(p);
        }
        m_latest.insert(c.path, after);
    }
    m_calls.push_back(std::move(stored));
    evictLocked();
}

void CallJournal::evictLocked()
{
    while (!m_calls.empty() && (m_calls.size() > size_t(qMax(1, m_limits.maxCalls)) ||
                                (m_pinnedBytes > m_limits.maxPinnedBytes && m_calls.size() > 1))) {
        for (const auto &[hash, size] : std::as_const(m_calls.front().pins)) {
            m_store->unpin(hash);
            const auto it = m_pinCounts.find(hash);
            if (it != m_pinCounts.end() && --*it <= 0) {
                m_pinCounts.erase(it);
                m_pinnedBytes -= size;
            }
        }
        m_calls.pop_front();
    }
}

void CallJournal::rebase(const QString &checkpoint)
{
    QMutexLocker lock(&m_mutex);
    m_baseline = checkpoint;
    m_latest.clear();
    m_forgotLatest = false;
}

std::optional<CallJournalRecord> CallJournal::call(quint64 id) const
{
    QMutexLocker lock(&m_mutex);
    // In the order the calls ended (ids are in the order they began): the newest first.
    const auto it = std::find_if(m_calls.crbegin(), m_calls.crend(),
                                 [id](const Stored &s) { return s.record.id == id; });
    if (it == m_calls.crend())
        return std::nullopt;
    return it->record;
}

QString CallJournal::baseline() const
{
    QMutexLocker lock(&m_mutex);
    return m_baseline;
}

qint64 CallJournal::pinnedBytes() const
{
    QMutexLocker lock(&m_mutex);
    return m_pinnedBytes;
}

} // namespace elsai
