// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// AgentCoreSandboxBackend against the loopback AgentCore (tests/fakeagentcore.*), which
// verifies every SigV4 signature, answers event-stream frames and runs commands for real.

#include "agentcorebackend.h"
#include "errors.h"
#include "eventstream.h"
#include "fakeagentcore.h"
#include "sandboxspec.h"
#include "shellquote.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace elsai;
using namespace elsai::aws;
using elsai::test::FakeAgentCore;
using elsai::test::readHostFile;
using elsai::test::writeHostFile;

namespace {

std::shared_ptr<AgentCoreSandboxBackend> started(FakeAgentCore &fake,
                                                 const QString &workspace = QStringLiteral("ws-1"),
                                                 AgentCoreOptions options = {})
{
    if (options.region.isEmpty())
        options = fake.options();
    auto backend = std::make_shared<AgentCoreSandboxBackend>(workspace, options);
    backend->create();
    return backend;
}

QString folderOf(FakeAgentCore &fake, const AgentCoreSandboxBackend &backend)
{
    return fake.sessionFolder(backend.sessionId());
}

} // namespace

class TestAgentCoreBackend : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void startAndStopSession();
    void everyRequestIsSignedAndCarriesTheSession();
    void wrongSecretIsPermissionError();
    void sessionTokenIsSigned();
    void fileRoundTrip();
    void listDirAndStat();
    void theSearchWalkIsOneInvocation();
    void fileErrorsAreTyped();
    void pathsConfinedBeforeAnyRequest_data();
    void pathsConfinedBeforeAnyRequest();
    void symlinksOutOfTheWorkspaceAreRefused();
    void uploadAndDownloadReportPerFile();
    void executeSplitsStreamsAndExitCode();
    void executeCwdAndEnvironment();
    void executeTimeoutKillsTheProcessGroup();
    void executeTimeoutKillsTermIgnoringCommand();
    void executeTruncatesBothStreamsTogether();
    void executeTrailerCannotBeForged();
    void executeCancelledBeforeStart();
    void executeWithoutAnAnswerIsATimeout();
    void httpErrorsAreTyped_data();
    void httpErrorsAreTyped();
    void throttlingAndServerErrorsAreRetried();
    void executeIsNotRetriedOnServerErrors();
    void streamExceptionsAreTyped_data();
    void streamExceptionsAreTyped();
    void corruptStreamsAreRejected();
    void operationsNeedASession();
    void seedAndFlush();
    void flushConflictsAndHostChanges();
    void templateBuildsOneBackendPerWorkspace();
    void conformanceFactoryOutlivesItsFixture();
    void headlessExecRunsInAnAgentCoreSession();
    void optionsFromEnvironmentAndValidation();
    void sandboxSpecBuildsAnAgentCoreSandbox();
};

void TestAgentCoreBackend::startAndStopSession()
{
    FakeAgentCore fake;
    auto backend = started(fake, QStringLiteral("my ws/1"));
    QVERIFY(backend->isCreated());
    QCOMPARE(backend->typeName(), QStringLiteral("AgentCoreSandboxBackend"));
    QCOMPARE(fake.liveSessions(), QStringList{backend->sessionId()});
    const QJsonObject start = fake.startRequests().first();
    QCOMPARE(start.value(QLatin1String("name")).toString(), QStringLiteral("elsai-my-ws-1"));
    QCOMPARE(start.value(QLatin1String("sessionTimeoutSeconds")).toInt(), 900);
    QCOMPARE(start.value(QLatin1String("clientToken")).toString().size(), 36);
    backend->create(); // idempotent
    QCOMPARE(fake.sessionsStarted(), 1);
    backend->close();
    QVERIFY(!backend->isCreated());
    QVERIFY(fake.liveSessions().isEmpty());
    backend->close(); // idempotent
    const auto stop = fake.server().requests().last();
    QCOMPARE(stop.method, QByteArray("PUT"));
    QVERIFY(stop.target.startsWith("/code-interpreters/aws.codeinterpreter.v1/sessions/stop"
                                   "?sessionId="));
}

void TestAgentCoreBackend::everyRequestIsSignedAndCarriesTheSession()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    backend->writeFile(QStringLiteral("a.txt"), "x");
    backend->listDir(QStringLiteral("."));
    QCOMPARE(backend->execute(QStringLiteral("true")).exitCode, 0);
    backend->close();
    QVERIFY(fake.rejections().isEmpty());
    const auto requests = fake.server().requests();
    QVERIFY(requests.size() >= 5);
    for (const auto &r : requests) {
        QVERIFY(r.header("authorization").contains("/us-east-1/bedrock-agentcore/aws4_request"));
        QVERIFY(r.header("x-amz-content-sha256").isEmpty()); // S3 only
        if (r.target.endsWith("/tools/invoke")) {
            QVERIFY(!r.header("x-amzn-code-interpreter-session-id").isEmpty());
            QCOMPARE(r.header("content-type"), QByteArray("application/json"));
        }
    }
    // A file operation is one confined command that checks the path and uses it (a small
    // write carries its content); execute's default cwd needs no check.
    QCOMPARE(fake.toolCalls(), (QStringList{"executeCommand", "executeCommand", "executeCommand"}));
}

