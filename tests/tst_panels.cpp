// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

// The panels that answer "what happened?": Changes, Inspect and Audit, offscreen.

#include "auditlogmodel.h"
#include "auditpanel.h"
#include "changesmodel.h"
#include "changespanel.h"
#include "diffview.h"
#include "filediff.h"
#include "inspectpanel.h"
#include "messagebar.h"
#include "modelroles.h"
#include "resourcesampler.h"
#include "sandboxcontroller.h"
#include "testutil.h"
#include "tonecolors.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QAccessible>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QDesktopServices>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextLayout>
#include <QTreeWidget>
#include <QtTest>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

/// Receives the URLs QDesktopServices would open (no file manager in a test).
class UrlCatcher : public QObject
{
    Q_OBJECT
public:
    QList<QUrl> urls;
public Q_SLOTS:
    void open(const QUrl &url) { urls.append(url); }
};

namespace {

bool sameColour(const QColor &a, const QColor &b)
{
    return qAbs(a.red() - b.red()) <= 3 && qAbs(a.green() - b.green()) <= 3 &&
           qAbs(a.blue() - b.blue()) <= 3;
}

/// The background the highlighter gave the first block that starts with `prefix`.
QColor blockBackground(QPlainTextEdit *view, const QString &prefix)
{
    for (QTextBlock b = view->document()->begin(); b.isValid(); b = b.next()) {
        if (!b.text().startsWith(prefix))
            continue;
        for (const QTextLayout::FormatRange &r : b.layout()->formats()) {
            if (r.format.hasProperty(QTextFormat::BackgroundBrush))
                return r.format.background().color();
        }
        return {};
    }
    return {};
}

/// Controls a person operates; those inside another (a combo box's editor) are its parts.
bool isControl(const QWidget *w)
{
    return qobject_cast<const QAbstractButton *>(w) || qobject_cast<const QLineEdit *>(w) ||
           qobject_cast<const QComboBox *>(w) || qobject_cast<const QAbstractItemView *>(w) ||
           qobject_cast<const QPlainTextEdit *>(w) || qobject_cast<const QAbstractSpinBox *>(w);
}

QStringList unnamedControls(QWidget *root)
{
    QStringList unnamed;
    for (QWidget *w : root->findChildren<QWidget *>()) {
        if (!isControl(w))
            continue;
        bool part = false;
        for (QWidget *p = w->parentWidget(); p && p != root; p = p->parentWidget())
            part = part || isControl(p);
        if (part)
            continue;
        QAccessibleInterface *iface = QAccessible::queryAccessibleInterface(w);
        if (!iface || iface->text(QAccessible::Name).trimmed().isEmpty())
            unnamed.append(QString::fromLatin1(w->metaObject()->className()) + QLatin1Char(' ') +
                           w->objectName());
    }
    return unnamed;
}

AuditEvent auditEvent(const QString &name, const QString &outcome, const QDateTime &when,
                      const QJsonObject &fields = {})
{
    static qint64 sequence = 1000;
    AuditEvent e;
    e.timestamp = when.toUTC();
    e.event = name;
    e.workspaceId = QStringLiteral("ws");
    e.actor = QStringLiteral("agent");
    e.outcome = outcome;
    e.fields = fields;
    e.sequence = ++sequence;
    return e;
}

} // namespace

