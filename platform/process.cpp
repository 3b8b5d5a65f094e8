// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "process.h"

#include "errors.h"
#include "fdutil.h"
#include "processguard.h"
#include "procstat.h"

#include <QFile>
#include <QRandomGenerator>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// Same numbers on every architecture (added after the syscall tables were unified).
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

namespace elsai {

CancellationToken::~CancellationToken()
{
    if (const int fd = m_fd.load(); fd >= 0)
        ::close(fd);
}

int CancellationToken::fd() const
{
    if (const int fd = m_fd.load(); fd >= 0)
        return fd;
    const int made = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (made < 0)
        return -1; // runProcess falls back to checking the flag every few ms
    int expected = -1;
    if (!m_fd.compare_exchange_strong(expected, made)) {
        ::close(made); // another thread made one first
        return expected;
    }
    // cancel() may have run before the fd existed and found none to write to: the flag is
    // read after the fd was published, so one of the two writes.
    if (m_cancelled.load())
        signal(made);
    return made;
}

void CancellationToken::cancel()
{
    if (m_cancelled.exchange(true))
        return;
    if (const int fd = m_fd.load(); fd >= 0)
        signal(fd);
}

void CancellationToken::signal(int fd)
{
    // Never read back: the token may be shared by several calls, each of which must see it.
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(fd, &one, sizeof one);
}

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t ChunkSize = 64 * 1024;
constexpr int PostExitDrainMs = 100; // a descendant nobody could kill may hold the pipes
constexpr int FallbackPollMs = 10;   // when pidfd or the cancel eventfd is missing
constexpr int MaxSweepRounds = 64;
constexpr int DyingWaitMs = 2000;       // per round, for SIGKILLed processes to exit
constexpr int UnsureWaitMs = 200;       // for a process caught mid-exec to show its environment
constexpr pid_t DirectProbeLimit = 256; // probe /proc/<pid> directly for ranges this small
constexpr unsigned long PfKthread = 0x00200000; // PF_KTHREAD in /proc/<pid>/stat flags
constexpr char MarkerPrefix[] = "ELSAI_EXEC_TOKEN=";
constexpr unsigned CloseRangeCloexec = 1U << 2; // CLOSE_RANGE_CLOEXEC (Linux 5.11)

int pidfdOpen(pid_t pid)
{
    return int(::syscall(SYS_pidfd_open, pid, 0));
}

int pidfdKill(int pidfd)
{
    return int(::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0));
}

int msUntil(Clock::time_point when, Clock::time_point now)
{
    if (when <= now)
        return 0;
    // Round up so poll() never wakes just before the deadline and spins.
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(when - now).count();
    return int(std::min<long long>((us + 999) / 1000, INT_MAX));
}

int minTimeout(int a, int b) // -1 = infinite
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return std::min(a, b);
}

/// A pipe end of ours that must be >= 3, so the file actions that dup2 onto 0..2 in the child
/// can never overwrite one another (the caller may run with 0..2 closed).
int aboveStdio(int fd)
{
    if (fd > 2)
        return fd;
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    const int err = errno;
    ::close(fd);
    errno = err;
    return moved;
}

/// The last pid handed out in our pid namespace, or -1 when unknown.
pid_t lastAllocatedPid()
{
    UniqueFd fd(::open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC));
    if (!fd.isValid())
        return -1;
    char buf[24];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *end = nullptr;
    const long value = std::strtol(buf, &end, 10);
    return end == buf || value <= 0 ? -1 : pid_t(value);
}

/// The namespace's pid_max (/proc/sys/kernel/pid_max; 32768 when unreadable).
long pidMax()
{
    static const long value = [] {
        long max = 32768;
        if (FILE *f = std::fopen("/proc/sys/kernel/pid_max", "re")) {
            if (std::fscanf(f, "%ld", &max) != 1 || max <= 0)
                max = 32768;
            std::fclose(f);
        }
        return max;
    }();
    return value;
}

/// How long a command may run before the pid counter could have gone round a full cycle, so
/// that "allocated after the shell" no longer implies "pid above the shell's". Assumes at most
/// ten million pid allocations per second, which no real machine reaches. With the default
/// pid_max of 32768 that is 3 ms; forksSinceBoot() then says whether it really happened.
qint64 pidWrapSafeMs()
{
    return qint64(std::max(0L, pidMax() - 300) / 10000);
}

/// The "processes" count of /proc/stat, read from `fd`; -1 if it is not there.
long long forksInStat(int fd)
{
    // The line comes after one line per CPU and the interrupt counters: read on in chunks,
    // keeping a chunk's last partial line for the next.
    static constexpr char Key[] = "\nprocesses ";
    char buf[8192];
    size_t held = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf + held, sizeof buf - 1 - held);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        held += size_t(n);
        buf[held] = '\0';
        if (const char *at = std::strstr(buf, Key)) {
            char *end = nullptr;
            const long long value = std::strtoll(at + sizeof Key - 1, &end, 10);
            if (end != at + sizeof Key - 1 && *end == '\n')
                return value;
            if (*end != '\0')
                return -1;
        }
        // Keep the last partial line when it could be the one we want (the interrupt line
        // of a big machine is far longer than the buffer, and is dropped as it goes).
        const char *lastLine = std::strrchr(buf, '\n');
        size_t keep = lastLine ? size_t(buf + held - lastLine) : 0;
        if (keep > 64)
            keep = 0;
        std::memmove(buf, buf + held - keep, keep);
        held = keep;
    }
}

