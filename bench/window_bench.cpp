// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Responsiveness of the window under load: the GUI event loop's longest stall while the
// console streams a 50 MB flood and while a 20,000-file seed runs, against the idle window
// measured over the same duration in the same run.
//
// A probe timer ticks every 1 ms (Qt::PreciseTimer) on the GUI thread and records the gap
// between ticks; a stall is a long gap. Scenarios, in one MainWindow shown offscreen:
//  * flood: the console panel runs `yes | head -c N` (lines) and then
//    `head -c N /dev/zero | tr '\0' y` (one line, no newline) in a sandbox whose
//    max_output_bytes lets all of it through, measured until the console shows the exit
//    status and its view has inserted every queued slice; also the flood's throughput
//    against a bare runProcess() of the same command (no window) and the RSS growth (peak:
//    VmHWM after resetting it, and what stays held);
//  * seed: a sandbox seeded from a generated tree (20,000 files in 2,000 folders, half under
//    node_modules/.git/__pycache__, as bench/seed_bench.sh makes it) is added and made
//    current, measured until sandboxStarted and the workspace panel shows its root with
//    `src` expanded (1,000 folders);
//  * changes: in the seeded sandbox, one command modifies 1,000 files and adds 1,000, measured
//    until the Changes panel lists all 2,000 (a scan of the 12,000-file workspace on the pool,
//    one merge on the GUI thread);
//  * idle: the same window doing nothing (its own timers run) for the longest scenario's
//    duration (capped, 8 s by default): the baseline of every ratio.
//
// Usage: window_bench [--flood-bytes N (default 52428800)] [--idle-cap-ms MS (default 8000)]
//                     [--work DIR] [--slow-events MS]
// --slow-events: every event the GUI thread takes MS ms or more to deliver is listed at the end
// (receiver class and name, event type, scenario): what to profile when a stall shows.
// The Changes panel is open beside the console during every scenario (it follows the current
// sandbox, so it scans the seeded workspace as soon as the seed is done).
// Runs offscreen unless QT_QPA_PLATFORM says otherwise.

#include "agentspanel.h"
#include "auditpanel.h"
#include "changesmodel.h"
#include "changespanel.h"
#include "consolehistorymodel.h"
#include "consolepanel.h"
#include "mainwindow.h"
#include "process.h"
#include "processguard.h"
#include "sandboxcontroller.h"
#include "sandboxspec.h"
#include "sessionspanel.h"
#include "workspacepanel.h"
#include "workspacetreemodel.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QLabel>
#include <QLoggingCategory>
#include <QPlainTextEdit>
#include <QSettings>
#include <QStandardPaths>
#include <QStorageInfo>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeView>
#include <QWindow>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <malloc.h>
#include <memory>
#include <string>
#include <vector>

extern char **environ;

namespace elsai {
namespace {

/// Times each event the GUI thread delivers when asked to: the outermost deliveries, and the
/// slow ones sent from within them (the paint events of one update request, say), listed
/// after it, indented by depth.
class TimingApplication : public QApplication
{
public:
    using QApplication::QApplication;

    struct Slow
    {
        double ms;
        double cpuMs; ///< the GUI thread's own CPU time: much less than `ms` is waiting for a core
        QString receiver;
        int type;
        QString scenario;
        int depth = 0;
    };
    qint64 thresholdNs = -1;
    QString scenario = QStringLiteral("setup");
    std::vector<Slow> slow;

