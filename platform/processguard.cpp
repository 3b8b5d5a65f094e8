// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "processguard.h"

#include "cgroup.h"
#include "errors.h"
#include "process.h"

#include <QDir>
#include <QFile>
#include <QRandomGenerator>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

extern char **environ;

namespace elsai {

namespace {

constexpr int MaxGroups = 1024;    // concurrent commands the watchdog knows by group
constexpr int WatchdogRounds = 32; // a victim may fork just before it dies: scan again
constexpr long WatchdogRoundGapNs = 20L * 1000 * 1000;
constexpr int FinalKillWaitMs = 3000; // after the SIGKILL of what a shutdown could not stop
constexpr char MarkerName[] = "ELSAI_EXEC_TOKEN=";
constexpr int CgroupEmptyWaitRounds = 250; // × WatchdogRoundGapNs: 5 s for the kernel's teardown
constexpr int CgroupMaxDepth = 8;          // folders a command made inside ours, removed at the end
constexpr char EngineLeaf[] = "engine";    // the engine and what it starts; siblings: bwrap's

/// Shared with the watchdog (MAP_SHARED): one entry per running command, 0 when free.
struct GroupTable
{
    std::atomic<pid_t> pgid[MaxGroups];
    std::atomic<int> inCgroup; ///< 1 once the engine lives in its own cgroup
};

struct Guard
{
    GroupTable *groups = nullptr;
    QByteArray prefix;      // hex; the start of every marker value
    QString cgroup;         // the engine's cgroup v2 folder; empty: none (the markers alone)
    QByteArray cgroupProcs; // its leaf's cgroup.procs, encoded
    int cgroupProcsFd = -1; // open on it for good: the sweep after every command reads it
    int lifeWrite = -1;     // held until the process ends; the watchdog waits for its EOF
    std::atomic<int> hint{0};
    std::mutex mutex;
    std::condition_variable idle;
    int active = 0;
    bool closed = false;
    CancellationToken shutdown;
};

// ---- the watchdog: a forked copy of a possibly multithreaded process, so from here to
// _exit() only system calls and functions that take no lock and allocate nothing.

size_t cstrlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        ++n;
    return n;
}

/// "/proc/<pid>/<leaf>" into `out` (at least 40 bytes).
void procPath(char *out, pid_t pid, const char *leaf)
{
    char digits[16];
    int n = 0;
    for (unsigned v = unsigned(pid); v || n == 0; v /= 10)
        digits[n++] = char('0' + v % 10);
    char *p = out;
    for (const char *s = "/proc/"; *s;)
        *p++ = *s++;
    while (n)
        *p++ = digits[--n];
    *p++ = '/';
    while (*leaf)
        *p++ = *leaf++;
    *p = '\0';
}

ssize_t readAll(const char *path, char *buf, size_t size)
{
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n;
    do {
        n = ::read(fd, buf, size);
    } while (n < 0 && errno == EINTR);
    ::close(fd);
    return n;
}

bool inTable(const pid_t *groups, int count, long id)
{
    for (int i = 0; i < count; ++i) {
        if (groups[i] == id)
            return true;
    }
    return false;
}

struct ProcInfo
{
    char state = '?';
    long pgrp = 0;
    long session = 0;
    unsigned long flags = 0;
    unsigned long long startTime = 0; ///< clock ticks since boot
    unsigned long long argStart = 0;  ///< where /proc/<pid>/cmdline is read from (own only)
    unsigned long long argEnd = 0;
};

/// Parses /proc/<pid>/stat (`pid` 0: self).
bool readProcInfo(pid_t pid, ProcInfo *info)
{
    char path[48];
    if (pid == 0) {
        const char self[] = "/proc/self/stat";
        std::memcpy(path, self, sizeof self);
    } else {
        procPath(path, pid, "stat");
    }
    char buf[2048];
    const ssize_t n = readAll(path, buf, sizeof buf - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = nullptr;
    for (ssize_t i = n; i-- > 0;) { // the command name may hold anything, ')' too
        if (buf[i] == ')') {
            p = buf + i + 1;
            break;
        }
    }
    if (!p)
        return false;
    while (*p == ' ')
        ++p;
    info->state = *p++;
    // Fields 4.. (ppid pgrp session tty_nr tpgid flags …; starttime is field 22, arg_start
    // and arg_end 48 and 49).
    constexpr int Count = 46;
    unsigned long long fields[Count] = {};
    for (int f = 0; f < Count && *p; ++f) {
        while (*p == ' ')
            ++p;
        const bool negative = *p == '-';
        p += negative;
        unsigned long long v = 0;
        while (*p >= '0' && *p <= '9')
            v = v * 10 + unsigned(*p++ - '0');
        fields[f] = negative ? 0 : v;
    }
    info->pgrp = long(fields[1]);
    info->session = long(fields[2]);
    info->flags = (unsigned long)fields[5];
    info->startTime = fields[18];
    info->argStart = fields[44];
    info->argEnd = fields[45];
    return true;
}

enum class Marker { Found, Absent, Empty };

/// Whether the environment of `pid` holds an entry that starts with `needle` ("\0NAME=prefix").
/// Empty: nothing to read — a process with no environment, or one caught inside an exec.
Marker findMarker(pid_t pid, const char *needle, size_t needleLen)
{
    char path[48];
    procPath(path, pid, "environ");
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return Marker::Absent; // gone, or not ours to read
    char buf[8192];
    size_t have = 1;
    buf[0] = '\0';
    bool any = false;
    Marker result = Marker::Absent;
    for (;;) {
        const ssize_t n = ::read(fd, buf + have, sizeof buf - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        any = true;
        have += size_t(n);
        if (::memmem(buf, have, needle, needleLen)) {
            result = Marker::Found;
            break;
        }
        const size_t keep = needleLen - 1;
        if (have > keep) {
            std::memmove(buf, buf + have - keep, keep);
            have = keep;
        }
    }
    ::close(fd);
    return any || result == Marker::Found ? result : Marker::Empty;
}

struct RoundResult
{
    int killed = 0;
    int unsure = 0; ///< started after us, alive, environment empty: look again
};

/// SIGKILLs every live process that belongs to a registered group or session or carries the
/// marker.
RoundResult killRound(const pid_t *groups, int count, const char *needle, size_t needleLen,
                      unsigned long long since)
{
    RoundResult result;
    const int procFd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procFd < 0)
        return result;
    const pid_t self = ::getpid();
    alignas(8) char buf[16384];
    for (;;) {
        const long n = ::syscall(SYS_getdents64, procFd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, char name[]
            unsigned short reclen;
            std::memcpy(&reclen, buf + off + 16, sizeof reclen);
            const char *name = buf + off + 19;
            off += reclen;
            if (*name < '1' || *name > '9')
                continue;
            long pid = 0;
            for (const char *c = name; *c >= '0' && *c <= '9'; ++c)
                pid = pid * 10 + (*c - '0');
            if (pid == self)
                continue;
            ProcInfo info;
            constexpr unsigned long PfKthread = 0x00200000;
            if (!readProcInfo(pid_t(pid), &info) || info.state == 'Z' || info.state == 'X' ||
                (info.flags & PfKthread)) {
                continue;
            }
            bool kill = inTable(groups, count, info.pgrp) || inTable(groups, count, info.session);
            if (!kill) {
                const Marker m = findMarker(pid_t(pid), needle, needleLen);
                kill = m == Marker::Found;
                // Only what started after the engine can be one of its commands.
                if (m == Marker::Empty && info.startTime >= since)
                    ++result.unsure;
            }
            if (kill) {
                ::kill(pid_t(pid), SIGKILL);
                ++result.killed;
            }
        }
    }
    ::close(procFd);
    return result;
}

// ---- the engine's cgroup, as the watchdog sees it: paths in one buffer of PATH_MAX bytes
// (`path`, `len` its current length), extended and cut back as the walk descends.

bool appendPath(char *path, size_t &len, const char *leaf)
{
    const size_t n = cstrlen(leaf);
    if (len + 1 + n + 1 > PATH_MAX)
        return false;
    path[len] = '/';
    std::memcpy(path + len + 1, leaf, n + 1);
    len += 1 + n;
    return true;
}

/// Calls visit(path, len) for every sub-folder of `path` (path extended in place).
template<typename F>
void forEachSubfolder(char *path, size_t len, F &&visit)
{
    const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    alignas(8) char buf[4096];
    for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            unsigned short reclen;
            std::memcpy(&reclen, buf + off + 16, sizeof reclen);
            const unsigned char type = static_cast<unsigned char>(buf[off + 18]);
            const char *name = buf + off + 19;
            off += reclen;
            if (type != DT_DIR || name[0] == '.')
                continue;
            size_t sub = len;
            if (appendPath(path, sub, name))
                visit(path, sub);
            path[len] = '\0';
        }
    }
    ::close(fd);
}

