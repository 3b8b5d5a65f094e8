// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "consoleblock.h"

#include <QAbstractTextDocumentLayout>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextDocument>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

namespace elsai {

namespace {

// Output kinds, and notes: on their own line, or inline (a cut line's marker).
enum TextKind { StdoutText, StderrText, NoteText, InlineNoteText };

bool isDark(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128;
}

// Accents readable on both palettes: saturated and darker on light bases, lighter on dark.
QColor accent(const QPalette &palette, int kind)
{
    const bool dark = isDark(palette);
    switch (kind) {
    case NoteText:
    case InlineNoteText:
        return dark ? QColor(0x79, 0xb8, 0xff) : QColor(0x00, 0x4f, 0xb0);
    case StderrText:
        return dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xb3, 0x1d, 0x1d);
    }
    return palette.color(QPalette::Text);
}

QString bytesText(qint64 bytes)
{
    return ConsoleBlock::tr("%1 bytes").arg(QLocale::system().toString(bytes));
}

QString cutMarker()
{
    return ConsoleBlock::tr(" … [line cut]");
}

} // namespace

ConsoleBlock::ConsoleBlock(quint64 id, ConsoleHistoryModel *model, QWidget *parent)
    : QFrame(parent), m_id(id), m_model(model), m_header(new QLabel(this)),
      m_where(new QLabel(this)), m_output(new QPlainTextEdit(this)), m_status(new QLabel(this)),
      m_cancel(new QPushButton(tr("Cancel"), this)),
      m_save(new QPushButton(tr("Save output…"), this)), m_drainTimer(new QTimer(this))
{
    setFrameShape(QFrame::StyledPanel);
    setObjectName(QStringLiteral("consoleBlock"));
    // A zero timer: the next slice goes in once the events queued meanwhile have run.
    m_drainTimer->setSingleShot(true);
    m_drainTimer->setInterval(0);
    connect(m_drainTimer, &QTimer::timeout, this, &ConsoleBlock::drainPending);
    const QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    QFont bold = fixed;
    bold.setBold(true);
    m_header->setFont(bold);
    m_header->setTextFormat(Qt::PlainText);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_header->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_where->setTextFormat(Qt::PlainText);
    m_where->setForegroundRole(QPalette::PlaceholderText);
    m_output->setReadOnly(true);
    m_output->setMaximumBlockCount(maxBlockCount());
    m_output->setFont(fixed);
    m_output->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_output->setUndoRedoEnabled(false);
    m_output->setFocusPolicy(Qt::ClickFocus);
    m_output->hide();
    m_status->setTextFormat(Qt::PlainText);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long status (bytes dropped, truncated at the cap) wraps rather than widening every block
    // past a narrow console and cutting its buttons.
    m_status->setWordWrap(true);
    m_save->setEnabled(false);

    auto *top = new QHBoxLayout;
    top->addWidget(m_header, 1);
    top->addWidget(m_where);
    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_status, 1);
    bottom->addWidget(m_cancel);
    bottom->addWidget(m_save);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->setSpacing(2);
    layout->addLayout(top);
    layout->addWidget(m_output);
    layout->addLayout(bottom);

    connect(m_cancel, &QPushButton::clicked, this, [this] { Q_EMIT cancelRequested(m_id); });
    connect(m_save, &QPushButton::clicked, this, [this] { Q_EMIT saveRequested(m_id); });
}

ConsoleBlock::~ConsoleBlock() = default;

void ConsoleBlock::changeEvent(QEvent *event)
{
    // Accents depend on the palette: redraw the kept output in the new colours.
    if (event->type() == QEvent::PaletteChange && m_model) {
        const int row = m_model->rowOf(m_id);
        if (row >= 0)
            redraw(m_model->entry(row));
    }
    QFrame::changeEvent(event);
}

QString ConsoleBlock::statusText(const ConsoleHistoryModel::Entry &e)
{
    if (e.running) {
        return e.receivedBytes > 0 ? tr("running… · %1 so far").arg(bytesText(e.receivedBytes))
                                   : tr("running…");
    }
    if (!e.result)
        return tr("failed to run");
    const ExecuteResult &r = *e.result;
    QStringList parts{tr("exit %1").arg(r.exitCode), tr("%1 ms").arg(r.durationMs),
                      bytesText(e.receivedBytes)};
    if (e.droppedBytes > 0)
        parts << tr("%1 dropped in the middle").arg(bytesText(e.droppedBytes));
    if (r.truncated)
        parts << tr("truncated at the sandbox's output cap");
    if (r.timedOut)
        parts << tr("timed out");
    if (r.cancelled)
        parts << tr("cancelled");
    return parts.join(QStringLiteral(" · "));
}

