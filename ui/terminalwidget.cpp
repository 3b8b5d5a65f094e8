// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "terminalwidget.h"

#include "ptysession.h"

#include <QAccessible>
#include <QAccessibleWidget>
#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>
#include <QSettings>
#include <QStyle>

#include <algorithm>
#include <cmath>

namespace elsai {

namespace {

constexpr int FrameMs = 16; // at most one repaint per frame
constexpr int BlinkMs = 530;
constexpr int WheelLines = 3;

QSettings terminalSettings()
{
    return QSettings(QStringLiteral("elsai"), QStringLiteral("workbench"));
}

bool isWordChar(const QString &text, int i)
{
    if (i < 0 || i >= text.size())
        return false;
    const QChar c = text.at(i);
    return c.isLetterOrNumber() || QStringLiteral("_-./~:@%+=").contains(c);
}

/// The terminal as accessibility sees it: a Terminal whose text is the visible screen.
class TerminalAccessible : public QAccessibleWidget, public QAccessibleTextInterface
{
public:
    explicit TerminalAccessible(TerminalWidget *w) : QAccessibleWidget(w, QAccessible::Terminal) {}
    TerminalWidget *terminal() const { return static_cast<TerminalWidget *>(widget()); }

    void *interface_cast(QAccessible::InterfaceType t) override
    {
        if (t == QAccessible::TextInterface)
            return static_cast<QAccessibleTextInterface *>(this);
        return QAccessibleWidget::interface_cast(t);
    }
    QString text(QAccessible::Text t) const override
    {
        if (t == QAccessible::Value)
            return terminal()->visibleText();
        return QAccessibleWidget::text(t);
    }

    // QAccessibleTextInterface
    void selection(int, int *startOffset, int *endOffset) const override
    {
        *startOffset = *endOffset = 0;
    }
    int selectionCount() const override { return 0; }
    void addSelection(int, int) override {}
    void removeSelection(int) override {}
    void setSelection(int, int, int) override {}
    int cursorPosition() const override
    {
        const TerminalScreen *s = terminal()->screen();
        const QString all = terminal()->visibleText();
        const QStringList rows = all.split(QLatin1Char('\n'));
        const int viewRow = s->cursor().y() + (s->scrollbackLines() - terminal()->topLine());
        int offset = 0;
        for (int r = 0; r < viewRow && r < rows.size(); ++r)
            offset += int(rows[r].size()) + 1;
        return std::min(offset + s->cursor().x(), int(all.size()));
    }
    void setCursorPosition(int) override {}
    QString text(int startOffset, int endOffset) const override
    {
        const QString all = terminal()->visibleText();
        startOffset = std::clamp(startOffset, 0, int(all.size()));
        endOffset = endOffset < 0 ? int(all.size()) : std::clamp(endOffset, 0, int(all.size()));
        return all.mid(startOffset, std::max(0, endOffset - startOffset));
    }
    int characterCount() const override { return int(terminal()->visibleText().size()); }
    QRect characterRect(int offset) const override
    {
        const QStringList rows = terminal()->visibleText().split(QLatin1Char('\n'));
        int row = 0;
        while (row < rows.size() && offset > rows[row].size()) {
            offset -= int(rows[row].size()) + 1;
            ++row;
        }
        const QSizeF cell = terminal()->cellSize();
        const QRect local(int(offset * cell.width()), int(row * cell.height()),
                          int(std::ceil(cell.width())), int(std::ceil(cell.height())));
        return QRect(terminal()->mapToGlobal(local.topLeft()), local.size());
    }
    int offsetAtPoint(const QPoint &point) const override
    {
        const QPoint local = terminal()->mapFromGlobal(point);
        const QSizeF cell = terminal()->cellSize();
        const int row = int(local.y() / cell.height());
        const int col = int(local.x() / cell.width());
        const QStringList rows = terminal()->visibleText().split(QLatin1Char('\n'));
        if (row < 0 || row >= rows.size())
            return -1;
        int offset = 0;
        for (int r = 0; r < row; ++r)
            offset += int(rows[r].size()) + 1;
        return offset + std::clamp(col, 0, int(rows[row].size()));
    }
    void scrollToSubstring(int, int) override {}
    QString attributes(int offset, int *startOffset, int *endOffset) const override
    {
        *startOffset = *endOffset = offset;
        return {};
    }
};

QAccessibleInterface *terminalAccessibleFactory(const QString &key, QObject *object)
{
    if (key == QLatin1String("elsai::TerminalWidget"))
        return new TerminalAccessible(static_cast<TerminalWidget *>(object));
    return nullptr;
}

} // namespace

TerminalWidget::TerminalWidget(QWidget *parent)
    : QWidget(parent), m_screen(new TerminalScreen(80, 24, this)),
      m_scrollBar(new QScrollBar(Qt::Vertical, this))
{
    static const bool factoryInstalled = [] {
        QAccessible::installFactory(terminalAccessibleFactory);
        return true;
    }();
    Q_UNUSED(factoryInstalled);

    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_InputMethodEnabled);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setCursor(Qt::IBeamCursor);
    setAccessibleName(tr("Terminal"));
    m_scrollBar->setAccessibleName(tr("Terminal scrollback"));
    m_scrollBar->setCursor(Qt::ArrowCursor);
    m_scrollBar->setFocusPolicy(Qt::NoFocus);

