// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Drives the headless JSON-lines API (elsai::ScriptRunner) in process against a Sandbox with a
// LocalSandboxBackend, one operation at a time, checking the shape of every result.

#include "errors.h"
#include "localsandboxbackend.h"
#include "offload.h"
#include "sandbox.h"
#include "sandboxmanager.h"
#include "sandboxplugin.h"
#include "scriptrunner.h"
#include "testutil.h"

#include <QBuffer>
#include <QCryptographicHash>
#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

#include <unistd.h>

using namespace elsai;

namespace {

const QString kWorkspaceId = QStringLiteral("script-ws");

QByteArray toLine(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

QString dump(const QJsonObject &o)
{
    return QString::fromUtf8(toLine(o));
}

bool writeHost(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(data) == data.size();
}

QByteArray readHost(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return QByteArray("<unreadable>");
    return f.readAll();
}

/// Every entry below `root` (names, types, contents), hashed: equal digests = equal trees.
QByteArray treeDigest(const QString &root)
{
    QStringList lines;
    QDirIterator it(root, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        const QFileInfo fi = it.fileInfo();
        const QString rel = QDir(root).relativeFilePath(fi.filePath());
        QString line = rel + QLatin1Char('|');
        if (fi.isSymLink())
            line += QStringLiteral("link:") + fi.symLinkTarget();
        else if (fi.isDir())
            line += QStringLiteral("dir");
        else
            line += QString::fromLatin1(
                QCryptographicHash::hash(readHost(fi.filePath()), QCryptographicHash::Sha256)
                    .toHex());
        lines.append(line);
    }
    lines.sort();
    return QCryptographicHash::hash(lines.join(QLatin1Char('\n')).toUtf8(),
                                    QCryptographicHash::Sha256)
        .toHex();
}

QStringList stringsOf(const QJsonValue &v)
{
    QStringList out;
    for (const QJsonValue &item : v.toArray())
        out.append(item.toString());
    return out;
}

QString errorType(const QJsonObject &r)
{
    return r.value(QLatin1String("error")).toObject().value(QLatin1String("type")).toString();
}

QString errorMessage(const QJsonObject &r)
{
    return r.value(QLatin1String("error")).toObject().value(QLatin1String("message")).toString();
}

// The seeded project: three files that are copied, three that the default excludes skip.
const QByteArray kMainPy = "print('hello')\n";
const QByteArray kHelpersPy = "def f():\n    return 1\n";
const QByteArray kReadme = "# demo\n";

void makeProject(const QString &root)
{
    writeHost(root + QStringLiteral("/src/main.py"), kMainPy);
    writeHost(root + QStringLiteral("/src/util/helpers.py"), kHelpersPy);
    writeHost(root + QStringLiteral("/README.md"), kReadme);
    writeHost(root + QStringLiteral("/.git/config"), "[core]\n");
    writeHost(root + QStringLiteral("/node_modules/pkg/index.js"), "module.exports = 1;\n");
    writeHost(root + QStringLiteral("/.env"), "TOKEN=do-not-copy\n");
}

} // namespace

// Runs one operation; `var` is its result line, which must say ok:true.
#define RUN_OK(var, line)                                                                          \
    const QJsonObject var = run(line);                                                             \
    QVERIFY2(var.value(QLatin1String("ok")).toBool(), qPrintable(dump(var)))

// Runs one operation; `var` is its result line, which must be an error of `type`.
#define RUN_ERR(var, type, line)                                                                   \
    const QJsonObject var = run(line);                                                             \
    QVERIFY2(!var.value(QLatin1String("ok")).toBool(true), qPrintable(dump(var)));                 \
    QCOMPARE(errorType(var), QStringLiteral(type))

class TestScriptRunner : public QObject
{
    Q_OBJECT

private:
    QJsonObject run(const QByteArray &line)
    {
        const auto r = m_runner->runLine(line);
        return r ? *r : QJsonObject{{QStringLiteral("no_result"), true}};
    }
    QJsonObject run(const char *line) { return run(QByteArray(line)); }
    QJsonObject run(const QJsonObject &op) { return m_runner->run(op); }

    QString wsPath(const QString &rel) const { return m_ws->path() + QLatin1Char('/') + rel; }
    QString projectPath(const QString &rel) const
    {
        return m_project->path() + QLatin1Char('/') + rel;
    }
    QString hostPath(const QString &rel) const { return m_host->path() + QLatin1Char('/') + rel; }

    SandboxPtr makeSandbox(const QString &wsRoot, bool seed,
                           const std::shared_ptr<SandboxManager> &manager = {},
                           LocalSandboxBackend::Options backendOptions = {}) const
    {
        Sandbox::Options opts;
        opts.manager = manager;
        if (seed)
            opts.seedFrom = m_project->path();
        return Sandbox::create(kWorkspaceId,
                               std::make_shared<LocalSandboxBackend>(wsRoot, backendOptions), 7200,
                               opts);
    }

    void startAndAttach(const char *mode = "read_write")
    {
        const QJsonObject start = run("{\"op\":\"start\"}");
        QVERIFY2(start.value(QLatin1String("ok")).toBool(), qPrintable(dump(start)));
        const QJsonObject attach = run(QJsonObject{{QStringLiteral("op"), QStringLiteral("attach")},
                                                   {QStringLiteral("agent"), QStringLiteral("a")},
                                                   {QStringLiteral("mode"), QLatin1String(mode)}});
        QVERIFY2(attach.value(QLatin1String("ok")).toBool(), qPrintable(dump(attach)));
    }

    std::unique_ptr<QTemporaryDir> m_project;
    // The workspace's parent is private too, so the "../x" an escape would write is ours to check.
    std::unique_ptr<QTemporaryDir> m_wsParent;
    std::unique_ptr<QTemporaryDir> m_ws;
    std::unique_ptr<QTemporaryDir> m_host;
    SandboxPtr m_sandbox;
    std::unique_ptr<ScriptRunner> m_runner;

private Q_SLOTS:
    void initTestCase()
    {
        // Every operation emits an audit record; they are tested in tst_audit, keep this quiet.
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.sandbox.audit.info=false"));
    }

    void init()
    {
        m_project = std::make_unique<QTemporaryDir>();
        m_wsParent = std::make_unique<QTemporaryDir>();
        m_ws = std::make_unique<QTemporaryDir>(m_wsParent->path() + QStringLiteral("/ws-XXXXXX"));
        m_host = std::make_unique<QTemporaryDir>();
        QVERIFY(m_project->isValid() && m_ws->isValid() && m_host->isValid());
        makeProject(m_project->path());
        m_sandbox = makeSandbox(m_ws->path(), true);
        m_runner = std::make_unique<ScriptRunner>(m_sandbox);
    }

    void cleanup()
    {
        m_runner.reset();
        if (m_sandbox) {
            try {
                m_sandbox->stop(false);
            } catch (const SandboxError &e) {
                qWarning() << "stop in cleanup failed:" << e.display();
            }
        }
        m_sandbox.reset();
        m_host.reset();
        m_ws.reset();
        m_wsParent.reset();
        m_project.reset();
    }

    // ---- start / stop ------------------------------------------------------------------------

    void startReturnsSeedResult()
    {
        RUN_OK(r, "{\"op\":\"start\"}");
        QCOMPARE(r.value(QLatin1String("op")).toString(), QStringLiteral("start"));
        const QJsonObject seed = r.value(QLatin1String("result")).toObject();
        QCOMPARE(seed.value(QLatin1String("files_seeded")).toInt(), 3);
        QCOMPARE(seed.value(QLatin1String("bytes_seeded")).toInteger(),
                 kMainPy.size() + kHelpersPy.size() + kReadme.size());
        QVERIFY(seed.value(QLatin1String("skipped_paths")).isArray());
        const QStringList skipped = stringsOf(seed.value(QLatin1String("skipped_paths")));
        for (const char *excluded : {".git", "node_modules", ".env"}) {
            QVERIFY2(std::any_of(
                         skipped.cbegin(), skipped.cend(),
                         [&](const QString &p) { return p.startsWith(QLatin1String(excluded)); }),
                     qPrintable(skipped.join(QLatin1Char(','))));
        }
        QCOMPARE(seed.value(QLatin1String("errors")).toArray().size(), 0);
        QCOMPARE(seed.value(QLatin1String("success")).toBool(), true);
        QCOMPARE(readHost(wsPath(QStringLiteral("src/util/helpers.py"))), kHelpersPy);
        QVERIFY(!QFile::exists(wsPath(QStringLiteral(".env"))));
        QVERIFY(!QFile::exists(wsPath(QStringLiteral(".git"))));
        QVERIFY(m_sandbox->isStarted());
    }

