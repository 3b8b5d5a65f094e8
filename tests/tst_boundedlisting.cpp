// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Agent listings cost memory proportional to what they return (issue 10 §4): a folder of
// 200,000 entries is listed by the list_dir tool under an address-space limit far below what
// the whole folder's listing needs, and the capped listing keeps the first entries by name.

#include "agent.h"
#include "findrecord.h"
#include "firstentries.h"
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "sandboxplugin.h"
#include "testutil.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <unistd.h>

using namespace elsai;

class TestBoundedListing : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    std::shared_ptr<LocalSandboxBackend> m_backend;
    static constexpr int Files = 200000;

    static QByteArray nameOf(int i)
    {
        // long names, so that a listing of all of them is clearly larger than the limit
        return QByteArray("entry-with-a-rather-long-name-") +
               QByteArray::number(i).rightJustified(6, '0');
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString ws = m_tmp.filePath(QStringLiteral("ws"));
        QDir().mkpath(ws + QStringLiteral("/big"));
        const QByteArray big = QFile::encodeName(ws + QStringLiteral("/big"));
        const int dir = ::open(big.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        QVERIFY(dir >= 0);
        // in reverse order, so that readdir order is not name order
        for (int i = Files; i >= 1; --i) {
            const int fd =
                ::openat(dir, nameOf(i).constData(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
            QVERIFY(fd >= 0);
            ::close(fd);
        }
        ::close(dir);
        m_backend = std::make_shared<LocalSandboxBackend>(ws);
        m_backend->create();
    }

    void firstEntriesAreTheFirstByName_data()
    {
        QTest::addColumn<int>("cap");
        QTest::newRow("none") << 0;
        QTest::newRow("one") << 1;
        QTest::newRow("the agent cap") << int(listDirMaxEntries());
        QTest::newRow("all of them") << Files + 10;
    }
    void firstEntriesAreTheFirstByName()
    {
        QFETCH(int, cap);
        const CappedListing first = listDirFirst(*m_backend, QStringLiteral("big"), cap, -1);
        QCOMPARE(first.totalEntries, qint64(Files));
        QCOMPARE(first.listing.size(), qMin(cap, Files));
        for (qsizetype i = 0; i < first.listing.size(); i += qMax<qsizetype>(1, cap / 7)) {
            const DirListing::Entry &e = first.listing.entries[size_t(i)];
            QCOMPARE(first.listing.name(e).toByteArray(), nameOf(int(i) + 1));
            QCOMPARE(e.size, std::optional<qint64>(0)); // lstat'ed: kept entries only
        }
    }

    // A remote answer is agent-controlled (the sandbox runs the listing): it cannot name
    // paths outside the folder, nor make the engine hold more than the cap.
    void cappedRemoteAnswersAreChecked_data()
    {
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<qint64>("total");
        QTest::addColumn<QStringList>("paths");
        const QByteArray a = "f\t1\t1.5\t1:2\ta";
        const QByteArray b = "f\t1\t1.5\t1:3\tb";
        QTest::newRow("plain") << ("7\n" + a + '\0' + b + '\0') << true << 7LL
                               << QStringList{"d/a", "d/b"};
        QTest::newRow("more records than the cap")
            << ("9\n" + a + '\0' + b + '\0' + "f\t1\t1\t1:4\tc" + '\0') << true << 9LL
            << QStringList{"d/a", "d/b"};
        const QByteArray up = "f\t1\t1\t1:5\t..", slash = "f\t1\t1\t1:6\tx/y",
                         empty = "f\t1\t1\t1:7\t";
        QTest::newRow("escaping names dropped")
            << ("4\n" + up + '\0' + slash + '\0' + empty + '\0' + a + '\0') << true << 4LL
            << QStringList{"d/a"};
        QTest::newRow("a count below what came is raised")
            << ("0\n" + a + '\0') << true << 1LL << QStringList{"d/a"};
        QTest::newRow("no count line") << (a + '\0') << false << 0LL << QStringList();
        QTest::newRow("a count that is not one") << ("x7\n" + a) << false << 0LL << QStringList();
    }
    void cappedRemoteAnswersAreChecked()
    {
        QFETCH(QByteArray, answer);
        QFETCH(bool, ok);
        QFETCH(qint64, total);
        QFETCH(QStringList, paths);
        DirListing listing;
        qint64 count = 0;
        QCOMPARE(parseCappedListing(answer, QStringLiteral("d"), 2, &listing, &count), ok);
        if (!ok)
            return;
        QCOMPARE(count, total);
        QStringList got;
        for (const DirListing::Entry &e : listing.entries)
            got << listing.path(e);
        QCOMPARE(got, paths);
    }

    void listDirToolIsBoundedInMemory_data()
    {
        QTest::addColumn<QString>("tool");
        QTest::newRow("list_dir (structured)") << QStringLiteral("list_dir");
        QTest::newRow("listWorkspaceDir (text)") << QStringLiteral("text");
    }
    void listDirToolIsBoundedInMemory()
    {
        QFETCH(QString, tool);
        if (test::addressSanitized())
            QSKIP("AddressSanitizer reserves terabytes of address space: no RLIMIT_AS");
        const SandboxPtr sb = Sandbox::create(QStringLiteral("bounded-listing"), m_backend, 600);
        sb->start();
        const AgentPtr reader = Agent::create(QStringLiteral("reader"));
        sb->attach(reader, SandboxAttachMode::ReadOnly);
        // Listing all 200,000 entries costs far more than 16 MiB (their paths alone are
        // ~14 MB as UTF-16); the first 2,000 cost well under 1 MiB.
        const int status = test::exitStatusUnderAddressLimit(
            [](qint64 mapped) { return mapped + (qint64(16) << 20); },
            [&]() -> int {
                if (tool == QLatin1String("text")) {
                    const QString text = listWorkspaceDir(*reader, QStringLiteral("big"));
                    return text.contains(QStringLiteral("198000 more entries not shown (200000 "
                                                        "in all"))
                               ? 0
                               : 10;
                }
                const ToolResult r =
                    reader->callTool(QStringLiteral("list_dir"), {{QStringLiteral("path"), "big"}});
                if (r.data.value(QStringLiteral("entries")).toArray().size() != listDirMaxEntries())
                    return 11;
                if (r.data.value(QStringLiteral("total_entries")).toInteger() != Files)
                    return 12;
                return r.data.value(QStringLiteral("truncated")).toBool() ? 0 : 13;
            });
        QCOMPARE(status, 0);
        sb->stop(false);
    }
};

QTEST_GUILESS_MAIN(TestBoundedListing)
#include "tst_boundedlisting.moc"
