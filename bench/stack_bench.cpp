// execute("true") the way an agent sees it, through the whole stack of the real program:
// a headless script of N `call` lines, and N MCP `tools/call` requests over stdio, each sent
// only after the previous answer arrived. The floor is N bare posix_spawn + waitpid of
// /bin/sh -c true, measured in the same rounds (interleaved, alternating which goes first).
//
// Usage: stack_bench ELSAI_WORKBENCH [calls per round, default 200] [rounds, default 5]

#include "pairbench.h"

#include <QByteArray>
#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

using Clock = std::chrono::steady_clock;

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
double scriptRound(const QString &ws, int calls)
{
    Engine e({QStringLiteral("--headless"), QStringLiteral("--script"), QStringLiteral("-"),
              QStringLiteral("--workspace-root"), ws});
    if (!e.ok() || !answered(e.roundTrip(R"({"op":"start"})"), "\"ok\":true") ||
        !answered(e.roundTrip(R"({"op":"attach","agent":"a","mode":"read_write"})"),
                  "\"ok\":true"))
        return -1;
    const QByteArray call =
        R"({"op":"call","agent":"a","tool":"execute","args":{"command":"true"}})";
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) {
        if (!answered(e.roundTrip(call), "\"exit_code\":0"))
            return -1;
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Seconds for `calls` sequential tools/call execute requests over MCP stdio.
double mcpRound(const QString &ws, int calls)
{
    Engine e({QStringLiteral("--headless"), QStringLiteral("--mcp-stdio"),
              QStringLiteral("--mcp-agent"), QStringLiteral("bench=read_write"),
              QStringLiteral("--workspace-root"), ws});
    const QByteArray init =
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
        R"("capabilities":{},"clientInfo":{"name":"stack_bench","version":"1"}}})";
    if (!e.ok() || !answered(e.roundTrip(init), "\"result\""))
        return -1;
    // a notification has no answer: send it with the first call
    const QByteArray initialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
    const auto start = Clock::now();
    for (int i = 1; i <= calls; ++i) {
        const QByteArray call =
            QByteArray(R"({"jsonrpc":"2.0","id":)") + QByteArray::number(i) +
            R"(,"method":"tools/call","params":{"name":"execute","arguments":{"command":"true"}}})";
        if (!answered(e.roundTrip(i == 1 ? initialized + '\n' + call : call), "exit code: 0"))
            return -1;
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double bareRound(int calls)
{
    const std::vector<QByteArray> bare{"/bin/sh", "-c", "true"};
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) {
        if (!elsai::bench::spawnAndWait(bare, environ, true))
            return -1;
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
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
    std::vector<double> script, mcp, bare;
    for (int r = 0; r < rounds; ++r) {
        const QString ws = tmp.filePath(QStringLiteral("ws-%1").arg(r));
        // alternate the order so that drift on a busy machine hits every variant alike
        const double b1 = r % 2 ? -2 : bareRound(calls);
        const double s = scriptRound(ws + QStringLiteral("-s"), calls);
        const double m = mcpRound(ws + QStringLiteral("-m"), calls);
        const double b2 = r % 2 ? bareRound(calls) : -2;
        const double b = b1 != -2 ? b1 : b2;
        if (s < 0 || m < 0 || b < 0) {
            std::fprintf(stderr, "stack_bench: round %d failed (script %.3f, mcp %.3f, bare %.3f)\n",
                         r, s, m, b);
            return 1;
        }
        script.push_back(s / calls * 1e6);
        mcp.push_back(m / calls * 1e6);
        bare.push_back(b / calls * 1e6);
    }
    const double floor = elsai::bench::median(bare);
    std::printf("%d rounds of %d calls; per call, median (mean):\n", rounds, calls);
    std::printf("  bare posix_spawn + waitpid   %8.1f us (%.1f)\n", floor,
                elsai::bench::mean(bare));
    std::printf("  headless script call execute %8.1f us (%.1f)  ratio %.2f (target <= 1.2)\n",
                elsai::bench::median(script), elsai::bench::mean(script),
                elsai::bench::median(script) / floor);
    std::printf("  MCP stdio tools/call execute %8.1f us (%.1f)  ratio %.2f (target <= 1.2)\n",
                elsai::bench::median(mcp), elsai::bench::mean(mcp),
                elsai::bench::median(mcp) / floor);
    return 0;
}