    bool notify(QObject *receiver, QEvent *event) override
    {
        if (thresholdNs < 0)
            return QApplication::notify(receiver, event);
        const int depth = m_depth++;
        const size_t inner = slow.size(); // nested slow events go after this one
        QElapsedTimer clock;
        clock.start();
        const qint64 cpu0 = threadCpuNs();
        // read before: the delivery may delete the event, and the receiver (DeferredDelete)
        const int type = int(event->type());
        const char *const className = receiver->metaObject()->className(); // static storage
        const QString objectName = receiver->objectName();                 // shared, no copy
        const bool result = QApplication::notify(receiver, event);
        --m_depth;
        if (const qint64 ns = clock.nsecsElapsed(); ns >= thresholdNs) {
            QString name = QString::fromLatin1(className);
            if (!objectName.isEmpty())
                name += QLatin1Char('/') + objectName;
            slow.insert(slow.begin() + qsizetype(inner),
                        {double(ns) / 1e6, double(threadCpuNs() - cpu0) / 1e6, name, type, scenario,
                         depth});
        }
        return result;
    }

private:
    static qint64 threadCpuNs()
    {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return qint64(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    }
    int m_depth = 0;
};

TimingApplication *timingApp()
{
    return static_cast<TimingApplication *>(QCoreApplication::instance());
}

/// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); -1 when unavailable.
qint64 procStatusKiB(const char *name)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    const size_t len = std::strlen(name);
    while (std::getline(in, line)) {
        if (line.compare(0, len, name) == 0 && line.size() > len && line[len] == ':')
            return std::stoll(line.substr(len + 1));
    }
    return -1;
}

/// Resets VmHWM to the current RSS (Linux >= 4.0); false when the kernel refuses.
bool resetPeakRss()
{
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return bool(out);
}

double mib(qint64 kib)
{
    return double(kib) / 1024.0;
}

struct Stalls
{
    double maxMs = 0;
    double p99Ms = 0;
    double p50Ms = 0;
    int over50 = 0;      ///< gaps of 50 ms or more
    double over50Ms = 0; ///< their total
    qint64 ticks = 0;
    double durationMs = 0;
    qint64 peakRssKiB = 0; ///< highest RSS sampled while probing
};

/// Records the gaps between ticks of a 1 ms timer on the GUI thread (and samples the RSS
/// every 10 ms).
class StallProbe : public QObject
{
public:
    StallProbe()
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        connect(&m_timer, &QTimer::timeout, this, &StallProbe::tick);
    }

    void start()
    {
        m_gaps.clear();
        m_gaps.reserve(1 << 16);
        m_peakRss = procStatusKiB("VmRSS");
        m_last = m_lastRss = 0;
        m_clock.start();
        m_timer.start();
    }

    Stalls stop()
    {
        tick(); // the gap up to now counts too
        m_timer.stop();
        Stalls s;
        s.ticks = qint64(m_gaps.size());
        s.durationMs = double(m_clock.nsecsElapsed()) / 1e6;
        s.peakRssKiB = m_peakRss;
        if (m_gaps.empty())
            return s;
        std::vector<qint64> g = m_gaps;
        std::sort(g.begin(), g.end());
        auto at = [&g](double q) { return double(g[size_t(q * double(g.size() - 1))]) / 1e6; };
        s.maxMs = double(g.back()) / 1e6;
        s.p99Ms = at(0.99);
        s.p50Ms = at(0.5);
        const auto long0 = std::lower_bound(g.begin(), g.end(), qint64(50'000'000));
        s.over50 = int(g.end() - long0);
        for (auto it = long0; it != g.end(); ++it)
            s.over50Ms += double(*it) / 1e6;
        return s;
    }

private:
    void tick()
    {
        const qint64 now = m_clock.nsecsElapsed();
        m_gaps.push_back(now - m_last);
        m_last = now;
        if (now - m_lastRss >= 10'000'000) {
            m_lastRss = now;
            m_peakRss = std::max(m_peakRss, procStatusKiB("VmRSS"));
        }
    }

    QTimer m_timer;
    QElapsedTimer m_clock;
    std::vector<qint64> m_gaps;
    qint64 m_last = 0, m_lastRss = 0, m_peakRss = 0;
};

/// Runs the event loop until `done()` holds (polled every 2 ms) or `timeoutMs` passes.
template<typename Pred>
bool runUntil(Pred done, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(2);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done() || clock.elapsed() >= timeoutMs)
            loop.quit();
    });
    poll.start();
    if (!done())
        loop.exec();
    return done();
}

void runFor(int ms)
{
    QElapsedTimer clock;
    clock.start();
    runUntil([&] { return clock.elapsed() >= ms; }, ms + 1000);
}

