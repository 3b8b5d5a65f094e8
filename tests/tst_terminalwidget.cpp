// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The terminal widget (ui/terminalwidget.h) on libvterm: the emulation on its own (colours,
// attributes, wide characters, modes, the bytes keys become) and the widget driving a real
// shell on a PTY — colours, `tput` after a resize, a full-screen program (less), Ctrl+C, the
// scrollback with search and copy — read through the accessibility text interface.

#include "localsandboxbackend.h"
#include "ptyfactory.h"
#include "ptysession.h"
#include "terminalscreen.h"
#include "terminalwidget.h"
#include "testutil.h"

#include <QAccessible>
#include <QApplication>
#include <QClipboard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace elsai;

namespace {

constexpr int Wait = 15000; // ms; a bound, never a measurement

/// What the screen sends to the program while `fn` runs.
QByteArray sent(TerminalScreen &s, const std::function<void()> &fn)
{
    QByteArray out;
    const auto c =
        QObject::connect(&s, &TerminalScreen::input, &s, [&](const QByteArray &b) { out += b; });
    fn();
    QObject::disconnect(c);
    return out;
}

/// The row of the screen whose text contains `text`, or -1.
int rowWith(const TerminalScreen &s, const QString &text)
{
    for (int r = 0; r < s.rows(); ++r) {
        if (s.lineText(s.scrollbackLines() + r).contains(text))
            return r;
    }
    return -1;
}

QString accessibleText(QWidget *w)
{
    QAccessibleInterface *iface = QAccessible::queryAccessibleInterface(w);
    if (!iface || !iface->textInterface())
        return QStringLiteral("<no text interface>");
    QAccessibleTextInterface *text = iface->textInterface();
    return text->text(0, text->characterCount());
}

/// A session without a program: the test plays the program's output.
class FakePty : public PtySession
{
public:
    FakePty() : PtySession(QStringLiteral("fake"), QStringLiteral("FakeBackend")) {}
    void emitOutput(const QByteArray &bytes) { reportOutput(bytes); }
    QByteArray written;

protected:
    void doStart(int, int) override { reportStarted(); }
    void doWrite(const QByteArray &bytes) override { written += bytes; }
    void doResize(int, int) override {}
    void doTerminate() override { reportFinished(0); }
};

} // namespace

