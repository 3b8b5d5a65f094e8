// Per-call cost of BwrapSandboxBackend::execute("true") against the floor: a bare
// posix_spawn of bwrap with exactly the arguments the backend gives it, plus waitpid. The
// difference is the backend's own work: the per-call pids cgroup (made, joined between fork
// and exec, removed), the output pipes and poll loop, and building the arguments. Both run in interleaved rounds (alternating which
// goes first) so that noise on a busy machine hits them alike; medians are the headline.
//
// Usage: bwrap_bench [calls per variant, default 200]
// BWRAP_BENCH_NO_CGROUP=1 measures the backend without its per-call pids cgroup.

#include "bwrapsandboxbackend.h"
#include "errors.h"

#include <QByteArray>
#include <QTemporaryDir>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// argv for posix_spawn, kept alive with its storage.
struct Argv
{
    std::vector<QByteArray> storage;
    std::vector<char *> pointers;
    explicit Argv(const QStringList &args)
    {
        for (const QString &a : args)
            storage.push_back(a.toLocal8Bit());
        for (QByteArray &s : storage)
            pointers.push_back(s.data());
        pointers.push_back(nullptr);
    }
};

bool bareBwrap(const Argv &argv, char **envp)
{
    pid_t pid = -1;
    if (posix_spawn(&pid, argv.pointers[0], nullptr, nullptr, argv.pointers.data(), envp) != 0)
        return false;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return false;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace

int main(int argc, char **argv)
{
    const int calls = argc > 1 ? std::max(10, std::atoi(argv[1])) : 200;
    constexpr int Rounds = 10;
    constexpr int WarmUp = 10;

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
    const Argv bare(QStringList{backend.bwrapProgram()} +
                    backend.bwrapArguments(QStringLiteral("true")));
    char path[] = "PATH=/usr/bin:/bin";
    char *envp[] = {path, nullptr}; // what the backend gives bwrap (which clears it anyway)

    auto runElsai = [&] { return backend.execute(QStringLiteral("true")).exitCode == 0; };
    for (int i = 0; i < WarmUp; ++i) {
        if (!runElsai() || !bareBwrap(bare, envp)) {
            std::fprintf(stderr, "bwrap_bench: warm-up call failed\n");
            return 1;
        }
    }

    std::vector<double> elsaiMs, bareMs;
    int failures = 0;
    for (int round = 0; round < Rounds; ++round) {
        const int perRound = calls / Rounds + (round < calls % Rounds ? 1 : 0);
        for (int pass = 0; pass < 2; ++pass) {
            const bool elsaiPass = (pass == 0) == (round % 2 == 0);
            for (int i = 0; i < perRound; ++i) {
                const auto start = Clock::now();
                const bool ok = elsaiPass ? runElsai() : bareBwrap(bare, envp);
                const double ms =
                    std::chrono::duration<double, std::milli>(Clock::now() - start).count();
                (elsaiPass ? elsaiMs : bareMs).push_back(ms);
                failures += ok ? 0 : 1;
            }
        }
    }
    const double e = median(elsaiMs);
    const double b = median(bareMs);
    std::printf("calls: %d per variant in %d interleaved rounds (after %d warm-up), %d failed\n",
                calls, Rounds, WarmUp, failures);
    std::printf("execute(\"true\") via bwrap: elsai %.3f ms/call, bare bwrap %.3f ms/call, "
                "ratio %.2f (median; target <= 1.2)\n",
                e, b, b > 0 ? e / b : 0.0);
    return failures == 0 ? 0 : 1;
}