void TestAgentCoreBackend::wrongSecretIsPermissionError()
{
    FakeAgentCore fake;
    AgentCoreOptions options = fake.options();
    options.credentials.secretAccessKey = QStringLiteral("not the secret");
    AgentCoreSandboxBackend backend(QStringLiteral("ws"), options);
    try {
        backend.create();
        QFAIL("no error");
    } catch (const PermissionError &e) {
        QVERIFY2(e.message().contains(QLatin1String("InvalidSignatureException")), e.what());
        QVERIFY(e.message().contains(QLatin1String("AWS_SECRET_ACCESS_KEY")));
    }
    QVERIFY(!backend.isCreated());
    QCOMPARE(fake.rejections().size(), 1);
    QCOMPARE(fake.sessionsStarted(), 0);
}

void TestAgentCoreBackend::sessionTokenIsSigned()
{
    Credentials temporary = FakeAgentCore::testCredentials();
    temporary.sessionToken = QStringLiteral("IQoJTEMPORARY");
    FakeAgentCore fake(temporary, QStringLiteral("eu-west-1"));
    auto backend = started(fake);
    backend->writeFile(QStringLiteral("t"), "1");
    QCOMPARE(backend->readFile(QStringLiteral("t")), QByteArray("1"));
    QVERIFY(fake.rejections().isEmpty());
    QCOMPARE(fake.server().requests().last().header("x-amz-security-token"),
             QByteArray("IQoJTEMPORARY"));
}

void TestAgentCoreBackend::fileRoundTrip()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    const QByteArray text = QString::fromUtf8("héllo\nwörld\n").toUtf8();
    const QByteArray binary("\x00\x01\xff\xfe binary \x80", 14);
    backend->writeFile(QStringLiteral("deep/er/text.txt"), text);
    backend->writeFile(QStringLiteral("./bin.dat"), binary);
    QCOMPARE(backend->readFile(QStringLiteral("deep/er/text.txt")), text);
    QCOMPARE(backend->readFile(QStringLiteral("bin.dat")), binary);
    QCOMPARE(readHostFile(folderOf(fake, *backend) + "/bin.dat"), binary);
    backend->writeFile(QStringLiteral("deep/er/text.txt"), "replaced");
    QCOMPARE(backend->readFile(QStringLiteral("deep//er/text.txt")), QByteArray("replaced"));
    backend->writeFile(QStringLiteral("empty"), {});
    QCOMPARE(backend->readFile(QStringLiteral("empty")), QByteArray());
}

void TestAgentCoreBackend::listDirAndStat()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    backend->writeFile(QStringLiteral("src/a.py"), "12345");
    backend->writeFile(QStringLiteral("src/pkg/b.py"), "1");
    backend->writeFile(QStringLiteral("top.md"), "#");
    const QList<FileInfo> root = backend->listDir(QStringLiteral("."));
    QCOMPARE(root.size(), 2);
    QCOMPARE(root.at(0).path, QStringLiteral("src"));
    QVERIFY(root.at(0).isDir);
    QCOMPARE(root.at(1).path, QStringLiteral("top.md"));
    QCOMPARE(root.at(1).size, std::optional<qint64>(1));
    const QList<FileInfo> src = backend->listDir(QStringLiteral("src"));
    QCOMPARE(src.size(), 2);
    QCOMPARE(src.at(0).path, QStringLiteral("src/a.py"));
    QCOMPARE(src.at(0).size, std::optional<qint64>(5));
    QCOMPARE(src.at(1).path, QStringLiteral("src/pkg"));
    QVERIFY(src.at(1).isDir);
    QCOMPARE(backend->stat(QStringLiteral("src/a.py")).size, std::optional<qint64>(5));
    QVERIFY(backend->stat(QStringLiteral("src/pkg")).isDir);
    QVERIFY(backend->stat(QStringLiteral(".")).isDir);
    QVERIFY_THROWS_EXCEPTION(FileNotFoundError, backend->stat(QStringLiteral("src/none")));
    QVERIFY_THROWS_EXCEPTION(FileNotFoundError, backend->stat(QStringLiteral("no/such/x")));
}

// grep, glob and tree walk the workspace: one `tree` command, not one listing per folder.
void TestAgentCoreBackend::theSearchWalkIsOneInvocation()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    backend->writeFile(QStringLiteral("src/pkg/deep/b.py"), "1");
    backend->writeFile(QStringLiteral("src/a.py"), "12345");
    backend->writeFile(QStringLiteral("top.md"), "#");
    const auto invocations = [&] {
        qsizetype n = 0;
        for (const auto &r : fake.server().requests())
            n += r.target.endsWith("/tools/invoke") ? 1 : 0;
        return n;
    };
    const qsizetype before = invocations();
    QStringList seen;
    backend->walkTree(QStringLiteral("src"), true, [&](const WalkEntry &e) {
        seen << QStringLiteral("%1 %2 %3").arg(e.path).arg(e.depth).arg(e.size.value_or(-1));
        return e.path.endsWith(QLatin1String("/deep")) ? WalkStep::SkipFolder : WalkStep::Continue;
    });
    QCOMPARE(invocations() - before, 1);
    QCOMPARE(seen.size(), 3);
    QCOMPARE(seen.at(0), QStringLiteral("src/a.py 0 5"));
    QVERIFY(seen.at(1).startsWith(QLatin1String("src/pkg 0 ")));
    QVERIFY(seen.at(2).startsWith(QLatin1String("src/pkg/deep 1 "))); // skipped: b.py not seen
}