/// Every fork and thread created since boot, in every pid namespace (the "processes" line of
/// /proc/stat), or -1. It counts at least every pid our namespace handed out, so a difference
/// below pid_max between two readings proves the counter did not go round in between.
long long forksSinceBoot()
{
    UniqueFd fd(::open("/proc/stat", O_RDONLY | O_CLOEXEC));
    return fd.isValid() ? forksInStat(fd.get()) : -1;
}

enum class Environ { Marked, Unmarked, Empty, Unknown };

/// Looks for `needle` ("\0NAME=VALUE\0") as a whole entry of the environment block of `pid`.
Environ checkEnviron(int procFd, pid_t pid, const QByteArray &needle)
{
    char path[32];
    std::snprintf(path, sizeof path, "%d/environ", int(pid));
    UniqueFd fd(::openat(procFd, path, O_RDONLY | O_CLOEXEC));
    if (!fd.isValid()) {
        // Gone, or not ours to read (another uid cannot carry a marker we could act on).
        const int e = errno;
        return e == ENOENT || e == ESRCH || e == EACCES || e == EPERM ? Environ::Unmarked
                                                                      : Environ::Unknown;
    }
    // Streaming search over "\0" + block + "\0", keeping a tail that may start a match.
    const size_t keep = size_t(needle.size()) - 1;
    char buf[16384];
    size_t have = 1;
    buf[0] = '\0';
    bool any = false;
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf + have, sizeof buf - have - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return any ? Environ::Unknown : Environ::Empty;
        }
        if (n == 0)
            buf[have++] = '\0';
        else
            have += size_t(n);
        any = any || n > 0;
        if (::memmem(buf, have, needle.constData(), size_t(needle.size())))
            return Environ::Marked;
        if (n == 0)
            return any ? Environ::Unmarked : Environ::Empty;
        if (have > keep) {
            std::memmove(buf, buf + have - keep, keep);
            have = keep;
        }
    }
}

/// Waits (bounded) until every pidfd in `dying` reports its process gone.
void awaitExit(std::vector<UniqueFd> &dying)
{
    const auto deadline = Clock::now() + milliseconds(DyingWaitMs);
    std::vector<pollfd> fds;
    while (!dying.empty()) {
        fds.clear();
        for (const UniqueFd &fd : dying)
            fds.push_back({fd.get(), POLLIN, 0});
        const int r = ::poll(fds.data(), nfds_t(fds.size()), msUntil(deadline, Clock::now()));
        if (r < 0 && errno != EINTR)
            return;
        if (r == 0)
            return; // stuck in the kernel (D state); nothing more a signal can do
        for (size_t i = fds.size(); i-- > 0;) {
            if (fds[i].revents)
                dying.erase(dying.begin() + ptrdiff_t(i));
        }
    }
}

/// Whether a command we start could read our memory despite PR_SET_DUMPABLE: root (and any
/// process with CAP_SYS_PTRACE) passes the kernel's check, so the child drops that capability.
bool mustDropPtrace()
{
    static const bool value = [] {
        if (::geteuid() == 0)
            return true;
        __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2] = {};
        return ::syscall(SYS_capget, &header, data) == 0 &&
               (data[0].effective & (1U << CAP_SYS_PTRACE)) != 0;
    }();
    return value;
}

/// What the child of spawnChild() needs, prepared before the clone: the child shares our
/// memory and must not allocate.
struct CloneChild
{
    const char *path = nullptr;
    char *const *argv = nullptr;
    char *const *envp = nullptr;
    int cwdFd = -1;
    int outFd = -1;
    int errFd = -1;
    int inFd = -1;              ///< -1: /dev/null
    int ttyFd = -1;             ///< the terminal as stdio; -1: outFd, errFd, inFd
    bool ttyControlling = true; ///< make ttyFd the controlling terminal
    int cgroupFd = -1;          ///< -1: stay in our cgroup
    pid_t parent = -1; ///< our pid, to notice that we died before the death signal was armed
    bool dropPtrace = false;
    int error = 0; ///< errno of the step that failed; written by the child
    const char *step = nullptr;
    int pidfd = -1; ///< the child's pidfd (CLONE_PIDFD), written by the kernel; -1: none
};