    QSettings settings = terminalSettings();
    m_screen->setScrollbackLimit(std::clamp(
        settings.value(QLatin1String(ScrollbackKey), DefaultScrollback).toInt(), 0, 1000000));
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    const QString saved = settings.value(QLatin1String(FontKey)).toString();
    if (!saved.isEmpty()) {
        QFont f;
        if (f.fromString(saved))
            font = f;
    }
    setTerminalFont(font);
    m_screen->setPalette(palette());

    m_frameTimer.setSingleShot(true);
    connect(&m_frameTimer, &QTimer::timeout, this, &TerminalWidget::frame);
    m_sinceFrame.start();
    m_blinkTimer.setInterval(BlinkMs);
    connect(&m_blinkTimer, &QTimer::timeout, this, [this] {
        m_blinkOn = !m_blinkOn;
        const QPoint c = m_screen->cursor();
        update(cellRect(c.y() + m_scrollBack, c.x(), 2).toAlignedRect());
    });
    connect(m_screen, &TerminalScreen::input, this, [this](const QByteArray &bytes) {
        if (m_session)
            m_session->write(bytes);
    });
    connect(m_screen, &TerminalScreen::titleChanged, this, &TerminalWidget::titleChanged);
    connect(m_scrollBar, &QScrollBar::valueChanged, this, [this](int value) {
        const int back =
            std::clamp(m_screen->scrollbackLines() - value, 0, m_screen->scrollbackLines());
        if (back != m_scrollBack) {
            m_scrollBack = back;
            update();
        }
    });
    updateScrollBar();
}

TerminalWidget::~TerminalWidget() = default;

void TerminalWidget::setSession(PtySession *session)
{
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    if (!session)
        return;
    connect(session, &PtySession::output, this, &TerminalWidget::onOutput);
    session->resize(m_screen->columns(), m_screen->rows());
}

void TerminalWidget::setTerminalFont(const QFont &font)
{
    m_font = font;
    m_font.setStyleHint(QFont::TypeWriter);
    m_font.setKerning(false);
    m_boldFont = m_font;
    m_boldFont.setBold(true);
    m_italicFont = m_font;
    m_italicFont.setItalic(true);
    m_boldItalicFont = m_boldFont;
    m_boldItalicFont.setItalic(true);
    const QFontMetricsF fm(m_font);
    m_cellWidth = std::max<qreal>(1, fm.horizontalAdvance(QLatin1Char('M')));
    m_cellHeight = std::max<qreal>(1, std::ceil(fm.height()));
    m_ascent = fm.ascent();
    updateGeometryFromSize();
    update();
}

int TerminalWidget::topLine() const
{
    return m_screen->scrollbackLines() - m_scrollBack;
}

qint64 TerminalWidget::droppedLines() const
{
    return m_screen->linesScrolled() - m_screen->scrollbackLines();
}

void TerminalWidget::scrollToBottom()
{
    if (m_scrollBack == 0)
        return;
    m_scrollBack = 0;
    updateScrollBar();
    update();
}

void TerminalWidget::scrollLines(int delta)
{
    const int back = std::clamp(m_scrollBack - delta, 0, m_screen->scrollbackLines());
    if (back == m_scrollBack)
        return;
    m_scrollBack = back;
    updateScrollBar();
    update();
}

