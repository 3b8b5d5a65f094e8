// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The console panel on a real local sandbox, offscreen: commands as blocks that run side by
// side, each cancellable with its own status; Ctrl+C / Ctrl+L by key events; head + tail
// retention and cut lines as the view shows them; saving a block's output (declining an
// overwrite keeps the file byte for byte); accessible names; screenshots in light and dark.

#include "consoleblock.h"
#include "consolehistorymodel.h"
#include "consolepanel.h"
#include "guitestutil.h"
#include "sandboxcontroller.h"
#include "testutil.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QStandardPaths>
#include <QStyle>
#include <QStyleFactory>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using namespace elsai;
using test::answerModal;
using test::readHostFile;
using test::writeHostFile;

namespace {

std::shared_ptr<bool> answerMessageBox(QMessageBox::StandardButton button)
{
    return answerModal<QMessageBox>([button](QMessageBox *box) { box->button(button)->click(); });
}

QString textOf(const ConsoleBlock *b)
{
    return b ? b->output()->toPlainText() : QString();
}

} // namespace

class TestConsolePanel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    std::unique_ptr<SandboxController> m_controller;
    std::unique_ptr<ConsolePanel> m_panel;
    const QString m_id = QStringLiteral("console-test");
    quint64 m_fakeId = 900000000;

    ConsoleHistoryModel *model() const { return m_controller->consoleModel(m_id); }

    bool waitFinished(quint64 id)
    {
        return QTest::qWaitFor(
            [&] {
                return !m_controller->isCommandRunning(id) && m_panel->block(id) &&
                       !m_panel->block(id)->isRunning() && !m_panel->block(id)->hasPendingOutput();
            },
            30000);
    }

private Q_SLOTS:
    void initTestCase();
    void cleanup();
    void cleanupTestCase();
    void twoCommandsEachCancellable_data();
    void twoCommandsEachCancellable();
    void statusIsEachCommandsOwn();
    void ctrlC_data();
    void ctrlC();
    void ctrlLClears();
    void runningBlockOutlivesTheBlockCap();
    void headAndTailInTheBlock();
    void cutLinesAreMarked_data();
    void cutLinesAreMarked();
    void saveOutput();
    void saveThroughTheDialog();
    void accessibleNames();
    void blockFitsItsLines();
    void screenshots();
};

void TestConsolePanel::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_tmp.isValid());
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(QApplication::style()->standardPalette());
    m_controller = std::make_unique<SandboxController>();
    SandboxSpec spec;
    spec.workspaceId = m_id;
    spec.workspaceRoot = m_tmp.filePath(QStringLiteral("ws"));
    m_controller->addSandbox(spec);
    QVERIFY(
        QTest::qWaitFor([&] { return m_controller->state(m_id) == SessionState::Running; }, 20000));
    m_panel = std::make_unique<ConsolePanel>(m_controller.get());
    m_panel->setWorkspace(m_id);
    m_panel->resize(900, 640);
    m_panel->show();
    m_panel->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_panel.get()));
}

void TestConsolePanel::cleanup()
{
    for (ConsoleBlock *b : m_panel->blocks()) {
        if (b->isRunning())
            m_controller->cancelCommand(b->id());
    }
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (ConsoleBlock *b : m_panel->blocks()) {
                if (m_controller->isCommandRunning(b->id()))
                    return false;
            }
            return true;
        }(),
        20000);
    QCoreApplication::processEvents();
    // Fake entries driven through the model end here too.
    for (int row = 0; row < model()->rowCount(); ++row) {
        if (model()->entry(row).running)
            model()->finishCommand(model()->entry(row).id, ExecuteResult{});
    }
    QCoreApplication::processEvents();
    m_panel->clearFinished();
    QCOMPARE(m_panel->blocks().size(), 0);
    model()->setOutputCap(100000);
    model()->setMaxKeptBytes(2 << 20);
}

void TestConsolePanel::cleanupTestCase()
{
    m_panel.reset();
    if (m_controller)
        m_controller->waitForIdle();
    m_controller.reset();
}

void TestConsolePanel::twoCommandsEachCancellable_data()
{
    QTest::addColumn<bool>("firstFirst");
    QTest::newRow("cancel-first-then-second") << true;
    QTest::newRow("cancel-second-then-first") << false;
}

