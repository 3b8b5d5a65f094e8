// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Drives the real workbench window offscreen through its menus, actions and shortcuts: a
// sandbox created through the New Sandbox dialog, a console command with streamed output, a
// file opened from the tree into a highlighted tab, files added and deleted through the
// Workspace menu, an agent attached from the agents panel, the audit log filtered and exported,
// a flush preview then a flush, the dock layout saved and restored, and screenshots in light
// and dark palettes. Modal dialogs (file dialogs, confirmations) are answered by answerModal().

#include "agentplanpanel.h"
#include "agentsmodel.h"
#include "agentspanel.h"
#include "appsettings.h"
#include "auditlogmodel.h"
#include "auditpanel.h"
#include "codeeditor.h"
#include "confirm.h"
#include "consoleblock.h"
#include "consolehistorymodel.h"
#include "consolepanel.h"
#include "diffview.h"
#include "errors.h"
#include "filetabs.h"
#include "findbar.h"
#include "flushpreviewdialog.h"
#include "icons.h"
#include "mainwindow.h"
#include "messagebar.h"
#include "modelroles.h"
#include "newsandboxdialog.h"
#include "sandboxcontroller.h"
#include "sessionsmodel.h"
#include "sessionspanel.h"
#include "settingsdialog.h"
#include "shortcutsdialog.h"
#include "terminaldock.h"
#include "terminalwidget.h"
#include "welcomepage.h"
#include "workspacepanel.h"
#include "workspacetreemodel.h"

#include <QAbstractProxyModel>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCommandLinkButton>
#include <QDialogButtonBox>
#include <QDirIterator>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFontComboBox>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScreen>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyleFactory>
#include <QSyntaxHighlighter>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTimer>
#include <QToolBar>
#include <QTreeView>
#include <QTreeWidget>

#include <algorithm>
#include <memory>
#include <thread>

#include "guitestutil.h"
#include "testutil.h"

using namespace elsai;
using elsai::test::answerModal;
using elsai::test::readHostFile;

namespace {

void writeFile(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content);
}

QPalette darkPalette()
{
    return AppSettings::darkPalette();
}

// Mean lightness and number of distinct colours (a blank grab has one or two).
std::pair<double, int> imageStats(const QImage &image)
{
    QSet<QRgb> colours;
    double sum = 0;
    int n = 0;
    for (int y = 0; y < image.height(); y += 3) {
        for (int x = 0; x < image.width(); x += 3) {
            const QRgb px = image.pixel(x, y);
            colours.insert(px);
            sum += QColor(px).lightness();
            ++n;
        }
    }
    return {n ? sum / n : 0, int(colours.size())};
}

bool hasLine(const QPlainTextEdit *edit, const QString &line)
{
    if (!edit)
        return false;
    for (QTextBlock b = edit->document()->begin(); b.isValid(); b = b.next()) {
        if (b.text() == line)
            return true;
    }
    return false;
}

/// Whether any command block of the console shows `line`.
bool consoleHasLine(const ConsolePanel *console, const QString &line)
{
    const QList<ConsoleBlock *> blocks = console->blocks();
    return std::any_of(blocks.begin(), blocks.end(),
                       [&line](const ConsoleBlock *b) { return hasLine(b->output(), line); });
}

QColor foregroundOf(const QPlainTextEdit *edit, const QString &line)
{
    // The whole line, so the "$ command" prompt that mentions it does not match.
    for (QTextBlock b = edit->document()->begin(); b.isValid(); b = b.next()) {
        if (b.text() == line && b.begin() != b.end())
            return b.begin().fragment().charFormat().foreground().color();
    }
    return {};
}

/// Picks `path` (absolute) in a file dialog and accepts it.
std::shared_ptr<bool> answerFileDialog(const QString &path)
{
    return answerModal<QFileDialog>([path](QFileDialog *dialog) {
        // Typed as a user would: selectFile() needs the folder listed first.
        const QFileInfo info(path);
        dialog->setDirectory(info.absolutePath());
        auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit"));
        QVERIFY(name);
        name->setText(info.fileName());
        static_cast<QDialog *>(dialog)->accept(); // QFileDialog::accept() is protected
    });
}

/// Answers the next confirmation (ui/confirm.h) with its destructive button or Cancel.
std::shared_ptr<bool> answerConfirmation(bool accept)
{
    return answerModal<QMessageBox>([accept](QMessageBox *box) {
        box->findChild<QPushButton *>(accept ? QStringLiteral("confirmAccept")
                                             : QStringLiteral("confirmCancel"))
            ->click();
    });
}

/// The view index of a workspace path, fetching its folders on the way.
QModelIndex treeIndex(WorkspacePanel *panel, const QString &path)
{
    auto *proxy = qobject_cast<QAbstractProxyModel *>(panel->view()->model());
    auto *tree = qobject_cast<WorkspaceTreeModel *>(proxy ? proxy->sourceModel() : nullptr);
    if (!tree)
        return {};
    const QStringList parts = path.split(QLatin1Char('/'));
    for (int i = 1; i < parts.size(); ++i) {
        const QModelIndex folder = tree->indexForPath(parts.mid(0, i).join(QLatin1Char('/')));
        if (folder.isValid() && tree->canFetchMore(folder))
            tree->fetchMore(folder);
    }
    return proxy->mapFromSource(tree->indexForPath(path));
}

bool auditHas(SandboxController *controller, const QString &event, const QString &actor)
{
    const QAbstractItemModel *model = controller->auditModel();
    for (int r = model->rowCount() - 1; r >= 0; --r) {
        const QModelIndex i = model->index(r, 0);
        if (i.data(Roles::EventNameRole).toString() == event &&
            i.data(Roles::ActorRole).toString() == actor)
            return true;
    }
    return false;
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void firstStartUsesTheScreen_data();
    void firstStartUsesTheScreen();
    void createSandboxThroughDialog();
    void welcomePageWhileNoFileIsOpen();
    void consoleRunsCommand();
    void consoleStreamsOutput();
    void consoleFloodIsBounded();
    void consoleInsertsBigUpdatesInSlices();
    void consoleRedrawKeepsStreamOrder();
    void consoleClipsHugeLines();
    void openFileFromTreeIntoHighlightedTab();
    void addAndDeleteFilesThroughWorkspaceMenu();
    void agentsPanelAttaches();
    void auditRowsFilterAndExport();
    void exportAuditLogThroughMenu();
    void flushPreviewThenFlush();
    void extensionPanelsAreRegisteredInOnePlace();
    void selectingASandboxMakesItCurrent();
    void openWorkspaceFolderInPlace();
    void settingsApplyLive();
    void shortcutsAndAbout();
    void f6CyclesThroughThePanels();
    void viewMenuBringsATabbedPanelToTheFront();
    void anotherTerminalFromInsideATerminal();
    void mnemonicsAreUnambiguous();
    void toolbarHasIcons();
    void layoutIsSavedAndRestored();
    void layoutIsVersioned();
    void defaultLayoutGivesRoom_data();
    void defaultLayoutGivesRoom();
    void resetLayoutPutsDocksBack();
    void screenshots();
    void noCutHeadersOrStates_data();
    void noCutHeadersOrStates();
    void newSandboxStartsFromTheStartupSpec();
    void createBwrapSandboxThroughDialog();
    void auditHealthShowsInTheStatusBar();

private:
    QString sandboxId() const { return QStringLiteral("tst-main"); }
    void setCurrentWorkspaceTo(const QString &id);
    QTemporaryDir m_tmp;
    QString m_project;
    std::unique_ptr<SandboxController> m_controller;
    std::unique_ptr<MainWindow> m_window;
};

namespace {
/// A sink whose health the test sets (as a failing disk would).
class HealthSink : public AuditSink
{
public:
    void record(const AuditEvent &) override {}
    AuditHealth health() const override
    {
        QMutexLocker lock(&m_mutex);
        return m_health;
    }
    void set(const AuditHealth &h)
    {
        {
            QMutexLocker lock(&m_mutex);
            m_health = h;
        }
        notifyHealthChanged();
    }

private:
    mutable QMutex m_mutex;
    AuditHealth m_health;
};
} // namespace

// The audit log's trouble stays in the status bar until it is resolved.
void TestMainWindow::auditHealthShowsInTheStatusBar()
{
    auto *label = m_window->findChild<QLabel *>(QStringLiteral("auditHealthLabel"));
    QVERIFY(label);
    QVERIFY(!label->isVisible());
    auto sink = std::make_shared<HealthSink>();
    AuditLog::instance().addSink(sink);
    AuditHealth failing;
    failing.state = AuditHealth::State::Failing;
    failing.recordsDropped = 12;
    failing.lastError = QStringLiteral("No space left on device");
    std::thread([&] { sink->set(failing); }).join(); // a write on another thread
    QTRY_VERIFY(label->isVisible());
    QVERIFY2(label->text().contains(QLatin1String("failing")), qPrintable(label->text()));
    QVERIFY(label->text().contains(QLatin1String("12 records dropped")));
    QVERIFY(label->text().contains(QLatin1String("No space left on device")));
    // Also where the user looks at the audit: the audit panel's message bar.
    MessageBar *bar = m_window->auditPanel()->messageBar();
    QTRY_VERIFY(bar->isShown());
    QVERIFY(bar->text().contains(QLatin1String("12 records dropped")));
    QCOMPARE(bar->type(), MessageBar::Type::Error);
    sink->set(AuditHealth());
    AuditLog::instance().removeSink(sink);
    QTRY_VERIFY(!label->isVisible());
    QTRY_VERIFY(!bar->isShown());
}

void TestMainWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_tmp.isValid());
    // Settings of the window go to the test folder, never the user's.
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_tmp.filePath("config"));
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(QApplication::style()->standardPalette());

    m_project = m_tmp.filePath(QStringLiteral("project"));
    writeFile(m_project + "/README.md", "# Demo\n\nA project for the window test.\n");
    writeFile(m_project + "/src/main.py", "def main():\n    print('hello')\n");
    writeFile(m_project + "/.env", "SECRET=1\n");

    m_controller = std::make_unique<SandboxController>();
    m_controller->setIntervals(60000, 500, 200);
    m_window = std::make_unique<MainWindow>(m_controller.get());
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void TestMainWindow::cleanupTestCase()
{
    m_window.reset();
    if (m_controller)
        m_controller->waitForIdle();
    m_controller.reset();
}

