// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "confinedopen.h"
#include "flushbase.h"
#include "treecopy.h"
#include "types.h"
#include "workspacefs.h"

#include <QDirIterator>
#include <QTemporaryDir>
#include <QtTest>

#include <thread>

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

using namespace elsai;
using SeedAction = SeedPlanEntry::Action;
using SyncAction = SyncPlanEntry::Action;

Q_DECLARE_METATYPE(SyncPlanEntry::Action)
Q_DECLARE_METATYPE(NoBaseConflict)

namespace {

const qint64 kPast = 1600000000; // a fixed mtime in the past, so a rewrite always changes it

bool writeBytes(const QString &path, const QByteArray &data)
{
    if (!QDir().mkpath(QFileInfo(path).path()))
        return false;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(data) == data.size();
}

QByteArray readBytes(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

bool setMtime(const QString &path, qint64 secs, long nsecs = 0)
{
    const struct timespec t[2] = {{time_t(secs), nsecs}, {time_t(secs), nsecs}};
    return ::utimensat(AT_FDCWD, QFile::encodeName(path).constData(), t, AT_SYMLINK_NOFOLLOW) == 0;
}

struct stat lstatOf(const QString &path)
{
    struct stat st;
    std::memset(&st, 0, sizeof st);
    ::lstat(QFile::encodeName(path).constData(), &st);
    return st;
}

bool exists(const QString &path)
{
    struct stat st;
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0;
}

bool makeSymlink(const QString &target, const QString &link)
{
    QDir().mkpath(QFileInfo(link).path());
    return ::symlink(QFile::encodeName(target).constData(), QFile::encodeName(link).constData()) ==
           0;
}

bool makeFifo(const QString &path)
{
    QDir().mkpath(QFileInfo(path).path());
    return ::mkfifo(QFile::encodeName(path).constData(), 0644) == 0;
}

bool makeSocket(const QString &path)
{
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const QByteArray p = QFile::encodeName(path);
    if (fd < 0 || size_t(p.size()) >= sizeof addr.sun_path)
        return false;
    std::memcpy(addr.sun_path, p.constData(), size_t(p.size()));
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

/// Every entry below `root`, relative, symlinks listed but never followed.
QStringList listTree(const QString &root)
{
    QStringList out;
    QDirIterator it(root, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext())
        out << QDir(root).relativeFilePath(it.next());
    out.sort();
    return out;
}

QStringList symlinksIn(const QString &root)
{
    QStringList out;
    for (const QString &rel : listTree(root)) {
        if (S_ISLNK(lstatOf(root + u'/' + rel).st_mode))
            out << rel;
    }
    return out;
}

const SeedPlanEntry *findSeed(const SeedPlan &plan, const QString &path)
{
    for (const SeedPlanEntry &e : plan.entries) {
        if (e.path == path)
            return &e;
    }
    return nullptr;
}

const SyncPlanEntry *findSync(const SyncPlan &plan, const QString &path)
{
    for (const SyncPlanEntry &e : plan.entries) {
        if (e.path == path)
            return &e;
    }
    return nullptr;
}

SeedManifest seedInto(const QString &source, WorkspaceFs &ws, WorkspaceSeedResult *result = nullptr)
{
    SeedManifest manifest;
    const SeedPlan plan = planSeed(source, GlobSet(DEFAULT_SANDBOX_SEED_EXCLUDES));
    const WorkspaceSeedResult r = executeSeed(plan, ws, &manifest);
    if (result)
        *result = r;
    return manifest;
}

} // namespace

class TestTreeCopy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    // seeding
    void seedDefaultExcludes();
    void seedSymlinksAndSpecialFiles_data();
    void seedSymlinksAndSpecialFiles();
    void seedIntoHostileWorkspace_data();
    void seedIntoHostileWorkspace();
    void seedKeepsModeAndMtime();
    void seedManyFilesInParallel();
    void seedDeepTreeIsBounded();
    void seedMissingSourceIsAnError();
    void seedUnreadableFolderIsAnError();

    // sync
    void syncSymlinksNeverFollowed_data();
    void syncSymlinksNeverFollowed();
    void syncHardLinks();
    void syncMatrix_data();
    void syncMatrix();
    void decideSyncTable();
    void flushBaseRoundTrip();
    void repeatedFlushIsUnchanged();
    void convergedMovesTheBase_data();
    void convergedMovesTheBase();
    void remoteSelection_data();
    void remoteSelection();
    void syncDestParentSymlink_data();
    void syncDestParentSymlink();
    void syncIncludeRules();
    void syncToMissingDestination();

private:
    QTemporaryDir m_tmp;
    QString m_src;
    QString m_ws;
    QString m_dest;
    QString m_outside;
};

void TestTreeCopy::init()
{
    QVERIFY(m_tmp.isValid());
    static int n = 0;
    const QString base = m_tmp.path() + QStringLiteral("/t%1").arg(++n);
    m_src = base + QStringLiteral("/src");
    m_ws = base + QStringLiteral("/ws");
    m_dest = base + QStringLiteral("/dest");
    m_outside = base + QStringLiteral("/outside");
    for (const QString &d : {m_src, m_ws, m_dest, m_outside})
        QVERIFY(QDir().mkpath(d));
    QVERIFY(writeBytes(m_outside + QStringLiteral("/secret"), "outside secret"));
    QVERIFY(writeBytes(m_outside + QStringLiteral("/dir/id_rsa"), "private key"));
}

void TestTreeCopy::cleanup()
{
    setConfinedOpenForceFallback(false);
}

// S1
void TestTreeCopy::seedDefaultExcludes()
{
    const QStringList excludedDirs = {".git", "node_modules", "__pycache__", ".venv", "secrets"};
    const QStringList excludedFiles = {".env", "k.pem", "credentials.json"};
    for (const QString &prefix : {QString(), QStringLiteral("sub/deeper/")}) {
        for (const QString &d : excludedDirs)
            QVERIFY(writeBytes(m_src + u'/' + prefix + d + QStringLiteral("/inner/f.txt"), "x"));
        for (const QString &f : excludedFiles)
            QVERIFY(writeBytes(m_src + u'/' + prefix + f, "secret"));
        QVERIFY(writeBytes(m_src + u'/' + prefix + QStringLiteral("keep.py"), "print(1)"));
    }
    QVERIFY(writeBytes(m_src + QStringLiteral("/secrets.txt"), "not a folder"));
    QVERIFY(writeBytes(m_src + QStringLiteral("/.envrc"), "kept"));
    QVERIFY(writeBytes(m_src + QStringLiteral("/.github/ci.yml"), "kept"));

    const SeedPlan plan = planSeed(m_src, GlobSet(DEFAULT_SANDBOX_SEED_EXCLUDES));
    QVERIFY2(plan.errors.isEmpty(), qPrintable(plan.errors.join(u'\n')));
    for (const QString &d : excludedDirs) {
        const SeedPlanEntry *e = findSeed(plan, d);
        QVERIFY(e);
        QCOMPARE(e->action, SeedAction::Excluded);
        QVERIFY(e->isDir);
        QCOMPARE(e->pattern, d == QLatin1String("secrets") ? QStringLiteral("secrets/") : d);
        QVERIFY2(!findSeed(plan, d + QStringLiteral("/inner")), "excluded folder entered");
    }
    QCOMPARE(findSeed(plan, QStringLiteral("k.pem"))->pattern, QStringLiteral("*.pem"));
    QCOMPARE(plan.fileCount(), 5); // keep.py twice, secrets.txt, .envrc, ci.yml

    WorkspaceFs ws(m_ws);
    const WorkspaceSeedResult r = executeSeed(plan, ws);
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(r.filesSeeded, 5);
    QCOMPARE(r.bytesSeeded, qint64(8 * 2 + 12 + 4 + 4));
    QCOMPARE(r.skippedPaths.size(), 2 * (excludedDirs.size() + excludedFiles.size()));
    QVERIFY(r.skippedPaths.contains(QStringLiteral("sub/deeper/node_modules")));

    const QStringList tree = listTree(m_ws);
    for (const QString &rel : tree) {
        const QString name = rel.section(u'/', -1);
        QVERIFY2(!excludedDirs.contains(name) && !excludedFiles.contains(name), qPrintable(rel));
    }
    QVERIFY(tree.contains(QStringLiteral("sub/deeper/keep.py")));
    QVERIFY(tree.contains(QStringLiteral("secrets.txt")));
    QVERIFY(tree.contains(QStringLiteral(".envrc")));
    QCOMPARE(readBytes(m_ws + QStringLiteral("/.github/ci.yml")), QByteArray("kept"));
}

// S2
void TestTreeCopy::seedSymlinksAndSpecialFiles_data()
{
    QTest::addColumn<bool>("fallback");
    QTest::newRow("openat2") << false;
    QTest::newRow("openat walk") << true;
}

void TestTreeCopy::seedSymlinksAndSpecialFiles()
{
    QFETCH(bool, fallback);
    setConfinedOpenForceFallback(fallback);
    QVERIFY(writeBytes(m_src + QStringLiteral("/sub/f.txt"), "inside"));
    QVERIFY(makeSymlink(m_outside + QStringLiteral("/dir"), m_src + QStringLiteral("/link")));
    QVERIFY(makeSymlink(QStringLiteral("/etc"), m_src + QStringLiteral("/abs")));
    QVERIFY(makeSymlink(m_outside + QStringLiteral("/secret"),
                        m_src + QStringLiteral("/sub/file-link")));
    QVERIFY(makeSymlink(QStringLiteral("f.txt"), m_src + QStringLiteral("/sub/rel")));
    QVERIFY(makeSymlink(QStringLiteral("missing"), m_src + QStringLiteral("/dangling")));
    QVERIFY(makeFifo(m_src + QStringLiteral("/fifo")));
    QVERIFY(makeSocket(m_src + QStringLiteral("/sock")));

    const SeedPlan plan = planSeed(m_src, GlobSet(DEFAULT_SANDBOX_SEED_EXCLUDES));
    QVERIFY2(plan.errors.isEmpty(), qPrintable(plan.errors.join(u'\n')));
    for (const char *link : {"link", "abs", "sub/file-link", "sub/rel", "dangling"})
        QCOMPARE(findSeed(plan, QString::fromLatin1(link))->action, SeedAction::SkippedSymlink);
    QCOMPARE(findSeed(plan, QStringLiteral("fifo"))->action, SeedAction::SkippedSpecial);
    QCOMPARE(findSeed(plan, QStringLiteral("sock"))->action, SeedAction::SkippedSpecial);
    QVERIFY(!findSeed(plan, QStringLiteral("link/id_rsa")));
    QVERIFY(!findSeed(plan, QStringLiteral("abs/passwd")));

    WorkspaceFs ws(m_ws);
    const WorkspaceSeedResult r = executeSeed(plan, ws);
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(r.filesSeeded, 1);
    QCOMPARE(listTree(m_ws), QStringList({"sub", "sub/f.txt"}));
    QCOMPARE(r.skippedPaths.size(), 7);
    QVERIFY(r.skippedPaths.contains(QStringLiteral("fifo")));
    QVERIFY(r.skippedPaths.contains(QStringLiteral("link")));
}

// A workspace left with symlinks and hard links where seeding wants to write.
void TestTreeCopy::seedIntoHostileWorkspace_data()
{
    QTest::addColumn<bool>("fallback");
    QTest::newRow("openat2") << false;
    QTest::newRow("openat walk") << true;
}

void TestTreeCopy::seedIntoHostileWorkspace()
{
    QFETCH(bool, fallback);
    setConfinedOpenForceFallback(fallback);
    QVERIFY(writeBytes(m_src + QStringLiteral("/src/a.py"), "seeded a"));
    QVERIFY(writeBytes(m_src + QStringLiteral("/src/deep/b.py"), "seeded b"));
    QVERIFY(writeBytes(m_src + QStringLiteral("/hard.txt"), "seeded hard"));
    QVERIFY(writeBytes(m_src + QStringLiteral("/sym.txt"), "seeded sym"));
    QVERIFY(writeBytes(m_src + QStringLiteral("/dangling.txt"), "seeded dangling"));
    QVERIFY(writeBytes(m_src + QStringLiteral("/isdir/x"), "x"));

    // a folder the seed creates is already a symlink to outside
    QVERIFY(makeSymlink(m_outside + QStringLiteral("/dir"), m_ws + QStringLiteral("/src")));
    // a hard link and symlinks to outside files where seeded files go
    QVERIFY(::link(QFile::encodeName(m_outside + QStringLiteral("/secret")).constData(),
                   QFile::encodeName(m_ws + QStringLiteral("/hard.txt")).constData()) == 0);
    QVERIFY(makeSymlink(m_outside + QStringLiteral("/secret"), m_ws + QStringLiteral("/sym.txt")));
    QVERIFY(makeSymlink(m_outside + QStringLiteral("/created"),
                        m_ws + QStringLiteral("/dangling.txt")));
    // a file where the seed wants a folder
    QVERIFY(writeBytes(m_ws + QStringLiteral("/isdir"), "a file"));

    const QStringList outsideBefore = listTree(m_outside);
    WorkspaceFs ws(m_ws);
    const SeedPlan plan = planSeed(m_src, GlobSet(DEFAULT_SANDBOX_SEED_EXCLUDES));
    const WorkspaceSeedResult r = executeSeed(plan, ws);

    QCOMPARE(listTree(m_outside), outsideBefore);
    QCOMPARE(readBytes(m_outside + QStringLiteral("/secret")), QByteArray("outside secret"));
    QCOMPARE(readBytes(m_outside + QStringLiteral("/dir/id_rsa")), QByteArray("private key"));
    QVERIFY(!exists(m_outside + QStringLiteral("/created")));

    // refused subtrees are errors, one per refused folder
    QCOMPARE(r.errors.size(), 2);
    QVERIFY(r.errors.join(u'\n').contains(QStringLiteral("'src'")));
    QVERIFY(r.errors.join(u'\n').contains(QStringLiteral("'isdir'")));
    QVERIFY(S_ISLNK(lstatOf(m_ws + QStringLiteral("/src")).st_mode));

    // links at file positions are replaced, not written through
    QCOMPARE(r.filesSeeded, 3);
    for (const char *f : {"hard.txt", "sym.txt", "dangling.txt"}) {
        const struct stat st = lstatOf(m_ws + u'/' + QLatin1String(f));
        QVERIFY2(S_ISREG(st.st_mode) && st.st_nlink == 1, f);
    }
    QCOMPARE(readBytes(m_ws + QStringLiteral("/hard.txt")), QByteArray("seeded hard"));
    QCOMPARE(lstatOf(m_outside + QStringLiteral("/secret")).st_nlink, nlink_t(1));
    // through the one writer: its temp files are renamed into place, none is left
    for (const QString &entry : listTree(m_ws))
        QVERIFY2(!entry.contains(QStringLiteral(".elsai-tmp-")), qPrintable(entry));
}

void TestTreeCopy::seedKeepsModeAndMtime()
{
    const QString script = m_src + QStringLiteral("/bin/run.sh");
    const QString setuid = m_src + QStringLiteral("/bin/su-tool");
    const QString ro = m_src + QStringLiteral("/ro.txt");
    QVERIFY(writeBytes(script, "#!/bin/sh\n"));
    QVERIFY(writeBytes(setuid, "elf"));
    QVERIFY(writeBytes(ro, "read only"));
    QVERIFY(::chmod(QFile::encodeName(script).constData(), 0750) == 0);
    QVERIFY(::chmod(QFile::encodeName(setuid).constData(), 06755) == 0);
    QVERIFY(::chmod(QFile::encodeName(ro).constData(), 0444) == 0);
    QVERIFY(::chmod(QFile::encodeName(m_src + QStringLiteral("/bin")).constData(), 01750) == 0);
    QVERIFY(setMtime(script, kPast, 123456789));
    QVERIFY(setMtime(m_src + QStringLiteral("/bin"), kPast - 100, 5));

    WorkspaceFs ws(m_ws);
    WorkspaceSeedResult r;
    const SeedManifest manifest = seedInto(m_src, ws, &r);
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));

    const struct stat s = lstatOf(m_ws + QStringLiteral("/bin/run.sh"));
    QCOMPARE(s.st_mode & 07777, mode_t(0750));
    QCOMPARE(qint64(s.st_mtim.tv_sec), kPast);
    QCOMPARE(qint64(s.st_mtim.tv_nsec), qint64(123456789));
    QCOMPARE(lstatOf(m_ws + QStringLiteral("/bin/su-tool")).st_mode & 07777, mode_t(0755));
    QCOMPARE(lstatOf(m_ws + QStringLiteral("/ro.txt")).st_mode & 07777, mode_t(0444));
    const struct stat d = lstatOf(m_ws + QStringLiteral("/bin"));
    QCOMPARE(d.st_mode & 07777, mode_t(0750));
    QCOMPARE(qint64(d.st_mtim.tv_sec), kPast - 100);

    // the manifest records both sides
    QCOMPARE(manifest.hostRoot, QDir::cleanPath(m_src));
    QCOMPARE(manifest.files.size(), 3);
    const SeedManifest::Entry e = manifest.files.value(QStringLiteral("bin/run.sh"));
    QCOMPARE(e.host.size, qint64(10));
    QCOMPARE(e.host.mtimeNs, kPast * 1000000000 + 123456789);
    QCOMPARE(e.workspace, e.host);
}

