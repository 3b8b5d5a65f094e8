// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "shutdownsignals.h"

#include "audit.h"
#include "processguard.h"

#include <QCoreApplication>
#include <QJsonObject>
#include <QMetaObject>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

namespace elsai {

namespace {

// Bounds, not timings: each command's own grace (killGraceMs) comes first.
constexpr int CommandsStopWaitMs = 15000; // then SIGKILL to what is still registered
constexpr int RecordsWaitMs = 5000;
constexpr int EventLoopExitWaitMs = 10000;

int g_pipe[2] = {-1, -1};
std::atomic<ShutdownExit> g_exit{ShutdownExit::Immediate};
std::atomic_bool g_shuttingDown{false};
// Set when the main thread has nothing left to do (awaitShutdownExit()): the watcher then ends
// the program as soon as its own steps are done, not after EventLoopExitWaitMs.
std::mutex g_parkMutex;
std::condition_variable g_parkedChanged;
bool g_mainParked = false;

void onSignal(int signo)
{
    const int saved = errno;
    const unsigned char c = static_cast<unsigned char>(signo);
    [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &c, 1);
    errno = saved;
}

const char *signalName(int signo)
{
    switch (signo) {
    case SIGTERM:
        return "SIGTERM";
    case SIGINT:
        return "SIGINT";
    case SIGHUP:
        return "SIGHUP";
    default:
        return "signal";
    }
}

[[noreturn]] void exitNow(int status)
{
    // Not fflush(nullptr): the main thread may hold a stream's lock for good (blocked reading
    // standard input, or writing to a full pipe).
    for (FILE *stream : {stdout, stderr}) {
        if (::ftrylockfile(stream) == 0) {
            ::fflush_unlocked(stream);
            ::funlockfile(stream);
        }
    }
    ::_exit(status);
}

void shutDown(int signo)
{
    const int status = 128 + signo;
    // write(2), not stdio: stderr's lock may be held by a thread blocked on a full pipe.
    char note[96];
    const int len =
        std::snprintf(note, sizeof note, "elsai-workbench: %s: stopping the running commands\n",
                      signalName(signo));
    if (len > 0) {
        [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, note, size_t(len));
    }
    const int stopped = shutdownCommands(CommandsStopWaitMs);
    // The stopped calls record their outcome on their own threads: those records come first.
    AuditLog::instance().waitForOpenRecords(RecordsWaitMs);
    AuditLog::instance().emitEvent(QStringLiteral("engine.shutdown"), QString(),
                                   QStringLiteral("host"), QStringLiteral("ok"),
                                   {{QStringLiteral("signal"), QLatin1String(signalName(signo))},
                                    {QStringLiteral("commands_stopped"), stopped}});
    AuditLog::instance().flush();
    if (g_exit.load() == ShutdownExit::Immediate || !QCoreApplication::instance())
        exitNow(status);
    QMetaObject::invokeMethod(
        QCoreApplication::instance(), [status] { QCoreApplication::exit(status); },
        Qt::QueuedConnection);
    // A main thread that never returns to its loop must not keep the program alive; one that
    // did and parked in awaitShutdownExit() must not keep it waiting either.
    {
        std::unique_lock lock(g_parkMutex);
        g_parkedChanged.wait_for(lock, std::chrono::milliseconds(EventLoopExitWaitMs),
                                 [] { return g_mainParked; });
    }
    exitNow(status);
}

void watch()
{
    for (;;) {
        unsigned char c = 0;
        const ssize_t n = ::read(g_pipe[0], &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        if (g_shuttingDown.exchange(true)) {
            // A second signal: the user insists. The watchdog kills whatever is left.
            exitNow(128 + c);
        }
        // The rest runs on its own thread so a second signal is still seen meanwhile.
        std::thread([signo = int(c)] { shutDown(signo); }).detach();
    }
}

} // namespace

bool shutdownRequested()
{
    return g_shuttingDown.load();
}

void awaitShutdownExit()
{
    // Every step of shutDown() is bounded and it ends in _exit, at once once this is known.
    {
        const std::lock_guard lock(g_parkMutex);
        g_mainParked = true;
    }
    g_parkedChanged.notify_all();
    for (;;)
        ::pause();
}

void installShutdownSignals(ShutdownExit exit)
{
    g_exit.store(exit);
    if (g_pipe[0] >= 0)
        return;
    guardEngineProcess();
    if (::pipe2(g_pipe, O_CLOEXEC) != 0) {
        g_pipe[0] = g_pipe[1] = -1;
        return;
    }
    ::fcntl(g_pipe[1], F_SETFL, O_NONBLOCK); // a flood of signals never blocks the handler
    std::thread(watch).detach();
    struct sigaction sa = {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : {SIGTERM, SIGINT, SIGHUP})
        ::sigaction(sig, &sa, nullptr);
}

} // namespace elsai
