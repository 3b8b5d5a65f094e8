// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The JSON-lines audit sink when writes fail (platform/faultinjection.h: failWrites makes the
// sink's writes fail with ENOSPC / EIO / EACCES, the first optionally short): no torn line,
// records retried in order from the bounded queue, drops counted and told by an audit.dropped
// record, health reported (AuditLog::health(), one warning per change of state). Runs against
// the fault-point objects (elsai_fault_points, tests/CMakeLists.txt).

#include "audit.h"
#include "faultinjection.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QTemporaryDir>
#include <QtTest>

#include <cerrno>

using namespace elsai;

namespace {

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

/// Every line of the file as JSON; a line that does not parse fails the test.
QList<QJsonObject> lines(const QString &path, bool *ok)
{
    QList<QJsonObject> out;
    *ok = true;
    const QByteArray data = readAll(path);
    if (!data.isEmpty() && !data.endsWith('\n'))
        *ok = false; // a torn last line
    for (const QByteArray &line : data.split('\n')) {
        if (line.isEmpty())
            continue;
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &err);
        if (err.error != QJsonParseError::NoError || !doc.isObject()) {
            *ok = false;
            qWarning("unparsable line: %s", line.constData());
            continue;
        }
        out.append(doc.object());
    }
    return out;
}

AuditEvent testEvent(int n)
{
    AuditEvent e;
    e.timestamp = QDateTime::currentDateTimeUtc();
    e.event = QStringLiteral("test.record");
    e.workspaceId = QStringLiteral("ws");
    e.actor = QStringLiteral("agent");
    e.outcome = QStringLiteral("ok");
    e.fields = {{QStringLiteral("n"), n},
                {QStringLiteral("padding"), QString(200, QLatin1Char('p'))}};
    e.sequence = n;
    return e;
}

QList<int> numbers(const QList<QJsonObject> &records)
{
    QList<int> out;
    for (const QJsonObject &o : records) {
        if (o.value(QLatin1String("event")).toString() == QLatin1String("test.record"))
            out.append(o.value(QLatin1String("n")).toInt());
    }
    return out;
}

QList<QJsonObject> named(const QList<QJsonObject> &records, const char *event)
{
    QList<QJsonObject> out;
    for (const QJsonObject &o : records) {
        if (o.value(QLatin1String("event")).toString() == QLatin1String(event))
            out.append(o);
    }
    return out;
}

QMutex s_warningsMutex;
QStringList s_warnings;
void warningHandler(QtMsgType type, const QMessageLogContext &context, const QString &text)
{
    if (type == QtWarningMsg && context.category &&
        QLatin1String(context.category) == QLatin1String("elsai.sandbox.audit")) {
        QMutexLocker lock(&s_warningsMutex);
        s_warnings.append(text);
    }
}

} // namespace