void TestAgentCoreBackend::fileErrorsAreTyped()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    backend->writeFile(QStringLiteral("dir/file.txt"), "x");
    QVERIFY_THROWS_EXCEPTION(FileNotFoundError, backend->readFile(QStringLiteral("missing")));
    QVERIFY_THROWS_EXCEPTION(IsADirectoryError, backend->readFile(QStringLiteral("dir")));
    QVERIFY_THROWS_EXCEPTION(IsADirectoryError, backend->writeFile(QStringLiteral("dir"), "x"));
    QVERIFY_THROWS_EXCEPTION(NotADirectoryError, backend->listDir(QStringLiteral("dir/file.txt")));
    QVERIFY_THROWS_EXCEPTION(FileNotFoundError, backend->listDir(QStringLiteral("nodir")));
    QVERIFY_THROWS_EXCEPTION(FileNotFoundError, backend->removeFile(QStringLiteral("missing")));
    QVERIFY_THROWS_EXCEPTION(IsADirectoryError, backend->removeFile(QStringLiteral("dir")));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->removeFile(QStringLiteral(".")));
    QVERIFY_THROWS_EXCEPTION(FileExistsError, backend->makeDirs(QStringLiteral("dir/file.txt")));

    backend->makeDirs(QStringLiteral("made/one/two"));
    QVERIFY(backend->stat(QStringLiteral("made/one/two")).isDir);
    backend->removeFile(QStringLiteral("dir/file.txt"));
    QVERIFY(backend->listDir(QStringLiteral("dir")).isEmpty());
    backend->removeFile(QStringLiteral("made"), true);
    QVERIFY(!QFileInfo::exists(folderOf(fake, *backend) + "/made"));
}

void TestAgentCoreBackend::pathsConfinedBeforeAnyRequest_data()
{
    QTest::addColumn<QString>("path");
    QTest::newRow("parent") << QStringLiteral("../outside");
    QTest::newRow("nested parent") << QStringLiteral("a/../../outside");
    QTest::newRow("absolute") << QStringLiteral("/etc/passwd");
}

void TestAgentCoreBackend::pathsConfinedBeforeAnyRequest()
{
    QFETCH(QString, path);
    FakeAgentCore fake;
    auto backend = started(fake);
    const int before = fake.server().requestCount();
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->readFile(path));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->writeFile(path, "x"));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->listDir(path));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->stat(path));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->removeFile(path, true));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->makeDirs(path));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->execute(QStringLiteral("true"), {}, path));
    QCOMPARE(fake.server().requestCount(), before);
}

void TestAgentCoreBackend::symlinksOutOfTheWorkspaceAreRefused()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    QTemporaryDir outside;
    writeHostFile(outside.path() + "/secret.txt", "secret");
    const QString out = shellQuote(outside.path());
    QCOMPARE(backend
                 ->execute(QStringLiteral("mkdir sub && echo inside > sub/f && ln -s sub/f rel && "
                                          "ln -s %1 out && ln -s %1/secret.txt file && "
                                          "ln -s %1/created.txt dangling && ln -s .. up")
                               .arg(out))
                 .exitCode,
             0);
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->readFile(QStringLiteral("file")));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->readFile(QStringLiteral("out/secret.txt")));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->listDir(QStringLiteral("out")));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->listDir(QStringLiteral("up")));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->writeFile(QStringLiteral("dangling"), "x"));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->writeFile(QStringLiteral("out/new"), "x"));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->makeDirs(QStringLiteral("out/d")));
    QVERIFY_THROWS_EXCEPTION(PermissionError,
                             backend->removeFile(QStringLiteral("out/secret.txt")));
    QVERIFY_THROWS_EXCEPTION(PermissionError, backend->execute(QStringLiteral("touch pwned"), {},
                                                               QStringLiteral("out")));
    const QList<FileTransferResult> up =
        backend->uploadFiles({{QStringLiteral("ok.txt"), "ok"}, {QStringLiteral("dangling"), "x"}});
    QVERIFY(up.at(0).success());
    QVERIFY(!up.at(1).success());
    QVERIFY(!QFileInfo::exists(outside.path() + "/created.txt"));
    QVERIFY(!QFileInfo::exists(outside.path() + "/new"));
    QVERIFY(!QFileInfo::exists(outside.path() + "/pwned"));
    QCOMPARE(readHostFile(outside.path() + "/secret.txt"), QByteArray("secret"));
    // A link that stays inside works, and removing a link removes only the link.
    QCOMPARE(backend->readFile(QStringLiteral("rel")), QByteArray("inside\n"));
    backend->removeFile(QStringLiteral("file"));
    QVERIFY(QFileInfo::exists(outside.path() + "/secret.txt"));
}

void TestAgentCoreBackend::uploadAndDownloadReportPerFile()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    const QList<FileTransferResult> up =
        backend->uploadFiles({{QStringLiteral("a.txt"), "A"},
                              {QStringLiteral("../bad"), "B"},
                              {QStringLiteral("d/b.bin"), QByteArray("\0\1", 2)}});
    QCOMPARE(up.size(), 3);
    QVERIFY(up.at(0).success());
    QVERIFY(!up.at(1).success());
    QVERIFY(up.at(2).success());
    // small files travel inside the confined command: no writeFiles
    QCOMPARE(fake.toolCalls().count(QStringLiteral("writeFiles")), 0);
    // a large one goes through writeFiles to a temp name, renamed over the entry
    QByteArray big(200 * 1024, 'z');
    big[5] = '\0';
    const QList<FileTransferResult> bigUp = backend->uploadFiles({{QStringLiteral("d/big"), big}});
    QVERIFY(bigUp.at(0).success());
    QCOMPARE(fake.toolCalls().count(QStringLiteral("writeFiles")), 1);
    QCOMPARE(backend->readFile(QStringLiteral("d/big")), big);
    for (const FileInfo &e : backend->listDir(QStringLiteral("d")))
        QVERIFY2(!e.path.contains(QLatin1String(".elsai-tmp-")), qPrintable(e.path));
    const QList<FileTransferResult> down = backend->downloadFiles(
        {QStringLiteral("a.txt"), QStringLiteral("nope"), QStringLiteral("d/b.bin")});
    QCOMPARE(down.at(0).content, std::optional<QByteArray>("A"));
    QVERIFY(!down.at(1).success());
    QCOMPARE(down.at(2).content, std::optional<QByteArray>(QByteArray("\0\1", 2)));
}

