// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QString>

namespace elsai {

/// The outcome of an exact-string edit of a file's bytes.
struct TextEdit
{
    QByteArray content; ///< the file after the edit
    int replacements = 0;
    QString diff; ///< unified diff (3 lines of context), `--- a/PATH` / `+++ b/PATH`
};

/// Replaces `oldText` by `newText` in `original` (byte-exact: nothing else of the file
/// changes, whatever its encoding or line ends). ValueError, naming `path` and what to do,
/// when `oldText` is empty, equal to `newText`, missing, or found more than once without
/// `replaceAll` (the message gives the lines of the first occurrences).
TextEdit applyExactEdit(const QString &path, const QByteArray &original, const QByteArray &oldText,
                        const QByteArray &newText, bool replaceAll);

/// Diffs longer than this many characters are cut with a note (the edit itself is whole).
constexpr qsizetype MaxDiffChars = 100000;

} // namespace elsai
