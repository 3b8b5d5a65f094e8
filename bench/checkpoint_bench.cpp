// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Checkpoints and change tracking against their floors (docs/checkpoints.md), on a generated
// tree of 20,000 files of 200 B - 4 KB in 2,000 folders, every figure the median of interleaved
// rounds run in one process:
//   1. first checkpoint of the tree          vs `cp -a` of it            (target <= 1.0)
//   2. second checkpoint after 10 changes    vs `cp -a`                  (target <= 0.1)
//   3. restore after 10 changes              vs `rsync -a --delete` from a copy (<= 0.5)
//   4. diff of two checkpoints, 10 changes   vs `diff -r` of two copies  (<= 0.5)
//      (1-4 with change tracking on, as the window starts a local sandbox: the second
//      checkpoint and the restore look only at the paths the tracker saw touched; the same
//      two without tracking follow, each whole-tree walk then)
//   5. execute("true") with change tracking  vs without                  (<= 1.3)
//   6. a command touching 10,000 files: the count its result reports (must be 10,000)
//   7. a command changing 10 files with checkpoints too (the call journal stores their
//      contents for the call's diff)  vs  with change tracking alone       (<= 1.3)
//
//   checkpoint_bench [--rounds N] [--work DIR]
// Where: /dev/shm when it has room (the tools' own cost, no disk writeback), else $TMPDIR.

#include "agent.h"
#include "benchtree.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "sandbox.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLoggingCategory>
#include <QTemporaryDir>

#include <cstdio>

using namespace elsai;
using namespace elsai::bench;