void TestMainWindow::createSandboxThroughDialog()
{
    // Ctrl+N opens the dialog (window-modal, asynchronous); the fields are typed in.
    QTest::keyClick(m_window.get(), Qt::Key_N, Qt::ControlModifier);
    NewSandboxDialog *dialog = nullptr;
    QTRY_VERIFY((dialog = m_window->findChild<NewSandboxDialog *>()) != nullptr);
    QTRY_VERIFY(dialog->isVisible());
    auto field = [&dialog](const char *name) {
        auto *edit = dialog->findChild<QLineEdit *>(QLatin1String(name));
        if (edit)
            edit->clear();
        return edit;
    };
    QLineEdit *id = field("workspaceId");
    QVERIFY(id);
    QTest::keyClicks(id, sandboxId());
    QTest::keyClicks(field("workspaceRoot"), m_tmp.filePath(QStringLiteral("ws")));
    QTest::keyClicks(field("seedFrom"), m_project);
    auto *ttl = dialog->findChild<QDoubleSpinBox *>(QStringLiteral("ttl"));
    QVERIFY(ttl);
    ttl->setValue(3600);
    QPushButton *ok = dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
    QVERIFY(ok && ok->isEnabled());
    QTest::mouseClick(ok, Qt::LeftButton);

    SessionsModel *sessions = m_controller->sessionsModel();
    QTRY_VERIFY(sessions->rowOf(sandboxId()) >= 0);
    QCOMPARE(m_window->sessionsPanel()->view()->model()->rowCount(), 1);
    QTRY_COMPARE(toString(m_controller->state(sandboxId())), toString(SessionState::Running));
    // The first sandbox becomes current: every panel follows, the status bar shows it.
    QCOMPARE(m_window->currentWorkspace(), sandboxId());
    QCOMPARE(m_window->sessionsPanel()->selectedWorkspace(), sandboxId());
    QCOMPARE(m_window->consolePanel()->workspaceId(), sandboxId());
    QTRY_VERIFY(m_window->statusSummary().contains(sandboxId()));
    QVERIFY2(m_window->statusSummary().contains(QStringLiteral("local"), Qt::CaseInsensitive),
             qPrintable(m_window->statusSummary()));
    QTRY_VERIFY(m_window->statusSummary().contains(QStringLiteral("TTL")));
    QVERIFY(QFile::exists(m_tmp.filePath(QStringLiteral("ws/README.md"))));
    QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("ws/.env")))); // a default exclude
    QCOMPARE(m_controller->sandbox(sandboxId())->ttlSeconds(), std::optional<double>(3600));
    QTRY_VERIFY(m_window->findChild<NewSandboxDialog *>() == nullptr);

    // A second sandbox with the same id, through the same dialog: refused without a modal
    // box, the error goes to the status bar.
    m_window->action(QStringLiteral("actionNewSandbox"))->trigger();
    QTRY_VERIFY((dialog = m_window->findChild<NewSandboxDialog *>()) != nullptr);
    QTest::keyClicks(field("workspaceId"), sandboxId());
    QTest::keyClicks(field("workspaceRoot"), m_tmp.filePath(QStringLiteral("ws-dup")));
    dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
    QTRY_VERIFY(m_window->statusBar()->currentMessage().contains(QStringLiteral("Error")));
    QCOMPARE(m_controller->workspaceIds(), QStringList{sandboxId()});
}

void TestMainWindow::consoleRunsCommand()
{
    ConsolePanel *console = m_window->consolePanel();
    QLineEdit *input = console->input();
    QVERIFY(input->isEnabled());
    const QString command = QStringLiteral("echo hello-out; echo oops-err >&2; exit 3");
    QTest::keyClicks(input, command);
    QTest::keyClick(input, Qt::Key_Return);
    QCOMPARE(input->text(), QString());

    QTRY_VERIFY(console->statusLabel()->text().startsWith(QStringLiteral("exit 3")));
    QVERIFY(console->statusLabel()->text().contains(QStringLiteral(" ms")));
    // The command's block: its header, its output, its own status line.
    QCOMPARE(console->blocks().last()->headerLabel()->text(), QStringLiteral("$ ") + command);
    QVERIFY(hasLine(console->output(), QStringLiteral("hello-out")));
    QVERIFY(hasLine(console->output(), QStringLiteral("oops-err")));
    // stderr is told apart from stdout.
    const QColor out = foregroundOf(console->output(), QStringLiteral("hello-out"));
    const QColor err = foregroundOf(console->output(), QStringLiteral("oops-err"));
    QVERIFY(out.isValid() && err.isValid());
    QVERIFY(out != err);

    // History: Up recalls the command, Down returns to the (empty) draft.
    QTest::keyClick(input, Qt::Key_Up);
    QCOMPARE(input->text(), command);
    QTest::keyClick(input, Qt::Key_Down);
    QCOMPARE(input->text(), QString());

    // A cwd relative to the workspace.
    console->cwdBox()->setEditText(QStringLiteral("src"));
    QTest::keyClicks(input, QStringLiteral("ls"));
    QTest::keyClick(input, Qt::Key_Return);
    QTRY_VERIFY(console->statusLabel()->text().startsWith(QStringLiteral("exit 0")));
    QVERIFY(hasLine(console->output(), QStringLiteral("main.py")));
    console->cwdBox()->setEditText(QStringLiteral("."));
}

void TestMainWindow::consoleStreamsOutput()
{
    ConsolePanel *console = m_window->consolePanel();
    console->runCommand(QStringLiteral("echo stream-first; sleep 3; echo stream-second"));
    // The first line shows while the command still runs.
    QTRY_VERIFY(hasLine(console->output(), QStringLiteral("stream-first")));
    QVERIFY(!hasLine(console->output(), QStringLiteral("stream-second")));
    QVERIFY2(console->statusLabel()->text().startsWith(QStringLiteral("running…")),
             qPrintable(console->statusLabel()->text()));
    QTRY_VERIFY_WITH_TIMEOUT(hasLine(console->output(), QStringLiteral("stream-second")), 15000);
    QTRY_VERIFY(console->statusLabel()->text().startsWith(QStringLiteral("exit 0")));
    // Each line of output appears once, however many updates streamed it.
    QCOMPARE(console->output()->toPlainText().count(QStringLiteral("stream-first\n")), 1);
}

void TestMainWindow::consoleFloodIsBounded()
{
    ConsolePanel *console = m_window->consolePanel();
    console->runCommand(QStringLiteral("seq 1 2000000"));
    QTRY_VERIFY_WITH_TIMEOUT(console->statusLabel()->text().startsWith(QStringLiteral("exit 0")),
                             30000);
    // The backend caps what it keeps (--max-output-bytes) and the view caps its lines.
    QVERIFY2(console->statusLabel()->text().contains(QStringLiteral("truncated")),
             qPrintable(console->statusLabel()->text()));
    QTRY_VERIFY(!console->hasPendingOutput());
    QVERIFY(console->output()->blockCount() <= ConsolePanel::maxBlockCount());
    QVERIFY(hasLine(console->output(), QStringLiteral("1000")));
}

void TestMainWindow::consoleRedrawKeepsStreamOrder()
{
    ConsolePanel *console = m_window->consolePanel();
    console->runCommand(
        QStringLiteral("echo order-o1; sleep 0.3; echo order-e1 >&2; sleep 0.3; echo order-o2"));
    QTRY_VERIFY_WITH_TIMEOUT(hasLine(console->output(), QStringLiteral("order-o2")), 15000);
    QTRY_VERIFY(console->statusLabel()->text().startsWith(QStringLiteral("exit 0")));
    const auto order = [console] {
        QStringList lines;
        for (QTextBlock b = console->output()->document()->begin(); b.isValid(); b = b.next()) {
            if (b.text().startsWith(QStringLiteral("order-")))
                lines << b.text();
        }
        return lines;
    };
    const QStringList streamed{"order-o1", "order-e1", "order-o2"};
    QCOMPARE(order(), streamed);
    // A palette change redraws everything from the model: the same interleaving.
    QPalette p = console->palette();
    p.setColor(QPalette::Base, p.color(QPalette::Base).darker(101));
    console->setPalette(p);
    QTRY_VERIFY(!console->hasPendingOutput());
    QCOMPARE(order(), streamed);
    console->setPalette(QPalette());
    QTRY_VERIFY(!console->hasPendingOutput());
}

void TestMainWindow::consoleInsertsBigUpdatesInSlices()
{
    // One model update with 50,000 numbered lines (stdout) and a stderr tail: the view takes
    // it in bounded slices across event-loop passes, keeps the last maxBlockCount() lines in
    // order without loss or duplicates, and says how many it did not show.
    ConsolePanel *console = m_window->consolePanel();
    ConsoleHistoryModel *model = m_controller->consoleModel(sandboxId());
    QVERIFY(model);
    const qint64 sandboxCap = model->outputCap();
    model->setOutputCap(8 << 20);
    const quint64 id = 900001;
    model->beginCommand(id, QStringLiteral("generated"), QString());
    // The command's own block.
    QTextDocument *doc = console->output()->document();
    qsizetype largestInsert = 0;
    const auto conn =
        connect(doc, &QTextDocument::contentsChange, this, [&largestInsert](int, int, int added) {
            largestInsert = qMax<qsizetype>(largestInsert, added);
        });
    QByteArray lines;
    const int total = 50000;
    for (int i = 1; i <= total; ++i)
        lines += "line-" + QByteArray::number(i) + '\n';
    model->appendOutput(id, OutputChannel::Stdout, lines);
    model->appendOutput(id, OutputChannel::Stderr, "err-tail\n");
    int passes = 0;
    QTRY_VERIFY(console->hasPendingOutput()); // the model's coalesced update arrived
    while (console->hasPendingOutput() && passes < 10000) {
        QVERIFY(console->pendingLines() <= ConsolePanel::maxBlockCount());
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        ++passes;
    }
    QVERIFY(!console->hasPendingOutput());
    disconnect(conn);
    // The view followed the output to its end, slice after slice.
    const QScrollBar *bar = console->output()->verticalScrollBar();
    QCOMPARE(bar->value(), bar->maximum());
    QVERIFY2(passes > 1, "one pass inserted everything");
    // A slice, plus at most the one-line note, per insertion.
    QVERIFY2(largestInsert <= ConsolePanel::maxCharsPerPass() + 64,
             qPrintable(QString::number(largestInsert)));
    model->finishCommand(id, ExecuteResult{});
    QTRY_VERIFY(console->statusLabel()->text().startsWith(QStringLiteral("exit 0 · 0 ms")));
    QVERIFY(!console->hasPendingOutput());
    model->setOutputCap(sandboxCap);

    // The tail of the view: consecutive numbers up to `total`, then stderr, then the status.
    QStringList shown;
    for (QTextBlock b = doc->begin(); b.isValid(); b = b.next())
        shown << b.text();
    const qsizetype lastLine = shown.lastIndexOf(QStringLiteral("line-%1").arg(total));
    QVERIFY(lastLine > 0);
    QCOMPARE(shown.at(lastLine + 1), QStringLiteral("err-tail"));
    QVERIFY2(lastLine + 3 >= shown.size(),
             qPrintable(shown.mid(lastLine - 2, 8).join(QLatin1Char('|'))));
    qsizetype first = lastLine;
    while (first > 0 && shown.at(first - 1).startsWith(QStringLiteral("line-")))
        --first;
    for (qsizetype i = first; i <= lastLine; ++i)
        QCOMPARE(shown.at(i), QStringLiteral("line-%1").arg(total - (lastLine - i)));
    QVERIFY(lastLine - first + 1 >= ConsolePanel::maxBlockCount() - 10);
    QVERIFY(doc->blockCount() <= ConsolePanel::maxBlockCount());
}

void TestMainWindow::consoleClipsHugeLines()
{
    ConsolePanel *console = m_window->consolePanel();
    // 60,000 characters without a newline, streamed in several chunks.
    console->runCommand(QStringLiteral("head -c 60000 /dev/zero | tr '\\0' y; echo; echo after"));
    QTRY_VERIFY_WITH_TIMEOUT(hasLine(console->output(), QStringLiteral("after")), 30000);
    const QStringList lines = console->output()->toPlainText().split(QLatin1Char('\n'));
    qsizetype longest = 0;
    for (const QString &line : lines)
        longest = qMax(longest, line.size());
    QVERIFY2(longest <= ConsolePanel::maxLineLength() + 16, qPrintable(QString::number(longest)));
    QVERIFY(lines.contains(QString(ConsolePanel::maxLineLength(), QLatin1Char('y')) +
                           QStringLiteral(" … [line cut]")));
}