void TestConsolePanel::twoCommandsEachCancellable()
{
    // The issue: after a second command started, the first could no longer be cancelled.
    QFETCH(bool, firstFirst);
    const quint64 id1 = m_panel->runCommand(QStringLiteral("echo one-started; sleep 60"));
    const quint64 id2 = m_panel->runCommand(QStringLiteral("echo two-started; sleep 60"));
    QVERIFY(id1 && id2 && id1 != id2);
    ConsoleBlock *b1 = m_panel->block(id1);
    ConsoleBlock *b2 = m_panel->block(id2);
    QVERIFY(b1 && b2 && b1 != b2);
    QTRY_VERIFY(textOf(b1).contains(QStringLiteral("one-started")));
    QTRY_VERIFY(textOf(b2).contains(QStringLiteral("two-started")));
    QVERIFY(!textOf(b1).contains(QStringLiteral("two-started")));
    QVERIFY(b1->cancelButton()->isVisible() && b2->cancelButton()->isVisible());
    QVERIFY2(m_panel->messageLabel()->text().contains(QStringLiteral("2 running")),
             qPrintable(m_panel->messageLabel()->text()));

    ConsoleBlock *first = firstFirst ? b1 : b2;
    ConsoleBlock *second = firstFirst ? b2 : b1;
    QTest::mouseClick(first->cancelButton(), Qt::LeftButton);
    QVERIFY(waitFinished(first->id()));
    QVERIFY2(first->statusLabel()->text().startsWith(QStringLiteral("exit 130")),
             qPrintable(first->statusLabel()->text()));
    QVERIFY(first->statusLabel()->text().contains(QStringLiteral("cancelled")));
    QVERIFY(!first->cancelButton()->isVisible());
    // The other one runs on, still cancellable, with its own status.
    QVERIFY(m_controller->isCommandRunning(second->id()));
    QVERIFY(second->statusLabel()->text().startsWith(QStringLiteral("running")));
    QVERIFY(second->cancelButton()->isVisible() && second->cancelButton()->isEnabled());
    QTest::mouseClick(second->cancelButton(), Qt::LeftButton);
    QVERIFY(waitFinished(second->id()));
    QVERIFY(second->statusLabel()->text().contains(QStringLiteral("cancelled")));
    QVERIFY(first->statusLabel()->text().contains(QStringLiteral("cancelled")));
}

void TestConsolePanel::statusIsEachCommandsOwn()
{
    // The issue: the status line showed the second command's exit for the first.
    const quint64 longId = m_panel->runCommand(QStringLiteral("sleep 60"));
    const quint64 quickId = m_panel->runCommand(QStringLiteral("echo quick; exit 3"));
    QVERIFY(waitFinished(quickId));
    ConsoleBlock *quick = m_panel->block(quickId);
    ConsoleBlock *slow = m_panel->block(longId);
    QVERIFY2(quick->statusLabel()->text().startsWith(QStringLiteral("exit 3 · ")),
             qPrintable(quick->statusLabel()->text()));
    QVERIFY(quick->statusLabel()->text().contains(QStringLiteral("6 bytes")));
    QCOMPARE(slow->statusLabel()->text(), QStringLiteral("running…"));
    QVERIFY(m_panel->messageLabel()->text().contains(QStringLiteral("1 running")));
    m_panel->cancelCommand(longId);
    QVERIFY(waitFinished(longId));
    QVERIFY(slow->statusLabel()->text().contains(QStringLiteral("cancelled")));
    QVERIFY(quick->statusLabel()->text().startsWith(QStringLiteral("exit 3 · ")));
}

void TestConsolePanel::ctrlC_data()
{
    QTest::addColumn<QString>("focus");
    QTest::addColumn<int>("cancelled"); // 0: none, 1: the older, 2: the newer command

    QTest::newRow("input-cancels-newest") << QStringLiteral("input") << 2;
    QTest::newRow("older-block-cancels-that-block") << QStringLiteral("older") << 1;
    QTest::newRow("cwd-box-cancels-newest") << QStringLiteral("cwd") << 2;
    QTest::newRow("selection-copies-instead") << QStringLiteral("selection") << 0;
}

