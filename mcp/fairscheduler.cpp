// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "fairscheduler.h"

namespace elsai {

FairScheduler::FairScheduler(int total, int perOwner)
{
    setLimits(total, perOwner);
}

FairScheduler::~FairScheduler()
{
    waitForDone();
}

void FairScheduler::setLimits(int total, int perOwner)
{
    QMutexLocker lock(&m_mutex);
    m_total = qMax(1, total);
    m_perOwner = qBound(1, perOwner, m_total);
    // The pool never refuses a task this scheduler starts: it starts at most m_total at once.
    m_pool.setMaxThreadCount(qMax(m_total, m_pool.maxThreadCount()));
    dispatchLocked();
}

int FairScheduler::total() const
{
    QMutexLocker lock(&m_mutex);
    return m_total;
}

int FairScheduler::perOwner() const
{
    QMutexLocker lock(&m_mutex);
    return m_perOwner;
}

void FairScheduler::start(const QString &owner, std::function<void()> task)
{
    QMutexLocker lock(&m_mutex);
    Owner &o = m_owners[owner];
    o.queue.push_back(std::move(task));
    if (!m_ring.contains(owner))
        m_ring.append(owner);
    dispatchLocked();
}

void FairScheduler::dispatchLocked()
{
    // Round-robin: each pass over the ring starts at most one task per owner.
    bool started = true;
    while (started && m_running < m_total && !m_ring.isEmpty()) {
        started = false;
        for (qsizetype i = 0; i < m_ring.size() && m_running < m_total;) {
            const QString name = m_ring.at(i);
            Owner &o = m_owners[name];
            if (o.running >= m_perOwner) {
                ++i;
                continue;
            }
            std::function<void()> task = std::move(o.queue.front());
            o.queue.pop_front();
            ++o.running;
            ++m_running;
            started = true;
            // Served: to the back of the ring (or out of it when it has nothing left).
            m_ring.removeAt(i);
            if (!o.queue.empty())
                m_ring.append(name);
            m_pool.start([this, name, task = std::move(task)] {
                task();
                finished(name);
            });
        }
    }
}

void FairScheduler::finished(const QString &owner)
{
    QMutexLocker lock(&m_mutex);
    auto it = m_owners.find(owner);
    --it->running;
    --m_running;
    if (it->running == 0 && it->queue.empty())
        m_owners.erase(it);
    dispatchLocked();
}

void FairScheduler::waitForDone()
{
    // Queued tasks start as running ones finish; wait until none of either is left.
    for (;;) {
        m_pool.waitForDone();
        QMutexLocker lock(&m_mutex);
        if (m_running == 0 && m_ring.isEmpty())
            return;
    }
}

int FairScheduler::running(const QString &owner) const
{
    QMutexLocker lock(&m_mutex);
    return m_owners.value(owner).running;
}

int FairScheduler::queued(const QString &owner) const
{
    QMutexLocker lock(&m_mutex);
    return int(m_owners.value(owner).queue.size());
}

} // namespace elsai
