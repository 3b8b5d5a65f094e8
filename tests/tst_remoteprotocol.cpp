// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The remote command protocol (backends/remote/) in a real local shell: the confined file
// operations over both channels, the command wrapper and its trailer, shell quoting. Every
// remote backend (SSH, Daytona, AgentCore, containers) sends exactly these scripts.

#include "commandwrapper.h"
#include "confinedscript.h"
#include "errors.h"
#include "remotefetch.h"
#include "shellquote.h"
#include "tempfiles.h"
#include "testutil.h"

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>

using namespace elsai;
using namespace elsai::remote;

namespace {

struct Run
{
    int exitCode = -1;
    QByteArray out, err;
};

Run sh(const QString &script, const QByteArray &input = {})
{
    QProcess p;
    p.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), script});
    p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(60000))
        qFatal("a protocol script did not finish");
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

/// One confined operation through `channel`, as a backend runs it.
QByteArray op(Channel channel, const QString &root, const QString &name, const QString &path,
              const QStringList &args = {}, const QByteArray &input = {})
{
    const Run r = sh(confinedScript(channel, root, name, path, args), input);
    return confinedPayload(channel, r.exitCode, r.out, r.err, QStringLiteral("test"));
}

QString errorType(const std::function<void()> &f)
{
    try {
        f();
    } catch (const SandboxError &e) {
        return e.specName();
    }
    return QStringLiteral("none");
}

} // namespace

Q_DECLARE_METATYPE(elsai::remote::Channel)

