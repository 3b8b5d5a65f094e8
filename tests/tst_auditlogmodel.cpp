// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "auditlogmodel.h"
#include "modelroles.h"

#include <QAbstractItemModelTester>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimeZone>
#include <QtTest>

#include <atomic>
#include <ctime>
#include <thread>

using namespace elsai;

namespace {

AuditEvent makeEvent(qint64 seq, const QString &event = QStringLiteral("write_file"),
                     const QString &actor = QStringLiteral("agent"),
                     const QString &outcome = QStringLiteral("ok"), const QJsonObject &fields = {},
                     const QString &workspace = QStringLiteral("ws"))
{
    AuditEvent e;
    e.timestamp =
        QDateTime(QDate(2024, 5, 1), QTime(12, 0, 0).addMSecs(int(seq)), QTimeZone::utc()).toUTC();
    e.event = event;
    e.workspaceId = workspace;
    e.actor = actor;
    e.outcome = outcome;
    e.fields = fields;
    e.sequence = seq;
    return e;
}

QList<qint64> sequences(const QAbstractItemModel &model)
{
    QList<qint64> out;
    for (int row = 0; row < model.rowCount(); ++row)
        out.append(model.index(row, 0).data(Roles::SequenceRole).toLongLong());
    return out;
}

QList<qint64> range(qint64 first, qint64 last)
{
    QList<qint64> out;
    for (qint64 s = first; s <= last; ++s)
        out.append(s);
    return out;
}

} // namespace

class TestAuditLogModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void modelTester();
    void batching_data();
    void batching();
    void timerFlushesPartialBatch();
    void rowCap_data();
    void rowCap();
    void shrinkingCapTrims();
    void noResetOnRoutineUpdates();
    void displayAndRoles();
    void details_data();
    void details();
    void subscribeFromWorkerThreads();
    void unsubscribeStopsEvents();
    void destroyedWhileWorkersEmit();
    void exportRoundTrip();
    void timeColumnMatchesLocalTime_data();
    void timeColumnMatchesLocalTime();
    void exportSelectedRows();
    void exportErrors();
    void proxyFilters_data();
    void proxyFilters();
    void proxyTextMatchesShownTime();
    void proxyTimeRange_data();
    void proxyTimeRange();
    void proxySortsTimeBySequence();
    void proxySortsOtherColumnsByText();
};

void TestAuditLogModel::initTestCase()
{
    // Every emitted event is also logged at info level; keep the test output readable.
    QLoggingCategory::setFilterRules(QStringLiteral("elsai.sandbox.audit.info=false"));
}