/// The tree of bench/seed_bench.sh: 20,000 files of 200 B - 4 KB in about 2,000 folders,
/// half of them under node_modules/, .git/ and __pycache__/ (excluded by seeding).
bool generateTree(const QString &root)
{
    QByteArray blob;
    while (blob.size() < 4096)
        blob += "The quick brown fox jumps over the lazy dog 0123456789. ";
    auto writeFiles = [&blob](const QString &dir, int n, int seed) {
        if (!QDir().mkpath(dir))
            return false;
        for (int k = 0; k < n; ++k) {
            const int size = 200 + (seed * 7919 + k * 104729) % 3800;
            QFile f(QStringLiteral("%1/f%2.txt").arg(dir).arg(k));
            if (!f.open(QIODevice::WriteOnly) || f.write(blob.constData(), size) != size)
                return false;
        }
        return true;
    };
    bool ok = true;
    for (int i = 0; i < 1000 && ok; ++i) // kept
        ok = writeFiles(QStringLiteral("%1/src/d%2").arg(root).arg(i), 10, i);
    for (int i = 0; i < 400 && ok; ++i)
        ok = writeFiles(QStringLiteral("%1/node_modules/m%2").arg(root).arg(i), 10, i);
    for (int i = 0; i < 300 && ok; ++i)
        ok = writeFiles(QStringLiteral("%1/.git/objects/o%2").arg(root).arg(i), 10, i);
    for (int i = 0; i < 300 && ok; ++i)
        ok = writeFiles(QStringLiteral("%1/src/d%2/__pycache__").arg(root).arg(i), 10, i);
    return ok;
}

struct FloodResult
{
    bool ok = false;
    Stalls stalls;
    double seconds = 0;     ///< runCommand() until the console shows the exit status
    qint64 received = 0;    ///< bytes the console model was handed
    qint64 kept = 0;        ///< bytes it kept
    int blocks = 0;         ///< lines in the console view
    qint64 peakKiB = 0;     ///< RSS growth at the peak
    qint64 heldKiB = 0;     ///< RSS growth once finished
    qint64 resultChars = 0; ///< characters of ExecuteResult::output
    qint64 commandMs = 0;   ///< the command's own duration (ExecuteResult::durationMs)
    QString status;
};

class Bench
{
public:
    Bench(const QString &work, qint64 floodBytes, int idleCapMs)
        : m_work(work), m_floodBytes(floodBytes), m_idleCapMs(idleCapMs)
    {
    }

    int run();

private:
    bool startConsoleSandbox();
    FloodResult flood(const QString &command);
    bool seed(Stalls *stalls, double *seconds, double *startedSeconds, int *srcRows);
    bool changes(Stalls *stalls, double *seconds, int *rows);
    double bareFloodSeconds(const QString &command);

    QString m_work;
    qint64 m_floodBytes;
    int m_idleCapMs;
    std::unique_ptr<SandboxController> m_controller;
    std::unique_ptr<MainWindow> m_window;
    StallProbe m_probe;
    const QString m_consoleId = QStringLiteral("wbench-console");
    const QString m_seedId = QStringLiteral("wbench-seed");
};

bool Bench::startConsoleSandbox()
{
    SandboxSpec spec;
    spec.workspaceId = m_consoleId;
    spec.workspaceRoot = m_work + QStringLiteral("/console-ws");
    spec.ttlSeconds = std::nullopt;
    spec.local.timeout = 90;
    spec.local.maxOutputBytes = m_floodBytes + (1 << 20); // the whole flood gets through
    QDir().mkpath(spec.workspaceRoot);
    m_controller->addSandbox(spec);
    // The first sandbox becomes current: the console panel follows it.
    return runUntil([this] { return m_controller->state(m_consoleId) == SessionState::Running; },
                    20000) &&
           m_window->consolePanel()->workspaceId() == m_consoleId;
}

