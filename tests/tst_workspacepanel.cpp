// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "modelroles.h"
#include "sandboxcontroller.h"
#include "testutil.h"
#include "workspacepanel.h"
#include "workspacetreemodel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QMimeData>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <unistd.h>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

class TestWorkspacePanel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;

    QString startSandbox(SandboxController &c, const QString &id)
    {
        const QString project = m_tmp.filePath(QStringLiteral("project-%1").arg(++m_n));
        writeHostFile(project + QStringLiteral("/src/app.py"), "print('app')\n");
        writeHostFile(project + QStringLiteral("/README.md"), "# demo\n");
        SandboxSpec s;
        s.workspaceId = id;
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("ws-%1").arg(m_n));
        s.seedFrom = project;
        c.addSandbox(s);
        if (!QTest::qWaitFor([&] { return c.state(id) == SessionState::Running; }, 20000))
            qFatal("sandbox did not start");
        return s.workspaceRoot;
    }

    /// Names shown under a folder of the view (through the panel's proxy).
    static QStringList shown(WorkspacePanel &panel, const QString &folder = QString())
    {
        QAbstractItemModel *model = panel.view()->model();
        QModelIndex parent;
        if (!folder.isEmpty()) {
            for (int r = 0; r < model->rowCount(); ++r) {
                const QModelIndex i = model->index(r, 0);
                if (i.data(Roles::PathRole).toString() == folder)
                    parent = i;
            }
            if (!parent.isValid())
                return {QStringLiteral("<no folder %1>").arg(folder)};
            if (model->canFetchMore(parent))
                model->fetchMore(parent);
        }
        QStringList names;
        for (int r = 0; r < model->rowCount(parent); ++r)
            names.append(model->index(r, 0, parent).data(Qt::DisplayRole).toString());
        names.sort();
        return names;
    }

    static QModelIndex viewIndex(WorkspacePanel &panel, const QString &path)
    {
        auto *tree = static_cast<WorkspaceTreeModel *>(
            static_cast<QAbstractProxyModel *>(panel.view()->model())->sourceModel());
        return static_cast<QAbstractProxyModel *>(panel.view()->model())
            ->mapFromSource(tree->indexForPath(path));
    }

    static void select(WorkspacePanel &panel, const QStringList &paths)
    {
        QItemSelectionModel *sel = panel.view()->selectionModel();
        sel->clearSelection();
        for (const QString &p : paths) {
            const QModelIndex i = viewIndex(panel, p);
            QVERIFY2(i.isValid(), qPrintable(p));
            sel->select(i, QItemSelectionModel::Select | QItemSelectionModel::Rows);
            sel->setCurrentIndex(i, QItemSelectionModel::NoUpdate);
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_tmp.isValid());
    }

    void showsTreeWithColumns()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("tree"));
        WorkspacePanel panel(&c);
        panel.setWorkspace(QStringLiteral("tree"));
        QCOMPARE(panel.workspaceId(), QStringLiteral("tree"));
        QTRY_COMPARE(shown(panel),
                     (QStringList{QStringLiteral("README.md"), QStringLiteral("src")}));
        QTRY_COMPARE(shown(panel, QStringLiteral("src")), QStringList{QStringLiteral("app.py")});
        QAbstractItemModel *m = panel.view()->model();
        QCOMPARE(m->columnCount(), 4);
        QCOMPARE(m->headerData(0, Qt::Horizontal).toString(), QStringLiteral("Name"));
        QCOMPARE(m->headerData(3, Qt::Horizontal).toString(), QStringLiteral("Type"));
        QCOMPARE(panel.view()->selectionMode(), QAbstractItemView::ExtendedSelection);
        const QModelIndex readme = viewIndex(panel, QStringLiteral("README.md"));
        QVERIFY(!readme.data(Qt::DecorationRole).isNull());
        QVERIFY(readme.data(Qt::FontRole).isNull()); // seeded, unchanged

        // Unknown workspace: empty view, actions disabled.
        panel.setWorkspace(QStringLiteral("nope"));
        QCOMPARE(panel.view()->model()->rowCount(), 0);
        QVERIFY(!panel.action(WorkspacePanel::Action::NewFile)->isEnabled());
    }

    void addDeleteRenameNewFolder()
    {
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("ops"));
        WorkspacePanel panel(&c);
        panel.setWorkspace(QStringLiteral("ops"));
        QTRY_VERIFY(shown(panel).contains(QStringLiteral("src")));

        // Add a host file into a folder.
        const QString host = m_tmp.filePath(QStringLiteral("host/extra.txt"));
        writeHostFile(host, "extra\n");
        QSignalSpy added(&panel, &WorkspacePanel::filesAdded);
        panel.addHostPaths({host}, QStringLiteral("src"));
        QTRY_COMPARE(added.size(), 1);
        QCOMPARE(added.first().at(1).toStringList(), QStringList{QStringLiteral("src/extra.txt")});
        QTRY_VERIFY(shown(panel, QStringLiteral("src")).contains(QStringLiteral("extra.txt")));
        QCOMPARE(readHostFile(root + QStringLiteral("/src/extra.txt")), QByteArray("extra\n"));
        // A file added since seeding is marked (bold).
        QTRY_VERIFY(viewIndex(panel, QStringLiteral("src/extra.txt"))
                        .data(Qt::FontRole)
                        .value<QFont>()
                        .bold());

        // New folder, new file.
        panel.newFolder(QStringLiteral("docs/api"));
        QTRY_VERIFY(shown(panel).contains(QStringLiteral("docs")));
        panel.newFile(QStringLiteral("docs/todo.txt"));
        QTRY_VERIFY(shown(panel, QStringLiteral("docs")).contains(QStringLiteral("todo.txt")));
        QVERIFY(QFileInfo(root + QStringLiteral("/docs/api")).isDir());
        QCOMPARE(readHostFile(root + QStringLiteral("/docs/todo.txt")), QByteArray());

        // Rename / move.
        panel.renamePath(QStringLiteral("README.md"), QStringLiteral("docs/README.md"));
        QTRY_VERIFY(!shown(panel).contains(QStringLiteral("README.md")));
        QTRY_VERIFY(shown(panel, QStringLiteral("docs")).contains(QStringLiteral("README.md")));
        QCOMPARE(readHostFile(root + QStringLiteral("/docs/README.md")), QByteArray("# demo\n"));

        // Delete (multi-selection through the selection model).
        select(panel, {QStringLiteral("src/extra.txt"), QStringLiteral("src/app.py")});
        QCOMPARE(panel.selectedPaths().size(), 2);
        panel.deletePaths(panel.selectedPaths());
        QTRY_COMPARE(shown(panel, QStringLiteral("src")), QStringList());
        QVERIFY(!QFileInfo::exists(root + QStringLiteral("/src/app.py")));
    }

    void dropAddsFilesAndFoldersSkippingSymlinks()
    {
        SandboxController c;
        const QString root = startSandbox(c, QStringLiteral("drop"));
        WorkspacePanel panel(&c);
        panel.resize(400, 300);
        panel.show();
        panel.setWorkspace(QStringLiteral("drop"));
        QTRY_VERIFY(shown(panel).contains(QStringLiteral("src")));

        const QString dir = m_tmp.filePath(QStringLiteral("dropped"));
        writeHostFile(dir + QStringLiteral("/a.txt"), "a\n");
        writeHostFile(dir + QStringLiteral("/sub/b.txt"), "b\n");
        writeHostFile(m_tmp.filePath(QStringLiteral("secret.txt")), "secret\n");
        QVERIFY(::symlink(qPrintable(m_tmp.filePath(QStringLiteral("secret.txt"))),
                          qPrintable(dir + QStringLiteral("/link.txt"))) == 0);
        QVERIFY(::symlink(qPrintable(m_tmp.path()), qPrintable(dir + QStringLiteral("/up"))) == 0);
        const QString single = m_tmp.filePath(QStringLiteral("single.md"));
        writeHostFile(single, "s\n");

        auto *mime = new QMimeData;
        mime->setUrls({QUrl::fromLocalFile(dir), QUrl::fromLocalFile(single)});
        QSignalSpy added(&panel, &WorkspacePanel::filesAdded);
        // Dropped on empty space below the rows: into the root.
        const QPoint pos(5, panel.view()->viewport()->height() - 3);
        QDragEnterEvent enter(pos, Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(panel.view()->viewport(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(pos), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(panel.view()->viewport(), &drop);
        QVERIFY(drop.isAccepted());
        QTRY_COMPARE(added.size(), 1);
        QStringList paths = added.first().at(1).toStringList();
        paths.sort();
        QCOMPARE(paths,
                 (QStringList{QStringLiteral("dropped/a.txt"), QStringLiteral("dropped/sub/b.txt"),
                              QStringLiteral("single.md")}));
        QCOMPARE(readHostFile(root + QStringLiteral("/dropped/sub/b.txt")), QByteArray("b\n"));
        QVERIFY(!QFileInfo::exists(root + QStringLiteral("/dropped/link.txt")));
        QVERIFY(!QFileInfo::exists(root + QStringLiteral("/dropped/up")));
        QTRY_VERIFY(shown(panel).contains(QStringLiteral("dropped")));
        delete mime;
    }

    void copyPathAndDownload()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("copy"));
        WorkspacePanel panel(&c);
        panel.setWorkspace(QStringLiteral("copy"));
        QTRY_VERIFY(shown(panel, QStringLiteral("src")).contains(QStringLiteral("app.py")));
        select(panel, {QStringLiteral("src/app.py")});
        QCOMPARE(panel.targetFolder(), QStringLiteral("src"));
        panel.action(WorkspacePanel::Action::CopyPath)->trigger();
        QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("src/app.py"));

        const QString dest = m_tmp.filePath(QStringLiteral("downloads"));
        QDir().mkpath(dest);
        auto f = panel.downloadTo(panel.selectedPaths(), dest);
        f.waitForFinished();
        QCOMPARE(f.result(), QStringList{QStringLiteral("src/app.py")});
        QCOMPARE(readHostFile(dest + QStringLiteral("/app.py")), QByteArray("print('app')\n"));
    }

    void activationAndErrors()
    {
        SandboxController c;
        startSandbox(c, QStringLiteral("act"));
        WorkspacePanel panel(&c);
        panel.setWorkspace(QStringLiteral("act"));
        QTRY_VERIFY(shown(panel).contains(QStringLiteral("README.md")));
        QSignalSpy activated(&panel, &WorkspacePanel::fileActivated);
        Q_EMIT panel.view()->activated(viewIndex(panel, QStringLiteral("README.md")));
        Q_EMIT panel.view()->activated(viewIndex(panel, QStringLiteral("src"))); // folder: no
        QCOMPARE(activated.size(), 1);
        QCOMPARE(activated.first().at(1).toString(), QStringLiteral("README.md"));
        select(panel, {QStringLiteral("README.md")});
        panel.action(WorkspacePanel::Action::Open)->trigger();
        QCOMPARE(activated.size(), 2);

        // A refused operation shows in the panel's error line.
        panel.renamePath(QStringLiteral("README.md"), QStringLiteral("../escape.md"));
        QTRY_VERIFY(!panel.errorText().isEmpty());
        QVERIFY(panel.errorText().contains(QStringLiteral("move_file")));
    }
};

QTEST_MAIN(TestWorkspacePanel)
#include "tst_workspacepanel.moc"
