// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The Daytona command-line options (--daytona-api-url, --daytona-target,
// --daytona-api-key-file): parsed into the spec, refused with a message that says what to do,
// the environment as the default, and the real executable against FakeDaytona. And the
// window's side: every backend's options, put in the New Sandbox dialog (as File > New
// Sandbox does in a window started with them), come back out of it unchanged.

#include "errors.h"
#include "fakedaytona.h"
#include "newsandboxdialog.h"
#include "sessionoptions.h"
#include "testutil.h"

#include <QComboBox>
#include <QCommandLineParser>
#include <QStackedWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace elsai;
using elsai::test::FakeDaytona;

namespace {

SessionOptions parse(QStringList args)
{
    QCommandLineParser parser;
    SessionOptions::describe(parser, SessionOptions::Mode::Headless);
    args.prepend(QStringLiteral("elsai-workbench"));
    if (!parser.parse(args))
        throw ValueError(parser.errorText());
    return SessionOptions::fromParser(parser);
}

/// The ValueError message parse() throws, or "" when it parses.
QString failure(const QStringList &args)
{
    try {
        parse(args);
    } catch (const ValueError &e) {
        return e.message();
    }
    return {};
}

const QStringList kDaytona{QStringLiteral("--backend"), QStringLiteral("daytona")};

/// Clears variables (the DAYTONA_* ones by default) for one test, and puts them back after it.
class CleanEnv
{
public:
    explicit CleanEnv(QList<QByteArray> names = {"DAYTONA_API_KEY", "DAYTONA_API_URL",
                                                 "DAYTONA_SERVER_URL", "DAYTONA_TARGET",
                                                 "DAYTONA_JWT_TOKEN", "DAYTONA_ORGANIZATION_ID"})
        : m_names(std::move(names))
    {
        for (const QByteArray &name : std::as_const(m_names)) {
            if (qEnvironmentVariableIsSet(name.constData()))
                m_saved.insert(name, qgetenv(name.constData()));
            qunsetenv(name.constData());
        }
    }
    ~CleanEnv()
    {
        for (const QByteArray &name : std::as_const(m_names)) {
            if (m_saved.contains(name))
                qputenv(name.constData(), m_saved.value(name));
            else
                qunsetenv(name.constData());
        }
    }

private:
    QList<QByteArray> m_names;
    QHash<QByteArray, QByteArray> m_saved;
};

} // namespace

