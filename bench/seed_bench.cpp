// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Seeds a workspace from a host folder with the default excludes and prints the time taken
// and the peak memory (VmHWM before and after: what the seed of that many files held).
// Driven by bench/seed_bench.sh, which compares it with rsync and cp on the same tree.

#include "errors.h"
#include "treecopy.h"
#include "types.h"
#include "workspacefs.h"

#include <QFile>
#include <QString>

#include <chrono>
#include <cstdio>

/// The peak resident size of this process so far (VmHWM), in KiB; -1 when unknown.
static long long peakKib()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s SOURCE_DIR WORKSPACE_DIR\n", argv[0]);
        return 2;
    }
    using namespace elsai;
    const QString source = QString::fromLocal8Bit(argv[1]);
    const QString dest = QString::fromLocal8Bit(argv[2]);
    try {
        // the workspace root is opened first: creating it is not part of seeding
        WorkspaceFs ws(dest);
        const long long peakBefore = peakKib();
        const auto start = std::chrono::steady_clock::now();
        const SeedPlan plan = planSeed(source, GlobSet(DEFAULT_SANDBOX_SEED_EXCLUDES));
        const WorkspaceSeedResult result = executeSeed(plan, ws);
        const std::chrono::duration<double, std::milli> ms =
            std::chrono::steady_clock::now() - start;
        std::printf("elapsed_ms %.1f files %d bytes %lld skipped %lld errors %lld peak_kib_before "
                    "%lld peak_kib %lld\n",
                    ms.count(), result.filesSeeded, static_cast<long long>(result.bytesSeeded),
                    static_cast<long long>(result.skippedPaths.size()),
                    static_cast<long long>(result.errors.size()), peakBefore, peakKib());
        for (const QString &e : result.errors)
            std::fprintf(stderr, "error: %s\n", qPrintable(e));
        return result.success() ? 0 : 1;
    } catch (const SandboxError &e) {
        std::fprintf(stderr, "%s\n", qPrintable(e.display()));
        return 1;
    }
}