FloodResult Bench::flood(const QString &command)
{
    FloodResult r;
    ConsolePanel *console = m_window->consolePanel();
    bool finished = false;
    const auto conn = QObject::connect(
        m_controller.get(), &SandboxController::commandFinished, m_controller.get(),
        [&](const QString &id, quint64, const ExecuteResult &result) {
            if (id != m_consoleId)
                return;
            finished = true;
            r.resultChars = result.output.size();
            r.commandMs = result.durationMs;
        });
    timingApp()->scenario = QStringLiteral("flood: ") + command;
    malloc_trim(0); // start from live memory, as the end does
    const bool peakReset = resetPeakRss();
    const qint64 rss0 = procStatusKiB("VmRSS");
    QElapsedTimer clock;
    m_probe.start();
    clock.start();
    console->runCommand(command);
    const bool done = runUntil(
        [&] {
            // Until the view has taken all of it: it inserts in bounded slices.
            return finished &&
                   !console->statusLabel()->text().startsWith(QStringLiteral("running")) &&
                   !console->hasPendingOutput();
        },
        90000);
    r.seconds = double(clock.nsecsElapsed()) / 1e9;
    r.stalls = m_probe.stop();
    QObject::disconnect(conn);
    const qint64 hwm = procStatusKiB("VmHWM");
    r.peakKiB = (peakReset ? std::max(hwm, r.stalls.peakRssKiB) : r.stalls.peakRssKiB) - rss0;
    runFor(200);    // let deferred deletes and queued updates settle
    malloc_trim(0); // freed memory back to the system: what is left is held
    r.heldKiB = procStatusKiB("VmRSS") - rss0;
    r.status = console->statusLabel()->text();
    r.blocks = console->output()->blockCount();
    if (ConsoleHistoryModel *model = m_controller->consoleModel(m_consoleId);
        model && model->rowCount() > 0) {
        const ConsoleHistoryModel::Entry &e = model->entry(model->rowCount() - 1);
        r.kept = e.keptBytes();
        r.received = e.receivedBytes;
    }
    r.ok = done && r.status.startsWith(QStringLiteral("exit 0"));
    if (!r.ok)
        std::fprintf(stderr, "window_bench: flood '%s' did not finish cleanly: %s\n",
                     qPrintable(command), qPrintable(r.status));
    return r;
}

bool Bench::seed(Stalls *stalls, double *seconds, double *startedSeconds, int *srcRows)
{
    const QString project = m_work + QStringLiteral("/project");
    if (!generateTree(project)) {
        std::fprintf(stderr, "window_bench: cannot write the tree in %s\n", qPrintable(project));
        return false;
    }
    runFor(300); // settle after the writes
    SandboxSpec spec;
    spec.workspaceId = m_seedId;
    spec.workspaceRoot = m_work + QStringLiteral("/seed-ws");
    spec.seedFrom = project;
    spec.ttlSeconds = std::nullopt;
    QDir().mkpath(spec.workspaceRoot);

    qint64 startedNs = -1;
    QString failure;
    QElapsedTimer clock;
    const auto c1 = QObject::connect(m_controller.get(), &SandboxController::sandboxStarted,
                                     m_controller.get(), [&](const QString &id) {
                                         if (id == m_seedId)
                                             startedNs = clock.nsecsElapsed();
                                     });
    const auto c2 = QObject::connect(
        m_controller.get(), &SandboxController::operationFailed, m_controller.get(),
        [&](const QString &id, const QString &op, const QString &type, const QString &msg) {
            if (id == m_seedId)
                failure = op + QStringLiteral(": ") + type + QStringLiteral(": ") + msg;
        });
    WorkspacePanel *panel = m_window->workspacePanel();
    QModelIndex src;
    auto srcIndex = [panel]() -> QModelIndex {
        QAbstractItemModel *m = panel->view()->model();
        for (int row = 0; m && row < m->rowCount(); ++row) {
            const QModelIndex i = m->index(row, 0);
            if (i.data().toString() == QLatin1String("src"))
                return i;
        }
        return {};
    };

    timingApp()->scenario = QStringLiteral("seed");
    m_probe.start();
    clock.start();
    m_controller->addSandbox(spec);
    m_window->setCurrentWorkspace(m_seedId); // as the New Sandbox dialog does
    // Started, the root listed, then `src` expanded and listed (1,000 folders).
    const bool done = runUntil(
        [&] {
            if (!failure.isEmpty())
                return true;
            if (startedNs < 0 || panel->workspaceId() != m_seedId)
                return false;
            if (!src.isValid()) {
                src = srcIndex();
                if (src.isValid())
                    panel->view()->expand(src);
                return false;
            }
            return panel->view()->model()->rowCount(src) >= 1000;
        },
        90000);
    *seconds = double(clock.nsecsElapsed()) / 1e9;
    *stalls = m_probe.stop();
    QObject::disconnect(c1);
    QObject::disconnect(c2);
    *startedSeconds = double(startedNs) / 1e9;
    *srcRows = src.isValid() ? panel->view()->model()->rowCount(src) : 0;
    if (!done || !failure.isEmpty()) {
        std::fprintf(stderr, "window_bench: the seed did not complete%s%s\n",
                     failure.isEmpty() ? "" : ": ", qPrintable(failure));
        return false;
    }
    return true;
}

