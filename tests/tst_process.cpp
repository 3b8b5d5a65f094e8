// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "errors.h"
#include "fdutil.h"
#include "process.h"
#include "processguard.h"
#include "procself.h"
#include "procstat.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <atomic>
#include <csignal>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace elsai;

namespace {

// Generous bound that only proves "did not hang"; never a performance threshold.
constexpr qint64 NoHangMs = 20000;

ProcessSpec shell(const QString &command, int timeoutMs = 60000)
{
    ProcessSpec spec;
    spec.command = command;
    spec.environment = QProcessEnvironment::systemEnvironment().toStringList();
    spec.timeoutMs = timeoutMs;
    return spec;
}

/// Live processes (other than us) whose command line contains `needle`. Zombies have an
/// empty cmdline, so they do not count.
int processesWithArg(const QByteArray &needle)
{
    int count = 0;
    const QString self = QString::number(QCoreApplication::applicationPid());
    const QStringList pids = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &pid : pids) {
        if (pid == self || pid.isEmpty() || !pid.at(0).isDigit())
            continue;
        QFile file(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (file.open(QIODevice::ReadOnly) && file.readAll().contains(needle))
            ++count;
    }
    return count;
}

int openFdCount()
{
    return elsai::test::procSelfEntries("fd");
}

} // namespace

namespace elsai::detail {
quint64 nonDefaultSignalMask();
long long forksSinceBootCount(int statFd = -1);
} // namespace elsai::detail

class TestProcess : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void stdoutAndStderrAreSeparate();
    void exitCodes_data();
    void exitCodes();
    void stdinIsAtEof();
    void noTimeoutWhenZero();
    void timeoutKillsSleep();
    void timeoutEscalatesToKill();
    void backgroundChildDoesNotSurvive();
    void escapedDescendantsDoNotSurvive_data();
    void escapedDescendantsDoNotSurvive();
    void pipeHolderDoesNotKeepCallWaiting();
    void timeoutKillsWholeTree();
    void floodWithTimeout();
    void largeOutputIsDrained();
    void longLineWithoutNewline();
    void invalidUtf8IsPreserved();
    void stderrFlood();
    void capIsCombined();
    void onOutputSeesKeptChunksInOrder();
    void onOutputExceptionCleansUp();
    void cancelFromAnotherThread();
    void cancelledBeforeStartRunsNothing();
    void runningProcessWaitsInStepsOnAnyThread();
    void commandsInheritOnlyTheirStdio();
    void runningProcessDestroyedKillsItsTree();
    void cancellationTokenMakesItsFdOnDemand();
    void forksSinceBootCountsEveryPid();
    void cwdFdIsHonoured();
    void badCwdFdThrowsWithoutCommandText();
    void environmentIsExactlyGiven();
    void markerIsUniquePerCall();
    void signalStateIsNotInherited();
    void concurrentCalls();
    void noFdLeak();
    void argumentsRunWithoutShell();
    void joinCgroupFdIsWrittenBeforeExec();
    void joinCgroupChildIsSetUpLikePosixSpawn();
    void joinCgroupFailureRunsNothing();
    void engineIsNotReadableByCommands();
    void rootCommandsHaveNoPtrace();
    void markerStartsWithEnginePrefix();
    void onlySignalsNotAtTheirDefaultAreReset();
    void procStatReadsAnyCommandName_data();
    void procStatReadsAnyCommandName();
};

void TestProcess::initTestCase()
{
    // Its pipe and eventfd are opened once per process: before the fd counts below.
    guardEngineProcess();
}

void TestProcess::stdoutAndStderrAreSeparate()
{
    const ProcessOutcome out =
        runProcess(shell(QStringLiteral("echo out; echo err >&2; echo more")));
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("out\nmore\n"));
    QCOMPARE(out.stderrData, QByteArray("err\n"));
    QVERIFY(!out.truncated);
    QVERIFY(!out.timedOut);
    QVERIFY(!out.cancelled);
    QCOMPARE(out.droppedBytes, 0);
}

void TestProcess::exitCodes_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<int>("exitCode");
    QTest::newRow("true") << QStringLiteral("true") << 0;
    QTest::newRow("false") << QStringLiteral("false") << 1;
    QTest::newRow("exit 3") << QStringLiteral("exit 3") << 3;
    QTest::newRow("exit 255") << QStringLiteral("exit 255") << 255;
    QTest::newRow("SIGKILL") << QStringLiteral("kill -9 $$") << 137;
    QTest::newRow("SIGTERM") << QStringLiteral("kill -TERM $$") << 143;
    QTest::newRow("not found") << QStringLiteral("elsai-no-such-command-xyz") << 127;
}

void TestProcess::exitCodes()
{
    QFETCH(QString, command);
    QFETCH(int, exitCode);
    const ProcessOutcome out = runProcess(shell(command));
    QCOMPARE(out.exitCode, exitCode);
    QVERIFY(!out.timedOut);
}

void TestProcess::stdinIsAtEof()
{
    QElapsedTimer timer;
    timer.start();
    const ProcessOutcome out = runProcess(shell(QStringLiteral("cat; echo rc=$?"), 30000));
    QVERIFY(timer.elapsed() < NoHangMs);
    QVERIFY(!out.timedOut);
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("rc=0\n"));
    QVERIFY(out.stderrData.isEmpty());
}

