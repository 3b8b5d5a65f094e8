// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// Offload of large sandbox tool results: token counting, the storages, the policy, and the
// whole path through an Agent attached to a started Sandbox (offloaded tool results and the
// retrieve_offloaded_content tool).

#include "agent.h"
#include "backend.h"
#include "errors.h"
#include "offload.h"
#include "sandbox.h"
#include "tools.h"
#include "types.h"

#include "localsandboxbackend.h"
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QMutex>
#include <QSet>
#include <QTemporaryDir>

#include <QtTest>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

using namespace elsai;

using WorkspaceBackend = LocalSandboxBackend;

namespace {

/// Runs `f` and returns the spec name of the SandboxError it throws ("" when none).
QString errorName(const std::function<void()> &f)
{
    try {
        f();
    } catch (const SandboxError &e) {
        return e.specName();
    } catch (const std::exception &e) {
        return QStringLiteral("std::exception: ") + QString::fromUtf8(e.what());
    }
    return QString();
}

/// Counts how often the policy stores something.
class CountingStorage : public InMemoryStorage
{
public:
    QString store(const QString &content) override
    {
        ++stores;
        return InMemoryStorage::store(content);
    }
    std::atomic_int stores{0};
};

/// Line `i` of the big test file.
QString bigLine(int i)
{
    return QStringLiteral("line %1: lorem ipsum dolor sit amet").arg(i, 4, 10, QLatin1Char('0'));
}

constexpr int BigLines = 2000;

/// 2000 lines, each ending with '\n' (about 18,000 tokens).
QString bigText()
{
    QString s;
    for (int i = 0; i < BigLines; ++i)
        s += bigLine(i) + QLatin1Char('\n');
    return s;
}

/// Lines [from, to) of the big text joined by '\n'; `trailing` adds the final newline.
QString bigLines(int from, int to, bool trailing = false)
{
    QStringList lines;
    for (int i = from; i < to; ++i)
        lines.append(bigLine(i));
    return lines.join(QLatin1Char('\n')) + (trailing ? QStringLiteral("\n") : QString());
}

bool isValidUtf8(const QString &s)
{
    return !s.contains(QChar::ReplacementCharacter);
}

} // namespace

class TestOffload : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    // Token counting
    void countTokens_data();
    void countTokens();
    void truncateToTokens_data();
    void truncateToTokens();
    void truncateToTokensIsLongestValidPrefix();

    // Storages
    void inMemoryStorage();
    void inMemoryStorageConcurrent();
    void fileStorageCreatesFolder();
    void fileStorageWritesOneFilePerResult();
    void fileStorageRejectsNonHandles_data();
    void fileStorageRejectsNonHandles();
    void fileStorageDoesNotFollowPlantedSymlink();
    void fileStorageSurvivesNewInstance();
    void fileStorageFolderSwappedForSymlink();
    void fileStorageInsideWorkspaceRefused_data();
    void fileStorageInsideWorkspaceRefused();

    // Policy
    void policyDefaults();
    void offloadThreshold_data();
    void offloadThreshold();
    void offloadPreviewAndNote();
    void offloadNoteNamesRetrievalTool_data();
    void offloadNoteNamesRetrievalTool();
    void offloadCustomLimitsAndMultibyte();
    void offloadWithoutStorage();

    // Through an agent
    void agentOffloadsBigReadFile();
    void agentKeepsSmallResults();
    void agentRetrievesOffloadedContent_data();
    void agentRetrievesOffloadedContent();
    void agentToolNamesSelectWhatIsOffloaded_data();
    void agentToolNamesSelectWhatIsOffloaded();
    void agentRetrievalToolFlag_data();
    void agentRetrievalToolFlag();
    void agentUnknownHandle_data();
    void agentUnknownHandle();
    void agentWithFileStorage();
    void agentWithoutPolicy();

private:
    /// Starts a sandbox on a fresh folder and creates an attached agent with `policy`.
    AgentPtr makeAgent(std::optional<SandboxOutputOffloadPolicy> policy);
    QString handleOf(const ToolResult &r) const;

    std::unique_ptr<QTemporaryDir> m_tmp;
    SandboxPtr m_sandbox;
    int m_counter = 0;
};

void TestOffload::initTestCase()
{
    // The audit trail of the agent tests is not what this test looks at.
    QLoggingCategory::setFilterRules(QStringLiteral("elsai.sandbox.audit.info=false"));
}

void TestOffload::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
}

void TestOffload::cleanup()
{
    if (m_sandbox)
        m_sandbox->stop(false);
    m_sandbox.reset();
    m_tmp.reset();
}

AgentPtr TestOffload::makeAgent(std::optional<SandboxOutputOffloadPolicy> policy)
{
    const QString id = QStringLiteral("tst-offload-%1").arg(++m_counter);
    m_sandbox =
        Sandbox::create(id, std::make_shared<WorkspaceBackend>(m_tmp->path() + "/ws"), 7200);
    m_sandbox->start();
    m_sandbox->addFiles({{QStringLiteral("big.txt"), FileSource::text(bigText())},
                         {QStringLiteral("small.txt"),
                          FileSource::text(QStringLiteral("a small file, forty bytes long.\n"))}});
    AgentConfig config;
    config.sandbox = m_sandbox;
    config.sandboxOutputOffload = std::move(policy);
    return Agent::create(QStringLiteral("agent-%1").arg(m_counter), config);
}

