// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "consolehistorymodel.h"
#include "modelroles.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

using namespace elsai;

namespace {

ExecuteResult result(int exitCode, qint64 ms, bool timedOut = false, bool truncated = false,
                     bool cancelled = false)
{
    ExecuteResult r;
    r.exitCode = exitCode;
    r.durationMs = ms;
    r.timedOut = timedOut;
    r.truncated = truncated;
    r.cancelled = cancelled;
    return r;
}

QStringList commands(const ConsoleHistoryModel &model)
{
    QStringList out;
    for (int row = 0; row < model.rowCount(); ++row)
        out.append(model.index(row).data(Roles::CommandRole).toString());
    return out;
}

} // namespace

class TestConsoleHistoryModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modelTester();
    void runningEntry();
    void streamingChunksArrive();
    void changesAreCoalescedPerRow();
    void floodKeepsMemoryBounded();
    void finish_data();
    void finish();
    void finishWithoutStreamingUsesResult();
    void finishedResultKeepsNoUnboundedOutput();
    void failCommand();
    void maxEntriesDropsOldest();
    void runningEntriesSurviveTrimming();
    void fullOutputsAreBounded();
    void headTailRetention_data();
    void headTailRetention();
    void unknownIdIsIgnored();
    void history_data();
    void history();
    void runsKeepArrivalOrder();
};

void TestConsoleHistoryModel::modelTester()
{
    ConsoleHistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setMaxEntries(4);
    for (quint64 id = 1; id <= 6; ++id) {
        model.beginCommand(id, QStringLiteral("echo %1").arg(id), QStringLiteral("/"));
        model.appendOutput(id, OutputChannel::Stdout, QByteArray::number(id));
        model.appendOutput(id, OutputChannel::Stderr, "err");
        if (id % 2)
            model.finishCommand(id, result(0, 1));
        else
            model.failCommand(id, QStringLiteral("OSError"), QStringLiteral("boom"));
    }
    QCoreApplication::processEvents();
    model.setMaxEntries(2);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(reset.count(), 0);
}

void TestConsoleHistoryModel::runningEntry()
{
    ConsoleHistoryModel model;
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QCOMPARE(model.beginCommand(7, QStringLiteral("make -j4"), QStringLiteral("/ws")), 0);
    QCOMPARE(model.beginCommand(8, QStringLiteral("ls"), QStringLiteral("/ws")), 1);
    QCOMPARE(inserted.count(), 2);
    QCOMPARE(model.rowOf(8), 1);
    const QModelIndex idx = model.index(0);
    QCOMPARE(idx.data().toString(), QStringLiteral("$ make -j4 — running…"));
    QCOMPARE(idx.data(Roles::RunningRole).toBool(), true);
    QVERIFY(!idx.data(Roles::ExitCodeRole).isValid());
    QVERIFY(idx.data(Roles::DurationRole).toLongLong() >= 0);
    QCOMPARE(model.entry(0).cwd, QStringLiteral("/ws"));
}

void TestConsoleHistoryModel::streamingChunksArrive()
{
    ConsoleHistoryModel model;
    model.beginCommand(1, QStringLiteral("a"), {});
    model.beginCommand(2, QStringLiteral("b"), {});
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

    model.appendOutput(2, OutputChannel::Stdout, "hello ");
    model.appendOutput(2, OutputChannel::Stderr, "warn\n");
    model.appendOutput(2, OutputChannel::Stdout, "world\n");
    QCOMPARE(changed.count(), 0); // coalesced to the next event-loop pass
    QTRY_COMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).toModelIndex(), model.index(1));
    QCOMPARE(changed.at(0).at(1).toModelIndex(), model.index(1));
    QCOMPARE(model.index(1).data(Roles::OutputRole).toString(), QStringLiteral("hello world\n"));
    QCOMPARE(model.index(1).data(Roles::StderrRole).toString(), QStringLiteral("warn\n"));
    QVERIFY(model.index(0).data(Roles::OutputRole).toString().isEmpty());

    model.appendOutput(2, OutputChannel::Stdout, "more");
    QTRY_COMPARE(changed.count(), 2);
    QCOMPARE(model.entry(1).stdoutData(), QByteArray("hello world\nmore"));
}

