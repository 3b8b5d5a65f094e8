// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Checkpoints on a remote backend (SSH; docs/checkpoints.md, Backends) against rsync over the
// same SSH connection, on a generated tree of 2,000 files of 200 B - 4 KB in 200 folders. A
// throwaway sshd on 127.0.0.1 (tests/sshfixture.h) is the remote: the figures are the
// protocol's and the tools' own cost, no network. Every figure is the median of the per-round
// ratios of interleaved rounds run in one process:
//   1. first checkpoint (one listing, every file in one archive)
//        vs `rsync -a` of the remote tree into an empty local folder        (target <= 1.0)
//   2. second checkpoint after 10 changes (one listing, the 10 in one archive)
//        vs `rsync -a` of the remote tree into that copy (it lists too)     (target <= 1.0)
//   3. restore after 10 changes (listing, one archive back, listing to verify)
//        vs `rsync -a --delete` from a local copy into the remote tree      (target <= 1.0)
//   4. execute("true") with change tracking (a listing at its start and end)
//        vs without tracking                                    (informational: the cost
//                                                                 the New Sandbox dialog names)
//
//   remote_checkpoint_bench [--rounds N] [--files N]
// rsync runs `ssh -F <the backend's client config>`, so both sides use one ControlMaster.

#include "agent.h"
#include "benchtree.h"
#include "errors.h"
#include "sandbox.h"
#include "sshconnection.h"
#include "sshfixture.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLoggingCategory>
#include <QTemporaryDir>

#include <cstdio>

