// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// AWS binary event-stream decoder: the spec's test frames (remote-backends.md §2.5) in every
// chunking, every header type, and the ways a stream can be corrupt.

#include "eventstream.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QtEndian>

using namespace elsai::aws;

namespace {

const QByteArray FRAME1 = QByteArray::fromHex(
    "000000f10000004c6f1cab3f0b3a6576656e742d74797065070006726573756c740d3a636f6e74656e742d74797065"
    "0700106170706c69636174696f6e2f6a736f6e0d3a6d6573736167652d747970650700056576656e747b22636f6e74"
    "656e74223a5b7b2274797065223a2274657874222c2274657874223a2268656c6c6f5c6e227d5d2c22737472756374"
    "75"
    "726564436f6e74656e74223a7b227374646f7574223a2268656c6c6f5c6e222c22737464657272223a22222c226578"
    "69"
    "74436f6465223a302c22657865637574696f6e54696d65223a31322e357d2c2269734572726f72223a66616c73657d"
    "47"
    "ee9ebb");
const QByteArray FRAME2 = QByteArray::fromHex(
    "0000008c000000612b81d3340f3a657863657074696f6e2d747970650700137468726f74746c696e67457863657074"
    "696f6e0d3a636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e0d3a6d6573736167652d74"
    "797065070009657863657074696f6e7b226d657373616765223a2252617465206578636565646564227db95ad7de");

QList<EventStreamMessage> decodeInChunks(const QByteArray &bytes, qsizetype chunk)
{
    EventStreamDecoder decoder;
    QList<EventStreamMessage> out;
    for (qsizetype i = 0; i < bytes.size(); i += chunk) {
        decoder.feed(bytes.mid(i, chunk));
        out += decoder.takeMessages();
    }
    decoder.finish();
    return out;
}

QByteArray withByte(QByteArray bytes, qsizetype index, char xorMask)
{
    bytes[index] = char(bytes[index] ^ xorMask);
    return bytes;
}

QByteArray bigEndian32(quint32 value)
{
    QByteArray out(4, '\0');
    qToBigEndian(value, out.data());
    return out;
}

// A prelude whose CRC is right but whose lengths are whatever the test wants.
QByteArray preludeOnly(quint32 total, quint32 headersLength)
{
    const QByteArray lengths = bigEndian32(total) + bigEndian32(headersLength);
    return lengths + bigEndian32(crc32(lengths));
}

// A whole frame around a raw header block, CRCs right, so only the header parse can fail.
QByteArray framedHeaders(const QByteArray &headers)
{
    QByteArray out = preludeOnly(quint32(12 + headers.size() + 4), quint32(headers.size()));
    out += headers;
    return out + bigEndian32(crc32(out));
}

} // namespace

class TestEventStream : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void crc32KnownValues();
    void specFramesPreludes();
    void specFramesInChunks_data();
    void specFramesInChunks();
    void everyHeaderTypeRoundTrips();
    void encoderReproducesSpecFrame();
    void emptyPayloadAndNoHeaders();
    void corruptStreamsRejected_data();
    void corruptStreamsRejected();
    void decoderRefusesInputAfterError();
    void oversizedFrameRejectedBeforeBuffering();
};

void TestEventStream::crc32KnownValues()
{
    QCOMPARE(crc32(""), 0u);
    QCOMPARE(crc32("123456789"), 0xCBF43926u); // the CRC-32/ISO-HDLC check value
    QCOMPARE(crc32("56789", crc32("1234")), 0xCBF43926u);
}

void TestEventStream::specFramesPreludes()
{
    QCOMPARE(FRAME1.size(), 241);
    QCOMPARE(FRAME2.size(), 140);
    QCOMPARE(crc32(FRAME1.left(8)), 0x6f1cab3fu);
    QCOMPARE(crc32(FRAME1.left(237)), 0x47ee9ebbu);
    QCOMPARE(crc32(FRAME2.left(8)), 0x2b81d334u);
    QCOMPARE(crc32(FRAME2.left(136)), 0xb95ad7deu);
}

void TestEventStream::specFramesInChunks_data()
{
    QTest::addColumn<qsizetype>("chunk");
    for (const qsizetype chunk : {1, 7, 12, 13, 240, 241, 242, 381})
        QTest::addRow("%lld", qlonglong(chunk)) << chunk;
}

