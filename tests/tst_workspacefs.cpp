// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Hostile-input tests of WorkspaceFs (SECURITY.md, "The hostile paths", P1-P11). Every test runs
// twice through initTestCase_data(): once with openat2 and once with the openat(O_NOFOLLOW) walk.

#include "atomicwrite.h"
#include "confinedopen.h"
#include "dirlistingcache.h"
#include "errors.h"
#include "tempfiles.h"
#include "workspacefs.h"

#include <QDirIterator>
#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <thread>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using namespace elsai;

namespace {

const QByteArray Canary = "CANARY-OUTSIDE-CONTENT";

// "ok" or the spec name of the error `f` raised.
QString outcome(const std::function<void()> &f)
{
    try {
        f();
        return QStringLiteral("ok");
    } catch (const SandboxError &e) {
        return e.specName();
    }
}

int errnoOf(const std::function<void()> &f)
{
    try {
        f();
    } catch (const OSError &e) {
        return e.errnoValue();
    }
    return 0;
}

void put(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(data), data.size());
}

QByteArray slurp(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

void makeLink(const QString &target, const QString &at)
{
    QVERIFY2(::symlink(QFile::encodeName(target).constData(), QFile::encodeName(at).constData()) ==
                 0,
             qPrintable(at));
}

QString repeated(const QString &s, int n)
{
    return s.repeated(n);
}

int openFdCount()
{
    return int(QDir(QStringLiteral("/proc/self/fd"))
                   .entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)
                   .size());
}

QString deepEscape()
{
    return repeated(QStringLiteral("a/"), 1000) + repeated(QStringLiteral("../"), 1001) +
           QStringLiteral("x");
}

} // namespace

class TestWorkspaceFs : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase_data();
    void init();
    void cleanup();

    void normalize_data();
    void normalize();
    void readRefused_data();
    void readRefused();
    void readInside_data();
    void readInside();
    void literalNames_data();
    void literalNames();
    void specialFiles_data();
    void specialFiles();
    void maxBytes();
    void errorMessages();
    void writeRefused_data();
    void writeRefused();
    void writeCreatesParents();
    void writeOverwrite();
    void writeAtomicKeepsMode();
    void writeLongName();
    void writeBreaksHardLink();
    void listRefused_data();
    void listRefused();
    void listSortedWithTypes();
    void listOverStatLimitHasTypesOnly();
    void listOrderIsQStringOrder();
    void listSortSharedPrefixes();
    void listCacheFollowsChanges();
    void cappedListingsShareTheCache();
    void listCacheNeverKeepsFreshOrStatted();
    void statCases_data();
    void statCases();
    void exists();
    void removeRefused_data();
    void removeRefused();
    void removeEntries();
    void removeRecursiveKeepsOutside();
    void removeDeepChain();
    void makeDirs_data();
    void makeDirs();
    void rename_data();
    void rename();
    void openDirectory_data();
    void openDirectory();
    void resolversAgree();
    void confinedOpenTable_data();
    void confinedOpenTable();
    void raceSwap_data();
    void raceSwap();
    void atomicTempNameFits_data();
    void atomicTempNameFits();
    void symlinkAtomicReplaces();
    void readRange_data();
    void readRange();

private:
    QString ws(const QString &rel) const { return m_ws + u'/' + rel; }
    // _data() runs before init(), so rows name the temporary folder "@base".
    QString expand(QString path) const { return path.replace(QStringLiteral("@base"), m_base); }
    // Every entry outside the workspace with its content or link target.
    QStringList outsideSnapshot() const;

    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_base;
    QString m_ws;
    QString m_out;
    std::unique_ptr<WorkspaceFs> m_fs;
    int m_fdsBefore = 0;
};

void TestWorkspaceFs::initTestCase_data()
{
    QTest::addColumn<bool>("fallback");
    if (confinedOpenat2Available())
        QTest::newRow("openat2") << false;
    else
        qWarning("openat2 is not available here; only the fallback walk is tested");
    QTest::newRow("fallback") << true;
}

// Layout: <base>/ws is the workspace; <base>/x, <base>/out/, <base>/ws-evil/ are outside.
void TestWorkspaceFs::init()
{
    QFETCH_GLOBAL(bool, fallback);
    setConfinedOpenForceFallback(fallback);
    m_fdsBefore = openFdCount();

    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_base = m_tmp->path();
    m_ws = m_base + QStringLiteral("/ws");
    m_out = m_base + QStringLiteral("/out");
    put(m_base + QStringLiteral("/x"), Canary);
    put(m_out + QStringLiteral("/canary.txt"), Canary);
    put(m_base + QStringLiteral("/ws-evil/s"), Canary);

    m_fs = std::make_unique<WorkspaceFs>(m_ws);
    QCOMPARE(m_fs->rootPath(), m_ws);
    put(ws(QStringLiteral("f.txt")), "hello");
    put(ws(QStringLiteral("sub/f")), "inside");
    put(ws(QStringLiteral("sub/inner/g")), "deep");

    makeLink(QStringLiteral("/etc/passwd"), ws(QStringLiteral("l")));
    makeLink(m_out + QStringLiteral("/canary.txt"), ws(QStringLiteral("canary")));
    makeLink(QStringLiteral("../out/canary.txt"), ws(QStringLiteral("rcanary")));
    makeLink(QStringLiteral(".."), ws(QStringLiteral("d")));
    makeLink(QStringLiteral("../ws-evil"), ws(QStringLiteral("evil")));
    makeLink(m_out, ws(QStringLiteral("outdir")));
    makeLink(QStringLiteral("../out"), ws(QStringLiteral("routdir")));
    makeLink(QStringLiteral("../../out/canary.txt"), ws(QStringLiteral("sub/up2")));
    makeLink(QStringLiteral("chain2"), ws(QStringLiteral("chain1")));
    makeLink(QStringLiteral("../out/canary.txt"), ws(QStringLiteral("chain2")));
    makeLink(QStringLiteral("loop2"), ws(QStringLiteral("loop1")));
    makeLink(QStringLiteral("loop1"), ws(QStringLiteral("loop2")));
    makeLink(QStringLiteral("sub/f"), ws(QStringLiteral("rel")));
    makeLink(QStringLiteral("../f.txt"), ws(QStringLiteral("sub/upf")));
    makeLink(QStringLiteral("sub"), ws(QStringLiteral("subl")));
    makeLink(QStringLiteral("../created.txt"), ws(QStringLiteral("new")));
    makeLink(m_base + QStringLiteral("/created-abs.txt"), ws(QStringLiteral("newabs")));
    makeLink(QStringLiteral("../newdir"), ws(QStringLiteral("newdirl")));
    makeLink(QStringLiteral("missing-inside"), ws(QStringLiteral("dangling-inside")));
}

void TestWorkspaceFs::cleanup()
{
    setConfinedOpenForceFallback(false);
    m_fs.reset();
    m_tmp.reset();
    QCOMPARE(openFdCount(), m_fdsBefore); // no fd leaked, on success or on error paths
}

QStringList TestWorkspaceFs::outsideSnapshot() const
{
    QStringList entries;
    QDirIterator it(m_base, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        if (path == m_ws || path.startsWith(m_ws + u'/'))
            continue;
        const QFileInfo info = it.fileInfo();
        const QString what = info.isSymLink() ? QStringLiteral("-> ") + info.symLinkTarget()
                             : info.isDir()   ? QStringLiteral("<dir>")
                                              : QString::fromUtf8(slurp(path));
        entries.append(path + QStringLiteral(": ") + what);
    }
    entries.sort();
    return entries;
}

void TestWorkspaceFs::normalize_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("expected"); // canonical form, or "!<ErrorName>"
    QTest::addColumn<bool>("wantsDir");

    // clang-format off
    QTest::newRow("plain") << "a/b" << "a/b" << false;
    QTest::newRow("dot") << "." << "" << true;
    QTest::newRow("dot-slash") << "./" << "" << true;
    QTest::newRow("double-slash") << "a//b" << "a/b" << false;
    QTest::newRow("dot-segments") << "./a/./b" << "a/b" << false;
    QTest::newRow("trailing-slash") << "f.txt/" << "f.txt" << true;
    QTest::newRow("trailing-dot") << "a/." << "a" << true;
    QTest::newRow("tilde") << "~/x" << "~/x" << false;
    QTest::newRow("dash-rf") << "-rf" << "-rf" << false;
    QTest::newRow("percent-encoded") << "%2e%2e/x" << "%2e%2e/x" << false;
    QTest::newRow("backslash") << "..\\x" << "..\\x" << false;
    QTest::newRow("three-dots") << ".../x" << ".../x" << false;
    QTest::newRow("max-component") << QString(255, u'a') << QString(255, u'a') << false;
    QTest::newRow("empty") << "" << "!ValueError" << false;
    QTest::newRow("nul") << QStringLiteral("a%1b").arg(QChar(u'\0')) << "!ValueError" << false;
    QTest::newRow("nul-after-dotdot")
        << QStringLiteral("../%1").arg(QChar(u'\0')) << "!ValueError" << false;
    QTest::newRow("dotdot") << ".." << "!PermissionError" << false;
    QTest::newRow("dotdot-prefix") << "../x" << "!PermissionError" << false;
    QTest::newRow("dotdot-nested") << "a/../../x" << "!PermissionError" << false;
    QTest::newRow("dotdot-balanced") << "a/../b" << "!PermissionError" << false;
    QTest::newRow("dotdot-deep") << deepEscape() << "!PermissionError" << false;
    QTest::newRow("absolute") << "/etc/passwd" << "!PermissionError" << false;
    QTest::newRow("absolute-double-slash") << "//etc/passwd" << "!PermissionError" << false;
    QTest::newRow("long-component") << QString(256, u'a') << "!OSError" << false;
    QTest::newRow("long-multibyte-component") << QString(128, u'\u00e9') << "!OSError" << false;
    QTest::newRow("long-path") << repeated(QStringLiteral("ab/"), 1700) << "!OSError" << false;
    // clang-format on
}

