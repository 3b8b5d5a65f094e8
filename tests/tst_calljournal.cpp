// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The call journal (core/calljournal.h): what each call changed with its contents, so the diff
// of one call is exact — the state after the previous call that changed a path (or the
// baseline checkpoint) against the state after this call; its bounds, and its contents pinned
// against the store's garbage collection. Then TimeTravel::callDiff() through real calls.
#include "agent.h"
#include "calljournal.h"
#include "checkpointstore.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "testutil.h"
#include "timetravel.h"

#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QtTest>

using namespace elsai;

namespace {

PathState fileState(qint64 size, qint64 mtime = 1)
{
    PathState s;
    s.type = TreeEntry::Type::File;
    s.mode = 0644;
    s.size = size;
    s.mtimeNs = mtime;
    s.ino = 7;
    return s;
}

/// A reader over an in-memory workspace.
CallJournal::Reader readerOf(const QHash<QByteArray, QByteArray> &files)
{
    return [files](const QByteArray &path, qint64 maxBytes) -> std::optional<QByteArray> {
        const auto it = files.constFind(path);
        if (it == files.constEnd() || it->size() > maxBytes)
            return std::nullopt;
        return *it;
    };
}

bool blobPresent(const CheckpointStore &store, const QByteArray &content)
{
    try {
        return store.readBlob(contentHash(content)) == content;
    } catch (const SandboxError &) {
        return false;
    }
}

QString diffText(const CheckpointDiff &d, const QString &path)
{
    for (const CheckpointDiffEntry &e : d.entries) {
        if (e.path == path)
            return e.diff;
    }
    return QStringLiteral("<none>");
}

} // namespace

class TestCallJournal : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false")); }
    void beforeIsThePreviousCall();
    void bounds_data();
    void bounds();
    void pinnedAgainstGarbageCollection();
    void callDiffThroughCalls();
};

void TestCallJournal::beforeIsThePreviousCall()
{
    QTemporaryDir tmp;
    const auto store = CheckpointStore::open(tmp.path());
    CallJournal journal(store, QStringLiteral("seed"));
    QHash<QByteArray, QByteArray> ws{{"a.txt", "one\n"}};
    journal.record(1, {{"a.txt", fileState(1), fileState(4)}}, readerOf(ws));
    ws["a.txt"] = "two\n";
    journal.record(2,
                   {{"a.txt", fileState(4), fileState(4, 2)},
                    {"b", std::nullopt,
                     [] {
                         PathState d;
                         d.type = TreeEntry::Type::Dir;
                         d.mode = 0755;
                         return d;
                     }()}},
                   readerOf(ws));

    const auto first = journal.call(1);
    QVERIFY(first);
    QCOMPARE(first->paths.size(), 1);
    QVERIFY(first->paths[0].beforeFromBaseline); // nobody changed it before: the seed's state
    QCOMPARE(first->baseline, QStringLiteral("seed"));
    QCOMPARE(first->paths[0].after->hash, contentHash("one\n"));

    const auto second = journal.call(2);
    QVERIFY(second);
    QCOMPARE(second->paths.size(), 2);
    const CallPathState &a = second->paths[0];
    QCOMPARE(a.path, QByteArray("a.txt"));
    QVERIFY(!a.beforeFromBaseline);
    QCOMPARE(a.before->hash, contentHash("one\n")); // what call 1 left
    QCOMPARE(a.after->hash, contentHash("two\n"));
    QCOMPARE(second->paths[1].path, QByteArray("b"));
    QVERIFY(second->paths[1].after && second->paths[1].after->type == TreeEntry::Type::Dir);
    QVERIFY(blobPresent(*store, "one\n"));
    QVERIFY(blobPresent(*store, "two\n"));

    // after a restore, the restored checkpoint is the baseline again
    journal.rebase(QStringLiteral("before-refactor"));
    journal.record(3, {{"a.txt", fileState(4), std::nullopt}}, readerOf({}));
    const auto third = journal.call(3);
    QVERIFY(third && third->paths[0].beforeFromBaseline && !third->paths[0].after);
    QCOMPARE(third->baseline, QStringLiteral("before-refactor"));
    QVERIFY(!journal.call(99));
}