void TestConsoleHistoryModel::changesAreCoalescedPerRow()
{
    ConsoleHistoryModel model;
    model.beginCommand(1, QStringLiteral("a"), {});
    model.beginCommand(2, QStringLiteral("b"), {});
    model.beginCommand(3, QStringLiteral("c"), {});
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    for (int i = 0; i < 100; ++i) {
        model.appendOutput(1, OutputChannel::Stdout, "x");
        model.appendOutput(3, OutputChannel::Stderr, "y");
    }
    model.finishCommand(3, result(0, 1));
    QCoreApplication::processEvents();
    QCOMPARE(changed.count(), 2); // rows 0 and 2, once each
    QSet<int> rows;
    for (const QList<QVariant> &args : std::as_const(changed))
        rows.insert(args.at(0).toModelIndex().row());
    QCOMPARE(rows, (QSet<int>{0, 2}));
    QCOMPARE(model.entry(0).stdoutData().size(), 100);
    QCOMPARE(model.entry(2).stderrData().size(), 100);
}

void TestConsoleHistoryModel::floodKeepsMemoryBounded()
{
    ConsoleHistoryModel model;
    model.setOutputCap(qint64(1) << 40); // a sandbox that lets everything through
    model.beginCommand(1, QStringLiteral("yes"), {});
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

    const QByteArray chunk(64 * 1024, 'y');
    const int chunks = 50 * 1024 * 1024 / chunk.size(); // 50 MiB per channel
    for (int i = 0; i < chunks; ++i) {
        model.appendOutput(1, OutputChannel::Stdout, chunk);
        model.appendOutput(1, OutputChannel::Stderr, chunk);
        if (i % 4 == 0)
            QCoreApplication::processEvents(); // the GUI keeps running during a flood
    }
    QCoreApplication::processEvents();

    const ConsoleHistoryModel::Entry &e = model.entry(0);
    QCOMPARE(e.keptBytes(), model.maxKeptBytes());
    QCOMPARE(e.headBytes, model.maxKeptBytes() / 2);
    QCOMPARE(e.receivedBytes, 2 * qint64(chunks) * chunk.size());
    QCOMPARE(e.droppedBytes, e.receivedBytes - e.keptBytes());
    QVERIFY(e.tail.size() <= model.maxKeptBytes() / 2 / (64 * 1024) + 2);
    // At most one update per event-loop pass, however many chunks arrived in it.
    const int passes = chunks / 4 + 1;
    QVERIFY2(changed.count() <= passes, qPrintable(QString::number(changed.count())));

    ExecuteResult r = result(0, 900);
    r.truncated = true;
    model.finishCommand(1, r);
    QCOMPARE(model.index(0).data().toString(),
             QStringLiteral("$ yes — exit 0 in 900 ms, truncated"));
}

void TestConsoleHistoryModel::finish_data()
{
    QTest::addColumn<ExecuteResult>("result");
    QTest::addColumn<QString>("display");

    QTest::newRow("exit-0") << result(0, 12) << QStringLiteral("$ cmd — exit 0 in 12 ms");
    QTest::newRow("exit-2") << result(2, 3400) << QStringLiteral("$ cmd — exit 2 in 3400 ms");
    QTest::newRow("timed-out") << result(124, 2000, true) << QStringLiteral("$ cmd — timed out");
    QTest::newRow("truncated") << result(0, 5, false, true)
                               << QStringLiteral("$ cmd — exit 0 in 5 ms, truncated");
    QTest::newRow("timed-out-and-truncated")
        << result(124, 5, true, true) << QStringLiteral("$ cmd — timed out, truncated");
    QTest::newRow("cancelled") << result(130, 5, false, false, true)
                               << QStringLiteral("$ cmd — cancelled");
}

void TestConsoleHistoryModel::finish()
{
    QFETCH(ExecuteResult, result);
    QFETCH(QString, display);

    ConsoleHistoryModel model;
    model.beginCommand(5, QStringLiteral("cmd"), {});
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.finishCommand(5, result);
    QTRY_COMPARE(changed.count(), 1);
    const QModelIndex idx = model.index(0);
    QCOMPARE(idx.data().toString(), display);
    QCOMPARE(idx.data(Roles::RunningRole).toBool(), false);
    QCOMPARE(idx.data(Roles::ExitCodeRole).toInt(), result.exitCode);
    QCOMPARE(idx.data(Roles::DurationRole).toLongLong(), result.durationMs);
}