void TerminalWidget::onOutput(const QByteArray &bytes)
{
    m_screen->feed(bytes);
    scheduleFrame();
}

void TerminalWidget::scheduleFrame()
{
    if (m_frameTimer.isActive())
        return;
    m_frameTimer.start(int(std::max<qint64>(0, FrameMs - m_sinceFrame.elapsed())));
}

void TerminalWidget::frame()
{
    m_sinceFrame.restart();
    const auto [from, to] = m_screen->takeDamage();
    const qint64 scrolled = m_screen->linesScrolled();
    const qint64 delta = scrolled - m_lastScrolled;
    m_lastScrolled = scrolled;
    if (m_scrollBack > 0 && delta != 0) {
        // Reading the scrollback: the view keeps its lines while new ones arrive below.
        m_scrollBack =
            int(std::clamp<qint64>(m_scrollBack + delta, 0, m_screen->scrollbackLines()));
    }
    updateScrollBar();
    if (delta != 0 || (m_scrollBack > 0 && from >= 0)) {
        update();
    } else if (from >= 0) {
        const QRectF rows(0, (from + m_scrollBack) * m_cellHeight, width(),
                          (to - from + 1) * m_cellHeight);
        update(rows.toAlignedRect());
    }
    m_blinkOn = true;
}

void TerminalWidget::updateGeometryFromSize()
{
    const int sbw = m_scrollBar->sizeHint().width();
    m_scrollBar->setGeometry(width() - sbw, 0, sbw, height());
    const int cols = std::max(1, int((width() - sbw) / m_cellWidth));
    const int rows = std::max(1, int(height() / m_cellHeight));
    if (cols != m_screen->columns() || rows != m_screen->rows()) {
        m_screen->resize(cols, rows);
        m_scrollBack = std::min(m_scrollBack, m_screen->scrollbackLines());
        m_lastScrolled = m_screen->linesScrolled();
        if (m_session)
            m_session->resize(cols, rows);
    }
    updateScrollBar();
}

void TerminalWidget::updateScrollBar()
{
    const QSignalBlocker block(m_scrollBar);
    const int sb = m_screen->scrollbackLines();
    m_scrollBar->setRange(0, sb);
    m_scrollBar->setPageStep(m_screen->rows());
    m_scrollBar->setValue(sb - m_scrollBack);
}

QRectF TerminalWidget::cellRect(int viewRow, int col, int width) const
{
    return {col * m_cellWidth, viewRow * m_cellHeight, width * m_cellWidth, m_cellHeight};
}

QPoint TerminalWidget::screenCellAt(const QPoint &p) const
{
    return {std::clamp(int(p.x() / m_cellWidth), 0, m_screen->columns() - 1),
            std::clamp(int(p.y() / m_cellHeight) - m_scrollBack, 0, m_screen->rows() - 1)};
}

TerminalWidget::Pos TerminalWidget::posAt(const QPoint &p) const
{
    const int viewRow = std::clamp(int(p.y() / m_cellHeight), 0, m_screen->rows() - 1);
    // Past the middle of a cell selects it.
    const int col = std::clamp(int(std::lround(p.x() / m_cellWidth)), 0, m_screen->columns());
    return {topLine() + viewRow + droppedLines(), col};
}

bool TerminalWidget::hasSelection() const
{
    return m_hasSelection && !(m_selAnchor == m_selEnd);
}

bool TerminalWidget::isSelected(qint64 line, int col) const
{
    if (!hasSelection())
        return false;
    const Pos a = std::min(m_selAnchor, m_selEnd);
    const Pos b = std::max(m_selAnchor, m_selEnd);
    const Pos p{line, col};
    return !(p < a) && p < b;
}

QString TerminalWidget::selectedText() const
{
    if (!hasSelection())
        return {};
    const Pos a = std::min(m_selAnchor, m_selEnd);
    const Pos b = std::max(m_selAnchor, m_selEnd);
    const qint64 dropped = droppedLines();
    QStringList lines;
    for (qint64 line = std::max(a.line, dropped); line <= b.line; ++line) {
        const int index = int(line - dropped);
        if (index >= m_screen->totalLines())
            break;
        const int from = line == a.line ? a.col : 0;
        const int to = line == b.line ? b.col : -1;
        lines << m_screen->lineText(index, from, to);
    }
    return lines.join(QLatin1Char('\n'));
}