void TestCallJournal::bounds_data()
{
    QTest::addColumn<int>("files");
    QTest::addColumn<qint64>("fileBytes");
    QTest::addColumn<int>("maxPaths");
    QTest::addColumn<qint64>("maxFile");
    QTest::addColumn<qint64>("maxCall");
    QTest::addColumn<int>("listed");
    QTest::addColumn<int>("withContent");
    // clang-format off
    QTest::newRow("all kept")         << 5 << qint64(10)  << 100 << qint64(100) << qint64(1000) << 5 << 5;
    QTest::newRow("file over bound")  << 3 << qint64(200) << 100 << qint64(100) << qint64(1000) << 3 << 0;
    QTest::newRow("call over bound")  << 5 << qint64(40)  << 100 << qint64(100) << qint64(100)  << 5 << 2;
    QTest::newRow("paths over bound") << 8 << qint64(10)  << 3   << qint64(100) << qint64(1000) << 3 << 3;
    // clang-format on
}

void TestCallJournal::bounds()
{
    QFETCH(int, files);
    QFETCH(qint64, fileBytes);
    QFETCH(int, maxPaths);
    QFETCH(qint64, maxFile);
    QFETCH(qint64, maxCall);
    QFETCH(int, listed);
    QFETCH(int, withContent);
    QTemporaryDir tmp;
    CallJournal::Limits limits;
    limits.maxPathsPerCall = maxPaths;
    limits.maxFileBytes = maxFile;
    limits.maxCallBytes = maxCall;
    CallJournal journal(CheckpointStore::open(tmp.path()), QStringLiteral("seed"), limits);
    QHash<QByteArray, QByteArray> ws;
    QList<PathChange> changed;
    for (int i = 0; i < files; ++i) {
        const QByteArray path = "f" + QByteArray::number(i);
        ws.insert(path, QByteArray(fileBytes, char('a' + i))); // distinct contents
        changed.append({path, std::nullopt, fileState(fileBytes)});
    }
    journal.record(1, changed, readerOf(ws));
    const auto r = journal.call(1);
    QVERIFY(r);
    QCOMPARE(r->paths.size(), listed);
    QCOMPARE(r->unjournaled, qint64(files - listed));
    int kept = 0;
    for (const CallPathState &p : r->paths) {
        QCOMPARE(p.after->size, fileBytes); // the metadata is always exact
        kept += p.after->hash.isEmpty() ? 0 : 1;
    }
    QCOMPARE(kept, withContent);
    QCOMPARE(journal.pinnedBytes(), withContent * fileBytes);
}

void TestCallJournal::pinnedAgainstGarbageCollection()
{
    QTemporaryDir tmp;
    const auto store = CheckpointStore::open(tmp.path());
    CallJournal::Limits limits;
    limits.maxPinnedBytes = 10; // two calls of 6 bytes: the older one's pins go
    {
        CallJournal journal(store, QStringLiteral("seed"), limits);
        journal.record(1, {{"x", std::nullopt, fileState(6)}}, readerOf({{"x", "first\n"}}));
        store->collectGarbage(0); // nothing refers to it but the journal's pin
        QVERIFY(blobPresent(*store, "first\n"));
        journal.record(2, {{"x", fileState(6), fileState(6, 2)}}, readerOf({{"x", "other\n"}}));
        QVERIFY(!journal.call(1)); // evicted: over maxPinnedBytes
        QVERIFY(journal.call(2));
        // call 2's before is call 1's content: pinned by call 2 too, so it stays
        QCOMPARE(journal.pinnedBytes(), qint64(12));
        store->collectGarbage(0);
        QVERIFY(blobPresent(*store, "first\n"));
        QVERIFY(blobPresent(*store, "other\n"));
    }
    store->collectGarbage(0); // the journal is gone: so are its pins
    QVERIFY(!blobPresent(*store, "first\n"));
    QVERIFY(!blobPresent(*store, "other\n"));
}