void TestProcess::noTimeoutWhenZero()
{
    const ProcessOutcome out = runProcess(shell(QStringLiteral("sleep 0.3; echo done"), 0));
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("done\n"));
    QVERIFY(out.durationMs >= 250);
}

// E1
void TestProcess::timeoutKillsSleep()
{
    ProcessSpec spec = shell(QStringLiteral("sleep 100.111"), 2000);
    QElapsedTimer timer;
    timer.start();
    const ProcessOutcome out = runProcess(spec);
    QVERIFY(timer.elapsed() < NoHangMs);
    QCOMPARE(out.exitCode, 124);
    QVERIFY(out.timedOut);
    QVERIFY(!out.cancelled);
    QVERIFY(out.durationMs >= 1900);
    QCOMPARE(processesWithArg("100.111"), 0);
}

// E2: TERM is ignored by the shell and (inherited) by sleep; only the KILL ends it.
void TestProcess::timeoutEscalatesToKill()
{
    ProcessSpec spec = shell(QStringLiteral("trap '' TERM; sleep 100.222; echo after"), 1000);
    spec.killGraceMs = 1000;
    QElapsedTimer timer;
    timer.start();
    const ProcessOutcome out = runProcess(spec);
    QVERIFY(timer.elapsed() < NoHangMs);
    QCOMPARE(out.exitCode, 124);
    QVERIFY(out.timedOut);
    QVERIFY(out.durationMs >= 1900); // timeout + grace
    QVERIFY(out.stdoutData.isEmpty());
    QCOMPARE(processesWithArg("100.222"), 0);
}

// E3
void TestProcess::backgroundChildDoesNotSurvive()
{
    QElapsedTimer timer;
    timer.start();
    const ProcessOutcome out = runProcess(shell(QStringLiteral("sleep 100.123 & echo hi")));
    QVERIFY(timer.elapsed() < NoHangMs);
    QCOMPARE(out.exitCode, 0);
    QVERIFY(!out.timedOut);
    QCOMPARE(out.stdoutData, QByteArray("hi\n"));
    QCOMPARE(processesWithArg("100.123"), 0);
}

// Each escapee touches a file once it has left the group; the shell exits only after that, so
// the escape has really happened before the call starts cleaning up.
void TestProcess::escapedDescendantsDoNotSurvive_data()
{
    QTest::addColumn<QString>("command");
    QTest::addColumn<QByteArray>("needle");
    const QString waitReady = QStringLiteral(" while [ ! -e r ]; do sleep 0.01; done; echo ok");
    QTest::newRow("setsid") << QStringLiteral("setsid sh -c 'touch r; exec sleep 100.456' &") +
                                   waitReady
                            << QByteArray("100.456");
    QTest::newRow("setsid, output elsewhere")
        << QStringLiteral("setsid sh -c 'touch r; exec sleep 100.457 >/dev/null 2>&1' &") +
               waitReady
        << QByteArray("100.457");
    QTest::newRow("double fork") << QStringLiteral(
                                        "(setsid sh -c 'touch r; exec sleep 100.458' &);") +
                                        waitReady
                                 << QByteArray("100.458");
    // Same session, own process group: out of reach of the group kill.
    if (!QStandardPaths::findExecutable(QStringLiteral("perl")).isEmpty()) {
        QTest::newRow("own group")
            << QStringLiteral("perl -e 'setpgrp(0, 0); open(my $f, \">\", \"r\"); close($f);"
                              " exec(\"sleep\", \"100.459\")' &") +
                   waitReady
            << QByteArray("100.459");
    }
    QTest::newRow("nested escapes")
        << QStringLiteral("setsid sh -c '(setsid sh -c \"touch r; exec sleep 100.461\" &); "
                          "exec sleep 100.462' &") +
               waitReady
        << QByteArray("100.46");
    QTest::newRow("many") << QStringLiteral(
                                 "for i in 1 2 3 4 5 6 7 8; do "
                                 "setsid sh -c \"touch r$i; exec sleep 100.47$i\" & done;"
                                 " for i in 1 2 3 4 5 6 7 8; do"
                                 " while [ ! -e r$i ]; do sleep 0.01; done; done; echo ok")
                          << QByteArray("100.47");
}

void TestProcess::escapedDescendantsDoNotSurvive()
{
    QFETCH(QString, command);
    QFETCH(QByteArray, needle);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const int fd =
        ::open(QFile::encodeName(dir.path()).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    QVERIFY(fd >= 0);
    ProcessSpec spec = shell(command);
    spec.cwdFd = fd;
    QElapsedTimer timer;
    timer.start();
    const ProcessOutcome out = runProcess(spec);
    ::close(fd);
    QVERIFY(timer.elapsed() < NoHangMs);
    QVERIFY(!out.timedOut);
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("ok\n"));
    QCOMPARE(processesWithArg(needle), 0);
}

void TestProcess::pipeHolderDoesNotKeepCallWaiting()
{
    QElapsedTimer timer;
    timer.start();
    const ProcessOutcome out = runProcess(shell(QStringLiteral("(sleep 100.789 >&1 &); echo x")));
    QVERIFY(timer.elapsed() < NoHangMs);
    QVERIFY(!out.timedOut);
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("x\n"));
    QCOMPARE(processesWithArg("100.789"), 0);
}

