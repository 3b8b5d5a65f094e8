// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Record and replay (docs/agents.md, "Recorded plans"): the SessionRecorder on every front end
// (agents, the console, MCP), the version 2 plan it writes, the divergence comparison, and an
// MCP session of the sample project replayed by the real executable — with no divergence,
// from a restored checkpoint, and with exactly the diverging steps after a sample file changed.

#include "agentplan.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "mcpsession.h"
#include "sandbox.h"
#include "sandboxplugin.h"
#include "sessionrecorder.h"
#include "testutil.h"
#include "treesnapshot.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#ifndef ELSAI_WORKBENCH_BIN
#error "ELSAI_WORKBENCH_BIN must name the elsai-workbench executable"
#endif

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

namespace {

QString sha(const QByteArray &bytes)
{
    return recordedHash(bytes);
}

/// `json` with H_0, H_1, H_2, H_A as recorded hashes of 64 such digits, H_C as that of "abc".
QByteArray fill(QByteArray json)
{
    for (const char c : {'0', '1', '2', 'a'})
        json.replace("H_" + QByteArray(1, c).toUpper(), "sha256:" + QByteArray(64, c));
    return json.replace("H_C", recordedHash("abc").toUtf8());
}

QStringList strings(const QJsonValue &v)
{
    QStringList out;
    for (const QJsonValue &s : v.toArray())
        out.append(s.toString());
    return out;
}

struct Run
{
    int exitCode = -1;
    QList<QJsonObject> steps;
    QJsonObject summary;
    QByteArray err;
};

} // namespace

class TestReplay : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_n = 0;

    QString fresh(const QString &what) { return m_tmp.filePath(what + QString::number(++m_n)); }

    /// A copy of the sample project (files only: every copy has the same modes).
    QString sampleCopy()
    {
        const QString dest = fresh(QStringLiteral("sample-"));
        test::copyFiles(QStringLiteral(ELSAI_SOURCE_DIR "/resources/sample-project"), dest);
        return dest;
    }

    /// A started sandbox on a new workspace seeded from `seed`, with checkpoints (in `store`)
    /// and change tracking as `tracking` says.
    SandboxPtr startSandbox(const QString &seed, const QString &store, bool tracking = true,
                            QString *workspace = nullptr)
    {
        const QString ws = fresh(QStringLiteral("ws-"));
        QDir().mkpath(ws);
        if (workspace)
            *workspace = ws;
        Sandbox::Options options;
        options.seedFrom = seed;
        options.timeTravel.checkpoints = true;
        options.timeTravel.folder = store;
        options.timeTravel.trackChanges = tracking;
        const SandboxPtr s =
            Sandbox::create(QStringLiteral("rec"), std::make_shared<LocalSandboxBackend>(ws),
                            std::nullopt, options);
        s->start();
        return s;
    }

    static AgentPtr agent(const SandboxPtr &sandbox, const QString &name,
                          SandboxAttachMode mode = SandboxAttachMode::ReadWrite)
    {
        AgentConfig config;
        config.sandbox = sandbox;
        config.sandboxAttachMode = mode;
        config.sandboxMode = SandboxMode::Sandbox;
        return Agent::create(name, config);
    }

    static QJsonObject call(const AgentPtr &a, const QString &tool, const QJsonObject &args)
    {
        try {
            return a->callTool(tool, args).data;
        } catch (const SandboxError &e) {
            return {{QStringLiteral("error"), e.specName()}};
        }
    }

    Run replay(const QStringList &args)
    {
        Run r;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            env.remove(QLatin1String(name));
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(m_tmp.path());
        p.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
                QStringList{QStringLiteral("--headless")} + args);
        if (!p.waitForStarted(10000) || !p.waitForFinished(120000)) // "did not hang" bounds
            return r;
        r.exitCode = p.exitCode();
        r.err = p.readAllStandardError();
        for (const QByteArray &line : p.readAllStandardOutput().split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o.contains(QLatin1String("step")))
                r.steps.append(o);
            else if (o.contains(QLatin1String("plan")))
                r.summary = o;
        }
        return r;
    }

    static jsonrpc::Message request(const QString &method, const QJsonObject &params, int id)
    {
        jsonrpc::Message m;
        m.kind = jsonrpc::Message::Kind::Request;
        m.id = id;
        m.method = method;
        m.params = params;
        return m;
    }

