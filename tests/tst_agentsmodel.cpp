// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentsmodel.h"
#include "modelroles.h"

#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QSignalSpy>
#include <QTimeZone>
#include <QtTest>

using namespace elsai;

namespace {

// "ws/name:calls" → a row; the call count stands in for any data change.
AgentRow row(const QString &spec)
{
    const QStringList wsRest = spec.split(QLatin1Char('/'));
    const QStringList nameCalls = wsRest.at(1).split(QLatin1Char(':'));
    AgentRow r;
    r.workspaceId = wsRest.at(0);
    r.name = nameCalls.at(0);
    r.mode = QStringLiteral("read_write");
    r.toolCalls = nameCalls.value(1).toInt();
    return r;
}

QList<AgentRow> rows(const QStringList &specs)
{
    QList<AgentRow> out;
    for (const QString &s : specs)
        out.append(row(s));
    return out;
}

QStringList specs(const AgentsModel &model)
{
    QStringList out;
    for (int i = 0; i < model.rowCount(); ++i) {
        const AgentRow &a = model.agent(i);
        out.append(QStringLiteral("%1/%2:%3").arg(a.workspaceId, a.name).arg(a.toolCalls));
    }
    return out;
}

} // namespace

class TestAgentsModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modelTester();
    void merge_data();
    void merge();
    void mergeKeepsSelection();
    void displayAndRoles();
};

void TestAgentsModel::modelTester()
{
    AgentsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setAgents(rows({"w/a:0", "w/b:0", "w/c:0"}));
    model.setAgents(rows({"w/x:0", "w/c:1", "w/a:0", "w/y:0"}));
    model.setAgents(rows({"w/y:2", "w/a:0"}));
    model.setAgents({});
    model.setAgents(rows({"v/a:0", "w/a:0"}));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), int(AgentsModel::ColumnCount));
}

void TestAgentsModel::merge_data()
{
    QTest::addColumn<QStringList>("before");
    QTest::addColumn<QStringList>("after");
    QTest::addColumn<QStringList>("expected");
    QTest::addColumn<int>("inserts");
    QTest::addColumn<int>("removes");
    QTest::addColumn<int>("moves");
    QTest::addColumn<int>("changes");

    const QStringList ab{"w/a:0", "w/b:0"};
    QTest::newRow("identical") << ab << ab << ab << 0 << 0 << 0 << 0;
    QTest::newRow("changed-one") << ab << QStringList{"w/a:0", "w/b:3"}
                                 << QStringList{"w/a:0", "w/b:3"} << 0 << 0 << 0 << 1;
    QTest::newRow("append") << ab << QStringList{"w/a:0", "w/b:0", "w/c:0"}
                            << QStringList{"w/a:0", "w/b:0", "w/c:0"} << 1 << 0 << 0 << 0;
    QTest::newRow("prepend-two-in-one-insert")
        << ab << QStringList{"w/x:0", "w/y:0", "w/a:0", "w/b:0"}
        << QStringList{"w/x:0", "w/y:0", "w/a:0", "w/b:0"} << 1 << 0 << 0 << 0;
    QTest::newRow("insert-between") << ab << QStringList{"w/a:0", "w/c:0", "w/b:0"}
                                    << QStringList{"w/a:0", "w/c:0", "w/b:0"} << 1 << 0 << 0 << 0;
    QTest::newRow("remove-middle")
        << QStringList{"w/a:0", "w/b:0", "w/c:0"} << QStringList{"w/a:0", "w/c:0"}
        << QStringList{"w/a:0", "w/c:0"} << 0 << 1 << 0 << 0;
    QTest::newRow("remove-two-ranges")
        << QStringList{"w/a:0", "w/b:0", "w/c:0", "w/d:0", "w/e:0"} << QStringList{"w/a:0", "w/d:0"}
        << QStringList{"w/a:0", "w/d:0"} << 0 << 2 << 0 << 0;
    QTest::newRow("remove-all") << ab << QStringList{} << QStringList{} << 0 << 1 << 0 << 0;
    QTest::newRow("from-empty") << QStringList{} << ab << ab << 1 << 0 << 0 << 0;
    QTest::newRow("reorder") << QStringList{"w/a:0", "w/b:0", "w/c:0"}
                             << QStringList{"w/c:0", "w/a:0", "w/b:0"}
                             << QStringList{"w/c:0", "w/a:0", "w/b:0"} << 0 << 0 << 1 << 0;
    QTest::newRow("replace-all") << ab << QStringList{"w/c:0", "w/d:0"}
                                 << QStringList{"w/c:0", "w/d:0"} << 1 << 1 << 0 << 0;
    QTest::newRow("same-name-other-workspace")
        << QStringList{"w/a:0"} << QStringList{"w/a:0", "v/a:0"} << QStringList{"w/a:0", "v/a:0"}
        << 1 << 0 << 0 << 0;
    QTest::newRow("duplicate-key-first-wins") << QStringList{} << QStringList{"w/a:1", "w/a:2"}
                                              << QStringList{"w/a:1"} << 1 << 0 << 0 << 0;
    QTest::newRow("mixed") << QStringList{"w/a:0", "w/b:0", "w/c:0"}
                           << QStringList{"w/n:0", "w/c:5", "w/a:0"}
                           << QStringList{"w/n:0", "w/c:5", "w/a:0"} << 1 << 1 << 1 << 1;
}