void TestAgentCoreBackend::executeSplitsStreamsAndExitCode()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    QByteArray streamed;
    ExecuteOptions options;
    options.onOutput = [&](OutputChannel channel, const QByteArray &data) {
        streamed += (channel == OutputChannel::Stdout ? "O:" : "E:") + data;
    };
    const ExecuteResult r =
        backend->execute(QStringLiteral("echo out; echo 'it''s' err >&2; exit 3"), {}, {}, options);
    QCOMPARE(r.output, QStringLiteral("out\n"));
    QCOMPARE(r.stderr_, QStringLiteral("its err\n"));
    QCOMPARE(r.exitCode, 3);
    QVERIFY(!r.truncated);
    QVERIFY(!r.timedOut);
    QCOMPARE(streamed, QByteArray("O:out\nE:its err\n"));
    const ExecuteResult quoted = backend->execute(QStringLiteral("printf '%s' \"a'b\""));
    QCOMPARE(quoted.output, QStringLiteral("a'b"));
    QCOMPARE(quoted.exitCode, 0);
}

void TestAgentCoreBackend::executeCwdAndEnvironment()
{
    FakeAgentCore fake;
    AgentCoreOptions options = fake.options();
    options.env.insert(QStringLiteral("BASE_VAR"), QStringLiteral("it's base"));
    auto backend = started(fake, QStringLiteral("ws"), options);
    backend->makeDirs(QStringLiteral("sub dir/x"));
    ExecuteOptions extra;
    extra.env.insert(QStringLiteral("CALL_VAR"), QStringLiteral("$(not expanded)"));
    const ExecuteResult r =
        backend->execute(QStringLiteral("pwd; echo \"$BASE_VAR\"; echo \"$CALL_VAR\""), {},
                         QStringLiteral("sub dir/x"), extra);
    QCOMPARE(r.exitCode, 0);
    const QStringList lines = r.output.split(QLatin1Char('\n'));
    QVERIFY2(lines.at(0).endsWith(QLatin1String("/sub dir/x")), qPrintable(r.output));
    QCOMPARE(lines.at(1), QStringLiteral("it's base"));
    QCOMPARE(lines.at(2), QStringLiteral("$(not expanded)"));
    // A missing or non-folder cwd raises what the local backend raises (conformance suite).
    QVERIFY_THROWS_EXCEPTION(FileNotFoundError, backend->execute(QStringLiteral("echo never"), {},
                                                                 QStringLiteral("no-such-dir")));
    backend->writeFile(QStringLiteral("plain.txt"), "f");
    QVERIFY_THROWS_EXCEPTION(NotADirectoryError, backend->execute(QStringLiteral("echo never"), {},
                                                                  QStringLiteral("plain.txt")));
    ExecuteOptions bad;
    bad.env.insert(QStringLiteral("BAD NAME"), QStringLiteral("x"));
    QVERIFY_THROWS_EXCEPTION(ValueError, backend->execute(QStringLiteral("true"), {}, {}, bad));
}

void TestAgentCoreBackend::executeTimeoutKillsTheProcessGroup()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    // A background child that would write a file after the timeout must die with the group.
    const ExecuteResult r =
        backend->execute(QStringLiteral("(sleep 2; touch late) & echo started; sleep 30"), 1.0);
    QCOMPARE(r.exitCode, 124);
    QVERIFY(r.timedOut);
    QCOMPARE(r.output, QStringLiteral("started\n"));
    QThread::sleep(3);
    QVERIFY(!QFileInfo::exists(folderOf(fake, *backend) + "/late"));
}

void TestAgentCoreBackend::executeTimeoutKillsTermIgnoringCommand()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    const ExecuteResult r =
        backend->execute(QStringLiteral("trap '' TERM; sleep 30; echo survived"), 1.0);
    QCOMPARE(r.exitCode, 124);
    QVERIFY(r.timedOut);
    QVERIFY(!r.output.contains(QLatin1String("survived")));
}

void TestAgentCoreBackend::executeTruncatesBothStreamsTogether()
{
    FakeAgentCore fake;
    AgentCoreOptions options = fake.options();
    options.maxOutputBytes = 1000;
    auto backend = started(fake, QStringLiteral("ws"), options);
    const ExecuteResult big =
        backend->execute(QStringLiteral("head -c 5000 /dev/zero | tr '\\0' a; exit 2"));
    QCOMPARE(big.output.size(), 1000);
    QVERIFY(big.truncated);
    QCOMPARE(big.exitCode, 2);
    const ExecuteResult both = backend->execute(QStringLiteral(
        "head -c 800 /dev/zero | tr '\\0' o; head -c 800 /dev/zero | tr '\\0' e >&2"));
    QCOMPARE(both.output, QString(800, QLatin1Char('o')));
    QCOMPARE(both.stderr_, QString(200, QLatin1Char('e')));
    QVERIFY(both.truncated);
    const ExecuteResult exact =
        backend->execute(QStringLiteral("head -c 1000 /dev/zero | tr '\\0' x"));
    QCOMPARE(exact.output.size(), 1000);
    QVERIFY(!exact.truncated);
}