void TestWorkspaceFs::normalize()
{
    QFETCH(QString, input);
    QFETCH(QString, expected);
    QFETCH(bool, wantsDir);

    if (expected.startsWith(u'!')) {
        QCOMPARE(outcome([&] { WorkspaceFs::normalize(input); }), expected.mid(1));
        if (expected == QStringLiteral("!OSError"))
            QCOMPARE(errnoOf([&] { WorkspaceFs::normalize(input); }), ENAMETOOLONG);
        return;
    }
    bool dir = !wantsDir;
    QCOMPARE(WorkspaceFs::normalize(input, &dir), expected);
    QCOMPARE(dir, wantsDir);
}

void TestWorkspaceFs::readRefused_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("error");

    const QString perm = QStringLiteral("PermissionError");
    // clang-format off
    QTest::newRow("dotdot") << "../x" << perm;
    QTest::newRow("dotdot-nested") << "a/../../x" << perm;
    QTest::newRow("dotdot-deep") << deepEscape() << perm;
    QTest::newRow("absolute") << "/etc/passwd" << perm;
    QTest::newRow("absolute-outside") << QStringLiteral("@base/x") << perm;
    QTest::newRow("prefix-sibling") << "../ws-evil/s" << perm;
    QTest::newRow("prefix-sibling-absolute") << QStringLiteral("@base/ws-evil/s") << perm;
    QTest::newRow("prefix-sibling-symlink") << "evil/s" << perm;
    QTest::newRow("symlink-etc-passwd") << "l" << perm;
    QTest::newRow("symlink-absolute") << "canary" << perm;
    QTest::newRow("symlink-relative-escape") << "rcanary" << perm;
    QTest::newRow("symlink-nested-escape") << "sub/up2" << perm;
    QTest::newRow("symlink-chain-escape") << "chain1" << perm;
    QTest::newRow("symlink-loop") << "loop1" << perm;
    QTest::newRow("dir-symlink-dotdot") << "d/x" << perm;
    QTest::newRow("dir-symlink-dotdot-back-in") << "d/ws/f.txt" << perm;
    QTest::newRow("dir-symlink-absolute") << "outdir/canary.txt" << perm;
    QTest::newRow("dir-symlink-relative") << "routdir/canary.txt" << perm;
    QTest::newRow("dangling-symlink") << "new" << perm;
    QTest::newRow("nul") << QStringLiteral("f.txt%1/../../x").arg(QChar(u'\0')) << "ValueError";
    QTest::newRow("empty") << "" << "ValueError";
    QTest::newRow("dot") << "." << "IsADirectoryError";
    QTest::newRow("folder") << "sub" << "IsADirectoryError";
    QTest::newRow("trailing-slash-file") << "f.txt/" << "NotADirectoryError";
    QTest::newRow("file-as-folder") << "f.txt/x" << "NotADirectoryError";
    QTest::newRow("missing") << "nope" << "FileNotFoundError";
    QTest::newRow("dangling-inside") << "dangling-inside" << "FileNotFoundError";
    QTest::newRow("long-component") << QString(256, u'a') << "OSError";
    QTest::newRow("long-path") << repeated(QStringLiteral("ab/"), 1700) << "OSError";
    // clang-format on
}

void TestWorkspaceFs::readRefused()
{
    QFETCH(QString, path);
    path = expand(path);
    QFETCH(QString, error);

    QByteArray got;
    QCOMPARE(outcome([&] { got = m_fs->readFile(path); }), error);
    QVERIFY(!got.contains(Canary));
}

void TestWorkspaceFs::readInside_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("content");

    QTest::newRow("plain") << "f.txt" << QByteArray("hello");
    QTest::newRow("rel-symlink") << "rel" << QByteArray("inside");
    QTest::newRow("rel-symlink-dotdot-inside") << "sub/upf" << QByteArray("hello");
    QTest::newRow("folder-symlink-inside") << "subl/f" << QByteArray("inside");
    QTest::newRow("folder-symlink-dotdot-inside") << "subl/upf" << QByteArray("hello");
    QTest::newRow("double-slash") << "sub//inner//g" << QByteArray("deep");
    QTest::newRow("dot-segments") << "./sub/./inner/./g" << QByteArray("deep");
}

void TestWorkspaceFs::readInside()
{
    QFETCH(QString, path);
    path = expand(path);
    QFETCH(QByteArray, content);
    QCOMPARE(m_fs->readFile(path), content);
}

void TestWorkspaceFs::literalNames_data()
{
    QTest::addColumn<QString>("path");

    QTest::newRow("percent-encoded") << "%2e%2e/x";
    QTest::newRow("backslash") << "..\\x";
    QTest::newRow("tilde") << "~/x";
    QTest::newRow("dash-rf") << "-rf";
    QTest::newRow("three-dots") << "...";
    QTest::newRow("unicode") << QStringLiteral("caf\u00e9/\u6587\u4ef6.txt");
}

void TestWorkspaceFs::literalNames()
{
    QFETCH(QString, path);
    path = expand(path);
    const QStringList before = outsideSnapshot();

    m_fs->writeFile(path, "literal");
    QCOMPARE(slurp(ws(path)), QByteArray("literal"));
    QCOMPARE(m_fs->readFile(path), QByteArray("literal"));
    QVERIFY(m_fs->exists(path));
    QCOMPARE(outsideSnapshot(), before);
    QCOMPARE(slurp(m_base + QStringLiteral("/x")), Canary);
}

void TestWorkspaceFs::specialFiles_data()
{
    QTest::addColumn<QString>("path");

    QTest::newRow("fifo") << "fifo";
    QTest::newRow("fifo-via-symlink") << "fifo-link";
    QTest::newRow("unix-socket") << "sock";
}

