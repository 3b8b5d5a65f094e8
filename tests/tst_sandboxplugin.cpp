#include "errors.h"
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "sandboxplugin.h"
#include "testutil.h"

#include <QCryptographicHash>
#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

using namespace elsai;

class TestSandboxPlugin : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    SandboxPtr m_sandbox;
    AgentPtr m_writer;
    AgentPtr m_reader;

    /// SHA-256 over every path, type and content of the workspace (R1: "hash of the tree").
    QByteArray treeHash() const
    {
        QCryptographicHash h(QCryptographicHash::Sha256);
        QStringList entries;
        QDirIterator it(m_tmp.filePath(QStringLiteral("ws")),
                        QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                        QDirIterator::Subdirectories);
        while (it.hasNext())
            entries.append(it.next());
        entries.sort();
        for (const QString &e : std::as_const(entries)) {
            h.addData(e.toUtf8());
            QFile f(e);
            if (QFileInfo(e).isFile() && f.open(QIODevice::ReadOnly))
                h.addData(f.readAll());
        }
        return h.result();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_sandbox = Sandbox::create(
            QStringLiteral("plugin"),
            std::make_shared<LocalSandboxBackend>(m_tmp.filePath(QStringLiteral("ws"))), 600);
        m_sandbox->start();
        m_sandbox->addFiles(
            {{QStringLiteral("lines.txt"), FileSource::text(QStringLiteral("l0\nl1\nl2\nl3\nl4"))},
             {QStringLiteral("sub/a.txt"), FileSource::text(QStringLiteral("a"))},
             {QStringLiteral("bin.dat"), FileSource::bytes(QByteArray("\x7f"
                                                                      "ELF\0\0",
                                                                      6))}});
        m_writer = Agent::create(QStringLiteral("writer"));
        m_reader = Agent::create(QStringLiteral("reader"));
        m_sandbox->attach(m_writer);
        m_sandbox->attach(m_reader, SandboxAttachMode::ReadOnly);
    }

    void cleanupTestCase() { m_sandbox->stop(false); }

    void toolSetsPerMode()
    {
        QCOMPARE(SandboxPlugin::toolNames(SandboxAttachMode::ReadWrite, true),
                 (QStringList{QStringLiteral("execute"), QStringLiteral("read_file"),
                              QStringLiteral("write_file"), QStringLiteral("list_dir")}));
        QCOMPARE(SandboxPlugin::toolNames(SandboxAttachMode::ReadWrite, false),
                 (QStringList{QStringLiteral("read_file"), QStringLiteral("write_file"),
                              QStringLiteral("list_dir")}));
        QCOMPARE(SandboxPlugin::toolNames(SandboxAttachMode::ReadOnly, true),
                 (QStringList{QStringLiteral("read_file"), QStringLiteral("list_dir")}));
    }

    void schemasDescribeTheSpecParameters()
    {
        const auto props = [](const QString &tool) -> QJsonObject {
            for (const Tool &t : SandboxPlugin::tools(SandboxAttachMode::ReadWrite, true)) {
                if (t.name == tool)
                    return t.description.size() > 40 ? t.inputSchema : QJsonObject();
            }
            return QJsonObject();
        };
        auto keys = [&](const QString &tool) {
            QStringList k = props(tool).value(QStringLiteral("properties")).toObject().keys();
            k.sort();
            return k;
        };
        auto required = [&](const QString &tool) {
            QStringList r;
            for (const QJsonValue &v : props(tool).value(QStringLiteral("required")).toArray())
                r.append(v.toString());
            return r;
        };
        QCOMPARE(keys(QStringLiteral("execute")),
                 (QStringList{QStringLiteral("command"), QStringLiteral("cwd")}));
        QCOMPARE(required(QStringLiteral("execute")), QStringList{QStringLiteral("command")});
        QCOMPARE(keys(QStringLiteral("read_file")),
                 (QStringList{QStringLiteral("limit"), QStringLiteral("offset"),
                              QStringLiteral("path")}));
        QCOMPARE(required(QStringLiteral("read_file")), QStringList{QStringLiteral("path")});
        QCOMPARE(props(QStringLiteral("read_file"))
                     .value(QStringLiteral("properties"))
                     .toObject()
                     .value(QStringLiteral("offset"))
                     .toObject()
                     .value(QStringLiteral("default"))
                     .toInt(-1),
                 0);
        QCOMPARE(keys(QStringLiteral("write_file")),
                 (QStringList{QStringLiteral("content"), QStringLiteral("path")}));
        QCOMPARE(required(QStringLiteral("write_file")).size(), 2);
        QCOMPARE(keys(QStringLiteral("list_dir")), QStringList{QStringLiteral("path")});
    }

    void readOffsetLimit_data()
    {
        QTest::addColumn<qint64>("offset");
        QTest::addColumn<qint64>("limit"); // -1 = none
        QTest::addColumn<QString>("expected");
        QTest::newRow("whole") << 0LL << -1LL << QStringLiteral("l0\nl1\nl2\nl3\nl4");
        QTest::newRow("first-two") << 0LL << 2LL << QStringLiteral("l0\nl1\n");
        QTest::newRow("middle") << 2LL << 1LL << QStringLiteral("l2\n");
        QTest::newRow("to-end-no-newline") << 3LL << -1LL << QStringLiteral("l3\nl4");
        QTest::newRow("limit-past-end") << 4LL << 10LL << QStringLiteral("l4");
        QTest::newRow("offset-past-end") << 9LL << -1LL << QString();
        QTest::newRow("zero-limit") << 1LL << 0LL << QString();
    }

    void readOffsetLimit()
    {
        QFETCH(qint64, offset);
        QFETCH(qint64, limit);
        QFETCH(QString, expected);
        QCOMPARE(readWorkspaceFile(*m_reader, QStringLiteral("lines.txt"), offset,
                                   limit < 0 ? std::nullopt : std::optional<qint64>(limit)),
                 expected);
        QJsonObject args{{QStringLiteral("path"), QStringLiteral("lines.txt")},
                         {QStringLiteral("offset"), offset}};
        if (limit >= 0)
            args.insert(QStringLiteral("limit"), limit);
        QCOMPARE(m_reader->callTool(QStringLiteral("read_file"), args).text, expected);
    }

    void readErrors()
    {
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 readWorkspaceFile(*m_reader, QStringLiteral("lines.txt"), -1));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 readWorkspaceFile(*m_reader, QStringLiteral("bin.dat")));
        QVERIFY_THROWS_EXCEPTION(IsADirectoryError,
                                 readWorkspaceFile(*m_reader, QStringLiteral("sub")));
        // R2: a missing path is an error and creates nothing.
        const QByteArray before = treeHash();
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError,
                                 readWorkspaceFile(*m_reader, QStringLiteral("missing/x.txt")));
        QCOMPARE(treeHash(), before);
        QVERIFY_THROWS_EXCEPTION(PermissionError,
                                 readWorkspaceFile(*m_reader, QStringLiteral("../x")));
    }

    void readOnlyAgentCannotMutate_data()
    {
        QTest::addColumn<int>("attempt");
        for (int i = 0; i < 6; ++i)
            QTest::newRow(qPrintable(QStringLiteral("attempt-%1").arg(i))) << i;
    }

    void readOnlyAgentCannotMutate()
    {
        // R1: every mutating path raises SandboxMutationDeniedError and leaves the tree unchanged.
        QFETCH(int, attempt);
        test::AuditCapture audit;
        const QByteArray before = treeHash();
        switch (attempt) {
        case 0:
            QVERIFY_THROWS_EXCEPTION(
                SandboxMutationDeniedError,
                writeWorkspaceFile(*m_reader, QStringLiteral("x"), QStringLiteral("y")));
            break;
        case 1:
            QVERIFY_THROWS_EXCEPTION(SandboxMutationDeniedError,
                                     runCommand(*m_reader, QStringLiteral("touch pwned")));
            break;
        case 2:
            QVERIFY_THROWS_EXCEPTION(SandboxMutationDeniedError,
                                     executeAs(*m_reader, QStringLiteral("rm -rf sub")));
            break;
        case 3:
            QVERIFY_THROWS_EXCEPTION(SandboxMutationDeniedError,
                                     ensureSandboxMutationAllowed(*m_reader));
            break;
        case 4: // not registered, and calling it anyway is a denied mutation
            QVERIFY(!m_reader->tools().contains(QStringLiteral("write_file")));
            QVERIFY_THROWS_EXCEPTION(
                SandboxMutationDeniedError,
                m_reader->callTool(QStringLiteral("write_file"),
                                   {{QStringLiteral("path"), QStringLiteral("x")},
                                    {QStringLiteral("content"), QStringLiteral("y")}}));
            break;
        case 5:
            QVERIFY(!m_reader->tools().contains(QStringLiteral("execute")));
            QVERIFY_THROWS_EXCEPTION(
                SandboxMutationDeniedError,
                m_reader->callTool(QStringLiteral("execute"),
                                   {{QStringLiteral("command"), QStringLiteral("touch pwned")}}));
            break;
        }
        QCOMPARE(treeHash(), before);
        if (attempt != 3) { // every denied attempt is audited once, as such
            QCOMPARE(audit.events().size(), 1);
            QCOMPARE(audit.events().first().outcome, QStringLiteral("denied"));
        }
    }

    // Every tool call has exactly one record, the refused and invalid ones too: arguments
    // missing or of the wrong type, below their minimum, an unknown tool, a blocked one.
    void invalidCallsAreAudited_data()
    {
        QTest::addColumn<QString>("agent");
        QTest::addColumn<QString>("tool");
        QTest::addColumn<QJsonObject>("args");
        QTest::addColumn<QString>("errorType");
        QTest::addColumn<QString>("event");
        QTest::addColumn<QString>("outcome");
        const QString inv = QStringLiteral("invalid");
        const QString ve = QStringLiteral("ValueError");
        auto row = [&](const char *name, const char *agent, const char *tool, QJsonObject args,
                       const QString &type, const char *event, const QString &outcome) {
            QTest::newRow(name) << QString::fromLatin1(agent) << QString::fromLatin1(tool) << args
                                << type << QString::fromLatin1(event) << outcome;
        };
        row("execute without command", "writer", "execute", {}, ve, "sandbox.execute", inv);
        row("execute, command a number", "writer", "execute", {{"command", 5}}, ve,
            "sandbox.execute", inv);
        row("execute, cwd an array", "writer", "execute",
            {{"command", "true"}, {"cwd", QJsonArray{1}}}, ve, "sandbox.execute", inv);
        row("read_file without path", "reader", "read_file", {}, ve, "sandbox.read_file", inv);
        row("read_file, offset a string", "reader", "read_file",
            {{"path", "lines.txt"}, {"offset", "2"}}, ve, "sandbox.read_file", inv);
        row("read_file, limit 1.5", "reader", "read_file", {{"path", "lines.txt"}, {"limit", 1.5}},
            ve, "sandbox.read_file", inv);
        row("read_file, offset -1", "reader", "read_file", {{"path", "lines.txt"}, {"offset", -1}},
            ve, "sandbox.read_file", inv);
        row("write_file without content", "writer", "write_file", {{"path", "x"}}, ve,
            "sandbox.write_file", inv);
        row("list_dir, path null", "writer", "list_dir", {{"path", QJsonValue()}}, ve,
            "sandbox.list_dir", inv);
        row("unknown tool", "writer", "no_such_tool", {}, QStringLiteral("ToolNotFoundError"),
            "tool.call", inv);
        row("read-only execute", "reader", "execute", {{"command", "touch x"}},
            QStringLiteral("SandboxMutationDeniedError"), "sandbox.execute",
            QStringLiteral("denied"));
    }

    void invalidCallsAreAudited()
    {
        QFETCH(QString, agent);
        QFETCH(QString, tool);
        QFETCH(QJsonObject, args);
        QFETCH(QString, errorType);
        QFETCH(QString, event);
        QFETCH(QString, outcome);
        const AgentPtr a = agent == QLatin1String("writer") ? m_writer : m_reader;
        test::AuditCapture audit;
        const QByteArray before = treeHash();
        QString thrown;
        try {
            a->callTool(tool, args);
        } catch (const SandboxError &e) {
            thrown = e.specName();
        }
        QCOMPARE(thrown, errorType);
        QCOMPARE(treeHash(), before);
        const QList<AuditEvent> events = audit.events();
        QCOMPARE(events.size(), 1);
        const AuditEvent &e = events.first();
        QCOMPARE(e.event, event);
        QCOMPARE(e.outcome, outcome);
        QCOMPARE(e.actor, a->id());
        QCOMPARE(e.workspaceId, QStringLiteral("plugin"));
        QCOMPARE(e.fields.value(QLatin1String("error_type")).toString(), errorType);
        if (event == QLatin1String("tool.call"))
            QCOMPARE(e.fields.value(QLatin1String("tool")).toString(), tool);
    }

    void unknownToolNameIsBoundedInTheRecord()
    {
        test::AuditCapture audit;
        const QString name = QStringLiteral("x").repeated(100000);
        QVERIFY_THROWS_EXCEPTION(ToolNotFoundError, m_writer->callTool(name, {}));
        QCOMPARE(audit.events().size(), 1);
        const AuditEvent e = audit.events().first();
        QCOMPARE(e.outcome, QStringLiteral("invalid"));
        QVERIFY(e.fields.value(QLatin1String("tool")).toString().size() <= 128);
        QVERIFY(QJsonDocument(e.toJson()).toJson().size() < 4096);
    }

    void validCallsHaveOneRecordEach()
    {
        test::AuditCapture audit;
        m_writer->callTool(QStringLiteral("list_dir"), {{QStringLiteral("path"), "."}});
        m_reader->callTool(QStringLiteral("read_file"), {{QStringLiteral("path"), "lines.txt"}});
        QCOMPARE(audit.names(),
                 (QStringList{QStringLiteral("sandbox.list_dir"), QStringLiteral("sandbox.read_file")}));
        for (const AuditEvent &e : audit.events())
            QCOMPARE(e.outcome, QStringLiteral("ok"));
    }

    void writeAndListTools()
    {
        const ToolResult w =
            m_writer->callTool(QStringLiteral("write_file"),
                               {{QStringLiteral("path"), QStringLiteral("new/dir/f.txt")},
                                {QStringLiteral("content"), QStringLiteral("héllo")}});
        QCOMPARE(w.text, QStringLiteral("Wrote 6 bytes to new/dir/f.txt"));
        QCOMPARE(w.data.value(QStringLiteral("bytes")).toInt(), 6);
        const ToolResult l = m_reader->callTool(
            QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral("new/dir")}});
        QCOMPARE(l.text, QStringLiteral("new/dir/f.txt (6 bytes)"));
        QCOMPARE(l.data.value(QStringLiteral("entries")).toArray().size(), 1);
        const QString root = listWorkspaceDir(*m_reader, QStringLiteral("."));
        const QStringList lines = root.split(QLatin1Char('\n'));
        QVERIFY(lines.contains(QStringLiteral("sub/")));
        QVERIFY(lines.contains(QStringLiteral("lines.txt (14 bytes)")));
        QVERIFY_THROWS_EXCEPTION(NotADirectoryError,
                                 listWorkspaceDir(*m_reader, QStringLiteral("lines.txt")));
        m_sandbox->deleteFiles({QStringLiteral("new")});
    }

    // A folder over listingSizeLimit() is listed from the directory entries alone: same
    // entries, order and kinds, no sizes, and a last line that says so. The structured
    // list_dir tool still stats every entry.
    void largeListingOmitsSizes()
    {
        const qsizetype n = listingSizeLimit() + 1;
        QList<QPair<QString, FileSource>> files;
        for (qsizetype i = 0; i < n; ++i)
            files.append({QStringLiteral("big/f%1.txt").arg(i, 4, 10, QLatin1Char('0')),
                          FileSource::text(QStringLiteral("xyz"))});
        files.append({QStringLiteral("big/sub/x"), FileSource::text(QStringLiteral("x"))});
        m_sandbox->addFiles(files);
        QVERIFY(QFile::link(QStringLiteral("f0000.txt"),
                            m_tmp.filePath(QStringLiteral("ws/big/link"))));

        const QStringList lines =
            listWorkspaceDir(*m_reader, QStringLiteral("big")).split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), n + 3);
        QCOMPARE(lines.first(), QStringLiteral("big/f0000.txt"));
        QCOMPARE(lines.at(n - 1), QStringLiteral("big/f%1.txt").arg(n - 1, 4, 10, QLatin1Char('0')));
        QCOMPARE(lines.at(n), QStringLiteral("big/link (symlink)"));
        QCOMPARE(lines.at(n + 1), QStringLiteral("big/sub/"));
        QCOMPARE(lines.last(),
                 QStringLiteral("[%1 entries; file sizes are shown for folders of up to %2]")
                     .arg(n + 2)
                     .arg(listingSizeLimit()));

        const ToolResult structured = m_reader->callTool(
            QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral("big")}});
        QVERIFY(structured.text.startsWith(QStringLiteral("big/f0000.txt (3 bytes)\n")));
        const QJsonArray entries = structured.data.value(QStringLiteral("entries")).toArray();
        QCOMPARE(entries.size(), n + 2);
        QCOMPARE(entries.first().toObject().value(QStringLiteral("size")).toInt(), 3);

        // At the limit, sizes are shown and there is no note.
        m_sandbox->deleteFiles({QStringLiteral("big/f0000.txt"), QStringLiteral("big/link"),
                                QStringLiteral("big/sub")});
        const QString small = listWorkspaceDir(*m_reader, QStringLiteral("big"));
        QCOMPARE(small.count(QLatin1Char('\n')) + 1, listingSizeLimit());
        QVERIFY(small.startsWith(QStringLiteral("big/f0001.txt (3 bytes)\n")));
        QVERIFY(!small.contains(QLatin1Char('[')));
        m_sandbox->deleteFiles({QStringLiteral("big")});
    }

    void executeTool()
    {
        const ToolResult r = m_writer->callTool(
            QStringLiteral("execute"),
            {{QStringLiteral("command"), QStringLiteral("pwd; echo e >&2; exit 2")},
             {QStringLiteral("cwd"), QStringLiteral("sub")}});
        QCOMPARE(r.data.value(QStringLiteral("exit_code")).toInt(), 2);
        QCOMPARE(r.data.value(QStringLiteral("success")).toBool(), false);
        QVERIFY(r.data.value(QStringLiteral("output"))
                    .toString()
                    .endsWith(QStringLiteral("/ws/sub\n")));
        QCOMPARE(r.data.value(QStringLiteral("stderr")).toString(), QStringLiteral("e\n"));
        QVERIFY(r.text.endsWith(QStringLiteral("[stderr]\ne\n[exit code: 2]")));
        QVERIFY_THROWS_EXCEPTION(
            PermissionError,
            m_writer->callTool(QStringLiteral("execute"),
                               {{QStringLiteral("command"), QStringLiteral("true")},
                                {QStringLiteral("cwd"), QStringLiteral("..")}}));
        QCOMPARE(runCommand(*m_writer, QStringLiteral("echo hi")),
                 QStringLiteral("hi\n[exit code: 0]"));
    }

    void formatExecuteResult_data()
    {
        QTest::addColumn<QString>("out");
        QTest::addColumn<QString>("err");
        QTest::addColumn<int>("code");
        QTest::addColumn<bool>("truncated");
        QTest::addColumn<bool>("timedOut");
        QTest::addColumn<QString>("expected");
        QTest::newRow("ok") << "a\n"
                            << "" << 0 << false << false << "a\n[exit code: 0]";
        QTest::newRow("no-newline") << "a"
                                    << "" << 1 << false << false << "a\n[exit code: 1]";
        QTest::newRow("empty") << ""
                               << "" << 0 << false << false << "[exit code: 0]";
        QTest::newRow("stderr-only")
            << ""
            << "boom" << 127 << false << false << "[stderr]\nboom\n[exit code: 127]";
        QTest::newRow("both") << "o"
                              << "e\n"
                              << 3 << false << false << "o\n[stderr]\ne\n[exit code: 3]";
        QTest::newRow("truncated")
            << "x"
            << "" << 0 << true << false << "x\n[exit code: 0, output truncated]";
        QTest::newRow("timeout") << ""
                                 << "" << 124 << false << true << "[exit code: 124, timed out]";
    }

    void formatExecuteResult()
    {
        QFETCH(QString, out);
        QFETCH(QString, err);
        QFETCH(int, code);
        QFETCH(bool, truncated);
        QFETCH(bool, timedOut);
        QFETCH(QString, expected);
        ExecuteResult r;
        r.output = out;
        r.stderr_ = err;
        r.exitCode = code;
        r.truncated = truncated;
        r.timedOut = timedOut;
        QCOMPARE(elsai::formatExecuteResult(r), expected);
        QCOMPARE(r.success(), code == 0);
    }

    void detachedAgentHelpers()
    {
        const AgentPtr temp = Agent::create(QStringLiteral("temp"));
        m_sandbox->attach(temp);
        m_sandbox->detach(temp);
        QVERIFY_THROWS_EXCEPTION(
            AgentSandboxDetachedError,
            writeWorkspaceFile(*temp, QStringLiteral("x"), QStringLiteral("y")));
        QVERIFY_THROWS_EXCEPTION(AgentSandboxDetachedError,
                                 runCommand(*temp, QStringLiteral("true")));
        QVERIFY_THROWS_EXCEPTION(AgentSandboxDetachedError, ensureSandboxMutationAllowed(*temp));
        QVERIFY_THROWS_EXCEPTION(AgentSandboxDetachedError,
                                 readWorkspaceFile(*temp, QStringLiteral("lines.txt")));
        const AgentPtr never = Agent::create(QStringLiteral("never"));
        QVERIFY_THROWS_EXCEPTION(AgentSandboxDetachedError, ensureSandboxMutationAllowed(*never));
        ensureSandboxMutationAllowed(*m_writer); // allowed: no throw
    }

    void registrationReplacesOnlySandboxTools()
    {
        const AgentPtr a = Agent::create(QStringLiteral("mixed"));
        a->tools().add({QStringLiteral("custom"),
                        QStringLiteral("mine"),
                        {},
                        QStringLiteral("user"),
                        [](Agent &, const QJsonObject &) {
                            return ToolResult{QStringLiteral("c"), {}, false};
                        }});
        SandboxPlugin::registerTools(*a, SandboxAttachMode::ReadWrite, true);
        SandboxPlugin::registerTools(*a, SandboxAttachMode::ReadOnly, true);
        QCOMPARE(a->tools().names(),
                 (QStringList{QStringLiteral("custom"), QStringLiteral("list_dir"),
                              QStringLiteral("read_file")}));
        QCOMPARE(SandboxPlugin::unregisterTools(*a).size(), 2);
        QCOMPARE(a->tools().names(), QStringList{QStringLiteral("custom")});
    }
};

QTEST_GUILESS_MAIN(TestSandboxPlugin)
#include "tst_sandboxplugin.moc"