/// The signals the calling process ignores or catches (bit n-1 for signal n), from the SigIgn
/// and SigCgt lines of /proc/self/status; every signal when they cannot be read. Called in the
/// child of spawnChild(), whose signal table is its own copy of ours as of the clone: exact,
/// with no race against a thread of ours installing a handler. System calls only.
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize("address", "undefined")))
#endif
quint64
nonDefaultSignals()
{
    char buf[4096];
    const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ~quint64(0);
    ssize_t have = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf + have, sizeof buf - 1 - size_t(have));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += n;
    }
    ::close(fd);
    buf[have] = '\0';
    quint64 mask = 0;
    int found = 0;
    for (ssize_t i = 0; i + 8 < have; ++i) {
        if ((i != 0 && buf[i - 1] != '\n') || buf[i] != 'S' || buf[i + 1] != 'i' ||
            buf[i + 2] != 'g' || buf[i + 6] != ':')
            continue;
        const bool ign = buf[i + 3] == 'I' && buf[i + 4] == 'g' && buf[i + 5] == 'n';
        const bool cgt = buf[i + 3] == 'C' && buf[i + 4] == 'g' && buf[i + 5] == 't';
        if (!ign && !cgt)
            continue;
        quint64 value = 0;
        int digits = 0;
        for (ssize_t j = i + 7; j < have && buf[j] != '\n'; ++j) {
            const char ch = buf[j];
            const int v = ch >= '0' && ch <= '9'   ? ch - '0'
                          : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                                   : -1;
            if (v >= 0) {
                value = value << 4 | quint64(v);
                ++digits;
            }
        }
        if (digits != 16)
            return ~quint64(0);
        mask |= value;
        ++found;
    }
    return found == 2 ? mask : ~quint64(0);
}

// The child runs on a stack of ours and shares our memory until exec: the sanitizers' stack
// bookkeeping would describe the parent, so they stay out of this one function.
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize("address", "undefined")))
#endif
int cloneChildMain(void *arg)
{
    auto *c = static_cast<CloneChild *>(arg);
    // Our handlers would run in a child that shares the parent's memory, and what we ignore
    // would stay ignored in the program: defaults first, then the empty mask the program
    // should start with (all signals are blocked until here). Only the signals not at their
    // default are reset (a system call each: 64 of them took about 100 us per command).
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    const quint64 reset = nonDefaultSignals();
    for (int sig = 1; sig < NSIG && sig <= 64; ++sig) {
        if ((reset >> (sig - 1) & 1) && sig != SIGKILL && sig != SIGSTOP)
            ::sigaction(sig, &dfl, nullptr); // glibc-internal signals refuse: harmless
    }
    const auto fail = [c](const char *step) {
        c->error = errno;
        c->step = step;
        ::_exit(127);
    };
    // Dies with the thread that started it (that thread waits in runProcess until the command
    // ends), so a kill -9 of the engine takes the shell down at once; the watchdog kills the
    // rest of its tree. Checked after arming: the engine may have died in between.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        fail("prctl");
    if (::getppid() != c->parent)
        ::_exit(137);
    if (::setsid() < 0)
        fail("setsid");
    if (c->dropPtrace) {
        // Out of the bounding set (what an exec as root grants) and the inheritable set
        // (what it keeps); best effort: without CAP_SETPCAP there is nothing to drop it with.
        ::prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0);
        __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2] = {};
        if (::syscall(SYS_capget, &header, data) == 0) {
            const __u32 bit = ~(1U << CAP_SYS_PTRACE);
            data[0].effective &= bit;
            data[0].permitted &= bit;
            data[0].inheritable &= bit;
            ::syscall(SYS_capset, &header, data);
        }
    }
    if (c->cwdFd >= 0 && ::fchdir(c->cwdFd) != 0)
        fail("fchdir");
    if (c->ttyFd >= 0) {
        // The new session's controlling terminal: Ctrl+C, job control and SIGWINCH work.
        if (c->ttyControlling && ::ioctl(c->ttyFd, TIOCSCTTY, 0) != 0)
            fail("TIOCSCTTY");
        if (::dup2(c->ttyFd, STDIN_FILENO) < 0 || ::dup2(c->ttyFd, STDOUT_FILENO) < 0 ||
            ::dup2(c->ttyFd, STDERR_FILENO) < 0)
            fail("dup2");
    } else if (::dup2(c->outFd, STDOUT_FILENO) < 0 || ::dup2(c->errFd, STDERR_FILENO) < 0) {
        fail("dup2");
    } else if (c->inFd >= 0) {
        if (::dup2(c->inFd, STDIN_FILENO) < 0)
            fail("dup2");
    } else {
        const int in = ::open("/dev/null", O_RDONLY);
        if (in < 0)
            fail("open /dev/null");
        if (in != STDIN_FILENO && (::dup2(in, STDIN_FILENO) < 0 || ::close(in) != 0))
            fail("dup2");
    }
    // Before exec, so the program and everything it starts are inside from the first fork.
    if (c->cgroupFd >= 0 && ::write(c->cgroupFd, "0", 1) != 1)
        fail("join the cgroup");
    // The command gets stdin, stdout and stderr, nothing else of ours: a descriptor the engine
    // (or a library in it) opened without O_CLOEXEC would hand the command a pipe, a socket or
    // a file it may write to. Our own copy of the table; a kernel before 5.11 lacks the call,
    // and then O_CLOEXEC everywhere is the only guard.
    ::syscall(SYS_close_range, 3U, ~0U, CloseRangeCloexec);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(c->path, c->argv, c->envp);
    fail("execve");
    return 127;
}