/// Writes `text` to the file `leaf` of the folder `path`.
bool writeLeaf(char *path, size_t len, const char *leaf, const char *text)
{
    size_t at = len;
    bool ok = false;
    if (appendPath(path, at, leaf)) {
        const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            const size_t n = cstrlen(text);
            ok = ::write(fd, text, n) == ssize_t(n);
            ::close(fd);
        }
    }
    path[len] = '\0';
    return ok;
}

/// SIGKILLs every process listed in the cgroup at `path` and in the ones below it, but `spare`.
int killListedTree(char *path, size_t len, int depth, pid_t spare)
{
    int killed = 0;
    size_t at = len;
    if (appendPath(path, at, "cgroup.procs")) {
        const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            char buf[4096];
            long pid = 0;
            for (;;) {
                const ssize_t n = ::read(fd, buf, sizeof buf);
                if (n <= 0)
                    break;
                for (ssize_t i = 0; i < n; ++i) {
                    if (buf[i] >= '0' && buf[i] <= '9') {
                        pid = pid * 10 + (buf[i] - '0');
                    } else {
                        if (pid > 1 && pid != spare && ::kill(pid_t(pid), SIGKILL) == 0)
                            ++killed;
                        pid = 0;
                    }
                }
            }
            ::close(fd);
        }
    }
    path[len] = '\0';
    if (depth < CgroupMaxDepth) {
        forEachSubfolder(path, len, [&](char *p, size_t l) {
            killed += killListedTree(p, l, depth + 1, spare);
        });
    }
    return killed;
}