void TestAgentsModel::merge()
{
    QFETCH(QStringList, before);
    QFETCH(QStringList, after);
    QFETCH(QStringList, expected);
    QFETCH(int, inserts);
    QFETCH(int, removes);
    QFETCH(int, moves);
    QFETCH(int, changes);

    AgentsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setAgents(rows(before));
    QCOMPARE(specs(model), before);

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy moved(&model, &QAbstractItemModel::rowsMoved);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy layout(&model, &QAbstractItemModel::layoutChanged);
    model.setAgents(rows(after));

    QCOMPARE(specs(model), expected);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(layout.count(), 0);
    QCOMPARE(inserted.count(), inserts);
    QCOMPARE(removed.count(), removes);
    QCOMPARE(moved.count(), moves);
    QCOMPARE(changed.count(), changes);
    for (const QList<QVariant> &args : std::as_const(changed)) {
        QCOMPARE(args.at(0).toModelIndex().column(), 0);
        QCOMPARE(args.at(1).toModelIndex().column(), AgentsModel::ColumnCount - 1);
    }
}

void TestAgentsModel::mergeKeepsSelection()
{
    AgentsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QItemSelectionModel selection(&model);
    model.setAgents(rows({"ws1/alpha:1", "ws1/beta:1", "ws2/gamma:1"}));
    const int betaRow = model.rowOf(QStringLiteral("ws1"), QStringLiteral("beta"));
    const QModelIndex beta = model.index(betaRow, AgentsModel::NameColumn);
    selection.setCurrentIndex(beta,
                              QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    // Two agents attach before beta, alpha detaches, beta made more calls.
    model.setAgents(rows({"ws0/new1:0", "ws0/new2:0", "ws1/beta:9", "ws2/gamma:1"}));

    QCOMPARE(reset.count(), 0);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.rowOf(QStringLiteral("ws1"), QStringLiteral("beta")), 2);

    const QModelIndexList selected = selection.selectedRows();
    QCOMPARE(selected.size(), 1);
    QCOMPARE(selected.at(0).row(), 2);
    QCOMPARE(selected.at(0).data(Roles::AgentNameRole).toString(), QStringLiteral("beta"));
    QCOMPARE(selected.at(0).data(Roles::ToolCallsRole).toInt(), 9);
    QCOMPARE(selection.currentIndex().row(), 2);
    QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 2);
}

void TestAgentsModel::displayAndRoles()
{
    AgentRow a;
    a.workspaceId = QStringLiteral("ws");
    a.name = QStringLiteral("coder");
    a.mode = QStringLiteral("read_only");
    a.attachedAt = QDateTime(QDate(2024, 5, 1), QTime(10, 20, 30), QTimeZone::utc()).toUTC();
    a.toolCalls = 4;
    a.lastTool = QStringLiteral("write_file");
    a.lastOutcome = QStringLiteral("denied");
    a.tools = {QStringLiteral("read_file"), QStringLiteral("list_dir")};
    a.recentCalls = {{a.attachedAt, QStringLiteral("write_file"), QStringLiteral("denied")}};
    AgentsModel model;
    model.setAgents({a});

    auto at = [&model](int column, int role = Qt::DisplayRole) {
        return model.index(0, column).data(role);
    };
    QCOMPARE(at(AgentsModel::NameColumn).toString(), QStringLiteral("coder"));
    QCOMPARE(at(AgentsModel::WorkspaceColumn).toString(), QStringLiteral("ws"));
    QCOMPARE(at(AgentsModel::ModeColumn).toString(), QStringLiteral("read-only"));
    QCOMPARE(at(AgentsModel::AttachedColumn).toString(),
             a.attachedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd hh:mm:ss")));
    QCOMPARE(at(AgentsModel::CallsColumn).toInt(), 4);
    QCOMPARE(at(AgentsModel::LastToolColumn).toString(), QStringLiteral("write_file"));
    QCOMPARE(at(AgentsModel::LastOutcomeColumn).toString(), QStringLiteral("denied"));
    QCOMPARE(at(AgentsModel::NameColumn, Qt::ToolTipRole).toString(),
             QStringLiteral("Tools: read_file, list_dir"));
    QVERIFY(at(AgentsModel::LastToolColumn, Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("write_file  denied")));
    QCOMPARE(at(AgentsModel::CallsColumn, Roles::WorkspaceIdRole).toString(), QStringLiteral("ws"));
    QCOMPARE(at(0, Roles::AgentNameRole).toString(), QStringLiteral("coder"));
    QCOMPARE(at(0, Roles::AttachModeRole).toString(), QStringLiteral("read_only"));
    QCOMPARE(at(0, Roles::ToolCallsRole).toInt(), 4);
    QCOMPARE(model.headerData(AgentsModel::LastOutcomeColumn, Qt::Horizontal).toString(),
             QStringLiteral("Last outcome"));
    QCOMPARE(model.rowOf(QStringLiteral("ws"), QStringLiteral("other")), -1);
}

QTEST_GUILESS_MAIN(TestAgentsModel)
#include "tst_agentsmodel.moc"
