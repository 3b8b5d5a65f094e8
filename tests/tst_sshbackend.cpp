// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// SshSandboxBackend against a throwaway sshd on 127.0.0.1 (tests/sshfixture.h). The "remote"
// is this machine, so the tests look at the remote folder and /proc directly.

#include "errors.h"
#include "renameexchanger.h"
#include "sandboxspec.h"
#include "sshfixture.h"
#include "testutil.h"

#include <QDirIterator>
#include <QRandomGenerator>
#include <QtConcurrent/QtConcurrentRun>
#include <QtTest>

#include <atomic>
#include <functional>
#include <thread>

#include <fcntl.h>
#include <stdio.h>

using namespace elsai;
using namespace elsai::test;

namespace {

/// Processes whose command line contains `needle` (the remote is this machine).
int processesWith(const QByteArray &needle)
{
    int n = 0;
    QDirIterator it(QStringLiteral("/proc"), QDir::Dirs | QDir::NoDotAndDotDot);
    while (it.hasNext()) {
        const QString dir = it.next();
        bool isPid = false;
        it.fileName().toInt(&isPid);
        if (!isPid)
            continue;
        QFile f(dir + QStringLiteral("/cmdline"));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        QByteArray cmd = f.readAll();
        cmd.replace('\0', ' ');
        if (cmd.contains(needle))
            ++n;
    }
    return n;
}

/// Polls (bounded) until no process carries `needle`: killed processes take a moment to go.
bool goneSoon(const QByteArray &needle)
{
    for (int i = 0; i < 100; ++i) {
        if (processesWith(needle) == 0)
            return true;
        QThread::msleep(100);
    }
    return false;
}

bool goneSoonPath(const QString &path)
{
    for (int i = 0; i < 100 && QFileInfo::exists(path); ++i)
        QThread::msleep(100);
    return !QFileInfo::exists(path);
}

} // namespace

class TestSshBackend : public QObject
{
    Q_OBJECT

private:
    SshServer m_sshd;
    std::shared_ptr<SshSandboxBackend> m_backend; ///< shared, created once
    QString ws() const { return m_backend->remoteWorkspace(); }

private Q_SLOTS:
    void initTestCase()
    {
        if (!m_sshd.start())
            QSKIP(qPrintable(m_sshd.error()));
        m_backend = m_sshd.makeBackend(QStringLiteral("shared"));
        m_backend->create();
    }
    void cleanupTestCase()
    {
        if (m_backend)
            m_backend->close();
        m_sshd.stop();
    }

    void createMakesTheRemoteWorkspace()
    {
        auto b = m_sshd.makeBackend(QStringLiteral("fresh"));
        QVERIFY(!b->isCreated());
        QVERIFY_THROWS_EXCEPTION(OSError, b->readFile(QStringLiteral("x")));
        b->create();
        b->create(); // idempotent
        QVERIFY(b->isCreated());
        QCOMPARE(b->remoteWorkspace(), m_sshd.remoteRoot() + QStringLiteral("/fresh"));
        QVERIFY(QFileInfo(b->remoteWorkspace()).isDir());
        QVERIFY(b->id().contains(QStringLiteral("127.0.0.1")));
        QCOMPARE(b->typeName(), QStringLiteral("SshSandboxBackend"));
        b->close();
        b->close();
        QVERIFY(!b->isCreated());
        QVERIFY(QFileInfo(m_sshd.remoteRoot() + QStringLiteral("/fresh")).isDir()); // kept
    }