void TestTreeCopy::seedManyFilesInParallel()
{
    // enough files for several copy threads, sizes from empty to past one copy chunk
    qint64 bytes = 0;
    for (int i = 0; i < 400; ++i) {
        const QByteArray content = QByteArray::number(i).repeated(i % 7 == 0 ? 0 : i * 13);
        bytes += content.size();
        QVERIFY(writeBytes(m_src + QStringLiteral("/d%1/f%2.bin").arg(i % 20).arg(i), content));
    }
    const QByteArray big(3 * 1024 * 1024 + 17, 'z');
    QVERIFY(writeBytes(m_src + QStringLiteral("/big.bin"), big));
    bytes += big.size();

    const SeedPlan plan = planSeed(m_src, GlobSet(DEFAULT_SANDBOX_SEED_EXCLUDES));
    QCOMPARE(plan.fileCount(), 401);
    QCOMPARE(plan.byteCount(), bytes);

    WorkspaceFs ws(m_ws);
    SeedManifest manifest;
    const auto caller = std::this_thread::get_id();
    int calls = 0;
    int lastDone = -1;
    bool otherThread = false;
    bool monotonic = true;
    const WorkspaceSeedResult r = executeSeed(plan, ws, &manifest, [&](int done, int total) {
        otherThread = otherThread || std::this_thread::get_id() != caller;
        monotonic = monotonic && done > lastDone && total == 401;
        lastDone = done;
        ++calls;
    });
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(r.filesSeeded, 401);
    QCOMPARE(r.bytesSeeded, bytes);
    QCOMPARE(manifest.files.size(), 401);
    QVERIFY(calls > 0);
    QVERIFY2(!otherThread, "progress must be reported on the calling thread");
    QVERIFY(monotonic);
    QCOMPARE(lastDone, 401);
    for (int i = 0; i < 400; i += 37) {
        const QString rel = QStringLiteral("/d%1/f%2.bin").arg(i % 20).arg(i);
        QCOMPARE(readBytes(m_ws + rel), readBytes(m_src + rel));
    }
    QCOMPARE(readBytes(m_ws + QStringLiteral("/big.bin")), big);

    // seeding again replaces what is there
    QVERIFY(writeBytes(m_src + QStringLiteral("/d0/f1.bin"), "changed"));
    const WorkspaceSeedResult again =
        executeSeed(planSeed(m_src, GlobSet(DEFAULT_SANDBOX_SEED_EXCLUDES)), ws);
    QVERIFY2(again.success(), qPrintable(again.errors.join(u'\n')));
    QCOMPARE(readBytes(m_ws + QStringLiteral("/d0/f1.bin")), QByteArray("changed"));
}