using namespace elsai;
using namespace elsai::bench;

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false"));
    int rounds = 5;
    int files = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (qstrcmp(argv[i], "--rounds") == 0)
            rounds = qMax(1, atoi(argv[i + 1]));
        else if (qstrcmp(argv[i], "--files") == 0)
            files = qMax(2000, atoi(argv[i + 1])); // change10() needs 200 folders
    }
    const QString rsync = QStandardPaths::findExecutable(QStringLiteral("rsync"));
    if (rsync.isEmpty()) {
        std::fprintf(stderr, "remote_checkpoint_bench: rsync is needed (apt-get install rsync)\n");
        return 2;
    }
    test::SshServer sshd;
    if (!sshd.start()) {
        std::fprintf(stderr, "remote_checkpoint_bench: %s\n", qPrintable(sshd.error()));
        return 2;
    }
    QTemporaryDir tmp(QDir::tempPath() + QStringLiteral("/remote-checkpoint-bench-XXXXXX"));
    const QString root = tmp.path();
    const int folders = files / FilesPerFolder;
    try {
        std::vector<double> first, pullFirst, second, pullSecond, restore, push;
        for (int r = 0; r < rounds; ++r) {
            const auto backend = sshd.makeBackend(QStringLiteral("bench%1").arg(r));
            Sandbox::Options o;
            o.timeTravel.checkpoints = true;
            o.timeTravel.trackChanges = true;
            o.timeTravel.baseline = false;
            o.timeTravel.folder = root + QStringLiteral("/store%1").arg(r);
            const SandboxPtr s =
                Sandbox::create(QStringLiteral("bench-%1").arg(r), backend, std::nullopt, o);
            s->start();
            const QString ws = sshd.remoteRoot() + QStringLiteral("/bench%1").arg(r);
            generateTree(ws, folders);
            const QString copy = root + QStringLiteral("/copy%1").arg(r);
            QDir().mkpath(copy);
            const QString sshE = QStringLiteral("ssh -F ") + backend->connection()->configPath();
            const QString remoteWs = ssh::SshConnection::alias() + u':' + ws + u'/';
            const auto pull = [&] {
                return timedMs([&] {
                    runCommand({rsync, "-a", "-e", sshE, remoteWs, copy + u'/'});
                });
            };
            // 1. first checkpoint vs a whole pull (alternating which goes first)
            const auto ck = [&] { return timedMs([&] { s->checkpoint(QStringLiteral("c0")); }); };
            if (r % 2) {
                pullFirst.push_back(pull());
                first.push_back(ck());
            } else {
                first.push_back(ck());
                pullFirst.push_back(pull());
            }
            // 2. after 10 changes: both list the remote tree and bring the 10
            change10(ws, folders, r);
            const QString before = copy + QStringLiteral("-c0");
            runCommand({"/bin/cp", "-a", copy, before}); // the c0 state, for the restore's baseline
            if (r % 2) {
                pullSecond.push_back(pull());
                second.push_back(timedMs([&] { s->checkpoint(QStringLiteral("c1")); }));
            } else {
                second.push_back(timedMs([&] { s->checkpoint(QStringLiteral("c1")); }));
                pullSecond.push_back(pull());
            }
            // 3. restore c0 after 10 changes vs rsync --delete of the c0 copy into the tree
            restore.push_back(timedMs([&] { s->restore(QStringLiteral("c0")); }));
            change10(ws, folders, r + 100);
            push.push_back(timedMs([&] {
                runCommand({rsync, "-a", "--delete", "-e", sshE, before + u'/', remoteWs});
            }));
            s->stop(false);
            for (const QString &d : {copy, before, o.timeTravel.folder}) {
                runCommand({"/bin/chmod", "-R", "u+w", d});
                QDir(d).removeRecursively();
            }
            QDir(ws).removeRecursively();
        }
        std::printf("tree: %d files in %d folders, over ssh to 127.0.0.1\n",
                    folders * FilesPerFolder, folders);
        reportRatio("first checkpoint", first, pullFirst, "rsync -a (pull, empty copy)", 1.0);
        reportRatio("second checkpoint (10 changed)", second, pullSecond,
                    "rsync -a (pull into copy)", 1.0);
        reportRatio("restore after 10 changes", restore, push, "rsync -a --delete (push)", 1.0);

        // 4. what change tracking costs a call here: a listing at its start and its end
        const auto trackedBackend = sshd.makeBackend(QStringLiteral("bench-tracked"));
        const auto plainBackend = sshd.makeBackend(QStringLiteral("bench-plain"));
        Sandbox::Options on;
        on.timeTravel.trackChanges = true;
        const SandboxPtr tracked =
            Sandbox::create(QStringLiteral("bench-t"), trackedBackend, std::nullopt, on);
        const SandboxPtr plain = Sandbox::create(QStringLiteral("bench-p"), plainBackend,
                                                 std::nullopt, Sandbox::Options());
        tracked->start();
        plain->start();
        generateTree(sshd.remoteRoot() + QStringLiteral("/bench-tracked"), folders);
        AgentConfig c1;
        c1.sandbox = plain;
        const AgentPtr a1 = Agent::create(QStringLiteral("plain"), c1);
        AgentConfig c2;
        c2.sandbox = tracked;
        const AgentPtr a2 = Agent::create(QStringLiteral("tracked"), c2);
        const QJsonObject args{{QStringLiteral("command"), QStringLiteral("true")}};
        std::vector<double> with, without;
        for (int i = 0; i < 3; ++i) {
            a1->callTool(QStringLiteral("execute"), args);
            a2->callTool(QStringLiteral("execute"), args);
        }
        for (int i = 0; i < 6 * rounds; ++i) {
            const bool trackedFirst = i % 2 == 0;
            for (int k = 0; k < 2; ++k) {
                if ((k == 0) == trackedFirst)
                    with.push_back(timedMs([&] { a2->callTool(QStringLiteral("execute"), args); }));
                else
                    without.push_back(
                        timedMs([&] { a1->callTool(QStringLiteral("execute"), args); }));
            }
        }
        reportRatio("execute(\"true\") with change tracking", with, without, "without tracking", 0);
        tracked->stop(false);
        plain->stop(false);
        return 0;
    } catch (const SandboxError &e) {
        std::fprintf(stderr, "%s\n", qPrintable(e.display()));
        return 1;
    }
}
