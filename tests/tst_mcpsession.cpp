// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "audit.h"
#include "errors.h"
#include "localsandboxbackend.h"
#include "mcpsession.h"
#include "mcpstdioserver.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QMutex>
#include <QTemporaryDir>
#include <QtConcurrent>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

using namespace elsai;
using elsai::test::readHostFile;

// Both ends of the stdio transport's two pipes, from the client side.
struct StdioPipes
{
    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    QByteArray received;
    ~StdioPipes()
    {
        for (int fd : {in[0], in[1], out[0], out[1]})
            if (fd >= 0)
                ::close(fd);
    }
    void write(const QByteArray &bytes)
    {
        for (qsizetype done = 0; done < bytes.size();) {
            const ssize_t n = ::write(in[1], bytes.constData() + done, size_t(bytes.size() - done));
            QVERIFY(n > 0);
            done += n;
        }
    }
    /// The next line the server wrote (reads as needed; bounded by the poll timeout).
    QJsonValue next()
    {
        for (int i = 0; i < 600 && !received.contains('\n'); ++i) {
            pollfd p{out[0], POLLIN, 0};
            if (::poll(&p, 1, 100) > 0) {
                char buf[65536];
                const ssize_t n = ::read(out[0], buf, sizeof buf);
                if (n > 0)
                    received.append(buf, n);
            }
        }
        const qsizetype nl = received.indexOf('\n');
        if (nl < 0)
            return {};
        const QByteArray line = received.left(nl);
        received.remove(0, nl + 1);
        const QJsonDocument doc = QJsonDocument::fromJson(line);
        return doc.isArray() ? QJsonValue(doc.array()) : QJsonValue(doc.object());
    }
};

/// McpSession without a transport: handshake, versions, tools per mode, results and errors,
/// cancellation, offload, and the audit trail under the agent's name.
class TestMcpSession : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    SandboxPtr m_sandbox;
    int m_nextId = 1;

    static jsonrpc::Message request(const QString &method, const QJsonObject &params, int id)
    {
        jsonrpc::Message m;
        m.kind = jsonrpc::Message::Kind::Request;
        m.id = id;
        m.method = method;
        m.params = params;
        return m;
    }
    QJsonObject call(McpSession &s, const QString &method, const QJsonObject &params = {})
    {
        const auto reply = s.handle(request(method, params, m_nextId++));
        return reply.response.value_or(QJsonObject{});
    }
    QJsonObject init(McpSession &s, const QString &version = QStringLiteral("2025-06-18"))
    {
        return call(s, QStringLiteral("initialize"),
                    {{QStringLiteral("protocolVersion"), version},
                     {QStringLiteral("capabilities"), QJsonObject{}},
                     {QStringLiteral("clientInfo"),
                      QJsonObject{{QStringLiteral("name"), QStringLiteral("tst")},
                                  {QStringLiteral("version"), QStringLiteral("1")}}}});
    }
    QJsonObject tool(McpSession &s, const QString &name, const QJsonObject &args)
    {
        return call(s, QStringLiteral("tools/call"),
                    {{QStringLiteral("name"), name}, {QStringLiteral("arguments"), args}})
            .value(QLatin1String("result"))
            .toObject();
    }
    static QString text(const QJsonObject &result)
    {
        return result.value(QLatin1String("content"))
            .toArray()
            .first()
            .toObject()
            .value(QLatin1String("text"))
            .toString();
    }
    static QStringList toolNames(const QJsonObject &listResponse)
    {
        QStringList names;
        const QJsonArray tools = listResponse.value(QLatin1String("result"))
                                     .toObject()
                                     .value(QLatin1String("tools"))
                                     .toArray();
        for (const QJsonValue &t : tools)
            names.append(t.toObject().value(QLatin1String("name")).toString());
        names.sort();
        return names;
    }
    McpAgentSpec spec(const QString &name, SandboxAttachMode mode)
    {
        return {name, mode, generateMcpToken()};
    }

    // A small JSON Schema check for what the tools use: type, properties, required,
    // additionalProperties: false, anyOf of required sets.
    static QString schemaMismatch(const QJsonObject &schema, const QJsonObject &value)
    {
        const QJsonObject props = schema.value(QLatin1String("properties")).toObject();
        for (auto it = value.begin(); it != value.end(); ++it) {
            if (!props.contains(it.key())) {
                if (schema.value(QLatin1String("additionalProperties")) == QJsonValue(false))
                    return QStringLiteral("undeclared '%1'").arg(it.key());
                continue;
            }
            const QString type =
                props.value(it.key()).toObject().value(QLatin1String("type")).toString();
            const QJsonValue v = it.value();
            const bool ok = (type == QLatin1String("string") && v.isString()) ||
                            (type == QLatin1String("boolean") && v.isBool()) ||
                            (type == QLatin1String("integer") && v.isDouble() &&
                             v.toDouble() == std::floor(v.toDouble())) ||
                            (type == QLatin1String("number") && v.isDouble()) ||
                            (type == QLatin1String("array") && v.isArray()) ||
                            (type == QLatin1String("object") && v.isObject());
            if (!ok)
                return QStringLiteral("'%1' is not %2").arg(it.key(), type);
        }
        auto hasAll = [&](const QJsonArray &required) {
            for (const QJsonValue &r : required) {
                if (!value.contains(r.toString()))
                    return false;
            }
            return true;
        };
        if (!hasAll(schema.value(QLatin1String("required")).toArray()))
            return QStringLiteral("a required property is missing");
        const QJsonArray anyOf = schema.value(QLatin1String("anyOf")).toArray();
        if (!anyOf.isEmpty() &&
            std::none_of(anyOf.begin(), anyOf.end(), [&](const QJsonValue &alt) {
                return hasAll(alt.toObject().value(QLatin1String("required")).toArray());
            }))
            return QStringLiteral("no alternative of anyOf is met");
        return {};
    }

private:
    static QJsonObject envelope(const QJsonObject &capabilities = {},
                                const QString &version = QStringLiteral("2026-07-28"))
    {
        return {{QStringLiteral("io.modelcontextprotocol/protocolVersion"), version},
                {QStringLiteral("io.modelcontextprotocol/clientInfo"),
                 QJsonObject{{QStringLiteral("name"), QStringLiteral("tst-modern")},
                             {QStringLiteral("version"), QStringLiteral("2")}}},
                {QStringLiteral("io.modelcontextprotocol/clientCapabilities"), capabilities}};
    }
    static QJsonObject withTasks()
    {
        return {{QStringLiteral("extensions"),
                 QJsonObject{{QStringLiteral("io.modelcontextprotocol/tasks"), QJsonObject{}}}}};
    }
    static jsonrpc::Message modern(const QString &method, QJsonObject params,
                                   const QJsonObject &meta, const QJsonValue &id)
    {
        params.insert(QStringLiteral("_meta"), meta);
        jsonrpc::Message m = request(method, params, 0);
        m.id = id;
        return m;
    }
    static int errorCode(const QJsonObject &response)
    {
        return response.value(QLatin1String("error"))
            .toObject()
            .value(QLatin1String("code"))
            .toInt();
    }
    static QJsonObject resultOf(const QJsonObject &response)
    {
        return response.value(QLatin1String("result")).toObject();
    }

    /// A tools/call running under handleSerialized() on another thread, with the transport's
    /// callbacks collecting what it sends.
    struct RunningCall
    {
        QMutex mutex;
        QList<QByteArray> responded;
        QList<QByteArray> notified;
        QFuture<McpSession::SerializedReply> future;
        QList<QByteArray> respondedSoFar()
        {
            QMutexLocker lock(&mutex);
            return responded;
        }
        QList<QByteArray> notifiedSoFar()
        {
            QMutexLocker lock(&mutex);
            return notified;
        }
    };
    static std::shared_ptr<RunningCall> start(McpSession &s, const jsonrpc::Message &m)
    {
        auto run = std::make_shared<RunningCall>();
        McpSession::CallContext context;
        context.respond = [run](const QByteArray &b) {
            QMutexLocker lock(&run->mutex);
            run->responded.append(b);
        };
        context.notify = [run](const QByteArray &b) {
            QMutexLocker lock(&run->mutex);
            run->notified.append(b);
        };
        run->future =
            QtConcurrent::run([&s, m, context] { return s.handleSerialized(m, context); });
        return run;
    }
    jsonrpc::Message execute(const QString &command, const QJsonObject &capabilities, int id)
    {
        return modern(
            QStringLiteral("tools/call"),
            {{QStringLiteral("name"), QStringLiteral("execute")},
             {QStringLiteral("arguments"), QJsonObject{{QStringLiteral("command"), command}}}},
            envelope(capabilities), id);
    }
    QJsonObject taskGet(McpSession &s, const QString &taskId,
                        const QString &method = QStringLiteral("tasks/get"))
    {
        return *s.handle(modern(method, {{QStringLiteral("taskId"), taskId}}, envelope(withTasks()),
                                m_nextId++))
                    .response;
    }