    void secondStartReturnsNull()
    {
        RUN_OK(first, "{\"op\":\"start\"}");
        RUN_OK(second, "{\"op\":\"start\"}");
        QVERIFY(second.contains(QLatin1String("result")));
        QVERIFY(second.value(QLatin1String("result")).isNull());
    }

    void startWithoutSeedReturnsNull()
    {
        m_runner.reset();
        m_sandbox = makeSandbox(m_ws->path(), false);
        m_runner = std::make_unique<ScriptRunner>(m_sandbox);
        RUN_OK(r, "{\"op\":\"start\"}");
        QVERIFY(r.value(QLatin1String("result")).isNull());
        QVERIFY(m_sandbox->isStarted());
    }

    void startWithMissingSeedFolderReportsOneError()
    {
        m_runner.reset();
        Sandbox::Options opts;
        opts.seedFrom = m_project->path() + QStringLiteral("/missing");
        m_sandbox = Sandbox::create(
            kWorkspaceId, std::make_shared<LocalSandboxBackend>(m_ws->path()), 7200, opts);
        m_runner = std::make_unique<ScriptRunner>(m_sandbox);
        RUN_OK(r, "{\"op\":\"start\"}");
        const QJsonObject seed = r.value(QLatin1String("result")).toObject();
        QCOMPARE(seed.value(QLatin1String("success")).toBool(true), false);
        QCOMPARE(seed.value(QLatin1String("files_seeded")).toInt(-1), 0);
        QVERIFY(m_sandbox->isStarted()); // seeding problems do not stop the start
        const QStringList errors = stringsOf(seed.value(QLatin1String("errors")));
        QVERIFY2(!errors.isEmpty() && errors.first().contains(QLatin1String("missing")),
                 qPrintable(errors.join(QLatin1Char('|'))));
        // The same problem reported once, not once per seeding phase.
        QCOMPARE(errors.size(), 1);
    }

    void stopSyncsAndDetaches()
    {
        startAndAttach();
        const QByteArray changed = "print('changed in the sandbox')\n";
        QVERIFY(writeHost(wsPath(QStringLiteral("src/main.py")), changed));
        RUN_OK(r, "{\"op\":\"stop\"}");
        const QJsonObject sync = r.value(QLatin1String("result")).toObject();
        QCOMPARE(sync.value(QLatin1String("files_synced")).toInt(), 1);
        QCOMPARE(readHost(projectPath(QStringLiteral("src/main.py"))), changed);
        QVERIFY(!m_sandbox->isStarted());
        QVERIFY(m_runner->agent(QStringLiteral("a")));
        QVERIFY(!m_runner->agent(QStringLiteral("a"))->attachedSandbox());
        RUN_OK(again, "{\"op\":\"stop\"}");
        QVERIFY(again.value(QLatin1String("result")).isNull());
    }

    void stopWithoutSyncLeavesHostAlone()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        QVERIFY(writeHost(wsPath(QStringLiteral("src/main.py")), "print(2)\n"));
        RUN_OK(r, "{\"op\":\"stop\",\"sync\":false}");
        QVERIFY(r.value(QLatin1String("result")).isNull());
        QCOMPARE(readHost(projectPath(QStringLiteral("src/main.py"))), kMainPy);
        QVERIFY(!m_sandbox->isStarted());
    }

    // ---- host-side file operations -----------------------------------------------------------

