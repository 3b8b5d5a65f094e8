// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QPlainTextEdit>
#include <QTextDocument>

namespace elsai {

/// The text editor of a file tab: a QPlainTextEdit with a line-number gutter, the current
/// line highlighted, plain-text find (wrapping around the end), replace and go to line.
/// Colours follow the palette, so a light/dark switch needs nothing more than a repaint.
class CodeEditor : public QPlainTextEdit
{
    Q_OBJECT

public:
    explicit CodeEditor(QWidget *parent = nullptr);

    /// The gutter (line numbers), a child widget left of the viewport.
    QWidget *lineNumberArea() const { return m_gutter; }
    int lineNumberAreaWidth() const;
    /// 1-based line of the cursor.
    int currentLine() const;
    /// The colour behind the cursor's line.
    QColor currentLineColor() const;

    /// Selects the next match of `text` after the cursor (before it with FindBackward),
    /// continuing from the other end of the document; false when there is none at all.
    bool find(const QString &text, QTextDocument::FindFlags flags = {});
    using QPlainTextEdit::find;
    /// Replaces the selection with `replacement` when it is a match of `text`, then selects
    /// the next match. Returns true when it replaced.
    bool replaceCurrent(const QString &text, const QString &replacement,
                        QTextDocument::FindFlags flags = {});
    /// Replaces every match (one undo step); returns how many.
    int replaceAll(const QString &text, const QString &replacement,
                   QTextDocument::FindFlags flags = {});
    /// Matches of `text` in the document, counted up to `limit`.
    int countMatches(const QString &text, QTextDocument::FindFlags flags = {},
                     int limit = 10000) const;
    /// Puts the cursor at the start of `line` (1-based, clamped) and centres it.
    void goToLine(int line);

    void setWordWrap(bool wrap);
    bool wordWrap() const;

protected:
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    friend class LineNumberArea;
    void paintGutter(QPaintEvent *event);
    void updateGutterWidth();
    void updateGutter(const QRect &rect, int dy);
    void highlightCurrentLine();

    QWidget *m_gutter;
};

} // namespace elsai
