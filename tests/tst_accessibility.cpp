// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The window as assistive tools (and tests) see it: walks the QAccessible tree of the main
// window — every dock, the toolbar, a file tab with its find and go-to-line bars, the welcome
// page — and of every dialog (New Sandbox, Flush preview, Settings, Keyboard Shortcuts, About,
// a confirmation), and fails on an interactive control without an accessible name or one that
// the keyboard cannot reach (no Tab focus).

#include "auditlogmodel.h"
#include "confirm.h"
#include "filetabs.h"
#include "findbar.h"
#include "flushpreviewdialog.h"
#include "mainwindow.h"
#include "newsandboxdialog.h"
#include "sandboxcontroller.h"
#include "settingsdialog.h"
#include "shortcutsdialog.h"
#include "testutil.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAccessible>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QtTest>

#include <functional>

using namespace elsai;

namespace {

/// Roles a user acts on: each needs a name that says what it does.
bool isInteractive(QAccessible::Role role)
{
    switch (role) {
    case QAccessible::PushButton:
    case QAccessible::CheckBox:
    case QAccessible::RadioButton:
    case QAccessible::ComboBox:
    case QAccessible::EditableText:
    case QAccessible::SpinBox:
    case QAccessible::Slider:
    case QAccessible::ButtonMenu:
    case QAccessible::ButtonDropDown:
    case QAccessible::PageTab:
    case QAccessible::Table:
    case QAccessible::Tree:
    case QAccessible::List:
    case QAccessible::Link:
        return true;
    default:
        return false;
    }
}

QString describe(QAccessibleInterface *iface)
{
    QObject *o = iface->object();
    QStringList path;
    for (QObject *p = o; p; p = p->parent()) {
        if (!p->objectName().isEmpty())
            path.prepend(p->objectName());
        else if (p == o)
            path.prepend(QString::fromLatin1(p->metaObject()->className()));
    }
    return QStringLiteral("%1 (role %2, %3)")
        .arg(path.join(QLatin1Char('/')))
        .arg(int(iface->role()))
        .arg(o ? QString::fromLatin1(o->metaObject()->className()) : QStringLiteral("?"));
}

/// Widgets the keyboard reaches otherwise: tool buttons in toolbars and dock title bars (their
/// actions are in the menus), scroll bars (the view scrolls with the keys), the tab bar's
/// close buttons (Ctrl+W / the menu).
bool reachedOtherwise(const QWidget *w)
{
    if (qobject_cast<const QScrollBar *>(w))
        return true;
    if (qobject_cast<const QToolButton *>(w) || qobject_cast<const QAbstractButton *>(w)) {
        for (const QObject *p = w->parent(); p; p = p->parent()) {
            if (qobject_cast<const QToolBar *>(p) || qobject_cast<const QTabBar *>(p))
                return true;
            if (qobject_cast<const QDockWidget *>(p))
                return w->parent() == p; // the title bar's float / close buttons
        }
    }
    return false;
}

/// Read-only text views (command output, details) are displays: assistive tools read them
/// through the tree, and what one does with them has a button (Save output…); Tab passes them.
bool isReadOnlyText(const QWidget *w)
{
    const auto *text = qobject_cast<const QPlainTextEdit *>(w);
    return text && text->isReadOnly();
}

/// Problems of the visible part of the tree under `iface`, one line each.
void walk(QAccessibleInterface *iface, QStringList &problems, int depth = 0)
{
    if (!iface || !iface->isValid() || depth > 60)
        return;
    const QAccessible::State state = iface->state();
    if (state.invisible || state.offscreen)
        return;
    if (isInteractive(iface->role()) && iface->text(QAccessible::Name).trimmed().isEmpty())
        problems.append(QStringLiteral("no accessible name: ") + describe(iface));
    if (auto *w = qobject_cast<QWidget *>(iface->object());
        w && isInteractive(iface->role()) && w->isEnabled() && !reachedOtherwise(w) &&
        !isReadOnlyText(w) && !(w->focusPolicy() & Qt::TabFocus) &&
        iface->role() != QAccessible::PageTab)
        problems.append(QStringLiteral("not reachable with Tab: ") + describe(iface));
    // Rows and cells of item views are data, not controls: the view's name covers them.
    if (iface->role() == QAccessible::Table || iface->role() == QAccessible::Tree ||
        iface->role() == QAccessible::List)
        return;
    for (int i = 0; i < iface->childCount(); ++i)
        walk(iface->child(i), problems, depth + 1);
}

QStringList problemsOf(QWidget *widget)
{
    QStringList problems;
    walk(QAccessible::queryAccessibleInterface(widget), problems);
    problems.removeDuplicates();
    return problems;
}

} // namespace