/// posix_spawn cannot run code between fork and exec: a vfork-style clone (shared memory, the
/// parent waits until the exec; what posix_spawn does inside) that arms the parent-death
/// signal, drops CAP_SYS_PTRACE when it has it, and joins the cgroup as its last step.
/// Returns the pid, or -1 with `child.error` / `child.step` set.
pid_t spawnChild(CloneChild &child)
{
    constexpr size_t StackSize = 64 * 1024; // the child only makes system calls
    // One per spawning thread, kept: a fresh block each time may come from memory the heap
    // just got from the kernel, whose first touch (in the child) faults every page in again.
    thread_local const auto stack = std::make_unique_for_overwrite<char[]>(StackSize);
    void *top = reinterpret_cast<void *>(
        (reinterpret_cast<std::uintptr_t>(stack.get()) + StackSize) & ~std::uintptr_t(15));
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    const int savedErrno = errno;
    // The pidfd comes with the clone (one system call less than pidfd_open() after it); a
    // kernel without CLONE_PIDFD ignores the flag or refuses it, and the caller opens one.
    pid_t pid = ::clone(cloneChildMain, top, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &child,
                        &child.pidfd);
    if (pid < 0 && errno == EINVAL) {
        child.pidfd = -1;
        pid = ::clone(cloneChildMain, top, CLONE_VM | CLONE_VFORK | SIGCHLD, &child);
    }
    const int cloneErrno = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    errno = savedErrno;
    if (pid < 0) {
        child.error = cloneErrno;
        child.step = "clone";
        return -1;
    }
    if (child.step) { // failed before or at exec: it has exited, reap it
        if (child.pidfd >= 0)
            ::close(child.pidfd);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return -1;
    }
    return pid;
}

/// One command: the shell, its pipes, and everything needed to bring it and its descendants down.
class Runner
{
public:
    Runner(const ProcessSpec &spec, Clock::time_point started) : m_spec(spec), m_started(started) {}
    ~Runner();
    Runner(const Runner &) = delete;
    Runner &operator=(const Runner &) = delete;

    pid_t spawn(); ///< the child's pid
    /// Waits until the command and its descendants are gone (true) or `until` passes (false;
    /// never without a limit). Any thread may call it, one at a time.
    bool waitUntil(std::optional<Clock::time_point> until);
    ProcessOutcome takeOutcome() { return std::move(m_out); } ///< once waitUntil() was true

private:
    /// The output pipes: our read ends in m_stdout / m_stderr, the child's in the arguments.
    void openPipes(const QString &program, UniqueFd &outWrite, UniqueFd &errWrite);
    enum class Phase { Running, Terminating, Killed };
    enum class Stop { TimedOut, Cancelled };

    void readOnce(UniqueFd &fd, OutputChannel channel);
    void keep(OutputChannel channel, const char *data, qint64 size);
    void terminate(Stop reason, Clock::time_point now);
    void drainPipes();
    enum class Probe { Marked, Unmarked, Unsure };
    Probe probe(int procFd, pid_t pid);
    Probe killIfMarked(int procFd, pid_t pid, std::vector<UniqueFd> &dying);
    unsigned long long shellStartTime(int procFd);
    void sweepMarked();
    bool childExitedNoWait() const;
    int reap();

    const ProcessSpec &m_spec;
    const Clock::time_point m_started;
    detail::CommandRegistration m_registration; // throws when the engine is shutting down
    ProcessOutcome m_out;
    QByteArray m_needle; // "\0ELSAI_EXEC_TOKEN=<hex>\0"
    pid_t m_pid = -1;
    bool m_reaped = false;
    bool m_shellStartKnown = false;
    unsigned long long m_shellStart = 0;
    long long m_forksBefore = -1; ///< forksSinceBoot() before the shell, where the sweep needs it
    UniqueFd m_pidfd;
    UniqueFd m_stdout;
    UniqueFd m_stderr;
    Phase m_phase = Phase::Running;
    Clock::time_point m_killAt;
    std::unique_ptr<char[]> m_buffer;
    bool m_ended = false;
};

Runner::~Runner()
{
    if (m_pid <= 0 || m_reaped)
        return;
    // Unwinding (onOutput threw, or out of memory): leave nothing behind.
    ::killpg(m_pid, SIGKILL);
    sweepMarked();
    reap();
}

void Runner::openPipes(const QString &program, UniqueFd &outWrite, UniqueFd &errWrite)
{
    int outPipe[2];
    int errPipe[2];
    if (::pipe2(outPipe, O_CLOEXEC) != 0)
        throwOsError(errno, QStringLiteral("Cannot create the output pipe for"), program);
    m_stdout.reset(outPipe[0]);
    outWrite.reset(aboveStdio(outPipe[1]));
    if (::pipe2(errPipe, O_CLOEXEC) != 0)
        throwOsError(errno, QStringLiteral("Cannot create the error pipe for"), program);
    m_stderr.reset(errPipe[0]);
    errWrite.reset(aboveStdio(errPipe[1]));
    if (!outWrite.isValid() || !errWrite.isValid())
        throwOsError(errno, QStringLiteral("Cannot create the pipes for"), program);
    // Non-blocking on our side only: the child's ends stay blocking so writers get back-pressure.
    ::fcntl(m_stdout.get(), F_SETFL, O_NONBLOCK);
    ::fcntl(m_stderr.get(), F_SETFL, O_NONBLOCK);
}