void TestConsoleHistoryModel::finishWithoutStreamingUsesResult()
{
    ConsoleHistoryModel model;
    model.setOutputCap(8);
    model.beginCommand(1, QStringLiteral("streamed"), {});
    model.beginCommand(2, QStringLiteral("not streamed"), {});
    model.appendOutput(1, OutputChannel::Stdout, "abc");
    ExecuteResult r = result(0, 1);
    r.output = QStringLiteral("abcdef"); // the streamed copy wins
    model.finishCommand(1, r);
    r.output = QStringLiteral("12345678\n");
    r.stderr_ = QStringLiteral("e");
    model.finishCommand(2, r);
    QCOMPARE(model.entry(0).stdoutData(), QByteArray("abc"));
    // Head "1234", then the tail of the stream "12345678\ne" from a line start: "e".
    const ConsoleHistoryModel::Entry &e = model.entry(1);
    QCOMPARE(e.stdoutData(), QByteArray("1234"));
    QCOMPARE(e.stderrData(), QByteArray("e"));
    QCOMPARE(e.droppedBytes, 5);
    QVERIFY(e.headEndsMidLine());
    QVERIFY(!e.tailStartsMidLine);
    // The engine's whole result stays for saving.
    QVERIFY(e.hasFullOutput);
    bool complete = false;
    QCOMPARE(model.savedOutput(1, &complete), QByteArray("12345678\n[stderr]\ne"));
    QVERIFY(complete);
}

void TestConsoleHistoryModel::failCommand()
{
    ConsoleHistoryModel model;
    model.beginCommand(1, QStringLiteral("run"), {});
    model.appendOutput(1, OutputChannel::Stderr, "partial");
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.failCommand(1, QStringLiteral("SandboxNotStartedError"), QStringLiteral("not started"));
    QTRY_COMPARE(changed.count(), 1);
    const QModelIndex idx = model.index(0);
    QCOMPARE(idx.data().toString(), QStringLiteral("$ run — failed"));
    QCOMPARE(idx.data(Roles::RunningRole).toBool(), false);
    QVERIFY(!idx.data(Roles::ExitCodeRole).isValid());
    QCOMPARE(idx.data(Roles::StderrRole).toString(),
             QStringLiteral("partial\nSandboxNotStartedError: not started"));
}

void TestConsoleHistoryModel::maxEntriesDropsOldest()
{
    ConsoleHistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    for (quint64 id = 1; id <= 5; ++id) {
        model.beginCommand(id, QStringLiteral("c%1").arg(id), {});
        model.finishCommand(id, result(0, 1));
    }
    QCoreApplication::processEvents();
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    model.setMaxEntries(3);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(commands(model), (QStringList{"c3", "c4", "c5"}));

    QCOMPARE(model.beginCommand(6, QStringLiteral("c6"), {}), 2);
    QCOMPARE(removed.count(), 2);
    QCOMPARE(commands(model), (QStringList{"c4", "c5", "c6"}));
    QCOMPARE(model.rowOf(3), -1);

    // Output for a dropped command changes nothing.
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.appendOutput(3, OutputChannel::Stdout, "late");
    model.finishCommand(3, result(0, 1));
    QCoreApplication::processEvents();
    QCOMPARE(changed.count(), 0);
}

void TestConsoleHistoryModel::runningEntriesSurviveTrimming()
{
    // A long command keeps its row (and so its block and its Cancel) while newer ones come
    // and go; it is trimmed once it has finished.
    ConsoleHistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setMaxEntries(2);
    model.beginCommand(1, QStringLiteral("long"), {});
    for (quint64 id = 2; id <= 6; ++id) {
        model.beginCommand(id, QStringLiteral("c%1").arg(id), {});
        model.finishCommand(id, result(0, 1));
    }
    QCOMPARE(commands(model), (QStringList{"long", "c6"}));
    model.appendOutput(1, OutputChannel::Stdout, "still here\n");
    QCOMPARE(model.entry(0).stdoutData(), QByteArray("still here\n"));
    model.beginCommand(7, QStringLiteral("c7"), {});
    QCOMPARE(commands(model), (QStringList{"long", "c7"})); // over the cap by a running one
    QCoreApplication::processEvents();
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.finishCommand(1, result(0, 1));
    // Over the cap, the finished row stays until the next command: its update arrives.
    QCOMPARE(commands(model), (QStringList{"long", "c7"}));
    QTRY_COMPARE(changed.count(), 1);
    QCOMPARE(changed.first().at(0).toModelIndex().row(), 0);
    QVERIFY(!model.entry(0).running);
    model.beginCommand(8, QStringLiteral("c8"), {});
    QCOMPARE(commands(model), (QStringList{"c7", "c8"}));
}

void TestConsoleHistoryModel::unknownIdIsIgnored()
{
    ConsoleHistoryModel model;
    model.beginCommand(1, QStringLiteral("a"), {});
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.appendOutput(99, OutputChannel::Stdout, "x");
    model.finishCommand(99, result(0, 1));
    model.failCommand(99, QStringLiteral("E"), QStringLiteral("m"));
    QCoreApplication::processEvents();
    QCOMPARE(changed.count(), 0);
    QVERIFY(model.entry(0).running);
}