/// Whether a process is still in the cgroup at `path` or below ("populated 1" in cgroup.events).
bool populated(char *path, size_t len)
{
    size_t at = len;
    bool result = false;
    if (appendPath(path, at, "cgroup.events")) {
        char buf[256];
        const ssize_t n = readAll(path, buf, sizeof buf - 1);
        if (n > 0) {
            buf[n] = '\0';
            const char key[] = "populated ";
            const char *hit =
                static_cast<const char *>(::memmem(buf, size_t(n), key, sizeof key - 1));
            result = hit && hit[sizeof key - 1] == '1';
        }
    }
    path[len] = '\0';
    return result;
}

void removeTree(char *path, size_t len, int depth)
{
    if (depth < CgroupMaxDepth)
        forEachSubfolder(path, len, [&](char *p, size_t l) { removeTree(p, l, depth + 1); });
    ::rmdir(path);
}

/// Kills every process in the engine's cgroup and below, whatever it did to its session or
/// environment (cgroup.kill: the kernel's own walk, which also stops forks racing with it;
/// before Linux 5.14, rounds of reading cgroup.procs), waits for the kernel to empty it and
/// removes the folders.
void killEngineCgroup(const char *folder)
{
    char path[PATH_MAX];
    const size_t len = cstrlen(folder);
    if (len == 0 || len >= sizeof path)
        return;
    std::memcpy(path, folder, len + 1);
    const bool kernelKill = writeLeaf(path, len, "cgroup.kill", "1");
    for (int round = 0; round < CgroupEmptyWaitRounds && populated(path, len); ++round) {
        if (!kernelKill)
            killListedTree(path, len, 0, 0);
        const timespec gap = {0, WatchdogRoundGapNs};
        ::nanosleep(&gap, nullptr);
    }
    removeTree(path, len, 0);
}

