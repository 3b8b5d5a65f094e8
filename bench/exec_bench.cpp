// Per-call overhead of runProcess() against the floor: a bare posix_spawn of /bin/sh -c true
// plus waitpid. Both run in interleaved rounds (alternating which goes first) so that noise
// on a busy machine hits them alike; medians are the headline figures.
//
// Usage: exec_bench [calls per variant, default 500]

#include "process.h"

#include <QStringList>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace {

using Clock = std::chrono::steady_clock;

double elapsedMs(Clock::time_point from)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
}

bool bareSpawn()
{
    char sh[] = "/bin/sh";
    char dashC[] = "-c";
    char command[] = "true";
    char *argv[] = {sh, dashC, command, nullptr};
    pid_t pid = -1;
    if (posix_spawn(&pid, sh, nullptr, nullptr, argv, environ) != 0)
        return false;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return false;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct Stats
{
    double median = 0;
    double mean = 0;
};

Stats stats(std::vector<double> samples)
{
    Stats s;
    if (samples.empty())
        return s;
    std::sort(samples.begin(), samples.end());
    const size_t n = samples.size();
    s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(n);
    return s;
}

} // namespace

int main(int argc, char **argv)
{
    const int calls = argc > 1 ? std::max(10, std::atoi(argv[1])) : 500;
    constexpr int Rounds = 20;
    constexpr int WarmUp = 50;

    elsai::ProcessSpec spec;
    spec.command = QStringLiteral("true");
    for (char **e = environ; *e; ++e) // same environment as the bare spawn gets
        spec.environment.append(QString::fromLocal8Bit(*e));

    auto runElsai = [&] {
        const elsai::ProcessOutcome out = elsai::runProcess(spec);
        return out.exitCode == 0;
    };

    for (int i = 0; i < WarmUp; ++i) {
        if (!runElsai() || !bareSpawn()) {
            std::fprintf(stderr, "exec_bench: warm-up call failed\n");
            return 1;
        }
    }

    std::vector<double> elsaiMs;
    std::vector<double> bareMs;
    elsaiMs.reserve(size_t(calls));
    bareMs.reserve(size_t(calls));
    int failures = 0;
    for (int round = 0; round < Rounds; ++round) {
        const int perRound = calls / Rounds + (round < calls % Rounds ? 1 : 0);
        for (int pass = 0; pass < 2; ++pass) {
            const bool elsaiPass = (pass == 0) == (round % 2 == 0);
            for (int i = 0; i < perRound; ++i) {
                const auto start = Clock::now();
                const bool ok = elsaiPass ? runElsai() : bareSpawn();
                (elsaiPass ? elsaiMs : bareMs).push_back(elapsedMs(start));
                failures += ok ? 0 : 1;
            }
        }
    }

    const Stats e = stats(elsaiMs);
    const Stats b = stats(bareMs);
    std::printf("calls: %d per variant in %d interleaved rounds (after %d warm-up), %d failed\n",
                calls, Rounds, WarmUp, failures);
    std::printf("mean:   elsai %.3f ms/call, bare spawn %.3f ms/call, ratio %.2f\n", e.mean,
                b.mean, b.mean > 0 ? e.mean / b.mean : 0.0);
    std::printf("execute: elsai %.3f ms/call, bare spawn %.3f ms/call, ratio %.2f "
                "(median; target <= 1.5)\n",
                e.median, b.median, b.median > 0 ? e.median / b.median : 0.0);
    return failures == 0 ? 0 : 1;
}