class TestTerminalWidget : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::shared_ptr<LocalSandboxBackend> m_backend;

    struct Open
    {
        std::unique_ptr<TerminalWidget> view;
        std::unique_ptr<PtySession> session;
        bool done = false;
    };
    std::unique_ptr<Open> open(QSize size = QSize(640, 400))
    {
        auto o = std::make_unique<Open>();
        o->view = std::make_unique<TerminalWidget>();
        o->view->resize(size);
        o->view->show();
        o->session.reset(createPtySession(m_backend, QStringLiteral("ws")));
        QObject::connect(o->session.get(), &PtySession::finished, o->session.get(),
                         [d = o.get()](int, const QString &) { d->done = true; });
        o->view->setSession(o->session.get());
        o->session->start(o->view->screen()->columns(), o->view->screen()->rows());
        if (!QTest::qWaitForWindowExposed(o->view.get()))
            qWarning("the view was not exposed");
        o->view->setFocus();
        return o;
    }
    static void type(TerminalWidget *view, const QString &line)
    {
        QTest::keyClicks(view, line);
        QTest::keyClick(view, Qt::Key_Return);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        LocalSandboxBackend::Options o;
        o.env.insert(QStringLiteral("SHELL"), QStringLiteral("/bin/bash"));
        o.env.insert(QStringLiteral("PS1"), QStringLiteral("$ "));
        o.env.insert(QStringLiteral("LESS"), QString());
        o.env.insert(QStringLiteral("LANG"), QStringLiteral("C.UTF-8"));
        o.killGraceMs = 300;
        m_backend = std::make_shared<LocalSandboxBackend>(m_dir.path(), o);
        m_backend->create();
    }

    // ---- the emulation alone

    void attributesAndColours()
    {
        TerminalScreen s(40, 5);
        s.feed("\x1b[1;31mR\x1b[0m\x1b[38;5;208mO\x1b[0m\x1b[38;2;10;20;30;48;2;1;2;3mT\x1b[0m"
               "\x1b[3;4mI\x1b[0m\x1b[7mV\x1b[0m\x1b[9mS\x1b[0mp");
        const TerminalCell r = s.cell(0, 0);
        QCOMPARE(QChar(char16_t(r.ch)), QLatin1Char('R'));
        QVERIFY(r.has(TerminalCell::Bold));
        QVERIFY(!r.has(TerminalCell::DefaultFg));
        QCOMPARE(r.fg, qRgb(0xcc, 0, 0));
        QCOMPARE(s.cell(0, 1).fg, qRgb(0xff, 0x87, 0x00)); // 256-colour cube entry 208
        const TerminalCell t = s.cell(0, 2);
        QCOMPARE(t.fg, qRgb(10, 20, 30)); // true colour
        QCOMPARE(t.bg, qRgb(1, 2, 3));
        QVERIFY(!t.has(TerminalCell::DefaultBg));
        const TerminalCell i = s.cell(0, 3);
        QVERIFY(i.has(TerminalCell::Italic) && i.has(TerminalCell::Underline));
        QVERIFY(!i.has(TerminalCell::Bold));
        QVERIFY(s.cell(0, 4).has(TerminalCell::Reverse));
        QVERIFY(s.cell(0, 5).has(TerminalCell::Strike));
        const TerminalCell plain = s.cell(0, 6);
        QVERIFY(plain.has(TerminalCell::DefaultFg) && plain.has(TerminalCell::DefaultBg));
        QCOMPARE(s.lineText(0), QStringLiteral("ROTIVSp"));
    }

    void wideCharacters()
    {
        TerminalScreen s(10, 3);
        s.feed("\xe6\x97\xa5\xe6\x9c\xac!"); // 日本!
        QVERIFY(s.cell(0, 0).has(TerminalCell::Wide));
        QVERIFY(s.cell(0, 1).has(TerminalCell::Continuation));
        QVERIFY(s.cell(0, 2).has(TerminalCell::Wide));
        QCOMPARE(QChar(char16_t(s.cell(0, 4).ch)), QLatin1Char('!'));
        QCOMPARE(s.lineText(0), QStringLiteral("日本!"));
        QCOMPARE(s.cursor(), QPoint(5, 0));
    }

    void modesCursorShapesAndAlternateScreen()
    {
        TerminalScreen s(20, 4);
        s.feed("main");
        QCOMPARE(s.cursorShape(), TerminalScreen::CursorShape::Block);
        s.feed("\x1b[6 q");
        QCOMPARE(s.cursorShape(), TerminalScreen::CursorShape::Bar);
        s.feed("\x1b[4 q");
        QCOMPARE(s.cursorShape(), TerminalScreen::CursorShape::Underline);
        s.feed("\x1b[?25l");
        QVERIFY(!s.cursorVisible());
        s.feed("\x1b[?1049h\x1b[2J\x1b[Halt");
        QVERIFY(s.altScreen());
        QCOMPARE(s.lineText(0), QStringLiteral("alt"));
        s.feed("\x1b[?1049l");
        QVERIFY(!s.altScreen());
        QCOMPARE(s.lineText(0), QStringLiteral("main"));
        QSignalSpy title(&s, &TerminalScreen::titleChanged);
        s.feed("\x1b]2;hello title\x07");
        QCOMPARE(s.title(), QStringLiteral("hello title"));
        QCOMPARE(title.count(), 1);
    }

    void keysBecomeBytes_data()
    {
        QTest::addColumn<QByteArray>("setup");
        QTest::addColumn<int>("key");
        QTest::addColumn<int>("mods");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QByteArray>("bytes");
        const int none = Qt::NoModifier;
        const int ctrl = Qt::ControlModifier;
        const int alt = Qt::AltModifier;
        // clang-format off
        QTest::newRow("letter")       << QByteArray() << int(Qt::Key_A) << none << "a" << QByteArray("a");
        QTest::newRow("utf-8")        << QByteArray() << 0 << none << "é" << QByteArray("\xc3\xa9");
        QTest::newRow("ctrl-c")       << QByteArray() << int(Qt::Key_C) << ctrl << "\x03" << QByteArray("\x03");
        QTest::newRow("ctrl-d")       << QByteArray() << int(Qt::Key_D) << ctrl << "" << QByteArray("\x04");
        QTest::newRow("ctrl-z")       << QByteArray() << int(Qt::Key_Z) << ctrl << "" << QByteArray("\x1a");
        QTest::newRow("ctrl-space")   << QByteArray() << int(Qt::Key_Space) << ctrl << " " << QByteArray(1, '\0');
        QTest::newRow("alt-x")        << QByteArray() << int(Qt::Key_X) << alt << "x" << QByteArray("\x1bx");
        QTest::newRow("enter")        << QByteArray() << int(Qt::Key_Return) << none << "\r" << QByteArray("\r");
        QTest::newRow("backspace")    << QByteArray() << int(Qt::Key_Backspace) << none << "" << QByteArray("\x7f");
        QTest::newRow("tab")          << QByteArray() << int(Qt::Key_Tab) << none << "\t" << QByteArray("\t");
        QTest::newRow("up")           << QByteArray() << int(Qt::Key_Up) << none << "" << QByteArray("\x1b[A");
        QTest::newRow("up app mode")  << QByteArray("\x1b[?1h") << int(Qt::Key_Up) << none << "" << QByteArray("\x1bOA");
        QTest::newRow("ctrl-right")   << QByteArray() << int(Qt::Key_Right) << ctrl << "" << QByteArray("\x1b[1;5C");
        QTest::newRow("home")         << QByteArray() << int(Qt::Key_Home) << none << "" << QByteArray("\x1b[H");
        QTest::newRow("end")          << QByteArray() << int(Qt::Key_End) << none << "" << QByteArray("\x1b[F");
        QTest::newRow("page up")      << QByteArray() << int(Qt::Key_PageUp) << none << "" << QByteArray("\x1b[5~");
        QTest::newRow("page down")    << QByteArray() << int(Qt::Key_PageDown) << none << "" << QByteArray("\x1b[6~");
        QTest::newRow("delete")       << QByteArray() << int(Qt::Key_Delete) << none << "" << QByteArray("\x1b[3~");
        QTest::newRow("f1")           << QByteArray() << int(Qt::Key_F1) << none << "" << QByteArray("\x1bOP");
        QTest::newRow("f5")           << QByteArray() << int(Qt::Key_F5) << none << "" << QByteArray("\x1b[15~");
        QTest::newRow("f12")          << QByteArray() << int(Qt::Key_F12) << none << "" << QByteArray("\x1b[24~");
        QTest::newRow("escape")       << QByteArray() << int(Qt::Key_Escape) << none << "\x1b" << QByteArray("\x1b");
        // clang-format on
    }
    void keysBecomeBytes()
    {
        QFETCH(QByteArray, setup);
        QFETCH(int, key);
        QFETCH(int, mods);
        QFETCH(QString, text);
        QFETCH(QByteArray, bytes);
        TerminalScreen s(20, 4);
        s.feed(setup);
        QCOMPARE(sent(s, [&] { s.sendKey(key, Qt::KeyboardModifiers(mods), text); }), bytes);
    }

    void bracketedPasteAndMouseReporting()
    {
        TerminalScreen s(20, 4);
        QCOMPARE(sent(s, [&] { s.sendPaste(QStringLiteral("a\nb")); }), QByteArray("a\rb"));
        s.feed("\x1b[?2004h");
        QCOMPARE(sent(s, [&] { s.sendPaste(QStringLiteral("a\nb\x1b[201~c")); }),
                 QByteArray("\x1b[200~a\rbc\x1b[201~"));

        QCOMPARE(s.mouseMode(), TerminalScreen::MouseMode::None);
        s.feed("\x1b[?1000h\x1b[?1006h");
        QCOMPARE(s.mouseMode(), TerminalScreen::MouseMode::Click);
        const QByteArray click = sent(s, [&] {
            s.sendMouseMove(2, 4, Qt::NoModifier);
            s.sendMouseButton(1, true, Qt::NoModifier);
        });
        QCOMPARE(click, QByteArray("\x1b[<0;5;3M")); // SGR: button 0 at column 5, row 3
    }

    void scrollbackIsBoundedAndResizeKeepsIt()
    {
        TerminalScreen s(10, 3);
        s.setScrollbackLimit(5);
        for (int i = 0; i < 20; ++i)
            s.feed(QByteArray::number(i) + "\r\n");
        QCOMPARE(s.scrollbackLines(), 5);
        QCOMPARE(s.lineText(0), QStringLiteral("13")); // the oldest kept
        QCOMPARE(s.lineText(4), QStringLiteral("17"));
        QCOMPARE(s.linesScrolled(), qint64(18));
        s.resize(10, 5); // taller: lines come back from the scrollback
        QCOMPARE(s.rows(), 5);
        QCOMPARE(s.lineText(s.scrollbackLines()), QStringLiteral("16"));
    }

    // ---- the widget on a real shell

    void colourOutputOfAProgram()
    {
        auto o = open();
        QTRY_VERIFY_WITH_TIMEOUT(o->session->isRunning(), Wait);
        type(o->view.get(), QStringLiteral("printf '\\033[1;32m%s\\033[0m\\n' \"ok$((40+2))\""));
        QTRY_VERIFY_WITH_TIMEOUT(
            rowWith(*o->view->screen(), QStringLiteral("ok42")) >= 0 &&
                o->view->screen()
                    ->lineText(o->view->screen()->scrollbackLines() +
                               rowWith(*o->view->screen(), QStringLiteral("ok42")))
                    .startsWith(QLatin1String("ok42")),
            Wait);
        const TerminalScreen *s = o->view->screen();
        int row = -1;
        for (int r = 0; r < s->rows(); ++r) {
            if (s->lineText(s->scrollbackLines() + r) == QLatin1String("ok42"))
                row = r;
        }
        QVERIFY(row >= 0);
        QVERIFY(s->cell(row, 0).has(TerminalCell::Bold));
        QCOMPARE(s->cell(row, 0).fg, qRgb(0x4e, 0x9a, 0x06));
        QTRY_VERIFY_WITH_TIMEOUT(accessibleText(o->view.get()).contains(QLatin1String("ok42")),
                                 Wait);
    }

    void programSeesTheWindowSizeAfterAResize()
    {
        auto o = open(QSize(500, 300));
        QTRY_VERIFY_WITH_TIMEOUT(o->session->isRunning(), Wait);
        o->view->resize(800, 500);
        const int cols = o->view->screen()->columns();
        const int rows = o->view->screen()->rows();
        QCOMPARE(o->session->columns(), cols);
        type(o->view.get(), QStringLiteral("echo \"c$(tput cols)x$(tput lines)\""));
        const QString expected = QStringLiteral("c%1x%2").arg(cols).arg(rows);
        QTRY_VERIFY2_WITH_TIMEOUT(accessibleText(o->view.get()).contains(expected),
                                  qPrintable(accessibleText(o->view.get())), Wait);
    }

    void fullScreenProgram()
    {
        QString lines;
        for (int i = 1; i <= 300; ++i)
            lines += QStringLiteral("numbered line %1\n").arg(i);
        test::writeHostFile(m_dir.filePath(QStringLiteral("long.txt")), lines.toUtf8());
        auto o = open();
        QTRY_VERIFY_WITH_TIMEOUT(o->session->isRunning(), Wait);
        type(o->view.get(), QStringLiteral("less long.txt"));
        QTRY_VERIFY_WITH_TIMEOUT(o->view->screen()->altScreen(), Wait);
        QTRY_VERIFY_WITH_TIMEOUT(
            accessibleText(o->view.get()).startsWith(QLatin1String("numbered line 1\n")), Wait);
        QTest::keyClick(o->view.get(), Qt::Key_End); // the bottom of the file (G)
        QTRY_VERIFY_WITH_TIMEOUT(
            accessibleText(o->view.get()).contains(QLatin1String("numbered line 300")), Wait);
        QVERIFY(!accessibleText(o->view.get()).contains(QLatin1String("numbered line 1\n")));
        QTest::keyClick(o->view.get(), Qt::Key_Q);
        QTRY_VERIFY_WITH_TIMEOUT(!o->view->screen()->altScreen(), Wait);
        QTRY_VERIFY_WITH_TIMEOUT(!o->session->hasForegroundProgram(), Wait);
    }

    void ctrlCInterruptsSleep()
    {
        auto o = open();
        QTRY_VERIFY_WITH_TIMEOUT(o->session->isRunning(), Wait);
        type(o->view.get(), QStringLiteral("sleep 1000; echo \"slept$((1+1))\""));
        QTRY_VERIFY_WITH_TIMEOUT(o->session->hasForegroundProgram(), Wait);
        QTest::keyClick(o->view.get(), Qt::Key_C, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(!o->session->hasForegroundProgram(), Wait);
        type(o->view.get(), QStringLiteral("echo \"back$((3+4))\""));
        QTRY_VERIFY_WITH_TIMEOUT(accessibleText(o->view.get()).contains(QLatin1String("back7")),
                                 Wait);
        QVERIFY(!accessibleText(o->view.get()).contains(QLatin1String("slept2")));
        // Ctrl+D at the prompt ends the shell. A ^D that reaches the terminal while bash is
        // still between the echo and its next prompt is taken by the line discipline, not by
        // readline (as in any terminal): it is pressed again until the shell has ended.
        for (int i = 0; i < 40 && !o->done; ++i) {
            QTest::keyClick(o->view.get(), Qt::Key_D, Qt::ControlModifier);
            QTest::qWait(250);
        }
        QTRY_VERIFY_WITH_TIMEOUT(o->done, Wait);
    }

    void scrollbackSearchAndCopy()
    {
        auto o = open();
        QTRY_VERIFY_WITH_TIMEOUT(o->session->isRunning(), Wait);
        type(o->view.get(), QStringLiteral("seq 1 2000 | sed 's/^/row-/'"));
        QTRY_VERIFY_WITH_TIMEOUT(accessibleText(o->view.get()).contains(QLatin1String("row-2000")),
                                 Wait);
        QVERIFY(o->view->screen()->scrollbackLines() > 1000);
        QVERIFY(!o->view->isScrolledBack());
        QVERIFY(o->view->find(QStringLiteral("row-1234")));
        QCOMPARE(o->view->selectedText(), QStringLiteral("row-1234"));
        QVERIFY(o->view->isScrolledBack());
        QVERIFY(accessibleText(o->view.get()).contains(QLatin1String("row-1234")));
        QTest::keyClick(o->view.get(), Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("row-1234"));
        QVERIFY(!o->view->find(QStringLiteral("no-such-text")));

        // Ctrl+Shift+V pastes into the program.
        QGuiApplication::clipboard()->setText(QStringLiteral("echo \"pasted$((5*5))\""));
        QTest::keyClick(o->view.get(), Qt::Key_V, Qt::ControlModifier | Qt::ShiftModifier);
        QVERIFY(!o->view->isScrolledBack());
        QTest::keyClick(o->view.get(), Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(accessibleText(o->view.get()).contains(QLatin1String("pasted25")),
                                 Wait);
    }

    void floodsRepaintOncePerFrame()
    {
        TerminalWidget view;
        view.resize(400, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTest::qWait(50);
        FakePty pty;
        view.setSession(&pty);
        pty.start(80, 24);
        QVERIFY(pty.isRunning());
        QTest::qWait(50);
        const qint64 before = view.frameCount();
        // Thousands of chunks within one event-loop turn: one frame, not thousands.
        for (int i = 0; i < 5000; ++i)
            pty.emitOutput(QByteArray::number(i) + " some text of a flood\r\n");
        QTest::qWait(100);
        QVERIFY2(view.frameCount() - before <= 2,
                 qPrintable(QString::number(view.frameCount() - before)));
        QVERIFY(view.visibleText().contains(QLatin1String("4999 some text")));
    }
};

QTEST_MAIN(TestTerminalWidget)
#include "tst_terminalwidget.moc"