void TerminalWidget::selectAll()
{
    m_selAnchor = {droppedLines(), 0};
    m_selEnd = {droppedLines() + m_screen->totalLines() - 1, m_screen->columns()};
    m_hasSelection = true;
    update();
}

void TerminalWidget::clearSelection()
{
    if (!m_hasSelection)
        return;
    m_hasSelection = false;
    update();
}

void TerminalWidget::copy()
{
    if (hasSelection())
        QGuiApplication::clipboard()->setText(selectedText());
}

void TerminalWidget::paste()
{
    const QString text = QGuiApplication::clipboard()->text();
    if (!text.isEmpty() && m_session) {
        m_screen->sendPaste(text);
        scrollToBottom();
    }
}

bool TerminalWidget::find(const QString &text, bool backwards)
{
    if (text.isEmpty())
        return false;
    const qint64 dropped = droppedLines();
    const int total = m_screen->totalLines();
    int index = backwards ? total - 1 : 0;
    int col = -1; // search the whole line
    if (hasSelection()) {
        const Pos a = std::min(m_selAnchor, m_selEnd);
        index = int(std::clamp<qint64>(a.line - dropped, 0, total - 1));
        col = a.col;
    }
    for (int step = 0; step < total; ++step) {
        const QString line = m_screen->lineText(index);
        int at = -1;
        if (backwards) {
            const int from = col < 0 ? -1 : col - 1;
            at = from < -1 ? -1 : int(line.lastIndexOf(text, from, Qt::CaseInsensitive));
        } else {
            at = int(line.indexOf(text, col < 0 ? 0 : col + 1, Qt::CaseInsensitive));
        }
        if (at >= 0) {
            m_selAnchor = {index + dropped, at};
            m_selEnd = {index + dropped, at + int(text.size())};
            m_hasSelection = true;
            if (index < topLine() || index >= topLine() + m_screen->rows()) {
                m_scrollBack =
                    std::clamp(m_screen->scrollbackLines() - index + m_screen->rows() / 2, 0,
                               m_screen->scrollbackLines());
            }
            updateScrollBar();
            update();
            return true;
        }
        col = -1;
        index = backwards ? index - 1 : index + 1;
        if (index < 0 || index >= total)
            break;
    }
    return false;
}

QString TerminalWidget::visibleText() const
{
    QStringList rows;
    const int top = topLine();
    for (int r = 0; r < m_screen->rows(); ++r)
        rows << m_screen->lineText(top + r);
    return rows.join(QLatin1Char('\n'));
}

// ---- painting

void TerminalWidget::paintEvent(QPaintEvent *e)
{
    ++m_frames;
    QPainter p(this);
    const QRect area = e->rect();
    const bool reverse = m_screen->reverseVideo();
    const QColor background =
        reverse ? m_screen->defaultForeground() : m_screen->defaultBackground();
    p.fillRect(area, background);
    const int rows = m_screen->rows();
    const int r0 = std::clamp(int(area.top() / m_cellHeight), 0, rows - 1);
    const int r1 = std::clamp(int(area.bottom() / m_cellHeight), 0, rows - 1);
    const int top = topLine();
    const qint64 dropped = droppedLines();
    for (int r = r0; r <= r1; ++r)
        drawRow(p, r, m_screen->line(top + r), top + r + dropped);
    drawCursor(p);
}

