// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

// The Timeline's model (model/timelinemodel.h): calls and checkpoints of one sandbox in time
// order, updated incrementally (rows inserted, never a reset) as calls finish and checkpoints
// come and go; and the text a Timeline diff shows.

#include "agent.h"
#include "checkpointtreemodel.h"
#include "filediff.h"
#include "modelroles.h"
#include "sandboxcontroller.h"
#include "testutil.h"
#include "timelinemodel.h"

#include <QAbstractItemModelTester>
#include <QLoggingCategory>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace elsai;
using K = TimelineRow::Kind;

class TestTimelineModel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;

    SandboxSpec spec(const QString &id, bool checkpoints, bool tracking)
    {
        SandboxSpec s;
        s.workspaceId = id;
        s.workspaceRoot = m_tmp.filePath(id);
        test::writeHostFile(s.workspaceRoot + QStringLiteral("/a.txt"), "one\n");
        s.timeTravel.checkpoints = checkpoints;
        s.timeTravel.trackChanges = tracking;
        s.timeTravel.folder = m_tmp.filePath(QStringLiteral("store"));
        return s;
    }

    static bool waitStarted(SandboxController &c, const QString &id)
    {
        return QTest::qWaitFor([&] { return c.state(id) == SessionState::Running; }, 20000);
    }

    /// Waits for the fetch after the last one (the history changed meanwhile).
    static bool waitFetch(TimelineModel &model)
    {
        const int before = model.fetchCount();
        model.refresh();
        return QTest::qWaitFor([&] { return model.fetchCount() > before && !model.isFetching(); },
                               10000);
    }

    static QList<K> kinds(const TimelineModel &m)
    {
        QList<K> out;
        for (int r = 0; r < m.rowCount(); ++r)
            out.append(m.rowAt(r).kind);
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false"));
    }

    void liveAndIncremental()
    {
        SandboxController controller;
        controller.addSandbox(spec(QStringLiteral("tl"), true, true));
        QVERIFY(waitStarted(controller, QStringLiteral("tl")));
        TimelineModel model(&controller);
        model.setPollInterval(20);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setWorkspace(QStringLiteral("tl"));
        QVERIFY(QTest::qWaitFor([&] { return model.fetchCount() > 0 && !model.isFetching(); }));
        // the seed baseline, then "now"
        QCOMPARE(kinds(model), (QList<K>{K::Checkpoint, K::Now}));
        QCOMPARE(model.rowAt(0).name, QStringLiteral("seed"));
        QVERIFY(model.rowAt(0).automatic);
        QCOMPARE(model.rowAt(0).files, 1);
        QVERIFY(model.problem().isEmpty());
        const QPersistentModelIndex seedRow = model.index(0, 0);

        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        // an agent's calls: the model follows without being asked (the history counter)
        AgentConfig config;
        config.sandbox = controller.sandbox(QStringLiteral("tl"));
        config.sandboxMode = SandboxMode::Sandbox;
        const AgentPtr agent = Agent::create(QStringLiteral("a1"), config);
        agent->callTool(QStringLiteral("execute"),
                        {{QStringLiteral("command"), QStringLiteral("echo two >> a.txt && "
                                                                    "touch b.txt")}});
        QVERIFY(QTest::qWaitFor([&] { return model.rowCount() == 3; }, 10000));
        QCOMPARE(kinds(model), (QList<K>{K::Checkpoint, K::Call, K::Now}));
        const TimelineRow call = model.rowAt(1);
        QCOMPARE(call.actor, QStringLiteral("a1"));
        QCOMPARE(call.tool, QStringLiteral("execute"));
        QCOMPARE(call.outcome, QStringLiteral("ok"));
        QCOMPARE(call.added, 1);
        QCOMPARE(call.modified, 1);
        QCOMPARE(model.index(1, TimelineModel::ChangesColumn).data().toString(),
                 QStringLiteral("+1 ~1 −0"));
        QCOMPARE(model.index(1, 0).data(Roles::CallIdRole).toULongLong(), call.callId);
        QCOMPARE(model.rowOfCall(call.callId), 1);

        // a failing command, then a named checkpoint: appended in time order
        agent->callTool(QStringLiteral("execute"),
                        {{QStringLiteral("command"), QStringLiteral("rm b.txt; exit 2")}});
        controller.sandbox(QStringLiteral("tl"))
            ->checkpoint(QStringLiteral("v1"), QStringLiteral("first"));
        QVERIFY(QTest::qWaitFor([&] { return model.rowCount() == 5; }, 10000));
        QCOMPARE(kinds(model), (QList<K>{K::Checkpoint, K::Call, K::Call, K::Checkpoint, K::Now}));
        QCOMPARE(model.rowAt(2).outcome, QStringLiteral("exit 2"));
        QCOMPARE(model.rowAt(2).deleted, 1);
        QCOMPARE(model.rowAt(3).name, QStringLiteral("v1"));
        QCOMPARE(model.rowAt(3).note, QStringLiteral("first"));
        QVERIFY(!model.rowAt(3).automatic);
        QCOMPARE(model.index(3, 0).data(Roles::CheckpointNameRole).toString(),
                 QStringLiteral("v1"));
        QCOMPARE(model.checkpointNames(),
                 (QStringList{QStringLiteral("seed"), QStringLiteral("v1")}));

        // a deleted checkpoint goes; the rest stays where it was
        controller.sandbox(QStringLiteral("tl"))->deleteCheckpoint(QStringLiteral("v1"));
        QVERIFY(QTest::qWaitFor([&] { return model.rowCount() == 4; }, 10000));
        QCOMPARE(model.rowOfCheckpoint(QStringLiteral("v1")), -1);
        QCOMPARE(resets.count(), 0);
        QVERIFY(inserted.count() >= 2);
        QVERIFY(seedRow.isValid() && seedRow.row() == 0);

        // a background process's row says what no call records of it
        agent->callTool(QStringLiteral("process_start"),
                        {{QStringLiteral("command"), QStringLiteral("true")}});
        QVERIFY(QTest::qWaitFor([&] { return model.rowCount() == 5; }, 10000));
        QCOMPARE(model.rowAt(3).tool, QStringLiteral("process_start"));
        QVERIFY(model.index(3, 0)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("A background process")));
        QVERIFY(!model.index(1, 0)
                     .data(Qt::ToolTipRole)
                     .toString()
                     .contains(QStringLiteral("background")));

        // the workspace at the seed, read-only, from the store (a.txt has changed since)
        CheckpointTreeModel tree;
        QAbstractItemModelTester treeTester(&tree,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy loaded(&tree, &CheckpointTreeModel::loaded);
        tree.load(controller.sandbox(QStringLiteral("tl"))->timeTravel(), QStringLiteral("seed"),
                  controller.bulkPool());
        QVERIFY(loaded.wait(10000));
        QCOMPARE(tree.rowCount(), 1);
        QCOMPARE(tree.index(0, 0).data().toString(), QStringLiteral("a.txt"));
        QCOMPARE(tree.indexForPath(QStringLiteral("a.txt")), tree.index(0, 0));
        QFuture<QByteArray> bytes = tree.readFile(QStringLiteral("a.txt"), controller.bulkPool());
        bytes.waitForFinished();
        QCOMPARE(bytes.result(), QByteArray("one\n"));

        // a restore is a marker row of its own
        controller.sandbox(QStringLiteral("tl"))->restore(QStringLiteral("seed"));
        QVERIFY(QTest::qWaitFor([&] { return model.rowCount() == 6; }, 10000));
        QCOMPARE(kinds(model),
                 (QList<K>{K::Checkpoint, K::Call, K::Call, K::Call, K::Restore, K::Now}));
        QCOMPARE(model.rowAt(4).name, QStringLiteral("seed"));
        QCOMPARE(model.rowOfCheckpoint(QStringLiteral("seed")), 0);

        // nothing changed: a fetch changes no row
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        inserted.clear();
        QVERIFY(waitFetch(model));
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(changed.count(), 0);

        // a new start is a new change log: the last run's calls go, its checkpoints stay
        controller.stopSandbox(QStringLiteral("tl"), false);
        QVERIFY(QTest::qWaitFor(
            [&] { return controller.state(QStringLiteral("tl")) != SessionState::Running; }));
        controller.startSandbox(QStringLiteral("tl"));
        QVERIFY(waitStarted(controller, QStringLiteral("tl")));
        QVERIFY(QTest::qWaitFor(
            [&] {
                return kinds(model) == QList<K>{K::Checkpoint, K::Now};
            },
            10000));
        QCOMPARE(resets.count(), 0);
        controller.shutdown();
    }

    void problems_data()
    {
        QTest::addColumn<bool>("checkpoints");
        QTest::addColumn<bool>("tracking");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<int>("rows");
        QTest::newRow("neither") << false << false << QStringLiteral("keeps no history") << 0;
        QTest::newRow("no tracking") << true << false << QStringLiteral("not tracked") << 2;
        QTest::newRow("no checkpoints") << false << true << QStringLiteral("no checkpoints") << 1;
    }

    void problems()
    {
        QFETCH(bool, checkpoints);
        QFETCH(bool, tracking);
        QFETCH(QString, problem);
        QFETCH(int, rows);
        SandboxController controller;
        const QString id = QStringLiteral("p%1%2").arg(checkpoints).arg(tracking);
        controller.addSandbox(spec(id, checkpoints, tracking));
        QVERIFY(waitStarted(controller, id));
        TimelineModel model(&controller);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setWorkspace(id);
        QVERIFY(QTest::qWaitFor([&] { return model.fetchCount() > 0 && !model.isFetching(); }));
        QVERIFY2(model.problem().contains(problem), qPrintable(model.problem()));
        QCOMPARE(model.rowCount(), rows);
        // stopped: it says so, and keeps the history it had
        controller.stopSandbox(id, false);
        QVERIFY(QTest::qWaitFor([&] { return controller.state(id) != SessionState::Running; }));
        QVERIFY(waitFetch(model));
        QVERIFY2(model.problem().contains(QLatin1String("not running")),
                 qPrintable(model.problem()));
        QCOMPARE(model.rowCount(), rows);
        controller.shutdown();
    }

    // The tree of a manifest: folders first, then by name; every entry under its folder.
    void checkpointTree()
    {
        TreeManifest m;
        const auto add = [&m](const char *path, TreeEntry::Type type) {
            TreeEntry e;
            e.path = path;
            e.type = type;
            m.entries.push_back(e);
        };
        add("a", TreeEntry::Type::Dir);
        add("a/b.txt", TreeEntry::Type::File);
        add("a/c", TreeEntry::Type::Symlink);
        add("b", TreeEntry::Type::Dir);
        add("z.txt", TreeEntry::Type::File);
        add("Y.txt", TreeEntry::Type::File);
        m.sort();
        const CheckpointTreeModel::Tree t = buildCheckpointTree(m);
        QStringList top;
        for (int id : t.nodes[0].children)
            top.append(t.nodes[size_t(id)].name);
        QCOMPARE(top, (QStringList{QStringLiteral("a"), QStringLiteral("b"),
                                   QStringLiteral("Y.txt"), QStringLiteral("z.txt")}));
        const int a = t.nodes[0].children[0];
        QCOMPARE(t.nodes[size_t(a)].children.size(), size_t(2));
        QCOMPARE(t.nodes[size_t(t.nodes[size_t(a)].children[1])].name, QStringLiteral("c"));
    }

    void diffText()
    {
        CheckpointDiff d;
        d.added = 1;
        d.modified = 1;
        CheckpointDiffEntry text;
        text.path = QStringLiteral("app.py");
        text.change = QStringLiteral("modified");
        text.type = QStringLiteral("file");
        text.sizeFrom = 6;
        text.sizeTo = 7;
        text.diff = QStringLiteral("--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 10\n");
        CheckpointDiffEntry binary;
        binary.path = QStringLiteral("img.png");
        binary.change = QStringLiteral("added");
        binary.type = QStringLiteral("file");
        binary.sizeTo = 2048;
        binary.binary = true;
        d.entries = {text, binary};
        const FileDiff f = timelineDiffText(d, QStringLiteral("Call 3"));
        QCOMPARE(f.kind, FileDiff::Kind::Text);
        QVERIFY(f.note.startsWith(QStringLiteral("Call 3\n1 added · 1 modified · 0 deleted")));
        const QStringList lines = f.body.split(QLatin1Char('\n'));
        QVERIFY2(lines.value(0).startsWith(QLatin1String("modified app.py (file")),
                 qPrintable(f.body));
        QCOMPARE(lines.value(4), QStringLiteral("-x = 1"));
        QVERIFY(lines.value(6).startsWith(QLatin1String("added img.png (file, ")));
        QVERIFY(lines.value(6).contains(QLatin1String("binary")));
        QCOMPARE(timelineDiffText({}, QStringLiteral("t")).kind, FileDiff::Kind::Identical);
    }
};

QTEST_GUILESS_MAIN(TestTimelineModel)
#include "tst_timelinemodel.moc"