void TestConsoleHistoryModel::history_data()
{
    QTest::addColumn<QStringList>("commands");
    QTest::addColumn<QStringList>("expected");

    QTest::newRow("empty") << QStringList{} << QStringList{};
    QTest::newRow("distinct") << QStringList{"ls", "pwd"} << QStringList{"ls", "pwd"};
    QTest::newRow("consecutive-duplicates-collapse")
        << QStringList{"ls", "ls", "pwd", "pwd", "pwd"} << QStringList{"ls", "pwd"};
    QTest::newRow("repeat-after-other-kept")
        << QStringList{"ls", "pwd", "ls"} << QStringList{"ls", "pwd", "ls"};
    QTest::newRow("blank-skipped") << QStringList{"ls", "  ", "", "ls"} << QStringList{"ls"};
}

void TestConsoleHistoryModel::history()
{
    QFETCH(QStringList, commands);
    QFETCH(QStringList, expected);
    ConsoleHistoryModel model;
    quint64 id = 0;
    for (const QString &c : std::as_const(commands))
        model.beginCommand(++id, c, {});
    QCOMPARE(model.commandHistory(), expected);
}

void TestConsoleHistoryModel::finishedResultKeepsNoUnboundedOutput()
{
    ConsoleHistoryModel model;
    model.setOutputCap(1024);
    model.beginCommand(7, QStringLiteral("flood"), QString());
    ExecuteResult r;
    r.output = QString(200000, QLatin1Char('y'));
    r.stderr_ = QString(5000, QLatin1Char('e'));
    model.finishCommand(7, r);
    const auto &e = model.entry(model.rowOf(7));
    QVERIFY(e.result.has_value());
    QCOMPARE(e.result->exitCode, 0);
    QVERIFY(e.result->output.isEmpty());
    QVERIFY(e.result->stderr_.isEmpty());
    QCOMPARE(e.keptBytes(), 1024);
    QCOMPARE(e.stdoutData(), QByteArray(512, 'y')); // the head: one cut line
    QCOMPARE(e.stderrData(), QByteArray(512, 'e')); // the tail
    QVERIFY(e.headEndsMidLine());
    QVERIFY(e.tailStartsMidLine);
}

void TestConsoleHistoryModel::fullOutputsAreBounded()
{
    // Whole results are kept for saving up to maxFullOutputBytes() over all entries; the
    // newest one always.
    ConsoleHistoryModel model;
    model.setOutputCap(qint64(1) << 40);
    model.setMaxKeptBytes(16);
    const qint64 each = ConsoleHistoryModel::maxFullOutputBytes() / 3 + 1;
    for (quint64 id = 1; id <= 4; ++id) {
        model.beginCommand(id, QStringLiteral("c"), {});
        ExecuteResult r;
        r.output = QString(each, QLatin1Char('a' + int(id)));
        model.finishCommand(id, r);
    }
    qint64 total = 0;
    for (int row = 0; row < model.rowCount(); ++row)
        total += model.entry(row).fullOutputBytes();
    QVERIFY(total <= ConsoleHistoryModel::maxFullOutputBytes());
    QVERIFY(model.entry(3).hasFullOutput);
    QVERIFY(!model.entry(0).hasFullOutput);
    bool complete = true;
    const QByteArray saved = model.savedOutput(0, &complete);
    QVERIFY(!complete);
    QVERIFY(saved.startsWith(QByteArray(8, 'b')));
    QVERIFY(saved.contains("bytes dropped here"));
    QVERIFY(saved.endsWith(QByteArray(8, 'b')));
    QCOMPARE(model.savedOutput(3, &complete).size(), each);
    QVERIFY(complete);
}

void TestConsoleHistoryModel::headTailRetention_data()
{
    QTest::addColumn<qint64>("cap");
    QTest::addColumn<int>("lines");

    // The retention budget follows the sandbox's cap, bounded by maxKeptBytes() (2 MiB).
    QTest::newRow("cap-100") << qint64(100) << 1000;
    QTest::newRow("cap-1000") << qint64(1000) << 1000;
    QTest::newRow("cap-100000") << qint64(100000) << 100000;
    QTest::newRow("cap-8MiB") << qint64(8 << 20) << 1000000;
    QTest::newRow("fits-no-drop") << qint64(100000) << 100;
}