void ConsoleBlock::reset()
{
    if (m_output->document()->blockCount() > maxLinesPerPass()) {
        // Clearing a full view stalls the GUI thread: a fresh document, the old one deleted
        // in a later pass.
        QTextDocument *old = m_output->document();
        auto *doc = new QTextDocument(m_output);
        doc->setDocumentLayout(new QPlainTextDocumentLayout(doc));
        doc->setDefaultFont(old->defaultFont());
        doc->setMaximumBlockCount(old->maximumBlockCount());
        doc->setUndoRedoEnabled(false);
        old->setParent(nullptr); // setDocument() would delete a document it owns at once
        m_output->setDocument(doc);
        old->deleteLater();
    }
    m_output->clear();
    m_pending.clear();
    m_pendingLines = 0;
    m_pendingDropped = 0;
    m_drainTimer->stop();
    m_atLineStart = true;
    m_lineLength = 0;
    m_lineClipped = false;
    m_shownUpTo = 0;
    m_done = false;
    m_headLinesLeft = -1;
    m_headLinesHidden = 0;
    m_liveGap = false;
    m_outDecoder.resetState();
    m_errDecoder.resetState();
}

void ConsoleBlock::redraw(const ConsoleHistoryModel::Entry &e)
{
    reset();
    // The head gets half the view, so the tail after the gap stays visible too.
    if (e.droppedBytes > 0)
        m_headLinesLeft = maxBlockCount() / 2 - 8; // room for the notes
    update(e);
}