void TestProcess::timeoutKillsWholeTree()
{
    ProcessSpec spec = shell(QStringLiteral("sleep 100.61 & setsid sleep 100.62 & "
                                            "sh -c 'trap \"\" TERM; sleep 100.63' & wait"),
                             1000);
    spec.killGraceMs = 500;
    QElapsedTimer timer;
    timer.start();
    const ProcessOutcome out = runProcess(spec);
    QVERIFY(timer.elapsed() < NoHangMs);
    QCOMPARE(out.exitCode, 124);
    QVERIFY(out.timedOut);
    QCOMPARE(processesWithArg("100.6"), 0);
}

// E4
void TestProcess::floodWithTimeout()
{
    ProcessSpec spec = shell(QStringLiteral("yes elsai-flood-7781"), 1500);
    spec.maxOutputBytes = 100000;
    QElapsedTimer timer;
    timer.start();
    const ProcessOutcome out = runProcess(spec);
    QVERIFY(timer.elapsed() < NoHangMs);
    QVERIFY(out.truncated);
    QVERIFY(out.timedOut);
    QCOMPARE(out.exitCode, 124);
    QCOMPARE(out.stdoutData.size(), 100000);
    QVERIFY(out.droppedBytes > 0);
    QVERIFY(out.stdoutData.startsWith("elsai-flood-7781\nelsai-flood-7781\n"));
    QCOMPARE(processesWithArg("elsai-flood-7781"), 0);
}

void TestProcess::largeOutputIsDrained()
{
    ProcessSpec spec = shell(QStringLiteral("head -c 100000000 /dev/zero; echo rc=$? >&2"));
    spec.maxOutputBytes = 100000;
    const ProcessOutcome out = runProcess(spec);
    QVERIFY(!out.timedOut);
    QCOMPARE(out.exitCode, 0);
    QVERIFY(out.truncated);
    QCOMPARE(out.stdoutData.size() + out.stderrData.size(), 100000);
    QCOMPARE(out.stdoutData, QByteArray(100000, '\0'));
    QCOMPARE(out.droppedBytes, 100000000 - 100000 + 5); // "rc=0\n" came after the cap
}

void TestProcess::longLineWithoutNewline()
{
    ProcessSpec spec = shell(QStringLiteral("head -c 5000000 /dev/zero | tr '\\0' a"));
    spec.maxOutputBytes = 100000;
    const ProcessOutcome out = runProcess(spec);
    QCOMPARE(out.exitCode, 0);
    QVERIFY(out.truncated);
    QCOMPARE(out.stdoutData, QByteArray(100000, 'a'));
    QCOMPARE(out.droppedBytes, 5000000 - 100000);
}

void TestProcess::invalidUtf8IsPreserved()
{
    const ProcessOutcome out =
        runProcess(shell(QStringLiteral("printf '\\377\\376\\200abc\\300\\000z'")));
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("\xff\xfe\x80"
                                        "abc"
                                        "\xc0\0z",
                                        9));
}

void TestProcess::stderrFlood()
{
    ProcessSpec spec = shell(QStringLiteral("head -c 10000000 /dev/zero >&2; echo end"));
    spec.maxOutputBytes = 100000;
    const ProcessOutcome out = runProcess(spec);
    QCOMPARE(out.exitCode, 0);
    QVERIFY(out.truncated);
    QCOMPARE(out.stderrData.size(), 100000);
    QVERIFY(out.stdoutData.isEmpty()); // the cap was used up before "end" arrived
    QCOMPARE(out.droppedBytes, 10000000 - 100000 + 4);
}

void TestProcess::capIsCombined()
{
    ProcessSpec spec = shell(QStringLiteral("head -c 70000 /dev/zero | tr '\\0' o; "
                                            "head -c 70000 /dev/zero | tr '\\0' e >&2"));
    spec.maxOutputBytes = 100000;
    const ProcessOutcome out = runProcess(spec);
    QCOMPARE(out.exitCode, 0);
    QVERIFY(out.truncated);
    // Sequential writes: stdout arrives first and is kept whole, stderr gets the rest.
    QCOMPARE(out.stdoutData, QByteArray(70000, 'o'));
    QCOMPARE(out.stderrData, QByteArray(30000, 'e'));
    QCOMPARE(out.droppedBytes, 40000);
}

void TestProcess::onOutputSeesKeptChunksInOrder()
{
    for (const qint64 cap : {qint64(10000000), qint64(100000)}) {
        ProcessSpec spec = shell(QStringLiteral("seq 1 200000; echo err >&2"));
        spec.maxOutputBytes = cap;
        QByteArray seenOut;
        QByteArray seenErr;
        qint64 total = 0;
        int calls = 0;
        bool emptyChunk = false;
        bool otherThread = false;
        QThread *const self = QThread::currentThread();
        spec.onOutput = [&](OutputChannel channel, const QByteArray &chunk) {
            ++calls;
            emptyChunk |= chunk.isEmpty();
            otherThread |= QThread::currentThread() != self;
            total += chunk.size();
            (channel == OutputChannel::Stdout ? seenOut : seenErr).append(chunk);
        };
        const ProcessOutcome out = runProcess(spec);
        QCOMPARE(out.exitCode, 0);
        QVERIFY(calls > 1);
        QVERIFY(!emptyChunk);
        QVERIFY(!otherThread);
        QCOMPARE(seenOut, out.stdoutData);
        QCOMPARE(seenErr, out.stderrData);
        QCOMPARE(total, out.stdoutData.size() + out.stderrData.size());
        if (cap == 100000) {
            QVERIFY(out.truncated);
            QCOMPARE(total, cap);
        } else {
            QVERIFY(!out.truncated);
            QVERIFY(out.stdoutData.startsWith("1\n2\n3\n"));
            QVERIFY(out.stdoutData.endsWith("199999\n200000\n"));
            QCOMPARE(out.stderrData, QByteArray("err\n"));
        }
    }
}