void TestMainWindow::openFileFromTreeIntoHighlightedTab()
{
    WorkspacePanel *panel = m_window->workspacePanel();
    QCOMPARE(panel->workspaceId(), sandboxId());
    const QString path = QStringLiteral("src/main.py");
    QTRY_VERIFY(treeIndex(panel, path).isValid());
    const QModelIndex index = treeIndex(panel, path);
    panel->view()->expand(index.parent());
    panel->view()->setFocus();
    panel->view()->setCurrentIndex(index);
    // Return in the tree activates the row: the file opens in a tab.
    QTest::keyClick(panel->view(), Qt::Key_Return);
    FileTabs *tabs = m_window->fileTabs();
    int tab = -1;
    QTRY_VERIFY((tab = tabs->indexOf(sandboxId(), path)) >= 0);
    QTRY_COMPARE(tabs->tabKind(tab), FileTabs::TabKind::Text);
    QCOMPARE(tabs->currentIndex(), tab);
    QPlainTextEdit *editor = tabs->editor(tab);
    QCOMPARE(editor->toPlainText(), QStringLiteral("def main():\n    print('hello')\n"));
    QVERIFY2(tabs->highlighterName(tab).contains(QStringLiteral("ython")),
             qPrintable(tabs->highlighterName(tab)));
    // Highlighted: the keyword "def" carries a format of its own.
    QTRY_VERIFY(!editor->document()->firstBlock().layout()->formats().isEmpty());

    // The same through the Workspace menu: Open on the selected README.md.
    const QModelIndex readme = treeIndex(panel, QStringLiteral("README.md"));
    panel->view()->selectionModel()->setCurrentIndex(readme, QItemSelectionModel::ClearAndSelect |
                                                                 QItemSelectionModel::Rows);
    QAction *open = m_window->action(QStringLiteral("actionOpen"));
    QVERIFY(open && open->isEnabled());
    open->trigger();
    QTRY_VERIFY(tabs->indexOf(sandboxId(), QStringLiteral("README.md")) >= 0);
}

void TestMainWindow::addAndDeleteFilesThroughWorkspaceMenu()
{
    WorkspacePanel *panel = m_window->workspacePanel();
    const QString host = m_tmp.filePath(QStringLiteral("host/notes.txt"));
    writeFile(host, "notes from the host\n");
    // Add Files… into the folder of the selected file (src/main.py → src/).
    const QModelIndex main = treeIndex(panel, QStringLiteral("src/main.py"));
    QVERIFY(main.isValid());
    panel->view()->selectionModel()->setCurrentIndex(main, QItemSelectionModel::ClearAndSelect |
                                                               QItemSelectionModel::Rows);
    QSignalSpy added(panel, &WorkspacePanel::filesAdded);
    const auto answered = answerFileDialog(host);
    m_window->action(QStringLiteral("actionAddFiles"))->trigger();
    QVERIFY(*answered); // trigger() returns once the modal dialog is done
    QTRY_COMPARE(added.size(), 1);
    QCOMPARE(added.first().at(1).toStringList(), QStringList{QStringLiteral("src/notes.txt")});
    QCOMPARE(readHostFile(m_tmp.filePath(QStringLiteral("ws/src/notes.txt"))),
             QByteArray("notes from the host\n"));
    QTRY_VERIFY(treeIndex(panel, QStringLiteral("src/notes.txt")).isValid());
    // Added since seeding: bold in the tree.
    QTRY_VERIFY(
        treeIndex(panel, QStringLiteral("src/notes.txt")).data(Qt::FontRole).value<QFont>().bold());
    QTRY_VERIFY(auditHas(m_controller.get(), QStringLiteral("sandbox.add_files"),
                         SandboxController::humanActor()));

    // Delete with the Delete key in the tree; the confirmation is answered Cancel, then Delete.
    const QModelIndex notes = treeIndex(panel, QStringLiteral("src/notes.txt"));
    panel->view()->setFocus();
    panel->view()->selectionModel()->setCurrentIndex(notes, QItemSelectionModel::ClearAndSelect |
                                                                QItemSelectionModel::Rows);
    QCOMPARE(panel->selectedPaths(), QStringList{QStringLiteral("src/notes.txt")});
    m_window->activateWindow(); // shortcuts go to the active window
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    const auto no = answerConfirmation(false);
    QTest::keyClick(panel->view(), Qt::Key_Delete);
    QTRY_VERIFY(*no);
    m_controller->waitForIdle();
    QVERIFY(QFile::exists(m_tmp.filePath(QStringLiteral("ws/src/notes.txt"))));
    const auto yes = answerConfirmation(true);
    m_window->action(QStringLiteral("actionDelete"))->trigger();
    QVERIFY(*yes);
    QTRY_VERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("ws/src/notes.txt"))));
    QTRY_VERIFY(!treeIndex(panel, QStringLiteral("src/notes.txt")).isValid());
    QVERIFY(treeIndex(panel, QStringLiteral("src/main.py")).isValid());
    QTRY_VERIFY(auditHas(m_controller.get(), QStringLiteral("sandbox.delete_files"),
                         SandboxController::humanActor()));
}

void TestMainWindow::agentsPanelAttaches()
{
    AgentsPanel *panel = m_window->agentsPanel();
    QTest::keyClicks(panel->nameEdit(), QStringLiteral("reviewer"));
    panel->modeBox()->setCurrentIndex(panel->modeBox()->findData(QStringLiteral("read_only")));
    QTest::mouseClick(panel->attachButton(), Qt::LeftButton);

    QAbstractItemModel *model = panel->view()->model();
    auto rowOf = [model](const QString &name) {
        for (int r = 0; r < model->rowCount(); ++r) {
            if (model->index(r, 0).data(Roles::AgentNameRole).toString() == name)
                return r;
        }
        return -1;
    };
    QTRY_VERIFY(rowOf(QStringLiteral("reviewer")) >= 0);
    // Only agents of the current sandbox are listed (the console agent is one of them).
    for (int r = 0; r < model->rowCount(); ++r)
        QCOMPARE(model->index(r, 0).data(Roles::WorkspaceIdRole).toString(), sandboxId());
    const int row = rowOf(QStringLiteral("reviewer"));
    QCOMPARE(model->index(row, 0).data(Roles::AttachModeRole).toString(),
             QStringLiteral("read_only"));
    panel->view()->setCurrentIndex(model->index(row, 0));
    QTRY_VERIFY(panel->details()->toPlainText().contains(QStringLiteral("read_file")));
    QVERIFY(!panel->details()->toPlainText().contains(QStringLiteral("write_file")));

    // Change mode re-attaches read-write: the write tools appear.
    panel->toggleModeOfSelected();
    QTRY_COMPARE(
        model->index(rowOf(QStringLiteral("reviewer")), 0).data(Roles::AttachModeRole).toString(),
        QStringLiteral("read_write"));
    QTRY_VERIFY(panel->details()->toPlainText().contains(QStringLiteral("write_file")));

    // Another agent to detach.
    panel->nameEdit()->setText(QStringLiteral("temp-agent"));
    panel->attach();
    QTRY_VERIFY(rowOf(QStringLiteral("temp-agent")) >= 0);
    panel->view()->setCurrentIndex(model->index(rowOf(QStringLiteral("temp-agent")), 0));
    panel->detachSelected();
    QTRY_COMPARE(rowOf(QStringLiteral("temp-agent")), -1);
    QVERIFY(rowOf(QStringLiteral("reviewer")) >= 0);
    // Each of these is an audit row, live.
    QTRY_VERIFY(auditHas(m_controller.get(), QStringLiteral("attach"), QStringLiteral("reviewer")));
    QTRY_VERIFY(
        auditHas(m_controller.get(), QStringLiteral("detach"), QStringLiteral("temp-agent")));
}

void TestMainWindow::auditRowsFilterAndExport()
{
    AuditPanel *panel = m_window->auditPanel();
    AuditFilterProxyModel *proxy = panel->proxy();
    QTRY_VERIFY(proxy->rowCount() > 0);

    panel->eventBox()->setEditText(QStringLiteral("sandbox.execute"));
    panel->actorEdit()->setText(SandboxController::consoleAgent());
    QTRY_VERIFY(proxy->rowCount() >= 3); // the commands of the console tests
    for (int r = 0; r < proxy->rowCount(); ++r) {
        QCOMPARE(proxy->index(r, 0).data(Roles::EventNameRole).toString(),
                 QStringLiteral("sandbox.execute"));
        QCOMPARE(proxy->index(r, 0).data(Roles::ActorRole).toString(),
                 SandboxController::consoleAgent());
    }
    panel->view()->setCurrentIndex(proxy->index(0, 0));
    const QJsonObject details =
        QJsonDocument::fromJson(panel->details()->toPlainText().toUtf8()).object();
    QCOMPARE(details.value(QStringLiteral("event")).toString(), QStringLiteral("sandbox.execute"));

    const QString path = m_tmp.filePath(QStringLiteral("audit.jsonl"));
    QString error;
    QVERIFY2(panel->exportVisible(path, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), proxy->rowCount());
    for (const QByteArray &line : lines) {
        QJsonParseError parseError;
        const QJsonObject o = QJsonDocument::fromJson(line, &parseError).object();
        QCOMPARE(parseError.error, QJsonParseError::NoError);
        QCOMPARE(o.value(QStringLiteral("event")).toString(), QStringLiteral("sandbox.execute"));
    }

    // A filter that matches nothing exports an empty file, not everything.
    panel->textEdit()->setText(QStringLiteral("no-such-text-anywhere"));
    QCOMPARE(proxy->rowCount(), 0);
    QVERIFY(panel->exportVisible(path));
    QCOMPARE(QFileInfo(path).size(), 0);

    panel->textEdit()->clear();
    panel->actorEdit()->clear();
    panel->eventBox()->setEditText(QString());
    QTRY_VERIFY(proxy->rowCount() > 3);
}

void TestMainWindow::exportAuditLogThroughMenu()
{
    AuditPanel *panel = m_window->auditPanel();
    panel->outcomeBox()->setCurrentIndex(0);
    panel->eventBox()->setEditText(QStringLiteral("attach"));
    QTRY_VERIFY(panel->proxy()->rowCount() >= 2); // reviewer, temp-agent (and console)
    const int rows = panel->proxy()->rowCount();
    const QString path = m_tmp.filePath(QStringLiteral("menu-export.jsonl"));
    const auto answered = answerFileDialog(path);
    m_window->action(QStringLiteral("actionExportAuditLog"))->trigger();
    QVERIFY(*answered);
    QTRY_VERIFY(QFile::exists(path));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), rows);
    QSet<QString> actors;
    for (const QByteArray &line : lines) {
        QJsonParseError parseError;
        const QJsonObject o = QJsonDocument::fromJson(line, &parseError).object();
        QCOMPARE(parseError.error, QJsonParseError::NoError);
        QCOMPARE(o.value(QStringLiteral("event")).toString(), QStringLiteral("attach"));
        QCOMPARE(o.value(QStringLiteral("workspace_id")).toString(), sandboxId());
        QVERIFY(o.contains(QStringLiteral("timestamp")));
        actors.insert(o.value(QStringLiteral("actor")).toString());
    }
    QVERIFY(actors.contains(QStringLiteral("reviewer")));
    // The panel confirms the path and how many records were written.
    QVERIFY2(panel->messageBar()->isVisibleTo(panel) &&
                 panel->messageBar()->text().contains(path) &&
                 panel->messageBar()->text().contains(QString::number(rows)),
             qPrintable(panel->messageBar()->text()));
    panel->messageBar()->dismiss();
    panel->eventBox()->setEditText(QString());

    // A cancelled dialog writes nothing.
    const QString cancelled = m_tmp.filePath(QStringLiteral("cancelled.jsonl"));
    const auto rejected = answerModal<QFileDialog>([](QFileDialog *dialog) { dialog->reject(); });
    m_window->action(QStringLiteral("actionExportAuditLog"))->trigger();
    QVERIFY(*rejected);
    QVERIFY(!QFile::exists(cancelled));
}