void TestAuditLogModel::modelTester()
{
    AuditLogModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    AuditFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.sort(AuditLogModel::TimeColumn);
    QAbstractItemModelTester proxyTester(&proxy,
                                         QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setBatchSize(7);
    model.setRowCap(40);
    for (int i = 1; i <= 100; ++i) {
        model.append(makeEvent(i, QStringLiteral("e%1").arg(i % 3),
                               QStringLiteral("a%1").arg(i % 2), QStringLiteral("ok"),
                               {{QStringLiteral("n"), i}}));
    }
    model.flush();
    QCOMPARE(model.rowCount(), 40);
    proxy.setActorFilter(QStringLiteral("a1"));
    proxy.setTextFilter(QStringLiteral("e2"));
    model.setRowCap(10);
    proxy.setActorFilter({});
    QCOMPARE(model.rowCount(), 10);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(proxy.rowCount(), 0);
}

void TestAuditLogModel::batching_data()
{
    QTest::addColumn<int>("batchSize");
    QTest::addColumn<int>("appended");
    QTest::addColumn<QList<int>>("batchesBeforeFlush"); // rows per rowsInserted
    QTest::addColumn<int>("batchAfterFlush");           // 0 = flush() inserts nothing

    QTest::newRow("120-by-50") << 50 << 120 << QList<int>{50, 50} << 20;
    QTest::newRow("exact-multiple") << 50 << 100 << QList<int>{50, 50} << 0;
    QTest::newRow("below-batch") << 50 << 10 << QList<int>{} << 10;
    QTest::newRow("batch-of-one") << 1 << 3 << QList<int>{1, 1, 1} << 0;
}

void TestAuditLogModel::batching()
{
    QFETCH(int, batchSize);
    QFETCH(int, appended);
    QFETCH(QList<int>, batchesBeforeFlush);
    QFETCH(int, batchAfterFlush);

    AuditLogModel model;
    model.setBatchSize(batchSize);
    model.setBatchIntervalMs(60 * 60 * 1000); // only size and flush() insert here
    QList<int> batches;
    connect(
        &model, &QAbstractItemModel::rowsInserted, this,
        [&batches](const QModelIndex &, int first, int last) { batches.append(last - first + 1); });

    for (int i = 1; i <= appended; ++i)
        model.append(makeEvent(i));
    QCOMPARE(batches, batchesBeforeFlush);

    model.flush();
    QList<int> expected = batchesBeforeFlush;
    if (batchAfterFlush > 0)
        expected.append(batchAfterFlush);
    QCOMPARE(batches, expected);
    QCOMPARE(model.rowCount(), appended);
    QCOMPARE(sequences(model), range(1, appended));
}

void TestAuditLogModel::timerFlushesPartialBatch()
{
    AuditLogModel model;
    model.setBatchSize(50);
    model.setBatchIntervalMs(10);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    for (int i = 1; i <= 3; ++i)
        model.append(makeEvent(i));
    QCOMPARE(model.rowCount(), 0);
    QTRY_COMPARE(model.rowCount(), 3);
    QCOMPARE(inserted.count(), 1);
}

void TestAuditLogModel::rowCap_data()
{
    QTest::addColumn<int>("cap");
    QTest::addColumn<int>("existing");
    QTest::addColumn<int>("burst");
    QTest::addColumn<int>("trimmed");

    QTest::newRow("under-cap") << 10 << 5 << 3 << 0;
    QTest::newRow("exactly-full") << 10 << 5 << 5 << 0;
    QTest::newRow("overflow-drops-oldest") << 10 << 8 << 5 << 3;
    QTest::newRow("burst-larger-than-cap") << 10 << 5 << 25 << 20;
    QTest::newRow("burst-larger-than-cap-on-empty") << 10 << 0 << 25 << 15;
}

void TestAuditLogModel::rowCap()
{
    QFETCH(int, cap);
    QFETCH(int, existing);
    QFETCH(int, burst);
    QFETCH(int, trimmed);

    AuditLogModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setRowCap(cap);
    model.setBatchSize(1000); // the burst is one batch
    for (int i = 1; i <= existing; ++i)
        model.append(makeEvent(i));
    model.flush();

    QSignalSpy trimmedSpy(&model, &AuditLogModel::rowsTrimmed);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    int maxRows = 0;
    connect(&model, &QAbstractItemModel::rowsInserted, this,
            [&] { maxRows = qMax(maxRows, model.rowCount()); });
    const int total = existing + burst;
    for (int i = existing + 1; i <= total; ++i)
        model.append(makeEvent(i));
    model.flush();

    const int kept = qMin(cap, total);
    QCOMPARE(model.rowCount(), kept);
    QCOMPARE(sequences(model), range(total - kept + 1, total));
    QCOMPARE(maxRows, kept); // never above the cap, even transiently
    QCOMPARE(inserted.count(), 1);
    QVERIFY(removed.count() <= 1);
    QCOMPARE(trimmedSpy.count(), trimmed > 0 ? 1 : 0);
    if (trimmed > 0)
        QCOMPARE(trimmedSpy.at(0).at(0).toInt(), trimmed);
}

void TestAuditLogModel::shrinkingCapTrims()
{
    AuditLogModel model;
    for (int i = 1; i <= 30; ++i)
        model.append(makeEvent(i));
    model.flush();
    QSignalSpy trimmed(&model, &AuditLogModel::rowsTrimmed);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    model.setRowCap(10);
    QCOMPARE(sequences(model), range(21, 30));
    QCOMPARE(removed.count(), 1);
    QCOMPARE(trimmed.count(), 1);
    QCOMPARE(trimmed.at(0).at(0).toInt(), 20);
}

void TestAuditLogModel::noResetOnRoutineUpdates()
{
    AuditLogModel model;
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy layout(&model, &QAbstractItemModel::layoutChanged);
    model.setRowCap(100);
    model.setBatchSize(10);
    for (int i = 1; i <= 250; ++i)
        model.append(makeEvent(i));
    model.flush();
    model.setRowCap(50);
    model.clear();
    QCOMPARE(reset.count(), 0);
    QCOMPARE(layout.count(), 0);
}

void TestAuditLogModel::displayAndRoles()
{
    AuditLogModel model;
    const QJsonObject fields{{QStringLiteral("path"), QStringLiteral("src/a.py")}};
    const AuditEvent e = makeEvent(42, QStringLiteral("write_file"), QStringLiteral("agent-a"),
                                   QStringLiteral("denied"), fields, QStringLiteral("ws-1"));
    model.append(e);
    model.flush();
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.columnCount(), int(AuditLogModel::ColumnCount));
    auto at = [&model](int column, int role = Qt::DisplayRole) {
        return model.index(0, column).data(role);
    };

    QCOMPARE(at(AuditLogModel::TimeColumn).toString(),
             e.timestamp.toLocalTime().toString(QStringLiteral("hh:mm:ss.zzz")));
    QCOMPARE(at(AuditLogModel::TimeColumn, Qt::ToolTipRole).toString(),
             QStringLiteral("2024-05-01T12:00:00.042Z"));
    QCOMPARE(at(AuditLogModel::EventColumn).toString(), QStringLiteral("write_file"));
    QCOMPARE(at(AuditLogModel::WorkspaceColumn).toString(), QStringLiteral("ws-1"));
    QCOMPARE(at(AuditLogModel::ActorColumn).toString(), QStringLiteral("agent-a"));
    QCOMPARE(at(AuditLogModel::OutcomeColumn).toString(), QStringLiteral("denied"));
    QCOMPARE(at(AuditLogModel::DetailsColumn).toString(), QStringLiteral("path=src/a.py"));

    const auto whole = at(AuditLogModel::DetailsColumn, Roles::AuditEventRole).value<AuditEvent>();
    QCOMPARE(whole.sequence, 42);
    QCOMPARE(whole.fields, fields);
    QCOMPARE(at(0, Roles::AuditJsonRole).toJsonObject(), e.toJson());
    QCOMPARE(at(0, Roles::TimestampRole).toDateTime(), e.timestamp);
    QCOMPARE(at(0, Roles::EventNameRole).toString(), e.event);
    QCOMPARE(at(0, Roles::ActorRole).toString(), e.actor);
    QCOMPARE(at(0, Roles::OutcomeRole).toString(), e.outcome);
    QCOMPARE(at(0, Roles::SequenceRole).toLongLong(), 42);
    QCOMPARE(model.headerData(AuditLogModel::DetailsColumn, Qt::Horizontal).toString(),
             QStringLiteral("Details"));
    QVERIFY(model.roleNames().contains(Roles::SequenceRole));
}