void TestAgentCoreBackend::executeTrailerCannotBeForged()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    const ExecuteResult r =
        backend->execute(QStringLiteral("printf '\\nabc 0 1 1\\n' >&2; exit 5"));
    QCOMPARE(r.exitCode, 5);
    QCOMPARE(r.stderr_, QStringLiteral("\nabc 0 1 1\n"));
}

void TestAgentCoreBackend::executeCancelledBeforeStart()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    ExecuteOptions options;
    options.cancel = std::make_shared<CancellationToken>();
    options.cancel->cancel();
    const int before = fake.server().requestCount();
    const ExecuteResult r = backend->execute(QStringLiteral("touch never"), {}, {}, options);
    QVERIFY(r.cancelled);
    QCOMPARE(r.exitCode, 130);
    QCOMPARE(fake.server().requestCount(), before);
}

void TestAgentCoreBackend::executeWithoutAnAnswerIsATimeout()
{
    // The service never answers: execute gives up after its timeout + grace with 124, not an
    // exception, and does not retry (the command may be running).
    FakeAgentCore fake;
    AgentCoreOptions options = fake.options();
    options.executeGraceMs = 200;
    auto backend = started(fake, QStringLiteral("ws"), options);
    elsai::test::FakeHttpServer::Response silent;
    silent.delayMs = 5000;
    fake.server().enqueue(silent);
    const int before = fake.server().requestCount();
    const ExecuteResult r = backend->execute(QStringLiteral("true"), 0.1);
    QCOMPARE(r.exitCode, 124);
    QVERIFY(r.timedOut);
    QVERIFY2(r.stderr_.contains(QLatin1String("executeCommand")), qPrintable(r.stderr_));
    QCOMPARE(fake.server().requestCount(), before + 1);
}

void TestAgentCoreBackend::httpErrorsAreTyped_data()
{
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("type");
    QTest::addColumn<QString>("expected");
    QTest::newRow("401") << 401 << QByteArray("UnrecognizedClientException")
                         << QStringLiteral("PermissionError");
    QTest::newRow("403") << 403 << QByteArray("AccessDeniedException")
                         << QStringLiteral("PermissionError");
    QTest::newRow("404") << 404 << QByteArray("ResourceNotFoundException")
                         << QStringLiteral("OSError");
    QTest::newRow("408") << 408 << QByteArray("RequestTimeout") << QStringLiteral("TimeoutError");
    QTest::newRow("400") << 400 << QByteArray("ValidationException")
                         << QStringLiteral("ValueError");
    QTest::newRow("402") << 402 << QByteArray("ServiceQuotaExceededException")
                         << QStringLiteral("OSError");
    QTest::newRow("409") << 409 << QByteArray("ConflictException") << QStringLiteral("OSError");
}

void TestAgentCoreBackend::httpErrorsAreTyped()
{
    QFETCH(int, status);
    QFETCH(QByteArray, type);
    QFETCH(QString, expected);
    FakeAgentCore fake;
    auto backend = started(fake);
    fake.server().enqueue(FakeAgentCore::error(status, type, QStringLiteral("scripted")));
    try {
        backend->listDir(QStringLiteral("."));
        QFAIL("no error");
    } catch (const SandboxError &e) {
        QCOMPARE(e.specName(), expected);
        // the service's own words are kept (a 404 names the session too)
        QVERIFY2(e.message().contains(QString::fromLatin1(type)), e.what());
        QVERIFY2(e.message().contains(QLatin1String("scripted")), e.what());
        if (status == 404)
            QVERIFY2(e.message().contains(QLatin1String("restart the sandbox")), e.what());
    }
}

void TestAgentCoreBackend::throttlingAndServerErrorsAreRetried()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    backend->writeFile(QStringLiteral("f"), "data");
    const int before = fake.server().requestCount();
    fake.server().enqueue(FakeAgentCore::error(429, "ThrottlingException", QStringLiteral("slow")));
    fake.server().enqueue(
        FakeAgentCore::error(500, "InternalServerException", QStringLiteral("x")));
    QCOMPARE(backend->readFile(QStringLiteral("f")), QByteArray("data"));
    // The confined read (one executeCommand) took the 429 and the 500, then passed.
    QCOMPARE(fake.server().requestCount(), before + 3);
    // Each attempt carries its own valid signature (the fake checked the last one).
    QVERIFY(fake.rejections().isEmpty());

    for (int i = 0; i < 4; ++i)
        fake.server().enqueue(
            FakeAgentCore::error(503, "ServiceUnavailable", QStringLiteral("down")));
    try {
        backend->readFile(QStringLiteral("f"));
        QFAIL("no error");
    } catch (const OSError &e) {
        QCOMPARE(e.specName(), QStringLiteral("OSError"));
        QVERIFY2(e.message().contains(QLatin1String("503")), e.what());
    }
}

void TestAgentCoreBackend::executeIsNotRetriedOnServerErrors()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    // 429: AWS ran nothing, so execute retries it.
    fake.server().enqueue(FakeAgentCore::error(429, "ThrottlingException", QStringLiteral("slow")));
    int before = fake.server().requestCount();
    QCOMPARE(backend->execute(QStringLiteral("echo once >> count; cat count")).output,
             QStringLiteral("once\n"));
    QCOMPARE(fake.server().requestCount(), before + 2);
    // 500: the command may have run; running it twice could be wrong, so no retry.
    fake.server().enqueue(
        FakeAgentCore::error(500, "InternalServerException", QStringLiteral("x")));
    before = fake.server().requestCount();
    QVERIFY_THROWS_EXCEPTION(OSError, backend->execute(QStringLiteral("echo twice >> count")));
    QCOMPARE(fake.server().requestCount(), before + 1);
}