void TestWorkspaceFs::specialFiles()
{
    QFETCH(QString, path);
    path = expand(path);

    QCOMPARE(::mkfifo(QFile::encodeName(ws(QStringLiteral("fifo"))).constData(), 0644), 0);
    makeLink(QStringLiteral("fifo"), ws(QStringLiteral("fifo-link")));
    const int sock = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    QVERIFY(sock >= 0);
    const auto closeSock = qScopeGuard([sock] { ::close(sock); });
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const QByteArray sockPath = QFile::encodeName(ws(QStringLiteral("sock")));
    QVERIFY(sockPath.size() < qsizetype(sizeof addr.sun_path));
    qstrcpy(addr.sun_path, sockPath.constData());
    QCOMPARE(::bind(sock, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
    QCOMPARE(::listen(sock, 1), 0);

    QElapsedTimer timer;
    timer.start();
    QCOMPARE(outcome([&] { m_fs->readFile(path); }), QStringLiteral("OSError"));
    QCOMPARE(outcome([&] { m_fs->listDir(path); }), QStringLiteral("NotADirectoryError"));
    QVERIFY2(timer.elapsed() < 5000, "reading a special file blocked");
    // lstat still describes it without opening it.
    QCOMPARE(m_fs->stat(QStringLiteral("fifo")).type, FileInfo::Type::Other);
}

void TestWorkspaceFs::maxBytes()
{
    QCOMPARE(m_fs->readFile(QStringLiteral("f.txt"), 5), QByteArray("hello"));
    QCOMPARE(outcome([&] { m_fs->readFile(QStringLiteral("f.txt"), 4); }),
             QStringLiteral("OSError"));
    QCOMPARE(errnoOf([&] { m_fs->readFile(QStringLiteral("f.txt"), 4); }), EFBIG);
    QCOMPARE(m_fs->readFile(QStringLiteral("f.txt"), -1), QByteArray("hello"));
}

void TestWorkspaceFs::errorMessages()
{
    const auto message = [](const std::function<void()> &f) {
        try {
            f();
        } catch (const SandboxError &e) {
            return e.message();
        }
        return QString();
    };
    QCOMPARE(message([&] { m_fs->readFile(QStringLiteral("l")); }),
             QStringLiteral("'l' resolves outside the workspace (symbolic link)"));
    QCOMPARE(message([&] { m_fs->listDir(QStringLiteral("d")); }),
             QStringLiteral("'d' resolves outside the workspace (symbolic link)"));
    QVERIFY(message([&] { m_fs->readFile(QStringLiteral("/etc/passwd")); })
                .contains(QStringLiteral("absolute paths are not allowed; use a "
                                         "workspace-relative path")));
    QVERIFY(message([&] {
                m_fs->readFile(QStringLiteral("a/../../x"));
            }).contains(QStringLiteral("escapes the workspace")));
    // A 5,000-byte path is not echoed whole.
    QVERIFY(message([&] { m_fs->readFile(repeated(QStringLiteral("ab/"), 1700)); }).size() < 300);
}

void TestWorkspaceFs::writeRefused_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("error");

    const QString perm = QStringLiteral("PermissionError");
    QTest::newRow("dotdot") << "../created.txt" << perm;
    QTest::newRow("dotdot-deep") << deepEscape() << perm;
    QTest::newRow("absolute-tmp") << QStringLiteral("%1/elsai-p2-%2")
                                         .arg(QDir::tempPath())
                                         .arg(QRandomGenerator::global()->generate64(), 0, 16)
                                  << perm;
    // clang-format off
    QTest::newRow("absolute-outside") << QStringLiteral("@base/created.txt") << perm;
    QTest::newRow("prefix-sibling") << "../ws-evil/new" << perm;
    QTest::newRow("prefix-sibling-symlink") << "evil/new" << perm;
    QTest::newRow("dangling-symlink") << "new" << perm;
    QTest::newRow("dangling-symlink-absolute") << "newabs" << perm;
    QTest::newRow("symlink-inside") << "rel" << perm;
    QTest::newRow("symlink-outside-existing") << "canary" << perm;
    QTest::newRow("dir-symlink-absolute") << "outdir/new.txt" << perm;
    QTest::newRow("dir-symlink-relative") << "routdir/new.txt" << perm;
    QTest::newRow("dir-symlink-dotdot") << "d/new.txt" << perm;
    QTest::newRow("dir-symlink-nested-create") << "outdir/a/b/new.txt" << perm;
    QTest::newRow("dangling-dir-symlink") << "newdirl/new.txt" << perm;
    QTest::newRow("nul") << QStringLiteral("a%1b").arg(QChar(u'\0')) << "ValueError";
    QTest::newRow("empty") << "" << "ValueError";
    QTest::newRow("dot") << "." << "IsADirectoryError";
    QTest::newRow("folder") << "sub" << "IsADirectoryError";
    QTest::newRow("trailing-slash") << "f.txt/" << "IsADirectoryError";
    QTest::newRow("file-as-folder") << "f.txt/x" << "NotADirectoryError";
    QTest::newRow("long-component") << QString(256, u'a') << "OSError";
    QTest::newRow("long-path") << repeated(QStringLiteral("ab/"), 1700) << "OSError";
    // clang-format on
}

void TestWorkspaceFs::writeRefused()
{
    QFETCH(QString, path);
    path = expand(path);
    QFETCH(QString, error);

    const QStringList before = outsideSnapshot();
    QCOMPARE(outcome([&] { m_fs->writeFile(path, Canary); }), error);
    QCOMPARE(outsideSnapshot(), before);
    if (path.startsWith(u'/'))
        QVERIFY(!QFileInfo::exists(path));
    QCOMPARE(slurp(ws(QStringLiteral("f.txt"))), QByteArray("hello"));
    QCOMPARE(QFileInfo(ws(QStringLiteral("rel"))).symLinkTarget(), ws(QStringLiteral("sub/f")));
}

void TestWorkspaceFs::writeCreatesParents()
{
    m_fs->writeFile(QStringLiteral("a/b/c/new.txt"), "x");
    QCOMPARE(slurp(ws(QStringLiteral("a/b/c/new.txt"))), QByteArray("x"));
    // Parents reached through a folder link that stays inside are fine.
    m_fs->writeFile(QStringLiteral("subl/n1/n2.txt"), "y");
    QCOMPARE(slurp(ws(QStringLiteral("sub/n1/n2.txt"))), QByteArray("y"));
    // A dangling folder link inside the workspace is not turned into a folder.
    QCOMPARE(outcome([&] { m_fs->writeFile(QStringLiteral("dangling-inside/x"), "z"); }),
             QStringLiteral("FileNotFoundError"));
    QVERIFY(!QFileInfo::exists(ws(QStringLiteral("missing-inside"))));
}

void TestWorkspaceFs::writeOverwrite()
{
    QCOMPARE(outcome([&] { m_fs->writeFile(QStringLiteral("f.txt"), "other", false); }),
             QStringLiteral("FileExistsError"));
    QCOMPARE(slurp(ws(QStringLiteral("f.txt"))), QByteArray("hello"));

    m_fs->writeFile(QStringLiteral("f.txt"), "replaced");
    QCOMPARE(m_fs->readFile(QStringLiteral("f.txt")), QByteArray("replaced"));

    m_fs->writeFile(QStringLiteral("fresh.txt"), "first", false);
    QCOMPARE(slurp(ws(QStringLiteral("fresh.txt"))), QByteArray("first"));
    m_fs->writeFile(QStringLiteral("empty.txt"), QByteArray());
    QCOMPARE(m_fs->stat(QStringLiteral("empty.txt")).size, std::optional<qint64>(0));
}

void TestWorkspaceFs::writeAtomicKeepsMode()
{
    const QByteArray existing = QFile::encodeName(ws(QStringLiteral("f.txt")));
    QCOMPARE(::chmod(existing.constData(), 0640), 0);
    m_fs->writeFile(QStringLiteral("f.txt"), "new content", true, 0600);
    struct stat st;
    QCOMPARE(::stat(existing.constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0640));

    m_fs->writeFile(QStringLiteral("private.txt"), "secret", true, 0600);
    QCOMPARE(::stat(QFile::encodeName(ws(QStringLiteral("private.txt"))).constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0600));

    const QStringList left = QDir(m_ws).entryList(QDir::AllEntries | QDir::Hidden | QDir::System);
    QVERIFY2(left.filter(QStringLiteral("elsai-tmp")).isEmpty(), qPrintable(left.join(u' ')));
}

void TestWorkspaceFs::writeLongName()
{
    // The temp name must be shortened to fit NAME_MAX.
    const QString ascii(255, u'n');
    m_fs->writeFile(ascii, "a");
    QCOMPARE(m_fs->readFile(ascii), QByteArray("a"));
    const QString euro(85, u'\u20ac'); // 255 bytes in UTF-8
    m_fs->writeFile(euro, "b");
    QCOMPARE(slurp(ws(euro)), QByteArray("b"));
    const QStringList left = QDir(m_ws).entryList(QDir::AllEntries | QDir::Hidden | QDir::System);
    QVERIFY(left.filter(QStringLiteral("elsai-tmp")).isEmpty());
}

void TestWorkspaceFs::writeBreaksHardLink()
{
    const QString outside = m_out + QStringLiteral("/hl-target");
    put(outside, "ORIGINAL");
    QCOMPARE(::link(QFile::encodeName(outside).constData(),
                    QFile::encodeName(ws(QStringLiteral("hl"))).constData()),
             0);
    m_fs->writeFile(QStringLiteral("hl"), "AGENT");
    QCOMPARE(slurp(outside), QByteArray("ORIGINAL"));
    QCOMPARE(m_fs->readFile(QStringLiteral("hl")), QByteArray("AGENT"));
}

void TestWorkspaceFs::listRefused_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("error");

    const QString perm = QStringLiteral("PermissionError");
    // clang-format off
    QTest::newRow("dotdot") << ".." << perm;
    QTest::newRow("dotdot-deep") << deepEscape() << perm;
    QTest::newRow("absolute") << "/etc" << perm;
    QTest::newRow("prefix-sibling") << "../ws-evil" << perm;
    QTest::newRow("prefix-sibling-absolute") << QStringLiteral("@base/ws-evil") << perm;
    QTest::newRow("prefix-sibling-symlink") << "evil" << perm;
    QTest::newRow("dir-symlink-dotdot") << "d" << perm;
    QTest::newRow("dir-symlink-dotdot-slash") << "d/" << perm;
    QTest::newRow("dir-symlink-absolute") << "outdir" << perm;
    QTest::newRow("dir-symlink-relative") << "routdir" << perm;
    QTest::newRow("empty") << "" << "ValueError";
    QTest::newRow("file") << "f.txt" << "NotADirectoryError";
    QTest::newRow("missing") << "nope" << "FileNotFoundError";
    // clang-format on
}