class TestRemoteProtocol : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void quotingSurvivesAnyText_data()
    {
        QTest::addColumn<QString>("text");
        for (const char *t : {"", "plain", "it's", "'", "''", "a b\tc\nd", "$HOME `id` $(id)",
                              "\\'\\", "\"'\"", "-n", "*"})
            QTest::newRow(t) << QString::fromUtf8(t);
    }
    void quotingSurvivesAnyText()
    {
        QFETCH(QString, text);
        const Run r = sh(QStringLiteral("printf %s ") + shellQuote(text));
        QCOMPARE(QString::fromUtf8(r.out), text);
        QCOMPARE(QString::fromUtf8(
                     sh(QStringLiteral("printf %s ") + QString::fromUtf8(shellQuote(text.toUtf8())))
                         .out),
                 text);
    }

    void bothChannelsMoveTheSameFiles_data()
    {
        QTest::addColumn<Channel>("channel");
        QTest::newRow("binary") << Channel::Binary;
        QTest::newRow("text") << Channel::Text;
    }
    void bothChannelsMoveTheSameFiles()
    {
        QFETCH(Channel, channel);
        QTemporaryDir dir;
        const QString ws = dir.path();
        QByteArray content("bin\0ary\n\xff", 9);
        const QString temp = confinedTempName(QStringLiteral("f.bin"));
        QVERIFY(isTempNameFor(temp.toUtf8(), "f.bin")); // the local writer's own format
        if (channel == Channel::Text)
            op(channel, ws, QStringLiteral("write"), QStringLiteral("d/f.bin"),
               {temp, QString::fromLatin1(content.toBase64())});
        else
            op(channel, ws, QStringLiteral("write"), QStringLiteral("d/f.bin"), {temp}, content);
        QCOMPARE(op(channel, ws, QStringLiteral("read"), QStringLiteral("d/f.bin")), content);
        const FileRange range =
            confinedRange(op(channel, ws, QStringLiteral("range"), QStringLiteral("d/f.bin"),
                             confinedRangeArgs(3, 3)),
                          3, QStringLiteral("test"));
        QCOMPARE(range.totalSize, 9);
        QCOMPARE(range.data, QByteArray("\0ar", 3));
        const QList<FileInfo> list = confinedEntries(
            op(channel, ws, QStringLiteral("list"), QStringLiteral("d")), QStringLiteral("d"));
        QCOMPARE(list.size(), 1); // the temp file is gone
        QCOMPARE(list.first().path, QStringLiteral("d/f.bin"));
        QCOMPARE(list.first().size, 9);
        QCOMPARE(QString::fromUtf8(op(channel, ws, QStringLiteral("cwd"), QStringLiteral("d"))),
                 QDir(ws).canonicalPath() + QStringLiteral("/d"));
        op(channel, ws, QStringLiteral("remove"), QStringLiteral("d"), {QStringLiteral("1")});
        QVERIFY(!QFileInfo::exists(ws + QStringLiteral("/d")));
    }

    // The same hostile case is the same error type on every channel, and the type the local
    // backend raises (PermissionError for an escape and for a link loop).
    void refusalsAreTyped_data()
    {
        QTest::addColumn<Channel>("channel");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("type");
        QTest::addColumn<int>("errnoValue");
        // clang-format off
        for (const Channel c : {Channel::Binary, Channel::Text}) {
            const char *ch = c == Channel::Binary ? "binary" : "text";
            const auto row = [&](const char *name, const char *o, const char *p, const char *t, int e) {
                QTest::addRow("%s %s", ch, name) << c << QString::fromUtf8(o) << QString::fromUtf8(p)
                                                 << QString::fromUtf8(t) << e;
            };
            row("missing",        "read",  "nope",       "FileNotFoundError",  ENOENT);
            row("folder read",    "read",  "sub",        "IsADirectoryError",  EISDIR);
            row("file as folder", "list",  "f/x",        "NotADirectoryError", ENOTDIR);
            row("loop read",      "read",  "loop",       "PermissionError",    ELOOP);
            row("loop cwd",       "cwd",   "loop",       "PermissionError",    ELOOP);
            row("escape read",    "read",  "up/passwd",  "PermissionError",    EACCES);
            row("escape list",    "list",  "up",         "PermissionError",    EACCES);
            row("abs link",       "read",  "abs",        "PermissionError",    EACCES);
            row("dangling out",   "stat",  "dangling/x", "PermissionError",    EACCES);
            row("fifo",           "read",  "fifo",       "OSError",            EINVAL);
        }
        // clang-format on
    }
    void refusalsAreTyped()
    {
        QFETCH(Channel, channel);
        QFETCH(QString, op);
        QFETCH(QString, path);
        QFETCH(QString, type);
        QFETCH(int, errnoValue);
        QTemporaryDir dir;
        const QString ws = dir.path() + QStringLiteral("/ws");
        QVERIFY(QDir().mkpath(ws + QStringLiteral("/sub")));
        QCOMPARE(sh(QStringLiteral("cd %1 && echo x > f && ln -s loop loop && ln -s .. up && "
                                   "ln -s /etc/passwd abs && ln -s /nonexistent dangling && "
                                   "mkfifo fifo")
                        .arg(shellQuote(ws)))
                     .exitCode,
                 0);
        try {
            ::op(channel, ws, op, path);
            QFAIL("not refused");
        } catch (const OSError &e) {
            QCOMPARE(e.specName(), type);
            QCOMPARE(e.errnoValue(), errnoValue);
            QVERIFY2(e.message().contains(path.section(u'/', 0, 0)), qPrintable(e.message()));
        }
    }

    // The wording of an escape and a loop is the local backend's (WorkspaceFs).
    void escapeAndLoopWordingIsTheLocalOnes()
    {
        QTemporaryDir dir;
        QCOMPARE(sh(QStringLiteral("cd %1 && ln -s loop loop && ln -s / root")
                        .arg(shellQuote(dir.path())))
                     .exitCode,
                 0);
        const auto message = [&](const QString &path) {
            try {
                op(Channel::Binary, dir.path(), QStringLiteral("read"), path);
            } catch (const SandboxError &e) {
                return e.message();
            }
            return QString();
        };
        QCOMPARE(
            message(QStringLiteral("root/etc/passwd")),
            QStringLiteral("'root/etc/passwd' resolves outside the workspace (symbolic link)"));
        QCOMPARE(message(QStringLiteral("loop")),
                 QStringLiteral("'loop': too many symbolic links, or a link that cannot be "
                                "followed safely"));
    }

    void aForgedTempNameIsRefused_data()
    {
        QTest::addColumn<QString>("temp");
        QTest::newRow("slash") << QStringLiteral("../.x.elsai-tmp-0123456789ab");
        QTest::newRow("not a temp name") << QStringLiteral("victim");
        QTest::newRow("empty") << QString();
    }
    void aForgedTempNameIsRefused()
    {
        QFETCH(QString, temp);
        QTemporaryDir dir;
        QCOMPARE(errorType([&] {
                     op(Channel::Text, dir.path(), QStringLiteral("write"), QStringLiteral("f"),
                        {temp, QStringLiteral("eA==")});
                 }),
                 QStringLiteral("OSError"));
        QVERIFY(!QFileInfo::exists(dir.path() + QStringLiteral("/f")));
    }

    void archivesGoBothWays()
    {
        QTemporaryDir dir;
        const QString src = dir.path() + QStringLiteral("/src"), ws = dir.path() + "/ws";
        test::writeHostFile(src + QStringLiteral("/a/b.txt"), "bee");
        test::writeHostFile(src + QStringLiteral("/c.txt"), "sea");
        QVERIFY(QDir().mkpath(ws));
        const Run tar = sh(QStringLiteral("tar -c -f - -C %1 .").arg(shellQuote(src)));
        const Run in =
            sh(confinedScript(Channel::Binary, ws, QStringLiteral("archive-in"), {}), tar.out);
        QCOMPARE(in.exitCode, 0);
        QCOMPARE(test::readHostFile(ws + QStringLiteral("/a/b.txt")), QByteArray("bee"));
        QCOMPARE(in.out.count('\0'), 2); // the stamps of the two files
        // out: everything but the excluded
        const Run out =
            sh(confinedScript(Channel::Binary, ws, QStringLiteral("archive-out"), {}), "./a\n");
        QCOMPARE(out.exitCode, 0);
        QTemporaryDir back;
        QProcess untar;
        untar.start(QStringLiteral("tar"),
                    {QStringLiteral("-x"), QStringLiteral("-f"), QStringLiteral("-"),
                     QStringLiteral("-C"), back.path()});
        untar.write(out.out);
        untar.closeWriteChannel();
        QVERIFY(untar.waitForFinished());
        QVERIFY(QFileInfo::exists(back.path() + QStringLiteral("/c.txt")));
        QVERIFY(!QFileInfo::exists(back.path() + QStringLiteral("/a")));
    }

    // grep's fetch (remotefetch.h): ONE archive-out of the folder with the exclusions from
    // stdin, inline or an uploaded temp file; only the wanted files come back, a link among
    // them is never followed, and an answer over the listed sizes' bound is refused.
    void aFetchIsOneBoundedArchive_data()
    {
        QTest::addColumn<QString>("source");
        QTest::newRow("stdin") << QStringLiteral("stdin");
        QTest::newRow("inline") << QStringLiteral("inline");
        QTest::newRow("uploaded") << QStringLiteral("uploaded");
    }
    void aFetchIsOneBoundedArchive()
    {
        QFETCH(QString, source);
        QTemporaryDir dir;
        const QString ws = dir.path() + QStringLiteral("/ws");
        test::writeHostFile(ws + QStringLiteral("/d/a.txt"), "alpha\n");
        test::writeHostFile(ws + QStringLiteral("/d/sub/-[*] b.txt"), "beta\n");
        test::writeHostFile(ws + QStringLiteral("/d/skip/big.bin"), QByteArray(100000, 'x'));
        test::writeHostFile(ws + QStringLiteral("/secret.txt"), "outside\n");
        QVERIFY(QFile::link(QStringLiteral("../secret.txt"), ws + QStringLiteral("/d/link.txt")));
        const auto file = [](const QString &path, qint64 size) {
            WalkEntry e;
            e.path = path;
            e.type = FileInfo::Type::File;
            e.size = size;
            return e;
        };
        const auto folder = [](const QString &path) {
            WalkEntry e;
            e.path = path;
            e.type = FileInfo::Type::Directory;
            return e;
        };
        FileFetch fetch{QStringLiteral("d"),
                        {file(QStringLiteral("d/a.txt"), 6), folder(QStringLiteral("d/skip")),
                         file(QStringLiteral("d/skip/big.bin"), 100000),
                         file(QStringLiteral("d/link.txt"), 8), folder(QStringLiteral("d/sub")),
                         file(QStringLiteral("d/sub/-[*] b.txt"), 5)},
                        {QStringLiteral("d/a.txt"), QStringLiteral("d/sub/-[*] b.txt"),
                         QStringLiteral("d/link.txt")},
                        1000};
        int runs = 0;
        qsizetype sent = 0;
        const ArchiveOut archiveOut = [&](const QString &folder, const QByteArray &exclusions,
                                          const QString &exclusionsFile, qint64 maxBytes) {
            ++runs;
            std::function<void(const QString &)> upload;
            if (source != QLatin1String("stdin"))
                upload = [&](const QString &local) {
                    QVERIFY(QFile::copy(local, ws + u'/' + QFileInfo(local).fileName()));
                };
            // past the inline size, the list goes as a file
            QByteArray list = exclusions;
            while (source == QLatin1String("uploaded") && list.size() <= kInlineExclusionBytes)
                list += "./none\n";
            test::writeHostFile(exclusionsFile, list);
            const QStringList args = archiveOutArgs(list, exclusionsFile, maxBytes, upload);
            const Run r =
                sh(confinedScript(Channel::Binary, ws, QStringLiteral("archive-out"), folder, args),
                   source == QLatin1String("stdin") ? exclusions : QByteArray());
            sent = r.out.size();
            return confinedPayload(Channel::Binary, r.exitCode, r.out, r.err,
                                   QStringLiteral("archive-out"));
        };
        const auto got = fetchByArchive(fetch, dir.path(), archiveOut);
        QCOMPARE(runs, 1);
        QVERIFY(got);
        QCOMPARE(got->value(QStringLiteral("d/a.txt")), QByteArray("alpha\n"));
        QCOMPARE(got->value(QStringLiteral("d/sub/-[*] b.txt")), QByteArray("beta\n"));
        QVERIFY(!got->contains(QStringLiteral("d/link.txt"))); // a link, not the file outside
        QCOMPARE(got->size(), 2);
        QVERIFY2(sent < 20000, qPrintable(QString::number(sent))); // big.bin stayed behind
        // the uploaded list was read and removed
        const QStringList left = QDir(ws).entryList(QDir::Files | QDir::Hidden);
        QCOMPARE(left, QStringList{QStringLiteral("secret.txt")});

        // a file that grew past its listed size: the answer is cut at the bound and refused
        test::writeHostFile(ws + QStringLiteral("/d/a.txt"), QByteArray(200000, 'y'));
        QVERIFY(!fetchByArchive(fetch, dir.path(), archiveOut));
        QVERIFY2(sent < 80000, qPrintable(QString::number(sent))); // cut inside the sandbox
    }

    // ---- the command wrapper ----------------------------------------------------------------

    void floodIsCappedInsideTheSandbox()
    {
        // What reaches the service is the first streamCap bytes of each stream and one trailer
        // line, however much the command writes.
        WrappedCommand c;
        c.command = QStringLiteral("yes; echo never");
        c.timeoutSeconds = 1;
        c.streamCap = 1000;
        c.trailerTag = "T9";
        const Run r = sh(wrapCommand(c));
        QCOMPARE(r.exitCode, kTimeoutExit);
        QCOMPARE(r.out, QByteArray("y\n").repeated(500));
        QByteArray err = r.err;
        const auto t = takeTrailer(err, "T9");
        QVERIFY2(t, r.err.constData());
        QCOMPARE(t->exitCode, kTimeoutExit);
        QVERIFY(t->droppedOut > 0);
        QCOMPARE(t->droppedErr, 0);
        QCOMPARE(err, QByteArray());
    }

    void theWrapperKeepsExitCodesEnvAndFolder()
    {
        QTemporaryDir dir;
        WrappedCommand c;
        c.command = QStringLiteral("echo \"$A|$(pwd -P)\"; echo err >&2; exit 7");
        c.dir = dir.path();
        c.verifyDir = true;
        c.env = {{QStringLiteral("A"), QStringLiteral("it's $x")}};
        const Run r = sh(wrapCommand(c));
        QCOMPARE(r.exitCode, 7);
        QCOMPARE(r.out, "it's $x|" + QDir(dir.path()).canonicalPath().toUtf8() + "\n");
        QCOMPARE(r.err, QByteArray("err\n"));
    }

    void timeoutSignalsTheGroupAfterTheGrace()
    {
        QTemporaryDir dir;
        const QString flag = dir.path() + QStringLiteral("/termed");
        WrappedCommand c;
        // TERM is caught: the grace lets it write the flag, then KILL ends it.
        c.command = QStringLiteral("trap 'echo t > %1' TERM; sleep 30 & wait; sleep 30 & wait")
                        .arg(shellQuote(flag));
        c.timeoutSeconds = 0.5;
        c.killGraceSeconds = 0.5;
        const Run r = sh(wrapCommand(c));
        QCOMPARE(r.exitCode, kTimeoutExit);
        QVERIFY(QFileInfo::exists(flag));
    }

    void aCommandStartingWithADashIsACommand()
    {
        WrappedCommand c;
        c.command = QStringLiteral("-v");
        QCOMPARE(sh(wrapCommand(c)).exitCode, 127); // "-v: not found", not an option of sh
    }

    void backgroundWorkDoesNotOutliveTheCall()
    {
        QTemporaryDir dir;
        WrappedCommand c;
        c.command = QStringLiteral("(sleep 2; touch %1/late) >/dev/null 2>&1 &")
                        .arg(shellQuote(dir.path()));
        c.marker = QStringLiteral("m1");
        QCOMPARE(sh(wrapCommand(c)).exitCode, 0);
        QTest::qWait(2500);
        QVERIFY(!QFileInfo::exists(dir.path() + QStringLiteral("/late")));
    }

    void sweepFindsTheCallByItsMarker()
    {
        WrappedCommand c;
        c.command = QStringLiteral("sleep 60");
        c.marker = QStringLiteral("sweep-%1").arg(QCoreApplication::applicationPid());
        QProcess p;
        p.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), wrapCommand(c)});
        QVERIFY(p.waitForStarted());
        QTest::qWait(300);
        QCOMPARE(sh(sweepScript(c.marker)).exitCode, 0);
        QVERIFY(p.waitForFinished(10000));
    }

    void aBadEnvironmentNameIsAValueError()
    {
        WrappedCommand c;
        c.command = QStringLiteral("true");
        c.env = {{QStringLiteral("A=B"), QStringLiteral("x")}};
        QCOMPARE(errorType([&] { wrapCommand(c); }), QStringLiteral("ValueError"));
    }

    void takeTrailerReadsOnlyItsOwnLastLine_data()
    {
        QTest::addColumn<QByteArray>("stream");
        QTest::addColumn<bool>("found");
        QTest::addColumn<QByteArray>("rest");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<qint64>("droppedOut");
        QTest::newRow("alone") << QByteArray("\ntag 3 10 0\n") << true << QByteArray() << 3
                               << qint64(10);
        QTest::newRow("after text")
            << QByteArray("err\n\ntag 0 0 5\n") << true << QByteArray("err\n") << 0 << qint64(0);
        QTest::newRow("forged earlier") << QByteArray("\ntag 0 0 0\nmore\n\ntag 1 2 3\n") << true
                                        << QByteArray("\ntag 0 0 0\nmore\n") << 1 << qint64(2);
        QTest::newRow("other tag") << QByteArray("\ntag2 0 0 0\n") << false
                                   << QByteArray("\ntag2 0 0 0\n") << -1 << qint64(0);
        QTest::newRow("not a number") << QByteArray("\ntag 0 x 0\n") << false
                                      << QByteArray("\ntag 0 x 0\n") << -1 << qint64(0);
        QTest::newRow("unfinished")
            << QByteArray("\ntag 0 0 0") << false << QByteArray("\ntag 0 0 0") << -1 << qint64(0);
    }
    void takeTrailerReadsOnlyItsOwnLastLine()
    {
        QFETCH(QByteArray, stream);
        QFETCH(bool, found);
        QFETCH(QByteArray, rest);
        QFETCH(int, exitCode);
        QFETCH(qint64, droppedOut);
        const auto t = takeTrailer(stream, "tag");
        QCOMPARE(bool(t), found);
        QCOMPARE(stream, rest);
        QCOMPARE(t ? t->exitCode : -1, exitCode);
        QCOMPARE(t ? t->droppedOut : 0, droppedOut);
    }

    void capOutputKeepsStdoutFirst()
    {
        QByteArray out("0123456789"), err("abcdef");
        qint64 dropped = 0;
        capOutput(out, err, 12, &dropped);
        QCOMPARE(out, QByteArray("0123456789"));
        QCOMPARE(err, QByteArray("ab"));
        QCOMPARE(dropped, 4);
    }
};

QTEST_GUILESS_MAIN(TestRemoteProtocol)
#include "tst_remoteprotocol.moc"