void TestAuditLogModel::details_data()
{
    QTest::addColumn<QJsonObject>("fields");
    QTest::addColumn<QString>("expected");

    QTest::newRow("empty") << QJsonObject{} << QString();
    QTest::newRow("string") << QJsonObject{{QStringLiteral("path"), QStringLiteral("a b.txt")}}
                            << QStringLiteral("path=a b.txt");
    QTest::newRow("number-and-bool-sorted-by-key")
        << QJsonObject{{QStringLiteral("ok"), true}, {QStringLiteral("bytes"), 12}}
        << QStringLiteral("bytes=12 ok=true");
    QTest::newRow("fraction") << QJsonObject{{QStringLiteral("secs"), 1.5}}
                              << QStringLiteral("secs=1.5");
    QTest::newRow("array-compact")
        << QJsonObject{{QStringLiteral("paths"), QJsonArray{QStringLiteral("a"), 1}}}
        << QStringLiteral(R"(paths=["a",1])");
    QTest::newRow("null") << QJsonObject{{QStringLiteral("x"), QJsonValue()}}
                          << QStringLiteral("x=null");
}

void TestAuditLogModel::details()
{
    QFETCH(QJsonObject, fields);
    QFETCH(QString, expected);
    AuditLogModel model;
    model.append(
        makeEvent(1, QStringLiteral("e"), QStringLiteral("a"), QStringLiteral("ok"), fields));
    model.flush();
    QCOMPARE(model.index(0, AuditLogModel::DetailsColumn).data().toString(), expected);
}

