// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace elsai {

/// Files per unit of parallel file work (a folder's files come in chunks of this size), and per
/// extra thread.
constexpr int kFilesPerThread = 64;
/// Threads of one parallel file job at most, the calling thread included.
constexpr int kMaxFileThreads = 4;

/// Runs `job(unit, done)` for each unit in [0, units) on up to kMaxFileThreads threads (one per
/// kFilesPerThread of `totalFiles`), the calling thread among them; jobs add the files they
/// finish to `done` and must not throw. Progress (files done of `totalFiles`) is reported from
/// the calling thread only, so callers need no locking. The one pool of the seed, the flush and
/// the checkpoint capture (treecopy.h, treesnapshot.h).
template<typename Job>
void runParallel(int units, int totalFiles, const std::function<void(int, int)> &progress,
                 Job &&job)
{
    std::atomic<int> nextUnit{0};
    std::atomic<int> done{0};
    // not capped by the CPU count: the time goes to the kernel's file creation, which runs in
    // parallel across folders, and a busy machine shares CPU per thread
    const int threads = std::min({kMaxFileThreads, 1 + totalFiles / kFilesPerThread, units});
    std::mutex mutex;
    std::condition_variable finished;
    int running = threads - 1;
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
        pool.emplace_back([&] {
            for (int u; (u = nextUnit.fetch_add(1, std::memory_order_relaxed)) < units;)
                job(u, done);
            std::lock_guard lock(mutex);
            --running;
            finished.notify_all();
        });
    }
    int reported = -1;
    auto report = [&] {
        const int d = done.load(std::memory_order_relaxed);
        if (progress && d != reported) {
            reported = d;
            progress(d, totalFiles);
        }
    };
    for (int u; (u = nextUnit.fetch_add(1, std::memory_order_relaxed)) < units;) {
        job(u, done);
        report();
    }
    {
        std::unique_lock lock(mutex);
        while (running > 0) {
            finished.wait_for(lock, std::chrono::milliseconds(100));
            lock.unlock();
            report();
            lock.lock();
        }
    }
    for (std::thread &t : pool)
        t.join();
    report();
}

} // namespace elsai