namespace {

constexpr int Folders = 2000;

SandboxPtr makeSandbox(const QString &ws, const QString &store, bool checkpoints, bool track)
{
    Sandbox::Options o;
    o.timeTravel.checkpoints = checkpoints;
    o.timeTravel.baseline = false;
    o.timeTravel.trackChanges = track;
    o.timeTravel.folder = store;
    return Sandbox::create(QStringLiteral("bench-%1-%2").arg(checkpoints).arg(track),
                           std::make_shared<LocalSandboxBackend>(ws), std::nullopt, o);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false"));
    int rounds = 5;
    QString work;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (qstrcmp(argv[i], "--rounds") == 0)
            rounds = qMax(1, atoi(argv[i + 1]));
        else if (qstrcmp(argv[i], "--work") == 0)
            work = QString::fromLocal8Bit(argv[i + 1]);
    }
    if (work.isEmpty())
        work = QFileInfo(QStringLiteral("/dev/shm")).isWritable() ? QStringLiteral("/dev/shm")
                                                                  : QDir::tempPath();
    QTemporaryDir tmp(work + QStringLiteral("/checkpoint-bench-XXXXXX"));
    const QString root = tmp.path();
    const QString ws = root + QStringLiteral("/ws");
    generateTree(ws, Folders);
    std::printf("tree: %d files in %d folders (in %s)\n", Folders * FilesPerFolder, Folders,
                qPrintable(root));
    try {
        std::vector<double> first, cpFirst, second, cpSecond, restore, rsync, diff, diffR;
        std::vector<double> secondWalk, cpSecondWalk, restoreWalk, rsyncWalk;
        quint64 walks = 0;
        for (int r = 0; r < rounds; ++r) {
            const QString store = root + QStringLiteral("/store%1").arg(r);
            const QString copy = root + QStringLiteral("/copy%1").arg(r);
            const SandboxPtr s = makeSandbox(ws, store, true, true);
            s->start();
            // 1. first checkpoint vs cp -a (alternating which goes first)
            const auto cp = [&] {
                return timedMs([&] { runCommand({"/bin/cp", "-a", ws, copy}); });
            };
            const auto ck = [&] { return timedMs([&] { s->checkpoint(QStringLiteral("c0")); }); };
            if (r % 2) {
                cpFirst.push_back(cp());
                first.push_back(ck());
            } else {
                first.push_back(ck());
                cpFirst.push_back(cp());
            }
            // 2. after 10 changes
            change10(ws, Folders, r);
            second.push_back(timedMs([&] { s->checkpoint(QStringLiteral("c1")); }));
            cpSecond.push_back(timedMs([&] {
                runCommand({"/bin/cp", "-a", ws, copy + QStringLiteral("-2")});
            }));
            // 4. diff of the two checkpoints vs diff -r of two copies (c0 = copy, c1 = copy-2)
            diff.push_back(
                timedMs([&] { s->diffCheckpoints(QStringLiteral("c0"), QStringLiteral("c1")); }));
            diffR.push_back(timedMs([&] {
                std::vector<QByteArray> a{"/usr/bin/diff", "-r", QFile::encodeName(copy),
                                          QFile::encodeName(copy + QStringLiteral("-2"))};
                spawnAndWait(a, environ, true); // exit status 1: differences
            }));
            // 3. restore c0 after the 10 changes vs rsync -a --delete from a copy of c0
            restore.push_back(timedMs([&] { s->restore(QStringLiteral("c0")); }));
            change10(ws, Folders, r + 100);
            rsync.push_back(timedMs([&] {
                runCommand({"/usr/bin/rsync", "-a", "--delete", copy + u'/', ws + u'/'});
            }));
            walks += s->timeTravel()->treeWalks();
            s->stop(false);
            // 2 and 3 without change tracking: a whole-tree walk each (the hash cache helps)
            {
                const SandboxPtr w = makeSandbox(ws, store + QStringLiteral("-w"), true, false);
                w->start();
                w->checkpoint(QStringLiteral("c0"));
                change10(ws, Folders, r + 200);
                secondWalk.push_back(timedMs([&] { w->checkpoint(QStringLiteral("c1")); }));
                cpSecondWalk.push_back(timedMs([&] {
                    runCommand({"/bin/cp", "-a", ws, copy + QStringLiteral("-3")});
                }));
                restoreWalk.push_back(timedMs([&] { w->restore(QStringLiteral("c0")); }));
                change10(ws, Folders, r + 300);
                rsyncWalk.push_back(timedMs([&] {
                    runCommand({"/usr/bin/rsync", "-a", "--delete", copy + u'/', ws + u'/'});
                }));
                w->stop(false);
                QDir(copy + QStringLiteral("-3")).removeRecursively();
                runCommand({"/bin/chmod", "-R", "u+w", store + QStringLiteral("-w")});
                QDir(store + QStringLiteral("-w")).removeRecursively();
            }
            QDir(copy).removeRecursively();
            QDir(copy + QStringLiteral("-2")).removeRecursively();
            runCommand({"/bin/chmod", "-R", "u+w", store});
            QDir(store).removeRecursively();
        }
        reportRatio("first checkpoint (20,000 files)", first, cpFirst, "cp -a", 1.0);
        reportRatio("second checkpoint (10 changed)", second, cpSecond, "cp -a", 0.1);
        reportRatio("restore after 10 changes", restore, rsync, "rsync -a --delete", 0.5);
        reportRatio("diff of two checkpoints (10 changes)", diff, diffR, "diff -r", 0.5);
        std::printf("  (with change tracking: %.1f whole-tree walks per round, the first "
                    "checkpoint's)\n",
                    double(walks) / rounds);
        reportRatio("second checkpoint, no tracking", secondWalk, cpSecondWalk, "cp -a", 0.1);
        reportRatio("restore after 10 changes, no tracking", restoreWalk, rsyncWalk,
                    "rsync -a --delete", 0.5);

        // 5. tracking overhead on execute("true"), interleaved
        const SandboxPtr plain = makeSandbox(ws, QString(), false, false);
        const SandboxPtr tracked = makeSandbox(ws + QStringLiteral("-t"), QString(), false, true);
        runCommand({"/bin/cp", "-a", ws, ws + QStringLiteral("-t")});
        plain->start();
        QElapsedTimer setup;
        setup.start();
        tracked->start();
        const double setupMs = double(setup.nsecsElapsed()) / 1e6;
        AgentConfig c1;
        c1.sandbox = plain;
        const AgentPtr a1 = Agent::create(QStringLiteral("plain"), c1);
        AgentConfig c2;
        c2.sandbox = tracked;
        const AgentPtr a2 = Agent::create(QStringLiteral("tracked"), c2);
        const QJsonObject args{{QStringLiteral("command"), QStringLiteral("true")}};
        std::vector<double> with, without;
        for (int i = 0; i < 20; ++i) {
            a1->callTool(QStringLiteral("execute"), args);
            a2->callTool(QStringLiteral("execute"), args);
        }
        for (int i = 0; i < 30 * rounds; ++i) {
            if (i % 2) {
                without.push_back(timedMs([&] { a1->callTool(QStringLiteral("execute"), args); }));
                with.push_back(timedMs([&] { a2->callTool(QStringLiteral("execute"), args); }));
            } else {
                with.push_back(timedMs([&] { a2->callTool(QStringLiteral("execute"), args); }));
                without.push_back(timedMs([&] { a1->callTool(QStringLiteral("execute"), args); }));
            }
        }
        reportRatio("execute(\"true\") with change tracking", with, without, "without tracking",
                    1.3);
        std::printf("  (tracking set-up at start: %.1f ms, %d folders watched)\n", setupMs,
                    tracked->timeTravel()->tracker()->watchCount());
        // 6. a command touching 10,000 files reports all of them
        const ToolResult touch = a2->callTool(
            QStringLiteral("execute"),
            {{QStringLiteral("command"),
              QStringLiteral("for d in src/d*/s*; do touch $d/f0.txt $d/f1.txt $d/f2.txt "
                             "$d/f3.txt $d/f4.txt; done")}});
        const qint64 modified = touch.data.value(QStringLiteral("changes"))
                                    .toObject()
                                    .value(QStringLiteral("modified"))
                                    .toInteger();
        std::printf("%-44s %lld of 10000 reported %s\n", "a command touching 10,000 files",
                    static_cast<long long>(modified), modified == 10000 ? "ok" : "WRONG");
        // 7. the call journal: each call's changed contents go to the store, interleaved
        runCommand({"/bin/cp", "-a", ws, ws + QStringLiteral("-j")});
        const SandboxPtr journaled =
            makeSandbox(ws + QStringLiteral("-j"), root + QStringLiteral("/store-j"), true, true);
        journaled->start();
        AgentConfig c3;
        c3.sandbox = journaled;
        const AgentPtr a3 = Agent::create(QStringLiteral("journaled"), c3);
        std::vector<double> journal, trackedOnly;
        for (int i = 0; i < 10 * rounds; ++i) {
            const QJsonObject edit{
                {QStringLiteral("command"),
                 QStringLiteral("for f in src/d0/s0/f*.txt; do echo %1 >> $f; done").arg(i)}};
            if (i % 2) {
                trackedOnly.push_back(
                    timedMs([&] { a2->callTool(QStringLiteral("execute"), edit); }));
                journal.push_back(timedMs([&] { a3->callTool(QStringLiteral("execute"), edit); }));
            } else {
                journal.push_back(timedMs([&] { a3->callTool(QStringLiteral("execute"), edit); }));
                trackedOnly.push_back(
                    timedMs([&] { a2->callTool(QStringLiteral("execute"), edit); }));
            }
        }
        reportRatio("a command changing 10 files, journaled", journal, trackedOnly,
                    "tracking alone", 1.3);
        plain->stop(false);
        tracked->stop(false);
        journaled->stop(false);
        return modified == 10000 ? 0 : 1;
    } catch (const SandboxError &e) {
        std::fprintf(stderr, "%s\n", qPrintable(e.display()));
        return 1;
    }
}
