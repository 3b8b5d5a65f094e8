// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// The rest of a capped read_file, streamed to the offload storage: the storages' streams and
// ranged retrieval (memory, folder, S3 against the loopback fake), the read_file path on the
// local backend and on a remote fake (Daytona), the per-call and per-session bounds, and a
// 1 GiB sparse file under a tight address-space limit (what is mapped + 64 MiB).

#include "agent.h"
#include "backend.h"
#include "errors.h"
#include "fakedaytona.h"
#include "fakes3.h"
#include "localsandboxbackend.h"
#include "offload.h"
#include "s3storage.h"
#include "sandbox.h"
#include "sandboxplugin.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <memory>

using namespace elsai;

namespace {

const aws::Credentials TEST_CREDENTIALS{
    QStringLiteral("AKIDTEST"), QStringLiteral("test/secret+key"), {}};

/// `n` bytes of numbered lines (the last one may be cut), the same for the same `n`.
QByteArray linesOf(qint64 n)
{
    QByteArray out;
    out.reserve(qsizetype(n) + 64);
    for (int i = 0; out.size() < n; ++i)
        out += "line " + QByteArray::number(i) + " of the long file, with some padding text\n";
    out.truncate(qsizetype(n));
    return out;
}

/// Hands out `content` in pieces of at most `piece` bytes (an OffloadSource).
OffloadSource piecesOf(const QByteArray &content, qint64 piece)
{
    auto pos = std::make_shared<qint64>(0);
    return [content, piece, pos]() -> QByteArray {
        const QByteArray out = content.mid(qsizetype(*pos), qsizetype(piece));
        *pos += out.size();
        return out;
    };
}

/// A storage written before streams existed: store/retrieve only.
class OldStorage : public OffloadStorage
{
public:
    QString typeName() const override { return QStringLiteral("OldStorage"); }
    QString store(const QString &content) override { return m_inner.store(content); }
    std::optional<QString> retrieve(const QString &handle) override
    {
        return m_inner.retrieve(handle);
    }

private:
    InMemoryStorage m_inner;
};

/// Takes streams, keeps only their size, their largest piece and their first bytes.
class SinkStorage : public InMemoryStorage
{
public:
    std::optional<QString> storeStream(const OffloadSource &next) override
    {
        for (QByteArray piece = next(); !piece.isEmpty(); piece = next()) {
            if (head.size() < 64)
                head += piece.left(64 - head.size());
            bytes += piece.size();
            largestPiece = qMax<qint64>(largestPiece, piece.size());
        }
        return QStringLiteral("sink");
    }
    qint64 bytes = 0;
    qint64 largestPiece = 0;
    QByteArray head;
};

} // namespace

class TestReadOffload : public QObject
{
    Q_OBJECT

    std::unique_ptr<test::FakeS3> m_s3;
    std::function<std::shared_ptr<SandboxBackend>()> m_daytona;
    QTemporaryDir m_tmp;
    int m_counter = 0;

    OffloadStoragePtr makeStorage(const QString &kind)
    {
        if (kind == u"memory")
            return std::make_shared<InMemoryStorage>();
        if (kind == u"file")
            return std::make_shared<FileStorage>(
                m_tmp.filePath(QStringLiteral("offload-%1").arg(++m_counter)));
        if (kind == u"s3") {
            aws::S3Storage::Options o;
            o.bucket = QStringLiteral("offload");
            o.endpoint = m_s3->endpoint();
            o.credentials = m_s3->credentials();
            o.retry.initialBackoffMs = 1;
            o.retry.maxBackoffMs = 5;
            return std::make_shared<aws::S3Storage>(o);
        }
        if (kind == u"old")
            return std::make_shared<OldStorage>();
        qFatal("unknown storage %s", qPrintable(kind));
    }

