// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "shellquote.h"

#include <QRegularExpression>

namespace elsai {

QString shellQuote(const QString &text)
{
    QString out;
    out.reserve(text.size() + 2);
    out += QLatin1Char('\'');
    for (const QChar c : text) {
        if (c == QLatin1Char('\''))
            out += QLatin1String("'\\''");
        else
            out += c;
    }
    out += QLatin1Char('\'');
    return out;
}

QByteArray shellQuote(const QByteArray &text)
{
    QByteArray out;
    out.reserve(text.size() + 2);
    out += '\'';
    for (const char c : text) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += '\'';
    return out;
}

QString shellWord(const QString &text)
{
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_./:=@%+-]+$"));
    return safe.match(text).hasMatch() ? text : shellQuote(text);
}

} // namespace elsai