void TestWorkspaceFs::listRefused()
{
    QFETCH(QString, path);
    path = expand(path);
    QFETCH(QString, error);

    QList<FileInfo> entries;
    QCOMPARE(outcome([&] { entries = m_fs->listDir(path); }), error);
    QVERIFY(entries.isEmpty());
}

void TestWorkspaceFs::listSortedWithTypes()
{
    put(ws(QStringLiteral("lst/b.txt")), "abc");
    put(ws(QStringLiteral("lst/C")), "");
    QVERIFY(QDir().mkpath(ws(QStringLiteral("lst/a"))));
    makeLink(QStringLiteral("b.txt"), ws(QStringLiteral("lst/link")));
    QCOMPARE(::mkfifo(QFile::encodeName(ws(QStringLiteral("lst/fifo"))).constData(), 0644), 0);

    const QList<FileInfo> entries = m_fs->listDir(QStringLiteral("./lst//"));
    QStringList paths;
    for (const FileInfo &e : entries)
        paths.append(e.path);
    QCOMPARE(paths, QStringList({QStringLiteral("lst/C"), QStringLiteral("lst/a"),
                                 QStringLiteral("lst/b.txt"), QStringLiteral("lst/fifo"),
                                 QStringLiteral("lst/link")}));
    QCOMPARE(entries[0].type, FileInfo::Type::File);
    QCOMPARE(entries[0].size, std::optional<qint64>(0));
    QCOMPARE(entries[1].type, FileInfo::Type::Directory);
    QVERIFY(entries[1].isDir);
    QVERIFY(!entries[1].size);
    QCOMPARE(entries[2].size, std::optional<qint64>(3));
    QVERIFY(!entries[2].isDir);
    QVERIFY(entries[2].mtimeMs > 0);
    QCOMPARE(entries[3].type, FileInfo::Type::Other);
    QCOMPARE(entries[4].type, FileInfo::Type::Symlink);
    QVERIFY(!entries[4].isDir);

    // The root lists with bare names; a folder link that stays inside can be listed.
    const QList<FileInfo> root = m_fs->listDir(QStringLiteral("."));
    QVERIFY(std::any_of(root.cbegin(), root.cend(),
                        [](const FileInfo &e) { return e.path == QStringLiteral("f.txt"); }));
    const QList<FileInfo> viaLink = m_fs->listDir(QStringLiteral("subl"));
    QCOMPARE(viaLink.size(), 4); // f, inner, up2, upf
    QCOMPARE(viaLink.first().path, QStringLiteral("subl/f"));
}

void TestWorkspaceFs::listOverStatLimitHasTypesOnly()
{
    put(ws(QStringLiteral("lst/b.txt")), "abc");
    QVERIFY(QDir().mkpath(ws(QStringLiteral("lst/a"))));
    makeLink(QStringLiteral("b.txt"), ws(QStringLiteral("lst/link")));
    QCOMPARE(::mkfifo(QFile::encodeName(ws(QStringLiteral("lst/fifo"))).constData(), 0644), 0);

    const QList<FileInfo> full = m_fs->listDir(QStringLiteral("lst"));
    QCOMPARE(m_fs->listDir(QStringLiteral("lst"), full.size()).at(1).size,
             std::optional<qint64>(3)); // at the limit: stat'ed
    const QList<FileInfo> brief = m_fs->listDir(QStringLiteral("lst"), full.size() - 1);
    QCOMPARE(brief.size(), full.size());
    for (qsizetype i = 0; i < full.size(); ++i) {
        QCOMPARE(brief[i].path, full[i].path);
        QCOMPARE(brief[i].type, full[i].type);
        QCOMPARE(brief[i].isDir, full[i].isDir);
        QVERIFY(!brief[i].size);
        QCOMPARE(brief[i].mtimeMs, 0);
    }
    QCOMPARE(brief[0].type, FileInfo::Type::Directory);
    QCOMPARE(brief[1].type, FileInfo::Type::File);
    QCOMPARE(brief[2].type, FileInfo::Type::Other);
    QCOMPARE(brief[3].type, FileInfo::Type::Symlink);
    QVERIFY_THROWS_EXCEPTION(PermissionError, m_fs->listDir(QStringLiteral("outdir"), 0));
}

// ASCII names are sorted as bytes before the paths are built; any other name falls back to
// QString order (UTF-16), which differs from byte order for characters beyond the BMP.
void TestWorkspaceFs::listOrderIsQStringOrder()
{
    const QStringList names{QStringLiteral("b"),
                            QStringLiteral("B"),
                            QStringLiteral("a-1"),
                            QStringLiteral("a_1"),
                            QStringLiteral("a1"),
                            QString::fromUtf8("\xee\x80\x80"),     // U+E000
                            QString::fromUtf8("\xf0\x9f\x98\x80"), // U+1F600
                            QString::fromUtf8("\xc3\xa9")};        // é
    for (const QString &name : names)
        put(ws(QStringLiteral("ord/") + name), "x");
    QStringList expected;
    for (const QString &name : names)
        expected.append(QStringLiteral("ord/") + name);
    std::sort(expected.begin(), expected.end());
    for (const qsizetype limit : {qsizetype(-1), qsizetype(0)}) {
        QStringList paths;
        for (const FileInfo &e : m_fs->listDir(QStringLiteral("ord"), limit))
            paths.append(e.path);
        QCOMPARE(paths, expected);
    }
    m_fs->remove(QString::fromUtf8("ord/\xf0\x9f\x98\x80"));
    m_fs->remove(QString::fromUtf8("ord/\xee\x80\x80"));
    m_fs->remove(QString::fromUtf8("ord/\xc3\xa9"));
    QStringList ascii;
    for (const FileInfo &e : m_fs->listDir(QStringLiteral("ord"), 0))
        ascii.append(e.path);
    QCOMPARE(ascii, (QStringList{QStringLiteral("ord/B"), QStringLiteral("ord/a-1"),
                                 QStringLiteral("ord/a1"), QStringLiteral("ord/a_1"),
                                 QStringLiteral("ord/b")}));
}

// The sort keys on the 8 bytes after the prefix all names share: names that end inside the
// key, share more than 8 bytes after it, or differ only at the end must still come out in
// strcmp order.
void TestWorkspaceFs::listSortSharedPrefixes()
{
    QStringList names{QStringLiteral("file-"),
                      QStringLiteral("file-0"),
                      QStringLiteral("file-00"),
                      QStringLiteral("file-0123456789-a"),
                      QStringLiteral("file-0123456789-b"),
                      QStringLiteral("file-0123456789"),
                      QStringLiteral("file-01234567"),
                      QStringLiteral("file-01234568"),
                      QStringLiteral("file-1"),
                      QStringLiteral("file-~"),
                      QStringLiteral("file-A")};
    auto *rng = QRandomGenerator::global();
    for (int i = 0; i < 300; ++i) {
        QString name = QStringLiteral("file-");
        for (int n = int(rng->bounded(1, 20)); n > 0; --n) {
            const char c = char(rng->bounded(0x21, 0x7f)); // printable ASCII
            name += QLatin1Char(c == '/' ? 'x' : c);
        }
        if (!names.contains(name))
            names.append(name);
    }
    for (const QString &name : std::as_const(names))
        put(ws(QStringLiteral("keys/") + name), "x");
    names.sort();
    for (const qsizetype limit : {qsizetype(-1), qsizetype(0)}) {
        const DirListing listing = m_fs->listDirCompact(QStringLiteral("keys"), limit);
        QStringList got;
        for (const DirListing::Entry &e : listing.entries)
            got.append(QString::fromUtf8(listing.name(e)));
        QCOMPARE(got, names);
        QCOMPARE(listing.path(listing.entries.front()), QStringLiteral("keys/file-"));
    }
}

namespace {
// Waits until the folder's ctime is old enough for DirListingCache to keep its listing (setup
// only: nothing is asserted about time).
bool waitUntilSettled(const QString &path)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 10000) {
        struct stat st;
        timespec now{};
        if (::stat(QFile::encodeName(path).constData(), &st) != 0)
            return false;
        clock_gettime(CLOCK_REALTIME, &now);
        const qint64 age = (qint64(now.tv_sec) - st.st_ctim.tv_sec) * 1000000000 +
                           (now.tv_nsec - st.st_ctim.tv_nsec);
        if (age > 2 * DirListingCache::kRacyMarginNs)
            return true;
        QThread::msleep(20);
    }
    return false;
}

/// Whether listings of `folder` may be kept (its file system's timestamps are trusted).
bool listingsKeptIn(const QString &folder)
{
    const int fd = ::open(QFile::encodeName(folder).constData(), O_RDONLY | O_DIRECTORY);
    const bool trusted = fd >= 0 && DirListingCache::trustedFileSystem(fd);
    if (fd >= 0)
        ::close(fd);
    return trusted;
}