    void invalidOptionsAreValueErrors()
    {
        auto o = m_sshd.backendOptions(QStringLiteral("../up"));
        QVERIFY_THROWS_EXCEPTION(ValueError, SshSandboxBackend{o});
        o = m_sshd.backendOptions(QStringLiteral("ok"));
        o.timeout = 0;
        QVERIFY_THROWS_EXCEPTION(ValueError, SshSandboxBackend{o});
        o = m_sshd.backendOptions(QStringLiteral("ok"));
        o.env.insert(QStringLiteral("A B"), QStringLiteral("x"));
        QVERIFY_THROWS_EXCEPTION(ValueError, SshSandboxBackend{o});
        o = m_sshd.backendOptions(QStringLiteral("ok"));
        o.target.host.clear();
        SshSandboxBackend b(o);
        QVERIFY_THROWS_EXCEPTION(ValueError, b.create());
        o = m_sshd.backendOptions(QStringLiteral("ok"));
        o.target.identityFile = m_sshd.path("no-such-key");
        SshSandboxBackend b2(o);
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b2.create());
    }

    void writeReadRoundTrip()
    {
        QByteArray binary(100000, '\0');
        for (char &c : binary)
            c = char(QRandomGenerator::global()->bounded(256));
        m_backend->writeFile(QStringLiteral("rt/deep/er/bin.dat"), binary);
        QCOMPARE(m_backend->readFile(QStringLiteral("rt/deep/er/bin.dat")), binary);
        QCOMPARE(readHostFile(ws() + QStringLiteral("/rt/deep/er/bin.dat")), binary);
        m_backend->writeFile(QStringLiteral("rt/a.txt"), "one");
        m_backend->writeFile(QStringLiteral("rt/a.txt"), "two");
        QCOMPARE(m_backend->readFile(QStringLiteral("./rt//a.txt")), QByteArray("two"));
        m_backend->writeFile(QStringLiteral("rt/empty"), QByteArray());
        QCOMPARE(m_backend->readFile(QStringLiteral("rt/empty")), QByteArray());
        const QString odd = QStringLiteral("rt/it's a \"name\" $(x) ü.txt");
        m_backend->writeFile(odd, "odd");
        QCOMPARE(m_backend->readFile(odd), QByteArray("odd"));
        QVERIFY(QFileInfo::exists(ws() + u'/' + odd));
    }

    void writeIsAtomicAndKeepsTheMode()
    {
        m_backend->writeFile(QStringLiteral("mode/run.sh"), "#!/bin/sh\n");
        const QString host = ws() + QStringLiteral("/mode/run.sh");
        QCOMPARE(QFileInfo(host).permissions() & QFile::ExeOwner, QFile::Permissions());
        QFile::setPermissions(host, QFile::permissions(host) | QFile::ExeOwner);
        m_backend->writeFile(QStringLiteral("mode/run.sh"), "#!/bin/sh\necho hi\n");
        QVERIFY(QFileInfo(host).permissions() & QFile::ExeOwner);
        // a hard link is replaced, never written through
        QVERIFY(::link(QFile::encodeName(host).constData(),
                       QFile::encodeName(ws() + QStringLiteral("/mode/hard")).constData()) == 0);
        m_backend->writeFile(QStringLiteral("mode/hard"), "new");
        QCOMPARE(readHostFile(host), QByteArray("#!/bin/sh\necho hi\n"));
        // no temp file left behind
        QStringList left =
            QDir(ws() + QStringLiteral("/mode")).entryList(QDir::Files | QDir::Hidden);
        left.sort();
        QCOMPARE(left, (QStringList{QStringLiteral("hard"), QStringLiteral("run.sh")}));
    }

    void listStatMakeRemove()
    {
        m_backend->makeDirs(QStringLiteral("ls/sub/deeper"));
        m_backend->writeFile(QStringLiteral("ls/f.txt"), "12345");
        QVERIFY(QFile::link(QStringLiteral("f.txt"), ws() + QStringLiteral("/ls/link")));
        const QList<FileInfo> list = m_backend->listDir(QStringLiteral("ls"));
        QCOMPARE(list.size(), 3);
        QCOMPARE(list[0].path, QStringLiteral("ls/f.txt"));
        QCOMPARE(list[0].size, std::optional<qint64>(5));
        QCOMPARE(list[0].type, FileInfo::Type::File);
        QCOMPARE(list[1].path, QStringLiteral("ls/link"));
        QCOMPARE(list[1].type, FileInfo::Type::Symlink);
        QCOMPARE(list[2].path, QStringLiteral("ls/sub"));
        QVERIFY(list[2].isDir);
        QVERIFY(list[0].mtimeMs > 0);
        QVERIFY(!m_backend->listDir(QStringLiteral(".")).isEmpty());

        const FileInfo f = m_backend->stat(QStringLiteral("ls/f.txt"));
        QCOMPARE(f.path, QStringLiteral("ls/f.txt"));
        QCOMPARE(f.size, std::optional<qint64>(5));
        QCOMPARE(m_backend->stat(QStringLiteral("ls/link")).type, FileInfo::Type::Symlink);
        QVERIFY(m_backend->stat(QStringLiteral("ls/sub")).isDir);
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, m_backend->stat(QStringLiteral("ls/nope")));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, m_backend->readFile(QStringLiteral("ls/nope")));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, m_backend->listDir(QStringLiteral("ls/nope")));
        QVERIFY_THROWS_EXCEPTION(IsADirectoryError, m_backend->readFile(QStringLiteral("ls/sub")));
        QVERIFY_THROWS_EXCEPTION(NotADirectoryError,
                                 m_backend->listDir(QStringLiteral("ls/f.txt")));
        QVERIFY_THROWS_EXCEPTION(IsADirectoryError,
                                 m_backend->writeFile(QStringLiteral("ls/sub"), "x"));
        QVERIFY_THROWS_EXCEPTION(NotADirectoryError,
                                 m_backend->writeFile(QStringLiteral("ls/f.txt/x"), "x"));

        m_backend->removeFile(QStringLiteral("ls/link")); // the link, not its target
        QVERIFY(QFileInfo::exists(ws() + QStringLiteral("/ls/f.txt")));
        QVERIFY_THROWS_EXCEPTION(IsADirectoryError,
                                 m_backend->removeFile(QStringLiteral("ls/sub")));
        m_backend->removeFile(QStringLiteral("ls/sub"), true);
        QVERIFY(!QFileInfo::exists(ws() + QStringLiteral("/ls/sub")));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError,
                                 m_backend->removeFile(QStringLiteral("ls/sub")));
        QVERIFY_THROWS_EXCEPTION(PermissionError, m_backend->removeFile(QStringLiteral(".")));
    }

    void pathEscapesAreRefused_data()
    {
        QTest::addColumn<QString>("path");
        QTest::newRow("dotdot") << QStringLiteral("../outside.txt");
        QTest::newRow("inner dotdot") << QStringLiteral("a/../../outside.txt");
        QTest::newRow("absolute") << QStringLiteral("/etc/passwd");
        QTest::newRow("symlinked folder") << QStringLiteral("esc/out/outside.txt");
        QTest::newRow("symlinked file") << QStringLiteral("esc/file");
        QTest::newRow("dangling symlink folder") << QStringLiteral("esc/dangling/x");
    }
    void pathEscapesAreRefused()
    {
        QFETCH(QString, path);
        // outside = the remote root, beside the workspace (a "prefix sibling" too)
        const QString outside = m_sshd.remoteRoot() + QStringLiteral("/shared-evil");
        QDir().mkpath(outside);
        writeHostFile(outside + QStringLiteral("/outside.txt"), "canary");
        QDir().mkpath(ws() + QStringLiteral("/esc"));
        QFile::link(outside, ws() + QStringLiteral("/esc/out"));
        QFile::link(outside + QStringLiteral("/outside.txt"), ws() + QStringLiteral("/esc/file"));
        QFile::link(outside + QStringLiteral("/newdir"), ws() + QStringLiteral("/esc/dangling"));

        QVERIFY_THROWS_EXCEPTION(PermissionError, m_backend->readFile(path));
        QVERIFY_THROWS_EXCEPTION(PermissionError, m_backend->writeFile(path, "pwned"));
        QVERIFY_THROWS_EXCEPTION(OSError, m_backend->listDir(path));
        QVERIFY_THROWS_EXCEPTION(OSError, m_backend->makeDirs(path + QStringLiteral("/d")));
        QVERIFY_THROWS_EXCEPTION(OSError, m_backend->execute(QStringLiteral("true"), 10, path));
        QCOMPARE(readHostFile(outside + QStringLiteral("/outside.txt")), QByteArray("canary"));
        QVERIFY(!QFileInfo::exists(outside + QStringLiteral("/newdir")));
        QVERIFY(!QFileInfo::exists(outside + QStringLiteral("/outside.txt/d")));
    }

    void specialFilesAreRefusedAtOnce()
    {
        QDir().mkpath(ws() + QStringLiteral("/special"));
        QVERIFY(::mkfifo(QFile::encodeName(ws() + QStringLiteral("/special/fifo")).constData(),
                         0600) == 0);
        // a FIFO would block `cat` forever: refused before it is opened
        QVERIFY_THROWS_EXCEPTION(OSError, m_backend->readFile(QStringLiteral("special/fifo")));
        QCOMPARE(m_backend->stat(QStringLiteral("special/fifo")).type, FileInfo::Type::Other);
    }

    void symlinksInsideAreFollowedForReads()
    {
        m_backend->writeFile(QStringLiteral("in/target.txt"), "inside");
        QFile::link(ws() + QStringLiteral("/in/target.txt"), ws() + QStringLiteral("/in/ln"));
        QCOMPARE(m_backend->readFile(QStringLiteral("in/ln")), QByteArray("inside"));
        // writing onto a symlink is refused even when it points inside
        QVERIFY_THROWS_EXCEPTION(PermissionError,
                                 m_backend->writeFile(QStringLiteral("in/ln"), "x"));
    }

    // tst_hostile races reads, listings and stats; this races everything that writes, removes,
    // enters or packs: an attacker swaps a folder and a link to outside (RENAME_EXCHANGE)
    // while the calls go through it. Nothing outside may change, no command may start
    // outside, and no flush may bring back outside content.
    void swappedFolderNeverRedirectsMutations()
    {
        auto b = m_sshd.makeBackend(QStringLiteral("racews"));
        b->create();
        const QString root = b->remoteWorkspace();
        const QString out = m_sshd.remoteRoot() + QStringLiteral("/race-mut-out");
        QDir().mkpath(out);
        writeHostFile(out + QStringLiteral("/victim"), "outside");
        writeHostFile(out + QStringLiteral("/flushed.txt"), "outside");
        b->writeFile(QStringLiteral("sw/victim"), "inside");
        b->writeFile(QStringLiteral("sw/flushed.txt"), "inside");
        QVERIFY(QFile::link(out, root + QStringLiteral("/swl")));
        const QByteArray a = QFile::encodeName(root + QStringLiteral("/sw"));
        const QByteArray l = QFile::encodeName(root + QStringLiteral("/swl"));
        elsai::test::RenameExchanger attacker(a, l);
        QTemporaryDir project;
        int outsideCwd = 0, outsideFlush = 0, done = 0;
        for (int round = 0; round < 25; ++round) {
            const QString n = QString::number(round);
            const auto attempt = [&](const std::function<void()> &call) {
                try {
                    call();
                    ++done;
                } catch (const SandboxError &) {
                }
            };
            attempt([&] { b->writeFile(QStringLiteral("sw/new") + n, "x"); });
            attempt([&] { b->makeDirs(QStringLiteral("sw/d") + n + QStringLiteral("/e")); });
            attempt([&] { b->removeFile(QStringLiteral("sw/victim")); });
            attempt([&] { b->writeFile(QStringLiteral("sw/victim"), "inside"); });
            attempt([&] {
                const QString pwd =
                    b->execute(QStringLiteral("pwd -P"), 10, QStringLiteral("sw")).output;
                outsideCwd += pwd.startsWith(root + QLatin1Char('/')) ? 0 : 1;
            });
            if (round % 5 == 4) {
                attempt([&] { b->syncArtifacts(project.path(), defaultSandboxSyncPolicy()); });
                QDirIterator it(project.path(), QDir::Files | QDir::Hidden,
                                QDirIterator::Subdirectories);
                while (it.hasNext())
                    outsideFlush += readHostFile(it.next()).contains("outside") ? 1 : 0;
            }
        }
        attacker.stop();
        qInfo("ssh mutation race: 25 rounds, %lld swaps, %d calls went through", attacker.swaps(),
              done);
        QVERIFY(attacker.swaps() > 0);
        QVERIFY(done > 0);
        QCOMPARE(outsideCwd, 0);
        QCOMPARE(outsideFlush, 0);
        QStringList left =
            QDir(out).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
        left.sort();
        QCOMPARE(left, QStringList({QStringLiteral("flushed.txt"), QStringLiteral("victim")}));
        QCOMPARE(readHostFile(out + QStringLiteral("/victim")), QByteArray("outside"));
        QCOMPARE(readHostFile(out + QStringLiteral("/flushed.txt")), QByteArray("outside"));
        b->close();
    }

    void executeBasics()
    {
        ExecuteResult r = m_backend->execute(
            QStringLiteral("echo out; echo err >&2; printf '%s\\n' \"it's\"; exit 7"));
        QCOMPARE(r.exitCode, 7);
        QCOMPARE(r.output, QStringLiteral("out\nit's\n"));
        QCOMPARE(r.stderr_, QStringLiteral("err\n"));
        QVERIFY(!r.timedOut);
        QVERIFY(!r.truncated);

        r = m_backend->execute(QStringLiteral("pwd -P"));
        QCOMPARE(r.output.trimmed(), ws());
        m_backend->makeDirs(QStringLiteral("cwd/sub"));
        r = m_backend->execute(QStringLiteral("pwd -P"), {}, QStringLiteral("cwd/sub"));
        QCOMPARE(r.output.trimmed(), ws() + QStringLiteral("/cwd/sub"));
        QVERIFY_THROWS_EXCEPTION(
            FileNotFoundError,
            m_backend->execute(QStringLiteral("true"), {}, QStringLiteral("cwd/missing")));

        r = m_backend->execute(QStringLiteral("exit 255"));
        QCOMPARE(r.exitCode, 255); // the command's own 255 is not a connection error
        r = m_backend->execute(QStringLiteral("kill -9 $$"));
        QCOMPARE(r.exitCode, 137);
        r = m_backend->execute(QStringLiteral("read x; echo \"[$x]\""));
        QCOMPARE(r.output, QStringLiteral("[]\n")); // stdin at EOF
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 m_backend->execute(QStringLiteral("#").repeated(200000)));
        // a command that starts with '-' is a command, not an option of sh
        QCOMPARE(m_backend->execute(QStringLiteral("-v")).exitCode, 127);
    }

    void executeEnvironment()
    {
        ExecuteOptions opts;
        opts.env.insert(QStringLiteral("FOO"), QStringLiteral("a b 'c' $HOME"));
        ExecuteResult r = m_backend->execute(QStringLiteral("printf '%s' \"$FOO\""), {}, {}, opts);
        QCOMPARE(r.output, QStringLiteral("a b 'c' $HOME"));
        auto o = m_sshd.backendOptions(QStringLiteral("envws"));
        o.env.insert(QStringLiteral("BASE"), QStringLiteral("1"));
        SshSandboxBackend b(o);
        b.create();
        r = b.execute(QStringLiteral("echo $BASE$FOO"), {}, {}, opts);
        QCOMPARE(r.output, QStringLiteral("1a b 'c' $HOME\n"));
        ExecuteOptions bad;
        bad.env.insert(QStringLiteral("1X"), QStringLiteral("y"));
        QVERIFY_THROWS_EXCEPTION(ValueError, b.execute(QStringLiteral("true"), {}, {}, bad));
        b.close();
    }

    void outputCapAndStreaming()
    {
        auto o = m_sshd.backendOptions(QStringLiteral("capws"));
        o.maxOutputBytes = 1000;
        SshSandboxBackend b(o);
        b.create();
        QByteArray streamed;
        ExecuteOptions opts;
        opts.onOutput = [&](OutputChannel, const QByteArray &chunk) { streamed += chunk; };
        const ExecuteResult r =
            b.execute(QStringLiteral("head -c 200000 /dev/zero | tr '\\0' x"), {}, {}, opts);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.truncated);
        QCOMPARE(r.output.size(), 1000);
        QCOMPARE(streamed.size(), 1000);
        b.close();
    }

    void timeoutKillsTheRemoteTree()
    {
        // a group member, a grandchild, and one that left the group with setsid
        const ExecuteResult r = m_backend->execute(
            QStringLiteral("sleep 4242.1 & (sleep 4242.2 &) ; setsid sleep 4242.3 & "
                           "echo started; sleep 4242.4"),
            1.0);
        QCOMPARE(r.exitCode, 124);
        QVERIFY(r.timedOut);
        QCOMPARE(r.output, QStringLiteral("started\n"));
        QVERIFY2(goneSoon("sleep 4242."), "a remote process outlived the timeout");
    }

    void backgroundChildrenDoNotOutliveTheCall()
    {
        const ExecuteResult r =
            m_backend->execute(QStringLiteral("sleep 4343.1 >/dev/null 2>&1 & echo done"), 60);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.output, QStringLiteral("done\n"));
        QVERIFY(!r.timedOut);
        QVERIFY2(goneSoon("sleep 4343.1"), "a background child outlived the call");
    }

    void cancelKillsTheRemoteTree()
    {
        ExecuteOptions opts;
        opts.cancel = std::make_shared<CancellationToken>();
        // cancel once the remote tree surely runs (its first output arrived)
        opts.onOutput = [token = opts.cancel](OutputChannel, const QByteArray &chunk) {
            if (chunk.contains("started"))
                token->cancel();
        };
        const ExecuteResult r = m_backend->execute(
            QStringLiteral("setsid sleep 4444.1 & echo started; sleep 4444.2"), 60, {}, opts);
        QVERIFY(r.cancelled);
        QVERIFY(!r.timedOut);
        QVERIFY2(goneSoon("sleep 4444."), "a remote process outlived the cancel");
    }

    void concurrentCalls()
    {
        QList<QFuture<bool>> calls;
        for (int i = 0; i < 8; ++i) {
            calls << QtConcurrent::run([this, i] {
                const QString p = QStringLiteral("conc/%1.txt").arg(i);
                m_backend->writeFile(p, QByteArray::number(i));
                const ExecuteResult r = m_backend->execute(QStringLiteral("cat ") + p);
                return r.output == QString::number(i) &&
                       m_backend->readFile(p) == QByteArray::number(i);
            });
        }
        for (auto &f : calls)
            QVERIFY(f.result());
    }

    void unknownHostKeyIsRefused()
    {
        auto o = m_sshd.backendOptions(QStringLiteral("hk"));
        o.target.knownHostsFile = m_sshd.path("empty_known_hosts");
        writeHostFile(o.target.knownHostsFile, "");
        SshSandboxBackend b(o);
        try {
            b.create();
            QFAIL("an unknown host key was accepted");
        } catch (const PermissionError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("host key is not in")),
                     qPrintable(e.message()));
            QVERIFY(e.message().contains(QStringLiteral("ssh-keyscan")));
        }
        QVERIFY(!b.isCreated());
    }

    void changedHostKeyIsRefused()
    {
        // another ed25519 key recorded for the same [127.0.0.1]:port
        const QString other = m_sshd.path("other_host");
        QProcess::execute(QStringLiteral("ssh-keygen"),
                          {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                           QStringLiteral("-N"), QString(), QStringLiteral("-f"), other});
        QFile pub(other + QStringLiteral(".pub"));
        QVERIFY(pub.open(QIODevice::ReadOnly));
        const QList<QByteArray> parts = pub.readAll().trimmed().split(' ');
        auto o = m_sshd.backendOptions(QStringLiteral("hk2"));
        o.target.knownHostsFile = m_sshd.path("wrong_known_hosts");
        writeHostFile(o.target.knownHostsFile, "[127.0.0.1]:" + QByteArray::number(m_sshd.port()) +
                                                   ' ' + parts[0] + ' ' + parts[1] + '\n');
        SshSandboxBackend b(o);
        try {
            b.create();
            QFAIL("a changed host key was accepted");
        } catch (const PermissionError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("CHANGED")), qPrintable(e.message()));
        }
    }

    void badKeyIsRefused()
    {
        const QString stranger = m_sshd.path("stranger_key");
        QProcess::execute(QStringLiteral("ssh-keygen"),
                          {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                           QStringLiteral("-N"), QString(), QStringLiteral("-f"), stranger});
        auto o = m_sshd.backendOptions(QStringLiteral("badkey"));
        o.target.identityFile = stranger;
        SshSandboxBackend b(o);
        try {
            b.create();
            QFAIL("an unauthorized key logged in");
        } catch (const PermissionError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("login was refused")),
                     qPrintable(e.message()));
            QVERIFY(e.message().contains(QStringLiteral("authorized_keys")));
        }
    }

    void unreachableHostIsAnOSError()
    {
        auto o = m_sshd.backendOptions(QStringLiteral("down"));
        o.target.port = 1; // nothing listens there
        SshSandboxBackend b(o);
        QVERIFY_THROWS_EXCEPTION(OSError, b.create());
    }

    void seedAndFlushRoundTrip()
    {
        QTemporaryDir project;
        const QString p = project.path();
        writeHostFile(p + QStringLiteral("/src/app.py"), "print('v1')\n");
        writeHostFile(p + QStringLiteral("/README.md"), "readme v1\n");
        writeHostFile(p + QStringLiteral("/notes.md"), "notes v1\n");
        writeHostFile(p + QStringLiteral("/node_modules/dep/index.js"), "x");
        writeHostFile(p + QStringLiteral("/.git/config"), "secret");
        writeHostFile(p + QStringLiteral("/key.pem"), "secret");
        QFile::link(QStringLiteral("/etc/passwd"), p + QStringLiteral("/passwd-link"));
        QDir().mkpath(p + QStringLiteral("/empty/folder"));

        auto b = m_sshd.makeBackend(QStringLiteral("seedws"));
        b->create();
        QList<QPair<int, int>> steps;
        const WorkspaceSeedResult seeded =
            b->seedWorkspace(p, DEFAULT_SANDBOX_SEED_EXCLUDES, [&](int d, int t) {
                steps.append({d, t});
            });
        QVERIFY2(seeded.success(), qPrintable(seeded.errors.join(u'\n')));
        QCOMPARE(seeded.filesSeeded, 3);
        QCOMPARE(seeded.bytesSeeded, qint64(12 + 10 + 9));
        QVERIFY(seeded.skippedPaths.contains(QStringLiteral("node_modules")));
        QVERIFY(seeded.skippedPaths.contains(QStringLiteral(".git")));
        QVERIFY(seeded.skippedPaths.contains(QStringLiteral("key.pem")));
        QVERIFY(seeded.skippedPaths.contains(QStringLiteral("passwd-link")));
        QCOMPARE(steps.last(), qMakePair(3, 3));
        const QString remote = b->remoteWorkspace();
        QCOMPARE(readHostFile(remote + QStringLiteral("/src/app.py")), QByteArray("print('v1')\n"));
        QVERIFY(QFileInfo(remote + QStringLiteral("/empty/folder")).isDir());
        QVERIFY(!QFileInfo::exists(remote + QStringLiteral("/.git")));
        QVERIFY(!QFileInfo::exists(remote + QStringLiteral("/passwd-link")));
        QCOMPARE(b->seedBaseline().size(), 3);
        QCOMPARE(b->seedBaseline().value(QStringLiteral("README.md")).size, 10);

        // sandbox: change app.py and README.md, add a file and a symlink; host: change
        // README.md (conflict) and notes.md (host only)
        QThread::msleep(20); // a distinct mtime on coarse clocks
        QCOMPARE(b->execute(QStringLiteral("echo \"print('v2')\" > src/app.py && "
                                           "echo 'readme sandbox' > README.md && "
                                           "echo new > src/new.py && ln -s /etc/passwd src/pw && "
                                           "mkdir node_modules && echo {} > node_modules/p.json"))
                     .exitCode,
                 0);
        writeHostFile(p + QStringLiteral("/README.md"), "readme host\n");
        writeHostFile(p + QStringLiteral("/notes.md"), "notes host\n");

        const WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
        const SyncPlan plan = b->planSync(p, policy);
        QHash<QString, SyncPlanEntry::Action> actions;
        for (const SyncPlanEntry &e : plan.entries)
            actions.insert(e.path, e.action);
        using A = SyncPlanEntry::Action;
        QCOMPARE(actions.value(QStringLiteral("src/app.py")), A::Update);
        QCOMPARE(actions.value(QStringLiteral("src/new.py")), A::Add);
        QCOMPARE(actions.value(QStringLiteral("README.md")), A::Conflict);
        QCOMPARE(actions.value(QStringLiteral("notes.md")), A::KeepHost);
        QCOMPARE(actions.value(QStringLiteral("src/pw")), A::SkippedSymlink);
        QVERIFY(!actions.contains(QStringLiteral("node_modules/p.json"))); // excluded

        const WorkspaceSyncResult synced = b->syncArtifacts(p, policy);
        QCOMPARE(synced.filesSynced, 2);
        QCOMPARE(synced.conflicts, QStringList{QStringLiteral("README.md")});
        QVERIFY(!synced.success());
        QVERIFY(synced.skippedPaths.contains(QStringLiteral("src/pw")));
        QCOMPARE(readHostFile(p + QStringLiteral("/src/app.py")), QByteArray("print('v2')\n"));
        QCOMPARE(readHostFile(p + QStringLiteral("/src/new.py")), QByteArray("new\n"));
        QCOMPARE(readHostFile(p + QStringLiteral("/README.md")), QByteArray("readme host\n"));
        QCOMPARE(readHostFile(p + QStringLiteral("/README.md.sandbox-conflict")),
                 QByteArray("readme sandbox\n"));
        QCOMPARE(readHostFile(p + QStringLiteral("/notes.md")), QByteArray("notes host\n"));
        QVERIFY(!QFileInfo(p + QStringLiteral("/src/pw")).isSymLink());

        // a second flush: what was written is now the base, so nothing changes
        const SyncPlan again = b->planSync(p, policy);
        for (const SyncPlanEntry &e : again.entries) {
            if (e.path == QLatin1String("src/app.py") || e.path == QLatin1String("src/new.py"))
                QCOMPARE(e.action, A::Unchanged);
        }
        const WorkspaceSyncResult second = b->syncArtifacts(p, policy);
        QCOMPARE(second.filesSynced, 0);
        b->close();
    }

    void flushWithoutRecordComparesContent()
    {
        auto b = m_sshd.makeBackend(QStringLiteral("norecord"));
        b->create();
        b->writeFile(QStringLiteral("same.md"), "same\n");
        b->writeFile(QStringLiteral("diff.md"), "sandbox\n");
        QTemporaryDir dest;
        writeHostFile(dest.path() + QStringLiteral("/same.md"), "same\n");
        writeHostFile(dest.path() + QStringLiteral("/diff.md"), "host\n");
        const WorkspaceSyncResult r = b->syncArtifacts(dest.path(), defaultSandboxSyncPolicy());
        QCOMPARE(r.conflicts, QStringList{QStringLiteral("diff.md")});
        QCOMPARE(readHostFile(dest.path() + QStringLiteral("/diff.md")), QByteArray("host\n"));
        QVERIFY(!QFileInfo::exists(dest.path() + QStringLiteral("/same.md.sandbox-conflict")));
        b->close();
    }

    void seedDoesNotWriteThroughWorkspaceSymlinks()
    {
        auto b = m_sshd.makeBackend(QStringLiteral("seedlink"));
        b->create();
        const QString outside = m_sshd.path("seed-outside");
        QDir().mkpath(outside);
        QVERIFY(QFile::link(outside, b->remoteWorkspace() + QStringLiteral("/src")));
        QTemporaryDir project;
        writeHostFile(project.path() + QStringLiteral("/src/app.py"), "x\n");
        b->seedWorkspace(project.path(), DEFAULT_SANDBOX_SEED_EXCLUDES);
        QVERIFY(!QFileInfo::exists(outside + QStringLiteral("/app.py")));
        b->close();
    }

    void sandboxSpecBuildsAnSshSandbox()
    {
        QTemporaryDir project;
        writeHostFile(project.path() + QStringLiteral("/src/main.py"), "print(1)\n");
        SandboxSpec spec;
        spec.backend = QStringLiteral("ssh");
        spec.workspaceId = QStringLiteral("spec id/1");
        spec.ssh = m_sshd.target();
        spec.sshRemoteRoot = m_sshd.remoteRoot();
        spec.seedFrom = project.path();
        spec.ttlSeconds = std::nullopt;
        const SandboxPtr sandbox = spec.createSandbox();
        QVERIFY(spec.workspaceRoot.startsWith(QStringLiteral("ssh:")));
        QCOMPARE(sandbox->backendTypeName(), QStringLiteral("SshSandboxBackend"));
        const auto seeded = sandbox->start();
        QVERIFY(seeded && seeded->success());
        QCOMPARE(seeded->filesSeeded, 1);
        QVERIFY(QFileInfo::exists(m_sshd.remoteRoot() + QStringLiteral("/spec_id_1/src/main.py")));
        QCOMPARE(sandbox->readFile(QStringLiteral("src/main.py")), QStringLiteral("print(1)\n"));
        sandbox->backend()->writeFile(QStringLiteral("src/out.py"), "x = 2\n");
        const auto synced = sandbox->stop(true);
        QVERIFY(synced && synced->success());
        QCOMPARE(readHostFile(project.path() + QStringLiteral("/src/out.py")),
                 QByteArray("x = 2\n"));
    }

    void headlessExecOverSsh()
    {
        QProcess p;
        p.setStandardInputFile(QProcess::nullDevice());
        p.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
                {QStringLiteral("--headless"), QStringLiteral("--backend"), QStringLiteral("ssh"),
                 QStringLiteral("--ssh-host"), QStringLiteral("127.0.0.1"),
                 QStringLiteral("--ssh-port"), QString::number(m_sshd.port()),
                 QStringLiteral("--ssh-user"), m_sshd.user(), QStringLiteral("--ssh-identity"),
                 m_sshd.userKey(), QStringLiteral("--ssh-known-hosts"), m_sshd.knownHosts(),
                 QStringLiteral("--ssh-remote-root"), m_sshd.remoteRoot(),
                 QStringLiteral("--workspace-id"), QStringLiteral("headless"),
                 QStringLiteral("--exec"), QStringLiteral("echo hi from $(pwd -P); exit 3")});
        QVERIFY(p.waitForFinished(120000));
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(p.exitCode() == 3, err.constData());
        QCOMPARE(p.readAllStandardOutput(),
                 "hi from " + QFile::encodeName(m_sshd.remoteRoot()) + "/headless\n");
    }

    void aLostMasterIsStartedAgain()
    {
        auto b = m_sshd.makeBackend(QStringLiteral("remaster"));
        b->create();
        const auto conn = b->connection();
        QVERIFY(conn->masterAlive());
        QProcess::execute(QStringLiteral("ssh"),
                          {QStringLiteral("-F"), conn->configPath(), QStringLiteral("-O"),
                           QStringLiteral("exit"), conn->alias()});
        QVERIFY(goneSoonPath(conn->controlSocket()));
        QCOMPARE(b->execute(QStringLiteral("echo back")).output, QStringLiteral("back\n"));
        QVERIFY(conn->masterAlive());
        b->close();
        QVERIFY(!conn->masterAlive());
    }

    void closedBackendRefusesCalls()
    {
        auto b = m_sshd.makeBackend(QStringLiteral("closing"));
        b->create();
        b->close();
        QVERIFY_THROWS_EXCEPTION(OSError, b->execute(QStringLiteral("true")));
        QVERIFY_THROWS_EXCEPTION(OSError, b->listDir(QStringLiteral(".")));
    }
};

QTEST_GUILESS_MAIN(TestSshBackend)
#include "tst_sshbackend.moc"
