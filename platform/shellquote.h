// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QString>

namespace elsai::remote {

/// `'text'`, each `'` written as `'\''`: one word for any POSIX shell, whatever `text` holds
/// (spaces, `$`, backquotes, newlines). The one quoting function of every script the
/// workbench sends to a remote shell (SSH, Daytona, AgentCore, containers).
QString shellQuote(const QString &text);
QByteArray shellQuote(const QByteArray &text);
inline QByteArray shellQuote(const char *text)
{
    return shellQuote(QByteArray(text));
}

} // namespace elsai::remote
