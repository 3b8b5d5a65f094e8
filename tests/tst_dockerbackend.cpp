// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The docker backend: its options, and on a real container engine (tests/dockerfixture.h;
// skipped with the reason when none runs) what a container adds to the conformance suite:
// sandboxes do not see each other, no network, a fork bomb meets the pids limit, nothing a
// command starts outlives its call, the container is gone after close, a restarted workbench
// reattaches, and the hardening is in place; and time travel through the container's archive
// endpoint (docs/checkpoints.md): each call's changes, a restore to the checkpoint's digest.

#include "agent.h"
#include "dockerfixture.h"
#include "errors.h"
#include "sandbox.h"
#include "sessionoptions.h"
#include "testutil.h"

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QNetworkInterface>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <thread>

using namespace elsai;
using elsai::test::DockerEngine;

namespace {

SessionOptions parse(const QStringList &args)
{
    QCommandLineParser parser;
    SessionOptions::describe(parser, SessionOptions::Mode::Headless);
    if (!parser.parse(QStringList{QStringLiteral("elsai-workbench")} + args))
        throw ValueError(parser.errorText());
    return SessionOptions::fromParser(parser);
}

QString failure(const QStringList &args)
{
    try {
        parse(args);
    } catch (const SandboxError &e) {
        return e.message();
    }
    return {};
}

docker::EngineResponse engineGet(const QByteArray &path)
{
    const docker::EngineClient engine(docker::EngineEndpoint::parse(DockerEngine::host()));
    docker::EngineRequest r;
    r.path = path;
    return engine.send(r);
}

} // namespace

// QSKIP returns from the function it is in: the test function itself.
#define REQUIRE_ENGINE()                                                                           \
    do {                                                                                           \
        if (!m_engine)                                                                             \
            QSKIP(qPrintable(DockerEngine::unavailable()));                                        \
    } while (false)

class TestDockerBackend : public QObject
{
    Q_OBJECT

    std::shared_ptr<DockerSandboxBackend>
    started(const QString &name, DockerSandboxBackend::Options o = DockerEngine::options())
    {
        auto b = DockerEngine::makeBackend(name, o);
        b->create();
        m_open.append(b);
        return b;
    }
    QList<std::shared_ptr<DockerSandboxBackend>> m_open;
    bool m_engine = false;

private Q_SLOTS:
    void initTestCase()
    {
        const QString why = DockerEngine::unavailable();
        m_engine = why.isEmpty();
        if (!m_engine)
            qInfo("docker: the engine tests skip: %s", qPrintable(why));
    }
    void cleanup()
    {
        for (const auto &b : std::as_const(m_open)) {
            try {
                b->close();
            } catch (const SandboxError &) {
            }
        }
        m_open.clear();
    }
    void cleanupTestCase() { DockerEngine::cleanUp(); }

    // ---- options (no engine needed) ------------------------------------------------------

    void optionsFillTheSpec()
    {
        const SessionOptions o =
            parse({QStringLiteral("--backend"), QStringLiteral("docker"),
                   QStringLiteral("--docker-image"), QStringLiteral("debian:12"),
                   QStringLiteral("--docker-host"), QStringLiteral("unix:///run/x.sock"),
                   QStringLiteral("--docker-network"), QStringLiteral("--docker-keep"),
                   QStringLiteral("--docker-memory"), QStringLiteral("1G"),
                   QStringLiteral("--docker-cpus"), QStringLiteral("1.5"),
                   QStringLiteral("--docker-pids"), QStringLiteral("64")});
        const DockerSandboxBackend::Options &d = o.spec.docker;
        QCOMPARE(d.image, QStringLiteral("debian:12"));
        QCOMPARE(d.host, QStringLiteral("unix:///run/x.sock"));
        QVERIFY(d.network);
        QVERIFY(d.keep);
        QCOMPARE(d.memoryBytes, qint64(1) << 30);
        QCOMPARE(d.cpus, 1.5);
        QCOMPARE(d.pidsLimit, 64);
        // the hardened defaults
        const DockerSandboxBackend::Options defaults;
        QVERIFY(!defaults.network);
        QVERIFY(!defaults.keep);
        QVERIFY(defaults.memoryBytes > 0 && defaults.pidsLimit > 0 && defaults.cpus > 0);
    }

