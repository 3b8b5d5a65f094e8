// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "modelroles.h"
#include "sessionsmodel.h"

#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QSignalSpy>
#include <QTimeZone>
#include <QtTest>

#include <limits>

using namespace elsai;

namespace {

// "id:idle" → a running session; the idle seconds stand in for any data change.
SessionRow session(const QString &spec)
{
    const QStringList parts = spec.split(QLatin1Char(':'));
    SessionRow s;
    s.workspaceId = parts.at(0);
    s.backend = QStringLiteral("local");
    s.state = SessionState::Running;
    s.idleSeconds = parts.value(1).toDouble();
    s.ttlSeconds = 7200;
    return s;
}

QList<SessionRow> sessions(const QStringList &specs)
{
    QList<SessionRow> out;
    for (const QString &s : specs)
        out.append(session(s));
    return out;
}

QStringList specs(const SessionsModel &model)
{
    QStringList out;
    for (int i = 0; i < model.rowCount(); ++i)
        out.append(QStringLiteral("%1:%2")
                       .arg(model.session(i).workspaceId)
                       .arg(model.session(i).idleSeconds));
    return out;
}

} // namespace

class TestSessionsModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modelTester();
    void merge_data();
    void merge();
    void mergeKeepsSelection();
    void stateNames_data();
    void stateNames();
    void formatDuration_data();
    void formatDuration();
    void ttlRemaining_data();
    void ttlRemaining();
    void displayAndRoles();
};

void TestSessionsModel::modelTester()
{
    SessionsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setSessions(sessions({"a:0", "b:0", "c:0"}));
    model.setSessions(sessions({"x:0", "c:1", "a:0", "y:0"}));
    model.setSessions(sessions({"y:2", "a:0"}));
    model.setSessions({});
    model.setSessions(sessions({"a:0"}));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.columnCount(), int(SessionsModel::ColumnCount));
}

void TestSessionsModel::merge_data()
{
    QTest::addColumn<QStringList>("before");
    QTest::addColumn<QStringList>("after");
    QTest::addColumn<int>("inserts");
    QTest::addColumn<int>("removes");
    QTest::addColumn<int>("moves");
    QTest::addColumn<int>("changes");

    const QStringList ab{"a:0", "b:0"};
    QTest::newRow("identical") << ab << ab << 0 << 0 << 0 << 0;
    QTest::newRow("idle-ticks") << ab << QStringList{"a:5", "b:5"} << 0 << 0 << 0 << 2;
    QTest::newRow("new-first") << ab << QStringList{"n:0", "a:0", "b:0"} << 1 << 0 << 0 << 0;
    QTest::newRow("gone") << ab << QStringList{"b:0"} << 0 << 1 << 0 << 0;
    QTest::newRow("swap") << ab << QStringList{"b:0", "a:0"} << 0 << 0 << 1 << 0;
    QTest::newRow("from-empty") << QStringList{} << ab << 1 << 0 << 0 << 0;
    QTest::newRow("to-empty") << ab << QStringList{} << 0 << 1 << 0 << 0;
    QTest::newRow("mixed") << QStringList{"a:0", "b:0", "c:0"} << QStringList{"n:0", "c:5", "a:0"}
                           << 1 << 1 << 1 << 1;
}

void TestSessionsModel::merge()
{
    QFETCH(QStringList, before);
    QFETCH(QStringList, after);
    QFETCH(int, inserts);
    QFETCH(int, removes);
    QFETCH(int, moves);
    QFETCH(int, changes);

    SessionsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setSessions(sessions(before));
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy moved(&model, &QAbstractItemModel::rowsMoved);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setSessions(sessions(after));

    QCOMPARE(specs(model), after);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(inserted.count(), inserts);
    QCOMPARE(removed.count(), removes);
    QCOMPARE(moved.count(), moves);
    QCOMPARE(changed.count(), changes);
}

