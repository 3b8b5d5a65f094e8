// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// execute("true") through SshSandboxBackend against a bare `ssh … true` over the SAME
// ControlMaster connection (the floor: one mux channel, one remote login shell). A throwaway
// sshd on 127.0.0.1 (tests/sshfixture.h) is the remote. read_file("d/f.txt") and
// list_dir("d") are measured the same way against the same floor (informational: each walks
// one folder and asks the kernel where it ended up).
//
// Usage: ssh_bench [calls per variant, default 200]

#include "pairbench.h"
#include "sshfixture.h"

#include <QStandardPaths>

#include <cstdlib>

int main(int argc, char **argv)
{
    const int calls = argc > 1 ? std::max(10, std::atoi(argv[1])) : 200;

    elsai::test::SshServer sshd;
    if (!sshd.start()) {
        std::fprintf(stderr, "ssh_bench: %s\n", qPrintable(sshd.error()));
        return 2;
    }
    const auto backend = sshd.makeBackend(QStringLiteral("bench"));
    backend->create();
    const auto conn = backend->connection();
    std::vector<QByteArray> bare{QStandardPaths::findExecutable(QStringLiteral("ssh")).toUtf8()};
    for (const QString &a : conn->clientArguments("true"))
        bare.push_back(a.toUtf8());
    const auto bareSsh = [&] { return elsai::bench::spawnAndWait(bare, environ, true); };

    elsai::bench::PairResult exec, read, list;
    bool ran = elsai::bench::runPair(
        "ssh_bench", calls, 10, 10,
        [&] { return backend->execute(QStringLiteral("true")).exitCode == 0; }, bareSsh, &exec);
    backend->writeFile(QStringLiteral("d/f.txt"), QByteArray(4096, 'x'));
    const int fileCalls = std::max(10, calls / 4);
    ran = ran &&
          elsai::bench::runPair(
              "ssh_bench", fileCalls, 10, 0,
              [&] { return backend->readFile(QStringLiteral("d/f.txt")).size() == 4096; }, bareSsh,
              &read) &&
          elsai::bench::runPair(
              "ssh_bench", fileCalls, 10, 0,
              [&] { return backend->listDir(QStringLiteral("d")).size() == 1; }, bareSsh, &list);
    backend->close();
    if (!ran)
        return 1;
    elsai::bench::printMedianRatio("execute over ssh", "bare ssh on the same master", exec, 1.2);
    elsai::bench::printMedianRatio("read_file(\"d/f.txt\") over ssh", "bare ssh", read, 0);
    elsai::bench::printMedianRatio("list_dir(\"d\") over ssh", "bare ssh", list, 0);
    return exec.failures + read.failures + list.failures == 0 ? 0 : 1;
}
