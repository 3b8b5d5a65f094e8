// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "errors.h"
#include "modelroles.h"
#include "workspacefs.h"
#include "workspacetreemodel.h"

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QMutex>
#include <QPromise>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QTimer>
#include <QWaitCondition>
#include <QtConcurrent>
#include <QtTest>

#include <stdexcept>

using namespace elsai;

namespace {

constexpr qint64 kMtime = 1700000000000; // ms

FileInfo fileInfo(const QString &path, qint64 size, qint64 mtimeMs = kMtime,
                  FileInfo::Type type = FileInfo::Type::File)
{
    FileInfo info;
    info.path = path;
    info.type = type;
    if (type == FileInfo::Type::File)
        info.size = size;
    info.mtimeMs = mtimeMs;
    return info;
}

FileInfo dirInfo(const QString &path)
{
    FileInfo info;
    info.path = path;
    info.isDir = true;
    info.type = FileInfo::Type::Directory;
    info.mtimeMs = kMtime;
    return info;
}

QString parentOf(const QString &path)
{
    const qsizetype slash = path.lastIndexOf(u'/');
    return slash < 0 ? QString() : path.left(slash);
}

/// In-memory workspace. Listings run on a private pool; a held path blocks its listing (after
/// it took its snapshot) until released, so tests can change things while it is in flight.
class FakeFs
{
public:
    FakeFs()
    {
        m_dirs.insert(QString(), {});
        m_pool.setMaxThreadCount(8);
    }
    ~FakeFs()
    {
        {
            QMutexLocker lock(&m_mutex);
            m_held.clear();
            m_released.wakeAll();
        }
        m_pool.waitForDone();
    }

    void addFile(const QString &path, qint64 size, qint64 mtimeMs = kMtime,
                 FileInfo::Type type = FileInfo::Type::File)
    {
        QMutexLocker lock(&m_mutex);
        put(fileInfo(path, size, mtimeMs, type));
    }
    void addDir(const QString &path)
    {
        QMutexLocker lock(&m_mutex);
        put(dirInfo(path));
    }
    void remove(const QString &path)
    {
        QMutexLocker lock(&m_mutex);
        erase(path);
    }
    void setFailing(const QString &path, bool failing)
    {
        QMutexLocker lock(&m_mutex);
        if (failing)
            m_failing.insert(path);
        else
            m_failing.remove(path);
    }
    void hold(const QString &path)
    {
        QMutexLocker lock(&m_mutex);
        m_held.insert(path);
    }
    void release(const QString &path)
    {
        QMutexLocker lock(&m_mutex);
        m_held.remove(path);
        m_released.wakeAll();
    }
    bool isWaiting(const QString &path) const
    {
        QMutexLocker lock(&m_mutex);
        return m_waiting.contains(path);
    }
    QHash<QString, int> calls() const
    {
        QMutexLocker lock(&m_mutex);
        return m_calls;
    }
    void resetCalls()
    {
        QMutexLocker lock(&m_mutex);
        m_calls.clear();
    }

    WorkspaceTreeModel::Lister lister()
    {
        // Keyed by what the model passed ("." for the root, as WorkspaceFs wants it).
        return [this](const QString &requested) {
            {
                QMutexLocker lock(&m_mutex);
                ++m_calls[requested];
            }
            const QString path = requested == u"." ? QString() : requested;
            return QtConcurrent::run(&m_pool, [this, path] {
                QMutexLocker lock(&m_mutex);
                const bool exists = m_dirs.contains(path);
                const QList<FileInfo> entries = m_dirs.value(path);
                const bool failing = m_failing.contains(path);
                m_waiting.insert(path);
                while (m_held.contains(path))
                    m_released.wait(&m_mutex);
                m_waiting.remove(path);
                if (failing || !exists)
                    throw FileNotFoundError(QStringLiteral("cannot list '%1'").arg(path));
                return entries;
            });
        };
    }

private:
    void put(const FileInfo &info)
    {
        const QString parent = parentOf(info.path);
        if (!m_dirs.contains(parent))
            put(dirInfo(parent));
        erase(info.path);
        m_dirs[parent].append(info);
        if (info.isDir)
            m_dirs.insert(info.path, {});
    }
    void erase(const QString &path)
    {
        QList<FileInfo> &siblings = m_dirs[parentOf(path)];
        siblings.removeIf([&](const FileInfo &f) { return f.path == path; });
        m_dirs.remove(path);
        m_dirs.removeIf([&](const auto &it) { return it.key().startsWith(path + u'/'); });
    }

    mutable QMutex m_mutex;
    QWaitCondition m_released;
    QHash<QString, QList<FileInfo>> m_dirs;
    QSet<QString> m_failing;
    QSet<QString> m_held;
    QSet<QString> m_waiting;
    QHash<QString, int> m_calls;
    QThreadPool m_pool;
};

/// README.md, setup.py, docs/{guide.md}, empty/, src/{app.py, pkg/{__init__.py, mod.py,
/// data/{x.json}}}
void populate(FakeFs &fs)
{
    fs.addFile(QStringLiteral("README.md"), 100);
    fs.addFile(QStringLiteral("setup.py"), 200);
    fs.addFile(QStringLiteral("docs/guide.md"), 300);
    fs.addDir(QStringLiteral("empty"));
    fs.addFile(QStringLiteral("src/app.py"), 400);
    fs.addFile(QStringLiteral("src/pkg/__init__.py"), 0);
    fs.addFile(QStringLiteral("src/pkg/mod.py"), 500);
    fs.addFile(QStringLiteral("src/pkg/data/x.json"), 600);
}

QStringList childNames(const WorkspaceTreeModel &model, const QString &folder)
{
    const QModelIndex parent = model.indexForPath(folder);
    QStringList names;
    for (int row = 0; row < model.rowCount(parent); ++row)
        names.append(model.index(row, 0, parent).data().toString());
    return names;
}

} // namespace