void TestSessionsModel::mergeKeepsSelection()
{
    SessionsModel model;
    QItemSelectionModel selection(&model);
    model.setSessions(sessions({"a:0", "b:0"}));
    selection.setCurrentIndex(model.index(1, SessionsModel::StateColumn),
                              QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QList<SessionRow> next = sessions({"new:0", "a:0", "b:30"});
    next[2].state = SessionState::Expired;
    next[2].message = QStringLiteral("expired after 7200 s idle");
    model.setSessions(next);

    QCOMPARE(reset.count(), 0);
    const QModelIndexList selected = selection.selectedRows();
    QCOMPARE(selected.size(), 1);
    QCOMPARE(selected.at(0).row(), 2);
    QCOMPARE(selected.at(0).data(Roles::WorkspaceIdRole).toString(), QStringLiteral("b"));
    QCOMPARE(selected.at(0).data(Roles::SessionStateRole).toInt(), int(SessionState::Expired));
    QCOMPARE(selection.currentIndex().row(), 2);
}

void TestSessionsModel::stateNames_data()
{
    QTest::addColumn<SessionState>("state");
    QTest::addColumn<QString>("name");
    QTest::newRow("stopped") << SessionState::Stopped << QStringLiteral("stopped");
    QTest::newRow("starting") << SessionState::Starting << QStringLiteral("starting");
    QTest::newRow("running") << SessionState::Running << QStringLiteral("running");
    QTest::newRow("stopping") << SessionState::Stopping << QStringLiteral("stopping");
    QTest::newRow("expired") << SessionState::Expired << QStringLiteral("expired");
    QTest::newRow("failed") << SessionState::Failed << QStringLiteral("failed");
}

void TestSessionsModel::stateNames()
{
    QFETCH(SessionState, state);
    QFETCH(QString, name);
    QCOMPARE(toString(state), name);
}

void TestSessionsModel::formatDuration_data()
{
    QTest::addColumn<QVariant>("seconds"); // invalid = none
    QTest::addColumn<QString>("expected");

    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    QTest::newRow("none") << QVariant() << QStringLiteral("—");
    QTest::newRow("zero") << QVariant(0.0) << QStringLiteral("0s");
    QTest::newRow("seconds") << QVariant(45.0) << QStringLiteral("45s");
    QTest::newRow("fraction-truncated") << QVariant(59.9) << QStringLiteral("59s");
    QTest::newRow("one-minute") << QVariant(60.0) << QStringLiteral("1m 00s");
    QTest::newRow("minutes-padded-seconds") << QVariant(303.0) << QStringLiteral("5m 03s");
    QTest::newRow("just-under-an-hour") << QVariant(3599.0) << QStringLiteral("59m 59s");
    QTest::newRow("one-hour") << QVariant(3600.0) << QStringLiteral("1h 00m");
    QTest::newRow("hours-padded-minutes") << QVariant(3720.0) << QStringLiteral("1h 02m");
    QTest::newRow("hours-drop-seconds") << QVariant(7199.0) << QStringLiteral("1h 59m");
    QTest::newRow("more-than-a-day") << QVariant(90000.0) << QStringLiteral("25h 00m");
    QTest::newRow("negative-clamped") << QVariant(-5.0) << QStringLiteral("0s");
    QTest::newRow("nan") << QVariant(nan) << QStringLiteral("—");
    QTest::newRow("infinite") << QVariant(inf) << QStringLiteral("—");
}

void TestSessionsModel::formatDuration()
{
    QFETCH(QVariant, seconds);
    QFETCH(QString, expected);
    const std::optional<double> value =
        seconds.isValid() ? std::optional<double>(seconds.toDouble()) : std::nullopt;
    QCOMPARE(elsai::formatDuration(value), expected);
}

void TestSessionsModel::ttlRemaining_data()
{
    QTest::addColumn<SessionState>("state");
    QTest::addColumn<QVariant>("ttl"); // invalid = no TTL
    QTest::addColumn<double>("idle");
    QTest::addColumn<QVariant>("expected"); // invalid = none

    QTest::newRow("running") << SessionState::Running << QVariant(7200.0) << 100.0
                             << QVariant(7100.0);
    QTest::newRow("running-fresh")
        << SessionState::Running << QVariant(60.0) << 0.0 << QVariant(60.0);
    QTest::newRow("running-overdue-clamped")
        << SessionState::Running << QVariant(60.0) << 75.5 << QVariant(0.0);
    QTest::newRow("running-no-ttl") << SessionState::Running << QVariant() << 100.0 << QVariant();
    QTest::newRow("stopped") << SessionState::Stopped << QVariant(7200.0) << 0.0 << QVariant();
    QTest::newRow("starting") << SessionState::Starting << QVariant(7200.0) << 0.0 << QVariant();
    QTest::newRow("expired") << SessionState::Expired << QVariant(60.0) << 61.0 << QVariant();
    QTest::newRow("failed") << SessionState::Failed << QVariant(60.0) << 0.0 << QVariant();
}

void TestSessionsModel::ttlRemaining()
{
    QFETCH(SessionState, state);
    QFETCH(QVariant, ttl);
    QFETCH(double, idle);
    QFETCH(QVariant, expected);

    SessionRow s;
    s.workspaceId = QStringLiteral("ws");
    s.state = state;
    s.idleSeconds = idle;
    if (ttl.isValid())
        s.ttlSeconds = ttl.toDouble();
    const std::optional<double> left = s.ttlRemaining();
    QCOMPARE(left.has_value(), expected.isValid());
    if (left)
        QCOMPARE(*left, expected.toDouble());

    // The model shows the same value: formatted in the TTL column, raw in TtlRemainingRole.
    SessionsModel model;
    model.setSessions({s});
    const QModelIndex ttlCell = model.index(0, SessionsModel::TtlColumn);
    QCOMPARE(ttlCell.data().toString(), elsai::formatDuration(left));
    QCOMPARE(ttlCell.data(Roles::TtlRemainingRole).isValid(), expected.isValid());
    if (left)
        QCOMPARE(ttlCell.data(Roles::TtlRemainingRole).toDouble(), *left);
}

void TestSessionsModel::displayAndRoles()
{
    SessionRow s;
    s.workspaceId = QStringLiteral("graph-42");
    s.backend = QStringLiteral("LocalSandboxBackend");
    s.workspaceRoot = QStringLiteral("/tmp/elsai-graph-42");
    s.state = SessionState::Failed;
    s.ownerId = QStringLiteral("owner-1");
    s.startedAt = QDateTime(QDate(2024, 5, 1), QTime(8, 0, 0), QTimeZone::utc()).toUTC();
    s.idleSeconds = 125;
    s.ttlSeconds = 7200;
    s.message = QStringLiteral("OSError: cannot create folder");
    SessionsModel model;
    model.setSessions({s});

    auto at = [&model](int column, int role = Qt::DisplayRole) {
        return model.index(0, column).data(role);
    };
    QCOMPARE(at(SessionsModel::WorkspaceColumn).toString(), QStringLiteral("graph-42"));
    // The name --backend takes, the class name in the tooltip.
    QCOMPARE(at(SessionsModel::BackendColumn).toString(), QStringLiteral("local"));
    QCOMPARE(at(SessionsModel::BackendColumn, Qt::ToolTipRole).toString(),
             QStringLiteral("LocalSandboxBackend"));
    QCOMPARE(SessionsModel::backendShortName(QStringLiteral("AgentCoreSandboxBackend")),
             QStringLiteral("agentcore"));
    QCOMPARE(SessionsModel::backendShortName(QStringLiteral("SshSandboxBackend")),
             QStringLiteral("ssh"));
    QCOMPARE(SessionsModel::backendShortName(QStringLiteral("Unknown")), QStringLiteral("Unknown"));
    QCOMPARE(at(SessionsModel::StateColumn).toString(), QStringLiteral("failed"));
    QCOMPARE(at(SessionsModel::OwnerColumn).toString(), QStringLiteral("owner-1"));
    QCOMPARE(at(SessionsModel::StartedColumn).toString(),
             s.startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd hh:mm:ss")));
    QCOMPARE(at(SessionsModel::IdleColumn).toString(), QStringLiteral("2m 05s"));
    QCOMPARE(at(SessionsModel::TtlColumn).toString(), QStringLiteral("—")); // not running
    QCOMPARE(at(SessionsModel::StateColumn, Qt::ToolTipRole).toString(), s.message);
    QCOMPARE(at(SessionsModel::WorkspaceColumn, Qt::ToolTipRole).toString(), s.workspaceRoot);
    QCOMPARE(at(SessionsModel::IdleColumn, Roles::WorkspaceIdRole).toString(),
             QStringLiteral("graph-42"));
    QCOMPARE(at(0, Roles::SessionStateRole).toInt(), int(SessionState::Failed));
    QVERIFY(!at(0, Roles::TtlRemainingRole).isValid());
    QCOMPARE(model.rowOf(QStringLiteral("graph-42")), 0);
    QCOMPARE(model.rowOf(QStringLiteral("nope")), -1);
    QCOMPARE(model.headerData(SessionsModel::TtlColumn, Qt::Horizontal).toString(),
             QStringLiteral("TTL left"));
}

QTEST_GUILESS_MAIN(TestSessionsModel)
#include "tst_sessionsmodel.moc"