void TestAuditLogModel::subscribeFromWorkerThreads()
{
    AuditLogModel model;
    model.setBatchSize(64);
    model.setBatchIntervalMs(5);
    model.subscribe();
    model.subscribe(); // idempotent: still one sink, so no duplicates

    constexpr int threads = 4;
    constexpr int perThread = 300;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([t] {
            for (int i = 0; i < perThread; ++i) {
                AuditLog::instance().emitEvent(QStringLiteral("test.thread"),
                                               QStringLiteral("ws-thread"),
                                               QStringLiteral("worker-%1").arg(t),
                                               QStringLiteral("ok"), {{QStringLiteral("i"), i}});
            }
        });
    }
    for (std::thread &w : workers)
        w.join();

    QTRY_COMPARE(model.rowCount(), threads * perThread);
    QSet<QString> seen;
    QSet<qint64> seqs;
    for (int row = 0; row < model.rowCount(); ++row) {
        const AuditEvent &e = model.event(row);
        QCOMPARE(e.event, QStringLiteral("test.thread"));
        seen.insert(e.actor + QLatin1Char('/') + QString::number(e.fields.value("i").toInt()));
        seqs.insert(e.sequence);
    }
    QCOMPARE(seen.size(), threads * perThread);
    QCOMPARE(seqs.size(), threads * perThread);
    // Nothing more trickles in afterwards (the workers are joined, so all is posted).
    QCoreApplication::processEvents();
    model.flush();
    QCOMPARE(model.rowCount(), threads * perThread);
}

void TestAuditLogModel::unsubscribeStopsEvents()
{
    AuditLogModel model;
    model.subscribe();
    AuditLog::instance().emitEvent(QStringLiteral("a"), QStringLiteral("ws"),
                                   QStringLiteral("host"), QStringLiteral("ok"));
    QTRY_COMPARE(model.rowCount(), 1);

    // An event already queued to the model when it unsubscribes is dropped too.
    AuditLog::instance().emitEvent(QStringLiteral("b"), QStringLiteral("ws"),
                                   QStringLiteral("host"), QStringLiteral("ok"));
    model.unsubscribe();
    AuditLog::instance().emitEvent(QStringLiteral("c"), QStringLiteral("ws"),
                                   QStringLiteral("host"), QStringLiteral("ok"));
    QCoreApplication::processEvents(); // runs the drain posted for "b"
    model.flush();
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.event(0).event, QStringLiteral("a"));
}