private Q_SLOTS:
    void recordingNeedsCheckpointsAndTracking()
    {
        const QString store = fresh(QStringLiteral("store-"));
        const SandboxPtr untracked = startSandbox(sampleCopy(), store, false);
        try {
            SessionRecorder r(untracked);
            QFAIL("a sandbox without change tracking was recorded");
        } catch (const ValueError &e) {
            QVERIFY2(e.message().contains(QLatin1String("--track-changes")),
                     qPrintable(e.message()));
        }
        untracked->stop(false);
        try {
            SessionRecorder r(untracked);
            QFAIL("a stopped sandbox was recorded");
        } catch (const ValueError &) {
            // the options are checked first: still no tracking
        }
        const SandboxPtr tracked = startSandbox(sampleCopy(), store);
        tracked->stop(false);
        QVERIFY_THROWS_EXCEPTION(OSError, SessionRecorder{tracked});
    }

    /// Every front end's calls, with their arguments and what they were seen to do.
    void recordsCallsAndExpectations()
    {
        const QString store = fresh(QStringLiteral("store-"));
        QString ws;
        const SandboxPtr sandbox = startSandbox(sampleCopy(), store, true, &ws);
        SessionRecorder::Options options;
        options.checkpoint = QStringLiteral("before-fix");
        SessionRecorder all(sandbox, options);
        SessionRecorder::Options onlyA1;
        onlyA1.agents = {QStringLiteral("a1")};
        onlyA1.checkpoint = QStringLiteral("before-fix-a1");
        SessionRecorder filtered(sandbox, onlyA1);

        const AgentPtr a1 = agent(sandbox, QStringLiteral("a1"));
        const AgentPtr reader =
            agent(sandbox, QStringLiteral("reader"), SandboxAttachMode::ReadOnly);
        const AgentPtr console = agent(sandbox, QStringLiteral("console"));
        call(a1, QStringLiteral("execute"),
             {{QStringLiteral("command"),
               QStringLiteral("mkdir -p out/x src/__pycache__ && printf 'hi\\n' > "
                              "src/__pycache__/ops.pyc && printf 'hi\\n' > "
                              "out/x/a.txt && rm tests/__init__.py "
                              "&& exit 3")}});
        call(reader, QStringLiteral("read_file"),
             {{QStringLiteral("path"), QStringLiteral("README.md")}});
        call(reader, QStringLiteral("write_file"),
             {{QStringLiteral("path"), QStringLiteral("x")},
              {QStringLiteral("content"), QString()}});
        executeAs(*console, QStringLiteral("echo more >> README.md"));
        call(a1, QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral("out")}});
        call(a1, QStringLiteral("read_file"), {{QStringLiteral("path"), QStringLiteral("nope")}});
        all.stop();
        call(a1, QStringLiteral("execute"), {{QStringLiteral("command"), QStringLiteral("true")}});

        QCOMPARE(all.steps(), 6);
        QCOMPARE(filtered.steps(), 3 + 1); // and the call after all.stop()
        const QJsonObject plan = all.plan();
        QCOMPARE(plan.value(QLatin1String("version")).toInt(), 2);
        QCOMPARE(plan.value(QLatin1String("stop_on_failure")), QJsonValue(false));
        const QJsonObject start = plan.value(QLatin1String("start")).toObject();
        QCOMPARE(start.value(QLatin1String("checkpoint")).toString(), QStringLiteral("before-fix"));
        QCOMPARE(start.value(QLatin1String("digest")).toString().toLatin1(),
                 treeDigest(sandbox->timeTravel()->manifest(QStringLiteral("before-fix"))));
        QCOMPARE(plan.value(QLatin1String("agent")).toObject().value(QLatin1String("name")),
                 QJsonValue(QStringLiteral("a1")));
        const QJsonArray steps = plan.value(QLatin1String("steps")).toArray();
        QCOMPARE(steps.size(), 6);

        const QJsonObject s1 = steps.at(0).toObject();
        QCOMPARE(s1.value(QLatin1String("tool")).toString(), QStringLiteral("execute"));
        QVERIFY(s1.value(QLatin1String("args"))
                    .toObject()
                    .value(QLatin1String("command"))
                    .toString()
                    .contains(QLatin1String("mkdir -p out/x")));
        QVERIFY(!s1.contains(QLatin1String("agent"))); // the plan's agent
        const QJsonObject e1 = s1.value(QLatin1String("expect")).toObject();
        QCOMPARE(e1.value(QLatin1String("exit_code")).toInt(), 3);
        const QJsonObject c1 = e1.value(QLatin1String("changes")).toObject();
        QCOMPARE(strings(c1.value(QLatin1String("added"))),
                 (QStringList{"out", "out/x", "out/x/a.txt"}));
        QCOMPARE(strings(c1.value(QLatin1String("deleted"))), QStringList{"tests/__init__.py"});
        QCOMPARE(strings(c1.value(QLatin1String("modified"))), QStringList());
        const QJsonObject f1 = e1.value(QLatin1String("files")).toObject();
        QCOMPARE(f1.value(QLatin1String("out/x/a.txt")).toString(), sha("hi\n"));
        QCOMPARE(f1.value(QLatin1String("out/x")).toString(), QStringLiteral("folder"));
        QVERIFY(!f1.contains(QLatin1String("tests/__init__.py"))); // deleted: in changes only
        // build products are not expected (the plan's "ignore")
        QVERIFY(!f1.contains(QLatin1String("src/__pycache__/ops.pyc")));
        QCOMPARE(strings(plan.value(QLatin1String("ignore"))),
                 QStringList({".git", "node_modules", "__pycache__", ".venv"}));

        const QJsonObject s2 = steps.at(1).toObject();
        QCOMPARE(s2.value(QLatin1String("agent")).toObject(),
                 (QJsonObject{{"name", "reader"}, {"mode", "read_only"}}));
        QCOMPARE(s2.value(QLatin1String("expect")).toObject(),
                 (QJsonObject{{"content_sha256", sha(readHostFile(ws + QStringLiteral("/README.md"))
                                                         .replace("more\n", ""))}}));
        QCOMPARE(steps.at(2).toObject().value(QLatin1String("expect")).toObject(),
                 (QJsonObject{{"error", "SandboxMutationDeniedError"}}));
        // the console's command, through executeAs: tracked and recorded like an agent's
        const QJsonObject s4 = steps.at(3).toObject();
        QCOMPARE(s4.value(QLatin1String("agent")).toObject().value(QLatin1String("name")),
                 QJsonValue(QStringLiteral("console")));
        QCOMPARE(s4.value(QLatin1String("args")).toObject(),
                 (QJsonObject{{"command", "echo more >> README.md"}}));
        const QJsonObject e4 = s4.value(QLatin1String("expect")).toObject();
        QCOMPARE(
            strings(e4.value(QLatin1String("changes")).toObject().value(QLatin1String("modified"))),
            QStringList{"README.md"});
        QCOMPARE(e4.value(QLatin1String("files"))
                     .toObject()
                     .value(QLatin1String("README.md"))
                     .toString(),
                 sha(readHostFile(ws + QStringLiteral("/README.md"))));
        QCOMPARE(steps.at(4).toObject().value(QLatin1String("expect")).toObject(),
                 (QJsonObject{{"names_sha256", sha("x/")}}));
        QCOMPARE(steps.at(5).toObject().value(QLatin1String("expect")).toObject(),
                 (QJsonObject{{"error", "FileNotFoundError"}}));

        // The filter: a1's calls only (not the reader's, not the console's).
        for (const QJsonValue &s : filtered.plan().value(QLatin1String("steps")).toArray())
            QVERIFY(!s.toObject().contains(QLatin1String("agent")));

        // What it writes is a plan this build reads, in a file only its owner reads.
        const QString file = fresh(QStringLiteral("plan-")) + QStringLiteral(".json");
        all.save(file);
        struct stat st
        {
        };
        QCOMPARE(::stat(QFile::encodeName(file).constData(), &st), 0);
        QCOMPARE(int(st.st_mode & 0777), 0600);
        const AgentPlan parsed = AgentPlan::load(file);
        QCOMPARE(parsed.steps.size(), 6);
        QVERIFY(parsed.start);
        QCOMPARE(parsed.steps.at(3).agentName, std::optional(QStringLiteral("console")));
        QVERIFY(parsed.steps.at(1).agentMode == SandboxAttachMode::ReadOnly);
        sandbox->stop(false);
    }

    void boundsAndEmptyRecordings()
    {
        const SandboxPtr sandbox = startSandbox(sampleCopy(), fresh(QStringLiteral("store-")));
        SessionRecorder::Options options;
        options.maxSteps = 2;
        SessionRecorder recorder(sandbox, options);
        QVERIFY_THROWS_EXCEPTION(ValueError, recorder.plan()); // nothing yet
        const AgentPtr a = agent(sandbox, QStringLiteral("a"));
        for (int i = 0; i < 3; ++i)
            call(a, QStringLiteral("read_file"),
                 {{QStringLiteral("path"), QStringLiteral("README.md")}});
        QCOMPARE(recorder.steps(), 2);
        QCOMPARE(recorder.dropped(), 1);
        QVERIFY(recorder.plan()
                    .value(QLatin1String("description"))
                    .toString()
                    .contains(QLatin1String("1 more calls")));
        sandbox->stop(false);
    }

    void planVersions_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("error"); // empty: valid
        const QByteArray head = R"({"format":"elsai-agent-plan","version":)";
        const QByteArray start =
            "\"start\":{\"checkpoint\":\"c\",\"digest\":\"00112233445566778899aabbccddeeff\"},";
        // clang-format off
        QTest::newRow("v2 recorded") << head + "2," + start + fill(R"({"steps":[{"name":"s","tool":"read_file","args":{"path":"a"},"agent":{"name":"b","mode":"read_only"},"expect":{"content_sha256":"H_A"}}]})").mid(1) << QString();
        QTest::newRow("v2 changes and files") << head + fill(R"(2,"steps":[{"name":"s","tool":"execute","args":{"command":"x"},"expect":{"exit_code":0,"changes":{"added":["a"],"modified":3},"files":{"a":"folder","b":"absent","c":"size:9","d":"H_A"}}}]})") << QString();
        QTest::newRow("v2 ignore") << head + R"(2,"ignore":["build/","*.pyc"],"steps":[{"name":"s","tool":"list_dir","args":{"path":"."}}]})" << QString();
        QTest::newRow("v1 ignore refused") << head + R"(1,"ignore":["x"],"steps":[{"name":"s","tool":"list_dir","args":{"path":"."}}]})" << "field 'ignore' is unknown";
        QTest::newRow("bad ignore glob") << head + "2,\"ignore\":[\"a[\"],\"steps\":[{\"name\":\"s\",\"tool\":\"list_dir\",\"args\":{\"path\":\".\"}}]}" << "invalid glob 'a['";
        QTest::newRow("v1 start refused") << head + "1," + start + QByteArray(R"({"steps":[{"name":"s","tool":"list_dir","args":{"path":"."}}]})").mid(1) << "field 'start' is unknown";
        QTest::newRow("v1 step agent refused") << head + R"(1,"steps":[{"name":"s","tool":"list_dir","args":{"path":"."},"agent":{"name":"b"}}]})" << "field 'agent' is unknown";
        QTest::newRow("v1 changes refused") << head + R"(1,"steps":[{"name":"s","tool":"list_dir","args":{"path":"."},"expect":{"changes":{}}}]})" << "field 'expect.changes' is unknown";
        QTest::newRow("v3 refused") << head + R"(3,"steps":[]})" << "versions 1 to 2";
        QTest::newRow("bad digest") << head + R"(2,"start":{"checkpoint":"c","digest":"xyz"},"steps":[{"name":"s","tool":"list_dir","args":{"path":"."}}]})" << "start.digest";
        QTest::newRow("start unknown key") << head + R"(2,"start":{"checkpoint":"c","digest":"00112233445566778899","at":1},"steps":[{"name":"s","tool":"list_dir","args":{"path":"."}}]})" << "start.at";
        QTest::newRow("changes unknown kind") << head + R"(2,"steps":[{"name":"s","tool":"execute","args":{"command":"x"},"expect":{"changes":{"moved":[]}}}]})" << "expect.changes.moved";
        QTest::newRow("changes not paths") << head + R"(2,"steps":[{"name":"s","tool":"execute","args":{"command":"x"},"expect":{"changes":{"added":[1]}}}]})" << "expect.changes.added";
        QTest::newRow("file state") << head + R"(2,"steps":[{"name":"s","tool":"execute","args":{"command":"x"},"expect":{"files":{"a":"sha1:00"}}}]})" << "expect.files.a";
        QTest::newRow("content hash on execute") << head + fill(R"(2,"steps":[{"name":"s","tool":"execute","args":{"command":"x"},"expect":{"content_sha256":"H_A"}}]})") << "read_file only";
        QTest::newRow("names hash form") << head + R"(2,"steps":[{"name":"s","tool":"list_dir","args":{"path":"."},"expect":{"names_sha256":"abc"}}]})" << "expect.names_sha256";
        QTest::newRow("step agent without name") << head + R"(2,"steps":[{"name":"s","tool":"list_dir","args":{"path":"."},"agent":{"mode":"read_only"}}]})" << "agent.name";
        QTest::newRow("error with changes") << head + R"(2,"steps":[{"name":"s","tool":"execute","args":{"command":"x"},"expect":{"error":"OSError","changes":{"added":[]}}}]})" << "cannot be combined";
        // clang-format on
    }
    void planVersions()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, error);
        try {
            const AgentPlan plan = AgentPlan::parse(json, QStringLiteral("p"));
            QVERIFY2(error.isEmpty(), qPrintable(QStringLiteral("parsed; expected ") + error));
        } catch (const ValueError &e) {
            QVERIFY2(!error.isEmpty() && e.message().contains(error), qPrintable(e.message()));
        }
    }

    void divergences_data()
    {
        QTest::addColumn<QByteArray>("expect");
        QTest::addColumn<QString>("errorType");
        QTest::addColumn<QByteArray>("data");
        QTest::addColumn<QStringList>("found"); // Divergence::describe() of each, in order
        const QByteArray seen =
            R"({"exit_code":0,"content":"abc","changes":{"added":1,"modified":1,"deleted":0,"paths":{"added":["n"],"modified":["m"],"deleted":[]},"paths_truncated":false}})";
        const QString abc = recordedHash("abc");
        // clang-format off
        QTest::newRow("as recorded") << fill(R"({"exit_code":0,"changes":{"added":["n"],"modified":["m"],"deleted":[]},"files":{"n":"folder","m":"H_1"}})") << QString() << seen << QStringList();
        QTest::newRow("exit code") << QByteArray(R"({"exit_code":2})") << QString() << seen << QStringList{"exit_code: expected 2, seen 0"};
        QTest::newRow("paths") << QByteArray(R"({"changes":{"added":["n","o"],"modified":[],"deleted":["d"]}})") << QString() << seen
                               << QStringList{"changes.added: not seen: o", "changes.modified: not recorded: m", "changes.deleted: not seen: d"};
        QTest::newRow("a count") << QByteArray(R"({"changes":{"added":5}})") << QString() << seen << QStringList{"changes.added: expected 5, seen 1"};
        QTest::newRow("a kind not given") << QByteArray(R"({"changes":{"deleted":[]}})") << QString() << seen << QStringList();
        QTest::newRow("file content") << fill(R"({"files":{"m":"H_2"}})") << QString() << seen
                                      << QStringList{"file m: expected \"sha256:" + QString(64, u'2') + "\", seen \"sha256:" + QString(64, u'1') + '"'};
        QTest::newRow("file gone") << QByteArray(R"({"files":{"gone":"folder"}})") << QString() << seen << QStringList{"file gone: expected \"folder\", seen \"absent\""};
        QTest::newRow("content") << fill(R"({"content_sha256":"H_C"})") << QString() << seen << QStringList();
        QTest::newRow("content differs") << fill(R"({"content_sha256":"H_0"})") << QString() << seen
                                         << QStringList{"content_sha256: expected \"sha256:" + QString(64, u'0') + "\", seen \"" + abc + '"'};
        QTest::newRow("names") << QByteArray(R"({"names_sha256":"absent"})") << QString() << seen << QStringList{"names_sha256: expected \"absent\", seen \"names of dir\""};
        QTest::newRow("raised, recorded ok") << QByteArray(R"({"exit_code":0})") << "OSError" << seen << QStringList{"error: expected \"none\", seen \"OSError\""};
        QTest::newRow("ok, recorded raised") << QByteArray(R"({"error":"FileNotFoundError"})") << QString() << seen << QStringList{"error: expected \"FileNotFoundError\", seen \"none\""};
        QTest::newRow("another error") << QByteArray(R"({"error":"FileNotFoundError"})") << "PermissionError" << seen << QStringList{"error: expected \"FileNotFoundError\", seen \"PermissionError\""};
        QTest::newRow("not tracked") << QByteArray(R"({"changes":{"added":[]}})") << QString() << QByteArray("{}") << QStringList{"changes: expected \"tracked\", seen \"not tracked (the sandbox needs --track-changes)\""};
        QTest::newRow("seen list cut") << QByteArray(R"({"changes":{"added":["a","b"]}})") << QString()
                                       << QByteArray(R"({"changes":{"added":2,"paths":{"added":["a"]},"paths_truncated":true}})") << QStringList();
        // clang-format on
    }
    void ignoredPathsAreNotCompared()
    {
        const PlanStep step = AgentPlan::parse(R"({"format":"elsai-agent-plan","version":2,
            "ignore":["__pycache__"],"steps":[{"name":"s","tool":"execute",
            "args":{"command":"x"},"expect":{"changes":{"added":["a"]}}}]})")
                                  .steps.first();
        const QJsonObject seen = QJsonDocument::fromJson(R"({"changes":{"added":2,
            "paths":{"added":["a","src/__pycache__/m.pyc"]},"paths_truncated":false}})")
                                     .object();
        QCOMPARE(compareRecorded(step, true, QString(), seen, {}, GlobSet({"__pycache__"})).size(),
                 0);
        const QList<Divergence> all = compareRecorded(step, true, QString(), seen, {});
        QCOMPARE(all.size(), 1);
        QCOMPARE(all.first().unexpected, QStringList{"src/__pycache__/m.pyc"});
    }

    void divergences()
    {
        QFETCH(QByteArray, expect);
        QFETCH(QString, errorType);
        QFETCH(QByteArray, data);
        QFETCH(QStringList, found);
        const char *tool = expect.contains("content") ? "read_file"
                           : expect.contains("names") ? "list_dir"
                                                      : "execute";
        QByteArray plan = R"({"format":"elsai-agent-plan","version":2,"steps":[{"name":"s",
            "tool":"TOOL","args":{"command":"x","path":"dir"},"expect":EXPECT}]})";
        plan.replace("TOOL", tool).replace("EXPECT", expect);
        const PlanStep step = AgentPlan::parse(plan).steps.first();
        WorkspaceProbe probe;
        probe.entryState = [](const QString &path) {
            return path == QLatin1String("n")   ? QStringLiteral("folder")
                   : path == QLatin1String("m") ? QStringLiteral("sha256:") + QString(64, u'1')
                                                : QStringLiteral("absent");
        };
        probe.namesHash = [](const QString &path) { return QStringLiteral("names of ") + path; };
        QStringList got;
        for (const Divergence &d :
             compareRecorded(step, true, errorType, QJsonDocument::fromJson(data).object(), probe))
            got.append(d.describe());
        QCOMPARE(got, found);
    }

    /// The demo's MCP session recorded in process, replayed by the executable.
    void mcpSessionReplays()
    {
        const QString store = fresh(QStringLiteral("store-"));
        QString ws;
        const SandboxPtr sandbox = startSandbox(sampleCopy(), store, true, &ws);
        SessionRecorder::Options options;
        options.checkpoint = QStringLiteral("demo-start");
        auto recorder = std::make_unique<SessionRecorder>(sandbox, options);
        {
            McpSession s(
                QStringLiteral("s1"),
                {QStringLiteral("claude"), SandboxAttachMode::ReadWrite, generateMcpToken()},
                sandbox);
            int id = 1;
            s.handle(request(QStringLiteral("initialize"),
                             {{"protocolVersion", "2025-06-18"},
                              {"capabilities", QJsonObject{}},
                              {"clientInfo", QJsonObject{{"name", "tst"}, {"version", "1"}}}},
                             id++));
            const QList<QPair<QString, QJsonObject>> calls{
                {"execute",
                 {{"command", "sed -i 's/whole \\/ part/part \\/ whole/' src/calc/ops.py"}}},
                {"execute", {{"command", "echo '- percent() fixed' >> README.md"}}},
                {"execute",
                 {{"command", "mkdir -p build/reports && echo ok > build/reports/status.txt"}}},
                {"execute", {{"command", "rm tests/__init__.py"}}},
                {"write_file", {{"path", "notes.txt"}, {"content", "replayed\n"}}},
                {"edit_file",
                 {{"path", "src/calc/ops.py"},
                  {"old_string", "def add"},
                  {"new_string", "def plus"}}},
                {"read_file", {{"path", "README.md"}}},
                {"list_dir", {{"path", "."}}},
                {"execute", {{"command", "python3 -c 'import sys; sys.exit(4)'"}}},
            };
            for (const auto &[tool, args] : calls) {
                const auto reply = s.handle(request(QStringLiteral("tools/call"),
                                                    {{"name", tool}, {"arguments", args}}, id++));
                const QJsonObject result = reply.response.value_or(QJsonObject{})
                                               .value(QLatin1String("result"))
                                               .toObject();
                QVERIFY2(!result.value(QLatin1String("isError")).toBool() ||
                             tool == QLatin1String("execute"),
                         qPrintable(tool));
            }
        }
        recorder->stop();
        QCOMPARE(recorder->steps(), 9);
        const QString plan = fresh(QStringLiteral("plan-")) + QStringLiteral(".json");
        recorder->save(plan);
        sandbox->stop(false);

        // 1. A fresh workspace of the same sample: its digest is the recorded start.
        Run r =
            replay({QStringLiteral("--seed-from"), sampleCopy(), QStringLiteral("--checkpoint-dir"),
                    fresh(QStringLiteral("store-")), QStringLiteral("--run-agent"), plan});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.steps.size(), 9);
        QCOMPARE(r.summary.value(QLatin1String("divergences")).toInt(), 0);
        QCOMPARE(r.summary.value(QLatin1String("start"))
                     .toObject()
                     .value(QLatin1String("outcome"))
                     .toString(),
                 QStringLiteral("matched"));

        // 2. The recorded workspace itself, changed since: the checkpoint is restored.
        writeHostFile(ws + QStringLiteral("/README.md"), "replaced by the host\n");
        r = replay({QStringLiteral("--workspace-root"), ws, QStringLiteral("--checkpoint-dir"),
                    store, QStringLiteral("--run-agent"), plan});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.summary.value(QLatin1String("start"))
                     .toObject()
                     .value(QLatin1String("outcome"))
                     .toString(),
                 QStringLiteral("restored"));
        QCOMPARE(r.summary.value(QLatin1String("divergences")).toInt(), 0);

        // 3. One sample file changed: the start and exactly the steps that touch it diverge.
        const QString changed = sampleCopy();
        writeHostFile(changed + QStringLiteral("/README.md"),
                      readHostFile(changed + QStringLiteral("/README.md")) + "one more line\n");
        r = replay({QStringLiteral("--seed-from"), changed, QStringLiteral("--checkpoint-dir"),
                    fresh(QStringLiteral("store-")), QStringLiteral("--run-agent"), plan});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.summary.value(QLatin1String("start"))
                     .toObject()
                     .value(QLatin1String("outcome"))
                     .toString(),
                 QStringLiteral("diverged"));
        QVERIFY(r.err.contains("not the recorded start"));
        QCOMPARE(r.summary.value(QLatin1String("diverged_steps")).toArray(), (QJsonArray{2, 7}));
        QCOMPARE(r.steps.size(), 9); // a recorded plan does not stop at a divergence
        const QJsonArray d2 = r.steps.at(1).value(QLatin1String("divergences")).toArray();
        QCOMPARE(d2.size(), 1);
        QCOMPARE(d2.at(0).toObject().value(QLatin1String("check")).toString(),
                 QStringLiteral("file"));
        QCOMPARE(d2.at(0).toObject().value(QLatin1String("path")).toString(),
                 QStringLiteral("README.md"));
        QCOMPARE(r.steps.at(6)
                     .value(QLatin1String("divergences"))
                     .toArray()
                     .at(0)
                     .toObject()
                     .value(QLatin1String("check"))
                     .toString(),
                 QStringLiteral("content_sha256"));
    }

    /// --record on the headless front ends: --mcp-stdio, and --script with --record-agent.
    void headlessRecordOption()
    {
        const QString plan = fresh(QStringLiteral("plan-")) + QStringLiteral(".json");
        QProcess p;
        p.setWorkingDirectory(m_tmp.path());
        p.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
                {QStringLiteral("--headless"), QStringLiteral("--seed-from"), sampleCopy(),
                 QStringLiteral("--workspace-root"), fresh(QStringLiteral("ws-")),
                 QStringLiteral("--checkpoint-dir"), fresh(QStringLiteral("store-")),
                 QStringLiteral("--mcp-stdio"), QStringLiteral("--mcp-agent"),
                 QStringLiteral("claude=read_write"), QStringLiteral("--record"), plan});
        QVERIFY(p.waitForStarted(10000));
        const QList<QByteArray> lines{
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
            R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute","arguments":{"command":"echo hi > f.txt"}}})"};
        for (const QByteArray &line : lines) {
            p.write(line + '\n');
            for (int i = 0; i < 100 && !p.canReadLine(); ++i) // each answer before the next call
                p.waitForReadyRead(1000);
            QVERIFY(p.canReadLine());
            p.readLine();
        }
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const AgentPlan recorded = AgentPlan::load(plan);
        QCOMPARE(recorded.agentName, QStringLiteral("claude"));
        QCOMPARE(recorded.steps.size(), 1);
        QCOMPARE(recorded.steps.first().expect.changes.value(QLatin1String("added")).toArray(),
                 (QJsonArray{"f.txt"}));

        const QString script = fresh(QStringLiteral("script-"));
        writeHostFile(script, R"({"op":"start"}
{"op":"attach","agent":"a"}
{"op":"attach","agent":"b"}
{"op":"call","agent":"a","tool":"write_file","args":{"path":"a.txt","content":"a"}}
{"op":"call","agent":"b","tool":"write_file","args":{"path":"b.txt","content":"b"}}
)");
        const QString plan2 = fresh(QStringLiteral("plan-")) + QStringLiteral(".json");
        QCOMPARE(
            QProcess::execute(QStringLiteral(ELSAI_WORKBENCH_BIN),
                              {QStringLiteral("--headless"), QStringLiteral("--workspace-root"),
                               fresh(QStringLiteral("ws-")), QStringLiteral("--checkpoint-dir"),
                               fresh(QStringLiteral("store-")), QStringLiteral("--script"), script,
                               QStringLiteral("--record"), plan2, QStringLiteral("--record-agent"),
                               QStringLiteral("b")}),
            0);
        // --record-agent without --record is a usage error; so is --record without a file.
        QCOMPARE(QProcess::execute(QStringLiteral(ELSAI_WORKBENCH_BIN),
                                   {QStringLiteral("--headless"), QStringLiteral("--record-agent"),
                                    QStringLiteral("b"), QStringLiteral("--exec"),
                                    QStringLiteral("true")}),
                 2);
        QCOMPARE(QProcess::execute(QStringLiteral(ELSAI_WORKBENCH_BIN),
                                   {QStringLiteral("--headless"), QStringLiteral("--record="),
                                    QStringLiteral("--exec"), QStringLiteral("true")}),
                 2);
        const AgentPlan onlyB = AgentPlan::load(plan2);
        QCOMPARE(onlyB.agentName, QStringLiteral("b"));
        QCOMPARE(onlyB.steps.size(), 1);
        QCOMPARE(onlyB.steps.first().args.value(QLatin1String("path")).toString(),
                 QStringLiteral("b.txt"));
    }
};

QTEST_GUILESS_MAIN(TestReplay)
#include "tst_replay.moc"