pid_t Runner::spawn()
{
    std::vector<QByteArray> argStore;
    if (m_spec.arguments.isEmpty()) {
        argStore = {QByteArrayLiteral("/bin/sh"), QByteArrayLiteral("-c"), m_spec.command.toUtf8()};
    } else {
        for (const QString &a : m_spec.arguments)
            argStore.push_back(QFile::encodeName(a));
    }
    std::vector<char *> argv;
    for (QByteArray &a : argStore)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const QString program = QFile::decodeName(argStore.front());

    // The engine's part (16 hex digits) first: the watchdog looks for it when the engine is
    // gone. Then 64 random bits of this call's own.
    quint32 raw[2];
    QRandomGenerator::system()->fillRange(raw);
    const QByteArray entry = QByteArray(MarkerPrefix) + engineMarkerPrefix() +
                             QByteArray(reinterpret_cast<const char *>(raw), sizeof raw).toHex();
    m_needle = QByteArray(1, '\0') + entry + QByteArray(1, '\0');

    UniqueFd outWrite;
    UniqueFd errWrite;
    if (m_spec.ttyFd >= 0) {
        if (m_spec.ttyFd <= STDERR_FILENO)
            throw ValueError(QStringLiteral("the terminal of a command must be an fd above 2"));
    } else {
        openPipes(program, outWrite, errWrite);
    }

    std::vector<QByteArray> envStore;
    envStore.reserve(size_t(m_spec.environment.size()) + 1);
    for (const QString &kv : m_spec.environment) {
        QByteArray bytes = kv.toUtf8();
        if (!bytes.startsWith(MarkerPrefix)) // ours is the only one that counts
            envStore.push_back(std::move(bytes));
    }
    envStore.push_back(entry);
    std::vector<char *> envp;
    envp.reserve(envStore.size() + 1);
    for (QByteArray &kv : envStore)
        envp.push_back(kv.data());
    envp.push_back(nullptr);

    CloneChild child;
    child.path = argv[0];
    child.argv = argv.data();
    child.envp = envp.data();
    child.cwdFd = m_spec.cwdFd;
    child.outFd = outWrite.get();
    child.errFd = errWrite.get();
    child.inFd = m_spec.stdinFd;
    child.ttyFd = m_spec.ttyFd;
    child.ttyControlling = m_spec.ttyControlling;
    child.cgroupFd = m_spec.joinCgroupFd;
    child.parent = ::getpid();
    child.dropPtrace = mustDropPtrace();
    // Without an engine cgroup the sweep finds descendants by pid order, which a call longer
    // than pidWrapSafeMs() can only trust when the count of forks says the counter did not
    // go round; it is read before the shell's own pid is handed out.
    if (m_spec.sweepStrays && engineCgroupProcsFile().isEmpty())
        m_forksBefore = forksSinceBoot();
    const pid_t pid = spawnChild(child);
    if (pid < 0) {
        // Never the command text.
        throwOsError(child.error,
                     QStringLiteral("Cannot start (%1 failed)").arg(QLatin1String(child.step)),
                     program);
    }
    m_pid = pid;
    m_registration.setGroup(pid);
    if (m_spec.onStarted)
        m_spec.onStarted(pid);
    // Without a pidfd (kernel < 5.3) the loop polls waitid() instead.
    m_pidfd.reset(child.pidfd >= 0 ? child.pidfd : pidfdOpen(pid));
    return pid;
}

