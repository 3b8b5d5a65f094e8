// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "diffview.h"

#include "filediff.h"
#include "tonecolors.h"

#include <QEvent>
#include <QFontDatabase>
#include <QPaintEvent>
#include <QPainter>
#include <QSyntaxHighlighter>
#include <QTextBlock>

namespace elsai {

class DiffView::Highlighter : public QSyntaxHighlighter
{
public:
    Highlighter(DiffView *view) : QSyntaxHighlighter(view->document()), m_view(view) {}

protected:
    void highlightBlock(const QString &text) override
    {
        // States: 0 before the first file header (prose), 1 inside the diff.
        int state = qMax(0, previousBlockState());
        if (text.startsWith(QLatin1String("--- ")))
            state = 1;
        setCurrentBlockState(state);
        const LineKind kind = state == 0 ? LineKind::Note : lineKind(text);
        setFormat(0, int(text.size()), m_view->lineFormat(kind));
    }

private:
    DiffView *m_view;
};

DiffView::DiffView(QWidget *parent) : QPlainTextEdit(parent)
{
    setReadOnly(true);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    setAccessibleName(tr("Diff"));
    m_highlighter = new Highlighter(this);
}

DiffView::LineKind DiffView::lineKind(QStringView line)
{
    if (line.startsWith(QLatin1String("--- ")) || line.startsWith(QLatin1String("+++ ")))
        return LineKind::FileHeader;
    if (line.startsWith(QLatin1String("@@")))
        return LineKind::Hunk;
    if (line.startsWith(QLatin1Char('+')))
        return LineKind::Added;
    if (line.startsWith(QLatin1Char('-')))
        return LineKind::Removed;
    if (line.startsWith(QLatin1Char(' ')))
        return LineKind::Context;
    if (line.startsWith(QLatin1Char('\\')))
        return LineKind::NoNewline;
    return LineKind::Note;
}

QTextCharFormat DiffView::lineFormat(LineKind kind) const
{
    QTextCharFormat f;
    const QPalette &p = palette();
    switch (kind) {
    case LineKind::Added:
        f.setBackground(toneBackground(p, Tone::Positive));
        break;
    case LineKind::Removed:
        f.setBackground(toneBackground(p, Tone::Negative));
        break;
    case LineKind::Hunk:
        f.setForeground(toneForeground(p, Tone::Active));
        break;
    case LineKind::FileHeader:
        f.setFontWeight(QFont::Bold);
        break;
    case LineKind::NoNewline:
    case LineKind::Note:
        f.setFontItalic(true);
        f.setForeground(p.color(QPalette::PlaceholderText));
        break;
    case LineKind::Context:
        break;
    }
    return f;
}

void DiffView::setDiff(const FileDiff &diff)
{
    QString text = diff.text();
    qsizetype cut = -1;
    qsizetype lines = 0;
    for (qsizetype i = text.indexOf(QLatin1Char('\n')); i >= 0;
         i = text.indexOf(QLatin1Char('\n'), i + 1)) {
        if (++lines == maxLines()) {
            cut = i + 1;
            break;
        }
    }
    if (cut > 0 && cut < text.size()) {
        const auto rest = text.mid(cut).count(QLatin1Char('\n'));
        text.truncate(cut);
        text += tr("… %n more line(s) of the diff not shown.", nullptr, int(rest));
    }
    setPlainText(text);
}

void DiffView::setMessage(const QString &text)
{
    setPlainText(text);
}

void DiffView::paintEvent(QPaintEvent *event)
{
    {
        QPainter painter(viewport());
        const QRect area = event->rect();
        const QColor added = lineFormat(LineKind::Added).background().color();
        const QColor removed = lineFormat(LineKind::Removed).background().color();
        const QPointF offset = contentOffset();
        for (QTextBlock block = firstVisibleBlock(); block.isValid(); block = block.next()) {
            const QRectF r = blockBoundingGeometry(block).translated(offset);
            if (r.top() > area.bottom())
                break;
            if (block.userState() != 1) // prose, not a diff line
                continue;
            const LineKind kind = lineKind(block.text());
            if (kind == LineKind::Added || kind == LineKind::Removed)
                painter.fillRect(QRectF(area.left(), r.top(), area.width(), r.height()),
                                 kind == LineKind::Added ? added : removed);
        }
    }
    QPlainTextEdit::paintEvent(event);
}

void DiffView::changeEvent(QEvent *event)
{
    QPlainTextEdit::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        m_highlighter->rehighlight(); // the colours derive from the palette
}

} // namespace elsai
