// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The Daytona backend against FakeDaytona: lifecycle, every file operation, execute (split
// output, cwd, env, timeout with process-group kill, truncation), error mapping, retries,
// auth, one sandbox per workspace id, seed and flush.

#include "daytonabackend.h"
#include "errors.h"
#include "fakedaytona.h"
#include "sandbox.h"
#include "sandboxspec.h"
#include "testutil.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <csignal>

using namespace elsai;
using elsai::test::FakeDaytona;
using elsai::test::FakeHttpServer;

namespace {

std::shared_ptr<DaytonaSandboxBackend> started(FakeDaytona &fake,
                                               const QString &ws = QStringLiteral("ws"),
                                               DaytonaSandboxBackend::Options o = {})
{
    if (o.config.apiKey.isEmpty())
        o = fake.options();
    auto b = std::make_shared<DaytonaSandboxBackend>(ws, o);
    b->create();
    return b;
}

int countPath(const FakeHttpServer &http, const QString &suffix, const QByteArray &method = {})
{
    int n = 0;
    for (const auto &r : http.requests()) {
        if (r.path().endsWith(suffix) && (method.isEmpty() || r.method == method))
            ++n;
    }
    return n;
}

/// Where a workspace file lives on this host (the fake's sandbox file system).
QString hostPath(const DaytonaSandboxBackend &b, const QString &rel)
{
    return b.remoteRoot() + QLatin1Char('/') + rel;
}

} // namespace

