// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

// What changed since the seed (workspacechanges.h), the diff against the seed (filediff.h),
// the live ChangesModel, and the resource sampler of the Inspect panel.

#include "changesmodel.h"
#include "filediff.h"
#include "localsandboxbackend.h"
#include "modelroles.h"
#include "resourcesampler.h"
#include "sandboxcontroller.h"
#include "testutil.h"
#include "workspacechanges.h"

#include <QAbstractItemModelTester>
#include <QCryptographicHash>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

using namespace elsai;
using test::writeHostFile;

namespace {

using K = WorkspaceChange::Kind;

QHash<QString, K> kinds(const ChangeScan &scan)
{
    QHash<QString, K> out;
    for (const WorkspaceChange &c : scan.changes)
        out.insert(c.path, c.kind);
    return out;
}

QHash<QString, K> kinds(const ChangesModel &model)
{
    QHash<QString, K> out;
    for (int r = 0; r < model.rowCount(); ++r)
        out.insert(model.change(r).path, model.change(r).kind);
    return out;
}

} // namespace

class TestChangesModel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;

    /// A seed folder with three files; returns its path.
    QString makeProject()
    {
        const QString project = m_tmp.filePath(QStringLiteral("project-%1").arg(++m_n));
        writeHostFile(project + QStringLiteral("/a.txt"), "one\ntwo\nthree\n");
        writeHostFile(project + QStringLiteral("/b.txt"), "bee\n");
        writeHostFile(project + QStringLiteral("/sub/c.bin"), QByteArray("\0\1\2", 3));
        return project;
    }

    SandboxSpec spec(const QString &id, bool seed = true)
    {
        SandboxSpec s;
        s.workspaceId = id;
        s.workspaceRoot = m_tmp.filePath(QStringLiteral("ws-%1").arg(++m_n));
        if (seed)
            s.seedFrom = makeProject();
        return s;
    }

    static bool waitStarted(SandboxController &c, const QString &id)
    {
        return QTest::qWaitFor([&] { return c.state(id) == SessionState::Running; }, 20000);
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    // The scan against the seed record of a local backend: each kind, links, no false hits.
    void scanFindsEachKind()
    {
        const QString project = makeProject();
        const QString root = m_tmp.filePath(QStringLiteral("scan-ws"));
        LocalSandboxBackend backend(root);
        backend.create();
        backend.seedWorkspace(project, {});
        ChangeScan scan = scanWorkspaceChanges(backend, true);
        QCOMPARE(scan.base, ChangeBase::Seed);
        QCOMPARE(scan.baseRoot, QDir(project).absolutePath());
        QVERIFY2(scan.changes.isEmpty(), qPrintable(scan.changes.value(0).path));

        backend.writeFile(QStringLiteral("new/n.txt"), "new\n");
        backend.writeFile(QStringLiteral("a.txt"), "one\nTWO\nthree\nfour\n");
        backend.removeFile(QStringLiteral("b.txt"));
        QVERIFY(::symlink("a.txt", QFile::encodeName(root + QStringLiteral("/link"))) == 0);
        scan = scanWorkspaceChanges(backend, true);
        const QHash<QString, K> expected{{QStringLiteral("new/n.txt"), K::Added},
                                         {QStringLiteral("a.txt"), K::Modified},
                                         {QStringLiteral("b.txt"), K::Deleted},
                                         {QStringLiteral("link"), K::Added}};
        QCOMPARE(kinds(scan), expected);
        QVERIFY(!scan.truncated);
        // sorted by path, sizes of both sides
        QStringList paths;
        for (const WorkspaceChange &c : scan.changes)
            paths.append(c.path);
        QCOMPARE(paths, (QStringList{QStringLiteral("a.txt"), QStringLiteral("b.txt"),
                                     QStringLiteral("link"), QStringLiteral("new/n.txt")}));
        QCOMPARE(scan.changes.at(0).baseSize, 14);
        QCOMPARE(scan.changes.at(0).size, 19);
        QCOMPARE(scan.changes.at(1).size, -1);
        QCOMPARE(scan.changes.at(2).type, FileInfo::Type::Symlink);

        // Bounded: past the entry limit the list is partial and claims no deletions.
        ChangeScanLimits tiny;
        tiny.maxEntries = 2;
        scan = scanWorkspaceChanges(backend, true, tiny);
        QVERIFY(scan.truncated);
        for (const WorkspaceChange &c : scan.changes)
            QVERIFY(c.kind != K::Deleted);
        ChangeScanLimits few;
        few.maxChanges = 1;
        scan = scanWorkspaceChanges(backend, true, few);
        QVERIFY(scan.truncated);
        QCOMPARE(scan.changes.size(), 1);
    }

    // Without a seed every file is new; a seeded sandbox without its record says so.
    void scanWithoutSeed()
    {
        const QString root = m_tmp.filePath(QStringLiteral("unseeded-ws"));
        LocalSandboxBackend backend(root);
        backend.create();
        backend.writeFile(QStringLiteral("x.txt"), "x");
        ChangeScan scan = scanWorkspaceChanges(backend, false);
        QCOMPARE(scan.base, ChangeBase::Empty);
        QCOMPARE(kinds(scan), (QHash<QString, K>{{QStringLiteral("x.txt"), K::Added}}));
        scan = scanWorkspaceChanges(backend, true);
        QCOMPARE(scan.base, ChangeBase::Missing);
    }

    // A flush into the seed folder moves the base: what was flushed is no longer a change.
    void flushMovesTheBase()
    {
        const QString project = makeProject();
        LocalSandboxBackend backend(m_tmp.filePath(QStringLiteral("flush-ws")));
        backend.create();
        backend.seedWorkspace(project, {});
        backend.writeFile(QStringLiteral("a.txt"), "changed\n");
        QCOMPARE(kinds(scanWorkspaceChanges(backend, true)),
                 (QHash<QString, K>{{QStringLiteral("a.txt"), K::Modified}}));
        WorkspaceSyncPolicy policy;
        policy.syncIncludePatterns = QStringList{QStringLiteral("**")};
        const WorkspaceSyncResult r = backend.syncArtifacts(project, policy);
        QVERIFY2(r.errors.isEmpty(), qPrintable(r.errors.join(QLatin1Char('\n'))));
        QVERIFY(scanWorkspaceChanges(backend, true).changes.isEmpty());
    }

    void diffAgainstTheSeed()
    {
        const QString project = makeProject();
        LocalSandboxBackend backend(m_tmp.filePath(QStringLiteral("diff-ws")));
        backend.create();
        backend.seedWorkspace(project, {});
        backend.writeFile(QStringLiteral("a.txt"), "one\nTWO\nthree\n");
        FileDiff d = diffAgainstSeed(backend, QStringLiteral("a.txt"));
        QCOMPARE(d.kind, FileDiff::Kind::Text);
        QCOMPARE(d.body, QStringLiteral("--- seed/a.txt\n+++ workspace/a.txt\n@@ -1,3 +1,3 @@\n"
                                        " one\n-two\n+TWO\n three\n"));
        QVERIFY(d.note.isEmpty());

        d = diffAgainstSeed(backend, QStringLiteral("new.txt")); // not there at all
        QCOMPARE(d.kind, FileDiff::Kind::Identical);
        backend.writeFile(QStringLiteral("new.txt"), "hello\n");
        d = diffAgainstSeed(backend, QStringLiteral("new.txt"));
        QVERIFY(d.body.startsWith(QStringLiteral("--- /dev/null\n+++ workspace/new.txt\n")));
        backend.removeFile(QStringLiteral("b.txt"));
        d = diffAgainstSeed(backend, QStringLiteral("b.txt"));
        QCOMPARE(d.body, QStringLiteral("--- seed/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bee\n"));

        // Binary: sizes and hashes, no text.
        backend.writeFile(QStringLiteral("sub/c.bin"), QByteArray("\0\1\3\4", 4));
        d = diffAgainstSeed(backend, QStringLiteral("sub/c.bin"));
        QCOMPARE(d.kind, FileDiff::Kind::Binary);
        QVERIFY(d.note.contains(QStringLiteral("Binary")));
        QVERIFY(d.body.contains(
            QStringLiteral("sha256 ") +
            QCryptographicHash::hash(QByteArray("\0\1\3\4", 4), QCryptographicHash::Sha256)
                .toHex()));
        QVERIFY(d.body.contains(QStringLiteral("(3 bytes)")));

        // The seed folder's copy changed after the seed: said, and compared with it.
        QTest::qWait(15); // another mtime
        writeHostFile(project + QStringLiteral("/a.txt"), "one\ntwo\nthree\nhost edit\n");
        d = diffAgainstSeed(backend, QStringLiteral("a.txt"));
        QVERIFY2(d.note.contains(QStringLiteral("changed after the seed")), qPrintable(d.note));
        QVERIFY(d.body.contains(QStringLiteral("-host edit\n")));

        // A link out of the seed folder is never followed.
        QVERIFY(QFile::remove(project + QStringLiteral("/a.txt")));
        QVERIFY(QFile::link(m_tmp.filePath(QStringLiteral("outside.txt")),
                            project + QStringLiteral("/a.txt")));
        writeHostFile(m_tmp.filePath(QStringLiteral("outside.txt")), "secret\n");
        d = diffAgainstSeed(backend, QStringLiteral("a.txt"));
        QVERIFY(!d.text().contains(QStringLiteral("secret")));
    }

    // The live model: rows merged as the workspace changes, never a reset.
    void liveModelMergesRows()
    {
        SandboxController c;
        const SandboxSpec s = spec(QStringLiteral("changes"));
        c.addSandbox(s);
        QVERIFY(waitStarted(c, s.workspaceId));
        ChangesModel model(&c);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::Fatal);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy scanned(&model, &ChangesModel::scanned);
        model.setWorkspace(s.workspaceId);
        QTRY_VERIFY(scanned.size() >= 1);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.base(), ChangeBase::Seed);

        c.writeFile(s.workspaceId, QStringLiteral("added.txt"), "new\n");
        QTRY_COMPARE(model.rowOf(QStringLiteral("added.txt")), 0);
        const QPersistentModelIndex added = model.index(0, 0);
        QCOMPARE(model.index(0, ChangesModel::ChangeColumn).data().toString(),
                 QStringLiteral("added"));
        QCOMPARE(model.index(0, 0).data(Roles::ChangeKindRole).toInt(), int(K::Added));

        c.deleteFiles(s.workspaceId, {QStringLiteral("b.txt")});
        QTRY_VERIFY(model.rowOf(QStringLiteral("b.txt")) >= 0);
        QCOMPARE(model.change(model.rowOf(QStringLiteral("b.txt"))).kind, K::Deleted);
        QVERIFY(added.isValid()); // merged, not rebuilt: the index still names its row
        QCOMPARE(added.data().toString(), QStringLiteral("added.txt"));

        // A command's changes show when it ends.
        QSignalSpy finished(&c, &SandboxController::commandFinished);
        c.execute(s.workspaceId, QStringLiteral("printf 'x\\n' >> a.txt; rm added.txt"));
        QTRY_VERIFY(finished.size() == 1);
        QTRY_VERIFY(model.rowOf(QStringLiteral("added.txt")) < 0 &&
                    model.rowOf(QStringLiteral("a.txt")) >= 0);
        QCOMPARE(kinds(model), (QHash<QString, K>{{QStringLiteral("a.txt"), K::Modified},
                                                  {QStringLiteral("b.txt"), K::Deleted}}));
        QVERIFY(model.index(model.rowOf(QStringLiteral("a.txt")), ChangesModel::SizeColumn)
                    .data()
                    .toString()
                    .contains(QStringLiteral("→")));
        QCOMPARE(resets.size(), 0);

        // Inactive: mutations are not scanned; turning it on scans once.
        model.setActive(false);
        const int before = model.scanCount();
        c.writeFile(s.workspaceId, QStringLiteral("later.txt"), "l\n");
        c.waitForIdle();
        QTest::qWait(model.scanDelayMs() + 50);
        QCOMPARE(model.scanCount(), before);
        model.setActive(true);
        QTRY_VERIFY(model.rowOf(QStringLiteral("later.txt")) >= 0);

        // Another sandbox: the rows go (removed, not reset).
        model.setWorkspace(QString());
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(resets.size(), 0);
    }

    // The sampler sees a running command's processes, and nothing once it ended.
    void samplerSeesRunningCommands()
    {
        SandboxController c;
        const SandboxSpec s = spec(QStringLiteral("sampler"), false);
        c.addSandbox(s);
        QVERIFY(waitStarted(c, s.workspaceId));
        ResourceSampler sampler(&c);
        sampler.setIntervalMs(50);
        sampler.setWorkspace(s.workspaceId);
        QVERIFY(sampler.isSupported());
        QSignalSpy sampled(&sampler, &ResourceSampler::sampled);
        const quint64 id = c.execute(s.workspaceId, QStringLiteral("sleep 30 & sleep 30; wait"));
        QVERIFY(id != 0);
        sampler.setActive(true);
        QTRY_VERIFY(sampler.last().valid && sampler.last().processes >= 3);
        QCOMPARE(sampler.last().commands, 1);
        QVERIFY(sampler.last().rssBytes > 0);
        QVERIFY(sampler.last().cpuPercent >= 0);
        c.cancelCommand(id);
        QTRY_VERIFY(!c.isCommandRunning(id));
        QTRY_VERIFY(sampler.last().valid && sampler.last().commands == 0 &&
                    sampler.last().processes == 0);
        sampler.setActive(false);
    }
};

QTEST_MAIN(TestChangesModel)
#include "tst_changesmodel.moc"
