// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcpera.h"

#include <QJsonArray>

namespace elsai::mcpera {

QString modernVersion()
{
    return QStringLiteral("2026-07-28");
}

QStringList legacyVersions()
{
    return {QStringLiteral("2024-11-05"), QStringLiteral("2025-03-26"),
            QStringLiteral("2025-06-18"), QStringLiteral("2025-11-25")};
}

QString latestLegacyVersion()
{
    return legacyVersions().constLast();
}

QStringList supportedVersions()
{
    QStringList all{modernVersion()};
    const QStringList legacy = legacyVersions();
    for (auto it = legacy.crbegin(); it != legacy.crend(); ++it)
        all.append(*it);
    return all;
}

bool isLegacyVersion(const QString &version)
{
    return legacyVersions().contains(version);
}

bool isModernVersion(const QString &version)
{
    return version == modernVersion();
}

bool isSupportedVersion(const QString &version)
{
    return isModernVersion(version) || isLegacyVersion(version);
}

bool Envelope::declaresExtension(const char *id) const
{
    return clientCapabilities.value(QLatin1String("extensions"))
        .toObject()
        .value(QLatin1String(id))
        .isObject();
}

static QJsonObject metaOf(const jsonrpc::Message &m)
{
    return m.params.value(QLatin1String("_meta")).toObject();
}

bool claimsModern(const jsonrpc::Message &message)
{
    return metaOf(message).contains(QLatin1String(kProtocolVersionKey));
}

Era classify(const jsonrpc::Message &message, const QString &versionHeader)
{
    if (claimsModern(message))
        return Era::Modern;
    if (message.method == QLatin1String("initialize"))
        return Era::Legacy;
    return !versionHeader.isEmpty() && !isLegacyVersion(versionHeader) ? Era::Modern : Era::Legacy;
}

jsonrpc::Fault unsupportedVersion(const QJsonValue &id, const QString &requested)
{
    return {
        jsonrpc::UnsupportedProtocolVersion,
        QStringLiteral("Unsupported protocol version '%1'; this server implements %2 (the "
                       "session-based ones through initialize)")
            .arg(requested, supportedVersions().join(QStringLiteral(", "))),
        id,
        QJsonObject{{QStringLiteral("supported"), QJsonArray::fromStringList(supportedVersions())},
                    {QStringLiteral("requested"), requested}}};
}

jsonrpc::Fault missingTasksExtension(const QJsonValue &id, const QString &what)
{
    return {
        jsonrpc::MissingRequiredClientCapability,
        QStringLiteral("Missing required client capability: %1 needs the %2 extension in "
                       "params._meta[\"%3\"].extensions")
            .arg(what, QLatin1String(kTasksExtension), QLatin1String(kClientCapabilitiesKey)),
        id,
        QJsonObject{{QStringLiteral("requiredCapabilities"),
                     QJsonObject{{QStringLiteral("extensions"),
                                  QJsonObject{{QLatin1String(kTasksExtension), QJsonObject{}}}}}}}};
}

std::variant<Envelope, jsonrpc::Fault> parseEnvelope(const jsonrpc::Message &m,
                                                     const QString &versionHeader)
{
    using jsonrpc::Fault;
    const QJsonValue metaValue = m.params.value(QLatin1String("_meta"));
    const QJsonObject meta = metaValue.toObject();
    const QJsonValue version = meta.value(QLatin1String(kProtocolVersionKey));
    // The header is a cross-check of the body: a disagreement is refused before the version
    // itself is judged (an intermediary may have routed on the header).
    if (!versionHeader.isEmpty() && version.isString() && version.toString() != versionHeader)
        return Fault{
            jsonrpc::HeaderMismatch,
            QStringLiteral("Header mismatch: MCP-Protocol-Version '%1' differs from "
                           "_meta[\"%2\"] '%3'")
                .arg(versionHeader, QLatin1String(kProtocolVersionKey), version.toString()),
            m.id};
    const QString requested = version.isString() ? version.toString() : versionHeader;
    if (!requested.isEmpty() && !isModernVersion(requested))
        return unsupportedVersion(m.id, requested);

    auto invalid = [&](const QString &what) {
        return Fault{jsonrpc::InvalidParams,
                     QStringLiteral("%1: every request of MCP %2 carries params._meta with "
                                    "\"%3\" (a string) and \"%4\" (an object)")
                         .arg(what, modernVersion(), QLatin1String(kProtocolVersionKey),
                              QLatin1String(kClientCapabilitiesKey)),
                     m.id};
    };
    if (!metaValue.isObject())
        return invalid(QStringLiteral("missing params._meta"));
    if (!version.isString())
        return invalid(
            QStringLiteral("missing or malformed \"%1\"").arg(QLatin1String(kProtocolVersionKey)));
    const QJsonValue capabilities = meta.value(QLatin1String(kClientCapabilitiesKey));
    if (!capabilities.isObject())
        return invalid(QStringLiteral("missing or malformed \"%1\"")
                           .arg(QLatin1String(kClientCapabilitiesKey)));
    const QJsonValue info = meta.value(QLatin1String(kClientInfoKey));
    if (!info.isUndefined() && !info.isObject())
        return invalid(
            QStringLiteral("\"%1\" must be an object").arg(QLatin1String(kClientInfoKey)));
    return Envelope{version.toString(), info.toObject(), capabilities.toObject()};
}

QJsonObject serverInfo()
{
    return {{QStringLiteral("name"), QStringLiteral("elsai-workbench")},
            {QStringLiteral("title"), QStringLiteral("elsai sandbox workbench")},
            {QStringLiteral("version"), QStringLiteral(ELSAI_VERSION)}};
}

QJsonObject modernResult(QJsonObject result, const QString &resultType)
{
    result.insert(QStringLiteral("resultType"), resultType);
    QJsonObject meta = result.value(QLatin1String("_meta")).toObject();
    meta.insert(QLatin1String(kServerInfoKey), serverInfo());
    result.insert(QStringLiteral("_meta"), meta);
    return result;
}

} // namespace elsai::mcpera