[[noreturn]] void watchdogMain(int lifeRead, const GroupTable *table, const char *needle,
                               size_t needleLen, const char *cgroupFolder)
{
    // The engine's handlers would write to its self-pipe; the terminal's signals (Ctrl-C goes to
    // the whole foreground group, SIGHUP to the session) must not stop us before the engine.
    struct sigaction sa = {};
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
        if (sig != SIGKILL && sig != SIGSTOP)
            ::sigaction(sig, &sa, nullptr);
    }
    sa.sa_handler = SIG_IGN;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU})
        ::sigaction(sig, &sa, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setsid();
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    ::prctl(PR_SET_NAME, "elsai-watchdog", 0, 0, 0);

    // Nothing of the engine's environment stays in our copy of its memory.
    for (char **e = environ; e && *e; ++e)
        std::memset(*e, 0, cstrlen(*e));
    environ = nullptr;

    // Hold none of the engine's descriptors: a reader of its stdout must see EOF when it ends.
    if (lifeRead != 3) {
        ::dup2(lifeRead, 3);
        ::close(lifeRead);
    }
    const int devNull = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2; ++fd) {
        if (devNull >= 0 && devNull != fd)
            ::dup2(devNull, fd);
    }
    if (::syscall(SYS_close_range, 4U, ~0U, 0U) != 0) {
        for (int fd = 4; fd < 65536; ++fd)
            ::close(fd);
    }
    ::fcntl(3, F_SETFD, FD_CLOEXEC);
    ProcInfo me;
    const unsigned long long since = readProcInfo(0, &me) ? me.startTime : 0;
    // Our command line is the engine's: say what we are instead (ps, pgrep -f).
    if (me.argStart && me.argEnd > me.argStart) {
        char *args = reinterpret_cast<char *>(me.argStart);
        const size_t size = size_t(me.argEnd - me.argStart);
        std::memset(args, 0, size);
        const char name[] = "elsai-watchdog";
        std::memcpy(args, name, std::min(size - 1, sizeof name - 1));
    }

    for (;;) {
        pollfd p = {3, POLLIN, 0};
        const int r = ::poll(&p, 1, -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        char c;
        const ssize_t n = ::read(3, &c, 1);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            break; // the engine is gone
    }

    // Everything the engine started is in its cgroup, whatever it did to its session, process
    // group or environment; the groups and markers below are for where there is no cgroup.
    if (table->inCgroup.load())
        killEngineCgroup(cgroupFolder);
    pid_t groups[MaxGroups];
    int count = 0;
    for (const auto &slot : table->pgid) {
        const pid_t pgid = slot.load();
        if (pgid > 1) {
            groups[count++] = pgid;
            ::kill(-pgid, SIGKILL);
        }
    }
    for (int round = 0; round < WatchdogRounds; ++round) {
        const RoundResult r = killRound(groups, count, needle, needleLen, since);
        if (r.killed == 0 && r.unsure == 0)
            break;
        const timespec gap = {0, WatchdogRoundGapNs};
        ::nanosleep(&gap, nullptr);
    }
    ::_exit(0);
}

/// /proc/<pid>/environ shows the block the kernel placed our environment in at exec, and root
/// reads it even when we are not dumpable (the dumpable check guards memory, not that file).
/// The variables move to the heap — which only a debugger could read — and the block is
/// zeroed. Done once, at startup in the executable, before anything kept a pointer into it.
void moveEnvironmentToHeap()
{
    char **old = environ;
    if (!old)
        return;
    size_t count = 0;
    while (old[count])
        ++count;
    auto **copy = static_cast<char **>(std::malloc((count + 1) * sizeof(char *)));
    if (!copy)
        return;
    for (size_t i = 0; i < count; ++i) {
        copy[i] = ::strdup(old[i]);
        if (!copy[i]) {
            for (size_t j = 0; j < i; ++j)
                std::free(copy[j]);
            std::free(copy);
            return;
        }
    }
    copy[count] = nullptr;
    // Never freed (getenv() results point into it for the process's life), and still held
    // after a setenv() that moves environ to an array of its own.
    static char **const held = copy;
    environ = held;
    for (size_t i = 0; i < count; ++i)
        std::memset(old[i], 0, std::strlen(old[i]));
}

void startWatchdog(Guard &g)
{
    int life[2];
    if (::pipe2(life, O_CLOEXEC) != 0)
        return;
    // Prepared before the fork: the child must not allocate.
    static QByteArray needle;
    needle = QByteArray(1, '\0') + MarkerName + g.prefix;
    static QByteArray cgroupFolder;
    cgroupFolder = QFile::encodeName(g.cgroup);
    // Twice, so that the watchdog is not our child: no zombie of ours if it ends, nothing
    // for a wait on all children to find.
    const pid_t middle = ::fork();
    if (middle == 0) {
        const pid_t watchdog = ::fork();
        if (watchdog == 0) {
            ::close(life[1]);
            watchdogMain(life[0], g.groups, needle.constData(), size_t(needle.size()),
                         cgroupFolder.constData());
        }
        ::_exit(watchdog < 0 ? 1 : 0);
    }
    ::close(life[0]);
    int status = -1;
    if (middle > 0) {
        pid_t r;
        while ((r = ::waitpid(middle, &status, 0)) < 0 && errno == EINTR) {
        }
        if (r < 0)
            status = 0; // reaped for us (SIGCHLD ignored by the host): assume it worked
    }
    if (middle < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ::close(life[1]);
        return; // the process groups and markers still guard every normal end of a command
    }
    g.lifeWrite = life[1];
}