void TestProcess::onOutputExceptionCleansUp()
{
    ProcessSpec spec = shell(QStringLiteral("setsid sleep 100.91 & sleep 100.92 & echo x; "
                                            "sleep 100.93"));
    spec.onOutput = [](OutputChannel, const QByteArray &) {
        throw std::runtime_error("consumer failed");
    };
    QElapsedTimer timer;
    timer.start();
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, runProcess(spec));
    QVERIFY(timer.elapsed() < NoHangMs);
    QCOMPARE(processesWithArg("100.9"), 0);
}

void TestProcess::cancelFromAnotherThread()
{
    ProcessSpec spec = shell(QStringLiteral("sleep 100.333"), 60000);
    spec.cancel = std::make_shared<CancellationToken>();
    std::thread canceller([token = spec.cancel] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        token->cancel();
    });
    QElapsedTimer timer;
    timer.start();
    const ProcessOutcome out = runProcess(spec);
    canceller.join();
    QVERIFY(timer.elapsed() < NoHangMs);
    QCOMPARE(out.exitCode, 130);
    QVERIFY(out.cancelled);
    QVERIFY(!out.timedOut);
    QVERIFY(out.durationMs >= 400);
    QCOMPARE(processesWithArg("100.333"), 0);

    // The token stays cancelled: a second call with it does not run at all.
    const ProcessOutcome again = runProcess(spec);
    QCOMPARE(again.exitCode, 130);
    QVERIFY(again.cancelled);
}

// A descriptor the engine opened without O_CLOEXEC does not reach the command: it gets its
// stdin, stdout and stderr, nothing else.
void TestProcess::commandsInheritOnlyTheirStdio()
{
    int leaky[2];
    QCOMPARE(::pipe(leaky), 0);
    const UniqueFd readEnd(leaky[0]);
    const UniqueFd writeEnd(leaky[1]);
    const ProcessOutcome out = runProcess(
        shell(QStringLiteral("for fd in %1 %2; do [ -e /proc/self/fd/$fd ] && echo open $fd; done; "
                             "echo end")
                  .arg(leaky[0])
                  .arg(leaky[1])));
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("end\n"));
}

// A RunningProcess is waited for in steps, and the waiting may move to another thread: its
// output then reaches onOutput there (execute's soft return hands a command over this way).
void TestProcess::runningProcessWaitsInStepsOnAnyThread()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const UniqueFd cwd(
        ::open(QFile::encodeName(dir.path()).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ProcessSpec spec =
        shell(QStringLiteral("echo a; while [ ! -e go ]; do sleep 0.01; done; echo b"));
    spec.cwdFd = cwd.get();
    std::mutex m;
    QList<QPair<pid_t, QByteArray>> chunks;
    spec.onOutput = [&](OutputChannel, const QByteArray &chunk) {
        std::lock_guard lock(m);
        chunks.append({pid_t(::gettid()), chunk});
    };
    RunningProcess process(spec);
    const auto seen = [&] {
        std::lock_guard lock(m);
        return chunks.size();
    };
    for (int i = 0; i < 5000 && seen() == 0; ++i)
        QVERIFY(!process.waitFor(10)); // it waits for the file: never ended yet
    QCOMPARE(seen(), 1);
    QVERIFY(!process.waitFor(0));
    QVERIFY(QFile(dir.filePath(QStringLiteral("go"))).open(QIODevice::WriteOnly));
    pid_t waiter = 0;
    bool ended = false;
    std::thread([&] {
        waiter = pid_t(::gettid());
        ended = process.waitFor(-1);
    }).join();
    QVERIFY(ended);
    QVERIFY(process.waitFor(0)); // ended stays ended
    const ProcessOutcome out = process.takeOutcome();
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("a\nb\n"));
    QCOMPARE(chunks.size(), 2);
    QCOMPARE(chunks[0].first, pid_t(::gettid()));
    QCOMPARE(chunks[1].first, waiter);
    QCOMPARE(chunks[1].second, QByteArray("b\n"));
}

// Dropped before its end, a RunningProcess takes the command and every descendant down.
void TestProcess::runningProcessDestroyedKillsItsTree()
{
    std::atomic_bool started{false};
    {
        ProcessSpec spec = shell(QStringLiteral("setsid sleep 100.811 & sleep 100.812 & echo x; "
                                                "sleep 100.813"));
        spec.onOutput = [&](OutputChannel, const QByteArray &) { started = true; };
        RunningProcess process(spec);
        for (int i = 0; i < 5000 && !started; ++i)
            QVERIFY(!process.waitFor(10));
        QVERIFY(started);
        QVERIFY(processesWithArg("100.81") >= 2);
    }
    QCOMPARE(processesWithArg("100.81"), 0);
}

void TestProcess::cancelledBeforeStartRunsNothing()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString marker = dir.filePath(QStringLiteral("ran"));
    ProcessSpec spec = shell(QStringLiteral("touch '%1'").arg(marker));
    spec.cancel = std::make_shared<CancellationToken>();
    spec.cancel->cancel();
    spec.cancel->cancel(); // idempotent
    const ProcessOutcome out = runProcess(spec);
    QCOMPARE(out.exitCode, 130);
    QVERIFY(out.cancelled);
    QVERIFY(!QFile::exists(marker));
}

