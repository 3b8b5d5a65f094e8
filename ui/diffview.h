// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QPlainTextEdit>
#include <QTextCharFormat>

namespace elsai {

struct FileDiff;

/// The one diff view (the Changes panel, the flush preview): read-only, fixed font, no wrap,
/// unified-diff lines coloured by kind with palette-derived colours (tonecolors.h) that follow
/// a change of theme: additions on a green background, removals on red, hunk headers in blue,
/// file headers bold, prose (notes) in italics. A long diff is shown up to maxLines() with a
/// line saying how much was left out (the whole text would be highlighted on the GUI thread).
class DiffView : public QPlainTextEdit
{
    Q_OBJECT

public:
    enum class LineKind { Note, FileHeader, Hunk, Context, Added, Removed, NoNewline };

    explicit DiffView(QWidget *parent = nullptr);

    /// Shows a diff: its note, then its body.
    void setDiff(const FileDiff &diff);
    /// Shows a message instead of a diff (prose: reading…, nothing selected, a hint).
    void setMessage(const QString &text);

    static int maxLines() { return 20000; }
    /// How a line of the shown text is coloured.
    static LineKind lineKind(QStringView line);
    /// The format lines of `kind` get (tests compare it with what a block shows).
    QTextCharFormat lineFormat(LineKind kind) const;

protected:
    void changeEvent(QEvent *event) override;
    /// Added and removed lines are tinted across the whole width, not only under their text.
    void paintEvent(QPaintEvent *event) override;

private:
    class Highlighter;
    Highlighter *m_highlighter;
};

} // namespace elsai
