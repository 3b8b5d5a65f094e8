// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Every path the engine itself writes — a download, the audit log, an offload folder, the flush
// base, a flushed file, a conflict file, a seeded file — with a link an agent could have made
// where the write goes: a symlink as the last component, a hard link to a file outside, a
// symlink as the folder, a symlink above a folder the engine creates. Nothing lands outside,
// and the result says what happened: the link was replaced (never written through) or the write
// was refused with an error naming the link.

#include "audit.h"
#include "confinedopen.h"
#include "errors.h"
#include "flushbase.h"
#include "localsandboxbackend.h"
#include "offload.h"
#include "sandbox.h"
#include "treecopy.h"
#include "workspacefs.h"

#include <QCryptographicHash>
#include <QDirIterator>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>
#include <memory>

#include <sys/stat.h>
#include <unistd.h>

using namespace elsai;

namespace {

enum class Attack { FinalSymlink, FinalHardLink, FolderSymlink, SymlinkAboveNewFolder };
/// Replaced: the write succeeded and the link is now a regular file of its own.
/// Refused: an error, nothing written. Beside: a conflict file went to a free name beside it.
enum class Outcome { Replaced, Refused, Beside };

QByteArray bytesOf(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool put(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

struct stat lstatOf(const QString &path)
{
    struct stat st = {};
    ::lstat(QFile::encodeName(path).constData(), &st);
    return st;
}

/// Every entry below `root` with its type and a hash of its content: what must not change.
QStringList snapshot(const QString &root)
{
    QStringList out;
    QDirIterator it(root, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString p = it.next();
        const struct stat st = lstatOf(p);
        QString line = p.mid(root.size()) + QStringLiteral(" mode=%1").arg(st.st_mode, 0, 8);
        if (S_ISREG(st.st_mode))
            line +=
                u' ' + QString::fromLatin1(
                           QCryptographicHash::hash(bytesOf(p), QCryptographicHash::Sha1).toHex());
        out << line;
    }
    out.sort();
    return out;
}

} // namespace

Q_DECLARE_METATYPE(Attack)
Q_DECLARE_METATYPE(Outcome)

class TestHostWrites : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase_data();
    void init();
    void cleanup();
    void linkAtEngineWrite_data();
    void linkAtEngineWrite();
    void auditLogOnAStandardStream_data();
    void auditLogOnAStandardStream();

private:
    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_host;    ///< the folder the engine writes in (a workspace for the seed)
    QString m_outside; ///< what no write may touch
    QString m_victim;  ///< a file outside that a link points to
};

void TestHostWrites::initTestCase_data()
{
    QTest::addColumn<bool>("fallback");
    if (confinedOpenat2Available())
        QTest::newRow("openat2") << false;
    QTest::newRow("fallback walk") << true;
}

void TestHostWrites::init()
{
    QFETCH_GLOBAL(bool, fallback);
    setConfinedOpenForceFallback(fallback);
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_host = m_tmp->filePath(QStringLiteral("host"));
    m_outside = m_tmp->filePath(QStringLiteral("outside"));
    m_victim = m_outside + QStringLiteral("/victim.txt");
    QVERIFY(QDir().mkpath(m_host));
    QVERIFY(QDir().mkpath(m_outside + QStringLiteral("/dir")));
    QVERIFY(put(m_victim, "the user's file"));
}

void TestHostWrites::cleanup()
{
    setConfinedOpenForceFallback(false);
    m_tmp.reset();
}

void TestHostWrites::linkAtEngineWrite_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<Attack>("attack");
    QTest::addColumn<Outcome>("outcome");
    const auto row = [](const char *kind, const char *what, Attack a, Outcome o) {
        QTest::addRow("%s: %s", kind, what) << QString::fromLatin1(kind) << a << o;
    };
    const char *finalLink = "symlink as the file";
    const char *hardLink = "hard link to a file outside";
    const char *folderLink = "symlink as its folder";
    const char *aboveNew = "symlink above a folder it creates";
    for (const char *kind : {"download", "flush base"}) {
        row(kind, finalLink, Attack::FinalSymlink, Outcome::Replaced);
        row(kind, hardLink, Attack::FinalHardLink, Outcome::Replaced);
        row(kind, folderLink, Attack::FolderSymlink, Outcome::Refused);
    }
    row("download", aboveNew, Attack::SymlinkAboveNewFolder, Outcome::Refused);
    row("audit log", finalLink, Attack::FinalSymlink, Outcome::Refused);
    row("audit log", hardLink, Attack::FinalHardLink, Outcome::Refused);
    row("audit log", folderLink, Attack::FolderSymlink, Outcome::Refused);
    row("offload folder", "symlink as the folder", Attack::FinalSymlink, Outcome::Refused);
    row("offload folder", folderLink, Attack::FolderSymlink, Outcome::Refused);
    row("offload folder", aboveNew, Attack::SymlinkAboveNewFolder, Outcome::Refused);
    row("flush", finalLink, Attack::FinalSymlink, Outcome::Refused);
    row("flush", hardLink, Attack::FinalHardLink, Outcome::Replaced);
    row("flush", folderLink, Attack::FolderSymlink, Outcome::Refused);
    row("flush", aboveNew, Attack::SymlinkAboveNewFolder, Outcome::Refused);
    row("conflict file", finalLink, Attack::FinalSymlink, Outcome::Beside);
    row("conflict file", hardLink, Attack::FinalHardLink, Outcome::Beside);
    row("seed", finalLink, Attack::FinalSymlink, Outcome::Replaced);
    row("seed", hardLink, Attack::FinalHardLink, Outcome::Replaced);
    row("seed", folderLink, Attack::FolderSymlink, Outcome::Refused);
    row("seed", aboveNew, Attack::SymlinkAboveNewFolder, Outcome::Refused);
}

