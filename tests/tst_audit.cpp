// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Audit records: their JSON form, the sinks, the logging category, the command fields, the
// shell-operation classifier, and the hostile-inputs cases A1/A2 (no command text anywhere).

#include "agent.h"
#include "audit.h"
#include "errors.h"
#include "sandbox.h"
#include "sandboxplugin.h"

// tst_audit links elsai_core only (tests/CMakeLists.txt) while A1/A2 need the real local
// backend: compile it into this test. If elsai_backend_local is ever added to tst_audit's LIBS,
// drop the .cpp include (it would then define the backend twice).
#include "localsandboxbackend.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QMutex>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSet>
#include <QTemporaryDir>
#include <QThread>
#include <QTimeZone>
#include <QtTest>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>

#include <sys/mount.h>
#include <unistd.h>

namespace elsai::detail {
// Test hook of shellclassify.cpp: classifier steps done on this thread.
quint64 shellClassifierStepCount();
void resetShellClassifierStepCount();
} // namespace elsai::detail

using namespace elsai;

namespace {

struct CapturedMessage
{
    QtMsgType type;
    QString category;
    QString text;
};

/// Captures every Qt log message while alive (all threads), and restores the previous handler.
class LogCapture
{
public:
    LogCapture()
    {
        s_messages.clear();
        m_previous = qInstallMessageHandler(&LogCapture::handler);
    }
    ~LogCapture() { qInstallMessageHandler(m_previous); }

    static QList<CapturedMessage> messages()
    {
        QMutexLocker lock(&s_mutex);
        return s_messages;
    }
    static QString allText()
    {
        QStringList out;
        for (const CapturedMessage &m : messages())
            out << m.category + QLatin1Char(' ') + m.text;
        return out.join(QLatin1Char('\n'));
    }

private:
    static void handler(QtMsgType type, const QMessageLogContext &context, const QString &text)
    {
        QMutexLocker lock(&s_mutex);
        s_messages.append(
            {type, QString::fromLatin1(context.category ? context.category : ""), text});
    }

    QtMessageHandler m_previous = nullptr;
    static QMutex s_mutex;
    static QList<CapturedMessage> s_messages;
};
QMutex LogCapture::s_mutex;
QList<CapturedMessage> LogCapture::s_messages;

/// Registers a sink for the lifetime of the guard.
class SinkGuard
{
public:
    explicit SinkGuard(AuditSinkPtr sink) : m_sink(std::move(sink))
    {
        AuditLog::instance().addSink(m_sink);
    }
    ~SinkGuard() { AuditLog::instance().removeSink(m_sink); }

private:
    AuditSinkPtr m_sink;
};

/// Collects events, thread-safe.
class CollectingSink : public AuditSink
{
public:
    void record(const AuditEvent &event) override
    {
        QMutexLocker lock(&m_mutex);
        m_events.append(event);
    }
    QList<AuditEvent> events() const
    {
        QMutexLocker lock(&m_mutex);
        return m_events;
    }

private:
    mutable QMutex m_mutex;
    QList<AuditEvent> m_events;
};

QByteArray readHost(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QList<QJsonObject> parseLines(const QByteArray &data, QString *problem)
{
    QList<QJsonObject> out;
    const QList<QByteArray> lines = data.split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        if (lines[i].isEmpty() && i == lines.size() - 1)
            break;
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(lines[i], &err);
        if (err.error != QJsonParseError::NoError || !doc.isObject()) {
            *problem = QStringLiteral("line %1: %2").arg(i + 1).arg(QString::fromUtf8(lines[i]));
            return out;
        }
        out.append(doc.object());
    }
    return out;
}

QString sha12(const QString &command)
{
    return QString::fromLatin1(
        QCryptographicHash::hash(command.toUtf8(), QCryptographicHash::Sha256).toHex().left(12));
}

} // namespace

