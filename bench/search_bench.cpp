// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The search tools against the command-line tools agents would otherwise run, on the tree of
// bench/seed_bench.sh (20,000 files of 200 B - 4 KB in about 2,000 folders, half of them under
// node_modules/, .git/ and __pycache__/), every figure the median of interleaved rounds in one
// process, the tools called as an agent calls them (Agent::callTool on a local sandbox, audit
// included):
//   1. grep of a fixed pattern (a rare identifier: every file is read)  vs  ripgrep `rg`
//   2. grep output=count of a line in each of 5,000 files              vs  `rg -c`
//   3. glob of one file name at any depth (newest first)               vs  `fdfind -g`
//   4. the same glob sorted by path                                    vs  `fdfind -g`
// Targets (docs/tools.md): ratio <= 1.5. rg and fd skip the same folders as the tools do by
// default: .git as hidden, node_modules and __pycache__ by exclusion. rg and fd use every core
// (2 here); the figures single-threaded (`rg -j1`, `fdfind -j1`) are printed beside.
//
//   search_bench [--rounds N] [--work DIR]
// Where: /dev/shm when it has room (the tools' own cost), else $TMPDIR.

#include "agent.h"
#include "benchtree.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "sandbox.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cstdio>

using namespace elsai;
using namespace elsai::bench;

namespace {

/// The tree of bench/seed_bench.sh (window_bench's generator), and `zebra_0042` in 10 files.
void generate(const QString &root)
{
    const auto files = [](const QString &dir, int n, int seed) {
        QDir().mkpath(dir);
        for (int k = 0; k < n; ++k)
            writeFile(dir + QStringLiteral("/f%1.txt").arg(k), fileText(seed, k));
    };
    for (int i = 0; i < 1000; ++i)
        files(QStringLiteral("%1/src/d%2").arg(root).arg(i), 10, i);
    for (int i = 0; i < 400; ++i)
        files(QStringLiteral("%1/node_modules/m%2").arg(root).arg(i), 10, i);
    for (int i = 0; i < 300; ++i)
        files(QStringLiteral("%1/.git/objects/o%2").arg(root).arg(i), 10, i);
    for (int i = 0; i < 300; ++i)
        files(QStringLiteral("%1/src/d%2/__pycache__").arg(root).arg(i), 10, i);
    for (int i = 0; i < 10; ++i)
        writeFile(QStringLiteral("%1/src/d%2/f9.txt").arg(root).arg(i * 97),
                  "int zebra_0042 = 1;\n" + textBlob().left(1000));
}

double timed(const std::function<void()> &f)
{
    QElapsedTimer t;
    t.start();
    f();
    return double(t.nsecsElapsed()) / 1e6;
}

/// The tool's standard output (for the sanity check; the timed runs discard it).
QByteArray outputOf(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(120000))
        qFatal("%s did not finish", qPrintable(program));
    return p.readAllStandardOutput();
}

QByteArray loadAverage()
{
    QFile f(QStringLiteral("/proc/loadavg"));
    return f.open(QIODevice::ReadOnly) ? f.readAll().left(14) : QByteArray("?");
}

