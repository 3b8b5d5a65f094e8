// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Conflicts on flush, randomized: a host file changed since seeding (or since the last flush)
// while the workspace copy changed too must never be silently overwritten. Each trial seeds a
// small project, changes a random subset of files on the host and/or in the workspace (some
// host changes keep the size and come right after seeding, the case a size+mtime stamp can
// miss), flushes, and checks every file against what must be there; a second round repeats it
// after the flush. Seeded RNG, seed printed: ELSAI_CONFLICT_SEED=N reproduces a run,
// ELSAI_CONFLICT_TRIALS=N sets the trial count (CI default 150).
//
// Then the three-way rules as a user meets them, one row each, through the local backend:
// a second flush next to a conflict file the user edited, a host deletion, a sandbox deletion,
// and a flush after the workbench restarted (the base read back from beside the workspace).
#include "errors.h"
#include "flushbase.h"
#include "localsandboxbackend.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonObject>

#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

class TestFlushConflicts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false")); }
    void randomizedTrials();
    void rules_data();
    void rules();
    void forgedOrStaleBaseIsIgnored_data();
    void forgedOrStaleBaseIsIgnored();
};

void TestFlushConflicts::randomizedTrials()
{
    const quint32 seed = qEnvironmentVariableIsSet("ELSAI_CONFLICT_SEED")
                             ? quint32(qEnvironmentVariableIntValue("ELSAI_CONFLICT_SEED"))
                             : QRandomGenerator::system()->generate();
    const int trials = qEnvironmentVariableIntValue("ELSAI_CONFLICT_TRIALS") > 0
                           ? qEnvironmentVariableIntValue("ELSAI_CONFLICT_TRIALS")
                           : 150;
    QRandomGenerator rng(seed);
    constexpr int Files = 6;
    int bothChanged = 0, silentOverwrites = 0, wrong = 0, checked = 0;
    QStringList problems;
    auto content = [&](const char *tag, int size) {
        QByteArray b(size, 'x');
        for (char &c : b)
            c = char('a' + rng.bounded(26));
        return QByteArray(tag) + ':' + b;
    };
    for (int trial = 0; trial < trials; ++trial) {
        QTemporaryDir tmp;
        const QString host = tmp.path() + QStringLiteral("/host");
        const QString ws = tmp.path() + QStringLiteral("/ws");
        QList<QByteArray> hostNow;
        for (int i = 0; i < Files; ++i) {
            hostNow.append(content("seed", 64));
            writeHostFile(host + QStringLiteral("/src/f%1.py").arg(i), hostNow[i]);
        }
        LocalSandboxBackend backend(ws);
        backend.create();
        backend.seedWorkspace(host, {});
        for (int round = 0; round < 2; ++round) {
            QList<bool> hostChanged, wsChanged;
            QList<QByteArray> wsNew;
            for (int i = 0; i < Files; ++i) {
                const QString rel = QStringLiteral("src/f%1.py").arg(i);
                const bool h = rng.bounded(2);
                const bool w = rng.bounded(2);
                hostChanged << h;
                wsChanged << w;
                if (h) {
                    // same size half of the time: only the content tells it apart
                    hostNow[i] = rng.bounded(2) ? content("host", int(hostNow[i].size()) - 5)
                                                : content("host-longer", 100);
                    writeHostFile(host + QLatin1Char('/') + rel, hostNow[i]);
                }
                wsNew << (w ? content("ws", 80) : QByteArray());
                if (w)
                    backend.writeFile(rel, wsNew[i]);
            }
            const WorkspaceSyncResult r = backend.syncArtifacts(host, defaultSandboxSyncPolicy());
            for (int i = 0; i < Files; ++i) {
                const QString rel = QStringLiteral("src/f%1.py").arg(i);
                const QByteArray now = readHostFile(host + QLatin1Char('/') + rel);
                ++checked;
                if (hostChanged[i] && wsChanged[i]) {
                    ++bothChanged;
                    const bool kept = now == hostNow[i];
                    const bool beside =
                        readHostFile(host + QLatin1Char('/') + rel +
                                     QStringLiteral(".sandbox-conflict")) == wsNew[i];
                    if (!kept)
                        ++silentOverwrites;
                    if (!kept || !beside || !r.conflicts.contains(rel))
                        problems << QStringLiteral(
                                        "trial %1 round %2 %3: both changed; host kept %4, "
                                        "sandbox copy beside %5, reported %6")
                                        .arg(trial)
                                        .arg(round)
                                        .arg(rel)
                                        .arg(kept)
                                        .arg(beside)
                                        .arg(r.conflicts.contains(rel));
                } else if (hostChanged[i]) {
                    if (now != hostNow[i]) {
                        ++silentOverwrites;
                        problems << QStringLiteral("trial %1 round %2 %3: host change lost")
                                        .arg(trial)
                                        .arg(round)
                                        .arg(rel);
                    }
                } else if (wsChanged[i]) {
                    if (now != wsNew[i]) {
                        ++wrong;
                        problems << QStringLiteral(
                                        "trial %1 round %2 %3: workspace change not flushed")
                                        .arg(trial)
                                        .arg(round)
                                        .arg(rel);
                    }
                } else if (now != hostNow[i]) {
                    ++wrong;
                    problems << QStringLiteral("trial %1 round %2 %3: untouched file changed")
                                    .arg(trial)
                                    .arg(round)
                                    .arg(rel);
                }
                // after the flush both sides agree on what the next round starts from
                if (wsChanged[i] && !hostChanged[i])
                    hostNow[i] = wsNew[i];
                // a resolved conflict: take the host version into the workspace as the base
                if (hostChanged[i] && wsChanged[i]) {
                    QFile::remove(host + QLatin1Char('/') + rel +
                                  QStringLiteral(".sandbox-conflict"));
                }
            }
            // start the next round from an agreed state: re-seed from the host
            backend.seedWorkspace(host, {});
        }
    }
    qInfo("conflicts: seed %u, %d trials x 2 flushes, %d file checks, %d with both sides changed, "
          "%d silent overwrites, %d other mismatches",
          seed, trials, checked, bothChanged, silentOverwrites, wrong);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.mid(0, 10).join(u'\n')));
    QCOMPARE(silentOverwrites, 0);
}