void TestConsolePanel::ctrlC()
{
    QFETCH(QString, focus);
    QFETCH(int, cancelled);
    const quint64 older = m_panel->runCommand(QStringLiteral("echo older-out; sleep 60"));
    const quint64 newer = m_panel->runCommand(QStringLiteral("echo newer-out; sleep 60"));
    QTRY_VERIFY(textOf(m_panel->block(older)).contains(QStringLiteral("older-out")));
    QTRY_VERIFY(m_panel->block(older)->output()->isVisible());
    QWidget *target = m_panel->input();
    if (focus == QLatin1String("older")) {
        target = m_panel->block(older)->output();
    } else if (focus == QLatin1String("cwd")) {
        target = m_panel->cwdBox();
    } else if (focus == QLatin1String("selection")) {
        target = m_panel->block(older)->output();
        m_panel->block(older)->output()->selectAll();
    }
    target->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(target->hasFocus() || target->isAncestorOf(QApplication::focusWidget()));
    QApplication::clipboard()->clear();
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_C, Qt::ControlModifier);
    if (cancelled == 0) {
        QTest::qWait(300);
        QVERIFY(m_controller->isCommandRunning(older));
        QVERIFY(m_controller->isCommandRunning(newer));
        QTRY_VERIFY(QApplication::clipboard()->text().contains(QStringLiteral("older-out")));
        return;
    }
    const quint64 gone = cancelled == 1 ? older : newer;
    const quint64 kept = cancelled == 1 ? newer : older;
    QVERIFY(waitFinished(gone));
    QVERIFY(m_panel->block(gone)->statusLabel()->text().contains(QStringLiteral("cancelled")));
    QVERIFY(m_controller->isCommandRunning(kept));
    QVERIFY(m_panel->block(kept)->isRunning());
}

void TestConsolePanel::ctrlLClears()
{
    const quint64 a = m_panel->runCommand(QStringLiteral("echo done-a"));
    const quint64 b = m_panel->runCommand(QStringLiteral("echo done-b"));
    QVERIFY(waitFinished(a) && waitFinished(b));
    const quint64 running = m_panel->runCommand(QStringLiteral("sleep 60"));
    QCOMPARE(m_panel->blocks().size(), 3);
    m_panel->input()->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(m_panel->input()->hasFocus());
    QTest::keyClick(m_panel->input(), Qt::Key_L, Qt::ControlModifier);
    QCOMPARE(m_panel->blocks().size(), 1);
    QCOMPARE(m_panel->blocks().first()->id(), running); // a running block stays
    QTRY_VERIFY(m_panel->blocks().first()->cancelButton()->isVisible());
    QVERIFY(model()->rowCount() >= 3); // the history stays
    QTest::keyClick(m_panel->input(), Qt::Key_Up);
    QCOMPARE(m_panel->input()->text(), QStringLiteral("sleep 60"));
    m_panel->input()->clear();
    // Cleared blocks do not come back when the view is drawn again.
    m_panel->setWorkspace(QString());
    m_panel->setWorkspace(m_id);
    QCOMPARE(m_panel->blocks().size(), 1);
}

void TestConsolePanel::runningBlockOutlivesTheBlockCap()
{
    // The view keeps the newest maxBlocks() finished blocks; an older running one stays.
    const quint64 running = m_panel->runCommand(QStringLiteral("sleep 60"));
    for (int i = 0; i < ConsolePanel::maxBlocks() + 10; ++i) {
        const quint64 id = ++m_fakeId;
        model()->beginCommand(id, QStringLiteral("quick %1").arg(i), QString());
        model()->finishCommand(id, ExecuteResult{});
        QCoreApplication::processEvents(); // its block learns it ended
    }
    QCoreApplication::processEvents();
    // Trimmed as blocks come: at most maxBlocks() finished ones before the newest.
    QVERIFY(m_panel->blocks().size() <= ConsolePanel::maxBlocks() + 2);
    QCOMPARE(m_panel->blocks().first()->id(), running);
    QCOMPARE(m_panel->blocks().last()->headerLabel()->text(),
             QStringLiteral("$ quick %1").arg(ConsolePanel::maxBlocks() + 9));
    // Scrolled to, as the user would, and clicked.
    QPushButton *cancel = m_panel->block(running)->cancelButton();
    QTest::qWait(50); // the new blocks laid out
    m_panel->scrollArea()->ensureWidgetVisible(cancel);
    QTest::qWait(50);
    QTest::mouseClick(cancel, Qt::LeftButton);
    // It stays in view with its status although it is now the oldest finished block.
    QVERIFY(waitFinished(running));
    QVERIFY(m_panel->block(running)->statusLabel()->text().contains(QStringLiteral("cancelled")));
    // The next command trims it.
    const quint64 next = ++m_fakeId;
    model()->beginCommand(next, QStringLiteral("next"), QString());
    QVERIFY(!m_panel->block(running));
    QCOMPARE(m_panel->blocks().size(), ConsolePanel::maxBlocks() + 1); // 50 finished, 1 running
}

