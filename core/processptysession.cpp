// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "processptysession.h"

#include "errors.h"
#include "pty.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QPointer>
#include <QSocketNotifier>
#include <QTimer>

#include <cerrno>
#include <csignal>

#include <unistd.h>

Q_LOGGING_CATEGORY(lcPty, "elsai.terminal", QtInfoMsg)

namespace elsai {

namespace {
constexpr qsizetype ChunkBytes = 16 * 1024;
constexpr qsizetype FinalDrainBytes = 4 * 1024 * 1024; // what is left when the program ends
constexpr int DefaultKillGraceMs = 500;
constexpr int ForegroundKillGraceMs = 2000; // a program stopped from the Processes panel
} // namespace

QStringList terminalEnvironment(const QStringList &base, const QStringList &extra)
{
    QStringList env;
    env.reserve(base.size() + extra.size() + 2);
    for (const QString &kv : base) {
        if (!kv.startsWith(QLatin1String("TERM=")) && !kv.startsWith(QLatin1String("COLORTERM=")))
            env.append(kv);
    }
    env << QStringLiteral("TERM=xterm-256color") << QStringLiteral("COLORTERM=truecolor");
    env << extra;
    return env;
}

QStringList idleShellNames()
{
    return {QStringLiteral("bash"), QStringLiteral("sh"),   QStringLiteral("dash"),
            QStringLiteral("zsh"),  QStringLiteral("fish"), QStringLiteral("ksh"),
            QStringLiteral("mksh"), QStringLiteral("tcsh"), QStringLiteral("csh")};
}

/// What the session's thread shares with the session.
struct ProcessPtySession::Shared
{
    std::shared_ptr<CancellationToken> cancel = std::make_shared<CancellationToken>();
    UniqueFd slave;
    std::atomic<qint64> pid{0};
};

ProcessPtySession::ProcessPtySession(QString workspaceId, QString backendType, Launcher launcher,
                                     QObject *parent)
    : PtySession(std::move(workspaceId), std::move(backendType), parent),
      m_launcher(std::move(launcher)), m_shared(std::make_shared<Shared>())
{
}

ProcessPtySession::~ProcessPtySession()
{
    closeMaster();
    m_shared->cancel->cancel();
    if (m_thread.joinable())
        m_thread.join();
}

int ProcessPtySession::masterFd() const
{
    return m_master;
}

void ProcessPtySession::doStart(int cols, int rows)
{
    PtyPair pty;
    try {
        pty = openPty(cols, rows);
    } catch (const SandboxError &e) {
        reportFinished(-1, e.message());
        return;
    }
    m_master = pty.master.release();
    m_shared->slave = std::move(pty.slave);
    m_readNotifier = new QSocketNotifier(m_master, QSocketNotifier::Read, this);
    connect(m_readNotifier, &QSocketNotifier::activated, this, &ProcessPtySession::onReadable);
    m_writeNotifier = new QSocketNotifier(m_master, QSocketNotifier::Write, this);
    m_writeNotifier->setEnabled(false);
    connect(m_writeNotifier, &QSocketNotifier::activated, this, &ProcessPtySession::onWritable);

    // The thread posts back to us; `self` notices when we are gone (the destructor joins the
    // thread first, so a post never reaches a half-destroyed session).
    QPointer<ProcessPtySession> self(this);
    m_thread = std::thread([self, shared = m_shared, launcher = m_launcher] {
        auto post = [self](auto fn) {
            QMetaObject::invokeMethod(self.data(), std::move(fn), Qt::QueuedConnection);
        };
        int exitCode = -1;
        QString error;
        try {
            PtyLaunch launch = launcher();
            ProcessSpec spec = launch.spec;
            spec.ttyFd = shared->slave.get();
            spec.timeoutMs = 0;
            spec.cancel = shared->cancel;
            if (spec.killGraceMs <= 0)
                spec.killGraceMs = DefaultKillGraceMs;
            const QString name = launch.programName;
            const QStringList idle = launch.idleNames;
            spec.onStarted = [&](qint64 pid) {
                shared->pid = pid;
                post([self, pid, name, idle] {
                    if (!self)
                        return;
                    self->setProgramName(name);
                    self->m_idleNames = idle;
                    self->reportStarted(pid);
                });
            };
            if (shared->cancel->isCancelled())
                throw OSError(QStringLiteral("the terminal was closed before it started"));
            const ProcessOutcome outcome = runProcess(spec);
            exitCode = outcome.exitCode;
            if (launch.cleanup)
                launch.cleanup();
        } catch (const SandboxError &e) {
            error = e.message();
        } catch (const std::exception &e) {
            error = QString::fromLocal8Bit(e.what());
        }
        shared->slave.reset();
        post([self, exitCode, error] {
            if (self)
                self->onProgramEnded(exitCode, error);
        });
    });
}

bool ProcessPtySession::readSome(qsizetype budget, int timeBudgetMs)
{
    QByteArray chunk;
    QElapsedTimer clock;
    clock.start();
    while (budget > 0 && m_master >= 0) {
        // The view parses what we report before we read on: stop when the turn is used up.
        if (timeBudgetMs >= 0 && clock.elapsed() >= timeBudgetMs)
            return true;
        chunk.resize(std::min(ChunkBytes, budget));
        const ssize_t n = ::read(m_master, chunk.data(), size_t(chunk.size()));
        if (n > 0) {
            chunk.truncate(n);
            budget -= n;
            reportOutput(chunk);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        return false; // EIO: every slave end is closed
    }
    return true;
}

void ProcessPtySession::onReadable()
{
    // A bounded amount per turn: the event loop paints and takes keys between the turns, and
    // the kernel's PTY buffer holds the rest back (the writer blocks: back-pressure).
    if (!readSome(ReadBudget, TimeBudgetMs) && m_readNotifier)
        m_readNotifier->setEnabled(false);
}

void ProcessPtySession::onWritable()
{
    while (!m_pending.isEmpty() && m_master >= 0) {
        const ssize_t n = ::write(m_master, m_pending.constData(), size_t(m_pending.size()));
        if (n > 0) {
            m_pending.remove(0, n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        m_pending.clear(); // the program is gone
    }
    if (m_writeNotifier)
        m_writeNotifier->setEnabled(!m_pending.isEmpty());
}

void ProcessPtySession::doWrite(const QByteArray &bytes)
{
    m_pending.append(bytes);
    onWritable();
}

void ProcessPtySession::doResize(int cols, int rows)
{
    if (m_master >= 0)
        setPtySize(m_master, cols, rows);
}

void ProcessPtySession::doTerminate()
{
    // Closing the master hangs the terminal up: the shell gets SIGHUP and passes it to its
    // jobs. The cancel then TERMs the group, KILLs it after the grace, and sweeps whatever
    // left the group (runProcess).
    closeMaster();
    m_shared->cancel->cancel();
}

pid_t ProcessPtySession::foregroundProgramGroup() const
{
    if (m_master < 0 || !isRunning())
        return 0;
    const pid_t group = ptyForegroundGroup(m_master);
    if (group <= 0 || group == pid_t(m_shared->pid.load()))
        return 0;
    const QString name = processName(group);
    return !name.isEmpty() && !m_idleNames.contains(name) ? group : 0;
}

bool ProcessPtySession::hasForegroundProgram() const
{
    return foregroundProgramGroup() != 0;
}

QString ProcessPtySession::foregroundCommand() const
{
    const pid_t group = foregroundProgramGroup();
    return group ? processCommandLine(group, ProcessEntry::MaxLabel) : QString();
}

bool ProcessPtySession::stopForeground()
{
    const pid_t group = foregroundProgramGroup();
    if (!group || ::kill(-group, SIGTERM) != 0)
        return false;
    // SIGKILL after the grace, only if that group still holds the terminal: a group id
    // freed in between may belong to another program by then.
    QTimer::singleShot(ForegroundKillGraceMs, this, [this, group] {
        if (m_master >= 0 && ptyForegroundGroup(m_master) == group)
            ::kill(-group, SIGKILL);
    });
    return true;
}

void ProcessPtySession::onProgramEnded(int exitCode, const QString &error)
{
    if (m_thread.joinable())
        m_thread.join();
    // What the program wrote just before it ended is still in the PTY.
    if (m_master >= 0)
        readSome(FinalDrainBytes);
    closeMaster();
    if (!error.isEmpty())
        qCInfo(lcPty) << "terminal of" << workspaceId() << "ended:" << error;
    reportFinished(exitCode, error);
}

void ProcessPtySession::closeMaster()
{
    delete m_readNotifier;
    m_readNotifier = nullptr;
    delete m_writeNotifier;
    m_writeNotifier = nullptr;
    m_pending.clear();
    if (m_master >= 0) {
        ::close(m_master);
        m_master = -1;
    }
}

} // namespace elsai