QStringList listed(const DirListing &listing)
{
    QStringList lines;
    for (const DirListing::Entry &e : listing.entries)
        lines.append(listing.path(e) +
                     (e.type == FileInfo::Type::Directory ? QStringLiteral("/") : QString()));
    return lines;
}
} // namespace

// A reused listing is never stale: every kind of entry change right after a reuse shows.
void TestWorkspaceFs::listCacheFollowsChanges()
{
    if (!DirListingCache::enabled())
        QSKIP("ELSAI_LIST_CACHE=0");
    if (!listingsKeptIn(m_ws))
        QSKIP("the test folder is not on ext4, XFS, Btrfs or tmpfs: listings are not kept");
    for (int i = 0; i < 40; ++i)
        put(ws(QStringLiteral("big/f%1").arg(i, 2, 10, QLatin1Char('0'))), "x");
    QVERIFY(waitUntilSettled(ws(QStringLiteral("big"))));
    const quint64 hits = m_fs->listingCacheHits();
    const QStringList first = listed(m_fs->listDirCompact(QStringLiteral("big"), 10));
    QCOMPARE(first.size(), 40);
    QCOMPARE(listed(m_fs->listDirCompact(QStringLiteral("./big/"), 10)), first);
    QCOMPARE(m_fs->listingCacheHits(), hits + 1);
    // A reuse keeps the folder's path as asked now, not as first listed.
    QCOMPARE(m_fs->listDirCompact(QStringLiteral("big"), 10).folder, QStringLiteral("big"));
    QCOMPARE(m_fs->listingCacheHits(), hits + 2);
    // A larger limit needs sizes: never answered from the brief listing.
    QVERIFY(m_fs->listDirCompact(QStringLiteral("big"), 100).entries.front().size);

    m_fs->writeFile(QStringLiteral("big/new"), "n"); // within the same clock tick as the reuse
    QStringList now = listed(m_fs->listDirCompact(QStringLiteral("big"), 10));
    QVERIFY(now.contains(QStringLiteral("big/new")));
    m_fs->remove(QStringLiteral("big/f00"));
    now = listed(m_fs->listDirCompact(QStringLiteral("big"), 10));
    QVERIFY(!now.contains(QStringLiteral("big/f00")));
    m_fs->rename(QStringLiteral("big/f01"), QStringLiteral("big/zz"));
    now = listed(m_fs->listDirCompact(QStringLiteral("big"), 10));
    QVERIFY(!now.contains(QStringLiteral("big/f01")));
    QVERIFY(now.contains(QStringLiteral("big/zz")));
    m_fs->remove(QStringLiteral("big/f02"));
    m_fs->makeDirs(QStringLiteral("big/f02"));
    now = listed(m_fs->listDirCompact(QStringLiteral("big"), 10));
    QVERIFY(now.contains(QStringLiteral("big/f02/")));
    // A change made outside WorkspaceFs, after the folder settled again.
    QVERIFY(waitUntilSettled(ws(QStringLiteral("big"))));
    QCOMPARE(listed(m_fs->listDirCompact(QStringLiteral("big"), 10)), now);
    QCOMPARE(listed(m_fs->listDirCompact(QStringLiteral("big"), 10)), now); // reused
    QVERIFY(QDir().rename(ws(QStringLiteral("big/f03")), ws(QStringLiteral("moved-out"))));
    QVERIFY(!listed(m_fs->listDirCompact(QStringLiteral("big"), 10))
                 .contains(QStringLiteral("big/f03")));
    // A folder replaced by another one of the same name is another inode.
    QVERIFY(QDir(ws(QStringLiteral("big"))).removeRecursively());
    put(ws(QStringLiteral("big/only")), "x");
    QCOMPARE(listed(m_fs->listDirCompact(QStringLiteral("big"), 0)),
             QStringList{QStringLiteral("big/only")});
}

// An agent's capped listing (listDirFirst) of a folder within the cap is kept and reused like
// a whole one; a folder over the cap is pruned as it is read and never kept.
void TestWorkspaceFs::cappedListingsShareTheCache()
{
    if (!DirListingCache::enabled())
        QSKIP("ELSAI_LIST_CACHE=0");
    for (int i = 0; i < 40; ++i)
        put(ws(QStringLiteral("capped/f%1").arg(39 - i, 2, 10, QLatin1Char('0'))), "x");
    QVERIFY(waitUntilSettled(ws(QStringLiteral("capped"))));
    const quint64 hits = m_fs->listingCacheHits();
    qint64 total = 0;
    const QStringList all = listed(m_fs->listDirFirst(QStringLiteral("capped"), 100, 10, &total));
    QCOMPARE(total, 40);
    QCOMPARE(all.size(), 40);
    QCOMPARE(all.first(), QStringLiteral("capped/f00"));
    QCOMPARE(all.last(), QStringLiteral("capped/f39"));
    QCOMPARE(m_fs->listingCacheHits(), hits); // a first read
    // Within the cap or below it, from the kept listing when the file system allows keeping.
    total = 0;
    QCOMPARE(listed(m_fs->listDirFirst(QStringLiteral("capped"), 100, 10, &total)), all);
    QCOMPARE(total, 40);
    total = 0;
    QCOMPARE(listed(m_fs->listDirFirst(QStringLiteral("capped"), 3, 10, &total)), all.mid(0, 3));
    QCOMPARE(total, 40);
    if (listingsKeptIn(ws(QStringLiteral("capped"))))
        QCOMPARE(m_fs->listingCacheHits(), hits + 2);
    // Over the cap, read again: the first entries by name, pruned from the stream, never kept.
    m_fs->writeFile(QStringLiteral("capped/a-new-first"), "n");
    for (int cap : {0, 1, 5, 39}) {
        total = 0;
        const QStringList first =
            listed(m_fs->listDirFirst(QStringLiteral("capped"), cap, 10, &total));
        QCOMPARE(total, 41);
        QStringList expected = all;
        expected.prepend(QStringLiteral("capped/a-new-first"));
        QCOMPARE(first, expected.mid(0, cap));
    }
}

void TestWorkspaceFs::listCacheNeverKeepsFreshOrStatted()
{
    for (int i = 0; i < 20; ++i)
        put(ws(QStringLiteral("small/f%1").arg(i)), "x");
    QVERIFY(waitUntilSettled(ws(QStringLiteral("small"))));
    const quint64 hits = m_fs->listingCacheHits();
    // Sizes are stat'ed (at or under the limit): a size can change without the folder changing.
    m_fs->listDirCompact(QStringLiteral("small"), 20);
    m_fs->listDirCompact(QStringLiteral("small"), 20);
    m_fs->listDir(QStringLiteral("small"));
    QCOMPARE(m_fs->listingCacheHits(), hits);
    m_fs->writeFile(QStringLiteral("small/f0"), "longer");
    QCOMPARE(m_fs->listDirCompact(QStringLiteral("small"), 30).entries.front().size,
             std::optional<qint64>(6));
    // A folder changed a moment ago: its ctime could be shared by a change racing the read.
    QElapsedTimer timer;
    timer.start();
    m_fs->writeFile(QStringLiteral("small/fresh"), "x");
    m_fs->listDirCompact(QStringLiteral("small"), 5);
    m_fs->listDirCompact(QStringLiteral("small"), 5);
    if (timer.nsecsElapsed() < DirListingCache::kRacyMarginNs / 2)
        QCOMPARE(m_fs->listingCacheHits(), hits);
    else
        qWarning("the machine was too slow to check the fresh-folder case");
}

void TestWorkspaceFs::statCases_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected"); // a FileInfo::Type name or an error name

    // clang-format off
    QTest::newRow("file") << "f.txt" << "file";
    QTest::newRow("folder") << "sub" << "dir";
    QTest::newRow("root") << "." << "dir";
    QTest::newRow("symlink-outside-not-followed") << "l" << "symlink";
    QTest::newRow("dangling-symlink") << "new" << "symlink";
    QTest::newRow("folder-symlink") << "subl" << "symlink";
    QTest::newRow("folder-symlink-slash") << "subl/" << "dir";
    QTest::newRow("through-inside-link") << "subl/f" << "file";
    QTest::newRow("dotdot") << "../x" << "PermissionError";
    QTest::newRow("absolute") << "/etc/passwd" << "PermissionError";
    QTest::newRow("dir-symlink-dotdot") << "d/x" << "PermissionError";
    QTest::newRow("dir-symlink-absolute") << "outdir/canary.txt" << "PermissionError";
    QTest::newRow("symlink-outside-slash") << "outdir/" << "PermissionError";
    QTest::newRow("trailing-slash-file") << "f.txt/" << "NotADirectoryError";
    QTest::newRow("missing") << "nope" << "FileNotFoundError";
    QTest::newRow("empty") << "" << "ValueError";
    // clang-format on
}