QString engineLeafProcs(const QString &folder)
{
    return folder + QLatin1Char('/') + QLatin1String(EngineLeaf) + QStringLiteral("/cgroup.procs");
}

/// Removes what engines before us left in `parent` and could not remove (their watchdog was
/// killed too): only empty folders — one still populated may belong to a live engine in
/// another pid namespace.
void removeStaleEngineCgroups(const QString &parent)
{
    const QStringList names = QDir(parent).entryList({QStringLiteral("elsai-engine-*")},
                                                     QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &name : names) {
        bool ok = false;
        const pid_t pid = pid_t(name.mid(int(sizeof "elsai-engine-") - 1).toInt(&ok));
        if (ok && pid != ::getpid() && (::kill(pid, 0) == 0 || errno != ESRCH))
            continue; // its engine lives
        QByteArray path = QFile::encodeName(parent + QLatin1Char('/') + name);
        if (path.size() >= PATH_MAX)
            continue;
        char buf[PATH_MAX];
        std::memcpy(buf, path.constData(), size_t(path.size()) + 1);
        removeTree(buf, size_t(path.size()), 0);
    }
}

/// Makes `<our cgroup v2 folder>/elsai-engine-<pid>/engine` for the engine to move into, so
/// that every process it starts is born inside, and returns the outer folder; empty where
/// cgroup v2 is not mounted or its folder is not ours to write (not root, not delegated), or
/// ELSAI_NO_ENGINE_CGROUP is set.
QString makeEngineCgroup()
{
    // For tests of the fallback, and for hosts whose cgroup manager must not see sub-cgroups.
    if (qEnvironmentVariableIsSet("ELSAI_NO_ENGINE_CGROUP"))
        return {};
    const QString own = cgroup::ownFolders().v2;
    if (!cgroup::writable(own))
        return {};
    removeStaleEngineCgroups(own);
    const QString folder = own + QStringLiteral("/elsai-engine-%1").arg(::getpid());
    const QString leaf = folder + QLatin1Char('/') + QLatin1String(EngineLeaf);
    if (::mkdir(QFile::encodeName(folder).constData(), 0755) != 0)
        return {};
    if (::mkdir(QFile::encodeName(leaf).constData(), 0755) != 0) {
        ::rmdir(QFile::encodeName(folder).constData());
        return {};
    }
    // bwrap's per-command pids cgroups go beside the leaf when the controller reaches us.
    if (cgroup::listsController(folder + QStringLiteral("/cgroup.controllers"), "pids"))
        cgroup::writeFile(folder + QStringLiteral("/cgroup.subtree_control"), "+pids");
    return folder;
}

void removeEngineCgroup(const QString &folder)
{
    const QByteArray path = QFile::encodeName(folder);
    char buf[PATH_MAX];
    if (path.isEmpty() || path.size() >= PATH_MAX)
        return;
    std::memcpy(buf, path.constData(), size_t(path.size()) + 1);
    removeTree(buf, size_t(path.size()), 0);
}

/// SIGKILLs every process in the engine's cgroup but the engine itself, round after round
/// (one may fork while we read the list). Returns how many were signalled.
int killCgroupLeftovers(const Guard &g)
{
    const QByteArray path = QFile::encodeName(g.cgroup);
    if (path.isEmpty() || path.size() >= PATH_MAX)
        return 0;
    char buf[PATH_MAX];
    std::memcpy(buf, path.constData(), size_t(path.size()) + 1);
    int total = 0;
    for (int round = 0; round < WatchdogRounds; ++round) {
        const int killed = killListedTree(buf, size_t(path.size()), 0, ::getpid());
        total += killed;
        if (killed == 0)
            break;
        const timespec gap = {0, WatchdogRoundGapNs / 4};
        ::nanosleep(&gap, nullptr);
    }
    return total;
}

