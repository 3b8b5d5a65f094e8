// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "errors.h"
#include "inputchecks.h"
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
        // the spec's four first, then the coding-agent tools (tst_agenttools covers them)
        const QStringList reads{QStringLiteral("grep"), QStringLiteral("glob"),
                                QStringLiteral("read_many"), QStringLiteral("stat"),
                                QStringLiteral("tree")};
        const QStringList writes{QStringLiteral("edit_file"), QStringLiteral("move"),
                                 QStringLiteral("delete"), QStringLiteral("mkdir")};
        const QStringList processes{QStringLiteral("process_start"), QStringLiteral("process_list"),
                                    QStringLiteral("process_output"),
                                    QStringLiteral("process_input"),
                                    QStringLiteral("process_stop")};
        QCOMPARE(SandboxPlugin::toolNames(SandboxAttachMode::ReadWrite, true),
                 QStringList({QStringLiteral("execute"), QStringLiteral("read_file"),
                              QStringLiteral("write_file"), QStringLiteral("list_dir")}) +
                     reads + writes + processes);
        QCOMPARE(SandboxPlugin::toolNames(SandboxAttachMode::ReadWrite, false),
                 QStringList({QStringLiteral("read_file"), QStringLiteral("write_file"),
                              QStringLiteral("list_dir")}) +
                     reads + writes);
        QCOMPARE(SandboxPlugin::toolNames(SandboxAttachMode::ReadOnly, true),
                 QStringList({QStringLiteral("read_file"), QStringLiteral("list_dir")}) + reads);
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
        // the spec's two, and the per-call timeout extension
        QCOMPARE(keys(QStringLiteral("execute")),
                 (QStringList{QStringLiteral("command"), QStringLiteral("cwd"),
                              QStringLiteral("timeout")}));
        QCOMPARE(required(QStringLiteral("execute")), QStringList{QStringLiteral("command")});
        // the spec's three, the byte range extension (byte_offset, max_bytes), line numbers
        QCOMPARE(keys(QStringLiteral("read_file")),
                 (QStringList{QStringLiteral("byte_offset"), QStringLiteral("limit"),
                              QStringLiteral("line_numbers"), QStringLiteral("max_bytes"),
                              QStringLiteral("offset"), QStringLiteral("path")}));
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

    // read_file answers at most the configured bytes, cut at a line end (or a character
    // boundary), and says how to read on; following next_offset (lines) or next_byte_offset
    // from the start reads the whole file back, piece by piece.
    void readIsBounded_data()
    {
        QTest::addColumn<QString>("content");
        QTest::addColumn<qint64>("bound");
        QTest::addColumn<QString>("follow"); // "offset" or "byte_offset"
        QString lines;
        for (int i = 0; i < 200; ++i)
            lines += QStringLiteral("line %1 of the bounded read test\n").arg(i);
        const QString oneLine = QString(300, QChar(0xe9)) + QString(300, u'x'); // no newline
        QTest::newRow("lines, by offset") << lines << 1000LL << "offset";
        QTest::newRow("lines, by byte_offset") << lines << 1000LL << "byte_offset";
        QTest::newRow("one long multi-byte line") << oneLine << 101LL << "byte_offset";
        QTest::newRow("bound of one byte, multi-byte text")
            << oneLine.left(20) << 1LL << "byte_offset";
        QTest::newRow("a line longer than the bound amid short ones")
            << QStringLiteral("a\n") + QString(500, u'b') + QStringLiteral("\nc\n") << 100LL
            << "byte_offset";
    }

    void readIsBounded()
    {
        QFETCH(QString, content);
        QFETCH(qint64, bound);
        QFETCH(QString, follow);
        const QString path = QStringLiteral("bounded.txt");
        m_sandbox->addFiles({{path, FileSource::text(content)}});
        AgentConfig config;
        config.sandbox = m_sandbox;
        config.sandboxAttachMode = SandboxAttachMode::ReadOnly;
        config.readFileMaxBytes = bound;
        const AgentPtr agent = Agent::create(QStringLiteral("bounded-reader"), config);
        const qint64 total = content.toUtf8().size();
        QString collected;
        QJsonObject args{{QStringLiteral("path"), path}};
        for (int call = 0; call < 100000; ++call) {
            const ToolResult r = agent->callTool(QStringLiteral("read_file"), args);
            const QString part = r.data.value(QStringLiteral("content")).toString();
            QVERIFY(part.toUtf8().size() <= qMax<qint64>(bound, 4));
            QCOMPARE(r.data.value(QStringLiteral("total_bytes")).toInteger(), total);
            collected += part;
            if (!r.data.value(QStringLiteral("truncated")).toBool()) {
                QCOMPARE(r.text, part);
                break;
            }
            QVERIFY2(r.text.startsWith(part) && r.text.contains(QString::number(total)),
                     qPrintable(r.text.right(200)));
            QVERIFY(!part.isEmpty());
            if (follow == u"offset" && r.data.contains(QStringLiteral("next_offset"))) {
                args.insert(QStringLiteral("offset"), r.data.value(QStringLiteral("next_offset")));
                QVERIFY(part.endsWith(u'\n'));
            } else {
                args.remove(QStringLiteral("offset"));
                args.insert(QStringLiteral("byte_offset"),
                            r.data.value(QStringLiteral("next_byte_offset")));
            }
        }
        QCOMPARE(collected, content);
        // the helper bounds the same way, and max_bytes only lowers the bound
        QVERIFY(readWorkspaceFile(*agent, path).toUtf8().size() <= qMax<qint64>(bound, 4) + 200);
        const ToolResult asked = agent->callTool(
            QStringLiteral("read_file"),
            {{QStringLiteral("path"), path}, {QStringLiteral("max_bytes"), bound * 1000}});
        QVERIFY(asked.data.value(QStringLiteral("bytes")).toInteger() <= qMax<qint64>(bound, 4));
        m_sandbox->deleteFiles({path});
    }

    // A read-only agent reads a 1 GiB sparse file under a 512 MiB address-space limit: the
    // answer is bounded and gives the total size; nothing near the file's size is allocated.
    // The read runs in a forked child with RLIMIT_AS set, so the limit cannot hurt the test.
    void readHugeSparseFileUnderAddressLimit()
    {
        if (test::addressSanitized())
            QSKIP("ASan reserves terabytes of address space; RLIMIT_AS cannot be used");
        constexpr qint64 fileSize = qint64(1) << 30;
        const QString path = QStringLiteral("huge-sparse.txt");
        const QString hostPath = m_tmp.filePath(QStringLiteral("ws/") + path);
        {
            QFile f(hostPath);
            QVERIFY(f.open(QIODevice::WriteOnly));
            for (int i = 0; i < 20000; ++i)
                f.write(QStringLiteral("line %1 of text before the hole\n").arg(i).toUtf8());
            QVERIFY(f.resize(fileSize)); // the rest is a hole: zeros, no disk
        }
        auto cleanup = qScopeGuard([&] { QFile::remove(hostPath); });
        // 1: a check failed; 2: an exception; 3: the limit could not be set
        const int result = test::exitStatusUnderAddressLimit(
            [](qint64) { return qint64(512) << 20; },
            [&] {
                int status = 0;
                const auto read = [&](const QJsonObject &extra) {
                    QJsonObject a{{QStringLiteral("path"), path}};
                    for (auto it = extra.begin(); it != extra.end(); ++it)
                        a.insert(it.key(), it.value());
                    return m_reader->callTool(QStringLiteral("read_file"), a);
                };
                const auto check = [&](const ToolResult &r, qint64 firstLine) {
                    const QString content = r.data.value(QStringLiteral("content")).toString();
                    if (r.data.value(QStringLiteral("total_bytes")).toInteger() != fileSize ||
                        !r.data.value(QStringLiteral("truncated")).toBool() ||
                        content.toUtf8().size() > DefaultReadFileMaxBytes ||
                        content.toUtf8().size() < DefaultReadFileMaxBytes / 2 ||
                        !content.startsWith(QStringLiteral("line %1 ").arg(firstLine)) ||
                        !r.text.contains(QString::number(fileSize)))
                        status = 1;
                };
                check(read({}), 0);
                check(read({{QStringLiteral("offset"), 1000}}), 1000);
                // in the hole: zeros are binary, a clear error naming the size
                try {
                    read({{QStringLiteral("byte_offset"), fileSize / 2}});
                    status = 1;
                } catch (const ValueError &e) {
                    if (!e.message().contains(QString::number(fileSize)))
                        status = 1;
                }
                // past every line: the scan walks the hole one buffer at a time
                const ToolResult past = read({{QStringLiteral("offset"), 1000000}});
                if (!past.data.value(QStringLiteral("content")).toString().isEmpty() ||
                    past.data.value(QStringLiteral("truncated")).toBool())
                    status = 1;
                return status;
            });
        QVERIFY2(result >= 0, "the reading child died (abort or signal)");
        QCOMPARE(result, 0);
    }

    // An output flood costs memory for what is returned only (issue 10 §4): 256 MiB of output,
    // with and without newlines, on stdout, stderr or both, under an address-space limit of
    // 64 MiB more than the process has mapped. The command runs to its end (the rest is read
    // and dropped) and the answer says it was truncated.
    void outputFloodIsBoundedInMemory_data()
    {
        QTest::addColumn<QString>("command");
        const QString flood = QStringLiteral("head -c 268435456 /dev/zero");
        QTest::newRow("stdout, no newline") << flood;
        QTest::newRow("stdout, short lines") << QStringLiteral("yes | head -c 268435456");
        QTest::newRow("stderr") << flood + QStringLiteral(" >&2");
        QTest::newRow("both")
            << QStringLiteral("yes | head -c 134217728 & %1 >&2; wait").arg(flood);
    }
    void outputFloodIsBoundedInMemory()
    {
        QFETCH(QString, command);
        if (test::addressSanitized())
            QSKIP("ASan reserves terabytes of address space; RLIMIT_AS cannot be used");
        // 1: not truncated; 2: an exception; 3: no limit; 4: failed; 5: too much returned
        const int result = test::exitStatusUnderAddressLimit(
            [](qint64 mapped) { return mapped + (qint64(64) << 20); },
            [&] {
                const ToolResult r = m_writer->callTool(QStringLiteral("execute"),
                                                        {{QStringLiteral("command"), command}});
                if (!r.data.value(QStringLiteral("truncated")).toBool())
                    return 1;
                if (r.data.value(QStringLiteral("exit_code")).toInt() != 0)
                    return 4;
                const qint64 returned =
                    r.data.value(QStringLiteral("output")).toString().toUtf8().size() +
                    r.data.value(QStringLiteral("stderr")).toString().toUtf8().size();
                return returned <= (qint64(1) << 20) ? 0 : 5;
            });
        QVERIFY2(result >= 0, "the child died (an abort: out of memory?)");
        QCOMPARE(result, 0);
    }

    // An agent-facing listing is capped: the first listDirMaxEntries() entries by name, then
    // a line saying how many more there are; the structured result says so too.
    void bigFoldersAreCappedForAgents()
    {
        const qsizetype extra = 7;
        const qsizetype total = listDirMaxEntries() + extra;
        const QString dir = m_tmp.filePath(QStringLiteral("ws/many"));
        QVERIFY(QDir().mkpath(dir));
        for (qsizetype i = 0; i < total; ++i) {
            QFile f(dir + QStringLiteral("/f%1").arg(i, 5, 10, QLatin1Char('0')));
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        auto cleanup = qScopeGuard([&] { QDir(dir).removeRecursively(); });
        const ToolResult r = m_reader->callTool(QStringLiteral("list_dir"),
                                                {{QStringLiteral("path"), QStringLiteral("many")}});
        QCOMPARE(r.data.value(QStringLiteral("entries")).toArray().size(), listDirMaxEntries());
        QCOMPARE(r.data.value(QStringLiteral("truncated")).toBool(), true);
        QCOMPARE(r.data.value(QStringLiteral("total_entries")).toInteger(), total);
        const QStringList lines = r.text.split(u'\n');
        QCOMPARE(lines.size(), listDirMaxEntries() + 1);
        QVERIFY2(lines.last().contains(QStringLiteral("%1 more entries").arg(extra)) &&
                     lines.last().contains(QString::number(total)),
                 qPrintable(lines.last()));
        const QStringList text = listWorkspaceDir(*m_reader, QStringLiteral("many")).split(u'\n');
        QCOMPARE(text.size(), listDirMaxEntries() + 1);
        QVERIFY2(text.first().startsWith(QStringLiteral("many/f00000")), qPrintable(text.first()));
        QVERIFY(text.last().contains(QStringLiteral("%1 more entries").arg(extra)));
        // a folder at the cap is not marked
        QVERIFY(QFile::remove(dir + QStringLiteral("/f%1").arg(0, 5, 10, QLatin1Char('0'))));
        for (qsizetype i = 1; i < extra; ++i)
            QVERIFY(QFile::remove(dir + QStringLiteral("/f%1").arg(i, 5, 10, QLatin1Char('0'))));
        const ToolResult atCap = m_reader->callTool(
            QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral("many")}});
        QVERIFY(!atCap.data.contains(QStringLiteral("truncated")));
        QCOMPARE(atCap.data.value(QStringLiteral("entries")).toArray().size(), listDirMaxEntries());
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
        // Unknown arguments are refused, not ignored (the schemas say additionalProperties:
        // false): a misspelt one would otherwise silently do nothing. `touch` must not run.
        row("execute, unknown argument", "writer", "execute",
            {{"command", "touch unknown-arg"}, {"timeout_s", 5}}, ve, "sandbox.execute", inv);
        row("read_file, unknown argument", "reader", "read_file",
            {{"path", "lines.txt"}, {"lines", 2}}, ve, "sandbox.read_file", inv);
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

    void unknownArgumentsAreNamedBoundedly()
    {
        QJsonObject args{{QStringLiteral("path"), QStringLiteral("lines.txt")}};
        for (int i = 0; i < 1000; ++i)
            args.insert(QStringLiteral("extra%1").arg(i, 4, 10, QLatin1Char('0')), i);
        try {
            m_reader->callTool(QStringLiteral("read_file"), args);
            QFAIL("unknown arguments were accepted");
        } catch (const ValueError &e) {
            QVERIFY(e.message().startsWith(
                QStringLiteral("read_file: unknown arguments 'extra0000', 'extra0001'")));
            QVERIFY(e.message().contains(QStringLiteral("…; it takes byte_offset, limit, "
                                                        "line_numbers, max_bytes, offset, "
                                                        "path")));
            QVERIFY(e.message().size() < 400);
        }
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
        QCOMPARE(audit.names(), (QStringList{QStringLiteral("sandbox.list_dir"),
                                             QStringLiteral("sandbox.read_file")}));
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
        QCOMPARE(lines.at(n - 1),
                 QStringLiteral("big/f%1.txt").arg(n - 1, 4, 10, QLatin1Char('0')));
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

    // A NUL would cut the C string a backend passes on while the audit shows the whole text;
    // an unbounded command costs the engine before anything runs. Both are refused up front.
    void nulAndOversizedInputRefused_data()
    {
        QTest::addColumn<QString>("via");
        QTest::addColumn<QString>("value");
        const QString nul = QStringLiteral("x") + QChar(u'\0') + QStringLiteral("y");
        const QString hidden =
            QStringLiteral("true") + QChar(u'\0') + QStringLiteral("; touch pwned");
        QTest::newRow("execute tool: command with NUL") << "tool-command" << hidden;
        QTest::newRow("execute tool: command over 1 MiB")
            << "tool-command" << QString(MaxCommandBytes + 1, u'#');
        QTest::newRow("execute tool: multi-byte command over 1 MiB")
            << "tool-command" << QString(MaxCommandBytes / 2, QChar(0xe9)) + u'#';
        QTest::newRow("execute tool: command over the one-argument limit of sh -c")
            << "tool-command" << QString(MaxArgumentBytes + 1, u'#');
        QTest::newRow("execute tool: cwd with NUL") << "tool-cwd" << nul;
        QTest::newRow("read_file tool: path with NUL") << "tool-read" << nul;
        QTest::newRow("write_file tool: path with NUL") << "tool-write" << nul;
        QTest::newRow("list_dir tool: path with NUL") << "tool-list" << nul;
        QTest::newRow("executeAs: env name with NUL") << "env-name" << nul;
        QTest::newRow("executeAs: env name with '='") << "env-name" << QStringLiteral("A=B");
        QTest::newRow("executeAs: env name with a space") << "env-name" << QStringLiteral("A B");
        QTest::newRow("executeAs: env name starting with a digit")
            << "env-name" << QStringLiteral("1A");
        QTest::newRow("executeAs: empty env name") << "env-name" << QString();
        QTest::newRow("executeAs: env value with NUL") << "env-value" << nul;
        QTest::newRow("backend option: env name") << "backend-env-name" << QStringLiteral("A=B");
        QTest::newRow("backend option: env value with NUL") << "backend-env-value" << nul;
        QTest::newRow("backend option: workspace root with NUL") << "backend-root" << nul;
        QTest::newRow("host API: read_file path with NUL") << "host-read" << nul;
        QTest::newRow("host API: download host path with NUL") << "host-download" << nul;
        QTest::newRow("host API: add_files host path with NUL") << "host-add" << nul;
        QTest::newRow("host API: flush destination with NUL") << "host-flush" << nul;
        QTest::newRow("host API: seed_from with NUL") << "host-seed" << nul;
    }

    void nulAndOversizedInputRefused()
    {
        QFETCH(QString, via);
        QFETCH(QString, value);
        const QString hostFolder = m_tmp.filePath(QStringLiteral("nul-host"));
        QVERIFY(QDir().mkpath(hostFolder));
        const QString hostPath = hostFolder + u'/' + value;
        const QByteArray before = treeHash();
        const auto call = [&] {
            const auto tool = [&](const QString &name, const QJsonObject &args) {
                return m_writer->callTool(name, args);
            };
            const QString p = QStringLiteral("path");
            if (via == u"tool-command")
                tool(QStringLiteral("execute"), {{QStringLiteral("command"), value}});
            else if (via == u"tool-cwd")
                tool(QStringLiteral("execute"),
                     {{QStringLiteral("command"), QStringLiteral("true")},
                      {QStringLiteral("cwd"), value}});
            else if (via == u"tool-read")
                tool(QStringLiteral("read_file"), {{p, value}});
            else if (via == u"tool-write")
                tool(QStringLiteral("write_file"),
                     {{p, value}, {QStringLiteral("content"), QStringLiteral("c")}});
            else if (via == u"tool-list")
                tool(QStringLiteral("list_dir"), {{p, value}});
            else if (via == u"env-name" || via == u"env-value") {
                ExecuteOptions o;
                if (via == u"env-name")
                    o.env.insert(value, QStringLiteral("v"));
                else
                    o.env.insert(QStringLiteral("GOOD_NAME"), value);
                executeAs(*m_writer, QStringLiteral("touch pwned"), std::nullopt, o);
            } else if (via.startsWith(u"backend-")) {
                LocalSandboxBackend::Options o;
                if (via == u"backend-env-name")
                    o.env.insert(value, QStringLiteral("v"));
                else if (via == u"backend-env-value")
                    o.env.insert(QStringLiteral("GOOD_NAME"), value);
                const QString root = via == u"backend-root" ? hostPath : m_tmp.filePath("nul-ws");
                LocalSandboxBackend b(root, o);
                b.create();
                b.execute(QStringLiteral("touch pwned"));
            } else if (via == u"host-read")
                m_sandbox->readFileBytes(value);
            else if (via == u"host-download")
                m_sandbox->downloadFiles({{QStringLiteral("lines.txt"), hostPath}});
            else if (via == u"host-add")
                m_sandbox->addFiles(
                    {{QStringLiteral("added.txt"), FileSource::hostPath(hostPath)}});
            else if (via == u"host-flush")
                m_sandbox->flush(hostPath);
            else if (via == u"host-seed") {
                Sandbox::Options o;
                o.seedFrom = hostPath;
                Sandbox::create(QStringLiteral("nul-seed"),
                                std::make_shared<LocalSandboxBackend>(m_tmp.filePath("nul-seed")),
                                60, o);
            } else
                QFAIL("unknown row");
        };
        QVERIFY_THROWS_EXCEPTION(ValueError, call());
        QCOMPARE(treeHash(), before);
        QVERIFY(!QFileInfo::exists(m_tmp.filePath(QStringLiteral("nul-ws/pwned"))));
        QCOMPARE(QDir(hostFolder).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList());
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
                 (QStringList{QStringLiteral("custom"), QStringLiteral("glob"),
                              QStringLiteral("grep"), QStringLiteral("list_dir"),
                              QStringLiteral("read_file"), QStringLiteral("read_many"),
                              QStringLiteral("stat"), QStringLiteral("tree")}));
        QCOMPARE(SandboxPlugin::unregisterTools(*a).size(), 7);
        QCOMPARE(a->tools().names(), QStringList{QStringLiteral("custom")});
    }
};

QTEST_GUILESS_MAIN(TestSandboxPlugin)
#include "tst_sandboxplugin.moc"