bool Runner::waitUntil(std::optional<Clock::time_point> until)
{
    if (m_ended)
        return true;
    if (!m_buffer)
        m_buffer = std::make_unique_for_overwrite<char[]>(ChunkSize);
    const bool hasTimeout = m_spec.timeoutMs > 0;
    const auto deadline = m_started + milliseconds(hasTimeout ? m_spec.timeoutMs : 0);
    CancellationToken *token = m_spec.cancel.get();
    const int cancelFd = token ? token->fd() : -1;
    // A shutdown of the engine cancels every command at once.
    const CancellationToken &shutdown = detail::CommandRegistration::shutdownToken();

    for (;;) {
        const auto now = Clock::now();
        if (m_phase == Phase::Running) {
            if ((token && token->isCancelled()) || shutdown.isCancelled())
                terminate(Stop::Cancelled, now);
            else if (hasTimeout && now >= deadline)
                terminate(Stop::TimedOut, now);
        }
        if (m_phase == Phase::Terminating && now >= m_killAt) {
            ::killpg(m_pid, SIGKILL);
            m_phase = Phase::Killed;
        }

        int timeout = -1;
        if (m_phase == Phase::Running && hasTimeout)
            timeout = msUntil(deadline, now);
        else if (m_phase == Phase::Terminating)
            timeout = msUntil(m_killAt, now);
        if (!m_pidfd.isValid() ||
            (((token && cancelFd < 0) || shutdown.fd() < 0) && m_phase == Phase::Running))
            timeout = minTimeout(timeout, FallbackPollMs);
        if (until) {
            if (now >= *until)
                return false;
            timeout = minTimeout(timeout, msUntil(*until, now));
        }

        pollfd fds[5];
        nfds_t count = 0;
        int outIndex = -1;
        int errIndex = -1;
        int pidIndex = -1;
        if (m_stdout.isValid()) {
            outIndex = int(count);
            fds[count++] = {m_stdout.get(), POLLIN, 0};
        }
        if (m_stderr.isValid()) {
            errIndex = int(count);
            fds[count++] = {m_stderr.get(), POLLIN, 0};
        }
        if (m_pidfd.isValid()) {
            pidIndex = int(count);
            fds[count++] = {m_pidfd.get(), POLLIN, 0};
        }
        if (cancelFd >= 0 && m_phase == Phase::Running)
            fds[count++] = {cancelFd, POLLIN, 0}; // stays readable once cancelled: not read
        if (shutdown.fd() >= 0 && m_phase == Phase::Running)
            fds[count++] = {shutdown.fd(), POLLIN, 0};

        const int r = ::poll(fds, count, timeout);
        if (r < 0) {
            if (errno != EINTR)
                ::usleep(1000); // ENOMEM: back off rather than spin
            continue;
        }
        if (outIndex >= 0 && fds[outIndex].revents)
            readOnce(m_stdout, OutputChannel::Stdout);
        if (errIndex >= 0 && fds[errIndex].revents)
            readOnce(m_stderr, OutputChannel::Stderr);
        if (pidIndex >= 0 ? fds[pidIndex].revents != 0 : childExitedNoWait())
            break;
    }

    // The shell is a zombie now, so its pid (= the group id) cannot be reused until reaped.
    ::killpg(m_pid, SIGKILL);
    sweepMarked();
    drainPipes();
    const int status = reap();
    if (status < 0)
        m_out.exitCode = -1; // reaped elsewhere (SIGCHLD ignored by the host): status lost
    else if (WIFEXITED(status))
        m_out.exitCode = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        m_out.exitCode = 128 + WTERMSIG(status);
    if (m_out.timedOut)
        m_out.exitCode = 124;
    else if (m_out.cancelled)
        m_out.exitCode = 130;
    m_ended = true;
    return true;
}