void TestMainWindow::flushPreviewThenFlush()
{
    // The console changes the workspace: a new file and an edited one, both synced back.
    ConsolePanel *console = m_window->consolePanel();
    console->runCommand(QStringLiteral("echo 'print(2)' > src/added.py; echo more >> README.md"));
    QTRY_VERIFY(console->statusLabel()->text().startsWith(QStringLiteral("exit 0")));

    QAction *flush = m_window->action(QStringLiteral("actionFlushPreview"));
    QVERIFY(flush && flush->isEnabled());
    m_window->activateWindow(); // shortcuts go to the active window
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QTest::keyClick(m_window.get(), Qt::Key_F, Qt::ControlModifier | Qt::ShiftModifier);
    FlushPreviewDialog *dialog = nullptr;
    QTRY_VERIFY((dialog = m_window->findChild<FlushPreviewDialog *>()) != nullptr);
    QTRY_VERIFY(dialog->isVisible());
    QTreeWidget *entries = dialog->entriesView();
    auto find = [entries](const QString &text) -> QTreeWidgetItem * {
        const auto items = entries->findItems(text, Qt::MatchExactly | Qt::MatchRecursive);
        return items.isEmpty() ? nullptr : items.first();
    };
    QTRY_VERIFY(find(QStringLiteral("src/added.py")) || find(QStringLiteral("added.py")));
    QTreeWidgetItem *added = find(QStringLiteral("src/added.py"))
                                 ? find(QStringLiteral("src/added.py"))
                                 : find(QStringLiteral("added.py"));
    QVERIFY(added->parent() && added->parent()->text(0).startsWith(QStringLiteral("Add")));
    QTreeWidgetItem *readme = find(QStringLiteral("README.md"));
    QVERIFY(readme && readme->parent());
    QVERIFY2(readme->parent()->text(0).startsWith(QStringLiteral("Update")),
             qPrintable(readme->parent()->text(0)));
    // Selecting an entry shows its diff.
    QSignalSpy diffed(dialog, &FlushPreviewDialog::diffReady);
    entries->setCurrentItem(readme);
    QTRY_COMPARE(diffed.size(), 1);
    QVERIFY(dialog->diffView()->toPlainText().contains(QStringLiteral("+more")));
    // Nothing reached the host yet.
    QVERIFY(!QFile::exists(m_project + QStringLiteral("/src/added.py")));

    QSignalSpy flushed(dialog, &FlushPreviewDialog::flushFinished);
    QPushButton *flushButton = nullptr;
    for (QPushButton *b : dialog->findChildren<QPushButton *>()) {
        if (b->text().remove(QLatin1Char('&')) == QStringLiteral("Flush"))
            flushButton = b;
    }
    QVERIFY(flushButton);
    QTRY_VERIFY(flushButton->isEnabled());
    QTest::mouseClick(flushButton, Qt::LeftButton);
    QTRY_COMPARE(flushed.size(), 1);
    QCOMPARE(flushed.first().at(0).toBool(), true);
    QCOMPARE(readHostFile(m_project + QStringLiteral("/src/added.py")), QByteArray("print(2)\n"));
    QVERIFY(readHostFile(m_project + QStringLiteral("/README.md")).endsWith("more\n"));
    QVERIFY2(dialog->resultText().contains(QStringLiteral("synced")),
             qPrintable(dialog->resultText()));
    QTRY_VERIFY(auditHas(m_controller.get(), QStringLiteral("sandbox.flush"),
                         SandboxController::humanActor()));
    dialog->close();
    QTRY_VERIFY(m_window->findChild<FlushPreviewDialog *>() == nullptr);
}

void TestMainWindow::extensionPanelsAreRegisteredInOnePlace()
{
    // What a later panel (scripted agents, MCP) does: one addPanel() call.
    auto *label = new QLabel;
    QSignalSpy followed(m_window.get(), &MainWindow::currentWorkspaceChanged);
    connect(m_window.get(), &MainWindow::currentWorkspaceChanged, label, &QLabel::setText);
    QDockWidget *dock = m_window->addPanel(label, QStringLiteral("Extra"),
                                           QStringLiteral("extraDock"), Qt::RightDockWidgetArea);
    QCOMPARE(m_window->panelDock(QStringLiteral("extraDock")), dock);
    QCOMPARE(dock->widget(), label);
    QAction *toggle = m_window->action(QStringLiteral("actionShow_extraDock"));
    QVERIFY(toggle);
    bool listed = false;
    for (QAction *menu : m_window->menuBar()->actions()) {
        if (menu->menu() && menu->menu()->actions().contains(toggle))
            listed = menu->text().remove(QLatin1Char('&')) == QStringLiteral("View");
    }
    QVERIFY(listed);
    m_window->setCurrentWorkspace(sandboxId());
    QCOMPARE(label->text(), sandboxId());
    QVERIFY(!followed.isEmpty());
    m_window->removeDockWidget(dock);
    delete dock;
    QVERIFY(!m_window->action(QStringLiteral("actionShow_extraDock")));
}

void TestMainWindow::selectingASandboxMakesItCurrent()
{
    SandboxSpec spec;
    spec.workspaceId = QStringLiteral("tst-second");
    spec.workspaceRoot = m_tmp.filePath(QStringLiteral("ws2"));
    m_controller->addSandbox(spec);
    // Adding does not steal the current sandbox.
    QCOMPARE(m_window->currentWorkspace(), sandboxId());

    SessionsPanel *sessions = m_window->sessionsPanel();
    const int row = m_controller->sessionsModel()->rowOf(spec.workspaceId);
    QVERIFY(row >= 0);
    sessions->view()->selectRow(row);
    QCOMPARE(m_window->currentWorkspace(), spec.workspaceId);
    QCOMPARE(m_window->consolePanel()->workspaceId(), spec.workspaceId);
    QVERIFY(!consoleHasLine(m_window->consolePanel(), QStringLiteral("hello-out")));
    const QAbstractItemModel *agents = m_window->agentsPanel()->view()->model();
    for (int r = 0; r < agents->rowCount(); ++r)
        QCOMPARE(agents->index(r, 0).data(Roles::WorkspaceIdRole).toString(), spec.workspaceId);
    QTRY_VERIFY(m_window->statusSummary().startsWith(spec.workspaceId));

    // Removing the current sandbox falls back to the remaining one, output and all.
    m_controller->removeSandbox(spec.workspaceId);
    QCOMPARE(m_window->currentWorkspace(), sandboxId());
    QCOMPARE(m_window->sessionsPanel()->selectedWorkspace(), sandboxId());
    QVERIFY(consoleHasLine(m_window->consolePanel(), QStringLiteral("hello-out")));
    QTRY_VERIFY(m_window->statusSummary().startsWith(sandboxId()));
}

