// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Is the parsing of agent JSON linear? (issue 10 §4). Every MCP request an agent sends goes
// through jsonrpc::parsePayload() (QJsonDocument underneath) and then, for tools/call, through
// validateToolArguments() against the tool's input schema. This times both on adversarial
// messages of N and 2N bytes and prints the ratio time(2N) / time(N): about 2 for linear work,
// about 4 for quadratic. The baseline of each row is the same row at N, in the same run.
//
// Usage: json_bench [--bytes N (default 1048576)] [--rounds R (default 5, the best is kept)]

#include "errors.h"
#include "jsonrpc.h"
#include "sandboxplugin.h"
#include "tools.h"

#include <QCoreApplication>
#include <QJsonObject>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

namespace elsai {
namespace {

using Clock = std::chrono::steady_clock;

/// A tools/call request of write_file whose arguments object is `arguments` (raw JSON text).
QByteArray callOf(const QByteArray &arguments)
{
    return R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file",)"
           R"("arguments":)" +
           arguments + "}}";
}

/// Repeats `unit` until `bytes` are reached.
QByteArray repeated(const QByteArray &unit, qsizetype bytes)
{
    QByteArray out;
    out.reserve(bytes + unit.size());
    while (out.size() < bytes)
        out += unit;
    return out;
}

struct Input
{
    const char *name;
    std::function<QByteArray(qsizetype)> make;
};

const QList<Input> &inputs()
{
    static const QList<Input> list{
        {"content of \\u escapes",
         [](qsizetype n) {
             return callOf(R"({"path":"x","content":")" + repeated("\\u00e9", n) + "\"}");
         }},
        {"content of plain text",
         [](qsizetype n) {
             return callOf(R"({"path":"x","content":")" + repeated("abcdefgh", n) + "\"}");
         }},
        {"distinct unknown keys",
         [](qsizetype n) {
             QByteArray keys;
             for (int i = 0; keys.size() < n; ++i)
                 keys += "\"k" + QByteArray::number(i) + "\":0,";
             return callOf(R"({"path":"x","content":"y",)" + keys + R"("z":0})");
         }},
        {"one key repeated",
         [](qsizetype n) {
             return callOf(R"({"path":"x",)" + repeated(R"("content":"y",)", n) +
                           R"("content":"y"})");
         }},
        {"array of numbers",
         [](qsizetype n) {
             return callOf(R"({"path":"x","content":[)" + repeated("1,", n) + "1]}");
         }},
        {"nested arrays, 500 deep",
         [](qsizetype n) {
             const QByteArray deep = QByteArray(500, '[') + QByteArray(500, ']') + ',';
             return callOf(R"({"path":"x","content":"y","extra":[)" + repeated(deep, n) + "0]}");
         }},
        {"whitespace",
         [](qsizetype n) {
             return callOf(R"({"path":"x",)" + repeated(" \n\t ", n) + R"("content":"y"})");
         }},
        {"batch of small messages",
         [](qsizetype n) {
             const QByteArray one = R"({"jsonrpc":"2.0","id":1,"method":"ping"},)";
             return "[" + repeated(one, n) + R"({"jsonrpc":"2.0","id":2,"method":"ping"}])";
         }},
    };
    return list;
}

/// Seconds of one parse (and, for a message, one argument check), the best of `rounds`.
double timeOf(const QByteArray &payload, const Tool &tool, int rounds)
{
    double best = 1e9;
    for (int r = 0; r < rounds; ++r) {
        const auto start = Clock::now();
        const jsonrpc::Payload p = jsonrpc::parsePayload(payload);
        if (const auto *m = std::get_if<jsonrpc::Message>(&p.single)) {
            try {
                validateToolArguments(tool, m->params.value(QLatin1String("arguments")).toObject());
            } catch (const SandboxError &) {
                // refused arguments are the common case here: the refusal is what is timed
            }
        }
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return best;
}

} // namespace
} // namespace elsai

int main(int argc, char **argv)
{
    using namespace elsai;
    QCoreApplication app(argc, argv);
    qsizetype bytes = 1 << 20;
    int rounds = 5;
    const QStringList args = app.arguments();
    for (int i = 1; i + 1 < args.size(); ++i) {
        if (args[i] == QLatin1String("--bytes"))
            bytes = args[i + 1].toLongLong();
        else if (args[i] == QLatin1String("--rounds"))
            rounds = args[i + 1].toInt();
    }
    Tool writeFile;
    for (const Tool &t : SandboxPlugin::tools(SandboxAttachMode::ReadWrite, true)) {
        if (t.name == QLatin1String("write_file"))
            writeFile = t;
    }
    std::printf("json_bench: agent JSON (parsePayload + validateToolArguments of write_file), "
                "best of %d rounds\n",
                rounds);
    std::printf("%-28s %12s %12s %10s\n", "input", "N ms", "2N ms", "2N / N");
    double worst = 0;
    for (const Input &in : inputs()) {
        const double one = timeOf(in.make(bytes), writeFile, rounds);
        const double two = timeOf(in.make(2 * bytes), writeFile, rounds);
        const double ratio = two / std::max(one, 1e-9);
        worst = std::max(worst, ratio);
        std::printf("%-28s %12.2f %12.2f %10.2f\n", in.name, one * 1000, two * 1000, ratio);
    }
    std::printf("json_bench: N = %lld bytes; worst ratio %.2f (linear: about 2; quadratic: 4)\n",
                static_cast<long long>(bytes), worst);
    return 0;
}
