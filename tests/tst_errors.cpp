// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// describeError(): the one conversion from an exception to the spec's type name and message
// that every edge (headless output, MCP, plans, the models and the window) uses.

#include "errors.h"

#include <QException>
#include <QFuture>
#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <QtTest>

#include <new>
#include <stdexcept>

using namespace elsai;

class TestErrors : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void describesEveryKind_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("message");
        // clang-format off
        QTest::newRow("sandbox error") << 0 << "SandboxMutationDeniedError" << "read-only";
        QTest::newRow("os subclass") << 1 << "FileNotFoundError" << "gone";
        QTest::newRow("std exception") << 2 << "RuntimeError" << "boom";
        QTest::newRow("bad_alloc") << 3 << "MemoryError" << "out of memory";
        QTest::newRow("not an exception") << 4 << "RuntimeError" << "unknown error";
        // clang-format on
    }
    void describesEveryKind()
    {
        QFETCH(int, kind);
        QFETCH(QString, type);
        QFETCH(QString, message);
        const auto raise = [kind] {
            switch (kind) {
            case 0:
                throw SandboxMutationDeniedError(QStringLiteral("read-only"));
            case 1:
                throw FileNotFoundError(QStringLiteral("gone"), ENOENT);
            case 2:
                throw std::runtime_error("boom");
            case 3:
                throw std::bad_alloc();
            default:
                throw 42;
            }
        };
        // inside a catch block, from a captured exception, and through a QtConcurrent future
        try {
            raise();
        } catch (...) {
            const ErrorDescription d = describeCurrentError();
            QCOMPARE(d.type, type);
            QCOMPARE(d.message, message);
            QCOMPARE(d.display(), type + QStringLiteral(": ") + message);
            const ErrorDescription captured = describeError(std::current_exception());
            QCOMPARE(captured.type, type);
            QCOMPARE(captured.message, message);
        }
        QFuture<void> f = QtConcurrent::run(raise);
        try {
            f.waitForFinished();
            QFAIL("no exception");
        } catch (...) {
            const ErrorDescription d = describeCurrentError();
            QCOMPARE(d.type, type);
            if (kind != 4) // QtConcurrent loses what a non-exception carried
                QCOMPARE(d.message, message);
        }
    }

    void nullIsUnknown()
    {
        QCOMPARE(describeError(std::exception_ptr()).type, QStringLiteral("RuntimeError"));
    }
};

QTEST_GUILESS_MAIN(TestErrors)
#include "tst_errors.moc"