void Runner::readOnce(UniqueFd &fd, OutputChannel channel)
{
    for (;;) {
        const ssize_t n = ::read(fd.get(), m_buffer.get(), ChunkSize);
        if (n > 0) {
            keep(channel, m_buffer.get(), n);
            return;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        fd.reset(); // EOF, or an error that will not go away
        return;
    }
}

void Runner::keep(OutputChannel channel, const char *data, qint64 size)
{
    const qint64 held = m_out.stdoutData.size() + m_out.stderrData.size();
    const qint64 room = std::max<qint64>(0, m_spec.maxOutputBytes - held);
    const qint64 kept = std::min(size, room);
    if (m_spec.streamOnly) {
        // nothing is kept: the consumer bounds what it holds itself
        if (m_spec.onOutput)
            m_spec.onOutput(channel, QByteArray(data, size));
        return;
    }
    if (kept < size) {
        m_out.truncated = true;
        m_out.droppedBytes += size - kept;
    }
    if (kept == 0)
        return;
    const QByteArray chunk(data, kept);
    (channel == OutputChannel::Stdout ? m_out.stdoutData : m_out.stderrData).append(chunk);
    if (m_spec.onOutput)
        m_spec.onOutput(channel, chunk);
}

void Runner::terminate(Stop reason, Clock::time_point now)
{
    (reason == Stop::TimedOut ? m_out.timedOut : m_out.cancelled) = true;
    if (m_spec.killGraceMs <= 0) {
        ::killpg(m_pid, SIGKILL);
        m_phase = Phase::Killed;
        return;
    }
    ::killpg(m_pid, SIGTERM);
    ::killpg(m_pid, SIGCONT); // a stopped process could not act on the TERM
    m_killAt = now + milliseconds(m_spec.killGraceMs);
    m_phase = Phase::Terminating;
}

void Runner::drainPipes()
{
    const auto deadline = Clock::now() + milliseconds(PostExitDrainMs);
    while (m_stdout.isValid() || m_stderr.isValid()) {
        const auto now = Clock::now();
        if (now >= deadline)
            break;
        pollfd fds[2];
        nfds_t count = 0;
        if (m_stdout.isValid())
            fds[count++] = {m_stdout.get(), POLLIN, 0};
        if (m_stderr.isValid())
            fds[count++] = {m_stderr.get(), POLLIN, 0};
        const int r = ::poll(fds, count, msUntil(deadline, now));
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        // Match by fd value: readOnce may close m_stdout while we walk the array.
        const int outFd = m_stdout.get();
        for (nfds_t i = 0; i < count; ++i) {
            if (!fds[i].revents)
                continue;
            if (fds[i].fd == outFd)
                readOnce(m_stdout, OutputChannel::Stdout);
            else
                readOnce(m_stderr, OutputChannel::Stderr);
        }
    }
    m_stdout.reset();
    m_stderr.reset();
}

/// Whether `pid` carries our marker. An empty environment is ambiguous: zombies and kernel
/// threads have none, but neither does a process caught in the middle of an exec.
Runner::Probe Runner::probe(int procFd, pid_t pid)
{
    const Environ env = checkEnviron(procFd, pid, m_needle);
    if (env == Environ::Marked || env == Environ::Unmarked)
        return env == Environ::Marked ? Probe::Marked : Probe::Unmarked;
    ProcStat st;
    if (!readProcStat(procFd, pid, st) || st.state == 'Z' || st.state == 'X' ||
        (st.flags & PfKthread) || st.startTime < shellStartTime(procFd)) {
        return Probe::Unmarked;
    }
    return Probe::Unsure;
}

/// Probes `pid` and SIGKILLs it when marked, adding its pidfd to `dying`.
Runner::Probe Runner::killIfMarked(int procFd, pid_t pid, std::vector<UniqueFd> &dying)
{
    Probe result = probe(procFd, pid);
    if (result != Probe::Marked)
        return result;
    UniqueFd pidfd(pidfdOpen(pid));
    if (!pidfd.isValid()) {
        if (errno != ENOSYS)
            return Probe::Unmarked; // gone, or a thread id (EINVAL): its leader is visited too
        ::kill(pid, SIGKILL);       // old kernel: accept the small pid-reuse race
        return Probe::Marked;
    }
    // Check again with the pidfd held: it pins one process, and if that one died before this
    // check (pid reused), the kill below is a harmless no-op.
    result = probe(procFd, pid);
    if (result == Probe::Marked && pidfdKill(pidfd.get()) == 0)
        dying.push_back(std::move(pidfd));
    return result;
}

unsigned long long Runner::shellStartTime(int procFd)
{
    if (!m_shellStartKnown) {
        ProcStat st;
        // Unreadable (reaped elsewhere): 0 keeps every process a candidate.
        m_shellStart = readProcStat(procFd, m_pid, st) ? st.startTime : 0;
        m_shellStartKnown = true;
    }
    return m_shellStart;
}

/// Appends the pids in `text` (decimal numbers, one per line) to `pids`; `pid` carries a number
/// cut at the end of one chunk over to the next.
void parsePids(const char *text, ssize_t n, long &pid, std::vector<pid_t> &pids)
{
    for (ssize_t i = 0; i < n; ++i) {
        if (text[i] >= '0' && text[i] <= '9') {
            pid = pid * 10 + (text[i] - '0');
        } else {
            if (pid > 0)
                pids.push_back(pid_t(pid));
            pid = 0;
        }
    }
}

/// The pids listed in the engine's `cgroup.procs` file; false when it cannot be read.
bool readCgroupPids(const QByteArray &procsFile, std::vector<pid_t> &pids)
{
    pids.clear();
    char buf[4096];
    long pid = 0;
    // Usually the engine and a few commands: one pread on the file kept open. A read may stop
    // short of the buffer's end while lines remain (the next did not fit), so one that came
    // near it is read again, through a descriptor of its own: each read at offset 0 lists
    // afresh, and two threads' chunks could interleave.
    if (const int kept = engineCgroupProcsFd(); kept >= 0) {
        const ssize_t n = ::pread(kept, buf, sizeof buf, 0);
        if (n >= 0 && size_t(n) < sizeof buf - 64) {
            parsePids(buf, n, pid, pids);
            return true;
        }
        pids.clear();
        pid = 0;
    }
    UniqueFd fd(::open(procsFile.constData(), O_RDONLY | O_CLOEXEC));
    if (!fd.isValid())
        return false;
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            return true;
        parsePids(buf, n, pid, pids);
    }
}

