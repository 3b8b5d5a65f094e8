// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "errors.h"
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "sandboxplugin.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QtTest>

#include <thread>

using namespace elsai;
using test::readHostFile;
using test::writeHostFile;

class TestSandbox : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_counter = 0;

    /// A fresh project folder with a few files and things the default excludes must skip.
    QString makeProject()
    {
        const QString p = m_tmp.filePath(QStringLiteral("project-%1").arg(++m_counter));
        writeHostFile(p + QStringLiteral("/src/app.py"), "print('app')\n");
        writeHostFile(p + QStringLiteral("/README.md"), "# demo\n");
        writeHostFile(p + QStringLiteral("/.git/HEAD"), "ref\n");
        writeHostFile(p + QStringLiteral("/node_modules/x/index.js"), "x\n");
        writeHostFile(p + QStringLiteral("/.env"), "SECRET=1\n");
        writeHostFile(p + QStringLiteral("/notes.tmp"), "tmp\n");
        return p;
    }
    QString newRoot() { return m_tmp.filePath(QStringLiteral("ws-%1").arg(++m_counter)); }
    SandboxPtr make(const QString &id, Sandbox::Options o = {})
    {
        return Sandbox::create(id, std::make_shared<LocalSandboxBackend>(newRoot()), 600,
                               std::move(o));
    }

