// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "jsonrpc.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <array>
#include <cctype>
#include <cmath>
#include <cstring>

namespace elsai::jsonrpc {

static bool isValidId(const QJsonValue &id)
{
    if (id.isString())
        return true;
    // JSON-RPC allows numbers; MCP says integers. A fractional id cannot round-trip reliably.
    if (id.isDouble()) {
        const double v = id.toDouble();
        return std::isfinite(v) && std::floor(v) == v;
    }
    return false;
}

ParseResult parse(const QByteArray &payload)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(payload, &error);
    if (error.error != QJsonParseError::NoError)
        return Fault{ParseError,
                     QStringLiteral("invalid JSON at offset %1: %2; send one JSON-RPC 2.0 object")
                         .arg(error.offset)
                         .arg(error.errorString())};
    if (doc.isArray())
        return parse(QJsonValue(doc.array()));
    return parse(QJsonValue(doc.object()));
}

Payload parsePayload(const QByteArray &payload)
{
    qsizetype first = 0; // no copy of a large message to look at its first character
    while (first < payload.size() && std::isspace(uchar(payload[first])))
        ++first;
    if (first == payload.size() || payload[first] != '[')
        return {parse(payload), std::nullopt};
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(payload, &error);
    if (error.error != QJsonParseError::NoError || !doc.isArray())
        return {parse(payload), std::nullopt};
    const QJsonArray items = doc.array();
    if (items.isEmpty())
        return {Fault{InvalidRequest, QStringLiteral("an empty JSON-RPC batch")}, std::nullopt};
    QList<ParseResult> batch;
    batch.reserve(items.size());
    for (const QJsonValue &item : items)
        batch.append(item.isArray() ? ParseResult(Fault{InvalidRequest,
                                                        QStringLiteral("a batch inside a batch")})
                                    : parse(item));
    return {Message{}, std::move(batch)};
}

ParseResult parse(const QJsonValue &value)
{
    if (value.isArray())
        return Fault{InvalidRequest,
                     QStringLiteral("JSON-RPC batches are only part of MCP 2025-03-26 (2025-06-18 "
                                    "removed them); send one message per request")};
    if (!value.isObject())
        return Fault{InvalidRequest, QStringLiteral("a JSON-RPC message must be a JSON object")};
    const QJsonObject o = value.toObject();
    const QJsonValue id = o.value(QLatin1String("id"));
    const bool hasId = o.contains(QLatin1String("id"));
    const QJsonValue answerId = hasId && isValidId(id) ? id : QJsonValue(QJsonValue::Null);
    if (o.value(QLatin1String("jsonrpc")).toString() != QLatin1String("2.0"))
        return Fault{InvalidRequest, QStringLiteral("\"jsonrpc\" must be \"2.0\""), answerId};
    if (hasId && !isValidId(id))
        return Fault{InvalidRequest,
                     QStringLiteral("\"id\" must be a string or an integer (null is not allowed)")};

    Message m;
    m.id = hasId ? id : QJsonValue(QJsonValue::Null);
    if (o.contains(QLatin1String("method"))) {
        const QJsonValue method = o.value(QLatin1String("method"));
        if (!method.isString() || method.toString().isEmpty())
            return Fault{InvalidRequest, QStringLiteral("\"method\" must be a non-empty string"),
                         answerId};
        m.method = method.toString();
        if (o.contains(QLatin1String("params"))) {
            // MCP params are always objects (by-name); positional arrays are not used.
            const QJsonValue params = o.value(QLatin1String("params"));
            if (!params.isObject())
                return Fault{InvalidRequest, QStringLiteral("\"params\" must be an object"),
                             answerId};
            m.params = params.toObject();
        }
        m.kind = hasId ? Message::Kind::Request : Message::Kind::Notification;
        return m;
    }
    if (!hasId)
        return Fault{InvalidRequest,
                     QStringLiteral("a message needs \"method\" (request or notification) or "
                                    "\"id\" with \"result\" or \"error\" (response)")};
    const bool hasResult = o.contains(QLatin1String("result"));
    const bool hasError = o.contains(QLatin1String("error"));
    if (hasResult == hasError)
        return Fault{InvalidRequest,
                     QStringLiteral("a response needs exactly one of \"result\" and \"error\""),
                     answerId};
    if (hasError) {
        const QJsonValue err = o.value(QLatin1String("error"));
        if (!err.isObject() || !err.toObject().value(QLatin1String("code")).isDouble())
            return Fault{InvalidRequest,
                         QStringLiteral("\"error\" must be an object with a numeric \"code\""),
                         answerId};
        m.kind = Message::Kind::ErrorResponse;
        m.error = err.toObject();
    } else {
        m.kind = Message::Kind::Response;
        m.result = o.value(QLatin1String("result"));
    }
    return m;
}

QJsonObject resultResponse(const QJsonValue &id, const QJsonValue &result)
{
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
            {QStringLiteral("id"), id},
            {QStringLiteral("result"), result}};
}

QJsonObject errorResponse(const QJsonValue &id, int code, const QString &message,
                          const QJsonValue &data)
{
    QJsonObject error{{QStringLiteral("code"), code}, {QStringLiteral("message"), message}};
    if (!data.isUndefined())
        error.insert(QStringLiteral("data"), data);
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
            {QStringLiteral("id"), id},
            {QStringLiteral("error"), error}};
}

