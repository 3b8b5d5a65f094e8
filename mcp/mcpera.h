// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "jsonrpc.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <variant>

/// The two generations of MCP this server speaks, and how a request is sorted into one.
///
/// Legacy revisions (2024-11-05 … 2025-11-25) open a session with `initialize`; the modern,
/// stateless revision (2026-07-28) carries its protocol version, client identity and
/// capabilities in every request's `_meta`, with no handshake and no session. A server that
/// speaks both decides per request: `initialize` (and a request of a session) is legacy, a
/// request whose `_meta` names a protocol version is modern.
namespace elsai::mcpera {

/// The stateless revision implemented.
QString modernVersion();
/// The session-based revisions implemented, oldest first; the last is the preferred one.
QStringList legacyVersions();
QString latestLegacyVersion();
/// Every revision implemented, newest first: what server/discover and an
/// UnsupportedProtocolVersionError list.
QStringList supportedVersions();
bool isLegacyVersion(const QString &version);
bool isModernVersion(const QString &version);
bool isSupportedVersion(const QString &version);

/// The reserved `_meta` keys of a modern request and result.
inline constexpr char kProtocolVersionKey[] = "io.modelcontextprotocol/protocolVersion";
inline constexpr char kClientInfoKey[] = "io.modelcontextprotocol/clientInfo";
inline constexpr char kClientCapabilitiesKey[] = "io.modelcontextprotocol/clientCapabilities";
inline constexpr char kServerInfoKey[] = "io.modelcontextprotocol/serverInfo";
inline constexpr char kSubscriptionIdKey[] = "io.modelcontextprotocol/subscriptionId";
/// The Tasks extension's identifier (a key of `capabilities.extensions`).
inline constexpr char kTasksExtension[] = "io.modelcontextprotocol/tasks";

/// The per-request protocol fields of a modern request (`params._meta`).
struct Envelope
{
    QString protocolVersion;
    QJsonObject clientInfo;         ///< optional: empty when not sent
    QJsonObject clientCapabilities; ///< required, may be empty
    /// Whether the client declared an extension (`capabilities.extensions[id]`).
    bool declaresExtension(const char *id) const;
};

/// Whether the message's `params._meta` names a protocol version: the body's claim to the
/// modern era (it wins over the HTTP header, which is only cross-checked against it).
bool claimsModern(const jsonrpc::Message &message);

/// How a request is served. `initialize` is legacy unless its body claims the modern era
/// (then it is a method that revision removed: MethodNotFound). Otherwise modern when the body
/// claims it, or when the HTTP `MCP-Protocol-Version` header (empty on stdio) names a
/// version that is not a legacy one (2026-07-28, or one this server does not know: that gets
/// the modern UnsupportedProtocolVersionError, not a legacy refusal).
enum class Era { Legacy, Modern };
Era classify(const jsonrpc::Message &message, const QString &versionHeader = {});

/// The envelope of a modern-classified request, or why it cannot be served: the header and
/// the body naming different versions (HeaderMismatch, when a header is given), a version this
/// server does not implement (UnsupportedProtocolVersion, listing the supported ones), or a
/// missing or malformed required field (InvalidParams naming it). Faults carry the message id.
std::variant<Envelope, jsonrpc::Fault> parseEnvelope(const jsonrpc::Message &message,
                                                     const QString &versionHeader = {});

/// UnsupportedProtocolVersionError (-32022) for `requested`, with `data.supported` and
/// `data.requested`.
jsonrpc::Fault unsupportedVersion(const QJsonValue &id, const QString &requested);

/// MissingRequiredClientCapabilityError (-32021) of a request that needs the Tasks extension
/// (`what` says why), with `data.requiredCapabilities` naming it.
jsonrpc::Fault missingTasksExtension(const QJsonValue &id, const QString &what);

/// `{"name","title","version"}` of this server: the legacy `serverInfo` and the modern
/// `_meta["io.modelcontextprotocol/serverInfo"]`.
QJsonObject serverInfo();

/// A modern result: `resultType` (`complete` unless given) and the server's identity in `_meta`.
QJsonObject modernResult(QJsonObject result,
                         const QString &resultType = QStringLiteral("complete"));

} // namespace elsai::mcpera