    /// A started sandbox on `backend` ("local" or "daytona") holding `content` as big.txt,
    /// and a read-only agent on it with `policy` and a read_file bound of `bound` bytes.
    std::pair<SandboxPtr, AgentPtr> makeAgent(const QString &backend, const QByteArray &content,
                                              const SandboxOutputOffloadPolicy &policy,
                                              qint64 bound)
    {
        const QString id = QStringLiteral("readoffload-%1").arg(++m_counter);
        BackendPtr b = backend == u"daytona"
                           ? BackendPtr(m_daytona())
                           : std::make_shared<LocalSandboxBackend>(m_tmp.filePath(id));
        SandboxPtr sandbox = Sandbox::create(id, b, 600);
        sandbox->start();
        sandbox->addFiles({{QStringLiteral("big.txt"), FileSource::bytes(content)}});
        AgentConfig config;
        config.readFileMaxBytes = bound;
        config.sandboxOutputOffload = policy;
        AgentPtr agent = Agent::create(QStringLiteral("reader-%1").arg(m_counter), config);
        sandbox->attach(agent, SandboxAttachMode::ReadOnly);
        return {sandbox, agent};
    }

private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.sandbox.audit.info=false"));
        test::isolateFlushBases();
        m_s3 = std::make_unique<test::FakeS3>(TEST_CREDENTIALS);
        m_s3->createBucket(QStringLiteral("offload"));
        m_daytona = test::FakeDaytona::backendFactory();
    }

    void cleanupTestCase()
    {
        m_daytona = {};
        m_s3.reset();
    }

    // Each storage takes a stream piece by piece and gives back any byte range of it (and
    // its size); streamed and ordinary content are retrieved the same way.
    void streamsAndRanges_data()
    {
        QTest::addColumn<QString>("storage");
        QTest::addColumn<qint64>("size");
        const qint64 chunk = OffloadStreamChunkBytes;
        for (const char *storage : {"memory", "file", "s3"}) {
            const auto row = [&](const char *what, qint64 size) {
                QTest::addRow("%s, %s", storage, what) << QString::fromLatin1(storage) << size;
            };
            row("empty", 0);
            row("one byte", 1);
            row("one piece", chunk);
            row("3.5 pieces", chunk * 7 / 2);
        }
    }

    void streamsAndRanges()
    {
        QFETCH(QString, storage);
        QFETCH(qint64, size);
        const OffloadStoragePtr s = makeStorage(storage);
        const QByteArray content = linesOf(size);
        const auto handle = s->storeStream(piecesOf(content, OffloadStreamChunkBytes));
        QVERIFY(handle && !handle->isEmpty());
        const qint64 chunk = OffloadStreamChunkBytes;
        // offset, length: the start, all, the middle, across a piece boundary, past the end
        const QList<std::pair<qint64, qint64>> ranges = {
            {0, 10},    {0, size},     {size / 2, 1000}, {chunk - 5, 10},
            {size, 10}, {size + 7, 3}, {0, size + 100}};
        for (const auto &[offset, length] : ranges) {
            const auto r = s->retrieveRange(*handle, offset, length);
            QVERIFY(r);
            QCOMPARE(r->totalSize, size);
            QCOMPARE(r->data, content.mid(qsizetype(offset), qsizetype(length)));
        }
        QCOMPARE(s->retrieve(*handle), std::optional<QString>(QString::fromUtf8(content)));
        // ordinary content has the same ranges
        const QString small = QStringLiteral("héllo\nworld\n");
        const QString plain = s->store(small);
        const auto part = s->retrieveRange(plain, 1, 4);
        QVERIFY(part);
        QCOMPARE(part->data, small.toUtf8().mid(1, 4));
        QCOMPARE(part->totalSize, small.toUtf8().size());
        const auto past = s->retrieveRange(plain, 100, 4);
        QVERIFY(past);
        QVERIFY(past->data.isEmpty());
        QCOMPARE(past->totalSize, small.toUtf8().size());
        // unknown handles are none, for both kinds
        const QString unknown =
            storage == u"s3" ? QString(32, u'a') : QStringLiteral("off-") + QString(32, u'a');
        QCOMPARE(s->retrieveRange(unknown, 0, 10).has_value(), false);
        if (storage == u"s3") {
            // one object per piece, and a manifest, none larger than a piece
            const auto objects = m_s3->objects();
            int parts = 0;
            for (auto it = objects.cbegin(); it != objects.cend(); ++it) {
                if (it.key().contains(*handle + QStringLiteral(".part-"))) {
                    ++parts;
                    QVERIFY(it.value().size() <= OffloadStreamChunkBytes);
                }
            }
            QCOMPARE(parts, int((size + chunk - 1) / chunk));
            QVERIFY(objects.contains(QStringLiteral("offload/elsai-offload/") + *handle +
                                     QStringLiteral(".parts")));
        }
    }

    // A source that fails half-way leaves nothing retrievable (and, in a folder or a bucket,
    // nothing behind).
    void failedStreamLeavesNothing_data()
    {
        QTest::addColumn<QString>("storage");
        QTest::newRow("memory") << QStringLiteral("memory");
        QTest::newRow("file") << QStringLiteral("file");
        QTest::newRow("s3") << QStringLiteral("s3");
    }

    void failedStreamLeavesNothing()
    {
        QFETCH(QString, storage);
        const OffloadStoragePtr s = makeStorage(storage);
        const auto objectsBefore = m_s3->objects().size();
        int calls = 0;
        try {
            s->storeStream([&]() -> QByteArray {
                if (++calls > 2)
                    throw OSError(QStringLiteral("the file went away"));
                return QByteArray(1000, 'x');
            });
            QFAIL("no exception");
        } catch (const OSError &e) {
            QCOMPARE(e.message(), QStringLiteral("the file went away"));
        }
        if (storage == u"file") {
            const QString dir = dynamic_cast<FileStorage &>(*s).directory();
            QCOMPARE(QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                     QStringList());
        }
        if (storage == u"s3")
            QCOMPARE(m_s3->objects().size(), objectsBefore);
    }

    // read_file capped at its bound streams the rest of the file to the storage, on the local
    // backend and on a remote one; the answer says how to retrieve it, and the retrieval tool
    // reads it back by byte ranges and by lines, bounded like read_file.
    void restOfCappedRead_data()
    {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<QString>("storage");
        for (const char *backend : {"local", "daytona"}) {
            for (const char *storage : {"memory", "file", "s3"})
                QTest::addRow("%s, %s", backend, storage)
                    << QString::fromLatin1(backend) << QString::fromLatin1(storage);
        }
    }

    void restOfCappedRead()
    {
        QFETCH(QString, backend);
        QFETCH(QString, storage);
        const qint64 bound = 64 * 1024;
        const QByteArray content = linesOf(2 * OffloadStreamChunkBytes + 12345);
        SandboxOutputOffloadPolicy policy;
        policy.storage = makeStorage(storage);
        auto [sandbox, agent] = makeAgent(backend, content, policy, bound);
        auto stop = qScopeGuard([&] { sandbox->stop(false); });

        const ToolResult r =
            agent->callTool(QStringLiteral("read_file"), {{QStringLiteral("path"), "big.txt"}});
        const qint64 next = r.data.value(QStringLiteral("next_byte_offset")).toInteger();
        QVERIFY(next > 0 && next <= bound);
        const QJsonObject rest = r.data.value(QStringLiteral("rest_offloaded")).toObject();
        const QString handle = rest.value(QStringLiteral("handle")).toString();
        QVERIFY2(!handle.isEmpty(), qPrintable(r.text.right(400)));
        QCOMPARE(rest.value(QStringLiteral("file_byte_offset")).toInteger(), next);
        QCOMPARE(rest.value(QStringLiteral("bytes")).toInteger(), content.size() - next);
        QVERIFY(!r.data.contains(QStringLiteral("rest_not_offloaded")));
        // the answer itself was offloaded too (above 2,500 tokens): the rest's note survives
        QVERIFY(r.offloaded);
        QVERIFY2(r.text.contains(QStringLiteral("retrieve_offloaded_content(handle=\"%1\", "
                                                "byte_offset=")
                                     .arg(handle)),
                 qPrintable(r.text.right(400)));

        // by byte ranges, to the end: exactly the rest of the file
        QByteArray collected;
        QJsonObject args{{QStringLiteral("handle"), handle}, {QStringLiteral("byte_offset"), 0}};
        for (int calls = 0; calls < 100; ++calls) {
            const ToolResult part =
                agent->callTool(QStringLiteral("retrieve_offloaded_content"), args);
            QVERIFY(part.data.value(QStringLiteral("bytes")).toInteger() <= bound);
            QCOMPARE(part.data.value(QStringLiteral("total_bytes")).toInteger(),
                     content.size() - next);
            collected += part.data.value(QStringLiteral("content")).toString().toUtf8();
            if (!part.data.value(QStringLiteral("truncated")).toBool())
                break;
            QVERIFY(part.text.contains(QStringLiteral("byte_offset=")));
            args.insert(QStringLiteral("byte_offset"),
                        part.data.value(QStringLiteral("next_byte_offset")));
        }
        QCOMPARE(collected, content.mid(qsizetype(next)));
        // a length asks for less (inside a line: no line end to cut at)
        const qint64 at = content.indexOf("line 20000 ", next) - next;
        QVERIFY(at > 0);
        const ToolResult ten = agent->callTool(QStringLiteral("retrieve_offloaded_content"),
                                               {{QStringLiteral("handle"), handle},
                                                {QStringLiteral("byte_offset"), at},
                                                {QStringLiteral("length"), 10}});
        QCOMPARE(ten.data.value(QStringLiteral("content")).toString(),
                 QStringLiteral("line 20000"));
        QCOMPARE(ten.data.value(QStringLiteral("next_byte_offset")).toInteger(), at + 10);
        // by lines: the rest starts at a line (the answer was cut at a line end)
        const ToolResult lines = agent->callTool(QStringLiteral("retrieve_offloaded_content"),
                                                 {{QStringLiteral("handle"), handle},
                                                  {QStringLiteral("offset"), 2},
                                                  {QStringLiteral("limit"), 3}});
        const QList<QByteArray> restLines = content.mid(qsizetype(next)).split('\n');
        QCOMPARE(lines.data.value(QStringLiteral("content")).toString().toUtf8(),
                 restLines.mid(2, 3).join('\n') + '\n');
    }

    // The bounds: per call, per session (per storage object), off; and what is not streamed.
    // Three reads of the same 300,000-byte file, each cut at 64 KiB, so each leaves the same
    // rest R to stream.
    void restBounds_data()
    {
        QTest::addColumn<qint64>("perCall");
        QTest::addColumn<double>("sessionInRests"); // the session budget in R; 0: 1 GiB
        QTest::addColumn<QString>("storage");
        QTest::addColumn<QStringList>("toolNames");
        QTest::addColumn<qint64>("maxBytes"); // the agent's max_bytes argument, 0: none
        QTest::addColumn<bool>("streams");
        QTest::addColumn<QString>("note"); // in the last answer's text and rest_not_offloaded
        const QStringList all = SANDBOX_OFFLOAD_TOOL_NAMES;
        const qint64 big = qint64(1) << 30;
        // clang-format off
        QTest::newRow("per call: 100,000 bytes")
            << qint64(100000) << 0.0 << "memory" << all << qint64(0) << true
            << "at most 100000 bytes are offloaded per read";
        QTest::newRow("session: the 2nd read gets half, the 3rd none")
            << big << 1.5 << "memory" << all << qint64(0) << true
            << "budget for the rest of files";
        QTest::newRow("off")
            << qint64(0) << 0.0 << "memory" << all << qint64(0) << false
            << "offloading the rest of a file is off";
        QTest::newRow("a storage without streams")
            << big << 0.0 << "old" << all << qint64(0) << false
            << "OldStorage does not take streamed content";
        QTest::newRow("read_file not offloaded: nothing streamed")
            << big << 0.0 << "memory" << QStringList{QStringLiteral("execute")} << qint64(0)
            << false << "";
        QTest::newRow("a lower max_bytes pages: nothing streamed")
            << big << 0.0 << "memory" << all << qint64(1000) << false << "";
        // clang-format on
    }

    void restBounds()
    {
        QFETCH(qint64, perCall);
        QFETCH(double, sessionInRests);
        QFETCH(QString, storage);
        QFETCH(QStringList, toolNames);
        QFETCH(qint64, maxBytes);
        QFETCH(bool, streams);
        QFETCH(QString, note);
        const qint64 bound = 65536;
        const QByteArray content = linesOf(300000);
        const qint64 next = content.lastIndexOf('\n', bound - 1) + 1; // cut at a line end
        const qint64 rest = content.size() - next;
        const qint64 session =
            sessionInRests > 0 ? qint64(sessionInRests * double(rest)) : qint64(1) << 30;
        SandboxOutputOffloadPolicy policy;
        policy.storage = makeStorage(storage);
        policy.readRestMaxBytes = perCall;
        policy.readRestSessionMaxBytes = session;
        policy.toolNames = toolNames;
        policy.maxResultTokens = 1000000; // the answers themselves stay whole
        auto [sandbox, agent] = makeAgent(QStringLiteral("local"), content, policy, bound);
        auto stop = qScopeGuard([&] { sandbox->stop(false); });
        qint64 used = 0;
        ToolResult r;
        for (int i = 0; i < 3; ++i) {
            QJsonObject args{{QStringLiteral("path"), "big.txt"}};
            if (maxBytes > 0)
                args.insert(QStringLiteral("max_bytes"), maxBytes);
            r = agent->callTool(QStringLiteral("read_file"), args);
            QCOMPARE(r.data.value(QStringLiteral("truncated")).toBool(), true);
            const QJsonObject stored = r.data.value(QStringLiteral("rest_offloaded")).toObject();
            const qint64 granted = streams ? qMin(qMin(rest, perCall), session - used) : 0;
            if (granted <= 0) {
                QVERIFY2(stored.isEmpty(), qPrintable(r.text.right(300)));
                continue;
            }
            QCOMPARE(r.data.value(QStringLiteral("next_byte_offset")).toInteger(), next);
            QCOMPARE(stored.value(QStringLiteral("bytes")).toInteger(), granted);
            QCOMPARE(stored.value(QStringLiteral("file_byte_offset")).toInteger(), next);
            used += granted;
            // what was stored is the file's bytes from there
            const auto back = policy.storage->retrieveRange(
                stored.value(QStringLiteral("handle")).toString(), 0, 100);
            QVERIFY(back);
            QCOMPARE(back->totalSize, granted);
            QCOMPARE(back->data, content.mid(qsizetype(next), 100));
        }
        QCOMPARE(policy.storage->streamedBytes(), used);
        QVERIFY(used <= session);
        if (note.isEmpty()) {
            QVERIFY(!r.data.contains(QStringLiteral("rest_not_offloaded")));
        } else {
            QVERIFY2(r.text.contains(note), qPrintable(r.text.right(400)));
            QVERIFY(r.data.value(QStringLiteral("rest_not_offloaded")).toString().contains(note));
        }
    }

    // A read-only agent reads a 1 GiB sparse file with the rest streamed, under an address-space
    // limit of what the process maps plus 64 MiB (tighter than 512 MiB): memory stays about one
    // piece, whatever is streamed. The read runs in a forked child with RLIMIT_AS set, so the
    // limit cannot hurt the test.
    void hugeSparseRestUnderAddressLimit_data()
    {
        QTest::addColumn<QString>("storage");
        QTest::addColumn<qint64>("perCall");
        QTest::addColumn<qint64>("headroom"); // the limit: what is mapped + this
        // headroom over what the test process maps already (its fakes' threads map hundreds
        // of MiB): stricter than the 512 MiB the issue asks for
        QTest::newRow("sink: the whole 1 GiB rest under 64 MiB of headroom")
            << QStringLiteral("sink") << (qint64(1) << 30) << (qint64(64) << 20);
        QTest::newRow("memory: the default per-call cap, under 192 MiB of headroom")
            << QStringLiteral("memory") << SandboxOutputOffloadPolicy().readRestMaxBytes
            << (qint64(192) << 20);
        QTest::newRow("file: 128 MiB streamed under 64 MiB of headroom")
            << QStringLiteral("file") << (qint64(128) << 20) << (qint64(64) << 20);
    }

    void hugeSparseRestUnderAddressLimit()
    {
        if (test::addressSanitized())
            QSKIP("ASan reserves terabytes of address space; RLIMIT_AS cannot be used");
        QFETCH(QString, storage);
        QFETCH(qint64, perCall);
        QFETCH(qint64, headroom);
        constexpr qint64 fileSize = qint64(1) << 30;
        SandboxOutputOffloadPolicy policy;
        auto sink = std::make_shared<SinkStorage>();
        policy.storage = storage == u"sink" ? sink : makeStorage(storage);
        policy.readRestMaxBytes = perCall;
        policy.readRestSessionMaxBytes = qint64(4) << 30;
        auto [sandbox, agent] =
            makeAgent(QStringLiteral("local"), QByteArray("x"), policy, DefaultReadFileMaxBytes);
        auto stop = qScopeGuard([&] { sandbox->stop(false); });
        const QString hostPath = sandbox->backend()->hostFolder() + QStringLiteral("/huge.txt");
        QByteArray head;
        {
            QFile f(hostPath);
            QVERIFY(f.open(QIODevice::WriteOnly));
            head = linesOf(600000);
            QCOMPARE(f.write(head), qint64(head.size()));
            QVERIFY(f.resize(fileSize)); // the rest is a hole: zeros, no disk
        }
        auto cleanup = qScopeGuard([&] { QFile::remove(hostPath); });
        // 1: a check failed; 2: an exception; 3: the limit could not be set
        const int result = test::exitStatusUnderAddressLimit(
            [&](qint64 mapped) { return mapped + headroom; },
            [&] {
                ToolResult r;
                try {
                    r = agent->callTool(QStringLiteral("read_file"),
                                        {{QStringLiteral("path"), "huge.txt"}});
                } catch (const SandboxError &e) {
                    qWarning("read_file failed: %s", qPrintable(e.display()));
                    return 2;
                } catch (const std::exception &e) {
                    qWarning("read_file failed: %s (%lld bytes mapped at the start)", e.what(),
                             test::mappedBytes());
                    return 2;
                }
                const qint64 next = r.data.value(QStringLiteral("next_byte_offset")).toInteger();
                const QJsonObject rest = r.data.value(QStringLiteral("rest_offloaded")).toObject();
                const qint64 want = qMin(perCall, fileSize - next);
                if (r.data.value(QStringLiteral("total_bytes")).toInteger() != fileSize ||
                    next <= 0 || rest.value(QStringLiteral("bytes")).toInteger() != want)
                    return 1;
                if (storage == u"sink")
                    return sink->bytes == want && sink->largestPiece <= OffloadStreamChunkBytes &&
                                   sink->head == head.mid(qsizetype(next), 64)
                               ? 0
                               : 1;
                // the stored bytes are the file's: some text, then the hole's zeros
                const QString handle = rest.value(QStringLiteral("handle")).toString();
                const auto text = policy.storage->retrieveRange(handle, 0, 1000);
                const auto hole = policy.storage->retrieveRange(handle, want - 10, 10);
                if (!text || text->data != head.mid(qsizetype(next), 1000) || !hole ||
                    hole->data != QByteArray(10, '\0') || text->totalSize != want)
                    return 1;
                return 0;
            });
        QVERIFY2(result >= 0, "the reading child died (abort or signal)");
        QCOMPARE(result, 0);
    }
};

QTEST_GUILESS_MAIN(TestReadOffload)
#include "tst_readoffload.moc"
