// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Terminal sessions on a real PTY (core/ptysession.h, backends/ptyfactory.h): a shell in the
// workspace, output, the window size seen by programs, Ctrl+C, the exit code, the end of the
// whole process tree, the process registry and the audit records (never the text).

#include "bwrapsandboxbackend.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "processptysession.h"
#include "processregistry.h"
#include "pty.h"
#include "ptyfactory.h"
#include "sshfixture.h"
#include "testutil.h"

#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#include <signal.h>

using namespace elsai;

namespace {

constexpr int Wait = 15000; // ms; a bound, never a measurement

/// A session and everything it printed.
struct Driver
{
    explicit Driver(PtySession *s) : session(s)
    {
        QObject::connect(session.get(), &PtySession::output, session.get(),
                         [this](const QByteArray &b) { out += b; });
        QObject::connect(session.get(), &PtySession::finished, session.get(),
                         [this](int code, const QString &error) {
                             exitCode = code;
                             this->error = error;
                             done = true;
                         });
    }
    bool sees(const QByteArray &text) const { return out.contains(text); }
    std::unique_ptr<PtySession> session;
    QByteArray out;
    bool done = false;
    int exitCode = -2;
    QString error;
};

bool alive(qint64 pid)
{
    return ::kill(pid_t(pid), 0) == 0 || errno == EPERM;
}

} // namespace

