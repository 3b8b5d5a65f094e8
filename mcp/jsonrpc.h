// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>

#include <optional>
#include <variant>

namespace elsai::jsonrpc {

/// Error codes of JSON-RPC 2.0, and those MCP 2026-07-28 defines in the range it reserves.
enum ErrorCode {
    ParseError = -32700,
    InvalidRequest = -32600,
    MethodNotFound = -32601,
    InvalidParams = -32602,
    InternalError = -32603,
    HeaderMismatch = -32020,                  ///< HTTP headers disagree with the body
    MissingRequiredClientCapability = -32021, ///< the request needs a capability not declared
    UnsupportedProtocolVersion = -32022,      ///< data: {supported, requested}
};

/// One well-formed JSON-RPC 2.0 message.
struct Message
{
    enum class Kind { Request, Notification, Response, ErrorResponse };
    Kind kind = Kind::Request;
    QJsonValue id;      ///< string or integer; Null for notifications
    QString method;     ///< requests and notifications
    QJsonObject params; ///< requests and notifications (absent → empty)
    QJsonValue result;  ///< responses
    QJsonObject error;  ///< error responses

    bool isRequest() const { return kind == Kind::Request; }
    bool isNotification() const { return kind == Kind::Notification; }
};

/// Why a payload is not a message, and the id to answer with (Null when unknown).
struct Fault
{
    int code = InvalidRequest;
    QString message;
    QJsonValue id = QJsonValue::Null;
    QJsonValue data = QJsonValue::Undefined; ///< error.data when set
};

using ParseResult = std::variant<Message, Fault>;

/// Parses one JSON-RPC 2.0 message from its serialized form. A batch (a JSON array) is refused
/// as InvalidRequest: only MCP 2025-03-26 has them (parsePayload()).
ParseResult parse(const QByteArray &payload);

/// One message or a JSON-RPC batch of them, for a transport whose session may allow batches.
struct Payload
{
    ParseResult single;                      ///< the message, or why the payload is none
    std::optional<QList<ParseResult>> batch; ///< set for a non-empty JSON array
};
Payload parsePayload(const QByteArray &payload);
/// Validates an already decoded JSON value as a message.
ParseResult parse(const QJsonValue &value);

/// {"jsonrpc":"2.0","id":…,"result":…}
QJsonObject resultResponse(const QJsonValue &id, const QJsonValue &result);
/// {"jsonrpc":"2.0","id":…,"error":{"code","message"[,"data"]}}
QJsonObject errorResponse(const QJsonValue &id, int code, const QString &message,
                          const QJsonValue &data = QJsonValue::Undefined);
QJsonObject errorResponse(const Fault &fault);
/// {"jsonrpc":"2.0","method":…,"params":…}
QJsonObject notification(const QString &method, const QJsonObject &params = {});

/// Compact serialization, without a trailing newline.
QByteArray serialize(const QJsonObject &message);

/// Appends `utf8` (valid UTF-8) to `out` as the inside of a JSON string, escaped as
/// QJsonDocument escapes: `"`, `\\`, and control characters; other bytes are copied.
void appendEscaped(QByteArray &out, QByteArrayView utf8);

/// Finds the top-level "id" of a message too large to keep, from its bytes as they stream by
/// (memory stays bounded): a refusal of the message can then answer the request it was.
class IdScanner
{
public:
    void feed(QByteArrayView bytes);
    /// The id once seen (a string or an integer); Null when not (yet) found or not valid.
    QJsonValue id() const;

private:
    enum class Expect { Nothing, Key, Colon, Value };
    int m_depth = 0;
    bool m_inString = false;
    bool m_escape = false;
    bool m_capturing = false; ///< the current string (or number) is kept
    bool m_keyIsCaptured = false;
    Expect m_expect = Expect::Nothing;
    bool m_idNext = false; ///< the key just read is "id"
    bool m_done = false;
    QByteArray m_text;   ///< the key or id value being read (bounded)
    QByteArray m_idJson; ///< the id as JSON text
};

/// A stable key for a request id (ids may be strings or numbers: "s:abc" / "n:42").
QString idKey(const QJsonValue &id);

} // namespace elsai::jsonrpc