void TerminalWidget::drawRow(QPainter &p, int viewRow, const std::vector<TerminalCell> &cells,
                             qint64 line)
{
    const int cols = m_screen->columns();
    const bool reverse = m_screen->reverseVideo();
    const QColor defFg = reverse ? m_screen->defaultBackground() : m_screen->defaultForeground();
    const QColor defBg = reverse ? m_screen->defaultForeground() : m_screen->defaultBackground();
    const QPalette &pal = palette();
    const qreal y = viewRow * m_cellHeight;
    const TerminalCell blank;
    auto at = [&](int col) -> const TerminalCell & {
        return col < int(cells.size()) ? cells[size_t(col)] : blank;
    };
    QString text;
    int col = 0;
    while (col < cols) {
        const TerminalCell &c = at(col);
        if (c.has(TerminalCell::Continuation)) {
            ++col;
            continue;
        }
        const bool selected = isSelected(line, col);
        QColor fg = c.has(TerminalCell::DefaultFg) ? defFg : QColor(c.fg);
        QColor bg = c.has(TerminalCell::DefaultBg) ? defBg : QColor(c.bg);
        if (c.has(TerminalCell::Reverse))
            std::swap(fg, bg);
        if (selected) {
            fg = pal.color(QPalette::HighlightedText);
            bg = pal.color(QPalette::Highlight);
        }
        int end = col + 1;
        text.clear();
        const bool simple = c.ch < 0x80 && !c.has(TerminalCell::Wide);
        if (simple) {
            // A run of plain ASCII cells of one look: one drawText, glyphs on the grid.
            text += QLatin1Char(c.ch ? char(c.ch) : ' ');
            while (end < cols) {
                const TerminalCell &n = at(end);
                if (n.ch >= 0x80 || (n.flags & (TerminalCell::Wide | TerminalCell::Continuation)) ||
                    !n.sameLook(c) || isSelected(line, end) != selected)
                    break;
                text += QLatin1Char(n.ch ? char(n.ch) : ' ');
                ++end;
            }
        } else {
            const char32_t ch = c.ch;
            text = QString::fromUcs4(&ch, 1);
            end = col + (c.has(TerminalCell::Wide) ? 2 : 1);
        }
        const QRectF rect = cellRect(viewRow, col, end - col);
        if (bg != defBg || selected)
            p.fillRect(rect, bg);
        const bool bold = c.has(TerminalCell::Bold);
        const bool italic = c.has(TerminalCell::Italic);
        if (!text.trimmed().isEmpty()) {
            p.setFont(bold ? (italic ? m_boldItalicFont : m_boldFont)
                           : (italic ? m_italicFont : m_font));
            p.setPen(fg);
            p.drawText(QPointF(rect.left(), y + m_ascent), text);
        }
        if (c.flags & (TerminalCell::Underline | TerminalCell::DoubleUnderline)) {
            const qreal uy = std::min(y + m_ascent + 1.5, y + m_cellHeight - 1);
            p.fillRect(QRectF(rect.left(), uy, rect.width(), 1), fg);
            if (c.has(TerminalCell::DoubleUnderline))
                p.fillRect(
                    QRectF(rect.left(), std::min(uy + 2, y + m_cellHeight - 1), rect.width(), 1),
                    fg);
        }
        if (c.has(TerminalCell::Strike))
            p.fillRect(QRectF(rect.left(), y + m_cellHeight / 2, rect.width(), 1), fg);
        col = end;
    }
}

void TerminalWidget::drawCursor(QPainter &p)
{
    if (!m_screen->cursorVisible())
        return;
    const QPoint c = m_screen->cursor();
    const int viewRow = c.y() + m_scrollBack;
    if (viewRow >= m_screen->rows())
        return;
    const TerminalCell cell = m_screen->cell(c.y(), c.x());
    const QRectF rect = cellRect(viewRow, c.x(), cell.has(TerminalCell::Wide) ? 2 : 1);
    const QColor colour =
        m_screen->reverseVideo() ? m_screen->defaultBackground() : m_screen->defaultForeground();
    if (!hasFocus()) {
        p.setPen(colour);
        p.setBrush(Qt::NoBrush);
        p.drawRect(rect.adjusted(0.5, 0.5, -0.5, -0.5));
        return;
    }
    if (m_screen->cursorBlink() && !m_blinkOn)
        return;
    switch (m_screen->cursorShape()) {
    case TerminalScreen::CursorShape::Underline:
        p.fillRect(QRectF(rect.left(), rect.bottom() - 2, rect.width(), 2), colour);
        break;
    case TerminalScreen::CursorShape::Bar:
        p.fillRect(QRectF(rect.left(), rect.top(), 2, rect.height()), colour);
        break;
    case TerminalScreen::CursorShape::Block:
        p.fillRect(rect, colour);
        if (cell.ch) {
            const char32_t ch = cell.ch;
            p.setFont(cell.has(TerminalCell::Bold) ? m_boldFont : m_font);
            p.setPen(m_screen->reverseVideo() ? m_screen->defaultForeground()
                                              : m_screen->defaultBackground());
            p.drawText(QPointF(rect.left(), rect.top() + m_ascent), QString::fromUcs4(&ch, 1));
        }
        break;
    }
}