void TestMainWindow::layoutIsSavedAndRestored()
{
    auto *dock = m_window->findChild<QDockWidget *>(QStringLiteral("agentsDock"));
    QVERIFY(dock);
    for (const char *name : {"sessionsDock", "workspaceDock", "consoleDock", "auditDock"})
        QVERIFY(m_window->findChild<QDockWidget *>(QLatin1String(name)));
    dock->hide();
    QVERIFY(m_window->close());

    {
        MainWindow restored(m_controller.get());
        auto *restoredDock = restored.findChild<QDockWidget *>(QStringLiteral("agentsDock"));
        QVERIFY(restoredDock);
        restored.show();
        QVERIFY(QTest::qWaitForWindowExposed(&restored));
        QVERIFY(restoredDock->isHidden());
        QVERIFY(!restored.findChild<QDockWidget *>(QStringLiteral("consoleDock"))->isHidden());
        // The new window also follows the existing sandbox.
        QCOMPARE(restored.currentWorkspace(), sandboxId());
        restoredDock->show();
        restored.close();
    }

    MainWindow again(m_controller.get());
    QVERIFY(!again.findChild<QDockWidget *>(QStringLiteral("agentsDock"))->isHidden());
    dock->show();
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void TestMainWindow::screenshots()
{
    // The README's screenshots: the default layout at 1280×800 with every panel populated (a
    // highlighted file in front, the tree expanded, an agent's details, the console's last
    // command, an audit record selected), light and dark. Written into the build's tests/
    // folder always, and into resources/ with ELSAI_UPDATE_SCREENSHOTS=1 (so CI leaves the
    // tree clean).
    m_window->resize(1280, 800);
    m_window->resetLayout();
    FileTabs *tabs = m_window->fileTabs();
    tabs->openFile(sandboxId(), QStringLiteral("README.md"));
    tabs->openFile(sandboxId(), QStringLiteral("src/main.py"));
    QTRY_COMPARE(tabs->tabKind(tabs->currentIndex()), FileTabs::TabKind::Text);
    WorkspacePanel *workspace = m_window->workspacePanel();
    QTRY_VERIFY(treeIndex(workspace, QStringLiteral("src/main.py")).isValid());
    workspace->view()->expand(treeIndex(workspace, QStringLiteral("src")));
    workspace->view()->setCurrentIndex(treeIndex(workspace, QStringLiteral("src/main.py")));
    AgentsPanel *agents = m_window->agentsPanel();
    for (int r = 0; r < agents->view()->model()->rowCount(); ++r) {
        const QModelIndex i = agents->view()->model()->index(r, 0);
        if (i.data(Roles::AgentNameRole).toString() == QStringLiteral("reviewer"))
            agents->view()->setCurrentIndex(i);
    }
    QTRY_VERIFY(agents->details()->toPlainText().contains(QStringLiteral("read_file")));
    ConsolePanel *console = m_window->consolePanel();
    console->runCommand(QStringLiteral("echo to-stderr >&2; ls"));
    QTRY_VERIFY(console->statusLabel()->text().startsWith(QStringLiteral("exit 0")));
    QTRY_VERIFY(!console->hasPendingOutput());
    QTRY_VERIFY(hasLine(console->output(), QStringLiteral("to-stderr")));
    AuditPanel *audit = m_window->auditPanel();
    // The console's command is the last record once the log's batch arrived: shown selected.
    const auto lastEvent = [audit] {
        return audit->proxy()
            ->index(audit->proxy()->rowCount() - 1, 0)
            .data(Roles::AuditEventRole)
            .value<AuditEvent>()
            .event;
    };
    QTRY_COMPARE(lastEvent(), QStringLiteral("sandbox.execute"));
    audit->view()->setCurrentIndex(audit->proxy()->index(audit->proxy()->rowCount() - 1, 0));
    QTRY_VERIFY(m_window->statusSummary().contains(QStringLiteral("TTL")));
    m_window->statusBar()->clearMessage();
    CodeEditor *editor = tabs->codeEditor(tabs->currentIndex());
    QVERIFY(editor);
    editor->goToLine(2);
    QTest::qWait(300); // the column fitter's debounce

    const QString dir = QCoreApplication::applicationDirPath();
    const bool update = qEnvironmentVariableIntValue("ELSAI_UPDATE_SCREENSHOTS") == 1;
    const auto shoot = [&](const QString &name, const QString &resource) {
        QCoreApplication::processEvents();
        const QImage image = m_window->grab().toImage();
        bool saved = image.save(dir + QStringLiteral("/mainwindow-%1.png").arg(name));
        if (update)
            saved = saved && image.save(QStringLiteral(ELSAI_SOURCE_DIR "/resources/") + resource);
        return std::pair(image, saved);
    };
    const auto [light, lightSaved] =
        shoot(QStringLiteral("light"), QStringLiteral("screenshot-mainwindow.png"));
    QVERIFY(lightSaved);
    QCOMPARE(light.size(), QSize(1280, 800) * m_window->devicePixelRatio());
    const auto [lightMean, lightColours] = imageStats(light);
    QVERIFY2(lightColours > 20, qPrintable(QString::number(lightColours)));

    QApplication::setPalette(darkPalette());
    QCoreApplication::processEvents();
    // The console re-inserts its kept output in slices.
    QTRY_VERIFY(!console->hasPendingOutput());
    // The console re-renders in accents chosen for a dark base.
    const QColor errDark = foregroundOf(console->output(), QStringLiteral("to-stderr"));
    QVERIFY(errDark.lightness() > 128);
    // The dark one with the find bar open on a match, and the Timeline in front of the Audit:
    // the console's command is a call there, with its changes.
    QDockWidget *timeline = m_window->panelDock(QStringLiteral("timelineDock"));
    QVERIFY(timeline);
    timeline->raise();
    QTRY_VERIFY(!timeline->visibleRegion().isEmpty());
    tabs->showFindBar(false);
    FindBar *find = tabs->findBar(tabs->currentIndex());
    QVERIFY(find && find->isVisible());
    find->findField()->setText(QStringLiteral("print"));
    QVERIFY(find->findNext());
    const auto [dark, darkSaved] =
        shoot(QStringLiteral("dark"), QStringLiteral("screenshot-mainwindow-dark.png"));
    QVERIFY(darkSaved);
    const auto [darkMean, darkColours] = imageStats(dark);
    QVERIFY2(darkColours > 20, qPrintable(QString::number(darkColours)));
    QVERIFY2(darkMean < lightMean - 40,
             qPrintable(QStringLiteral("%1 vs %2").arg(darkMean).arg(lightMean)));
    find->closeBar();
    m_window->panelDock(QStringLiteral("auditDock"))->raise();
    QApplication::setPalette(QApplication::style()->standardPalette());
    QCoreApplication::processEvents();
}

// The first start (no saved layout): most of the screen, the docks where the default layout
// puts them, the welcome page in the centre.
void TestMainWindow::firstStartUsesTheScreen_data()
{
    QTest::addColumn<QRect>("available");
    QTest::addColumn<QSize>("expected");
    // clang-format off
    QTest::newRow("1920x1080") << QRect(0, 0, 1920, 1050) << QSize(1728, 945);
    QTest::newRow("1280x800") << QRect(0, 0, 1280, 770) << QSize(1152, 700);
    QTest::newRow("small") << QRect(0, 0, 1024, 600) << QSize(1024, 600);
    QTest::newRow("no screen") << QRect() << QSize(1280, 800);
    // clang-format on
}

void TestMainWindow::firstStartUsesTheScreen()
{
    QFETCH(QRect, available);
    QFETCH(QSize, expected);
    QCOMPARE(MainWindow::defaultSize(available), expected);
    if (QTest::currentDataTag() != QLatin1String("1920x1080"))
        return;
    // The shared window started without saved settings.
    const QRect screen = m_window->screen()->availableGeometry();
    QCOMPARE(m_window->size(), MainWindow::defaultSize(screen));
    // Every panel in its default place still fits the "small" screen above: a panel whose
    // controls do not wrap would push the window past it.
    QVERIFY2(m_window->minimumSizeHint().width() <= 1024 &&
                 m_window->minimumSizeHint().height() <= 600,
             qPrintable(QStringLiteral("%1x%2")
                            .arg(m_window->minimumSizeHint().width())
                            .arg(m_window->minimumSizeHint().height())));
    auto area = [this](const char *dock) {
        return m_window->dockWidgetArea(m_window->panelDock(QLatin1String(dock)));
    };
    QCOMPARE(area("sessionsDock"), Qt::LeftDockWidgetArea);
    QCOMPARE(area("workspaceDock"), Qt::LeftDockWidgetArea);
    QCOMPARE(area("agentsDock"), Qt::RightDockWidgetArea);
    QCOMPARE(area("consoleDock"), Qt::BottomDockWidgetArea);
    QCOMPARE(area("auditDock"), Qt::BottomDockWidgetArea);
    // Console and audit side by side, the terminals, processes and ports tabbed with the
    // console (the console in front); agents, scripted agent, MCP and Inspect tabbed.
    QStringList withConsole;
    for (const QDockWidget *dock :
         m_window->tabifiedDockWidgets(m_window->panelDock(QStringLiteral("consoleDock"))))
        withConsole << dock->objectName();
    withConsole.sort();
    QCOMPARE(withConsole, (QStringList{QStringLiteral("portsDock"), QStringLiteral("processesDock"),
                                       QStringLiteral("terminalDock")}));
    QVERIFY(m_window->panelDock(QStringLiteral("consoleDock"))->widget()->isVisible());
    const auto tabbed =
        m_window->tabifiedDockWidgets(m_window->panelDock(QStringLiteral("agentsDock")));
    QCOMPARE(tabbed.size(), 3);
    auto *centre = qobject_cast<QStackedWidget *>(m_window->centralWidget());
    QVERIFY(centre);
    QCOMPARE(centre->currentWidget(), m_window->welcomePage());
    QVERIFY(m_window->welcomePage()->isVisible());
}

void TestMainWindow::welcomePageWhileNoFileIsOpen()
{
    WelcomePage *welcome = m_window->welcomePage();
    auto *centre = qobject_cast<QStackedWidget *>(m_window->centralWidget());
    QCOMPARE(centre->currentWidget(), welcome);
    QVERIFY(!welcome->isDemo());
    QCOMPARE(welcome->button(WelcomePage::Step::OpenFile)->text(),
             QStringLiteral("1. Open a file"));
    // The demo wording while the demo sandbox is current.
    m_window->setDemoWorkspace(sandboxId());
    QVERIFY(welcome->isDemo());
    QVERIFY(welcome->button(WelcomePage::Step::OpenFile)->text().contains(QLatin1String("ops.py")));
    m_window->setDemoWorkspace(QString());
    QVERIFY(!welcome->isDemo());
    // Each step is a button the keyboard reaches; "open a file" focuses the tree.
    for (auto step : {WelcomePage::Step::OpenFile, WelcomePage::Step::RunCommand,
                      WelcomePage::Step::RunAgent, WelcomePage::Step::NewSandbox,
                      WelcomePage::Step::OpenFolder, WelcomePage::Step::Shortcuts}) {
        QCommandLinkButton *b = welcome->button(step);
        QVERIFY(b && b->isVisible());
        QVERIFY(b->focusPolicy() & Qt::TabFocus);
        QVERIFY(!b->accessibleName().isEmpty());
    }
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    welcome->button(WelcomePage::Step::OpenFile)->click();
    QTRY_VERIFY(m_window->workspacePanel()->view()->hasFocus());
    welcome->button(WelcomePage::Step::RunCommand)->click();
    QTRY_VERIFY(m_window->consolePanel()->input()->hasFocus());
    // Opening a file from the tree shows the tabs, and the keyboard follows into the file;
    // closing the last one shows the welcome page again.
    FileTabs *tabs = m_window->fileTabs();
    Q_EMIT m_window->workspacePanel()->fileActivated(sandboxId(), QStringLiteral("README.md"));
    QCOMPARE(centre->currentWidget(), tabs);
    QTRY_COMPARE(tabs->tabKind(0), FileTabs::TabKind::Text);
    QTRY_VERIFY(tabs->codeEditor(0)->hasFocus());
    QVERIFY(tabs->closeTab(0));
    QCOMPARE(centre->currentWidget(), welcome);
}

// File > Open Workspace Folder: the folder itself, asked first, nothing copied or deleted.
void TestMainWindow::openWorkspaceFolderInPlace()
{
    const QString folder = m_tmp.filePath(QStringLiteral("real-project"));
    writeFile(folder + "/a.txt", "A");
    writeFile(folder + "/sub/b.txt", "B");
    auto listing = [&folder] {
        QStringList files;
        QDirIterator it(folder, QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot,
                        QDirIterator::Subdirectories);
        while (it.hasNext())
            files.append(it.next().mid(folder.size() + 1));
        files.sort();
        return files;
    };
    const QStringList before = listing();
    QCOMPARE(before, (QStringList{"a.txt", "sub", "sub/b.txt"}));
    const QStringList idsBefore = m_controller->workspaceIds();

    QList<Confirmation> asked;
    ConfirmAnswer answer = ConfirmAnswer::Cancel;
    const ConfirmHook previous = setConfirmHook([&](QWidget *, const Confirmation &q) {
        asked.append(q);
        return answer;
    });
    // Declined: nothing happens.
    QVERIFY(!m_window->openWorkspaceFolder(folder));
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked.first().kind, QStringLiteral("open-folder"));
    QVERIFY(asked.first().text.contains(folder));
    QVERIFY(asked.first().text.contains(QLatin1String("read-write")));
    QCOMPARE(m_controller->workspaceIds(), idsBefore);

    answer = ConfirmAnswer::Accept;
    QVERIFY(m_window->openWorkspaceFolder(folder));
    const QString id = QStringLiteral("real-project");
    QCOMPARE(m_window->currentWorkspace(), id);
    QTRY_COMPARE(toString(m_controller->state(id)), toString(SessionState::Running));
    const SandboxPtr sb = m_controller->sandbox(id);
    QVERIFY(sb);
    QVERIFY(!sb->options().seedFrom);
    QVERIFY(!sb->effectiveSyncDest());
    const SessionRow &row =
        m_controller->sessionsModel()->session(m_controller->sessionsModel()->rowOf(id));
    QCOMPARE(QFileInfo(row.workspaceRoot).canonicalFilePath(),
             QFileInfo(folder).canonicalFilePath());
    QCOMPARE(m_controller->readFile(id, QStringLiteral("sub/b.txt")).result(), QByteArray("B"));
    // The same folder again: the open sandbox becomes current, no second one.
    setCurrentWorkspaceTo(sandboxId());
    QVERIFY(!m_window->openWorkspaceFolder(folder + QStringLiteral("/sub/..")));
    QCOMPARE(m_window->currentWorkspace(), id);
    QCOMPARE(m_controller->workspaceIds().size(), idsBefore.size() + 1);
    QCOMPARE(asked.size(), 2);
    // Remembered (without secrets) in File > Recent Sandboxes.
    const QString recent = AppSettings::instance()->recentSandboxes().value(0);
    QVERIFY2(recent.contains(QLatin1String("\"opened_folder\":true")), qPrintable(recent));
    auto *menu = m_window->findChild<QMenu *>(QStringLiteral("menuRecentSandboxes"));
    QVERIFY(menu);
    QVERIFY(menu->actions().value(0) && menu->actions().value(0)->text().contains(id));

    // Removed: the folder stays as it was, byte for byte, and nothing was added to it.
    m_controller->removeSandbox(id);
    QTRY_VERIFY(!m_controller->workspaceIds().contains(id));
    QCOMPARE(listing(), before);
    QCOMPARE(readHostFile(folder + "/a.txt"), QByteArray("A"));
    QCOMPARE(readHostFile(folder + "/sub/b.txt"), QByteArray("B"));

    // Refused without asking: a missing folder, the home folder.
    for (const QString &bad : {m_tmp.filePath(QStringLiteral("missing")), QDir::homePath()}) {
        auto answered = answerModal<QMessageBox>([](QMessageBox *box) { box->accept(); });
        QVERIFY(!m_window->openWorkspaceFolder(bad));
        QVERIFY(*answered);
    }
    QCOMPARE(asked.size(), 2);
    setConfirmHook(previous);
    setCurrentWorkspaceTo(sandboxId());
}