class TestPanels : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;

    SandboxSpec spec(const QString &id)
    {
        SandboxSpec s;
        s.workspaceId = id;
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("ws-%1").arg(++m_n));
        const QString project = m_tmp.filePath(QStringLiteral("project-%1").arg(m_n));
        writeHostFile(project + QStringLiteral("/a.txt"), "one\ntwo\nthree\n");
        writeHostFile(project + QStringLiteral("/b.txt"), "bee\n");
        s.seedFrom = project;
        return s;
    }

    static bool waitStarted(SandboxController &c, const QString &id)
    {
        return QTest::qWaitFor([&] { return c.state(id) == SessionState::Running; }, 20000);
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void changesPanelFollowsWritesAndDeletes()
    {
        SandboxController c;
        const SandboxSpec s = spec(QStringLiteral("changes"));
        c.addSandbox(s);
        QVERIFY(waitStarted(c, s.workspaceId));
        ChangesPanel panel(&c);
        QAbstractItemModelTester tester(panel.proxy(),
                                        QAbstractItemModelTester::FailureReportingMode::Fatal);
        QSignalSpy resets(panel.model(), &QAbstractItemModel::modelReset);
        panel.setWorkspace(s.workspaceId);
        panel.resize(1000, 400);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QTRY_VERIFY(panel.summaryLabel()->text().contains(QStringLiteral("0 added")));
        QVERIFY(panel.summaryLabel()->text().contains(s.seedFrom.value()));

        // A write appears, then a delete.
        c.writeFile(s.workspaceId, QStringLiteral("a.txt"), "one\nTWO\nthree\n");
        c.writeFile(s.workspaceId, QStringLiteral("new.txt"), "fresh\n");
        QTRY_COMPARE(panel.proxy()->rowCount(), 2);
        c.deleteFiles(s.workspaceId, {QStringLiteral("b.txt")});
        QTRY_COMPARE(panel.proxy()->rowCount(), 3);
        QTRY_VERIFY(panel.summaryLabel()->text().startsWith(
            QStringLiteral("1 added · 1 modified · 1 deleted")));
        auto rowOf = [&panel](const QString &path) {
            for (int r = 0; r < panel.proxy()->rowCount(); ++r) {
                if (panel.proxy()->index(r, 0).data(Roles::PathRole).toString() == path)
                    return r;
            }
            return -1;
        };
        // The kind of change is coloured by its tone.
        const auto foreground = [&](const QString &path) {
            return panel.proxy()
                ->index(rowOf(path), ChangesModel::ChangeColumn)
                .data(Qt::ForegroundRole)
                .value<QColor>();
        };
        QCOMPARE(foreground(QStringLiteral("new.txt")),
                 toneForeground(panel.view()->palette(), Tone::Positive));
        QCOMPARE(foreground(QStringLiteral("b.txt")),
                 toneForeground(panel.view()->palette(), Tone::Negative));

        // The selected file's diff, coloured line by line.
        QSignalSpy diffed(&panel, &ChangesPanel::diffReady);
        panel.view()->setCurrentIndex(panel.proxy()->index(rowOf(QStringLiteral("a.txt")), 0));
        QTRY_COMPARE(diffed.size(), 1);
        DiffView *diff = panel.diffView();
        QVERIFY2(diff->toPlainText().contains(QStringLiteral("-two\n+TWO\n")),
                 qPrintable(diff->toPlainText()));
        const QColor added = blockBackground(diff, QStringLiteral("+TWO"));
        const QColor removed = blockBackground(diff, QStringLiteral("-two"));
        QCOMPARE(added, diff->lineFormat(DiffView::LineKind::Added).background().color());
        QCOMPARE(removed, diff->lineFormat(DiffView::LineKind::Removed).background().color());
        QVERIFY(added != removed);
        QVERIFY(added != diff->palette().color(QPalette::Base));
        QVERIFY(!blockBackground(diff, QStringLiteral(" one")).isValid()); // context: plain

        // The selected file changes again: its diff follows.
        c.writeFile(s.workspaceId, QStringLiteral("a.txt"), "one\nTWO\nthree\nfour\n");
        QTRY_VERIFY(diff->toPlainText().contains(QStringLiteral("+four")));

        // Filter by path.
        panel.filterEdit()->setText(QStringLiteral("NEW"));
        QCOMPARE(panel.proxy()->rowCount(), 1);
        panel.filterEdit()->clear();
        QCOMPARE(panel.proxy()->rowCount(), 3);

        // Hidden: not scanned.
        panel.hide();
        QVERIFY(!panel.model()->isActive());
        QCOMPARE(resets.size(), 0);
        QVERIFY2(unnamedControls(&panel).isEmpty(), qPrintable(unnamedControls(&panel).join(", ")));
    }

    // A theme change recolours the diff (the colours derive from the palette).
    void diffColoursFollowThePalette()
    {
        DiffView view;
        FileDiff d;
        d.kind = FileDiff::Kind::Text;
        d.body = QStringLiteral("--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n");
        view.setDiff(d);
        const QColor light = blockBackground(&view, QStringLiteral("+y"));
        QPalette dark = view.palette();
        dark.setColor(QPalette::Base, QColor(0x23, 0x26, 0x29));
        dark.setColor(QPalette::Text, QColor(0xef, 0xf0, 0xf1));
        view.setPalette(dark);
        const QColor darkAdded = blockBackground(&view, QStringLiteral("+y"));
        QVERIFY(darkAdded != light);
        QVERIFY(darkAdded.lightnessF() < 0.5); // still a dark background
        QCOMPARE(darkAdded, toneBackground(dark, Tone::Positive));
    }

    void inspectPanelFieldsAndFolderActions()
    {
        SandboxController c;
        const SandboxSpec s = spec(QStringLiteral("inspect"));
        c.addSandbox(s);
        QVERIFY(waitStarted(c, s.workspaceId));
        InspectPanel panel(&c);
        panel.setWorkspace(s.workspaceId);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QString folder = QDir(s.workspaceRoot).absolutePath();
        QCOMPARE(panel.field(QStringLiteral("backend")), QStringLiteral("LocalSandboxBackend"));
        QCOMPARE(panel.field(QStringLiteral("folder")), folder);
        QCOMPARE(panel.field(QStringLiteral("seed")), s.seedFrom.value());
        QCOMPARE(panel.field(QStringLiteral("sync")), s.seedFrom.value()); // sync_dest: seed
        QVERIFY(panel.field(QStringLiteral("ttl")).startsWith(formatDuration(7200)));
        QVERIFY(panel.field(QStringLiteral("ttl")).contains(QStringLiteral("more idle")));
        QVERIFY(panel.field(QStringLiteral("idle")) != QStringLiteral("—"));
        QVERIFY(panel.field(QStringLiteral("timeout")).contains(formatDuration(120)));
        // sizes everywhere in the window: one decimal ("97.7 KiB" for 100,000 bytes)
        QVERIFY(panel.field(QStringLiteral("outputCap"))
                    .contains(QLocale().formattedDataSize(s.local.maxOutputBytes, 1)));
        QTRY_VERIFY(
            panel.field(QStringLiteral("agents")).contains(QStringLiteral("console (read-write)")));
        QVERIFY(panel.field(QStringLiteral("mcp")).contains(QStringLiteral("not serving")));
        QTRY_COMPARE(panel.field(QStringLiteral("resources")),
                     QStringLiteral("no command running"));

        // Copy Path puts the folder on the clipboard; Open hands it to the desktop.
        QApplication::clipboard()->clear();
        panel.copyPathButton()->click();
        QCOMPARE(QApplication::clipboard()->text(), folder);
        UrlCatcher catcher;
        QDesktopServices::setUrlHandler(QStringLiteral("file"), &catcher, "open");
        QVERIFY(panel.openFolderButton()->isEnabled());
        panel.openFolderButton()->click();
        QDesktopServices::unsetUrlHandler(QStringLiteral("file"));
        QCOMPARE(catcher.urls, QList<QUrl>{QUrl::fromLocalFile(folder)});

        // A running command's processes, live.
        panel.sampler()->setIntervalMs(50);
        const quint64 id = c.execute(s.workspaceId, QStringLiteral("sleep 30"));
        QTRY_VERIFY2(
            panel.field(QStringLiteral("resources")).startsWith(QStringLiteral("1 running")),
            qPrintable(panel.field(QStringLiteral("resources"))));
        QVERIFY(panel.field(QStringLiteral("resources")).contains(QStringLiteral("CPU")));
        c.cancelCommand(id);
        QTRY_COMPARE(panel.field(QStringLiteral("resources")),
                     QStringLiteral("no command running"));

        // No sandbox: every field says so, nothing to open.
        panel.setWorkspace(QString());
        QCOMPARE(panel.field(QStringLiteral("folder")), QStringLiteral("—"));
        QVERIFY(!panel.openFolderButton()->isEnabled());
        QVERIFY2(unnamedControls(&panel).isEmpty(), qPrintable(unnamedControls(&panel).join(", ")));
    }

    void auditPanelFiltersColoursAndExport()
    {
        SandboxController c;
        AuditPanel panel(&c);
        AuditLogModel *log = c.auditModel();
        log->clear();
        const QDateTime now = QDateTime::currentDateTime();
        const QList<AuditEvent> events = {
            auditEvent(QStringLiteral("sandbox.read_file"), QStringLiteral("ok"), now.addDays(-3)),
            auditEvent(QStringLiteral("sandbox.write_file"), QStringLiteral("denied"),
                       now.addSecs(-30 * 60)),
            auditEvent(
                QStringLiteral("sandbox.execute"), QStringLiteral("error"), now.addSecs(-10),
                {{QStringLiteral("error_type"), QStringLiteral("TimeoutError")},
                 {QStringLiteral("paths"), QJsonArray{QStringLiteral("a"), QStringLiteral("b")}}}),
            auditEvent(QStringLiteral("sandbox.list_dir"), QStringLiteral("ok"), now),
        };
        for (const AuditEvent &e : events)
            log->append(e);
        log->flush();
        QAbstractItemModelTester tester(panel.proxy(),
                                        QAbstractItemModelTester::FailureReportingMode::Fatal);
        panel.resize(1200, 400);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QCOMPARE(panel.proxy()->rowCount(), 4);

        // Time ranges.
        panel.setTimeRange(AuditPanel::TimeRange::Last5Minutes);
        QCOMPARE(panel.proxy()->rowCount(), 2);
        panel.setTimeRange(AuditPanel::TimeRange::LastHour);
        QCOMPARE(panel.proxy()->rowCount(), 3);
        panel.setTimeRange(AuditPanel::TimeRange::Today);
        int today = 0;
        for (const AuditEvent &e : events)
            today += e.timestamp.toLocalTime().date() == now.date();
        QCOMPARE(panel.proxy()->rowCount(), today);
        panel.setTimeRange(AuditPanel::TimeRange::Custom);
        QVERIFY(panel.fromEdit()->isVisible() && panel.toEdit()->isVisible());
        panel.fromEdit()->setDateTime(now.addDays(-4));
        panel.toEdit()->setDateTime(now.addDays(-2));
        QCOMPARE(panel.proxy()->rowCount(), 1);
        QCOMPARE(panel.proxy()->index(0, 0).data(Roles::EventNameRole).toString(),
                 QStringLiteral("sandbox.read_file"));
        panel.setTimeRange(AuditPanel::TimeRange::All);
        QVERIFY(!panel.fromEdit()->isVisible());
        QCOMPARE(panel.proxy()->rowCount(), 4);

        // Denied and error rows are coloured; ok rows are not.
        QCOMPARE(AuditPanel::outcomeTone(QStringLiteral("error")), Tone::Negative);
        QCOMPARE(AuditPanel::outcomeTone(QStringLiteral("denied")), Tone::Neutral);
        QVERIFY(!AuditPanel::outcomeTone(QStringLiteral("ok")));
        panel.view()->clearSelection();
        QCoreApplication::processEvents();
        const QImage shot = panel.view()->viewport()->grab().toImage();
        const QPalette &pal = panel.view()->palette();
        auto rowColour = [&](int row) {
            const QRect cell =
                panel.view()->visualRect(panel.proxy()->index(row, AuditLogModel::WorkspaceColumn));
            return shot.pixelColor(cell.right() - 3, cell.center().y());
        };
        QVERIFY(sameColour(rowColour(1), toneBackground(pal, Tone::Neutral)));
        QVERIFY(sameColour(rowColour(2), toneBackground(pal, Tone::Negative)));
        QVERIFY(!sameColour(rowColour(0), toneBackground(pal, Tone::Negative)));
        QVERIFY(!sameColour(rowColour(0), toneBackground(pal, Tone::Neutral)));

        // The record as a form: the error first, lists one item per line.
        panel.view()->setCurrentIndex(panel.proxy()->index(2, 0));
        QTreeWidget *form = panel.recordView();
        QMap<QString, QString> fields;
        for (int i = 0; i < form->topLevelItemCount(); ++i)
            fields.insert(form->topLevelItem(i)->text(0), form->topLevelItem(i)->text(1));
        QCOMPARE(fields.value(QStringLiteral("Outcome")), QStringLiteral("error"));
        QCOMPARE(fields.value(QStringLiteral("Event")), QStringLiteral("sandbox.execute"));
        QCOMPARE(fields.value(QStringLiteral("error type")), QStringLiteral("TimeoutError"));
        QCOMPARE(fields.value(QStringLiteral("paths")), QStringLiteral("a\nb"));
        QCOMPARE(form->topLevelItem(5)->text(0), QStringLiteral("error type"));
        QVERIFY(panel.details()->toPlainText().contains(QStringLiteral("\"TimeoutError\"")));

        // Export says what it wrote.
        panel.outcomeBox()->setCurrentIndex(panel.outcomeBox()->findData(QStringLiteral("ok")));
        QCOMPARE(panel.proxy()->rowCount(), 2);
        const QString path = m_tmp.filePath(QStringLiteral("export.jsonl"));
        QVERIFY(panel.exportAndConfirm(path));
        QCOMPARE(readHostFile(path).count('\n'), 2);
        QVERIFY(panel.messageBar()->isVisibleTo(&panel));
        QCOMPARE(
            panel.messageBar()->text(),
            QStringLiteral("Wrote 2 audit record(s) to %1").arg(QDir::toNativeSeparators(path)));
        QVERIFY(!panel.exportAndConfirm(m_tmp.filePath(QStringLiteral("no/such/dir/x.jsonl"))));
        QVERIFY(panel.messageBar()->text().contains(QStringLiteral("not exported")));
        QVERIFY2(unnamedControls(&panel).isEmpty(), qPrintable(unnamedControls(&panel).join(", ")));
    }
};

QTEST_MAIN(TestPanels)
#include "tst_panels.moc"