void TestConsoleHistoryModel::headTailRetention()
{
    QFETCH(qint64, cap);
    QFETCH(int, lines);
    ConsoleHistoryModel model;
    model.setOutputCap(cap);
    model.beginCommand(1, QStringLiteral("seq"), {});
    QByteArray stream;
    for (int i = 1; i <= lines; ++i)
        stream += QByteArray::number(i) + '\n';
    // Streamed in odd-sized chunks, as pipes deliver them.
    for (qsizetype pos = 0; pos < stream.size(); pos += 4093)
        model.appendOutput(1, OutputChannel::Stdout, stream.mid(pos, 4093));
    const ConsoleHistoryModel::Entry &e = model.entry(0);
    const qint64 budget = qMin(cap, model.maxKeptBytes());
    QCOMPARE(e.receivedBytes, stream.size());
    QVERIFY(e.keptBytes() <= budget);
    QCOMPARE(e.droppedBytes, stream.size() - e.keptBytes());
    QByteArray head, tail;
    for (const auto &p : e.head)
        head += p.data;
    for (const auto &p : e.tail)
        tail += p.data;
    QVERIFY(stream.startsWith(head));
    QVERIFY(stream.endsWith(tail));
    if (!tail.isEmpty())
        QCOMPARE(e.tailStart, stream.size() - tail.size());
    if (stream.size() <= budget) {
        QCOMPARE(e.droppedBytes, 0);
        QCOMPARE(head + tail, stream);
        return;
    }
    // Whole lines on both sides of the gap: no number is cut.
    QVERIFY(head.endsWith('\n'));
    QVERIFY(stream.at(e.tailStart - 1) == '\n');
    QVERIFY(!e.headEndsMidLine());
    QVERIFY(!e.tailStartsMidLine);
    QVERIFY(tail.endsWith(QByteArray::number(lines) + '\n'));
    // Close to the budget: at most a line lost on each side to keep lines whole.
    QVERIFY2(e.keptBytes() >= budget - 2 * 8 - 1, qPrintable(QString::number(e.keptBytes())));
}

void TestConsoleHistoryModel::runsKeepArrivalOrder()
{
    ConsoleHistoryModel model;
    model.setOutputCap(16);
    model.beginCommand(1, QStringLiteral("mixed"), QString());
    model.appendOutput(1, OutputChannel::Stdout, "a\n");
    model.appendOutput(1, OutputChannel::Stdout, "b\n"); // the same piece grows
    model.appendOutput(1, OutputChannel::Stderr, "E\n");
    model.appendOutput(1, OutputChannel::Stdout, "c\n");
    const ConsoleHistoryModel::Entry &e = model.entry(0);
    QCOMPARE(e.head.size(), 3);
    QCOMPARE(e.head.at(0).channel, OutputChannel::Stdout);
    QCOMPARE(e.head.at(0).data, QByteArray("a\nb\n"));
    QCOMPARE(e.head.at(1).channel, OutputChannel::Stderr);
    QCOMPARE(e.head.at(2).data, QByteArray("c\n"));
    model.appendOutput(1, OutputChannel::Stdout, "d\ne\nf\ng\n"); // head full at a line end
    model.appendOutput(1, OutputChannel::Stderr, "h\ni\n");
    QCOMPARE(e.headBytes, 8);
    QCOMPARE(e.tail.size(), 2);
    QCOMPARE(e.tail.at(0).data, QByteArray("f\ng\n")); // trimmed from the front
    QCOMPARE(e.tail.at(1).channel, OutputChannel::Stderr);
    QCOMPARE(e.droppedBytes, 4);
    model.appendOutput(1, OutputChannel::Stdout, "j\n");
    QCOMPARE(e.tail.at(0).data, QByteArray("g\n"));
    QCOMPARE(e.droppedBytes, 6);
    QCOMPARE(e.tailStart, 14);

    // Alternating output keeps at most maxRuns() pieces in the head and in the tail.
    model.setOutputCap(1 << 20);
    model.beginCommand(2, QStringLiteral("alternating"), QString());
    for (int i = 0; i < 2 * ConsoleHistoryModel::maxRuns(); ++i) {
        model.appendOutput(2, OutputChannel::Stdout, "o");
        model.appendOutput(2, OutputChannel::Stderr, "e");
    }
    const ConsoleHistoryModel::Entry &alt = model.entry(1);
    QCOMPARE(alt.head.size(), ConsoleHistoryModel::maxRuns());
    QVERIFY(alt.tail.size() <= ConsoleHistoryModel::maxRuns());
    QCOMPARE(alt.receivedBytes, 4 * ConsoleHistoryModel::maxRuns());
    QCOMPARE(alt.droppedBytes, alt.receivedBytes - alt.keptBytes());
}

QTEST_GUILESS_MAIN(TestConsoleHistoryModel)
#include "tst_consolehistorymodel.moc"
