// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "workerthreads.h"

#include <system_error>

namespace elsai {

WorkerThreads::WorkerThreads(std::chrono::milliseconds idleExpiry, int maxThreads)
    : m_idleExpiry(idleExpiry), m_maxThreads(maxThreads)
{
}

WorkerThreads::~WorkerThreads()
{
    std::list<std::thread> all;
    {
        // Once stopping, no thread moves itself between the lists: both are ours to join.
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        all.splice(all.end(), m_threads);
        all.splice(all.end(), m_finished);
    }
    m_wake.notify_all();
    for (std::thread &t : all)
        t.join(); // a thread still working returns after its task
}

void WorkerThreads::run(std::function<void()> task)
{
    std::unique_lock lock(m_mutex);
    joinFinished(lock);
    if (m_stopping)
        throw std::system_error(std::make_error_code(std::errc::operation_canceled),
                                "the worker threads are stopping");
    // An idle thread that no earlier task was handed to yet takes it.
    if (m_handed.size() < size_t(m_idle)) {
        m_handed.push_back(std::move(task));
        lock.unlock();
        m_wake.notify_one();
        return;
    }
    if (m_threads.size() >= size_t(m_maxThreads))
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                                "no worker thread is left");
    m_threads.emplace_back();
    const auto self = std::prev(m_threads.end());
    try {
        *self = std::thread(&WorkerThreads::work, this, self, std::move(task));
    } catch (...) {
        m_threads.erase(self);
        throw;
    }
}

int WorkerThreads::threadCount() const
{
    std::lock_guard lock(m_mutex);
    return int(m_threads.size());
}

void WorkerThreads::work(std::list<std::thread>::iterator self, std::function<void()> task)
{
    // `self` is only used under the lock, which run() holds until its entry is assigned.
    for (;;) {
        task();
        task = nullptr; // its captures go before the thread waits
        std::unique_lock lock(m_mutex);
        if (m_stopping)
            return;
        ++m_idle;
        const bool handed =
            m_wake.wait_for(lock, m_idleExpiry, [this] { return m_stopping || !m_handed.empty(); });
        --m_idle;
        if (!handed || m_handed.empty()) {
            // Expired (joined by the next run() or the destructor), or stopping.
            if (!m_stopping)
                m_finished.splice(m_finished.end(), m_threads, self);
            return;
        }
        // A task handed over runs, also when stopping: run() promised it a thread.
        task = std::move(m_handed.front());
        m_handed.pop_front();
    }
}

void WorkerThreads::joinFinished(std::unique_lock<std::mutex> &lock)
{
    if (m_finished.empty())
        return;
    std::list<std::thread> done;
    done.splice(done.end(), m_finished);
    lock.unlock();
    for (std::thread &t : done)
        t.join(); // each has returned from work() or is about to
    lock.lock();
}

} // namespace elsai
