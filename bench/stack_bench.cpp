// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// execute("true") the way an agent sees it, through the whole stack of the real program:
// a headless script of N `call` lines, and N MCP `tools/call` requests over stdio, each sent
// only after the previous answer arrived. The floor is N bare posix_spawn + waitpid of
// /bin/sh -c true, measured in the same rounds: the three take turns in blocks of 20 calls.
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

/// CPU seconds (user + system) of a process itself and of the children it reaped.
struct CpuTime
{
    double self = 0;
    double children = 0;
    CpuTime operator-(const CpuTime &o) const { return {self - o.self, children - o.children}; }
    CpuTime &operator+=(const CpuTime &o)
    {
        self += o.self;
        children += o.children;
        return *this;
    }
};

/// From /proc/<pid>/stat (utime stime cutime cstime, in clock ticks).
CpuTime cpuOf(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray stat = f.readAll();
    const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 15)
        return {};
    const double tick = double(::sysconf(_SC_CLK_TCK));
    // fields 14..17, counted from field 3
    return {(fields[11].toDouble() + fields[12].toDouble()) / tick,
            (fields[13].toDouble() + fields[14].toDouble()) / tick};
}

CpuTime ownCpu()
{
    rusage self{}, children{};
    ::getrusage(RUSAGE_SELF, &self);
    ::getrusage(RUSAGE_CHILDREN, &children);
    const auto sec = [](const timeval &t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    return {sec(self.ru_utime) + sec(self.ru_stime),
            sec(children.ru_utime) + sec(children.ru_stime)};
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
    CpuTime cpu() const { return cpuOf(m_proc.processId()); }
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

/// One of the three ways to run `true`; call() runs one, false on failure.
class Variant
{
public:
    virtual ~Variant() = default;
    virtual bool call() = 0;
    virtual CpuTime cpu() const = 0;        ///< so far
    std::vector<double> wall, self, shells; ///< per call in each round, microseconds
};

/// A headless script session: `call` lines, each sent after the previous answer.
class ScriptVariant : public Variant
{
public:
    explicit ScriptVariant(const QString &ws)
        : m_engine({QStringLiteral("--headless"), QStringLiteral("--script"), QStringLiteral("-"),
                    QStringLiteral("--workspace-root"), ws})
    {
        m_ok = m_engine.ok() && answered(m_engine.roundTrip(R"({"op":"start"})"), "\"ok\":true") &&
               answered(m_engine.roundTrip(R"({"op":"attach","agent":"a","mode":"read_write"})"),
                        "\"ok\":true");
    }
    bool ok() const { return m_ok; }
    bool call() override
    {
        return answered(
            m_engine.roundTrip(
                R"({"op":"call","agent":"a","tool":"execute","args":{"command":"true"}})"),
            "\"exit_code\":0");
    }
    CpuTime cpu() const override { return m_engine.cpu(); }

private:
    Engine m_engine;
    bool m_ok = false;
};

/// An MCP stdio session: tools/call requests, each sent after the previous answer.
class McpVariant : public Variant
{
public:
    explicit McpVariant(const QString &ws)
        : m_engine({QStringLiteral("--headless"), QStringLiteral("--mcp-stdio"),
                    QStringLiteral("--mcp-agent"), QStringLiteral("bench=read_write"),
                    QStringLiteral("--workspace-root"), ws})
    {
        const QByteArray init = R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{)"
                                R"("protocolVersion":"2025-06-18","capabilities":{},)"
                                R"("clientInfo":{"name":"stack_bench","version":"1"}}})";
        m_ok = m_engine.ok() && answered(m_engine.roundTrip(init), "\"result\"");
    }
    bool ok() const { return m_ok; }
    bool call() override
    {
        // a notification has no answer: it goes with the first call
        const QByteArray request =
            QByteArray(R"({"jsonrpc":"2.0","id":)") + QByteArray::number(++m_id) +
            R"(,"method":"tools/call","params":{"name":"execute","arguments":{"command":"true"}}})";
        return answered(m_engine.roundTrip(m_id == 1 ? QByteArray(R"({"jsonrpc":"2.0",)"
                                                                  R"("method":)"
                                                                  R"("notifications/initialized"})"
                                                                  "\n") +
                                                           request
                                                     : request),
                        "exit code: 0");
    }
    CpuTime cpu() const override { return m_engine.cpu(); }

private:
    Engine m_engine;
    bool m_ok = false;
    int m_id = 0;
};

/// posix_spawn + waitpid of /bin/sh -c true in the bench itself.
class BareVariant : public Variant
{
public:
    bool call() override { return elsai::bench::spawnAndWait(m_args, environ, true); }
    CpuTime cpu() const override { return ownCpu(); }

private:
    const std::vector<QByteArray> m_args{"/bin/sh", "-c", "true"};
};

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
    // Each round runs its calls in blocks, the three variants taking turns block by block (in
    // a rotating order): drift of the machine's speed over seconds, which on a shared 2-core
    // machine is larger than what is measured, then hits all three alike. The engines run for
    // the whole bench, as an agent's session does.
    constexpr int Block = 20;
    QTemporaryDir tmp;
    ScriptVariant script(tmp.filePath(QStringLiteral("ws-s")));
    McpVariant mcp(tmp.filePath(QStringLiteral("ws-m")));
    BareVariant bare;
    if (!script.ok() || !mcp.ok()) {
        std::fprintf(stderr, "stack_bench: an engine did not start (script %d, MCP %d)\n",
                     script.ok(), mcp.ok());
        return 1;
    }
    Variant *variants[] = {&bare, &script, &mcp};
    for (Variant *v : variants) { // warm-up: first calls fault in code and caches
        for (int i = 0; i < Block; ++i) {
            if (!v->call()) {
                std::fprintf(stderr, "stack_bench: a warm-up call failed\n");
                return 1;
            }
        }
    }
    std::vector<double> scriptRatios, mcpRatios;
    int turn = 0;
    for (int r = 0; r < rounds; ++r) {
        double wall[3] = {};
        CpuTime spent[3];
        for (int done = 0; done < calls; done += Block, ++turn) {
            const int n = std::min(Block, calls - done);
            for (int k = 0; k < 3; ++k) {
                const int index = (turn + k) % 3;
                Variant *v = variants[index];
                const CpuTime cpu0 = v->cpu();
                const auto start = Clock::now();
                for (int i = 0; i < n; ++i) {
                    if (!v->call()) {
                        std::fprintf(stderr, "stack_bench: round %d: a call failed\n", r);
                        return 1;
                    }
                }
                wall[index] += std::chrono::duration<double>(Clock::now() - start).count();
                spent[index] += v->cpu() - cpu0;
            }
        }
        for (int k = 0; k < 3; ++k) {
            variants[k]->wall.push_back(wall[k] / calls * 1e6);
            variants[k]->self.push_back(spent[k].self / calls * 1e6);
            variants[k]->shells.push_back(spent[k].children / calls * 1e6);
        }
        scriptRatios.push_back(wall[1] / wall[0]);
        mcpRatios.push_back(wall[2] / wall[0]);
    }
    using elsai::bench::mean;
    using elsai::bench::median;
    std::printf("%d rounds of %d calls each, in blocks of %d taking turns; per call, median "
                "(mean):\n",
                rounds, calls, Block);
    std::printf("  bare posix_spawn + waitpid   %8.1f us (%.1f)\n", median(bare.wall),
                mean(bare.wall));
    std::printf("  headless script call execute %8.1f us (%.1f)  ratio %.2f (target <= 1.2)\n",
                median(script.wall), mean(script.wall), median(scriptRatios));
    std::printf("  MCP stdio tools/call execute %8.1f us (%.1f)  ratio %.2f (target <= 1.2)\n",
                median(mcp.wall), mean(mcp.wall), median(mcpRatios));
    std::printf("  (ratios: the median of each round's ratio; rounds ranged %.2f-%.2f / "
                "%.2f-%.2f)\n",
                *std::min_element(scriptRatios.begin(), scriptRatios.end()),
                *std::max_element(scriptRatios.begin(), scriptRatios.end()),
                *std::min_element(mcpRatios.begin(), mcpRatios.end()),
                *std::max_element(mcpRatios.begin(), mcpRatios.end()));
    // The engine's side in clock ticks (/proc), so coarse; the bench's side exact.
    std::printf("CPU time per call, median: the caller itself + the shells it reaped\n");
    for (const auto &[name, v] : {std::pair<const char *, Variant *>{"bare (the bench)", &bare},
                                  {"script (the engine)", &script},
                                  {"MCP (the engine)", &mcp}}) {
        std::printf("  %-20s %6.1f us + %7.1f us = %7.1f us (ratio %.2f)\n", name, median(v->self),
                    median(v->shells), median(v->self) + median(v->shells),
                    (median(v->self) + median(v->shells)) /
                        (median(bare.self) + median(bare.shells)));
    }
    return 0;
}
