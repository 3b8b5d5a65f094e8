// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Runs the real elsai-workbench executable headless (no display) and checks its command line,
// its --exec runner, its JSON-lines script runner, its exit statuses and its audit log.

#include "bwrapsandboxbackend.h"
#include "errors.h"
#include "sessionoptions.h"
#include "testutil.h"

#include <QCommandLineParser>
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#ifndef ELSAI_WORKBENCH_BIN
#error "ELSAI_WORKBENCH_BIN must name the elsai-workbench executable"
#endif

namespace {

struct RunResult
{
    bool finished = false;
    int exitCode = -1;
    QProcess::ExitStatus exitStatus = QProcess::CrashExit;
    QByteArray out;
    QByteArray err;
    qint64 elapsedMs = 0;
};

using elsai::test::readHostFile;
using elsai::test::writeHostFile;

QList<QJsonObject> parseLines(const QByteArray &data, QString *problem)
{
    QList<QJsonObject> out;
    const QList<QByteArray> lines = data.split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        if (lines[i].isEmpty() && i == lines.size() - 1)
            break; // after the final newline
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(lines[i], &err);
        if (err.error != QJsonParseError::NoError || !doc.isObject()) {
            *problem = QStringLiteral("line %1 is not a JSON object: %2")
                           .arg(i + 1)
                           .arg(QString::fromUtf8(lines[i]));
            return out;
        }
        out.append(doc.object());
    }
    return out;
}

QString dump(const QJsonObject &o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

QStringList stringsOf(const QJsonValue &v)
{
    QStringList out;
    for (const QJsonValue &item : v.toArray())
        out.append(item.toString());
    return out;
}

QByteArray jsonLine(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
}

} // namespace

