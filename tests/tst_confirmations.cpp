// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The window asks before it destroys or replaces user data — and declining keeps the data byte
// for byte, accepting does what the question said. Also: names with control characters are
// refused in every name field; errors and warnings show in the affected panel's message bar;
// an agent name attached once is not attached again with another mode (panels and audit agree).

#include "agentsmodel.h"
#include "agentspanel.h"
#include "confirm.h"
#include "errors.h"
#include "filetabs.h"
#include "mainwindow.h"
#include "mcppanel.h"
#include "mcpservermodel.h"
#include "messagebar.h"
#include "modelroles.h"
#include "newsandboxdialog.h"
#include "sandboxcontroller.h"
#include "sessionspanel.h"
#include "testutil.h"
#include "workspacepanel.h"
#include "workspacetreemodel.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeView>
#include <QtTest>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

namespace {

/// Every question the window asks, answered with `answer`.
struct Questions
{
    QList<Confirmation> asked;
    ConfirmAnswer answer = ConfirmAnswer::Cancel;
};

} // namespace

class TestConfirmations : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;
    Questions m_q;

    /// A started local sandbox seeded with README.md, notes.txt and src/app.py; returns its
    /// workspace folder on the host.
    QString startSandbox(SandboxController &c, const QString &id, std::optional<QString> seed = {})
    {
        const QString project = m_tmp.filePath(QStringLiteral("project-%1").arg(++m_n));
        writeHostFile(project + QStringLiteral("/README.md"), "# demo\n");
        writeHostFile(project + QStringLiteral("/notes.txt"), "keep me\x01\xff\n");
        writeHostFile(project + QStringLiteral("/src/app.py"), "print('app')\n");
        SandboxSpec s;
        s.workspaceId = id;
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("ws-%1").arg(m_n));
        s.seedFrom = seed.value_or(project);
        s.syncDest = project;
        c.addSandbox(s);
        if (!QTest::qWaitFor([&] { return c.state(id) == SessionState::Running; }, 30000))
            qFatal("sandbox did not start");
        return s.workspaceRoot;
    }

    void select(WorkspacePanel &panel, const QString &path)
    {
        auto *tree = panel.view()->model();
        for (int r = 0; r < tree->rowCount(); ++r) {
            const QModelIndex i = tree->index(r, 0);
            if (i.data(Roles::PathRole).toString() == path) {
                panel.view()->selectionModel()->setCurrentIndex(
                    i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
                return;
            }
        }
        QFAIL(qPrintable(QStringLiteral("no row %1").arg(path)));
    }
    static bool shown(WorkspacePanel &panel, const QString &path)
    {
        auto *tree = panel.view()->model();
        for (int r = 0; r < tree->rowCount(); ++r) {
            if (tree->index(r, 0).data(Roles::PathRole).toString() == path)
                return true;
        }
        return false;
    }
    /// Waits until `n` questions were asked, then until the work they led to has finished.
    bool askedThenIdle(SandboxController &c, int n)
    {
        if (!QTest::qWaitFor([&] { return m_q.asked.size() >= n; }, 20000))
            return false;
        c.waitForIdle();
        QTest::qWait(50);
        c.waitForIdle();
        return m_q.asked.size() == n;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
    }
    void init()
    {
        m_q = Questions();
        setConfirmHook([this](QWidget *, const Confirmation &q) {
            m_q.asked.append(q);
            return m_q.answer;
        });
    }
    void cleanup() { setConfirmHook({}); }

    // ---- overwrite: New File, Rename / Move, Add Files, drag-and-drop ------------------------

    void newFileOntoAnExistingFile_data()
    {
        QTest::addColumn<bool>("accept");
        QTest::newRow("declined") << false;
        QTest::newRow("accepted") << true;
    }
    void newFileOntoAnExistingFile()
    {
        QFETCH(bool, accept);
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("newfile"));
        WorkspacePanel panel(&c);
        panel.setWorkspace(QStringLiteral("newfile"));
        const QByteArray before = readHostFile(root + QStringLiteral("/notes.txt"));
        m_q.answer = accept ? ConfirmAnswer::Accept : ConfirmAnswer::Cancel;
        QSignalSpy opened(&panel, &WorkspacePanel::fileActivated);
        panel.createFile(QStringLiteral("notes.txt"));
        QVERIFY(askedThenIdle(c, 1));
        QCOMPARE(m_q.asked.first().kind, QStringLiteral("overwrite"));
        QVERIFY(m_q.asked.first().text.contains(QStringLiteral("notes.txt")));
        QVERIFY(m_q.asked.first().text.contains(QStringLiteral("is lost")));
        QCOMPARE(readHostFile(root + QStringLiteral("/notes.txt")), accept ? QByteArray() : before);
        QCOMPARE(opened.size(), accept ? 1 : 0);

        // A new name is created without a question.
        panel.createFile(QStringLiteral("fresh.txt"));
        QTRY_COMPARE(readHostFile(root + QStringLiteral("/fresh.txt")), QByteArray());
        QCOMPARE(m_q.asked.size(), 1);
    }

    void renameOntoAnExistingFile_data() { newFileOntoAnExistingFile_data(); }
    void renameOntoAnExistingFile()
    {
        QFETCH(bool, accept);
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("rename"));
        WorkspacePanel panel(&c);
        panel.setWorkspace(QStringLiteral("rename"));
        const QByteArray readme = readHostFile(root + QStringLiteral("/README.md"));
        const QByteArray notes = readHostFile(root + QStringLiteral("/notes.txt"));
        m_q.answer = accept ? ConfirmAnswer::Accept : ConfirmAnswer::Cancel;
        panel.movePath(QStringLiteral("README.md"), QStringLiteral("notes.txt"));
        QVERIFY(askedThenIdle(c, 1));
        QCOMPARE(m_q.asked.first().kind, QStringLiteral("overwrite"));
        QVERIFY(m_q.asked.first().text.contains(QStringLiteral("notes.txt")));
        if (accept) {
            QTRY_COMPARE(readHostFile(root + QStringLiteral("/notes.txt")), readme);
            QVERIFY(!QFile::exists(root + QStringLiteral("/README.md")));
        } else {
            QCOMPARE(readHostFile(root + QStringLiteral("/notes.txt")), notes);
            QCOMPARE(readHostFile(root + QStringLiteral("/README.md")), readme);
        }
    }

    void addFilesAndDropOntoExistingFiles_data()
    {
        QTest::addColumn<bool>("accept");
        QTest::addColumn<bool>("drop");
        QTest::newRow("add-declined") << false << false;
        QTest::newRow("add-accepted") << true << false;
        QTest::newRow("drop-declined") << false << true;
        QTest::newRow("drop-accepted") << true << true;
    }
    void addFilesAndDropOntoExistingFiles()
    {
        QFETCH(bool, accept);
        QFETCH(bool, drop);
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("add"));
        WorkspacePanel panel(&c);
        panel.resize(400, 300);
        panel.show();
        panel.setWorkspace(QStringLiteral("add"));
        QTRY_VERIFY(shown(panel, QStringLiteral("notes.txt")));
        const QString host = m_tmp.filePath(QStringLiteral("host-%1").arg(++m_n));
        writeHostFile(host + QStringLiteral("/notes.txt"), "from the host\n");
        writeHostFile(host + QStringLiteral("/new.txt"), "new\n");
        const QByteArray before = readHostFile(root + QStringLiteral("/notes.txt"));
        m_q.answer = accept ? ConfirmAnswer::Accept : ConfirmAnswer::Cancel;
        QSignalSpy added(&panel, &WorkspacePanel::filesAdded);
        const QStringList files{host + QStringLiteral("/notes.txt"),
                                host + QStringLiteral("/new.txt")};
        if (drop) {
            // Dropped on empty space below the rows: into the root.
            QMimeData mime;
            mime.setUrls({QUrl::fromLocalFile(files.at(0)), QUrl::fromLocalFile(files.at(1))});
            const QPoint pos(5, panel.view()->viewport()->height() - 3);
            QDragEnterEvent enter(pos, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(panel.view()->viewport(), &enter);
            QVERIFY(enter.isAccepted());
            QDropEvent event(QPointF(pos), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(panel.view()->viewport(), &event);
            QVERIFY(event.isAccepted());
        } else {
            panel.addHostPaths(files);
        }
        QTRY_COMPARE(added.size(), 1);
        QCOMPARE(m_q.asked.size(), 1);
        QCOMPARE(m_q.asked.first().kind, QStringLiteral("overwrite"));
        QCOMPARE(m_q.asked.first().items, QStringList{QStringLiteral("notes.txt")});
        // The new file is added either way; the existing one only when accepted.
        QCOMPARE(readHostFile(root + QStringLiteral("/new.txt")), QByteArray("new\n"));
        QCOMPARE(readHostFile(root + QStringLiteral("/notes.txt")),
                 accept ? QByteArray("from the host\n") : before);
        QStringList written = added.first().at(1).toStringList();
        written.sort();
        const QStringList expected =
            accept ? QStringList{QStringLiteral("new.txt"), QStringLiteral("notes.txt")}
                   : QStringList{QStringLiteral("new.txt")};
        QCOMPARE(written, expected);
    }

    void downloadOntoExistingHostFiles_data() { newFileOntoAnExistingFile_data(); }
    void downloadOntoExistingHostFiles()
    {
        QFETCH(bool, accept);
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("download"));
        WorkspacePanel panel(&c);
        panel.setWorkspace(QStringLiteral("download"));
        const QString host = m_tmp.filePath(QStringLiteral("download-%1").arg(++m_n));
        writeHostFile(host + QStringLiteral("/notes.txt"), "the host's own notes\n");
        m_q.answer = accept ? ConfirmAnswer::Accept : ConfirmAnswer::Cancel;
        panel.downloadAsking({QStringLiteral("notes.txt"), QStringLiteral("README.md")}, host);
        QCOMPARE(m_q.asked.size(), 1);
        QCOMPARE(m_q.asked.first().kind, QStringLiteral("overwrite"));
        QCOMPARE(m_q.asked.first().items, QStringList{host + QStringLiteral("/notes.txt")});
        QTRY_COMPARE(readHostFile(host + QStringLiteral("/README.md")), QByteArray("# demo\n"));
        c.waitForIdle();
        QCOMPARE(readHostFile(host + QStringLiteral("/notes.txt")),
                 accept ? readHostFile(root + QStringLiteral("/notes.txt"))
                        : QByteArray("the host's own notes\n"));
    }

    // ---- Delete --------------------------------------------------------------------------

    void deleteAsks_data() { newFileOntoAnExistingFile_data(); }
    void deleteAsks()
    {
        QFETCH(bool, accept);
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("delete"));
        WorkspacePanel panel(&c);
        panel.setWorkspace(QStringLiteral("delete"));
        QTRY_VERIFY(shown(panel, QStringLiteral("notes.txt")));
        select(panel, QStringLiteral("notes.txt"));
        const QByteArray before = readHostFile(root + QStringLiteral("/notes.txt"));
        m_q.answer = accept ? ConfirmAnswer::Accept : ConfirmAnswer::Cancel;
        panel.action(WorkspacePanel::Action::Delete)->trigger();
        QVERIFY(askedThenIdle(c, 1));
        QCOMPARE(m_q.asked.first().kind, QStringLiteral("delete"));
        QCOMPARE(m_q.asked.first().items, QStringList{QStringLiteral("notes.txt")});
        if (accept)
            QTRY_VERIFY(!QFile::exists(root + QStringLiteral("/notes.txt")));
        else
            QCOMPARE(readHostFile(root + QStringLiteral("/notes.txt")), before);
    }

    // ---- Remove of a sandbox ---------------------------------------------------------------

    void removeSandboxAsks_data() { newFileOntoAnExistingFile_data(); }
    void removeSandboxAsks()
    {
        QFETCH(bool, accept);
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("remove"));
        SessionsPanel panel(&c);
        panel.selectWorkspace(QStringLiteral("remove"));
        const quint64 command = c.execute(QStringLiteral("remove"), QStringLiteral("sleep 30"));
        QVERIFY(command);
        const QByteArray before = readHostFile(root + QStringLiteral("/notes.txt"));
        m_q.answer = accept ? ConfirmAnswer::Accept : ConfirmAnswer::Cancel;
        QTest::mouseClick(panel.removeButton(), Qt::LeftButton);
        QCOMPARE(m_q.asked.size(), 1);
        const Confirmation &q = m_q.asked.first();
        QCOMPARE(q.kind, QStringLiteral("remove-sandbox"));
        QVERIFY(q.text.contains(QStringLiteral("without a flush")));
        QVERIFY(q.text.contains(root)); // where its folder stays
        // Running: it says so, and what runs.
        QVERIFY(q.items.join(QLatin1Char('\n')).contains(QStringLiteral("running")));
        QVERIFY(q.items.join(QLatin1Char('\n')).contains(QStringLiteral("1 running command")));
        if (accept) {
            QVERIFY(!c.sandbox(QStringLiteral("remove")));
            QTRY_VERIFY(!c.isCommandRunning(command));
        } else {
            QVERIFY(c.sandbox(QStringLiteral("remove")));
            QVERIFY(c.state(QStringLiteral("remove")) == SessionState::Running);
            QVERIFY(c.isCommandRunning(command));
            c.cancelCommand(command);
        }
        // The workspace folder stays either way, byte for byte.
        c.waitForIdle();
        QCOMPARE(readHostFile(root + QStringLiteral("/notes.txt")), before);
    }

    // ---- unsaved edits: closing a tab, quitting --------------------------------------------

    void closingAModifiedTabAsks_data()
    {
        QTest::addColumn<int>("answer");
        QTest::newRow("cancel") << int(ConfirmAnswer::Cancel);
        QTest::newRow("discard") << int(ConfirmAnswer::Accept);
        QTest::newRow("save") << int(ConfirmAnswer::Save);
    }
    void closingAModifiedTabAsks()
    {
        QFETCH(int, answer);
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("tabs"));
        FileTabs tabs(&c);
        tabs.openFile(QStringLiteral("tabs"), QStringLiteral("README.md"));
        QTRY_VERIFY(tabs.count() == 1 && tabs.editor(0));
        tabs.editor(0)->appendPlainText(QStringLiteral("edited"));
        QVERIFY(tabs.isTabModified(0));
        const QByteArray before = readHostFile(root + QStringLiteral("/README.md"));
        m_q.answer = ConfirmAnswer(answer);
        tabs.closeTab(0);
        QCOMPARE(m_q.asked.size(), 1);
        QCOMPARE(m_q.asked.first().kind, QStringLiteral("unsaved"));
        QVERIFY(m_q.asked.first().offerSave);
        QVERIFY(m_q.asked.first().text.contains(QStringLiteral("README.md")));
        switch (ConfirmAnswer(answer)) {
        case ConfirmAnswer::Cancel:
            QCOMPARE(tabs.count(), 1);
            QVERIFY(tabs.isTabModified(0));
            c.waitForIdle();
            QCOMPARE(readHostFile(root + QStringLiteral("/README.md")), before);
            break;
        case ConfirmAnswer::Accept:
            QTRY_COMPARE(tabs.count(), 0);
            c.waitForIdle();
            QCOMPARE(readHostFile(root + QStringLiteral("/README.md")), before);
            break;
        case ConfirmAnswer::Save:
            QTRY_COMPARE(tabs.count(), 0);
            QCOMPARE(readHostFile(root + QStringLiteral("/README.md")),
                     QByteArray("# demo\n\nedited"));
            break;
        }
    }

    void quitWithUnsavedEditsAsks_data() { closingAModifiedTabAsks_data(); }
    void quitWithUnsavedEditsAsks()
    {
        QFETCH(int, answer);
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("quit-tabs"));
        MainWindow window(&c);
        window.show();
        window.setCurrentWorkspace(QStringLiteral("quit-tabs"));
        window.fileTabs()->openFile(QStringLiteral("quit-tabs"), QStringLiteral("README.md"));
        QTRY_VERIFY(window.fileTabs()->count() == 1 && window.fileTabs()->editor(0));
        window.fileTabs()->editor(0)->appendPlainText(QStringLiteral("edited"));
        const QByteArray before = readHostFile(root + QStringLiteral("/README.md"));
        m_q.answer = ConfirmAnswer(answer);
        window.action(QStringLiteral("actionQuit"))->trigger();
        QCOMPARE(m_q.asked.size(), 1);
        QCOMPARE(m_q.asked.first().kind, QStringLiteral("unsaved"));
        QCOMPARE(m_q.asked.first().items, QStringList{QStringLiteral("README.md (quit-tabs)")});
        if (ConfirmAnswer(answer) == ConfirmAnswer::Cancel) {
            QVERIFY(window.isVisible());
            QVERIFY(!window.isShutDown());
            QVERIFY(window.fileTabs()->isTabModified(0));
            c.waitForIdle();
            QCOMPARE(readHostFile(root + QStringLiteral("/README.md")), before);
            return;
        }
        QVERIFY(!window.isVisible());
        window.shutdown(); // what the application does once its loop ended
        QVERIFY(c.isShuttingDown());
        QCOMPARE(readHostFile(root + QStringLiteral("/README.md")),
                 ConfirmAnswer(answer) == ConfirmAnswer::Save ? QByteArray("# demo\n\nedited")
                                                              : before);
    }

    void quitWhileACommandRunsAsks_data() { newFileOntoAnExistingFile_data(); }
    void quitWhileACommandRunsAsks()
    {
        QFETCH(bool, accept);
        SandboxController c;
        startSandbox(c, QStringLiteral("quit-busy"));
        MainWindow window(&c);
        window.show();
        const quint64 command = c.execute(QStringLiteral("quit-busy"), QStringLiteral("sleep 30"));
        QVERIFY(command);
        m_q.answer = accept ? ConfirmAnswer::Accept : ConfirmAnswer::Cancel;
        QCOMPARE(window.close(), accept); // close() returns whether it closed
        QCOMPARE(m_q.asked.size(), 1);
        QCOMPARE(m_q.asked.first().kind, QStringLiteral("quit-busy"));
        QCOMPARE(m_q.asked.first().items,
                 QStringList{QStringLiteral("1 console command(s) running — killed")});
        if (accept) {
            QVERIFY(!window.isVisible());
            window.shutdown();                     // what the application does once its loop ended
            QVERIFY(!c.isCommandRunning(command)); // the controller waited for it
        } else {
            QVERIFY(window.isVisible());
            QVERIFY(c.isCommandRunning(command));
            QVERIFY(c.state(QStringLiteral("quit-busy")) == SessionState::Running);
            c.cancelCommand(command);
        }
    }

    // ---- the real message box: Cancel by default, named, answered ---------------------------

    void messageBoxDefaultsToTheSafeAnswer()
    {
        setConfirmHook({});
        QWidget parent;
        parent.resize(500, 300);
        parent.show();
        Confirmation q;
        q.kind = QStringLiteral("delete");
        q.title = QStringLiteral("Delete");
        q.text = QStringLiteral("Delete 2 item(s) from 'demo'? Nothing is kept.");
        q.items = {QStringLiteral("src/a.py"), QStringLiteral("src/b.py")};
        q.acceptText = QStringLiteral("Delete");
        bool checked = false;
        QTimer::singleShot(50, &parent, [&checked] {
            auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
            QVERIFY(box);
            QCOMPARE(box->objectName(), QStringLiteral("confirmDialog"));
            QCOMPARE(box->accessibleName(), QStringLiteral("Delete"));
            QVERIFY(box->text().contains(QStringLiteral("src/b.py")));
            auto *cancel = box->findChild<QPushButton *>(QStringLiteral("confirmCancel"));
            QVERIFY(cancel);
            QCOMPARE(box->defaultButton(), cancel);
            QCOMPARE(box->escapeButton(), static_cast<QAbstractButton *>(cancel));
            const QString shot = qEnvironmentVariable("ELSAI_SCREENSHOT_DIR");
            if (!shot.isEmpty())
                box->grab().save(shot + QStringLiteral("/confirm-delete.png"));
            checked = true;
            QTest::keyClick(box, Qt::Key_Return); // the default: Cancel
        });
        QCOMPARE(confirm(&parent, q), ConfirmAnswer::Cancel);
        QVERIFY(checked);

        q.offerSave = true;
        q.kind = QStringLiteral("unsaved");
        QTimer::singleShot(50, &parent, [] {
            auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
            QVERIFY(box);
            QCOMPARE(box->defaultButton(),
                     box->findChild<QPushButton *>(QStringLiteral("confirmSave")));
            box->findChild<QPushButton *>(QStringLiteral("confirmAccept"))->click(); // Discard
        });
        QCOMPARE(confirm(&parent, q), ConfirmAnswer::Accept);
    }

    // ---- names with control characters ---------------------------------------------------

    void controlCharactersAreRefused_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("newline") << QStringLiteral("a\nb.txt");
        QTest::newRow("tab") << QStringLiteral("a\tb.txt");
        QTest::newRow("nul") << (QStringLiteral("a") + QChar(u'\0') + QStringLiteral("b"));
        QTest::newRow("escape") << QStringLiteral("\x1b[31mred");
        QTest::newRow("del") << QStringLiteral("a\x7f");
        QTest::newRow("c1") << (QStringLiteral("a") + QChar(char16_t(0x9b)) + QStringLiteral("b"));
        QTest::newRow("carriage-return") << QStringLiteral("a\rb");
    }
    void controlCharactersAreRefused()
    {
        QFETCH(QString, name);
        SandboxController c;
        const QString id = QStringLiteral("names-%1").arg(++m_n);
        const QString root = startSandbox(c, id);
        const QStringList before = QDir(root).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);

        // The workspace panel: New File, New Folder, Rename / Move (also as a path component).
        WorkspacePanel panel(&c);
        panel.setWorkspace(id);
        for (const QString &path :
             {name, QStringLiteral("src/") + name, name + QStringLiteral("/x")}) {
            panel.createFile(path);
            QVERIFY2(panel.errorText().contains(QStringLiteral("control character")),
                     qPrintable(panel.errorText()));
            panel.messageBar()->dismiss();
            panel.createFolder(path);
            QVERIFY(panel.errorText().contains(QStringLiteral("control character")));
            panel.messageBar()->dismiss();
            panel.movePath(QStringLiteral("README.md"), path);
            QVERIFY(panel.errorText().contains(QStringLiteral("control character")));
            panel.messageBar()->dismiss();
        }
        c.waitForIdle();
        QCOMPARE(QDir(root).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), before);
        QCOMPARE(m_q.asked.size(), 0);

        // The agents panel's name field.
        AgentsPanel agents(&c);
        agents.setWorkspace(id);
        agents.nameEdit()->setText(name);
        agents.attach();
        QVERIFY2(agents.messageBar()->text().contains(QStringLiteral("control character")),
                 qPrintable(agents.messageBar()->text()));
        // The MCP panel's agent name.
        McpPanel mcp(&c);
        mcp.setWorkspace(id);
        mcp.nameEdit()->setText(name);
        mcp.createAgent();
        QCOMPARE(mcp.model()->rowCount(), 0);
        QVERIFY(mcp.statusLabel()->text().contains(QStringLiteral("control character")));
        // The New Sandbox dialog's workspace id, and the API (every front end).
        NewSandboxDialog dialog;
        SandboxSpec spec;
        spec.workspaceId = name;
        dialog.setSpec(spec);
        dialog.findChild<QLineEdit *>(QStringLiteral("workspaceId"))->setText(name);
        QVERIFY_THROWS_EXCEPTION(ValueError, dialog.spec());
        spec.workspaceRoot = m_tmp.filePath(QStringLiteral("never"));
        QVERIFY_THROWS_EXCEPTION(ValueError, c.addSandbox(spec));
        QVERIFY_THROWS_EXCEPTION(ValueError, Agent::create(name));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 McpAgentSpec::parse(name + QStringLiteral("=read_only")));
        QVERIFY(!QFileInfo::exists(m_tmp.filePath(QStringLiteral("never"))));
    }

    // ---- message bars ---------------------------------------------------------------------

    void missingSeedFolderIsShown()
    {
        SandboxController c;
        WorkspacePanel panel(&c);
        SessionsPanel sessions(&c);
        const QString missing = m_tmp.filePath(QStringLiteral("no-such-seed"));
        SandboxSpec s;
        s.workspaceId = QStringLiteral("seedless");
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("ws-seedless"));
        s.seedFrom = missing;
        QObject::connect(&c, &SandboxController::sandboxAdded, &panel,
                         [&panel](const QString &id) { panel.setWorkspace(id); });
        c.addSandbox(s);
        QTRY_VERIFY(c.state(QStringLiteral("seedless")) == SessionState::Running ||
                    c.state(QStringLiteral("seedless")) == SessionState::Failed);
        // Never "running" with an empty tree and no word: the panel says what happened.
        QTRY_VERIFY2(panel.errorText().contains(QStringLiteral("no-such-seed")),
                     qPrintable(panel.errorText()));
        QVERIFY(panel.messageBar()->isShown());
        const int row = c.sessionsModel()->rowOf(QStringLiteral("seedless"));
        QVERIFY(!c.sessionsModel()->session(row).message.isEmpty());
        // Shown again when the sandbox becomes current later.
        panel.setWorkspace(QString());
        QVERIFY(panel.errorText().isEmpty());
        panel.setWorkspace(QStringLiteral("seedless"));
        QVERIFY(panel.errorText().contains(QStringLiteral("no-such-seed")));
        const QString shot = qEnvironmentVariable("ELSAI_SCREENSHOT_DIR");
        if (!shot.isEmpty()) {
            panel.resize(420, 260);
            panel.show();
            QTest::qWait(50);
            panel.grab().save(shot + QStringLiteral("/messagebar-seed.png"));
        }
    }

    void flushConflictsAreShown()
    {
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("conflict"));
        SessionsPanel sessions(&c);
        const QString project = m_tmp.filePath(QStringLiteral("project-%1").arg(m_n));
        writeHostFile(root + QStringLiteral("/README.md"), "# sandbox side\n");
        writeHostFile(project + QStringLiteral("/README.md"), "# host side\n");
        auto f = c.flush(QStringLiteral("conflict"));
        f.waitForFinished();
        QVERIFY(f.result() && !f.result()->conflicts.isEmpty());
        QTRY_VERIFY2(sessions.messageBar()->text().contains(QStringLiteral("conflict")),
                     qPrintable(sessions.messageBar()->text()));
        QVERIFY(sessions.messageBar()->text().contains(QStringLiteral("README.md")));
        QCOMPARE(sessions.messageBar()->type(), MessageBar::Type::Warning);
        const QString shot = qEnvironmentVariable("ELSAI_SCREENSHOT_DIR");
        if (!shot.isEmpty()) {
            sessions.resize(520, 240);
            sessions.show();
            QTest::qWait(50);
            sessions.grab().save(shot + QStringLiteral("/messagebar-flush.png"));
        }
        // The host file is kept as it was.
        QCOMPARE(readHostFile(project + QStringLiteral("/README.md")), QByteArray("# host side\n"));
    }

    void messageBarIsAccessibleAndDismissable()
    {
        MessageBar bar;
        QVERIFY(!bar.isShown());
        bar.showMessage(QStringLiteral("it <b>broke</b>"), MessageBar::Type::Error);
        QVERIFY(bar.isShown());
        QCOMPARE(bar.text(), QStringLiteral("it <b>broke</b>")); // plain text, as given
        QCOMPARE(bar.accessibleName(), QStringLiteral("Error"));
        QCOMPARE(bar.accessibleDescription(), QStringLiteral("it <b>broke</b>"));
        auto *close = bar.findChild<QToolButton *>(QStringLiteral("messageBarClose"));
        QVERIFY(close);
        QVERIFY(!close->accessibleName().isEmpty());
        QSignalSpy dismissed(&bar, &MessageBar::dismissed);
        close->click();
        QVERIFY(!bar.isShown());
        QCOMPARE(dismissed.size(), 1);
        bar.showMessage(QStringLiteral("done"), MessageBar::Type::Positive, 30);
        QTRY_VERIFY(!bar.isShown());
    }

    // ---- one name, one mode ---------------------------------------------------------------

    void attachingAnAttachedNameIsRefused()
    {
        test::AuditCapture audit;
        SandboxController c;
        startSandbox(c, QStringLiteral("modes"));
        AgentsPanel agents(&c);
        agents.setWorkspace(QStringLiteral("modes"));
        auto modeOf = [&c](const QString &name) {
            const int row = c.agentsModel()->rowOf(QStringLiteral("modes"), name);
            return row < 0 ? QString() : c.agentsModel()->agent(row).mode;
        };
        auto lastAuditedMode = [&audit](const QString &name) {
            QString mode;
            for (const AuditEvent &e : audit.named(QStringLiteral("attach"))) {
                if (e.actor == name && e.outcome == QLatin1String("ok"))
                    mode = e.fields.value(QStringLiteral("mode")).toString();
            }
            return mode;
        };
        agents.nameEdit()->setText(QStringLiteral("bob"));
        agents.modeBox()->setCurrentIndex(agents.modeBox()->findData(QStringLiteral("read_only")));
        agents.attach();
        QTRY_COMPARE(modeOf(QStringLiteral("bob")), QStringLiteral("read_only"));

        // The same name again, read-write: refused with a message; nothing changes anywhere.
        agents.nameEdit()->setText(QStringLiteral("bob"));
        agents.modeBox()->setCurrentIndex(agents.modeBox()->findData(QStringLiteral("read_write")));
        agents.attach();
        QVERIFY2(agents.messageBar()->text().contains(QStringLiteral("already attached")),
                 qPrintable(agents.messageBar()->text()));
        QVERIFY(agents.messageBar()->text().contains(QStringLiteral("Change mode")));
        c.waitForIdle();
        c.refreshPanels();
        QCOMPARE(modeOf(QStringLiteral("bob")), QStringLiteral("read_only"));
        QTRY_COMPARE(lastAuditedMode(QStringLiteral("bob")), QStringLiteral("read_only"));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 c.attachAgent(QStringLiteral("modes"), QStringLiteral("bob"),
                                               SandboxAttachMode::ReadWrite));

        // Change mode is the explicit way: panel, model and audit agree afterwards.
        const int row = c.agentsModel()->rowOf(QStringLiteral("modes"), QStringLiteral("bob"));
        QModelIndex index;
        for (int r = 0; r < agents.view()->model()->rowCount(); ++r) {
            if (agents.view()->model()->index(r, 0).data(Roles::AgentNameRole).toString() ==
                QStringLiteral("bob"))
                index = agents.view()->model()->index(r, 0);
        }
        QVERIFY(row >= 0 && index.isValid());
        agents.view()->setCurrentIndex(index);
        agents.toggleModeOfSelected();
        QTRY_COMPARE(modeOf(QStringLiteral("bob")), QStringLiteral("read_write"));
        QTRY_COMPARE(lastAuditedMode(QStringLiteral("bob")), QStringLiteral("read_write"));
        QTRY_VERIFY(agents.details()->toPlainText().contains(QStringLiteral("read_write")));

        // The MCP panel does not create a second "bob".
        McpPanel mcp(&c);
        mcp.setWorkspace(QStringLiteral("modes"));
        mcp.nameEdit()->setText(QStringLiteral("bob"));
        mcp.createAgent();
        QCOMPARE(mcp.model()->rowCount(), 0);
        QVERIFY(mcp.statusLabel()->text().contains(QStringLiteral("already attached")));

        // An agent attached by someone else (as an MCP session does): the window neither
        // attaches its name again nor changes its mode; the engine refuses a second mode.
        AgentConfig config;
        config.sandbox = c.sandbox(QStringLiteral("modes"));
        config.sandboxMode = SandboxMode::Sandbox;
        config.sandboxAttachMode = SandboxAttachMode::ReadOnly;
        const AgentPtr eve = Agent::create(QStringLiteral("eve"), config);
        c.refreshPanels();
        QCOMPARE(modeOf(QStringLiteral("eve")), QStringLiteral("read_only"));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 c.attachAgent(QStringLiteral("modes"), QStringLiteral("eve"),
                                               SandboxAttachMode::ReadWrite));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 c.changeAgentMode(QStringLiteral("modes"), QStringLiteral("eve"),
                                                   SandboxAttachMode::ReadWrite));
        config.sandboxAttachMode = SandboxAttachMode::ReadWrite;
        QVERIFY_THROWS_EXCEPTION(SandboxAttachError, Agent::create(QStringLiteral("eve"), config));
        c.refreshPanels();
        QCOMPARE(modeOf(QStringLiteral("eve")), QStringLiteral("read_only"));
        QCOMPARE(lastAuditedMode(QStringLiteral("eve")), QStringLiteral("read_only"));
        c.sandbox(QStringLiteral("modes"))->detach(eve);

        // A real MCP session: the MCP panel, the Agents panel and the audit show one mode.
        mcp.nameEdit()->setText(QStringLiteral("remote"));
        mcp.modeBox()->setCurrentIndex(mcp.modeBox()->findData(QStringLiteral("read_only")));
        mcp.toggleServer();
        QVERIFY(mcp.model()->isRunning());
        mcp.createAgent();
        const int mcpRow = mcp.model()->rowOf(QStringLiteral("remote"));
        QVERIFY(mcpRow >= 0);
        QNetworkAccessManager nam;
        QNetworkRequest request(mcp.model()->url());
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
        request.setRawHeader("Authorization",
                             "Bearer " + mcp.model()->agent(mcpRow).token.toUtf8());
        QNetworkReply *reply =
            nam.post(request, R"({"jsonrpc":"2.0","id":1,"method":"initialize",)"
                              R"("params":{"protocolVersion":"2025-06-18","capabilities":{}}})");
        QTRY_VERIFY(reply->isFinished());
        QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
        reply->deleteLater();
        c.refreshPanels();
        QCOMPARE(modeOf(QStringLiteral("remote")), QStringLiteral("read_only"));
        QCOMPARE(
            mcp.model()->data(mcp.model()->index(mcpRow, McpServerModel::ModeColumn)).toString(),
            QStringLiteral("read_only"));
        QTRY_COMPARE(lastAuditedMode(QStringLiteral("remote")), QStringLiteral("read_only"));
        agents.nameEdit()->setText(QStringLiteral("remote"));
        agents.modeBox()->setCurrentIndex(agents.modeBox()->findData(QStringLiteral("read_write")));
        agents.attach();
        QVERIFY(agents.messageBar()->text().contains(QStringLiteral("MCP session")));
        QVERIFY_THROWS_EXCEPTION(ValueError, c.changeAgentMode(QStringLiteral("modes"),
                                                               QStringLiteral("remote"),
                                                               SandboxAttachMode::ReadWrite));
        c.waitForIdle();
        c.refreshPanels();
        QCOMPARE(modeOf(QStringLiteral("remote")), QStringLiteral("read_only"));
        QCOMPARE(lastAuditedMode(QStringLiteral("remote")), QStringLiteral("read_only"));
        const QString shot = qEnvironmentVariable("ELSAI_SCREENSHOT_DIR");
        if (!shot.isEmpty()) {
            agents.resize(520, 320);
            agents.show();
            QTest::qWait(50);
            agents.grab().save(shot + QStringLiteral("/messagebar-attach.png"));
        }
        mcp.toggleServer(); // ends the session
    }
};

QTEST_MAIN(TestConfirmations)
#include "tst_confirmations.moc"