struct Case
{
    const char *what;
    QJsonObject args;
    QString tool;
    QStringList baseline; ///< argv
    const char *baselineName;
    qsizetype expectLines; ///< the lines both print
};

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false"));
    int rounds = 5;
    QString work;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (qstrcmp(argv[i], "--rounds") == 0)
            rounds = qMax(1, atoi(argv[i + 1]));
        else if (qstrcmp(argv[i], "--work") == 0)
            work = QString::fromLocal8Bit(argv[i + 1]);
    }
    const QString rg = QStandardPaths::findExecutable(QStringLiteral("rg"));
    const QString fd = QStandardPaths::findExecutable(QStringLiteral("fdfind"));
    if (rg.isEmpty() || fd.isEmpty()) {
        std::printf("search_bench: rg and fdfind are needed (apt-get install ripgrep fd-find)\n");
        return 2;
    }
    if (work.isEmpty())
        work = QFileInfo(QStringLiteral("/dev/shm")).isWritable() ? QStringLiteral("/dev/shm")
                                                                  : QDir::tempPath();
    QTemporaryDir tmp(work + QStringLiteral("/search-bench-XXXXXX"));
    const QString ws = tmp.path() + QStringLiteral("/ws");
    generate(ws);
    const SandboxPtr sb = Sandbox::create(QStringLiteral("search-bench"),
                                          std::make_shared<LocalSandboxBackend>(ws), std::nullopt);
    sb->start();
    const AgentPtr reader = Agent::create(QStringLiteral("reader"));
    sb->attach(reader, SandboxAttachMode::ReadOnly);

    const QStringList rgSkip{QStringLiteral("-g"), QStringLiteral("!node_modules"),
                             QStringLiteral("-g"), QStringLiteral("!__pycache__")};
    const QStringList fdSkip{QStringLiteral("-E"), QStringLiteral("node_modules"),
                             QStringLiteral("-E"), QStringLiteral("__pycache__")};
    const QList<Case> cases{
        {"grep 'zebra_[0-9]+', 10 matches in 10,000 files",
         {{"pattern", "zebra_[0-9]+"}},
         QStringLiteral("grep"),
         QStringList{rg, QStringLiteral("-n"), QStringLiteral("zebra_[0-9]+"), ws} + rgSkip,
         "rg -n",
         10},
        {"grep '^The quick' output=count, 5,000 files",
         {{"pattern", "^The quick"},
          {"output", "count"},
          {"include", QJsonArray{"f[0-4].txt"}},
          {"max_results", 5000}},
         QStringLiteral("grep"),
         QStringList{rg, QStringLiteral("-c"), QStringLiteral("^The quick"), QStringLiteral("-g"),
                     QStringLiteral("f[0-4].txt"), ws} +
             rgSkip,
         "rg -c",
         5000},
        {"glob 'f3.txt' newest first, 1,000 matches",
         {{"pattern", "f3.txt"}, {"max_results", 5000}},
         QStringLiteral("glob"),
         QStringList{fd, QStringLiteral("-g"), QStringLiteral("f3.txt"), ws} + fdSkip,
         "fdfind -g",
         1000},
        {"glob 'f3.txt' by path",
         {{"pattern", "f3.txt"}, {"order", "path"}, {"max_results", 5000}},
         QStringLiteral("glob"),
         QStringList{fd, QStringLiteral("-g"), QStringLiteral("f3.txt"), ws} + fdSkip,
         "fdfind -g",
         1000},
    };
    std::printf("load average at start: %s\n", loadAverage().constData());
    for (const Case &c : cases) {
        // the same answer from both, once, untimed
        const QString ours = reader->callTool(c.tool, c.args).text;
        const QByteArray theirs = outputOf(c.baseline.first(), c.baseline.mid(1));
        const qsizetype ourLines = ours.count(u'\n') + 1;
        const qsizetype theirLines = theirs.count('\n');
        if (qMin(ourLines, c.expectLines) != qMin(theirLines, c.expectLines))
            std::printf("  (answers differ: elsai %lld lines, %s %lld)\n",
                        static_cast<long long>(ourLines), c.baselineName,
                        static_cast<long long>(theirLines));
        std::vector<QByteArray> argvBase, argvOne;
        for (const QString &a : c.baseline)
            argvBase.push_back(a.toLocal8Bit());
        argvOne = argvBase;
        argvOne.insert(argvOne.begin() + 1, QByteArray("-j1"));
        std::vector<double> e, b, one;
        for (int r = 0; r < rounds + 1; ++r) { // the first round warms up
            const auto runOurs = [&] {
                e.push_back(timed([&] { reader->callTool(c.tool, c.args); }));
            };
            const auto runTheirs = [&] {
                b.push_back(timed([&] { spawnAndWait(argvBase, environ, true); }));
                one.push_back(timed([&] { spawnAndWait(argvOne, environ, true); }));
            };
            if (r % 2) {
                runOurs();
                runTheirs();
            } else {
                runTheirs();
                runOurs();
            }
            if (r == 0) {
                e.clear();
                b.clear();
                one.clear();
            }
        }
        std::vector<double> ratios, ratiosOne;
        for (size_t i = 0; i < e.size(); ++i) {
            ratios.push_back(e[i] / b[i]);
            ratiosOne.push_back(e[i] / one[i]);
        }
        const double r = median(ratios);
        std::printf("%-46s elsai %7.1f ms  %-10s %7.1f ms (-j1 %7.1f ms)  ratio %.2f (-j1 %.2f) "
                    "(target <= 1.5) %s\n",
                    c.what, median(e), c.baselineName, median(b), median(one), r, median(ratiosOne),
                    r <= 1.5 ? "ok" : "OVER");
    }
    std::printf("load average at end: %s\n", loadAverage().constData());
    sb->stop(false);
    return 0;
}
