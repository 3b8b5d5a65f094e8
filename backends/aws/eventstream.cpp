// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "eventstream.h"

#include <QtEndian>

#include <array>

namespace elsai::aws {

namespace {

constexpr qsizetype PRELUDE = 12;
constexpr qsizetype TRAILER = 4;

constexpr std::array<quint32, 256> makeCrcTable()
{
    std::array<quint32, 256> table{};
    for (quint32 i = 0; i < 256; ++i) {
        quint32 c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    return table;
}
constexpr std::array<quint32, 256> CRC_TABLE = makeCrcTable();

quint32 readU32(const char *p)
{
    return qFromBigEndian<quint32>(p);
}

void appendU32(QByteArray &out, quint32 v)
{
    char buf[4];
    qToBigEndian(v, buf);
    out.append(buf, 4);
}

template<typename T>
void appendBig(QByteArray &out, T v)
{
    char buf[sizeof(T)];
    qToBigEndian(v, buf);
    out.append(buf, sizeof(T));
}

[[noreturn]] void fail(const QString &what)
{
    throw EventStreamError(QStringLiteral("Malformed AWS event stream: %1. The response cannot be "
                                          "trusted; retry the call.")
                               .arg(what));
}

} // namespace

quint32 crc32(const QByteArray &data, quint32 crc)
{
    crc = ~crc;
    for (const char ch : data)
        crc = CRC_TABLE[(crc ^ static_cast<quint8>(ch)) & 0xff] ^ (crc >> 8);
    return ~crc;
}

std::optional<QVariant> EventStreamMessage::header(const QByteArray &name) const
{
    for (const EventStreamHeader &h : headers) {
        if (h.name == name)
            return h.value;
    }
    return std::nullopt;
}

QString EventStreamMessage::stringHeader(const QByteArray &name) const
{
    const std::optional<QVariant> value = header(name);
    return value ? value->toString() : QString();
}

QByteArray encodeEventStreamMessage(const EventStreamMessage &message)
{
    using Type = EventStreamHeader::Type;
    QByteArray headers;
    for (const EventStreamHeader &h : message.headers) {
        headers += char(h.name.size());
        headers += h.name;
        headers += char(h.type);
        switch (h.type) {
        case Type::BoolTrue:
        case Type::BoolFalse:
            break;
        case Type::Byte:
            headers += char(h.value.toInt());
            break;
        case Type::Short:
            appendBig<qint16>(headers, qint16(h.value.toInt()));
            break;
        case Type::Integer:
            appendBig<qint32>(headers, h.value.toInt());
            break;
        case Type::Long:
        case Type::Timestamp:
            appendBig<qint64>(headers, h.value.toLongLong());
            break;
        case Type::ByteArray:
        case Type::String: {
            const QByteArray bytes =
                h.type == Type::String ? h.value.toString().toUtf8() : h.value.toByteArray();
            appendBig<quint16>(headers, quint16(bytes.size()));
            headers += bytes;
            break;
        }
        case Type::Uuid:
            headers += h.value.toUuid().toRfc4122();
            break;
        }
    }
    QByteArray out;
    appendU32(out, quint32(PRELUDE + headers.size() + message.payload.size() + TRAILER));
    appendU32(out, quint32(headers.size()));
    appendU32(out, crc32(out));
    out += headers;
    out += message.payload;
    appendU32(out, crc32(out));
    return out;
}

void EventStreamDecoder::feed(const QByteArray &chunk)
{
    if (m_failed)
        fail(QStringLiteral("input after a fatal error"));
    m_buffer += chunk;
    try {
        decodeAvailable();
    } catch (const EventStreamError &) {
        m_failed = true;
        m_buffer.clear();
        throw;
    }
}

QList<EventStreamMessage> EventStreamDecoder::takeMessages()
{
    QList<EventStreamMessage> out;
    out.swap(m_messages);
    return out;
}

void EventStreamDecoder::finish() const
{
    if (m_failed)
        fail(QStringLiteral("the stream already failed"));
    if (!m_buffer.isEmpty())
        fail(QStringLiteral("truncated frame (%1 bytes left at the end of the stream)")
                 .arg(m_buffer.size()));
}

void EventStreamDecoder::decodeAvailable()
{
    while (m_buffer.size() >= PRELUDE) {
        const quint32 total = readU32(m_buffer.constData());
        const quint32 headersLength = readU32(m_buffer.constData() + 4);
        const quint32 preludeCrc = readU32(m_buffer.constData() + 8);
        // The prelude is checked before its lengths are trusted (no huge allocation on garbage).
        if (crc32(m_buffer.left(8)) != preludeCrc)
            fail(QStringLiteral("prelude CRC mismatch"));
        if (headersLength > quint32(EVENT_STREAM_MAX_HEADERS))
            fail(QStringLiteral("headers of %1 bytes exceed the %2-byte limit")
                     .arg(headersLength)
                     .arg(EVENT_STREAM_MAX_HEADERS));
        if (total < quint32(PRELUDE + TRAILER) + headersLength)
            fail(QStringLiteral("frame length %1 is shorter than its headers (%2)")
                     .arg(total)
                     .arg(headersLength));
        const quint64 payloadLength = quint64(total) - PRELUDE - TRAILER - headersLength;
        if (payloadLength > quint64(EVENT_STREAM_MAX_PAYLOAD))
            fail(QStringLiteral("payload of %1 bytes exceeds the %2-byte limit")
                     .arg(payloadLength)
                     .arg(EVENT_STREAM_MAX_PAYLOAD));
        if (quint64(m_buffer.size()) < total)
            return;
        const QByteArray frame = m_buffer.left(total);
        m_buffer.remove(0, total);
        m_messages.append(decodeFrame(frame, headersLength));
    }
}

EventStreamMessage EventStreamDecoder::decodeFrame(const QByteArray &frame,
                                                   quint32 headersLength) const
{
    using Type = EventStreamHeader::Type;
    const qsizetype end = frame.size() - TRAILER;
    if (crc32(frame.left(end)) != readU32(frame.constData() + end))
        fail(QStringLiteral("message CRC mismatch"));

    EventStreamMessage message;
    const char *p = frame.constData() + PRELUDE;
    const char *const headersEnd = p + headersLength;
    auto need = [&](qsizetype n) {
        if (headersEnd - p < n)
            fail(QStringLiteral("header runs past the header block"));
    };
    while (p < headersEnd) {
        EventStreamHeader h;
        need(1);
        const quint8 nameLength = quint8(*p++);
        if (nameLength == 0)
            fail(QStringLiteral("empty header name"));
        need(nameLength + 1);
        h.name = QByteArray(p, nameLength);
        p += nameLength;
        const quint8 type = quint8(*p++);
        switch (type) {
        case quint8(Type::BoolTrue):
        case quint8(Type::BoolFalse):
            h.value = type == quint8(Type::BoolTrue);
            break;
        case quint8(Type::Byte):
            need(1);
            h.value = int(qint8(*p++));
            break;
        case quint8(Type::Short):
            need(2);
            h.value = int(qFromBigEndian<qint16>(p));
            p += 2;
            break;
        case quint8(Type::Integer):
            need(4);
            h.value = qFromBigEndian<qint32>(p);
            p += 4;
            break;
        case quint8(Type::Long):
        case quint8(Type::Timestamp):
            need(8);
            h.value = qFromBigEndian<qint64>(p);
            p += 8;
            break;
        case quint8(Type::ByteArray):
        case quint8(Type::String): {
            need(2);
            const quint16 length = qFromBigEndian<quint16>(p);
            p += 2;
            need(length);
            const QByteArray bytes(p, length);
            p += length;
            h.value =
                type == quint8(Type::String) ? QVariant(QString::fromUtf8(bytes)) : QVariant(bytes);
            break;
        }
        case quint8(Type::Uuid):
            need(16);
            h.value = QUuid::fromRfc4122(QByteArrayView(p, 16));
            p += 16;
            break;
        default:
            fail(QStringLiteral("unknown header type %1 for '%2'")
                     .arg(type)
                     .arg(QString::fromUtf8(h.name)));
        }
        h.type = Type(type);
        message.headers.append(h);
    }
    message.payload = frame.mid(PRELUDE + headersLength, end - PRELUDE - headersLength);
    return message;
}

QList<EventStreamMessage> decodeEventStream(const QByteArray &bytes)
{
    EventStreamDecoder decoder;
    decoder.feed(bytes);
    decoder.finish();
    return decoder.takeMessages();
}

} // namespace elsai::aws
