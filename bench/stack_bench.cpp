// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// execute("true") the way an agent sees it, through the whole stack of the real program:
// a headless script of N `call` lines, and N MCP `tools/call` requests over stdio, each sent
// only after the previous answer arrived. The floor is N bare posix_spawn + waitpid of
// /bin/sh -c true, measured in the same rounds (interleaved, alternating which goes first).
//
// Also CPU time per call (the engine with the shells it reaped, against the bench with the
// shells it reaped): on a machine whose run queue is long, wall time mostly measures waiting
// for a core, CPU time what each variant costs.
//
// Usage: stack_bench ELSAI_WORKBENCH [calls per round, default 200] [rounds, default 5]

#include "pairbench.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <sys/resource.h>
#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

struct Cost
{
    double wall = -1; ///< seconds
    double cpu = -1;  ///< seconds, user + system
};

/// CPU seconds of `pid` and of the children it reaped (/proc/<pid>/stat: utime stime cutime
/// cstime, in clock ticks).
double cpuOf(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray stat = f.readAll();
    const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 15)
        return -1;
    double ticks = 0;
    for (int i = 11; i <= 14; ++i) // fields 14..17, counted from field 3
        ticks += fields[i].toDouble();
    return ticks / double(::sysconf(_SC_CLK_TCK));
}

double ownCpu()
{
    rusage self{}, children{};
    ::getrusage(RUSAGE_SELF, &self);
    ::getrusage(RUSAGE_CHILDREN, &children);
    const auto sec = [](const timeval &t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    return sec(self.ru_utime) + sec(self.ru_stime) + sec(children.ru_utime) +
           sec(children.ru_stime);
}

/// One running elsai-workbench whose stdout is read line by line.
class Engine
{
public:
    explicit Engine(const QStringList &args)
    {
        m_proc.setProcessChannelMode(QProcess::SeparateChannels);
        m_proc.setStandardErrorFile(QProcess::nullDevice());
        m_proc.start(QString::fromLocal8Bit(qgetenv("STACK_BENCH_BIN")), args);
        m_ok = m_proc.waitForStarted(10000);
    }
    ~Engine()
    {
        m_proc.closeWriteChannel();
        if (!m_proc.waitForFinished(20000))
            m_proc.kill();
        m_proc.waitForFinished(5000);
    }
    bool ok() const { return m_ok; }
    double cpu() const { return cpuOf(m_proc.processId()); }
    /// Writes one line and waits for the next line of output; empty on failure.
    QByteArray roundTrip(const QByteArray &line)
    {
        m_proc.write(line + '\n');
        while (!m_proc.canReadLine()) {
            if (!m_proc.waitForReadyRead(30000))
                return {};
        }
        return m_proc.readLine();
    }

private:
    QProcess m_proc;
    bool m_ok = false;
};

bool answered(const QByteArray &line, const char *needle)
{
    return !line.isEmpty() && line.contains(needle);
}

/// Seconds for `calls` sequential execute calls through a headless script.
Cost scriptRound(const QString &ws, int calls)
{
    Engine e({QStringLiteral("--headless"), QStringLiteral("--script"), QStringLiteral("-"),
              QStringLiteral("--workspace-root"), ws});
    if (!e.ok() || !answered(e.roundTrip(R"({"op":"start"})"), "\"ok\":true") ||
        !answered(e.roundTrip(R"({"op":"attach","agent":"a","mode":"read_write"})"), "\"ok\":true"))
        return {};
    const QByteArray call =
        R"({"op":"call","agent":"a","tool":"execute","args":{"command":"true"}})";
    const double cpu0 = e.cpu();
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) {
        if (!answered(e.roundTrip(call), "\"exit_code\":0"))
            return {};
    }
    return {std::chrono::duration<double>(Clock::now() - start).count(), e.cpu() - cpu0};
}