void TestAuditLogModel::destroyedWhileWorkersEmit()
{
    // Sinks are called outside AuditLog's lock, so a worker can be inside the model's sink
    // while the model is destroyed; run under ASan to see a use-after-free if there is one.
    auto *model = new AuditLogModel;
    model->subscribe();
    std::atomic_bool stop{false};
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; ++t) {
        workers.emplace_back([&stop] {
            while (!stop.load()) {
                AuditLog::instance().emitEvent(QStringLiteral("test.flood"), QStringLiteral("ws"),
                                               QStringLiteral("w"), QStringLiteral("ok"));
            }
        });
    }
    QTRY_VERIFY(model->rowCount() > 0);
    delete model;
    QCoreApplication::processEvents();
    stop = true;
    for (std::thread &w : workers)
        w.join();
    QCoreApplication::processEvents();
}

void TestAuditLogModel::exportRoundTrip()
{
    AuditLogModel model;
    const QList<AuditEvent> events = {
        makeEvent(1, QStringLiteral("sandbox.start"), QStringLiteral("host"), QStringLiteral("ok")),
        makeEvent(2, QStringLiteral("write_file"), QStringLiteral("agent"),
                  QStringLiteral("denied"),
                  {{QStringLiteral("path"), QStringLiteral("dir/ünïcode \"q\".txt")},
                   {QStringLiteral("error_type"), QStringLiteral("PermissionError")}}),
        makeEvent(3, QStringLiteral("sandbox.execute"), QStringLiteral("agent"),
                  QStringLiteral("error"),
                  {{QStringLiteral("command_length"), 17},
                   {QStringLiteral("nested"), QJsonObject{{QStringLiteral("a"), QJsonArray{1, 2}}}},
                   {QStringLiteral("line"), QStringLiteral("two\nlines")}}),
    };
    for (const AuditEvent &e : events)
        model.append(e);
    model.flush();

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("audit.jsonl"));
    QString error;
    QVERIFY2(model.exportJsonLines(path, {}, &error), qPrintable(error));

    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().split('\n');
    QCOMPARE(lines.size(), events.size() + 1); // trailing newline
    QVERIFY(lines.last().isEmpty());
    for (int i = 0; i < events.size(); ++i) {
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(lines.at(i), &parseError);
        QCOMPARE(parseError.error, QJsonParseError::NoError);
        QVERIFY(doc.isObject());
        const AuditEvent back = AuditEvent::fromJson(doc.object());
        const AuditEvent &want = events.at(i);
        QCOMPARE(back.timestamp, want.timestamp);
        QCOMPARE(back.event, want.event);
        QCOMPARE(back.workspaceId, want.workspaceId);
        QCOMPARE(back.actor, want.actor);
        QCOMPARE(back.outcome, want.outcome);
        QCOMPARE(back.fields, want.fields);
        QCOMPARE(back.sequence, want.sequence);
    }
}

void TestAuditLogModel::exportSelectedRows()
{
    AuditLogModel model;
    for (int i = 1; i <= 5; ++i)
        model.append(makeEvent(i));
    model.flush();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("some.jsonl"));
    QVERIFY(model.exportJsonLines(path, {3, 0}));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QList<qint64> seqs;
    for (const QByteArray &line : f.readAll().split('\n')) {
        if (!line.isEmpty())
            seqs.append(AuditEvent::fromJson(QJsonDocument::fromJson(line).object()).sequence);
    }
    QCOMPARE(seqs, (QList<qint64>{4, 1}));
}

void TestAuditLogModel::exportErrors()
{
    AuditLogModel model;
    model.append(makeEvent(1));
    model.flush();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("out.jsonl"));

    QString error;
    QVERIFY(!model.exportJsonLines(path, {1}, &error));
    QVERIFY(error.contains(QStringLiteral("out of range")));
    QVERIFY(!QFile::exists(path)); // nothing half-written

    error.clear();
    QVERIFY(!model.exportJsonLines(dir.filePath(QStringLiteral("missing/out.jsonl")), {}, &error));
    QVERIFY(!error.isEmpty());
}

