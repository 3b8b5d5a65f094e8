// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "tools.h"

#include "errors.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>

namespace elsai {

bool ToolRegistry::add(const Tool &tool)
{
    QMutexLocker lock(&m_mutex);
    if (m_blockedNames.contains(tool.name)) {
        if (!m_blocked.contains(tool.name))
            m_blocked.append(tool.name);
        return false;
    }
    for (Tool &t : m_tools) {
        if (t.name == tool.name) {
            t = tool;
            return true;
        }
    }
    m_tools.append(tool);
    return true;
}

void ToolRegistry::setBlockedNames(const QStringList &names)
{
    QMutexLocker lock(&m_mutex);
    m_blockedNames = names;
    m_tools.removeIf([&](const Tool &t) {
        if (!names.contains(t.name))
            return false;
        if (!m_blocked.contains(t.name))
            m_blocked.append(t.name);
        return true;
    });
}

QStringList ToolRegistry::blocked() const
{
    QMutexLocker lock(&m_mutex);
    return m_blocked;
}

bool ToolRegistry::remove(const QString &name)
{
    QMutexLocker lock(&m_mutex);
    return m_tools.removeIf([&](const Tool &t) { return t.name == name; }) > 0;
}

QStringList ToolRegistry::removeProvider(const QString &provider)
{
    QMutexLocker lock(&m_mutex);
    QStringList removed;
    m_tools.removeIf([&](const Tool &t) {
        if (t.provider != provider)
            return false;
        removed.append(t.name);
        return true;
    });
    return removed;
}

bool ToolRegistry::contains(const QString &name) const
{
    return get(name).has_value();
}

std::optional<Tool> ToolRegistry::get(const QString &name) const
{
    QMutexLocker lock(&m_mutex);
    for (const Tool &t : m_tools) {
        if (t.name == name)
            return t;
    }
    return std::nullopt;
}

QStringList ToolRegistry::names() const
{
    QMutexLocker lock(&m_mutex);
    QStringList out;
    for (const Tool &t : m_tools)
        out.append(t.name);
    std::sort(out.begin(), out.end());
    return out;
}

QList<Tool> ToolRegistry::tools() const
{
    QMutexLocker lock(&m_mutex);
    return m_tools;
}

namespace args {

static ValueError badArg(const QString &tool, const QString &key, const QString &what)
{
    return ValueError(QStringLiteral("%1: argument '%2' %3").arg(tool, key, what));
}

QString requiredString(const QJsonObject &a, const QString &key, const QString &tool)
{
    const QJsonValue v = a.value(key);
    if (v.isUndefined() || v.isNull())
        throw badArg(tool, key, QStringLiteral("is required"));
    if (!v.isString())
        throw badArg(tool, key, QStringLiteral("must be a string"));
    return v.toString();
}

std::optional<QString> optionalString(const QJsonObject &a, const QString &key, const QString &tool)
{
    const QJsonValue v = a.value(key);
    if (v.isUndefined() || v.isNull())
        return std::nullopt;
    if (!v.isString())
        throw badArg(tool, key, QStringLiteral("must be a string"));
    return v.toString();
}

std::optional<double> optionalNumber(const QJsonObject &a, const QString &key, const QString &tool)
{
    const QJsonValue v = a.value(key);
    if (v.isUndefined() || v.isNull())
        return std::nullopt;
    if (!v.isDouble() || !std::isfinite(v.toDouble()))
        throw badArg(tool, key, QStringLiteral("must be a number"));
    return v.toDouble();
}

std::optional<qint64> optionalInt(const QJsonObject &a, const QString &key, const QString &tool)
{
    const auto n = optionalNumber(a, key, tool);
    if (!n)
        return std::nullopt;
    if (*n != std::floor(*n) || std::abs(*n) > 9e15)
        throw badArg(tool, key, QStringLiteral("must be an integer"));
    return static_cast<qint64>(*n);
}

} // namespace args

void validateToolArguments(const Tool &tool, const QJsonObject &arguments)
{
    const QJsonObject props = tool.inputSchema.value(QLatin1String("properties")).toObject();
    // An argument the tool does not take is refused rather than ignored: a misspelt optional
    // argument ("timeout_s", "lines") would otherwise silently do nothing.
    if (tool.inputSchema.value(QLatin1String("additionalProperties")) == QJsonValue(false)) {
        QStringList unknown;
        for (auto it = arguments.begin(); it != arguments.end(); ++it) {
            if (props.contains(it.key()))
                continue;
            if (unknown.size() == 10) { // the message stays small whatever was sent
                unknown.append(QStringLiteral("…"));
                break;
            }
            unknown.append(QLatin1Char('\'') + it.key().left(64) + QLatin1Char('\''));
        }
        if (!unknown.isEmpty()) {
            const QStringList known = props.keys();
            throw ValueError(QStringLiteral("%1: unknown argument%2 %3; it takes %4")
                                 .arg(tool.name,
                                      unknown.size() > 1 ? QStringLiteral("s") : QString(),
                                      unknown.join(QStringLiteral(", ")),
                                      known.isEmpty() ? QStringLiteral("no arguments")
                                                      : known.join(QStringLiteral(", "))));
        }
    }
    for (const QJsonValue &r : tool.inputSchema.value(QLatin1String("required")).toArray()) {
        const QJsonValue v = arguments.value(r.toString());
        if (v.isUndefined() || v.isNull())
            throw ValueError(
                QStringLiteral("%1: argument '%2' is required").arg(tool.name, r.toString()));
    }
    for (auto it = props.begin(); it != props.end(); ++it) {
        const QJsonValue v = arguments.value(it.key());
        if (v.isUndefined() || v.isNull())
            continue;
        const QJsonObject p = it.value().toObject();
        const QString type = p.value(QLatin1String("type")).toString();
        auto bad = [&](const QString &what) {
            return ValueError(
                QStringLiteral("%1: argument '%2' %3").arg(tool.name, it.key(), what));
        };
        const bool number = v.isDouble() && std::isfinite(v.toDouble());
        if (type == QLatin1String("string") && !v.isString())
            throw bad(QStringLiteral("must be a string"));
        if (type == QLatin1String("number") && !number)
            throw bad(QStringLiteral("must be a number"));
        if (type == QLatin1String("integer") &&
            (!number || v.toDouble() != std::floor(v.toDouble()) || std::abs(v.toDouble()) > 9e15))
            throw bad(QStringLiteral("must be an integer"));
        if (type == QLatin1String("boolean") && !v.isBool())
            throw bad(QStringLiteral("must be true or false"));
        if (type == QLatin1String("object") && !v.isObject())
            throw bad(QStringLiteral("must be an object"));
        if (type == QLatin1String("array") && !v.isArray())
            throw bad(QStringLiteral("must be an array"));
        const QJsonValue min = p.value(QLatin1String("minimum"));
        if (number && min.isDouble() && v.toDouble() < min.toDouble())
            throw bad(
                QStringLiteral("must be >= %1, got %2").arg(min.toDouble()).arg(v.toDouble()));
    }
}

QString sliceLines(const QString &text, qint64 offset, std::optional<qint64> limit)
{
    if (offset <= 0 && !limit)
        return text;
    qint64 line = 0;
    qsizetype pos = 0;
    while (pos < text.size() && line < offset) {
        const qsizetype nl = text.indexOf(QLatin1Char('\n'), pos);
        pos = nl < 0 ? text.size() : nl + 1;
        ++line;
    }
    qsizetype end = pos;
    for (qint64 n = 0; end < text.size() && (!limit || n < *limit); ++n) {
        const qsizetype nl = text.indexOf(QLatin1Char('\n'), end);
        end = nl < 0 ? text.size() : nl + 1;
    }
    return text.mid(pos, end - pos);
}

QJsonObject objectSchema(const QJsonObject &properties, const QStringList &required)
{
    QJsonObject schema{{QStringLiteral("type"), QStringLiteral("object")},
                       {QStringLiteral("properties"), properties},
                       {QStringLiteral("additionalProperties"), false}};
    if (!required.isEmpty())
        schema.insert(QStringLiteral("required"), QJsonArray::fromStringList(required));
    return schema;
}

namespace schema {

QJsonObject prop(const char *type, const QString &description)
{
    return {{QStringLiteral("type"), QLatin1String(type)},
            {QStringLiteral("description"), description}};
}

QJsonObject typed(const char *type)
{
    return {{QStringLiteral("type"), QLatin1String(type)}};
}

QJsonObject integer(const QString &description, qint64 minimum)
{
    return {{QStringLiteral("type"), QStringLiteral("integer")},
            {QStringLiteral("minimum"), minimum},
            {QStringLiteral("description"), description}};
}

QJsonObject result(const QJsonObject &properties, const QStringList &required)
{
    return {{QStringLiteral("type"), QStringLiteral("object")},
            {QStringLiteral("properties"), properties},
            {QStringLiteral("required"), QJsonArray::fromStringList(required)}};
}

} // namespace schema

} // namespace elsai