void ConsoleBlock::update(const ConsoleHistoryModel::Entry &e)
{
    if (!m_headerSet) {
        m_headerSet = true;
        m_header->setText(QStringLiteral("$ %1").arg(e.command));
        m_header->setToolTip(e.command);
        const QString cwd = e.cwd.isEmpty() ? QStringLiteral(".") : e.cwd;
        QStringList where{tr("in %1").arg(cwd)};
        if (!e.agent.isEmpty())
            where << tr("as %1").arg(e.agent);
        where << e.startedAt.toString(QStringLiteral("hh:mm:ss"));
        m_where->setText(where.join(QStringLiteral(" · ")));
        const QString name = e.command.left(80);
        setAccessibleName(tr("Command %1").arg(name));
        m_header->setAccessibleName(tr("Command"));
        m_where->setAccessibleName(tr("Working folder and agent"));
        m_output->setAccessibleName(tr("Output of %1").arg(name));
        m_status->setAccessibleName(tr("Status of %1").arg(name));
        m_cancel->setAccessibleName(tr("Cancel %1").arg(name));
        m_save->setAccessibleName(tr("Save the output of %1 to a file").arg(name));
    }
    const bool settle = m_headLinesLeft >= 0;
    if (!e.running && !m_done && e.droppedBytes > 0 && !settle) {
        // Gaps opened while streaming, and the view kept its own last lines: draw it again
        // from what the model kept, with one gap line, in a pass of its own (dropping a
        // full view already costs one).
        m_done = true;
        m_running = false;
        m_redrawQueued = true;
        QMetaObject::invokeMethod(
            this,
            [this] {
                m_redrawQueued = false;
                const int row = m_model ? m_model->rowOf(m_id) : -1;
                if (row >= 0)
                    redraw(m_model->entry(row));
            },
            Qt::QueuedConnection);
        updateStatus(e);
        return;
    }
    showBytes(e.head, 0, settle);
    if (m_headLinesHidden > 0) {
        appendText(tr("[… %1 more lines of the head not shown]\n").arg(m_headLinesHidden),
                   NoteText);
        m_headLinesHidden = 0;
    }
    m_headLinesLeft = -1;
    if (e.running && e.droppedBytes > 0 && m_shownUpTo < e.tailStart && !settle) {
        // A flood: more arrived within one pass than the console keeps. Following its tail
        // would cost the GUI thread the whole stream; the block is drawn when it ends.
        if (!m_liveGap) {
            m_liveGap = true;
            if (!m_atLineStart)
                appendText(cutMarker(), InlineNoteText);
            appendText(tr("[… more output than the console keeps: its head and tail show when "
                          "the command ends …]\n"),
                       NoteText);
        }
    } else if (e.droppedBytes > 0 && m_shownUpTo < e.tailStart) {
        if (!m_atLineStart)
            appendText(cutMarker(), InlineNoteText);
        // The console keeps an output's head and tail; the whole stays for saving.
        appendText((e.hasFullOutput
                        ? tr("[… %1 not shown here; Save output… writes all of it …]\n")
                        : tr("[… %1 dropped here: the console keeps an output's head and "
                             "tail …]\n"))
                       .arg(bytesText(e.tailStart - m_shownUpTo)),
                   NoteText);
        m_shownUpTo = e.tailStart;
        m_outDecoder.resetState();
        m_errDecoder.resetState();
        if (e.tailStartsMidLine && !e.tail.isEmpty())
            appendText(QStringLiteral("… "), InlineNoteText);
    }
    if (settle && m_shownUpTo == e.tailStart && !e.tail.isEmpty()) {
        // Only the tail's last lines fit beside the head: start at a line start.
        const qsizetype keep = maxBlockCount() / 2 - 8;
        qsizetype lines = 0;
        for (const ConsoleHistoryModel::Piece &p : e.tail)
            lines += QByteArrayView(p.data).count('\n');
        if (lines > keep) {
            appendText(tr("[… %1 lines of the tail not shown]\n").arg(lines - keep), NoteText);
            // Start after the (keep + 1)-th newline from the end: searched backwards.
            qsizetype left = keep + 1;
            qint64 end = e.tailStart + e.tailBytes;
            for (auto it = e.tail.crbegin(); it != e.tail.crend() && left > 0; ++it) {
                const QByteArrayView data(it->data);
                end -= data.size();
                qsizetype pos = data.size();
                while (left > 0 && pos > 0 && (pos = data.lastIndexOf('\n', pos - 1)) >= 0)
                    --left;
                if (left == 0)
                    m_shownUpTo = end + pos + 1;
            }
        }
    }
    if (!m_liveGap)
        showBytes(e.tail, e.tailStart, false);
    m_running = e.running;
    if (!e.running && !m_done) {
        m_done = true;
        if (e.result && e.result->truncated) {
            if (!m_atLineStart)
                appendText(cutMarker(), InlineNoteText);
            appendText(tr("[output cut at the sandbox's output cap; the rest was not kept]\n"),
                       NoteText);
        }
        if (!e.failure.isEmpty())
            appendText(e.failure + QLatin1Char('\n'), StderrText);
    }
    updateStatus(e);
}

void ConsoleBlock::updateStatus(const ConsoleHistoryModel::Entry &e)
{
    m_status->setText(statusText(e));
    QPalette p = m_status->palette();
    const bool failed = !e.running && (!e.result || e.result->exitCode != 0);
    p.setColor(QPalette::WindowText,
               failed ? accent(palette(), StderrText) : palette().color(QPalette::WindowText));
    m_status->setPalette(p);
    m_cancel->setVisible(e.running);
    m_save->setEnabled(!e.running);
}

void ConsoleBlock::showBytes(const QList<ConsoleHistoryModel::Piece> &pieces, qint64 start,
                             bool settled)
{
    qint64 offset = start;
    for (const ConsoleHistoryModel::Piece &p : pieces) {
        const qint64 end = offset + p.data.size();
        if (m_shownUpTo >= offset && m_shownUpTo < end) {
            const bool out = p.channel == OutputChannel::Stdout;
            QStringDecoder &decoder = out ? m_outDecoder : m_errDecoder;
            QByteArrayView bytes = QByteArrayView(p.data).sliced(m_shownUpTo - offset);
            m_shownUpTo = end;
            if (settled && m_headLinesLeft >= 0) {
                // The head's first lines only (found in the bytes, before decoding); the rest
                // is counted.
                qsizetype cut = 0;
                if (m_headLinesLeft > 0) {
                    qsizetype pos = -1, n = 0;
                    while (n < m_headLinesLeft && (pos = bytes.indexOf('\n', pos + 1)) >= 0)
                        ++n;
                    cut = n == m_headLinesLeft ? pos + 1 : bytes.size();
                    m_headLinesLeft -= n;
                }
                if (cut < bytes.size()) {
                    m_headLinesHidden += bytes.sliced(cut).count('\n');
                    bytes = bytes.first(cut);
                }
            }
            if (!settled && bytes.size() > maxBlockCount()) {
                // Only the last maxBlockCount() lines can stay in the view: find them in the
                // bytes, so a flood's update is not decoded and clipped whole.
                qsizetype left = maxBlockCount() + 1, pos = bytes.size();
                while (left > 0 && pos > 0 && (pos = bytes.lastIndexOf('\n', pos - 1)) >= 0)
                    --left;
                if (left == 0) {
                    const qsizetype skipped = bytes.first(pos + 1).count('\n');
                    bytes = bytes.sliced(pos + 1);
                    decoder.resetState();
                    appendText(tr("[… %1 lines not shown]\n").arg(skipped), NoteText);
                }
            }
            const QByteArray shortened = dropUnseenLineBytes(bytes);
            appendText(decoder.decode(shortened.isNull() ? bytes : QByteArrayView(shortened)),
                       out ? StdoutText : StderrText);
        }
        offset = end;
    }
}