namespace {

QStringList jsonList(const WorkspaceSyncResult &r, const char *key)
{
    QStringList out;
    for (const QJsonValue &v : r.toJson().value(QLatin1String(key)).toArray())
        out << v.toString();
    return out;
}

} // namespace

void TestFlushConflicts::rules_data()
{
    QTest::addColumn<QString>("scenario");
    for (const char *s :
         {"second flush keeps an edited conflict file",
          "second flush reuses an identical conflict file", "host deletion stays deleted",
          "sandbox deletion is reported", "after a restart a host-only change is kept",
          "after a restart a host deletion stays deleted",
          "after a restart both changed is a conflict",
          "after a restart a flushed file is the base"})
        QTest::newRow(s) << QString::fromLatin1(s);
}

void TestFlushConflicts::rules()
{
    QFETCH(QString, scenario);
    QTemporaryDir tmp;
    const QString host = tmp.path() + QStringLiteral("/host");
    const QString wsRoot = tmp.path() + QStringLiteral("/ws");
    const QString file = host + QStringLiteral("/src/a.py");
    const QString conflict = file + QStringLiteral(".sandbox-conflict");
    writeHostFile(file, "seeded\n");
    writeHostFile(host + QStringLiteral("/src/other.py"), "other\n");
    auto backend = std::make_unique<LocalSandboxBackend>(wsRoot);
    backend->create();
    QVERIFY(backend->seedWorkspace(host, {}).success());
    const WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
    auto restart = [&] {
        backend = std::make_unique<LocalSandboxBackend>(wsRoot);
        backend->create();
    };
    // a distinct host mtime for the edits below, whatever the file system's granularity
    auto hostEdit = [&](const QByteArray &content) {
        writeHostFile(file, content);
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(QDateTime::currentDateTime().addSecs(60),
                              QFileDevice::FileModificationTime));
    };

    if (scenario.startsWith(QLatin1String("second flush"))) {
        hostEdit("host edit\n");
        backend->writeFile(QStringLiteral("src/a.py"), "sandbox 1\n");
        WorkspaceSyncResult r = backend->syncArtifacts(host, policy);
        QCOMPARE(r.conflicts, QStringList{QStringLiteral("src/a.py")});
        QCOMPARE(readHostFile(conflict), QByteArray("sandbox 1\n"));
        const bool edit = scenario.contains(QLatin1String("edited"));
        if (edit) {
            writeHostFile(conflict, "the user's merge\n");
            backend->writeFile(QStringLiteral("src/a.py"), "sandbox 2\n");
        }
        r = backend->syncArtifacts(host, policy);
        QVERIFY(!r.success());
        QCOMPARE(r.conflicts, QStringList{QStringLiteral("src/a.py")});
        QCOMPARE(readHostFile(file), QByteArray("host edit\n"));
        if (edit) {
            QCOMPARE(readHostFile(conflict), QByteArray("the user's merge\n"));
            QCOMPARE(readHostFile(conflict + QStringLiteral("-2")), QByteArray("sandbox 2\n"));
            QVERIFY(r.errors.join(u'\n').contains(QStringLiteral("src/a.py.sandbox-conflict-2")));
        } else {
            QCOMPARE(readHostFile(conflict), QByteArray("sandbox 1\n"));
            QVERIFY(!QFileInfo::exists(conflict + QStringLiteral("-2")));
        }
    } else if (scenario == QLatin1String("host deletion stays deleted")) {
        QVERIFY(QFile::remove(file));
        const WorkspaceSyncResult r = backend->syncArtifacts(host, policy);
        QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
        QVERIFY(!QFileInfo::exists(file));
        QCOMPARE(r.filesSynced, 0);
        QCOMPARE(jsonList(r, "host_deleted"), QStringList{QStringLiteral("src/a.py")});
    } else if (scenario == QLatin1String("sandbox deletion is reported")) {
        backend->removeFile(QStringLiteral("src/a.py"));
        const WorkspaceSyncResult r = backend->syncArtifacts(host, policy);
        QCOMPARE(readHostFile(file), QByteArray("seeded\n")); // never propagated
        QCOMPARE(jsonList(r, "sandbox_deleted"), QStringList{QStringLiteral("src/a.py")});
    } else if (scenario == QLatin1String("after a restart a host-only change is kept")) {
        restart();
        hostEdit("host edit\n");
        const WorkspaceSyncResult r = backend->syncArtifacts(host, policy);
        QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
        QCOMPARE(readHostFile(file), QByteArray("host edit\n"));
        QVERIFY(!QFileInfo::exists(conflict));
        // and the preview says so too
        backend->writeFile(QStringLiteral("src/other.py"), "changed\n");
        bool updated = false;
        for (const SyncPlanEntry &e : backend->planSync(host, policy).entries)
            updated |= e.path == QLatin1String("src/other.py") &&
                       e.action == SyncPlanEntry::Action::Update;
        QVERIFY(updated);
    } else if (scenario == QLatin1String("after a restart a host deletion stays deleted")) {
        restart();
        QVERIFY(QFile::remove(file));
        const WorkspaceSyncResult r = backend->syncArtifacts(host, policy);
        QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
        QVERIFY(!QFileInfo::exists(file));
    } else if (scenario == QLatin1String("after a restart both changed is a conflict")) {
        restart();
        hostEdit("host edit\n");
        backend->writeFile(QStringLiteral("src/a.py"), "sandbox\n");
        WorkspaceSyncPolicy overwrite = policy;
        overwrite.noBaseConflict = NoBaseConflict::Overwrite; // would overwrite without a base
        const WorkspaceSyncResult r = backend->syncArtifacts(host, overwrite);
        QCOMPARE(r.conflicts, QStringList{QStringLiteral("src/a.py")});
        QCOMPARE(readHostFile(file), QByteArray("host edit\n"));
        QCOMPARE(readHostFile(conflict), QByteArray("sandbox\n"));
    } else if (scenario == QLatin1String("after a restart a flushed file is the base")) {
        backend->writeFile(QStringLiteral("src/a.py"), "flushed\n");
        QVERIFY(backend->syncArtifacts(host, policy).success());
        restart();
        backend->writeFile(QStringLiteral("src/a.py"), "again\n");
        const WorkspaceSyncResult r = backend->syncArtifacts(host, policy);
        QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
        QCOMPARE(readHostFile(file), QByteArray("again\n"));
    } else {
        QFAIL("unknown scenario");
    }
    // The base is kept beside the workspace, never in it.
    QVERIFY(QFileInfo::exists(flushBasePath(wsRoot)));
    QVERIFY(!flushBasePath(wsRoot).startsWith(wsRoot + QLatin1Char('/')));
    for (const FileInfo &f : backend->listDir(QStringLiteral(".")))
        QVERIFY2(!f.path.contains(QStringLiteral("flush-base")), qPrintable(f.path));
}

