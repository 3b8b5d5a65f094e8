// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// libFuzzer target: the AWS event-stream decoder (backends/aws/eventstream.h).
// Input: two control bytes, then the stream. The first control byte seeds the chunk sizes the
// stream is fed in; the second picks a byte of the first accepted frame to corrupt. Properties
// checked for every input (ASan catches any read past the input):
// - chunking does not matter: the stream fed in seeded chunks gives the same messages and the
//   same verdict as decodeEventStream() on the whole stream;
// - each accepted frame re-encodes (encodeEventStreamMessage) to exactly its bytes, unless a
//   string header holds invalid UTF-8 (decoded to text with replacement characters, so only
//   decode(encode(m)) == m can hold);
// - any one corrupted byte of an accepted frame is rejected (both CRCs cover every byte);
// - after an error in feed() the decoder refuses further input.
#include "eventstream.h"

#include <QtEndian>

#include <cstdint>
#include <cstdlib>
#include <optional>

using namespace elsai::aws;

namespace {

/// Decodes `stream` fed in chunks of 1..64 bytes drawn from `seed`; none when it is refused.
std::optional<QList<EventStreamMessage>> decodeChunked(const QByteArray &stream, quint8 seed)
{
    EventStreamDecoder decoder;
    quint32 state = seed * 2654435761u + 1;
    qsizetype at = 0;
    try {
        while (at < stream.size()) {
            state = state * 1103515245u + 12345u;
            const qsizetype n = qMin<qsizetype>(1 + (state >> 16) % 64, stream.size() - at);
            decoder.feed(stream.mid(at, n));
            at += n;
        }
    } catch (const EventStreamError &) {
        try {
            decoder.feed("x");
        } catch (const EventStreamError &) {
            return std::nullopt; // refused, and stays refused
        }
        std::abort();
    }
    try {
        decoder.finish(); // a partial frame left over
    } catch (const EventStreamError &) {
        return std::nullopt;
    }
    return decoder.takeMessages();
}

/// Whether every string header of the frame (already accepted, so well formed) is valid
/// UTF-8: only then is the decoded text exactly its bytes.
bool stringHeadersAreUtf8(const QByteArray &frame)
{
    const char *p = frame.constData() + 12;
    const char *const end = p + qFromBigEndian<quint32>(frame.constData() + 4);
    while (p < end) {
        p += 1 + quint8(*p);
        const quint8 type = quint8(*p++);
        static const int fixed[] = {0, 0, 1, 2, 4, 8, -1, -1, 8, 16};
        if (type == 6 || type == 7) {
            const quint16 length = qFromBigEndian<quint16>(p);
            const QByteArray bytes(p + 2, length);
            if (type == 7 && QString::fromUtf8(bytes).toUtf8() != bytes)
                return false;
            p += 2 + length;
        } else {
            p += fixed[type];
        }
    }
    return true;
}

/// Replacement characters make a string longer: past 65,535 bytes its 16-bit length cannot
/// say it (the encoder serves test servers, which never re-encode such text).
bool fitsTheEncoder(const EventStreamMessage &m)
{
    for (const EventStreamHeader &h : m.headers) {
        if (h.type == EventStreamHeader::Type::String &&
            h.value.toString().toUtf8().size() > 0xFFFF)
            return false;
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 65536)
        return 0;
    const quint8 chunkSeed = data[0];
    const quint8 corruptAt = data[1];
    const QByteArray stream(reinterpret_cast<const char *>(data) + 2, qsizetype(size - 2));

    std::optional<QList<EventStreamMessage>> whole;
    try {
        whole = decodeEventStream(stream);
    } catch (const EventStreamError &) {
    }
    const std::optional<QList<EventStreamMessage>> chunked = decodeChunked(stream, chunkSeed);
    if (whole.has_value() != chunked.has_value())
        std::abort();
    if (!whole)
        return 0;
    if (whole->size() != chunked->size())
        std::abort();

    qsizetype at = 0;
    for (qsizetype i = 0; i < whole->size(); ++i) {
        const QByteArray frame = stream.mid(at, qFromBigEndian<quint32>(stream.constData() + at));
        at += frame.size();
        const QByteArray again = encodeEventStreamMessage(whole->at(i));
        if (again != encodeEventStreamMessage(chunked->at(i)))
            std::abort();
        if (stringHeadersAreUtf8(frame)) {
            if (again != frame)
                std::abort();
        } else if (fitsTheEncoder(whole->at(i)) &&
                   encodeEventStreamMessage(decodeEventStream(again).value(0)) != again) {
            std::abort();
        }
        if (i == 0) {
            QByteArray bad = frame;
            bad[corruptAt % bad.size()] = char(bad[corruptAt % bad.size()] ^ 0x5a);
            try {
                decodeEventStream(bad);
                std::abort(); // a corrupted byte got through both CRCs
            } catch (const EventStreamError &) {
            }
        }
    }
    if (at != stream.size())
        std::abort(); // accepted, yet bytes left over
    return 0;
}
