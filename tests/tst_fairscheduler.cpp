// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "fairscheduler.h"

#include <QMutex>
#include <QSemaphore>
#include <QtTest>

using namespace elsai;

/// FairScheduler: the share bound per owner and round-robin over owners, asserted on the order
/// tasks run in (never on timing).
class TestFairScheduler : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void queuedTasksAreTakenRoundRobin()
    {
        FairScheduler scheduler(1, 1);
        QSemaphore gate;
        QMutex mutex;
        QStringList order;
        auto record = [&](const QString &name) {
            return [&, name] {
                QMutexLocker lock(&mutex);
                order.append(name);
            };
        };
        scheduler.start(QStringLiteral("a"), [&] { gate.acquire(); }); // holds the one worker
        for (const char *name : {"a1", "a2", "a3"})
            scheduler.start(QStringLiteral("a"), record(QLatin1String(name)));
        scheduler.start(QStringLiteral("b"), record(QStringLiteral("b1")));
        QCOMPARE(scheduler.queued(QStringLiteral("a")), 3);
        QCOMPARE(scheduler.queued(QStringLiteral("b")), 1);
        gate.release();
        scheduler.waitForDone();
        // In arrival order b1 would come last.
        QCOMPARE(order, QStringList({"a1", "b1", "a2", "a3"}));
    }

    void anOwnerAtItsShareLeavesWorkersToOthers()
    {
        FairScheduler scheduler(3, 2);
        QSemaphore gate;
        for (int i = 0; i < 3; ++i)
            scheduler.start(QStringLiteral("busy"), [&] { gate.acquire(); });
        QCOMPARE(scheduler.running(QStringLiteral("busy")), 2);
        QCOMPARE(scheduler.queued(QStringLiteral("busy")), 1);
        // Runs while every task of "busy" is blocked: it did not queue behind them.
        QSemaphore done;
        scheduler.start(QStringLiteral("quick"), [&] { done.release(); });
        QVERIFY(done.tryAcquire(1, 60000));
        QCOMPARE(scheduler.running(QStringLiteral("busy")), 2);
        gate.release(3);
        scheduler.waitForDone();
        QCOMPARE(scheduler.running(QStringLiteral("busy")), 0);
        QCOMPARE(scheduler.queued(QStringLiteral("busy")), 0);
    }

    void limitsAreBounded()
    {
        FairScheduler scheduler(0, 5);
        QCOMPARE(scheduler.total(), 1);
        QCOMPARE(scheduler.perOwner(), 1);
        scheduler.setLimits(4, 9);
        QCOMPARE(scheduler.perOwner(), 4);
    }
};

QTEST_GUILESS_MAIN(TestFairScheduler)
#include "tst_fairscheduler.moc"
