// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Per-call overhead of runProcess() against the floor: a bare posix_spawn of /bin/sh -c true
// plus waitpid.
//
// Usage: exec_bench [calls per variant, default 500]

#include "pairbench.h"
#include "process.h"

#include <QStringList>

#include <cstdlib>

int main(int argc, char **argv)
{
    const int calls = argc > 1 ? std::max(10, std::atoi(argv[1])) : 500;

    elsai::ProcessSpec spec;
    spec.command = QStringLiteral("true");
    for (char **e = environ; *e; ++e) // same environment as the bare spawn gets
        spec.environment.append(QString::fromLocal8Bit(*e));
    const std::vector<QByteArray> bare{"/bin/sh", "-c", "true"};

    elsai::bench::PairResult r;
    if (!elsai::bench::runPair(
            "exec_bench", calls, 20, 50, [&] { return elsai::runProcess(spec).exitCode == 0; },
            [&] { return elsai::bench::spawnAndWait(bare); }, &r))
        return 1;
    elsai::bench::printMedianRatio("execute", "bare spawn", r, 1.5);
    return r.failures == 0 ? 0 : 1;
}