void TestAuditLogModel::proxyFilters_data()
{
    QTest::addColumn<QString>("event");
    QTest::addColumn<QString>("actor");
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QList<qint64>>("expected");

    const QString none;
    QTest::newRow("no-filter") << none << none << none << none << QList<qint64>{1, 2, 3, 4, 5};
    QTest::newRow("event") << QStringLiteral("write_file") << none << none << none
                           << QList<qint64>{2, 3};
    QTest::newRow("event-is-exact")
        << QStringLiteral("write") << none << none << none << QList<qint64>{};
    QTest::newRow("actor") << none << QStringLiteral("agent-a") << none << none
                           << QList<qint64>{2, 4};
    QTest::newRow("outcome") << none << none << QStringLiteral("denied") << none
                             << QList<qint64>{3};
    QTest::newRow("event+actor") << QStringLiteral("write_file") << QStringLiteral("agent-b")
                                 << none << none << QList<qint64>{3};
    QTest::newRow("text-in-details")
        << none << none << none << QStringLiteral("main.py") << QList<qint64>{2};
    QTest::newRow("text-case-insensitive")
        << none << none << none << QStringLiteral("NETWORK") << QList<qint64>{4};
    QTest::newRow("text-in-event-column")
        << none << none << none << QStringLiteral("sandbox.st") << QList<qint64>{1};
    QTest::newRow("text-in-workspace-column")
        << none << none << none << QStringLiteral("ws-2") << QList<qint64>{4, 5};
    QTest::newRow("text+outcome") << none << none << QStringLiteral("ok") << QStringLiteral("path=")
                                  << QList<qint64>{2, 5};
    QTest::newRow("all-four") << QStringLiteral("read_file") << QStringLiteral("agent-b")
                              << QStringLiteral("ok") << QStringLiteral("readme")
                              << QList<qint64>{5};
    QTest::newRow("no-match") << QStringLiteral("read_file") << QStringLiteral("agent-a") << none
                              << none << QList<qint64>{};
}

void TestAuditLogModel::proxyFilters()
{
    QFETCH(QString, event);
    QFETCH(QString, actor);
    QFETCH(QString, outcome);
    QFETCH(QString, text);
    QFETCH(QList<qint64>, expected);

    AuditLogModel model;
    const QString ws1 = QStringLiteral("ws-1"), ws2 = QStringLiteral("ws-2");
    auto path = [](const char *p) { return QJsonObject{{QStringLiteral("path"), p}}; };
    model.append(makeEvent(1, QStringLiteral("sandbox.start"), QStringLiteral("host"),
                           QStringLiteral("ok"), {}, ws1));
    model.append(makeEvent(2, QStringLiteral("write_file"), QStringLiteral("agent-a"),
                           QStringLiteral("ok"), path("src/main.py"), ws1));
    model.append(makeEvent(3, QStringLiteral("write_file"), QStringLiteral("agent-b"),
                           QStringLiteral("denied"), path("secrets/key.pem"), ws1));
    model.append(makeEvent(4, QStringLiteral("execute"), QStringLiteral("agent-a"),
                           QStringLiteral("error"),
                           {{QStringLiteral("inferred_op"), QStringLiteral("network")}}, ws2));
    model.append(makeEvent(5, QStringLiteral("read_file"), QStringLiteral("agent-b"),
                           QStringLiteral("ok"), path("README.md"), ws2));
    model.flush();

    AuditFilterProxyModel proxy;
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    proxy.setSourceModel(&model);
    proxy.setEventFilter(event);
    proxy.setActorFilter(actor);
    proxy.setOutcomeFilter(outcome);
    proxy.setTextFilter(text);
    QCOMPARE(sequences(proxy), expected);

    proxy.setEventFilter({});
    proxy.setActorFilter({});
    proxy.setOutcomeFilter({});
    proxy.setTextFilter({});
    QCOMPARE(sequences(proxy), range(1, 5));
}