void TestMainWindow::settingsApplyLive()
{
    FileTabs *tabs = m_window->fileTabs();
    tabs->openFile(sandboxId(), QStringLiteral("src/main.py"));
    const int tab = tabs->indexOf(sandboxId(), QStringLiteral("src/main.py"));
    QTRY_COMPARE(tabs->tabKind(tab), FileTabs::TabKind::Text);
    const QPalette systemPalette = QApplication::palette();

    m_window->action(QStringLiteral("actionSettings"))->trigger();
    SettingsDialog *dialog = nullptr;
    QTRY_VERIFY((dialog = m_window->findChild<SettingsDialog *>()) != nullptr);
    QTRY_VERIFY(dialog->isVisible());
    const int size = tabs->codeEditor(tab)->font().pointSize();
    QCOMPARE(dialog->sizeBox()->value(), size);
    dialog->sizeBox()->setValue(size + 4);
    dialog->themeBox()->setCurrentIndex(
        dialog->themeBox()->findData(int(AppSettings::Theme::Dark)));
    // Nothing changes before Apply.
    QCOMPARE(tabs->codeEditor(tab)->font().pointSize(), size);
    dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Apply)->click();
    QCOMPARE(tabs->codeEditor(tab)->font().pointSize(), size + 4);
    QVERIFY(AppSettings::isDark(QApplication::palette()));
    QCOMPARE(AppSettings::store().value(QLatin1String(SettingsKey::Theme)).toString(),
             QStringLiteral("dark"));
    // Back to the system's: its palette returns; Cancel of a later change keeps the settings.
    dialog->themeBox()->setCurrentIndex(
        dialog->themeBox()->findData(int(AppSettings::Theme::System)));
    dialog->sizeBox()->setValue(size);
    dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
    QTRY_VERIFY(!m_window->findChild<SettingsDialog *>());
    QCOMPARE(QApplication::palette().color(QPalette::Base), systemPalette.color(QPalette::Base));
    QCOMPARE(tabs->codeEditor(tab)->font().pointSize(), size);
    QVERIFY(tabs->closeTab(tab));
}

void TestMainWindow::shortcutsAndAbout()
{
    m_window->action(QStringLiteral("actionShortcuts"))->trigger();
    ShortcutsDialog *dialog = nullptr;
    QTRY_VERIFY((dialog = m_window->findChild<ShortcutsDialog *>()) != nullptr);
    auto keysOf = [dialog](const QString &action) {
        for (int i = 0; i < dialog->list()->topLevelItemCount(); ++i) {
            const QTreeWidgetItem *item = dialog->list()->topLevelItem(i);
            if (item->text(0) == action && !item->isHidden())
                return item->text(1);
        }
        return QString();
    };
    QCOMPARE(keysOf(QStringLiteral("New Sandbox…")),
             QKeySequence(QKeySequence::New).toString(QKeySequence::NativeText));
    QCOMPARE(keysOf(QStringLiteral("Find…")),
             QKeySequence(QKeySequence::Find).toString(QKeySequence::NativeText));
    QCOMPARE(keysOf(QStringLiteral("Go to Line…")), QStringLiteral("Ctrl+G"));
    QCOMPARE(keysOf(QStringLiteral("Clear the finished blocks")), QStringLiteral("Ctrl+L"));
    dialog->filterField()->setText(QStringLiteral("line"));
    QVERIFY(keysOf(QStringLiteral("New Sandbox…")).isEmpty());
    QCOMPARE(keysOf(QStringLiteral("Go to Line…")), QStringLiteral("Ctrl+G"));
    dialog->reject();

    m_window->action(QStringLiteral("actionAbout"))->trigger();
    QMessageBox *about = nullptr;
    QTRY_VERIFY((about = m_window->findChild<QMessageBox *>(QStringLiteral("aboutDialog"))));
    QVERIFY(about->text().contains(QLatin1String(ELSAI_VERSION)));
    QVERIFY(about->text().contains(QLatin1String("MIT")));
    QVERIFY(about->text().contains(QLatin1String("https://elsai.dev/")));
    about->reject();
    QTRY_VERIFY(!m_window->findChild<QMessageBox *>(QStringLiteral("aboutDialog")));
}

// F6 / Shift+F6 (issue 11: every panel by keyboard): each press moves the focus into another
// panel on screen, every shown panel is reached once per round, Shift+F6 goes back.
void TestMainWindow::f6CyclesThroughThePanels()
{
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    const auto panelOf = [this]() -> QString {
        const QWidget *focus = QApplication::focusWidget();
        if (!focus)
            return {};
        if (m_window->centralWidget()->isAncestorOf(focus))
            return QStringLiteral("centre");
        for (auto *dock : m_window->findChildren<QDockWidget *>()) {
            if (dock->isAncestorOf(focus))
                return dock->objectName();
        }
        return {};
    };
    const auto takesFocus = [](const QWidget *panel) {
        const auto children = panel->findChildren<QWidget *>();
        return std::any_of(children.begin(), children.end(), [](const QWidget *w) {
            return (w->focusPolicy() & Qt::TabFocus) && w->isVisible() && w->isEnabled();
        });
    };
    int shown = 1; // the centre
    for (auto *dock : m_window->findChildren<QDockWidget *>()) {
        shown += dock->isVisible() && !dock->visibleRegion().isEmpty() && dock->widget() &&
                         takesFocus(dock->widget())
                     ? 1
                     : 0;
    }
    QVERIFY2(shown >= 4, "the default layout shows several panels");
    QStringList seen;
    for (int i = 0; i < shown; ++i) {
        QTest::keyClick(m_window.get(), Qt::Key_F6);
        const QString panel = panelOf();
        QVERIFY2(!panel.isEmpty(), "F6 left the focus outside every panel");
        QVERIFY2(!seen.contains(panel), qPrintable(panel + QStringLiteral(" reached twice")));
        seen << panel;
    }
    QTest::keyClick(m_window.get(), Qt::Key_F6);
    QCOMPARE(panelOf(), seen.first()); // the round is closed
    QTest::keyClick(m_window.get(), Qt::Key_F6, Qt::ShiftModifier);
    QCOMPARE(panelOf(), seen.last());
    QTest::keyClick(m_window.get(), Qt::Key_F6, Qt::ShiftModifier);
    QCOMPARE(panelOf(), seen.at(seen.size() - 2));
    QCOMPARE(m_window->action(QStringLiteral("actionNextPanel"))->shortcut(),
             QKeySequence(Qt::Key_F6));
}

// The keyboard's way to a panel behind another's tab (Processes behind Console): its View
// action brings it to the front with the focus in it, where the plain toggle would hide it.
void TestMainWindow::viewMenuBringsATabbedPanelToTheFront()
{
    m_window->resetLayout();
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QDockWidget *processes = m_window->panelDock(QStringLiteral("processesDock"));
    QDockWidget *console = m_window->panelDock(QStringLiteral("consoleDock"));
    QVERIFY(processes && console);
    QVERIFY(m_window->tabifiedDockWidgets(console).contains(processes));
    console->raise();
    QTRY_VERIFY(processes->visibleRegion().isEmpty()); // behind the Console's tab
    QAction *show = m_window->action(QStringLiteral("actionShow_processesDock"));
    QVERIFY(show && show->isChecked());
    const auto focusIn = [](QWidget *w) {
        return QApplication::focusWidget() && w->isAncestorOf(QApplication::focusWidget());
    };

    show->trigger();
    QTRY_VERIFY(!processes->visibleRegion().isEmpty());
    QVERIFY(!processes->isHidden());
    QVERIFY(show->isChecked());
    QTRY_VERIFY(focusIn(processes));

    show->trigger(); // in front: hides it, as before
    QVERIFY(processes->isHidden());
    QVERIFY(!show->isChecked());

    show->trigger(); // closed: opens it, focused
    QVERIFY(!processes->isHidden());
    QVERIFY(show->isChecked());
    QTRY_VERIFY(focusIn(processes));
    processes->close(); // the dock's own close button keeps the action in step
    QVERIFY(!show->isChecked());
    m_window->resetLayout();
    QVERIFY(show->isChecked());
}