QJsonObject errorResponse(const Fault &fault)
{
    return errorResponse(fault.id, fault.code, fault.message, fault.data);
}

QJsonObject notification(const QString &method, const QJsonObject &params)
{
    QJsonObject o{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                  {QStringLiteral("method"), method}};
    if (!params.isEmpty())
        o.insert(QStringLiteral("params"), params);
    return o;
}

QByteArray serialize(const QJsonObject &message)
{
    return QJsonDocument(message).toJson(QJsonDocument::Compact);
}

namespace {
// Bytes each input byte becomes inside a JSON string.
constexpr std::array<uchar, 256> kEscapedLength = [] {
    std::array<uchar, 256> t{};
    for (size_t c = 0; c < t.size(); ++c)
        t[c] = c < 0x20 ? 6 : 1;
    for (const char c : {'"', '\\', '\b', '\f', '\n', '\r', '\t'})
        t[uchar(c)] = 2;
    return t;
}();
} // namespace

void appendEscaped(QByteArray &out, QByteArrayView utf8)
{
    static constexpr char kHex[] = "0123456789abcdef";
    const auto *in = reinterpret_cast<const uchar *>(utf8.data());
    const qsizetype n = utf8.size();
    // The exact size first (a table lookup per byte), so a large text is copied once.
    qsizetype length = 0;
    for (qsizetype i = 0; i < n; ++i)
        length += kEscapedLength[in[i]];
    const qsizetype start = out.size();
    out.resize(start + length);
    char *p = out.data() + start;
    for (qsizetype i = 0; i < n;) {
        qsizetype run = i; // copy a run of bytes that need no escape at once
        while (run < n && kEscapedLength[in[run]] == 1)
            ++run;
        std::memcpy(p, in + i, size_t(run - i));
        p += run - i;
        if (run == n)
            break;
        const uchar c = in[run];
        i = run + 1;
        *p++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *p++ = char(c);
            break;
        case '\b':
            *p++ = 'b';
            break;
        case '\f':
            *p++ = 'f';
            break;
        case '\n':
            *p++ = 'n';
            break;
        case '\r':
            *p++ = 'r';
            break;
        case '\t':
            *p++ = 't';
            break;
        default:
            *p++ = 'u';
            *p++ = '0';
            *p++ = '0';
            *p++ = kHex[c >> 4];
            *p++ = kHex[c & 0xf];
        }
    }
}

void IdScanner::feed(QByteArrayView bytes)
{
    constexpr qsizetype kMaxText = 256; // an id longer than this is not answered by id
    for (const char c : bytes) {
        if (m_done)
            return;
        if (m_inString) {
            if (m_capturing && m_text.size() <= kMaxText)
                m_text.append(c);
            if (m_escape) {
                m_escape = false;
            } else if (c == '\\') {
                m_escape = true;
            } else if (c == '"') {
                m_inString = false;
                if (m_capturing && !m_keyIsCaptured) { // the id's string value
                    m_idJson = '"' + m_text;
                    m_done = m_text.size() <= kMaxText;
                } else if (m_capturing) { // a key
                    m_idNext = m_text == "id\"";
                    m_expect = Expect::Colon;
                }
                m_capturing = false;
            }
            continue;
        }
        if (m_capturing) { // a number value of "id"
            if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' ||
                c == 'E') {
                if (m_text.size() <= kMaxText)
                    m_text.append(c);
                continue;
            }
            m_capturing = false;
            m_idJson = m_text;
            m_done = true;
            return;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        if (m_depth == 1 && m_expect == Expect::Value) {
            m_expect = Expect::Nothing;
            if (m_idNext && c == '"') {
                m_inString = m_capturing = true;
                m_keyIsCaptured = false;
                m_text.clear();
                continue;
            }
            if (m_idNext && (c == '-' || (c >= '0' && c <= '9'))) {
                m_capturing = true;
                m_text = QByteArray(1, c);
                continue;
            }
            m_idNext = false; // another value (or an invalid id): skip it
        }
        switch (c) {
        case '"':
            m_inString = true;
            m_capturing = m_depth == 1 && m_expect == Expect::Key;
            m_keyIsCaptured = true;
            m_text.clear();
            break;
        case ':':
            if (m_depth == 1 && m_expect == Expect::Colon)
                m_expect = Expect::Value;
            break;
        case ',':
            if (m_depth == 1)
                m_expect = Expect::Key;
            break;
        case '{':
        case '[':
            if (m_depth == 0 && c == '[') {
                m_done = true; // a batch: no one id
                return;
            }
            ++m_depth;
            if (m_depth == 1)
                m_expect = Expect::Key;
            break;
        case '}':
        case ']':
            --m_depth;
            break;
        default:
            break;
        }
    }
}

QJsonValue IdScanner::id() const
{
    if (m_idJson.isEmpty())
        return QJsonValue::Null;
    const QJsonDocument doc = QJsonDocument::fromJson("[" + m_idJson + "]");
    const QJsonValue id = doc.array().at(0);
    return isValidId(id) ? id : QJsonValue(QJsonValue::Null);
}

QString idKey(const QJsonValue &id)
{
    if (id.isString())
        return QStringLiteral("s:") + id.toString();
    return QStringLiteral("n:") + QString::number(id.toInteger());
}

} // namespace elsai::jsonrpc