/// Finds the processes that carry our marker (group members still dying, and descendants that
/// left the group with setsid or a double fork), SIGKILLs them and waits until they are gone;
/// repeats until a round finds none, since a victim may have forked just before dying.
///
/// With an engine cgroup (processguard.h) the candidates are its members: every descendant is
/// born there, and nobody else's process is ever looked at. Without one, descendants get pids
/// allocated after the shell's, so a short call examines only pids in (shell, last allocated],
/// or above and below it when the counter wrapped; a call long enough for the counter to go
/// round a full cycle (or without ns_last_pid) examines every process.
void Runner::sweepMarked()
{
    if (!m_spec.sweepStrays)
        return;
    const QByteArray &cgroupProcs = engineCgroupProcsFile();
    const auto elapsedMs =
        std::chrono::duration_cast<milliseconds>(Clock::now() - m_started).count();
    // Long enough for the pid counter to have gone round, unless the count of forks says not.
    const auto wrapPossible = [&] {
        if (elapsedMs < pidWrapSafeMs())
            return false;
        const long long forks = m_forksBefore >= 0 ? forksSinceBoot() : -1;
        return forks < 0 || forks - m_forksBefore >= pidMax() - 300;
    };
    const bool scanAll = wrapPossible();
    const pid_t self = ::getpid();
    UniqueFd procFd;
    std::vector<UniqueFd> dying;
    std::vector<pid_t> unsure;
    std::vector<pid_t> givenUp;
    std::vector<pid_t> members;

    for (int round = 0; round < MaxSweepRounds; ++round) {
        const bool fromCgroup = !cgroupProcs.isEmpty() && readCgroupPids(cgroupProcs, members);
        if (fromCgroup && std::all_of(members.begin(), members.end(),
                                      [&](pid_t pid) { return pid == self || pid == m_pid; }))
            return; // nothing of ours runs but the engine
        const pid_t last = fromCgroup || scanAll ? -1 : lastAllocatedPid();
        if (!fromCgroup && last == m_pid)
            return; // no pid handed out since the shell's, so it has no descendants
        if (!procFd.isValid()) {
            procFd.reset(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            if (!procFd.isValid())
                return;
        }

        int found = 0;
        unsure.clear();
        auto consider = [&](pid_t pid) {
            if (pid == self || pid == m_pid)
                return;
            const Probe result = killIfMarked(procFd.get(), pid, dying);
            if (result == Probe::Marked)
                ++found;
            else if (result == Probe::Unsure &&
                     std::find(givenUp.begin(), givenUp.end(), pid) == givenUp.end())
                unsure.push_back(pid);
        };
        if (fromCgroup) {
            for (pid_t pid : members)
                consider(pid);
        } else if (last > m_pid && last - m_pid <= DirectProbeLimit) {
            for (pid_t pid = m_pid + 1; pid <= last; ++pid)
                consider(pid);
        } else {
            // The environment is cheap to read (stat is several times dearer), so it comes
            // first and the start time is only asked for when the environment is empty.
            forEachProcPid(procFd.get(), [&](pid_t pid) {
                if (last < 0 ||
                    (last > m_pid ? pid > m_pid && pid <= last : pid > m_pid || pid <= last)) {
                    consider(pid);
                }
            });
        }

        // An exec in progress ends within moments; a process whose environment is really
        // empty cannot be told apart, and is given up on after the bound.
        const auto unsureDeadline = Clock::now() + milliseconds(UnsureWaitMs);
        while (!unsure.empty()) {
            if (Clock::now() >= unsureDeadline) {
                givenUp.insert(givenUp.end(), unsure.begin(), unsure.end());
                break;
            }
            ::usleep(1000);
            std::erase_if(unsure, [&](pid_t pid) {
                const Probe result = killIfMarked(procFd.get(), pid, dying);
                found += result == Probe::Marked;
                return result != Probe::Unsure;
            });
        }

        awaitExit(dying);
        dying.clear();
        if (found == 0)
            return;
    }
}

bool Runner::childExitedNoWait() const
{
    siginfo_t info{};
    return ::waitid(P_PID, id_t(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == m_pid;
}

int Runner::reap()
{
    m_registration.clearGroup(); // while the zombie still pins the group id
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0) {
        if (errno != EINTR) {
            status = -1;
            break;
        }
    }
    m_reaped = true;
    return status;
}

} // namespace

namespace detail {
// Test hook (declared by tst_process): the disposition mask the child of a command reads.
quint64 nonDefaultSignalMask()
{
    return nonDefaultSignals();
}

// Test hook (declared by tst_process): the sweep's count of forks since boot, from /proc/stat
// or from `statFd`.
long long forksSinceBootCount(int statFd)
{
    return statFd < 0 ? forksSinceBoot() : forksInStat(statFd);
}
} // namespace detail

struct RunningProcess::Private
{
    ProcessSpec spec; // the runner refers to it
    Clock::time_point started = Clock::now();
    std::optional<Runner> runner;
    ProcessOutcome outcome;
    bool ended = false;
};

RunningProcess::RunningProcess(ProcessSpec spec) : d(std::make_unique<Private>())
{
    d->spec = std::move(spec);
    if (d->spec.cancel && d->spec.cancel->isCancelled()) {
        // Cancelled before it began: nothing to start.
        d->outcome.cancelled = true;
        d->outcome.exitCode = 130;
        d->ended = true;
        return;
    }
    d->runner.emplace(d->spec, d->started); // spawn() calls spec.onStarted
    d->runner->spawn();
}

RunningProcess::~RunningProcess() = default; // ~Runner kills what still runs

RunningProcess::RunningProcess(RunningProcess &&) noexcept = default;

bool RunningProcess::waitFor(int timeoutMs)
{
    if (d->ended)
        return true;
    std::optional<Clock::time_point> until;
    if (timeoutMs >= 0)
        until = Clock::now() + milliseconds(timeoutMs);
    if (!d->runner->waitUntil(until))
        return false;
    d->outcome = d->runner->takeOutcome();
    d->runner.reset();
    d->outcome.durationMs =
        std::chrono::duration_cast<milliseconds>(Clock::now() - d->started).count();
    d->ended = true;
    return true;
}

ProcessOutcome RunningProcess::takeOutcome()
{
    return std::move(d->outcome);
}

bool callingThreadOutlivesCommands()
{
    return ::gettid() == ::getpid();
}

ProcessOutcome runProcess(const ProcessSpec &spec)
{
    RunningProcess process(spec);
    process.waitFor(-1);
    return process.takeOutcome();
}

ExecuteResult toExecuteResult(const ProcessOutcome &o)
{
    ExecuteResult r;
    r.output = QString::fromUtf8(o.stdoutData);
    r.stderr_ = QString::fromUtf8(o.stderrData);
    r.exitCode = o.exitCode;
    r.truncated = o.truncated;
    r.timedOut = o.timedOut;
    r.cancelled = o.cancelled;
    r.durationMs = o.durationMs;
    return r;
}

} // namespace elsai