// A terminal takes Ctrl+Alt+T for its program; Ctrl+Shift+T opens another one from there.
void TestMainWindow::anotherTerminalFromInsideATerminal()
{
    setCurrentWorkspaceTo(sandboxId());
    auto *dock = m_window->findChild<TerminalDock *>();
    QVERIFY(dock);
    QAction *newTerminal = dock->newTerminalAction();
    QVERIFY(newTerminal->isEnabled());
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    newTerminal->trigger();
    QCOMPARE(dock->terminals(sandboxId()).size(), 1);
    TerminalPane *first = dock->terminals(sandboxId()).first();
    QTRY_VERIFY_WITH_TIMEOUT(first->session()->isRunning(), 15000);
    first->view()->setFocus();
    QTRY_VERIFY(first->view()->hasFocus());

    const qint64 sent = first->session()->bytesIn();
    QTest::keyClick(first->view(), Qt::Key_T, Qt::ControlModifier | Qt::AltModifier);
    QCOMPARE(dock->terminals(sandboxId()).size(), 1);
    QCOMPARE(first->session()->bytesIn(), sent + 2); // ESC ^T, to the program
    QTest::keyClick(first->view(), Qt::Key_T, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(dock->terminals(sandboxId()).size(), 2);
    QCOMPARE(first->session()->bytesIn(), sent + 2);
    dock->closeTerminals(sandboxId());
    QTRY_COMPARE(dock->terminals(sandboxId()).size(), 0);
}

// Alt+letter presses a button only when nothing else on screen has that letter: the menu bar's
// &Sandbox and a panel's &Stop would only move the focus back and forth.
void TestMainWindow::mnemonicsAreUnambiguous()
{
    m_window->resetLayout();
    const auto letterOf = [](const QString &text) -> QChar {
        for (qsizetype i = 0; i + 1 < text.size(); ++i) {
            if (text.at(i) != QLatin1Char('&'))
                continue;
            if (text.at(i + 1) != QLatin1Char('&'))
                return text.at(i + 1).toLower();
            ++i; // "&&": a literal ampersand
        }
        return {};
    };
    QHash<QChar, QString> menus;
    for (QAction *menu : m_window->menuBar()->actions()) {
        if (const QChar c = letterOf(menu->text()); !c.isNull())
            menus.insert(c, menu->text());
    }
    QVERIFY(menus.size() >= 5);
    const auto docks = m_window->findChildren<QDockWidget *>();
    for (QDockWidget *front : docks) {
        front->raise(); // each panel in front once, with what shows beside it
        QCoreApplication::processEvents();
        QHash<QChar, QString> seen = menus;
        QStringList clashes;
        const auto note = [&](const QString &text, const QWidget *w) {
            const QChar c = letterOf(text);
            if (c.isNull() || !w->isVisible() || !w->window()->isAncestorOf(w) ||
                w->window() != m_window.get())
                return;
            if (seen.contains(c))
                clashes << QStringLiteral("%1 / %2").arg(seen.value(c), text);
            else
                seen.insert(c, text);
        };
        for (const QAbstractButton *b : m_window->findChildren<QAbstractButton *>())
            note(b->text(), b);
        for (const QLabel *l : m_window->findChildren<QLabel *>()) {
            if (l->buddy())
                note(l->text(), l);
        }
        QVERIFY2(clashes.isEmpty(), qPrintable(front->objectName() + QStringLiteral(": ") +
                                               clashes.join(QStringLiteral(", "))));
    }
    m_window->resetLayout();
}

void TestMainWindow::toolbarHasIcons()
{
    auto *toolBar = m_window->findChild<QToolBar *>(QStringLiteral("mainToolBar"));
    QVERIFY(toolBar && toolBar->isVisible());
    int actions = 0;
    for (QAction *a : toolBar->actions()) {
        if (a->isSeparator())
            continue;
        ++actions;
        QVERIFY2(!a->icon().isNull(), qPrintable(a->objectName()));
        QVERIFY2(!a->icon().pixmap(16, 16).isNull(), qPrintable(a->objectName()));
    }
    QVERIFY(actions >= 8);
    // A terminal is one click away (docs/terminal.md).
    QVERIFY(toolBar->actions().contains(
        m_window->findChild<QAction *>(QStringLiteral("actionNewTerminal"))));
    // Every icon the window asks the theme for has a bundled drawing.
    for (const char *name :
         {"document-new", "folder-open", "document-save", "media-playback-start",
          "media-playback-stop", "document-export", "edit-delete", "edit-find", "go-up", "go-down",
          "go-jump", "edit-find-replace", "format-text-wrap", "window-close", "help-about",
          "preferences-system", "system-run", "document-open", "utilities-terminal"})
        QVERIFY2(!bundledIcon(QLatin1String(name)).pixmap(16, 16).isNull(), name);
}

// A layout saved by an older window (another version) is not restored: the new default is.
void TestMainWindow::layoutIsVersioned()
{
    QDockWidget *agents = m_window->panelDock(QStringLiteral("agentsDock"));
    agents->hide();
    QSettings settings = AppSettings::store();
    settings.setValue(QLatin1String(SettingsKey::WindowState),
                      m_window->saveState(AppSettings::layoutVersion - 1));
    {
        MainWindow older(m_controller.get());
        QVERIFY(!older.panelDock(QStringLiteral("agentsDock"))->isHidden());
    }
    settings.setValue(QLatin1String(SettingsKey::WindowState),
                      m_window->saveState(AppSettings::layoutVersion));
    {
        MainWindow same(m_controller.get());
        QVERIFY(same.panelDock(QStringLiteral("agentsDock"))->isHidden());
    }
    agents->show();
}

void TestMainWindow::defaultLayoutGivesRoom_data()
{
    QTest::addColumn<QSize>("size");
    QTest::newRow("1280x800") << QSize(1280, 800);
    QTest::newRow("1920x1080") << QSize(1920, 1080);
}

void TestMainWindow::defaultLayoutGivesRoom()
{
    QFETCH(QSize, size);
    m_window->resize(size);
    m_window->action(QStringLiteral("actionResetLayout"))->trigger();
    QCoreApplication::processEvents();
    QDockWidget *console = m_window->panelDock(QStringLiteral("consoleDock"));
    QDockWidget *audit = m_window->panelDock(QStringLiteral("auditDock"));
    QDockWidget *sessions = m_window->panelDock(QStringLiteral("sessionsDock"));
    QDockWidget *agents = m_window->panelDock(QStringLiteral("agentsDock"));
    // The console and the audit log: both visible, a third of the height, half the width each.
    QVERIFY(console->isVisible() && audit->isVisible());
    QVERIFY2(console->height() >= size.height() * 30 / 100,
             qPrintable(QString::number(console->height())));
    QVERIFY2(audit->width() >= size.width() * 35 / 100,
             qPrintable(QString::number(audit->width())));
    QVERIFY2(console->width() >= size.width() * 45 / 100,
             qPrintable(QString::number(console->width())));
    // The side columns are readable, the centre keeps most of the width.
    QVERIFY2(sessions->width() >= 300, qPrintable(QString::number(sessions->width())));
    QVERIFY2(agents->width() >= 300, qPrintable(QString::number(agents->width())));
    QVERIFY2(m_window->centralWidget()->width() >= size.width() * 35 / 100,
             qPrintable(QString::number(m_window->centralWidget()->width())));
}

void TestMainWindow::resetLayoutPutsDocksBack()
{
    QDockWidget *console = m_window->panelDock(QStringLiteral("consoleDock"));
    QDockWidget *audit = m_window->panelDock(QStringLiteral("auditDock"));
    QDockWidget *agents = m_window->panelDock(QStringLiteral("agentsDock"));
    console->setFloating(true);
    audit->hide();
    m_window->addDockWidget(Qt::LeftDockWidgetArea, agents);
    m_window->findChild<QToolBar *>(QStringLiteral("mainToolBar"))->hide();
    m_window->resetLayout();
    QCoreApplication::processEvents();
    QVERIFY(!console->isFloating());
    QCOMPARE(m_window->dockWidgetArea(console), Qt::BottomDockWidgetArea);
    QVERIFY(audit->isVisible());
    QCOMPARE(m_window->dockWidgetArea(agents), Qt::RightDockWidgetArea);
    QVERIFY(m_window->findChild<QToolBar *>(QStringLiteral("mainToolBar"))->isVisible());
    // An extension's dock goes back to the area it was added to.
    auto *extra = new QLabel(QStringLiteral("extension"));
    QDockWidget *dock = m_window->addPanel(extra, QStringLiteral("Extension"),
                                           QStringLiteral("extensionDock"), Qt::LeftDockWidgetArea);
    m_window->addDockWidget(Qt::RightDockWidgetArea, dock);
    m_window->resetLayout();
    QCOMPARE(m_window->dockWidgetArea(dock), Qt::LeftDockWidgetArea);
    m_window->removeDockWidget(dock);
    delete dock;
}

// At both sizes, with every panel populated and each dock in front in turn: no header text is
// wider than its section, no state word wider than its column, and the sessions' State column
// is inside the view.
void TestMainWindow::noCutHeadersOrStates_data()
{
    defaultLayoutGivesRoom_data();
}

void TestMainWindow::noCutHeadersOrStates()
{
    QFETCH(QSize, size);
    m_window->resize(size);
    m_window->resetLayout();
    QCoreApplication::processEvents();
    const QSet<QString> stateHeaders{QStringLiteral("State"), QStringLiteral("Status"),
                                     QStringLiteral("Outcome"), QStringLiteral("Mode"),
                                     QStringLiteral("Last outcome")};
    QStringList problems;
    int headersChecked = 0, statesChecked = 0;
    const auto docks = m_window->findChildren<QDockWidget *>();
    for (QDockWidget *dock : docks) {
        dock->show();
        dock->raise();
        QCoreApplication::processEvents();
        // Let the column fitter run (it is debounced).
        QTest::qWait(300);
        // A panel whose minimum is wider or taller than its dock is cut at the edge.
        if (QWidget *panel = dock->widget();
            panel && (panel->width() > dock->width() || panel->height() > dock->height()))
            problems << QStringLiteral("%1 %2: the panel is %3x%4 in a dock of %5x%6")
                            .arg(size.width())
                            .arg(dock->objectName())
                            .arg(panel->width())
                            .arg(panel->height())
                            .arg(dock->width())
                            .arg(dock->height());
        for (QAbstractItemView *view : dock->findChildren<QAbstractItemView *>()) {
            if (!view->isVisible())
                continue;
            QHeaderView *header = nullptr;
            if (auto *t = qobject_cast<QTableView *>(view))
                header = t->horizontalHeader();
            else if (auto *t = qobject_cast<QTreeView *>(view))
                header = t->header();
            if (!header || header->isHidden())
                continue;
            const QAbstractItemModel *model = view->model();
            const int margin =
                header->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
            const QFontMetrics headerFm(header->font());
            for (int c = 0; c < header->count(); ++c) {
                if (header->isSectionHidden(c))
                    continue;
                const QString text = model->headerData(c, Qt::Horizontal).toString();
                const int need = headerFm.horizontalAdvance(text) + 2 * margin;
                ++headersChecked;
                if (need > header->sectionSize(c))
                    problems << QStringLiteral("%1 %2: header '%3' needs %4, has %5")
                                    .arg(size.width())
                                    .arg(dock->objectName(), text)
                                    .arg(need)
                                    .arg(header->sectionSize(c));
                if (!stateHeaders.contains(text))
                    continue;
                const QFontMetrics fm(view->font());
                for (int r = 0; r < qMin(model->rowCount(), 50); ++r) {
                    const QString state = model->index(r, c).data().toString();
                    const int width = fm.horizontalAdvance(state) + 2 * margin;
                    ++statesChecked;
                    if (width > header->sectionSize(c))
                        problems << QStringLiteral("%1 %2: '%3' in %4 needs %5, has %6")
                                        .arg(size.width())
                                        .arg(dock->objectName(), state, text)
                                        .arg(width)
                                        .arg(header->sectionSize(c));
                }
                if (dock->objectName() == QLatin1String("sessionsDock") &&
                    header->sectionViewportPosition(c) + header->sectionSize(c) >
                        view->viewport()->width())
                    problems << QStringLiteral("%1: the sessions' State column ends at %2, the "
                                               "view at %3")
                                    .arg(size.width())
                                    .arg(header->sectionViewportPosition(c) +
                                         header->sectionSize(c))
                                    .arg(view->viewport()->width());
            }
        }
    }
    m_window->resetLayout();
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
    QVERIFY2(headersChecked > 20, qPrintable(QString::number(headersChecked)));
    QVERIFY2(statesChecked >= 3, qPrintable(QString::number(statesChecked)));
}

void TestMainWindow::setCurrentWorkspaceTo(const QString &id)
{
    m_window->setCurrentWorkspace(id);
    QCOMPARE(m_window->currentWorkspace(), id);
}

QTEST_MAIN(TestMainWindow)
// File > New Sandbox in a window started with options (app/gui.cpp hands it the command
// line's spec): the backend's page is chosen and every field the options set is filled, under
// a workspace id no sandbox has yet. A window of its own, so the shared one keeps its defaults.
void TestMainWindow::newSandboxStartsFromTheStartupSpec()
{
    SandboxController controller;
    MainWindow window(&controller);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const auto open = [&](const SandboxSpec &spec) -> NewSandboxDialog * {
        window.setNewSandboxSpec(spec);
        window.action(QStringLiteral("actionNewSandbox"))->trigger();
        NewSandboxDialog *dialog = window.findChild<NewSandboxDialog *>();
        return dialog && dialog->isVisible() ? dialog : nullptr;
    };
    const auto close = [&](NewSandboxDialog *dialog) {
        dialog->reject();
        QTRY_VERIFY(window.findChild<NewSandboxDialog *>() == nullptr);
    };
    const auto text = [](QWidget *dialog, const char *name) {
        auto *edit = dialog->findChild<QLineEdit *>(QLatin1String(name));
        return edit ? edit->text() : QStringLiteral("<no field %1>").arg(QLatin1String(name));
    };
    const auto page = [](QWidget *dialog) {
        return dialog->findChild<QStackedWidget *>(QStringLiteral("backendPages"))
            ->currentWidget()
            ->objectName();
    };

    // --backend ssh --ssh-host … --seed-from … --seed-exclude '*.log' --timeout 42 --env A=b
    SandboxSpec ssh;
    ssh.workspaceId = QStringLiteral("from-cli");
    ssh.backend = QStringLiteral("ssh");
    ssh.ssh.host = QStringLiteral("build.example");
    ssh.ssh.port = 2222;
    ssh.ssh.user = QStringLiteral("ci");
    ssh.ssh.identityFile = QStringLiteral("/keys/id_ed25519");
    ssh.ssh.knownHostsFile = QStringLiteral("/keys/known_hosts");
    ssh.sshRemoteRoot = QStringLiteral("/srv/workspaces");
    ssh.seedFrom = m_project;
    ssh.seedExclude = {QStringLiteral("*.log")};
    ssh.local.timeout = 42;
    ssh.local.maxOutputBytes = 4242;
    ssh.local.env.insert(QStringLiteral("A"), QStringLiteral("b"));
    NewSandboxDialog *dialog = open(ssh);
    QVERIFY(dialog);
    QCOMPARE(dialog->findChild<QComboBox *>(QStringLiteral("backend"))->currentText(),
             QStringLiteral("ssh"));
    QCOMPARE(page(dialog), QStringLiteral("page_ssh"));
    QCOMPARE(text(dialog, "workspaceId"), QStringLiteral("from-cli")); // no sandbox has it
    QCOMPARE(text(dialog, "sshHost"), QStringLiteral("build.example"));
    QCOMPARE(dialog->findChild<QSpinBox *>(QStringLiteral("sshPort"))->value(), 2222);
    QCOMPARE(text(dialog, "sshUser"), QStringLiteral("ci"));
    QCOMPARE(text(dialog, "sshIdentity"), QStringLiteral("/keys/id_ed25519"));
    QCOMPARE(text(dialog, "sshKnownHosts"), QStringLiteral("/keys/known_hosts"));
    QCOMPARE(text(dialog, "sshRemoteRoot"), QStringLiteral("/srv/workspaces"));
    QCOMPARE(text(dialog, "seedFrom"), m_project);
    QVERIFY(dialog->seedExcludes().contains(QStringLiteral("*.log")));
    QVERIFY(!dialog->findChild<QLineEdit *>(QStringLiteral("workspaceRoot"))->isEnabled());
    QCOMPARE(dialog->findChild<QDoubleSpinBox *>(QStringLiteral("timeout"))->value(), 42.0);
    QCOMPARE(dialog->findChild<QSpinBox *>(QStringLiteral("maxOutputBytes"))->value(), 4242);
    QVERIFY(dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->isEnabled());
    // What Create would make is the same sandbox.
    const SandboxSpec again = dialog->spec();
    QCOMPARE(again.backend, ssh.backend);
    QCOMPARE(again.ssh.host, ssh.ssh.host);
    QCOMPARE(again.ssh.port, ssh.ssh.port);
    QCOMPARE(again.ssh.identityFile, ssh.ssh.identityFile);
    QCOMPARE(again.sshRemoteRoot, ssh.sshRemoteRoot);
    QCOMPARE(again.seedFrom, ssh.seedFrom);
    QCOMPARE(again.seedExclude, ssh.seedExclude);
    QCOMPARE(again.local.env, ssh.local.env);
    close(dialog);

    // --backend bwrap --workspace-root … --bwrap-*: the id is taken, the copy gets "-2".
    SandboxSpec first;
    first.workspaceId = QStringLiteral("like");
    first.workspaceRoot = m_tmp.filePath(QStringLiteral("ws-like"));
    controller.addSandbox(first, /*start=*/false);
    SandboxSpec bwrap = first;
    bwrap.backend = QStringLiteral("bwrap");
    bwrap.bwrap.network = true;
    bwrap.bwrap.maxProcesses = 77;
    bwrap.bwrap.readOnlyBinds = {QStringLiteral("/opt/tools")};
    dialog = open(bwrap);
    QVERIFY(dialog);
    QCOMPARE(page(dialog), QStringLiteral("page_bwrap"));
    QCOMPARE(text(dialog, "workspaceId"), QStringLiteral("like-2"));
    QCOMPARE(text(dialog, "workspaceRoot"), first.workspaceRoot);
    QVERIFY(dialog->findChild<QCheckBox *>(QStringLiteral("bwrapNetwork"))->isChecked());
    QCOMPARE(dialog->findChild<QSpinBox *>(QStringLiteral("bwrapMaxProcesses"))->value(), 77);
    QCOMPARE(
        dialog->findChild<QPlainTextEdit *>(QStringLiteral("bwrapReadOnlyBinds"))->toPlainText(),
        QStringLiteral("/opt/tools"));
    close(dialog);

    // --backend daytona --daytona-api-url … --daytona-target … --daytona-api-key-file …
    SandboxSpec daytona;
    daytona.workspaceId = QStringLiteral("remote");
    daytona.backend = QStringLiteral("daytona");
    daytona.daytona.config.apiUrl = QUrl(QStringLiteral("https://daytona.example/api"));
    daytona.daytona.config.target = QStringLiteral("eu");
    daytona.daytona.config.apiKey = QStringLiteral("dtn_from_a_file");
    dialog = open(daytona);
    QVERIFY(dialog);
    QCOMPARE(page(dialog), QStringLiteral("page_daytona"));
    QCOMPARE(text(dialog, "daytonaApiUrl"), QStringLiteral("https://daytona.example/api"));
    QCOMPARE(text(dialog, "daytonaTarget"), QStringLiteral("eu"));
    auto *key = dialog->findChild<QLineEdit *>(QStringLiteral("daytonaApiKey"));
    QCOMPARE(key->text(), QStringLiteral("dtn_from_a_file"));
    QCOMPARE(key->echoMode(), QLineEdit::Password);
    QCOMPARE(dialog->spec().daytona.config.apiKey, QStringLiteral("dtn_from_a_file"));
    close(dialog);

    // --backend agentcore --aws-region … --agentcore-endpoint …
    SandboxSpec agentcore;
    agentcore.backend = QStringLiteral("agentcore");
    agentcore.agentcore.region = QStringLiteral("eu-west-3");
    agentcore.agentcore.endpoint = QUrl(QStringLiteral("http://127.0.0.1:9/"));
    dialog = open(agentcore);
    QVERIFY(dialog);
    QCOMPARE(page(dialog), QStringLiteral("page_agentcore"));
    QCOMPARE(text(dialog, "awsRegion"), QStringLiteral("eu-west-3"));
    QCOMPARE(text(dialog, "agentcoreEndpoint"), QStringLiteral("http://127.0.0.1:9/"));
    close(dialog);
    controller.waitForIdle();
}

// Last: it makes another sandbox current. The bwrap page's fields reach the backend, and the
// console runs its commands isolated (the workspace at /workspace, loopback only).
void TestMainWindow::createBwrapSandboxThroughDialog()
{
    const QString root = m_tmp.filePath(QStringLiteral("ws-bwrap"));
    QVERIFY(QDir().mkpath(root));
    try {
        BwrapSandboxBackend probe(root);
        probe.create();
    } catch (const SandboxError &e) {
        QSKIP(qPrintable(QStringLiteral("bubblewrap cannot run here: ") + e.message()));
    }
    const QString id = QStringLiteral("bwrap-dialog");
    m_window->action(QStringLiteral("actionNewSandbox"))->trigger();
    NewSandboxDialog *dialog = nullptr;
    QTRY_VERIFY((dialog = m_window->findChild<NewSandboxDialog *>()) != nullptr);
    auto *idEdit = dialog->findChild<QLineEdit *>(QStringLiteral("workspaceId"));
    idEdit->clear();
    QTest::keyClicks(idEdit, id);
    dialog->findChild<QComboBox *>(QStringLiteral("backend"))
        ->setCurrentText(QStringLiteral("bwrap"));
    auto *pages = dialog->findChild<QStackedWidget *>(QStringLiteral("backendPages"));
    QVERIFY(pages);
    QCOMPARE(pages->currentWidget()->objectName(), QStringLiteral("page_bwrap"));
    auto *rootEdit = dialog->findChild<QLineEdit *>(QStringLiteral("workspaceRoot"));
    QVERIFY(rootEdit->isEnabled());
    rootEdit->clear();
    QTest::keyClicks(rootEdit, root);
    auto *processes = dialog->findChild<QSpinBox *>(QStringLiteral("bwrapMaxProcesses"));
    QVERIFY(processes);
    processes->setValue(99);
    QVERIFY(!dialog->findChild<QCheckBox *>(QStringLiteral("bwrapNetwork"))->isChecked());
    QPushButton *ok = dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
    QVERIFY(ok->isEnabled());
    QTest::mouseClick(ok, Qt::LeftButton);

    QTRY_COMPARE(toString(m_controller->state(id)), toString(SessionState::Running));
    QCOMPARE(m_window->currentWorkspace(), id);
    const auto backend =
        std::dynamic_pointer_cast<BwrapSandboxBackend>(m_controller->sandbox(id)->backend());
    QVERIFY(backend);
    QCOMPARE(backend->bwrapOptions().maxProcesses, 99);
    QCOMPARE(backend->bwrapOptions().network, false);

    ConsolePanel *console = m_window->consolePanel();
    QCOMPARE(console->workspaceId(), id);
    console->runCommand(QStringLiteral("echo inside:$PWD; echo nets:$(tail -n +3 /proc/net/dev | "
                                       "wc -l); echo hi > made.txt"));
    QTRY_VERIFY(console->statusLabel()->text().startsWith(QStringLiteral("exit 0")));
    QTRY_VERIFY(!console->hasPendingOutput());
    QVERIFY2(hasLine(console->output(), QStringLiteral("inside:/workspace")),
             qPrintable(console->output()->toPlainText()));
    QVERIFY2(hasLine(console->output(), QStringLiteral("nets:1")),
             qPrintable(console->output()->toPlainText()));
    QCOMPARE(readHostFile(root + QStringLiteral("/made.txt")), QByteArray("hi\n"));
}

#include "tst_mainwindow.moc"