class TestDaytonaBackend : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void createPollsUntilStartedWithAuthAndLabels()
    {
        FakeDaytona fake;
        fake.setPollsUntilStarted(3);
        auto o = fake.options();
        o.config.target = QStringLiteral("eu");
        o.snapshot = QStringLiteral("py-3.12");
        o.sandboxEnv.insert(QStringLiteral("MODE"), QStringLiteral("test"));
        auto b = std::make_shared<DaytonaSandboxBackend>(QStringLiteral("graph-42"), o);
        QVERIFY(!b->isCreated());
        b->create();
        QVERIFY(b->isCreated());
        b->create(); // idempotent
        const auto boxes = fake.sandboxes();
        QCOMPARE(boxes.size(), 1);
        QCOMPARE(boxes[0].state, QStringLiteral("started"));
        QCOMPARE(b->sandboxId(), boxes[0].id);
        QCOMPARE(b->id(), QStringLiteral("daytona:") + boxes[0].id);
        const QJsonObject body = boxes[0].createBody;
        QCOMPARE(body.value("target").toString(), QStringLiteral("eu"));
        QCOMPARE(body.value("snapshot").toString(), QStringLiteral("py-3.12"));
        QCOMPARE(body.value("labels").toObject().value("elsai.workspace").toString(),
                 QStringLiteral("graph-42"));
        QCOMPARE(body.value("env").toObject().value("MODE").toString(), QStringLiteral("test"));
        QCOMPARE(countPath(fake.http(), QStringLiteral("/api/sandbox"), "POST"), 1);
        QCOMPARE(countPath(fake.http(), QStringLiteral("/api/sandbox/") + boxes[0].id, "GET"), 3);
        // The workspace is a folder in the sandbox's working folder.
        QCOMPARE(b->remoteRoot(), boxes[0].root + QStringLiteral("/workspace"));
        QVERIFY(QFileInfo(b->remoteRoot()).isDir());
        for (const auto &r : fake.http().requests()) {
            QCOMPARE(r.header("Authorization"), QByteArray("Bearer test-api-key"));
            QCOMPARE(r.header("X-Daytona-SDK-Version"), QByteArray("0.190.0"));
        }
    }

    void missingCredentialsFailBeforeAnyRequest()
    {
        FakeDaytona fake;
        auto o = fake.options();
        o.config.apiKey.clear();
        DaytonaSandboxBackend b(QStringLiteral("ws"), o);
        try {
            b.create();
            QFAIL("create() without credentials succeeded");
        } catch (const SandboxStartError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("DAYTONA_API_KEY")),
                     qPrintable(e.message()));
        }
        QCOMPARE(fake.http().requestCount(), 0);
    }

    void rejectedKeyIsAClearAuthError()
    {
        FakeDaytona fake;
        auto o = fake.options();
        o.config.apiKey = QStringLiteral("wrong-key");
        DaytonaSandboxBackend b(QStringLiteral("ws"), o);
        try {
            b.create();
            QFAIL("create() with a wrong key succeeded");
        } catch (const PermissionError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("DAYTONA_API_KEY")),
                     qPrintable(e.message()));
            QVERIFY(e.message().contains(QStringLiteral("401")));
        }
        QCOMPARE(fake.http().requestCount(), 1); // 401 is not retried
        QVERIFY(fake.sandboxes().isEmpty());
    }

    void startFailureCarriesTheReasonAndCleansUp()
    {
        FakeDaytona fake;
        fake.setStartFailure(QStringLiteral("no capacity in region"));
        DaytonaSandboxBackend b(QStringLiteral("ws"), fake.options());
        try {
            b.create();
            QFAIL("create() of a failing sandbox succeeded");
        } catch (const SandboxStartError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("no capacity in region")),
                     qPrintable(e.message()));
        }
        QVERIFY(!b.isCreated());
        QCOMPARE(fake.sandboxes().value(0).state, QStringLiteral("destroyed"));
    }

    void unreachableServerIsAStartError()
    {
        FakeDaytona fake;
        auto o = fake.options();
        o.config.apiUrl = QUrl(QStringLiteral("http://127.0.0.1:1/api"));
        o.config.retry.maxAttempts = 2;
        DaytonaSandboxBackend b(QStringLiteral("ws"), o);
        QVERIFY_THROWS_EXCEPTION(SandboxStartError, b.create());
    }

    void operationsBeforeCreateFail()
    {
        FakeDaytona fake;
        DaytonaSandboxBackend b(QStringLiteral("ws"), fake.options());
        QVERIFY_THROWS_EXCEPTION(SandboxError, b.readFile(QStringLiteral("a")));
        QVERIFY_THROWS_EXCEPTION(SandboxError, b.execute(QStringLiteral("true")));
        QCOMPARE(fake.http().requestCount(), 0);
    }

    void fileRoundTrip()
    {
        FakeDaytona fake;
        auto b = started(fake);
        QByteArray binary;
        for (int i = 0; i < 256; ++i)
            binary.append(char(i));
        b->writeFile(QStringLiteral("deep/er/bin.dat"), binary);
        QCOMPARE(b->readFile(QStringLiteral("deep/er/bin.dat")), binary);
        QCOMPARE(test::readHostFile(hostPath(*b, QStringLiteral("deep/er/bin.dat"))), binary);
        b->writeFile(QStringLiteral("deep/er/bin.dat"), "replaced");
        QCOMPARE(b->readFile(QStringLiteral("./deep//er/bin.dat")), QByteArray("replaced"));
        b->writeFile(QStringLiteral("empty.txt"), {});
        QCOMPARE(b->readFile(QStringLiteral("empty.txt")), QByteArray());

        const FileInfo st = b->stat(QStringLiteral("deep/er/bin.dat"));
        QCOMPARE(st.path, QStringLiteral("deep/er/bin.dat"));
        QVERIFY(!st.isDir);
        QCOMPARE(st.size.value_or(-1), qint64(8));
        QVERIFY(st.mtimeMs > 0);
        QVERIFY(b->stat(QStringLiteral("deep")).isDir);

        b->makeDirs(QStringLiteral("made/a/b"));
        QVERIFY(b->stat(QStringLiteral("made/a/b")).isDir);
        b->makeDirs(QStringLiteral("made/a/b")); // mkdir -p: again is fine

        const QList<FileInfo> top = b->listDir(QStringLiteral("."));
        QStringList names;
        for (const FileInfo &f : top)
            names << f.path + (f.isDir ? QStringLiteral("/") : QString());
        QCOMPARE(names, (QStringList{"deep/", "empty.txt", "made/"}));
        const QList<FileInfo> inner = b->listDir(QStringLiteral("deep/er"));
        QCOMPARE(inner.size(), 1);
        QCOMPARE(inner[0].path, QStringLiteral("deep/er/bin.dat"));
        QCOMPARE(inner[0].type, FileInfo::Type::File);

        b->removeFile(QStringLiteral("empty.txt"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b->stat(QStringLiteral("empty.txt")));
        QVERIFY_THROWS_EXCEPTION(IsADirectoryError, b->removeFile(QStringLiteral("deep")));
        b->removeFile(QStringLiteral("deep"), true);
        QVERIFY(!QFileInfo::exists(hostPath(*b, QStringLiteral("deep"))));
    }

    // grep, glob and tree walk the workspace: one `tree` command, not one listing per folder.
    void theSearchWalkIsOneCommand()
    {
        FakeDaytona fake;
        auto b = started(fake);
        b->writeFile(QStringLiteral("a/b/c/deep.txt"), "x");
        b->writeFile(QStringLiteral("a/top.txt"), "top");
        b->writeFile(QStringLiteral("z.txt"), "z");
        const int before = countPath(fake.http(), QStringLiteral("/process/execute"));
        QStringList seen;
        b->walkTree(QStringLiteral("a"), true, [&](const WalkEntry &e) {
            if (e.type == FileInfo::Type::Directory)
                seen << QStringLiteral("%1/ %2").arg(e.path).arg(e.depth);
            else
                seen << QStringLiteral("%1 %2 %3").arg(e.path).arg(e.depth).arg(*e.size);
            return WalkStep::Continue;
        });
        QCOMPARE(countPath(fake.http(), QStringLiteral("/process/execute")) - before, 1);
        QCOMPARE(seen, (QStringList{"a/b/ 0", "a/b/c/ 1", "a/b/c/deep.txt 2 1", "a/top.txt 0 3"}));
    }

    void symlinksAreReportedNotFollowed()
    {
        FakeDaytona fake;
        auto b = started(fake);
        QVERIFY(QFile::link(QStringLiteral("/etc"), hostPath(*b, QStringLiteral("link"))));
        const QList<FileInfo> entries = b->listDir(QStringLiteral("."));
        QCOMPARE(entries.size(), 1);
        QCOMPARE(entries[0].type, FileInfo::Type::Symlink);
        QVERIFY(!entries[0].isDir);
    }

    void hostileListingNamesAreDropped()
    {
        FakeDaytona fake;
        auto b = started(fake);
        // The listing is find's output through /process/execute (base64 of NUL-separated
        // records); a hostile service answering names with '/' or '..' is filtered.
        const QByteArray records("f\t1\t0\t1:2\t../escape\0f\t1\t0\t1:3\ta/b\0d\t0\t0\t1:4\t..\0"
                                 "f\t1\t0\t1:5\t\0f\t5\t1700000000.5\t7:42\tok.txt\0",
                                 87);
        fake.http().enqueue(FakeHttpServer::Response::json(
            200, QJsonDocument(QJsonObject{{"exitCode", 0},
                                           {"result", QString::fromLatin1(records.toBase64())}})
                     .toJson()));
        const QList<FileInfo> entries = b->listDir(QStringLiteral("."));
        QCOMPARE(entries.size(), 1);
        QCOMPARE(entries[0].path, QStringLiteral("ok.txt"));
        QCOMPARE(entries[0].size.value_or(-1), qint64(5));
        QCOMPARE(entries[0].mtimeMs, qint64(1700000000500));
        QCOMPARE(entries[0].device, quint64(7));
        QCOMPARE(entries[0].inode, quint64(42));
        // A failure that is not the script's refusal (no marker) is an OSError.
        fake.http().enqueue(FakeHttpServer::Response::json(
            200, R"({"exitCode":127,"result":"sh: find: not found"})"));
        QVERIFY_THROWS_EXCEPTION(OSError, b->listDir(QStringLiteral(".")));
    }

    void fifoHardLinkAndLoopAreHandledInTheSandbox()
    {
        // P10, P11 and a link loop, in the sandbox (hostile-inputs.md): the file API would block
        // on the FIFO and truncate through the hard link; the confined commands do neither.
        FakeDaytona fake;
        auto b = started(fake);
        const ExecuteResult r = b->execute(QStringLiteral(
            "set -e; mkfifo fifo; printf out > ../outside; ln ../outside hl; "
            "printf big > ../outside2; ln ../outside2 hl2; ln -s loop loop; pwd -P"));
        QCOMPARE(r.exitCode, 0);
        const QString outside = QFileInfo(r.output.trimmed()).path();
        QVERIFY_THROWS_EXCEPTION(OSError, b->readFile(QStringLiteral("fifo")));
        b->writeFile(QStringLiteral("hl"), "new");
        QCOMPARE(test::readHostFile(outside + "/outside"), QByteArray("out"));
        QCOMPARE(b->readFile(QStringLiteral("hl")), QByteArray("new"));
        const QByteArray big(100 * 1024, 'b'); // uploaded to a temp file, then renamed
        b->writeFile(QStringLiteral("hl2"), big);
        QCOMPARE(test::readHostFile(outside + "/outside2"), QByteArray("big"));
        QCOMPARE(b->readFile(QStringLiteral("hl2")), big);
        b->writeFile(QStringLiteral("fifo"), "replaced"); // renamed over, never opened
        QCOMPARE(b->readFile(QStringLiteral("fifo")), QByteArray("replaced"));
        try {
            b->execute(QStringLiteral("pwd"), 10, QStringLiteral("loop"));
            QFAIL("a cwd that is a link to itself was not refused");
        } catch (const PermissionError &e) { // as on the local backend
            QCOMPARE(e.errnoValue(), ELOOP);
        }
        QVERIFY_THROWS_EXCEPTION(OSError, b->readFile(QStringLiteral("loop")));
        for (const FileInfo &e : b->listDir(QStringLiteral(".")))
            QVERIFY2(!e.path.contains(QLatin1String(".elsai-tmp-")), qPrintable(e.path));
    }

    void fileErrorsAreTyped()
    {
        FakeDaytona fake;
        auto b = started(fake);
        b->writeFile(QStringLiteral("f.txt"), "x");
        b->makeDirs(QStringLiteral("d"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b->readFile(QStringLiteral("missing.txt")));
        QVERIFY_THROWS_EXCEPTION(IsADirectoryError, b->readFile(QStringLiteral("d")));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b->listDir(QStringLiteral("nope")));
        QVERIFY_THROWS_EXCEPTION(NotADirectoryError, b->listDir(QStringLiteral("f.txt")));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b->removeFile(QStringLiteral("nope")));
        QVERIFY_THROWS_EXCEPTION(PermissionError, b->removeFile(QStringLiteral(".")));
        QVERIFY_THROWS_EXCEPTION(IsADirectoryError, b->writeFile(QStringLiteral("d"), "x"));
        try {
            b->readFile(QStringLiteral("missing.txt"));
        } catch (const FileNotFoundError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("missing.txt")), qPrintable(e.message()));
            QCOMPARE(e.errnoValue(), ENOENT);
        }
    }

    void pathsAreConfinedOnTheClient_data()
    {
        QTest::addColumn<QString>("path");
        QTest::newRow("dotdot") << QStringLiteral("../outside.txt");
        QTest::newRow("nested dotdot") << QStringLiteral("a/../../outside.txt");
        QTest::newRow("absolute") << QStringLiteral("/etc/passwd");
    }
    void pathsAreConfinedOnTheClient()
    {
        QFETCH(QString, path);
        FakeDaytona fake;
        auto b = started(fake);
        fake.http().clearRequests();
        QVERIFY_THROWS_EXCEPTION(PermissionError, b->readFile(path));
        QVERIFY_THROWS_EXCEPTION(PermissionError, b->writeFile(path, "x"));
        QVERIFY_THROWS_EXCEPTION(PermissionError, b->listDir(path));
        QVERIFY_THROWS_EXCEPTION(PermissionError, b->removeFile(path, true));
        QVERIFY_THROWS_EXCEPTION(PermissionError, b->makeDirs(path));
        QVERIFY_THROWS_EXCEPTION(PermissionError, b->execute(QStringLiteral("true"), {}, path));
        QCOMPARE(fake.http().requestCount(), 0);
    }

    void awkwardNamesSurviveTheQueryString()
    {
        FakeDaytona fake;
        auto b = started(fake);
        const QString name = QStringLiteral("dir with space/a+b&c=d#e%20f ü.txt");
        b->writeFile(name, "awkward");
        QCOMPARE(test::readHostFile(hostPath(*b, name)), QByteArray("awkward"));
        QCOMPARE(b->readFile(name), QByteArray("awkward"));
        QCOMPARE(b->listDir(QStringLiteral("dir with space")).value(0).path, name);
        b->removeFile(name);
        QVERIFY(!QFileInfo::exists(hostPath(*b, name)));
    }

    void uploadFilesGivesPerFileResults()
    {
        FakeDaytona fake;
        auto b = started(fake);
        b->makeDirs(QStringLiteral("taken"));
        const auto results = b->uploadFiles({{QStringLiteral("ok.txt"), "1"},
                                             {QStringLiteral("../escape.txt"), "2"},
                                             {QStringLiteral("taken"), "3"},
                                             {QStringLiteral("sub/two.txt"), "4"}});
        QCOMPARE(results.size(), 4);
        QVERIFY(results[0].success());
        QVERIFY(!results[1].success());
        QVERIFY(!results[2].success());
        QVERIFY(results[3].success());
        QCOMPARE(b->readFile(QStringLiteral("sub/two.txt")), QByteArray("4"));
        const auto down = b->downloadFiles({QStringLiteral("ok.txt"), QStringLiteral("nope")});
        QCOMPARE(down.size(), 2);
        QCOMPARE(down[0].content.value_or("?"), QByteArray("1"));
        QVERIFY(!down[1].success());
    }

    void retriesThrottlingAndServerErrors()
    {
        FakeDaytona fake;
        auto b = started(fake);
        b->writeFile(QStringLiteral("r.txt"), "retried");
        fake.http().clearRequests();
        fake.http().enqueue(429, {}, {{"Retry-After", "0"}});
        fake.http().enqueue(503);
        fake.http().enqueue(502);
        QCOMPARE(b->readFile(QStringLiteral("r.txt")), QByteArray("retried"));
        // the read is one confined command (check and read together); it meets the three
        // failures, then passes, and never goes to the file API that follows links by name
        QCOMPARE(countPath(fake.http(), QStringLiteral("/process/execute")), 4);
        QCOMPARE(countPath(fake.http(), QStringLiteral("/files/download")), 0);
    }

    void persistentServerErrorIsAnOSError()
    {
        FakeDaytona fake;
        auto b = started(fake);
        for (int i = 0; i < 4; ++i)
            fake.http().enqueue(500, R"({"statusCode":500,"message":"daemon exploded"})");
        try {
            b->readFile(QStringLiteral("x"));
            QFAIL("a persistent 500 did not raise");
        } catch (const FileNotFoundError &) {
            QFAIL("a 500 must not look like a missing file");
        } catch (const OSError &e) {
            QVERIFY2(e.message().contains(QStringLiteral("daemon exploded")),
                     qPrintable(e.message()));
            QVERIFY(e.message().contains(QStringLiteral("500")));
        }
    }

    void unauthorizedFileCallIsAPermissionError()
    {
        FakeDaytona fake;
        auto b = started(fake);
        fake.http().enqueue(401, R"({"message":"Unauthorized"})");
        try {
            b->readFile(QStringLiteral("x"));
            QFAIL("401 did not raise");
        } catch (const PermissionError &e) {
            QVERIFY(e.message().contains(QStringLiteral("DAYTONA_API_KEY")));
        }
    }

    void executeSplitsStdoutAndStderr()
    {
        FakeDaytona fake;
        auto b = started(fake);
        QList<QPair<OutputChannel, QByteArray>> streamed;
        ExecuteOptions opts;
        opts.onOutput = [&](OutputChannel c, const QByteArray &d) { streamed.append({c, d}); };
        const ExecuteResult r =
            b->execute(QStringLiteral("echo out; echo err >&2; exit 3"), {}, {}, opts);
        QCOMPARE(r.output, QStringLiteral("out\n"));
        QCOMPARE(r.stderr_, QStringLiteral("err\n"));
        QCOMPARE(r.exitCode, 3);
        QVERIFY(!r.timedOut);
        QVERIFY(!r.truncated);
        // one chunk each; their order is the readers' (each stream has its own)
        QCOMPARE(streamed.size(), 2);
        QVERIFY(streamed[0].first != streamed[1].first);
        QCOMPARE(fake.openSessions(), 0); // each call's session is deleted
    }

    void executeRunsInTheWorkspaceAndCwd()
    {
        FakeDaytona fake;
        auto o = fake.options();
        o.env.insert(QStringLiteral("BASE_VAR"), QStringLiteral("it's base"));
        auto b = started(fake, QStringLiteral("ws"), o);
        b->makeDirs(QStringLiteral("sub dir"));
        QCOMPARE(b->execute(QStringLiteral("pwd")).output.trimmed(), b->remoteRoot());
        QCOMPARE(b->execute(QStringLiteral("pwd"), {}, QStringLiteral("sub dir")).output.trimmed(),
                 b->remoteRoot() + QStringLiteral("/sub dir"));
        ExecuteOptions opts;
        opts.env.insert(QStringLiteral("CALL_VAR"), QStringLiteral("$HOME `x` \"q\""));
        const ExecuteResult r =
            b->execute(QStringLiteral("printf '%s|%s' \"$BASE_VAR\" \"$CALL_VAR\""), {}, {}, opts);
        QCOMPARE(r.output, QStringLiteral("it's base|$HOME `x` \"q\""));
        QCOMPARE(b->execute(QStringLiteral("echo 'single '\"'\"' quote'")).output,
                 QStringLiteral("single ' quote\n"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError,
                                 b->execute(QStringLiteral("pwd"), {}, QStringLiteral("missing")));
        b->writeFile(QStringLiteral("file"), "x");
        QVERIFY_THROWS_EXCEPTION(NotADirectoryError,
                                 b->execute(QStringLiteral("pwd"), {}, QStringLiteral("file")));
        ExecuteOptions bad;
        bad.env.insert(QStringLiteral("BAD NAME"), QStringLiteral("x"));
        QVERIFY_THROWS_EXCEPTION(ValueError, b->execute(QStringLiteral("true"), {}, {}, bad));
        QVERIFY_THROWS_EXCEPTION(ValueError, b->execute(QStringLiteral("   ")));
    }

    void executeTimeoutKillsTheProcessGroup()
    {
        FakeDaytona fake;
        auto b = started(fake);
        const ExecuteResult r =
            b->execute(QStringLiteral("sleep 30 & echo $! > bg.pid; echo started; sleep 30"), 1.0);
        QCOMPARE(r.exitCode, 124);
        QVERIFY(r.timedOut);
        const qint64 pid = b->readFile(QStringLiteral("bg.pid")).trimmed().toLongLong();
        QVERIFY(pid > 1);
        // The background child was in the command's process group: it is gone too.
        bool gone = false;
        for (int i = 0; i < 50 && !gone; ++i) {
            gone = ::kill(pid_t(pid), 0) != 0;
            if (!gone)
                QThread::msleep(50);
        }
        QVERIFY2(gone, "a background process survived the timeout");
    }

    void executeStreamsOutputWhileRunning()
    {
        FakeDaytona fake;
        auto b = started(fake);
        // The command cannot finish before "first" has reached the caller.
        const QString go = hostPath(*b, QStringLiteral("go"));
        QByteArray streamed;
        ExecuteOptions opts;
        opts.onOutput = [&](OutputChannel c, const QByteArray &d) {
            QCOMPARE(c, OutputChannel::Stdout);
            streamed += d;
            if (streamed == "first\n")
                test::writeHostFile(go, "go");
        };
        const ExecuteResult r = b->execute(
            QStringLiteral("echo first; while [ ! -f go ]; do sleep 0.02; done; echo second"), 30.0,
            {}, opts);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.output, QStringLiteral("first\nsecond\n"));
        QCOMPARE(streamed, QByteArray("first\nsecond\n"));
    }

    void cancelKillsTheRunningCommand()
    {
        FakeDaytona fake;
        auto b = started(fake);
        ExecuteOptions opts;
        opts.cancel = std::make_shared<CancellationToken>();
        opts.onOutput = [&](OutputChannel, const QByteArray &d) {
            if (d.contains("ready"))
                opts.cancel->cancel();
        };
        const ExecuteResult r = b->execute(
            QStringLiteral("sleep 60 & echo $! > bg.pid; echo ready; wait"), 120.0, {}, opts);
        QVERIFY(r.cancelled);
        QCOMPARE(r.exitCode, 130);
        QCOMPARE(r.output, QStringLiteral("ready\n"));
        const qint64 pid = b->readFile(QStringLiteral("bg.pid")).trimmed().toLongLong();
        QVERIFY(pid > 1);
        bool gone = false;
        for (int i = 0; i < 100 && !gone; ++i) {
            gone = ::kill(pid_t(pid), 0) != 0;
            if (!gone)
                QThread::msleep(50);
        }
        QVERIFY2(gone, "the cancelled command's process group survived");
        QCOMPARE(fake.openSessions(), 0);
    }

    void commandExiting124ByItselfIsNotATimeout()
    {
        FakeDaytona fake;
        auto b = started(fake);
        const ExecuteResult r = b->execute(QStringLiteral("exit 124"), 60.0);
        QCOMPARE(r.exitCode, 124);
        QVERIFY(!r.timedOut);
    }

    void serverTimeout408IsExitCode124()
    {
        FakeDaytona fake;
        auto b = started(fake);
        fake.http().enqueue(201); // session
        fake.http().enqueue(408, R"({"statusCode":408,"code":"REQUEST_TIMEOUT"})");
        const ExecuteResult r = b->execute(QStringLiteral("sleep 100"), 5.0);
        QCOMPARE(r.exitCode, 124);
        QVERIFY(r.timedOut);
    }

    void executeIsNeverRetried()
    {
        FakeDaytona fake;
        auto b = started(fake);
        fake.http().clearRequests();
        fake.http().enqueue(201); // session
        fake.http().enqueue(500, R"({"message":"boom"})");
        fake.http().enqueue(200, R"({"exitCode":0,"stdout":"second run","stderr":""})");
        QVERIFY_THROWS_EXCEPTION(OSError, b->execute(QStringLiteral("echo once >> count")));
        QCOMPARE(countPath(fake.http(), QStringLiteral("/exec")), 1);
    }

    void outputIsTruncatedAtMaxOutputBytes()
    {
        FakeDaytona fake;
        auto o = fake.options();
        o.maxOutputBytes = 100;
        auto b = started(fake, QStringLiteral("ws"), o);
        const ExecuteResult r = b->execute(QStringLiteral(
            "head -c 80 /dev/zero | tr '\\0' o; head -c 80 /dev/zero | tr '\\0' e >&2"));
        QVERIFY(r.truncated);
        QCOMPARE(r.output, QString(80, QLatin1Char('o')));
        QCOMPARE(r.stderr_, QString(20, QLatin1Char('e')));
        QCOMPARE(r.exitCode, 0);
        const ExecuteResult small = b->execute(QStringLiteral("echo fits"));
        QVERIFY(!small.truncated);
    }

    void floodComesBackCappedWithTheTimeout()
    {
        FakeDaytona fake;
        auto o = fake.options();
        o.maxOutputBytes = 1000;
        auto b = started(fake, QStringLiteral("ws"), o);
        QByteArray streamed;
        ExecuteOptions opts;
        opts.onOutput = [&](OutputChannel, const QByteArray &d) { streamed += d; };
        const ExecuteResult r = b->execute(QStringLiteral("yes"), 1.0, {}, opts);
        QCOMPARE(r.exitCode, 124);
        QVERIFY(r.timedOut);
        QVERIFY(r.truncated);
        QCOMPARE(r.output, QStringLiteral("y\n").repeated(500));
        QCOMPARE(r.stderr_, QString());
        QCOMPARE(streamed, QByteArray("y\n").repeated(500));
    }

    void exitCodeAndStderrSurviveTheCap()
    {
        FakeDaytona fake;
        auto o = fake.options();
        o.maxOutputBytes = 10;
        auto b = started(fake, QStringLiteral("ws"), o);
        const ExecuteResult r =
            b->execute(QStringLiteral("head -c 5000 /dev/zero | tr '\\0' a; exit 7"));
        QCOMPARE(r.exitCode, 7);
        QVERIFY(r.truncated);
        QVERIFY(!r.timedOut);
        QCOMPARE(r.output, QStringLiteral("aaaaaaaaaa"));
        // stderr without a final newline comes back as written, with no trace of the trailer
        QByteArray streamedErr;
        ExecuteOptions opts;
        opts.onOutput = [&](OutputChannel c, const QByteArray &d) {
            if (c == OutputChannel::Stderr)
                streamedErr += d;
        };
        const ExecuteResult e = b->execute(QStringLiteral("printf 'x\\ny' >&2"), {}, {}, opts);
        QCOMPARE(e.exitCode, 0);
        QVERIFY(!e.truncated);
        QCOMPARE(e.stderr_, QStringLiteral("x\ny"));
        QCOMPARE(streamedErr, QByteArray("x\ny"));
        // exactly the cap is not truncated
        const ExecuteResult full = b->execute(QStringLiteral("printf 0123456789"));
        QCOMPARE(full.output, QStringLiteral("0123456789"));
        QVERIFY(!full.truncated);
    }

    void flushReportsLinksAndSpecialFiles()
    {
        FakeDaytona fake;
        auto b = started(fake);
        QTemporaryDir project;
        test::writeHostFile(project.path() + "/src/a.py", "a\n");
        QVERIFY(b->seedWorkspace(project.path(), DEFAULT_SANDBOX_SEED_EXCLUDES).success());
        QCOMPARE(b->execute(QStringLiteral("ln -s /etc/passwd src/link.py && ln -s . src/dirlink "
                                           "&& mkfifo src/pipe.py && echo b > src/b.py"))
                     .exitCode,
                 0);
        const SyncPlan plan = b->planSync(project.path(), defaultSandboxSyncPolicy());
        QHash<QString, SyncPlanEntry::Action> actions;
        for (const SyncPlanEntry &e : plan.entries)
            actions.insert(e.path, e.action);
        QCOMPARE(actions.value(QStringLiteral("src/link.py")),
                 SyncPlanEntry::Action::SkippedSymlink);
        QCOMPARE(actions.value(QStringLiteral("src/pipe.py")),
                 SyncPlanEntry::Action::SkippedSpecial);
        QCOMPARE(actions.value(QStringLiteral("src/dirlink")),
                 SyncPlanEntry::Action::SkippedSymlink); // and not walked into
        QCOMPARE(actions.value(QStringLiteral("src/b.py")), SyncPlanEntry::Action::Add);
        QCOMPARE(plan.entries.size(), 5); // + src/a.py, unchanged
        const WorkspaceSyncResult r = b->syncArtifacts(project.path(), defaultSandboxSyncPolicy());
        QVERIFY2(r.success(), qPrintable(r.errors.join('\n')));
        QVERIFY(r.skippedPaths.contains(QStringLiteral("src/link.py")));
        QVERIFY(r.skippedPaths.contains(QStringLiteral("src/pipe.py")));
        QCOMPARE(r.filesSynced, 1);
        QVERIFY(!QFileInfo(project.path() + "/src/link.py").isSymLink());
        QVERIFY(!QFileInfo::exists(project.path() + "/src/link.py"));
        QVERIFY(!QFileInfo::exists(project.path() + "/src/pipe.py"));
        QVERIFY(!QFileInfo::exists(project.path() + "/src/dirlink"));
        QCOMPARE(test::readHostFile(project.path() + "/src/b.py"), QByteArray("b\n"));
    }

    void cancelledBeforeStartRunsNothing()
    {
        FakeDaytona fake;
        auto b = started(fake);
        fake.http().clearRequests();
        ExecuteOptions opts;
        opts.cancel = std::make_shared<CancellationToken>();
        opts.cancel->cancel();
        const ExecuteResult r = b->execute(QStringLiteral("touch ran"), {}, {}, opts);
        QVERIFY(r.cancelled);
        QCOMPARE(r.exitCode, 130);
        QCOMPARE(fake.http().requestCount(), 0);
    }

    void templateBuildsOneSandboxPerWorkspaceId()
    {
        FakeDaytona fake;
        auto tmpl = std::make_shared<DaytonaSandboxTemplate>(fake.options());
        QCOMPARE(tmpl->typeName(), QStringLiteral("DaytonaSandboxBackend"));
        auto a = std::dynamic_pointer_cast<DaytonaSandboxBackend>(tmpl->buildForSession("alpha"));
        auto b = std::dynamic_pointer_cast<DaytonaSandboxBackend>(tmpl->buildForSession("beta"));
        QVERIFY(a && b);
        a->create();
        b->create();
        QVERIFY(a->sandboxId() != b->sandboxId());
        a->writeFile(QStringLiteral("only-in-a.txt"), "a");
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b->readFile(QStringLiteral("only-in-a.txt")));
        QStringList labels;
        for (const auto &s : fake.sandboxes())
            labels << s.createBody.value("labels").toObject().value("elsai.workspace").toString();
        labels.sort();
        QCOMPARE(labels, (QStringList{"alpha", "beta"}));
        QVERIFY(tmpl->buildDefault());
    }

    void sandboxUsesTheTemplatePerWorkspace()
    {
        FakeDaytona fake;
        auto tmpl = std::make_shared<DaytonaSandboxTemplate>(fake.options());
        auto sandbox = Sandbox::create(QStringLiteral("graph-7"), tmpl, std::nullopt);
        sandbox->start();
        QVERIFY(sandbox->isStarted());
        QCOMPARE(fake.sandboxes().size(), 1);
        QCOMPARE(fake.sandboxes()[0]
                     .createBody.value("labels")
                     .toObject()
                     .value("elsai.workspace")
                     .toString(),
                 QStringLiteral("graph-7"));
        sandbox->stop(false);
        QCOMPARE(fake.sandboxes()[0].state, QStringLiteral("destroyed"));
    }

    void closeDeletesByDefaultOrStops()
    {
        FakeDaytona fake;
        auto b = started(fake);
        const QString id = b->sandboxId();
        b->close();
        QVERIFY(!b->isCreated());
        QCOMPARE(fake.sandbox(id)->state, QStringLiteral("destroyed"));
        b->close(); // idempotent
        QCOMPARE(countPath(fake.http(), QStringLiteral("/api/sandbox/") + id, "DELETE"), 1);
        QVERIFY_THROWS_EXCEPTION(SandboxError, b->readFile(QStringLiteral("x")));

        auto o = fake.options();
        o.deleteOnClose = false;
        auto kept = started(fake, QStringLiteral("kept"), o);
        kept->close();
        QCOMPARE(fake.sandbox(kept->sandboxId())->state, QStringLiteral("stopped"));
    }

    void reusesAnExistingSandbox()
    {
        FakeDaytona fake;
        auto first = started(fake);
        first->writeFile(QStringLiteral("keep.txt"), "still here");
        auto o = fake.options();
        o.existingSandbox = first->sandboxId();
        o.deleteOnClose = false;
        first.reset();
        fake.http().clearRequests();
        auto again = started(fake, QStringLiteral("ws"), o);
        QCOMPARE(countPath(fake.http(), QStringLiteral("/api/sandbox"), "POST"), 0);
        QCOMPARE(again->readFile(QStringLiteral("keep.txt")), QByteArray("still here"));
    }

    void seedAndFlushThroughTheToolbox()
    {
        FakeDaytona fake;
        QTemporaryDir project;
        const QString src = project.path();
        test::writeHostFile(src + "/src/app.py", "print('v1')\n");
        test::writeHostFile(src + "/README.md", "readme\n");
        test::writeHostFile(src + "/.git/config", "secret-ish\n");
        test::writeHostFile(src + "/node_modules/x/index.js", "big\n");
        test::writeHostFile(src + "/notes.md", "host notes\n");
        auto o = fake.options();
        o.uploadBatchBytes = 10; // several bulk-upload requests
        auto b = started(fake, QStringLiteral("ws"), o);
        int lastDone = 0, lastTotal = 0;
        const WorkspaceSeedResult seeded =
            b->seedWorkspace(src, DEFAULT_SANDBOX_SEED_EXCLUDES, [&](int d, int t) {
                lastDone = d;
                lastTotal = t;
            });
        QVERIFY2(seeded.success(), qPrintable(seeded.errors.join('\n')));
        QCOMPARE(seeded.filesSeeded, 3);
        QCOMPARE(lastDone, 3);
        QCOMPARE(lastTotal, 3);
        QVERIFY(countPath(fake.http(), QStringLiteral("/files/bulk-upload")) >= 2);
        QCOMPARE(b->readFile(QStringLiteral("src/app.py")), QByteArray("print('v1')\n"));
        QVERIFY(!QFileInfo::exists(hostPath(*b, QStringLiteral(".git"))));
        QVERIFY(!QFileInfo::exists(hostPath(*b, QStringLiteral("node_modules"))));

        // The agent changes two files and adds one; the host changes notes.md meanwhile.
        QCOMPARE(b->execute(QStringLiteral("echo \"print('v2')\" > src/app.py && echo new > "
                                           "src/new.py && echo sandbox notes > notes.md"))
                     .exitCode,
                 0);
        test::writeHostFile(src + "/notes.md", "host notes, edited\n");

        WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
        const SyncPlan plan = b->planSync(src, policy);
        QVERIFY2(plan.errors.isEmpty(), qPrintable(plan.errors.join('\n')));
        QHash<QString, SyncPlanEntry::Action> actions;
        for (const auto &e : plan.entries)
            actions.insert(e.path, e.action);
        QCOMPARE(actions.value("src/app.py"), SyncPlanEntry::Action::Update);
        QCOMPARE(actions.value("src/new.py"), SyncPlanEntry::Action::Add);
        QCOMPARE(actions.value("README.md"), SyncPlanEntry::Action::Unchanged);
        QCOMPARE(actions.value("notes.md"), SyncPlanEntry::Action::Conflict);

        fake.http().clearRequests();
        const WorkspaceSyncResult synced = b->syncArtifacts(src, policy);
        // Files come back in one bulk download, not one request each.
        QCOMPARE(countPath(fake.http(), QStringLiteral("/files/bulk-download")), 1);
        QCOMPARE(countPath(fake.http(), QStringLiteral("/files/download")), 0);
        QCOMPARE(synced.filesSynced, 2);
        QCOMPARE(synced.conflicts, QStringList{"notes.md"});
        QCOMPARE(test::readHostFile(src + "/src/app.py"), QByteArray("print('v2')\n"));
        QCOMPARE(test::readHostFile(src + "/src/new.py"), QByteArray("new\n"));
        QCOMPARE(test::readHostFile(src + "/notes.md"), QByteArray("host notes, edited\n"));
        QCOMPARE(test::readHostFile(src + "/notes.md" + conflictSuffix()),
                 QByteArray("sandbox notes\n"));

        // A file deleted in the sandbox is not flushed again, nor deleted on the host.
        b->removeFile(QStringLiteral("src/new.py"));
        const WorkspaceSyncResult again = b->syncArtifacts(src, policy);
        QCOMPARE(again.filesSynced, 0);
        QVERIFY(QFileInfo::exists(src + "/src/new.py"));
    }

    void sandboxSpecBuildsDaytonaFromTheEnvironment()
    {
        FakeDaytona fake;
        qputenv("DAYTONA_API_KEY", fake.apiKey().toUtf8());
        qputenv("DAYTONA_API_URL", fake.apiUrl().toEncoded());
        qputenv("DAYTONA_TARGET", "eu");
        SandboxSpec spec;
        qunsetenv("DAYTONA_API_KEY");
        qunsetenv("DAYTONA_API_URL");
        qunsetenv("DAYTONA_TARGET");
        QVERIFY(SandboxSpec::availableBackends().contains(QStringLiteral("daytona")));
        spec.backend = QStringLiteral("daytona");
        spec.workspaceId = QStringLiteral("from-spec");
        spec.local.timeout = 7;
        spec.local.maxOutputBytes = 1234;
        spec.local.env.insert(QStringLiteral("FROM_CLI"), QStringLiteral("yes"));
        const auto b = std::dynamic_pointer_cast<DaytonaSandboxBackend>(spec.createBackend());
        QVERIFY(b);
        // no local folder for a remote workspace: the id is shown instead, as for ssh
        QCOMPARE(spec.workspaceRoot, b->id());
        QCOMPARE(b->options().config.apiUrl, fake.apiUrl());
        QCOMPARE(b->options().config.target, QStringLiteral("eu"));
        QCOMPARE(b->options().timeout, 7.0);
        QCOMPARE(b->options().maxOutputBytes, qint64(1234));
        b->create();
        QCOMPARE(b->execute(QStringLiteral("echo $FROM_CLI")).output, QStringLiteral("yes\n"));
        QCOMPARE(fake.sandboxes().value(0).createBody.value("target").toString(),
                 QStringLiteral("eu"));
    }

    void headlessExecRunsInADaytonaSandbox()
    {
        FakeDaytona fake;
        QTemporaryDir project;
        test::writeHostFile(project.path() + "/hello.py", "print('hi')\n");
        QProcess proc;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DAYTONA_API_KEY"), fake.apiKey());
        env.insert(QStringLiteral("DAYTONA_API_URL"), fake.apiUrl().toString());
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        proc.setProcessEnvironment(env);
        proc.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
                   {QStringLiteral("--headless"), QStringLiteral("--backend"),
                    QStringLiteral("daytona"), QStringLiteral("--seed-from"), project.path(),
                    QStringLiteral("--exec"),
                    QStringLiteral("cat hello.py; echo oops >&2; exit 3")});
        QVERIFY(proc.waitForFinished(60000));
        const QByteArray out = proc.readAllStandardOutput();
        const QByteArray err = proc.readAllStandardError();
        QCOMPARE(proc.exitCode(), 3);
        QVERIFY2(out.contains("print('hi')"), out + err);
        QVERIFY2(err.contains("oops"), err);
        QCOMPARE(fake.sandboxes().size(), 1);
        QCOMPARE(fake.sandboxes()[0].state, QStringLiteral("destroyed"));
    }

    void conformanceFactoryOutlivesItsFixture()
    {
        std::shared_ptr<SandboxBackend> a, b;
        {
            const auto make = FakeDaytona::backendFactory();
            a = make();
            b = make();
        }
        QVERIFY(!a->isCreated());
        a->create();
        b->create();
        QVERIFY(a->id() != b->id());
        a->writeFile(QStringLiteral("x.txt"), "a");
        QCOMPARE(a->execute(QStringLiteral("cat x.txt")).output, QStringLiteral("a"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b->readFile(QStringLiteral("x.txt")));
        a->close();
    }

    void truncatedBulkDownloadFallsBackToSingleFiles()
    {
        FakeDaytona fake;
        QTemporaryDir project;
        test::writeHostFile(project.path() + "/a.py", "a\n");
        test::writeHostFile(project.path() + "/b.py", "b\n");
        auto b = started(fake);
        QVERIFY(b->seedWorkspace(project.path(), {}).success());
        b->writeFile(QStringLiteral("a.py"), "a2\n");
        b->writeFile(QStringLiteral("b.py"), "b2\n");
        // No closing boundary: the answer was cut off, so nothing of it may be trusted.
        const QByteArray cutBody = "--XYZ\r\nContent-Disposition: form-data; name=\"file\"; "
                                   "filename=\"" +
                                   b->remoteRoot().toUtf8() + "/a.py\"\r\n\r\nTRUNC";
        fake.setInterceptor(
            [cutBody](const FakeHttpServer::Request &r) -> std::optional<FakeHttpServer::Response> {
                if (!r.path().endsWith(QLatin1String("/files/bulk-download")))
                    return std::nullopt;
                FakeHttpServer::Response cut;
                cut.headers.emplaceBack("Content-Type", "multipart/form-data; boundary=XYZ");
                cut.body = cutBody;
                return cut;
            });
        const WorkspaceSyncResult synced = b->syncArtifacts(project.path(), {{}, {{"*.py"}}});
        QVERIFY2(synced.success(), qPrintable(synced.errors.join('\n')));
        QCOMPARE(synced.filesSynced, 2);
        QCOMPARE(test::readHostFile(project.path() + "/a.py"), QByteArray("a2\n"));
        QCOMPARE(test::readHostFile(project.path() + "/b.py"), QByteArray("b2\n"));
        // the fallback is readFile: the confined read (a command), not /files/download
        QCOMPARE(countPath(fake.http(), QStringLiteral("/files/download")), 0);
    }
};

QTEST_GUILESS_MAIN(TestDaytonaBackend)
#include "tst_daytonabackend.moc"