void TestFlushConflicts::forgedOrStaleBaseIsIgnored_data()
{
    QTest::addColumn<QByteArray>("forge"); // what is done to the base file before the restart
    QTest::newRow("another folder's base") << QByteArray("identity");
    QTest::newRow("garbage") << QByteArray("garbage");
    QTest::newRow("path escaping the workspace") << QByteArray("dotdot");
    QTest::newRow("truncated") << QByteArray("truncate");
}

// A base that does not belong to this folder, or that is not well formed, is not used: the
// safe no-base rule decides (keep the host file, the sandbox version beside it).
void TestFlushConflicts::forgedOrStaleBaseIsIgnored()
{
    QFETCH(QByteArray, forge);
    QTemporaryDir tmp;
    const QString host = tmp.path() + QStringLiteral("/host");
    const QString wsRoot = tmp.path() + QStringLiteral("/ws");
    writeHostFile(host + QStringLiteral("/src/a.py"), "seeded\n");
    {
        LocalSandboxBackend first(wsRoot);
        first.create();
        QVERIFY(first.seedWorkspace(host, {}).success());
    }
    const QString baseFile = flushBasePath(wsRoot);
    QByteArray data = readHostFile(baseFile);
    if (forge == "identity") {
        // the folder is replaced by another of the same name (the old one still exists, so
        // the new one cannot get its inode)
        QVERIFY(QDir().rename(wsRoot, wsRoot + QStringLiteral("-old")));
        QVERIFY(QDir().mkpath(wsRoot));
        writeHostFile(wsRoot + QStringLiteral("/src/a.py"), "seeded\n");
    } else if (forge == "garbage") {
        data = "not a base";
    } else if (forge == "dotdot") {
        data.replace("\tsrc/a.py", "\t../escape");
    } else {
        data.chop(3);
    }
    writeHostFile(baseFile, data);
    LocalSandboxBackend second(wsRoot);
    if (forge != "identity") // another folder's base is not ours: no need to say so
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("ignoring the "
                                                                             "flush base")));
    second.create();
    // changed on the host only: with the base the host would win silently; without one the
    // contents differ and both are kept
    writeHostFile(host + QStringLiteral("/src/a.py"), "host edit\n");
    const WorkspaceSyncResult r = second.syncArtifacts(host, defaultSandboxSyncPolicy());
    QCOMPARE(r.conflicts, QStringList{QStringLiteral("src/a.py")});
    QCOMPARE(readHostFile(host + QStringLiteral("/src/a.py")), QByteArray("host edit\n"));
    QVERIFY(!QFileInfo::exists(tmp.path() + QStringLiteral("/escape")));
}

QTEST_GUILESS_MAIN(TestFlushConflicts)
#include "tst_flushconflicts.moc"
