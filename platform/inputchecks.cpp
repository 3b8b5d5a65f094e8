// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "inputchecks.h"

#include "errors.h"

#include <QRegularExpression>

#include <limits>

namespace elsai {

namespace {

// Names and values can be long; keep messages readable.
QString shown(const QString &text)
{
    constexpr qsizetype maxChars = 80;
    QString s = text.size() <= maxChars ? text : text.left(maxChars) + QStringLiteral("...");
    s.replace(QChar(u'\0'), QStringLiteral("\\0"));
    return s;
}

} // namespace

void checkNoNul(const QString &text, const QString &what)
{
    const qsizetype at = text.indexOf(QChar(u'\0'));
    if (at >= 0) {
        throw ValueError(QStringLiteral("the %1 contains a NUL character (at position %2); NUL "
                                        "cannot be passed on and would cut the text short")
                             .arg(what)
                             .arg(at));
    }
}

qsizetype firstControlCharacter(const QString &text)
{
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char16_t c = text.at(i).unicode();
        if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
            return i;
    }
    return -1;
}

void checkName(const QString &name, const QString &what)
{
    if (name.isEmpty())
        throw ValueError(QStringLiteral("the %1 is empty; type a name").arg(what));
    const qsizetype at = firstControlCharacter(name);
    if (at < 0)
        return;
    const char16_t c = name.at(at).unicode();
    QString shown = QStringLiteral("U+%1").arg(int(c), 4, 16, QLatin1Char('0'));
    if (c == u'\n')
        shown = QStringLiteral("a newline");
    else if (c == u'\t')
        shown = QStringLiteral("a tab");
    else if (c == 0)
        shown = QStringLiteral("a NUL");
    throw ValueError(QStringLiteral("the %1 contains a control character (%2 at position %3); "
                                    "names may not hold newlines, tabs or other control "
                                    "characters — remove it")
                         .arg(what, shown)
                         .arg(at + 1));
}

void checkCommandText(const QString &command)
{
    // UTF-8 is at most 3 bytes per UTF-16 unit: count exactly only when it could matter.
    if (command.size() * 3 > MaxCommandBytes) {
        const qsizetype bytes = command.toUtf8().size();
        if (bytes > MaxCommandBytes) {
            throw ValueError(QStringLiteral("the command is %1 bytes; commands are limited to "
                                            "%2 bytes (write a script with write_file and run "
                                            "that)")
                                 .arg(bytes)
                                 .arg(MaxCommandBytes));
        }
    }
    checkNoNul(command, QStringLiteral("command"));
}

void checkCommandFits(const QString &command, qsizetype maxBytes, const QString &backend)
{
    if (command.size() * 3 <= maxBytes)
        return;
    const qsizetype bytes = command.toUtf8().size();
    if (bytes > maxBytes) {
        throw ValueError(QStringLiteral("the command is %1 bytes; the %2 takes at most %3 in one "
                                        "command (write a script with write_file and run that)")
                             .arg(bytes)
                             .arg(backend)
                             .arg(maxBytes));
    }
}

bool isValidEnvName(const QString &name)
{
    if (name.isEmpty())
        return false;
    for (qsizetype i = 0; i < name.size(); ++i) {
        const char16_t c = name.at(i).unicode();
        const bool letter = (c >= u'A' && c <= u'Z') || (c >= u'a' && c <= u'z') || c == u'_';
        const bool digit = c >= u'0' && c <= u'9';
        if (!(letter || (digit && i > 0)))
            return false;
    }
    return true;
}

void checkEnvironment(const QMap<QString, QString> &env)
{
    for (auto it = env.cbegin(); it != env.cend(); ++it) {
        if (!isValidEnvName(it.key())) {
            throw ValueError(QStringLiteral("invalid environment variable name '%1'; names are "
                                            "letters, digits and '_', not starting with a digit")
                                 .arg(shown(it.key())));
        }
        checkNoNul(it.value(), QStringLiteral("value of environment variable %1").arg(it.key()));
    }
}

void checkExecuteInput(const QString &command, const QString &cwd,
                       const QMap<QString, QString> &env)
{
    checkCommandText(command);
    checkNoNul(cwd, QStringLiteral("cwd"));
    checkEnvironment(env);
}

qint64 parseByteSize(const QString &option, const QString &value)
{
    static const QRegularExpression re(QStringLiteral("^(\\d{1,18})([KMG]?)$"),
                                       QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = re.match(value.trimmed());
    if (!m.hasMatch())
        throw ValueError(QStringLiteral("--%1 needs a size in bytes, or with a K, M or G suffix "
                                        "(0 = unlimited), got '%2'")
                             .arg(option, value));
    const QChar unit = m.captured(2).isEmpty() ? QChar() : m.captured(2).at(0).toUpper();
    const int shift = unit == QLatin1Char('K')   ? 10
                      : unit == QLatin1Char('M') ? 20
                      : unit == QLatin1Char('G') ? 30
                                                 : 0;
    const qint64 n = m.captured(1).toLongLong(); // 18 digits fit a qint64
    if (n > (std::numeric_limits<qint64>::max() >> shift))
        throw ValueError(QStringLiteral("--%1: '%2' is too large").arg(option, value));
    return n << shift;
}

} // namespace elsai
