// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Keeps the documentation true to the program: every command-line option the docs name exists
// in `elsai-workbench --help` (or belongs to another program named here), every headless
// operation they show is one the script runner knows, and every relative link leads to a file
// of the repository.

#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#ifndef ELSAI_WORKBENCH_BIN
#error "ELSAI_WORKBENCH_BIN must name the elsai-workbench executable"
#endif
#ifndef ELSAI_SOURCE_DIR
#error "ELSAI_SOURCE_DIR must name the source tree"
#endif

namespace {

/// Options the docs quote from other programs, with whose they are.
const QHash<QString, QString> &foreignOptions()
{
    static const QHash<QString, QString> options{
        {QStringLiteral("--cap-drop"), QStringLiteral("bwrap")},
        {QStringLiteral("--clearenv"), QStringLiteral("bwrap")},
        {QStringLiteral("--die-with-parent"), QStringLiteral("bwrap")},
        {QStringLiteral("--disable-userns"), QStringLiteral("bwrap")},
        {QStringLiteral("--new-session"), QStringLiteral("bwrap")},
        {QStringLiteral("--unshare-pid"), QStringLiteral("bwrap")},
        {QStringLiteral("--output-on-failure"), QStringLiteral("ctest")},
        {QStringLiteral("--install"), QStringLiteral("cmake")},
        {QStringLiteral("--prefix"), QStringLiteral("cmake")},
        {QStringLiteral("--prepare"), QStringLiteral(".ci/trixie")},
        {QStringLiteral("--classify"), QStringLiteral("bench/audit_bench")},
        {QStringLiteral("--slow-events"), QStringLiteral("bench/window_bench")},
        {QStringLiteral("--call-graph"), QStringLiteral("perf record")},
        {QStringLiteral("--quick"), QStringLiteral("bench/run.sh")},
        {QStringLiteral("--build-dir"), QStringLiteral("bench/run.sh")},
        {QStringLiteral("--exclude"), QStringLiteral("rsync (the seed benchmark's baseline)")},
        {QStringLiteral("--delete"), QStringLiteral("rsync (the restore benchmark's baseline)")},
        {QStringLiteral("--calls"), QStringLiteral("bench/mcp_bench.sh")},
        {QStringLiteral("--start"), QStringLiteral(".ci/docker")},
        {QStringLiteral("--stop"), QStringLiteral(".ci/docker")},
        {QStringLiteral("--bridge"), QStringLiteral("dockerd")},
        {QStringLiteral("--iptables"), QStringLiteral("dockerd")},
        {QStringLiteral("--time"), QStringLiteral("podman system service")},
        {QStringLiteral("--variant"), QStringLiteral("debootstrap")},
        {QStringLiteral("--transport"), QStringLiteral("claude/gemini mcp add")},
        {QStringLiteral("--header"), QStringLiteral("claude/gemini mcp add")},
        {QStringLiteral("--scope"), QStringLiteral("gemini mcp add")},
        {QStringLiteral("--url"), QStringLiteral("codex mcp add")},
        {QStringLiteral("--bearer-token-env-var"), QStringLiteral("codex mcp add")},
        {QStringLiteral("--requirements"), QStringLiteral("the MCP conformance CLI")},
    };
    return options;
}

QStringList documentFiles()
{
    const QString root = QStringLiteral(ELSAI_SOURCE_DIR);
    QStringList files;
    for (const char *top :
         {"README.md", "ARCHITECTURE.md", "SECURITY.md", "CONTRIBUTING.md", "bench/RESULTS.md"}) {
        if (QFileInfo::exists(root + QLatin1Char('/') + QLatin1String(top)))
            files << root + QLatin1Char('/') + QLatin1String(top);
    }
    QDirIterator it(root + QStringLiteral("/docs"), {QStringLiteral("*.md")}, QDir::Files,
                    QDirIterator::Subdirectories);
    while (it.hasNext())
        files << it.next();
    files.sort();
    return files;
}

QString readText(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

QString programHelp()
{
    QProcess help;
    help.start(QStringLiteral(ELSAI_WORKBENCH_BIN), {QStringLiteral("--help")});
    if (!help.waitForFinished(30000))
        return {};
    return QString::fromUtf8(help.readAllStandardOutput());
}

QSet<QString> optionNames(const QString &text)
{
    static const QRegularExpression option(QStringLiteral("(?<![\\w-])--[a-z][a-z0-9-]*"));
    QSet<QString> names;
    for (auto it = option.globalMatch(text); it.hasNext();)
        names.insert(it.next().captured());
    return names;
}

QString relative(const QString &path)
{
    return QDir(QStringLiteral(ELSAI_SOURCE_DIR)).relativeFilePath(path);
}

} // namespace

class TestDocs : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(documentFiles().size() >= 10, "the docs were not found"); }

    void optionsExist()
    {
        const QString helpText = programHelp();
        QVERIFY2(helpText.contains(QLatin1String("--headless")), qPrintable(helpText));
        const QSet<QString> known = optionNames(helpText);
        QStringList unknown;
        for (const QString &file : documentFiles()) {
            const QSet<QString> named = optionNames(readText(file));
            for (const QString &name : named) {
                if (!known.contains(name) && !foreignOptions().contains(name))
                    unknown << QStringLiteral("%1: %2").arg(relative(file), name);
            }
        }
        unknown.sort();
        QVERIFY2(unknown.isEmpty(), qPrintable(QStringLiteral("options the docs name but "
                                                              "--help does not: ") +
                                               unknown.join(QStringLiteral(", "))));
    }

    void manPageCoversEveryOption()
    {
        QString man = readText(QStringLiteral(ELSAI_SOURCE_DIR "/packaging/elsai-workbench.1"));
        QVERIFY(!man.isEmpty());
        // roff: \- is a hyphen; font changes (\fB … \fR) and italic corrections (\/ \,) go
        man.replace(QLatin1String("\\-"), QLatin1String("-"));
        static const QRegularExpression roff(QStringLiteral("\\\\(f[BIRP]|[/,])"));
        man.remove(roff);
        const QSet<QString> inMan = optionNames(man);
        QStringList missing;
        for (const QString &name : optionNames(programHelp())) {
            if (!inMan.contains(name))
                missing << name;
        }
        missing.sort();
        QVERIFY2(missing.isEmpty(),
                 qPrintable(QStringLiteral("the man page lacks %1: run packaging/update-manpage.sh")
                                .arg(missing.join(QStringLiteral(", ")))));
    }

    // help2man in the C locale turns each byte of a non-ASCII character ("…") into "?"
    // (update-manpage.sh spells it "..." for it).
    void manPageKeepsItsCharacters()
    {
        const QString man =
            readText(QStringLiteral(ELSAI_SOURCE_DIR "/packaging/elsai-workbench.1"));
        QVERIFY(!man.isEmpty());
        QVERIFY2(!man.contains(QLatin1String("??")),
                 "the man page has mangled characters: run packaging/update-manpage.sh");
    }

    void bashCompletion_data()
    {
        QTest::addColumn<QString>("words");
        QTest::addColumn<QString>("expected");
        // clang-format off
        QTest::newRow("an option") << "--seed-f" << "--seed-from";
        QTest::newRow("a backend") << "--backend bw" << "bwrap";
        QTest::newRow("a folder for <DIR>") << "--seed-from @/pro" << "@/project";
        QTest::newRow("a file for <FILE>") << "--script @/pro" << "@/project";
        QTest::newRow("nothing for <N>") << "--timeout 1" << "";
        // clang-format on
    }

    void bashCompletion()
    {
        QFETCH(QString, words);
        QFETCH(QString, expected);
        const QString bash = QStandardPaths::findExecutable(QStringLiteral("bash"));
        if (bash.isEmpty())
            QSKIP("bash is not installed");
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("project")));
        words.replace(QLatin1Char('@'), dir.path());
        expected.replace(QLatin1Char('@'), dir.path());
        const QString script = QStringLiteral(
            "source \"$1\"; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
            "COMPREPLY=(); _elsai_workbench; printf '%s\\n' \"${COMPREPLY[@]}\"");
        QStringList args{QStringLiteral("-c"), script, QStringLiteral("bash"),
                         QStringLiteral(ELSAI_SOURCE_DIR "/packaging/elsai-workbench.bash"),
                         QStringLiteral(ELSAI_WORKBENCH_BIN)};
        args += words.split(QLatin1Char(' '));
        QProcess run;
        run.start(bash, args);
        QVERIFY(run.waitForFinished(30000));
        QCOMPARE(QString::fromUtf8(run.readAllStandardError()), QString());
        QCOMPARE(QString::fromUtf8(run.readAllStandardOutput()).trimmed(), expected);
    }

    void headlessOperationsExist()
    {
        static const QRegularExpression opPattern(QStringLiteral("\\{\"op\":\"([a-z_]+)\""));
        QSet<QString> ops;
        for (const QString &file : documentFiles()) {
            for (auto it = opPattern.globalMatch(readText(file)); it.hasNext();)
                ops.insert(it.next().captured(1));
        }
        QVERIFY2(ops.size() >= 10, "the docs show too few headless operations");
        // Each op with no arguments: a known one fails on its arguments or runs; an unknown one
        // says "unknown op".
        QByteArray script;
        QStringList sorted(ops.begin(), ops.end());
        sorted.sort();
        for (const QString &op : sorted) {
            if (op == QLatin1String("sleep"))
                continue; // no arguments means one second's nap; it is named in --help too
            script += QJsonDocument(QJsonObject{{QStringLiteral("op"), op}})
                          .toJson(QJsonDocument::Compact) +
                      '\n';
        }
        QProcess run;
        run.start(QStringLiteral(ELSAI_WORKBENCH_BIN),
                  {QStringLiteral("--headless"), QStringLiteral("--script"), QStringLiteral("-")});
        QVERIFY(run.waitForStarted());
        run.write(script);
        run.closeWriteChannel();
        QVERIFY(run.waitForFinished(60000));
        const QList<QByteArray> lines = run.readAllStandardOutput().split('\n');
        QStringList unknown;
        for (const QByteArray &line : lines) {
            if (line.contains("unknown op"))
                unknown << QString::fromUtf8(line);
        }
        QVERIFY2(unknown.isEmpty(), qPrintable(unknown.join(QLatin1Char('\n'))));
        // one result line per operation sent: none was swallowed
        QCOMPARE(int(lines.size() - lines.count(QByteArray())), int(script.count('\n')));
    }

    void relativeLinksResolve()
    {
        static const QRegularExpression link(QStringLiteral("\\]\\(([^)#:\\s]+)(#[^)]*)?\\)"));
        QStringList broken;
        for (const QString &file : documentFiles()) {
            const QDir dir = QFileInfo(file).dir();
            for (auto it = link.globalMatch(readText(file)); it.hasNext();) {
                const QString target = it.next().captured(1);
                if (!QFileInfo::exists(dir.filePath(target)))
                    broken << QStringLiteral("%1 → %2").arg(relative(file), target);
            }
        }
        QVERIFY2(broken.isEmpty(), qPrintable(broken.join(QStringLiteral(", "))));
    }

    void noDocumentLeavesTheRepository()
    {
        QStringList outside;
        for (const QString &file : documentFiles()) {
            if (readText(file).contains(QLatin1String("../shared/")))
                outside << relative(file);
        }
        QVERIFY2(outside.isEmpty(), qPrintable(outside.join(QStringLiteral(", "))));
    }
};

QTEST_GUILESS_MAIN(TestDocs)
#include "tst_docs.moc"