/// Seconds for `calls` sequential tools/call execute requests over MCP stdio.
Cost mcpRound(const QString &ws, int calls)
{
    Engine e({QStringLiteral("--headless"), QStringLiteral("--mcp-stdio"),
              QStringLiteral("--mcp-agent"), QStringLiteral("bench=read_write"),
              QStringLiteral("--workspace-root"), ws});
    const QByteArray init =
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
        R"("capabilities":{},"clientInfo":{"name":"stack_bench","version":"1"}}})";
    if (!e.ok() || !answered(e.roundTrip(init), "\"result\""))
        return {};
    // a notification has no answer: send it with the first call
    const QByteArray initialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
    const double cpu0 = e.cpu();
    const auto start = Clock::now();
    for (int i = 1; i <= calls; ++i) {
        const QByteArray call =
            QByteArray(R"({"jsonrpc":"2.0","id":)") + QByteArray::number(i) +
            R"(,"method":"tools/call","params":{"name":"execute","arguments":{"command":"true"}}})";
        if (!answered(e.roundTrip(i == 1 ? initialized + '\n' + call : call), "exit code: 0"))
            return {};
    }
    return {std::chrono::duration<double>(Clock::now() - start).count(), e.cpu() - cpu0};
}

Cost bareRound(int calls)
{
    const std::vector<QByteArray> bare{"/bin/sh", "-c", "true"};
    const double cpu0 = ownCpu();
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) {
        if (!elsai::bench::spawnAndWait(bare, environ, true))
            return {};
    }
    return {std::chrono::duration<double>(Clock::now() - start).count(), ownCpu() - cpu0};
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: stack_bench ELSAI_WORKBENCH [calls] [rounds]\n");
        return 2;
    }
    qputenv("STACK_BENCH_BIN", argv[1]);
    const int calls = argc > 2 ? std::max(10, std::atoi(argv[2])) : 200;
    const int rounds = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
    QTemporaryDir tmp;
    std::vector<double> script, mcp, bare, scriptCpu, mcpCpu, bareCpu;
    for (int r = 0; r < rounds; ++r) {
        const QString ws = tmp.filePath(QStringLiteral("ws-%1").arg(r));
        // alternate the order so that drift on a busy machine hits every variant alike
        Cost b = r % 2 ? Cost{-2, -2} : bareRound(calls);
        // the two front ends alternate too
        Cost s, m;
        if (r % 2) {
            m = mcpRound(ws + QStringLiteral("-m"), calls);
            s = scriptRound(ws + QStringLiteral("-s"), calls);
        } else {
            s = scriptRound(ws + QStringLiteral("-s"), calls);
            m = mcpRound(ws + QStringLiteral("-m"), calls);
        }
        if (r % 2)
            b = bareRound(calls);
        if (s.wall < 0 || m.wall < 0 || b.wall < 0) {
            std::fprintf(stderr,
                         "stack_bench: round %d failed (script %.3f, mcp %.3f, bare %.3f)\n", r,
                         s.wall, m.wall, b.wall);
            return 1;
        }
        script.push_back(s.wall / calls * 1e6);
        mcp.push_back(m.wall / calls * 1e6);
        bare.push_back(b.wall / calls * 1e6);
        scriptCpu.push_back(s.cpu / calls * 1e6);
        mcpCpu.push_back(m.cpu / calls * 1e6);
        bareCpu.push_back(b.cpu / calls * 1e6);
    }
    using elsai::bench::mean;
    using elsai::bench::median;
    const double floor = median(bare);
    std::printf("%d rounds of %d calls; per call, median (mean):\n", rounds, calls);
    std::printf("  bare posix_spawn + waitpid   %8.1f us (%.1f)\n", floor, mean(bare));
    std::printf("  headless script call execute %8.1f us (%.1f)  ratio %.2f (target <= 1.2)\n",
                median(script), mean(script), median(script) / floor);
    std::printf("  MCP stdio tools/call execute %8.1f us (%.1f)  ratio %.2f (target <= 1.2)\n",
                median(mcp), mean(mcp), median(mcp) / floor);
    const double cpuFloor = median(bareCpu);
    std::printf(
        "CPU time per call (with the shells), median (clock ticks of the engine: coarse):\n");
    std::printf("  bare %.1f us, script %.1f us (ratio %.2f), MCP %.1f us (ratio %.2f)\n", cpuFloor,
                median(scriptCpu), median(scriptCpu) / cpuFloor, median(mcpCpu),
                median(mcpCpu) / cpuFloor);
    return 0;
}