void TestCallJournal::callDiffThroughCalls()
{
    QTemporaryDir tmp;
    const QString ws = tmp.path() + QStringLiteral("/ws");
    test::writeHostFile(ws + QStringLiteral("/app.py"), "x = 1\ny = 2\n");
    test::writeHostFile(ws + QStringLiteral("/old.txt"), "gone soon\n");
    Sandbox::Options options;
    options.timeTravel.checkpoints = true;
    options.timeTravel.trackChanges = true;
    options.timeTravel.folder = tmp.path() + QStringLiteral("/store");
    const SandboxPtr sandbox = Sandbox::create(
        QStringLiteral("cj"), std::make_shared<LocalSandboxBackend>(ws), std::nullopt, options);
    sandbox->start();
    AgentConfig config;
    config.sandbox = sandbox;
    config.sandboxMode = SandboxMode::Sandbox;
    const AgentPtr agent = Agent::create(QStringLiteral("a1"), config);
    const auto run = [&](const QString &command) {
        return agent->callTool(QStringLiteral("execute"), {{QStringLiteral("command"), command}});
    };
    run(QStringLiteral("sed -i 's/x = 1/x = 10/' app.py && rm old.txt"));
    run(QStringLiteral("echo 'z = 3' >> app.py && printf 'new\\n' > new.txt"));
    run(QStringLiteral("echo broken >> app.py; exit 3"));

    const auto tt = sandbox->timeTravel();
    const QList<CallChangeRecord> log = tt->tracker()->log();
    QCOMPARE(log.size(), 3);
    QCOMPARE(log[0].outcome, QStringLiteral("ok"));
    QCOMPARE(log[2].outcome, QStringLiteral("exit 3"));

    const CheckpointDiff first = tt->callDiff(log[0].id);
    QCOMPARE(first.modified, qint64(1));
    QCOMPARE(first.deleted, qint64(1));
    QVERIFY(diffText(first, QStringLiteral("app.py")).contains(QLatin1String("-x = 1\n+x = 10")));
    QVERIFY(diffText(first, QStringLiteral("old.txt")).contains(QLatin1String("-gone soon")));

    // the second call's diff starts where the first one left app.py, not at the seed
    const CheckpointDiff second = tt->callDiff(log[1].id);
    QCOMPARE(second.added, qint64(1));
    QCOMPARE(second.modified, qint64(1));
    const QString app = diffText(second, QStringLiteral("app.py"));
    QVERIFY2(app.contains(QLatin1String(" x = 10\n")) && app.contains(QLatin1String("+z = 3")),
             qPrintable(app));
    QVERIFY(!app.contains(QLatin1String("x = 1\n")));
    QVERIFY(diffText(second, QStringLiteral("new.txt")).contains(QLatin1String("+new")));

    // after a restore, a call's "before" is the restored checkpoint
    sandbox->restore(QStringLiteral("seed"));
    run(QStringLiteral("echo again >> app.py"));
    const QList<CallChangeRecord> after = tt->tracker()->log();
    const QString again = diffText(tt->callDiff(after.last().id), QStringLiteral("app.py"));
    QVERIFY2(again.contains(QLatin1String(" x = 1\n")) && again.contains(QLatin1String("+again")),
             qPrintable(again));

    // a host edit (the window's, a script's) is a call of the log too
    sandbox->writeFile(QStringLiteral("app.py"), "by hand\n", QStringLiteral("human"));
    const CallChangeRecord edit = tt->tracker()->log().last();
    QCOMPARE(edit.actor, QStringLiteral("human"));
    QCOMPARE(edit.tool, QStringLiteral("write_file"));
    QCOMPARE(edit.changes.modified, qint64(1));
    QVERIFY(diffText(tt->callDiff(edit.id), QStringLiteral("app.py"))
                .contains(QLatin1String("-again\n+by hand")));

    QVERIFY_THROWS_EXCEPTION(FileNotFoundError, tt->callDiff(12345));
    sandbox->stop(false);
}

QTEST_GUILESS_MAIN(TestCallJournal)
#include "tst_calljournal.moc"