void TestTreeCopy::seedDeepTreeIsBounded()
{
    // 300 nested folders, built fd by fd so no long path is ever needed
    int fd = ::open(QFile::encodeName(m_src).constData(), O_RDONLY | O_DIRECTORY);
    QVERIFY(fd >= 0);
    for (int i = 0; i < 300; ++i) {
        QVERIFY(::mkdirat(fd, "d", 0755) == 0);
        const int next = ::openat(fd, "d", O_RDONLY | O_DIRECTORY);
        ::close(fd);
        QVERIFY(next >= 0);
        fd = next;
    }
    const int f = ::openat(fd, "leaf.txt", O_WRONLY | O_CREAT, 0644);
    QVERIFY(f >= 0);
    ::close(f);
    ::close(fd);

    const SeedPlan plan = planSeed(m_src, GlobSet(DEFAULT_SANDBOX_SEED_EXCLUDES));
    QCOMPARE(plan.errors.size(), 1);
    QVERIFY(plan.errors.first().contains(QStringLiteral("deeper than")));
    QCOMPARE(plan.fileCount(), 0);
    WorkspaceFs ws(m_ws);
    const WorkspaceSeedResult r = executeSeed(plan, ws);
    QVERIFY(!r.success());
    QCOMPARE(r.errors, plan.errors);
}

void TestTreeCopy::seedMissingSourceIsAnError()
{
    const SeedPlan plan = planSeed(m_src + QStringLiteral("/nope"), GlobSet());
    QCOMPARE(plan.errors.size(), 1);
    QVERIFY(plan.entries.isEmpty());
    WorkspaceFs ws(m_ws);
    QVERIFY(!executeSeed(plan, ws).success());
}

