// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

// The Timeline panel offscreen: a call's own diff, two points compared, take / restore (the
// confirmation answered, and declined) / fork / delete a checkpoint, and every control named.

#include "agent.h"
#include "appsettings.h"
#include "checkpointbrowser.h"
#include "checkpointtreemodel.h"
#include "confirm.h"
#include "diffview.h"
#include "messagebar.h"
#include "modelroles.h"
#include "newsandboxdialog.h"
#include "sandboxcontroller.h"
#include "testutil.h"
#include "timelinemodel.h"
#include "timelinepanel.h"

#include <QAbstractButton>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QLoggingCategory>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

class TestTimelinePanel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    QList<Confirmation> m_asked;
    ConfirmAnswer m_answer = ConfirmAnswer::Accept;

    /// Selects `rows` (the first replaces the selection, the others are added: Ctrl-click)
    /// and waits for the diff they show.
    static bool select(TimelinePanel &panel, const QList<int> &rows)
    {
        QSignalSpy ready(&panel, &TimelinePanel::diffReady);
        QItemSelectionModel *sel = panel.view()->selectionModel();
        for (int i = 0; i < rows.size(); ++i)
            sel->select(
                panel.view()->model()->index(rows[i], 0),
                (i == 0 ? QItemSelectionModel::ClearAndSelect : QItemSelectionModel::Select) |
                    QItemSelectionModel::Rows);
        return !ready.isEmpty() || ready.wait(10000); // a message is shown at once
    }

    static bool finished(TimelinePanel &panel, const std::function<void()> &act, bool *ok)
    {
        QSignalSpy done(&panel, &TimelinePanel::operationFinished);
        act();
        if (done.isEmpty() && !done.wait(15000))
            return false;
        *ok = done.last().at(1).toBool();
        return true;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        QStandardPaths::setTestModeEnabled(true); // the dialog remembers its switches
        AppSettings::store().clear();
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false"));
        setConfirmHook([this](QWidget *, const Confirmation &q) {
            m_asked.append(q);
            return m_answer;
        });
    }
    void cleanupTestCase() { setConfirmHook({}); }

    // The New Sandbox dialog's history switches: on at first where the backend reads the
    // workspace directly, off (with the cost said) where it lists a remote one, and the last
    // choice for a local backend is remembered.
    void newSandboxHistory()
    {
        {
            NewSandboxDialog dialog;
            auto *checkpoints = dialog.findChild<QCheckBox *>(QStringLiteral("keepCheckpoints"));
            auto *tracking = dialog.findChild<QCheckBox *>(QStringLiteral("trackChanges"));
            QVERIFY(checkpoints && tracking);
            QVERIFY(checkpoints->isChecked() && checkpoints->isEnabled());
            QVERIFY(tracking->isChecked());
            SandboxSpec s = dialog.spec();
            QVERIFY(s.timeTravel.checkpoints && s.timeTravel.trackChanges);
            auto *backend = dialog.findChild<QComboBox *>(QStringLiteral("backend"));
            // a remote backend lists its workspace for them: offered, off, the cost said
            backend->setCurrentText(QStringLiteral("docker"));
            QVERIFY(checkpoints->isEnabled() && tracking->isEnabled());
            QVERIFY(!checkpoints->isChecked() && !tracking->isChecked());
            QVERIFY(checkpoints->toolTip().contains(QStringLiteral("lists the whole remote")));
            QVERIFY(tracking->toolTip().contains(QStringLiteral("listing of the whole remote")));
            QCOMPARE(checkpoints->accessibleName(), QStringLiteral("Keep checkpoints"));
            QCOMPARE(tracking->accessibleName(), QStringLiteral("Track changes per call"));
            checkpoints->setChecked(true);
            backend->setCurrentText(QStringLiteral("ssh")); // another remote one: as chosen
            QVERIFY(checkpoints->isChecked() && !tracking->isChecked());
            dialog.findChild<QLineEdit *>(QStringLiteral("sshHost"))
                ->setText(QStringLiteral("build.example"));
            s = dialog.spec();
            QVERIFY(s.timeTravel.checkpoints && !s.timeTravel.trackChanges);
            tracking->setChecked(true);
            s = dialog.spec();
            QVERIFY(s.timeTravel.checkpoints && s.timeTravel.trackChanges);
            for (const char *other : {"daytona", "agentcore"}) {
                backend->setCurrentText(QString::fromLatin1(other));
                QCOMPARE(backend->currentText(), QString::fromLatin1(other));
                QVERIFY2(checkpoints->isEnabled() && tracking->isEnabled(), other);
                QVERIFY2(checkpoints->toolTip().contains(QStringLiteral("Off by default")), other);
            }
            tracking->setChecked(false);
            // back to a local one: the remembered choice, and the local tooltip
            backend->setCurrentText(QStringLiteral("bwrap"));
            QVERIFY(checkpoints->isChecked() && tracking->isChecked());
            QVERIFY(!checkpoints->toolTip().contains(QStringLiteral("remote")));
            checkpoints->setChecked(false);
            dialog.accept();
        }
        {
            // a choice made for a remote backend is not remembered for the local ones
            NewSandboxDialog remote;
            remote.findChild<QComboBox *>(QStringLiteral("backend"))
                ->setCurrentText(QStringLiteral("ssh"));
            remote.findChild<QCheckBox *>(QStringLiteral("keepCheckpoints"))->setChecked(true);
            remote.findChild<QCheckBox *>(QStringLiteral("trackChanges"))->setChecked(false);
            remote.accept();
        }
        NewSandboxDialog again;
        QVERIFY(!again.findChild<QCheckBox *>(QStringLiteral("keepCheckpoints"))->isChecked());
        QVERIFY(again.findChild<QCheckBox *>(QStringLiteral("trackChanges"))->isChecked());
        // the command line's --checkpoints wins over the remembered choice
        SandboxSpec cli;
        cli.timeTravel.checkpoints = true;
        again.setSpec(cli);
        QVERIFY(again.findChild<QCheckBox *>(QStringLiteral("keepCheckpoints"))->isChecked());
        AppSettings::store().clear();
    }

    void panel()
    {
        SandboxController controller;
        SandboxSpec spec;
        spec.workspaceId = QStringLiteral("tl");
        spec.workspaceRoot = m_tmp.filePath(QStringLiteral("ws"));
        writeHostFile(spec.workspaceRoot + QStringLiteral("/app.py"), "x = 1\n");
        spec.timeTravel.checkpoints = true;
        spec.timeTravel.trackChanges = true;
        spec.timeTravel.folder = m_tmp.filePath(QStringLiteral("store"));
        controller.addSandbox(spec);
        QVERIFY(QTest::qWaitFor(
            [&] { return controller.state(QStringLiteral("tl")) == SessionState::Running; },
            20000));
        TimelinePanel panel(&controller);
        panel.model()->setPollInterval(20);
        panel.resize(1000, 400);
        panel.show();
        panel.setWorkspace(QStringLiteral("tl"));

        AgentConfig config;
        config.sandbox = controller.sandbox(QStringLiteral("tl"));
        config.sandboxMode = SandboxMode::Sandbox;
        const AgentPtr agent = Agent::create(QStringLiteral("coder"), config);
        const auto run = [&](const QString &command) {
            agent->callTool(QStringLiteral("execute"), {{QStringLiteral("command"), command}});
        };
        run(QStringLiteral("sed -i 's/x = 1/x = 10/' app.py"));
        run(QStringLiteral("printf 'y = 2\\n' > new.py; echo 'x += 1' >> app.py; exit 1"));
        TimelineModel *model = panel.model();
        // seed, two calls, now
        QVERIFY(QTest::qWaitFor([&] { return model->rowCount() == 4; }, 10000));

        // one call: what it changed, from the previous call's state (not from the seed)
        QVERIFY(select(panel, {2}));
        QString text = panel.diffView()->toPlainText();
        QVERIFY2(text.contains(QLatin1String("+x += 1")) && text.contains(QLatin1String(" x = 10")),
                 qPrintable(text));
        QVERIFY(!text.contains(QLatin1String("-x = 1\n")));
        QVERIFY(text.contains(QLatin1String("added new.py")));
        QVERIFY(text.contains(QLatin1String("exit 1")));

        // take a checkpoint through the panel; two points: seed against it
        bool ok = false;
        QVERIFY(finished(
            panel, [&] { panel.takeCheckpoint(QStringLiteral("v1"), QStringLiteral("two calls")); },
            &ok));
        QVERIFY(ok);
        QVERIFY(panel.messageBar()->text().contains(QLatin1String("v1")));
        QVERIFY(QTest::qWaitFor([&] { return model->rowOfCheckpoint(QStringLiteral("v1")) > 0; }));
        const int v1 = model->rowOfCheckpoint(QStringLiteral("v1"));
        QVERIFY(select(panel, {0, v1}));
        text = panel.diffView()->toPlainText();
        QVERIFY2(text.contains(QLatin1String("From seed to v1")) &&
                     text.contains(QLatin1String("-x = 1")) &&
                     text.contains(QLatin1String("+x = 10")),
                 qPrintable(text));
        // a call and a checkpoint are not two points
        QVERIFY(select(panel, {1, v1}));
        QVERIFY(panel.diffView()->toPlainText().contains(QLatin1String("select a call alone")));

        // restore to the seed: declined changes nothing, accepted makes it the seed again
        m_asked.clear();
        m_answer = ConfirmAnswer::Cancel;
        QVERIFY(finished(
            panel, [&] { panel.restoreCheckpoint(QStringLiteral("seed")); }, &ok));
        QVERIFY(!ok);
        QCOMPARE(m_asked.size(), 1);
        QCOMPARE(m_asked[0].kind, QStringLiteral("restore-checkpoint"));
        QVERIFY2(m_asked[0].text.contains(QLatin1String("2 path(s) differ")),
                 qPrintable(m_asked[0].text));
        QCOMPARE(m_asked[0].items,
                 (QStringList{QStringLiteral("app.py"), QStringLiteral("new.py")}));
        QVERIFY(QFile::exists(spec.workspaceRoot + QStringLiteral("/new.py")));
        m_answer = ConfirmAnswer::Accept;
        QVERIFY(finished(
            panel, [&] { panel.restoreCheckpoint(QStringLiteral("seed")); }, &ok));
        QVERIFY2(ok, qPrintable(panel.messageBar()->text()));
        QCOMPARE(readHostFile(spec.workspaceRoot + QStringLiteral("/app.py")),
                 QByteArray("x = 1\n"));
        QVERIFY(!QFile::exists(spec.workspaceRoot + QStringLiteral("/new.py")));
        QVERIFY(QTest::qWaitFor([&] {
            return model->rowAt(model->rowCount() - 2).kind == TimelineRow::Kind::Restore;
        }));

        // the workspace at v1, read-only from the store: new.py is gone from the workspace
        CheckpointBrowser *browser = panel.browseCheckpoint(QStringLiteral("v1"));
        QVERIFY(browser);
        QSignalSpy loaded(browser->model(), &CheckpointTreeModel::loaded);
        QVERIFY(loaded.wait(10000));
        QSignalSpy shown(browser, &CheckpointBrowser::fileShown);
        browser->tree()->setCurrentIndex(browser->model()->indexForPath(QStringLiteral("new.py")));
        QVERIFY(shown.wait(10000));
        QCOMPARE(browser->fileView()->toPlainText(), QStringLiteral("y = 2\n"));
        QVERIFY(browser->fileView()->isReadOnly());
        browser->close();

        // fork v1: a non-empty folder is refused, a new one becomes a new sandbox
        const QString busy = m_tmp.filePath(QStringLiteral("busy"));
        writeHostFile(busy + QStringLiteral("/keep.txt"), "mine\n");
        QVERIFY(finished(
            panel, [&] { panel.forkCheckpoint(QStringLiteral("v1"), busy); }, &ok));
        QVERIFY(!ok);
        QVERIFY(panel.messageBar()->text().contains(QLatin1String("not empty")));
        const QString forkRoot = m_tmp.filePath(QStringLiteral("fork"));
        QVERIFY(finished(
            panel, [&] { panel.forkCheckpoint(QStringLiteral("v1"), forkRoot); }, &ok));
        QVERIFY2(ok, qPrintable(panel.messageBar()->text()));
        QVERIFY(controller.workspaceIds().contains(QStringLiteral("tl-fork")));
        QCOMPARE(readHostFile(forkRoot + QStringLiteral("/app.py")),
                 QByteArray("x = 10\nx += 1\n"));
        QCOMPARE(readHostFile(forkRoot + QStringLiteral("/new.py")), QByteArray("y = 2\n"));

        // delete v1 (asked first): the Delete key on its row
        m_asked.clear();
        QVERIFY(select(panel, {model->rowOfCheckpoint(QStringLiteral("v1"))}));
        panel.view()->setFocus();
        QVERIFY(finished(
            panel, [&] { QTest::keyClick(panel.view(), Qt::Key_Delete); }, &ok));
        QVERIFY(ok);
        QCOMPARE(m_asked.value(0).kind, QStringLiteral("delete-checkpoint"));
        QVERIFY(QTest::qWaitFor([&] { return model->rowOfCheckpoint(QStringLiteral("v1")) < 0; }));

        // every control is named (the table's corner button is disabled; the window names it)
        for (const QAbstractButton *b : panel.findChildren<QAbstractButton *>())
            if (!b->inherits("QTableCornerButton"))
                QVERIFY2(!b->accessibleName().isEmpty(), b->metaObject()->className());
        if (const QByteArray shot = qgetenv("ELSAI_TIMELINE_SCREENSHOT"); !shot.isEmpty()) {
            QVERIFY(select(panel, {2}));
            panel.grab().save(QString::fromLocal8Bit(shot));
        }
        controller.shutdown();
    }
};

QTEST_MAIN(TestTimelinePanel)
#include "tst_timelinepanel.moc"
