// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "processregistry.h"

#include <algorithm>
#include <utility>

namespace elsai {

QString ProcessEntry::kindName(Kind kind)
{
    switch (kind) {
    case Kind::Terminal:
        return QStringLiteral("terminal");
    case Kind::Command:
        return QStringLiteral("command");
    case Kind::Background:
        return QStringLiteral("background");
    }
    return {};
}

ProcessRegistry &ProcessRegistry::instance()
{
    static ProcessRegistry registry;
    return registry;
}

quint64 ProcessRegistry::add(ProcessEntry entry, ProcessHooks hooks)
{
    QMutexLocker lock(&m_mutex);
    entry.id = m_next++;
    if (entry.startedAt.isNull())
        entry.startedAt = QDateTime::currentDateTimeUtc();
    const quint64 id = entry.id;
    m_items.insert(id, Item{std::move(entry), std::move(hooks), {}});
    ++m_generation;
    return id;
}

void ProcessRegistry::remove(quint64 id)
{
    QMutexLocker lock(&m_mutex);
    if (m_items.remove(id))
        ++m_generation;
}

void ProcessRegistry::setPid(quint64 id, qint64 pid)
{
    QMutexLocker lock(&m_mutex);
    if (const auto it = m_items.find(id); it != m_items.end()) {
        it->entry.pid = pid;
        ++m_generation;
    }
}

void ProcessRegistry::setForeground(quint64 id, const QString &command, bool stopped)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_items.find(id);
    if (it == m_items.end())
        return;
    if (it->entry.foreground != command || (stopped && it->entry.stopping)) {
        it->entry.foreground = command;
        it->entry.stopping = it->entry.stopping && !stopped;
        ++m_generation;
    }
}

void ProcessRegistry::appendOutput(quint64 id, const QByteArray &bytes)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_items.find(id);
    if (it == m_items.end())
        return;
    QByteArray &tail = it->tail;
    if (bytes.size() >= OutputTailBytes) {
        tail = bytes.right(OutputTailBytes);
        return;
    }
    const qsizetype excess = tail.size() + bytes.size() - OutputTailBytes;
    if (excess > 0)
        tail.remove(0, excess);
    tail.append(bytes);
}

QList<ProcessEntry> ProcessRegistry::list(const QString &workspaceId) const
{
    QList<ProcessEntry> out;
    {
        QMutexLocker lock(&m_mutex);
        for (const Item &item : m_items) {
            if (workspaceId.isEmpty() || item.entry.workspaceId == workspaceId)
                out.append(item.entry);
        }
    }
    std::sort(out.begin(), out.end(),
              [](const ProcessEntry &a, const ProcessEntry &b) { return a.id < b.id; });
    return out;
}

std::optional<ProcessEntry> ProcessRegistry::find(quint64 id) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_items.constFind(id);
    if (it == m_items.constEnd())
        return std::nullopt;
    return it->entry;
}

QByteArray ProcessRegistry::output(quint64 id) const
{
    std::function<QByteArray()> source;
    {
        QMutexLocker lock(&m_mutex);
        const auto it = m_items.constFind(id);
        if (it == m_items.constEnd())
            return {};
        if (!it->hooks.output)
            return it->tail;
        source = it->hooks.output;
    }
    return source(); // outside the lock: the source may take its own
}

bool ProcessRegistry::stop(quint64 id)
{
    std::function<void()> stop;
    {
        QMutexLocker lock(&m_mutex);
        const auto it = m_items.find(id);
        if (it == m_items.end())
            return false;
        it->entry.stopping = true;
        ++m_generation;
        stop = it->hooks.stop;
    }
    if (stop)
        stop();
    return true;
}

quint64 ProcessRegistry::generation() const
{
    QMutexLocker lock(&m_mutex);
    return m_generation;
}

ProcessRegistration::ProcessRegistration(ProcessEntry entry, ProcessHooks hooks)
    : m_id(ProcessRegistry::instance().add(std::move(entry), std::move(hooks)))
{
}

ProcessRegistration::~ProcessRegistration()
{
    reset();
}

ProcessRegistration::ProcessRegistration(ProcessRegistration &&other) noexcept
    : m_id(std::exchange(other.m_id, 0))
{
}

ProcessRegistration &ProcessRegistration::operator=(ProcessRegistration &&other) noexcept
{
    if (this != &other) {
        reset();
        m_id = std::exchange(other.m_id, 0);
    }
    return *this;
}

void ProcessRegistration::reset()
{
    if (m_id)
        ProcessRegistry::instance().remove(std::exchange(m_id, 0));
}

} // namespace elsai
