// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The terminal under a flood and at the keyboard (docs/terminal.md, "Measured"):
//  1. `cat` of a 50 MB text file through the terminal (a local shell on a PTY, drawn by
//     TerminalWidget) vs the same `cat` in xterm on the same display: ratio of the times;
//  2. the longest event-loop gap while the terminal's flood runs (a 1 ms timer's lateness);
//  3. keypress-to-echo: a key sent to the widget until the shell's echo is on its screen, the
//     median of 200 keys.
// On a busy machine the wall times mostly measure the run queue: xterm runs before and after
// the terminal (the ratio is to their mean), and the CPU seconds each side spent (the terminal
// or xterm, with its shell and cat) are printed beside them.
// Run under Xvfb (bench/run.sh does: xvfb-run) so that both terminals draw for real.
//   terminal_bench [MB]

#include "localsandboxbackend.h"
#include "processguard.h"
#include "ptyfactory.h"
#include "ptysession.h"
#include "terminalwidget.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include <sys/resource.h>
#include <time.h>

using namespace elsai;

namespace {

QByteArray fiftyMegabytes(qint64 bytes)
{
    // Lines of text like a build log: 79 characters and a newline.
    QByteArray out;
    out.reserve(bytes);
    for (qint64 i = 0; out.size() < bytes; ++i) {
        QByteArray line = "line " + QByteArray::number(i) + " of the flood: compiling src/module_" +
                          QByteArray::number(i % 977) + ".cpp with -O2 -Wall ";
        line = line.leftJustified(79, '.') + '\n';
        out += line;
    }
    out.truncate(bytes);
    return out;
}

/// CPU seconds of this process so far (every thread).
double selfCpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

/// CPU seconds of the children reaped so far (with what they reaped: a shell's cat).
double childrenCpuSeconds()
{
    rusage ru{};
    getrusage(RUSAGE_CHILDREN, &ru);
    const auto s = [](const timeval &tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; };
    return s(ru.ru_utime) + s(ru.ru_stime);
}

struct Run
{
    double seconds = -1;
    double cpu = 0; ///< CPU seconds, xterm with its shell and cat
};

/// `xterm -e sh -c CMD` run until it exits, on the display we run on.
Run xtermRun(const QString &xterm, const QString &command)
{
    QProcess p;
    const double cpu0 = childrenCpuSeconds();
    QElapsedTimer t;
    t.start();
    p.start(xterm, {QStringLiteral("-geometry"), QStringLiteral("100x30"), QStringLiteral("-e"),
                    QStringLiteral("sh"), QStringLiteral("-c"), command});
    if (!p.waitForFinished(600000))
        return {};
    return {double(t.nsecsElapsed()) / 1e9, childrenCpuSeconds() - cpu0};
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(double(v.size()) * p))];
}

double median(std::vector<double> v)
{
    return percentile(std::move(v), 0.5);
}

} // namespace