void TestAgentCoreBackend::streamExceptionsAreTyped_data()
{
    QTest::addColumn<QByteArray>("type");
    QTest::addColumn<QString>("expected");
    QTest::newRow("throttling") << QByteArray("throttlingException") << QStringLiteral("OSError");
    QTest::newRow("access") << QByteArray("accessDeniedException")
                            << QStringLiteral("PermissionError");
    QTest::newRow("validation") << QByteArray("validationException")
                                << QStringLiteral("ValueError");
    QTest::newRow("internal") << QByteArray("internalServerException") << QStringLiteral("OSError");
}

void TestAgentCoreBackend::streamExceptionsAreTyped()
{
    QFETCH(QByteArray, type);
    QFETCH(QString, expected);
    FakeAgentCore fake;
    auto backend = started(fake);
    fake.enqueueStreamException(type, QStringLiteral("Rate exceeded"));
    try {
        backend->listDir(QStringLiteral("."));
        QFAIL("no error");
    } catch (const SandboxError &e) {
        QCOMPARE(e.specName(), expected);
        QVERIFY2(e.message().contains(QString::fromLatin1(type)), e.what());
        QVERIFY(e.message().contains(QLatin1String("Rate exceeded")));
    }
}

void TestAgentCoreBackend::corruptStreamsAreRejected()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    fake.enqueueStreamMutation([](QByteArray frame) {
        frame[frame.size() - 10] = char(frame[frame.size() - 10] ^ 0x40);
        return frame;
    });
    QVERIFY_THROWS_EXCEPTION(EventStreamError, backend->listDir(QStringLiteral(".")));
    fake.enqueueStreamMutation(
        [](const QByteArray &frame) { return frame.left(frame.size() - 3); });
    QVERIFY_THROWS_EXCEPTION(EventStreamError, backend->listDir(QStringLiteral(".")));
    fake.enqueueStreamMutation([](const QByteArray &) { return QByteArray(); });
    QVERIFY_THROWS_EXCEPTION(OSError,
                             backend->listDir(QStringLiteral("."))); // no result event at all
    QVERIFY(backend->listDir(QStringLiteral(".")).isEmpty());        // the next call is fine
}

void TestAgentCoreBackend::operationsNeedASession()
{
    FakeAgentCore fake;
    AgentCoreSandboxBackend backend(QStringLiteral("ws"), fake.options());
    QVERIFY_THROWS_EXCEPTION(OSError, backend.readFile(QStringLiteral("x")));
    QVERIFY_THROWS_EXCEPTION(OSError, backend.execute(QStringLiteral("true")));
    QCOMPARE(fake.server().requestCount(), 0);
    backend.create();
    const QString folder = fake.sessionFolder(backend.sessionId());
    QVERIFY(!folder.isEmpty());
    // The session ended on the service side (timeout): a clear error, and close() still works.
    fake.server().enqueue(FakeAgentCore::error(404, "ResourceNotFoundException",
                                               QStringLiteral("session not found")));
    QVERIFY_THROWS_EXCEPTION(OSError, backend.listDir(QStringLiteral(".")));
    backend.close();
}

void TestAgentCoreBackend::seedAndFlush()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    QTemporaryDir project;
    const QString root = project.path();
    writeHostFile(root + "/src/a.py", "print('a')\n");
    writeHostFile(root + "/src/b.py", "print('b')\n");
    writeHostFile(root + "/README.md", "# readme\n");
    writeHostFile(root + "/data.bin", QByteArray("\0\xff", 2));
    writeHostFile(root + "/.git/config", "secret");
    writeHostFile(root + "/node_modules/x/index.js", "x");
    QDir(root).mkpath(QStringLiteral("empty/folder"));
    QVERIFY(QFile::link(QStringLiteral("/etc/passwd"), root + "/link"));

    int lastDone = -1, lastTotal = -1;
    const WorkspaceSeedResult seeded =
        backend->seedWorkspace(root, DEFAULT_SANDBOX_SEED_EXCLUDES, [&](int done, int total) {
            lastDone = done;
            lastTotal = total;
        });
    QVERIFY2(seeded.success(), qPrintable(seeded.errors.join('\n')));
    QCOMPARE(seeded.filesSeeded, 4);
    QCOMPARE(seeded.bytesSeeded, qint64(11 + 11 + 9 + 2));
    QVERIFY(seeded.skippedPaths.contains(QStringLiteral(".git")));
    QVERIFY(seeded.skippedPaths.contains(QStringLiteral("node_modules")));
    QVERIFY(seeded.skippedPaths.contains(QStringLiteral("link")));
    QCOMPARE(lastDone, 4);
    QCOMPARE(lastTotal, 4);
    const QString remote = folderOf(fake, *backend);
    QCOMPARE(readHostFile(remote + "/data.bin"), QByteArray("\0\xff", 2));
    QVERIFY(QFileInfo(remote + "/empty/folder").isDir());
    QVERIFY(!QFileInfo::exists(remote + "/.git"));

    // Work in the sandbox, then flush back.
    QCOMPARE(backend
                 ->execute(QStringLiteral("echo changed > src/a.py; echo new > src/new.py; "
                                          "echo no > other.txt; ln -s /etc/passwd src/l.py"))
                 .exitCode,
             0);
    WorkspaceSyncPolicy policy;
    const SyncPlan plan = backend->planSync(root, policy);
    QHash<QString, SyncPlanEntry::Action> actions;
    for (const SyncPlanEntry &e : plan.entries)
        actions.insert(e.path, e.action);
    QCOMPARE(actions.value(QStringLiteral("src/a.py")), SyncPlanEntry::Action::Update);
    QCOMPARE(actions.value(QStringLiteral("src/new.py")), SyncPlanEntry::Action::Add);
    QCOMPARE(actions.value(QStringLiteral("src/b.py")), SyncPlanEntry::Action::Unchanged);
    QCOMPARE(actions.value(QStringLiteral("src/l.py")), SyncPlanEntry::Action::SkippedSymlink);
    QVERIFY(!actions.contains(QStringLiteral("other.txt")));
    QCOMPARE(readHostFile(root + "/src/a.py"), QByteArray("print('a')\n")); // plan wrote nothing

    const WorkspaceSyncResult synced = backend->syncArtifacts(root, policy);
    QVERIFY2(synced.success(), qPrintable(synced.errors.join('\n')));
    QCOMPARE(synced.filesSynced, 2);
    QCOMPARE(synced.bytesSynced, qint64(8 + 4));
    QCOMPARE(synced.skippedPaths, QStringList{QStringLiteral("src/l.py")});
    QCOMPARE(readHostFile(root + "/src/a.py"), QByteArray("changed\n"));
    QCOMPARE(readHostFile(root + "/src/new.py"), QByteArray("new\n"));
    QVERIFY(!QFileInfo::exists(root + "/other.txt"));
    QVERIFY(!QFileInfo(root + "/src/l.py").isSymLink());
}