class TestAccessibility : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    std::unique_ptr<SandboxController> m_controller;
    std::unique_ptr<MainWindow> m_window;
    const QString m_id = QStringLiteral("a11y");

    void check(QWidget *widget)
    {
        QVERIFY(widget);
        const QStringList problems = problemsOf(widget);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                           m_tmp.filePath(QStringLiteral("config")));
        const QString project = m_tmp.filePath(QStringLiteral("project"));
        test::writeHostFile(project + QStringLiteral("/README.md"), "# A11y\n");
        test::writeHostFile(project + QStringLiteral("/src/main.py"), "print(1)\n");
        m_controller = std::make_unique<SandboxController>();
        m_window = std::make_unique<MainWindow>(m_controller.get());
        m_window->resize(1280, 800);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        SandboxSpec spec;
        spec.workspaceId = m_id;
        spec.workspaceRoot = m_tmp.filePath(QStringLiteral("ws"));
        spec.seedFrom = project;
        m_controller->addSandbox(spec);
        QTRY_COMPARE(toString(m_controller->state(m_id)), toString(SessionState::Running));
        // Something in every panel: a command's block in the console, audit rows.
        m_controller->execute(m_id, QStringLiteral("echo hi"));
        QTRY_VERIFY(m_controller->auditModel()->rowCount() > 2);
    }

    void cleanupTestCase()
    {
        m_window.reset();
        if (m_controller)
            m_controller->waitForIdle();
        m_controller.reset();
    }

    void welcomePage() { check(m_window.get()); }

    // Every dock in front in turn (tabbed ones are behind their first tab otherwise).
    void everyDock()
    {
        for (QDockWidget *dock : m_window->findChildren<QDockWidget *>()) {
            dock->show();
            dock->raise();
            QCoreApplication::processEvents();
            check(dock);
        }
    }

    void fileTabWithItsBars()
    {
        FileTabs *tabs = m_window->fileTabs();
        tabs->openFile(m_id, QStringLiteral("src/main.py"));
        QTRY_COMPARE(tabs->tabKind(tabs->currentIndex()), FileTabs::TabKind::Text);
        tabs->showFindBar(true);
        QVERIFY(tabs->findBar(tabs->currentIndex())->isVisible());
        check(m_window.get());
        tabs->editAction(FileTabs::EditAction::GoToLine)->trigger();
        QVERIFY(tabs->goToLineBar(tabs->currentIndex())->isVisible());
        check(m_window.get());
    }

    void dialogs_data()
    {
        QTest::addColumn<QString>("action");
        QTest::addColumn<QString>("dialog");
        // clang-format off
        QTest::newRow("new sandbox") << "actionNewSandbox" << "NewSandboxDialog";
        QTest::newRow("flush preview") << "actionFlushPreview" << "FlushPreviewDialog";
        QTest::newRow("settings") << "actionSettings" << "settingsDialog";
        QTest::newRow("shortcuts") << "actionShortcuts" << "shortcutsDialog";
        QTest::newRow("about") << "actionAbout" << "aboutDialog";
        // clang-format on
    }

    void dialogs()
    {
        QFETCH(QString, action);
        QFETCH(QString, dialog);
        QAction *a = m_window->action(action);
        QVERIFY2(a && a->isEnabled(), qPrintable(action));
        a->trigger();
        QDialog *shown = nullptr;
        QTRY_VERIFY((shown = qobject_cast<QDialog *>(QApplication::activeModalWidget())));
        QVERIFY2(shown->objectName() == dialog ||
                     QString::fromLatin1(shown->metaObject()->className()).endsWith(dialog),
                 qPrintable(shown->objectName()));
        QTRY_VERIFY(shown->isVisible());
        QCoreApplication::processEvents();
        check(shown);
        shown->reject();
        QTRY_VERIFY(!QApplication::activeModalWidget());
    }

    void confirmation()
    {
        // The question box itself (ui/confirm.h), answered once walked.
        QStringList problems;
        bool seen = false;
        QTimer::singleShot(0, this, [&] {
            QTRY_VERIFY(QApplication::activeModalWidget());
            auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
            QVERIFY(box);
            seen = true;
            problems = problemsOf(box);
            box->reject();
        });
        Confirmation q;
        q.kind = QStringLiteral("delete");
        q.title = QStringLiteral("Delete");
        q.text = QStringLiteral("Delete these?");
        q.items = {QStringLiteral("a.txt")};
        q.acceptText = QStringLiteral("Delete");
        QCOMPARE(confirm(m_window.get(), q), ConfirmAnswer::Cancel);
        QVERIFY(seen);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
    }
};

QTEST_MAIN(TestAccessibility)
#include "tst_accessibility.moc"