bool Bench::changes(Stalls *stalls, double *seconds, int *rows)
{
    ChangesPanel *panel = m_window->findChild<ChangesPanel *>();
    ChangesModel *model = panel ? panel->model() : nullptr;
    if (!model || model->workspaceId() != m_seedId || !model->isActive()) {
        std::fprintf(stderr, "window_bench: the Changes panel does not follow the seed sandbox\n");
        return false;
    }
    runUntil([model] { return model->scanCount() > 0 && !model->isScanning(); }, 30000);
    // 1,000 seeded files appended to (one per folder) and 1,000 new ones.
    const QString command =
        QStringLiteral("for d in src/d*; do echo changed >> \"$d/f1.txt\"; done; mkdir -p gen; "
                       "i=0; while [ $i -lt 1000 ]; do echo $i > gen/n$i.txt; i=$((i+1)); done");
    QElapsedTimer clock;
    timingApp()->scenario = QStringLiteral("changes");
    m_probe.start();
    clock.start();
    if (m_controller->execute(m_seedId, command) == 0) {
        m_probe.stop();
        std::fprintf(stderr, "window_bench: the changes command did not start\n");
        return false;
    }
    const bool done = runUntil([model] { return model->rowCount() >= 2000; }, 90000);
    *seconds = double(clock.nsecsElapsed()) / 1e9;
    *stalls = m_probe.stop();
    *rows = model->rowCount();
    if (!done)
        std::fprintf(stderr, "window_bench: the Changes panel listed %d of 2000 changes\n", *rows);
    return done;
}

double Bench::bareFloodSeconds(const QString &command)
{
    ProcessSpec spec;
    spec.command = command;
    spec.maxOutputBytes = m_floodBytes + (1 << 20);
    spec.timeoutMs = 90000;
    for (char **e = environ; *e; ++e)
        spec.environment.append(QString::fromLocal8Bit(*e));
    qint64 seen = 0;
    spec.onOutput = [&seen](OutputChannel, const QByteArray &chunk) { seen += chunk.size(); };
    QElapsedTimer clock;
    clock.start();
    const ProcessOutcome out = runProcess(spec);
    const double s = double(clock.nsecsElapsed()) / 1e9;
    return out.exitCode == 0 && seen == m_floodBytes ? s : -1;
}

