// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "errors.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QUuid>
#include <QVariant>

#include <optional>

namespace elsai::aws {

/// A malformed AWS event stream: bad CRC, bad lengths, bad header, or a truncated frame.
/// Reports the spec name OSError (the stream came from the network).
class EventStreamError : public OSError
{
public:
    using OSError::OSError;
};

/// Standard IEEE / zlib CRC-32 (Qt's qChecksum is CRC-16 only). `crc` continues a running sum.
quint32 crc32(const QByteArray &data, quint32 crc = 0);

/// One header of an event-stream message (spec §2.5).
struct EventStreamHeader
{
    enum class Type : quint8 {
        BoolTrue = 0,
        BoolFalse = 1,
        Byte = 2,
        Short = 3,
        Integer = 4,
        Long = 5,
        ByteArray = 6,
        String = 7,
        Timestamp = 8, ///< ms since the epoch, as qint64
        Uuid = 9,
    };
    QByteArray name;
    Type type = Type::String;
    /// bool, qint8/16/32/64 (as qint64 for Long and Timestamp), QByteArray, QString or QUuid.
    QVariant value;

    static EventStreamHeader string(const QByteArray &name, const QString &value)
    {
        return {name, Type::String, value};
    }
};

struct EventStreamMessage
{
    QList<EventStreamHeader> headers;
    QByteArray payload;

    /// The value of a header, or none.
    std::optional<QVariant> header(const QByteArray &name) const;
    /// A string header's text, or empty.
    QString stringHeader(const QByteArray &name) const;
};

/// Limits of one message (spec §2.5; the AWS C runtime's values).
inline constexpr qsizetype EVENT_STREAM_MAX_HEADERS = 128 * 1024;
inline constexpr qsizetype EVENT_STREAM_MAX_PAYLOAD = 24 * 1024 * 1024;

/// Encodes one message (for test servers, and for round trips in tests).
QByteArray encodeEventStreamMessage(const EventStreamMessage &message);

/// Incremental decoder of AWS binary event-stream frames: feed() bytes as they arrive, in any
/// chunking; complete messages queue up for takeMessage(). Every error is fatal for the
/// stream (EventStreamError) and the decoder refuses further input.
class EventStreamDecoder
{
public:
    /// Appends bytes and decodes every complete frame. Throws EventStreamError.
    void feed(const QByteArray &chunk);
    bool hasMessage() const { return !m_messages.isEmpty(); }
    EventStreamMessage takeMessage() { return m_messages.takeFirst(); }
    QList<EventStreamMessage> takeMessages();
    /// End of input: throws EventStreamError when a partial frame is left.
    void finish() const;
    qsizetype bufferedBytes() const { return m_buffer.size(); }

private:
    void decodeAvailable();
    EventStreamMessage decodeFrame(const QByteArray &frame, quint32 headersLength) const;

    QByteArray m_buffer;
    QList<EventStreamMessage> m_messages;
    bool m_failed = false;
};

/// Decodes a complete stream (feed + finish).
QList<EventStreamMessage> decodeEventStream(const QByteArray &bytes);

} // namespace elsai::aws