Guard &guard()
{
    // Never destroyed: the pipe must stay open until the process itself ends.
    static Guard *const g = [] {
        auto *guard = new Guard;
        // First: the watchdog inherits it, and nothing runs before it could read us.
        ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        moveEnvironmentToHeap();
        quint32 raw[2];
        QRandomGenerator::system()->fillRange(raw);
        guard->prefix = QByteArray(reinterpret_cast<const char *>(raw), sizeof raw).toHex();
        void *shared = ::mmap(nullptr, sizeof(GroupTable), PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shared != MAP_FAILED) {
            guard->groups = new (shared) GroupTable{}; // zero pages: every slot free
            // Made before the watchdog (it must know the folder), joined after (it must stay
            // outside: cgroup.kill takes everything inside).
            guard->cgroup = makeEngineCgroup();
            startWatchdog(*guard);
            if (!guard->cgroup.isEmpty()) {
                const QString procs = engineLeafProcs(guard->cgroup);
                if (guard->lifeWrite >= 0 &&
                    cgroup::writeFile(procs, QByteArray::number(::getpid()))) {
                    guard->cgroupProcs = QFile::encodeName(procs);
                    guard->cgroupProcsFd =
                        ::open(guard->cgroupProcs.constData(), O_RDONLY | O_CLOEXEC);
                    guard->groups->inCgroup.store(1);
                } else {
                    removeEngineCgroup(guard->cgroup); // nobody would remove it at the end
                    guard->cgroup.clear();
                }
            }
        } else {
            guard->groups = new GroupTable{}; // still serves a shutdown
        }
        return guard;
    }();
    return *g;
}

} // namespace

void guardEngineProcess()
{
    guard();
}

const QByteArray &engineMarkerPrefix()
{
    return guard().prefix;
}

QByteArray engineHelperMarker()
{
    return QByteArray(MarkerName) + guard().prefix + "helper";
}

QString engineCgroupFolder()
{
    return guard().cgroup;
}

const QByteArray &engineCgroupProcsFile()
{
    return guard().cgroupProcs;
}

int engineCgroupProcsFd()
{
    return guard().cgroupProcsFd;
}

bool commandsShutDown()
{
    Guard &g = guard();
    std::lock_guard lock(g.mutex);
    return g.closed;
}

int shutdownCommands(int waitMs)
{
    Guard &g = guard();
    int running = 0;
    {
        std::lock_guard lock(g.mutex);
        g.closed = true;
        running = g.active;
    }
    g.shutdown.cancel(); // every running command begins its TERM → grace → KILL now
    std::unique_lock lock(g.mutex);
    const auto allDone = [&g] { return g.active == 0; };
    if (!g.idle.wait_for(lock, std::chrono::milliseconds(std::max(0, waitMs)), allDone)) {
        for (const auto &slot : g.groups->pgid) {
            if (const pid_t pgid = slot.load(); pgid > 1)
                ::kill(-pgid, SIGKILL);
        }
        g.idle.wait_for(lock, std::chrono::milliseconds(FinalKillWaitMs), allDone);
    }
    lock.unlock();
    // What the commands left that no group or marker led to (setsid + a cleared environment),
    // and helpers such as the ssh master: everything in the cgroup but us.
    killCgroupLeftovers(g);
    return running;
}

namespace detail {

CommandRegistration::CommandRegistration()
{
    Guard &g = guard();
    std::lock_guard lock(g.mutex);
    if (g.closed)
        throw OSError(QStringLiteral("the workbench is shutting down: the command was not "
                                     "started"));
    ++g.active;
}

CommandRegistration::~CommandRegistration()
{
    clearGroup();
    Guard &g = guard();
    std::lock_guard lock(g.mutex);
    --g.active;
    g.idle.notify_all();
}

void CommandRegistration::setGroup(pid_t pgid)
{
    Guard &g = guard();
    const int start = g.hint.load(std::memory_order_relaxed);
    for (int i = 0; i < MaxGroups; ++i) {
        const int slot = (start + i) % MaxGroups;
        pid_t expected = 0;
        if (g.groups->pgid[slot].compare_exchange_strong(expected, pgid)) {
            m_slot = slot;
            g.hint.store(slot + 1, std::memory_order_relaxed);
            return;
        }
    }
    // Full: the marker and the shell's parent-death signal still reach it.
}

void CommandRegistration::clearGroup()
{
    if (m_slot < 0)
        return;
    guard().groups->pgid[m_slot].store(0);
    m_slot = -1;
}

CancellationToken &CommandRegistration::shutdownToken()
{
    return guard().shutdown;
}

} // namespace detail

} // namespace elsai