void TestAuditLogModel::proxyTimeRange_data()
{
    // Events 1..10 are 1 ms apart from 12:00:00.001 UTC (makeEvent).
    const auto at = [](int ms) {
        return QDateTime(QDate(2024, 5, 1), QTime(12, 0, 0).addMSecs(ms), QTimeZone::utc());
    };
    QTest::addColumn<QDateTime>("from");
    QTest::addColumn<QDateTime>("to");
    QTest::addColumn<QList<qint64>>("expected");
    // clang-format off
    QTest::newRow("open")          << QDateTime() << QDateTime() << range(1, 10);
    QTest::newRow("from, included") << at(4)      << QDateTime() << range(4, 10);
    QTest::newRow("to, included")   << QDateTime() << at(3)      << range(1, 3);
    QTest::newRow("between")       << at(5)       << at(7)       << range(5, 7);
    QTest::newRow("local time")    << at(5).toLocalTime() << at(6).toLocalTime() << range(5, 6);
    QTest::newRow("empty")         << at(8)       << at(7)       << QList<qint64>();
    QTest::newRow("after all")     << at(11)      << QDateTime() << QList<qint64>();
    // clang-format on
}

void TestAuditLogModel::proxyTimeRange()
{
    QFETCH(QDateTime, from);
    QFETCH(QDateTime, to);
    QFETCH(QList<qint64>, expected);
    AuditLogModel model;
    AuditFilterProxyModel proxy;
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    proxy.setSourceModel(&model);
    for (int i = 1; i <= 5; ++i)
        model.append(makeEvent(i, QStringLiteral("e"), QStringLiteral("a"),
                               i % 2 ? QStringLiteral("ok") : QStringLiteral("error")));
    model.flush();
    proxy.setTimeRange(from, to);
    QCOMPARE(proxy.timeFrom(), from);
    // Rows arriving while a range is set are filtered too, and combine with other filters.
    for (int i = 6; i <= 10; ++i)
        model.append(makeEvent(i, QStringLiteral("e"), QStringLiteral("a"),
                               i % 2 ? QStringLiteral("ok") : QStringLiteral("error")));
    model.flush();
    QCOMPARE(sequences(proxy), expected);
    proxy.setOutcomeFilter(QStringLiteral("error"));
    QList<qint64> errors;
    for (qint64 s : expected) {
        if (s % 2 == 0)
            errors.append(s);
    }
    QCOMPARE(sequences(proxy), errors);
    proxy.setOutcomeFilter({});
    proxy.setTimeRange({}, {});
    QCOMPARE(sequences(proxy), range(1, 10));
}

void TestAuditLogModel::proxyTextMatchesShownTime()
{
    AuditLogModel model;
    for (qint64 seq = 1; seq <= 3; ++seq)
        model.append(makeEvent(seq, QStringLiteral("execute"), QStringLiteral("a"),
                               QStringLiteral("ok"), {}, QStringLiteral("ws")));
    model.flush();
    AuditFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    // The time as the Time column shows it (local time) finds exactly that record.
    const QString shown = model.index(1, AuditLogModel::TimeColumn).data().toString();
    proxy.setTextFilter(shown);
    QCOMPARE(proxy.rowCount(), 1);
    QCOMPARE(proxy.index(0, 0).data(Roles::SequenceRole).toLongLong(), 2);
}

void TestAuditLogModel::proxySortsTimeBySequence()
{
    AuditLogModel model;
    AuditFilterProxyModel proxy;
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    proxy.setSourceModel(&model);
    // Rows arrive out of sequence order (sinks run outside AuditLog's lock) and several share
    // one displayed millisecond.
    const QDateTime sameMs =
        QDateTime(QDate(2024, 5, 1), QTime(23, 59, 59, 999), QTimeZone::utc()).toUTC();
    for (qint64 seq : {3, 1, 4, 2, 5}) {
        AuditEvent e = makeEvent(seq);
        e.timestamp = sameMs;
        model.append(e);
    }
    model.flush();

    proxy.sort(AuditLogModel::TimeColumn, Qt::AscendingOrder);
    QCOMPARE(sequences(proxy), range(1, 5));
    proxy.sort(AuditLogModel::TimeColumn, Qt::DescendingOrder);
    QCOMPARE(sequences(proxy), (QList<qint64>{5, 4, 3, 2, 1}));

    // New rows are placed by the live sort.
    model.append(makeEvent(10));
    model.append(makeEvent(0));
    model.flush();
    QCOMPARE(sequences(proxy), (QList<qint64>{10, 5, 4, 3, 2, 1, 0}));
}