void TestAgentCoreBackend::flushConflictsAndHostChanges()
{
    FakeAgentCore fake;
    auto backend = started(fake);
    QTemporaryDir project;
    const QString root = project.path();
    writeHostFile(root + "/both.py", "base\n");
    writeHostFile(root + "/hostonly.py", "base\n");
    writeHostFile(root + "/sandboxonly.py", "base\n");
    QVERIFY(backend->seedWorkspace(root, {}).success());
    QThread::msleep(20); // a distinct mtime for the host edits below
    writeHostFile(root + "/both.py", "host edit\n");
    writeHostFile(root + "/hostonly.py", "host edit\n");
    backend->writeFile(QStringLiteral("both.py"), "sandbox edit\n");
    backend->writeFile(QStringLiteral("sandboxonly.py"), "sandbox edit\n");

    const WorkspaceSyncResult r = backend->syncArtifacts(root, {});
    QCOMPARE(r.conflicts, QStringList{QStringLiteral("both.py")});
    QVERIFY(!r.success());
    QCOMPARE(readHostFile(root + "/both.py"), QByteArray("host edit\n"));
    QCOMPARE(readHostFile(root + "/both.py.sandbox-conflict"), QByteArray("sandbox edit\n"));
    QCOMPARE(readHostFile(root + "/hostonly.py"), QByteArray("host edit\n"));
    QCOMPARE(readHostFile(root + "/sandboxonly.py"), QByteArray("sandbox edit\n"));
    QCOMPARE(r.filesSynced, 1);

    // A destination never seeded from: differing files are conflicts, missing ones added.
    QTemporaryDir other;
    writeHostFile(other.path() + "/both.py", "unrelated\n");
    const WorkspaceSyncResult fresh = backend->syncArtifacts(other.path(), {});
    QCOMPARE(fresh.conflicts, QStringList{QStringLiteral("both.py")});
    QCOMPARE(readHostFile(other.path() + "/hostonly.py"), QByteArray("base\n"));
}

void TestAgentCoreBackend::templateBuildsOneBackendPerWorkspace()
{
    FakeAgentCore fake;
    auto tmpl = std::make_shared<AgentCoreSandboxTemplate>(fake.options());
    QCOMPARE(tmpl->typeName(), QStringLiteral("AgentCoreSandboxBackend"));
    const BackendPtr a = tmpl->buildForSession(QStringLiteral("a"));
    QCOMPARE(tmpl->buildForSession(QStringLiteral("a")), a);
    const BackendPtr b = tmpl->buildForSession(QStringLiteral("b"));
    QVERIFY(a != b);
    QVERIFY(supportsExecution(a.get()));
    QCOMPARE(a->typeName(), QStringLiteral("AgentCoreSandboxBackend"));
    a->create();
    b->create();
    QCOMPARE(fake.liveSessions().size(), 2);
    a->close();
    QCOMPARE(fake.liveSessions().size(), 1);
}

void TestAgentCoreBackend::conformanceFactoryOutlivesItsFixture()
{
    std::shared_ptr<SandboxBackend> a, b;
    {
        const auto make = FakeAgentCore::backendFactory();
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

void TestAgentCoreBackend::headlessExecRunsInAnAgentCoreSession()
{
    FakeAgentCore fake;
    QTemporaryDir project;
    writeHostFile(project.path() + "/hello.py", "print('hi')\n");
    QProcess proc;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("AWS_ACCESS_KEY_ID"), fake.credentials().accessKeyId);
    env.insert(QStringLiteral("AWS_SECRET_ACCESS_KEY"), fake.credentials().secretAccessKey);
    env.remove(QStringLiteral("AWS_SESSION_TOKEN"));
    env.remove(QStringLiteral("AWS_REGION"));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    proc.setProcessEnvironment(env);
    proc.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
               {QStringLiteral("--headless"), QStringLiteral("--backend"),
                QStringLiteral("agentcore"), QStringLiteral("--aws-region"), fake.region(),
                QStringLiteral("--agentcore-endpoint"), fake.endpoint().toString(),
                QStringLiteral("--seed-from"), project.path(), QStringLiteral("--exec"),
                QStringLiteral("cat hello.py; echo oops >&2; exit 3")});
    QVERIFY(proc.waitForFinished(60000));
    const QByteArray out = proc.readAllStandardOutput();
    const QByteArray err = proc.readAllStandardError();
    QCOMPARE(proc.exitCode(), 3);
    QVERIFY2(out.contains("print('hi')"), out + err);
    QVERIFY2(err.contains("oops"), err);
    QCOMPARE(fake.sessionsStarted(), 1);
    QVERIFY(fake.liveSessions().isEmpty()); // stopped at the end
    QVERIFY(fake.rejections().isEmpty());
}