// A token that is only checked (one per tool call) holds no descriptor; the first fd() makes
// one, and it is readable when the token was cancelled before or after.
void TestProcess::cancellationTokenMakesItsFdOnDemand()
{
    const auto readable = [](int fd) {
        pollfd p{fd, POLLIN, 0};
        return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
    };
    const int before = openFdCount();
    {
        std::vector<std::unique_ptr<CancellationToken>> unused(100);
        for (auto &t : unused)
            t = std::make_unique<CancellationToken>();
        unused.front()->cancel();
        QCOMPARE(openFdCount(), before);
    }
    CancellationToken early;
    early.cancel();
    const int fd = early.fd();
    QVERIFY(fd >= 0);
    QCOMPARE(early.fd(), fd); // made once
    QVERIFY(readable(fd));

    CancellationToken late;
    QVERIFY(late.fd() >= 0);
    QVERIFY(!readable(late.fd()));
    late.cancel();
    QVERIFY(readable(late.fd()));
    QCOMPARE(openFdCount(), before + 2);
}

// Without an engine cgroup, a command longer than a few ms is swept by pid order only when
// this count says the pid counter did not go round meanwhile: it must count every pid handed
// out, threads included, and parse /proc/stat however long its lines are.
void TestProcess::forksSinceBootCountsEveryPid()
{
    const long long before = elsai::detail::forksSinceBootCount();
    QVERIFY(before > 0);
    for (int i = 0; i < 5; ++i)
        std::thread([] {}).join();
    for (int i = 0; i < 5; ++i)
        QCOMPARE(runProcess(shell(QStringLiteral("true"))).exitCode, 0);
    const long long after = elsai::detail::forksSinceBootCount();
    QVERIFY2(after - before >= 10, qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(after)));

    // The parser, fed in small writes: an interrupt line far longer than its buffer (a big
    // machine's), the number cut between two reads, and files without it. A socket, so that
    // a write after the parser is done fails without a SIGPIPE.
    const auto parse = [](const QByteArray &text, int slice) {
        int p[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0)
            return -2LL;
        std::thread writer([&] {
            for (qsizetype at = 0; at < text.size(); at += slice) {
                const size_t n = size_t(qMin<qsizetype>(slice, text.size() - at));
                if (::send(p[1], text.constData() + at, n, MSG_NOSIGNAL) < 0)
                    break;
            }
            ::shutdown(p[1], SHUT_WR);
        });
        const long long value = elsai::detail::forksSinceBootCount(p[0]);
        ::shutdown(p[0], SHUT_RDWR); // a writer blocked on a full socket gets an error
        writer.join();
        ::close(p[0]);
        ::close(p[1]);
        return value;
    };
    const QByteArray head =
        "cpu  1 2 3\ncpu0 1 2 3\nintr " + QByteArray(200000, '7') + "\nctxt 9\n";
    const QByteArray tail = "\nprocs_running 1\n";
    QCOMPARE(parse(head + "processes 4242" + tail, 1 << 16), 4242LL);
    QCOMPARE(parse(head + "processes 4242" + tail, 8190), 4242LL);
    QCOMPARE(parse(head + "processes 4242" + tail, 7), 4242LL);
    QCOMPARE(parse(head + "processes 4242", 4096), -1LL); // no line end: cut short
    QCOMPARE(parse(head + tail, 4096), -1LL);
    QCOMPARE(parse("processes 5\n", 64), -1LL); // only ever after the CPU lines
}

void TestProcess::cwdFdIsHonoured()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString canonical = QDir(dir.path()).canonicalPath();
    const int fd =
        ::open(QFile::encodeName(dir.path()).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    QVERIFY(fd >= 0);
    ProcessSpec spec = shell(QStringLiteral("pwd -P; echo data > here.txt"));
    spec.cwdFd = fd;
    const ProcessOutcome out = runProcess(spec);
    ::close(fd);
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QFile::encodeName(canonical) + '\n');
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("here.txt"))));
    // The caller's own working folder is unchanged.
    QVERIFY(QDir::currentPath() != canonical);
}