void TestTreeCopy::seedUnreadableFolderIsAnError()
{
    QVERIFY(writeBytes(m_src + QStringLiteral("/locked/f"), "x"));
    QVERIFY(writeBytes(m_src + QStringLiteral("/open/f"), "y"));
    const QByteArray locked = QFile::encodeName(m_src + QStringLiteral("/locked"));
    QVERIFY(::chmod(locked.constData(), 0) == 0);
    // Root reads every folder; capabilities are per thread, so plan on a thread without the
    // permission-bypassing ones.
    SeedPlan plan;
    bool dropped = false;
    std::thread([&] {
        __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2] = {};
        if (::syscall(SYS_capget, &header, data) != 0)
            return;
        for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH})
            data[cap / 32].effective &= ~(1u << (cap % 32));
        dropped = ::syscall(SYS_capset, &header, data) == 0;
        plan = planSeed(m_src, GlobSet());
    }).join();
    ::chmod(locked.constData(), 0755);
    if (!dropped)
        QSKIP("cannot drop CAP_DAC_OVERRIDE here");
    QCOMPARE(plan.errors.size(), 1);
    QVERIFY(plan.errors.first().contains(QStringLiteral("'locked'")));
    QCOMPARE(findSeed(plan, QStringLiteral("locked"))->action, SeedAction::Copy);
    QVERIFY(findSeed(plan, QStringLiteral("open/f")));
}

// S3
void TestTreeCopy::syncSymlinksNeverFollowed_data()
{
    QTest::addColumn<bool>("fallback");
    QTest::newRow("openat2") << false;
    QTest::newRow("openat walk") << true;
}

void TestTreeCopy::syncSymlinksNeverFollowed()
{
    QFETCH(bool, fallback);
    setConfinedOpenForceFallback(fallback);
    WorkspaceFs ws(m_ws);
    QVERIFY(writeBytes(m_ws + QStringLiteral("/src/ok.py"), "ok"));
    QVERIFY(
        makeSymlink(m_outside + QStringLiteral("/secret"), m_ws + QStringLiteral("/src/evil.py")));
    QVERIFY(makeSymlink(QStringLiteral("/"), m_ws + QStringLiteral("/src/sub")));
    QVERIFY(makeSymlink(m_outside, m_ws + QStringLiteral("/src/out")));
    QVERIFY(
        makeSymlink(QStringLiteral("../../outside/secret"), m_ws + QStringLiteral("/notes.md")));
    QVERIFY(makeFifo(m_ws + QStringLiteral("/src/pipe")));
    const QStringList outsideBefore = listTree(m_outside);

    const SyncPlan plan = planSync(ws, m_dest, GlobSet(DEFAULT_SANDBOX_SYNC_INCLUDE),
                                   GlobSet(DEFAULT_WORKSPACE_POLICY_EXCLUDES), nullptr);
    QVERIFY2(plan.errors.isEmpty(), qPrintable(plan.errors.join(u'\n')));
    QCOMPARE(plan.entries.size(), 6);
    for (const char *link : {"src/evil.py", "src/sub", "src/out", "notes.md"})
        QCOMPARE(findSync(plan, QString::fromLatin1(link))->action, SyncAction::SkippedSymlink);
    QCOMPARE(findSync(plan, QStringLiteral("src/pipe"))->action, SyncAction::SkippedSpecial);
    QCOMPARE(findSync(plan, QStringLiteral("src/ok.py"))->action, SyncAction::Add);

    const WorkspaceSyncResult r = executeSync(plan, ws);
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(r.filesSynced, 1);
    QCOMPARE(r.bytesSynced, qint64(2));
    QCOMPARE(r.skippedPaths.size(), 5);
    QVERIFY(r.skippedPaths.contains(QStringLiteral("src/evil.py")));
    QVERIFY(r.skippedPaths.contains(QStringLiteral("src/sub")));
    QCOMPARE(listTree(m_dest), QStringList({"src", "src/ok.py"}));
    QVERIFY(symlinksIn(m_dest).isEmpty());
    QCOMPARE(listTree(m_outside), outsideBefore);
    QCOMPARE(readBytes(m_outside + QStringLiteral("/secret")), QByteArray("outside secret"));
}

// P11: hard links on either side never carry a write outside.
void TestTreeCopy::syncHardLinks()
{
    WorkspaceFs ws(m_ws);
    const QString outsideFile = m_outside + QStringLiteral("/secret");
    // workspace file hard-linked to an outside file: its bytes may be copied, it is never
    // written
    QVERIFY(::link(QFile::encodeName(outsideFile).constData(),
                   QFile::encodeName(m_ws + QStringLiteral("/hl.md")).constData()) == 0);
    // host file hard-linked to an outside file: replaced by rename, the outside file keeps
    // its content
    const QString outsideHost = m_outside + QStringLiteral("/host-shared.md");
    QVERIFY(writeBytes(outsideHost, "host shared"));
    QVERIFY(::link(QFile::encodeName(outsideHost).constData(),
                   QFile::encodeName(m_dest + QStringLiteral("/shared.md")).constData()) == 0);
    QVERIFY(writeBytes(m_ws + QStringLiteral("/shared.md"), "from the sandbox"));
    SeedManifest manifest;
    manifest.hostRoot = m_dest;
    const struct stat hs = lstatOf(m_dest + QStringLiteral("/shared.md"));
    const struct stat ws0 = lstatOf(m_ws + QStringLiteral("/shared.md"));
    const qint64 hostMtime = qint64(hs.st_mtim.tv_sec) * 1000000000 + hs.st_mtim.tv_nsec;
    // host as recorded, workspace different from the record: an update
    manifest.files.insert(QStringLiteral("shared.md"),
                          {{hs.st_size, hostMtime}, {ws0.st_size - 1, 0}});

    const SyncPlan plan =
        planSync(ws, m_dest, GlobSet(DEFAULT_SANDBOX_SYNC_INCLUDE), GlobSet(), &manifest);
    QCOMPARE(findSync(plan, QStringLiteral("hl.md"))->action, SyncAction::Add);
    QCOMPARE(findSync(plan, QStringLiteral("shared.md"))->action, SyncAction::Update);
    const WorkspaceSyncResult r = executeSync(plan, ws, &manifest);
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(readBytes(m_dest + QStringLiteral("/shared.md")), QByteArray("from the sandbox"));
    QCOMPARE(readBytes(outsideHost), QByteArray("host shared"));
    QCOMPARE(readBytes(outsideFile), QByteArray("outside secret"));
    QCOMPARE(lstatOf(m_dest + QStringLiteral("/hl.md")).st_nlink, nlink_t(1));
}