class TestWorkspaceTreeModel : public QObject
{
    Q_OBJECT

private:
    // Fetches each folder in turn and waits for its listing.
    static bool fetch(WorkspaceTreeModel &model, const QStringList &folders)
    {
        for (const QString &folder : folders) {
            const QModelIndex index = model.indexForPath(folder);
            if (!folder.isEmpty() && !index.isValid())
                return false;
            model.fetchMore(index);
            if (!QTest::qWaitFor([&] { return !model.isBusy(); }, 5000))
                return false;
            if (!model.isFetched(folder))
                return false;
        }
        return true;
    }

    static bool settle(WorkspaceTreeModel &model)
    {
        return QTest::qWaitFor([&] { return !model.isBusy(); }, 5000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QLocale::setDefault(QLocale::c());
        qRegisterMetaType<QList<int>>();
    }

    void modelTesterLazyTree()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setLister(fs.lister());
        // The tester calls fetchMore() on every folder it meets, so the whole tree loads.
        QVERIFY(settle(model));
        for (const char *folder : {"", "src", "src/pkg", "src/pkg/data", "docs", "empty"})
            QVERIFY2(model.isFetched(QString::fromLatin1(folder)), folder);
        QCOMPARE(childNames(model, QString()),
                 (QStringList{"docs", "empty", "src", "README.md", "setup.py"}));

        // Every kind of merge, under the tester.
        fs.addFile(QStringLiteral("src/pkg/new.py"), 1);
        fs.remove(QStringLiteral("docs"));
        fs.addFile(QStringLiteral("setup.py"), 201);
        fs.remove(QStringLiteral("empty"));
        fs.addFile(QStringLiteral("empty"), 3);
        fs.remove(QStringLiteral("README.md"));
        fs.addFile(QStringLiteral("README.md/inner.txt"), 4);
        model.refreshAll();
        QVERIFY(settle(model));
        QCOMPARE(childNames(model, QString()),
                 (QStringList{"README.md", "src", "empty", "setup.py"}));
        QCOMPARE(childNames(model, QStringLiteral("src/pkg")),
                 (QStringList{"data", "__init__.py", "mod.py", "new.py"}));
        QVERIFY(model.isFetched(QStringLiteral("README.md")));
        QCOMPARE(childNames(model, QStringLiteral("README.md")), QStringList{"inner.txt"});
    }

    void explicitFetch()
    {
        FakeFs fs;
        populate(fs);
        fs.hold(QString());
        WorkspaceTreeModel model;
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy loaded(&model, &WorkspaceTreeModel::folderLoaded);
        QSignalSpy settled(&model, &WorkspaceTreeModel::listingsSettled);
        model.setLister(fs.lister());

        // The root listing is in flight: nothing shown yet, but it may have children.
        QVERIFY(model.isBusy());
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(model.hasChildren());
        QVERIFY(!model.canFetchMore({}));
        fs.release(QString());
        QVERIFY(settled.wait());
        QCOMPARE(model.rowCount(), 5);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(inserted.at(0).at(0).value<QModelIndex>(), QModelIndex());
        QCOMPARE(inserted.at(0).at(1).toInt(), 0);
        QCOMPARE(inserted.at(0).at(2).toInt(), 4);
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(loaded.at(0).at(0).toString(), QString());
        QCOMPARE(fs.calls(), (QHash<QString, int>{{QStringLiteral("."), 1}}));

        const QModelIndex src = model.indexForPath(QStringLiteral("src"));
        QVERIFY(src.isValid());
        QCOMPARE(model.rowCount(src), 0);
        QVERIFY(model.hasChildren(src));
        QVERIFY(model.canFetchMore(src));
        QVERIFY(!model.isFetched(QStringLiteral("src")));
        inserted.clear();
        model.fetchMore(src);
        QVERIFY(!model.canFetchMore(src));
        QVERIFY(model.isBusy());
        QCOMPARE(model.rowCount(src), 0); // never synchronous
        QVERIFY(settled.wait());
        QCOMPARE(model.rowCount(src), 2);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(inserted.at(0).at(0).value<QModelIndex>(), QModelIndex(src));
        QCOMPARE(inserted.at(0).at(2).toInt(), 1);
        QVERIFY(model.isFetched(QStringLiteral("src")));
        QCOMPARE(childNames(model, QStringLiteral("src")), (QStringList{"pkg", "app.py"}));

        // A second fetchMore is a no-op; an empty folder loses its expander once listed.
        model.fetchMore(src);
        QVERIFY(!model.isBusy());
        const QModelIndex empty = model.indexForPath(QStringLiteral("empty"));
        QVERIFY(model.hasChildren(empty));
        QVERIFY(fetch(model, {QStringLiteral("empty")}));
        QVERIFY(!model.hasChildren(empty));
        QVERIFY(!model.canFetchMore(empty));
        QCOMPARE(inserted.count(), 1);

        // Files never fetch.
        const QModelIndex file = model.indexForPath(QStringLiteral("README.md"));
        QVERIFY(!model.hasChildren(file));
        QVERIFY(!model.canFetchMore(file));
        QVERIFY(model.flags(file).testFlag(Qt::ItemNeverHasChildren));
        QVERIFY(!model.flags(src).testFlag(Qt::ItemNeverHasChildren));
    }