void TestProcess::badCwdFdThrowsWithoutCommandText()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile file(dir.filePath(QStringLiteral("f")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    const int fdBefore = openFdCount();

    ProcessSpec spec = shell(QStringLiteral("echo CANARY-elsai-7f3a"));
    spec.cwdFd = file.handle(); // not a folder
    try {
        runProcess(spec);
        QFAIL("expected an OSError for a file as cwd");
    } catch (const OSError &e) {
        QCOMPARE(e.errnoValue(), ENOTDIR);
        QVERIFY(!e.message().contains(QStringLiteral("CANARY")));
        QVERIFY(!e.message().contains(QStringLiteral("echo")));
    }

    spec.cwdFd = 100000; // not open
    try {
        runProcess(spec);
        QFAIL("expected an OSError for a closed fd as cwd");
    } catch (const OSError &e) {
        QCOMPARE(e.errnoValue(), EBADF);
        QVERIFY(!e.message().contains(QStringLiteral("CANARY")));
    }
    QCOMPARE(openFdCount(), fdBefore);
}

void TestProcess::environmentIsExactlyGiven()
{
    ProcessSpec spec = shell(QStringLiteral("/usr/bin/env"));
    spec.environment = {QStringLiteral("FOO=bar baz"), QStringLiteral("EMPTY="),
                        QStringLiteral("ELSAI_EXEC_TOKEN=forged")};
    const ProcessOutcome out = runProcess(spec);
    QCOMPARE(out.exitCode, 0);
    QStringList lines = QString::fromUtf8(out.stdoutData).split(u'\n', Qt::SkipEmptyParts);
    lines.removeIf([](const QString &l) { return l.startsWith(QStringLiteral("PWD=")); }); // dash
    lines.sort();
    QCOMPARE(lines.size(), 3);
    QCOMPARE(lines.at(1), QStringLiteral("EMPTY="));
    QCOMPARE(lines.at(2), QStringLiteral("FOO=bar baz"));
    static const QRegularExpression token(QStringLiteral("^ELSAI_EXEC_TOKEN=[0-9a-f]{32}$"));
    QVERIFY2(token.match(lines.at(0)).hasMatch(), qPrintable(lines.at(0)));
}

void TestProcess::markerIsUniquePerCall()
{
    QSet<QByteArray> seen;
    for (int i = 0; i < 20; ++i) {
        const ProcessOutcome out = runProcess(shell(QStringLiteral("echo $ELSAI_EXEC_TOKEN")));
        QCOMPARE(out.stdoutData.size(), 33);
        seen.insert(out.stdoutData);
    }
    QCOMPARE(seen.size(), 20);
}

// A host that ignores SIGPIPE or blocks SIGTERM must not hand that to the command.
void TestProcess::signalStateIsNotInherited()
{
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction previous = {};
    QCOMPARE(::sigaction(SIGPIPE, &ignore, &previous), 0);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigset_t oldMask;
    QCOMPARE(::pthread_sigmask(SIG_BLOCK, &block, &oldMask), 0);

    const ProcessOutcome pipe = runProcess(shell(QStringLiteral("kill -PIPE $$; echo survived")));
    const ProcessOutcome term = runProcess(shell(QStringLiteral("kill -TERM $$; echo survived")));
    const ProcessOutcome yes = runProcess(shell(QStringLiteral("yes | head -c 3")));

    ::pthread_sigmask(SIG_SETMASK, &oldMask, nullptr);
    ::sigaction(SIGPIPE, &previous, nullptr);

    QCOMPARE(pipe.exitCode, 128 + SIGPIPE);
    QVERIFY(pipe.stdoutData.isEmpty());
    QCOMPARE(term.exitCode, 128 + SIGTERM);
    QVERIFY(term.stdoutData.isEmpty());
    QCOMPARE(yes.stdoutData, QByteArray("y\ny"));
    QVERIFY2(yes.stderrData.isEmpty(), yes.stderrData.constData()); // no "Broken pipe"
}

void TestProcess::concurrentCalls()
{
    constexpr int Threads = 8;
    constexpr int CallsPerThread = 25;
    std::atomic_int failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < Threads; ++t) {
        threads.emplace_back([t, &failures] {
            for (int i = 0; i < CallsPerThread; ++i) {
                const QString unique = QStringLiteral("thread-%1-call-%2").arg(t).arg(i);
                const QString command = i % 5 == 0
                                            ? QStringLiteral("sleep 0.05; echo %1").arg(unique)
                                            : QStringLiteral("echo %1; echo %1 >&2").arg(unique);
                const ProcessOutcome out = runProcess(shell(command));
                const QByteArray expected = unique.toUtf8() + '\n';
                const bool ok =
                    out.exitCode == 0 && out.stdoutData == expected &&
                    (i % 5 == 0 ? out.stderrData.isEmpty() : out.stderrData == expected);
                if (!ok)
                    ++failures;
            }
        });
    }
    for (std::thread &thread : threads)
        thread.join();
    QCOMPARE(failures.load(), 0);
}

void TestProcess::noFdLeak()
{
    runProcess(shell(QStringLiteral("true"))); // warm up lazily opened files
    const int before = openFdCount();
    for (int i = 0; i < 200; ++i) {
        const QString command = i % 50 == 0 ? QStringLiteral("setsid sleep 100.77 & echo %1")
                                            : QStringLiteral("echo %1");
        const ProcessOutcome out = runProcess(shell(command.arg(i)));
        QCOMPARE(out.stdoutData, QByteArray::number(i) + '\n');
    }
    ProcessSpec timed = shell(QStringLiteral("sleep 100.78"), 200);
    timed.killGraceMs = 100;
    timed.cancel = std::make_shared<CancellationToken>();
    QCOMPARE(runProcess(timed).exitCode, 124);
    timed.cancel.reset();
    QCOMPARE(openFdCount(), before);
    QCOMPARE(processesWithArg("100.77"), 0);
}

void TestProcess::argumentsRunWithoutShell()
{
    ProcessSpec spec = shell({});
    spec.arguments = {QStringLiteral("/bin/echo"), QStringLiteral("a  b"), QStringLiteral("$HOME"),
                      QStringLiteral("'q'; true")};
    const ProcessOutcome out = runProcess(spec);
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("a  b $HOME 'q'; true\n")); // nothing expanded

    spec.arguments = {QStringLiteral("/nonexistent/elsai-prog")};
    try {
        runProcess(spec);
        QFAIL("expected an OSError for a missing program");
    } catch (const OSError &e) {
        QCOMPARE(e.errnoValue(), ENOENT);
    }
}

