// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <list>
#include <mutex>
#include <thread>

namespace elsai {

/// Threads for work that may block for a long time (a command that runs for days): each task
/// gets a thread at once, never a queue. A thread that finished its task waits `idleExpiry` for
/// the next one before it ends, so a run of short tasks reuses a few threads instead of making
/// one each.
///
/// Unlike QThreadPool, run() fails when no thread can be made (the user's process limit, which
/// an agent's fork bomb reaches): QThreadPool then keeps the task forever and its destructor
/// waits for it. Thread-safe; the destructor waits for every task to return.
class WorkerThreads
{
public:
    explicit WorkerThreads(std::chrono::milliseconds idleExpiry = std::chrono::seconds(30),
                           int maxThreads = std::numeric_limits<int>::max());
    ~WorkerThreads();
    WorkerThreads(const WorkerThreads &) = delete;
    WorkerThreads &operator=(const WorkerThreads &) = delete;

    /// Runs `task` on an idle thread, or on a new one. Throws std::system_error when there is
    /// none and no thread can be made (also beyond maxThreads): the task then never runs.
    /// `task` must not throw.
    void run(std::function<void()> task);

    /// Threads alive now, working or idle.
    int threadCount() const;

private:
    void work(std::list<std::thread>::iterator self, std::function<void()> task);
    void joinFinished(std::unique_lock<std::mutex> &lock);

    const std::chrono::milliseconds m_idleExpiry;
    const int m_maxThreads;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::function<void()>> m_handed; ///< given to idle threads, not yet taken
    int m_idle = 0;
    bool m_stopping = false;
    std::list<std::thread> m_threads;  ///< alive
    std::list<std::thread> m_finished; ///< ended (expired), to be joined
};

} // namespace elsai