void TestConsolePanel::headAndTailInTheBlock()
{
    // More than the console keeps: the block shows the first lines, one line saying how many
    // bytes were dropped, and the last lines, whole.
    model()->setOutputCap(qint64(1) << 40);
    model()->setMaxKeptBytes(64 * 1024);
    const quint64 id = ++m_fakeId;
    model()->beginCommand(id, QStringLiteral("seq 1 300000"), QString());
    QByteArray chunk;
    for (int i = 1; i <= 300000; ++i) {
        chunk += QByteArray::number(i) + '\n';
        if (chunk.size() >= 65536 || i == 300000) {
            model()->appendOutput(id, OutputChannel::Stdout, chunk);
            chunk.clear();
            if (i % 7 == 0)
                QCoreApplication::processEvents();
        }
    }
    ExecuteResult r;
    r.durationMs = 5;
    model()->finishCommand(id, r);
    QVERIFY(waitFinished(id));
    const ConsoleHistoryModel::Entry &e = model()->entry(model()->rowOf(id));
    QVERIFY(e.droppedBytes > 0);
    const QStringList lines = textOf(m_panel->block(id)).split(QLatin1Char('\n'));
    QCOMPARE(lines.first(), QStringLiteral("1"));
    const QRegularExpression gap(QStringLiteral("^\\[… .* (dropped|not shown) here"));
    QCOMPARE(lines.filter(gap).size(), 1);
    const QString marker = lines.filter(gap).first();
    QVERIFY2(marker.contains(QLocale::system().toString(e.droppedBytes) + QStringLiteral(" bytes")),
             qPrintable(marker));
    const qsizetype at = lines.indexOf(marker);
    // Whole numbers on both sides of the gap, and the end is there.
    bool ok = false;
    lines.at(at - 1).toInt(&ok);
    QVERIFY2(ok, qPrintable(lines.at(at - 1)));
    lines.at(at + 1).toInt(&ok);
    QVERIFY2(ok, qPrintable(lines.at(at + 1)));
    QCOMPARE(lines.at(lines.size() - 1).isEmpty() ? lines.at(lines.size() - 2) : lines.last(),
             QStringLiteral("300000"));
    QVERIFY(m_panel->block(id)->statusLabel()->text().contains(QStringLiteral("dropped")));
}

void TestConsolePanel::cutLinesAreMarked_data()
{
    QTest::addColumn<qint64>("keep");
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<bool>("engineTruncated");
    QTest::addColumn<QStringList>("expected"); // lines the block must show

    QTest::newRow("one-line-larger-than-kept")
        << qint64(100) << QByteArray(300, 'x') << false
        << QStringList{QString(50, QLatin1Char('x')) + QStringLiteral(" … [line cut]"),
                       QStringLiteral("… ") + QString(50, QLatin1Char('x'))};
    QTest::newRow("engine-cut-at-its-cap")
        << qint64(1 << 20) << QByteArray("1\n2\n12") << true
        << QStringList{QStringLiteral("12 … [line cut]"),
                       QStringLiteral("[output cut at the sandbox's output cap; the rest was "
                                      "not kept]")};
    QTest::newRow("line-longer-than-the-view")
        << qint64(1 << 20) << QByteArray(ConsoleBlock::maxLineLength() + 10, 'y') + "\nnext\n"
        << false
        << QStringList{QString(ConsoleBlock::maxLineLength(), QLatin1Char('y')) +
                           QStringLiteral(" … [line cut]"),
                       QStringLiteral("next")};
}

void TestConsolePanel::cutLinesAreMarked()
{
    QFETCH(qint64, keep);
    QFETCH(QByteArray, stream);
    QFETCH(bool, engineTruncated);
    QFETCH(QStringList, expected);
    model()->setOutputCap(qint64(1) << 40);
    model()->setMaxKeptBytes(keep);
    const quint64 id = ++m_fakeId;
    model()->beginCommand(id, QStringLiteral("cut"), QString());
    model()->appendOutput(id, OutputChannel::Stdout, stream);
    ExecuteResult r;
    r.truncated = engineTruncated;
    model()->finishCommand(id, r);
    QVERIFY(waitFinished(id));
    const QStringList lines = textOf(m_panel->block(id)).split(QLatin1Char('\n'));
    for (const QString &line : std::as_const(expected))
        QVERIFY2(lines.contains(line), qPrintable(lines.join(QLatin1Char('|')).left(400)));
}

