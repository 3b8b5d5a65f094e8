// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcpprogress.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace elsai {

using Clock = std::chrono::steady_clock;

struct ProgressTicker::State
{
    struct Entry
    {
        Clock::time_point due;
        std::chrono::milliseconds interval;
        Callback callback;
    };
    std::mutex mutex;
    std::condition_variable wake;
    std::map<quint64, Entry> entries;
    quint64 nextId = 1;
    quint64 running = 0;              ///< the id whose callback runs now (0 = none)
    std::condition_variable finished; ///< a callback returned
    bool quit = false;
    std::thread thread;
};

ProgressTicker &ProgressTicker::instance()
{
    static ProgressTicker ticker;
    return ticker;
}

ProgressTicker::ProgressTicker() : d(std::make_unique<State>())
{
    d->thread = std::thread([this] { run(); });
}

ProgressTicker::~ProgressTicker()
{
    {
        std::lock_guard lock(d->mutex);
        d->quit = true;
    }
    d->wake.notify_all();
    d->thread.join();
}

ProgressTicker::Registration ProgressTicker::start(std::chrono::milliseconds interval,
                                                   Callback callback)
{
    interval = std::max(interval, std::chrono::milliseconds(10)); // never a busy loop
    quint64 id = 0;
    {
        std::lock_guard lock(d->mutex);
        id = d->nextId++;
        d->entries.emplace(id,
                           State::Entry{Clock::now() + interval, interval, std::move(callback)});
    }
    d->wake.notify_all();
    return Registration(id);
}

void ProgressTicker::stop(quint64 id)
{
    std::unique_lock lock(d->mutex);
    d->entries.erase(id);
    // A callback of this registration that already started finishes first: nothing of it
    // may follow the response its caller sends next.
    d->finished.wait(lock, [&] { return d->running != id; });
}

void ProgressTicker::run()
{
    std::unique_lock lock(d->mutex);
    while (!d->quit) {
        if (d->entries.empty()) {
            d->wake.wait(lock);
            continue;
        }
        auto next = d->entries.begin();
        for (auto it = d->entries.begin(); it != d->entries.end(); ++it) {
            if (it->second.due < next->second.due)
                next = it;
        }
        if (const Clock::time_point due = next->second.due; Clock::now() < due) {
            // a copy: stop() may erase the entry while we wait, and wait_until reads its
            // deadline again on waking
            d->wake.wait_until(lock, due);
            continue; // re-evaluate: entries may have changed
        }
        const quint64 id = next->first;
        next->second.due = Clock::now() + next->second.interval;
        const Callback callback = next->second.callback;
        d->running = id;
        lock.unlock();
        callback();
        lock.lock();
        d->running = 0;
        d->finished.notify_all();
    }
}

ProgressTicker::Registration::~Registration()
{
    if (m_id)
        ProgressTicker::instance().stop(m_id);
}

ProgressTicker::Registration::Registration(Registration &&other) noexcept : m_id(other.m_id)
{
    other.m_id = 0;
}

ProgressTicker::Registration &ProgressTicker::Registration::operator=(Registration &&other) noexcept
{
    if (this != &other) {
        if (m_id)
            ProgressTicker::instance().stop(m_id);
        m_id = other.m_id;
        other.m_id = 0;
    }
    return *this;
}

} // namespace elsai
