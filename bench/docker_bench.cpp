// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The docker backend against its floors, on the engine the tests use (tests/dockerfixture.h:
// ELSAI_TEST_DOCKER_HOST, ELSAI_TEST_DOCKER_IMAGE; `eval "$(bash .ci/docker --start)"`):
//   execute("true") through DockerSandboxBackend vs the same exec through the raw Engine API
//   (create + start + inspect with `curl --unix-socket`), target <= 1.2; vs `docker exec` of
//   the CLI (reported);
//   seeding a 20,000-file tree vs `docker cp` of the same tree into a fresh container, target
//   <= 1.0.
//
// Usage: docker_bench [calls per variant, default 100] [seed runs, default 3]

#include "dockerfixture.h"
#include "pairbench.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <chrono>
#include <cstdlib>

using namespace elsai;
using elsai::test::DockerEngine;

namespace {

/// 20,000 files of 200 B - 4 KB in 2,000 folders (seed_bench.sh's sizes, none excluded).
void generateTree(const QString &root)
{
    QByteArray blob;
    while (blob.size() < 4096)
        blob += "The quick brown fox jumps over the lazy dog 0123456789. ";
    for (int d = 0; d < 2000; ++d) {
        const QString dir = root + QStringLiteral("/src/d%1").arg(d);
        QDir().mkpath(dir);
        for (int k = 0; k < 10; ++k) {
            QFile f(dir + QStringLiteral("/f%1.txt").arg(k));
            if (f.open(QIODevice::WriteOnly))
                f.write(blob.left(200 + (d * 7919 + k * 104729) % 3800));
        }
    }
}

double seconds(const std::function<bool()> &f, bool *ok)
{
    const auto start = std::chrono::steady_clock::now();
    *ok = f() && *ok;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int calls = argc > 1 ? std::max(10, std::atoi(argv[1])) : 100;
    const int seedRuns = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    if (const QString why = DockerEngine::unavailable(); !why.isEmpty()) {
        std::fprintf(stderr, "docker_bench: %s\n", qPrintable(why));
        return 2;
    }
    const QString socket = docker::EngineEndpoint::parse(DockerEngine::host()).socketPath;
    const QString curl = QStandardPaths::findExecutable(QStringLiteral("curl"));
    const QString cli = QStandardPaths::findExecutable(QStringLiteral("docker"));
    if (socket.isEmpty() || curl.isEmpty()) {
        std::fprintf(stderr, "docker_bench: needs a unix:// engine and curl\n");
        return 2;
    }
    qputenv("DOCKER_HOST", DockerEngine::host().toUtf8()); // for the CLI

    auto backend = DockerEngine::makeBackend(QStringLiteral("bench"));
    backend->create();
    const QByteArray id = backend->containerId().toUtf8();
    // The floor: the three Engine API calls of one exec, by curl (the exec's id read by sed).
    const QByteArray raw =
        "api() { " + curl.toUtf8() + " -fsS --unix-socket " + socket.toUtf8() +
        " -H 'Content-Type: application/json' \"$@\"; }\n"
        "e=$(api -X POST -d '{\"AttachStdout\":true,\"AttachStderr\":true,\"Cmd\":[\"true\"]}' "
        "http://d/v1.41/containers/" +
        id +
        "/exec | sed 's/.*\"Id\":\"\\([0-9a-f]*\\)\".*/\\1/')\n"
        "api -X POST -d '{\"Detach\":false,\"Tty\":false}' http://d/v1.41/exec/$e/start "
        ">/dev/null\n"
        "api http://d/v1.41/exec/$e/json | grep -q '\"ExitCode\":0'\n";
    const auto rawApi = [&] { return bench::spawnAndWait({"/bin/sh", "-c", raw}, environ, true); };
    const auto viaBackend = [&] { return backend->execute(QStringLiteral("true")).exitCode == 0; };

    bench::PairResult exec, viaCli;
    bool ran = bench::runPair("docker_bench", calls, 10, 5, viaBackend, rawApi, &exec);
    if (!cli.isEmpty())
        ran = ran &&
              bench::runPair(
                  "docker_bench", std::max(10, calls / 2), 10, 2, viaBackend,
                  [&] {
                      return bench::spawnAndWait({cli.toUtf8(), "exec", id, "true"}, environ, true);
                  },
                  &viaCli);
    backend->close();
    if (!ran)
        return 1;

    // Seeding: the same tree into a fresh container each run, interleaved.
    QTemporaryDir work;
    generateTree(work.path());
    std::vector<double> ours, theirs;
    bool ok = true;
    for (int run = 0; run < seedRuns && !cli.isEmpty(); ++run) {
        for (int pass = 0; pass < 2; ++pass) {
            auto b = DockerEngine::makeBackend(QStringLiteral("seed-%1-%2").arg(run).arg(pass));
            b->create();
            if ((pass == 0) == (run % 2 == 0)) {
                ours.push_back(seconds(
                    [&] { return b->seedWorkspace(work.path(), {}).filesSeeded == 20000; }, &ok));
            } else {
                theirs.push_back(seconds(
                    [&] {
                        return bench::spawnAndWait({cli.toUtf8(), "cp", work.path().toUtf8() + "/.",
                                                    b->containerId().toUtf8() + ":/workspace"},
                                                   environ, true);
                    },
                    &ok));
            }
            b->close();
        }
    }

    bench::printMedianRatio("execute(\"true\") in a container", "raw Engine API (curl)", exec, 1.2);
    if (!cli.isEmpty())
        bench::printMedianRatio("execute(\"true\") in a container", "docker exec (CLI)", viaCli, 0);
    if (!ours.empty()) {
        const double o = bench::median(ours), t = bench::median(theirs);
        std::printf("seeding 20,000 files: elsai %.2f s, docker cp %.2f s, ratio %.2f (median of "
                    "%d; target <= 1.0)%s\n",
                    o, t, t > 0 ? o / t : 0.0, seedRuns, ok ? "" : " [a run failed]");
    }
    return exec.failures == 0 && ok ? 0 : 1;
}