class TestAuditFaults : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { fault::failWrites("", 0, 0); }

    void failedWriteLeavesNoTornLine_data()
    {
        QTest::addColumn<int>("err");
        QTest::addColumn<int>("shortBytes");
        QTest::newRow("ENOSPC, short write first") << ENOSPC << 17;
        QTest::newRow("ENOSPC") << ENOSPC << 0;
        QTest::newRow("EIO, short write first") << EIO << 1;
        QTest::newRow("EACCES") << EACCES << 0;
    }

    // A write that fails (after part of the line went out) leaves the file at the last record
    // boundary; the record waits and is written, in order, before the next one.
    void failedWriteLeavesNoTornLine()
    {
        QFETCH(int, err);
        QFETCH(int, shortBytes);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("audit.jsonl"));
        JsonLinesAuditSink sink(path);
        sink.record(testEvent(1));
        // record 2: (a short write, then) a failure; the retries before 3 and 4 fail too
        fault::failWrites("audit-append", err, shortBytes > 0 ? 4 : 3, size_t(shortBytes));
        sink.record(testEvent(2)); // fails (short, then the rest fails): queued
        sink.record(testEvent(3)); // the retry of 2 fails: 3 queued behind it
        bool ok = false;
        QCOMPARE(numbers(lines(path, &ok)), QList<int>{1});
        QVERIFY2(ok, "a torn line after a failed write");
        AuditHealth h = sink.health();
        QCOMPARE(h.state, AuditHealth::State::Degraded);
        QCOMPARE(h.recordsQueued, 2);
        QCOMPARE(h.recordsDropped, 0);
        QCOMPARE(h.lastError, QString::fromLocal8Bit(std::strerror(err)));

        sink.record(testEvent(4)); // the last fault: still queued
        QCOMPARE(sink.health().recordsQueued, 3);
        sink.record(testEvent(5)); // writes work again: 2, 3, 4 first, then 5
        const QList<QJsonObject> records = lines(path, &ok);
        QVERIFY(ok);
        QCOMPARE(numbers(records), (QList<int>{1, 2, 3, 4, 5}));
        QVERIFY(named(records, "audit.dropped").isEmpty());
        h = sink.health();
        QCOMPARE(h.state, AuditHealth::State::Ok); // nothing was lost
        QCOMPARE(h.recordsQueued, 0);
    }

    // A full queue drops the new records; once writing works again an audit.dropped record says
    // how many and over which time, and the health stays degraded (the trail has a hole).
    void fullQueueDropsAndTellsHowMany()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("audit.jsonl"));
        JsonLinesAuditSink::Options options;
        options.maxQueuedRecords = 3;
        JsonLinesAuditSink sink(path, options);
        fault::failWrites("audit-append", ENOSPC, 1000, 5);
        const QDateTime from = QDateTime::currentDateTimeUtc();
        for (int i = 1; i <= 10; ++i)
            sink.record(testEvent(i));
        AuditHealth h = sink.health();
        QCOMPARE(h.state, AuditHealth::State::Failing);
        QCOMPARE(h.recordsQueued, 3);
        QCOMPARE(h.recordsDropped, 7);
        bool ok = false;
        QVERIFY(lines(path, &ok).isEmpty());
        QVERIFY(ok);

        fault::failWrites("", 0, 0);
        sink.flush();
        const QList<QJsonObject> records = lines(path, &ok);
        QVERIFY(ok);
        QCOMPARE(numbers(records), (QList<int>{1, 2, 3}));
        const QList<QJsonObject> dropped = named(records, "audit.dropped");
        QCOMPARE(dropped.size(), 1);
        QCOMPARE(dropped.first().value(QLatin1String("records_dropped")).toInt(), 7);
        const QDateTime first = QDateTime::fromString(
            dropped.first().value(QLatin1String("first_dropped_at")).toString(), Qt::ISODateWithMs);
        const QDateTime last = QDateTime::fromString(
            dropped.first().value(QLatin1String("last_dropped_at")).toString(), Qt::ISODateWithMs);
        QVERIFY(first.isValid() && last.isValid());
        QVERIFY(first >= from.addMSecs(-1) && first <= last);
        QCOMPARE(records.last().value(QLatin1String("event")).toString(),
                 QStringLiteral("audit.dropped"));
        h = sink.health();
        QCOMPARE(h.state, AuditHealth::State::Degraded);
        QCOMPARE(h.recordsDropped, 7);
        QCOMPARE(h.recordsQueued, 0);

        sink.record(testEvent(11)); // later records follow normally, no second note
        const QList<QJsonObject> after = lines(path, &ok);
        QCOMPARE(numbers(after), (QList<int>{1, 2, 3, 11}));
        QCOMPARE(named(after, "audit.dropped").size(), 1);
    }

    // The queue's byte bound holds too: large records are dropped before memory grows.
    void queueIsBoundedInBytes()
    {
        QTemporaryDir dir;
        JsonLinesAuditSink::Options options;
        options.maxQueuedBytes = 1000;
        JsonLinesAuditSink sink(dir.filePath(QStringLiteral("audit.jsonl")), options);
        fault::failWrites("audit-append", EIO, 1000);
        for (int i = 0; i < 20; ++i)
            sink.record(testEvent(i)); // ~300 bytes each
        const AuditHealth h = sink.health();
        const qint64 line =
            QJsonDocument(testEvent(10).toJson()).toJson(QJsonDocument::Compact).size();
        QVERIFY(line > 250);
        QCOMPARE(h.recordsQueued, 1000 / (line + 1));
        QCOMPARE(h.recordsDropped, 20 - h.recordsQueued);
    }

    // Through AuditLog: health() aggregates, observers and the stderr warning fire once per
    // change of state, not per record.
    void healthIsReportedOncePerChange()
    {
        QTemporaryDir dir;
        JsonLinesAuditSink::Options options;
        options.maxQueuedRecords = 2;
        auto sink =
            std::make_shared<JsonLinesAuditSink>(dir.filePath(QStringLiteral("a.jsonl")), options);
        AuditLog &log = AuditLog::instance();
        QList<AuditHealth::State> seen;
        const int observer = log.addHealthObserver([&](const AuditHealth &h) { seen << h.state; });
        {
            QMutexLocker lock(&s_warningsMutex);
            s_warnings.clear();
        }
        const QtMessageHandler previous = qInstallMessageHandler(warningHandler);
        log.addSink(sink);
        QCOMPARE(log.health().state, AuditHealth::State::Ok);
        fault::failWrites("audit-append", ENOSPC, 1000);
        for (int i = 0; i < 20; ++i)
            log.emitEvent(QStringLiteral("test.record"), QStringLiteral("ws"),
                          QStringLiteral("agent"), QStringLiteral("ok"));
        const AuditHealth failing = log.health();
        QCOMPARE(failing.state, AuditHealth::State::Failing);
        QCOMPARE(failing.recordsDropped, 18);
        fault::failWrites("", 0, 0);
        log.emitEvent(QStringLiteral("test.record"), QStringLiteral("ws"), QStringLiteral("agent"),
                      QStringLiteral("ok"));
        QCOMPARE(log.health().state, AuditHealth::State::Degraded);
        log.removeSink(sink);
        log.removeHealthObserver(observer);
        qInstallMessageHandler(previous);

        QCOMPARE(seen, (QList<AuditHealth::State>{AuditHealth::State::Degraded,
                                                  AuditHealth::State::Failing,
                                                  AuditHealth::State::Degraded}));
        QMutexLocker lock(&s_warningsMutex);
        QCOMPARE(s_warnings.size(), 3);
        QVERIFY2(s_warnings.at(1).contains(QLatin1String("failing")) &&
                     s_warnings.at(1).contains(QLatin1String("records dropped")),
                 qPrintable(s_warnings.join(u'\n')));
    }

    // Opening a file whose last line was torn (a crash mid-write) cuts it off with a note.
    void tornTailIsCutOnOpen_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<int>("kept");
        const QByteArray good = QJsonDocument(testEvent(1).toJson()).toJson(QJsonDocument::Compact);
        QTest::newRow("record then a torn one") << good + "\n{\"event\":\"sandbox.exe" << 1;
        QTest::newRow("only a torn line") << QByteArray("{\"event\":\"sand") << 0;
        QTest::newRow("a long torn line") << good + "\n" + QByteArray(200000, 'x') << 1;
    }

    void tornTailIsCutOnOpen()
    {
        QFETCH(QByteArray, content);
        QFETCH(int, kept);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("audit.jsonl"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
        }
        const qint64 cut = content.lastIndexOf('\n') + 1;
        {
            JsonLinesAuditSink sink(path);
            sink.record(testEvent(2));
        }
        bool ok = false;
        const QList<QJsonObject> records = lines(path, &ok);
        QVERIFY(ok);
        QCOMPARE(records.size(), kept + 2);
        const QJsonObject note = records.at(kept);
        QCOMPARE(note.value(QLatin1String("event")).toString(), QStringLiteral("audit.torn_tail"));
        QCOMPARE(note.value(QLatin1String("bytes_removed")).toInteger(), content.size() - cut);
        QCOMPARE(records.last().value(QLatin1String("n")).toInt(), 2);
    }

    void intactFileGetsNoNote()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("audit.jsonl"));
        {
            JsonLinesAuditSink(path).record(testEvent(1));
        }
        {
            JsonLinesAuditSink(path).record(testEvent(2));
        }
        bool ok = false;
        const QList<QJsonObject> records = lines(path, &ok);
        QVERIFY(ok);
        QCOMPARE(numbers(records), (QList<int>{1, 2}));
        QCOMPARE(records.size(), 2);
    }
};

QTEST_GUILESS_MAIN(TestAuditFaults)
#include "tst_auditfaults.moc"