private Q_SLOTS:
    void initTestCase()
    {
        // No soft return: calls here wait for files the test writes, whenever that is on a
        // loaded machine (the soft return has its own tests, tst_agenttools).
        Sandbox::Options options;
        options.executeSoftReturnSeconds = 0;
        m_sandbox = Sandbox::create(
            QStringLiteral("mcpsession"),
            std::make_shared<LocalSandboxBackend>(m_tmp.filePath(QStringLiteral("ws"))), 600,
            options);
        m_sandbox->start();
        m_sandbox->addFiles(
            {{QStringLiteral("a.txt"), FileSource::text(QStringLiteral("a\nb\n"))}});
    }
    void cleanupTestCase() { m_sandbox->stop(false); }

    void handshakeAttachesTheAgent()
    {
        McpSession s(QStringLiteral("s1"),
                     spec(QStringLiteral("hand"), SandboxAttachMode::ReadWrite), m_sandbox);
        QVERIFY(!s.isInitialized());
        // Before initialize only ping is served.
        QCOMPARE(call(s, QStringLiteral("tools/list"))
                     .value(QLatin1String("error"))
                     .toObject()
                     .value(QLatin1String("code"))
                     .toInt(),
                 int(jsonrpc::InvalidRequest));
        QVERIFY(call(s, QStringLiteral("ping")).value(QLatin1String("result")).isObject());
        const QJsonObject r = init(s).value(QLatin1String("result")).toObject();
        QCOMPARE(r.value(QLatin1String("protocolVersion")).toString(),
                 QStringLiteral("2025-06-18"));
        QVERIFY(r.value(QLatin1String("capabilities")).toObject().contains(QLatin1String("tools")));
        QCOMPARE(r.value(QLatin1String("serverInfo")).toObject().value(QLatin1String("name")),
                 QJsonValue(QStringLiteral("elsai-workbench")));
        QVERIFY(s.isInitialized());
        bool attached = false;
        for (const AttachedAgent &a : m_sandbox->attachedAgents())
            attached = attached || a.agent == s.agent();
        QVERIFY(attached);
        QCOMPARE(s.agent()->id(), QStringLiteral("hand"));
        // Notifications get no answer.
        jsonrpc::Message n;
        n.kind = jsonrpc::Message::Kind::Notification;
        n.method = QStringLiteral("notifications/initialized");
        QVERIFY(!s.handle(n).response);
        s.close();
        for (const AttachedAgent &a : m_sandbox->attachedAgents())
            QVERIFY(a.agent.get() != s.agent().get());
        QCOMPARE(call(s, QStringLiteral("ping"))
                     .value(QLatin1String("error"))
                     .toObject()
                     .value(QLatin1String("code"))
                     .toInt(),
                 int(jsonrpc::InvalidRequest));
    }

    void negotiatesVersions_data()
    {
        QTest::addColumn<QString>("offered");
        QTest::addColumn<QString>("answered");
        QTest::newRow("latest") << "2025-11-25"
                                << "2025-11-25";
        QTest::newRow("previous") << "2025-06-18"
                                  << "2025-06-18";
        QTest::newRow("older supported") << "2025-03-26"
                                         << "2025-03-26";
        QTest::newRow("oldest supported") << "2024-11-05"
                                          << "2024-11-05";
        // Never an echo: the stateless revision needs no initialize, a future date is unknown.
        QTest::newRow("stateless revision") << "2026-07-28"
                                            << "2025-11-25";
        QTest::newRow("unknown future") << "2099-01-01"
                                        << "2025-11-25";
        QTest::newRow("unknown old") << "2023-01-01"
                                     << "2025-11-25";
        QTest::newRow("between two supported") << "2025-05-01"
                                               << "2025-11-25";
        QTest::newRow("garbage") << "latest"
                                 << "2025-11-25";
        QTest::newRow("missing") << ""
                                 << "2025-11-25";
    }
    void negotiatesVersions()
    {
        QFETCH(QString, offered);
        QFETCH(QString, answered);
        McpSession s(QStringLiteral("v"), spec(QStringLiteral("ver"), SandboxAttachMode::ReadOnly),
                     m_sandbox);
        QCOMPARE(init(s, offered)
                     .value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("protocolVersion"))
                     .toString(),
                 answered);
        QCOMPARE(s.protocolVersion(), answered);
    }

    void toolsFollowTheMode()
    {
        McpSession rw(QStringLiteral("rw"), spec(QStringLiteral("w"), SandboxAttachMode::ReadWrite),
                      m_sandbox);
        McpSession ro(QStringLiteral("ro"), spec(QStringLiteral("r"), SandboxAttachMode::ReadOnly),
                      m_sandbox);
        init(rw);
        init(ro);
        QCOMPARE(toolNames(call(rw, QStringLiteral("tools/list"))),
                 elsai::test::sortedSandboxTools(SandboxAttachMode::ReadWrite));
        const QJsonObject list = call(ro, QStringLiteral("tools/list"));
        QCOMPARE(toolNames(list), elsai::test::sortedSandboxTools(SandboxAttachMode::ReadOnly));
        // Each tool carries the core's schema and description, and hints for clients.
        for (const QJsonValue &t : list.value(QLatin1String("result"))
                                       .toObject()
                                       .value(QLatin1String("tools"))
                                       .toArray()) {
            const QJsonObject o = t.toObject();
            QCOMPARE(o.value(QLatin1String("inputSchema"))
                         .toObject()
                         .value(QLatin1String("type"))
                         .toString(),
                     QStringLiteral("object"));
            QVERIFY(o.value(QLatin1String("description")).toString().size() > 20);
            QVERIFY(o.value(QLatin1String("annotations"))
                        .toObject()
                        .value(QLatin1String("readOnlyHint"))
                        .toBool());
        }
    }

    // The core's own hints become the annotations (mkdir creates but never destroys); an
    // image read_file answers with image content after the text.
    void toolHintsAndImageContent()
    {
        McpSession rw(QStringLiteral("img"),
                      spec(QStringLiteral("img"), SandboxAttachMode::ReadWrite), m_sandbox);
        init(rw);
        QHash<QString, QJsonObject> annotations;
        for (const QJsonValue &t : call(rw, QStringLiteral("tools/list"))
                                       .value(QLatin1String("result"))
                                       .toObject()
                                       .value(QLatin1String("tools"))
                                       .toArray())
            annotations.insert(t.toObject().value(QLatin1String("name")).toString(),
                               t.toObject().value(QLatin1String("annotations")).toObject());
        QCOMPARE(annotations.value("grep").value("readOnlyHint").toBool(), true);
        QCOMPARE(annotations.value("mkdir").value("readOnlyHint").toBool(), false);
        QCOMPARE(annotations.value("mkdir").value("destructiveHint").toBool(), false);
        QCOMPARE(annotations.value("mkdir").value("idempotentHint").toBool(), true);
        QCOMPARE(annotations.value("edit_file").value("destructiveHint").toBool(), true);
        QCOMPARE(annotations.value("edit_file").value("idempotentHint").toBool(), false);
        const QByteArray gif("GIF89a\x01\x00\x01\x00\x00\x00\x00;", 14);
        m_sandbox->addFiles({{QStringLiteral("dot.gif"), FileSource::bytes(gif)}});
        const QJsonObject r = tool(rw, QStringLiteral("read_file"),
                                   {{QStringLiteral("path"), QStringLiteral("dot.gif")}});
        const QJsonArray content = r.value(QLatin1String("content")).toArray();
        QCOMPARE(content.size(), 2);
        QCOMPARE(text(r), QStringLiteral("[image/gif image, 14 bytes]"));
        QCOMPARE(content.at(1).toObject().value("type").toString(), QStringLiteral("image"));
        QCOMPARE(content.at(1).toObject().value("mimeType").toString(),
                 QStringLiteral("image/gif"));
        QCOMPARE(
            QByteArray::fromBase64(content.at(1).toObject().value("data").toString().toLatin1()),
            gif);
    }

    // Every tools/call has one audit record, also the ones refused before the agent runs them
    // (no name, arguments not an object) and the ones the agent refuses (unknown tool, missing
    // or ill-typed arguments): outcome invalid, under the agent's name.
    void invalidCallsAreAudited_data()
    {
        QTest::addColumn<QJsonObject>("params");
        QTest::addColumn<QString>("event");
        QTest::addColumn<bool>("protocolError"); // a JSON-RPC error rather than isError
        QTest::newRow("no name") << QJsonObject{{"arguments", QJsonObject{}}}
                                 << QStringLiteral("tool.call") << true;
        QTest::newRow("name a number")
            << QJsonObject{{"name", 3}} << QStringLiteral("tool.call") << true;
        QTest::newRow("arguments a string")
            << QJsonObject{{"name", "read_file"}, {"arguments", "a.txt"}}
            << QStringLiteral("sandbox.read_file") << true;
        QTest::newRow("unknown tool") << QJsonObject{{"name", "nope"}, {"arguments", QJsonObject{}}}
                                      << QStringLiteral("tool.call") << true;
        QTest::newRow("missing path")
            << QJsonObject{{"name", "read_file"}, {"arguments", QJsonObject{}}}
            << QStringLiteral("sandbox.read_file") << false;
        QTest::newRow("command a bool")
            << QJsonObject{{"name", "execute"}, {"arguments", QJsonObject{{"command", true}}}}
            << QStringLiteral("sandbox.execute") << false;
    }

    void invalidCallsAreAudited()
    {
        QFETCH(QJsonObject, params);
        QFETCH(QString, event);
        QFETCH(bool, protocolError);
        McpSession s(QStringLiteral("inv"),
                     spec(QStringLiteral("sloppy"), SandboxAttachMode::ReadWrite), m_sandbox);
        init(s);
        test::AuditCapture audit;
        const QJsonObject reply = call(s, QStringLiteral("tools/call"), params);
        QCOMPARE(reply.contains(QLatin1String("error")), protocolError);
        if (!protocolError)
            QVERIFY(reply.value(QLatin1String("result"))
                        .toObject()
                        .value(QLatin1String("isError"))
                        .toBool());
        const QList<AuditEvent> events = audit.events();
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.first().event, event);
        QCOMPARE(events.first().outcome, QStringLiteral("invalid"));
        QCOMPARE(events.first().actor, QStringLiteral("sloppy"));
        QVERIFY(!events.first().fields.value(QLatin1String("error_type")).toString().isEmpty());
    }

    void readOnlyCannotChangeTheWorkspace()
    {
        QList<AuditEvent> events;
        QMutex mutex;
        auto sink = std::make_shared<CallbackAuditSink>([&](const AuditEvent &e) {
            QMutexLocker lock(&mutex);
            events.append(e);
        });
        AuditLog::instance().addSink(sink);
        McpSession ro(QStringLiteral("ro2"),
                      spec(QStringLiteral("reviewer"), SandboxAttachMode::ReadOnly), m_sandbox);
        init(ro);
        const QJsonObject w = tool(ro, QStringLiteral("write_file"),
                                   {{QStringLiteral("path"), QStringLiteral("new.txt")},
                                    {QStringLiteral("content"), QStringLiteral("x")}});
        QVERIFY(w.value(QLatin1String("isError")).toBool());
        QVERIFY(text(w).startsWith(QStringLiteral("SandboxMutationDeniedError: ")));
        QCOMPARE(w.value(QLatin1String("structuredContent"))
                     .toObject()
                     .value(QLatin1String("error"))
                     .toObject()
                     .value(QLatin1String("type")),
                 QJsonValue(QStringLiteral("SandboxMutationDeniedError")));
        const QJsonObject x = tool(ro, QStringLiteral("execute"),
                                   {{QStringLiteral("command"), QStringLiteral("touch evil")}});
        QVERIFY(x.value(QLatin1String("isError")).toBool());
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("ws/new.txt"))));
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("ws/evil"))));
        const QJsonObject r = tool(ro, QStringLiteral("read_file"),
                                   {{QStringLiteral("path"), QStringLiteral("a.txt")}});
        QVERIFY(!r.value(QLatin1String("isError")).toBool());
        QCOMPARE(text(r), QStringLiteral("a\nb\n"));
        AuditLog::instance().removeSink(sink);
        QMutexLocker lock(&mutex);
        QStringList seen;
        for (const AuditEvent &e : std::as_const(events)) {
            if (e.actor == QLatin1String("reviewer"))
                seen.append(e.event + QLatin1Char('/') + e.outcome);
        }
        QVERIFY2(seen.contains(QStringLiteral("sandbox.write_file/denied")),
                 qPrintable(seen.join(' ')));
        QVERIFY(seen.contains(QStringLiteral("sandbox.execute/denied")));
        QVERIFY(seen.contains(QStringLiteral("sandbox.read_file/ok")));
        QVERIFY(seen.contains(QStringLiteral("attach/ok")));
    }

    void toolFailuresAreResultsProtocolFaultsAreErrors()
    {
        McpSession rw(QStringLiteral("e"),
                      spec(QStringLiteral("err"), SandboxAttachMode::ReadWrite), m_sandbox);
        init(rw);
        const QJsonObject escape =
            tool(rw, QStringLiteral("read_file"),
                 {{QStringLiteral("path"), QStringLiteral("../../etc/passwd")}});
        QVERIFY(escape.value(QLatin1String("isError")).toBool());
        QVERIFY(text(escape).startsWith(QStringLiteral("PermissionError: ")));
        const QJsonObject missing = tool(rw, QStringLiteral("read_file"),
                                         {{QStringLiteral("path"), QStringLiteral("nope.txt")}});
        QVERIFY(text(missing).startsWith(QStringLiteral("FileNotFoundError: ")));
        const QJsonObject badArgs = tool(rw, QStringLiteral("read_file"), {});
        QVERIFY(text(badArgs).startsWith(QStringLiteral("ValueError: ")));

        auto errorCode = [](const QJsonObject &response) {
            return response.value(QLatin1String("error"))
                .toObject()
                .value(QLatin1String("code"))
                .toInt();
        };
        QCOMPARE(errorCode(call(rw, QStringLiteral("tools/call"),
                                {{QStringLiteral("name"), QStringLiteral("no_such_tool")}})),
                 int(jsonrpc::InvalidParams));
        QCOMPARE(errorCode(call(rw, QStringLiteral("tools/call"), {})),
                 int(jsonrpc::InvalidParams));
        QCOMPARE(errorCode(call(rw, QStringLiteral("tools/call"),
                                {{QStringLiteral("name"), QStringLiteral("read_file")},
                                 {QStringLiteral("arguments"), QJsonArray{1}}})),
                 int(jsonrpc::InvalidParams));
        QCOMPARE(errorCode(call(rw, QStringLiteral("resources/read"))),
                 int(jsonrpc::MethodNotFound));
    }

    void readWriteExecutesAndWrites()
    {
        McpSession rw(QStringLiteral("x"),
                      spec(QStringLiteral("coder"), SandboxAttachMode::ReadWrite), m_sandbox);
        init(rw);
        const QJsonObject w = tool(rw, QStringLiteral("write_file"),
                                   {{QStringLiteral("path"), QStringLiteral("out/w.txt")},
                                    {QStringLiteral("content"), QStringLiteral("written")}});
        QVERIFY2(!w.value(QLatin1String("isError")).toBool(), qPrintable(text(w)));
        QCOMPARE(readHostFile(m_tmp.filePath(QStringLiteral("ws/out/w.txt"))),
                 QByteArray("written"));
        const QJsonObject x =
            tool(rw, QStringLiteral("execute"),
                 {{QStringLiteral("command"), QStringLiteral("cat out/w.txt; exit 3")}});
        QVERIFY(!x.value(QLatin1String("isError")).toBool()); // a failing command is a result
        QVERIFY(text(x).startsWith(QStringLiteral("written")));
        QVERIFY(text(x).contains(QStringLiteral("[exit code: 3]")));
        const QJsonObject sc = x.value(QLatin1String("structuredContent")).toObject();
        QCOMPARE(sc.value(QLatin1String("exit_code")).toInt(), 3);
        QVERIFY(!sc.contains(QLatin1String("output"))); // not repeated: it is in the text
    }

    void cancellationKillsTheProcessGroup()
    {
        McpSession rw(QStringLiteral("c"),
                      spec(QStringLiteral("canceller"), SandboxAttachMode::ReadWrite), m_sandbox);
        init(rw);
        const QString pidFile = m_tmp.filePath(QStringLiteral("ws/child.pid"));
        // A background child in the same group: cancelling must kill it too.
        auto future = QtConcurrent::run([&] {
            return rw.handle(
                request(QStringLiteral("tools/call"),
                        {{QStringLiteral("name"), QStringLiteral("execute")},
                         {QStringLiteral("arguments"),
                          QJsonObject{{QStringLiteral("command"),
                                       QStringLiteral("sleep 300 & echo $! > child.pid; wait")}}}},
                        4242));
        });
        QTRY_VERIFY_WITH_TIMEOUT(rw.runningCalls() == 1 && QFile::exists(pidFile) &&
                                     !readHostFile(pidFile).trimmed().isEmpty(),
                                 20000);
        const pid_t child = readHostFile(pidFile).trimmed().toInt();
        QVERIFY(child > 0);
        jsonrpc::Message cancel;
        cancel.kind = jsonrpc::Message::Kind::Notification;
        cancel.method = QStringLiteral("notifications/cancelled");
        cancel.params = {{QStringLiteral("requestId"), 4242},
                         {QStringLiteral("reason"), QStringLiteral("user")}};
        rw.handle(cancel);
        future.waitForFinished();
        const McpSession::Reply reply = future.result();
        QVERIFY(reply.cancelled);
        const QJsonObject result = reply.response->value(QLatin1String("result")).toObject();
        QVERIFY(text(result).contains(QStringLiteral("cancelled")));
        QVERIFY(result.value(QLatin1String("structuredContent"))
                    .toObject()
                    .value(QLatin1String("cancelled"))
                    .toBool());
        QTRY_VERIFY_WITH_TIMEOUT(::kill(child, 0) != 0, 10000);
        QCOMPARE(rw.runningCalls(), 0);
    }

    // Ordering, not timing: the command waits for a file the test writes only once a progress
    // notification has reported the output printed so far.
    void progressIsReportedWhileExecuteRuns()
    {
        McpSession rw(QStringLiteral("p"),
                      spec(QStringLiteral("progress"), SandboxAttachMode::ReadWrite), m_sandbox);
        rw.setProgressInterval(std::chrono::milliseconds(20));
        init(rw);
        const QString go = m_tmp.filePath(QStringLiteral("ws/progress.go"));
        QMutex mutex;
        QList<QJsonObject> seen;
        bool returned = false;
        int afterReturn = 0;
        const McpSession::Notify notify = [&](const QByteArray &bytes) {
            QMutexLocker lock(&mutex);
            if (returned)
                ++afterReturn;
            const QJsonObject n = QJsonDocument::fromJson(bytes).object();
            seen.append(n);
            const QString message = n.value(QLatin1String("params"))
                                        .toObject()
                                        .value(QLatin1String("message"))
                                        .toString();
            if (message.endsWith(QLatin1String("; 6 bytes of output so far")) && !QFile::exists(go))
                QVERIFY(test::writeHostFile(go, QByteArray()));
        };
        const McpSession::Reply reply = rw.handle(
            request(QStringLiteral("tools/call"),
                    {{QStringLiteral("name"), QStringLiteral("execute")},
                     {QStringLiteral("arguments"),
                      QJsonObject{{QStringLiteral("command"),
                                   QStringLiteral("echo early; i=0; while [ ! -f progress.go ] && "
                                                  "[ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); "
                                                  "done; echo late")}}},
                     {QStringLiteral("_meta"), QJsonObject{{QStringLiteral("progressToken"), 99}}}},
                    m_nextId++),
            notify);
        {
            QMutexLocker lock(&mutex);
            returned = true;
        }
        QCOMPARE(text(reply.response->value(QLatin1String("result")).toObject()),
                 QStringLiteral("early\nlate\n[exit code: 0]"));
        QMutexLocker lock(&mutex);
        QVERIFY(seen.size() >= 1);
        double last = -1;
        for (const QJsonObject &n : std::as_const(seen)) {
            QCOMPARE(n.value(QLatin1String("method")).toString(),
                     QStringLiteral("notifications/progress"));
            const QJsonObject params = n.value(QLatin1String("params")).toObject();
            QCOMPARE(params.value(QLatin1String("progressToken")).toInt(), 99);
            QVERIFY(params.value(QLatin1String("progress")).toDouble() > last);
            last = params.value(QLatin1String("progress")).toDouble();
        }
        lock.unlock();
        QTest::qWait(100); // five intervals: none may come after the response
        lock.relock();
        QCOMPARE(afterReturn, 0);
    }

    void noProgressWithoutAToken()
    {
        McpSession rw(QStringLiteral("np"),
                      spec(QStringLiteral("noprogress"), SandboxAttachMode::ReadWrite), m_sandbox);
        rw.setProgressInterval(std::chrono::milliseconds(10));
        init(rw);
        std::atomic<int> notified{0};
        const McpSession::Notify notify = [&](const QByteArray &) { ++notified; };
        const McpSession::Reply reply = rw.handle(
            request(QStringLiteral("tools/call"),
                    {{QStringLiteral("name"), QStringLiteral("execute")},
                     {QStringLiteral("arguments"),
                      QJsonObject{{QStringLiteral("command"), QStringLiteral("sleep 0.2")}}}},
                    m_nextId++),
            notify);
        QVERIFY(reply.response);
        QCOMPARE(notified.load(), 0);
    }

    void unknownArgumentsAreRefusedByName()
    {
        McpSession rw(QStringLiteral("ua"),
                      spec(QStringLiteral("unknownargs"), SandboxAttachMode::ReadWrite), m_sandbox);
        init(rw);
        const QJsonObject r = tool(rw, QStringLiteral("execute"),
                                   {{QStringLiteral("command"), QStringLiteral("touch ran.txt")},
                                    {QStringLiteral("timeout_s"), 5},
                                    {QStringLiteral("cmd"), QStringLiteral("x")}});
        // A tool execution error (the model can correct it), not a protocol error.
        QVERIFY(r.value(QLatin1String("isError")).toBool());
        QCOMPARE(text(r), QStringLiteral("ValueError: execute: unknown arguments 'cmd', "
                                         "'timeout_s'; it takes command, cwd, timeout"));
        QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("ws/ran.txt"))));
        const QJsonObject ro =
            tool(rw, QStringLiteral("read_file"),
                 {{QStringLiteral("path"), QStringLiteral("a.txt")}, {QStringLiteral("lines"), 3}});
        QVERIFY(text(ro).contains(QLatin1String("unknown argument 'lines'")));
    }

    void everyToolHasATitleAndAnOutputSchemaItsResultsMatch()
    {
        McpSession rw(QStringLiteral("os"),
                      spec(QStringLiteral("schemas"), SandboxAttachMode::ReadWrite), m_sandbox);
        init(rw);
        QHash<QString, QJsonObject> schemas;
        for (const QJsonValue &t : call(rw, QStringLiteral("tools/list"))
                                       .value(QLatin1String("result"))
                                       .toObject()
                                       .value(QLatin1String("tools"))
                                       .toArray()) {
            const QJsonObject o = t.toObject();
            const QString name = o.value(QLatin1String("name")).toString();
            QVERIFY2(!o.value(QLatin1String("title")).toString().isEmpty(), qPrintable(name));
            QVERIFY2(o.value(QLatin1String("title")).toString() != name, qPrintable(name));
            const QJsonObject schema = o.value(QLatin1String("outputSchema")).toObject();
            QCOMPARE(schema.value(QLatin1String("type")).toString(), QStringLiteral("object"));
            schemas.insert(name, schema);
        }
        QCOMPARE(schemas.size(),
                 SandboxPlugin::toolNames(SandboxAttachMode::ReadWrite, true).size());
        const QList<std::pair<QString, QJsonObject>> calls{
            {QStringLiteral("execute"), {{QStringLiteral("command"), QStringLiteral("echo hi")}}},
            {QStringLiteral("execute"), {{QStringLiteral("command"), QStringLiteral("exit 3")}}},
            {QStringLiteral("read_file"), {{QStringLiteral("path"), QStringLiteral("a.txt")}}},
            {QStringLiteral("read_file"),
             {{QStringLiteral("path"), QStringLiteral("a.txt")}, {QStringLiteral("max_bytes"), 1}}},
            {QStringLiteral("read_file"), {{QStringLiteral("path"), QStringLiteral("missing")}}},
            {QStringLiteral("write_file"),
             {{QStringLiteral("path"), QStringLiteral("schema.txt")},
              {QStringLiteral("content"), QStringLiteral("x")}}},
            {QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral(".")}}},
            {QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral("../..")}}},
            {QStringLiteral("execute"),
             {{QStringLiteral("command"), QStringLiteral("true")}, {QStringLiteral("timeout"), 5}}},
            {QStringLiteral("grep"), {{QStringLiteral("pattern"), QStringLiteral(".")}}},
            {QStringLiteral("grep"),
             {{QStringLiteral("pattern"), QStringLiteral(".")},
              {QStringLiteral("output"), "count"}}},
            {QStringLiteral("glob"), {{QStringLiteral("pattern"), QStringLiteral("*")}}},
            {QStringLiteral("tree"), {}},
            {QStringLiteral("stat"), {{QStringLiteral("path"), QStringLiteral("a.txt")}}},
            {QStringLiteral("stat"), {{QStringLiteral("path"), QStringLiteral(".")}}},
            {QStringLiteral("stat"), {{QStringLiteral("path"), QStringLiteral("missing")}}},
            {QStringLiteral("read_many"),
             {{QStringLiteral("paths"),
               QJsonArray{QStringLiteral("a.txt"), QStringLiteral("no")}}}},
            {QStringLiteral("edit_file"),
             {{QStringLiteral("path"), QStringLiteral("schema.txt")},
              {QStringLiteral("old_string"), QStringLiteral("x")},
              {QStringLiteral("new_string"), QStringLiteral("y")},
              {QStringLiteral("dry_run"), true}}},
            {QStringLiteral("mkdir"), {{QStringLiteral("path"), QStringLiteral("schema-dir")}}},
            {QStringLiteral("move"),
             {{QStringLiteral("source"), QStringLiteral("schema-dir")},
              {QStringLiteral("destination"), QStringLiteral("schema-dir2")}}},
            {QStringLiteral("delete"), {{QStringLiteral("path"), QStringLiteral("schema-dir2")}}},
            {QStringLiteral("process_list"), {}},
        };
        for (const auto &[name, args] : calls) {
            const QJsonObject r = tool(rw, name, args);
            const QJsonObject structured = r.value(QLatin1String("structuredContent")).toObject();
            const QString mismatch = schemaMismatch(schemas.value(name), structured);
            QVERIFY2(mismatch.isEmpty(),
                     qPrintable(name + QLatin1String(": ") + mismatch + QLatin1Char(' ') +
                                QJsonDocument(structured).toJson(QJsonDocument::Compact)));
        }
        // the process tools, on a process of this call's own
        const QJsonObject started = tool(rw, QStringLiteral("process_start"),
                                         {{QStringLiteral("command"), QStringLiteral("echo bg")}});
        QVERIFY(schemaMismatch(schemas.value(QStringLiteral("process_start")),
                               started.value(QLatin1String("structuredContent")).toObject())
                    .isEmpty());
        const QString id = started.value(QLatin1String("structuredContent"))
                               .toObject()
                               .value(QLatin1String("process_id"))
                               .toString();
        for (const QString &name :
             {QStringLiteral("process_output"), QStringLiteral("process_stop")}) {
            const QJsonObject r = tool(rw, name, {{QStringLiteral("process_id"), id}});
            const QJsonObject structured = r.value(QLatin1String("structuredContent")).toObject();
            QVERIFY2(schemaMismatch(schemas.value(name), structured).isEmpty(),
                     qPrintable(name + QJsonDocument(structured).toJson(QJsonDocument::Compact)));
        }
        // The check itself refuses what does not match.
        QVERIFY(!schemaMismatch(schemas.value(QStringLiteral("execute")),
                                {{QStringLiteral("exit_code"), QStringLiteral("0")}})
                     .isEmpty());
        QVERIFY(!schemaMismatch(schemas.value(QStringLiteral("write_file")),
                                {{QStringLiteral("path"), QStringLiteral("p")}})
                     .isEmpty());
    }

    // The stdio transport on two pipes: a line over the cap is dropped without being kept
    // and answered with its id; batches follow the negotiated revision.
    void stdioRefusesOversizedLinesWithTheirId()
    {
        StdioPipes pipes;
        QCOMPARE(::pipe(pipes.in), 0);
        QCOMPARE(::pipe(pipes.out), 0);
        {
            McpStdioServer server(m_sandbox,
                                  spec(QStringLiteral("stdio"), SandboxAttachMode::ReadWrite),
                                  std::nullopt, pipes.in[0], pipes.out[1]);
            server.setMaxMessageBytes(1024);
            server.start();
            pipes.write("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                        "\"protocolVersion\":\"2025-11-25\"}}"
                        "\n");
            QCOMPARE(pipes.next().toObject().value(QLatin1String("id")).toInt(), 1);
            // 200 KiB in pieces, its id at the very end, then a ping on the same write.
            const QByteArray big = "{\"jsonrpc\":\"2.0\",\"method\":\"tools/"
                                   "call\",\"params\":{\"name\":\"write_file\",\"arguments\":{"
                                   "\"path\":\"big.txt\",\"content\":\"" +
                                   QByteArray(200 * 1024, 'x') + "\"}},\"id\":\"big-7\"}";
            pipes.write(big + "\n" + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" + "\n");
            const QJsonObject refused = pipes.next().toObject();
            QCOMPARE(refused.value(QLatin1String("id")).toString(), QStringLiteral("big-7"));
            QVERIFY(refused.value(QLatin1String("error"))
                        .toObject()
                        .value(QLatin1String("message"))
                        .toString()
                        .contains(QLatin1String("limit of 1024 bytes")));
            QCOMPARE(pipes.next().toObject().value(QLatin1String("id")).toInt(), 2); // in step
            QVERIFY(!QFile::exists(m_tmp.filePath(QStringLiteral("ws/big.txt"))));
            // No id in it: JSON-RPC's null.
            pipes.write("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"p\":\"" +
                        QByteArray(4096, 'y') + "\"}}\n");
            const QJsonObject anonymous = pipes.next().toObject();
            QVERIFY(anonymous.contains(QLatin1String("id")));
            QVERIFY(anonymous.value(QLatin1String("id")).isNull());
            // A batch on a 2025-11-25 session: refused.
            pipes.write("[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}]"
                        "\n");
            const QJsonObject batchRefused = pipes.next().toObject();
            QVERIFY(batchRefused.value(QLatin1String("error"))
                        .toObject()
                        .value(QLatin1String("message"))
                        .toString()
                        .contains(QLatin1String("2025-03-26 only")));
            ::close(pipes.in[1]); // end of input ends the server's reader
            pipes.in[1] = -1;
        }
    }

    // A command gets stdin, stdout and stderr of its own and no other descriptor of the
    // engine: writing to every other number reaches nothing (before, the stdio server's wake
    // pipe was inherited, and one byte to it stopped the server's reader).
    void stdioCommandsReachNoEngineDescriptor()
    {
        StdioPipes pipes;
        QCOMPARE(::pipe(pipes.in), 0); // no O_CLOEXEC, as a careless library would
        QCOMPARE(::pipe(pipes.out), 0);
        McpStdioServer server(m_sandbox,
                              spec(QStringLiteral("stdiofd"), SandboxAttachMode::ReadWrite),
                              std::nullopt, pipes.in[0], pipes.out[1]);
        server.start();
        pipes.write("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                    "\"protocolVersion\":\"2025-11-25\"}}\n"
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        QCOMPARE(pipes.next().toObject().value(QLatin1String("id")).toInt(), 1);
        pipes.write("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                    "\"execute\",\"arguments\":{\"command\":\"n=0; for fd in $(seq 3 64); do "
                    "if [ -e /proc/self/fd/$fd ]; then n=$((n+1)); fi; "
                    "(printf x >&$fd) 2>/dev/null; done; echo open $n\"}}}\n");
        const QJsonObject ran = pipes.next().toObject();
        QCOMPARE(ran.value(QLatin1String("id")).toInt(), 2);
        QCOMPARE(text(ran.value(QLatin1String("result")).toObject()),
                 QStringLiteral("open 0\n[exit code: 0]"));
        pipes.write("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
        const QJsonObject pong = pipes.next().toObject();
        QCOMPARE(pong.value(QLatin1String("id")).toInt(), 3);
        QVERIFY(pong.contains(QLatin1String("result")));
        ::close(pipes.in[1]);
        pipes.in[1] = -1;
    }

    void stdioServesBatchesOn20250326()
    {
        StdioPipes pipes;
        QCOMPARE(::pipe(pipes.in), 0);
        QCOMPARE(::pipe(pipes.out), 0);
        McpStdioServer server(m_sandbox,
                              spec(QStringLiteral("stdiob"), SandboxAttachMode::ReadOnly),
                              std::nullopt, pipes.in[0], pipes.out[1]);
        server.start();
        pipes.write("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                    "\"protocolVersion\":\"2025-03-26\"}}"
                    "\n");
        QCOMPARE(pipes.next()
                     .toObject()
                     .value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("protocolVersion"))
                     .toString(),
                 QStringLiteral("2025-03-26"));
        pipes.write(
            "[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":"
            "\"notifications/initialized\"},"
            "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/"
            "call\",\"params\":{\"name\":\"read_file\",\"arguments\":{\"path\":\"a.txt\"}}}]"
            "\n");
        const QJsonArray responses = pipes.next().toArray();
        QCOMPARE(responses.size(), 2);
        QCOMPARE(responses.at(0).toObject().value(QLatin1String("id")).toInt(), 5);
        QCOMPARE(responses.at(1).toObject().value(QLatin1String("id")).toInt(), 6);
        QCOMPARE(text(responses.at(1).toObject().value(QLatin1String("result")).toObject()),
                 QStringLiteral("a\nb\n"));
        ::close(pipes.in[1]);
        pipes.in[1] = -1;
    }

    void unknownCancellationIsIgnored()
    {
        McpSession rw(QStringLiteral("u"), spec(QStringLiteral("u"), SandboxAttachMode::ReadWrite),
                      m_sandbox);
        init(rw);
        jsonrpc::Message cancel;
        cancel.kind = jsonrpc::Message::Kind::Notification;
        cancel.method = QStringLiteral("notifications/cancelled");
        cancel.params = {{QStringLiteral("requestId"), 99999}};
        QVERIFY(!rw.handle(cancel).response);
        QVERIFY(call(rw, QStringLiteral("ping")).contains(QLatin1String("result")));
    }

    void offloadAppliesToResults()
    {
        SandboxOutputOffloadPolicy policy;
        policy.storage = std::make_shared<InMemoryStorage>();
        policy.maxResultTokens = 50;
        policy.previewTokens = 10;
        m_sandbox->addFiles(
            {{QStringLiteral("big.txt"), FileSource::text(QString(2000, QLatin1Char('z')))}});
        McpSession s(QStringLiteral("o"), spec(QStringLiteral("off"), SandboxAttachMode::ReadOnly),
                     m_sandbox, policy);
        init(s);
        QVERIFY(toolNames(call(s, QStringLiteral("tools/list")))
                    .contains(QStringLiteral("retrieve_offloaded_content")));
        const QJsonObject r = tool(s, QStringLiteral("read_file"),
                                   {{QStringLiteral("path"), QStringLiteral("big.txt")}});
        QVERIFY(text(r).size() < 1000);
        const QString handle = r.value(QLatin1String("structuredContent"))
                                   .toObject()
                                   .value(QLatin1String("offloaded"))
                                   .toObject()
                                   .value(QLatin1String("handle"))
                                   .toString();
        QVERIFY(!handle.isEmpty());
        const QJsonObject back = tool(s, QStringLiteral("retrieve_offloaded_content"),
                                      {{QStringLiteral("handle"), handle}});
        QCOMPARE(text(back), QString(2000, QLatin1Char('z')));
    }

    void concurrentCallsInOneSession()
    {
        McpSession rw(QStringLiteral("p"),
                      spec(QStringLiteral("par"), SandboxAttachMode::ReadWrite), m_sandbox);
        init(rw);
        QList<QFuture<McpSession::Reply>> futures;
        for (int i = 0; i < 8; ++i) {
            futures.append(QtConcurrent::run([&rw, i] {
                return rw.handle(request(
                    QStringLiteral("tools/call"),
                    {{QStringLiteral("name"), QStringLiteral("execute")},
                     {QStringLiteral("arguments"),
                      QJsonObject{{QStringLiteral("command"), QStringLiteral("echo %1").arg(i)}}}},
                    1000 + i));
            }));
        }
        for (int i = 0; i < 8; ++i) {
            futures[i].waitForFinished();
            const QJsonObject r =
                futures[i].result().response->value(QLatin1String("result")).toObject();
            QVERIFY(text(r).startsWith(QString::number(i) + QLatin1Char('\n')));
            QCOMPARE(futures[i].result().response->value(QLatin1String("id")).toInt(), 1000 + i);
        }
    }

    // handleSerialized() escapes a tool's text into the response by hand: it must be the same
    // JSON as handle() builds, for any text and any request id (even one that spells the
    // place the text goes).
    void serializedEqualsHandled()
    {
        McpSession s(QStringLiteral("ser"),
                     spec(QStringLiteral("ser"), SandboxAttachMode::ReadWrite), m_sandbox);
        init(s);
        QString odd = QString::fromUtf8("\"q\" \\ \x01\x1f\t caf\xc3\xa9 \xf0\x9f\x98\x80\n");
        tool(s, QStringLiteral("write_file"),
             {{QStringLiteral("path"), QStringLiteral("ser/odd \"name\".txt")},
              {QStringLiteral("content"), odd}});
        const QList<QJsonObject> calls{
            {{QStringLiteral("name"), QStringLiteral("read_file")},
             {QStringLiteral("arguments"),
              QJsonObject{{QStringLiteral("path"), QStringLiteral("ser/odd \"name\".txt")}}}},
            {{QStringLiteral("name"), QStringLiteral("list_dir")},
             {QStringLiteral("arguments"),
              QJsonObject{{QStringLiteral("path"), QStringLiteral("ser")}}}},
            {{QStringLiteral("name"), QStringLiteral("read_file")}, // a tool error
             {QStringLiteral("arguments"),
              QJsonObject{{QStringLiteral("path"), QStringLiteral("../outside")}}}},
            {{QStringLiteral("name"), QStringLiteral("no_such_tool")}}, // a JSON-RPC fault
        };
        const QList<QJsonValue> ids{QJsonValue(7),
                                    QJsonValue(QStringLiteral(R"("content":[{"text":"")")),
                                    QJsonValue(QStringLiteral("\"}],\"isError\":true"))};
        for (const QJsonObject &params : calls) {
            for (const QJsonValue &id : ids) {
                jsonrpc::Message m = request(QStringLiteral("tools/call"), params, 0);
                m.id = id;
                const QJsonObject handled = *s.handle(m).response;
                const McpSession::SerializedReply serialized = s.handleSerialized(m);
                QVERIFY(!serialized.cancelled);
                QVERIFY(!serialized.bytes.contains('\n'));
                QJsonParseError error;
                const QJsonDocument doc = QJsonDocument::fromJson(serialized.bytes, &error);
                QCOMPARE(error.error, QJsonParseError::NoError);
                QCOMPARE(doc.object(), handled);
            }
        }
        const QJsonObject read =
            tool(s, QStringLiteral("read_file"),
                 {{QStringLiteral("path"), QStringLiteral("ser/odd \"name\".txt")}});
        QCOMPARE(text(read), odd);
        // Messages without a tool text are serialized whole.
        QCOMPARE(QJsonDocument::fromJson(
                     s.handleSerialized(request(QStringLiteral("ping"), {}, 9)).bytes)
                     .object(),
                 *s.handle(request(QStringLiteral("ping"), {}, 9)).response);
        jsonrpc::Message note;
        note.kind = jsonrpc::Message::Kind::Notification;
        note.method = QStringLiteral("notifications/initialized");
        QVERIFY(s.handleSerialized(note).bytes.isEmpty());
    }

    // --- The stateless revision (2026-07-28) ---------------------------------------------

    void statelessRequestsNeedNoInitialize()
    {
        const int attachedBefore = int(m_sandbox->attachedAgents().size());
        McpSession s(QStringLiteral("m"),
                     spec(QStringLiteral("modern"), SandboxAttachMode::ReadOnly), m_sandbox);
        const QJsonObject discover = resultOf(
            *s.handle(modern(QStringLiteral("server/discover"), {}, envelope(), 1)).response);
        QCOMPARE(discover.value(QLatin1String("resultType")).toString(),
                 QStringLiteral("complete"));
        const QJsonArray versions = discover.value(QLatin1String("supportedVersions")).toArray();
        QCOMPARE(versions.first().toString(), QStringLiteral("2026-07-28"));
        QVERIFY(versions.contains(QStringLiteral("2025-11-25")));
        QVERIFY(discover.value(QLatin1String("capabilities"))
                    .toObject()
                    .value(QLatin1String("extensions"))
                    .toObject()
                    .contains(QLatin1String("io.modelcontextprotocol/tasks")));
        QCOMPARE(discover.value(QLatin1String("_meta"))
                     .toObject()
                     .value(QLatin1String("io.modelcontextprotocol/serverInfo"))
                     .toObject()
                     .value(QLatin1String("name"))
                     .toString(),
                 QStringLiteral("elsai-workbench"));
        QCOMPARE(discover.value(QLatin1String("cacheScope")).toString(), QStringLiteral("private"));
        QVERIFY(s.isInitialized()); // the agent attached on the first request
        QCOMPARE(int(m_sandbox->attachedAgents().size()), attachedBefore + 1);

        const QJsonObject list =
            resultOf(*s.handle(modern(QStringLiteral("tools/list"), {}, envelope(), 2)).response);
        QCOMPARE(toolNames({{QStringLiteral("result"), list}}),
                 elsai::test::sortedSandboxTools(SandboxAttachMode::ReadOnly));
        QVERIFY(list.value(QLatin1String("ttlMs")).toInt() > 0);
        QCOMPARE(list.value(QLatin1String("resultType")).toString(), QStringLiteral("complete"));

        const QJsonObject read = resultOf(
            *s.handle(modern(QStringLiteral("tools/call"),
                             {{QStringLiteral("name"), QStringLiteral("read_file")},
                              {QStringLiteral("arguments"),
                               QJsonObject{{QStringLiteral("path"), QStringLiteral("a.txt")}}}},
                             envelope(), 3))
                 .response);
        QCOMPARE(text(read), QStringLiteral("a\nb\n"));
        QCOMPARE(read.value(QLatin1String("resultType")).toString(), QStringLiteral("complete"));
        // More requests, one agent: still one attachment; ping is not part of the revision.
        QCOMPARE(errorCode(*s.handle(modern(QStringLiteral("ping"), {}, envelope(), 4)).response),
                 int(jsonrpc::MethodNotFound));
        QCOMPARE(int(m_sandbox->attachedAgents().size()), attachedBefore + 1);
        // The same session takes a legacy handshake too (stdio serves both eras).
        QCOMPARE(init(s)
                     .value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("protocolVersion"))
                     .toString(),
                 QStringLiteral("2025-06-18"));
        s.close();
        QCOMPARE(int(m_sandbox->attachedAgents().size()), attachedBefore);
    }

    void statelessEnvelopeIsChecked_data()
    {
        QTest::addColumn<QJsonValue>("meta");
        QTest::addColumn<int>("code");
        const QJsonObject ok = envelope();
        QJsonObject noCaps = ok;
        noCaps.remove(QStringLiteral("io.modelcontextprotocol/clientCapabilities"));
        QJsonObject badInfo = ok;
        badInfo.insert(QStringLiteral("io.modelcontextprotocol/clientInfo"), QStringLiteral("me"));
        QJsonObject noInfo = ok;
        noInfo.remove(QStringLiteral("io.modelcontextprotocol/clientInfo"));
        QJsonObject numericVersion = ok;
        numericVersion.insert(QStringLiteral("io.modelcontextprotocol/protocolVersion"), 2026);
        // clang-format off
        QTest::newRow("complete")              << QJsonValue(ok) << 0;
        QTest::newRow("clientInfo is optional") << QJsonValue(noInfo) << 0;
        QTest::newRow("no capabilities")       << QJsonValue(noCaps) << int(jsonrpc::InvalidParams);
        QTest::newRow("clientInfo not object") << QJsonValue(badInfo) << int(jsonrpc::InvalidParams);
        QTest::newRow("version not a string")  << QJsonValue(numericVersion) << int(jsonrpc::InvalidParams);
        QTest::newRow("unknown future")        << QJsonValue(envelope({}, QStringLiteral("2099-01-01"))) << int(jsonrpc::UnsupportedProtocolVersion);
        QTest::newRow("not a date")            << QJsonValue(envelope({}, QStringLiteral("v999.0.0"))) << int(jsonrpc::UnsupportedProtocolVersion);
        // A session-based version in a stateless request: served only after initialize.
        QTest::newRow("legacy version")        << QJsonValue(envelope({}, QStringLiteral("2025-11-25"))) << int(jsonrpc::UnsupportedProtocolVersion);
        // clang-format on
    }
    void statelessEnvelopeIsChecked()
    {
        QFETCH(QJsonValue, meta);
        QFETCH(int, code);
        McpSession s(QStringLiteral("e"), spec(QStringLiteral("env"), SandboxAttachMode::ReadOnly),
                     m_sandbox);
        jsonrpc::Message m =
            request(QStringLiteral("server/discover"), {{QStringLiteral("_meta"), meta}}, 77);
        const QJsonObject response = *s.handle(m).response;
        QCOMPARE(errorCode(response), code);
        QCOMPARE(response.value(QLatin1String("id")).toInt(), 77);
        if (code == jsonrpc::UnsupportedProtocolVersion) {
            const QJsonObject data = response.value(QLatin1String("error"))
                                         .toObject()
                                         .value(QLatin1String("data"))
                                         .toObject();
            QCOMPARE(
                data.value(QLatin1String("requested")),
                meta.toObject().value(QLatin1String("io.modelcontextprotocol/protocolVersion")));
            QVERIFY(data.value(QLatin1String("supported"))
                        .toArray()
                        .contains(QStringLiteral("2026-07-28")));
        }
    }

    // What the 2026-07-28 conformance suite probes (server-stateless, tasks-capability-
    // negotiation): a method the revision removed is unknown even when it is `initialize`
    // (never a legacy handshake once the body claims the revision), before its envelope is
    // judged; the task methods need the Tasks extension declared, and say so in
    // data.requiredCapabilities.
    void statelessRefusalsAreTheSpecs_data()
    {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QJsonObject>("meta");
        QTest::addColumn<int>("code");
        QJsonObject broken = envelope();
        broken.remove(QStringLiteral("io.modelcontextprotocol/clientCapabilities"));
        // clang-format off
        QTest::newRow("initialize")             << QStringLiteral("initialize") << envelope() << int(jsonrpc::MethodNotFound);
        QTest::newRow("logging/setLevel")       << QStringLiteral("logging/setLevel") << envelope() << int(jsonrpc::MethodNotFound);
        QTest::newRow("unknown, bad envelope")  << QStringLiteral("unknown/method") << broken << int(jsonrpc::MethodNotFound);
        QTest::newRow("tasks/get")              << QStringLiteral("tasks/get") << envelope() << int(jsonrpc::MissingRequiredClientCapability);
        QTest::newRow("tasks/cancel")           << QStringLiteral("tasks/cancel") << envelope() << int(jsonrpc::MissingRequiredClientCapability);
        QTest::newRow("tasks/get, declared")    << QStringLiteral("tasks/get") << envelope(withTasks()) << int(jsonrpc::InvalidParams);
        // clang-format on
    }
    void statelessRefusalsAreTheSpecs()
    {
        QFETCH(QString, method);
        QFETCH(QJsonObject, meta);
        QFETCH(int, code);
        McpSession s(QStringLiteral("r"),
                     spec(QStringLiteral("refused"), SandboxAttachMode::ReadOnly), m_sandbox);
        const QJsonObject response =
            *s.handle(
                  modern(method, {{QStringLiteral("taskId"), QStringLiteral("nope")}}, meta, 31))
                 .response;
        QCOMPARE(errorCode(response), code);
        QCOMPARE(response.value(QLatin1String("id")).toInt(), 31);
        if (code == jsonrpc::MethodNotFound)
            QVERIFY(!s.isInitialized()); // no handshake happened
        if (code == jsonrpc::MissingRequiredClientCapability)
            QVERIFY(response.value(QLatin1String("error"))
                        .toObject()
                        .value(QLatin1String("data"))
                        .toObject()
                        .value(QLatin1String("requiredCapabilities"))
                        .toObject()
                        .value(QLatin1String("extensions"))
                        .toObject()
                        .contains(QLatin1String("io.modelcontextprotocol/tasks")));
    }

    // Ordering, not timing: the command waits for a file the test writes only after the call
    // was answered with a task; the task then completes with the command's whole output.
    void aLongCallBecomesATask()
    {
        McpSession s(QStringLiteral("t"),
                     spec(QStringLiteral("tasker"), SandboxAttachMode::ReadWrite), m_sandbox);
        s.setTaskThreshold(std::chrono::milliseconds(50));
        const QString go = m_tmp.filePath(QStringLiteral("ws/task-go"));
        auto run = start(
            s, execute(QStringLiteral(
                           "echo started; while [ ! -f task-go ]; do sleep 0.02; done; echo went"),
                       withTasks(), 501));
        QTRY_COMPARE_WITH_TIMEOUT(run->respondedSoFar().size(), 1, 20000);
        const QJsonObject created = QJsonDocument::fromJson(run->respondedSoFar().first()).object();
        QCOMPARE(created.value(QLatin1String("id")).toInt(), 501);
        const QJsonObject task = resultOf(created);
        QCOMPARE(task.value(QLatin1String("resultType")).toString(), QStringLiteral("task"));
        QCOMPARE(task.value(QLatin1String("status")).toString(), QStringLiteral("working"));
        const QString taskId = task.value(QLatin1String("taskId")).toString();
        QCOMPARE(taskId.size(), 32); // 128 random bits
        QVERIFY(task.value(QLatin1String("pollIntervalMs")).toInt() == 50);
        QVERIFY(task.contains(QLatin1String("createdAt")) && task.contains(QLatin1String("ttlMs")));
        // Readable while it works; another agent cannot see it.
        QCOMPARE(resultOf(taskGet(s, taskId)).value(QLatin1String("status")).toString(),
                 QStringLiteral("working"));
        McpSession other(QStringLiteral("o"),
                         spec(QStringLiteral("other"), SandboxAttachMode::ReadWrite), m_sandbox);
        QCOMPARE(errorCode(taskGet(other, taskId)), int(jsonrpc::InvalidParams));
        // notifications/cancelled names requests, not tasks: the task runs on.
        jsonrpc::Message cancel;
        cancel.kind = jsonrpc::Message::Kind::Notification;
        cancel.method = QStringLiteral("notifications/cancelled");
        cancel.params = {{QStringLiteral("requestId"), 501}};
        s.handle(cancel);
        QVERIFY(QFile(go).open(QIODevice::WriteOnly));
        run->future.waitForFinished();
        QVERIFY(run->future.result().answered);
        QVERIFY(run->future.result().bytes.isEmpty());
        QJsonObject done;
        QTRY_VERIFY_WITH_TIMEOUT(
            (done = resultOf(taskGet(s, taskId))).value(QLatin1String("status")).toString() ==
                QLatin1String("completed"),
            20000);
        QCOMPARE(done.value(QLatin1String("resultType")).toString(), QStringLiteral("complete"));
        const QJsonObject result = done.value(QLatin1String("result")).toObject();
        QCOMPARE(text(result), QStringLiteral("started\nwent\n[exit code: 0]"));
        QCOMPARE(result.value(QLatin1String("structuredContent"))
                     .toObject()
                     .value(QLatin1String("exit_code"))
                     .toInt(),
                 0);
        // Progress notifications, had they been asked for, stop with the answer: none here.
        QVERIFY(run->notifiedSoFar().isEmpty());
        // tasks/update is acknowledged (nothing is ever asked of the client); unknown ids are not.
        QCOMPARE(resultOf(taskGet(s, taskId, QStringLiteral("tasks/update")))
                     .value(QLatin1String("resultType"))
                     .toString(),
                 QStringLiteral("complete"));
        QCOMPARE(errorCode(taskGet(s, QStringLiteral("nope"))), int(jsonrpc::InvalidParams));
        QCOMPARE(errorCode(taskGet(s, QStringLiteral("nope"), QStringLiteral("tasks/cancel"))),
                 int(jsonrpc::InvalidParams));
    }

    void quickCallsAndClientsWithoutTasksGetTheResult_data()
    {
        QTest::addColumn<bool>("declaresTasks");
        QTest::addColumn<int>("thresholdMs");
        QTest::newRow("tasks declared, quick call") << true << 600000;
        QTest::newRow("tasks not declared, long call") << false << 1;
    }
    void quickCallsAndClientsWithoutTasksGetTheResult()
    {
        QFETCH(bool, declaresTasks);
        QFETCH(int, thresholdMs);
        McpSession s(QStringLiteral("q"),
                     spec(QStringLiteral("quick"), SandboxAttachMode::ReadWrite), m_sandbox);
        s.setTaskThreshold(std::chrono::milliseconds(thresholdMs));
        // 0.2 s outlives the 1 ms threshold by far; 600 s is never reached.
        auto run = start(s, execute(QStringLiteral("sleep 0.2; echo fine"),
                                    declaresTasks ? withTasks() : QJsonObject{}, 502));
        run->future.waitForFinished();
        const McpSession::SerializedReply reply = run->future.result();
        QVERIFY(!reply.answered);
        QVERIFY(run->respondedSoFar().isEmpty());
        const QJsonObject result = resultOf(QJsonDocument::fromJson(reply.bytes).object());
        QCOMPARE(result.value(QLatin1String("resultType")).toString(), QStringLiteral("complete"));
        QCOMPARE(text(result), QStringLiteral("fine\n[exit code: 0]"));
        QCOMPARE(s.tasks().size(), 0);
    }

    void tasksCancelKillsTheCommand()
    {
        McpSession s(QStringLiteral("tc"),
                     spec(QStringLiteral("taskcancel"), SandboxAttachMode::ReadWrite), m_sandbox);
        s.setTaskThreshold(std::chrono::milliseconds(20));
        const QString pidFile = m_tmp.filePath(QStringLiteral("ws/task.pid"));
        auto run = start(
            s, execute(QStringLiteral("sleep 300 & echo $! > task.pid; wait"), withTasks(), 503));
        QTRY_VERIFY_WITH_TIMEOUT(run->respondedSoFar().size() == 1 && QFile::exists(pidFile) &&
                                     !readHostFile(pidFile).trimmed().isEmpty(),
                                 20000);
        const pid_t child = readHostFile(pidFile).trimmed().toInt();
        const QString taskId =
            resultOf(QJsonDocument::fromJson(run->respondedSoFar().first()).object())
                .value(QLatin1String("taskId"))
                .toString();
        QCOMPARE(resultOf(taskGet(s, taskId, QStringLiteral("tasks/cancel")))
                     .value(QLatin1String("resultType"))
                     .toString(),
                 QStringLiteral("complete"));
        run->future.waitForFinished();
        QTRY_VERIFY_WITH_TIMEOUT(::kill(child, 0) != 0, 10000);
        const QJsonObject task = resultOf(taskGet(s, taskId));
        QCOMPARE(task.value(QLatin1String("status")).toString(), QStringLiteral("cancelled"));
        QVERIFY(!task.contains(QLatin1String("result")));
    }

    // subscriptions/listen: the acknowledgement first, then a notifications/tasks with the
    // whole task when it ends; unknown ids are left out of the acknowledgement.
    void listenReportsTaskStatus()
    {
        McpSession s(QStringLiteral("l"),
                     spec(QStringLiteral("listener"), SandboxAttachMode::ReadWrite), m_sandbox);
        s.setTaskThreshold(std::chrono::milliseconds(20));
        auto run = start(
            s, execute(QStringLiteral("while [ ! -f listen-go ]; do sleep 0.02; done; echo heard"),
                       withTasks(), 504));
        QTRY_COMPARE_WITH_TIMEOUT(run->respondedSoFar().size(), 1, 20000);
        const QString taskId =
            resultOf(QJsonDocument::fromJson(run->respondedSoFar().first()).object())
                .value(QLatin1String("taskId"))
                .toString();
        auto listen =
            start(s, modern(QStringLiteral("subscriptions/listen"),
                            {{QStringLiteral("notifications"),
                              QJsonObject{{QStringLiteral("taskIds"),
                                           QJsonArray{taskId, QStringLiteral("unknown")}}}}},
                            envelope(withTasks()), QStringLiteral("sub-1")));
        listen->future.waitForFinished();
        QVERIFY(listen->future.result().keepOpen);
        QVERIFY(listen->future.result().bytes.isEmpty());
        QCOMPARE(listen->notifiedSoFar().size(), 1);
        const QJsonObject ack = QJsonDocument::fromJson(listen->notifiedSoFar().first()).object();
        QCOMPARE(ack.value(QLatin1String("method")).toString(),
                 QStringLiteral("notifications/subscriptions/acknowledged"));
        const QJsonObject ackParams = ack.value(QLatin1String("params")).toObject();
        QCOMPARE(ackParams.value(QLatin1String("notifications"))
                     .toObject()
                     .value(QLatin1String("taskIds"))
                     .toArray(),
                 QJsonArray{taskId});
        QCOMPARE(ackParams.value(QLatin1String("_meta"))
                     .toObject()
                     .value(QLatin1String("io.modelcontextprotocol/subscriptionId"))
                     .toString(),
                 QStringLiteral("sub-1"));
        QVERIFY(QFile(m_tmp.filePath(QStringLiteral("ws/listen-go"))).open(QIODevice::WriteOnly));
        QTRY_COMPARE_WITH_TIMEOUT(listen->notifiedSoFar().size(), 2, 20000);
        const QJsonObject status = QJsonDocument::fromJson(listen->notifiedSoFar().at(1)).object();
        QCOMPARE(status.value(QLatin1String("method")).toString(),
                 QStringLiteral("notifications/tasks"));
        const QJsonObject params = status.value(QLatin1String("params")).toObject();
        QCOMPARE(params.value(QLatin1String("taskId")).toString(), taskId);
        QCOMPARE(params.value(QLatin1String("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(text(params.value(QLatin1String("result")).toObject()),
                 QStringLiteral("heard\n[exit code: 0]"));
        // Without the extension declared, task status cannot be asked for.
        QCOMPARE(
            errorCode(
                *s.handle(modern(QStringLiteral("subscriptions/listen"),
                                 {{QStringLiteral("notifications"),
                                   QJsonObject{{QStringLiteral("taskIds"), QJsonArray{taskId}}}}},
                                 envelope(), 9))
                     .response),
            int(jsonrpc::MissingRequiredClientCapability));
        run->future.waitForFinished();
    }
};

QTEST_GUILESS_MAIN(TestMcpSession)
#include "tst_mcpsession.moc"