void TestWorkspaceFs::statCases()
{
    QFETCH(QString, path);
    path = expand(path);
    QFETCH(QString, expected);

    FileInfo info;
    const QString result = outcome([&] { info = m_fs->stat(path); });
    if (result != QStringLiteral("ok")) {
        QCOMPARE(result, expected);
        return;
    }
    QCOMPARE(info.toJson().value(QStringLiteral("type")).toString(), expected);
    QCOMPARE(info.path, WorkspaceFs::normalize(path));
    if (expected == QStringLiteral("file"))
        QVERIFY(info.size.has_value());
}

void TestWorkspaceFs::exists()
{
    QVERIFY(m_fs->exists(QStringLiteral("f.txt")));
    QVERIFY(m_fs->exists(QStringLiteral("new"))); // a dangling link exists as a link
    QVERIFY(!m_fs->exists(QStringLiteral("nope")));
    QVERIFY(!m_fs->exists(QStringLiteral("f.txt/x")));
    QVERIFY(!m_fs->exists(QStringLiteral("sub/nope/deeper")));
    QCOMPARE(outcome([&] { m_fs->exists(QStringLiteral("../x")); }),
             QStringLiteral("PermissionError"));
    QCOMPARE(outcome([&] { m_fs->exists(QStringLiteral("d/x")); }),
             QStringLiteral("PermissionError"));
}

void TestWorkspaceFs::removeRefused_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("recursive");
    QTest::addColumn<QString>("error");

    const QString perm = QStringLiteral("PermissionError");
    QTest::newRow("root-dot") << "." << true << perm;
    QTest::newRow("root-dot-slash") << "./" << true << perm;
    QTest::newRow("empty") << "" << true << "ValueError";
    QTest::newRow("dotdot") << ".." << true << perm;
    QTest::newRow("dotdot-file") << "../x" << false << perm;
    QTest::newRow("absolute") << QStringLiteral("@base/x") << false << perm;
    QTest::newRow("prefix-sibling") << "../ws-evil" << true << perm;
    QTest::newRow("dir-symlink-dotdot") << "d/x" << false << perm;
    QTest::newRow("dir-symlink-absolute") << "outdir/canary.txt" << false << perm;
    QTest::newRow("dir-symlink-relative") << "routdir/canary.txt" << true << perm;
    QTest::newRow("folder-not-recursive") << "sub" << false << "IsADirectoryError";
    QTest::newRow("missing") << "nope" << false << "FileNotFoundError";
    QTest::newRow("trailing-slash-file") << "f.txt/" << false << "NotADirectoryError";
}

void TestWorkspaceFs::removeRefused()
{
    QFETCH(QString, path);
    path = expand(path);
    QFETCH(bool, recursive);
    QFETCH(QString, error);

    const QStringList before = outsideSnapshot();
    QCOMPARE(outcome([&] { m_fs->remove(path, recursive); }), error);
    QCOMPARE(outsideSnapshot(), before);
    QVERIFY(QFileInfo::exists(ws(QStringLiteral("sub/inner/g"))));
    QVERIFY(QFileInfo::exists(ws(QStringLiteral("f.txt"))));
}

void TestWorkspaceFs::removeEntries()
{
    const QStringList before = outsideSnapshot();
    m_fs->remove(QStringLiteral("f.txt"));
    QVERIFY(!QFileInfo::exists(ws(QStringLiteral("f.txt"))));
    // Links are removed themselves, never their targets.
    m_fs->remove(QStringLiteral("canary"));
    m_fs->remove(QStringLiteral("outdir"), true);
    m_fs->remove(QStringLiteral("d"), true);
    m_fs->remove(QStringLiteral("new"));
    QVERIFY(!QFileInfo(ws(QStringLiteral("outdir"))).isSymLink());
    QVERIFY(!QFileInfo(ws(QStringLiteral("d"))).isSymLink());
    QVERIFY(!QFileInfo(ws(QStringLiteral("new"))).isSymLink());
    QCOMPARE(outsideSnapshot(), before);
    m_fs->remove(QStringLiteral("sub/"), true);
    QVERIFY(!QFileInfo::exists(ws(QStringLiteral("sub"))));
    QVERIFY(QFileInfo::exists(m_ws));
}

void TestWorkspaceFs::removeRecursiveKeepsOutside()
{
    put(ws(QStringLiteral("tree/a/b/file")), "x");
    makeLink(m_out, ws(QStringLiteral("tree/abs-folder-link")));
    makeLink(QStringLiteral("../../../out"), ws(QStringLiteral("tree/a/rel-folder-link")));
    makeLink(m_out + QStringLiteral("/canary.txt"), ws(QStringLiteral("tree/a/b/file-link")));
    QCOMPARE(::mkfifo(QFile::encodeName(ws(QStringLiteral("tree/a/fifo"))).constData(), 0644), 0);
    const QStringList before = outsideSnapshot();

    m_fs->remove(QStringLiteral("tree"), true);
    QVERIFY(!QFileInfo::exists(ws(QStringLiteral("tree"))));
    QCOMPARE(outsideSnapshot(), before);
    QCOMPARE(slurp(m_out + QStringLiteral("/canary.txt")), Canary);
}