private Q_SLOTS:
    void constructorValidation()
    {
        auto backend = std::make_shared<LocalSandboxBackend>(newRoot());
        QVERIFY_THROWS_EXCEPTION(ValueError, Sandbox::create(QString(), backend, 60));
        QVERIFY_THROWS_EXCEPTION(ValueError,
                                 Sandbox::create(QStringLiteral("x"), BackendSource(), 60));
        QVERIFY_THROWS_EXCEPTION(ValueError, Sandbox::create(QStringLiteral("x"), backend, -1));
    }

    // Folders that must not overlap the workspace are refused before anything is touched,
    // whatever the spelling: the user's project stays byte for byte.
    void overlappingFoldersAreRefused_data()
    {
        QTest::addColumn<QString>("role");     // seed_from, sync_dest, flush
        QTest::addColumn<QString>("relation"); // how the folder relates to the workspace
        for (const char *role :
             {"seed_from", "sync_dest", "flush", "backend seed", "backend flush"}) {
            for (const char *rel :
                 {"same", "same via symlink", "same with ./ and //", "inside", "containing"})
                QTest::newRow(qPrintable(
                    QStringLiteral("%1 %2").arg(QLatin1String(role), QLatin1String(rel))))
                    << QString::fromLatin1(role) << QString::fromLatin1(rel);
        }
    }
    void overlappingFoldersAreRefused()
    {
        QFETCH(QString, role);
        QFETCH(QString, relation);
        const QString project = makeProject();
        QString workspace = project;
        QString other = project;
        if (relation == QLatin1String("same via symlink")) {
            other = m_tmp.filePath(QStringLiteral("alias-%1").arg(++m_counter));
            QVERIFY(QFile::link(project, other));
        } else if (relation == QLatin1String("same with ./ and //")) {
            other = project + QStringLiteral("/./src/..//");
            other.replace(QStringLiteral("/src/.."), QStringLiteral("/."));
        } else if (relation == QLatin1String("inside")) {
            other = project + QStringLiteral("/src");
        } else if (relation == QLatin1String("containing")) {
            workspace = project + QStringLiteral("/sandbox-ws");
        }
        const QByteArray before = readHostFile(project + QStringLiteral("/src/app.py"));
        auto backend = std::make_shared<LocalSandboxBackend>(workspace);
        const QString id = QStringLiteral("overlap-%1").arg(++m_counter);
        Sandbox::Options o;
        if (role == QLatin1String("seed_from")) {
            o.seedFrom = other;
            QVERIFY_THROWS_EXCEPTION(ValueError, Sandbox::create(id, backend, 60, o));
        } else if (role == QLatin1String("sync_dest")) {
            o.syncDest = other;
            QVERIFY_THROWS_EXCEPTION(ValueError, Sandbox::create(id, backend, 60, o));
        } else if (role == QLatin1String("flush")) {
            auto s = Sandbox::create(id, backend, 60);
            s->start();
            QVERIFY_THROWS_EXCEPTION(ValueError, s->flush(other));
            QVERIFY_THROWS_EXCEPTION(ValueError, s->planFlush(other));
            s->stop(false);
        } else {
            backend->create();
            if (role == QLatin1String("backend seed")) {
                QVERIFY_THROWS_EXCEPTION(
                    ValueError, backend->seedWorkspace(other, DEFAULT_SANDBOX_SEED_EXCLUDES));
            } else {
                QVERIFY_THROWS_EXCEPTION(ValueError,
                                         backend->syncArtifacts(other, defaultSandboxSyncPolicy()));
            }
        }
        QCOMPARE(readHostFile(project + QStringLiteral("/src/app.py")), before);
        QCOMPARE(readHostFile(project + QStringLiteral("/README.md")), QByteArray("# demo\n"));
    }

    void overlapErrorNamesBothFolders()
    {
        const QString project = makeProject();
        Sandbox::Options o;
        o.seedFrom = project;
        try {
            Sandbox::create(QStringLiteral("overlap-message"),
                            std::make_shared<LocalSandboxBackend>(project + QStringLiteral("/ws")),
                            60, o);
            QFAIL("no error");
        } catch (const ValueError &e) {
            QVERIFY2(e.message().contains(project) && e.message().contains(QStringLiteral("/ws")) &&
                         e.message().contains(QStringLiteral("seed_from")),
                     qPrintable(e.message()));
        }
    }

    void separateSiblingFoldersAreAccepted()
    {
        // "/x/project" and "/x/project-ws" share a prefix, not a folder.
        const QString project = makeProject();
        Sandbox::Options o;
        o.seedFrom = project;
        auto s = Sandbox::create(
            QStringLiteral("siblings"),
            std::make_shared<LocalSandboxBackend>(project + QStringLiteral("-ws")), 60, o);
        QVERIFY(s->start()->success());
        s->stop(false);
    }

    void defaults()
    {
        const QString project = makeProject();
        Sandbox::Options o;
        o.seedFrom = project;
        auto s = make(QStringLiteral("defaults"), o);
        QVERIFY(!s->isStarted());
        QVERIFY(!s->ownerId());
        QVERIFY(!s->backend());
        QCOMPARE(s->ttlSeconds(), std::optional<double>(600));
        QCOMPARE(s->manager()->ttlSeconds(), std::optional<double>(600)); // auto manager
        QCOMPARE(s->effectiveSeedExcludes(), DEFAULT_SANDBOX_SEED_EXCLUDES);
        QCOMPARE(s->effectiveSyncPolicy().syncIncludePatterns.value(),
                 DEFAULT_SANDBOX_SYNC_INCLUDE);
        QCOMPARE(s->effectiveSyncDest(), std::optional<QString>(project));
        QCOMPARE(s->backendTypeName(), QStringLiteral("LocalSandboxBackend"));

        Sandbox::Options o2;
        o2.seedFrom = project;
        o2.seedExclude = {QStringLiteral("*.tmp"), QStringLiteral(".git")};
        o2.syncDest = m_tmp.filePath(QStringLiteral("out"));
        auto s2 = make(QStringLiteral("defaults-2"), o2);
        QCOMPARE(s2->effectiveSeedExcludes(),
                 DEFAULT_SANDBOX_SEED_EXCLUDES + QStringList{QStringLiteral("*.tmp")});
        QCOMPARE(s2->effectiveSyncDest(), o2.syncDest);
    }

    void startSeedsClaimsAndIsIdempotent()
    {
        Sandbox::Options o;
        o.seedFrom = makeProject();
        o.seedExclude = {QStringLiteral("*.tmp")};
        auto s = make(QStringLiteral("start"), o);
        test::AuditCapture audit;
        const auto seed = s->start();
        QVERIFY(seed);
        QCOMPARE(seed->filesSeeded, 2); // src/app.py, README.md
        QVERIFY(seed->success());
        QVERIFY(seed->skippedPaths.contains(QStringLiteral(".git")));
        QVERIFY(seed->skippedPaths.contains(QStringLiteral("node_modules")));
        QVERIFY(seed->skippedPaths.contains(QStringLiteral(".env")));
        QVERIFY(seed->skippedPaths.contains(QStringLiteral("notes.tmp")));
        QVERIFY(s->isStarted());
        const auto owner = s->ownerId();
        QVERIFY(owner && !owner->isEmpty());
        QCOMPARE(s->manager()->getSession(QStringLiteral("start"))->ownerId, owner);
        QVERIFY(s->manager()->getSession(QStringLiteral("start"))->prepared);
        QCOMPARE(s->readFile(QStringLiteral("src/app.py")), QStringLiteral("print('app')\n"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, s->readFile(QStringLiteral(".env")));

        QVERIFY(!s->start()); // idempotent
        QCOMPARE(s->ownerId(), owner);
        QCOMPARE(audit.named(QStringLiteral("sandbox.start")).size(), 1);
        QCOMPARE(audit.named(QStringLiteral("sandbox.start"))
                     .first()
                     .fields.value(QStringLiteral("files_seeded"))
                     .toInt(),
                 2);
        s->stop(false);
    }

    void startWithoutSeedReturnsNone()
    {
        auto s = make(QStringLiteral("noseed"));
        QVERIFY(!s->start());
        QVERIFY(s->isStarted());
        s->stop();
    }

    void secondInstanceCannotStart_data()
    {
        QTest::addColumn<bool>("sharedManager");
        QTest::newRow("same-manager") << true;
        QTest::newRow("separate-managers") << false;
    }

    void secondInstanceCannotStart()
    {
        QFETCH(bool, sharedManager);
        Sandbox::Options o;
        if (sharedManager)
            o.manager = std::make_shared<SandboxManager>();
        auto a = make(QStringLiteral("dup"), o);
        auto b = make(QStringLiteral("dup"), o);
        a->start();
        QVERIFY_THROWS_EXCEPTION(SandboxStartError, b->start());
        QVERIFY(!b->isStarted());
        a->stop(false);
        QVERIFY(!b->start()); // free again
        QVERIFY(b->isStarted());
        b->stop(false);
    }

    void stopDetachesFlushesAndCloses()
    {
        const QString project = makeProject();
        Sandbox::Options o;
        o.seedFrom = project;
        auto s = make(QStringLiteral("stop"), o);
        s->start();
        const AgentPtr agent = Agent::create(QStringLiteral("a1"));
        s->attach(agent);
        s->addFiles({{QStringLiteral("src/new.py"), FileSource::text(QStringLiteral("n = 1\n"))}});
        test::AuditCapture audit;
        const auto sync = s->stop();
        QVERIFY(sync);
        QCOMPARE(sync->filesSynced, 1);
        QCOMPARE(readHostFile(project + QStringLiteral("/src/new.py")), QByteArray("n = 1\n"));
        QVERIFY(!s->isStarted());
        QVERIFY(!s->ownerId());
        QVERIFY(s->attachedAgents().isEmpty());
        QVERIFY(agent->isDetached());
        QVERIFY(!agent->tools().contains(QStringLiteral("write_file")));
        QVERIFY(!s->manager()->getSession(QStringLiteral("stop")));
        QCOMPARE(audit.names(),
                 (QStringList{QStringLiteral("detach"), QStringLiteral("sandbox.flush"),
                              QStringLiteral("sandbox.stop")}));
        QVERIFY(!s->stop()); // idempotent
        QVERIFY_THROWS_EXCEPTION(OSError, s->readFile(QStringLiteral("src/new.py")));

        // Restart: a new ownership cycle over the same (kept) folder.
        s->start();
        QCOMPARE(s->readFile(QStringLiteral("src/new.py")), QStringLiteral("n = 1\n"));
        s->stop(false);
    }

    void stopWithoutSyncDoesNotFlush()
    {
        const QString project = makeProject();
        Sandbox::Options o;
        o.seedFrom = project;
        auto s = make(QStringLiteral("nosync"), o);
        s->start();
        s->addFiles({{QStringLiteral("src/new.py"), FileSource::text(QStringLiteral("x"))}});
        QVERIFY(!s->stop(false));
        QVERIFY(!QFile::exists(project + QStringLiteral("/src/new.py")));
    }

    void addFiles()
    {
        auto s = make(QStringLiteral("add"));
        s->start();
        const QString host = m_tmp.filePath(QStringLiteral("host.bin"));
        writeHostFile(host, QByteArray("\x00\x01\x02", 3));
        const QStringList written = s->addFiles({
            {QStringLiteral("t.txt"), FileSource::text(QStringLiteral("héllo"))},
            {QStringLiteral("d/b.bin"), FileSource::bytes(QByteArray("\xff\xfe", 2))},
            {QStringLiteral("h.bin"), FileSource::hostPath(host)},
        });
        QCOMPARE(written, (QStringList{QStringLiteral("t.txt"), QStringLiteral("d/b.bin"),
                                       QStringLiteral("h.bin")}));
        QCOMPARE(s->readFileBytes(QStringLiteral("t.txt")), QStringLiteral("héllo").toUtf8());
        QCOMPARE(s->readFileBytes(QStringLiteral("d/b.bin")), QByteArray("\xff\xfe", 2));
        QCOMPARE(s->readFileBytes(QStringLiteral("h.bin")), QByteArray("\x00\x01\x02", 3));

        // overwrite=false skips existing paths and reports only what it wrote.
        const QStringList second =
            s->addFiles({{QStringLiteral("t.txt"), FileSource::text(QStringLiteral("new"))},
                         {QStringLiteral("u.txt"), FileSource::text(QStringLiteral("u"))}},
                        false);
        QCOMPARE(second, QStringList{QStringLiteral("u.txt")});
        QCOMPARE(s->readFile(QStringLiteral("t.txt")), QStringLiteral("héllo"));

        // An unreadable host file fails before anything is written.
        QVERIFY_THROWS_EXCEPTION(
            FileNotFoundError,
            s->addFiles({{QStringLiteral("first.txt"), FileSource::text(QStringLiteral("1"))},
                         {QStringLiteral("x"),
                          FileSource::hostPath(m_tmp.filePath(QStringLiteral("missing")))}}));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, s->readFile(QStringLiteral("first.txt")));
        // Escapes are refused.
        QVERIFY_THROWS_EXCEPTION(
            PermissionError,
            s->addFiles({{QStringLiteral("../out.txt"), FileSource::text(QStringLiteral("x"))}}));
        s->stop(false);
    }

    void downloadFiles()
    {
        auto s = make(QStringLiteral("download"));
        s->start();
        s->addFiles({{QStringLiteral("a.txt"), FileSource::text(QStringLiteral("A"))},
                     {QStringLiteral("b.txt"), FileSource::text(QStringLiteral("B"))}});
        const QString outA = m_tmp.filePath(QStringLiteral("dl/sub/a.txt"));
        const QString outB = m_tmp.filePath(QStringLiteral("dl/b.txt"));
        writeHostFile(outB, "host-b");
        QCOMPARE(s->downloadFiles(
                     {{QStringLiteral("a.txt"), outA}, {QStringLiteral("b.txt"), outB}}, false),
                 QStringList{QStringLiteral("a.txt")});
        QCOMPARE(readHostFile(outA), QByteArray("A"));
        QCOMPARE(readHostFile(outB), QByteArray("host-b")); // kept
        QCOMPARE(s->downloadFiles({{QStringLiteral("b.txt"), outB}}),
                 QStringList{QStringLiteral("b.txt")});
        QCOMPARE(readHostFile(outB), QByteArray("B"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError,
                                 s->downloadFiles({{QStringLiteral("missing"), outA}}));
        QVERIFY_THROWS_EXCEPTION(PermissionError,
                                 s->downloadFiles({{QStringLiteral("../etc"), outA}}));
        s->stop(false);
    }

    void downloadLongNames_data()
    {
        QTest::addColumn<int>("wsLength");
        QTest::addColumn<int>("hostLength");
        QTest::newRow("host name of 250 bytes") << 10 << 250;
        QTest::newRow("host name of 255 bytes") << 10 << 255;
        QTest::newRow("255-byte workspace name, written by an agent") << 255 << 255;
        QTest::newRow("multi-byte host name of 254 bytes") << 10 << -254;
    }

    // The temp name of an atomic write must fit NAME_MAX whatever the target's length.
    void downloadLongNames()
    {
        QFETCH(int, wsLength);
        QFETCH(int, hostLength);
        auto s = make(QStringLiteral("download-long"));
        s->start();
        AgentPtr agent = Agent::create(QStringLiteral("long-writer"));
        s->attach(agent);
        const QString wsName(wsLength, u'w');
        const ToolResult w = agent->callTool(
            QStringLiteral("write_file"),
            {{QStringLiteral("path"), wsName}, {QStringLiteral("content"), QStringLiteral("L")}});
        QVERIFY2(w.text.contains(QLatin1String("Wrote 1 bytes")), qPrintable(w.text));
        // a negative length: that many bytes of two-byte characters
        const QString hostName =
            hostLength > 0 ? QString(hostLength, u'h') : QString(-hostLength / 2, QChar(0xe9));
        QCOMPARE(hostName.toUtf8().size(), qAbs(hostLength));
        const QString out = m_tmp.filePath(QStringLiteral("dl-long/") + hostName);
        QCOMPARE(s->downloadFiles({{wsName, out}}), QStringList{wsName});
        QCOMPARE(readHostFile(out), QByteArray("L"));
        QCOMPARE(QDir(m_tmp.filePath(QStringLiteral("dl-long")))
                     .entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)
                     .size(),
                 1); // no temp file left
        QVERIFY(QFile::remove(out));
        s->stop(false);
    }

    // add_files from a host path and download_files to a host path, where the host file IS
    // the workspace file (the local backend's workspace is a host folder): whatever the
    // spelling, the file keeps its bytes — each reads the whole source before the atomic write.
    void copyOntoItselfKeepsTheFile_data()
    {
        QTest::addColumn<QString>("operation"); // add, download
        QTest::addColumn<QString>("spelling");  // how the host path names the workspace file
        for (const char *op : {"add", "download"}) {
            for (const char *spelling : {"same path", "./ and //", "folder link", "hard link"})
                QTest::addRow("%s, %s", op, spelling)
                    << QString::fromLatin1(op) << QString::fromLatin1(spelling);
        }
    }

    void copyOntoItselfKeepsTheFile()
    {
        QFETCH(QString, operation);
        QFETCH(QString, spelling);
        auto s = make(QStringLiteral("onto-itself"));
        s->start();
        auto stop = qScopeGuard([&] { s->stop(false); });
        const QByteArray bytes("the only copy\n");
        s->addFiles({{QStringLiteral("sub/f.txt"), FileSource::bytes(bytes)}});
        const QString root = s->backend()->hostFolder();
        QString host = root + QStringLiteral("/sub/f.txt");
        if (spelling == u"./ and //") {
            host = root + QStringLiteral("/./sub//f.txt");
        } else if (spelling == u"folder link") {
            const QString link = m_tmp.filePath(QStringLiteral("link-%1").arg(++m_counter));
            QVERIFY(QFile::link(root + QStringLiteral("/sub"), link));
            host = link + QStringLiteral("/f.txt");
        } else if (spelling == u"hard link") {
            host = m_tmp.filePath(QStringLiteral("hard-%1").arg(++m_counter));
            QCOMPARE(::link(QFile::encodeName(root + QStringLiteral("/sub/f.txt")).constData(),
                            QFile::encodeName(host).constData()),
                     0);
        }
        if (operation == u"add") {
            QCOMPARE(s->addFiles({{QStringLiteral("sub/f.txt"), FileSource::hostPath(host)}}),
                     QStringList{QStringLiteral("sub/f.txt")});
        } else if (spelling == u"folder link") {
            // the engine never writes beneath a host folder that is a link (SECURITY.md)
            QVERIFY_THROWS_EXCEPTION(PermissionError,
                                     s->downloadFiles({{QStringLiteral("sub/f.txt"), host}}));
        } else {
            QCOMPARE(s->downloadFiles({{QStringLiteral("sub/f.txt"), host}}),
                     QStringList{QStringLiteral("sub/f.txt")});
        }
        QCOMPARE(s->readFileBytes(QStringLiteral("sub/f.txt")), bytes);
        QCOMPARE(readHostFile(host), bytes);
    }

    void hostReadFileMemory_data()
    {
        QTest::addColumn<bool>("asText");
        QTest::addColumn<double>("factor"); // address space allowed, in file sizes
        QTest::newRow("readFileBytes: about the file's size") << false << 1.25;
        QTest::newRow("readFile: about twice the file's size (UTF-16)") << true << 2.25;
    }

    // The host API returns the whole file, holding little more than the result: a forked child
    // reads a 256 MiB sparse file under an address-space limit of what it already maps plus
    // `factor` times the file.
    void hostReadFileMemory()
    {
        if (test::addressSanitized())
            QSKIP("ASan reserves terabytes of address space; RLIMIT_AS cannot be used");
        QFETCH(bool, asText);
        QFETCH(double, factor);
        constexpr qint64 fileSize = qint64(256) << 20;
        const QString root = newRoot();
        auto s = Sandbox::create(QStringLiteral("host-read-memory"),
                                 std::make_shared<LocalSandboxBackend>(root), 600);
        s->start();
        {
            QFile f(root + QStringLiteral("/big.txt"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("head\n");
            QVERIFY(f.resize(fileSize));
        }
        const int status = test::exitStatusUnderAddressLimit(
            [&](qint64 mapped) { return mapped + qint64(factor * fileSize) + (48 << 20); },
            [&] {
                if (asText) {
                    const QString text = s->readFile(QStringLiteral("big.txt"));
                    return text.size() == fileSize && text.startsWith(QLatin1String("head\n")) ? 0
                                                                                               : 1;
                }
                const QByteArray bytes = s->readFileBytes(QStringLiteral("big.txt"));
                return bytes.size() == fileSize && bytes.startsWith("head\n") ? 0 : 1;
            });
        QVERIFY2(status >= 0, "the reading child died (abort or signal)");
        QCOMPARE(status, 0);
        s->stop(false);
        QFile::remove(root + QStringLiteral("/big.txt"));
    }

    void deleteAndMove()
    {
        auto s = make(QStringLiteral("delmove"));
        s->start();
        s->addFiles({{QStringLiteral("a.txt"), FileSource::text(QStringLiteral("A"))},
                     {QStringLiteral("dir/x.txt"), FileSource::text(QStringLiteral("X"))}});
        s->moveFile(QStringLiteral("a.txt"), QStringLiteral("moved/a2.txt"));
        QCOMPARE(s->readFile(QStringLiteral("moved/a2.txt")), QStringLiteral("A"));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, s->readFile(QStringLiteral("a.txt")));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError,
                                 s->moveFile(QStringLiteral("nope"), QStringLiteral("x")));
        QVERIFY_THROWS_EXCEPTION(IsADirectoryError,
                                 s->moveFile(QStringLiteral("dir"), QStringLiteral("dir2")));
        s->makeFolder(QStringLiteral("made/deep"));
        QCOMPARE(s->backend()->stat(QStringLiteral("made/deep")).isDir, true);
        QVERIFY_THROWS_EXCEPTION(PermissionError, s->makeFolder(QStringLiteral("../out")));
        s->deleteFiles({QStringLiteral("moved/a2.txt"), QStringLiteral("dir")});
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, s->readFile(QStringLiteral("moved/a2.txt")));
        QVERIFY_THROWS_EXCEPTION(FileNotFoundError, s->readFile(QStringLiteral("dir/x.txt")));
        QVERIFY_THROWS_EXCEPTION(PermissionError, s->deleteFiles({QStringLiteral("../x")}));
        s->stop(false);
    }

    // The window's Save: one audited write of the person, parents made, paths confined.
    void hostWriteFile()
    {
        auto s = make(QStringLiteral("hostwrite"));
        s->start();
        elsai::test::AuditCapture capture;
        s->writeFile(QStringLiteral("notes/today.md"), QByteArrayLiteral("saved\n"),
                     QStringLiteral("human"));
        QCOMPARE(s->readFile(QStringLiteral("notes/today.md")), QStringLiteral("saved\n"));
        QVERIFY_THROWS_EXCEPTION(PermissionError, s->writeFile(QStringLiteral("../escape.md"), "x",
                                                               QStringLiteral("human")));
        QList<AuditEvent> events = capture.events(); // the writes (the read has its own)
        events.removeIf([](const AuditEvent &e) { return e.event != u"sandbox.write_file"; });
        QCOMPARE(events.size(), 2);
        QCOMPARE(events[0].event, QStringLiteral("sandbox.write_file"));
        QCOMPARE(events[0].actor, QStringLiteral("human"));
        QCOMPARE(events[0].outcome, QStringLiteral("ok"));
        QCOMPARE(events[0].fields.value(QStringLiteral("path")).toString(),
                 QStringLiteral("notes/today.md"));
        QCOMPARE(events[0].fields.value(QStringLiteral("bytes")).toInt(), 6);
        QCOMPARE(events[1].outcome, QStringLiteral("denied"));
        s->stop(false);
    }

    void hostOperationsAreNotLimitedByAttachMode()
    {
        auto s = make(QStringLiteral("hostops"));
        s->start();
        const AgentPtr reader = Agent::create(QStringLiteral("reader"));
        s->attach(reader, SandboxAttachMode::ReadOnly);
        s->addFiles({{QStringLiteral("a"), FileSource::text(QStringLiteral("1"))}});
        s->deleteFiles({QStringLiteral("a")});
        QVERIFY_THROWS_EXCEPTION(
            SandboxMutationDeniedError,
            writeWorkspaceFile(*reader, QStringLiteral("b"), QStringLiteral("2")));
        s->stop(false);
    }

    void flushDestinations()
    {
        auto none = make(QStringLiteral("flush-none"));
        none->start();
        QVERIFY(!none->flush()); // no destination configured
        QVERIFY(!none->planFlush());
        const QString explicitDest = m_tmp.filePath(QStringLiteral("explicit"));
        none->addFiles({{QStringLiteral("src/a.py"), FileSource::text(QStringLiteral("a"))},
                        {QStringLiteral("junk.bin"), FileSource::text(QStringLiteral("j"))}});
        const auto plan = none->planFlush(explicitDest);
        QVERIFY(plan);
        QCOMPARE(plan->entries.size(), 1);
        QVERIFY(
            !QFile::exists(explicitDest + QStringLiteral("/src/a.py"))); // a plan writes nothing
        const auto r = none->flush(explicitDest);
        QVERIFY(r);
        QCOMPARE(r->filesSynced, 1);
        QVERIFY(QFile::exists(explicitDest + QStringLiteral("/src/a.py")));
        QVERIFY(!QFile::exists(explicitDest + QStringLiteral("/junk.bin"))); // not included
        none->stop(false);

        Sandbox::Options o;
        o.seedFrom = makeProject();
        o.syncDest = m_tmp.filePath(QStringLiteral("dest"));
        WorkspaceSyncPolicy policy = defaultSandboxSyncPolicy();
        policy.syncIncludePatterns = QStringList{QStringLiteral("*.bin")};
        o.syncPolicy = policy;
        auto s = make(QStringLiteral("flush-dest"), o);
        s->start();
        s->addFiles({{QStringLiteral("out/r.bin"), FileSource::text(QStringLiteral("r"))}});
        QCOMPARE(s->flush()->filesSynced, 1);
        QCOMPARE(readHostFile(*o.syncDest + QStringLiteral("/out/r.bin")), QByteArray("r"));
        QVERIFY(!QFile::exists(*o.seedFrom + QStringLiteral("/out/r.bin")));
        s->stop(false);
    }

    void flushNeverOverwritesHostChanges()
    {
        const QString project = makeProject();
        Sandbox::Options o;
        o.seedFrom = project;
        auto s = make(QStringLiteral("conflict"), o);
        s->start();
        writeHostFile(project + QStringLiteral("/README.md"), "# host edit\n");
        s->addFiles(
            {{QStringLiteral("README.md"), FileSource::text(QStringLiteral("# ws edit\n"))}});
        const auto r = s->flush();
        QCOMPARE(r->conflicts, QStringList{QStringLiteral("README.md")});
        QVERIFY(!r->success());
        QCOMPARE(readHostFile(project + QStringLiteral("/README.md")), QByteArray("# host edit\n"));
        QCOMPARE(readHostFile(project + QStringLiteral("/README.md") + conflictSuffix()),
                 QByteArray("# ws edit\n"));
        s->stop(false);
    }

    void attachRules()
    {
        auto s = make(QStringLiteral("attach"));
        const AgentPtr a = Agent::create(QStringLiteral("a"));
        QVERIFY_THROWS_EXCEPTION(SandboxAttachError, s->attach(a)); // not started
        QVERIFY_THROWS_EXCEPTION(SandboxAttachError, s->attach(nullptr));
        s->start();
        test::AuditCapture audit;
        s->attach(a);
        QCOMPARE(a->attachedSandbox(), s);
        QVERIFY(a->attachMode() == SandboxAttachMode::ReadWrite);
        QCOMPARE(a->sandboxWorkspaceId(), std::optional<QString>(QStringLiteral("attach")));
        QCOMPARE(a->tools().names(), elsai::test::sortedSandboxTools(SandboxAttachMode::ReadWrite));
        // Attaching again changes the mode and the tools.
        s->attach(a, SandboxAttachMode::ReadOnly);
        QCOMPARE(a->tools().names(), elsai::test::sortedSandboxTools(SandboxAttachMode::ReadOnly));
        QCOMPARE(s->attachedAgents().size(), 1);
        QVERIFY(s->attachedAgents().first().mode == SandboxAttachMode::ReadOnly);
        QCOMPARE(audit.named(QStringLiteral("attach"))
                     .last()
                     .fields.value(QStringLiteral("previous_mode"))
                     .toString(),
                 QStringLiteral("read_write"));

        // Attached elsewhere → refused.
        auto other = make(QStringLiteral("attach-other"));
        other->start();
        QVERIFY_THROWS_EXCEPTION(SandboxAttachError, other->attach(a));
        // Configured for another instance → refused.
        AgentConfig c;
        c.sandbox = s;
        const AgentPtr configured = Agent::create(QStringLiteral("cfg"), c);
        QVERIFY_THROWS_EXCEPTION(SandboxAttachError, other->attach(configured));

        s->detach(a);
        s->detach(a); // idempotent
        QCOMPARE(audit.named(QStringLiteral("detach")).size(), 1);
        QVERIFY(a->isDetached());
        QVERIFY(a->tools().names().isEmpty());
        other->attach(a); // free to move now
        QCOMPARE(a->attachedSandbox(), other);
        other->stop(false);
        s->stop(false);
    }

    void executeToolOmittedWithoutExecution()
    {
        // A backend that only implements ExecutionBackend gets no execute tool.
        class FilesOnly : public ExecutionBackend
        {
        public:
            explicit FilesOnly(const QString &root) : m_local(root) {}
            QString id() const override { return QStringLiteral("files-only"); }
            QString typeName() const override { return QStringLiteral("FilesOnly"); }
            void create() override { m_local.create(); }
            void close() override { m_local.close(); }
            bool isCreated() const override { return m_local.isCreated(); }
            QByteArray readFile(const QString &p) override { return m_local.readFile(p); }
            void writeFile(const QString &p, const QByteArray &c) override
            {
                m_local.writeFile(p, c);
            }
            QList<FileInfo> listDir(const QString &p) override { return m_local.listDir(p); }
            void removeFile(const QString &p, bool r) override { m_local.removeFile(p, r); }
            FileInfo stat(const QString &p) override { return m_local.stat(p); }
            void makeDirs(const QString &p) override { m_local.makeDirs(p); }
            WorkspaceSeedResult seedWorkspace(const QString &s, const QStringList &e,
                                              const std::function<void(int, int)> &pr) override
            {
                return m_local.seedWorkspace(s, e, pr);
            }
            WorkspaceSyncResult syncArtifacts(const QString &d, const WorkspaceSyncPolicy &p,
                                              const std::function<void(int, int)> &pr) override
            {
                return m_local.syncArtifacts(d, p, pr);
            }
            SyncPlan planSync(const QString &d, const WorkspaceSyncPolicy &p) override
            {
                return m_local.planSync(d, p);
            }

        private:
            LocalSandboxBackend m_local;
        };
        auto backend = std::make_shared<FilesOnly>(newRoot());
        QVERIFY(!supportsExecution(backend.get()));
        auto s = Sandbox::create(QStringLiteral("files-only"), backend, 60);
        s->start();
        const AgentPtr a = Agent::create(QStringLiteral("a"));
        s->attach(a);
        // every file tool, no execute and no background processes
        QStringList expected = SandboxPlugin::toolNames(SandboxAttachMode::ReadWrite, false);
        expected.sort();
        QCOMPARE(a->tools().names(), expected);
        QVERIFY(!expected.contains(QStringLiteral("execute")) &&
                !expected.contains(QStringLiteral("process_start")) &&
                expected.contains(QStringLiteral("grep")));
        s->stop(false);
    }

    void refIsForwardCompatibleHandle()
    {
        auto s = make(QStringLiteral("ref"));
        const SandboxRef r = s->ref();
        QCOMPARE(r.workspaceId, QStringLiteral("ref"));
        QCOMPARE(r.backendType, QStringLiteral("LocalSandboxBackend"));
        QCOMPARE(r.managerId, std::optional<QString>(s->manager()->managerId()));
    }

    void scopeStartsAndStopsWithSync()
    {
        const QString project = makeProject();
        Sandbox::Options o;
        o.seedFrom = project;
        auto s = make(QStringLiteral("scope"), o);
        {
            SandboxScope scope(s);
            QVERIFY(s->isStarted());
            QCOMPARE(scope.seedResult()->filesSeeded, 3); // notes.tmp too: no extra excludes
            scope->addFiles(
                {{QStringLiteral("src/scoped.py"), FileSource::text(QStringLiteral("s"))}});
        }
        QVERIFY(!s->isStarted());
        QCOMPARE(readHostFile(project + QStringLiteral("/src/scoped.py")), QByteArray("s"));
    }

    void expiryStopsTheSandbox()
    {
        auto manager = std::make_shared<SandboxManager>(5.0);
        double now = 100;
        manager->setClock([&] { return now; });
        Sandbox::Options o;
        o.manager = manager;
        auto s = make(QStringLiteral("expire"), o);
        s->start();
        const AgentPtr a = Agent::create(QStringLiteral("a"));
        s->attach(a);
        now += 3;
        s->addFiles({{QStringLiteral("f"), FileSource::text(QStringLiteral("1"))}}); // activity
        now += 4;
        QVERIFY(manager->cleanupExpired().isEmpty()); // 4 s idle < 5
        now += 2;
        QCOMPARE(manager->cleanupExpired(), QStringList{QStringLiteral("expire")});
        QVERIFY(!s->isStarted());
        QVERIFY(a->isDetached());
        QVERIFY_THROWS_EXCEPTION(AgentSandboxDetachedError,
                                 writeWorkspaceFile(*a, QStringLiteral("g"), QStringLiteral("2")));
        // The id is free again for a new start.
        s->start();
        QCOMPARE(s->readFile(QStringLiteral("f")), QStringLiteral("1"));
        s->stop(false);
    }

    void agentToolCallsKeepTheSessionAlive()
    {
        auto manager = std::make_shared<SandboxManager>(5.0);
        double now = 0;
        manager->setClock([&] { return now; });
        Sandbox::Options o;
        o.manager = manager;
        auto s = make(QStringLiteral("alive"), o);
        s->start();
        const AgentPtr a = Agent::create(QStringLiteral("a"));
        s->attach(a);
        for (int i = 0; i < 4; ++i) {
            now += 3;
            a->callTool(QStringLiteral("list_dir"),
                        {{QStringLiteral("path"), QStringLiteral(".")}});
            QVERIFY(manager->cleanupExpired().isEmpty());
        }
        s->stop(false);
    }

    void concurrentHostAndAgentCalls()
    {
        auto s = make(QStringLiteral("concurrent"));
        s->start();
        QList<AgentPtr> agents;
        for (int i = 0; i < 4; ++i) {
            agents.append(Agent::create(QStringLiteral("agent-%1").arg(i)));
            s->attach(agents.last());
        }
        std::atomic_int failures{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < 50; ++i) {
                    const QString path = QStringLiteral("t%1/f%2.txt").arg(t).arg(i);
                    const QString content = QStringLiteral("%1-%2").arg(t).arg(i);
                    try {
                        agents[t]->callTool(
                            QStringLiteral("write_file"),
                            {{QStringLiteral("path"), path}, {QStringLiteral("content"), content}});
                        if (s->readFile(path) != content)
                            ++failures;
                        s->addFiles({{path + QStringLiteral(".host"), FileSource::text(content)}});
                    } catch (...) {
                        ++failures;
                    }
                }
            });
        }
        for (auto &t : threads)
            t.join();
        QCOMPARE(failures.load(), 0);
        QCOMPARE(s->backend()->listDir(QStringLiteral("t3")).size(), 100);
        s->stop(false);
    }

    void auditedHostEvents()
    {
        auto s = make(QStringLiteral("audited"));
        test::AuditCapture audit;
        s->start();
        s->addFiles({{QStringLiteral("a"), FileSource::text(QStringLiteral("1"))}});
        s->readFile(QStringLiteral("a"));
        s->moveFile(QStringLiteral("a"), QStringLiteral("b"));
        s->downloadFiles({{QStringLiteral("b"), m_tmp.filePath(QStringLiteral("audited-b"))}});
        s->deleteFiles({QStringLiteral("b")});
        try {
            s->readFile(QStringLiteral("../escape"));
        } catch (const PermissionError &) {
        }
        s->flush(m_tmp.filePath(QStringLiteral("audited-dest")));
        s->stop(false);
        QCOMPARE(audit.names(),
                 (QStringList{
                     QStringLiteral("sandbox.start"), QStringLiteral("sandbox.add_files"),
                     QStringLiteral("sandbox.read_file"), QStringLiteral("sandbox.move_file"),
                     QStringLiteral("sandbox.download_files"),
                     QStringLiteral("sandbox.delete_files"), QStringLiteral("sandbox.read_file"),
                     QStringLiteral("sandbox.flush"), QStringLiteral("sandbox.stop")}));
        for (const AuditEvent &e : audit.events()) {
            QCOMPARE(e.workspaceId, QStringLiteral("audited"));
            QCOMPARE(e.actor, QStringLiteral("host"));
            QVERIFY(e.timestamp.isValid());
        }
        const AuditEvent denied = audit.events().at(6);
        QCOMPARE(denied.outcome, QStringLiteral("denied"));
        QCOMPARE(denied.fields.value(QStringLiteral("error_type")).toString(),
                 QStringLiteral("PermissionError"));
    }
};

QTEST_GUILESS_MAIN(TestSandbox)
#include "tst_sandbox.moc"
