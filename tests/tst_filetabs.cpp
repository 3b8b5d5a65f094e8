// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agent.h"
#include "appsettings.h"
#include "codeeditor.h"
#include "filetabs.h"
#include "findbar.h"
#include "highlighter.h"
#include "modelroles.h"
#include "sandboxcontroller.h"
#include "testutil.h"
#include "workspacetreemodel.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QSyntaxHighlighter>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextLayout>
#include <QTimer>
#include <QtTest>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

class TestFileTabs : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;

    /// A started sandbox seeded from a small project; returns its workspace root.
    QString startSandbox(SandboxController &c, const QString &id)
    {
        const QString project = m_tmp.filePath(QStringLiteral("project-%1").arg(++m_n));
        writeHostFile(project + QStringLiteral("/hello.py"), "def hello():\n    return 1\n");
        writeHostFile(project + QStringLiteral("/notes.txt"), "one\ntwo\nthree\n");
        writeHostFile(project + QStringLiteral("/blob.bin"), QByteArray("\x7f"
                                                                        "ELF\0\1\2",
                                                                        7));
        SandboxSpec s;
        s.workspaceId = id;
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("ws-%1").arg(m_n));
        s.seedFrom = project;
        c.addSandbox(s);
        if (!QTest::qWaitFor([&] { return c.state(id) == SessionState::Running; }, 20000))
            qFatal("sandbox did not start");
        return s.workspaceRoot;
    }

    static bool waitLoaded(FileTabs &tabs, int index)
    {
        return QTest::qWaitFor([&] { return tabs.tabKind(index) != FileTabs::TabKind::Loading; },
                               10000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
        // The editor settings (font, word wrap) go to the test folder, never the user's.
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                           m_tmp.filePath(QStringLiteral("config")));
    }

    // CodeEditor::find(): wraps around, honours case and whole words, both directions.
    void findWrapsAround_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("needle");
        QTest::addColumn<int>("flags");
        QTest::addColumn<QList<int>>("starts"); // selection starts of successive finds
        const QString t = QStringLiteral("alpha beta alpha gamma Alpha alphabet");
        const int cs = int(QTextDocument::FindCaseSensitively);
        const int ww = int(QTextDocument::FindWholeWords);
        const int back = int(QTextDocument::FindBackward);
        // clang-format off
        QTest::newRow("forward, any case") << t << "alpha" << 0 << QList<int>{0, 11, 23, 29, 0};
        QTest::newRow("forward, case") << t << "alpha" << cs << QList<int>{0, 11, 29, 0};
        QTest::newRow("whole words") << t << "alpha" << ww << QList<int>{0, 11, 23, 0};
        QTest::newRow("case, whole words") << t << "Alpha" << (cs | ww) << QList<int>{23, 23};
        QTest::newRow("backward wraps") << t << "beta" << back << QList<int>{6, 6};
        QTest::newRow("backward") << t << "alpha" << (back | cs) << QList<int>{29, 11, 0, 29};
        QTest::newRow("absent") << t << "delta" << 0 << QList<int>{-1};
        // clang-format on
    }

    void findWrapsAround()
    {
        QFETCH(QString, text);
        QFETCH(QString, needle);
        QFETCH(int, flags);
        QFETCH(QList<int>, starts);
        CodeEditor ed;
        ed.setPlainText(text);
        for (int expected : starts) {
            const bool found = ed.find(needle, QTextDocument::FindFlags(flags));
            QCOMPARE(found, expected >= 0);
            if (found) {
                QCOMPARE(ed.textCursor().selectionStart(), expected);
                QCOMPARE(ed.textCursor().selectedText().toLower(), needle.toLower());
            }
        }
    }

    void replaceAndReplaceAll()
    {
        CodeEditor ed;
        ed.setPlainText(QStringLiteral("a.b a.b\na.b"));
        QCOMPARE(ed.countMatches(QStringLiteral("a.b")), 3);
        // Replace with nothing selected only finds; then replaces the selected match.
        QVERIFY(!ed.replaceCurrent(QStringLiteral("a.b"), QStringLiteral("x")));
        QCOMPARE(ed.textCursor().selectionStart(), 0);
        QVERIFY(ed.replaceCurrent(QStringLiteral("a.b"), QStringLiteral("x")));
        QCOMPARE(ed.toPlainText(), QStringLiteral("x a.b\na.b"));
        QCOMPARE(ed.textCursor().selectionStart(), 2); // the next match is selected
        // A replacement containing the text ends after one pass; one undo restores it all.
        QCOMPARE(ed.replaceAll(QStringLiteral("a.b"), QStringLiteral("[a.b]")), 2);
        QCOMPARE(ed.toPlainText(), QStringLiteral("x [a.b]\n[a.b]"));
        ed.undo();
        QCOMPARE(ed.toPlainText(), QStringLiteral("x a.b\na.b"));
        ed.setReadOnly(true);
        QCOMPARE(ed.replaceAll(QStringLiteral("a.b"), QStringLiteral("y")), 0);
    }

    void lineNumbersAndCurrentLine()
    {
        CodeEditor ed;
        QStringList lines;
        for (int i = 1; i <= 120; ++i)
            lines << QStringLiteral("line %1").arg(i);
        ed.setPlainText(lines.join(QLatin1Char('\n')));
        ed.resize(400, 300);
        ed.show();
        QVERIFY(QTest::qWaitForWindowExposed(&ed));
        // The gutter is as wide as three digits at least, and left of the text.
        const int digit = ed.fontMetrics().horizontalAdvance(QLatin1Char('9'));
        QVERIFY(ed.lineNumberArea()->isVisible());
        QCOMPARE(ed.lineNumberArea()->width(), ed.lineNumberAreaWidth());
        QVERIFY(ed.lineNumberAreaWidth() >= 3 * digit);
        QCOMPARE(ed.viewport()->geometry().left(), ed.lineNumberAreaWidth() + ed.frameWidth());
        // It paints numbers: the gutter is not one flat colour.
        const QImage gutter = ed.lineNumberArea()->grab().toImage();
        QSet<QRgb> colours;
        for (int y = 0; y < gutter.height(); ++y)
            for (int x = 0; x < gutter.width(); ++x)
                colours.insert(gutter.pixel(x, y));
        QVERIFY2(colours.size() > 2, qPrintable(QString::number(colours.size())));

        ed.goToLine(57);
        QCOMPARE(ed.currentLine(), 57);
        QCOMPARE(ed.textCursor().block().text(), QStringLiteral("line 57"));
        ed.goToLine(100000); // clamped
        QCOMPARE(ed.currentLine(), 120);
        const QList<QTextEdit::ExtraSelection> sel = ed.extraSelections();
        QCOMPARE(sel.size(), 1);
        QVERIFY(sel.first().format.property(QTextFormat::FullWidthSelection).toBool());
        QCOMPARE(sel.first().cursor.blockNumber(), 119);
        QCOMPARE(sel.first().format.background().color(), ed.currentLineColor());
        QVERIFY(ed.currentLineColor() != ed.palette().color(QPalette::Base));
    }

    // The keyboard: Ctrl+F, typing, F3 / Shift+F3, Enter / Shift+Enter, Esc, Ctrl+H, Ctrl+G.
    void findBarByKeyboard()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("keys"));
        FileTabs tabs(&c);
        tabs.resize(700, 400);
        tabs.show();
        QVERIFY(QTest::qWaitForWindowActive(&tabs));
        tabs.openFile(QStringLiteral("keys"), QStringLiteral("notes.txt"));
        QVERIFY(waitLoaded(tabs, 0));
        CodeEditor *ed = tabs.codeEditor(0);
        FindBar *bar = tabs.findBar(0);
        QVERIFY(ed && bar);
        ed->setPlainText(QStringLiteral("one\ntwo\nthree\ntwo again\n"));
        ed->setFocus();
        QTRY_VERIFY(ed->hasFocus());

        QTest::keyClick(ed, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(bar->isVisible());
        QVERIFY(!bar->isReplaceShown());
        QTRY_VERIFY(bar->findField()->hasFocus());
        QTest::keyClicks(bar->findField(), QStringLiteral("two"));
        QCOMPARE(ed->textCursor().selectedText(), QStringLiteral("two"));
        QCOMPARE(ed->currentLine(), 2);
        QCOMPARE(bar->statusText(), QStringLiteral("2 matches"));
        QTest::keyClick(bar->findField(), Qt::Key_Return);
        QCOMPARE(ed->currentLine(), 4);
        QTest::keyClick(bar->findField(), Qt::Key_F3);
        QCOMPARE(ed->currentLine(), 2); // wrapped around
        QTest::keyClick(bar->findField(), Qt::Key_F3, Qt::ShiftModifier);
        QCOMPARE(ed->currentLine(), 4);
        QTest::keyClick(bar->findField(), Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(ed->currentLine(), 2);
        QTest::keyClicks(bar->findField(), QStringLiteral("zzz"));
        QCOMPARE(bar->statusText(), QStringLiteral("not found"));
        QTest::keyClick(bar->findField(), Qt::Key_Escape);
        QVERIFY(!bar->isVisible());
        QTRY_VERIFY(ed->hasFocus());

        // Replace: the selection becomes the text to find.
        QVERIFY(ed->find(QStringLiteral("three")));
        QTest::keyClick(ed, Qt::Key_H, Qt::ControlModifier);
        QVERIFY(bar->isReplaceShown());
        QCOMPARE(bar->findField()->text(), QStringLiteral("three"));
        bar->replaceField()->setText(QStringLiteral("3"));
        QTest::keyClick(bar->replaceField(), Qt::Key_Return);
        QCOMPARE(ed->toPlainText(), QStringLiteral("one\ntwo\n3\ntwo again\n"));
        QVERIFY(tabs.isTabModified(0));
        bar->findField()->setText(QStringLiteral("two"));
        QCOMPARE(bar->replaceAll(), 2);
        QCOMPARE(ed->toPlainText(), QStringLiteral("one\n3\n3\n3 again\n"));
        QCOMPARE(bar->statusText(), QStringLiteral("2 replaced"));

        // Go to line.
        GoToLineBar *go = tabs.goToLineBar(0);
        ed->setFocus();
        QTest::keyClick(ed, Qt::Key_G, Qt::ControlModifier);
        QVERIFY(go->isVisible());
        QVERIFY(!bar->isVisible());
        QCOMPARE(go->lineField()->maximum(), 5);
        QTest::keyClick(go->lineField(), Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(go->lineField(), QStringLiteral("3"));
        QTest::keyClick(go->lineField(), Qt::Key_Return);
        QVERIFY(!go->isVisible());
        QCOMPARE(ed->currentLine(), 3);
        QTRY_VERIFY(ed->hasFocus());
    }

    void editActionsFollowTheTab()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("acts"));
        FileTabs tabs(&c);
        QAction *find = tabs.editAction(FileTabs::EditAction::Find);
        QAction *replace = tabs.editAction(FileTabs::EditAction::Replace);
        QCOMPARE(find->shortcut(), QKeySequence(QKeySequence::Find));
        QCOMPARE(tabs.editAction(FileTabs::EditAction::FindNext)->shortcut(),
                 QKeySequence(Qt::Key_F3));
        QCOMPARE(tabs.editAction(FileTabs::EditAction::FindPrevious)->shortcut(),
                 QKeySequence(Qt::SHIFT | Qt::Key_F3));
        QCOMPARE(replace->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_H));
        QCOMPARE(tabs.editAction(FileTabs::EditAction::GoToLine)->shortcut(),
                 QKeySequence(Qt::CTRL | Qt::Key_G));
        QVERIFY(!find->isEnabled()); // no tab
        tabs.openFile(QStringLiteral("acts"), QStringLiteral("notes.txt"));
        QVERIFY(waitLoaded(tabs, 0));
        QVERIFY(find->isEnabled());
        QVERIFY(replace->isEnabled());
        tabs.openFile(QStringLiteral("acts"), QStringLiteral("blob.bin"));
        QVERIFY(waitLoaded(tabs, 1));
        QCOMPARE(tabs.currentIndex(), 1);
        QVERIFY(!find->isEnabled()); // a hex view
        tabs.setCurrentIndex(0);
        QVERIFY(find->isEnabled());
    }

    void wordWrapAndFontApplyLive()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("wrap"));
        FileTabs tabs(&c);
        tabs.openFile(QStringLiteral("wrap"), QStringLiteral("hello.py"));
        tabs.openFile(QStringLiteral("wrap"), QStringLiteral("notes.txt"));
        QVERIFY(waitLoaded(tabs, 0) && waitLoaded(tabs, 1));
        AppSettings *settings = AppSettings::instance();
        settings->setWordWrap(false);
        QAction *wrap = tabs.editAction(FileTabs::EditAction::WordWrap);
        QVERIFY(wrap->isCheckable());
        QVERIFY(!tabs.codeEditor(0)->wordWrap());
        wrap->trigger();
        QVERIFY(settings->wordWrap());
        QVERIFY(AppSettings::store().value(QLatin1String(SettingsKey::EditorWordWrap)).toBool());
        for (int i = 0; i < 2; ++i)
            QVERIFY(tabs.codeEditor(i)->wordWrap());
        wrap->trigger();
        QVERIFY(!tabs.codeEditor(1)->wordWrap());

        const QFont before = settings->editorFont();
        QFont bigger = before;
        bigger.setPointSize(before.pointSize() + 7);
        settings->setEditorFont(bigger);
        for (int i = 0; i < 2; ++i)
            QCOMPARE(tabs.codeEditor(i)->font().pointSize(), bigger.pointSize());
        QCOMPARE(AppSettings::instance()->editorFont().pointSize(), bigger.pointSize());
        // A tab opened later starts with it too.
        tabs.openFile(QStringLiteral("wrap"), QStringLiteral("blob.bin"));
        QVERIFY(waitLoaded(tabs, 2));
        QCOMPARE(tabs.widget(2)->findChild<QPlainTextEdit *>()->font().pointSize(),
                 bigger.pointSize());
        settings->setEditorFont(before);
    }

    void tabTitleNamesTheSandboxWhenSeveral_data()
    {
        QTest::addColumn<bool>("modified");
        QTest::addColumn<bool>("several");
        QTest::addColumn<QString>("title");
        // clang-format off
        QTest::newRow("one") << false << false << "main.py";
        QTest::newRow("one, modified") << true << false << "main.py *";
        QTest::newRow("several") << false << true << "main.py — demo";
        QTest::newRow("several, modified") << true << true << "main.py — demo *";
        // clang-format on
    }

    void tabTitleNamesTheSandboxWhenSeveral()
    {
        QFETCH(bool, modified);
        QFETCH(bool, several);
        QFETCH(QString, title);
        QCOMPARE(FileTabs::tabTitle(QStringLiteral("main.py"), QStringLiteral("demo"), modified,
                                    several),
                 title);
    }

    void tabTitlesFollowTheSandboxCount()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("first"));
        FileTabs tabs(&c);
        tabs.openFile(QStringLiteral("first"), QStringLiteral("hello.py"));
        QVERIFY(waitLoaded(tabs, 0));
        QCOMPARE(tabs.tabText(0), QStringLiteral("hello.py"));
        startSandbox(c, QStringLiteral("second"));
        QCOMPARE(tabs.tabText(0), QStringLiteral("hello.py — first"));
        tabs.openFile(QStringLiteral("second"), QStringLiteral("hello.py"));
        QVERIFY(waitLoaded(tabs, 1));
        QCOMPARE(tabs.tabText(1), QStringLiteral("hello.py — second"));
        c.removeSandbox(QStringLiteral("second"));
        QTRY_COMPARE(tabs.tabText(0), QStringLiteral("hello.py"));
    }

    void opensTextWithHighlighterAndSaves()
    {
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("text"));
        FileTabs tabs(&c);
        QSignalSpy opened(&tabs, &FileTabs::fileOpened);
        tabs.openFile(QStringLiteral("text"), QStringLiteral("hello.py"));
        const int i = tabs.indexOf(QStringLiteral("text"), QStringLiteral("hello.py"));
        QCOMPARE(i, 0);
        QVERIFY(waitLoaded(tabs, i));
        QCOMPARE(tabs.tabKind(i), FileTabs::TabKind::Text);
        QCOMPARE(opened.size(), 1);
        QCOMPARE(tabs.editor(i)->toPlainText(), QStringLiteral("def hello():\n    return 1\n"));
        if (hasKSyntaxHighlighting())
            QVERIFY(tabs.highlighterName(i).startsWith(QStringLiteral("ksyntaxhighlighting:")));
        else
            QCOMPARE(tabs.highlighterName(i), QStringLiteral("builtin:python"));

        // Opening again focuses the same tab.
        tabs.openFile(QStringLiteral("text"), QStringLiteral("hello.py"));
        QCOMPARE(tabs.count(), 1);

        QVERIFY(!tabs.saveCurrent()); // nothing to save yet
        QPlainTextEdit *ed = tabs.editor(i);
        QTextCursor cursor = ed->textCursor();
        cursor.movePosition(QTextCursor::End);
        cursor.insertText(QStringLiteral("# edited\n"));
        QVERIFY(tabs.isTabModified(i));
        QVERIFY(tabs.tabText(i).endsWith(QLatin1Char('*')));

        QSignalSpy saved(&tabs, &FileTabs::fileSaved);
        QVERIFY(tabs.saveCurrent());
        QTRY_COMPARE(saved.size(), 1);
        QCOMPARE(readHostFile(root + QStringLiteral("/hello.py")),
                 QByteArray("def hello():\n    return 1\n# edited\n"));
        QVERIFY(!tabs.isTabModified(i));
        QCOMPARE(tabs.tabText(i), QStringLiteral("hello.py"));
    }

    void ksyntaxHighlightingDefinitionsAndThemes_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("definition");
        // clang-format off
        QTest::newRow("python") << "a.py" << "Python";
        QTest::newRow("cpp") << "a.cpp" << "C++";
        QTest::newRow("markdown") << "README.md" << "Markdown";
        QTest::newRow("cmake") << "CMakeLists.txt" << "CMake";
        QTest::newRow("json") << "package.json" << "JSON";
        // clang-format on
    }

    void ksyntaxHighlightingDefinitionsAndThemes()
    {
        if (!hasKSyntaxHighlighting())
            QSKIP("built without KSyntaxHighlighting (Debian 12); CI runs this in Debian 13");
        QFETCH(QString, file);
        QFETCH(QString, definition);
        QTextDocument light, dark;
        const QStringList l = attachHighlighter(&light, file, false).split(QLatin1Char(':'));
        const QStringList d = attachHighlighter(&dark, file, true).split(QLatin1Char(':'));
        QCOMPARE(l.value(0), QStringLiteral("ksyntaxhighlighting"));
        QCOMPARE(l.value(1), definition);
        QCOMPARE(d.value(1), definition);
        QVERIFY2(l.value(2) != d.value(2),
                 qPrintable(l.value(2) + QLatin1String(" vs ") + d.value(2)));
    }

    void paletteChangeRehighlights()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("palette"));
        FileTabs tabs(&c);
        QPalette light;
        light.setColor(QPalette::Base, Qt::white);
        light.setColor(QPalette::Text, Qt::black);
        tabs.setPalette(light);
        tabs.openFile(QStringLiteral("palette"), QStringLiteral("hello.py"));
        const int i = tabs.indexOf(QStringLiteral("palette"), QStringLiteral("hello.py"));
        QVERIFY(waitLoaded(tabs, i));
        QTextDocument *doc = tabs.editor(i)->document();
        // The colour of "def" under each palette.
        auto keywordColour = [&] {
            const QTextBlock block = doc->firstBlock();
            for (const QTextLayout::FormatRange &r : block.layout()->formats()) {
                if (r.start == 0)
                    return r.format.foreground().color();
            }
            return QColor();
        };
        QTRY_VERIFY(keywordColour().isValid());
        const QColor onLight = keywordColour();
        QPalette dark;
        dark.setColor(QPalette::Base, QColor(0x20, 0x20, 0x20));
        dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
        tabs.setPalette(dark);
        QTRY_VERIFY(keywordColour().isValid() && keywordColour() != onLight);
        // One highlighter per document, however often the palette changes.
        tabs.setPalette(light);
        QCOMPARE(doc->findChildren<QSyntaxHighlighter *>(Qt::FindDirectChildrenOnly).size(), 1);
        QTRY_COMPARE(keywordColour(), onLight);
    }

    void builtinHighlighterLanguages_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("python") << "a.py"
                                << "builtin:python";
        QTest::newRow("cpp") << "a.cpp"
                             << "builtin:cpp";
        QTest::newRow("c-header") << "a.h"
                                  << "builtin:cpp";
        QTest::newRow("js") << "a.js"
                            << "builtin:javascript";
        QTest::newRow("ts") << "a.ts"
                            << "builtin:typescript";
        QTest::newRow("json") << "a.json"
                              << "builtin:json";
        QTest::newRow("shell") << "a.sh"
                               << "builtin:shell";
        QTest::newRow("markdown") << "README.md"
                                  << "builtin:markdown";
        QTest::newRow("yaml") << "ci.yml"
                              << "builtin:yaml";
        QTest::newRow("cmake") << "CMakeLists.txt"
                               << "builtin:cmake";
        QTest::newRow("unknown") << "notes.txt"
                                 << "none";
    }

    void builtinHighlighterLanguages()
    {
        // Tested in every build: it is the fallback even where KSyntaxHighlighting exists.
        QFETCH(QString, file);
        QFETCH(QString, expected);
        QTextDocument doc;
        QCOMPARE(attachBuiltinHighlighter(&doc, file, false), expected);
        if (!hasKSyntaxHighlighting()) {
            QTextDocument viaDefault;
            QCOMPARE(attachHighlighter(&viaDefault, file, false), expected);
        }
        // Highlighting a multi-line comment/string must not hang or crash.
        doc.setPlainText(QStringLiteral("/* a\n b */ x = \"s\" # c\n'''\nq\n'''\n```\nz\n```\n"));
        QTextDocument dark;
        QCOMPARE(attachBuiltinHighlighter(&dark, file, true), expected);
        dark.setPlainText(doc.toPlainText());
    }

    void externalChangeReloadsUnmodifiedTab()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("ext"));
        FileTabs tabs(&c);
        tabs.setChangeCheckInterval(200);
        tabs.openFile(QStringLiteral("ext"), QStringLiteral("notes.txt"));
        QVERIFY(waitLoaded(tabs, 0));
        QPlainTextEdit *ed = tabs.editor(0);
        QTextCursor cursor = ed->textCursor();
        cursor.setPosition(4); // start of "two"
        ed->setTextCursor(cursor);

        // An agent writes through its tool.
        const AgentPtr agent = Agent::create(QStringLiteral("bot"));
        c.sandbox(QStringLiteral("ext"))->attach(agent);
        QSignalSpy reloaded(&tabs, &FileTabs::fileReloaded);
        agent->callTool(QStringLiteral("write_file"),
                        {{QStringLiteral("path"), QStringLiteral("notes.txt")},
                         {QStringLiteral("content"), QStringLiteral("one\nTWO\nthree\nfour\n")}});
        QTRY_COMPARE(reloaded.size(), 1);
        QCOMPARE(tabs.editor(0), ed); // same editor, reloaded in place
        QCOMPARE(ed->toPlainText(), QStringLiteral("one\nTWO\nthree\nfour\n"));
        QCOMPARE(ed->textCursor().position(), 4);
        QVERIFY(!tabs.isTabModified(0));
        QVERIFY(!tabs.hasChangePrompt(0));
    }

    void changeChecksReadOnlyChangedFiles()
    {
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("stat"));
        FileTabs tabs(&c);
        tabs.setChangeCheckInterval(30);
        tabs.openFile(QStringLiteral("stat"), QStringLiteral("notes.txt"));
        tabs.openFile(QStringLiteral("stat"), QStringLiteral("hello.py"));
        QVERIFY(waitLoaded(tabs, 0));
        QVERIFY(waitLoaded(tabs, 1));
        // Unchanged files: after at most one read each (a stamp not known yet), checks only
        // stat them, however many run.
        QTest::qWait(300);
        const int settled = tabs.changeReads();
        QVERIFY2(settled <= 2, qPrintable(QString::number(settled)));
        QTest::qWait(400);
        QCOMPARE(tabs.changeReads(), settled);

        // An agent rewrites one file with the same size: the mtime moved, it is read again.
        const AgentPtr agent = Agent::create(QStringLiteral("bot"));
        c.sandbox(QStringLiteral("stat"))->attach(agent);
        QSignalSpy reloaded(&tabs, &FileTabs::fileReloaded);
        QTest::qWait(5); // another millisecond than the version shown
        agent->callTool(QStringLiteral("write_file"),
                        {{QStringLiteral("path"), QStringLiteral("notes.txt")},
                         {QStringLiteral("content"), QStringLiteral("ONE\nTWO\nthree\n")}});
        QTRY_COMPARE(reloaded.size(), 1);
        QCOMPARE(tabs.editor(0)->toPlainText(), QStringLiteral("ONE\nTWO\nthree\n"));
        QTest::qWait(300);
        const int afterChange = tabs.changeReads();
        QVERIFY(afterChange > settled);
        QTest::qWait(300);
        QCOMPARE(tabs.changeReads(), afterChange);

        // A modified tab still gets the reload prompt, once, and Reload takes the new text.
        QPlainTextEdit *ed = tabs.editor(1);
        ed->setPlainText(QStringLiteral("mine\n"));
        ed->document()->setModified(true);
        QSignalSpy prompted(&tabs, &FileTabs::externalChangeDetected);
        writeHostFile(root + QStringLiteral("/hello.py"), "def hello():\n    return 2\n");
        QTRY_VERIFY(tabs.hasChangePrompt(1));
        QTest::qWait(300);
        QCOMPARE(prompted.size(), 1);
        tabs.reloadFromDisk(1);
        QCOMPARE(ed->toPlainText(), QStringLiteral("def hello():\n    return 2\n"));
        QVERIFY(!tabs.hasChangePrompt(1));

        // A vanished file: the tab says so (and keeps its text) instead of re-reading quietly.
        QVERIFY(QFile::remove(root + QStringLiteral("/notes.txt")));
        const auto statusShown = [&] {
            for (const QLabel *label : tabs.widget(0)->findChildren<QLabel *>()) {
                const QString text = label->text();
                if (!label->isHidden() && text.startsWith(QStringLiteral("Cannot re-read")) &&
                    text.contains(QStringLiteral("FileNotFoundError")))
                    return true;
            }
            return false;
        };
        QTRY_VERIFY(statusShown());
        QCOMPARE(tabs.editor(0)->toPlainText(), QStringLiteral("ONE\nTWO\nthree\n"));
    }

    void externalChangeToModifiedTabPrompts()
    {
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("mod"));
        FileTabs tabs(&c);
        tabs.setChangeCheckInterval(200);
        tabs.openFile(QStringLiteral("mod"), QStringLiteral("notes.txt"));
        QVERIFY(waitLoaded(tabs, 0));
        QPlainTextEdit *ed = tabs.editor(0);
        ed->setPlainText(QStringLiteral("my edits\n"));
        ed->document()->setModified(true);
        QVERIFY(tabs.isTabModified(0));

        const AgentPtr agent = Agent::create(QStringLiteral("bot"));
        c.sandbox(QStringLiteral("mod"))->attach(agent);
        QSignalSpy changed(&tabs, &FileTabs::externalChangeDetected);
        QSignalSpy reloaded(&tabs, &FileTabs::fileReloaded);
        agent->callTool(QStringLiteral("write_file"),
                        {{QStringLiteral("path"), QStringLiteral("notes.txt")},
                         {QStringLiteral("content"), QStringLiteral("agent version\n")}});
        QTRY_VERIFY(tabs.hasChangePrompt(0));
        QCOMPARE(changed.size(), 1);
        QCOMPARE(ed->toPlainText(), QStringLiteral("my edits\n")); // kept
        QVERIFY(tabs.isTabModified(0));
        // Later checks do not prompt again for the same content, nor touch the file.
        QTest::qWait(600);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(readHostFile(root + QStringLiteral("/notes.txt")), QByteArray("agent version\n"));

        // "Keep mine" hides the bar and keeps the edits.
        tabs.keepMine(0);
        QVERIFY(!tabs.hasChangePrompt(0));
        QCOMPARE(ed->toPlainText(), QStringLiteral("my edits\n"));
        QTest::qWait(600);
        QVERIFY(!tabs.hasChangePrompt(0));

        // A further change prompts again; "Reload" takes the file's content.
        agent->callTool(QStringLiteral("write_file"),
                        {{QStringLiteral("path"), QStringLiteral("notes.txt")},
                         {QStringLiteral("content"), QStringLiteral("agent v2\n")}});
        QTRY_VERIFY(tabs.hasChangePrompt(0));
        tabs.reloadFromDisk(0);
        QCOMPARE(ed->toPlainText(), QStringLiteral("agent v2\n"));
        QVERIFY(!tabs.isTabModified(0));
        QVERIFY(!tabs.hasChangePrompt(0));
        QCOMPARE(reloaded.size(), 1);
    }

    void binaryFileShowsHex()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("bin"));
        FileTabs tabs(&c);
        tabs.openFile(QStringLiteral("bin"), QStringLiteral("blob.bin"));
        QVERIFY(waitLoaded(tabs, 0));
        QCOMPARE(tabs.tabKind(0), FileTabs::TabKind::Hex);
        QVERIFY(!tabs.editor(0));
        QVERIFY(tabs.tabMessage(0).startsWith(QStringLiteral("00000000  7f 45 4c 46 00 01 02 ")));
        QVERIFY(tabs.tabMessage(0).contains(QStringLiteral("|.ELF...|")));
        QVERIFY(!tabs.saveCurrent());
    }

    void invalidUtf8IsBinary()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("latin"));
        c.writeFile(QStringLiteral("latin"), QStringLiteral("latin1.txt"), "caf\xe9\n");
        c.waitForIdle();
        FileTabs tabs(&c);
        tabs.openFile(QStringLiteral("latin"), QStringLiteral("latin1.txt"));
        QVERIFY(waitLoaded(tabs, 0));
        QCOMPARE(tabs.tabKind(0), FileTabs::TabKind::Hex);
    }

    void largeFileIsRefused()
    {
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("big"));
        {
            QFile f(root + QStringLiteral("/big.log"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            QVERIFY(f.resize(qint64(120) * 1024 * 1024)); // sparse
        }
        FileTabs tabs(&c);
        tabs.openFile(QStringLiteral("big"), QStringLiteral("big.log"));
        QVERIFY(waitLoaded(tabs, 0));
        QCOMPARE(tabs.tabKind(0), FileTabs::TabKind::Refused);
        QCOMPARE(tabs.tabMessage(0),
                 QStringLiteral("big.log is 120.0 MiB; files over 8.0 MiB are not opened here "
                                "— download it instead"));
    }

    void missingFileShowsError()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("missing"));
        FileTabs tabs(&c);
        QSignalSpy failed(&tabs, &FileTabs::fileError);
        tabs.openFile(QStringLiteral("missing"), QStringLiteral("nope.txt"));
        QVERIFY(waitLoaded(tabs, 0));
        QCOMPARE(tabs.tabKind(0), FileTabs::TabKind::Error);
        QCOMPARE(failed.size(), 1);
        QVERIFY(tabs.tabMessage(0).contains(QStringLiteral("nope.txt")));
    }

    void closingModifiedTabAsks()
    {
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("close"));
        FileTabs tabs(&c);
        tabs.openFile(QStringLiteral("close"), QStringLiteral("notes.txt"));
        QVERIFY(waitLoaded(tabs, 0));
        tabs.editor(0)->setPlainText(QStringLiteral("changed\n"));
        tabs.editor(0)->document()->setModified(true);

        auto answer = [](QMessageBox::StandardButton button) {
            QTimer::singleShot(50, [button] {
                auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
                if (box)
                    box->button(button)->click();
            });
        };
        answer(QMessageBox::Cancel);
        QVERIFY(!tabs.closeTab(0));
        QCOMPARE(tabs.count(), 1);

        QSignalSpy saved(&tabs, &FileTabs::fileSaved);
        answer(QMessageBox::Save);
        QVERIFY(tabs.closeTab(0));
        QTRY_COMPARE(tabs.count(), 0);
        QCOMPARE(saved.size(), 1);
        QCOMPARE(readHostFile(root + QStringLiteral("/notes.txt")), QByteArray("changed\n"));

        tabs.openFile(QStringLiteral("close"), QStringLiteral("notes.txt"));
        QVERIFY(waitLoaded(tabs, 0));
        tabs.editor(0)->setPlainText(QStringLiteral("discard me\n"));
        tabs.editor(0)->document()->setModified(true);
        answer(QMessageBox::Discard);
        QVERIFY(tabs.closeTab(0));
        QCOMPARE(tabs.count(), 0);
        QCOMPARE(readHostFile(root + QStringLiteral("/notes.txt")), QByteArray("changed\n"));
    }
};

QTEST_MAIN(TestFileTabs)
#include "tst_filetabs.moc"