int main(int argc, char **argv)
{
    // First, as the program's main() does: the watchdog is a forked copy of this process, and
    // forked later, from a full window, it leaves every page shared copy-on-write; the
    // window's next repaint then copies its backing store page by page (a 30 ms stall).
    elsai::guardEngineProcess();
    QApplication app(argc, argv);
    const qint64 mb = argc > 1 ? QByteArray(argv[1]).toLongLong() : 50;
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("flood.txt"));
    {
        QFile f(file);
        if (!f.open(QIODevice::WriteOnly) || f.write(fiftyMegabytes(mb << 20)) != (mb << 20)) {
            std::fprintf(stderr, "terminal_bench: cannot write %s\n", qPrintable(file));
            return 2;
        }
    }

    // xterm first (and again after the terminal): the ratio is to the mean of the two runs.
    const QString xterm = QStandardPaths::findExecutable(QStringLiteral("xterm"));
    const bool withXterm = !xterm.isEmpty() && !qEnvironmentVariableIsEmpty("DISPLAY");
    const QString catCommand = QStringLiteral("cat '%1'").arg(file);
    const Run xtermStart = withXterm ? xtermRun(xterm, QStringLiteral("true")) : Run();
    const Run xtermBefore = withXterm ? xtermRun(xterm, catCommand) : Run();

    LocalSandboxBackend::Options o;
    o.env.insert(QStringLiteral("SHELL"), QStringLiteral("/bin/sh"));
    o.env.insert(QStringLiteral("PS1"), QStringLiteral("$ "));
    auto backend = std::make_shared<LocalSandboxBackend>(dir.path(), o);
    backend->create();

    TerminalWidget view;
    view.resize(900, 560);
    view.show();
    if (!QTest::qWaitForWindowExposed(&view)) {
        std::fprintf(stderr, "terminal_bench: the window was not shown\n");
        return 2;
    }
    std::unique_ptr<PtySession> session(createPtySession(backend, QStringLiteral("bench")));
    view.setSession(session.get());
    session->start(view.screen()->columns(), view.screen()->rows());
    if (!QTest::qWaitFor([&] { return session->isRunning(); }, 10000))
        return 2;
    QByteArray tail; // the last output, to see the marker
    QObject::connect(session.get(), &PtySession::output,
                     [&](const QByteArray &b) { tail = (tail + b).right(256); });
    QTest::qWait(300);

    // 1 + 2: the flood, with a 1 ms timer watching the event loop. Its baseline: the same
    // timer on the idle window for 3 s (what the machine's scheduling alone costs).
    qint64 maxGapNs = 0;
    std::vector<double> gapsMs;
    QElapsedTimer sinceTick;
    QTimer ticker;
    ticker.setTimerType(Qt::PreciseTimer);
    ticker.setInterval(1);
    QObject::connect(&ticker, &QTimer::timeout, [&] {
        maxGapNs = std::max(maxGapNs, sinceTick.nsecsElapsed());
        gapsMs.push_back(double(sinceTick.nsecsElapsed()) / 1e6);
        sinceTick.restart();
    });
    sinceTick.start();
    ticker.start();
    QTest::qWait(3000);
    ticker.stop();
    const qint64 idleGapNs = maxGapNs;
    const double idleP99 = percentile(gapsMs, 0.99);
    maxGapNs = 0;
    gapsMs.clear();
    const double selfCpu0 = selfCpuSeconds();
    const double childCpu0 = childrenCpuSeconds();
    QElapsedTimer clock;
    clock.start();
    sinceTick.start();
    ticker.start();
    session->write("cat " + QFile::encodeName(file) + "; echo FLOOD-$((40+2))-END\n");
    const bool done = QTest::qWaitFor([&] { return tail.contains("FLOOD-42-END"); }, 600000);
    ticker.stop();
    const double ours = double(clock.nsecsElapsed()) / 1e9;
    const double selfCpu = selfCpuSeconds() - selfCpu0;
    const double floodP99 = percentile(gapsMs, 0.99);
    if (!done) {
        std::fprintf(stderr, "terminal_bench: the flood did not finish\n");
        return 1;
    }
    QTest::qWait(100);

    // 3: keypress to echo, at an idle prompt (the shell echoes each key): from the key event
    // until the echo is painted.
    std::vector<double> latencies;
    bool echoed = false;
    QObject::connect(session.get(), &PtySession::output, [&](const QByteArray &b) {
        if (b.contains('x'))
            echoed = true;
    });
    for (int i = 0; i < 200; ++i) {
        echoed = false;
        const qint64 frames = view.frameCount();
        QElapsedTimer t;
        t.start();
        QTest::keyClick(&view, Qt::Key_X);
        // QTest::qWaitFor sleeps 10 ms between looks: wait for events instead.
        QEventLoop loop;
        while (!(echoed && view.frameCount() > frames) && t.elapsed() < 2000)
            loop.processEvents(QEventLoop::WaitForMoreEvents);
        if (echoed && view.frameCount() > frames)
            latencies.push_back(double(t.nsecsElapsed()) / 1e6);
        QTest::qWait(5);
        if (i % 50 == 49) {
            QTest::keyClick(&view, Qt::Key_U, Qt::ControlModifier); // clear the line
            QTest::qWait(20);
        }
    }
    session->terminate();
    (void)QTest::qWaitFor([&] { return session->state() == PtySession::State::Finished; }, 10000);
    const double shellCpu = childrenCpuSeconds() - childCpu0; // the shell, with its cat

    std::printf("terminal: cat %lld MB in %.2f s (%.1f MB/s), %lld frames painted; CPU %.2f s "
                "(the terminal %.2f s, its shell and cat %.2f s)\n",
                mb, ours, double(mb) / ours, view.frameCount(), selfCpu + shellCpu, selfCpu,
                shellCpu);
    std::printf("terminal: event-loop gaps during the flood: longest %.1f ms (target < 50 ms), "
                "99th percentile %.1f ms; idle, the same timer: longest %.1f ms, 99th %.1f ms\n",
                double(maxGapNs) / 1e6, floodP99, double(idleGapNs) / 1e6, idleP99);
    std::printf("terminal: keypress to echo, median of %zu: %.2f ms (target <= 16 ms)\n",
                latencies.size(), median(latencies));

    if (!withXterm) {
        std::printf("xterm: not run (%s)\n",
                    xterm.isEmpty() ? "apt-get install xterm" : "no X display: run under xvfb-run");
        return 0;
    }
    const Run xtermAfter = xtermRun(xterm, catCommand);
    const double theirs =
        std::max(1e-3, (xtermBefore.seconds + xtermAfter.seconds) / 2 - xtermStart.seconds);
    const double theirCpu = (xtermBefore.cpu + xtermAfter.cpu) / 2;
    std::printf("xterm: cat %lld MB in %.2f s (before the terminal %.2f s, after %.2f s, less "
                "its start-up of %.2f s); CPU %.2f s (xterm, its shell and cat)\n",
                mb, theirs, xtermBefore.seconds, xtermAfter.seconds, xtermStart.seconds, theirCpu);
    std::printf("terminal / xterm: %.2fx (target <= 1.0x); CPU %.2fx\n", ours / theirs,
                (selfCpu + shellCpu) / std::max(1e-3, theirCpu));
    return 0;
}