void TestWorkspaceFs::removeDeepChain()
{
    // P8: a chain deeper than remove's bound (and a shallow one within it).
    const auto makeChain = [this](const QString &top, int depth) {
        int fd = ::open(QFile::encodeName(m_ws).constData(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        QVERIFY(fd >= 0);
        QVERIFY(::mkdirat(fd, QFile::encodeName(top).constData(), 0755) == 0);
        int next = ::openat(fd, QFile::encodeName(top).constData(), O_PATH | O_DIRECTORY);
        ::close(fd);
        fd = next;
        for (int i = 0; i < depth && fd >= 0; ++i) {
            QVERIFY(::mkdirat(fd, "d", 0755) == 0);
            next = ::openat(fd, "d", O_PATH | O_DIRECTORY | O_CLOEXEC);
            ::close(fd);
            fd = next;
        }
        QVERIFY(fd >= 0);
        const int file = ::openat(fd, "leaf", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        QVERIFY(file >= 0);
        ::close(file);
        ::close(fd);
    };

    makeChain(QStringLiteral("shallow"), 100);
    m_fs->remove(QStringLiteral("shallow"), true);
    QVERIFY(!m_fs->exists(QStringLiteral("shallow")));

    makeChain(QStringLiteral("deep"), 1000);
    const QString result = outcome([&] { m_fs->remove(QStringLiteral("deep"), true); });
    if (result == QStringLiteral("ok")) {
        QVERIFY(!m_fs->exists(QStringLiteral("deep")));
    } else {
        QCOMPARE(result, QStringLiteral("OSError"));
        QCOMPARE(errnoOf([&] { m_fs->remove(QStringLiteral("deep"), true); }), ENAMETOOLONG);
    }
    // The workspace is still usable afterwards.
    m_fs->writeFile(QStringLiteral("after.txt"), "ok");
    QCOMPARE(m_fs->readFile(QStringLiteral("after.txt")), QByteArray("ok"));
}

void TestWorkspaceFs::makeDirs_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");

    const QString perm = QStringLiteral("PermissionError");
    // clang-format off
    QTest::newRow("nested") << "m/n/o" << "ok";
    QTest::newRow("existing") << "sub/inner" << "ok";
    QTest::newRow("root") << "." << "ok";
    QTest::newRow("through-inside-link") << "subl/made" << "ok";
    QTest::newRow("dotdot") << "../made" << perm;
    QTest::newRow("absolute") << QStringLiteral("@base/made") << perm;
    QTest::newRow("dir-symlink-absolute") << "outdir/made/deeper" << perm;
    QTest::newRow("dir-symlink-dotdot") << "d/made" << perm;
    QTest::newRow("dangling-dir-symlink") << "newdirl/made" << perm;
    QTest::newRow("file-in-the-way") << "f.txt/made" << "NotADirectoryError";
    QTest::newRow("empty") << "" << "ValueError";
    // clang-format on
}

void TestWorkspaceFs::makeDirs()
{
    QFETCH(QString, path);
    path = expand(path);
    QFETCH(QString, expected);

    const QStringList before = outsideSnapshot();
    QCOMPARE(outcome([&] { m_fs->makeDirs(path); }), expected);
    QCOMPARE(outsideSnapshot(), before);
    if (expected == QStringLiteral("ok"))
        QVERIFY(QFileInfo(ws(path)).isDir());
}

void TestWorkspaceFs::rename_data()
{
    QTest::addColumn<QString>("src");
    QTest::addColumn<QString>("dest");
    QTest::addColumn<bool>("overwrite");
    QTest::addColumn<QString>("expected");

    const QString perm = QStringLiteral("PermissionError");
    // clang-format off
    QTest::newRow("simple") << "f.txt" << "g.txt" << false << "ok";
    QTest::newRow("creates-parents") << "f.txt" << "p/q/g.txt" << false << "ok";
    QTest::newRow("folder") << "sub" << "moved" << false << "ok";
    QTest::newRow("link-itself") << "canary" << "canary2" << false << "ok";
    QTest::newRow("exists-no-overwrite") << "f.txt" << "sub/f" << false << "FileExistsError";
    QTest::newRow("exists-overwrite") << "f.txt" << "sub/f" << true << "ok";
    QTest::newRow("missing") << "nope" << "g.txt" << false << "FileNotFoundError";
    QTest::newRow("dest-dotdot") << "f.txt" << "../stolen" << false << perm;
    QTest::newRow("dest-absolute") << "f.txt" << QStringLiteral("@base/stolen") << false
                                   << perm;
    QTest::newRow("dest-dir-symlink") << "f.txt" << "outdir/stolen" << false << perm;
    QTest::newRow("dest-dir-symlink-relative") << "f.txt" << "routdir/stolen" << true << perm;
    QTest::newRow("dest-prefix-sibling") << "f.txt" << "evil/stolen" << false << perm;
    QTest::newRow("src-dir-symlink") << "d/x" << "got" << false << perm;
    QTest::newRow("src-dir-symlink-absolute") << "outdir/canary.txt" << "got" << false << perm;
    QTest::newRow("src-root") << "." << "moved" << false << perm;
    QTest::newRow("dest-root") << "f.txt" << "." << true << perm;
    QTest::newRow("src-empty") << "" << "g.txt" << false << "ValueError";
    // clang-format on
}

void TestWorkspaceFs::rename()
{
    QFETCH(QString, src);
    src = expand(src);
    QFETCH(QString, dest);
    dest = expand(dest);
    QFETCH(bool, overwrite);
    QFETCH(QString, expected);

    const QStringList before = outsideSnapshot();
    const QByteArray srcContent = slurp(ws(src));
    QCOMPARE(outcome([&] { m_fs->rename(src, dest, overwrite); }), expected);
    QCOMPARE(outsideSnapshot(), before);
    if (expected == QStringLiteral("ok")) {
        QVERIFY(!QFileInfo(ws(src)).exists() && !QFileInfo(ws(src)).isSymLink());
        QVERIFY(QFileInfo(ws(dest)).exists() || QFileInfo(ws(dest)).isSymLink());
        if (QFileInfo(ws(dest)).isFile() && !QFileInfo(ws(dest)).isSymLink())
            QCOMPARE(slurp(ws(dest)), srcContent);
    } else if (expected == QStringLiteral("FileExistsError")) {
        QCOMPARE(slurp(ws(src)), srcContent);
        QCOMPARE(slurp(ws(dest)), QByteArray("inside"));
    }
}

void TestWorkspaceFs::openDirectory_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("hostPath"); // the folder the fd must refer to, or an error name

    // clang-format off
    QTest::newRow("root") << "." << "@base/ws";
    QTest::newRow("folder") << "sub/inner" << "@base/ws/sub/inner";
    QTest::newRow("folder-symlink-inside") << "subl" << "@base/ws/sub";
    QTest::newRow("dotdot") << ".." << "PermissionError";
    QTest::newRow("dir-symlink-dotdot") << "d" << "PermissionError";
    QTest::newRow("dir-symlink-absolute") << "outdir" << "PermissionError";
    QTest::newRow("prefix-sibling") << "../ws-evil" << "PermissionError";
    QTest::newRow("file") << "f.txt" << "NotADirectoryError";
    QTest::newRow("empty") << "" << "ValueError";
    // clang-format on
}

void TestWorkspaceFs::openDirectory()
{
    QFETCH(QString, path);
    path = expand(path);
    QFETCH(QString, hostPath);
    hostPath = expand(hostPath);

    int fd = -1;
    const QString result = outcome([&] { fd = m_fs->openDirectory(path); });
    if (!hostPath.startsWith(u'/')) {
        QCOMPARE(result, hostPath);
        QCOMPARE(fd, -1);
        return;
    }
    QCOMPARE(result, QStringLiteral("ok"));
    const auto closeFd = qScopeGuard([fd] { ::close(fd); });
    struct stat viaFd;
    struct stat expected;
    QCOMPARE(::fstat(fd, &viaFd), 0);
    QCOMPARE(::stat(QFile::encodeName(hostPath).constData(), &expected), 0);
    QCOMPARE(viaFd.st_ino, expected.st_ino);
    QVERIFY(::fcntl(fd, F_GETFD) & FD_CLOEXEC);
}

// Both resolvers give the same outcome for every path, run back to back on the same tree.
void TestWorkspaceFs::resolversAgree()
{
    const QStringList paths = {
        QStringLiteral("f.txt"),
        QStringLiteral("sub"),
        QStringLiteral("rel"),
        QStringLiteral("sub/upf"),
        QStringLiteral("subl/upf"),
        QStringLiteral("l"),
        QStringLiteral("canary"),
        QStringLiteral("rcanary"),
        QStringLiteral("sub/up2"),
        QStringLiteral("chain1"),
        QStringLiteral("loop1"),
        QStringLiteral("d/x"),
        QStringLiteral("d/ws/f.txt"),
        QStringLiteral("outdir/x"),
        QStringLiteral("routdir"),
        QStringLiteral("evil/s"),
        QStringLiteral("new"),
        QStringLiteral("newdirl/x"),
        QStringLiteral("dangling-inside"),
        QStringLiteral("f.txt/x"),
        QStringLiteral("subl/"),
        QStringLiteral("nope"),
        QStringLiteral("."),
    };
    const auto run = [&](bool fallback) {
        setConfinedOpenForceFallback(fallback);
        QStringList results;
        for (const QString &p : paths) {
            QByteArray data;
            const QString read = outcome([&] { data = m_fs->readFile(p); });
            results.append(p + u' ' + read + u' ' + QString::fromUtf8(data));
            results.append(p + u' ' + outcome([&] { m_fs->listDir(p); }));
            results.append(p + u' ' + outcome([&] { ::close(m_fs->openDirectory(p)); }));
        }
        return results;
    };
    const QStringList viaWalk = run(true);
    const QStringList viaOpenat2 = run(false);
    QCOMPARE(viaWalk, viaOpenat2);
    QVERIFY(viaWalk.contains(QStringLiteral("rel ok inside")));
    QVERIFY(viaWalk.contains(QStringLiteral("canary PermissionError ")));
}

// The one resolver itself (confinedopen.h), both link modes, through openat2 and the fallback
// walk (initTestCase_data): the same errno for every path. 0 = opened.
void TestWorkspaceFs::confinedOpenTable_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("beneath"); // ConfinedLinks::StayBeneath
    QTest::addColumn<int>("none");    // ConfinedLinks::None
    const auto row = [](const char *path, int beneath, int none) {
        QTest::addRow("%s", *path ? path : "(empty)") << QString::fromUtf8(path) << beneath << none;
    };
    row("", 0, 0);
    row("f.txt", 0, 0);
    row("./sub//inner/g", 0, 0);
    row("sub/../f.txt", 0, 0);
    row("sub/inner/../../f.txt", 0, 0);
    row("..", EXDEV, EXDEV);
    row("../x", EXDEV, EXDEV);
    row("sub/../../x", EXDEV, EXDEV);
    row("/etc/passwd", EXDEV, EXDEV);
    row("rel", 0, ELOOP);         // in-tree link
    row("sub/upf", 0, ELOOP);     // in-tree link with `..`
    row("subl/f", 0, ELOOP);      // in-tree link as a folder
    row("l", EXDEV, ELOOP);       // absolute link
    row("rcanary", EXDEV, ELOOP); // relative link out
    row("sub/up2", EXDEV, ELOOP);
    row("d/x", EXDEV, ELOOP);    // link to ..
    row("chain1", EXDEV, ELOOP); // chain that ends outside
    row("loop1", ELOOP, ELOOP);
    row("dangling-inside", ENOENT, ELOOP);
    row("missing", ENOENT, ENOENT);
    row("f.txt/x", ENOTDIR, ENOTDIR);
}