void TestAgentCoreBackend::optionsFromEnvironmentAndValidation()
{
    qputenv("AWS_ACCESS_KEY_ID", "AKIDENV");
    qputenv("AWS_SECRET_ACCESS_KEY", "secret");
    qputenv("AWS_SESSION_TOKEN", "token");
    qputenv("AWS_REGION", "eu-north-1");
    qputenv("AWS_ENDPOINT_URL_BEDROCK_AGENTCORE", "http://127.0.0.1:9");
    AgentCoreOptions o = AgentCoreOptions::fromEnvironment();
    QCOMPARE(o.credentials.accessKeyId, QStringLiteral("AKIDENV"));
    QCOMPARE(o.credentials.sessionToken, QStringLiteral("token"));
    QCOMPARE(o.region, QStringLiteral("eu-north-1"));
    QCOMPARE(o.resolvedEndpoint(), QUrl(QStringLiteral("http://127.0.0.1:9")));
    o.validate();
    o.endpoint.clear();
    QCOMPARE(o.resolvedEndpoint(),
             QUrl(QStringLiteral("https://bedrock-agentcore.eu-north-1.amazonaws.com")));
    // the China partition has its own DNS suffix (the SDKs' endpoint rules)
    o.region = QStringLiteral("cn-north-1");
    QCOMPARE(o.resolvedEndpoint(),
             QUrl(QStringLiteral("https://bedrock-agentcore.cn-north-1.amazonaws.com.cn")));
    o.region = QStringLiteral("eu-north-1");
    for (const char *name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                             "AWS_REGION", "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE"})
        qunsetenv(name);

    AgentCoreOptions bad = o;
    bad.credentials = {};
    QVERIFY_THROWS_EXCEPTION(ValueError, bad.validate());
    bad = o;
    bad.region = QStringLiteral("us-east-1/../x");
    QVERIFY_THROWS_EXCEPTION(ValueError, bad.validate());
    bad = o;
    bad.sessionTimeoutSeconds = 28801;
    QVERIFY_THROWS_EXCEPTION(ValueError, bad.validate());
    bad = o;
    bad.env.insert(QStringLiteral("1X"), QStringLiteral("y"));
    QVERIFY_THROWS_EXCEPTION(ValueError, AgentCoreSandboxBackend(QStringLiteral("w"), bad));
}

void TestAgentCoreBackend::sandboxSpecBuildsAnAgentCoreSandbox()
{
    // What `--backend agentcore` does: the spec fills the gaps from the environment.
    FakeAgentCore fake;
    qputenv("AWS_ACCESS_KEY_ID", fake.credentials().accessKeyId.toUtf8());
    qputenv("AWS_SECRET_ACCESS_KEY", fake.credentials().secretAccessKey.toUtf8());
    qputenv("AWS_ENDPOINT_URL_BEDROCK_AGENTCORE", fake.endpoint().toEncoded());
    QTemporaryDir project;
    writeHostFile(project.path() + "/src/main.py", "print(1)\n");
    SandboxSpec spec;
    spec.workspaceId = QStringLiteral("spec-ws");
    spec.backend = QStringLiteral("agentcore");
    spec.agentcore.region = QStringLiteral("us-east-1");
    spec.seedFrom = project.path();
    spec.local.timeout = 1;
    spec.local.env.insert(QStringLiteral("FROM_SPEC"), QStringLiteral("yes"));
    QVERIFY(SandboxSpec::availableBackends().contains(QStringLiteral("agentcore")));
    const SandboxPtr sandbox = spec.createSandbox();
    QCOMPARE(sandbox->backendTypeName(), QStringLiteral("AgentCoreSandboxBackend"));
    const auto seeded = sandbox->start();
    QVERIFY(seeded.has_value());
    QCOMPARE(seeded->filesSeeded, 1);
    QCOMPARE(sandbox->readFile(QStringLiteral("src/main.py")), QStringLiteral("print(1)\n"));
    auto backend = std::dynamic_pointer_cast<SandboxBackend>(sandbox->backend());
    QVERIFY(backend);
    QCOMPARE(backend->execute(QStringLiteral("echo $FROM_SPEC")).output, QStringLiteral("yes\n"));
    QCOMPARE(backend->execute(QStringLiteral("sleep 5")).exitCode, 124); // spec's timeout
    sandbox->addFiles(
        {{QStringLiteral("src/out.py"), FileSource::text(QStringLiteral("x = 2\n"))}});
    const auto synced = sandbox->stop(true);
    QVERIFY(synced.has_value());
    QCOMPARE(synced->filesSynced, 1);
    QCOMPARE(readHostFile(project.path() + "/src/out.py"), QByteArray("x = 2\n"));
    QVERIFY(fake.liveSessions().isEmpty());
    QVERIFY(fake.rejections().isEmpty());
    for (const char *name :
         {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE"})
        qunsetenv(name);
}

QTEST_GUILESS_MAIN(TestAgentCoreBackend)
#include "tst_agentcorebackend.moc"