    void refreshMergesWithoutReset()
    {
        FakeFs fs;
        for (const char *name : {"a.py", "b.py", "c.py", "d.py", "keep.py"})
            fs.addFile(QStringLiteral("src/") + QLatin1String(name), 10);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {QStringLiteral("src")}));
        const QPersistentModelIndex keep = model.indexForPath(QStringLiteral("src/keep.py"));
        const QPersistentModelIndex changed = model.indexForPath(QStringLiteral("src/c.py"));
        QVERIFY(keep.isValid());

        fs.remove(QStringLiteral("src/b.py"));
        fs.addFile(QStringLiteral("src/bb.py"), 1);
        fs.addFile(QStringLiteral("src/e.py"), 1);
        fs.addDir(QStringLiteral("src/zz"));
        fs.addFile(QStringLiteral("src/c.py"), 31);
        fs.addFile(QStringLiteral("src/d.py"), 10, kMtime + 5000);

        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy changedSpy(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy layout(&model, &QAbstractItemModel::layoutChanged);
        model.refreshFolder(QStringLiteral("src"));
        QVERIFY(settle(model));

        QCOMPARE(childNames(model, QStringLiteral("src")),
                 (QStringList{"zz", "a.py", "bb.py", "c.py", "d.py", "e.py", "keep.py"}));
        QCOMPARE(reset.count(), 0);
        QCOMPARE(layout.count(), 0);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(removed.at(0).at(1).toInt(), 1);
        QCOMPARE(inserted.count(), 3); // zz at the top, bb.py and e.py in place
        QCOMPARE(changedSpy.count(), 2);
        // c.py: size only (Name..Size); d.py: mtime (Name..Modified).
        QCOMPARE(changedSpy.at(0).at(0).value<QModelIndex>().data(Roles::PathRole).toString(),
                 QStringLiteral("src/c.py"));
        QCOMPARE(changedSpy.at(0).at(1).value<QModelIndex>().column(),
                 int(WorkspaceTreeModel::SizeColumn));
        QCOMPARE(changedSpy.at(1).at(1).value<QModelIndex>().column(),
                 int(WorkspaceTreeModel::ModifiedColumn));

        QVERIFY(keep.isValid());
        QCOMPARE(model.pathForIndex(keep), QStringLiteral("src/keep.py"));
        QCOMPARE(keep.data().toString(), QStringLiteral("keep.py"));
        QVERIFY(changed.isValid());
        QCOMPARE(changed.data(Roles::SizeRole).toLongLong(), 31);

        // Nothing changed: a refresh emits nothing at all.
        inserted.clear();
        removed.clear();
        changedSpy.clear();
        model.refreshFolder(QStringLiteral("src/"));
        QVERIFY(settle(model));
        QCOMPARE(inserted.count() + removed.count() + changedSpy.count(), 0);
    }

    void removedFolderWithLoadedChildren()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src", "src/pkg", "src/pkg/data"}));
        const QPersistentModelIndex deep =
            model.indexForPath(QStringLiteral("src/pkg/data/x.json"));
        const QPersistentModelIndex app = model.indexForPath(QStringLiteral("src/app.py"));
        QVERIFY(deep.isValid());

        fs.remove(QStringLiteral("src/pkg"));
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.refreshFolder(QStringLiteral("src"));
        QVERIFY(settle(model));
        QCOMPARE(removed.count(), 1);
        QCOMPARE(removed.at(0).at(0).value<QModelIndex>(),
                 model.indexForPath(QStringLiteral("src")));
        QCOMPARE(removed.at(0).at(1).toInt(), 0);
        QCOMPARE(reset.count(), 0);
        QVERIFY(!deep.isValid());
        QVERIFY(app.isValid());
        QCOMPARE(app.row(), 0);
        QVERIFY(!model.indexForPath(QStringLiteral("src/pkg/mod.py")).isValid());
        QVERIFY(!model.isFetched(QStringLiteral("src/pkg")));

        // Refreshing what is gone is a no-op.
        model.refreshFolder(QStringLiteral("src/pkg"));
        QVERIFY(!model.isBusy());
    }

    void folderBecomesFile()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src", "src/pkg"}));
        fs.remove(QStringLiteral("src/pkg"));
        fs.addFile(QStringLiteral("src/pkg"), 7);
        model.refreshFolder(QStringLiteral("src"));
        QVERIFY(settle(model));

        QCOMPARE(childNames(model, QStringLiteral("src")), (QStringList{"app.py", "pkg"}));
        const QModelIndex pkg = model.indexForPath(QStringLiteral("src/pkg"));
        QVERIFY(pkg.isValid());
        QCOMPARE(pkg.data(Roles::IsDirRole).toBool(), false);
        QCOMPARE(pkg.data(Roles::SizeRole).toLongLong(), 7);
        QCOMPARE(model.rowCount(pkg), 0);
        QVERIFY(!model.hasChildren(pkg));
        QVERIFY(!model.canFetchMore(pkg));
        QVERIFY(model.flags(pkg).testFlag(Qt::ItemNeverHasChildren));
        QVERIFY(!model.isFetched(QStringLiteral("src/pkg")));
        QVERIFY(!model.indexForPath(QStringLiteral("src/pkg/mod.py")).isValid());
    }

    void fileBecomesFolder()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        fs.remove(QStringLiteral("setup.py"));
        fs.addFile(QStringLiteral("setup.py/todo.txt"), 1);
        model.refreshFolder(QString());
        QVERIFY(settle(model));

        QCOMPARE(childNames(model, QString()),
                 (QStringList{"docs", "empty", "setup.py", "src", "README.md"}));
        const QModelIndex folder = model.indexForPath(QStringLiteral("setup.py"));
        QVERIFY(folder.data(Roles::IsDirRole).toBool());
        QVERIFY(!folder.data(Roles::SizeRole).isValid());
        QVERIFY(model.hasChildren(folder));
        QVERIFY(model.canFetchMore(folder));
        QVERIFY(fetch(model, {"setup.py"}));
        QCOMPARE(childNames(model, QStringLiteral("setup.py")), QStringList{"todo.txt"});
    }

    void concurrentRefreshesCoalesce()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src"}));
        QCOMPARE(fs.calls().value(QStringLiteral("src")), 1);

        fs.hold(QStringLiteral("src"));
        model.refreshFolder(QStringLiteral("src"));
        QTRY_VERIFY(fs.isWaiting(QStringLiteral("src"))); // snapshot taken
        fs.addFile(QStringLiteral("src/late.py"), 1);     // only a re-run sees this
        model.refreshFolder(QStringLiteral("src"));
        model.pathsChanged({QStringLiteral("src/late.py")});
        model.refreshAll();
        QCOMPARE(fs.calls().value(QStringLiteral("src")), 2);
        QVERIFY(model.isBusy());

        QSignalSpy settled(&model, &WorkspaceTreeModel::listingsSettled);
        fs.release(QStringLiteral("src"));
        QVERIFY(settle(model));
        QCOMPARE(settled.count(), 1);
        QCOMPARE(fs.calls().value(QStringLiteral("src")), 3); // one re-run for three requests
        QVERIFY(model.indexForPath(QStringLiteral("src/late.py")).isValid());
    }

    void listingFailure_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("message");
        // clang-format off
        QTest::newRow("sandbox-error-via-qtconcurrent")
            << "concurrent" << "FileNotFoundError" << "cannot list 'bad'";
        QTest::newRow("sandbox-error-via-promise") << "promise" << "PermissionError" << "refused";
        QTest::newRow("std-exception") << "std" << "RuntimeError" << "boom";
        QTest::newRow("lister-throws-synchronously") << "sync" << "ValueError" << "bad lister";
        // clang-format on
    }

    void listingFailure()
    {
        QFETCH(QString, mode);
        QFETCH(QString, type);
        QFETCH(QString, message);
        FakeFs fs;
        fs.addFile(QStringLiteral("bad/ok.txt"), 1);
        fs.addFile(QStringLiteral("good.txt"), 1);
        bool failing = false;
        const auto setFailing = [&](bool on) {
            failing = on;
            if (mode == u"concurrent") // the fake throws from its worker thread
                fs.setFailing(QStringLiteral("bad"), on);
        };
        setFailing(true);
        const auto inner = fs.lister();
        QThreadPool pool;
        const WorkspaceTreeModel::Lister lister = [&](const QString &path) {
            if (path != u"bad" || !failing || mode == u"concurrent")
                return inner(path);
            if (mode == u"promise") {
                QPromise<QList<FileInfo>> promise;
                promise.start();
                promise.setException(std::make_exception_ptr(PermissionError("refused")));
                promise.finish();
                return promise.future();
            }
            if (mode == u"std") {
                return QtConcurrent::run(
                    &pool, []() -> QList<FileInfo> { throw std::runtime_error("boom"); });
            }
            throw ValueError(QStringLiteral("bad lister"));
        };
        WorkspaceTreeModel model;
        model.setLister(lister);
        QVERIFY(settle(model));

        QSignalSpy failed(&model, &WorkspaceTreeModel::listingFailed);
        QSignalSpy loaded(&model, &WorkspaceTreeModel::folderLoaded);
        model.fetchMore(model.indexForPath(QStringLiteral("bad")));
        QVERIFY(settle(model));
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("bad"));
        QCOMPARE(failed.at(0).at(1).toString(), type);
        QCOMPARE(failed.at(0).at(2).toString(), message);
        QCOMPARE(loaded.count(), 0);
        // Fetched and empty: views do not retry in a loop, a refresh does.
        const QModelIndex bad = model.indexForPath(QStringLiteral("bad"));
        QVERIFY(model.isFetched(QStringLiteral("bad")));
        QCOMPARE(model.rowCount(bad), 0);
        QVERIFY(!model.canFetchMore(bad));
        QVERIFY(!model.hasChildren(bad));

        // The same failure again (a timer's refreshAll) is not reported twice.
        model.refreshAll();
        QVERIFY(settle(model));
        QCOMPARE(failed.count(), 1);
        loaded.clear();

        setFailing(false);
        model.refreshFolder(QStringLiteral("bad"));
        QVERIFY(settle(model));
        QCOMPARE(childNames(model, QStringLiteral("bad")), QStringList{"ok.txt"});
        QCOMPARE(loaded.count(), 1);

        // After a success the next failure is news again; the rows shown are kept.
        setFailing(true);
        model.refreshFolder(QStringLiteral("bad"));
        QVERIFY(settle(model));
        QCOMPARE(failed.count(), 2);
        QCOMPARE(childNames(model, QStringLiteral("bad")), QStringList{"ok.txt"});
        pool.waitForDone();
    }

    void resultForVanishedFolderIsIgnored()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        fs.hold(QStringLiteral("src/pkg"));
        model.setLister(fs.lister()); // the tester fetches everything; src/pkg stays held
        QTRY_VERIFY(fs.isWaiting(QStringLiteral("src/pkg")));
        QVERIFY(model.isBusy());

        fs.remove(QStringLiteral("src"));
        model.refreshFolder(QString());
        QTRY_VERIFY(!model.indexForPath(QStringLiteral("src")).isValid());

        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy loaded(&model, &WorkspaceTreeModel::folderLoaded);
        QSignalSpy failed(&model, &WorkspaceTreeModel::listingFailed);
        fs.release(QStringLiteral("src/pkg"));
        QVERIFY(settle(model));
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(loaded.count(), 0);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(childNames(model, QString()),
                 (QStringList{"docs", "empty", "README.md", "setup.py"}));
    }

    void changeMark_data()
    {
        QTest::addColumn<bool>("withBaseline");
        QTest::addColumn<bool>("inBaseline");
        QTest::addColumn<qint64>("baseSize");
        QTest::addColumn<qint64>("baseMtimeNs");
        QTest::addColumn<bool>("isDir");
        QTest::addColumn<int>("expected");
        const qint64 ns = (kMtime + 123) * 1000000 + 456789; // same ms as kMtime + 123
        const int none = int(ChangeMark::None);
        const int added = int(ChangeMark::Added);
        const int modified = int(ChangeMark::Modified);
        QTest::newRow("unchanged") << true << true << qint64(100) << ns << false << none;
        QTest::newRow("unchanged-sub-ms-difference")
            << true << true << qint64(100) << ns + 500000 << false << none;
        QTest::newRow("added") << true << false << qint64(0) << qint64(0) << false << added;
        QTest::newRow("modified-size") << true << true << qint64(99) << ns << false << modified;
        QTest::newRow("modified-mtime")
            << true << true << qint64(100) << ns - 1000000 << false << modified;
        // A folder that held no seeded file is new.
        QTest::newRow("new-folder") << true << false << qint64(0) << qint64(0) << true << added;
        QTest::newRow("no-baseline") << false << false << qint64(0) << qint64(0) << false << none;
    }

    void changeMark()
    {
        QFETCH(bool, withBaseline);
        QFETCH(bool, inBaseline);
        QFETCH(qint64, baseSize);
        QFETCH(qint64, baseMtimeNs);
        QFETCH(bool, isDir);
        QFETCH(int, expected);
        FakeFs fs;
        const QString path = QStringLiteral("src/item");
        if (isDir)
            fs.addDir(path);
        else
            fs.addFile(path, 100, kMtime + 123);
        fs.addFile(QStringLiteral("src/other.txt"), 1);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src"}));

        QHash<QString, FileStamp> baseline;
        if (withBaseline)
            baseline.insert(QStringLiteral("src/other.txt"), {1, kMtime * 1000000});
        if (inBaseline)
            baseline.insert(path, {baseSize, baseMtimeNs});
        model.setSeedBaseline(baseline);
        const QModelIndex index = model.indexForPath(path);
        QCOMPARE(index.data(Roles::ChangeMarkRole).toInt(), expected);
        QCOMPARE(model.index(index.row(), WorkspaceTreeModel::TypeColumn, index.parent())
                     .data(Roles::ChangeMarkRole)
                     .toInt(),
                 expected);
    }

    void seedBaselineSignalsAndRefresh()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src"}));
        QCOMPARE(model.indexForPath(QStringLiteral("src/app.py")).data(Roles::ChangeMarkRole),
                 QVariant(int(ChangeMark::None)));

        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setSeedBaseline({{QStringLiteral("src/app.py"), {400, kMtime * 1000000}}});
        QCOMPARE(reset.count(), 0);
        QCOMPARE(changed.count(), 2); // root and src: the loaded folders with rows
        for (const QList<QVariant> &args : std::as_const(changed)) {
            QCOMPARE(args.at(2).value<QList<int>>(), QList<int>{Roles::ChangeMarkRole});
            QCOMPARE(args.at(0).value<QModelIndex>().row(), 0);
        }
        QCOMPARE(model.indexForPath(QStringLiteral("src/app.py")).data(Roles::ChangeMarkRole),
                 QVariant(int(ChangeMark::None)));
        QCOMPARE(model.indexForPath(QStringLiteral("setup.py")).data(Roles::ChangeMarkRole),
                 QVariant(int(ChangeMark::Added)));

        changed.clear();
        fs.addFile(QStringLiteral("src/app.py"), 401);
        model.pathsChanged({QStringLiteral("src/app.py")});
        QVERIFY(settle(model));
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.indexForPath(QStringLiteral("src/app.py")).data(Roles::ChangeMarkRole),
                 QVariant(int(ChangeMark::Modified)));
    }

    void folderMarksFollowChildren()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src", "src/pkg", "docs"}));
        const qint64 ns = kMtime * 1000000;
        model.setSeedBaseline({{QStringLiteral("README.md"), {100, ns}},
                               {QStringLiteral("setup.py"), {200, ns}},
                               {QStringLiteral("docs/guide.md"), {300, ns}},
                               {QStringLiteral("src/app.py"), {400, ns}},
                               {QStringLiteral("src/pkg/__init__.py"), {0, ns}},
                               {QStringLiteral("src/pkg/mod.py"), {500, ns}},
                               {QStringLiteral("src/pkg/data/x.json"), {600, ns}}});
        const auto mark = [&](const char *path) {
            return ChangeMark(
                model.indexForPath(QLatin1String(path)).data(Roles::ChangeMarkRole).toInt());
        };
        QCOMPARE(mark("src"), ChangeMark::None);
        QCOMPARE(mark("src/pkg"), ChangeMark::None);
        QCOMPARE(mark("src/pkg/data"), ChangeMark::None); // not loaded, but seeded
        QCOMPARE(mark("empty"), ChangeMark::Added);       // held no seeded file

        // A modified file deep down marks each folder on the way up, and only those.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        fs.addFile(QStringLiteral("src/pkg/mod.py"), 501);
        model.pathsChanged({QStringLiteral("src/pkg/mod.py")});
        QVERIFY(settle(model));
        QCOMPARE(mark("src/pkg/mod.py"), ChangeMark::Modified);
        QCOMPARE(mark("src/pkg"), ChangeMark::Modified);
        QCOMPARE(mark("src"), ChangeMark::Modified);
        QCOMPARE(mark("docs"), ChangeMark::None);
        QSet<QString> touched;
        for (const QList<QVariant> &args : std::as_const(changed))
            touched.insert(model.pathForIndex(args.at(0).value<QModelIndex>()));
        QCOMPARE(touched, (QSet<QString>{"src/pkg/mod.py", "src/pkg", "src"}));

        // A second change below an already marked folder: nothing above it flips.
        changed.clear();
        fs.addFile(QStringLiteral("src/pkg/extra.py"), 1);
        model.pathsChanged({QStringLiteral("src/pkg/extra.py")});
        QVERIFY(settle(model));
        QCOMPARE(mark("src/pkg/extra.py"), ChangeMark::Added);
        for (const QList<QVariant> &args : std::as_const(changed))
            QVERIFY(model.pathForIndex(args.at(0).value<QModelIndex>()) != QStringLiteral("src"));

        // Back to the seeded state: the marks go away again, up to the top.
        fs.remove(QStringLiteral("src/pkg/extra.py"));
        fs.addFile(QStringLiteral("src/pkg/mod.py"), 500);
        model.pathsChanged({QStringLiteral("src/pkg/mod.py"), QStringLiteral("src/pkg/extra.py")});
        QVERIFY(settle(model));
        QCOMPARE(mark("src/pkg"), ChangeMark::None);
        QCOMPARE(mark("src"), ChangeMark::None);

        // A new folder is Added and makes its parent Modified.
        fs.addFile(QStringLiteral("docs/new/page.md"), 5);
        model.pathsChanged({QStringLiteral("docs/new/page.md")});
        QVERIFY(settle(model));
        QCOMPARE(mark("docs/new"), ChangeMark::Added);
        QCOMPARE(mark("docs"), ChangeMark::Modified);
        QCOMPARE(reset.count(), 0);
    }

    void hugeFolderInsertsInChunks()
    {
        const int total = 20000;
        QList<FileInfo> entries;
        for (int i = total - 1; i >= 0; --i) // the model sorts
            entries.append(fileInfo(QStringLiteral("f%1.txt").arg(i, 5, 10, QLatin1Char('0')), i));
        QThreadPool pool;
        WorkspaceTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        // Event-loop passes, counted by a zero timer.
        int passes = 0;
        QTimer ticker;
        ticker.setInterval(0);
        connect(&ticker, &QTimer::timeout, &model, [&passes] { ++passes; });
        ticker.start();
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy loaded(&model, &WorkspaceTreeModel::folderLoaded);
        QList<int> sizes, atPass;
        connect(&model, &QAbstractItemModel::rowsInserted, &model,
                [&](const QModelIndex &parent, int first, int last) {
                    QVERIFY(!parent.isValid());
                    sizes.append(last - first + 1);
                    atPass.append(passes);
                    // The folder is still loading until its last chunk is in.
                    if (model.rowCount() < total)
                        QVERIFY(model.isBusy());
                });
        model.setLister([&](const QString &path) {
            return QtConcurrent::run(&pool, [listing = entries, path] {
                return path == u"." ? listing : QList<FileInfo>();
            });
        });
        QCOMPARE(reset.count(), 1); // setLister: a new workspace
        QVERIFY(QTest::qWaitFor([&] { return !model.isBusy(); }, 20000));
        QCOMPARE(model.rowCount(), total);
        QCOMPARE(reset.count(), 1);
        QCOMPARE(loaded.count(), 1);
        QVERIFY2(sizes.size() >= total / WorkspaceTreeModel::insertChunkSize(),
                 qPrintable(QString::number(sizes.size())));
        for (int n : std::as_const(sizes))
            QVERIFY(n <= WorkspaceTreeModel::insertChunkSize());
        QVERIFY(atPass.constLast() > atPass.constFirst()); // not all in one pass
        for (int row : {0, 1, total / 2, total - 1}) {
            QCOMPARE(model.index(row, 0).data().toString(),
                     QStringLiteral("f%1.txt").arg(row, 5, 10, QLatin1Char('0')));
        }

        // A refresh of the same listing inserts nothing; a few new names go in at once.
        sizes.clear();
        entries.append(fileInfo(QStringLiteral("f10000a.txt"), 1));
        entries.append(fileInfo(QStringLiteral("zz.txt"), 1));
        model.refreshFolder(QString());
        QVERIFY(QTest::qWaitFor([&] { return !model.isBusy(); }, 20000));
        QCOMPARE(sizes, (QList<int>{1, 1}));
        QCOMPARE(model.rowCount(), total + 2);
        QCOMPARE(model.index(10001, 0).data().toString(), QStringLiteral("f10000a.txt"));
        QCOMPARE(reset.count(), 1);
    }

    void pathRoundTrip_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("path"); // empty: no index
        // clang-format off
        QTest::newRow("root") << "" << "";
        QTest::newRow("dot") << "." << "";
        QTest::newRow("folder") << "src" << "src";
        QTest::newRow("dot-slash-trailing-slash") << "./src/" << "src";
        QTest::newRow("double-slash") << "src//pkg/./mod.py" << "src/pkg/mod.py";
        QTest::newRow("deep") << "src/pkg/data/x.json" << "src/pkg/data/x.json";
        QTest::newRow("missing") << "nope.txt" << "";
        QTest::newRow("below-a-file") << "src/app.py/x" << "";
        QTest::newRow("case-matters") << "SRC" << "";
        // clang-format on
    }

    void pathRoundTrip()
    {
        QFETCH(QString, input);
        QFETCH(QString, path);
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src", "src/pkg", "src/pkg/data"}));
        const QModelIndex index = model.indexForPath(input);
        QCOMPARE(index.isValid(), !path.isEmpty());
        QCOMPARE(model.pathForIndex(index), path);
        if (index.isValid())
            QCOMPARE(index.data(Roles::PathRole).toString(), path);
    }

    void everyIndexRoundTrips()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src", "src/pkg", "src/pkg/data", "docs"}));
        int seen = 0;
        std::function<void(const QModelIndex &)> walk = [&](const QModelIndex &parent) {
            for (int row = 0; row < model.rowCount(parent); ++row) {
                const QModelIndex index = model.index(row, 0, parent);
                const QString path = model.pathForIndex(index);
                QCOMPARE(model.indexForPath(path), index);
                QCOMPARE(model.parent(index), parent);
                ++seen;
                walk(index);
            }
        };
        walk({});
        QCOMPARE(seen, 12);
        QCOMPARE(model.pathForIndex({}), QString());
    }

    void refreshAllTouchesOnlyFetchedFolders()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src"}));
        fs.resetCalls();
        model.refreshAll();
        QVERIFY(settle(model));
        const QHash<QString, int> calls = fs.calls();
        QCOMPARE(calls.size(), 2);
        QCOMPARE(calls.value(QStringLiteral(".")), 1);
        QCOMPARE(calls.value(QStringLiteral("src")), 1);
        QVERIFY(model.canFetchMore(model.indexForPath(QStringLiteral("docs"))));
    }

    void pathsChangedRefreshesHolders()
    {
        FakeFs fs;
        populate(fs);
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        QVERIFY(fetch(model, {"src", "src/pkg"}));
        fs.resetCalls();
        fs.addFile(QStringLiteral("src/new/deep/f.txt"), 1);
        model.pathsChanged({
            QStringLiteral("src/app.py"),          // → src
            QStringLiteral("./src/pkg/mod.py"),    // → src/pkg
            QStringLiteral("src/pkg"),             // → src (parent) and src/pkg (itself)
            QStringLiteral("docs/guide.md"),       // docs not fetched: ignored
            QStringLiteral("src/pkg/data/x.json"), // data not fetched: ignored
            QStringLiteral("src/new/deep/f.txt"),  // new folders: the deepest known one, src
        });
        QVERIFY(settle(model));
        const QHash<QString, int> calls = fs.calls();
        QCOMPARE(calls.size(), 2);
        QCOMPARE(calls.value(QStringLiteral("src")), 1);
        QCOMPARE(calls.value(QStringLiteral("src/pkg")), 1);
        QVERIFY(model.indexForPath(QStringLiteral("src/new")).isValid());
    }

    void columns()
    {
        FakeFs fs;
        fs.addFile(QStringLiteral("b.txt"), 1234, kMtime);
        fs.addFile(QStringLiteral("B.txt"), 10);
        fs.addFile(QStringLiteral("link"), 0, kMtime, FileInfo::Type::Symlink);
        fs.addFile(QStringLiteral("fifo"), 0, kMtime, FileInfo::Type::Other);
        fs.addDir(QStringLiteral("zdir"));
        WorkspaceTreeModel model;
        model.setLister(fs.lister());
        QVERIFY(settle(model));
        // Folders first, then case-sensitive by name.
        QCOMPARE(childNames(model, QString()),
                 (QStringList{"zdir", "B.txt", "b.txt", "fifo", "link"}));

        const auto cell = [&](const QString &path, int column, int role = Qt::DisplayRole) {
            const QModelIndex i = model.indexForPath(path);
            return model.index(i.row(), column, i.parent()).data(role);
        };
        const QString b = QStringLiteral("b.txt");
        QCOMPARE(cell(b, WorkspaceTreeModel::NameColumn).toString(), b);
        QCOMPARE(cell(b, WorkspaceTreeModel::SizeColumn).toString(), QStringLiteral("1.2 KiB"));
        QCOMPARE(cell(b, WorkspaceTreeModel::SizeColumn, Roles::SizeRole).toLongLong(), 1234);
        QCOMPARE(cell(b, WorkspaceTreeModel::ModifiedColumn).toString(),
                 QDateTime::fromMSecsSinceEpoch(kMtime).toString("yyyy-MM-dd HH:mm:ss"));
        QCOMPARE(cell(b, 0, Roles::MTimeRole).toDateTime(), QDateTime::fromMSecsSinceEpoch(kMtime));
        QCOMPARE(cell(b, WorkspaceTreeModel::TypeColumn).toString(), QStringLiteral("file"));
        QCOMPARE(cell(b, 0, Roles::FileTypeRole).toInt(), int(FileInfo::Type::File));
        QCOMPARE(cell("zdir", WorkspaceTreeModel::TypeColumn).toString(), QStringLiteral("folder"));
        QVERIFY(!cell("zdir", WorkspaceTreeModel::SizeColumn).isValid());
        QVERIFY(!cell("zdir", 0, Roles::SizeRole).isValid());
        QCOMPARE(cell("link", WorkspaceTreeModel::TypeColumn).toString(),
                 QStringLiteral("symlink"));
        QCOMPARE(cell("fifo", WorkspaceTreeModel::TypeColumn).toString(),
                 QStringLiteral("special"));
        QCOMPARE(cell("B.txt", WorkspaceTreeModel::SizeColumn).toString(),
                 QStringLiteral("10 bytes"));
        QCOMPARE(model.headerData(WorkspaceTreeModel::ModifiedColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Modified"));
        QCOMPARE(model.columnCount(), int(WorkspaceTreeModel::ColumnCount));
    }

    void replacingTheListerDropsStaleResults()
    {
        FakeFs first;
        first.addFile(QStringLiteral("old.txt"), 1);
        FakeFs second;
        second.addFile(QStringLiteral("new.txt"), 1);
        WorkspaceTreeModel model;
        first.hold(QString());
        model.setLister(first.lister());
        QTRY_VERIFY(first.isWaiting(QString()));

        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setLister(second.lister());
        QCOMPARE(reset.count(), 1); // a new workspace, not a routine update
        QVERIFY(settle(model));
        QCOMPARE(childNames(model, QString()), QStringList{"new.txt"});
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        first.release(QString());
        QTest::qWait(50);
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(childNames(model, QString()), QStringList{"new.txt"});

        QSignalSpy settled(&model, &WorkspaceTreeModel::listingsSettled);
        model.setLister({});
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(!model.hasChildren());
        QVERIFY(!model.canFetchMore({}));
        QVERIFY(!model.isBusy());
        model.refreshAll();
        model.refreshFolder(QString());
        QVERIFY(!model.isBusy());
    }

    void destroyedWhileListing()
    {
        FakeFs fs;
        populate(fs);
        fs.hold(QString());
        {
            WorkspaceTreeModel model;
            model.setLister(fs.lister());
            QTRY_VERIFY(fs.isWaiting(QString()));
        }
        fs.release(QString());
        QTest::qWait(20); // the orphaned result must not reach anything
    }

    void realWorkspaceFs()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        WorkspaceFs fs(dir.path());
        fs.writeFile(QStringLiteral("README.md"), QByteArray(1234, 'x'));
        fs.writeFile(QStringLiteral("src/main.py"), "print()\n");
        fs.writeFile(QStringLiteral("src/lib/util.py"), "x = 1\n");
        QThreadPool pool;
        WorkspaceTreeModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setLister([&fs, &pool](const QString &path) {
            return QtConcurrent::run(&pool, [&fs, path] { return fs.listDir(path); });
        });
        QVERIFY(settle(model));
        QVERIFY(model.isFetched(QStringLiteral("src/lib")));
        QCOMPARE(childNames(model, QString()), (QStringList{"src", "README.md"}));
        QCOMPARE(childNames(model, QStringLiteral("src")), (QStringList{"lib", "main.py"}));

        const QModelIndex main = model.indexForPath(QStringLiteral("src/main.py"));
        QCOMPARE(main.data(Roles::SizeRole).toLongLong(), 8);
        QVERIFY(main.data(Roles::MTimeRole).toDateTime().isValid());
        QCOMPARE(model.indexForPath(QStringLiteral("README.md"))
                     .siblingAtColumn(WorkspaceTreeModel::SizeColumn)
                     .data()
                     .toString(),
                 QStringLiteral("1.2 KiB"));

        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        fs.writeFile(QStringLiteral("src/new.py"), "new\n");
        fs.remove(QStringLiteral("README.md"));
        model.pathsChanged({QStringLiteral("src/new.py"), QStringLiteral("README.md")});
        QVERIFY(settle(model));
        QCOMPARE(childNames(model, QString()), QStringList{"src"});
        QCOMPARE(childNames(model, QStringLiteral("src")),
                 (QStringList{"lib", "main.py", "new.py"}));
        QCOMPARE(reset.count(), 0);

        // A folder deleted on disk fails with the engine's error, then goes with its parent.
        QSignalSpy failed(&model, &WorkspaceTreeModel::listingFailed);
        fs.remove(QStringLiteral("src/lib"), true);
        model.refreshFolder(QStringLiteral("src/lib"));
        QVERIFY(settle(model));
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(1).toString(), QStringLiteral("FileNotFoundError"));
        model.refreshFolder(QStringLiteral("src"));
        QVERIFY(settle(model));
        QCOMPARE(childNames(model, QStringLiteral("src")), (QStringList{"main.py", "new.py"}));
    }
};

QTEST_GUILESS_MAIN(TestWorkspaceTreeModel)
#include "tst_workspacetreemodel.moc"