int Bench::run()
{
    m_controller = std::make_unique<SandboxController>();
    m_window = std::make_unique<MainWindow>(m_controller.get());
    m_window->resize(1280, 800);
    m_window->show();
    if (!runUntil(
            [this] { return m_window->windowHandle() && m_window->windowHandle()->isExposed(); },
            10000)) {
        std::fprintf(stderr, "window_bench: the window was never exposed\n");
        return 1;
    }
    // The Changes panel open beside the console (not tabbed behind it) during every run.
    QDockWidget *consoleDock = m_window->panelDock(QStringLiteral("consoleDock"));
    QDockWidget *changesDock = m_window->panelDock(QStringLiteral("changesDock"));
    if (!consoleDock || !changesDock) {
        std::fprintf(stderr, "window_bench: the window has no console or changes dock\n");
        return 1;
    }
    m_window->splitDockWidget(consoleDock, changesDock, Qt::Horizontal);
    changesDock->show();
    consoleDock->show();
    consoleDock->raise();
    if (!startConsoleSandbox()) {
        std::fprintf(stderr, "window_bench: the console sandbox did not start\n");
        return 1;
    }
    runFor(500);

    const QString n = QString::number(m_floodBytes);
    const QString linesCmd = QStringLiteral("yes | head -c %1").arg(n);
    const QString oneLineCmd = QStringLiteral("head -c %1 /dev/zero | tr '\\0' y").arg(n);
    const FloodResult lines = flood(linesCmd);
    runFor(300);
    const FloodResult oneLine = flood(oneLineCmd);
    runFor(300);
    Stalls seedStalls;
    double seedS = 0, startedS = 0;
    int srcRows = 0;
    const bool seeded = seed(&seedStalls, &seedS, &startedS, &srcRows);
    if (!lines.ok || !oneLine.ok || !seeded)
        return 1;
    runFor(300);
    Stalls changeStalls;
    double changesS = 0;
    int changeRows = 0;
    if (!changes(&changeStalls, &changesS, &changeRows))
        return 1;
    runFor(300);

    // The baseline: the same window, idle, as long as the longest scenario (at most
    // --idle-cap-ms: a scenario that is one long stall needs no equally long baseline).
    const double longest = std::max({lines.seconds, oneLine.seconds, seedS, changesS});
    const int idleMs = int(std::clamp(longest * 1000, 1000.0, double(m_idleCapMs)));
    timingApp()->scenario = QStringLiteral("idle");
    m_probe.start();
    runFor(idleMs);
    const Stalls idle = m_probe.stop();

    const double bareLines = bareFloodSeconds(linesCmd);
    const double bareOne = bareFloodSeconds(oneLineCmd);

    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    const double floodMiB = double(m_floodBytes) / (1 << 20);
    std::printf("window: %dx%d on '%s', probe: 1 ms timer; idle baseline %.1f s "
                "(the longest scenario, %.1f s, capped at %.0f s), %lld ticks\n",
                m_window->width(), m_window->height(), qPrintable(QApplication::platformName()),
                idle.durationMs / 1000, longest, m_idleCapMs / 1000.0,
                static_cast<long long>(idle.ticks));
    for (const auto &[name, f, bare] :
         {std::tuple("lines", &lines, bareLines), std::tuple("one line", &oneLine, bareOne)}) {
        std::printf("flood (%s): %.1f MiB in %.2f s through the window (%.0f MiB/s); bare "
                    "runProcess %.2f s (%.0f MiB/s), ratio %.2f; the command itself took "
                    "%.2f s (ratio %.2f)\n",
                    name, floodMiB, f->seconds, floodMiB / f->seconds, bare,
                    bare > 0 ? floodMiB / bare : 0.0, ratio(f->seconds, bare),
                    double(f->commandMs) / 1000, ratio(double(f->commandMs) / 1000, bare));
        std::printf("  console model handed %.1f MiB, kept %.2f MiB; view %d lines; "
                    "result.output %lld chars; status \"%s\"\n",
                    double(f->received) / (1 << 20), double(f->kept) / (1 << 20), f->blocks,
                    static_cast<long long>(f->resultChars), qPrintable(f->status));
        std::printf("  memory: RSS +%.0f MiB at the peak, +%.0f MiB held afterwards "
                    "(after malloc_trim)\n",
                    mib(f->peakKiB), mib(f->heldKiB));
        std::printf("  stalls: max %.1f ms, p99 %.2f ms (%lld ticks); %d gaps >= 50 ms, "
                    "%.1f s of %.1f s\n",
                    f->stalls.maxMs, f->stalls.p99Ms, static_cast<long long>(f->stalls.ticks),
                    f->stalls.over50, f->stalls.over50Ms / 1000, f->stalls.durationMs / 1000);
    }
    std::printf("seed: 20000 files (10000 seeded) in %.2f s to sandboxStarted, %.2f s until "
                "the tree shows src/ expanded (%d rows); stalls: max %.1f ms, p99 %.2f ms, "
                "%d gaps >= 50 ms\n",
                startedS, seedS, srcRows, seedStalls.maxMs, seedStalls.p99Ms, seedStalls.over50);
    std::printf("changes: %d files listed by the Changes panel %.2f s after the command "
                "started; stalls: max %.1f ms, p99 %.2f ms, %d gaps >= 50 ms\n",
                changeRows, changesS, changeStalls.maxMs, changeStalls.p99Ms, changeStalls.over50);
    std::printf("window stall: idle max %.1f ms, flood max %.1f ms (ratio %.1f), one-line "
                "flood max %.1f ms (ratio %.1f), seed max %.1f ms (ratio %.1f); p99 idle "
                "%.2f ms, flood %.2f ms, one-line %.2f ms, seed %.2f ms\n",
                idle.maxMs, lines.stalls.maxMs, ratio(lines.stalls.maxMs, idle.maxMs),
                oneLine.stalls.maxMs, ratio(oneLine.stalls.maxMs, idle.maxMs), seedStalls.maxMs,
                ratio(seedStalls.maxMs, idle.maxMs), idle.p99Ms, lines.stalls.p99Ms,
                oneLine.stalls.p99Ms, seedStalls.p99Ms);
    return 0;
}

} // namespace
} // namespace elsai