    void badOptionsSayWhatToDo_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        const QStringList docker{QStringLiteral("--backend"), QStringLiteral("docker")};
        QTest::newRow("no image") << docker << QStringLiteral("needs --docker-image IMAGE");
        QTest::newRow("another backend's option")
            << QStringList{QStringLiteral("--docker-image"), QStringLiteral("x")}
            << QStringLiteral("need --backend docker");
        QTest::newRow("a docker option with ssh")
            << QStringList{QStringLiteral("--backend"), QStringLiteral("ssh"),
                           QStringLiteral("--ssh-host"), QStringLiteral("h"),
                           QStringLiteral("--docker-keep")}
            << QStringLiteral("need --backend docker");
        QTest::newRow("bad memory")
            << docker + QStringList{QStringLiteral("--docker-image"), QStringLiteral("x"),
                                    QStringLiteral("--docker-memory"), QStringLiteral("lots")}
            << QStringLiteral("K, M or G");
        QTest::newRow("bad pids") << docker + QStringList{QStringLiteral("--docker-image"),
                                                          QStringLiteral("x"),
                                                          QStringLiteral("--docker-pids"),
                                                          QStringLiteral("-1")}
                                  << QStringLiteral(">= 0");
    }
    void badOptionsSayWhatToDo()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        const QString message = failure(args);
        QVERIFY2(message.contains(mentions), qPrintable(message));
    }

    void engineAddressesParse_data()
    {
        QTest::addColumn<QString>("host");
        QTest::addColumn<QString>("shown");
        QTest::newRow("unix") << QStringLiteral("unix:///var/run/docker.sock")
                              << QStringLiteral("unix:///var/run/docker.sock");
        QTest::newRow("tcp") << QStringLiteral("tcp://10.0.0.2:2376")
                             << QStringLiteral("tcp://10.0.0.2:2376");
        QTest::newRow("relative socket") << QStringLiteral("unix://run/x.sock") << QString();
        QTest::newRow("ssh") << QStringLiteral("ssh://me@host") << QString();
        QTest::newRow("tcp without port") << QStringLiteral("tcp://host") << QString();
    }
    void engineAddressesParse()
    {
        QFETCH(QString, host);
        QFETCH(QString, shown);
        try {
            QCOMPARE(docker::EngineEndpoint::parse(host).display(), shown);
        } catch (const ValueError &) {
            QVERIFY(shown.isEmpty());
        }
    }

    void demuxerSplitsFramesAcrossChunks()
    {
        QByteArray stream;
        const auto frame = [&](char kind, const QByteArray &data) {
            stream += kind;
            stream += QByteArray(3, '\0');
            const quint32 n = quint32(data.size());
            stream += char(n >> 24);
            stream += char(n >> 16);
            stream += char(n >> 8);
            stream += char(n);
            stream += data;
        };
        frame(1, "out1");
        frame(2, QByteArray(70000, 'e'));
        frame(1, "out2");
        QByteArray out, err;
        docker::StreamDemuxer demux([&](int s, const QByteArray &b) { (s == 1 ? out : err) += b; });
        for (qsizetype at = 0; at < stream.size(); at += 7) // odd chunk sizes
            demux.feed(stream.mid(at, 7));
        QCOMPARE(out, QByteArray("out1out2"));
        QCOMPARE(err, QByteArray(70000, 'e'));
        QCOMPARE(demux.pending(), 0);
    }

    // ---- on a real engine ----------------------------------------------------------------

    void theContainerIsHardened()
    {
        REQUIRE_ENGINE();
        auto b = started(QStringLiteral("hardened"));
        const ExecuteResult r =
            b->execute(QStringLiteral("grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; "
                                      "touch /elsai-rootfs 2>/dev/null && echo rootfs-writable; "
                                      "touch /tmp/t && echo tmp-ok; ls /sys/class/net; id -u"));
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.output.contains(QStringLiteral("CapEff:\t0000000000000000")),
                 qPrintable(r.output));
        QVERIFY2(r.output.contains(QStringLiteral("NoNewPrivs:\t1")), qPrintable(r.output));
        QVERIFY(!r.output.contains(QStringLiteral("rootfs-writable")));
        QVERIFY(r.output.contains(QStringLiteral("tmp-ok")));
        QVERIFY2(r.output.contains(QStringLiteral("\nlo\n")), qPrintable(r.output));
        const docker::EngineResponse inspect =
            engineGet("/containers/" + b->containerId().toLatin1() + "/json");
        const QJsonObject host = inspect.json().value(QStringLiteral("HostConfig")).toObject();
        QCOMPARE(host.value(QStringLiteral("NetworkMode")).toString(), QStringLiteral("none"));
        QVERIFY(host.value(QStringLiteral("ReadonlyRootfs")).toBool());
        QCOMPARE(host.value(QStringLiteral("PidsLimit")).toInt(), 256);
        QCOMPARE(host.value(QStringLiteral("Memory")).toDouble(), double(qint64(512) << 20));
        // the image's user, when it names one
        const QString imageUser =
            engineGet("/images/" + QUrl::toPercentEncoding(DockerEngine::image()) + "/json")
                .json()
                .value(QStringLiteral("Config"))
                .toObject()
                .value(QStringLiteral("User"))
                .toString();
        if (!imageUser.isEmpty() && imageUser != QLatin1String("root") &&
            imageUser != QLatin1String("0"))
            QVERIFY2(!r.output.trimmed().endsWith(QStringLiteral("\n0")), qPrintable(r.output));
    }

    void sandboxesDoNotSeeEachOther()
    {
        REQUIRE_ENGINE();
        auto a = started(QStringLiteral("iso-a"));
        auto b = started(QStringLiteral("iso-b"));
        a->writeFile(QStringLiteral("secret.txt"), "only-a-0f3c");
        QCOMPARE(a->readFile(QStringLiteral("secret.txt")), QByteArray("only-a-0f3c"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, b->readFile(QStringLiteral("secret.txt")));
        // a's volume is mounted nowhere in b, and no writable place of b holds a's bytes (the
        // read-only image root cannot: searching it all would cost a minute)
        const ExecuteResult mounts = b->execute(QStringLiteral("cat /proc/self/mountinfo"), 60);
        QCOMPARE(mounts.exitCode, 0);
        QVERIFY2(!mounts.output.contains(a->volumeName()), qPrintable(mounts.output));
        QVERIFY2(mounts.output.contains(b->volumeName()), qPrintable(mounts.output));
        const ExecuteResult r =
            b->execute(QStringLiteral("grep -rl only-a-0f3c / --exclude-dir=proc --exclude-dir=sys "
                                      "--exclude-dir=usr 2>/dev/null; true"),
                       60);
        QVERIFY2(r.output.trimmed().isEmpty(), qPrintable(r.output));
        QVERIFY(a->containerId() != b->containerId());
        QVERIFY(a->volumeName() != b->volumeName());
    }

    void theHostIsUnreachableWithTheNetworkOff()
    {
        REQUIRE_ENGINE();
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::Any));
        QStringList addresses{QStringLiteral("127.0.0.1")};
        for (const QHostAddress &a : QNetworkInterface::allAddresses()) {
            if (a.protocol() == QAbstractSocket::IPv4Protocol && !a.isLoopback())
                addresses << a.toString();
        }
        std::atomic_bool accepted{false};
        QObject::connect(&server, &QTcpServer::newConnection, &server, [&] { accepted = true; });
        auto b = started(QStringLiteral("nonet"));
        QString script;
        for (const QString &a : addresses)
            script += QStringLiteral("timeout 3 bash -c 'echo x > /dev/tcp/%1/%2' 2>/dev/null && "
                                     "echo reached %1; ")
                          .arg(a)
                          .arg(server.serverPort());
        const ExecuteResult r = b->execute(script + QStringLiteral("true"), 60);
        QTest::qWait(200);
        QVERIFY2(!r.output.contains(QStringLiteral("reached")), qPrintable(r.output));
        QVERIFY(!accepted);
    }

    void aForkBombMeetsThePidsLimit()
    {
        REQUIRE_ENGINE();
        auto o = DockerEngine::options();
        o.pidsLimit = 64;
        auto b = started(QStringLiteral("forkbomb"), o);
        QElapsedTimer clock;
        clock.start();
        const ExecuteResult bomb =
            b->execute(QStringLiteral("bash -c 'b() { b | b & }; b' 2>/dev/null; sleep 3; "
                                      "ls -d /proc/[0-9]* | wc -l"),
                       20);
        // it ends (the call's group is killed) and never exceeded the limit
        QVERIFY2(clock.elapsed() < 60000, "the fork bomb call did not end");
        bool ok = false;
        const int processes = bomb.output.trimmed().section(u'\n', -1).toInt(&ok);
        if (ok)
            QVERIFY2(processes <= 64, qPrintable(bomb.output));
        const ExecuteResult after = b->execute(QStringLiteral("echo alive"), 30);
        QCOMPARE(after.exitCode, 0);
        QCOMPARE(after.output, QStringLiteral("alive\n"));
    }

    void aCommandThatOutlivesItsCallIsKilled()
    {
        REQUIRE_ENGINE();
        auto b = started(QStringLiteral("outlive"));
        // left running in the background: killed with the call's group
        QCOMPARE(b->execute(QStringLiteral("(sleep 3; touch late) >/dev/null 2>&1 &")).exitCode, 0);
        // past its timeout: killed, 124
        const ExecuteResult slow = b->execute(QStringLiteral("sleep 30; touch late2"), 1);
        QCOMPARE(slow.exitCode, 124);
        QVERIFY(slow.timedOut);
        // cancelled by its caller: what it started is found by its marker and killed
        ExecuteOptions cancelled;
        cancelled.cancel = std::make_shared<CancellationToken>();
        std::thread canceller([&] {
            QThread::msleep(800);
            cancelled.cancel->cancel();
        });
        const ExecuteResult c =
            b->execute(QStringLiteral("sleep 30; touch late3"), 60, {}, cancelled);
        canceller.join();
        QVERIFY(c.cancelled);
        QTest::qWait(4000);
        // no file the commands would have made, and no `sleep 30` left (this command's own
        // text holds the words, but not as a whole command line)
        const ExecuteResult left = b->execute(
            QStringLiteral("ls late late2 late3 2>/dev/null; for f in /proc/[0-9]*/cmdline; do "
                           "[ \"$(tr '\\0' ' ' < \"$f\" 2>/dev/null)\" = 'sleep 30 ' ] && echo "
                           "\"$f\"; done; true"));
        QVERIFY2(left.output.trimmed().isEmpty(), qPrintable(left.output));
    }

    void theContainerIsGoneAfterClose()
    {
        REQUIRE_ENGINE();
        auto b = started(QStringLiteral("gone"));
        const QByteArray id = b->containerId().toLatin1();
        const QByteArray volume = QUrl::toPercentEncoding(b->volumeName());
        QVERIFY(engineGet("/containers/" + id + "/json").ok());
        b->close();
        QCOMPARE(engineGet("/containers/" + id + "/json").status, 404);
        QCOMPARE(engineGet("/volumes/" + volume).status, 404);
        QVERIFY(!b->isCreated());
        QVERIFY_THROWS_EXCEPTION(OSError, b->readFile(QStringLiteral("x")));
    }

    void keepStopsAndARestartReattaches()
    {
        REQUIRE_ENGINE();
        auto o = DockerEngine::options();
        o.keep = true;
        auto first = DockerEngine::makeBackend(QStringLiteral("keep"), o);
        first->create();
        first->writeFile(QStringLiteral("kept.txt"), "still here");
        const QString id = first->containerId();
        first->close();
        const QJsonObject state = engineGet("/containers/" + id.toLatin1() + "/json")
                                      .json()
                                      .value(QStringLiteral("State"))
                                      .toObject();
        QCOMPARE(state.value(QStringLiteral("Running")).toBool(), false);
        // a new workbench, the same workspace id: the same container, started again
        auto again = started(QStringLiteral("keep"), o);
        QCOMPARE(again->containerId(), id);
        QCOMPARE(again->readFile(QStringLiteral("kept.txt")), QByteArray("still here"));
        QVERIFY(DockerSandboxBackend::removeLabelled(o, {DockerSandboxBackend::workspaceLabel() +
                                                         u'=' + again->workspaceId()}) >= 1);
        QCOMPARE(engineGet("/containers/" + id.toLatin1() + "/json").status, 404);
    }

    void largeFilesAndArchivesRoundTrip()
    {
        REQUIRE_ENGINE();
        auto b = started(QStringLiteral("large"));
        QByteArray big(300 * 1024, 'x');
        for (int i = 0; i < big.size(); i += 997)
            big[i] = char(i % 256);
        b->writeFile(QStringLiteral("d/big.bin"), big); // past the inline size: an archive
        QCOMPARE(b->readFile(QStringLiteral("d/big.bin")), big);
        for (const FileInfo &e : b->listDir(QStringLiteral("d")))
            QVERIFY2(!e.path.contains(QLatin1String(".elsai-tmp-")), qPrintable(e.path));
        QTemporaryDir project;
        test::writeHostFile(project.path() + QStringLiteral("/src/a.py"), "print(1)\n");
        const WorkspaceSeedResult seeded =
            b->seedWorkspace(project.path(), DEFAULT_SANDBOX_SEED_EXCLUDES);
        QVERIFY2(seeded.success(), qPrintable(seeded.errors.join(u'\n')));
        QCOMPARE(b->readFile(QStringLiteral("src/a.py")), QByteArray("print(1)\n"));
        // a file the container's user can change
        QCOMPARE(b->execute(QStringLiteral("echo 'print(2)' > src/a.py")).exitCode, 0);
        const WorkspaceSyncResult flushed =
            b->syncArtifacts(project.path(), defaultSandboxSyncPolicy());
        QVERIFY2(flushed.errors.isEmpty(), qPrintable(flushed.errors.join(u'\n')));
        QCOMPARE(test::readHostFile(project.path() + QStringLiteral("/src/a.py")),
                 QByteArray("print(2)\n"));
    }

    void checkpointsAndChangesPerCall()
    {
        REQUIRE_ENGINE();
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.sandbox.audit=false"));
        auto b = DockerEngine::makeBackend(QStringLiteral("ckpt"));
        m_open.append(b);
        QTemporaryDir store;
        Sandbox::Options options;
        options.timeTravel.checkpoints = true;
        options.timeTravel.trackChanges = true;
        options.timeTravel.baseline = false;
        options.timeTravel.folder = store.path();
        const SandboxPtr sandbox = Sandbox::create(b->workspaceId(), b, std::nullopt, options);
        sandbox->start();
        const auto stop = qScopeGuard([&] { sandbox->stop(false); });
        QCOMPARE(b->execute(
                      QStringLiteral("mkdir -p src/lib empty && printf 'hello\\n' > src/main.py && "
                                     "echo u > src/lib/u.py && printf 'a\\nb\\n' > notes.txt && "
                                     "chmod 600 notes.txt && ln -s src/main.py link && "
                                     "mkdir priv && chmod 700 priv && echo s > priv/s"))
                     .exitCode,
                 0);
        sandbox->checkpoint(QStringLiteral("base"));
        const QByteArray base = treeDigest(sandbox->timeTravel()->manifest(QStringLiteral("base")));
        QCOMPARE(treeDigest(b->captureTree({})), base);

        AgentConfig config;
        config.sandbox = sandbox;
        config.sandboxMode = SandboxMode::Sandbox;
        const AgentPtr agent = Agent::create(QStringLiteral("docker-agent"), config);
        const auto paths = [&](const char *command) {
            const ToolResult r =
                agent->callTool(QStringLiteral("execute"),
                                {{QStringLiteral("command"), QString::fromLatin1(command)}});
            const QJsonObject p = r.data.value(QStringLiteral("changes"))
                                      .toObject()
                                      .value(QStringLiteral("paths"))
                                      .toObject();
            QStringList out;
            for (const char *kind : {"added", "modified", "deleted"}) {
                for (const QJsonValue &v : p.value(QLatin1String(kind)).toArray())
                    out.append(QLatin1String(kind).left(1) + u':' + v.toString());
            }
            return out.join(u' ');
        };
        QCOMPARE(paths("sed -i s/a/b/ notes.txt && echo x >> src/main.py && chmod 755 "
                       "src/lib/u.py && ln -s notes.txt l"),
                 QStringLiteral("a:l m:notes.txt m:src/lib/u.py m:src/main.py"));
        QCOMPARE(paths("mv src/lib src/x && mkdir -p n/m && rm -r priv && rm notes.txt && "
                       "mkdir notes.txt"),
                 QStringLiteral("a:n a:n/m a:notes.txt a:src/x a:src/x/u.py d:notes.txt "
                                "d:priv d:priv/s d:src/lib d:src/lib/u.py"));
        // back to the checkpoint: contents, modes, links, empty folders
        const RestoreResult restored = sandbox->restore(QStringLiteral("base"));
        QVERIFY(restored.applied.written > 0 && restored.applied.removed > 0);
        QCOMPARE(treeDigest(b->captureTree({})), base);
        QCOMPARE(b->readFile(QStringLiteral("src/main.py")), QByteArray("hello\n"));
        QCOMPARE(paths("true"), QString());
    }
};

QTEST_GUILESS_MAIN(TestDockerBackend)
#include "tst_dockerbackend.moc"
