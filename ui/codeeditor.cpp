// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "codeeditor.h"

#include <QPainter>
#include <QTextBlock>

namespace elsai {

namespace {

QColor mix(const QColor &a, const QColor &b, double amount)
{
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * amount),
                            float(a.greenF() + (b.greenF() - a.greenF()) * amount),
                            float(a.blueF() + (b.blueF() - a.blueF()) * amount));
}

bool matches(const QString &selected, const QString &text, QTextDocument::FindFlags flags)
{
    return !text.isEmpty() &&
           selected.compare(text, flags.testFlag(QTextDocument::FindCaseSensitively)
                                      ? Qt::CaseSensitive
                                      : Qt::CaseInsensitive) == 0;
}

} // namespace

/// The gutter: paints through its editor, which knows the block geometry.
class LineNumberArea : public QWidget
{
public:
    explicit LineNumberArea(CodeEditor *editor) : QWidget(editor), m_editor(editor)
    {
        setObjectName(QStringLiteral("lineNumberArea"));
        setAccessibleName(CodeEditor::tr("Line numbers"));
    }
    QSize sizeHint() const override { return {m_editor->lineNumberAreaWidth(), 0}; }

protected:
    void paintEvent(QPaintEvent *event) override { m_editor->paintGutter(event); }

private:
    CodeEditor *m_editor;
};

CodeEditor::CodeEditor(QWidget *parent) : QPlainTextEdit(parent), m_gutter(new LineNumberArea(this))
{
    setObjectName(QStringLiteral("codeEditor"));
    setAccessibleName(tr("Editor"));
    setLineWrapMode(NoWrap);
    connect(this, &QPlainTextEdit::blockCountChanged, this, &CodeEditor::updateGutterWidth);
    connect(this, &QPlainTextEdit::updateRequest, this, &CodeEditor::updateGutter);
    connect(this, &QPlainTextEdit::cursorPositionChanged, this, &CodeEditor::highlightCurrentLine);
    updateGutterWidth();
    highlightCurrentLine();
}

int CodeEditor::lineNumberAreaWidth() const
{
    int digits = 1;
    for (int max = qMax(1, blockCount()); max >= 10; max /= 10)
        ++digits;
    // At least three digits wide, so the text does not jump while a short file grows.
    return 12 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * qMax(3, digits);
}

int CodeEditor::currentLine() const
{
    return textCursor().blockNumber() + 1;
}

QColor CodeEditor::currentLineColor() const
{
    return mix(palette().color(QPalette::Base), palette().color(QPalette::Highlight), 0.14);
}

void CodeEditor::updateGutterWidth()
{
    setViewportMargins(lineNumberAreaWidth(), 0, 0, 0);
}

void CodeEditor::updateGutter(const QRect &rect, int dy)
{
    if (dy)
        m_gutter->scroll(0, dy);
    else
        m_gutter->update(0, rect.y(), m_gutter->width(), rect.height());
    if (rect.contains(viewport()->rect()))
        updateGutterWidth();
}

void CodeEditor::resizeEvent(QResizeEvent *event)
{
    QPlainTextEdit::resizeEvent(event);
    const QRect cr = contentsRect();
    m_gutter->setGeometry(QRect(cr.left(), cr.top(), lineNumberAreaWidth(), cr.height()));
}

void CodeEditor::changeEvent(QEvent *event)
{
    QPlainTextEdit::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        highlightCurrentLine();
    else if (event->type() == QEvent::FontChange)
        updateGutterWidth();
}

void CodeEditor::highlightCurrentLine()
{
    QTextEdit::ExtraSelection line;
    line.format.setBackground(currentLineColor());
    line.format.setProperty(QTextFormat::FullWidthSelection, true);
    line.cursor = textCursor();
    line.cursor.clearSelection();
    setExtraSelections({line});
    m_gutter->update();
}

void CodeEditor::paintGutter(QPaintEvent *event)
{
    QPainter painter(m_gutter);
    const QPalette pal = palette();
    painter.fillRect(event->rect(),
                     mix(pal.color(QPalette::Base), pal.color(QPalette::Window), 0.6));
    const int current = textCursor().blockNumber();
    const QColor dim = pal.color(QPalette::PlaceholderText);
    const QColor bright = pal.color(QPalette::Text);
    QFont bold = font();
    bold.setBold(true);
    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    const int lineHeight = fontMetrics().height();
    while (block.isValid() && top <= event->rect().bottom()) {
        const int bottom = top + qRound(blockBoundingRect(block).height());
        if (block.isVisible() && bottom >= event->rect().top()) {
            const bool isCurrent = block.blockNumber() == current;
            painter.setPen(isCurrent ? bright : dim);
            painter.setFont(isCurrent ? bold : font());
            painter.drawText(0, top, m_gutter->width() - 6, lineHeight, Qt::AlignRight,
                             QString::number(block.blockNumber() + 1));
        }
        block = block.next();
        top = bottom;
    }
}

bool CodeEditor::find(const QString &text, QTextDocument::FindFlags flags)
{
    if (text.isEmpty())
        return false;
    QTextCursor found = document()->find(text, textCursor(), flags);
    if (found.isNull()) {
        // Wrap around: from the other end of the document.
        QTextCursor from(document());
        if (flags.testFlag(QTextDocument::FindBackward))
            from.movePosition(QTextCursor::End);
        found = document()->find(text, from, flags);
    }
    if (found.isNull())
        return false;
    setTextCursor(found);
    return true;
}

bool CodeEditor::replaceCurrent(const QString &text, const QString &replacement,
                                QTextDocument::FindFlags flags)
{
    if (isReadOnly())
        return false;
    QTextCursor cursor = textCursor();
    const bool replaced = cursor.hasSelection() && matches(cursor.selectedText(), text, flags);
    if (replaced) {
        cursor.insertText(replacement);
        setTextCursor(cursor);
    }
    find(text, flags & ~QTextDocument::FindBackward);
    return replaced;
}

int CodeEditor::replaceAll(const QString &text, const QString &replacement,
                           QTextDocument::FindFlags flags)
{
    if (text.isEmpty() || isReadOnly())
        return 0;
    flags &= ~QTextDocument::FindBackward;
    QTextCursor block(document());
    block.beginEditBlock(); // one undo step for all of them
    int count = 0;
    // Each replacement moves the search past itself: a replacement containing the text
    // cannot be matched again, so this ends after one pass over the document.
    for (QTextCursor c = document()->find(text, 0, flags); !c.isNull();
         c = document()->find(text, c, flags)) {
        c.insertText(replacement);
        ++count;
    }
    block.endEditBlock();
    return count;
}

int CodeEditor::countMatches(const QString &text, QTextDocument::FindFlags flags, int limit) const
{
    if (text.isEmpty())
        return 0;
    flags &= ~QTextDocument::FindBackward;
    int count = 0;
    for (QTextCursor c = document()->find(text, 0, flags); !c.isNull() && count < limit;
         c = document()->find(text, c, flags))
        ++count;
    return count;
}

void CodeEditor::goToLine(int line)
{
    const QTextBlock block = document()->findBlockByNumber(qBound(1, line, blockCount()) - 1);
    setTextCursor(QTextCursor(block));
    centerCursor();
    setFocus();
}

void CodeEditor::setWordWrap(bool wrap)
{
    setLineWrapMode(wrap ? WidgetWidth : NoWrap);
}

bool CodeEditor::wordWrap() const
{
    return lineWrapMode() != NoWrap;
}

} // namespace elsai
