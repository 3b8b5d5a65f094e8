// Conflicts on flush, randomized: a host file changed since seeding (or since the last flush)
// while the workspace copy changed too must never be silently overwritten. Each trial seeds a
// small project, changes a random subset of files on the host and/or in the workspace (some
// host changes keep the size and come right after seeding, the case a size+mtime stamp can
// miss), flushes, and checks every file against what must be there; a second round repeats it
// after the flush. Seeded RNG, seed printed: ELSAI_CONFLICT_SEED=N reproduces a run,
// ELSAI_CONFLICT_TRIALS=N sets the trial count (CI default 150).
#include "errors.h"
#include "localsandboxbackend.h"
#include "testutil.h"

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

QTEST_GUILESS_MAIN(TestFlushConflicts)
#include "tst_flushconflicts.moc"
