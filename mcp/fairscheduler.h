// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QHash>
#include <QMutex>
#include <QString>
#include <QStringList>
#include <QThreadPool>

#include <deque>
#include <functional>

namespace elsai {

/// Runs tasks of several owners (MCP agents) on a bounded set of worker threads so that a slow
/// owner delays only itself: each owner may occupy at most `perOwner` of the `total` workers
/// (the rest stay free for the others), and when a worker frees up the queued tasks are taken
/// round-robin over the owners, not in arrival order. An owner's own tasks keep their order.
///
/// Thread-safe. Workers are not preempted: an owner under its share starts at once as long as
/// the others together hold no more than `total - perOwner` workers.
class FairScheduler
{
public:
    FairScheduler(int total, int perOwner);
    ~FairScheduler();
    FairScheduler(const FairScheduler &) = delete;
    FairScheduler &operator=(const FairScheduler &) = delete;

    /// Changes the bounds (at least 1 each; perOwner at most total). Running tasks stay.
    void setLimits(int total, int perOwner);
    int total() const;
    int perOwner() const;

    void start(const QString &owner, std::function<void()> task);
    /// Waits until every queued and running task has finished.
    void waitForDone();

    int running(const QString &owner) const;
    int queued(const QString &owner) const;

private:
    struct Owner
    {
        std::deque<std::function<void()>> queue;
        int running = 0;
    };
    void dispatchLocked();
    void finished(const QString &owner);

    mutable QMutex m_mutex;
    int m_total;
    int m_perOwner;
    int m_running = 0;
    QHash<QString, Owner> m_owners;
    QStringList m_ring; ///< owners with queued tasks, in the order they are served
    QThreadPool m_pool;
};

} // namespace elsai