void TestConsolePanel::saveOutput()
{
    const quint64 id =
        m_panel->runCommand(QStringLiteral("printf 'alpha\\nbeta\\n'; echo gamma >&2; exit 1"));
    QVERIFY(waitFinished(id));
    QVERIFY(m_panel->block(id)->saveButton()->isEnabled());
    const QByteArray expected("alpha\nbeta\n[stderr]\ngamma\n");

    const QString fresh = m_tmp.filePath(QStringLiteral("saved/fresh.txt"));
    QString message;
    QVERIFY2(m_panel->saveOutput(id, fresh, &message), qPrintable(message));
    QCOMPARE(readHostFile(fresh), expected);

    // An existing file: declining keeps it byte for byte.
    const QString existing = m_tmp.filePath(QStringLiteral("saved/precious.txt"));
    const QByteArray precious("precious\0bytes\n\xff", 16);
    writeHostFile(existing, precious);
    auto answered = answerMessageBox(QMessageBox::No);
    QVERIFY(!m_panel->saveOutput(id, existing, &message));
    QVERIFY(*answered);
    QVERIFY(message.contains(QStringLiteral("left as it was")));
    QCOMPARE(readHostFile(existing), precious);
    QCOMPARE(QDir(m_tmp.filePath(QStringLiteral("saved"))).entryList(QDir::Files | QDir::Hidden),
             (QStringList{QStringLiteral("fresh.txt"), QStringLiteral("precious.txt")}));
    // Agreeing replaces it.
    answered = answerMessageBox(QMessageBox::Yes);
    QVERIFY2(m_panel->saveOutput(id, existing, &message), qPrintable(message));
    QVERIFY(*answered);
    QCOMPARE(readHostFile(existing), expected);

    // A real command with more than the console keeps: the engine's whole result, converted
    // on the pool, is what the file gets.
    model()->setMaxKeptBytes(1000);
    const quint64 seq = m_panel->runCommand(QStringLiteral("seq 1 5000"));
    QVERIFY(waitFinished(seq));
    QVERIFY(model()->entry(model()->rowOf(seq)).droppedBytes > 0);
    QByteArray seqOut;
    for (int i = 1; i <= 5000; ++i)
        seqOut += QByteArray::number(i) + '\n';
    const QString seqPath = m_tmp.filePath(QStringLiteral("saved/seq.txt"));
    QVERIFY2(m_panel->saveOutput(seq, seqPath, &message), qPrintable(message));
    QCOMPARE(readHostFile(seqPath), seqOut);

    // A big output: the file holds the engine's whole result, not the block's head and tail.
    model()->setOutputCap(qint64(1) << 40);
    model()->setMaxKeptBytes(1024);
    const quint64 big = ++m_fakeId;
    model()->beginCommand(big, QStringLiteral("big"), QString());
    QByteArray all;
    for (int i = 0; i < 5000; ++i)
        all += "row " + QByteArray::number(i) + '\n';
    model()->appendOutput(big, OutputChannel::Stdout, all);
    ExecuteResult r;
    r.output = QString::fromUtf8(all);
    model()->finishCommand(big, r);
    QVERIFY(waitFinished(big));
    const QString bigPath = m_tmp.filePath(QStringLiteral("saved/big.txt"));
    QVERIFY2(m_panel->saveOutput(big, bigPath, &message), qPrintable(message));
    QCOMPARE(readHostFile(bigPath), all);
}

void TestConsolePanel::saveThroughTheDialog()
{
    const quint64 id = m_panel->runCommand(QStringLiteral("echo via-dialog"));
    QVERIFY(waitFinished(id));
    const QString path = m_tmp.filePath(QStringLiteral("dialog/out.log"));
    QDir().mkpath(QFileInfo(path).absolutePath());
    auto answered = answerModal<QFileDialog>([path](QFileDialog *dialog) {
        const QFileInfo info(path);
        dialog->setDirectory(info.absolutePath());
        auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit"));
        QVERIFY(name);
        name->setText(info.fileName());
        static_cast<QDialog *>(dialog)->accept();
    });
    QTest::mouseClick(m_panel->block(id)->saveButton(), Qt::LeftButton);
    QTRY_VERIFY(*answered);
    QTRY_COMPARE(readHostFile(path), QByteArray("via-dialog\n"));
    QVERIFY(m_panel->messageLabel()->text().contains(QStringLiteral("Saved")));
}