void TestWorkspaceFs::confinedOpenTable()
{
    QFETCH(QString, path);
    QFETCH(int, beneath);
    QFETCH(int, none);
    const QByteArray rel = path.toUtf8();
    for (const auto &[links, expected] :
         {std::pair{ConfinedLinks::StayBeneath, beneath}, std::pair{ConfinedLinks::None, none}}) {
        errno = 0;
        const UniqueFd fd = openConfined(m_fs->rootFd(), rel, O_RDONLY, links);
        const int err = fd.isValid() ? 0 : errno;
        QVERIFY2(err == expected, qPrintable(QStringLiteral("%1 (links %2): errno %3, expected %4")
                                                 .arg(path)
                                                 .arg(int(links))
                                                 .arg(err)
                                                 .arg(expected)));
    }
    // the folder-creating variant: refused the same way, nothing made outside
    if (beneath == EXDEV) {
        const QStringList before = outsideSnapshot();
        const UniqueFd made = openOrCreateConfinedDirs(m_fs->rootFd(), rel + "/new", O_RDONLY,
                                                       ConfinedLinks::StayBeneath);
        QVERIFY(!made.isValid());
        QCOMPARE(outsideSnapshot(), before);
    }
}

void TestWorkspaceFs::raceSwap_data()
{
    QTest::addColumn<bool>("absoluteLink");
    QTest::newRow("absolute-link") << true;
    QTest::newRow("relative-link") << false;
}

// A thread keeps exchanging the folder `sw` with a symlink to an outside folder while the
// main thread reads, lists and writes through `sw`. Nothing may come from or land outside.
void TestWorkspaceFs::raceSwap()
{
    QFETCH(bool, absoluteLink);

    const QString outside = m_base + QStringLiteral("/race-out");
    put(outside + QStringLiteral("/f"), Canary);
    put(outside + QStringLiteral("/outside-only"), Canary);
    put(ws(QStringLiteral("sw/f")), "INSIDE");
    makeLink(absoluteLink ? outside : QStringLiteral("../race-out"), ws(QStringLiteral("swl")));
    const QByteArray a = QFile::encodeName(ws(QStringLiteral("sw")));
    const QByteArray b = QFile::encodeName(ws(QStringLiteral("swl")));
    QVERIFY2(::renameat2(AT_FDCWD, a.constData(), AT_FDCWD, b.constData(), RENAME_EXCHANGE) == 0,
             "RENAME_EXCHANGE is needed for this test");
    const QStringList before = outsideSnapshot();

    std::atomic<bool> stop{false};
    std::atomic<int> swaps{0};
    std::thread swapper([&] {
        while (!stop.load()) {
            if (::renameat2(AT_FDCWD, a.constData(), AT_FDCWD, b.constData(), RENAME_EXCHANGE) ==
                0) {
                swaps.fetch_add(1);
            }
        }
    });
    const auto join = qScopeGuard([&] {
        stop = true;
        if (swapper.joinable())
            swapper.join();
    });

    int escapes = 0;
    int inside = 0;
    int refused = 0;
    const QString file = QStringLiteral("sw/f");
    const QString folder = QStringLiteral("sw");
    // At least 20,000 rounds; more (bounded) until both outcomes were seen.
    for (int round = 0; round < 200000 && (round < 20000 || !inside || !refused); ++round) {
        try {
            const QByteArray got = m_fs->readFile(file);
            if (got.contains(Canary))
                ++escapes;
            else
                ++inside;
        } catch (const OSError &) {
            ++refused;
        }
        try {
            for (const FileInfo &e : m_fs->listDir(folder)) {
                if (e.path.endsWith(QStringLiteral("outside-only")))
                    ++escapes;
            }
        } catch (const OSError &) {
        }
        if (round % 100 == 0) {
            try {
                m_fs->writeFile(QStringLiteral("sw/written"), "agent");
            } catch (const OSError &) {
            }
        }
    }
    stop = true;
    swapper.join();

    QCOMPARE(escapes, 0);
    QCOMPARE(outsideSnapshot(), before);
    QVERIFY(swaps.load() > 0);
    QVERIFY2(inside > 0 && refused > 0,
             qPrintable(QStringLiteral("inside %1, refused %2").arg(inside).arg(refused)));
}

void TestWorkspaceFs::atomicTempNameFits_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::newRow("short") << QByteArray("a.txt");
    QTest::newRow("231 bytes") << QByteArray(231, 'n');
    QTest::newRow("250 bytes") << QByteArray(250, 'n');
    QTest::newRow("255 bytes") << QByteArray(255, 'n');
    QTest::newRow("255 bytes of 3-byte characters") << QString(85, QChar(0x20ac)).toUtf8();
    QTest::newRow("254 bytes of 2-byte characters") << QString(127, QChar(0xe9)).toUtf8();
}

// Every valid name has a temp name that fits NAME_MAX, is cut at a character boundary, and is
// recognised as ours by the stale-temp sweep.
void TestWorkspaceFs::atomicTempNameFits()
{
    QFETCH(QByteArray, name);
    const QByteArray tmp = atomicTempName(name);
    QVERIFY2(tmp.size() <= 255, tmp.constData());
    QVERIFY(isStaleTempName(tmp));
    QVERIFY(QString::fromUtf8(tmp).toUtf8() == tmp); // valid UTF-8: no character split
    QVERIFY(tmp.startsWith('.' + name.left(qMin<qsizetype>(name.size(), 200 - 3))));
    QVERIFY(atomicTempName(name) != tmp);
    const QString path = QStringLiteral("atomic/") + QString::fromUtf8(name);
    m_fs->writeFile(path, "x");
    m_fs->writeFile(path, "y"); // a replace goes through a temp name too
    QCOMPARE(m_fs->readFile(path), QByteArray("y"));
    QCOMPARE(QDir(ws(QStringLiteral("atomic")))
                 .entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)
                 .size(),
             1); // no temp file left
}

// A link made by the atomic writer replaces what was there (a file, another link) in one
// rename, never writes through it, leaves no temp entry, and with noReplace refuses.
void TestWorkspaceFs::symlinkAtomicReplaces()
{
    const QString folder = ws(QStringLiteral("links"));
    QVERIFY(QDir().mkpath(folder));
    m_fs->writeFile(QStringLiteral("links/file"), "content");
    m_fs->writeFile(QStringLiteral("links/target"), "target");
    const int dirFd =
        ::open(QFile::encodeName(folder).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    QVERIFY(dirFd >= 0);
    const auto closeDir = qScopeGuard([dirFd] { ::close(dirFd); });
    QVERIFY(!symlinkAtomicAt(dirFd, "link", "target"));
    QCOMPARE(QFileInfo(folder + QStringLiteral("/link")).symLinkTarget(),
             folder + QStringLiteral("/target"));
    // Over a regular file: the file is replaced, its content untouched elsewhere.
    QVERIFY(!symlinkAtomicAt(dirFd, "file", "target"));
    QVERIFY(QFileInfo(folder + QStringLiteral("/file")).isSymLink());
    QCOMPARE(m_fs->readFile(QStringLiteral("links/target")), QByteArray("target"));
    // Over a link: the link itself is replaced, not what it points at.
    QVERIFY(!symlinkAtomicAt(dirFd, "link", "elsewhere"));
    QCOMPARE(QFile::symLinkTarget(folder + QStringLiteral("/link")),
             folder + QStringLiteral("/elsewhere"));
    QCOMPARE(m_fs->readFile(QStringLiteral("links/target")), QByteArray("target"));
    AtomicWriteOptions keep;
    keep.noReplace = true;
    const auto refused = symlinkAtomicAt(dirFd, "link", "third", keep);
    QVERIFY(refused);
    QCOMPARE(refused->error, EEXIST);
    QCOMPARE(QFile::symLinkTarget(folder + QStringLiteral("/link")),
             folder + QStringLiteral("/elsewhere"));
    QCOMPARE(QDir(folder)
                 .entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot)
                 .size(),
             3); // file, link, target: no temp entry left
}

void TestWorkspaceFs::readRange_data()
{
    QTest::addColumn<qint64>("offset");
    QTest::addColumn<qint64>("count");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("start") << 0LL << 3LL << QByteArray("012");
    QTest::newRow("middle") << 4LL << 2LL << QByteArray("45");
    QTest::newRow("to the end") << 7LL << 100LL << QByteArray("789");
    QTest::newRow("past the end") << 20LL << 5LL << QByteArray();
    QTest::newRow("nothing") << 2LL << 0LL << QByteArray();
}

void TestWorkspaceFs::readRange()
{
    QFETCH(qint64, offset);
    QFETCH(qint64, count);
    QFETCH(QByteArray, expected);
    WorkspaceFs &fs = *m_fs;
    fs.writeFile(QStringLiteral("digits.txt"), "0123456789");
    qint64 total = -1;
    QCOMPARE(fs.readRange(QStringLiteral("digits.txt"), offset, count, &total), expected);
    QCOMPARE(total, 10);
    QVERIFY_THROWS_EXCEPTION(ValueError, fs.readRange(QStringLiteral("digits.txt"), -1, 1, &total));
    QVERIFY_THROWS_EXCEPTION(IsADirectoryError, fs.readRange(QStringLiteral("."), 0, 1, &total));
}

QTEST_GUILESS_MAIN(TestWorkspaceFs)
#include "tst_workspacefs.moc"