QByteArray ConsoleBlock::dropUnseenLineBytes(QByteArrayView bytes) const
{
    // The view shows maxLineLength() characters of a line, at most 4 bytes each: the bytes
    // past that are never decoded (a one-line flood is megabytes). Null: nothing to drop.
    const qsizetype limit = 4 * qsizetype(maxLineLength());
    if (bytes.size() <= limit)
        return {};
    QByteArray out;
    qsizetype room = m_lineClipped ? 0 : limit;
    for (qsizetype i = 0; i < bytes.size();) {
        qsizetype nl = bytes.indexOf('\n', i);
        const qsizetype end = nl < 0 ? bytes.size() : nl;
        out += bytes.sliced(i, qMin(end - i, room));
        if (nl < 0)
            break;
        out += '\n';
        room = limit;
        i = nl + 1;
    }
    return out.size() == bytes.size() ? QByteArray() : out;
}

QString ConsoleBlock::clipLines(const QString &text, qsizetype keepLast)
{
    // Only the last maxBlockCount() lines can stay in the view anyway: inserting more and
    // letting the document trim them one by one stalls the GUI thread for seconds.
    QString out;
    qsizetype start = 0;
    const qsizetype lines = text.count(QLatin1Char('\n'));
    if (lines > keepLast) {
        const qsizetype skip = lines - keepLast;
        qsizetype pos = -1;
        for (qsizetype n = 0; n < skip; ++n)
            pos = text.indexOf(QLatin1Char('\n'), pos + 1);
        start = pos + 1;
        out += tr("[… %1 lines not shown]\n").arg(skip);
        m_lineLength = 0;
        m_lineClipped = false;
    }
    for (qsizetype i = start; i < text.size();) {
        const qsizetype nl = text.indexOf(QLatin1Char('\n'), i);
        const qsizetype end = nl < 0 ? text.size() : nl;
        const qsizetype room = qMax<qsizetype>(0, maxLineLength() - m_lineLength);
        if (end - i <= room) {
            out += QStringView(text).sliced(i, end - i);
            m_lineLength += end - i;
        } else {
            out += QStringView(text).sliced(i, room);
            m_lineLength += room;
            if (!m_lineClipped) {
                out += cutMarker();
                m_lineClipped = true;
            }
        }
        if (nl < 0)
            break;
        out += QLatin1Char('\n');
        m_lineLength = 0;
        m_lineClipped = false;
        i = nl + 1;
    }
    return out;
}

void ConsoleBlock::appendText(const QString &rawText, int kind)
{
    if (rawText.isEmpty())
        return;
    QString text;
    if (kind == StdoutText || kind == StderrText) {
        text = clipLines(rawText, maxBlockCount());
    } else {
        text = rawText;
        if (kind == NoteText) {
            m_lineLength = 0;
            m_lineClipped = false;
            // Notes start on their own line even after output without '\n'.
            if (!m_atLineStart)
                text.prepend(QLatin1Char('\n'));
        }
    }
    enqueue(text, kind);
    // Insert at once what one pass may; a slice already scheduled keeps the order.
    if (!m_drainTimer->isActive())
        drainPending();
}

