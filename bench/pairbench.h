// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// The shared frame of the "elsai vs its floor" benchmarks (exec_bench, bwrap_bench, ssh_bench):
// both variants run in interleaved rounds, alternating which goes first, so that noise on a
// busy machine hits them alike; medians are the headline figures, means are printed beside.

#include <QByteArray>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <numeric>
#include <vector>

#include <cerrno>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

namespace elsai::bench {

inline double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline double mean(const std::vector<double> &v)
{
    return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

/// posix_spawn of args[0] with args, then waitpid; true when it exits 0. `envp` defaults to
/// ours; with `quiet` the child's standard streams are /dev/null.
inline bool spawnAndWait(const std::vector<QByteArray> &args, char **envp = environ,
                         bool quiet = false)
{
    std::vector<char *> argv;
    for (const QByteArray &a : args)
        argv.push_back(const_cast<char *>(a.constData()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return false;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return false;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct PairResult
{
    std::vector<double> elsaiMs;
    std::vector<double> baselineMs;
    int failures = 0;
};

/// Runs `warmUp` calls of each, then `calls` of each spread over `rounds` interleaved rounds.
/// Returns false (after printing why) when a warm-up call fails.
inline bool runPair(const char *name, int calls, int rounds, int warmUp,
                    const std::function<bool()> &elsai, const std::function<bool()> &baseline,
                    PairResult *out)
{
    using Clock = std::chrono::steady_clock;
    for (int i = 0; i < warmUp; ++i) {
        if (!elsai() || !baseline()) {
            std::fprintf(stderr, "%s: warm-up call failed\n", name);
            return false;
        }
    }
    out->elsaiMs.reserve(size_t(calls));
    out->baselineMs.reserve(size_t(calls));
    for (int round = 0; round < rounds; ++round) {
        const int perRound = calls / rounds + (round < calls % rounds ? 1 : 0);
        for (int pass = 0; pass < 2; ++pass) {
            const bool elsaiPass = (pass == 0) == (round % 2 == 0);
            for (int i = 0; i < perRound; ++i) {
                const auto start = Clock::now();
                const bool ok = elsaiPass ? elsai() : baseline();
                const double ms =
                    std::chrono::duration<double, std::milli>(Clock::now() - start).count();
                (elsaiPass ? out->elsaiMs : out->baselineMs).push_back(ms);
                out->failures += ok ? 0 : 1;
            }
        }
    }
    std::printf("calls: %d per variant in %d interleaved rounds (after %d warm-up), %d failed\n",
                calls, rounds, warmUp, out->failures);
    const double em = mean(out->elsaiMs), bm = mean(out->baselineMs);
    std::printf("mean:   elsai %.3f ms/call, baseline %.3f ms/call, ratio %.2f\n", em, bm,
                bm > 0 ? em / bm : 0.0);
    return true;
}

/// The headline line: "<what>: elsai X ms/call, <baseline> Y ms/call, ratio R (median; target
/// <= T)"; a target of 0 means the figure is informational.
inline void printMedianRatio(const char *what, const char *baseline, const PairResult &r,
                             double target)
{
    const double e = median(r.elsaiMs), b = median(r.baselineMs);
    std::printf("%s: elsai %.3f ms/call, %s %.3f ms/call, ratio %.2f (median", what, e, baseline, b,
                b > 0 ? e / b : 0.0);
    if (target > 0)
        std::printf("; target <= %.1f", target);
    std::printf(")\n");
}

} // namespace elsai::bench