namespace {

/// Runs `spec` with the write end of a pipe as its "cgroup file" and returns what the child
/// wrote there (a cgroup's `tasks` would read "0" as "the writer").
QByteArray runJoiningPipe(ProcessSpec spec, ProcessOutcome &out)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return "pipe failed";
    spec.joinCgroupFd = fds[1];
    out = runProcess(spec);
    ::close(fds[1]);
    char buf[16];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    ::close(fds[0]);
    return n > 0 ? QByteArray(buf, n) : QByteArray();
}

} // namespace

void TestProcess::joinCgroupFdIsWrittenBeforeExec()
{
    ProcessOutcome out;
    QCOMPARE(runJoiningPipe(shell(QStringLiteral("echo ran")), out), QByteArray("0"));
    QCOMPARE(out.exitCode, 0);
    QCOMPARE(out.stdoutData, QByteArray("ran\n"));

    ProcessSpec direct = shell({});
    direct.arguments = {QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                        QStringLiteral("echo $1 >&2; exit 3"), QStringLiteral("sh"),
                        QStringLiteral("direct")};
    QCOMPARE(runJoiningPipe(direct, out), QByteArray("0"));
    QCOMPARE(out.exitCode, 3);
    QCOMPARE(out.stderrData, QByteArray("direct\n"));

    // Timeouts still take the whole group down on this spawn path.
    ProcessSpec timed = shell(QStringLiteral("sleep 100.93 & sleep 100.94"), 300);
    timed.killGraceMs = 100;
    QCOMPARE(runJoiningPipe(timed, out), QByteArray("0"));
    QCOMPARE(out.exitCode, 124);
    QVERIFY(out.timedOut);
    QCOMPARE(processesWithArg("100.93"), 0);
    QCOMPARE(processesWithArg("100.94"), 0);
}

// The clone path must give the child what posix_spawn does: its own session, stdin from
// /dev/null, the cwd fd, exactly the environment, and default signal dispositions.
void TestProcess::joinCgroupChildIsSetUpLikePosixSpawn()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const int cwd =
        ::open(QFile::encodeName(dir.path()).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    QVERIFY(cwd >= 0);
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction previous = {};
    QCOMPARE(::sigaction(SIGPIPE, &ignore, &previous), 0);

    ProcessSpec spec =
        shell(QStringLiteral("set -- $(cut -d' ' -f6 /proc/$$/stat); "
                             "[ \"$1\" = $$ ] && echo own-session; cat; pwd -P; echo \"FOO=$FOO\"; "
                             "yes | head -c 1; echo"));
    spec.environment = {QStringLiteral("FOO=bar"), QStringLiteral("PATH=/usr/bin:/bin")};
    spec.cwdFd = cwd;
    ProcessOutcome out;
    const QByteArray joined = runJoiningPipe(spec, out);
    ::sigaction(SIGPIPE, &previous, nullptr);
    ::close(cwd);

    QCOMPARE(joined, QByteArray("0"));
    QCOMPARE(out.exitCode, 0);
    const QByteArray expected =
        "own-session\n" + QFile::encodeName(QDir(dir.path()).canonicalPath()) + "\nFOO=bar\ny\n";
    QCOMPARE(out.stdoutData, expected);
    QVERIFY2(out.stderrData.isEmpty(), out.stderrData.constData()); // no "Broken pipe"
}

void TestProcess::joinCgroupFailureRunsNothing()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString canary = dir.filePath(QStringLiteral("ran"));
    const int readOnly = ::open("/dev/null", O_RDONLY | O_CLOEXEC); // not writable
    QVERIFY(readOnly >= 0);
    const int fdBefore = openFdCount();

    ProcessSpec spec = shell(QStringLiteral("touch '%1'").arg(canary));
    spec.joinCgroupFd = readOnly;
    try {
        runProcess(spec);
        QFAIL("expected an OSError when the cgroup cannot be joined");
    } catch (const OSError &e) {
        QCOMPARE(e.errnoValue(), EBADF);
        QVERIFY2(e.message().contains(QStringLiteral("cgroup")), qPrintable(e.message()));
        QVERIFY(!e.message().contains(QStringLiteral("touch")));
    }
    QCOMPARE(openFdCount(), fdBefore);
    ::close(readOnly);
    QVERIFY(!QFile::exists(canary));
    // The failed child was reaped: no zombie is left for us.
    siginfo_t info{};
    QCOMPARE(::waitid(P_ALL, 0, &info, WEXITED | WNOHANG), -1);
    QCOMPARE(errno, ECHILD);
}