int main(int argc, char **argv)
{
    // First, as the program's main() does: the watchdog is a forked copy of this process, and
    // forked later, from a full window, it leaves every page shared copy-on-write; the
    // window's next repaint then copies its backing store page by page (a 30 ms stall).
    elsai::guardEngineProcess();
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    elsai::TimingApplication app(argc, argv);
    // As the window does: audit records are not logged to stderr.
    QLoggingCategory::setFilterRules(QStringLiteral("elsai.sandbox.audit.info=false"));
    const QStringList args = app.arguments();
    auto option = [&args](const QString &name, const QString &fallback) {
        const qsizetype i = args.indexOf(name);
        return i >= 0 && i + 1 < args.size() ? args.at(i + 1) : fallback;
    };
    const qint64 floodBytes = std::max<qint64>(
        1, option(QStringLiteral("--flood-bytes"), QStringLiteral("52428800")).toLongLong());
    // tmpfs when it has room (the seed measures the window, not the disk).
    QString base = option(QStringLiteral("--work"), QString());
    if (base.isEmpty()) {
        base = QDir::tempPath();
        const QStorageInfo shm(QStringLiteral("/dev/shm"));
        if (shm.isValid() && shm.bytesAvailable() > (qint64(1) << 30))
            base = shm.rootPath();
    }
    QTemporaryDir work(base + QStringLiteral("/window-bench.XXXXXX"));
    if (!work.isValid()) {
        std::fprintf(stderr, "window_bench: cannot create a folder in %s\n", qPrintable(base));
        return 2;
    }
    // The window's layout settings go to the work folder, never the user's.
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope,
                       work.filePath(QStringLiteral("config")));
    const int idleCapMs =
        std::max(1000, option(QStringLiteral("--idle-cap-ms"), QStringLiteral("8000")).toInt());
    if (const QString slow = option(QStringLiteral("--slow-events"), QString()); !slow.isEmpty())
        app.thresholdNs = qint64(slow.toDouble() * 1e6);
    elsai::Bench bench(work.path(), floodBytes, idleCapMs);
    const int status = bench.run();
    if (app.thresholdNs >= 0) {
        std::printf("slow events (>= %.1f ms): %zu\n", double(app.thresholdNs) / 1e6,
                    app.slow.size());
        for (const auto &e : app.slow)
            std::printf("  %*s%7.1f ms (CPU %5.1f ms)  %-10s type %4d  %s\n", 2 * e.depth, "", e.ms,
                        e.cpuMs, qPrintable(e.scenario.left(24)), e.type, qPrintable(e.receiver));
    }
    return status;
}