void TestEventStream::specFramesInChunks()
{
    QFETCH(qsizetype, chunk);
    const QList<EventStreamMessage> messages = decodeInChunks(FRAME1 + FRAME2, chunk);
    QCOMPARE(messages.size(), 2);

    const EventStreamMessage &result = messages.at(0);
    QCOMPARE(result.headers.size(), 3);
    QCOMPARE(result.stringHeader(":message-type"), QStringLiteral("event"));
    QCOMPARE(result.stringHeader(":event-type"), QStringLiteral("result"));
    QCOMPARE(result.stringHeader(":content-type"), QStringLiteral("application/json"));
    const QJsonObject payload = QJsonDocument::fromJson(result.payload).object();
    const QJsonObject structured = payload.value(QLatin1String("structuredContent")).toObject();
    QCOMPARE(structured.value(QLatin1String("stdout")).toString(), QStringLiteral("hello\n"));
    QCOMPARE(structured.value(QLatin1String("exitCode")).toInt(-1), 0);
    QCOMPARE(structured.value(QLatin1String("executionTime")).toDouble(), 12.5);

    const EventStreamMessage &exception = messages.at(1);
    QCOMPARE(exception.stringHeader(":message-type"), QStringLiteral("exception"));
    QCOMPARE(exception.stringHeader(":exception-type"), QStringLiteral("throttlingException"));
    QCOMPARE(exception.payload, QByteArray(R"({"message":"Rate exceeded"})"));
    QVERIFY(!exception.header(":event-type").has_value());
}

void TestEventStream::everyHeaderTypeRoundTrips()
{
    using Type = EventStreamHeader::Type;
    const QUuid uuid = QUuid::fromString(QStringLiteral("{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}"));
    EventStreamMessage message;
    message.headers = {
        {"t", Type::BoolTrue, true},
        {"f", Type::BoolFalse, false},
        {"b", Type::Byte, -5},
        {"s", Type::Short, -30000},
        {"i", Type::Integer, -2000000000},
        {"l", Type::Long, qint64(-9000000000000000000)},
        {"bytes", Type::ByteArray, QByteArray("\x00\xff", 2)},
        EventStreamHeader::string("str", QString::fromUtf8("héllo")),
        {"ts", Type::Timestamp, qint64(1752667200000)},
        {"id", Type::Uuid, uuid},
    };
    message.payload = QByteArray(1000, 'x');
    const QByteArray encoded = encodeEventStreamMessage(message);
    const QList<EventStreamMessage> decoded = decodeInChunks(encoded + encoded, 5);
    QCOMPARE(decoded.size(), 2);
    for (const EventStreamMessage &m : decoded) {
        QCOMPARE(m.payload, message.payload);
        QCOMPARE(m.headers.size(), message.headers.size());
        for (int i = 0; i < m.headers.size(); ++i) {
            QCOMPARE(m.headers.at(i).name, message.headers.at(i).name);
            QCOMPARE(m.headers.at(i).type, message.headers.at(i).type);
        }
        QCOMPARE(m.header("t")->toBool(), true);
        QCOMPARE(m.header("f")->toBool(), false);
        QCOMPARE(m.header("b")->toInt(), -5);
        QCOMPARE(m.header("s")->toInt(), -30000);
        QCOMPARE(m.header("i")->toInt(), -2000000000);
        QCOMPARE(m.header("l")->toLongLong(), qint64(-9000000000000000000));
        QCOMPARE(m.header("bytes")->toByteArray(), QByteArray("\x00\xff", 2));
        QCOMPARE(m.stringHeader("str"), QString::fromUtf8("héllo"));
        QCOMPARE(m.header("ts")->toLongLong(), qint64(1752667200000));
        QCOMPARE(m.header("id")->toUuid(), uuid);
    }
}

void TestEventStream::encoderReproducesSpecFrame()
{
    EventStreamMessage exception;
    exception.headers = {
        EventStreamHeader::string(":exception-type", QStringLiteral("throttlingException")),
        EventStreamHeader::string(":content-type", QStringLiteral("application/json")),
        EventStreamHeader::string(":message-type", QStringLiteral("exception"))};
    exception.payload = R"({"message":"Rate exceeded"})";
    QCOMPARE(encodeEventStreamMessage(exception), FRAME2);
}

