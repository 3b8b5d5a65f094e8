// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>

class QTextDocument;
class QObject;

namespace elsai {

/// Attaches a syntax highlighter for `fileName` to `document` (parented to it): the
/// KSyntaxHighlighting definition for the file with a theme matching the palette (light or
/// dark) when built with KF6SyntaxHighlighting, else the built-in highlighter (keywords,
/// strings, comments, numbers for common languages). Returns the name of what was used
/// ("ksyntaxhighlighting:<definition>:<theme>", "builtin:<language>", or "none").
QString attachHighlighter(QTextDocument *document, const QString &fileName, bool darkPalette);

/// The built-in highlighter alone (the fallback of attachHighlighter): "builtin:<language>"
/// or "none".
QString attachBuiltinHighlighter(QTextDocument *document, const QString &fileName,
                                 bool darkPalette);

/// True when built with KF6SyntaxHighlighting.
bool hasKSyntaxHighlighting();

} // namespace elsai