// The three-way table (base = the seed, ours = the workspace, theirs = the host), row by row:
// what planSync decides, what executeSync leaves on the host, and which result list names it.
void TestTreeCopy::syncMatrix_data()
{
    QTest::addColumn<bool>("withManifest");
    QTest::addColumn<bool>("manifestForOtherRoot");
    QTest::addColumn<NoBaseConflict>("noBase");
    QTest::addColumn<QByteArray>("hostChange");  // empty: untouched, "-": removed
    QTest::addColumn<QByteArray>("wsChange");    // empty: untouched, "-": removed
    QTest::addColumn<QByteArray>("oldConflict"); // a doc.md.sandbox-conflict already there
    QTest::addColumn<int>("expected");           // SyncAction, -1: no entry at all
    QTest::addColumn<QByteArray>("hostAfter");   // "<missing>": no host file
    QTest::addColumn<QString>("conflictFile");   // empty: none written or reused
    QTest::addColumn<QString>("resultList");     // the result list naming doc.md, or empty

    const NoBaseConflict keep = NoBaseConflict::KeepBoth;
    const NoBaseConflict over = NoBaseConflict::Overwrite;
    const QByteArray none;
    const QByteArray gone("-");
    const QByteArray missing("<missing>");
    const QString sidecar = QStringLiteral("doc.md.sandbox-conflict");
    auto row = [](const char *name) -> QTestData & { return QTest::newRow(name); };
    auto a = [](SyncAction x) { return int(x); };

    row("unchanged in both -> unchanged")
        << true << false << keep << none << none << none << a(SyncAction::Unchanged)
        << QByteArray("v1") << QString() << QString();
    row("changed in sandbox only -> written")
        << true << false << keep << none << QByteArray("ws v2") << none << a(SyncAction::Update)
        << QByteArray("ws v2") << QString() << "updated";
    row("changed on host only -> host wins")
        << true << false << keep << QByteArray("host v2") << none << none << a(SyncAction::KeepHost)
        << QByteArray("host v2") << QString() << "keptHost";
    row("changed on both -> conflict")
        << true << false << keep << QByteArray("host v2") << QByteArray("ws v2") << none
        << a(SyncAction::Conflict) << QByteArray("host v2") << sidecar << "conflicts";
    row("changed on both alike -> unchanged")
        << true << false << keep << QByteArray("same v2") << QByteArray("same v2") << none
        << a(SyncAction::Unchanged) << QByteArray("same v2") << QString() << QString();
    row("host deleted, sandbox unchanged -> stays deleted")
        << true << false << keep << gone << none << none << a(SyncAction::HostDeleted) << missing
        << QString() << "hostDeleted";
    row("host deleted, sandbox changed -> conflict")
        << true << false << keep << gone << QByteArray("ws v2") << none << a(SyncAction::Conflict)
        << missing << sidecar << "conflicts";
    row("sandbox deleted -> reported, host kept")
        << true << false << keep << none << gone << none << a(SyncAction::SandboxDeleted)
        << QByteArray("v1") << QString() << "sandboxDeleted";
    row("sandbox deleted, host changed -> reported, host kept")
        << true << false << keep << QByteArray("host v2") << gone << none
        << a(SyncAction::SandboxDeleted) << QByteArray("host v2") << QString() << "sandboxDeleted";
    row("deleted on both -> nothing")
        << true << false << keep << gone << gone << none << -1 << missing << QString() << QString();
    row("conflict again, same conflict file -> reused")
        << true << false << keep << QByteArray("host v2") << QByteArray("ws v2")
        << QByteArray("ws v2") << a(SyncAction::Conflict) << QByteArray("host v2") << sidecar
        << "conflicts";
    row("conflict again, conflict file edited -> new name")
        << true << false << keep << QByteArray("host v2") << QByteArray("ws v2")
        << QByteArray("user's merge") << a(SyncAction::Conflict) << QByteArray("host v2")
        << QStringLiteral("doc.md.sandbox-conflict-2") << "conflicts";
    row("no base: same bytes -> unchanged")
        << false << false << keep << none << none << none << a(SyncAction::Unchanged)
        << QByteArray("v1") << QString() << QString();
    row("no base, keep-both: different bytes -> conflict")
        << false << false << keep << none << QByteArray("ws v2") << none << a(SyncAction::Conflict)
        << QByteArray("v1") << sidecar << "conflicts";
    row("no base, overwrite: different bytes -> written")
        << false << false << over << none << QByteArray("ws v2") << none << a(SyncAction::Update)
        << QByteArray("ws v2") << QString() << "updated";
    row("no base: not on the host -> added")
        << false << false << keep << gone << none << none << a(SyncAction::Add) << QByteArray("v1")
        << QString() << "added";
    row("no base: sandbox deleted -> nothing") << false << false << keep << none << gone << none
                                               << -1 << QByteArray("v1") << QString() << QString();
    row("base of another folder is no base (keep-both)")
        << true << true << keep << none << QByteArray("ws v2") << none << a(SyncAction::Conflict)
        << QByteArray("v1") << sidecar << "conflicts";
    row("base of another folder is no base (overwrite)")
        << true << true << over << none << QByteArray("ws v2") << none << a(SyncAction::Update)
        << QByteArray("ws v2") << QString() << "updated";
    row("overwrite applies only without a base")
        << true << false << over << QByteArray("host v2") << QByteArray("ws v2") << none
        << a(SyncAction::Conflict) << QByteArray("host v2") << sidecar << "conflicts";
}

void TestTreeCopy::syncMatrix()
{
    QFETCH(bool, withManifest);
    QFETCH(bool, manifestForOtherRoot);
    QFETCH(NoBaseConflict, noBase);
    QFETCH(QByteArray, hostChange);
    QFETCH(QByteArray, wsChange);
    QFETCH(QByteArray, oldConflict);
    QFETCH(int, expected);
    QFETCH(QByteArray, hostAfter);
    QFETCH(QString, conflictFile);
    QFETCH(QString, resultList);

    // the project is both the seed source and the flush destination
    const QString hostFile = m_src + QStringLiteral("/doc.md");
    QVERIFY(writeBytes(hostFile, "v1"));
    QVERIFY(setMtime(hostFile, kPast));
    WorkspaceFs ws(m_ws);
    WorkspaceSeedResult seeded;
    SeedManifest manifest = seedInto(m_src, ws, &seeded);
    QVERIFY(seeded.success());
    if (manifestForOtherRoot)
        manifest.hostRoot = m_dest;

    if (hostChange == "-")
        QVERIFY(QFile::remove(hostFile));
    else if (!hostChange.isEmpty())
        QVERIFY(writeBytes(hostFile, hostChange));
    if (wsChange == "-")
        QVERIFY(QFile::remove(m_ws + QStringLiteral("/doc.md")));
    else if (!wsChange.isEmpty())
        QVERIFY(writeBytes(m_ws + QStringLiteral("/doc.md"), wsChange));
    const QString oldConflictFile = hostFile + conflictSuffix();
    if (!oldConflict.isEmpty())
        QVERIFY(writeBytes(oldConflictFile, oldConflict));
    const struct stat oldConflictSt = lstatOf(oldConflictFile);

    const GlobSet includes(DEFAULT_SANDBOX_SYNC_INCLUDE);
    const SeedManifest *m = withManifest ? &manifest : nullptr;
    const SyncPlan plan = planSync(ws, m_src, includes, GlobSet(), m, noBase);
    QVERIFY2(plan.errors.isEmpty(), qPrintable(plan.errors.join(u'\n')));
    if (expected < 0) {
        QCOMPARE(plan.entries.size(), 0);
    } else {
        QCOMPARE(plan.entries.size(), 1);
        QCOMPARE(plan.entries.first().action, SyncAction(expected));
    }

    const WorkspaceSyncResult r = executeSync(plan, ws, withManifest ? &manifest : nullptr);
    QCOMPARE(readBytes(hostFile), hostAfter);
    const QMap<QString, QStringList> lists = {
        {QStringLiteral("added"), r.added},
        {QStringLiteral("updated"), r.updated},
        {QStringLiteral("keptHost"), r.keptHost},
        {QStringLiteral("hostDeleted"), r.hostDeleted},
        {QStringLiteral("sandboxDeleted"), r.sandboxDeleted},
        {QStringLiteral("conflicts"), r.conflicts},
    };
    for (auto it = lists.cbegin(); it != lists.cend(); ++it) {
        QCOMPARE(it.value(),
                 it.key() == resultList ? QStringList{QStringLiteral("doc.md")} : QStringList());
    }
    if (conflictFile.isEmpty()) {
        QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
        QVERIFY(r.conflictFiles.isEmpty());
        QCOMPARE(exists(oldConflictFile), !oldConflict.isEmpty());
    } else {
        QVERIFY(!r.success());
        QCOMPARE(r.conflictFiles.value(QStringLiteral("doc.md")), conflictFile);
        QCOMPARE(r.errors.size(), 1);
        QVERIFY(r.errors.first().startsWith(QStringLiteral("conflict: doc.md ")));
        QVERIFY2(r.errors.first().contains(conflictFile), qPrintable(r.errors.first()));
        QCOMPARE(readBytes(m_src + u'/' + conflictFile), wsChange);
    }
    if (!oldConflict.isEmpty()) {
        // an existing conflict file is never replaced, nor rewritten when it is the same
        QCOMPARE(readBytes(oldConflictFile), oldConflict);
        QCOMPARE(lstatOf(oldConflictFile).st_ino, oldConflictSt.st_ino);
        QCOMPARE(lstatOf(oldConflictFile).st_mtim.tv_nsec, oldConflictSt.st_mtim.tv_nsec);
    }
    const bool written =
        resultList == QLatin1String("added") || resultList == QLatin1String("updated");
    QCOMPARE(r.filesSynced, written ? 1 : 0);
    QVERIFY(symlinksIn(m_src).isEmpty());
    // no temp file left behind
    for (const QString &rel : listTree(m_src))
        QVERIFY2(!rel.contains(QStringLiteral("sandbox-tmp")), qPrintable(rel));
}