void TestEventStream::emptyPayloadAndNoHeaders()
{
    const QByteArray encoded = encodeEventStreamMessage({});
    QCOMPARE(encoded.size(), 16);
    const QList<EventStreamMessage> decoded = decodeEventStream(encoded);
    QCOMPARE(decoded.size(), 1);
    QVERIFY(decoded.first().headers.isEmpty());
    QVERIFY(decoded.first().payload.isEmpty());
    QVERIFY(decodeEventStream({}).isEmpty());
}

void TestEventStream::corruptStreamsRejected_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("reason");
    QTest::newRow("prelude crc") << withByte(FRAME1, 9, 0x01) << QStringLiteral("prelude CRC");
    QTest::newRow("total length") << withByte(FRAME1, 3, 0x02) << QStringLiteral("prelude CRC");
    QTest::newRow("payload byte") << withByte(FRAME1, 200, 0x20) << QStringLiteral("message CRC");
    QTest::newRow("header byte") << withByte(FRAME1, 20, 0x20) << QStringLiteral("message CRC");
    QTest::newRow("message crc") << withByte(FRAME1, 240, 0x01) << QStringLiteral("message CRC");
    QTest::newRow("second frame bad")
        << FRAME1 + withByte(FRAME2, 139, 0x01) << QStringLiteral("message CRC");
    QTest::newRow("truncated payload") << FRAME1.left(200) << QStringLiteral("truncated");
    QTest::newRow("truncated prelude") << FRAME1.left(5) << QStringLiteral("truncated");
    QTest::newRow("trailing bytes") << FRAME1 + FRAME2.left(20) << QStringLiteral("truncated");
    QTest::newRow("shorter than headers")
        << preludeOnly(20, 100) << QStringLiteral("shorter than its headers");
    QTest::newRow("shorter than prelude")
        << preludeOnly(8, 0) << QStringLiteral("shorter than its headers");
    QTest::newRow("headers over limit")
        << preludeOnly(200 * 1024, 129 * 1024) << QStringLiteral("headers of");
    QTest::newRow("payload over limit")
        << preludeOnly(25 * 1024 * 1024, 0) << QStringLiteral("payload of");
    QTest::newRow("unknown header type")
        << framedHeaders(QByteArray("\x01x\x0a", 3)) << QStringLiteral("unknown header type 10");
    QTest::newRow("string past block") << framedHeaders(QByteArray("\x01x\x07\x00\x09"
                                                                   "abc",
                                                                   8))
                                       << QStringLiteral("past the header");
    QTest::newRow("name past block") << framedHeaders(QByteArray("\x09"
                                                                 "ab",
                                                                 3))
                                     << QStringLiteral("past the header");
    QTest::newRow("empty name") << framedHeaders(QByteArray("\x00\x00", 2))
                                << QStringLiteral("empty header");
    QTest::newRow("int past block")
        << framedHeaders(QByteArray("\x01x\x04\x00", 4)) << QStringLiteral("past the header");
}

void TestEventStream::corruptStreamsRejected()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, reason);
    for (const qsizetype chunk : {qsizetype(1), bytes.size()}) {
        try {
            decodeInChunks(bytes, chunk);
            QFAIL("no EventStreamError");
        } catch (const EventStreamError &e) {
            QVERIFY2(e.message().contains(reason), qPrintable(e.message()));
            QCOMPARE(e.specName(), QStringLiteral("OSError"));
        }
    }
}

void TestEventStream::decoderRefusesInputAfterError()
{
    EventStreamDecoder decoder;
    QVERIFY_THROWS_EXCEPTION(EventStreamError, decoder.feed(withByte(FRAME1, 9, 1)));
    // A good frame after a fatal error is not decoded: the stream position is lost.
    QVERIFY_THROWS_EXCEPTION(EventStreamError, decoder.feed(FRAME2));
    QVERIFY(!decoder.hasMessage());
    QVERIFY_THROWS_EXCEPTION(EventStreamError, decoder.finish());
}

void TestEventStream::oversizedFrameRejectedBeforeBuffering()
{
    // The prelude alone announces 25 MiB: the decoder fails at once instead of waiting for it.
    EventStreamDecoder decoder;
    QVERIFY_THROWS_EXCEPTION(EventStreamError, decoder.feed(preludeOnly(25 * 1024 * 1024, 0)));
    QCOMPARE(decoder.bufferedBytes(), 0);
}

QTEST_GUILESS_MAIN(TestEventStream)
#include "tst_eventstream.moc"