// ---- events

bool TerminalWidget::event(QEvent *e)
{
    if (e->type() == QEvent::ShortcutOverride) {
        // A terminal takes the keys its programs need before the window's shortcuts do; the
        // window keeps Ctrl+Shift combinations the terminal does not use.
        auto *k = static_cast<QKeyEvent *>(e);
        const auto mods = k->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier |
                                            Qt::AltModifier | Qt::MetaModifier);
        const bool ctrlShift = mods == (Qt::ControlModifier | Qt::ShiftModifier);
        const bool ours =
            ctrlShift ? (k->key() == Qt::Key_C || k->key() == Qt::Key_V || k->key() == Qt::Key_F)
                      : !(mods & Qt::MetaModifier);
        if (ours) {
            e->accept();
            return true;
        }
    }
    return QWidget::event(e);
}

void TerminalWidget::keyPressEvent(QKeyEvent *e)
{
    const auto mods = e->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier | Qt::AltModifier);
    if (mods == (Qt::ControlModifier | Qt::ShiftModifier)) {
        switch (e->key()) {
        case Qt::Key_C:
            copy();
            return;
        case Qt::Key_V:
            paste();
            return;
        case Qt::Key_F:
            Q_EMIT findRequested();
            return;
        default:
            break;
        }
    }
    if (mods == Qt::ShiftModifier) {
        switch (e->key()) {
        case Qt::Key_PageUp:
            scrollLines(-std::max(1, m_screen->rows() - 1));
            return;
        case Qt::Key_PageDown:
            scrollLines(std::max(1, m_screen->rows() - 1));
            return;
        case Qt::Key_Insert:
            paste();
            return;
        default:
            break;
        }
    }
    if ((e->key() == Qt::Key_Tab || e->key() == Qt::Key_Backtab) && (mods & Qt::ControlModifier)) {
        // Tab is the program's: Ctrl+Tab / Ctrl+Shift+Tab leave the terminal.
        QWidget::focusNextPrevChild(e->key() == Qt::Key_Tab && !(mods & Qt::ShiftModifier));
        return;
    }
    if (m_session && m_screen->sendKey(e->key(), mods, e->text())) {
        scrollToBottom();
        m_blinkOn = true;
        e->accept();
        return;
    }
    QWidget::keyPressEvent(e);
}

void TerminalWidget::inputMethodEvent(QInputMethodEvent *e)
{
    if (!e->commitString().isEmpty() && m_session) {
        m_session->write(e->commitString().toUtf8());
        scrollToBottom();
    }
    e->accept();
}

QVariant TerminalWidget::inputMethodQuery(Qt::InputMethodQuery query) const
{
    if (query == Qt::ImCursorRectangle) {
        const QPoint c = m_screen->cursor();
        return cellRect(c.y() + m_scrollBack, c.x()).toAlignedRect();
    }
    if (query == Qt::ImFont)
        return m_font;
    return QWidget::inputMethodQuery(query);
}

bool TerminalWidget::reportsMouse(Qt::KeyboardModifiers mods) const
{
    return m_session && m_screen->mouseMode() != TerminalScreen::MouseMode::None &&
           !(mods & Qt::ShiftModifier);
}

int TerminalWidget::mouseButton(Qt::MouseButton b) const
{
    switch (b) {
    case Qt::LeftButton:
        return 1;
    case Qt::MiddleButton:
        return 2;
    case Qt::RightButton:
        return 3;
    default:
        return 0;
    }
}

void TerminalWidget::mousePressEvent(QMouseEvent *e)
{
    setFocus(Qt::MouseFocusReason);
    const QPoint pos = e->position().toPoint();
    if (reportsMouse(e->modifiers()) && mouseButton(e->button())) {
        const QPoint cell = screenCellAt(pos);
        m_screen->sendMouseMove(cell.y(), cell.x(), e->modifiers());
        m_screen->sendMouseButton(mouseButton(e->button()), true, e->modifiers());
        m_mouseReported = true;
        return;
    }
    if (e->button() == Qt::LeftButton) {
        m_hasSelection = true;
        m_selecting = true;
        m_selAnchor = m_selEnd = posAt(pos);
        update();
    } else if (e->button() == Qt::MiddleButton && m_session) {
        const QString text = QGuiApplication::clipboard()->text(QClipboard::Selection);
        if (!text.isEmpty())
            m_screen->sendPaste(text);
    }
}