// decideSync alone: every combination of the six sides, against the rules written out.
void TestTreeCopy::decideSyncTable()
{
    int rows = 0;
    for (int bits = 0; bits < 128; ++bits) {
        SyncSides s;
        s.haveBase = bits & 1;
        s.inBase = s.haveBase && (bits & 2);
        s.oursExists = bits & 4;
        s.oursChanged = bits & 8;
        s.theirsExists = bits & 16;
        s.theirsChanged = bits & 32;
        const bool same = bits & 64;
        for (const NoBaseConflict policy : {NoBaseConflict::KeepBoth, NoBaseConflict::Overwrite}) {
            bool compared = false;
            const SyncAction got = decideSync(s, policy, [&] {
                compared = true;
                return same;
            });
            SyncAction want;
            if (!s.oursExists)
                want =
                    s.inBase && s.theirsExists ? SyncAction::SandboxDeleted : SyncAction::Unchanged;
            else if (!s.theirsExists)
                want = !s.inBase       ? SyncAction::Add
                       : s.oursChanged ? SyncAction::Conflict
                                       : SyncAction::HostDeleted;
            else if (s.inBase && !s.oursChanged)
                want = s.theirsChanged ? SyncAction::KeepHost : SyncAction::Unchanged;
            else if (s.inBase && !s.theirsChanged)
                want = SyncAction::Update;
            else if (same)
                want = SyncAction::Unchanged;
            else if (!s.haveBase && policy == NoBaseConflict::Overwrite)
                want = SyncAction::Update;
            else
                want = SyncAction::Conflict;
            QVERIFY2(got == want, qPrintable(QStringLiteral("sides %1, policy %2: %3, want %4")
                                                 .arg(bits)
                                                 .arg(int(policy))
                                                 .arg(int(got))
                                                 .arg(int(want))));
            // bytes are compared only where they decide
            if (compared)
                QVERIFY(s.oursExists && s.theirsExists);
            ++rows;
        }
    }
    QCOMPARE(rows, 256);
}