class TestAudit : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // ---- AuditEvent ---------------------------------------------------------------------------

    void eventJsonRoundTrip()
    {
        AuditEvent e;
        e.timestamp = QDateTime(QDate(2025, 3, 4), QTime(5, 6, 7, 890), QTimeZone::utc()).toUTC();
        e.event = QStringLiteral("sandbox.execute");
        e.workspaceId = QStringLiteral("ws-1");
        e.actor = QStringLiteral("agent-7");
        e.outcome = QStringLiteral("denied");
        e.sequence = 42;
        e.fields = {{QStringLiteral("command_length"), 12},
                    {QStringLiteral("paths"), QJsonArray{QStringLiteral("a"), QStringLiteral("b")}},
                    {QStringLiteral("truncated"), true}};

        const QJsonObject o = e.toJson();
        QCOMPARE(o.value(QLatin1String("event")).toString(), e.event);
        QCOMPARE(o.value(QLatin1String("workspace_id")).toString(), e.workspaceId);
        QCOMPARE(o.value(QLatin1String("actor")).toString(), e.actor);
        QCOMPARE(o.value(QLatin1String("outcome")).toString(), e.outcome);
        QCOMPARE(o.value(QLatin1String("seq")).toInteger(), 42);
        QCOMPARE(o.value(QLatin1String("timestamp")).toString(),
                 QStringLiteral("2025-03-04T05:06:07.890Z"));
        QCOMPARE(o.value(QLatin1String("command_length")).toInt(), 12);

        // Through text, as the sink writes it.
        const QJsonObject parsed =
            QJsonDocument::fromJson(QJsonDocument(o).toJson(QJsonDocument::Compact)).object();
        const AuditEvent back = AuditEvent::fromJson(parsed);
        QCOMPARE(back.timestamp, e.timestamp);
        QCOMPARE(back.timestamp.timeSpec(), Qt::UTC);
        QCOMPARE(back.event, e.event);
        QCOMPARE(back.workspaceId, e.workspaceId);
        QCOMPARE(back.actor, e.actor);
        QCOMPARE(back.outcome, e.outcome);
        QCOMPARE(back.sequence, e.sequence);
        QCOMPARE(back.fields, e.fields);
    }

    void eventFieldsCannotOverrideCoreKeys()
    {
        AuditEvent e;
        e.timestamp = QDateTime::currentDateTimeUtc();
        e.event = QStringLiteral("sandbox.execute");
        e.outcome = QStringLiteral("denied");
        e.actor = QStringLiteral("agent");
        e.fields = {{QStringLiteral("event"), QStringLiteral("spoofed")},
                    {QStringLiteral("outcome"), QStringLiteral("ok")},
                    {QStringLiteral("actor"), QStringLiteral("host")}};
        const QJsonObject o = e.toJson();
        QCOMPARE(o.value(QLatin1String("event")).toString(), QStringLiteral("sandbox.execute"));
        QCOMPARE(o.value(QLatin1String("outcome")).toString(), QStringLiteral("denied"));
        QCOMPARE(o.value(QLatin1String("actor")).toString(), QStringLiteral("agent"));
    }

    // ---- sinks --------------------------------------------------------------------------------

    void jsonLinesSinkAppends()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("audit.jsonl"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"event\":\"earlier\"}\n");
        }
        JsonLinesAuditSink sink(path);
        for (int i = 1; i <= 3; ++i) {
            AuditEvent e;
            e.timestamp = QDateTime::currentDateTimeUtc();
            e.event = QStringLiteral("e%1").arg(i);
            e.sequence = i;
            e.fields = {{QStringLiteral("text"), QStringLiteral("line\nbreak \"quoted\"")}};
            sink.record(e);
            // Flushed per record: readable before the sink goes away.
            QCOMPARE(readHost(path).count('\n'), i + 1);
        }
        QString problem;
        const QList<QJsonObject> lines = parseLines(readHost(path), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(lines.size(), 4);
        QCOMPARE(lines[0].value(QLatin1String("event")).toString(), QStringLiteral("earlier"));
        QCOMPARE(lines[3].value(QLatin1String("event")).toString(), QStringLiteral("e3"));
        QCOMPARE(lines[3].value(QLatin1String("text")).toString(),
                 QStringLiteral("line\nbreak \"quoted\""));
    }

    void jsonLinesSinkUnopenableThrows()
    {
        QVERIFY_THROWS_EXCEPTION(
            OSError, JsonLinesAuditSink(QStringLiteral("/nonexistent/dir/audit.jsonl")));
        QTemporaryDir dir;
        QVERIFY_THROWS_EXCEPTION(OSError, JsonLinesAuditSink(dir.path())); // a folder
    }

    void jsonLinesSinkIsThreadSafe_data()
    {
        QTest::addColumn<bool>("throughAuditLog");
        QTest::newRow("AuditLog::emitEvent") << true;
        QTest::newRow("sink record() directly") << false;
    }

    void jsonLinesSinkIsThreadSafe()
    {
        QFETCH(bool, throughAuditLog);
        constexpr int kThreads = 8;
        constexpr int kEvents = 200;
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("audit.jsonl"));
        auto sink = std::make_shared<JsonLinesAuditSink>(path);
        // 1600 info lines on stderr are noise here; the category is tested below.
        LogCapture quiet;
        {
            std::unique_ptr<SinkGuard> guard;
            if (throughAuditLog)
                guard = std::make_unique<SinkGuard>(sink);
            std::atomic<int> started{0};
            QList<QThread *> threads;
            for (int t = 0; t < kThreads; ++t) {
                threads << QThread::create([&, t] {
                    ++started;
                    while (started.load() < kThreads) // start together for contention
                        QThread::yieldCurrentThread();
                    for (int i = 0; i < kEvents; ++i) {
                        const QJsonObject fields{
                            {QStringLiteral("thread"), t},
                            {QStringLiteral("i"), i},
                            {QStringLiteral("pad"), QString(200, QLatin1Char('x'))}};
                        if (throughAuditLog) {
                            AuditLog::instance().emitEvent(
                                QStringLiteral("test.thread"), QStringLiteral("ws"),
                                QStringLiteral("t%1").arg(t), QStringLiteral("ok"), fields);
                        } else {
                            AuditEvent e;
                            e.timestamp = QDateTime::currentDateTimeUtc();
                            e.event = QStringLiteral("test.thread");
                            e.sequence = qint64(t) * kEvents + i + 1;
                            e.fields = fields;
                            sink->record(e);
                        }
                    }
                });
            }
            for (QThread *th : std::as_const(threads))
                th->start();
            for (QThread *th : std::as_const(threads)) {
                QVERIFY(th->wait(60000)); // did not hang
                delete th;
            }
        }
        QString problem;
        const QList<QJsonObject> lines = parseLines(readHost(path), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem.left(300)));
        QCOMPARE(lines.size(), kThreads * kEvents);
        QSet<qint64> seqs;
        QSet<QPair<int, int>> pairs;
        for (const QJsonObject &o : lines) {
            QCOMPARE(o.value(QLatin1String("event")).toString(), QStringLiteral("test.thread"));
            seqs.insert(o.value(QLatin1String("seq")).toInteger());
            pairs.insert(
                {o.value(QLatin1String("thread")).toInt(), o.value(QLatin1String("i")).toInt()});
        }
        QCOMPARE(seqs.size(), kThreads * kEvents);
        QCOMPARE(pairs.size(), kThreads * kEvents);
        QVERIFY(!seqs.contains(0));
    }

    void callbackSinkReceivesEvents()
    {
        QList<AuditEvent> received;
        auto sink =
            std::make_shared<CallbackAuditSink>([&](const AuditEvent &e) { received.append(e); });
        LogCapture quiet;
        AuditLog::instance().addSink(sink);
        AuditLog::instance().addSink(sink); // registering twice delivers once
        AuditLog::instance().emitEvent(QStringLiteral("sandbox.add_files"), QStringLiteral("ws"),
                                       QStringLiteral("host"), QStringLiteral("ok"),
                                       {{QStringLiteral("count"), 2}});
        AuditLog::instance().emitEvent(QStringLiteral("attach"), QStringLiteral("ws"),
                                       QStringLiteral("a1"), QStringLiteral("ok"));
        QCOMPARE(received.size(), 2);
        QCOMPARE(received[0].event, QStringLiteral("sandbox.add_files"));
        QCOMPARE(received[0].workspaceId, QStringLiteral("ws"));
        QCOMPARE(received[0].actor, QStringLiteral("host"));
        QCOMPARE(received[0].outcome, QStringLiteral("ok"));
        QCOMPARE(received[0].fields.value(QLatin1String("count")).toInt(), 2);
        QVERIFY(received[0].timestamp.isValid());
        QCOMPARE(received[0].timestamp.timeSpec(), Qt::UTC);
        QVERIFY(received[0].sequence > 0);
        QVERIFY(received[1].sequence > received[0].sequence);

        AuditLog::instance().removeSink(sink);
        AuditLog::instance().emitEvent(QStringLiteral("detach"), QStringLiteral("ws"),
                                       QStringLiteral("a1"), QStringLiteral("ok"));
        QCOMPARE(received.size(), 2);
    }

    void severalSinksEachGetEveryEvent()
    {
        auto a = std::make_shared<CollectingSink>();
        auto b = std::make_shared<CollectingSink>();
        LogCapture quiet;
        {
            SinkGuard ga(a);
            SinkGuard gb(b);
            AuditLog::instance().emitEvent(QStringLiteral("x"), QString(), QString(),
                                           QStringLiteral("ok"));
        }
        AuditLog::instance().emitEvent(QStringLiteral("y"), QString(), QString(),
                                       QStringLiteral("ok"));
        QCOMPARE(a->events().size(), 1);
        QCOMPARE(b->events().size(), 1);
        QCOMPARE(a->events().first().sequence, b->events().first().sequence);
    }

    void recorderOutcomes()
    {
        auto sink = std::make_shared<CollectingSink>();
        LogCapture quiet;
        SinkGuard guard(sink);
        {
            AuditRecorder r(QStringLiteral("op.ok"), QStringLiteral("ws"), QStringLiteral("host"));
            r.setField(QStringLiteral("k"), 1);
            r.ok();
            r.ok(); // once only
        }
        {
            AuditRecorder r(QStringLiteral("op.denied"), QStringLiteral("ws"), QStringLiteral("a"));
            r.fail(PermissionError(QStringLiteral("'../x' escapes"), EACCES));
        }
        {
            AuditRecorder r(QStringLiteral("op.quiet"), QStringLiteral("ws"), QStringLiteral("a"));
            r.fail(FileNotFoundError(QStringLiteral("secret detail"), ENOENT), false);
        }
        {
            AuditRecorder r(QStringLiteral("op.abandoned"), QStringLiteral("ws"),
                            QStringLiteral("a"));
        }
        {
            AuditRecorder r(QStringLiteral("op.invalid"), QStringLiteral("ws"),
                            QStringLiteral("a"));
            r.fail(ToolNotFoundError(QStringLiteral("no tool 'x'")));
        }
        const QList<AuditEvent> ev = sink->events();
        QCOMPARE(ev.size(), 5);
        QCOMPARE(ev[4].outcome, QStringLiteral("invalid")); // a ValueError: refused for its input
        QCOMPARE(ev[4].fields.value(QLatin1String("error_type")).toString(),
                 QStringLiteral("ToolNotFoundError"));
        QCOMPARE(ev[0].outcome, QStringLiteral("ok"));
        QCOMPARE(ev[0].fields.value(QLatin1String("k")).toInt(), 1);
        QCOMPARE(ev[1].outcome, QStringLiteral("denied"));
        QCOMPARE(ev[1].fields.value(QLatin1String("error_type")).toString(),
                 QStringLiteral("PermissionError"));
        QCOMPARE(ev[1].fields.value(QLatin1String("error")).toString(),
                 QStringLiteral("'../x' escapes"));
        QCOMPARE(ev[2].outcome, QStringLiteral("error"));
        QCOMPARE(ev[2].fields.value(QLatin1String("error_type")).toString(),
                 QStringLiteral("FileNotFoundError"));
        QVERIFY(!ev[2].fields.contains(QLatin1String("error")));
        QCOMPARE(ev[3].event, QStringLiteral("op.abandoned"));
        QCOMPARE(ev[3].outcome, QStringLiteral("error"));
    }

    // ---- logging category --------------------------------------------------------------------

    void loggingCategory()
    {
        QCOMPARE(QByteArray(lcAudit().categoryName()), QByteArray("elsai.sandbox.audit"));
        QVERIFY(lcAudit().isInfoEnabled());

        LogCapture capture;
        AuditLog::instance().emitEvent(QStringLiteral("sandbox.start"), QStringLiteral("log-ws"),
                                       QStringLiteral("host"), QStringLiteral("ok"),
                                       {{QStringLiteral("backend"), QStringLiteral("X")}});
        const QList<CapturedMessage> msgs = LogCapture::messages();
        QCOMPARE(msgs.size(), 1);
        QCOMPARE(msgs[0].type, QtInfoMsg);
        QCOMPARE(msgs[0].category, QStringLiteral("elsai.sandbox.audit"));
        const QJsonObject o = QJsonDocument::fromJson(msgs[0].text.toUtf8()).object();
        QCOMPARE(o.value(QLatin1String("event")).toString(), QStringLiteral("sandbox.start"));
        QCOMPARE(o.value(QLatin1String("workspace_id")).toString(), QStringLiteral("log-ws"));
        QCOMPARE(o.value(QLatin1String("backend")).toString(), QStringLiteral("X"));
    }

    // ---- command fields ----------------------------------------------------------------------

    void commandAuditFields_data()
    {
        QTest::addColumn<QString>("command");
        QTest::newRow("simple") << QStringLiteral("ls -la");
        QTest::newRow("secret") << QStringLiteral("export TOKEN=sk-live-abcdef123456; ./deploy.sh");
        QTest::newRow("empty") << QString();
        QTest::newRow("multi-line") << QStringLiteral("set -e\nmake\nmake install\n");
        QTest::newRow("non-ascii") << QStringLiteral("echo 'héllo wörld ✓' > ü.txt");
        QTest::newRow("astral") << QStringLiteral("echo 🦀🦀"); // 7 characters, 13 bytes
        QTest::newRow("long") << QString(10000, QLatin1Char('a'));
    }

    void commandAuditFields()
    {
        QFETCH(QString, command);
        const QJsonObject f = elsai::commandAuditFields(command);
        QStringList keys = f.keys();
        keys.sort();
        QCOMPARE(keys,
                 (QStringList{QStringLiteral("command_bytes"), QStringLiteral("command_length"),
                              QStringLiteral("command_sha256"), QStringLiteral("inferred_op")}));
        // The length in characters, as Python's len() counts them; the size and hash of the
        // UTF-8 bytes (what the shell gets).
        QCOMPARE(f.value(QLatin1String("command_length")).toInteger(),
                 qsizetype(command.toUcs4().size()));
        QCOMPARE(f.value(QLatin1String("command_bytes")).toInteger(), command.toUtf8().size());
        const QString sha = f.value(QLatin1String("command_sha256")).toString();
        static const QRegularExpression hex12(QStringLiteral("^[0-9a-f]{12}$"));
        QVERIFY2(hex12.match(sha).hasMatch(), qPrintable(sha));
        QCOMPARE(sha, sha12(command));
        // No text of the command in the serialized fields.
        const QString text = QString::fromUtf8(QJsonDocument(f).toJson(QJsonDocument::Compact));
        for (qsizetype i = 0; i + 6 <= command.size(); ++i)
            QVERIFY2(!text.contains(command.mid(i, 6)), qPrintable(command.mid(i, 6)));
    }

    void commandHashesDiffer()
    {
        const QString a = elsai::commandAuditFields(QStringLiteral("rm -rf a"))
                              .value(QLatin1String("command_sha256"))
                              .toString();
        const QString b = elsai::commandAuditFields(QStringLiteral("rm -rf b"))
                              .value(QLatin1String("command_sha256"))
                              .toString();
        QVERIFY(a != b);
    }

    // ---- inferShellOperation -----------------------------------------------------------------

    void inferShellOperation_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("op");
        auto row = [](const char *command, const char *op) {
            QTest::newRow(command) << QString::fromUtf8(command) << QString::fromLatin1(op);
        };
        // deletes
        row("rm -rf x", "shell_delete");
        row("rm file.txt", "shell_delete");
        row("rmdir build", "shell_delete");
        row("unlink f", "shell_delete");
        row("shred -u key", "shell_delete");
        row("cd x && rm y", "shell_delete");
        row("sudo rm -rf /tmp/x", "shell_delete");
        row("ls; rm -f a.o", "shell_delete");
        row("echo $(rm -rf tmp)", "shell_delete");
        row("(cd sub; rm old)", "shell_delete");
        // moves
        row("mv a b", "shell_move");
        row("mv -f src/a.py src/b.py", "shell_move");
        // writes
        row("echo hi > f", "shell_write");
        row("echo hi >> log.txt", "shell_write");
        row("cat a > b", "shell_write");
        row("printf x>out", "shell_write");
        row("echo x > /tmp/out", "shell_write");
        row("cp a b", "shell_write");
        row("touch new.txt", "shell_write");
        row("mkdir -p out/dir", "shell_write");
        row("ls | tee listing.txt", "shell_write");
        row("sed -i s/a/b/ f.txt", "shell_write");
        row("chmod +x run.sh", "shell_write");
        row("python3 gen.py > out.txt", "shell_write");
        // not writes: redirections to /dev/null or other descriptors
        row("ls 2>/dev/null", "read");
        row("ls > /dev/null", "read");
        row("cat f 2>&1", "read");
        row("echo hi >&2", "shell");
        // network
        row("curl https://example.com", "network");
        row("wget http://example.com/f.tgz", "network");
        row("ssh host uptime", "network");
        row("ls; curl -s x", "network");
        // package installs
        row("pip install requests", "package_install");
        row("pip3 install -r requirements.txt", "package_install");
        row("npm install", "package_install");
        row("apt-get install -y jq", "package_install");
        row("yarn add lodash", "package_install");
        row("cargo install ripgrep", "package_install");
        // git
        row("git status", "git");
        row("git commit -m 'rm everything'", "git");
        // python
        row("python3 x.py", "python");
        row("python -c 'print(1)'", "python");
        row("pytest -q tests", "python");
        // build
        row("make", "build");
        row("make -j4 all", "build");
        row("cmake -S . -B build", "build");
        row("gcc -o x x.c", "build");
        row("cargo build --release", "build");
        // reads
        row("ls", "read");
        row("ls -la src", "read");
        row("cat README.md", "read");
        row("grep -rn TODO .", "read");
        row("cat f | wc -l", "read");
        row("find . -name '*.py'", "read");
        // plain shell
        row("true", "shell");
        row("echo hi", "shell");
        row("", "shell");
        row("export A=1", "shell");
        // command names inside words or arguments do not count
        row("echo rm -rf x", "shell");
        row("echo curl", "shell");
        row("./format.sh", "shell");
    }

    void inferShellOperation()
    {
        QFETCH(QString, command);
        QFETCH(QString, op);
        QCOMPARE(elsai::inferShellOperation(command), op);
    }

    // Harder rows: command position after newlines, quotes, prefixes and paths; redirections
    // of every form; quoted text that only looks like a redirection.
    void inferShellOperationGaps_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("op");
        QTest::newRow("newline separates commands")
            << QStringLiteral("ls\nrm -rf x") << QStringLiteral("shell_delete");
        QTest::newRow("stdout and stderr to a file (&>)")
            << QStringLiteral("make &> build.log") << QStringLiteral("shell_write");
        QTest::newRow("explicit fd 1 to a file")
            << QStringLiteral("echo hi 1> out.txt") << QStringLiteral("shell_write");
        QTest::newRow("stderr to a file")
            << QStringLiteral("ls 2> errors.log") << QStringLiteral("shell_write");
        QTest::newRow("absolute path to rm")
            << QStringLiteral("/bin/rm -rf x") << QStringLiteral("shell_delete");
        QTest::newRow("python -m pip install") << QStringLiteral("python3 -m pip install requests")
                                               << QStringLiteral("package_install");
        QTest::newRow("variable assignment prefix")
            << QStringLiteral("LC_ALL=C rm -rf x") << QStringLiteral("shell_delete");
        QTest::newRow("find -delete")
            << QStringLiteral("find . -name '*.o' -delete") << QStringLiteral("shell_delete");
        QTest::newRow("xargs rm") << QStringLiteral("ls | xargs rm")
                                  << QStringLiteral("shell_delete");
        QTest::newRow("sh -c") << QStringLiteral("sh -c 'rm -rf x'")
                               << QStringLiteral("shell_delete");
        QTest::newRow("quoted > is not a redirection")
            << QStringLiteral("echo 'a > b'") << QStringLiteral("shell");
    }

    void inferShellOperationGaps()
    {
        QFETCH(QString, command);
        QFETCH(QString, op);
        QCOMPARE(elsai::inferShellOperation(command), op);
    }

    // The scanner's own rules: escapes, descriptor duplication, quoted words, prefixes.
    void inferShellOperationScanner_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("op");
        auto row = [](const char *command, const char *op) {
            QTest::newRow(command) << QString::fromUtf8(command) << QString::fromLatin1(op);
        };
        row("echo a \\> b", "shell");   // an escaped > is no redirection
        row("echo a\\; rm x", "shell"); // nor is an escaped ; a separator
        row("echo \"a > b\"", "shell");
        row("echo hi >'out file'", "shell_write");
        row("cat f 2>&1 | wc -l", "read");
        row("ls >>/dev/null", "read");
        row("ls > /dev/nullx", "shell_write");
        row("make 2>&1 >build.log", "shell_write");
        row("sudo -E env A=1 rm x", "shell_delete");
        row("A='x; rm y' ls", "read"); // a quoted value is part of its word
        row("nohup time /usr/bin/curl x", "network");
        row("A='x y' B=2 mv a b", "shell_move");
        row("bash -c \"ls; rm -f a\"", "shell_delete");
        row("`rm x`", "shell_delete");
        row("find . -name x; echo -delete", "read");
        row("sed -e s/a/b/ f", "shell");
        row("sed -i.bak s/a/b/ f", "shell_write");
        row("python3 -m pytest", "python");
        row("python -m pip list", "python");
        row("pip3 install x > log", "package_install");
        row("rm-tool x", "shell");
        row("> out rm x", "shell_delete");
        row("echo \\", "shell");
        row("'", "shell");
        row("$(", "shell");
    }

    void inferShellOperationScanner()
    {
        QFETCH(QString, command);
        QFETCH(QString, op);
        QCOMPARE(elsai::inferShellOperation(command), op);
    }

    // Worst cases for the old backtracking rules (quadratic: a 120 KB command took ~10 s). Each
    // row classifies `unit` repeated n and 2n times and counts the scanner's steps: linear work
    // means steps(2n) <= 2 * steps(n) + a constant, and a few steps per character.
    void inferShellOperationIsLinear_data()
    {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<QString>("unit");
        QTest::addColumn<QString>("suffix");
        QTest::addColumn<QString>("op");
        auto row = [](const char *name, const char *prefix, const char *unit, const char *suffix,
                      const char *op) {
            QTest::newRow(name) << QString::fromUtf8(prefix) << QString::fromUtf8(unit)
                                << QString::fromUtf8(suffix) << QString::fromLatin1(op);
        };
        row("quotes", "", "'", "", "shell");
        row("double quotes", "", "\"", "", "shell");
        row("command substitutions", "", "$(", "", "shell");
        row("sudo chain", "", "sudo ", "rm x", "shell_delete");
        row("sudo chain, no command", "", "sudo ", "", "shell");
        row("xargs options", "", "xargs -0 ", "", "shell");
        row("assignments", "", "A=b ", "echo", "shell");
        row("assignment values", "A=", "=", " rm", "shell_delete");
        row("find without -delete", "", "find ", "", "read");
        row("find then args", "find ", "-name x ", "-delete", "shell_delete");
        row("separators", "", ";", "ls", "read");
        row("pipes and blanks", "", "| ", "", "shell");
        row("redirections", "echo ", "> ", "", "shell");
        row("redirections to null", "ls ", ">/dev/null ", "", "read");
        row("descriptor dups", "ls ", "2>&1 ", "", "read");
        row("blank runs after >", "echo >", " ", "f", "shell_write");
        row("backslashes", "", "\\", "", "shell");
        row("paths", "", "/a", "/rm", "shell_delete");
        row("one long word", "", "a", "", "shell");
        row("python -m", "", "python -m ", "", "python");
        row("pip words", "", "pip ", "install", "python");
        row("arguments", "echo ", "rm ", "", "shell");
        row("quoted separators", "sh -c '", "ls; ", "'", "read");
        row("newlines", "", "\n", "", "shell");
    }

    void inferShellOperationIsLinear()
    {
        QFETCH(QString, prefix);
        QFETCH(QString, unit);
        QFETCH(QString, suffix);
        QFETCH(QString, op);
        const int n = 20000;
        auto stepsFor = [&](int count, QString *result) {
            const QString command = prefix + unit.repeated(count) + suffix;
            detail::resetShellClassifierStepCount();
            *result = elsai::inferShellOperation(command);
            return std::pair(detail::shellClassifierStepCount(), quint64(command.size()));
        };
        QString r1, r2;
        const auto [s1, len1] = stepsFor(n, &r1);
        const auto [s2, len2] = stepsFor(2 * n, &r2);
        Q_UNUSED(len2);
        QCOMPARE(r1, op);
        QCOMPARE(r2, op);
        QVERIFY(s1 > 0);
        QVERIFY2(s1 <= 4 * len1 + 64,
                 qPrintable(QStringLiteral("%1 steps for %2 characters").arg(s1).arg(len1)));
        QVERIFY2(
            s2 <= 2 * s1 + 64,
            qPrintable(QStringLiteral("steps %1 -> %2 when doubling the input").arg(s1).arg(s2)));
    }

    // ---- a full disk ---------------------------------------------------------------------------

    // The audit log on a 1 MiB tmpfs that an agent fills: no torn line (every line is JSON),
    // the records that could not be kept are counted and told by audit.dropped once there is
    // room again, and the health says degraded. Root only (it mounts the tmpfs).
    void fullDiskFilledByAnAgent()
    {
        if (::geteuid() != 0)
            QSKIP("needs root: mounts a 1 MiB tmpfs for the audit log (run the tests as root to "
                  "cover the full-disk case)");
        QTemporaryDir dir;
        const QString mnt = dir.filePath(QStringLiteral("fs"));
        QVERIFY(QDir().mkpath(mnt));
        if (::mount("tmpfs", QFile::encodeName(mnt).constData(), "tmpfs", MS_NOSUID | MS_NODEV,
                    "size=1m,mode=0755") != 0)
            QSKIP(qPrintable(QStringLiteral("cannot mount a tmpfs (%1): the full-disk case is "
                                            "not covered here")
                                 .arg(QString::fromLocal8Bit(std::strerror(errno)))));
        auto unmount =
            qScopeGuard([&] { ::umount2(QFile::encodeName(mnt).constData(), MNT_DETACH); });
        const QString logPath = mnt + QStringLiteral("/audit.jsonl");
        JsonLinesAuditSink::Options options;
        options.maxQueuedRecords = 4;
        auto sink = std::make_shared<JsonLinesAuditSink>(logPath, options);
        SinkGuard guard(sink);

        const SandboxPtr sandbox = Sandbox::create(
            QStringLiteral("full-disk"),
            std::make_shared<LocalSandboxBackend>(mnt + QStringLiteral("/ws")), 600);
        sandbox->start();
        const AgentPtr agent = Agent::create(QStringLiteral("filler"));
        sandbox->attach(agent);
        auto call = [&](const QString &tool, const QJsonObject &args) {
            try {
                agent->callTool(tool, args);
            } catch (const SandboxError &) {
                // full disk: the tool fails, and so does its record
            }
        };
        call(QStringLiteral("execute"),
             {{QStringLiteral("command"), QStringLiteral("head -c 2000000 /dev/zero > fill")}});
        for (int i = 0; i < 30; ++i) {
            call(QStringLiteral("write_file"),
                 {{QStringLiteral("path"), QStringLiteral("f%1.txt").arg(i)},
                  {QStringLiteral("content"), QString(4096, QLatin1Char('x'))}});
            call(QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral(".")}});
        }
        const AuditHealth full = sink->health();
        QVERIFY2(full.recordsDropped > 0, qPrintable(full.describe()));
        QCOMPARE(full.state, AuditHealth::State::Failing);
        QCOMPARE(AuditLog::instance().health().state, AuditHealth::State::Failing);

        // Room again (the agent deletes its filler): what waited is written, then the note.
        call(QStringLiteral("execute"),
             {{QStringLiteral("command"), QStringLiteral("rm -f fill")}});
        sandbox->stop(false);
        sink->flush();

        const QByteArray data = readHost(logPath);
        QVERIFY(data.endsWith('\n'));
        QString problem;
        const QList<QJsonObject> events = parseLines(data, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem)); // no torn line
        qint64 told = 0;
        for (const QJsonObject &e : events) {
            if (e.value(QLatin1String("event")).toString() == QLatin1String("audit.dropped"))
                told += e.value(QLatin1String("records_dropped")).toInteger();
        }
        const AuditHealth after = sink->health();
        QCOMPARE(told, after.recordsDropped);
        QCOMPARE(after.recordsDropped, full.recordsDropped);
        QCOMPARE(after.recordsQueued, 0);
        QCOMPARE(after.state, AuditHealth::State::Degraded);
        QVERIFY(!after.lastError.isEmpty());
        // later records follow the note
        QCOMPARE(events.last().value(QLatin1String("event")).toString(),
                 QStringLiteral("sandbox.stop"));
    }

    // ---- hostile inputs A1 / A2 --------------------------------------------------------------

    void noCommandTextInAuditOrLogs()
    {
        QTemporaryDir dir;
        const QString wsRoot = dir.filePath(QStringLiteral("ws"));
        const QString logPath = dir.filePath(QStringLiteral("audit.jsonl"));
        QVERIFY(QDir().mkpath(wsRoot));

        // Everything the program logs, at every level we can enable (QT_LOGGING_RULES from the
        // environment still wins over this).
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=true"));
        auto sink = std::make_shared<JsonLinesAuditSink>(logPath);
        std::unique_ptr<LogCapture> capture = std::make_unique<LogCapture>();
        std::unique_ptr<SinkGuard> guard = std::make_unique<SinkGuard>(sink);

        LocalSandboxBackend::Options opts;
        opts.timeout = 1;
        opts.maxOutputBytes = 200;
        opts.killGraceMs = 200;
        const SandboxPtr sandbox =
            Sandbox::create(QStringLiteral("hostile-ws"),
                            std::make_shared<LocalSandboxBackend>(wsRoot, opts), 7200);
        sandbox->start();
        AgentConfig config;
        config.sandbox = sandbox;
        config.sandboxMode = SandboxMode::Sandbox;
        const AgentPtr agent = Agent::create(QStringLiteral("intruder"), config);
        AgentConfig roConfig = config;
        roConfig.sandboxAttachMode = SandboxAttachMode::ReadOnly;
        const AgentPtr reader = Agent::create(QStringLiteral("reader"), roConfig);

        const QString canary = QStringLiteral(
            "export AWS_SECRET_ACCESS_KEY=CANARYAKIA1234567890; "
            "curl -H 'Authorization: Bearer sk-CANARYxyz0987654321' http://127.0.0.1:9/");
        const QString notFound = QStringLiteral("CANARYnotfound_zq9 --token=CANARYarg");
        const QString timeout = QStringLiteral("sleep 30 # CANARYtimeout");
        const QString flood = QStringLiteral("yes CANARYflood | head -c 50000");
        const QString badCwd = QStringLiteral("echo CANARYcwd > leaked.txt");
        const QString denied = QStringLiteral("echo CANARYro_attempt > ro.txt");
        const QStringList commands{canary, notFound, timeout, flood, badCwd, denied};

        QElapsedTimer timer;
        timer.start();
        int executeCalls = 0;
        auto exec = [&](const QString &command, const std::optional<QString> &cwd = {}) {
            QJsonObject args{{QStringLiteral("command"), command}};
            if (cwd)
                args.insert(QStringLiteral("cwd"), *cwd);
            ++executeCalls;
            return agent->callTool(QStringLiteral("execute"), args);
        };
        const ToolResult r1 = exec(canary);
        QVERIFY(r1.data.value(QLatin1String("exit_code")).toInt() != 0); // nothing listens on :9
        const ExecuteResult r2 = (++executeCalls, executeAs(*agent, notFound));
        QCOMPARE(r2.exitCode, 127);
        const ToolResult r3 = exec(timeout);
        QCOMPARE(r3.data.value(QLatin1String("exit_code")).toInt(), 124);
        const ToolResult r4 = exec(flood);
        QCOMPARE(r4.data.value(QLatin1String("truncated")).toBool(), true);
        QVERIFY_THROWS_EXCEPTION(PermissionError, exec(badCwd, QStringLiteral("../")));
        QVERIFY_THROWS_EXCEPTION(PermissionError, runCommand(*agent, badCwd, QStringLiteral("..")));
        ++executeCalls;
        QVERIFY_THROWS_EXCEPTION(SandboxMutationDeniedError, executeAs(*reader, denied));
        QVERIFY(timer.elapsed() < 60000); // did not hang
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("leaked.txt"))));
        QVERIFY(!QFileInfo::exists(wsRoot + QStringLiteral("/ro.txt")));

        sandbox->stop(false);
        guard.reset();
        capture.reset();
        QLoggingCategory::setFilterRules(QString());

        const QString audit = QString::fromUtf8(readHost(logPath));
        const QString logs = LogCapture::allText();
        QVERIFY2(logs.contains(QLatin1String("sandbox.execute")), "the log capture saw nothing");

        QVERIFY2(!audit.contains(QLatin1String("CANARY")), qPrintable(audit));
        QVERIFY2(!logs.contains(QLatin1String("CANARY")), qPrintable(logs));
        for (const QString &command : commands) {
            for (qsizetype i = 0; i + 6 <= command.size(); ++i) {
                const QString window = command.mid(i, 6);
                QVERIFY2(!audit.contains(window),
                         qPrintable(QStringLiteral("audit log holds '%1'").arg(window)));
                QVERIFY2(!logs.contains(window),
                         qPrintable(QStringLiteral("Qt log holds '%1'").arg(window)));
            }
        }

        // Every execute attempt has its record, with length and hash only.
        QString problem;
        const QList<QJsonObject> events = parseLines(readHost(logPath), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QHash<QString, QString> bySha;
        for (const QString &c : commands)
            bySha.insert(sha12(c), c);
        QList<QJsonObject> execs;
        for (const QJsonObject &e : events) {
            if (e.value(QLatin1String("event")).toString() == QLatin1String("sandbox.execute"))
                execs << e;
        }
        QCOMPARE(execs.size(), executeCalls + 1); // + the read-only agent's denied attempt
        for (const QJsonObject &e : std::as_const(execs)) {
            const QString sha = e.value(QLatin1String("command_sha256")).toString();
            QVERIFY2(bySha.contains(sha), qPrintable(QJsonDocument(e).toJson()));
            QCOMPARE(e.value(QLatin1String("command_length")).toInteger(),
                     qsizetype(bySha.value(sha).toUcs4().size()));
            QCOMPARE(e.value(QLatin1String("command_bytes")).toInteger(),
                     bySha.value(sha).toUtf8().size());
            QVERIFY(!e.contains(QLatin1String("command")));
            QVERIFY(!e.contains(QLatin1String("error"))); // messages may quote the command
        }
        auto recordOf = [&](const QString &command) {
            for (const QJsonObject &e : std::as_const(execs)) {
                if (e.value(QLatin1String("command_sha256")).toString() == sha12(command))
                    return e;
            }
            return QJsonObject();
        };
        QCOMPARE(recordOf(canary).value(QLatin1String("inferred_op")).toString(),
                 QStringLiteral("network"));
        QCOMPARE(recordOf(notFound).value(QLatin1String("exit_code")).toInt(), 127);
        QCOMPARE(recordOf(timeout).value(QLatin1String("exit_code")).toInt(), 124);
        QCOMPARE(recordOf(timeout).value(QLatin1String("timed_out")).toBool(), true);
        QCOMPARE(recordOf(flood).value(QLatin1String("truncated")).toBool(), true);
        QCOMPARE(recordOf(badCwd).value(QLatin1String("outcome")).toString(),
                 QStringLiteral("denied"));
        QCOMPARE(recordOf(badCwd).value(QLatin1String("error_type")).toString(),
                 QStringLiteral("PermissionError"));
        QCOMPARE(recordOf(denied).value(QLatin1String("outcome")).toString(),
                 QStringLiteral("denied"));
        QCOMPARE(recordOf(denied).value(QLatin1String("actor")).toString(),
                 QStringLiteral("reader"));
    }
};

QTEST_GUILESS_MAIN(TestAudit)
#include "tst_audit.moc"
