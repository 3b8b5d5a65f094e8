// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Per-call cost of BwrapSandboxBackend::execute("true") against the floor: a bare
// posix_spawn of bwrap with exactly the arguments the backend gives it, plus waitpid. The
// difference is the backend's own work: the per-call pids cgroup (made, joined between fork
// and exec, removed), the output pipes and poll loop, and building the arguments.
//
// Usage: bwrap_bench [calls per variant, default 200]
// BWRAP_BENCH_NO_CGROUP=1 measures the backend without its per-call pids cgroup.

#include "bwrapsandboxbackend.h"
#include "errors.h"
#include "pairbench.h"

#include <QTemporaryDir>

#include <cstdlib>

int main(int argc, char **argv)
{
    const int calls = argc > 1 ? std::max(10, std::atoi(argv[1])) : 200;

    QTemporaryDir dir;
    elsai::BwrapSandboxBackend::Options options;
    options.pidsCgroup = qEnvironmentVariableIsEmpty("BWRAP_BENCH_NO_CGROUP");
    elsai::BwrapSandboxBackend backend(dir.path(), {}, options);
    try {
        backend.create();
    } catch (const elsai::SandboxError &e) {
        std::fprintf(stderr, "bwrap_bench: %s\n", qPrintable(e.display()));
        return 2;
    }
    std::vector<QByteArray> bare{backend.bwrapProgram().toLocal8Bit()};
    for (const QString &a : backend.bwrapArguments(QStringLiteral("true")))
        bare.push_back(a.toLocal8Bit());
    char path[] = "PATH=/usr/bin:/bin";
    char *envp[] = {path, nullptr}; // what the backend gives bwrap (which clears it anyway)

    elsai::bench::PairResult r;
    if (!elsai::bench::runPair(
            "bwrap_bench", calls, 10, 10,
            [&] { return backend.execute(QStringLiteral("true")).exitCode == 0; },
            [&] { return elsai::bench::spawnAndWait(bare, envp); }, &r))
        return 1;
    elsai::bench::printMedianRatio("execute(\"true\") via bwrap", "bare bwrap", r, 1.2);
    return r.failures == 0 ? 0 : 1;
}