void TestConsolePanel::accessibleNames()
{
    const quint64 id = m_panel->runCommand(QStringLiteral("echo named; sleep 60"));
    QTRY_VERIFY(textOf(m_panel->block(id)).contains(QStringLiteral("named")));
    QList<QWidget *> controls{m_panel->input(), m_panel->cwdBox(), m_panel->messageLabel(),
                              m_panel->scrollArea()};
    const auto buttons = m_panel->findChildren<QPushButton *>();
    for (QPushButton *button : buttons)
        controls << button;
    ConsoleBlock *b = m_panel->block(id);
    controls << b << b->output() << b->statusLabel() << b->headerLabel();
    for (QWidget *w : std::as_const(controls))
        QVERIFY2(!w->accessibleName().isEmpty(), w->metaObject()->className());
    QVERIFY(b->cancelButton()->accessibleName().contains(QStringLiteral("echo named")));
    QVERIFY(b->saveButton()->accessibleName().contains(QStringLiteral("echo named")));
}

void TestConsolePanel::blockFitsItsLines()
{
    // stderr then stdout in two updates: the block grows to show every line, no inner scroll.
    const quint64 id =
        m_panel->runCommand(QStringLiteral("echo to-stderr >&2; sleep 0.3; printf 'one\\ntwo\\n'"));
    QVERIFY(waitFinished(id));
    QPlainTextEdit *out = m_panel->block(id)->output();
    QTRY_VERIFY(out->isVisible());
    QCOMPARE(out->toPlainText(), QStringLiteral("to-stderr\none\ntwo\n"));
    QTRY_COMPARE(out->verticalScrollBar()->maximum(), 0);
    QVERIFY(out->height() >= 3 * out->fontMetrics().lineSpacing());
}

void TestConsolePanel::screenshots()
{
    // Three blocks: a failed command, a truncated one (head, gap, tail), one running.
    const quint64 failed = m_panel->runCommand(
        QStringLiteral("echo 'compiling main.c'; echo 'main.c:3: error: missing ;' >&2; exit 2"));
    QVERIFY(waitFinished(failed));
    model()->setOutputCap(qint64(1) << 40);
    model()->setMaxKeptBytes(96);
    const quint64 truncated = ++m_fakeId;
    model()->beginCommand(truncated, QStringLiteral("seq 1 100000"), QString(),
                          SandboxController::consoleAgent());
    QByteArray seq;
    for (int i = 1; i <= 100000; ++i)
        seq += QByteArray::number(i) + '\n';
    model()->appendOutput(truncated, OutputChannel::Stdout, seq);
    ExecuteResult r;
    r.durationMs = 48;
    model()->finishCommand(truncated, r);
    QVERIFY(waitFinished(truncated));
    const quint64 running =
        m_panel->runCommand(QStringLiteral("echo 'building…'; echo 'step 1/3'; sleep 60"));
    QTRY_VERIFY(textOf(m_panel->block(running)).contains(QStringLiteral("step 1/3")));
    QTest::qWait(100);

    const QString dir = qEnvironmentVariable("ELSAI_SCREENSHOT_DIR", m_tmp.path());
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    dark.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
    dark.setColor(QPalette::Button, QColor(0x3c, 0x3c, 0x3c));
    dark.setColor(QPalette::ButtonText, QColor(0xe0, 0xe0, 0xe0));
    dark.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
    dark.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x70, 0x70, 0x70));
    dark.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x70, 0x70, 0x70));
    const QList<std::pair<QString, QPalette>> looks{
        {QStringLiteral("light"), QApplication::style()->standardPalette()},
        {QStringLiteral("dark"), dark}};
    for (const auto &[name, palette] : looks) {
        m_panel->setPalette(palette);
        QTRY_VERIFY(!m_panel->hasPendingOutput());
        QTest::qWait(50);
        const QImage image = m_panel->grab().toImage();
        QVERIFY(!image.isNull());
        const QString file = dir + QStringLiteral("/console-%1.png").arg(name);
        QVERIFY(image.save(file));
        qInfo("screenshot: %s", qPrintable(file));
    }
    m_panel->setPalette(QPalette());
    // The redraw for the palette kept each block's text.
    QVERIFY(textOf(m_panel->block(truncated)).contains(QStringLiteral("dropped here")));
    QVERIFY(m_panel->block(failed)->statusLabel()->text().startsWith(QStringLiteral("exit 2")));
}

QTEST_MAIN(TestConsolePanel)
#include "tst_consolepanel.moc"