    void addFilesEveryContentKind()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        const QByteArray binary("\x00\x01\xfe\xff"
                                "binary",
                                10);
        QVERIFY(writeHost(hostPath(QStringLiteral("from-host.txt")), "host content\n"));
        const QJsonObject files{
            {QStringLiteral("notes/text.txt"), QStringLiteral("plain text é\n")},
            {QStringLiteral("bin/data.bin"),
             QJsonObject{{QStringLiteral("base64"), QString::fromLatin1(binary.toBase64())}}},
            {QStringLiteral("copied.txt"),
             QJsonObject{{QStringLiteral("host"), hostPath(QStringLiteral("from-host.txt"))}}}};
        RUN_OK(r, (QJsonObject{{QStringLiteral("op"), QStringLiteral("add_files")},
                               {QStringLiteral("files"), files}}));
        QStringList written = stringsOf(r.value(QLatin1String("result")));
        written.sort();
        QCOMPARE(written, (QStringList{QStringLiteral("bin/data.bin"), QStringLiteral("copied.txt"),
                                       QStringLiteral("notes/text.txt")}));
        QCOMPARE(readHost(wsPath(QStringLiteral("notes/text.txt"))),
                 QStringLiteral("plain text é\n").toUtf8());
        QCOMPARE(readHost(wsPath(QStringLiteral("bin/data.bin"))), binary);
        QCOMPARE(readHost(wsPath(QStringLiteral("copied.txt"))), QByteArray("host content\n"));
    }

    void addFilesWithoutOverwriteSkipsExisting()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        RUN_OK(r, "{\"op\":\"add_files\",\"overwrite\":false,"
                  "\"files\":{\"src/main.py\":\"replaced\",\"fresh.txt\":\"new\"}}");
        QCOMPARE(stringsOf(r.value(QLatin1String("result"))),
                 QStringList{QStringLiteral("fresh.txt")});
        QCOMPARE(readHost(wsPath(QStringLiteral("src/main.py"))), kMainPy);
        QCOMPARE(readHost(wsPath(QStringLiteral("fresh.txt"))), QByteArray("new"));

        RUN_OK(over, "{\"op\":\"add_files\",\"files\":{\"src/main.py\":\"replaced\"}}");
        QCOMPARE(stringsOf(over.value(QLatin1String("result"))),
                 QStringList{QStringLiteral("src/main.py")});
        QCOMPARE(readHost(wsPath(QStringLiteral("src/main.py"))), QByteArray("replaced"));
    }

    void addFilesRejectsBadContent_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<QString>("type");
        QTest::newRow("invalid base64")
            << QByteArray(R"({"op":"add_files","files":{"x":{"base64":"@@not base64@@"}}})")
            << QStringLiteral("ValueError");
        QTest::newRow("number as content")
            << QByteArray(R"({"op":"add_files","files":{"x":42}})") << QStringLiteral("ValueError");
        QTest::newRow("unknown content object")
            << QByteArray(R"({"op":"add_files","files":{"x":{"url":"ftp-x"}}})")
            << QStringLiteral("ValueError");
        QTest::newRow("files not an object")
            << QByteArray(R"({"op":"add_files","files":["x"]})") << QStringLiteral("ValueError");
        QTest::newRow("missing host file")
            << QByteArray(R"({"op":"add_files","files":{"x":{"host":"/nonexistent/elsai/f"}}})")
            << QStringLiteral("FileNotFoundError");
    }

    void addFilesRejectsBadContent()
    {
        QFETCH(QByteArray, line);
        QFETCH(QString, type);
        RUN_OK(start, "{\"op\":\"start\"}");
        const QByteArray before = treeDigest(m_ws->path());
        const QJsonObject r = run(line);
        QVERIFY2(!r.value(QLatin1String("ok")).toBool(true), qPrintable(dump(r)));
        QCOMPARE(errorType(r), type);
        QVERIFY(!r.value(QLatin1String("error"))
                     .toObject()
                     .value(QLatin1String("message"))
                     .toString()
                     .isEmpty());
        QCOMPARE(treeDigest(m_ws->path()), before);
    }

    void downloadFilesWritesHostFiles()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        const QString target = hostPath(QStringLiteral("out/deep/main.py"));
        RUN_OK(r, (QJsonObject{{QStringLiteral("op"), QStringLiteral("download_files")},
                               {QStringLiteral("files"),
                                QJsonObject{{QStringLiteral("src/main.py"), target}}}}));
        QCOMPARE(stringsOf(r.value(QLatin1String("result"))),
                 QStringList{QStringLiteral("src/main.py")});
        QCOMPARE(readHost(target), kMainPy);
    }

    void downloadFilesWithoutOverwriteKeepsHostFile()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        const QString existing = hostPath(QStringLiteral("existing.py"));
        const QString fresh = hostPath(QStringLiteral("fresh.md"));
        QVERIFY(writeHost(existing, "host version\n"));
        RUN_OK(r, (QJsonObject{{QStringLiteral("op"), QStringLiteral("download_files")},
                               {QStringLiteral("overwrite"), false},
                               {QStringLiteral("files"),
                                QJsonObject{{QStringLiteral("src/main.py"), existing},
                                            {QStringLiteral("README.md"), fresh}}}}));
        QCOMPARE(stringsOf(r.value(QLatin1String("result"))),
                 QStringList{QStringLiteral("README.md")});
        QCOMPARE(readHost(existing), QByteArray("host version\n"));
        QCOMPARE(readHost(fresh), kReadme);
    }

    void downloadMissingFileFails()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        const QString target = hostPath(QStringLiteral("never.txt"));
        RUN_ERR(r, "FileNotFoundError",
                (QJsonObject{{QStringLiteral("op"), QStringLiteral("download_files")},
                             {QStringLiteral("files"),
                              QJsonObject{{QStringLiteral("missing.txt"), target}}}}));
        QVERIFY(!QFile::exists(target));
    }

    void deleteFiles()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        RUN_OK(r, R"({"op":"delete_files","paths":["README.md","src/util"]})");
        QVERIFY(r.value(QLatin1String("result")).isNull());
        QVERIFY(!QFile::exists(wsPath(QStringLiteral("README.md"))));
        QVERIFY(!QFileInfo::exists(wsPath(QStringLiteral("src/util"))));
        QVERIFY(QFile::exists(wsPath(QStringLiteral("src/main.py"))));
        QVERIFY(QFile::exists(projectPath(QStringLiteral("README.md"))));
        RUN_ERR(bad, "ValueError", R"({"op":"delete_files","paths":"README.md"})");
    }

    void moveFile()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        RUN_OK(r, R"({"op":"move_file","src":"src/main.py","dest":"app/entry.py"})");
        QCOMPARE(r.value(QLatin1String("result")).toObject(),
                 (QJsonObject{{QStringLiteral("moved"), true}}));
        QVERIFY(!QFile::exists(wsPath(QStringLiteral("src/main.py"))));
        QCOMPARE(readHost(wsPath(QStringLiteral("app/entry.py"))), kMainPy);

        RUN_ERR(missing, "FileNotFoundError",
                R"({"op":"move_file","src":"src/main.py","dest":"x.py"})");
        QVERIFY(!QFile::exists(wsPath(QStringLiteral("x.py"))));
    }

    // A move onto itself, in any spelling, keeps the file and says nothing was moved.
    void moveFileOntoItself_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::newRow("same path")
            << QByteArray(R"({"op":"move_file","src":"src/main.py","dest":"src/main.py"})");
        QTest::newRow("./ spelling") << QByteArray("{\"op\":\"move_file\",\"src\":\"src/main.py\","
                                                   "\"dest\":\"./src/"
                                                   "/./main.py\"}");
        QTest::newRow("link back")
            << QByteArray(R"({"op":"move_file","src":"src/main.py","dest":"back/src/main.py"})");
        QTest::newRow("hard link")
            << QByteArray(R"({"op":"move_file","src":"src/main.py","dest":"hard.py"})");
    }
    void moveFileOntoItself()
    {
        QFETCH(QByteArray, line);
        RUN_OK(start, "{\"op\":\"start\"}");
        QVERIFY(QFile::link(QStringLiteral("."), wsPath(QStringLiteral("back"))));
        QCOMPARE(::link(QFile::encodeName(wsPath(QStringLiteral("src/main.py"))).constData(),
                        QFile::encodeName(wsPath(QStringLiteral("hard.py"))).constData()),
                 0);
        RUN_OK(r, line);
        const QJsonObject result = r.value(QLatin1String("result")).toObject();
        QCOMPARE(result.value(QLatin1String("moved")), QJsonValue(false));
        QCOMPARE(result.value(QLatin1String("same_file")), QJsonValue(true));
        QCOMPARE(readHost(wsPath(QStringLiteral("src/main.py"))), kMainPy);
    }

    void readFileText()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        RUN_OK(r, R"({"op":"read_file","path":"src/util/helpers.py"})");
        QVERIFY(r.value(QLatin1String("result")).isString());
        QCOMPARE(r.value(QLatin1String("result")).toString(), QString::fromUtf8(kHelpersPy));
        RUN_ERR(missing, "FileNotFoundError", R"({"op":"read_file","path":"nope.txt"})");
    }

    void readFileInvalidUtf8IsBase64()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        const QByteArray bytes("ok\xff\xfe\xc3(", 7);
        QVERIFY(writeHost(wsPath(QStringLiteral("raw.bin")), bytes));
        RUN_OK(r, R"({"op":"read_file","path":"raw.bin"})");
        const QJsonValue v = r.value(QLatin1String("result"));
        QVERIFY2(v.isObject(), qPrintable(dump(r)));
        QCOMPARE(v.toObject().keys(), QStringList{QStringLiteral("base64")});
        QCOMPARE(QByteArray::fromBase64(
                     v.toObject().value(QLatin1String("base64")).toString().toLatin1()),
                 bytes);
    }

    // ---- flush -------------------------------------------------------------------------------

    void flushToSeedFolder()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        const QByteArray changed = "print('changed')\n";
        QVERIFY(writeHost(wsPath(QStringLiteral("src/main.py")), changed));
        QVERIFY(writeHost(wsPath(QStringLiteral("src/new.py")), "new = True\n"));
        QVERIFY(writeHost(wsPath(QStringLiteral("scratch.tmp")), "not in the include list"));
        RUN_OK(r, "{\"op\":\"flush\"}");
        const QJsonObject sync = r.value(QLatin1String("result")).toObject();
        QCOMPARE(sync.value(QLatin1String("files_synced")).toInt(), 2);
        QCOMPARE(sync.value(QLatin1String("bytes_synced")).toInteger(),
                 changed.size() + QByteArray("new = True\n").size());
        for (const char *key : {"errors", "skipped_paths", "conflicts"})
            QVERIFY2(sync.value(QLatin1String(key)).isArray(), key);
        QCOMPARE(sync.value(QLatin1String("conflicts")).toArray().size(), 0);
        QCOMPARE(sync.value(QLatin1String("success")).toBool(), true);
        QCOMPARE(readHost(projectPath(QStringLiteral("src/main.py"))), changed);
        QCOMPARE(readHost(projectPath(QStringLiteral("src/new.py"))), QByteArray("new = True\n"));
        QVERIFY(!QFile::exists(projectPath(QStringLiteral("scratch.tmp"))));
    }

    void flushToExplicitDest()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        const QString dest = hostPath(QStringLiteral("artifacts"));
        RUN_OK(r, (QJsonObject{{QStringLiteral("op"), QStringLiteral("flush")},
                               {QStringLiteral("dest"), dest}}));
        const QJsonObject sync = r.value(QLatin1String("result")).toObject();
        QCOMPARE(sync.value(QLatin1String("files_synced")).toInt(), 3);
        QCOMPARE(readHost(dest + QStringLiteral("/src/util/helpers.py")), kHelpersPy);
        QCOMPARE(readHost(dest + QStringLiteral("/README.md")), kReadme);
    }

    void flushWithoutDestinationReturnsNull()
    {
        m_runner.reset();
        m_sandbox = makeSandbox(m_ws->path(), false);
        m_runner = std::make_unique<ScriptRunner>(m_sandbox);
        RUN_OK(start, "{\"op\":\"start\"}");
        RUN_OK(r, "{\"op\":\"flush\"}");
        QVERIFY(r.value(QLatin1String("result")).isNull());
    }

    // An empty "dest" is not "no destination": it must not resolve to the process's current
    // folder and write artifacts there.
    void flushToEmptyDestIsRefused()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        QTemporaryDir cwd;
        const QString oldCwd = QDir::currentPath();
        QVERIFY(QDir::setCurrent(cwd.path()));
        const QJsonObject r = run(R"({"op":"flush","dest":""})");
        QVERIFY(QDir::setCurrent(oldCwd));
        QVERIFY2(QDir(cwd.path()).isEmpty(),
                 qPrintable(QDir(cwd.path())
                                .entryList(QDir::NoDotAndDotDot | QDir::AllEntries)
                                .join(QLatin1Char(','))));
        QVERIFY2(!r.value(QLatin1String("ok")).toBool(true), qPrintable(dump(r)));
        QCOMPARE(errorType(r), QStringLiteral("ValueError"));
    }

    void flushConflictKeepsHostFile()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        const QByteArray hostEdit = "print('edited on the host, longer')\n";
        const QByteArray wsEdit = "print('edited in the sandbox')\n";
        QVERIFY(writeHost(projectPath(QStringLiteral("src/main.py")), hostEdit));
        QVERIFY(writeHost(wsPath(QStringLiteral("src/main.py")), wsEdit));
        RUN_OK(r, "{\"op\":\"flush\"}");
        const QJsonObject sync = r.value(QLatin1String("result")).toObject();
        QCOMPARE(stringsOf(sync.value(QLatin1String("conflicts"))),
                 QStringList{QStringLiteral("src/main.py")});
        QCOMPARE(sync.value(QLatin1String("success")).toBool(),
                 sync.value(QLatin1String("errors")).toArray().isEmpty());
        QCOMPARE(readHost(projectPath(QStringLiteral("src/main.py"))), hostEdit);
        QCOMPARE(readHost(projectPath(QStringLiteral("src/main.py") + conflictSuffix())), wsEdit);
    }

    // The result names every class of the three-way flush; "no_base" picks the rule for a
    // folder without a base, and a bad one says what to use.
    void flushReportsEveryClassAndTakesTheNoBaseRule()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        QVERIFY(QFile::remove(projectPath(QStringLiteral("README.md")))); // host deletion
        QVERIFY(QFile::remove(wsPath(QStringLiteral("src/main.py"))));    // sandbox deletion
        RUN_OK(r, "{\"op\":\"flush\"}");
        const QJsonObject sync = r.value(QLatin1String("result")).toObject();
        QCOMPARE(stringsOf(sync.value(QLatin1String("host_deleted"))),
                 QStringList{QStringLiteral("README.md")});
        QCOMPARE(stringsOf(sync.value(QLatin1String("sandbox_deleted"))),
                 QStringList{QStringLiteral("src/main.py")});
        QVERIFY(!QFileInfo::exists(projectPath(QStringLiteral("README.md"))));
        QVERIFY(QFileInfo::exists(projectPath(QStringLiteral("src/main.py"))));
        for (const char *key : {"added", "updated", "kept_host", "conflict_files"})
            QVERIFY2(sync.contains(QLatin1String(key)), key);

        // a folder without a base, holding another version of a file
        const QString other = hostPath(QStringLiteral("other"));
        QVERIFY(writeHost(other + QStringLiteral("/src/util/helpers.py"), "unrelated\n"));
        QJsonObject flush{{QStringLiteral("op"), QStringLiteral("flush")},
                          {QStringLiteral("dest"), other}};
        RUN_OK(kept, flush);
        QCOMPARE(
            stringsOf(
                kept.value(QLatin1String("result")).toObject().value(QLatin1String("conflicts"))),
            QStringList{QStringLiteral("src/util/helpers.py")});
        QCOMPARE(readHost(other + QStringLiteral("/src/util/helpers.py")),
                 QByteArray("unrelated\n"));
        const QString third = hostPath(QStringLiteral("third"));
        QVERIFY(writeHost(third + QStringLiteral("/src/util/helpers.py"), "unrelated\n"));
        flush.insert(QStringLiteral("dest"), third);
        flush.insert(QStringLiteral("no_base"), QStringLiteral("overwrite"));
        RUN_OK(over, flush);
        QCOMPARE(readHost(third + QStringLiteral("/src/util/helpers.py")), kHelpersPy);
        flush.insert(QStringLiteral("no_base"), QStringLiteral("sometimes"));
        const QJsonObject bad = run(flush);
        QVERIFY(!bad.value(QLatin1String("ok")).toBool(true));
        QCOMPARE(errorType(bad), QStringLiteral("ValueError"));
    }

    // ---- attach / detach / tools -------------------------------------------------------------

    void attach_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QStringList>("tools");
        QTest::newRow("read_write")
            << QStringLiteral("read_write")
            << elsai::test::sortedSandboxTools(SandboxAttachMode::ReadWrite);
        QTest::newRow("read_only") << QStringLiteral("read_only")
                                   << elsai::test::sortedSandboxTools(SandboxAttachMode::ReadOnly);
    }

    void attach()
    {
        QFETCH(QString, mode);
        QFETCH(QStringList, tools);
        RUN_OK(start, "{\"op\":\"start\"}");
        RUN_OK(r, (QJsonObject{{QStringLiteral("op"), QStringLiteral("attach")},
                               {QStringLiteral("agent"), QStringLiteral("bot")},
                               {QStringLiteral("mode"), mode}}));
        const QJsonObject res = r.value(QLatin1String("result")).toObject();
        QCOMPARE(res.value(QLatin1String("agent")).toString(), QStringLiteral("bot"));
        QCOMPARE(res.value(QLatin1String("mode")).toString(), mode);
        QCOMPARE(stringsOf(res.value(QLatin1String("tools"))), tools);
        RUN_OK(t, R"({"op":"tools","agent":"bot"})");
        QCOMPARE(stringsOf(t.value(QLatin1String("result"))), tools);
        QCOMPARE(m_sandbox->attachedAgents().size(), 1);
    }

    void attachDefaultsToReadWriteAndCanChangeMode()
    {
        RUN_OK(start, "{\"op\":\"start\"}");
        RUN_OK(r, R"({"op":"attach","agent":"bot"})");
        QCOMPARE(
            r.value(QLatin1String("result")).toObject().value(QLatin1String("mode")).toString(),
            QStringLiteral("read_write"));
        RUN_OK(ro, R"({"op":"attach","agent":"bot","mode":"read_only"})");
        QCOMPARE(
            stringsOf(ro.value(QLatin1String("result")).toObject().value(QLatin1String("tools"))),
            elsai::test::sortedSandboxTools(SandboxAttachMode::ReadOnly));
        QCOMPARE(m_sandbox->attachedAgents().size(), 1);
        RUN_ERR(bad, "ValueError", R"({"op":"attach","agent":"bot","mode":"admin"})");
    }

    void attachBeforeStartFails()
    {
        RUN_ERR(r, "SandboxAttachError", R"({"op":"attach","agent":"early"})");
        QVERIFY(m_sandbox->attachedAgents().isEmpty());
    }

    void detach()
    {
        startAndAttach();
        RUN_OK(r, R"({"op":"detach","agent":"a"})");
        QVERIFY(r.value(QLatin1String("result")).isNull());
        QVERIFY(m_sandbox->attachedAgents().isEmpty());
        RUN_OK(t, R"({"op":"tools","agent":"a"})");
        QVERIFY(
            !stringsOf(t.value(QLatin1String("result"))).contains(QStringLiteral("write_file")));
        QVERIFY(!stringsOf(t.value(QLatin1String("result"))).contains(QStringLiteral("execute")));
        RUN_OK(again, R"({"op":"detach","agent":"a"})"); // idempotent
        RUN_ERR(unknown, "ValueError", R"({"op":"detach","agent":"ghost"})");
    }

    void detachedAgentCannotWrite()
    {
        startAndAttach();
        RUN_OK(d, R"({"op":"detach","agent":"a"})");
        const QByteArray before = treeDigest(m_ws->path());
        RUN_ERR(
            r, "AgentSandboxDetachedError",
            R"({"op":"call","agent":"a","tool":"write_file","args":{"path":"x","content":"y"}})");
        const AgentPtr agent = m_runner->agent(QStringLiteral("a"));
        QVERIFY(agent);
        QVERIFY_THROWS_EXCEPTION(
            AgentSandboxDetachedError,
            writeWorkspaceFile(*agent, QStringLiteral("x"), QStringLiteral("y")));
        QVERIFY_THROWS_EXCEPTION(AgentSandboxDetachedError,
                                 executeAs(*agent, QStringLiteral("touch x")));
        QCOMPARE(treeDigest(m_ws->path()), before);
        QVERIFY(!QFile::exists(wsPath(QStringLiteral("x"))));
    }

    // ---- call --------------------------------------------------------------------------------

    void callExecute()
    {
        startAndAttach();
        RUN_OK(r, R"({"op":"call","agent":"a","tool":"execute",)"
                  R"("args":{"command":"echo out; echo err >&2; exit 3"}})");
        const QJsonObject res = r.value(QLatin1String("result")).toObject();
        QCOMPARE(res.value(QLatin1String("exit_code")).toInt(), 3);
        QCOMPARE(res.value(QLatin1String("output")).toString(), QStringLiteral("out\n"));
        QCOMPARE(res.value(QLatin1String("stderr")).toString(), QStringLiteral("err\n"));
        QCOMPARE(res.value(QLatin1String("truncated")).toBool(true), false);
        QCOMPARE(res.value(QLatin1String("success")).toBool(true), false);
        QCOMPARE(res.value(QLatin1String("offloaded")).toBool(true), false);
        const QString text = res.value(QLatin1String("text")).toString();
        QVERIFY2(text.startsWith(QLatin1String("out\n")), qPrintable(text));
        QVERIFY2(text.contains(QLatin1String("[stderr]\nerr\n")), qPrintable(text));
        QVERIFY2(text.endsWith(QLatin1String("[exit code: 3]")), qPrintable(text));
    }

    void callExecuteRunsInWorkspaceAndCwd()
    {
        startAndAttach();
        RUN_OK(r,
               R"({"op":"call","agent":"a","tool":"execute",)"
               R"("args":{"command":"cat helpers.py && echo made > made.txt","cwd":"src/util"}})");
        const QJsonObject res = r.value(QLatin1String("result")).toObject();
        QCOMPARE(res.value(QLatin1String("exit_code")).toInt(-1), 0);
        QCOMPARE(res.value(QLatin1String("output")).toString(), QString::fromUtf8(kHelpersPy));
        QCOMPARE(readHost(wsPath(QStringLiteral("src/util/made.txt"))), QByteArray("made\n"));
    }

    void callReadFileOffsetLimit_data()
    {
        QTest::addColumn<QJsonObject>("args");
        QTest::addColumn<QString>("expected");
        const QString path = QStringLiteral("lines.txt");
        auto a = [&](std::optional<int> offset, std::optional<int> limit) {
            QJsonObject o{{QStringLiteral("path"), path}};
            if (offset)
                o.insert(QStringLiteral("offset"), *offset);
            if (limit)
                o.insert(QStringLiteral("limit"), *limit);
            return o;
        };
        QTest::newRow("whole file") << a({}, {}) << QStringLiteral("l0\nl1\nl2\nl3\nl4");
        QTest::newRow("offset only") << a(3, {}) << QStringLiteral("l3\nl4");
        QTest::newRow("limit only") << a({}, 2) << QStringLiteral("l0\nl1\n");
        QTest::newRow("offset and limit") << a(1, 2) << QStringLiteral("l1\nl2\n");
        QTest::newRow("offset past end") << a(10, 2) << QString();
        QTest::newRow("limit zero") << a(1, 0) << QString();
    }

    void callReadFileOffsetLimit()
    {
        QFETCH(QJsonObject, args);
        QFETCH(QString, expected);
        startAndAttach();
        QVERIFY(writeHost(wsPath(QStringLiteral("lines.txt")), "l0\nl1\nl2\nl3\nl4"));
        RUN_OK(r, (QJsonObject{{QStringLiteral("op"), QStringLiteral("call")},
                               {QStringLiteral("agent"), QStringLiteral("a")},
                               {QStringLiteral("tool"), QStringLiteral("read_file")},
                               {QStringLiteral("args"), args}}));
        const QJsonObject res = r.value(QLatin1String("result")).toObject();
        QCOMPARE(res.value(QLatin1String("content")).toString(), expected);
        QCOMPARE(res.value(QLatin1String("text")).toString(), expected);
        QCOMPARE(res.value(QLatin1String("path")).toString(), QStringLiteral("lines.txt"));
    }

    void callWriteFile()
    {
        startAndAttach();
        RUN_OK(r, R"({"op":"call","agent":"a","tool":"write_file",)"
                  R"("args":{"path":"out/new.md","content":"héllo\n"}})");
        const QJsonObject res = r.value(QLatin1String("result")).toObject();
        QCOMPARE(res.value(QLatin1String("path")).toString(), QStringLiteral("out/new.md"));
        QCOMPARE(res.value(QLatin1String("bytes")).toInt(), 7);
        QVERIFY(res.value(QLatin1String("text")).toString().contains(QLatin1String("out/new.md")));
        QCOMPARE(readHost(wsPath(QStringLiteral("out/new.md"))),
                 QStringLiteral("héllo\n").toUtf8());
        RUN_ERR(missingArg, "ValueError",
                R"({"op":"call","agent":"a","tool":"write_file","args":{"path":"y"}})");
        QVERIFY(!QFile::exists(wsPath(QStringLiteral("y"))));
    }

    void callListDir()
    {
        startAndAttach();
        RUN_OK(r, R"({"op":"call","agent":"a","tool":"list_dir","args":{"path":"src"}})");
        const QJsonObject res = r.value(QLatin1String("result")).toObject();
        QCOMPARE(res.value(QLatin1String("path")).toString(), QStringLiteral("src"));
        QHash<QString, QJsonObject> byName;
        for (const QJsonValue &e : res.value(QLatin1String("entries")).toArray()) {
            const QJsonObject o = e.toObject();
            byName.insert(QFileInfo(o.value(QLatin1String("path")).toString()).fileName(), o);
        }
        QCOMPARE(byName.size(), 2);
        QVERIFY(byName.contains(QStringLiteral("main.py")));
        QVERIFY(byName.contains(QStringLiteral("util")));
        QCOMPARE(byName[QStringLiteral("main.py")].value(QLatin1String("is_dir")).toBool(true),
                 false);
        QCOMPARE(byName[QStringLiteral("main.py")].value(QLatin1String("size")).toInteger(),
                 kMainPy.size());
        QCOMPARE(byName[QStringLiteral("util")].value(QLatin1String("is_dir")).toBool(), true);
        const QString text = res.value(QLatin1String("text")).toString();
        QVERIFY2(text.contains(QLatin1String("util/")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("(%1 bytes)").arg(kMainPy.size())), qPrintable(text));
    }

    void callErrors_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<QString>("type");
        QTest::newRow("unknown agent")
            << QByteArray(R"({"op":"call","agent":"ghost","tool":"list_dir","args":{"path":"."}})")
            << QStringLiteral("ValueError");
        QTest::newRow("agent missing")
            << QByteArray(R"({"op":"call","tool":"list_dir","args":{"path":"."}})")
            << QStringLiteral("ValueError");
        QTest::newRow("unknown tool")
            << QByteArray(R"({"op":"call","agent":"a","tool":"shell","args":{}})")
            << QStringLiteral("ToolNotFoundError");
        QTest::newRow("args not an object")
            << QByteArray(R"({"op":"call","agent":"a","tool":"list_dir","args":"."})")
            << QStringLiteral("ValueError");
        QTest::newRow("read missing file")
            << QByteArray(R"({"op":"call","agent":"a","tool":"read_file","args":{"path":"no"}})")
            << QStringLiteral("FileNotFoundError");
        QTest::newRow("negative offset")
            << QByteArray(R"({"op":"call","agent":"a","tool":"read_file",)"
                          R"("args":{"path":"README.md","offset":-1}})")
            << QStringLiteral("ValueError");
    }

    void callErrors()
    {
        QFETCH(QByteArray, line);
        QFETCH(QString, type);
        startAndAttach();
        const QJsonObject r = run(line);
        QVERIFY2(!r.value(QLatin1String("ok")).toBool(true), qPrintable(dump(r)));
        QCOMPARE(r.value(QLatin1String("op")).toString(), QStringLiteral("call"));
        QCOMPARE(errorType(r), type);
    }

    // ---- read-only agents (hostile-inputs R1, R2) ---------------------------------------------

    void readOnlyToolCallIsDenied_data()
    {
        QTest::addColumn<QJsonObject>("call");
        QTest::newRow("write_file")
            << QJsonObject{{QStringLiteral("tool"), QStringLiteral("write_file")},
                           {QStringLiteral("args"),
                            QJsonObject{{QStringLiteral("path"), QStringLiteral("README.md")},
                                        {QStringLiteral("content"), QStringLiteral("x")}}}};
        QTest::newRow("write_file new path")
            << QJsonObject{{QStringLiteral("tool"), QStringLiteral("write_file")},
                           {QStringLiteral("args"),
                            QJsonObject{{QStringLiteral("path"), QStringLiteral("new.txt")},
                                        {QStringLiteral("content"), QStringLiteral("x")}}}};
        QTest::newRow("execute") << QJsonObject{
            {QStringLiteral("tool"), QStringLiteral("execute")},
            {QStringLiteral("args"),
             QJsonObject{{QStringLiteral("command"), QStringLiteral("echo x > README.md")}}}};
    }

    // Spec (SandboxAttachMode, Exceptions; hostile-inputs R1): a read-only attached agent that
    // attempts execute or write_file gets SandboxMutationDeniedError, workspace unchanged.
    void readOnlyToolCallIsDenied()
    {
        QFETCH(QJsonObject, call);
        startAndAttach("read_only");
        const QByteArray before = treeDigest(m_ws->path());
        QJsonObject op = call;
        op.insert(QStringLiteral("op"), QStringLiteral("call"));
        op.insert(QStringLiteral("agent"), QStringLiteral("a"));
        const QJsonObject r = run(op);
        QVERIFY2(!r.value(QLatin1String("ok")).toBool(true), qPrintable(dump(r)));
        QCOMPARE(treeDigest(m_ws->path()), before);
        QCOMPARE(errorType(r), QStringLiteral("SandboxMutationDeniedError"));
    }

    void readOnlyHelpersAreDenied()
    {
        startAndAttach("read_only");
        const AgentPtr agent = m_runner->agent(QStringLiteral("a"));
        QVERIFY(agent);
        const QByteArray before = treeDigest(m_ws->path());
        QVERIFY_THROWS_EXCEPTION(
            SandboxMutationDeniedError,
            writeWorkspaceFile(*agent, QStringLiteral("README.md"), QStringLiteral("x")));
        QVERIFY_THROWS_EXCEPTION(SandboxMutationDeniedError,
                                 executeAs(*agent, QStringLiteral("echo x > README.md")));
        QVERIFY_THROWS_EXCEPTION(SandboxMutationDeniedError,
                                 runCommand(*agent, QStringLiteral("rm -rf src")));
        QCOMPARE(treeDigest(m_ws->path()), before);
        // Reading still works.
        RUN_OK(r, R"({"op":"call","agent":"a","tool":"read_file","args":{"path":"README.md"}})");
        QCOMPARE(
            r.value(QLatin1String("result")).toObject().value(QLatin1String("content")).toString(),
            QString::fromUtf8(kReadme));
    }

    void readOnlyReadOfMissingPathCreatesNothing()
    {
        startAndAttach("read_only");
        const QByteArray before = treeDigest(m_ws->path());
        RUN_ERR(
            r, "FileNotFoundError",
            R"({"op":"call","agent":"a","tool":"read_file","args":{"path":"gone/missing.txt"}})");
        RUN_ERR(l, "FileNotFoundError",
                R"({"op":"call","agent":"a","tool":"list_dir","args":{"path":"gone"}})");
        QCOMPARE(treeDigest(m_ws->path()), before);
        QVERIFY(!QFileInfo::exists(wsPath(QStringLiteral("gone"))));
    }

    // ---- path escapes ------------------------------------------------------------------------

    void pathEscapeIsRefused_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::newRow("read_file") << QByteArray(R"({"op":"read_file","path":"../x"})");
        QTest::newRow("add_files")
            << QByteArray(R"({"op":"add_files","files":{"../x":"escaped"}})");
        QTest::newRow("delete_files") << QByteArray(R"({"op":"delete_files","paths":["../x"]})");
        QTest::newRow("move_file src")
            << QByteArray(R"({"op":"move_file","src":"../x","dest":"y"})");
        QTest::newRow("move_file dest")
            << QByteArray(R"({"op":"move_file","src":"README.md","dest":"../x"})");
        QTest::newRow("download_files")
            << QByteArray(R"({"op":"download_files","files":{"../x":"/dev/null"}})");
        QTest::newRow("call read_file")
            << QByteArray(R"({"op":"call","agent":"a","tool":"read_file","args":{"path":"../x"}})");
        QTest::newRow("call write_file")
            << QByteArray(R"({"op":"call","agent":"a","tool":"write_file",)"
                          R"("args":{"path":"../x","content":"escaped"}})");
        QTest::newRow("call write_file nested")
            << QByteArray(R"({"op":"call","agent":"a","tool":"write_file",)"
                          R"("args":{"path":"src/../../x","content":"escaped"}})");
        QTest::newRow("call list_dir")
            << QByteArray(R"({"op":"call","agent":"a","tool":"list_dir","args":{"path":"../"}})");
        QTest::newRow("call execute cwd")
            << QByteArray(R"({"op":"call","agent":"a","tool":"execute",)"
                          R"("args":{"command":"echo escaped > x","cwd":"../"}})");
    }

    void pathEscapeIsRefused()
    {
        QFETCH(QByteArray, line);
        startAndAttach();
        // ../x from the workspace root: a sibling of the workspace folder, in its parent.
        const QString outside = QFileInfo(m_ws->path()).absolutePath() + QStringLiteral("/x");
        QVERIFY(!QFileInfo::exists(outside));
        const QByteArray before = treeDigest(m_ws->path());
        RUN_ERR(r, "PermissionError", line);
        QVERIFY(!QFileInfo::exists(outside));
        QCOMPARE(treeDigest(m_ws->path()), before);
    }

    // ---- lifecycle errors --------------------------------------------------------------------

    void secondInstanceCannotStart()
    {
        auto manager = std::make_shared<SandboxManager>(7200.0);
        QTemporaryDir ws2;
        m_runner.reset();
        m_sandbox = makeSandbox(m_ws->path(), true, manager);
        m_runner = std::make_unique<ScriptRunner>(m_sandbox);
        RUN_OK(start, "{\"op\":\"start\"}");

        const SandboxPtr other = makeSandbox(ws2.path(), false, manager);
        ScriptRunner otherRunner(other);
        const QJsonObject r = *otherRunner.runLine("{\"op\":\"start\"}");
        QVERIFY2(!r.value(QLatin1String("ok")).toBool(true), qPrintable(dump(r)));
        QCOMPARE(errorType(r), QStringLiteral("SandboxStartError"));
        QVERIFY(!other->isStarted());
        QVERIFY(m_sandbox->isStarted());
        QCOMPARE(manager->getSession(kWorkspaceId)->ownerId, m_sandbox->ownerId());
    }

    void operationsBeforeStartFail_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::newRow("read_file") << QByteArray(R"({"op":"read_file","path":"README.md"})");
        QTest::newRow("add_files") << QByteArray(R"({"op":"add_files","files":{"a":"b"}})");
        QTest::newRow("delete_files") << QByteArray(R"({"op":"delete_files","paths":["a"]})");
        QTest::newRow("flush") << QByteArray(R"({"op":"flush"})");
    }

    void operationsBeforeStartFail()
    {
        QFETCH(QByteArray, line);
        const QJsonObject r = run(line);
        QVERIFY2(!r.value(QLatin1String("ok")).toBool(true), qPrintable(dump(r)));
        QVERIFY(!errorType(r).isEmpty());
        QVERIFY(QDir(m_ws->path()).isEmpty());
    }

    // Sandbox's destructor says a sandbox dropped while started releases its claim. With an
    // agent attached through AgentConfig (as the script's attach does), the agent keeps the
    // sandbox alive and the sandbox keeps the agent: the claim must still go when both are
    // dropped, or the workspace id is unusable for the rest of the process.
    void droppedSandboxReleasesWorkspace()
    {
        auto manager = std::make_shared<SandboxManager>(7200.0);
        m_runner.reset();
        m_sandbox = makeSandbox(m_ws->path(), false, manager);
        m_runner = std::make_unique<ScriptRunner>(m_sandbox);
        startAndAttach();
        std::weak_ptr<Sandbox> weak = m_sandbox;
        m_runner.reset();
        m_sandbox.reset();
        const bool destroyed = weak.expired();
        if (const SandboxPtr leaked = weak.lock())
            leaked->stop(false); // release it for the rest of the run
        QVERIFY2(destroyed,
                 "the Sandbox outlived every owner (Sandbox <-> Agent shared_ptr cycle)");
        QVERIFY(!manager->getSession(kWorkspaceId));
    }

    // ---- manager operations ------------------------------------------------------------------

    void sessions()
    {
        RUN_OK(empty, "{\"op\":\"sessions\"}");
        QCOMPARE(empty.value(QLatin1String("result")).toArray().size(), 0);
        RUN_OK(start, "{\"op\":\"start\"}");
        RUN_OK(r, "{\"op\":\"sessions\"}");
        const QJsonArray list = r.value(QLatin1String("result")).toArray();
        QCOMPARE(list.size(), 1);
        const QJsonObject s = list.first().toObject();
        QCOMPARE(s.value(QLatin1String("session_id")).toString(), kWorkspaceId);
        QCOMPARE(s.value(QLatin1String("backend")).toString(),
                 QStringLiteral("LocalSandboxBackend"));
        QCOMPARE(s.value(QLatin1String("prepared")).toBool(), true);
        QCOMPARE(s.value(QLatin1String("owner_id")).toString(), m_sandbox->ownerId().value());
        QCOMPARE(s.value(QLatin1String("seed_result"))
                     .toObject()
                     .value(QLatin1String("files_seeded"))
                     .toInt(),
                 3);
        QVERIFY(s.value(QLatin1String("created_at")).isDouble());
        QVERIFY(s.value(QLatin1String("last_used_at")).toDouble() >=
                s.value(QLatin1String("created_at")).toDouble());
        QVERIFY(s.value(QLatin1String("idle_seconds")).toDouble(-1) >= 0);
    }

    // The sessions result line carries the audit trail's health.
    void sessionsReportAuditHealth()
    {
        startAndAttach();
        RUN_OK(r, "{\"op\":\"sessions\"}");
        const QJsonObject audit = r.value(QLatin1String("audit")).toObject();
        QCOMPARE(audit.value(QLatin1String("state")).toString(), QStringLiteral("ok"));
        QCOMPARE(audit.value(QLatin1String("records_dropped")).toInteger(-1), 0);
        QCOMPARE(audit.value(QLatin1String("records_queued")).toInteger(-1), 0);
        QVERIFY(audit.contains(QLatin1String("last_error")));
        QCOMPARE(r.value(QLatin1String("result")).toArray().size(), 1); // the spec's list as is
    }

    // A call op refused by the runner (no such agent, no tool name, args not an object) or by
    // the agent (unknown tool, missing argument) leaves one record with outcome invalid.
    void invalidCallsAreAudited_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<QString>("event");
        QTest::addColumn<QString>("actor");
        QTest::newRow("args a list")
            << QByteArray(R"({"op":"call","agent":"a","tool":"execute","args":[1]})")
            << QStringLiteral("sandbox.execute") << QStringLiteral("a");
        QTest::newRow("no tool") << QByteArray(R"({"op":"call","agent":"a","args":{}})")
                                 << QStringLiteral("tool.call") << QStringLiteral("a");
        QTest::newRow("no such agent")
            << QByteArray(R"({"op":"call","agent":"ghost","tool":"list_dir","args":{"path":"."}})")
            << QStringLiteral("sandbox.list_dir") << QStringLiteral("ghost");
        QTest::newRow("unknown tool")
            << QByteArray(R"({"op":"call","agent":"a","tool":"format_disk","args":{}})")
            << QStringLiteral("tool.call") << QStringLiteral("a");
        QTest::newRow("missing command")
            << QByteArray(R"({"op":"call","agent":"a","tool":"execute","args":{}})")
            << QStringLiteral("sandbox.execute") << QStringLiteral("a");
        QTest::newRow("content a number")
            << QByteArray(R"({"op":"call","agent":"a","tool":"write_file",)"
                          R"("args":{"path":"x","content":1}})")
            << QStringLiteral("sandbox.write_file") << QStringLiteral("a");
    }

    void invalidCallsAreAudited()
    {
        QFETCH(QByteArray, line);
        QFETCH(QString, event);
        QFETCH(QString, actor);
        startAndAttach();
        test::AuditCapture audit;
        const QJsonObject r = run(line);
        QVERIFY2(!r.value(QLatin1String("ok")).toBool(true), qPrintable(dump(r)));
        const QList<AuditEvent> events = audit.events();
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.first().event, event);
        QCOMPARE(events.first().outcome, QStringLiteral("invalid"));
        QCOMPARE(events.first().actor, actor);
        QCOMPARE(events.first().workspaceId, kWorkspaceId);
    }

    void cleanupExpiredStopsIdleSandbox()
    {
        auto clock = std::make_shared<double>(1000.0);
        m_sandbox->manager()->setClock([clock] { return *clock; });
        startAndAttach();
        *clock += 100;
        RUN_OK(early, "{\"op\":\"cleanup_expired\"}");
        QCOMPARE(early.value(QLatin1String("result")).toArray().size(), 0);
        QVERIFY(m_sandbox->isStarted());
        RUN_OK(s, "{\"op\":\"sessions\"}");
        QCOMPARE(s.value(QLatin1String("result"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QLatin1String("idle_seconds"))
                     .toDouble(),
                 100.0);

        *clock += 7200;
        RUN_OK(r, "{\"op\":\"cleanup_expired\"}");
        QCOMPARE(stringsOf(r.value(QLatin1String("result"))), QStringList{kWorkspaceId});
        QVERIFY(!m_sandbox->isStarted());
        QVERIFY(m_sandbox->attachedAgents().isEmpty());
        const AgentPtr agent = m_runner->agent(QStringLiteral("a"));
        QVERIFY(agent && !agent->attachedSandbox());
        RUN_OK(t, R"({"op":"tools","agent":"a"})");
        QVERIFY(!stringsOf(t.value(QLatin1String("result"))).contains(QStringLiteral("execute")));
        RUN_ERR(call, "AgentSandboxDetachedError",
                R"({"op":"call","agent":"a","tool":"execute","args":{"command":"true"}})");
        RUN_OK(none, "{\"op\":\"sessions\"}");
        QCOMPARE(none.value(QLatin1String("result")).toArray().size(), 0);

        // A new start cycle works after expiry, and the agent can attach again.
        RUN_OK(restart, "{\"op\":\"start\"}");
        QVERIFY(m_sandbox->isStarted());
        RUN_OK(reattach, R"({"op":"attach","agent":"a"})");
        RUN_OK(exec, R"({"op":"call","agent":"a","tool":"execute","args":{"command":"ls src"}})");
        QCOMPARE(exec.value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("output"))
                     .toString(),
                 QStringLiteral("main.py\nutil\n"));
    }

    void sleep_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<bool>("ok");
        QTest::newRow("zero") << QByteArray(R"({"op":"sleep","seconds":0})") << true;
        QTest::newRow("fraction") << QByteArray(R"({"op":"sleep","seconds":0.05})") << true;
        QTest::newRow("negative") << QByteArray(R"({"op":"sleep","seconds":-1})") << false;
        QTest::newRow("too long") << QByteArray(R"({"op":"sleep","seconds":61})") << false;
        QTest::newRow("not a number") << QByteArray(R"({"op":"sleep","seconds":"1"})") << false;
        QTest::newRow("missing") << QByteArray(R"({"op":"sleep"})") << false;
    }

    void sleep()
    {
        QFETCH(QByteArray, line);
        QFETCH(bool, ok);
        QElapsedTimer timer;
        timer.start();
        const QJsonObject r = run(line);
        QCOMPARE(r.value(QLatin1String("ok")).toBool(), ok);
        QCOMPARE(r.value(QLatin1String("op")).toString(), QStringLiteral("sleep"));
        if (ok)
            QVERIFY(r.value(QLatin1String("result")).isNull());
        else
            QCOMPARE(errorType(r), QStringLiteral("ValueError"));
        QVERIFY(timer.elapsed() < 20000); // did not hang
    }

    // ---- malformed input ---------------------------------------------------------------------

    void badLines_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<QJsonValue>("op");
        QTest::newRow("malformed JSON") << QByteArray("{\"op\":\"start\"") << QJsonValue();
        QTest::newRow("not an object") << QByteArray("[\"start\"]") << QJsonValue();
        QTest::newRow("missing op") << QByteArray("{\"agent\":\"a\"}") << QJsonValue();
        QTest::newRow("op not a string") << QByteArray("{\"op\":7}") << QJsonValue();
        QTest::newRow("unknown op")
            << QByteArray("{\"op\":\"format_disk\"}") << QJsonValue(QStringLiteral("format_disk"));
    }

    void badLines()
    {
        QFETCH(QByteArray, line);
        QFETCH(QJsonValue, op);
        const QJsonObject r = run(line);
        QCOMPARE(r.value(QLatin1String("ok")).toBool(true), false);
        QVERIFY(r.contains(QLatin1String("op")));
        QCOMPARE(r.value(QLatin1String("op")), op);
        QCOMPARE(errorType(r), QStringLiteral("ValueError"));
        QVERIFY(!r.value(QLatin1String("error"))
                     .toObject()
                     .value(QLatin1String("message"))
                     .toString()
                     .isEmpty());
        // The runner keeps going.
        RUN_OK(next, "{\"op\":\"start\"}");
        QVERIFY(m_sandbox->isStarted());
    }

    void blankAndCommentLinesGiveNoResult()
    {
        QVERIFY(!m_runner->runLine(""));
        QVERIFY(!m_runner->runLine("   \n"));
        QVERIFY(!m_runner->runLine("# {\"op\":\"start\"}"));
        QVERIFY(!m_sandbox->isStarted());
    }

    void runAllOverBuffer()
    {
        QByteArray script;
        script += "{\"op\":\"start\"}\n";
        script += "\n";
        script += "# a comment\n";
        script += "{\"op\":\"attach\",\"agent\":\"a\"}\n";
        script += "this is not json\n";
        script += "{\"op\":\"call\",\"agent\":\"a\",\"tool\":\"write_file\","
                  "\"args\":{\"path\":\"w.txt\",\"content\":\"W\"}}\n";
        script += "   \n";
        script += "{\"op\":\"nope\"}\n";
        script += "{\"op\":\"read_file\",\"path\":\"w.txt\"}"; // no final newline
        QBuffer in(&script);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray output;
        QBuffer out(&output);
        QVERIFY(out.open(QIODevice::WriteOnly));
        const int failures = m_runner->runAll(in, out);
        QCOMPARE(failures, 2);
        QVERIFY(output.endsWith('\n'));
        const QList<QByteArray> lines = output.trimmed().split('\n');
        QCOMPARE(lines.size(), 6);
        const QList<QJsonValue> ops{
            QStringLiteral("start"), QStringLiteral("attach"), QJsonValue(),
            QStringLiteral("call"),  QStringLiteral("nope"),   QStringLiteral("read_file")};
        const QList<bool> oks{true, true, false, true, false, true};
        for (int i = 0; i < lines.size(); ++i) {
            QJsonParseError err;
            const QJsonDocument doc = QJsonDocument::fromJson(lines[i], &err);
            QVERIFY2(err.error == QJsonParseError::NoError && doc.isObject(), lines[i].constData());
            QCOMPARE(doc.object().value(QLatin1String("op")), ops[i]);
            QCOMPARE(doc.object().value(QLatin1String("ok")).toBool(), oks[i]);
        }
        QCOMPARE(QJsonDocument::fromJson(lines.last())
                     .object()
                     .value(QLatin1String("result"))
                     .toString(),
                 QStringLiteral("W"));
    }

    void runAllWithoutFailuresReturnsZero()
    {
        QByteArray script = "{\"op\":\"start\"}\n{\"op\":\"sessions\"}\n{\"op\":\"stop\"}\n";
        QBuffer in(&script);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray output;
        QBuffer out(&output);
        QVERIFY(out.open(QIODevice::WriteOnly));
        QCOMPARE(m_runner->runAll(in, out), 0);
        QCOMPARE(output.count('\n'), 3);
    }

    // ---- output offload ----------------------------------------------------------------------

    void offloadBigExecuteOutput()
    {
        SandboxOutputOffloadPolicy policy;
        policy.storage = std::make_shared<InMemoryStorage>();
        policy.maxResultTokens = 50;
        policy.previewTokens = 10;
        m_runner = std::make_unique<ScriptRunner>(m_sandbox, policy);
        startAndAttach();
        RUN_OK(tools, R"({"op":"tools","agent":"a"})");
        QVERIFY(stringsOf(tools.value(QLatin1String("result")))
                    .contains(QStringLiteral("retrieve_offloaded_content")));

        RUN_OK(small, R"({"op":"call","agent":"a","tool":"execute","args":{"command":"echo hi"}})");
        QCOMPARE(small.value(QLatin1String("result")).toObject().value(QLatin1String("offloaded")),
                 QJsonValue(false));

        RUN_OK(r, R"({"op":"call","agent":"a","tool":"execute","args":{"command":"seq 1 2000"}})");
        const QJsonObject res = r.value(QLatin1String("result")).toObject();
        const QJsonObject off = res.value(QLatin1String("offloaded")).toObject();
        const QString handle = off.value(QLatin1String("handle")).toString();
        QVERIFY2(!handle.isEmpty(), qPrintable(dump(r)));
        QVERIFY(off.value(QLatin1String("tokens")).toInteger() > 50);
        QCOMPARE(res.value(QLatin1String("exit_code")).toInt(-1), 0);
        QVERIFY(!res.contains(QLatin1String("output"))); // the full output is not repeated
        const QString preview = res.value(QLatin1String("text")).toString();
        QVERIFY2(preview.startsWith(QLatin1String("1\n2\n")), qPrintable(preview));
        QVERIFY2(preview.contains(handle), qPrintable(preview));
        QVERIFY(!preview.contains(QLatin1String("\n2000\n")));

        QString expected;
        for (int i = 1; i <= 2000; ++i)
            expected += QString::number(i) + QLatin1Char('\n');
        expected += QStringLiteral("[exit code: 0]");
        RUN_OK(full,
               (QJsonObject{
                   {QStringLiteral("op"), QStringLiteral("call")},
                   {QStringLiteral("agent"), QStringLiteral("a")},
                   {QStringLiteral("tool"), QStringLiteral("retrieve_offloaded_content")},
                   {QStringLiteral("args"), QJsonObject{{QStringLiteral("handle"), handle}}}}));
        QCOMPARE(full.value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("content"))
                     .toString(),
                 expected);

        RUN_ERR(bad, "FileNotFoundError",
                R"({"op":"call","agent":"a","tool":"retrieve_offloaded_content",)"
                R"("args":{"handle":"off-00000000000000000000000000000000"}})");
    }

    // ---- time travel (docs/checkpoints.md) ---------------------------------------------------

    void checkpointOperations()
    {
        QTemporaryDir store;
        Sandbox::Options opts;
        opts.seedFrom = m_project->path();
        opts.timeTravel.checkpoints = true;
        opts.timeTravel.trackChanges = true;
        opts.timeTravel.folder = store.path();
        m_sandbox = Sandbox::create(
            kWorkspaceId, std::make_shared<LocalSandboxBackend>(m_ws->path()), 7200, opts);
        m_runner = std::make_unique<ScriptRunner>(m_sandbox);
        startAndAttach();
        RUN_OK(list0, "{\"op\":\"checkpoints\"}");
        const QJsonArray baseline = list0.value(QLatin1String("result"))
                                        .toObject()
                                        .value(QLatin1String("checkpoints"))
                                        .toArray();
        QCOMPARE(baseline.size(), 1);
        QCOMPARE(baseline.first().toObject().value(QLatin1String("name")).toString(),
                 QStringLiteral("seed"));

        // a call's changes, shell commands included
        RUN_OK(call, "{\"op\":\"call\",\"agent\":\"a\",\"tool\":\"execute\",\"args\":"
                     "{\"command\":\"echo x >> src/main.py && rm README.md && mkdir out\"}}");
        const QJsonObject changes = call.value(QLatin1String("result"))
                                        .toObject()
                                        .value(QLatin1String("changes"))
                                        .toObject();
        QCOMPARE(changes.value(QLatin1String("added")).toInt(), 1);
        QCOMPARE(changes.value(QLatin1String("modified")).toInt(), 1);
        QCOMPARE(changes.value(QLatin1String("deleted")).toInt(), 1);

        RUN_OK(cp, "{\"op\":\"checkpoint\",\"name\":\"edited\",\"note\":\"after the edit\"}");
        QCOMPARE(
            cp.value(QLatin1String("result")).toObject().value(QLatin1String("note")).toString(),
            QStringLiteral("after the edit"));
        RUN_ERR(dup, "FileExistsError", "{\"op\":\"checkpoint\",\"name\":\"edited\"}");
        RUN_ERR(badName, "ValueError", "{\"op\":\"checkpoint\",\"name\":\"../x\"}");

        RUN_OK(diff, "{\"op\":\"diff\",\"from\":\"seed\",\"to\":\"edited\"}");
        const QJsonObject d = diff.value(QLatin1String("result")).toObject();
        QCOMPARE(d.value(QLatin1String("deleted")).toInt(), 1);
        QVERIFY(QJsonDocument(d).toJson().contains("+x"));

        RUN_OK(restore, "{\"op\":\"restore\",\"name\":\"seed\"}");
        QCOMPARE(readHost(wsPath(QStringLiteral("src/main.py"))), kMainPy);
        QCOMPARE(readHost(wsPath(QStringLiteral("README.md"))), kReadme);
        QVERIFY(!QFileInfo::exists(wsPath(QStringLiteral("out"))));
        RUN_OK(same, "{\"op\":\"diff\",\"from\":\"seed\"}");
        QCOMPARE(same.value(QLatin1String("result"))
                     .toObject()
                     .value(QLatin1String("entries"))
                     .toArray()
                     .size(),
                 0);

        QTemporaryDir forkParent;
        const QString forkRoot = forkParent.path() + QStringLiteral("/fork");
        const QJsonObject forkOp{{QStringLiteral("op"), QStringLiteral("fork")},
                                 {QStringLiteral("name"), QStringLiteral("edited")},
                                 {QStringLiteral("workspace_root"), forkRoot}};
        RUN_OK(fork, forkOp);
        QVERIFY(QFileInfo(forkRoot + QStringLiteral("/out")).isDir());
        QVERIFY(!QFileInfo::exists(forkRoot + QStringLiteral("/README.md")));

        RUN_OK(del, "{\"op\":\"delete_checkpoint\",\"name\":\"edited\"}");
        QCOMPARE(
            del.value(QLatin1String("result")).toObject().value(QLatin1String("deleted")).toBool(),
            true);
        RUN_ERR(gone, "FileNotFoundError", "{\"op\":\"restore\",\"name\":\"edited\"}");
    }

    void checkpointsOffSaySo()
    {
        startAndAttach();
        RUN_ERR(off, "ValueError", "{\"op\":\"checkpoint\",\"name\":\"x\"}");
        QVERIFY(errorMessage(off).contains(QLatin1String("--checkpoints")));
        // without tracking a call's result has no changes
        RUN_OK(call, "{\"op\":\"call\",\"agent\":\"a\",\"tool\":\"execute\",\"args\":"
                     "{\"command\":\"touch t\"}}");
        QVERIFY(!call.value(QLatin1String("result")).toObject().contains(QLatin1String("changes")));
    }
};

QTEST_GUILESS_MAIN(TestScriptRunner)
#include "tst_scriptrunner.moc"