QString TestOffload::handleOf(const ToolResult &r) const
{
    return r.data.value(QStringLiteral("offloaded"))
        .toObject()
        .value(QStringLiteral("handle"))
        .toString();
}

// ---- Token counting -----------------------------------------------------------------------

void TestOffload::countTokens_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("tokens");

    QTest::newRow("empty") << QString() << qint64(0);
    QTest::newRow("one ASCII byte") << QStringLiteral("a") << qint64(1);
    QTest::newRow("four ASCII bytes") << QStringLiteral("abcd") << qint64(1);
    QTest::newRow("five ASCII bytes") << QStringLiteral("abcde") << qint64(2);
    QTest::newRow("eight ASCII bytes") << QStringLiteral("abcdefgh") << qint64(2);
    QTest::newRow("1000 ASCII bytes") << QString(1000, u'x') << qint64(250);
    QTest::newRow("1001 ASCII bytes") << QString(1001, u'x') << qint64(251);
    QTest::newRow("newlines count as bytes") << QStringLiteral("\n\n\n\n\n") << qint64(2);
    QTest::newRow("é is two bytes") << QStringLiteral("é") << qint64(1);
    QTest::newRow("two é are four bytes") << QStringLiteral("éé") << qint64(1);
    QTest::newRow("three é are six bytes") << QStringLiteral("ééé") << qint64(2);
    QTest::newRow("CJK is three bytes each") << QStringLiteral("漢字漢字") << qint64(3);
    QTest::newRow("emoji is four bytes") << QStringLiteral("😀") << qint64(1);
    QTest::newRow("emoji and one ASCII byte") << QStringLiteral("😀a") << qint64(2);
    QTest::newRow("mixed: a é 漢 😀 = 10 bytes") << QStringLiteral("aé漢😀") << qint64(3);
}

void TestOffload::countTokens()
{
    QFETCH(QString, text);
    QFETCH(qint64, tokens);
    QCOMPARE(elsai::countTokens(text), tokens);
}

void TestOffload::truncateToTokens_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("tokens");
    QTest::addColumn<QString>("expected");

    QTest::newRow("empty text") << QString() << qint64(3) << QString();
    QTest::newRow("zero tokens") << QStringLiteral("abcdef") << qint64(0) << QString();
    QTest::newRow("ASCII cut at four bytes")
        << QStringLiteral("abcdefgh") << qint64(1) << QStringLiteral("abcd");
    QTest::newRow("exact fit") << QStringLiteral("abcdefgh") << qint64(2)
                               << QStringLiteral("abcdefgh");
    QTest::newRow("more tokens than text")
        << QStringLiteral("abc") << qint64(10) << QStringLiteral("abc");
    QTest::newRow("é straddles the cut")
        << QStringLiteral("abcé") << qint64(1) << QStringLiteral("abc");
    QTest::newRow("é ends at the cut")
        << QStringLiteral("abéc") << qint64(1) << QStringLiteral("abé");
    QTest::newRow("two é fill one token")
        << QStringLiteral("ééé") << qint64(1) << QStringLiteral("éé");
    QTest::newRow("emoji straddles the cut")
        << QStringLiteral("a😀") << qint64(1) << QStringLiteral("a");
    QTest::newRow("emoji fills one token")
        << QStringLiteral("😀😀") << qint64(1) << QStringLiteral("😀");
    QTest::newRow("emoji after three bytes")
        << QStringLiteral("abc😀d") << qint64(1) << QStringLiteral("abc");
    QTest::newRow("emoji only, too small")
        << QStringLiteral("xyz😀") << qint64(1) << QStringLiteral("xyz");
    QTest::newRow("CJK straddles the cut")
        << QStringLiteral("漢字") << qint64(1) << QStringLiteral("漢");
}

void TestOffload::truncateToTokens()
{
    QFETCH(QString, text);
    QFETCH(qint64, tokens);
    QFETCH(QString, expected);

    const QString cut = elsai::truncateToTokens(text, tokens);
    QCOMPARE(cut, expected);
    QVERIFY(text.startsWith(cut));
    QVERIFY(isValidUtf8(cut));
    QVERIFY(elsai::countTokens(cut) <= tokens);
}