void TestAuditLogModel::proxySortsOtherColumnsByText()
{
    AuditLogModel model;
    AuditFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    model.append(makeEvent(1, QStringLiteral("e"), QStringLiteral("carol")));
    model.append(makeEvent(2, QStringLiteral("e"), QStringLiteral("alice")));
    model.append(makeEvent(3, QStringLiteral("e"), QStringLiteral("bob")));
    model.flush();
    proxy.sort(AuditLogModel::ActorColumn, Qt::AscendingOrder);
    QCOMPARE(sequences(proxy), (QList<qint64>{2, 3, 1}));
}

void TestAuditLogModel::timeColumnMatchesLocalTime_data()
{
    // Each row sweeps its own days (the offset cache is keyed by time, not by zone) across
    // a zone transition, some at half or quarter hours.
    QTest::addColumn<QByteArray>("zone");
    QTest::addColumn<QDateTime>("from");
    const auto utc = [](int y, int m, int d, int h) {
        return QDateTime(QDate(y, m, d), QTime(h, 0), QTimeZone::utc());
    };
    QTest::newRow("process-zone") << QByteArray() << utc(2023, 10, 28, 0);
    QTest::newRow("UTC") << QByteArray("UTC") << utc(2022, 1, 1, 0);
    QTest::newRow("Berlin-spring") << QByteArray("Europe/Berlin") << utc(2026, 3, 28, 12);
    QTest::newRow("Berlin-autumn") << QByteArray("Europe/Berlin") << utc(2026, 10, 24, 12);
    QTest::newRow("St_Johns") << QByteArray("America/St_Johns") << utc(2026, 3, 7, 12);
    QTest::newRow("Kathmandu") << QByteArray("Asia/Kathmandu") << utc(2025, 6, 1, 0);
    QTest::newRow("Lord_Howe") << QByteArray("Australia/Lord_Howe") << utc(2026, 4, 4, 0);
}

void TestAuditLogModel::timeColumnMatchesLocalTime()
{
    QFETCH(QByteArray, zone);
    QFETCH(QDateTime, from);
    const QByteArray oldTz = qgetenv("TZ");
    const bool hadTz = qEnvironmentVariableIsSet("TZ");
    if (!zone.isEmpty()) {
        if (zone != "UTC" && !QFileInfo::exists(QStringLiteral("/usr/share/zoneinfo/") + zone))
            QSKIP("no tzdata for this zone here");
        qputenv("TZ", zone);
        tzset();
    }
    // Every 7 minutes and 13 seconds for two days, with milliseconds.
    int compared = 0;
    for (qint64 t = from.toMSecsSinceEpoch(); t < from.addDays(2).toMSecsSinceEpoch();
         t += 433'017) {
        AuditEvent e = makeEvent(1);
        e.timestamp = QDateTime::fromMSecsSinceEpoch(t, QTimeZone::utc());
        const QString expected = e.timestamp.toLocalTime().toString(QStringLiteral("hh:mm:ss.zzz"));
        QCOMPARE(AuditLogModel::columnText(e, AuditLogModel::TimeColumn), expected);
        ++compared;
    }
    if (!zone.isEmpty()) {
        if (hadTz)
            qputenv("TZ", oldTz);
        else
            qunsetenv("TZ");
        tzset();
    }
    QVERIFY(compared > 300);
}

QTEST_GUILESS_MAIN(TestAuditLogModel)
#include "tst_auditlogmodel.moc"
