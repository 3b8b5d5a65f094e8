// execute("true") through SshSandboxBackend against a bare `ssh … true` over the SAME
// ControlMaster connection (the floor: one mux channel, one remote login shell). A throwaway
// sshd on 127.0.0.1 (tests/sshfixture.h) is the remote. Interleaved rounds, alternating which
// variant goes first, so noise on a busy machine hits both alike; medians are the headline.
// read_file("d/f.txt") and list_dir("d") are measured the same way against the same floor
// (informational: each walks one folder and asks the kernel where it ended up).
//
// Usage: ssh_bench [calls per variant, default 200]

#include "sshfixture.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

namespace {

using Clock = std::chrono::steady_clock;

double elapsedMs(Clock::time_point from)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - from).count();
}

/// posix_spawn of `ssh -F <cfg> -T <alias> true`, output to /dev/null, then waitpid.
bool bareSsh(const std::vector<QByteArray> &args)
{
    std::vector<char *> argv;
    for (const QByteArray &a : args)
        argv.push_back(const_cast<char *>(a.constData()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
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

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double mean(const std::vector<double> &v)
{
    return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

} // namespace

int main(int argc, char **argv)
{
    const int calls = argc > 1 ? std::max(10, std::atoi(argv[1])) : 200;
    constexpr int Rounds = 10;
    constexpr int WarmUp = 10;

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

    auto viaBackend = [&] { return backend->execute(QStringLiteral("true")).exitCode == 0; };
    for (int i = 0; i < WarmUp; ++i) {
        if (!viaBackend() || !bareSsh(bare)) {
            std::fprintf(stderr, "ssh_bench: warm-up call failed\n");
            return 1;
        }
    }
    int failures = 0;
    // Interleaved rounds of `call` and the bare ssh, alternating which goes first.
    auto measure = [&](const std::function<bool()> &call, int n) {
        std::pair<std::vector<double>, std::vector<double>> ms;
        for (int round = 0; round < Rounds; ++round) {
            const int perRound = n / Rounds + (round < n % Rounds ? 1 : 0);
            for (int pass = 0; pass < 2; ++pass) {
                const bool elsaiPass = (pass == 0) == (round % 2 == 0);
                for (int i = 0; i < perRound; ++i) {
                    const auto start = Clock::now();
                    const bool ok = elsaiPass ? call() : bareSsh(bare);
                    (elsaiPass ? ms.first : ms.second).push_back(elapsedMs(start));
                    failures += ok ? 0 : 1;
                }
            }
        }
        return ms;
    };
    const auto [elsaiMs, bareMs] = measure(viaBackend, calls);

    backend->writeFile(QStringLiteral("d/f.txt"), QByteArray(4096, 'x'));
    const int fileCalls = std::max(10, calls / 4);
    const auto [readMs, readBareMs] = measure(
        [&] { return backend->readFile(QStringLiteral("d/f.txt")).size() == 4096; }, fileCalls);
    const auto [listMs, listBareMs] =
        measure([&] { return backend->listDir(QStringLiteral("d")).size() == 1; }, fileCalls);
    backend->close();
    const double em = median(elsaiMs);
    const double bm = median(bareMs);
    std::printf("calls: %d per variant in %d interleaved rounds (after %d warm-up), %d failed\n",
                calls, Rounds, WarmUp, failures);
    std::printf("mean:   elsai %.2f ms/call, bare ssh %.2f ms/call, ratio %.2f\n",
                mean(elsaiMs), mean(bareMs), mean(bareMs) > 0 ? mean(elsaiMs) / mean(bareMs) : 0);
    std::printf("execute over ssh: elsai %.2f ms/call, bare ssh on the same master %.2f ms/call, "
                "ratio %.2f (median; target <= 1.2)\n",
                em, bm, bm > 0 ? em / bm : 0.0);
    for (const auto &[what, ms, bareRef] :
         {std::tuple{"read_file(\"d/f.txt\")", &readMs, &readBareMs},
          std::tuple{"list_dir(\"d\")", &listMs, &listBareMs}}) {
        const double m = median(*ms), b = median(*bareRef);
        std::printf("%s over ssh, %d calls: %.2f ms/call, bare ssh %.2f ms/call, ratio %.2f "
                    "(median)\n",
                    what, fileCalls, m, b, b > 0 ? m / b : 0.0);
    }
    return failures == 0 ? 0 : 1;
}