void TerminalWidget::mouseMoveEvent(QMouseEvent *e)
{
    const QPoint pos = e->position().toPoint();
    if (m_mouseReported || (reportsMouse(e->modifiers()) &&
                            m_screen->mouseMode() == TerminalScreen::MouseMode::Move)) {
        const QPoint cell = screenCellAt(pos);
        m_screen->sendMouseMove(cell.y(), cell.x(), e->modifiers());
        return;
    }
    if (m_selecting) {
        if (pos.y() < 0)
            scrollLines(-1);
        else if (pos.y() > height())
            scrollLines(1);
        m_selEnd = posAt(pos);
        update();
    }
}

void TerminalWidget::mouseReleaseEvent(QMouseEvent *e)
{
    if (m_mouseReported) {
        m_screen->sendMouseButton(mouseButton(e->button()), false, e->modifiers());
        m_mouseReported = false;
        return;
    }
    if (m_selecting && e->button() == Qt::LeftButton) {
        m_selecting = false;
        if (hasSelection() && QGuiApplication::clipboard()->supportsSelection())
            QGuiApplication::clipboard()->setText(selectedText(), QClipboard::Selection);
    }
}

void TerminalWidget::mouseDoubleClickEvent(QMouseEvent *e)
{
    if (reportsMouse(e->modifiers()) || e->button() != Qt::LeftButton) {
        mousePressEvent(e);
        return;
    }
    // A word: the run of word characters around the cell.
    const Pos at = posAt(e->position().toPoint() - QPoint(int(m_cellWidth / 2), 0));
    const QString text = m_screen->lineText(int(at.line - droppedLines()));
    int from = at.col;
    int to = at.col;
    if (!isWordChar(text, at.col))
        return;
    while (isWordChar(text, from - 1))
        --from;
    while (isWordChar(text, to))
        ++to;
    m_selAnchor = {at.line, from};
    m_selEnd = {at.line, to};
    m_hasSelection = true;
    m_selecting = false;
    if (QGuiApplication::clipboard()->supportsSelection())
        QGuiApplication::clipboard()->setText(selectedText(), QClipboard::Selection);
    update();
}

void TerminalWidget::wheelEvent(QWheelEvent *e)
{
    const int steps = e->angleDelta().y() / 120;
    if (steps == 0)
        return;
    if (reportsMouse(e->modifiers())) {
        const QPoint cell = screenCellAt(e->position().toPoint());
        m_screen->sendMouseMove(cell.y(), cell.x(), e->modifiers());
        for (int i = 0; i < std::abs(steps); ++i)
            m_screen->sendMouseButton(steps > 0 ? 4 : 5, true, e->modifiers());
    } else if (m_screen->altScreen() && m_session) {
        // A full-screen program without mouse reporting: the wheel moves its cursor.
        for (int i = 0; i < std::abs(steps) * WheelLines; ++i)
            m_screen->sendKey(steps > 0 ? Qt::Key_Up : Qt::Key_Down, Qt::NoModifier, {});
    } else {
        scrollLines(-steps * WheelLines);
    }
    e->accept();
}

void TerminalWidget::focusInEvent(QFocusEvent *e)
{
    m_screen->sendFocus(true);
    m_blinkOn = true;
    m_blinkTimer.start();
    update();
    QWidget::focusInEvent(e);
}

void TerminalWidget::focusOutEvent(QFocusEvent *e)
{
    m_screen->sendFocus(false);
    m_blinkTimer.stop();
    update();
    QWidget::focusOutEvent(e);
}

bool TerminalWidget::focusNextPrevChild(bool next)
{
    Q_UNUSED(next);
    return false; // Tab belongs to the program (completion); Ctrl+Tab leaves
}

void TerminalWidget::changeEvent(QEvent *e)
{
    if (e->type() == QEvent::PaletteChange) {
        m_screen->setPalette(palette());
        update();
    }
    QWidget::changeEvent(e);
}

void TerminalWidget::resizeEvent(QResizeEvent *e)
{
    QWidget::resizeEvent(e);
    updateGeometryFromSize();
}

} // namespace elsai
