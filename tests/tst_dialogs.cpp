#include "errors.h"
#include "flushpreviewdialog.h"
#include "newsandboxdialog.h"
#include "sandboxcontroller.h"
#include "testutil.h"
#include "types.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

class TestDialogs : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;

    static QTreeWidgetItem *group(QTreeWidget *tree, const QString &prefix)
    {
        for (int i = 0; i < tree->topLevelItemCount(); ++i) {
            if (tree->topLevelItem(i)->text(0).startsWith(prefix))
                return tree->topLevelItem(i);
        }
        return nullptr;
    }
    static QTreeWidgetItem *child(QTreeWidgetItem *group, const QString &text)
    {
        for (int i = 0; group && i < group->childCount(); ++i) {
            if (group->child(i)->text(0) == text)
                return group->child(i);
        }
        return nullptr;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
    }

    void newSandboxDefaultsMatchTheSpec()
    {
        NewSandboxDialog dialog;
        const SandboxSpec defaults;
        QCOMPARE(dialog.findChild<QLineEdit *>(QStringLiteral("workspaceId"))->text(),
                 defaults.workspaceId);
        QCOMPARE(dialog.findChild<QDoubleSpinBox *>(QStringLiteral("timeout"))->value(), 120.0);
        QCOMPARE(dialog.findChild<QSpinBox *>(QStringLiteral("maxOutputBytes"))->value(), 100000);
        QVERIFY(dialog.findChild<QCheckBox *>(QStringLiteral("inheritEnv"))->isChecked());
        QCOMPARE(dialog.findChild<QDoubleSpinBox *>(QStringLiteral("ttl"))->value(), 7200.0);
        QVERIFY(!dialog.findChild<QCheckBox *>(QStringLiteral("noTtl"))->isChecked());
        QCOMPARE(dialog.seedExcludes(), DEFAULT_SANDBOX_SEED_EXCLUDES);
        QCOMPARE(dialog.syncIncludes(), DEFAULT_SANDBOX_SYNC_INCLUDE);

        const SandboxSpec s = dialog.spec();
        QCOMPARE(s.workspaceId, defaults.workspaceId);
        QCOMPARE(s.backend, defaults.backend);
        QVERIFY(s.seedExclude.isEmpty());    // defaults are implied, not repeated
        QVERIFY(!s.syncInclude.has_value()); // the default list = none
        QVERIFY(!s.seedFrom && !s.syncDest);
        QCOMPARE(s.ttlSeconds, defaults.ttlSeconds);
        QCOMPARE(s.local.timeout, defaults.local.timeout);
        QCOMPARE(s.local.maxOutputBytes, defaults.local.maxOutputBytes);
        QCOMPARE(s.local.inheritEnv, defaults.local.inheritEnv);
        QCOMPARE(s.local.killGraceMs, defaults.local.killGraceMs);
        QVERIFY(s.local.env.isEmpty());
    }

    void newSandboxSpecRoundTrips()
    {
        SandboxSpec in;
        in.workspaceId = QStringLiteral("round");
        in.workspaceRoot = QStringLiteral("/tmp/ws-round");
        in.seedFrom = QStringLiteral("/tmp/project");
        in.seedExclude = {QStringLiteral("*.log"), QStringLiteral("build/")};
        in.syncInclude = QStringList{QStringLiteral("src/**"), QStringLiteral("docs/*.md")};
        in.syncDest = QStringLiteral("/tmp/out");
        in.ttlSeconds = std::nullopt;
        in.local.timeout = 30;
        in.local.maxOutputBytes = 5000;
        in.local.inheritEnv = false;
        in.local.killGraceMs = 250;
        in.local.env = {{QStringLiteral("A"), QStringLiteral("1")},
                        {QStringLiteral("B"), QStringLiteral("x=y")}};
        NewSandboxDialog dialog;
        dialog.setSpec(in);
        const SandboxSpec out = dialog.spec();
        QCOMPARE(out.workspaceId, in.workspaceId);
        QCOMPARE(out.workspaceRoot, in.workspaceRoot);
        QCOMPARE(out.seedFrom, in.seedFrom);
        QCOMPARE(out.seedExclude, in.seedExclude);
        QCOMPARE(out.syncInclude, in.syncInclude);
        QCOMPARE(out.syncDest, in.syncDest);
        QVERIFY(!out.ttlSeconds.has_value());
        QCOMPARE(out.local.timeout, 30.0);
        QCOMPARE(out.local.maxOutputBytes, qint64(5000));
        QCOMPARE(out.local.inheritEnv, false);
        QCOMPARE(out.local.killGraceMs, 250);
        QCOMPARE(out.local.env, in.local.env);
        // The defaults stay listed (locked) in front of the extras.
        QCOMPARE(dialog.seedExcludes(), DEFAULT_SANDBOX_SEED_EXCLUDES + in.seedExclude);
    }

    void defaultExcludesAreLocked()
    {
        NewSandboxDialog dialog;
        auto *list = dialog.findChild<QListWidget *>(QStringLiteral("seedExcludes"));
        QVERIFY(list);
        QListWidgetItem *git = list->item(0);
        QCOMPARE(git->text(), QStringLiteral(".git"));
        QVERIFY(!(git->flags() & Qt::ItemIsEditable));
        // "Remove" ignores locked rows.
        git->setSelected(true);
        const auto buttons = list->parentWidget()->findChildren<QPushButton *>();
        QPushButton *remove = nullptr;
        for (QPushButton *b : buttons) {
            if (b->text() == QStringLiteral("Remove"))
                remove = b;
        }
        QVERIFY(remove);
        QVERIFY(!remove->isEnabled());
        dialog.addSeedExclude(QStringLiteral("*.tmp"));
        list->clearSelection();
        list->item(list->count() - 1)->setSelected(true);
        QVERIFY(remove->isEnabled());
        remove->click();
        QCOMPARE(dialog.seedExcludes(), DEFAULT_SANDBOX_SEED_EXCLUDES);

        // Sync includes may drop a default: the spec then carries the full list.
        auto *includes = dialog.findChild<QListWidget *>(QStringLiteral("syncIncludes"));
        delete includes->item(0); // src/**
        QCOMPARE(dialog.spec().syncInclude, DEFAULT_SANDBOX_SYNC_INCLUDE.mid(1));
    }

    void okNeedsWorkspaceIdAndValidInput()
    {
        NewSandboxDialog dialog;
        QPushButton *ok = dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
        QVERIFY(ok->isEnabled());
        auto *id = dialog.findChild<QLineEdit *>(QStringLiteral("workspaceId"));
        id->setText(QStringLiteral("  "));
        QVERIFY(!ok->isEnabled());
        QVERIFY_THROWS_EXCEPTION(SandboxError, dialog.spec());
        id->setText(QStringLiteral("w"));
        QVERIFY(ok->isEnabled());
        dialog.addSyncInclude(QStringLiteral("[unclosed"));
        QVERIFY_THROWS_EXCEPTION(SandboxError, dialog.spec());
    }

    void seedPreviewListsExcludedAndDropped()
    {
        const QString project = m_tmp.filePath(QStringLiteral("preview"));
        writeHostFile(project + QStringLiteral("/src/main.py"), "print(1)\n");
        writeHostFile(project + QStringLiteral("/.git/HEAD"), "ref\n");
        writeHostFile(project + QStringLiteral("/notes.log"), "log\n");
        QVERIFY(::symlink("/etc", qPrintable(project + QStringLiteral("/link"))) == 0);
        QVERIFY(::mkfifo(qPrintable(project + QStringLiteral("/pipe")), 0600) == 0);

        NewSandboxDialog dialog;
        dialog.findChild<QLineEdit *>(QStringLiteral("seedFrom"))->setText(project);
        dialog.addSeedExclude(QStringLiteral("*.log"));
        QSignalSpy ready(&dialog, &NewSandboxDialog::seedPreviewReady);
        dialog.runSeedPreview();
        QTRY_COMPARE(ready.size(), 1);
        QTreeWidget *tree = dialog.seedPreview();
        QTreeWidgetItem *copy = group(tree, QStringLiteral("To copy"));
        QVERIFY(copy);
        QVERIFY2(copy->text(0).startsWith(QStringLiteral("To copy: 1 files")),
                 qPrintable(copy->text(0)));
        QVERIFY(child(copy, QStringLiteral("src/main.py")));
        QTreeWidgetItem *excluded = group(tree, QStringLiteral("Excluded"));
        QTreeWidgetItem *git = child(excluded, QStringLiteral(".git/"));
        QVERIFY(git);
        QCOMPARE(git->text(2), QStringLiteral(".git"));
        QTreeWidgetItem *log = child(excluded, QStringLiteral("notes.log"));
        QVERIFY(log);
        QCOMPARE(log->text(2), QStringLiteral("*.log"));
        QVERIFY(child(group(tree, QStringLiteral("Symlinks dropped")), QStringLiteral("link")));
        QVERIFY(
            child(group(tree, QStringLiteral("Special files dropped")), QStringLiteral("pipe")));
    }

    void unifiedDiffHunks()
    {
        QCOMPARE(unifiedDiff(QStringLiteral("a\nb\n"), QStringLiteral("a\nb\n"),
                             QStringLiteral("x"), QStringLiteral("y")),
                 QString());
        QCOMPARE(unifiedDiff(QStringLiteral("a\nb\nc\n"), QStringLiteral("a\nB\nc\nd\n"),
                             QStringLiteral("old"), QStringLiteral("new")),
                 QStringLiteral("--- old\n+++ new\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n"));
        QCOMPARE(unifiedDiff(QString(), QStringLiteral("x\n"), QStringLiteral("/dev/null"),
                             QStringLiteral("new")),
                 QStringLiteral("--- /dev/null\n+++ new\n@@ -0,0 +1,1 @@\n+x\n"));
        // Two distant changes make two hunks with 3 lines of context each.
        QStringList lines;
        for (int i = 1; i <= 20; ++i)
            lines.append(QString::number(i));
        QStringList changed = lines;
        changed[1] = QStringLiteral("two");
        changed[17] = QStringLiteral("eighteen");
        const QString diff =
            unifiedDiff(lines.join(QLatin1Char('\n')), changed.join(QLatin1Char('\n')),
                        QStringLiteral("a"), QStringLiteral("b"));
        QCOMPARE(diff.count(QStringLiteral("@@ -")), 2);
        QVERIFY(diff.contains(QStringLiteral("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n")));
        QVERIFY(
            diff.contains(QStringLiteral("@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n")));
        // Beyond the bound the middle is replaced wholesale (still a correct diff).
        const QString bounded =
            unifiedDiff(QStringLiteral("a\nb\nc\n"), QStringLiteral("a\nx\nc\n"),
                        QStringLiteral("o"), QStringLiteral("n"), 3, 0);
        QVERIFY(bounded.contains(QStringLiteral("-b\n+x\n")));
    }

    void flushPreviewShowsAddConflictDiffAndFlushes()
    {
        const QString project = m_tmp.filePath(QStringLiteral("flush-project"));
        writeHostFile(project + QStringLiteral("/app.py"), "x = 1\ny = 2\n");
        writeHostFile(project + QStringLiteral("/same.py"), "same\n");
        SandboxController c;
        SandboxSpec s;
        s.workspaceId = QStringLiteral("flush");
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("flush-ws"));
        s.seedFrom = project;
        c.addSandbox(s);
        QVERIFY(QTest::qWaitFor([&] { return c.state(s.workspaceId) == SessionState::Running; },
                                20000));
        // Both sides change app.py; the workspace gains new.py.
        c.writeFile(s.workspaceId, QStringLiteral("app.py"), "x = 1\ny = 3\n");
        c.writeFile(s.workspaceId, QStringLiteral("new.py"), "print('new')\n");
        c.waitForIdle();
        QTest::qWait(20); // a distinct mtime for the host edit
        writeHostFile(project + QStringLiteral("/app.py"), "x = 10\ny = 2\n");

        FlushPreviewDialog dialog(&c, s.workspaceId);
        QSignalSpy planned(&dialog, &FlushPreviewDialog::planReady);
        QTRY_VERIFY(planned.size() >= 1);
        QTreeWidget *tree = dialog.entriesView();
        QTreeWidgetItem *add = group(tree, QStringLiteral("Add (1)"));
        QVERIFY(add);
        QVERIFY(child(add, QStringLiteral("new.py")));
        QTreeWidgetItem *conflict = group(tree, QStringLiteral("Conflict (1)"));
        QVERIFY2(conflict, qPrintable(tree->topLevelItem(0)->text(0)));
        QTreeWidgetItem *app = child(conflict, QStringLiteral("app.py"));
        QVERIFY(app);
        QVERIFY(group(tree, QStringLiteral("Unchanged (1)")));

        QSignalSpy diffed(&dialog, &FlushPreviewDialog::diffReady);
        tree->setCurrentItem(app);
        QTRY_COMPARE(diffed.size(), 1);
        QCOMPARE(dialog.diffView()->toPlainText(),
                 QStringLiteral("--- host/app.py\n+++ workspace/app.py\n@@ -1,2 +1,2 @@\n"
                                "-x = 10\n-y = 2\n+x = 1\n+y = 3\n"));

        tree->setCurrentItem(child(add, QStringLiteral("new.py")));
        QTRY_COMPARE(diffed.size(), 2);
        QVERIFY(dialog.diffView()->toPlainText().startsWith(QStringLiteral("--- /dev/null\n")));

        QSignalSpy flushed(&dialog, &FlushPreviewDialog::flushFinished);
        dialog.flushNow();
        QTRY_COMPARE(flushed.size(), 1);
        QCOMPARE(readHostFile(project + QStringLiteral("/new.py")), QByteArray("print('new')\n"));
        QCOMPARE(readHostFile(project + QStringLiteral("/app.py")), QByteArray("x = 10\ny = 2\n"));
        QCOMPARE(readHostFile(project + QStringLiteral("/app.py") + conflictSuffix()),
                 QByteArray("x = 1\ny = 3\n"));
        QVERIFY2(dialog.resultText().contains(QStringLiteral("1 file(s) synced")),
                 qPrintable(dialog.resultText()));
        QVERIFY(dialog.resultText().contains(QStringLiteral("app.py")));
        QCOMPARE(flushed.first().at(0).toBool(), false); // a conflict is not a clean flush
    }
};

QTEST_MAIN(TestDialogs)
#include "tst_dialogs.moc"