// The base kept beside a workspace reads back as written, whatever the names hold.
void TestTreeCopy::flushBaseRoundTrip()
{
    QVERIFY(!loadFlushBases(m_ws)); // none yet, and no error for that
    FlushBases bases;
    bases.seedRoot = m_src;
    SeedManifest &a = bases.manifests[m_src];
    a.hostRoot = m_src;
    a.files.insert(QStringLiteral("src/a.py"), {{10, 1600000000123456789}, {10, 42}});
    a.files.insert(QStringLiteral("odd/tab\there/new\nline ü.md"), {{-1, 0}, {0, 7}});
    SeedManifest &d = bases.manifests[m_dest];
    d.hostRoot = m_dest;
    d.files.insert(QStringLiteral("x"), {{1, 2}, {3, 4}});
    saveFlushBases(m_ws, bases);
    const QString file = flushBasePath(m_ws);
    QCOMPARE(QFileInfo(file).dir().absolutePath(), QFileInfo(m_ws).dir().absolutePath());
    QCOMPARE(lstatOf(file).st_mode & 0777, mode_t(0600));
    QString error;
    const auto back = loadFlushBases(m_ws, &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(back->seedRoot, m_src);
    QCOMPARE(back->manifests.size(), 2);
    for (const QString &root : {m_src, m_dest}) {
        const SeedManifest &want = bases.manifests[root];
        const SeedManifest &got = back->manifests.value(root);
        QCOMPARE(got.hostRoot, root);
        QCOMPARE(got.files.keys().size(), want.files.size());
        for (auto it = want.files.cbegin(); it != want.files.cend(); ++it) {
            QVERIFY2(got.files.contains(it.key()), qPrintable(it.key()));
            QCOMPARE(got.files.value(it.key()).host, it->host);
            QCOMPARE(got.files.value(it.key()).workspace, it->workspace);
        }
    }
    // the base of a folder of that name is not the base of a new folder
    QVERIFY(QDir().rename(m_ws, m_ws + QStringLiteral(".old")));
    QVERIFY(QDir().mkpath(m_ws));
    error.clear();
    QVERIFY(!loadFlushBases(m_ws, &error));
    QVERIFY(error.isEmpty());

    // bases whose folder is gone are swept; others stay
    saveFlushBases(m_dest, bases);
    QVERIFY(QDir(m_dest).removeRecursively());
    QCOMPARE(removeOrphanFlushBases(m_ws), 1);
    QVERIFY(!exists(flushBasePath(m_dest)));
    QVERIFY(exists(flushBasePath(m_ws)));
    QCOMPARE(removeOrphanFlushBases(m_ws), 0);

    // a crashed save's temp file goes too; a link or a folder of a base's name never does
    const QFileInfo base(flushBasePath(m_ws));
    const QString temp = base.path() + QStringLiteral("/.") + base.fileName() +
                         QStringLiteral(".elsai-tmp-0123456789ab");
    QVERIFY(writeBytes(temp, "partial"));
    const QString goneLink = base.path() + QStringLiteral("/.gone-link.elsai-flush-base");
    const QString goneFolder = base.path() + QStringLiteral("/.gone-folder.elsai-flush-base");
    QVERIFY(QFile::link(temp, goneLink));
    QVERIFY(QDir().mkpath(goneFolder));
    QCOMPARE(removeOrphanFlushBases(m_ws), 1);
    QVERIFY(!exists(temp));
    QVERIFY(QFileInfo(goneLink).isSymLink());
    QVERIFY(QFileInfo(goneFolder).isDir());
    QVERIFY(QFile::remove(goneLink));
    QVERIFY(QDir().rmdir(goneFolder));
}

void TestTreeCopy::repeatedFlushIsUnchanged()
{
    QVERIFY(writeBytes(m_src + QStringLiteral("/src/a.py"), "a1"));
    QVERIFY(setMtime(m_src + QStringLiteral("/src/a.py"), kPast));
    WorkspaceFs ws(m_ws);
    SeedManifest manifest = seedInto(m_src, ws);
    const GlobSet includes(DEFAULT_SANDBOX_SYNC_INCLUDE);
    const GlobSet excludes(DEFAULT_WORKSPACE_POLICY_EXCLUDES);

    QVERIFY(writeBytes(m_ws + QStringLiteral("/src/a.py"), "a2"));
    QVERIFY(writeBytes(m_ws + QStringLiteral("/src/new.py"), "new"));
    SyncPlan plan = planSync(ws, m_src, includes, excludes, &manifest);
    QCOMPARE(findSync(plan, QStringLiteral("src/a.py"))->action, SyncAction::Update);
    QCOMPARE(findSync(plan, QStringLiteral("src/new.py"))->action, SyncAction::Add);
    int progressCalls = 0;
    WorkspaceSyncResult r = executeSync(plan, ws, &manifest, [&](int done, int total) {
        ++progressCalls;
        QCOMPARE(total, 2);
        QVERIFY(done >= 1 && done <= 2);
    });
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(r.filesSynced, 2);
    QCOMPARE(progressCalls, 2);
    QCOMPARE(readBytes(m_src + QStringLiteral("/src/a.py")), QByteArray("a2"));
    QCOMPARE(readBytes(m_src + QStringLiteral("/src/new.py")), QByteArray("new"));

    // the second flush finds nothing to do
    plan = planSync(ws, m_src, includes, excludes, &manifest);
    QCOMPARE(plan.entries.size(), 2);
    for (const SyncPlanEntry &e : plan.entries)
        QCOMPARE(e.action, SyncAction::Unchanged);
    r = executeSync(plan, ws, &manifest);
    QVERIFY(r.success());
    QCOMPARE(r.filesSynced, 0);

    // and a later workspace edit is a plain update again, not a conflict
    QVERIFY(writeBytes(m_ws + QStringLiteral("/src/new.py"), "newer"));
    plan = planSync(ws, m_src, includes, excludes, &manifest);
    QCOMPARE(findSync(plan, QStringLiteral("src/new.py"))->action, SyncAction::Update);
}

// A flush that finds the same bytes on both sides ("converged") writes nothing but moves the
// base, so a later change on one side only is decided as that side's, not as a conflict; a
// flush where the host alone changed (host wins) leaves the base where it was.
void TestTreeCopy::convergedMovesTheBase_data()
{
    QTest::addColumn<QString>("host");    // before the first flush: "", "same", "edit", "new"
    QTest::addColumn<QString>("sandbox"); // "", "same", "new"
    QTest::addColumn<bool>("base");       // the first flush has the seed's base
    QTest::addColumn<bool>("converged");  // the first plan's flag for src/a.py
    QTest::addColumn<QString>("then");    // the later change: "host" or "sandbox"
    QTest::addColumn<int>("after");       // the second plan's action for src/a.py

    // clang-format off
    QTest::newRow("both changed alike, then host") << "same" << "same" << true  << true  << "host"    << int(SyncAction::KeepHost);
    QTest::newRow("both changed alike, then ours") << "same" << "same" << true  << true  << "sandbox" << int(SyncAction::Update);
    QTest::newRow("both added alike, then host")   << "new"  << "new"  << true  << true  << "host"    << int(SyncAction::KeepHost);
    QTest::newRow("no base, same bytes, then host")<< ""     << ""     << false << true  << "host"    << int(SyncAction::KeepHost);
    QTest::newRow("no base, same bytes, then ours")<< ""     << ""     << false << true  << "sandbox" << int(SyncAction::Update);
    QTest::newRow("unchanged, then host")          << ""     << ""     << true  << false << "host"    << int(SyncAction::KeepHost);
    QTest::newRow("host won, then ours: conflict") << "edit" << ""     << true  << false << "sandbox" << int(SyncAction::Conflict);
    // clang-format on
}

void TestTreeCopy::convergedMovesTheBase()
{
    QFETCH(QString, host);
    QFETCH(QString, sandbox);
    QFETCH(bool, base);
    QFETCH(bool, converged);
    QFETCH(QString, then);
    QFETCH(int, after);
    const QString rel = host == u"new" ? QStringLiteral("src/n.py") : QStringLiteral("src/a.py");
    QVERIFY(writeBytes(m_src + QStringLiteral("/src/a.py"), "seeded"));
    QVERIFY(setMtime(m_src + QStringLiteral("/src/a.py"), kPast));
    WorkspaceFs ws(m_ws);
    SeedManifest manifest = seedInto(m_src, ws);
    if (!base)
        manifest = SeedManifest{}; // a folder this workspace has no base for
    const GlobSet includes(DEFAULT_SANDBOX_SYNC_INCLUDE);
    const GlobSet excludes(DEFAULT_WORKSPACE_POLICY_EXCLUDES);
    const auto edit = [](const QString &path, const QByteArray &bytes, qint64 mtime) {
        return writeBytes(path, bytes) && setMtime(path, mtime);
    };
    if (host == u"same" || host == u"new")
        QVERIFY(edit(m_src + u'/' + rel, "alike", kPast + 10));
    else if (host == u"edit")
        QVERIFY(edit(m_src + u'/' + rel, "host edit", kPast + 10));
    if (sandbox == u"same" || sandbox == u"new")
        QVERIFY(edit(m_ws + u'/' + rel, "alike", kPast + 20));

    SyncPlan plan = planSync(ws, m_src, includes, excludes, base ? &manifest : nullptr);
    const SyncPlanEntry *first = findSync(plan, rel);
    QVERIFY(first);
    QCOMPARE(first->converged, converged);
    const QByteArray hostBefore = readBytes(m_src + u'/' + rel);
    const QDateTime mtimeBefore = QFileInfo(m_src + u'/' + rel).lastModified();
    if (!base)
        manifest.hostRoot = m_src; // as a backend keeps a fresh base for this folder
    WorkspaceSyncResult r = executeSync(plan, ws, &manifest);
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(QFileInfo(m_src + u'/' + rel).lastModified(), mtimeBefore); // nothing written
    QCOMPARE(readBytes(m_src + u'/' + rel), hostBefore);
    QCOMPARE(manifest.files.contains(rel), base || converged);
    QCOMPARE(convergedPaths(plan).contains(rel), converged);

    if (then == u"host")
        QVERIFY(edit(m_src + u'/' + rel, "host later", kPast + 30));
    else
        QVERIFY(edit(m_ws + u'/' + rel, "sandbox later", kPast + 40));
    plan = planSync(ws, m_src, includes, excludes, &manifest);
    QCOMPARE(int(findSync(plan, rel)->action), after);
}

// The one listing → SyncItem selection of the remote backends (SSH, Daytona): folders left
// out, include/exclude rules applied, links and special files as such, and only the files
// changed since the base (or not in it) fetched.
void TestTreeCopy::remoteSelection_data()
{
    QTest::addColumn<bool>("base");
    QTest::addColumn<QStringList>("items");
    QTest::addColumn<QStringList>("fetch");
    const QStringList all = {"src/a.py", "src/b.py", "src/link.py", "src/fifo.py", "src/new.py"};
    QTest::newRow("no base: every file fetched")
        << false << all << QStringList{"src/a.py", "src/b.py", "src/new.py"};
    QTest::newRow("base: changed and new files fetched")
        << true << all << QStringList{"src/b.py", "src/new.py"};
}

void TestTreeCopy::remoteSelection()
{
    QFETCH(bool, base);
    QFETCH(QStringList, items);
    QFETCH(QStringList, fetch);
    QHash<QString, FindRecord> listing;
    const auto add = [&](const char *name, char type, qint64 size, qint64 mtime) {
        FindRecord r;
        r.type = type;
        r.size = size;
        r.mtimeNs = mtime;
        r.name = QString::fromUtf8(name);
        listing.insert(r.name, r);
    };
    add("src", 'd', 0, 0);
    add("src/a.py", 'f', 1, 100);   // as the base has it
    add("src/b.py", 'f', 2, 200);   // changed since the base
    add("src/new.py", 'f', 3, 300); // not in the base
    add("src/link.py", 'l', 0, 0);
    add("src/fifo.py", 'p', 0, 0);
    add("notes.txt", 'f', 1, 1);      // not included
    add(".git/config.py", 'f', 1, 1); // excluded
    SeedManifest manifest{QStringLiteral("/host"), {}};
    manifest.files.insert(QStringLiteral("src/a.py"), {{1, 1}, {1, 100}});
    manifest.files.insert(QStringLiteral("src/b.py"), {{1, 1}, {2, 100}});
    const RemoteSyncSelection sel =
        selectRemoteSync(listing, GlobSet(DEFAULT_SANDBOX_SYNC_INCLUDE),
                         GlobSet(DEFAULT_WORKSPACE_POLICY_EXCLUDES), base ? &manifest : nullptr);
    QStringList names;
    for (const SyncItem &i : sel.items)
        names << i.path;
    names.sort();
    items.sort();
    QCOMPARE(names, items);
    QCOMPARE(sel.fetch, fetch);
    for (const SyncItem &i : sel.items) {
        const SyncItem::Kind want = i.path == u"src/link.py"   ? SyncItem::Kind::Symlink
                                    : i.path == u"src/fifo.py" ? SyncItem::Kind::Special
                                                               : SyncItem::Kind::File;
        QCOMPARE(int(i.kind), int(want));
        if (i.kind == SyncItem::Kind::File)
            QCOMPARE(i.stamp,
                     (FileStamp{listing.value(i.path).size, listing.value(i.path).mtimeNs}));
    }
}

void TestTreeCopy::syncDestParentSymlink_data()
{
    QTest::addColumn<bool>("fallback");
    QTest::newRow("openat2") << false;
    QTest::newRow("openat walk") << true;
}

void TestTreeCopy::syncDestParentSymlink()
{
    QFETCH(bool, fallback);
    setConfinedOpenForceFallback(fallback);
    WorkspaceFs ws(m_ws);
    QVERIFY(writeBytes(m_ws + QStringLiteral("/src/a.py"), "a"));
    QVERIFY(writeBytes(m_ws + QStringLiteral("/src/deep/b.py"), "b"));
    QVERIFY(writeBytes(m_ws + QStringLiteral("/tests/t.py"), "t"));
    QVERIFY(writeBytes(m_ws + QStringLiteral("/README.md"), "readme"));
    QVERIFY(writeBytes(m_ws + QStringLiteral("/ok.md"), "ok"));
    // on the host: a folder that is a symlink to outside, a file where a folder should be,
    // and a target file that is itself a symlink
    QVERIFY(makeSymlink(m_outside + QStringLiteral("/dir"), m_dest + QStringLiteral("/src")));
    QVERIFY(writeBytes(m_dest + QStringLiteral("/tests"), "a file"));
    QVERIFY(
        makeSymlink(m_outside + QStringLiteral("/secret"), m_dest + QStringLiteral("/README.md")));
    const QStringList outsideBefore = listTree(m_outside);

    const GlobSet includes(DEFAULT_SANDBOX_SYNC_INCLUDE);
    const SyncPlan plan = planSync(ws, m_dest, includes, GlobSet(), nullptr);
    QCOMPARE(plan.errors.size(), 4);
    QCOMPARE(plan.entries.size(), 1);
    QCOMPARE(plan.entries.first().path, QStringLiteral("ok.md"));

    // the same files in a plan made before the host changed: executeSync refuses too
    SyncPlan stale;
    stale.destRoot = m_dest;
    for (const char *p : {"src/a.py", "src/deep/b.py", "tests/t.py", "README.md", "ok.md"})
        stale.entries.append({QString::fromLatin1(p), SyncAction::Add, 1});
    const WorkspaceSyncResult r = executeSync(stale, ws);
    QCOMPARE(r.errors.size(), 4);
    QCOMPARE(r.filesSynced, 1);
    QCOMPARE(listTree(m_outside), outsideBefore);
    QCOMPARE(readBytes(m_outside + QStringLiteral("/secret")), QByteArray("outside secret"));
    QCOMPARE(readBytes(m_dest + QStringLiteral("/tests")), QByteArray("a file"));
    QVERIFY(S_ISLNK(lstatOf(m_dest + QStringLiteral("/src")).st_mode));
    QVERIFY(S_ISLNK(lstatOf(m_dest + QStringLiteral("/README.md")).st_mode));
    QCOMPARE(readBytes(m_dest + QStringLiteral("/ok.md")), QByteArray("ok"));
}

// S4 through planSync
void TestTreeCopy::syncIncludeRules()
{
    WorkspaceFs ws(m_ws);
    const QStringList selected = {"build/out.o", "docs/x/y.md", "pkg/mod.py",   "src/.hidden",
                                  "src/a/b.c",   "tests/t.txt", "web/app.json", ".ci.yml"};
    const QStringList notSelected = {
        "dist",     "lib/x.c", "node_modules/p/package.json", ".git/config.json", "web/dist/app.js",
        "Makefile", "src.c"};
    for (const QString &p : selected + notSelected)
        QVERIFY(writeBytes(m_ws + u'/' + p, p.toUtf8()));
    const SyncPlan plan = planSync(ws, m_dest, GlobSet(DEFAULT_SANDBOX_SYNC_INCLUDE),
                                   GlobSet(DEFAULT_WORKSPACE_POLICY_EXCLUDES), nullptr);
    QVERIFY(plan.errors.isEmpty());
    QStringList paths;
    for (const SyncPlanEntry &e : plan.entries) {
        QCOMPARE(e.action, SyncAction::Add);
        QCOMPARE(e.size, qint64(e.path.toUtf8().size()));
        paths << e.path;
    }
    paths.sort();
    QStringList want = selected;
    want.sort();
    QCOMPARE(paths, want);

    // `dist/**` takes what is inside a dist folder
    QVERIFY(QFile::remove(m_ws + QStringLiteral("/dist")));
    QVERIFY(writeBytes(m_ws + QStringLiteral("/dist/app.js"), "js"));
    const SyncPlan withDist =
        planSync(ws, m_dest, GlobSet(DEFAULT_SANDBOX_SYNC_INCLUDE), GlobSet(), nullptr);
    QVERIFY(findSync(withDist, QStringLiteral("dist/app.js")));
}

void TestTreeCopy::syncToMissingDestination()
{
    WorkspaceFs ws(m_ws);
    QVERIFY(writeBytes(m_ws + QStringLiteral("/src/a.py"), "a"));
    QVERIFY(::chmod(QFile::encodeName(m_ws + QStringLiteral("/src/a.py")).constData(), 0751) == 0);
    const QString dest = m_dest + QStringLiteral("/new/folder");
    const SyncPlan plan =
        planSync(ws, dest, GlobSet(DEFAULT_SANDBOX_SYNC_INCLUDE), GlobSet(), nullptr);
    QVERIFY(plan.errors.isEmpty());
    QCOMPARE(plan.entries.size(), 1);
    const WorkspaceSyncResult r = executeSync(plan, ws);
    QVERIFY2(r.success(), qPrintable(r.errors.join(u'\n')));
    QCOMPARE(readBytes(dest + QStringLiteral("/src/a.py")), QByteArray("a"));
    QCOMPARE(lstatOf(dest + QStringLiteral("/src/a.py")).st_mode & 07777, mode_t(0751));
}

QTEST_GUILESS_MAIN(TestTreeCopy)
#include "tst_treecopy.moc"