void TestOffload::truncateToTokensIsLongestValidPrefix()
{
    // Every cut of a mixed text: a prefix, whole characters, within budget, and as long as the
    // budget allows (one more character would exceed it).
    const QString text = QStringLiteral("a é 漢字 😀 b 🎉🎉 ü\nend 😀");
    const qint64 total = text.toUtf8().size();
    for (qint64 tokens = 0; tokens <= elsai::countTokens(text) + 1; ++tokens) {
        const QString cut = elsai::truncateToTokens(text, tokens);
        QVERIFY2(text.startsWith(cut), qPrintable(QString::number(tokens)));
        QVERIFY(isValidUtf8(cut));
        QVERIFY(!cut.endsWith(QChar(QChar::highSurrogate(0x1F600)))); // no half pair
        const qint64 bytes = cut.toUtf8().size();
        QVERIFY(bytes <= tokens * 4);
        if (cut.size() < text.size()) {
            const int next = text.at(cut.size()).isHighSurrogate() ? 2 : 1;
            QVERIFY2(bytes + text.mid(cut.size(), next).toUtf8().size() > tokens * 4,
                     qPrintable(QStringLiteral("tokens %1: cut too early").arg(tokens)));
        } else {
            QCOMPARE(bytes, total);
        }
    }
}

// ---- Storages -----------------------------------------------------------------------------

void TestOffload::inMemoryStorage()
{
    InMemoryStorage storage;
    OffloadStorage &s = storage;
    QCOMPARE(s.typeName(), QStringLiteral("InMemoryStorage"));
    const QString a = s.store(QStringLiteral("first é 😀"));
    const QString b = s.store(QStringLiteral("second"));
    const QString same = s.store(QStringLiteral("second")); // same content, own handle
    const QString empty = s.store(QString());
    QVERIFY(!a.isEmpty());
    QCOMPARE(QSet<QString>({a, b, same, empty}).size(), 4);
    QCOMPARE(s.retrieve(a), std::optional<QString>(QStringLiteral("first é 😀")));
    QCOMPARE(s.retrieve(b), std::optional<QString>(QStringLiteral("second")));
    QCOMPARE(s.retrieve(same), std::optional<QString>(QStringLiteral("second")));
    QCOMPARE(s.retrieve(empty), std::optional<QString>(QString()));
    QCOMPARE(s.retrieve(QStringLiteral("off-00000000000000000000000000000000")), std::nullopt);
    QCOMPARE(s.retrieve(QString()), std::nullopt);
    QCOMPARE(s.retrieve(a.toUpper()), std::nullopt);
    // Another instance does not share the items.
    InMemoryStorage other;
    QCOMPARE(other.retrieve(a), std::nullopt);
}

void TestOffload::inMemoryStorageConcurrent()
{
    InMemoryStorage storage;
    constexpr int Threads = 8;
    constexpr int PerThread = 200;
    QMutex mutex;
    QHash<QString, QString> stored;
    std::vector<std::thread> threads;
    for (int t = 0; t < Threads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < PerThread; ++i) {
                const QString content = QStringLiteral("t%1-i%2").arg(t).arg(i);
                const QString handle = storage.store(content);
                QMutexLocker lock(&mutex);
                stored.insert(handle, content);
            }
        });
    }
    for (std::thread &th : threads)
        th.join();
    QCOMPARE(stored.size(), Threads * PerThread); // no handle handed out twice
    for (auto it = stored.cbegin(); it != stored.cend(); ++it)
        QCOMPARE(storage.retrieve(it.key()), std::optional<QString>(it.value()));
}

