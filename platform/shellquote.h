// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QString>

namespace elsai {

/// `'text'`, each `'` written as `'\''`: one word for any POSIX shell, whatever `text` holds
/// (spaces, `$`, backquotes, newlines). The one quoting function of every script the
/// workbench sends to a shell (SSH, Daytona, AgentCore, containers) and of every command line
/// it shows.
QString shellQuote(const QString &text);
QByteArray shellQuote(const QByteArray &text);
inline QByteArray shellQuote(const char *text)
{
    return shellQuote(QByteArray(text));
}

/// `text` bare when no shell reads anything into it (letters, digits, `_./:=@%+-`), else
/// shellQuote(text): for command lines people read and copy.
QString shellWord(const QString &text);

} // namespace elsai