void TestHostWrites::linkAtEngineWrite()
{
    QFETCH(QString, kind);
    QFETCH(Attack, attack);
    QFETCH(Outcome, outcome);

    // The name the engine writes, and where the link goes.
    const QString name = kind == u"flush base"       ? QStringLiteral(".ws.elsai-flush-base")
                         : kind == u"audit log"      ? QStringLiteral("audit.jsonl")
                         : kind == u"offload folder" ? QStringLiteral("offload")
                         : kind == u"conflict file"  ? QStringLiteral("f.txt.sandbox-conflict")
                                                     : QStringLiteral("f.txt");
    QString rel = name; // below m_host
    const QString link = m_host + QStringLiteral("/link");
    switch (attack) {
    case Attack::FinalSymlink:
        QVERIFY(::symlink(QFile::encodeName(kind == u"offload folder"
                                                ? m_outside + QStringLiteral("/dir")
                                                : m_victim)
                              .constData(),
                          QFile::encodeName(m_host + u'/' + rel).constData()) == 0);
        break;
    case Attack::FinalHardLink:
        QVERIFY(::link(QFile::encodeName(m_victim).constData(),
                       QFile::encodeName(m_host + u'/' + rel).constData()) == 0);
        break;
    case Attack::FolderSymlink:
    case Attack::SymlinkAboveNewFolder:
        QVERIFY(::symlink(QFile::encodeName(m_outside + QStringLiteral("/dir")).constData(),
                          QFile::encodeName(link).constData()) == 0);
        rel = (attack == Attack::FolderSymlink ? QStringLiteral("link/")
                                               : QStringLiteral("link/new/")) +
              name;
        break;
    }
    const QString target = m_host + u'/' + rel;
    const QString folder = QFileInfo(target).path();
    // the flush base sits beside its workspace folder, which must exist
    const QString wsOfBase = folder + QStringLiteral("/ws");
    if (kind == u"flush base")
        QVERIFY(QDir().mkpath(wsOfBase));
    const QStringList outsideBefore = snapshot(m_outside);

    QString error;   // what the engine said, empty on success
    QString written; // the file that holds the content on success
    QByteArray content;
    try {
        if (kind == u"download") {
            const QString wsRoot = m_tmp->filePath(QStringLiteral("ws-download"));
            const SandboxPtr s = Sandbox::create(
                QStringLiteral("dl"), std::make_shared<LocalSandboxBackend>(wsRoot), 600);
            s->start();
            s->addFiles({{QStringLiteral("a.txt"), FileSource::text(QStringLiteral("A"))}});
            s->downloadFiles({{QStringLiteral("a.txt"), target}});
            s->stop(false);
            written = target;
            content = "A";
        } else if (kind == u"flush base") {
            saveFlushBases(wsOfBase, FlushBases{});
            written = target;
            content = "elsai-flush-base";
        } else if (kind == u"audit log") {
            JsonLinesAuditSink sink(target);
            written = target;
        } else if (kind == u"offload folder") {
            FileStorage storage(target);
            const QString handle = storage.store(QStringLiteral("offloaded"));
            written = target + u'/' + handle + QStringLiteral(".txt");
            content = "offloaded";
        } else if (kind == u"flush" || kind == u"conflict file") {
            const QString wsRoot = m_tmp->filePath(QStringLiteral("ws-flush"));
            WorkspaceFs ws(wsRoot);
            const QString wsRel = kind == u"flush" ? rel : QStringLiteral("f.txt");
            ws.writeFile(wsRel, "sandbox version");
            if (kind == u"conflict file")
                QVERIFY(put(m_host + QStringLiteral("/f.txt"), "host version"));
            const NoBaseConflict noBase =
                kind == u"flush" ? NoBaseConflict::Overwrite : NoBaseConflict::KeepBoth;
            const SyncPlan plan =
                planSync(ws, m_host, GlobSet({QStringLiteral("**")}), GlobSet(), nullptr, noBase);
            const WorkspaceSyncResult r = executeSync(plan, ws);
            QStringList errors = r.errors;
            if (kind == u"conflict file") {
                // the conflict is reported; the link was passed over for a free name
                QCOMPARE(r.conflicts, QStringList{QStringLiteral("f.txt")});
                written = m_host + u'/' + r.conflictFiles.value(QStringLiteral("f.txt"));
                QCOMPARE(written, target + QStringLiteral("-2"));
                errors.removeIf([](const QString &e) { return e.startsWith(u"conflict: "); });
            } else {
                written = target;
            }
            error = errors.join(u'\n');
            content = "sandbox version";
        } else if (kind == u"seed") {
            const QString src = m_tmp->filePath(QStringLiteral("project"));
            QVERIFY(put(src + u'/' + rel, "seeded"));
            WorkspaceFs ws(m_host);
            const WorkspaceSeedResult r = executeSeed(planSeed(src, GlobSet()), ws);
            error = r.errors.join(u'\n');
            written = target;
            content = "seeded";
        } else {
            QFAIL("unknown kind");
        }
    } catch (const SandboxError &e) {
        error = e.specName() + QStringLiteral(": ") + e.message();
    }

    QCOMPARE(snapshot(m_outside), outsideBefore);
    QCOMPARE(bytesOf(m_victim), QByteArray("the user's file"));
    switch (outcome) {
    case Outcome::Replaced:
    case Outcome::Beside: {
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const struct stat st = lstatOf(written);
        QVERIFY(S_ISREG(st.st_mode));
        QCOMPARE(st.st_nlink, nlink_t(1));
        QVERIFY2(bytesOf(written).startsWith(content), bytesOf(written).constData());
        if (outcome == Outcome::Beside) // the link itself is left as it was
            QCOMPARE(S_ISLNK(lstatOf(target).st_mode), attack == Attack::FinalSymlink);
        break;
    }
    case Outcome::Refused:
        QVERIFY2(!error.isEmpty(), "the write was not refused");
        QVERIFY2(error.contains(QLatin1String("symbolic link")) ||
                     error.contains(QLatin1String("symlink")) ||
                     error.contains(QLatin1String("hard link")),
                 qPrintable(error));
        QVERIFY(!QFileInfo::exists(m_host + QStringLiteral("/link/new")));
        break;
    }
}