void TestOffload::fileStorageCreatesFolder()
{
    const QString dir = m_tmp->path() + QStringLiteral("/a/b/offload");
    QVERIFY(!QFileInfo::exists(dir));
    FileStorage storage(dir);
    QCOMPARE(storage.typeName(), QStringLiteral("FileStorage"));
    QVERIFY(QFileInfo(dir).isDir());
    QCOMPARE(storage.directory(), QDir(dir).absolutePath());
    // An existing folder is fine too.
    FileStorage again(dir);
    QVERIFY(QFileInfo(dir).isDir());

    // A path that cannot be a folder raises OSError (the subclass Python's os.makedirs raises).
    QFile file(m_tmp->path() + QStringLiteral("/plain-file"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    QCOMPARE(errorName([&] { FileStorage bad(file.fileName() + QStringLiteral("/sub")); }),
             QStringLiteral("NotADirectoryError"));
}

void TestOffload::fileStorageWritesOneFilePerResult()
{
    const QString dir = m_tmp->path() + QStringLiteral("/offload");
    FileStorage storage(dir);
    const QString content = QStringLiteral("multibyte é 漢 😀\nsecond line\n");
    const QString h1 = storage.store(content);
    const QString h2 = storage.store(QStringLiteral("other"));
    QVERIFY(h1 != h2);
    QCOMPARE(storage.retrieve(h1), std::optional<QString>(content));
    QCOMPARE(storage.retrieve(h2), std::optional<QString>(QStringLiteral("other")));

    const QStringList files = QDir(dir).entryList(QDir::Files | QDir::Hidden);
    QCOMPARE(files.size(), 2); // no temp files left behind
    bool found = false;
    for (const QString &name : files) {
        QFile f(dir + u'/' + name);
        QVERIFY(f.open(QIODevice::ReadOnly));
        if (f.readAll() == content.toUtf8())
            found = true;
        QVERIFY2(name.contains(h1) || name.contains(h2), qPrintable(name));
    }
    QVERIFY(found);
}

void TestOffload::fileStorageRejectsNonHandles_data()
{
    QTest::addColumn<QString>("handle");

    QTest::newRow("parent traversal to /etc/passwd") << QStringLiteral("../../etc/passwd");
    QTest::newRow("absolute path") << QStringLiteral("/etc/passwd");
    QTest::newRow("parent traversal to a planted file") << QStringLiteral("../secret");
    QTest::newRow("deep traversal")
        << QString(QStringLiteral("../").repeated(30) + QStringLiteral("etc/passwd"));
    QTest::newRow("name of a planted file in the folder") << QStringLiteral("plain");
    QTest::newRow("planted file with extension") << QStringLiteral("plain.txt");
    QTest::newRow("empty") << QString();
    QTest::newRow("prefix only") << QStringLiteral("off-");
    QTest::newRow("too short") << QStringLiteral("off-") + QString(31, u'0');
    QTest::newRow("too long") << QStringLiteral("off-") + QString(33, u'0');
    QTest::newRow("upper-case hex") << QStringLiteral("off-") + QString(32, u'A');
    QTest::newRow("valid handle with traversal after it")
        << QStringLiteral("off-") + QString(32, u'0') + QStringLiteral("/../../secret");
    QTest::newRow("valid handle plus .txt")
        << QStringLiteral("off-") + QString(32, u'0') + QStringLiteral(".txt");
    QTest::newRow("valid handle with a newline")
        << QStringLiteral("off-") + QString(32, u'0') + QStringLiteral("\n");
    QTest::newRow("NUL byte") << QStringLiteral("off-") + QString(31, u'0') + QChar(0);
    QTest::newRow("well-formed but never stored") << QStringLiteral("off-") + QString(32, u'1');
}

void TestOffload::fileStorageRejectsNonHandles()
{
    QFETCH(QString, handle);
    const QString dir = m_tmp->path() + QStringLiteral("/store");
    FileStorage storage(dir);
    // Files a retrieve must never return: beside the folder, and inside it under other names.
    for (const QString &p :
         {m_tmp->path() + QStringLiteral("/secret"), m_tmp->path() + QStringLiteral("/secret.txt"),
          dir + QStringLiteral("/plain"), dir + QStringLiteral("/plain.txt"),
          dir + QStringLiteral("/off-") + QString(32, u'0') + QStringLiteral(".txt.txt")}) {
        QFile f(p);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("SECRET-CONTENT");
    }
    const QString real = storage.store(QStringLiteral("stored"));

    std::optional<QString> got;
    QVERIFY_THROWS_NO_EXCEPTION(got = storage.retrieve(handle));
    QCOMPARE(got, std::nullopt);
    QCOMPARE(storage.retrieve(real), std::optional<QString>(QStringLiteral("stored")));
}

void TestOffload::fileStorageDoesNotFollowPlantedSymlink()
{
    // A storage folder someone else can write to (e.g. inside a workspace) may hold a link
    // named like a handle; retrieve must not read the file outside through it.
    const QString dir = m_tmp->path() + QStringLiteral("/store");
    FileStorage storage(dir);
    const QString secret = m_tmp->path() + QStringLiteral("/outside-secret");
    QFile f(secret);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("SECRET-CONTENT");
    f.close();
    const QString handle = QStringLiteral("off-") + QString(32, u'0');
    QVERIFY(QFile::link(secret, dir + u'/' + handle + QStringLiteral(".txt")));
    const std::optional<QString> got = storage.retrieve(handle);
    QVERIFY2(!got || !got->contains(QStringLiteral("SECRET-CONTENT")),
             "retrieve followed a symlink out of the storage folder");
}

// An agent that can write where the folder lives replaces it with a link to somewhere else
// between two stores: the engine keeps writing into the folder it opened, never through the link.
void TestOffload::fileStorageFolderSwappedForSymlink()
{
    const QString dir = m_tmp->path() + QStringLiteral("/swapped");
    const QString outside = m_tmp->path() + QStringLiteral("/outside");
    QVERIFY(QDir().mkpath(outside));
    FileStorage storage(dir);
    const QString first = storage.store(QStringLiteral("one"));
    QVERIFY(QDir().rename(dir, dir + QStringLiteral(".moved")));
    QVERIFY(QFile::link(outside, dir));
    const QString second = storage.store(QStringLiteral("two"));
    QCOMPARE(QDir(outside).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
             QStringList());
    QCOMPARE(storage.retrieve(first), std::optional<QString>(QStringLiteral("one")));
    QCOMPARE(storage.retrieve(second), std::optional<QString>(QStringLiteral("two")));
    QVERIFY(QFileInfo::exists(dir + QStringLiteral(".moved/") + second + QStringLiteral(".txt")));
    // a planted link under the next handle's name is never written through either
    QVERIFY(QFile::remove(dir));
    QVERIFY(QDir().rename(dir + QStringLiteral(".moved"), dir));
    QCOMPARE(QDir(outside).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
}

void TestOffload::fileStorageInsideWorkspaceRefused_data()
{
    QTest::addColumn<QString>("storageRel"); // relative to the workspace root
    QTest::addColumn<bool>("storageFirst");
    QTest::newRow("the workspace root itself, storage first") << QStringLiteral(".") << true;
    QTest::newRow("the workspace root itself, workspace first") << QStringLiteral(".") << false;
    QTest::newRow("a subfolder, storage first") << QStringLiteral("out/offload") << true;
    QTest::newRow("a subfolder, workspace first") << QStringLiteral("out/offload") << false;
}

void TestOffload::fileStorageInsideWorkspaceRefused()
{
    QFETCH(QString, storageRel);
    QFETCH(bool, storageFirst);
    const QString root = m_tmp->path() + QStringLiteral("/claimed-ws");
    const QString folder = QDir::cleanPath(root + u'/' + storageRel);
    auto backend = std::make_shared<WorkspaceBackend>(root);
    QString message;
    try {
        if (storageFirst) {
            FileStorage storage(folder);
            backend->create();
        } else {
            backend->create();
            FileStorage storage(folder);
        }
    } catch (const ValueError &e) {
        message = e.message();
    }
    QVERIFY2(message.contains(folder) && message.contains(root), qPrintable(message));
    backend->close();
    // outside every workspace it is fine, and a closed workspace claims nothing
    FileStorage ok(folder);
    QVERIFY(!ok.store(QStringLiteral("x")).isEmpty());
    QVERIFY_THROWS_EXCEPTION(ValueError, backend->create());
}

void TestOffload::fileStorageSurvivesNewInstance()
{
    const QString dir = m_tmp->path() + QStringLiteral("/persist");
    QString handle;
    const QString content = bigText();
    {
        FileStorage first(dir);
        handle = first.store(content);
    }
    FileStorage second(dir);
    QCOMPARE(second.retrieve(handle), std::optional<QString>(content));
    // The second instance's own handles are new ones and both remain readable.
    const QString h2 = second.store(QStringLiteral("two"));
    QVERIFY(h2 != handle);
    FileStorage third(dir);
    QCOMPARE(third.retrieve(h2), std::optional<QString>(QStringLiteral("two")));
    QCOMPARE(third.retrieve(handle), std::optional<QString>(content));
}

// ---- Policy -------------------------------------------------------------------------------

void TestOffload::policyDefaults()
{
    const SandboxOutputOffloadPolicy p;
    QVERIFY(!p.storage);
    QCOMPARE(p.maxResultTokens, qint64(2500));
    QCOMPARE(p.previewTokens, qint64(1000));
    QCOMPARE(p.includeRetrievalTool, true);
    QCOMPARE(p.toolNames, (QStringList{QStringLiteral("execute"), QStringLiteral("read_file"),
                                       QStringLiteral("write_file"), QStringLiteral("list_dir")}));
    QCOMPARE(p.toolNames, SANDBOX_OFFLOAD_TOOL_NAMES);
}

void TestOffload::offloadThreshold_data()
{
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<bool>("offloaded");

    QTest::newRow("empty") << qint64(0) << false;
    QTest::newRow("small") << qint64(100) << false;
    QTest::newRow("one token below the limit") << qint64(2499 * 4) << false;
    QTest::newRow("exactly at the limit") << qint64(2500 * 4) << false;
    QTest::newRow("one byte over the limit") << qint64(2500 * 4 + 1) << true;
    QTest::newRow("far above the limit") << qint64(200000) << true;
}

void TestOffload::offloadThreshold()
{
    QFETCH(qint64, bytes);
    QFETCH(bool, offloaded);

    auto storage = std::make_shared<CountingStorage>();
    SandboxOutputOffloadPolicy p;
    p.storage = storage;
    QString text;
    for (qint64 i = 0; i < bytes; ++i)
        text += QChar(u'a' + int(i % 26));
    QString handle = QStringLiteral("untouched");
    const std::optional<QString> out = p.offload(text, &handle);
    QCOMPARE(out.has_value(), offloaded);
    QCOMPARE(storage->stores.load(), offloaded ? 1 : 0); // nothing stored below the limit
    if (offloaded) {
        QVERIFY(handle != QStringLiteral("untouched"));
        QCOMPARE(storage->retrieve(handle), std::optional<QString>(text));
        QVERIFY(out->size() < text.size());
    } else {
        QCOMPARE(handle, QStringLiteral("untouched"));
    }
}

void TestOffload::offloadPreviewAndNote()
{
    auto storage = std::make_shared<InMemoryStorage>();
    SandboxOutputOffloadPolicy p;
    p.storage = storage;
    const QString text = bigText();
    QString handle;
    const std::optional<QString> out = p.offload(text, &handle);
    QVERIFY(out);
    QVERIFY(!handle.isEmpty());

    const QString preview = elsai::truncateToTokens(text, 1000);
    QCOMPARE(preview.toUtf8().size(), 4000);
    QVERIFY(out->startsWith(preview));
    const QString note = out->mid(preview.size());
    QVERIFY2(note.contains(handle), qPrintable(note));
    QVERIFY2(note.contains(QString::number(elsai::countTokens(text))), qPrintable(note));
    // The preview stays within its budget: nothing beyond it, only a short note.
    QVERIFY(!out->contains(bigLine(BigLines - 1)));
    QVERIFY2(elsai::countTokens(note) < 100, qPrintable(note));
    QCOMPARE(storage->retrieve(handle), std::optional<QString>(text));

    // Without the out-parameter it still stores the content under the handle in the note.
    const std::optional<QString> again = p.offload(text);
    QVERIFY(again);
    const qsizetype at = again->indexOf(QStringLiteral("off-"), preview.size());
    QVERIFY(at > 0);
    QCOMPARE(storage->retrieve(again->mid(at, 36)), std::optional<QString>(text));
}

void TestOffload::offloadNoteNamesRetrievalTool_data()
{
    QTest::addColumn<bool>("includeRetrievalTool");
    QTest::newRow("with retrieval tool") << true;
    QTest::newRow("without retrieval tool") << false;
}

void TestOffload::offloadNoteNamesRetrievalTool()
{
    QFETCH(bool, includeRetrievalTool);
    SandboxOutputOffloadPolicy p;
    p.storage = std::make_shared<InMemoryStorage>();
    p.includeRetrievalTool = includeRetrievalTool;
    QString handle;
    const std::optional<QString> out = p.offload(bigText(), &handle);
    QVERIFY(out);
    QVERIFY(out->contains(handle));
    QCOMPARE(out->contains(QStringLiteral("retrieve_offloaded_content")), includeRetrievalTool);
}

void TestOffload::offloadCustomLimitsAndMultibyte()
{
    SandboxOutputOffloadPolicy p;
    p.storage = std::make_shared<InMemoryStorage>();
    p.maxResultTokens = 10;
    p.previewTokens = 3;
    // 41 bytes of é (two bytes each) plus one byte: above 10 tokens; the 12-byte preview ends
    // on a character boundary.
    const QString text = QStringLiteral("x") + QString(20, QChar(0xE9)) + QStringLiteral("😀");
    QString handle;
    const std::optional<QString> out = p.offload(text, &handle);
    QVERIFY(out);
    const QString preview = elsai::truncateToTokens(text, 3);
    QCOMPARE(preview, QStringLiteral("x") + QString(5, QChar(0xE9)));
    QVERIFY(out->startsWith(preview));
    QVERIFY(!out->startsWith(preview + QChar(0xE9)));
    QVERIFY(isValidUtf8(*out));
    QCOMPARE(p.storage->retrieve(handle), std::optional<QString>(text));

    // 40 bytes = 10 tokens: at the limit, kept.
    QCOMPARE(p.offload(QString(40, u'y')), std::nullopt);
}

void TestOffload::offloadWithoutStorage()
{
    SandboxOutputOffloadPolicy p; // no storage configured
    QString handle;
    std::optional<QString> out;
    QVERIFY_THROWS_NO_EXCEPTION(out = p.offload(bigText(), &handle));
    QCOMPARE(out, std::nullopt);
    QVERIFY(handle.isEmpty());
}

// ---- Through an agent ---------------------------------------------------------------------

void TestOffload::agentOffloadsBigReadFile()
{
    SandboxOutputOffloadPolicy policy;
    auto storage = std::make_shared<InMemoryStorage>();
    policy.storage = storage;
    const AgentPtr agent = makeAgent(policy);
    QVERIFY(agent->tools().contains(QStringLiteral("retrieve_offloaded_content")));

    const ToolResult r = agent->callTool(QStringLiteral("read_file"),
                                         {{QStringLiteral("path"), QStringLiteral("big.txt")}});
    QVERIFY(r.offloaded);
    const QString handle = handleOf(r);
    QVERIFY(!handle.isEmpty());
    QCOMPARE(r.data.value(QStringLiteral("offloaded"))
                 .toObject()
                 .value(QStringLiteral("tokens"))
                 .toInteger(),
             elsai::countTokens(bigText()));
    // The structured copy does not carry the full content again.
    QVERIFY(!r.data.contains(QStringLiteral("content")));

    const QString preview = elsai::truncateToTokens(bigText(), 1000);
    QVERIFY(r.text.startsWith(preview));
    const QString note = r.text.mid(preview.size());
    QVERIFY2(note.contains(handle), qPrintable(note));
    QVERIFY2(note.contains(QStringLiteral("retrieve_offloaded_content")), qPrintable(note));
    QVERIFY(!r.text.contains(bigLine(BigLines - 1)));
    QCOMPARE(storage->retrieve(handle), std::optional<QString>(bigText()));
}

void TestOffload::agentKeepsSmallResults()
{
    SandboxOutputOffloadPolicy policy;
    auto storage = std::make_shared<CountingStorage>();
    policy.storage = storage;
    const AgentPtr agent = makeAgent(policy);
    const ToolResult r = agent->callTool(QStringLiteral("read_file"),
                                         {{QStringLiteral("path"), QStringLiteral("small.txt")}});
    QVERIFY(!r.offloaded);
    QCOMPARE(r.text, QStringLiteral("a small file, forty bytes long.\n"));
    QVERIFY(!r.data.contains(QStringLiteral("offloaded")));
    // A partial read of the big file that fits is not offloaded either.
    const ToolResult part = agent->callTool(QStringLiteral("read_file"),
                                            {{QStringLiteral("path"), QStringLiteral("big.txt")},
                                             {QStringLiteral("offset"), 5},
                                             {QStringLiteral("limit"), 3}});
    QVERIFY(!part.offloaded);
    QCOMPARE(part.text, bigLines(5, 8, true));
    QCOMPARE(storage->stores.load(), 0);
}

void TestOffload::agentRetrievesOffloadedContent_data()
{
    QTest::addColumn<int>("offset"); // -1: argument omitted
    QTest::addColumn<int>("limit");  // -1: argument omitted
    QTest::addColumn<QString>("expected");

    QTest::newRow("whole content without offset and limit") << -1 << -1 << bigText();
    QTest::newRow("whole content from offset 0") << 0 << -1 << bigText();
    // Lines keep their '\n', as read_file's do.
    QTest::newRow("first line") << 0 << 1 << bigLines(0, 1, true);
    QTest::newRow("five lines from line 10") << 10 << 5 << bigLines(10, 15, true);
    QTest::newRow("limit without offset") << -1 << 3 << bigLines(0, 3, true);
    QTest::newRow("last line") << BigLines - 1 << 1 << bigLines(BigLines - 1, BigLines, true);
    QTest::newRow("offset to the end")
        << BigLines - 5 << -1 << bigLines(BigLines - 5, BigLines, true);
    QTest::newRow("limit past the end")
        << BigLines - 2 << 100 << bigLines(BigLines - 2, BigLines, true);
    QTest::newRow("limit zero") << 10 << 0 << QString();
    QTest::newRow("offset past the end") << BigLines + 50 << 3 << QString();
}

void TestOffload::agentRetrievesOffloadedContent()
{
    QFETCH(int, offset);
    QFETCH(int, limit);
    QFETCH(QString, expected);

    SandboxOutputOffloadPolicy policy;
    policy.storage = std::make_shared<InMemoryStorage>();
    const AgentPtr agent = makeAgent(policy);
    const ToolResult r = agent->callTool(QStringLiteral("read_file"),
                                         {{QStringLiteral("path"), QStringLiteral("big.txt")}});
    QVERIFY(r.offloaded);

    QJsonObject args{{QStringLiteral("handle"), handleOf(r)}};
    if (offset >= 0)
        args.insert(QStringLiteral("offset"), offset);
    if (limit >= 0)
        args.insert(QStringLiteral("limit"), limit);
    const ToolResult got = agent->callTool(QStringLiteral("retrieve_offloaded_content"), args);
    QVERIFY(!got.offloaded); // the retrieval tool is not in tool_names
    QCOMPARE(got.text.size(), expected.size());
    QCOMPARE(got.text, expected);
}

void TestOffload::agentToolNamesSelectWhatIsOffloaded_data()
{
    QTest::addColumn<QString>("tool");
    QTest::addColumn<QJsonObject>("args");
    QTest::addColumn<bool>("listed");

    const QList<QPair<QString, QJsonObject>> calls = {
        {QStringLiteral("execute"),
         {{QStringLiteral("command"), QStringLiteral("echo 'a fairly long line of output'")}}},
        {QStringLiteral("read_file"), {{QStringLiteral("path"), QStringLiteral("small.txt")}}},
        {QStringLiteral("write_file"),
         {{QStringLiteral("path"), QStringLiteral("written.txt")},
          {QStringLiteral("content"), QStringLiteral("some content")}}},
        {QStringLiteral("list_dir"), {{QStringLiteral("path"), QStringLiteral(".")}}},
    };
    for (const auto &[tool, args] : calls) {
        QTest::addRow("%s listed", qPrintable(tool)) << tool << args << true;
        QTest::addRow("%s not listed", qPrintable(tool)) << tool << args << false;
    }
}

void TestOffload::agentToolNamesSelectWhatIsOffloaded()
{
    QFETCH(QString, tool);
    QFETCH(QJsonObject, args);
    QFETCH(bool, listed);

    SandboxOutputOffloadPolicy policy;
    auto storage = std::make_shared<CountingStorage>();
    policy.storage = storage;
    policy.maxResultTokens = 5; // every result of these calls is above this
    policy.previewTokens = 2;
    policy.toolNames = SANDBOX_OFFLOAD_TOOL_NAMES;
    if (!listed)
        policy.toolNames.removeAll(tool);
    const AgentPtr agent = makeAgent(policy);

    const ToolResult r = agent->callTool(tool, args);
    QCOMPARE(r.offloaded, listed);
    QCOMPARE(storage->stores.load(), listed ? 1 : 0);
    QCOMPARE(r.text.contains(QStringLiteral("offloaded")), listed);
    QCOMPARE(r.data.contains(QStringLiteral("offloaded")), listed);
    if (listed) {
        const std::optional<QString> full = storage->retrieve(handleOf(r));
        QVERIFY(full);
        QVERIFY2(elsai::countTokens(*full) > 5, qPrintable(*full));
        QVERIFY(r.text.startsWith(elsai::truncateToTokens(*full, 2)));
    } else {
        QVERIFY2(elsai::countTokens(r.text) > 5, qPrintable(r.text));
    }
}

void TestOffload::agentRetrievalToolFlag_data()
{
    QTest::addColumn<bool>("includeRetrievalTool");
    QTest::newRow("retrieval tool registered") << true;
    QTest::newRow("retrieval tool not registered") << false;
}

void TestOffload::agentRetrievalToolFlag()
{
    QFETCH(bool, includeRetrievalTool);
    SandboxOutputOffloadPolicy policy;
    auto storage = std::make_shared<InMemoryStorage>();
    policy.storage = storage;
    policy.includeRetrievalTool = includeRetrievalTool;
    const AgentPtr agent = makeAgent(policy);
    QCOMPARE(agent->tools().contains(QStringLiteral("retrieve_offloaded_content")),
             includeRetrievalTool);

    // Offload still happens; the note mentions the tool only when the agent has it.
    const ToolResult r = agent->callTool(QStringLiteral("read_file"),
                                         {{QStringLiteral("path"), QStringLiteral("big.txt")}});
    QVERIFY(r.offloaded);
    const QString handle = handleOf(r);
    QVERIFY(r.text.contains(handle));
    QCOMPARE(r.text.contains(QStringLiteral("retrieve_offloaded_content")), includeRetrievalTool);
    QCOMPARE(storage->retrieve(handle), std::optional<QString>(bigText()));

    const QString error = errorName([&] {
        agent->callTool(QStringLiteral("retrieve_offloaded_content"),
                        {{QStringLiteral("handle"), handle}});
    });
    QCOMPARE(error, includeRetrievalTool ? QString() : QStringLiteral("ToolNotFoundError"));
}

void TestOffload::agentUnknownHandle_data()
{
    QTest::addColumn<bool>("fileStorage");
    QTest::addColumn<QString>("handle");

    for (bool file : {false, true}) {
        const char *kind = file ? "FileStorage" : "InMemoryStorage";
        QTest::addRow("%s: well-formed, never stored", kind)
            << file << QStringLiteral("off-") + QString(32, u'0');
        QTest::addRow("%s: traversal", kind) << file << QStringLiteral("../../etc/passwd");
        QTest::addRow("%s: absolute path", kind) << file << QStringLiteral("/etc/passwd");
        QTest::addRow("%s: empty", kind) << file << QString();
        QTest::addRow("%s: arbitrary text", kind) << file << QStringLiteral("handle please");
    }
}

void TestOffload::agentUnknownHandle()
{
    QFETCH(bool, fileStorage);
    QFETCH(QString, handle);

    SandboxOutputOffloadPolicy policy;
    if (fileStorage)
        policy.storage = std::make_shared<FileStorage>(m_tmp->path() + QStringLiteral("/store"));
    else
        policy.storage = std::make_shared<InMemoryStorage>();
    const AgentPtr agent = makeAgent(policy);
    QCOMPARE(errorName([&] {
                 agent->callTool(QStringLiteral("retrieve_offloaded_content"),
                                 {{QStringLiteral("handle"), handle}});
             }),
             QStringLiteral("FileNotFoundError"));
    QCOMPARE(agent->activity().lastOutcome, QStringLiteral("FileNotFoundError"));
}

void TestOffload::agentWithFileStorage()
{
    const QString dir = m_tmp->path() + QStringLiteral("/offload-files");
    SandboxOutputOffloadPolicy policy;
    policy.storage = std::make_shared<FileStorage>(dir);
    const AgentPtr agent = makeAgent(policy);
    const ToolResult r = agent->callTool(
        QStringLiteral("execute"), {{QStringLiteral("command"), QStringLiteral("cat big.txt")}});
    QVERIFY(r.offloaded);
    QCOMPARE(QDir(dir).entryList(QDir::Files).size(), 1);

    // The offloaded text is what the execute tool would have shown: output + status line.
    const ToolResult all = agent->callTool(QStringLiteral("retrieve_offloaded_content"),
                                           {{QStringLiteral("handle"), handleOf(r)}});
    QCOMPARE(all.text, bigText() + QStringLiteral("[exit code: 0]"));
    // A new storage on the same folder serves the same handle.
    FileStorage reopened(dir);
    QCOMPARE(reopened.retrieve(handleOf(r)), std::optional<QString>(all.text));
}

void TestOffload::agentWithoutPolicy()
{
    const AgentPtr agent = makeAgent(std::nullopt);
    QVERIFY(!agent->tools().contains(QStringLiteral("retrieve_offloaded_content")));
    const ToolResult r = agent->callTool(QStringLiteral("read_file"),
                                         {{QStringLiteral("path"), QStringLiteral("big.txt")}});
    QVERIFY(!r.offloaded);
    QCOMPARE(r.text, bigText());
}

QTEST_GUILESS_MAIN(TestOffload)
#include "tst_offload.moc"