void ConsoleBlock::enqueue(const QString &text, int kind)
{
    if (text.isEmpty())
        return;
    m_atLineStart = text.endsWith(QLatin1Char('\n'));
    if (!m_pending.isEmpty() && m_pending.last().kind == kind)
        m_pending.last().text += text;
    else
        m_pending.append({text, kind});
    m_pendingLines += text.count(QLatin1Char('\n'));
    // Lines beyond the view's cap would be trimmed right after insertion: drop them here.
    while (m_pendingLines > maxBlockCount()) {
        Pending &front = m_pending.first();
        const qsizetype frontLines = front.text.count(QLatin1Char('\n'));
        const qsizetype excess = m_pendingLines - maxBlockCount();
        if (frontLines <= excess) {
            m_pendingLines -= frontLines;
            m_pendingDropped += frontLines + (front.text.endsWith(QLatin1Char('\n')) ? 0 : 1);
            m_pending.removeFirst();
            continue;
        }
        qsizetype pos = -1;
        for (qsizetype n = 0; n < excess; ++n)
            pos = front.text.indexOf(QLatin1Char('\n'), pos + 1);
        front.text.remove(0, pos + 1);
        m_pendingLines -= excess;
        m_pendingDropped += excess;
    }
}

void ConsoleBlock::drainPending()
{
    if (m_pending.isEmpty() && m_pendingDropped == 0)
        return;
    QScrollBar *bar = m_output->verticalScrollBar();
    const bool follow = bar->value() >= bar->maximum() - 2;
    QTextCursor cursor(m_output->document());
    cursor.movePosition(QTextCursor::End);
    if (m_pendingDropped > 0) {
        QTextCharFormat note;
        note.setForeground(accent(palette(), NoteText));
        const bool lineStart = cursor.block().text().isEmpty();
        cursor.insertText(tr("%1[… %2 lines not shown]\n")
                              .arg(lineStart ? QString() : QStringLiteral("\n"))
                              .arg(m_pendingDropped),
                          note);
        m_pendingDropped = 0;
    }
    qsizetype chars = 0, lines = 0;
    while (!m_pending.isEmpty() && chars < maxCharsPerPass() && lines < maxLinesPerPass()) {
        Pending &front = m_pending.first();
        // The slice ends after the last newline that fits in the budget, else at the budget.
        const qsizetype room = qMin<qsizetype>(maxCharsPerPass() - chars, front.text.size());
        qsizetype cut = 0, sliceLines = 0;
        for (qsizetype nl = front.text.indexOf(QLatin1Char('\n'));
             nl >= 0 && nl < room && lines + sliceLines < maxLinesPerPass();
             nl = front.text.indexOf(QLatin1Char('\n'), nl + 1)) {
            cut = nl + 1;
            ++sliceLines;
        }
        if (cut == 0 || (room == front.text.size() && lines + sliceLines < maxLinesPerPass()))
            cut = room;
        if (cut < front.text.size() && front.text.at(cut).isLowSurrogate())
            --cut; // never split a surrogate pair
        if (cut <= 0)
            break;
        const QStringView slice = QStringView(front.text).first(cut);
        const qsizetype slicedLines = slice.count(QLatin1Char('\n'));
        QTextCharFormat format;
        format.setForeground(accent(palette(), front.kind));
        cursor.insertText(slice.toString(), format);
        chars += cut;
        lines += slicedLines;
        m_pendingLines -= slicedLines;
        if (cut == front.text.size())
            m_pending.removeFirst();
        else
            front.text.remove(0, cut);
    }
    fitHeight();
    if (follow)
        bar->setValue(bar->maximum());
    if (!m_pending.isEmpty())
        m_drainTimer->start();
}

void ConsoleBlock::fitHeight()
{
    const QTextDocument *doc = m_output->document();
    // The view scrolls by blocks, the empty one after a final newline included.
    const int lines = doc->blockCount();
    if (doc->isEmpty()) {
        m_output->hide();
        return;
    }
    const int shown = qMin(lines, maxVisibleLines());
    // One unwrapped line's height as the document lays it out (font leading included).
    const qreal lineHeight =
        qMax<qreal>(m_output->fontMetrics().lineSpacing(),
                    doc->documentLayout()->blockBoundingRect(doc->firstBlock()).height());
    const int height = int(std::ceil(shown * lineHeight + 2 * doc->documentMargin())) +
                       2 * m_output->frameWidth() + 2;
    if (m_output->height() != height || !m_output->isVisible()) {
        m_output->setFixedHeight(height);
        m_output->show();
    }
}

} // namespace elsai