void TestHostWrites::auditLogOnAStandardStream_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("stream");
    QTest::newRow("-") << QStringLiteral("-") << int(STDERR_FILENO);
    QTest::newRow("/dev/stderr") << QStringLiteral("/dev/stderr") << int(STDERR_FILENO);
    QTest::newRow("/dev/fd/2") << QStringLiteral("/dev/fd/2") << int(STDERR_FILENO);
    QTest::newRow("/dev/stdout") << QStringLiteral("/dev/stdout") << int(STDOUT_FILENO);
    QTest::newRow("/proc/self/fd/1") << QStringLiteral("/proc/self/fd/1") << int(STDOUT_FILENO);
}

// The standard streams are links the kernel resolves to our own descriptors: named so, they are
// that stream (not refused as a link, and never cut back as a file of ours would be).
void TestHostWrites::auditLogOnAStandardStream()
{
    QFETCH(QString, path);
    QFETCH(int, stream);
    int pipeFds[2];
    QCOMPARE(::pipe(pipeFds), 0);
    const int saved = ::dup(stream);
    QVERIFY(saved >= 0);
    ::fflush(nullptr);
    QVERIFY(::dup2(pipeFds[1], stream) >= 0);
    QString error;
    {
        try {
            JsonLinesAuditSink sink(path);
            AuditEvent event;
            event.timestamp = QDateTime::currentDateTimeUtc();
            event.event = QStringLiteral("test.stream");
            event.actor = QStringLiteral("host");
            event.outcome = QStringLiteral("ok");
            sink.record(event);
            sink.flush();
        } catch (const SandboxError &e) {
            error = e.message();
        }
    }
    ::dup2(saved, stream);
    ::close(saved);
    ::close(pipeFds[1]);
    QByteArray written;
    char buffer[4096];
    for (ssize_t n; (n = ::read(pipeFds[0], buffer, sizeof buffer)) > 0;)
        written.append(buffer, n);
    ::close(pipeFds[0]);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY2(written.contains("\"test.stream\""), written.constData());
}

QTEST_GUILESS_MAIN(TestHostWrites)
#include "tst_hostwrites.moc"