class TestPtySession : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QTemporaryDir m_bwrapDir;
    std::shared_ptr<LocalSandboxBackend> m_backend;
    BackendPtr m_bwrap;
    QString m_bwrapSkip;
    test::SshServer m_sshd;
    BackendPtr m_ssh;
    QString m_sshSkip;

    std::unique_ptr<Driver> open(int cols = 80, int rows = 24)
    {
        auto d = std::make_unique<Driver>(createPtySession(m_backend, QStringLiteral("ws1")));
        d->session->start(cols, rows);
        return d;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        LocalSandboxBackend::Options o;
        o.env.insert(QStringLiteral("SHELL"), QStringLiteral("/bin/bash"));
        o.env.insert(QStringLiteral("PS1"), QStringLiteral("$ "));
        o.killGraceMs = 300;
        m_backend = std::make_shared<LocalSandboxBackend>(m_dir.path(), o);
        m_backend->create();

        try {
            LocalSandboxBackend::Options base;
            base.killGraceMs = 300;
            auto bwrap = std::make_shared<BwrapSandboxBackend>(m_bwrapDir.path(), base,
                                                               BwrapSandboxBackend::Options());
            bwrap->create();
            m_bwrap = bwrap;
        } catch (const SandboxError &e) {
            m_bwrapSkip = e.message();
        }
        if (m_sshd.start()) {
            try {
                auto ssh = m_sshd.makeBackend(QStringLiteral("pty"));
                ssh->create();
                m_ssh = ssh;
            } catch (const SandboxError &e) {
                m_sshSkip = e.message();
            }
        } else {
            m_sshSkip = m_sshd.error();
        }
    }

    /// The same session on every backend with a PTY: colours, the window size after a resize,
    /// Ctrl+C, the exit code, the audit record.
    void everyBackend_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::newRow("local") << QStringLiteral("local");
        QTest::newRow("bwrap") << QStringLiteral("bwrap");
        QTest::newRow("ssh") << QStringLiteral("ssh");
    }
    void everyBackend()
    {
        QFETCH(QString, backend);
        BackendPtr b = backend == QLatin1String("local")   ? BackendPtr(m_backend)
                       : backend == QLatin1String("bwrap") ? m_bwrap
                                                           : m_ssh;
        if (!b)
            QSKIP(qPrintable(backend == QLatin1String("bwrap") ? m_bwrapSkip : m_sshSkip));
        test::AuditCapture audit;
        Driver d(createPtySession(b, QStringLiteral("every")));
        d.session->start(80, 24);
        QTRY_VERIFY2_WITH_TIMEOUT(d.session->isRunning(), qPrintable(d.error), Wait);
        d.session->write("printf '\\033[1;31m%s\\033[0m\\n' \"x$((6*7))y\"\n");
        QTRY_VERIFY2_WITH_TIMEOUT(d.sees("\x1b[1;31mx42y\x1b[0m"), d.out.right(300).constData(),
                                  Wait);
        d.session->resize(91, 27);
        // ssh forwards the window change from its own loop: a command typed at once may run
        // before the remote side has it. Ask again until it has (bounded).
        for (int attempt = 0; attempt < 10 && !d.sees("c91l27"); ++attempt) {
            d.session->write("echo \"c$(tput cols)l$(tput lines)\"\n");
            (void)QTest::qWaitFor([&] { return d.sees("c91l27"); }, 1500);
        }
        QVERIFY2(d.sees("c91l27"), d.out.right(300).constData());
        d.session->write("echo \"start-$((1+2))\"; sleep 1000; echo \"slept-$((1+1))\"\n");
        QTRY_VERIFY_WITH_TIMEOUT(d.sees("start-3"), Wait);
        QTest::qWait(200); // into the sleep (an earlier ^C ends the list just the same)
        d.session->write("\x03");
        d.session->write("echo \"after-$((2+3))\"\n");
        QTRY_VERIFY2_WITH_TIMEOUT(d.sees("after-5"), d.out.right(300).constData(), Wait);
        QVERIFY(!d.sees("slept-2"));
        d.session->write("exit 3\n");
        QTRY_VERIFY_WITH_TIMEOUT(d.done, Wait);
        QCOMPARE(d.exitCode, 3);
        const auto closes = audit.named(QStringLiteral("terminal.close"));
        QCOMPARE(closes.size(), 1);
        QCOMPARE(closes.first().fields.value(QStringLiteral("backend")).toString(), b->typeName());
        QCOMPARE(closes.first().fields.value(QStringLiteral("bytes_out")).toInteger(),
                 qint64(d.out.size()));
    }

    void supportAndRefusals()
    {
        QVERIFY(!ptySupport(nullptr).available);
        QVERIFY(!ptySupport(nullptr).reason.isEmpty());
        QVERIFY(ptySupport(m_backend.get()).available);

        // A backend that is not running: the start fails, audited without text.
        test::AuditCapture audit;
        auto closed = std::make_shared<LocalSandboxBackend>(m_dir.path());
        Driver d(createPtySession(closed, QStringLiteral("ws-closed")));
        d.session->start(80, 24);
        QTRY_VERIFY_WITH_TIMEOUT(d.done, Wait);
        QCOMPARE(d.exitCode, -1);
        QVERIFY2(d.error.contains(QLatin1String("start it")), qPrintable(d.error));
        const auto opens = audit.named(QStringLiteral("terminal.open"));
        QCOMPARE(opens.size(), 1);
        QCOMPARE(opens.first().outcome, QStringLiteral("error"));
        QVERIFY(audit.named(QStringLiteral("terminal.close")).isEmpty());
    }

    void shellInWorkspaceWithColoursAndExitCode()
    {
        test::AuditCapture audit;
        auto d = open();
        QTRY_VERIFY_WITH_TIMEOUT(d->session->isRunning(), Wait);
        QCOMPARE(d->session->programName(), QStringLiteral("bash"));
        const QByteArray typed =
            "printf '\\033[1;31m%s\\033[0m\\n' \"x$((6*7))y\"; pwd; echo \"t=$TERM\"\n";
        d->session->write(typed);
        QTRY_VERIFY_WITH_TIMEOUT(d->sees("\x1b[1;31mx42y\x1b[0m"), Wait);
        QTRY_VERIFY_WITH_TIMEOUT(d->sees(QFileInfo(m_dir.path()).canonicalFilePath().toUtf8()),
                                 Wait);
        QTRY_VERIFY_WITH_TIMEOUT(d->sees("t=xterm-256color"), Wait);
        d->session->write("exit 3\n");
        QTRY_VERIFY_WITH_TIMEOUT(d->done, Wait);
        QCOMPARE(d->exitCode, 3);
        QVERIFY(d->error.isEmpty());

        const auto opens = audit.named(QStringLiteral("terminal.open"));
        const auto closes = audit.named(QStringLiteral("terminal.close"));
        QCOMPARE(opens.size(), 1);
        QCOMPARE(closes.size(), 1);
        QCOMPARE(opens.first().actor, QStringLiteral("human"));
        QCOMPARE(opens.first().fields.value(QStringLiteral("backend")).toString(),
                 QStringLiteral("LocalSandboxBackend"));
        const QJsonObject f = closes.first().fields;
        QCOMPARE(f.value(QStringLiteral("bytes_in")).toInteger(),
                 qint64(typed.size() + QByteArray("exit 3\n").size()));
        QCOMPARE(f.value(QStringLiteral("bytes_out")).toInteger(), qint64(d->out.size()));
        QVERIFY(f.value(QStringLiteral("duration_ms")).toInteger() >= 0);
        QCOMPARE(f.value(QStringLiteral("exit_code")).toInt(), 3);
        // Never what was typed or shown.
        for (const AuditEvent &e : audit.events()) {
            const QByteArray json = QJsonDocument(e.toJson()).toJson();
            QVERIFY2(!json.contains("printf") && !json.contains("x42y"), json.constData());
        }
    }

    void windowSizeReachesTheProgram()
    {
        auto d = open(80, 24);
        QTRY_VERIFY_WITH_TIMEOUT(d->session->isRunning(), Wait);
        d->session->write("echo \"c$(tput cols)l$(tput lines)\"\n");
        QTRY_VERIFY_WITH_TIMEOUT(d->sees("c80l24"), Wait);
        d->session->resize(101, 33);
        QCOMPARE(ptySize(static_cast<ProcessPtySession *>(d->session.get())->masterFd()),
                 std::make_pair(101, 33));
        d->session->write("echo \"c$(tput cols)l$(tput lines)\"\n");
        QTRY_VERIFY_WITH_TIMEOUT(d->sees("c101l33"), Wait);
        d->session->terminate();
        QTRY_VERIFY_WITH_TIMEOUT(d->done, Wait);
    }

    void aResizeWhileStartingReachesTheProgram()
    {
        auto d = open(80, 24);
        d->session->resize(70, 20); // the view laid out before the shell ran
        QTRY_VERIFY_WITH_TIMEOUT(d->session->isRunning(), Wait);
        d->session->write("echo \"c$(tput cols)l$(tput lines)\"\n");
        QTRY_VERIFY2_WITH_TIMEOUT(d->sees("c70l20"), d->out.right(200).constData(), Wait);
        d->session->terminate();
        QTRY_VERIFY_WITH_TIMEOUT(d->done, Wait);
    }

    void ctrlCInterruptsTheForegroundProgram()
    {
        auto d = open();
        QTRY_VERIFY_WITH_TIMEOUT(d->session->isRunning(), Wait);
        QVERIFY(!d->session->hasForegroundProgram());
        d->session->write("sleep 1000\n");
        QTRY_VERIFY_WITH_TIMEOUT(d->session->hasForegroundProgram(), Wait);
        d->session->write("\x03");
        QTRY_VERIFY_WITH_TIMEOUT(!d->session->hasForegroundProgram(), Wait);
        d->session->write("echo \"after-$((2+3))\"\n");
        QTRY_VERIFY_WITH_TIMEOUT(d->sees("after-5"), Wait);
        QVERIFY(d->session->isRunning()); // the shell itself survived
        d->session->terminate();
        QTRY_VERIFY_WITH_TIMEOUT(d->done, Wait);
    }

    // The Processes panel shows what runs in a terminal, and its Stop ends that program
    // (SIGKILL when it ignores SIGTERM) with the shell left running; then the terminal.
    void processesShowAndStopTheForegroundProgram_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::newRow("local") << QStringLiteral("local");
        QTest::newRow("bwrap") << QStringLiteral("bwrap");
    }
    void processesShowAndStopTheForegroundProgram()
    {
        QFETCH(QString, backend);
        const BackendPtr b = backend == QLatin1String("local") ? BackendPtr(m_backend) : m_bwrap;
        if (!b)
            QSKIP(qPrintable(m_bwrapSkip));
        Driver d(createPtySession(b, QStringLiteral("fg")));
        d.session->start(80, 24);
        QTRY_VERIFY2_WITH_TIMEOUT(d.session->isRunning(), qPrintable(d.error), Wait);
        const quint64 id = d.session->processId();
        const auto foreground = [id] {
            const auto e = ProcessRegistry::instance().find(id);
            return e ? e->foreground : QStringLiteral("(gone)");
        };
        QCOMPARE(foreground(), QString());
        d.session->write("sleep 1003\n");
        QTRY_COMPARE_WITH_TIMEOUT(foreground(), QStringLiteral("sleep 1003"), Wait);
        // Typed ahead: the shell runs it once the sleep is over.
        d.session->write("(trap '' TERM; echo \"deaf$((3*3))\"; exec sleep 1004)\n");
        QVERIFY(ProcessRegistry::instance().stop(id)); // SIGTERM ends the sleep
        QTRY_VERIFY_WITH_TIMEOUT(d.sees("deaf9"), Wait);
        QTRY_COMPARE_WITH_TIMEOUT(foreground(), QStringLiteral("sleep 1004"), Wait);
        QVERIFY(ProcessRegistry::instance().stop(id)); // ignores TERM: KILL after the grace
        QTRY_COMPARE_WITH_TIMEOUT(foreground(), QString(), Wait);
        d.session->write("echo \"alive$((4*4))\"\n");
        QTRY_VERIFY_WITH_TIMEOUT(d.sees("alive16"), Wait);
        QVERIFY(d.session->isRunning()); // the shell stayed
        QTRY_VERIFY_WITH_TIMEOUT(!ProcessRegistry::instance().find(id)->stopping, Wait);

        QVERIFY(ProcessRegistry::instance().stop(id)); // nothing in the foreground: the terminal
        QTRY_VERIFY_WITH_TIMEOUT(d.done, Wait);
    }

    void closingEndsTheWholeTree()
    {
        auto d = open();
        QTRY_VERIFY_WITH_TIMEOUT(d->session->isRunning(), Wait);
        const qint64 shell = d->session->leaderPid();
        QVERIFY(shell > 0);
        // A job of its own group, and one that left the session.
        d->session->write(
            "sleep 1001 & echo \"job=$!\"; setsid sh -c 'echo \"esc=$$\"; exec sleep 1002' &\n");
        QTRY_VERIFY_WITH_TIMEOUT(d->sees("job=") && d->sees("esc="), Wait);
        QTRY_VERIFY_WITH_TIMEOUT(QRegularExpression(QStringLiteral("esc=(\\d+)\\s"))
                                     .match(QString::fromUtf8(d->out))
                                     .hasMatch(),
                                 Wait);
        const auto pidOf = [&](const QString &name) {
            return QRegularExpression(name + QStringLiteral("=(\\d+)\\s"))
                .match(QString::fromUtf8(d->out))
                .captured(1)
                .toLongLong();
        };
        const qint64 job = pidOf(QStringLiteral("job"));
        const qint64 escaped = pidOf(QStringLiteral("esc"));
        QVERIFY(job > 0 && escaped > 0);
        QVERIFY(alive(job));
        QTRY_VERIFY_WITH_TIMEOUT(alive(escaped), Wait);

        const auto listed = ProcessRegistry::instance().list(QStringLiteral("ws1"));
        QCOMPARE(listed.size(), 1);
        QCOMPARE(listed.first().kind, ProcessEntry::Kind::Terminal);
        QCOMPARE(listed.first().pid, shell);
        QCOMPARE(listed.first().id, d->session->processId());

        // Stopping it from the Processes panel ends the session like closing its tab.
        QVERIFY(ProcessRegistry::instance().stop(d->session->processId()));
        QTRY_VERIFY_WITH_TIMEOUT(d->done, Wait);
        QVERIFY(ProcessRegistry::instance().list(QStringLiteral("ws1")).isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(!alive(shell) && !alive(job) && !alive(escaped), Wait);
    }

    void inputBeforeStartIsIgnoredAndTerminateBeforeStartFinishes()
    {
        Driver d(createPtySession(m_backend, QStringLiteral("ws1")));
        d.session->write("echo nope\n");
        QCOMPARE(d.session->bytesIn(), 0);
        d.session->terminate();
        QVERIFY(d.done);
        QCOMPARE(d.session->state(), PtySession::State::Finished);
    }
};

QTEST_GUILESS_MAIN(TestPtySession)
#include "tst_ptysession.moc"