class TestHeadless : public QObject
{
    Q_OBJECT

private:
    /// Runs the workbench with `args` and `input` on stdin, without a display, in a temporary
    /// working folder. Waits at most `timeoutMs` (a "did not hang" bound).
    RunResult runWorkbench(const QStringList &args, const QByteArray &input = {},
                           int timeoutMs = 60000)
    {
        RunResult r;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *name :
             {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "QT_LOGGING_RULES"})
            env.remove(QLatin1String(name));
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(m_tmp->path());
        QElapsedTimer timer;
        timer.start();
        p.start(QStringLiteral(ELSAI_WORKBENCH_BIN), args);
        if (!p.waitForStarted(10000))
            return r;
        if (!input.isEmpty())
            p.write(input);
        p.closeWriteChannel();
        r.finished = p.waitForFinished(timeoutMs);
        r.elapsedMs = timer.elapsed();
        if (!r.finished) {
            p.kill();
            p.waitForFinished(5000);
        }
        r.exitCode = p.exitCode();
        r.exitStatus = p.exitStatus();
        r.out = p.readAllStandardOutput();
        r.err = p.readAllStandardError();
        return r;
    }

    /// `--headless --workspace-root <fresh folder>` plus `args`.
    QStringList headless(const QStringList &args) const
    {
        return QStringList{QStringLiteral("--headless"), QStringLiteral("--workspace-root"),
                           m_ws->path()} +
               args;
    }

    QString tmpPath(const QString &rel) const { return m_tmp->path() + QLatin1Char('/') + rel; }

    void makeProject()
    {
        QVERIFY(writeHostFile(m_project->path() + QStringLiteral("/src/main.py"), "print('hi')\n"));
        QVERIFY(writeHostFile(m_project->path() + QStringLiteral("/README.md"), "# demo\n"));
        QVERIFY(writeHostFile(m_project->path() + QStringLiteral("/.env"), "TOKEN=secret\n"));
    }

    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<QTemporaryDir> m_ws;
    std::unique_ptr<QTemporaryDir> m_project;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(QStringLiteral(ELSAI_WORKBENCH_BIN)).isExecutable(),
                 ELSAI_WORKBENCH_BIN);
    }

    void init()
    {
        m_tmp = std::make_unique<QTemporaryDir>();
        m_ws = std::make_unique<QTemporaryDir>();
        m_project = std::make_unique<QTemporaryDir>();
        QVERIFY(m_tmp->isValid() && m_ws->isValid() && m_project->isValid());
    }

    void cleanup()
    {
        m_project.reset();
        m_ws.reset();
        m_tmp.reset();
    }

    // ---- command line ------------------------------------------------------------------------

    void helpMentionsEveryOption_data()
    {
        QTest::addColumn<QString>("option");
        for (const char *o : {"--workspace-id",
                              "--workspace-root",
                              "--seed-from",
                              "--seed-exclude",
                              "--sync-include",
                              "--sync-dest",
                              "--ttl",
                              "--timeout",
                              "--max-output-bytes",
                              "--audit-log",
                              "--backend",
                              "--exec",
                              "--script",
                              "--headless",
                              "--version",
                              "--verbose",
                              "--env",
                              "--no-inherit-env",
                              "--offload",
                              "--offload-dir",
                              "--offload-max-tokens",
                              "--offload-preview-tokens",
                              "--bwrap-network",
                              "--bwrap-max-processes",
                              "--bwrap-max-file-size",
                              "--bwrap-max-memory",
                              "--bwrap-ro-bind",
                              "--bwrap-program",
                              "--bwrap-no-pids-cgroup"})
            QTest::newRow(o) << QString::fromLatin1(o);
    }

    void helpMentionsEveryOption()
    {
        QFETCH(QString, option);
        const RunResult r = runWorkbench({QStringLiteral("--help")});
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        const QString help = QString::fromUtf8(r.out);
        QVERIFY2(help.contains(option), qPrintable(option + QStringLiteral(" not in --help")));
    }

    void helpDescribesTheScriptOperations()
    {
        const RunResult r = runWorkbench({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        const QString help = QString::fromUtf8(r.out);
        for (const char *op : {"start", "stop", "add_files", "download_files", "delete_files",
                               "move_file", "read_file", "flush", "attach", "detach", "call",
                               "tools", "cleanup_expired", "sessions", "sleep"})
            QVERIFY2(help.contains(QStringLiteral("\"op\":\"%1\"").arg(QLatin1String(op))), op);
    }

    void version()
    {
        const RunResult r = runWorkbench({QStringLiteral("--version")});
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        static const QRegularExpression re(
            QStringLiteral("^elsai-workbench \\d+\\.\\d+\\.\\d+\\n$"));
        QVERIFY2(re.match(QString::fromUtf8(r.out)).hasMatch(), r.out.constData());
    }

    // The workbench's own stderr must hold nothing but what the commands wrote: scripts and
    // pipelines read it.
    void noParserWarningsOnStderr()
    {
        const RunResult r =
            runWorkbench(headless({QStringLiteral("--exec"), QStringLiteral("true")}));
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QByteArray());
        QCOMPARE(r.err, QByteArray());
    }

    void verboseLogsAuditRecords()
    {
        const RunResult r = runWorkbench(headless(
            {QStringLiteral("--verbose"), QStringLiteral("--exec"), QStringLiteral("true")}));
        QVERIFY(r.finished);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.err.contains("sandbox.execute"), r.err.constData());
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("unknown backend")
            << QStringList{QStringLiteral("--backend"), QStringLiteral("nope"),
                           QStringLiteral("--exec"), QStringLiteral("true")}
            << QStringLiteral("local");
        QTest::newRow("exec with script")
            << QStringList{QStringLiteral("--exec"), QStringLiteral("true"),
                           QStringLiteral("--script"), QStringLiteral("-")}
            << QStringLiteral("--exec");
        QTest::newRow("timeout not a number")
            << QStringList{QStringLiteral("--timeout"), QStringLiteral("soon"),
                           QStringLiteral("--exec"), QStringLiteral("true")}
            << QStringLiteral("--timeout");
        QTest::newRow("timeout zero")
            << QStringList{QStringLiteral("--timeout"), QStringLiteral("0"),
                           QStringLiteral("--exec"), QStringLiteral("true")}
            << QStringLiteral("--timeout");
        QTest::newRow("negative max output")
            << QStringList{QStringLiteral("--max-output-bytes"), QStringLiteral("-1"),
                           QStringLiteral("--exec"), QStringLiteral("true")}
            << QStringLiteral("--max-output-bytes");
        QTest::newRow("bad ttl") << QStringList{QStringLiteral("--ttl"), QStringLiteral("forever"),
                                                QStringLiteral("--exec"), QStringLiteral("true")}
                                 << QStringLiteral("--ttl");
        QTest::newRow("env without value")
            << QStringList{QStringLiteral("--env"), QStringLiteral("NOEQUALS"),
                           QStringLiteral("--exec"), QStringLiteral("true")}
            << QStringLiteral("--env");
        QTest::newRow("empty workspace id")
            << QStringList{QStringLiteral("--workspace-id"), QString(), QStringLiteral("--exec"),
                           QStringLiteral("true")}
            << QStringLiteral("--workspace-id");
        const QStringList bwrapExec{QStringLiteral("--backend"), QStringLiteral("bwrap"),
                                    QStringLiteral("--exec"), QStringLiteral("true")};
        QTest::newRow("bwrap option without --backend bwrap")
            << QStringList{QStringLiteral("--bwrap-network"), QStringLiteral("--exec"),
                           QStringLiteral("true")}
            << QStringLiteral("--backend bwrap");
        QTest::newRow("bwrap size with a bad unit")
            << QStringList{QStringLiteral("--bwrap-max-memory"), QStringLiteral("12Q")} + bwrapExec
            << QStringLiteral("--bwrap-max-memory");
        QTest::newRow("bwrap size negative")
            << QStringList{QStringLiteral("--bwrap-max-file-size"), QStringLiteral("-1")} +
                   bwrapExec
            << QStringLiteral("--bwrap-max-file-size");
        QTest::newRow("bwrap zero processes")
            << QStringList{QStringLiteral("--bwrap-max-processes"), QStringLiteral("0")} + bwrapExec
            << QStringLiteral("--bwrap-max-processes");
        QTest::newRow("bwrap relative bind")
            << QStringList{QStringLiteral("--bwrap-ro-bind"), QStringLiteral("opt/tool")} +
                   bwrapExec
            << QStringLiteral("opt/tool");
        QTest::newRow("missing script file")
            << QStringList{QStringLiteral("--script"), QStringLiteral("/nonexistent/elsai.jsonl")}
            << QStringLiteral("/nonexistent/elsai.jsonl");
    }

    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        const RunResult r = runWorkbench(headless(args));
        QVERIFY(r.finished);
        QCOMPARE(r.exitStatus, QProcess::NormalExit);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(QString::fromUtf8(r.err).contains(mentions), r.err.constData());
        QVERIFY(QDir(m_ws->path()).isEmpty());
    }

    void unknownBackendNamesTheValidOnes()
    {
        const RunResult r =
            runWorkbench(headless({QStringLiteral("--backend"), QStringLiteral("nope"),
                                   QStringLiteral("--exec"), QStringLiteral("true")}));
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("'nope'"), r.err.constData());
        QVERIFY2(r.err.contains("available: local"), r.err.constData());
    }

    // ---- --exec ------------------------------------------------------------------------------

    void execStdoutStderrAndExitCode()
    {
        const RunResult r = runWorkbench(
            headless({QStringLiteral("--exec"), QStringLiteral("echo out; echo err >&2; exit 7")}));
        QVERIFY(r.finished);
        QCOMPARE(r.exitStatus, QProcess::NormalExit);
        QCOMPARE(r.exitCode, 7);
        QCOMPARE(r.out, QByteArray("out\n"));
        QVERIFY2(r.err.contains("err\n"), r.err.constData());
    }

    void execSeveralInOrder_data()
    {
        QTest::addColumn<QStringList>("commands");
        QTest::addColumn<QByteArray>("out");
        QTest::addColumn<int>("exitCode");
        QTest::newRow("last fails")
            << QStringList{QStringLiteral("echo one"), QStringLiteral("echo two; exit 4"),
                           QStringLiteral("echo three; exit 5")}
            << QByteArray("one\ntwo\nthree\n") << 5;
        QTest::newRow("earlier fails, last succeeds")
            << QStringList{QStringLiteral("echo one; exit 9"), QStringLiteral("echo two")}
            << QByteArray("one\ntwo\n") << 0;
        QTest::newRow("state carries over")
            << QStringList{QStringLiteral("echo kept > f.txt"), QStringLiteral("cat f.txt")}
            << QByteArray("kept\n") << 0;
    }

    void execSeveralInOrder()
    {
        QFETCH(QStringList, commands);
        QFETCH(QByteArray, out);
        QFETCH(int, exitCode);
        QStringList args;
        for (const QString &c : commands)
            args << QStringLiteral("--exec") << c;
        const RunResult r = runWorkbench(headless(args));
        QVERIFY(r.finished);
        QCOMPARE(r.out, out);
        QCOMPARE(r.exitCode, exitCode);
    }

    void execSyncsBackToSeedFolder()
    {
        makeProject();
        const RunResult r = runWorkbench(
            headless({QStringLiteral("--seed-from"), m_project->path(), QStringLiteral("--exec"),
                      QStringLiteral(
                          "test -f src/main.py && test ! -e .env && echo 'x = 1' > src/new.py")}));
        QVERIFY(r.finished);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(readHostFile(m_project->path() + QStringLiteral("/src/new.py")),
                 QByteArray("x = 1\n"));
        QCOMPARE(readHostFile(m_ws->path() + QStringLiteral("/src/new.py")), QByteArray("x = 1\n"));
        QCOMPARE(readHostFile(m_project->path() + QStringLiteral("/src/main.py")),
                 QByteArray("print('hi')\n"));
    }

    void execSyncDestAndIncludes()
    {
        makeProject();
        const QString dest = tmpPath(QStringLiteral("dest"));
        const RunResult r = runWorkbench(headless(
            {QStringLiteral("--seed-from"), m_project->path(), QStringLiteral("--sync-dest"), dest,
             QStringLiteral("--sync-include"), QStringLiteral("*.txt"), QStringLiteral("--exec"),
             QStringLiteral("echo a > out.txt; echo b > src/skipped.py")}));
        QVERIFY(r.finished);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(readHostFile(dest + QStringLiteral("/out.txt")), QByteArray("a\n"));
        QVERIFY(!QFileInfo::exists(dest + QStringLiteral("/src/skipped.py")));
        QVERIFY(!QFileInfo::exists(m_project->path() + QStringLiteral("/out.txt")));
    }

    // A seed folder that cannot be read must not go unnoticed: the commands would run in an
    // empty workspace, and the final flush would create the missing folder.
    void execReportsSeedErrors()
    {
        const QString missing = tmpPath(QStringLiteral("missing-project"));
        const RunResult r =
            runWorkbench(headless({QStringLiteral("--seed-from"), missing, QStringLiteral("--exec"),
                                   QStringLiteral("mkdir -p src && echo 1 > src/x.py")}));
        QVERIFY(r.finished);
        QVERIFY2(r.err.contains("missing-project"), r.err.constData());
        QVERIFY(r.exitCode != 0);
        QVERIFY(!QFileInfo::exists(missing));
    }

    void execTimeout()
    {
        const RunResult r = runWorkbench(
            headless({QStringLiteral("--timeout"), QStringLiteral("1"), QStringLiteral("--exec"),
                      QStringLiteral("echo started; sleep 30")}),
            {}, 60000);
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 124);
        QVERIFY2(r.elapsedMs < 20000, qPrintable(QString::number(r.elapsedMs)));
        QCOMPARE(r.out, QByteArray("started\n"));
        QVERIFY2(r.err.contains("timed out"), r.err.constData());
    }

    void execMaxOutputBytes()
    {
        const RunResult r = runWorkbench(
            headless({QStringLiteral("--max-output-bytes"), QStringLiteral("1000"),
                      QStringLiteral("--exec"), QStringLiteral("yes | head -c 100000")}));
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.size() <= 1000, qPrintable(QString::number(r.out.size())));
        QVERIFY(r.out.size() > 0);
        QVERIFY(r.out.startsWith("y\ny\n"));
        QVERIFY2(r.err.contains("truncated"), r.err.constData());
    }

    void execEnvironment()
    {
        const RunResult r = runWorkbench(
            headless({QStringLiteral("--env"), QStringLiteral("ELSAI_T=v=1"),
                      QStringLiteral("--exec"), QStringLiteral("printf '%s' \"$ELSAI_T\"")}));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QByteArray("v=1"));
    }

    // ---- --backend bwrap ----------------------------------------------------------------------

    void sessionOptionsReadTheBwrapOptions()
    {
        auto parse = [](QStringList args) {
            QCommandLineParser parser;
            elsai::SessionOptions::describe(parser, elsai::SessionOptions::Mode::Gui);
            args.prepend(QStringLiteral("elsai-workbench"));
            if (!parser.parse(args))
                throw elsai::ValueError(parser.errorText());
            return elsai::SessionOptions::fromParser(parser);
        };
        const elsai::BwrapSandboxBackend::Options defaults;
        elsai::SessionOptions o = parse({QStringLiteral("--backend"), QStringLiteral("bwrap")});
        QCOMPARE(o.spec.bwrap.network, defaults.network);
        QCOMPARE(o.spec.bwrap.maxProcesses, defaults.maxProcesses);
        QCOMPARE(o.spec.bwrap.maxFileSizeBytes, defaults.maxFileSizeBytes);
        QCOMPARE(o.spec.bwrap.maxMemoryBytes, defaults.maxMemoryBytes);
        QCOMPARE(o.spec.bwrap.pidsCgroup, true);

        o = parse({QStringLiteral("--backend"), QStringLiteral("bwrap"),
                   QStringLiteral("--bwrap-network"), QStringLiteral("--bwrap-max-processes"),
                   QStringLiteral("64"), QStringLiteral("--bwrap-max-file-size"),
                   QStringLiteral("512k"), QStringLiteral("--bwrap-max-memory"),
                   QStringLiteral("0"), QStringLiteral("--bwrap-ro-bind"), QStringLiteral("/opt/a"),
                   QStringLiteral("--bwrap-ro-bind"), QStringLiteral("/opt/b"),
                   QStringLiteral("--bwrap-program"), QStringLiteral("/usr/local/bin/bwrap"),
                   QStringLiteral("--bwrap-no-pids-cgroup")});
        QCOMPARE(o.spec.backend, QStringLiteral("bwrap"));
        QCOMPARE(o.spec.bwrap.network, true);
        QCOMPARE(o.spec.bwrap.maxProcesses, 64);
        QCOMPARE(o.spec.bwrap.maxFileSizeBytes, qint64(512) * 1024);
        QCOMPARE(o.spec.bwrap.maxMemoryBytes, qint64(0));
        QCOMPARE(o.spec.bwrap.readOnlyBinds,
                 (QStringList{QStringLiteral("/opt/a"), QStringLiteral("/opt/b")}));
        QCOMPARE(o.spec.bwrap.bwrapPath, QStringLiteral("/usr/local/bin/bwrap"));
        QCOMPARE(o.spec.bwrap.pidsCgroup, false);

        o = parse({QStringLiteral("--backend"), QStringLiteral("bwrap"),
                   QStringLiteral("--bwrap-max-memory"), QStringLiteral("3G"),
                   QStringLiteral("--bwrap-max-file-size"), QStringLiteral("7M")});
        QCOMPARE(o.spec.bwrap.maxMemoryBytes, qint64(3) << 30);
        QCOMPARE(o.spec.bwrap.maxFileSizeBytes, qint64(7) << 20);

        auto fails = [&](const QStringList &args, const QString &mentions) {
            try {
                parse(args);
            } catch (const elsai::ValueError &e) {
                return e.message().contains(mentions);
            }
            return false;
        };
        const QStringList bwrap{QStringLiteral("--backend"), QStringLiteral("bwrap")};
        QVERIFY(fails({QStringLiteral("--bwrap-network")}, QStringLiteral("--backend bwrap")));
        QVERIFY(fails({QStringLiteral("--backend"), QStringLiteral("local"),
                       QStringLiteral("--bwrap-max-processes"), QStringLiteral("9")},
                      QStringLiteral("--backend bwrap")));
        QVERIFY(fails(bwrap + QStringList{QStringLiteral("--bwrap-max-memory"),
                                          QStringLiteral("99999999999G")},
                      QStringLiteral("too large")));
        QVERIFY(fails(
            bwrap + QStringList{QStringLiteral("--bwrap-max-file-size"), QStringLiteral("1.5G")},
            QStringLiteral("--bwrap-max-file-size")));
        QVERIFY(fails(
            bwrap + QStringList{QStringLiteral("--bwrap-max-processes"), QStringLiteral("many")},
            QStringLiteral("--bwrap-max-processes")));
        QVERIFY(fails(bwrap + QStringList{QStringLiteral("--bwrap-ro-bind"), QStringLiteral("rel")},
                      QStringLiteral("absolute")));
        QVERIFY(fails(bwrap + QStringList{QStringLiteral("--bwrap-program"), QString()},
                      QStringLiteral("--bwrap-program")));
    }

    void execBwrapLimitsAndNetwork()
    {
        try {
            elsai::BwrapSandboxBackend probe(m_ws->path());
            probe.create();
        } catch (const elsai::SandboxError &e) {
            QSKIP(qPrintable(QStringLiteral("bubblewrap cannot run here: ") + e.message()));
        }
        // The file size limit reaches the command: a 4 KiB write stops at 1 KiB.
        RunResult r =
            runWorkbench(headless({QStringLiteral("--backend"), QStringLiteral("bwrap"),
                                   QStringLiteral("--bwrap-max-file-size"), QStringLiteral("1K"),
                                   QStringLiteral("--exec"),
                                   QStringLiteral("head -c 4096 /dev/zero > big; wc -c < big")}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.out.trimmed(), QByteArray("1024"));

        // Interfaces seen: loopback only by default, the host's with --bwrap-network.
        const QString count = QStringLiteral("tail -n +3 /proc/net/dev | wc -l");
        r = runWorkbench(headless({QStringLiteral("--backend"), QStringLiteral("bwrap"),
                                   QStringLiteral("--exec"), count}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.out.trimmed(), QByteArray("1"));
        QFile hostNet(QStringLiteral("/proc/net/dev"));
        QVERIFY(hostNet.open(QIODevice::ReadOnly));
        const int hostInterfaces = int(hostNet.readAll().trimmed().count('\n')) - 1;
        r = runWorkbench(
            headless({QStringLiteral("--backend"), QStringLiteral("bwrap"),
                      QStringLiteral("--bwrap-network"), QStringLiteral("--exec"), count}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.out.trimmed().toInt(), hostInterfaces);
    }

    // ---- --script ----------------------------------------------------------------------------

    void scriptEveryOperation()
    {
        makeProject();
        const QString hostIn = tmpPath(QStringLiteral("host-in.txt"));
        const QString hostOut = tmpPath(QStringLiteral("downloads/added.txt"));
        const QString flushDest = tmpPath(QStringLiteral("flushed"));
        QVERIFY(writeHostFile(hostIn, "from the host\n"));
        const QByteArray binary("\x01\x02\xff", 3);

        QList<QJsonObject> ops;
        auto op = [&](const char *name, QJsonObject o = {}) {
            o.insert(QStringLiteral("op"), QLatin1String(name));
            ops.append(o);
        };
        auto call = [&](const char *tool, const QJsonObject &args) {
            op("call", {{QStringLiteral("agent"), QStringLiteral("dev")},
                        {QStringLiteral("tool"), QLatin1String(tool)},
                        {QStringLiteral("args"), args}});
        };
        op("start");
        op("attach", {{QStringLiteral("agent"), QStringLiteral("dev")},
                      {QStringLiteral("mode"), QStringLiteral("read_write")}});
        call("execute", {{QStringLiteral("command"), QStringLiteral("echo hi; echo e >&2")}});
        call("write_file", {{QStringLiteral("path"), QStringLiteral("notes.md")},
                            {QStringLiteral("content"), QStringLiteral("a\nb\nc\n")}});
        call("read_file", {{QStringLiteral("path"), QStringLiteral("notes.md")},
                           {QStringLiteral("offset"), 1},
                           {QStringLiteral("limit"), 1}});
        call("list_dir", {{QStringLiteral("path"), QStringLiteral(".")}});
        op("tools", {{QStringLiteral("agent"), QStringLiteral("dev")}});
        op("add_files",
           {{QStringLiteral("files"),
             QJsonObject{
                 {QStringLiteral("added.txt"), QStringLiteral("added\n")},
                 {QStringLiteral("blob.bin"),
                  QJsonObject{{QStringLiteral("base64"), QString::fromLatin1(binary.toBase64())}}},
                 {QStringLiteral("copied.txt"), QJsonObject{{QStringLiteral("host"), hostIn}}}}}});
        op("download_files",
           {{QStringLiteral("files"), QJsonObject{{QStringLiteral("added.txt"), hostOut}}}});
        op("read_file", {{QStringLiteral("path"), QStringLiteral("copied.txt")}});
        op("move_file", {{QStringLiteral("src"), QStringLiteral("added.txt")},
                         {QStringLiteral("dest"), QStringLiteral("docs/moved.md")}});
        op("delete_files", {{QStringLiteral("paths"), QJsonArray{QStringLiteral("blob.bin")}}});
        op("flush", {{QStringLiteral("dest"), flushDest}});
        op("sessions");
        op("cleanup_expired");
        op("detach", {{QStringLiteral("agent"), QStringLiteral("dev")}});
        op("stop", {{QStringLiteral("sync"), true}});

        QByteArray script;
        for (const QJsonObject &o : std::as_const(ops))
            script += jsonLine(o);
        const QString scriptPath = tmpPath(QStringLiteral("script.jsonl"));
        QVERIFY(writeHostFile(scriptPath, script));

        const RunResult r = runWorkbench(headless(
            {QStringLiteral("--seed-from"), m_project->path(), QStringLiteral("--workspace-id"),
             QStringLiteral("script-e2e"), QStringLiteral("--script"), scriptPath}));
        QVERIFY(r.finished);
        QString problem;
        const QList<QJsonObject> results = parseLines(r.out, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(results.size(), ops.size());
        for (qsizetype i = 0; i < results.size(); ++i) {
            QCOMPARE(results[i].value(QLatin1String("op")), ops[i].value(QLatin1String("op")));
            QVERIFY2(results[i].value(QLatin1String("ok")).toBool(), qPrintable(dump(results[i])));
        }
        QVERIFY2(r.exitCode == 0, r.err.constData());

        auto result = [&](int i) { return results[i].value(QLatin1String("result")); };
        // start: the seed result
        QCOMPARE(result(0).toObject().value(QLatin1String("files_seeded")).toInt(), 2);
        QCOMPARE(result(0).toObject().value(QLatin1String("success")).toBool(), true);
        // attach
        QCOMPARE(stringsOf(result(1).toObject().value(QLatin1String("tools"))),
                 elsai::test::sortedSandboxTools(elsai::SandboxAttachMode::ReadWrite));
        // execute
        const QJsonObject exec = result(2).toObject();
        QCOMPARE(exec.value(QLatin1String("exit_code")).toInt(-1), 0);
        QCOMPARE(exec.value(QLatin1String("output")).toString(), QStringLiteral("hi\n"));
        QCOMPARE(exec.value(QLatin1String("stderr")).toString(), QStringLiteral("e\n"));
        QCOMPARE(exec.value(QLatin1String("truncated")).toBool(true), false);
        QVERIFY(
            exec.value(QLatin1String("text")).toString().endsWith(QLatin1String("[exit code: 0]")));
        // write_file, read_file with offset/limit
        QCOMPARE(result(3).toObject().value(QLatin1String("bytes")).toInt(), 6);
        QCOMPARE(result(4).toObject().value(QLatin1String("content")).toString(),
                 QStringLiteral("b\n"));
        // list_dir
        QStringList names;
        for (const QJsonValue &e : result(5).toObject().value(QLatin1String("entries")).toArray())
            names << QFileInfo(e.toObject().value(QLatin1String("path")).toString()).fileName();
        names.sort();
        QCOMPARE(names, (QStringList{QStringLiteral("README.md"), QStringLiteral("notes.md"),
                                     QStringLiteral("src")}));
        // tools: the agent's tool names, the same set attach reported
        QStringList tools = stringsOf(result(6));
        tools.sort();
        QCOMPARE(tools, elsai::test::sortedSandboxTools(elsai::SandboxAttachMode::ReadWrite));
        // add_files, download_files, read_file
        QCOMPARE(stringsOf(result(7)).size(), 3);
        QCOMPARE(stringsOf(result(8)), QStringList{QStringLiteral("added.txt")});
        QCOMPARE(readHostFile(hostOut), QByteArray("added\n"));
        QCOMPARE(result(9).toString(), QStringLiteral("from the host\n"));
        // move_file, delete_files
        QCOMPARE(result(10).toObject(), (QJsonObject{{QStringLiteral("moved"), true}}));
        QCOMPARE(readHostFile(m_ws->path() + QStringLiteral("/docs/moved.md")),
                 QByteArray("added\n"));
        QVERIFY(!QFileInfo::exists(m_ws->path() + QStringLiteral("/added.txt")));
        QVERIFY(result(11).isNull());
        QVERIFY(!QFileInfo::exists(m_ws->path() + QStringLiteral("/blob.bin")));
        // flush to an explicit folder: notes.md, README.md, docs/moved.md, src/main.py
        const QJsonObject flush = result(12).toObject();
        QCOMPARE(flush.value(QLatin1String("files_synced")).toInt(), 4);
        QCOMPARE(readHostFile(flushDest + QStringLiteral("/docs/moved.md")), QByteArray("added\n"));
        // sessions, cleanup_expired
        QCOMPARE(result(13).toArray().size(), 1);
        QCOMPARE(
            result(13).toArray().first().toObject().value(QLatin1String("session_id")).toString(),
            QStringLiteral("script-e2e"));
        QCOMPARE(result(14).toArray().size(), 0);
        // detach, stop (syncs to the seed folder)
        QVERIFY(result(15).isNull());
        QCOMPARE(result(16).toObject().value(QLatin1String("success")).toBool(), true);
        QCOMPARE(readHostFile(m_project->path() + QStringLiteral("/notes.md")),
                 QByteArray("a\nb\nc\n"));
    }

    void scriptFromStdin()
    {
        const QByteArray script = "{\"op\":\"start\"}\n"
                                  "{\"op\":\"add_files\",\"files\":{\"a.txt\":\"A\"}}\n"
                                  "{\"op\":\"read_file\",\"path\":\"a.txt\"}\n";
        const RunResult r =
            runWorkbench(headless({QStringLiteral("--script"), QStringLiteral("-")}), script);
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        QString problem;
        const QList<QJsonObject> results = parseLines(r.out, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(results.size(), 3);
        QCOMPARE(results[2].value(QLatin1String("result")).toString(), QStringLiteral("A"));
    }

    void scriptFromStdinByDefault()
    {
        const RunResult r =
            runWorkbench(headless({}), "{\"op\":\"start\"}\n{\"op\":\"sessions\"}\n");
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        QString problem;
        QCOMPARE(parseLines(r.out, &problem).size(), 2);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void noArgumentsWithoutDisplayIsTheSeededDemo()
    {
        // The README's start command on a machine without a display: headless, on the demo
        // sandbox seeded from the bundled sample project.
        const RunResult r = runWorkbench({}, "{\"op\":\"start\"}\n{\"op\":\"sessions\"}\n"
                                             "{\"op\":\"read_file\",\"path\":\"README.md\"}\n");
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        QString problem;
        const QList<QJsonObject> results = parseLines(r.out, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(results.size(), 3);
        const QJsonObject seed = results[0].value(QLatin1String("result")).toObject();
        QVERIFY(seed.value(QLatin1String("files_seeded")).toInt() >= 5);
        QVERIFY(
            seed.value(QLatin1String("skipped_paths")).toArray().contains(QStringLiteral(".env")));
        QCOMPARE(results[1]
                     .value(QLatin1String("result"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QLatin1String("session_id"))
                     .toString(),
                 QStringLiteral("demo"));
        QVERIFY(results[2]
                    .value(QLatin1String("result"))
                    .toString()
                    .contains(QStringLiteral("sample project")));
    }

    void scriptMalformedLineMidScript()
    {
        const QByteArray script = "{\"op\":\"start\"}\n"
                                  "{\"op\": \"add_files\", oops\n"
                                  "\n"
                                  "# comment\n"
                                  "{\"op\":\"add_files\",\"files\":{\"b.txt\":\"B\"}}\n"
                                  "{\"op\":\"read_file\",\"path\":\"b.txt\"}\n";
        const RunResult r =
            runWorkbench(headless({QStringLiteral("--script"), QStringLiteral("-")}), script);
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 1);
        QString problem;
        const QList<QJsonObject> results = parseLines(r.out, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(results.size(), 4);
        QCOMPARE(results[1].value(QLatin1String("ok")).toBool(true), false);
        QVERIFY(results[1].value(QLatin1String("op")).isNull());
        QCOMPARE(results[1]
                     .value(QLatin1String("error"))
                     .toObject()
                     .value(QLatin1String("type"))
                     .toString(),
                 QStringLiteral("ValueError"));
        QCOMPARE(results[2].value(QLatin1String("ok")).toBool(), true);
        QCOMPARE(results[3].value(QLatin1String("result")).toString(), QStringLiteral("B"));
        QCOMPARE(readHostFile(m_ws->path() + QStringLiteral("/b.txt")), QByteArray("B"));
    }

    void scriptExitStatus_data()
    {
        QTest::addColumn<QByteArray>("script");
        QTest::addColumn<int>("exitCode");
        QTest::newRow("all succeed") << QByteArray("{\"op\":\"start\"}\n{\"op\":\"stop\"}\n") << 0;
        QTest::newRow("empty script") << QByteArray("\n# nothing\n") << 0;
        QTest::newRow("unknown op") << QByteArray("{\"op\":\"start\"}\n{\"op\":\"bogus\"}\n") << 1;
        QTest::newRow("failing operation then success")
            << QByteArray("{\"op\":\"read_file\",\"path\":\"x\"}\n{\"op\":\"start\"}\n") << 1;
        QTest::newRow("path escape")
            << QByteArray("{\"op\":\"start\"}\n{\"op\":\"read_file\",\"path\":\"../x\"}\n") << 1;
        QTest::newRow("command exits non-zero")
            << QByteArray("{\"op\":\"start\"}\n{\"op\":\"attach\",\"agent\":\"a\"}\n"
                          "{\"op\":\"call\",\"agent\":\"a\",\"tool\":\"execute\","
                          "\"args\":{\"command\":\"exit 3\"}}\n")
            << 0; // the operation succeeded; the exit code is in its result
    }

    void scriptExitStatus()
    {
        QFETCH(QByteArray, script);
        QFETCH(int, exitCode);
        const RunResult r =
            runWorkbench(headless({QStringLiteral("--script"), QStringLiteral("-")}), script);
        QVERIFY(r.finished);
        QCOMPARE(r.exitStatus, QProcess::NormalExit);
        QCOMPARE(r.exitCode, exitCode);
    }

    // An audit log that cannot be written (/dev/full: every write fails with ENOSPC) loses
    // records: a warning on stderr, the sessions line says so, and the run exits with status 4
    // whatever its own status was.
    void lostAuditRecordsGiveExitStatus4_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QByteArray>("script");
        QTest::newRow("exec") << QStringList{QStringLiteral("--exec"), QStringLiteral("true")}
                              << QByteArray();
        QTest::newRow("script")
            << QStringList{QStringLiteral("--script"), QStringLiteral("-")}
            << QByteArray("{\"op\":\"start\"}\n{\"op\":\"sessions\"}\n{\"op\":\"stop\"}\n");
    }

    void lostAuditRecordsGiveExitStatus4()
    {
        if (!QFileInfo::exists(QStringLiteral("/dev/full")))
            QSKIP("no /dev/full on this system");
        QFETCH(QStringList, args);
        QFETCH(QByteArray, script);
        const RunResult r = runWorkbench(
            headless(QStringList{QStringLiteral("--audit-log"), QStringLiteral("/dev/full")} +
                     args),
            script);
        QVERIFY(r.finished);
        QCOMPARE(r.exitStatus, QProcess::NormalExit);
        QCOMPARE(r.exitCode, 4);
        QVERIFY2(r.err.contains("audit log degraded"), r.err.constData());
        QVERIFY2(r.err.contains("audit records were lost"), r.err.constData());
        QCOMPARE(r.err.count("audit log degraded"), 1); // once per change, not per record
        if (!script.isEmpty()) {
            QString problem;
            const QList<QJsonObject> lines = parseLines(r.out, &problem);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            QCOMPARE(lines.size(), 3);
            QCOMPARE(lines.at(1)
                         .value(QLatin1String("audit"))
                         .toObject()
                         .value(QLatin1String("state"))
                         .toString(),
                     QStringLiteral("degraded"));
        }
    }

    void auditLogThatWorksKeepsTheExitStatus()
    {
        const QString log = tmpPath(QStringLiteral("audit.jsonl"));
        const RunResult r =
            runWorkbench(headless({QStringLiteral("--audit-log"), log, QStringLiteral("--exec"),
                                   QStringLiteral("exit 3")}));
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(!r.err.contains("audit"), r.err.constData());
    }

    void scriptOffload()
    {
        const QByteArray script = "{\"op\":\"start\"}\n"
                                  "{\"op\":\"attach\",\"agent\":\"a\"}\n"
                                  "{\"op\":\"call\",\"agent\":\"a\",\"tool\":\"execute\","
                                  "\"args\":{\"command\":\"seq 1 500\"}}\n";
        const RunResult r = runWorkbench(
            headless({QStringLiteral("--offload"), QStringLiteral("--offload-max-tokens"),
                      QStringLiteral("20"), QStringLiteral("--offload-preview-tokens"),
                      QStringLiteral("5"), QStringLiteral("--script"), QStringLiteral("-")}),
            script);
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        QString problem;
        const QList<QJsonObject> results = parseLines(r.out, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(results.size(), 3);
        QVERIFY(
            stringsOf(
                results[1].value(QLatin1String("result")).toObject().value(QLatin1String("tools")))
                .contains(QStringLiteral("retrieve_offloaded_content")));
        const QJsonObject exec = results[2].value(QLatin1String("result")).toObject();
        const QString handle = exec.value(QLatin1String("offloaded"))
                                   .toObject()
                                   .value(QLatin1String("handle"))
                                   .toString();
        QVERIFY2(!handle.isEmpty(), qPrintable(dump(results[2])));
        QVERIFY(exec.value(QLatin1String("text")).toString().contains(handle));
        QVERIFY(exec.value(QLatin1String("text")).toString().size() < 500);
    }

    void scriptSyncsOnStopOnly()
    {
        makeProject();
        // The script ends without stop: the runner stops without sync.
        const QByteArray script = "{\"op\":\"start\"}\n"
                                  "{\"op\":\"add_files\",\"files\":{\"src/late.py\":\"x\"}}\n";
        const RunResult r =
            runWorkbench(headless({QStringLiteral("--seed-from"), m_project->path()}), script);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(!QFileInfo::exists(m_project->path() + QStringLiteral("/src/late.py")));
    }

    // ---- --audit-log -------------------------------------------------------------------------

    void auditLog()
    {
        makeProject();
        const QString log = tmpPath(QStringLiteral("audit.jsonl"));
        const QString command = QStringLiteral("echo audited > src/a.py");
        const RunResult r = runWorkbench(
            headless({QStringLiteral("--workspace-id"), QStringLiteral("audit-ws"),
                      QStringLiteral("--seed-from"), m_project->path(),
                      QStringLiteral("--audit-log"), log, QStringLiteral("--exec"), command}));
        QVERIFY(r.finished);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QString problem;
        const QList<QJsonObject> events = parseLines(readHostFile(log), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QStringList names;
        for (const QJsonObject &e : events)
            names << e.value(QLatin1String("event")).toString();
        QCOMPARE(names,
                 (QStringList{QStringLiteral("sandbox.start"), QStringLiteral("attach"),
                              QStringLiteral("sandbox.execute"), QStringLiteral("detach"),
                              QStringLiteral("sandbox.flush"), QStringLiteral("sandbox.stop")}));
        qint64 lastSeq = 0;
        for (const QJsonObject &e : events) {
            const QDateTime ts = QDateTime::fromString(
                e.value(QLatin1String("timestamp")).toString(), Qt::ISODateWithMs);
            QVERIFY2(ts.isValid(), qPrintable(dump(e)));
            QCOMPARE(e.value(QLatin1String("workspace_id")).toString(), QStringLiteral("audit-ws"));
            QCOMPARE(e.value(QLatin1String("outcome")).toString(), QStringLiteral("ok"));
            QVERIFY2(!e.value(QLatin1String("actor")).toString().isEmpty(), qPrintable(dump(e)));
            const qint64 seq = e.value(QLatin1String("seq")).toInteger();
            QVERIFY2(seq > lastSeq, qPrintable(dump(e)));
            lastSeq = seq;
        }
        QCOMPARE(events[0].value(QLatin1String("actor")).toString(), QStringLiteral("host"));
        QCOMPARE(events[1].value(QLatin1String("actor")).toString(), QStringLiteral("console"));
        QCOMPARE(events[5].value(QLatin1String("actor")).toString(), QStringLiteral("host"));

        const QJsonObject exec = events[2];
        QCOMPARE(exec.value(QLatin1String("actor")).toString(), QStringLiteral("console"));
        QCOMPARE(exec.value(QLatin1String("command_length")).toInt(), command.toUtf8().size());
        const QString sha = QString::fromLatin1(
            QCryptographicHash::hash(command.toUtf8(), QCryptographicHash::Sha256)
                .toHex()
                .left(12));
        QCOMPARE(exec.value(QLatin1String("command_sha256")).toString(), sha);
        QCOMPARE(exec.value(QLatin1String("inferred_op")).toString(),
                 QStringLiteral("shell_write"));
        QCOMPARE(exec.value(QLatin1String("exit_code")).toInt(-1), 0);
        QVERIFY(exec.value(QLatin1String("duration_ms")).isDouble());
        QVERIFY(exec.value(QLatin1String("duration_ms")).toDouble() >= 0);
        QCOMPARE(exec.value(QLatin1String("truncated")).toBool(true), false);
        QVERIFY(exec.value(QLatin1String("truncated")).isBool());
        QCOMPARE(events[4].value(QLatin1String("files_synced")).toInt(), 1);

        const QByteArray raw = readHostFile(log);
        QVERIFY2(!raw.contains("audited"), raw.constData());
        QVERIFY2(!raw.contains(command.toUtf8()), raw.constData());
    }

    void auditLogAppends()
    {
        const QString log = tmpPath(QStringLiteral("audit.jsonl"));
        QVERIFY(writeHostFile(log, "{\"event\":\"earlier\"}\n"));
        const RunResult r =
            runWorkbench(headless({QStringLiteral("--audit-log"), log, QStringLiteral("--exec"),
                                   QStringLiteral("true")}));
        QCOMPARE(r.exitCode, 0);
        QString problem;
        const QList<QJsonObject> events = parseLines(readHostFile(log), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QVERIFY(events.size() > 1);
        QCOMPARE(events.first().value(QLatin1String("event")).toString(),
                 QStringLiteral("earlier"));
    }

    void auditLogUnwritableFails()
    {
        const RunResult r = runWorkbench(
            headless({QStringLiteral("--audit-log"), QStringLiteral("/nonexistent/dir/audit.jsonl"),
                      QStringLiteral("--exec"), QStringLiteral("echo should-not-run")}));
        QVERIFY(r.finished);
        QVERIFY(r.exitCode != 0);
        QVERIFY2(!r.out.contains("should-not-run"), r.out.constData());
        QVERIFY2(r.err.contains("audit"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestHeadless)
#include "tst_headless.moc"