class TestSessionOptions : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_keyFile = m_dir.filePath(QStringLiteral("daytona-key"));
        test::writeHostFile(m_keyFile, "dtn_key\n");
    }

    void readFileMaxBytesOption()
    {
        const CleanEnv clean;
        QCOMPARE(parse({}).spec.readFileMaxBytes, DefaultReadFileMaxBytes);
        const QTemporaryDir root;
        SandboxSpec spec = parse({QStringLiteral("--read-file-max-bytes"), QStringLiteral("1000"),
                                  QStringLiteral("--workspace-root"), root.path()})
                               .spec;
        QCOMPARE(spec.readFileMaxBytes, 1000);
        QCOMPARE(spec.createSandbox()->options().readFileMaxBytes, std::optional<qint64>(1000));
        QVERIFY(!failure({QStringLiteral("--read-file-max-bytes"), QStringLiteral("0")}).isEmpty());
    }

    void executeSoftReturnFillsTheSpec()
    {
        const CleanEnv clean;
        QCOMPARE(parse({}).spec.executeSoftReturnSeconds, std::nullopt);
        const QTemporaryDir root;
        SandboxSpec spec = parse({QStringLiteral("--execute-soft-return"), QStringLiteral("2.5"),
                                  QStringLiteral("--workspace-root"), root.path()})
                               .spec;
        QCOMPARE(spec.executeSoftReturnSeconds, std::optional<double>(2.5));
        QCOMPARE(spec.createSandbox()->options().executeSoftReturnSeconds,
                 std::optional<double>(2.5));
        QCOMPARE(parse({QStringLiteral("--execute-soft-return"), QStringLiteral("0")})
                     .spec.executeSoftReturnSeconds,
                 std::optional<double>(0));
        QCOMPARE(failure({QStringLiteral("--execute-soft-return"), QStringLiteral("-1")}),
                 QStringLiteral("--execute-soft-return needs a number of seconds >= 0 (0: never), "
                                "got '-1'"));
    }

    void daytonaOptionsFillTheSpec()
    {
        const CleanEnv clean;
        const QTemporaryDir dir;
        const QString keyFile = dir.filePath(QStringLiteral("key"));
        test::writeHostFile(keyFile, "dtn_secret-1\r\nsecond line ignored\n");
        const SessionOptions o =
            parse(kDaytona + QStringList{QStringLiteral("--daytona-api-url"),
                                         QStringLiteral("http://127.0.0.1:4000/api"),
                                         QStringLiteral("--daytona-target"), QStringLiteral("eu"),
                                         QStringLiteral("--daytona-api-key-file"), keyFile});
        QCOMPARE(o.spec.backend, QStringLiteral("daytona"));
        QCOMPARE(o.spec.daytona.config.apiUrl, QUrl(QStringLiteral("http://127.0.0.1:4000/api")));
        QCOMPARE(o.spec.daytona.config.target, QStringLiteral("eu"));
        QCOMPARE(o.spec.daytona.config.apiKey, QStringLiteral("dtn_secret-1"));
    }

    void sshOptionsFillTheSpec()
    {
        const SessionOptions o = parse(
            {QStringLiteral("--backend"), QStringLiteral("ssh"), QStringLiteral("--ssh-host"),
             QStringLiteral("build.example"), QStringLiteral("--ssh-port"), QStringLiteral("2222"),
             QStringLiteral("--ssh-user"), QStringLiteral("ci"), QStringLiteral("--ssh-identity"),
             QStringLiteral("/k"), QStringLiteral("--ssh-known-hosts"), QStringLiteral("/kh"),
             QStringLiteral("--ssh-remote-root"), QStringLiteral("/srv/ws")});
        QCOMPARE(o.spec.backend, QStringLiteral("ssh"));
        QCOMPARE(o.spec.ssh.host, QStringLiteral("build.example"));
        QCOMPARE(o.spec.ssh.port, 2222);
        QCOMPARE(o.spec.ssh.user, QStringLiteral("ci"));
        QCOMPARE(o.spec.ssh.identityFile, QStringLiteral("/k"));
        QCOMPARE(o.spec.ssh.knownHostsFile, QStringLiteral("/kh"));
        QCOMPARE(o.spec.sshRemoteRoot, QStringLiteral("/srv/ws"));
        QVERIFY(SandboxSpec::availableBackends().contains(QStringLiteral("ssh")));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 parse({QStringLiteral("--backend"), QStringLiteral("ssh")}));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 parse({QStringLiteral("--ssh-host"), QStringLiteral("h")}));
        QVERIFY_THROWS_EXCEPTION(
            ValueError,
            parse({QStringLiteral("--backend"), QStringLiteral("ssh"), QStringLiteral("--ssh-host"),
                   QStringLiteral("h"), QStringLiteral("--ssh-port"), QStringLiteral("70000")}));
    }

    void flushNoBaseRule()
    {
        QCOMPARE(parse({}).spec.noBaseConflict, NoBaseConflict::KeepBoth); // the safe default
        QCOMPARE(parse({QStringLiteral("--flush-no-base"), QStringLiteral("overwrite")})
                     .spec.noBaseConflict,
                 NoBaseConflict::Overwrite);
        QCOMPARE(parse({QStringLiteral("--flush-no-base"), QStringLiteral("keep-both")})
                     .spec.noBaseConflict,
                 NoBaseConflict::KeepBoth);
        const QString bad = failure({QStringLiteral("--flush-no-base"), QStringLiteral("yes")});
        QVERIFY2(bad.contains(QStringLiteral("keep-both")) && bad.contains(QStringLiteral("'yes'")),
                 qPrintable(bad));
    }

    void theEnvironmentIsTheDefaultAndTheCommandLineWins()
    {
        const CleanEnv clean;
        qputenv("DAYTONA_API_KEY", "from-env");
        qputenv("DAYTONA_API_URL", "https://env.example/api");
        qputenv("DAYTONA_TARGET", "us");
        SessionOptions o = parse(kDaytona);
        QCOMPARE(o.spec.daytona.config.apiKey, QStringLiteral("from-env"));
        QCOMPARE(o.spec.daytona.config.apiUrl, QUrl(QStringLiteral("https://env.example/api")));
        QCOMPARE(o.spec.daytona.config.target, QStringLiteral("us"));

        const QTemporaryDir dir;
        const QString keyFile = dir.filePath(QStringLiteral("key"));
        test::writeHostFile(keyFile, "from-file\n");
        o = parse(kDaytona + QStringList{QStringLiteral("--daytona-api-url"),
                                         QStringLiteral("https://cli.example/api"),
                                         QStringLiteral("--daytona-target"), QStringLiteral("eu"),
                                         QStringLiteral("--daytona-api-key-file"), keyFile});
        QCOMPARE(o.spec.daytona.config.apiKey, QStringLiteral("from-file"));
        QCOMPARE(o.spec.daytona.config.apiUrl, QUrl(QStringLiteral("https://cli.example/api")));
        QCOMPARE(o.spec.daytona.config.target, QStringLiteral("eu"));
    }

    void noOptionTakesTheKeyItself()
    {
        // A key on the command line would be in `ps` and /proc/PID/cmdline for every user.
        QCommandLineParser parser;
        SessionOptions::describe(parser, SessionOptions::Mode::Headless);
        QVERIFY(!parser.parse({QStringLiteral("elsai-workbench"),
                               QStringLiteral("--daytona-api-key"), QStringLiteral("dtn_x")}));
        QVERIFY(parser.errorText().contains(QStringLiteral("daytona-api-key")));
        QVERIFY(parser.helpText().contains(QStringLiteral("--daytona-api-key-file")));
        QVERIFY(parser.helpText().contains(QStringLiteral("(ps)")));
    }

    void badDaytonaOptionsSayWhatToDo_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        const QString url = QStringLiteral("--daytona-api-url");
        const QString target = QStringLiteral("--daytona-target");
        const QString key = QStringLiteral("--daytona-api-key-file");
        QTest::newRow("url without the backend")
            << QStringList{url, QStringLiteral("https://x/api")}
            << QStringLiteral("need --backend daytona");
        QTest::newRow("target with another backend")
            << QStringList{QStringLiteral("--backend"), QStringLiteral("local"), target,
                           QStringLiteral("eu")}
            << QStringLiteral("need --backend daytona");
        QTest::newRow("key file without the backend")
            << QStringList{key, QStringLiteral("/nonexistent")}
            << QStringLiteral("need --backend daytona");
        QTest::newRow("url not http") << kDaytona + QStringList{url, QStringLiteral("ftp://x/api")}
                                      << QStringLiteral("https://app.daytona.io/api");
        QTest::newRow("url without host")
            << kDaytona + QStringList{url, QStringLiteral("app.daytona.io/api")}
            << QStringLiteral("needs an http(s) URL");
        QTest::newRow("url empty")
            << kDaytona + QStringList{url, QString()} << QStringLiteral("needs an http(s) URL");
        QTest::newRow("target empty")
            << kDaytona + QStringList{target, QString()} << QStringLiteral("such as us or eu");
        QTest::newRow("target with a space")
            << kDaytona + QStringList{target, QStringLiteral("e u")} << QStringLiteral("got 'e u'");
        QTest::newRow("target path") << kDaytona + QStringList{target, QStringLiteral("../eu")}
                                     << QStringLiteral("such as us or eu");
        QTest::newRow("key file missing")
            << kDaytona + QStringList{key, QStringLiteral("/nonexistent/key")}
            << QStringLiteral("no such file '/nonexistent/key'");
        QTest::newRow("key file is a folder") << kDaytona + QStringList{key, QStringLiteral("/")}
                                              << QStringLiteral("not a regular file");
    }

    void badDaytonaOptionsSayWhatToDo()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        const QString message = failure(args);
        QVERIFY2(message.contains(mentions), qPrintable(message));
    }

    void mcpProgressIntervalIsAPositiveNumber()
    {
        const QStringList mcp{QStringLiteral("--headless"), QStringLiteral("--mcp-stdio"),
                              QStringLiteral("--mcp-agent"), QStringLiteral("a=read_only")};
        QCOMPARE(parse(mcp).mcpProgressInterval, 5.0);
        QCOMPARE(parse(mcp + QStringList{QStringLiteral("--mcp-progress-interval"),
                                         QStringLiteral("0.25")})
                     .mcpProgressInterval,
                 0.25);
        for (const char *bad : {"0", "-1", "soon", "nan"}) {
            const QString message = failure(
                mcp + QStringList{QStringLiteral("--mcp-progress-interval"), QLatin1String(bad)});
            QVERIFY2(message.contains(QStringLiteral("--mcp-progress-interval needs a positive "
                                                     "number")),
                     qPrintable(message));
        }
    }

    void badKeyFilesAreRefused()
    {
        const QTemporaryDir dir;
        const auto keyFailure = [&](const QString &path) {
            return failure(kDaytona + QStringList{QStringLiteral("--daytona-api-key-file"), path});
        };
        const QString empty = dir.filePath(QStringLiteral("empty"));
        test::writeHostFile(empty, "\n\n");
        QVERIFY(keyFailure(empty).contains(QStringLiteral("is empty; put the key")));
        const QString spaced = dir.filePath(QStringLiteral("spaced"));
        test::writeHostFile(spaced, "not a key\n");
        QVERIFY(keyFailure(spaced).contains(QStringLiteral("not a key")));
        const QString big = dir.filePath(QStringLiteral("big"));
        test::writeHostFile(big, QByteArray(70000, 'k'));
        QVERIFY(keyFailure(big).contains(QStringLiteral("too large")));
        // A FIFO is refused before it is opened: reading it would block the start-up.
        const QString fifo = dir.filePath(QStringLiteral("fifo"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        QVERIFY(keyFailure(fifo).contains(QStringLiteral("not a regular file")));
        if (::geteuid() != 0) {
            const QString locked = dir.filePath(QStringLiteral("locked"));
            test::writeHostFile(locked, "k\n");
            QFile::setPermissions(locked, {});
            QVERIFY(keyFailure(locked).contains(QStringLiteral("cannot read")));
        }
    }

    void commandLineSurvivesTheNewSandboxDialog_data()
    {
        QTest::addColumn<QStringList>("args");
        const QString project = QDir::tempPath();
        const QStringList common{QStringLiteral("--workspace-id"),
                                 QStringLiteral("cli"),
                                 QStringLiteral("--read-file-max-bytes"),
                                 QStringLiteral("4096"),
                                 QStringLiteral("--execute-soft-return"),
                                 QStringLiteral("30"),
                                 QStringLiteral("--seed-from"),
                                 project,
                                 QStringLiteral("--seed-exclude"),
                                 QStringLiteral("*.log"),
                                 QStringLiteral("--sync-include"),
                                 QStringLiteral("src/**"),
                                 QStringLiteral("--sync-dest"),
                                 QStringLiteral("/tmp/out"),
                                 QStringLiteral("--flush-no-base"),
                                 QStringLiteral("overwrite"),
                                 QStringLiteral("--ttl"),
                                 QStringLiteral("none"),
                                 QStringLiteral("--timeout"),
                                 QStringLiteral("33"),
                                 QStringLiteral("--max-output-bytes"),
                                 QStringLiteral("5000"),
                                 QStringLiteral("--env"),
                                 QStringLiteral("A=b=c")};
        QTest::newRow("local") << common + QStringList{QStringLiteral("--workspace-root"),
                                                       QStringLiteral("/tmp/ws-cli"),
                                                       QStringLiteral("--no-inherit-env")};
        QTest::newRow("bwrap") << common + QStringList{QStringLiteral("--backend"),
                                                       QStringLiteral("bwrap"),
                                                       QStringLiteral("--workspace-root"),
                                                       QStringLiteral("/tmp/ws-cli"),
                                                       QStringLiteral("--bwrap-network"),
                                                       QStringLiteral("--bwrap-max-processes"),
                                                       QStringLiteral("64"),
                                                       QStringLiteral("--bwrap-max-file-size"),
                                                       QStringLiteral("2M"),
                                                       QStringLiteral("--bwrap-max-memory"),
                                                       QStringLiteral("0"),
                                                       QStringLiteral("--bwrap-ro-bind"),
                                                       QStringLiteral("/opt/a"),
                                                       QStringLiteral("--bwrap-program"),
                                                       QStringLiteral("/usr/bin/bwrap"),
                                                       QStringLiteral("--bwrap-no-pids-cgroup")};
        QTest::newRow("ssh")
            << common +
                   QStringList{QStringLiteral("--backend"),         QStringLiteral("ssh"),
                               QStringLiteral("--ssh-host"),        QStringLiteral("build.example"),
                               QStringLiteral("--ssh-port"),        QStringLiteral("2222"),
                               QStringLiteral("--ssh-user"),        QStringLiteral("ci"),
                               QStringLiteral("--ssh-identity"),    QStringLiteral("/k"),
                               QStringLiteral("--ssh-known-hosts"), QStringLiteral("/kh"),
                               QStringLiteral("--ssh-remote-root"), QStringLiteral("/srv/ws")};
        QTest::newRow("daytona") << common + QStringList{QStringLiteral("--backend"),
                                                         QStringLiteral("daytona"),
                                                         QStringLiteral("--daytona-api-key-file"),
                                                         m_keyFile,
                                                         QStringLiteral("--daytona-api-url"),
                                                         QStringLiteral("https://d.example/api"),
                                                         QStringLiteral("--daytona-target"),
                                                         QStringLiteral("eu")};
        QTest::newRow("agentcore") << common + QStringList{QStringLiteral("--backend"),
                                                           QStringLiteral("agentcore"),
                                                           QStringLiteral("--aws-region"),
                                                           QStringLiteral("eu-west-3"),
                                                           QStringLiteral("--agentcore-endpoint"),
                                                           QStringLiteral("http://127.0.0.1:9")};
    }

    void commandLineSurvivesTheNewSandboxDialog()
    {
        QFETCH(QStringList, args);
        const CleanEnv clean;
        // AgentCore's credentials only ever come from the environment (no option takes them)
        const CleanEnv aws({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"});
        qputenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE");
        qputenv("AWS_SECRET_ACCESS_KEY", "secret");
        const SandboxSpec cli = parse(args).spec;
        NewSandboxDialog dialog;
        dialog.setSpec(cli);
        QCOMPARE(dialog.findChild<QComboBox *>(QStringLiteral("backend"))->currentText(),
                 cli.backend);
        QCOMPARE(dialog.findChild<QStackedWidget *>(QStringLiteral("backendPages"))
                     ->currentWidget()
                     ->objectName(),
                 QStringLiteral("page_") + cli.backend);
        QVERIFY2(dialog.validationMessage().isEmpty(), qPrintable(dialog.validationMessage()));
        const SandboxSpec back = dialog.spec();
        QCOMPARE(back.workspaceId, cli.workspaceId);
        QCOMPARE(back.backend, cli.backend);
        QCOMPARE(back.workspaceRoot, cli.workspaceRoot);
        QCOMPARE(back.seedFrom, cli.seedFrom);
        QCOMPARE(back.seedExclude, cli.seedExclude);
        QCOMPARE(back.syncInclude, cli.syncInclude);
        QCOMPARE(back.syncDest, cli.syncDest);
        QCOMPARE(cli.noBaseConflict, NoBaseConflict::Overwrite);
        QCOMPARE(back.noBaseConflict, cli.noBaseConflict);
        QCOMPARE(back.ttlSeconds, cli.ttlSeconds);
        QCOMPARE(back.readFileMaxBytes, cli.readFileMaxBytes);
        QCOMPARE(back.executeSoftReturnSeconds, cli.executeSoftReturnSeconds);
        QCOMPARE(back.local.timeout, cli.local.timeout);
        QCOMPARE(back.local.maxOutputBytes, cli.local.maxOutputBytes);
        QCOMPARE(back.local.env, cli.local.env);
        if (cli.backend == QLatin1String("local"))
            QCOMPARE(back.local.inheritEnv, cli.local.inheritEnv);
        const BwrapSandboxBackend::Options &b = back.bwrap;
        QCOMPARE(b.network, cli.bwrap.network);
        QCOMPARE(b.maxProcesses, cli.bwrap.maxProcesses);
        QCOMPARE(b.maxFileSizeBytes, cli.bwrap.maxFileSizeBytes);
        QCOMPARE(b.maxMemoryBytes, cli.bwrap.maxMemoryBytes);
        QCOMPARE(b.readOnlyBinds, cli.bwrap.readOnlyBinds);
        QCOMPARE(b.bwrapPath, cli.bwrap.bwrapPath);
        QCOMPARE(b.pidsCgroup, cli.bwrap.pidsCgroup);
        QCOMPARE(back.ssh.host, cli.ssh.host);
        QCOMPARE(back.ssh.port, cli.ssh.port);
        QCOMPARE(back.ssh.user, cli.ssh.user);
        QCOMPARE(back.ssh.identityFile, cli.ssh.identityFile);
        QCOMPARE(back.ssh.knownHostsFile, cli.ssh.knownHostsFile);
        QCOMPARE(back.sshRemoteRoot, cli.sshRemoteRoot);
        QCOMPARE(back.daytona.config.apiUrl, cli.daytona.config.apiUrl);
        QCOMPARE(back.daytona.config.target, cli.daytona.config.target);
        QCOMPARE(back.daytona.config.apiKey, cli.daytona.config.apiKey);
        QCOMPARE(back.agentcore.region, cli.agentcore.region);
        QCOMPARE(back.agentcore.endpoint, cli.agentcore.endpoint);
    }

    void headlessExecTakesDaytonaFromTheCommandLine()
    {
        FakeDaytona fake;
        const QTemporaryDir dir;
        const QString keyFile = dir.filePath(QStringLiteral("key"));
        test::writeHostFile(keyFile, fake.apiKey().toUtf8() + '\n');
        QProcess proc;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const QString &name : env.keys()) {
            if (name.startsWith(QLatin1String("DAYTONA_")))
                env.remove(name);
        }
        env.insert(QStringLiteral("DAYTONA_API_KEY"), QStringLiteral("wrong key"));
        proc.setProcessEnvironment(env);
        proc.setStandardInputFile(QProcess::nullDevice());
        proc.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
                   {QStringLiteral("--headless"), QStringLiteral("--backend"),
                    QStringLiteral("daytona"), QStringLiteral("--daytona-api-url"),
                    fake.apiUrl().toString(), QStringLiteral("--daytona-target"),
                    QStringLiteral("eu"), QStringLiteral("--daytona-api-key-file"), keyFile,
                    QStringLiteral("--exec"), QStringLiteral("echo hi; exit 4")});
        QVERIFY(proc.waitForFinished(60000));
        const QByteArray err = proc.readAllStandardError();
        QVERIFY2(proc.exitCode() == 4, err.constData());
        QCOMPARE(proc.readAllStandardOutput(), QByteArray("hi\n"));
        QCOMPARE(fake.sandboxes().size(), 1);
        QCOMPARE(fake.sandboxes()[0].createBody.value("target").toString(), QStringLiteral("eu"));

        // A usage error (exit 2) names the option, before any request.
        QProcess bad;
        bad.setProcessEnvironment(env);
        bad.setStandardInputFile(QProcess::nullDevice());
        bad.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
                  {QStringLiteral("--headless"), QStringLiteral("--daytona-target"),
                   QStringLiteral("eu"), QStringLiteral("--exec"), QStringLiteral("true")});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(bad.readAllStandardError().contains("--backend daytona"));
        QCOMPARE(fake.sandboxes().size(), 1);
    }

private:
    QTemporaryDir m_dir;
    QString m_keyFile;
};

QTEST_MAIN(TestSessionOptions)
#include "tst_sessionoptions.moc"