// A command (same uid) can read neither our environment nor our memory: not dumpable, and
// the block /proc/<pid>/environ shows is zeroed (root may open that file).
void TestProcess::engineIsNotReadableByCommands()
{
    QVERIFY(!qgetenv("PATH").isEmpty()); // still ours, from the heap
    const ProcessOutcome out = runProcess(shell(
        QStringLiteral("tr -d '\\0' < /proc/$PPID/environ 2> /dev/null; "
                       "dd if=/proc/$PPID/mem bs=1 count=1 skip=$(( 0x$(grep -m1 -o '^[0-9a-f]*' "
                       "/proc/$PPID/maps 2> /dev/null || echo 0) )) 2> /dev/null; echo done")));
    QCOMPARE(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
    QCOMPARE(out.stdoutData, QByteArray("done\n"));
}

// Root passes the kernel's dumpable check with CAP_SYS_PTRACE: its commands run without it.
void TestProcess::rootCommandsHaveNoPtrace()
{
    if (::geteuid() != 0)
        QSKIP("not root: commands have no CAP_SYS_PTRACE to drop");
    const ProcessOutcome out =
        runProcess(shell(QStringLiteral("grep -E '^Cap(Inh|Prm|Eff|Bnd):' /proc/self/status")));
    QCOMPARE(out.exitCode, 0);
    const QList<QByteArray> lines = out.stdoutData.trimmed().split('\n');
    QCOMPARE(lines.size(), 4);
    constexpr unsigned long long Ptrace = 1ULL << 19; // CAP_SYS_PTRACE
    for (const QByteArray &line : lines) {
        bool ok = false;
        const unsigned long long caps = line.split('\t').last().toULongLong(&ok, 16);
        QVERIFY2(ok, line.constData());
        QVERIFY2(!(caps & Ptrace), line.constData());
    }
}

void TestProcess::markerStartsWithEnginePrefix()
{
    const ProcessOutcome out = runProcess(shell(QStringLiteral("echo $ELSAI_EXEC_TOKEN")));
    QVERIFY(!engineMarkerPrefix().isEmpty());
    QVERIFY2(out.stdoutData.startsWith(engineMarkerPrefix()), out.stdoutData.constData());
}

// The child resets only what /proc/self/status lists as ignored or caught: the mask must be
// read right, or an ignored signal would stay ignored in every command.
void TestProcess::onlySignalsNotAtTheirDefaultAreReset()
{
    const auto bit = [](int sig) { return quint64(1) << (sig - 1); };
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction caught = {};
    caught.sa_handler = [](int) {};
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    struct sigaction oldUrg = {}, oldUsr1 = {}, oldUsr2 = {};
    QCOMPARE(::sigaction(SIGURG, &ignore, &oldUrg), 0);
    QCOMPARE(::sigaction(SIGUSR1, &caught, &oldUsr1), 0);
    QCOMPARE(::sigaction(SIGUSR2, &dfl, &oldUsr2), 0);
    const quint64 mask = elsai::detail::nonDefaultSignalMask();
    ::sigaction(SIGURG, &oldUrg, nullptr);
    ::sigaction(SIGUSR1, &oldUsr1, nullptr);
    ::sigaction(SIGUSR2, &oldUsr2, nullptr);
    QVERIFY(mask != ~quint64(0)); // read, not the fallback
    QVERIFY(mask & bit(SIGURG));
    QVERIFY(mask & bit(SIGUSR1));
    QVERIFY(!(mask & bit(SIGUSR2)));
    // and the command starts with SIGURG at its default (ignored by default, so asked directly)
    QCOMPARE(::sigaction(SIGURG, &ignore, &oldUrg), 0);
    const ProcessOutcome out =
        runProcess(shell(QStringLiteral("grep -E '^SigIgn:' /proc/self/status")));
    ::sigaction(SIGURG, &oldUrg, nullptr);
    bool ok = false;
    const quint64 childIgnored = out.stdoutData.trimmed().split('\t').last().toULongLong(&ok, 16);
    QVERIFY2(ok, out.stdoutData.constData());
    QVERIFY2(!(childIgnored & bit(SIGURG)), out.stdoutData.constData());
}

void TestProcess::procStatReadsAnyCommandName_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("plain") << QStringLiteral("sleeper");
    QTest::newRow("parenthesis and space") << QStringLiteral("a) b");
    QTest::newRow("like the next fields") << QStringLiteral(") S 1 2 3 (");
    QTest::newRow("only parentheses") << QStringLiteral(")))");
}

// The command name (field 2) is the program's file name, chosen by whoever runs it: the fields
// after it must still be read right, by the watchdog's sweep and the resource sampler alike.
void TestProcess::procStatReadsAnyCommandName()
{
    QFETCH(QString, name);
    QTemporaryDir dir;
    const QString program = dir.filePath(name);
    QVERIFY(QFile::copy(QStandardPaths::findExecutable(QStringLiteral("sleep")), program));
    QProcess sleeper;
    sleeper.start(program, {QStringLiteral("30")});
    QVERIFY(sleeper.waitForStarted());
    const auto pid = pid_t(sleeper.processId());
    const UniqueFd proc(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    QVERIFY(proc.isValid());
    ProcStat st;
    ProcStat self;
    QVERIFY(readProcStat(proc.get(), ::getpid(), self));
    QTRY_VERIFY(readProcStat(proc.get(), pid, st) && st.state == 'S'); // asleep after its exec
    QCOMPARE(st.pid, pid);
    QCOMPARE(st.ppid, ::getpid());
    QCOMPARE(st.pgrp, ::getpgrp());
    QCOMPARE(st.session, ::getsid(0));
    QVERIFY(st.startTime >= self.startTime);
    QVERIFY(st.rssPages > 0);
    bool listed = false;
    forEachProcPid(proc.get(), [&](pid_t p) { listed = listed || p == pid; });
    QVERIFY(listed);
    sleeper.kill();
    QVERIFY(sleeper.waitForFinished());
    QVERIFY(!readProcStat(proc.get(), pid, st)); // reaped: gone
}

QTEST_GUILESS_MAIN(TestProcess)
#include "tst_process.moc"
