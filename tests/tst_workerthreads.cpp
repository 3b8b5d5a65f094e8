// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// WorkerThreads: a thread for every task at once, reused while idle, ended after the idle
// expiry, and a clear failure (never a task kept forever) when no thread can be had.

#include "procself.h"
#include "workerthreads.h"

#include <QDir>
#include <QtTest>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <system_error>

#include <unistd.h>

using namespace elsai;
using namespace std::chrono_literals;

namespace {

/// Blocks the tasks that wait on it until released (bounded: a test never hangs).
class Gate
{
public:
    void wait()
    {
        std::unique_lock lock(m_mutex);
        ++m_waiting;
        m_changed.notify_all();
        m_changed.wait_for(lock, 30s, [this] { return m_open; });
    }
    bool waitForWaiting(int n)
    {
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(lock, 30s, [&] { return m_waiting >= n; });
    }
    void open()
    {
        std::lock_guard lock(m_mutex);
        m_open = true;
        m_changed.notify_all();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    int m_waiting = 0;
    bool m_open = false;
};

} // namespace

class TestWorkerThreads : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sequentialTasksReuseThreads()
    {
        WorkerThreads threads;
        std::set<pid_t> ran;
        for (int i = 0; i < 30; ++i) {
            std::promise<pid_t> done;
            auto result = done.get_future();
            threads.run([&done] { done.set_value(::gettid()); });
            QVERIFY(result.wait_for(30s) == std::future_status::ready);
            ran.insert(result.get());
        }
        // one thread each would be 30; a thread can still be on its way back to idle when
        // the next task comes, so a few
        QVERIFY2(ran.size() <= 4, qPrintable(QString::number(ran.size())));
        QVERIFY(threads.threadCount() <= 4);
        QVERIFY(!ran.contains(::gettid()));
    }

    void tasksNeverWaitForEachOther()
    {
        Gate gate; // outlives the threads that wait on it
        WorkerThreads threads;
        std::atomic<int> finished{0};
        for (int i = 0; i < 5; ++i) {
            threads.run([&] {
                gate.wait();
                ++finished;
            });
        }
        QVERIFY(gate.waitForWaiting(5)); // all five blocked at once: none was queued
        QCOMPARE(threads.threadCount(), 5);
        gate.open();
        QTRY_COMPARE_WITH_TIMEOUT(finished.load(), 5, 30000);
    }

    void idleThreadsExpire()
    {
        WorkerThreads threads(50ms);
        std::promise<void> done;
        threads.run([&done] { done.set_value(); });
        QVERIFY(done.get_future().wait_for(30s) == std::future_status::ready);
        QTRY_COMPARE_WITH_TIMEOUT(threads.threadCount(), 0, 10000);
        // and a new task gets a new thread (the expired one is joined on the way)
        std::promise<void> again;
        threads.run([&again] { again.set_value(); });
        QVERIFY(again.get_future().wait_for(30s) == std::future_status::ready);
    }

    // Beyond the bound, as when the system has no thread left: run() throws and the task
    // never runs; once a thread is free again, tasks run.
    void noThreadLeftFailsClearly()
    {
        Gate gate;
        WorkerThreads threads(30s, 1);
        threads.run([&gate] { gate.wait(); });
        QVERIFY(gate.waitForWaiting(1));
        std::atomic<bool> ran{false};
        QVERIFY_THROWS_EXCEPTION(std::system_error, threads.run([&ran] { ran = true; }));
        gate.open();
        std::promise<void> done;
        bool started = false; // the thread may not be back to idle at once: a bounded retry
        QElapsedTimer clock;
        clock.start();
        while (!started && clock.elapsed() < 10000) {
            try {
                threads.run([&done] { done.set_value(); });
                started = true;
            } catch (const std::system_error &) {
                QTest::qWait(10);
            }
        }
        QVERIFY(started);
        QVERIFY(done.get_future().wait_for(30s) == std::future_status::ready);
        QVERIFY(!ran);
    }

    // The destructor waits for a running task, and leaves no thread behind.
    void destructionWaitsForRunningTasks()
    {
        const auto tasks = [] { return test::procSelfEntries("task"); };
        const int before = tasks();
        std::atomic<bool> finished{false};
        {
            Gate gate;
            WorkerThreads threads;
            threads.run([&] {
                gate.wait();
                std::this_thread::sleep_for(100ms);
                finished = true;
            });
            threads.run([] {}); // and one idle thread
            QVERIFY(gate.waitForWaiting(1));
            gate.open();
        }
        QVERIFY(finished);
        QTRY_COMPARE_WITH_TIMEOUT(tasks(), before, 5000); // an exiting thread is listed briefly
    }
};

QTEST_GUILESS_MAIN(TestWorkerThreads)
#include "tst_workerthreads.moc"
