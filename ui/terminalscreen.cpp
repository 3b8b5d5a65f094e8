// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "terminalscreen.h"

#include <vterm.h>

#include <algorithm>
#include <cstring>

namespace elsai {

namespace {

// libvterm 0.2 made string properties (the title) arrive in fragments.
#if VTERM_VERSION_MAJOR > 0 || VTERM_VERSION_MINOR >= 2
#define ELSAI_VTERM_FRAGMENTS 1
#endif

constexpr char32_t ContinuationChar = 0xffffffffu; // libvterm's mark for a wide char's 2nd half

/// The 16 ANSI colours (Tango, as GNOME Terminal and many others use): readable on a light
/// and on a dark background.
constexpr QRgb Ansi[16] = {
    0xff000000, 0xffcc0000, 0xff4e9a06, 0xffc4a000, 0xff3465a4, 0xff75507b, 0xff06989a, 0xffd3d7cf,
    0xff555753, 0xffef2929, 0xff8ae234, 0xfffce94f, 0xff729fcf, 0xffad7fa8, 0xff34e2e2, 0xffeeeeec,
};

/// Colours 16–255 as xterm has them (the cube's levels are not linear): programs pick them
/// by TERM=xterm-256color. libvterm's own table uses other levels and cannot be changed.
QRgb xterm256(int index)
{
    if (index >= 232) {
        const int v = 8 + 10 * (index - 232);
        return qRgb(v, v, v);
    }
    static constexpr int Levels[6] = {0, 95, 135, 175, 215, 255};
    const int i = index - 16;
    return qRgb(Levels[i / 36], Levels[(i / 6) % 6], Levels[i % 6]);
}

VTermColor toVTerm(QRgb rgb)
{
    VTermColor c;
    vterm_color_rgb(&c, uint8_t(qRed(rgb)), uint8_t(qGreen(rgb)), uint8_t(qBlue(rgb)));
    return c;
}

VTermModifier toVTerm(Qt::KeyboardModifiers mods)
{
    int m = VTERM_MOD_NONE;
    if (mods & Qt::ShiftModifier)
        m |= VTERM_MOD_SHIFT;
    if (mods & Qt::AltModifier)
        m |= VTERM_MOD_ALT;
    if (mods & Qt::ControlModifier)
        m |= VTERM_MOD_CTRL;
    return VTermModifier(m);
}

} // namespace

/// libvterm's C callbacks, forwarded to the screen object.
struct VTermGlue
{
    static TerminalScreen *self(void *user) { return static_cast<TerminalScreen *>(user); }

    static int damage(VTermRect rect, void *user)
    {
        self(user)->markDirty(rect.start_row, rect.end_row - 1);
        return 1;
    }
    static int moveRect(VTermRect dest, VTermRect src, void *user)
    {
        self(user)->markDirty(std::min(dest.start_row, src.start_row),
                              std::max(dest.end_row, src.end_row) - 1);
        return 1;
    }
    static int moveCursor(VTermPos pos, VTermPos old, int visible, void *user)
    {
        TerminalScreen *s = self(user);
        s->markDirty(old.row, old.row);
        s->markDirty(pos.row, pos.row);
        s->m_cursor = QPoint(pos.col, pos.row);
        s->m_cursorVisible = visible != 0;
        return 1;
    }
    static int setTermProp(VTermProp prop, VTermValue *val, void *user)
    {
        TerminalScreen *s = self(user);
        switch (prop) {
        case VTERM_PROP_CURSORVISIBLE:
            s->m_cursorVisible = val->boolean != 0;
            s->markDirty(s->m_cursor.y(), s->m_cursor.y());
            break;
        case VTERM_PROP_CURSORBLINK:
            s->m_cursorBlink = val->boolean != 0;
            break;
        case VTERM_PROP_ALTSCREEN:
            s->m_altScreen = val->boolean != 0;
            s->markDirty(0, s->m_rows - 1);
            break;
        case VTERM_PROP_REVERSE:
            s->m_reverse = val->boolean != 0;
            s->markDirty(0, s->m_rows - 1);
            break;
        case VTERM_PROP_CURSORSHAPE:
            s->m_cursorShape = val->number == VTERM_PROP_CURSORSHAPE_UNDERLINE
                                   ? TerminalScreen::CursorShape::Underline
                               : val->number == VTERM_PROP_CURSORSHAPE_BAR_LEFT
                                   ? TerminalScreen::CursorShape::Bar
                                   : TerminalScreen::CursorShape::Block;
            s->markDirty(s->m_cursor.y(), s->m_cursor.y());
            break;
        case VTERM_PROP_MOUSE:
            s->m_mouseMode =
                val->number == VTERM_PROP_MOUSE_CLICK  ? TerminalScreen::MouseMode::Click
                : val->number == VTERM_PROP_MOUSE_DRAG ? TerminalScreen::MouseMode::Drag
                : val->number == VTERM_PROP_MOUSE_MOVE ? TerminalScreen::MouseMode::Move
                                                       : TerminalScreen::MouseMode::None;
            break;
        case VTERM_PROP_TITLE: {
#ifdef ELSAI_VTERM_FRAGMENTS
            QByteArray &pending = s->m_titlePending;
            if (val->string.initial)
                pending.clear();
            // A program's title is at most a line: bound what it can make us hold.
            if (pending.size() < 4096)
                pending.append(val->string.str, qsizetype(val->string.len));
            if (!val->string.final)
                break;
            const QString title = QString::fromUtf8(pending.left(4096));
#else
            const QString title = QString::fromUtf8(val->string).left(4096);
#endif
            if (title != s->m_title) {
                s->m_title = title;
                Q_EMIT s->titleChanged(title);
            }
            break;
        }
        default:
            break;
        }
        return 1;
    }
    static int bell(void *user)
    {
        Q_EMIT self(user)->bell();
        return 1;
    }
    static int pushLine(int cols, const VTermScreenCell *cells, void *user)
    {
        TerminalScreen *s = self(user);
        if (s->m_scrollbackLimit <= 0)
            return 0;
        int used = cols;
        // Trailing blanks of the default look cost memory and say nothing.
        while (used > 0 && cells[used - 1].chars[0] == 0 &&
               VTERM_COLOR_IS_DEFAULT_BG(&cells[used - 1].bg) && !cells[used - 1].attrs.reverse)
            --used;
        std::vector<TerminalCell> line;
        if (s->m_scrollback.size() >= size_t(s->m_scrollbackLimit)) {
            line = std::move(s->m_scrollback.front()); // reuse the oldest line's memory
            s->m_scrollback.pop_front();
            line.clear();
        }
        line.reserve(size_t(used));
        for (int i = 0; i < used; ++i)
            line.push_back(s->convert(&cells[i]));
        s->m_scrollback.push_back(std::move(line));
        ++s->m_linesScrolled;
        return 1;
    }
    static int popLine(int cols, VTermScreenCell *cells, void *user)
    {
        TerminalScreen *s = self(user);
        if (s->m_scrollback.empty())
            return 0;
        const std::vector<TerminalCell> line = std::move(s->m_scrollback.back());
        s->m_scrollback.pop_back();
        --s->m_linesScrolled;
        VTermColor fg, bg;
        vterm_state_get_default_colors(s->m_state, &fg, &bg);
        for (int i = 0; i < cols; ++i) {
            VTermScreenCell &c = cells[i];
            std::memset(&c, 0, sizeof c);
            const TerminalCell t = i < int(line.size()) ? line[size_t(i)] : TerminalCell();
            c.chars[0] =
                t.has(TerminalCell::Continuation) ? uint32_t(ContinuationChar) : uint32_t(t.ch);
            c.width = t.has(TerminalCell::Wide) ? 2 : 1;
            c.attrs.bold = t.has(TerminalCell::Bold);
            c.attrs.italic = t.has(TerminalCell::Italic);
            c.attrs.underline = t.has(TerminalCell::DoubleUnderline) ? VTERM_UNDERLINE_DOUBLE
                                : t.has(TerminalCell::Underline)     ? VTERM_UNDERLINE_SINGLE
                                                                     : VTERM_UNDERLINE_OFF;
            c.attrs.reverse = t.has(TerminalCell::Reverse);
            c.attrs.strike = t.has(TerminalCell::Strike);
            c.attrs.blink = t.has(TerminalCell::Blink);
            c.fg = t.has(TerminalCell::DefaultFg) ? fg : toVTerm(t.fg);
            c.bg = t.has(TerminalCell::DefaultBg) ? bg : toVTerm(t.bg);
        }
        return 1;
    }
    static void output(const char *s, size_t len, void *user)
    {
        Q_EMIT self(user)->input(QByteArray(s, qsizetype(len)));
    }
};

TerminalScreen::TerminalScreen(int cols, int rows, QObject *parent)
    : QObject(parent), m_cols(std::max(cols, 1)), m_rows(std::max(rows, 1))
{
    m_vt = vterm_new(m_rows, m_cols);
    vterm_set_utf8(m_vt, 1);
    vterm_output_set_callback(m_vt, &VTermGlue::output, this);
    m_state = vterm_obtain_state(m_vt);
    m_screen = vterm_obtain_screen(m_vt);
    static const VTermScreenCallbacks callbacks = [] {
        VTermScreenCallbacks cb;
        std::memset(&cb, 0, sizeof cb);
        cb.damage = &VTermGlue::damage;
        cb.moverect = &VTermGlue::moveRect;
        cb.movecursor = &VTermGlue::moveCursor;
        cb.settermprop = &VTermGlue::setTermProp;
        cb.bell = &VTermGlue::bell;
        cb.sb_pushline = &VTermGlue::pushLine;
        cb.sb_popline = &VTermGlue::popLine;
        return cb;
    }();
    vterm_screen_set_callbacks(m_screen, &callbacks, this);
    // Scrolls merge until the next flush (takeDamage()): a flood costs one repaint per frame.
    vterm_screen_set_damage_merge(m_screen, VTERM_DAMAGE_SCROLL);
    vterm_screen_enable_altscreen(m_screen, 1);
    vterm_screen_reset(m_screen, 1);
    std::copy(std::begin(Ansi), std::end(Ansi), std::begin(m_ansi));
    applyColours();
}

TerminalScreen::~TerminalScreen()
{
    vterm_free(m_vt);
}

void TerminalScreen::resize(int cols, int rows)
{
    cols = std::max(cols, 1);
    rows = std::max(rows, 1);
    if (cols == m_cols && rows == m_rows)
        return;
    m_cols = cols;
    m_rows = rows;
    vterm_set_size(m_vt, rows, cols);
    vterm_screen_flush_damage(m_screen);
    markDirty(0, rows - 1);
}

void TerminalScreen::feed(const QByteArray &bytes)
{
    if (!bytes.isEmpty())
        vterm_input_write(m_vt, bytes.constData(), size_t(bytes.size()));
}

void TerminalScreen::setScrollbackLimit(int lines)
{
    m_scrollbackLimit = std::max(lines, 0);
    while (m_scrollback.size() > size_t(m_scrollbackLimit))
        m_scrollback.pop_front();
}

TerminalCell TerminalScreen::convert(const void *vtermCell) const
{
    const auto &c = *static_cast<const VTermScreenCell *>(vtermCell);
    TerminalCell t;
    t.flags = 0;
    if (c.chars[0] == uint32_t(ContinuationChar)) {
        t.flags |= TerminalCell::Continuation;
    } else {
        t.ch = c.chars[0];
        if (c.width == 2)
            t.flags |= TerminalCell::Wide;
    }
    if (c.attrs.bold)
        t.flags |= TerminalCell::Bold;
    if (c.attrs.italic)
        t.flags |= TerminalCell::Italic;
    if (c.attrs.underline == VTERM_UNDERLINE_DOUBLE)
        t.flags |= TerminalCell::DoubleUnderline;
    else if (c.attrs.underline)
        t.flags |= TerminalCell::Underline;
    if (c.attrs.reverse)
        t.flags |= TerminalCell::Reverse;
    if (c.attrs.strike)
        t.flags |= TerminalCell::Strike;
    if (c.attrs.blink)
        t.flags |= TerminalCell::Blink;
    const auto rgbOf = [this](VTermColor colour) {
        if (VTERM_COLOR_IS_INDEXED(&colour) && colour.indexed.idx >= 16)
            return xterm256(colour.indexed.idx);
        vterm_screen_convert_color_to_rgb(m_screen, &colour);
        return qRgb(colour.rgb.red, colour.rgb.green, colour.rgb.blue);
    };
    if (VTERM_COLOR_IS_DEFAULT_FG(&c.fg))
        t.flags |= TerminalCell::DefaultFg;
    else
        t.fg = rgbOf(c.fg);
    if (VTERM_COLOR_IS_DEFAULT_BG(&c.bg))
        t.flags |= TerminalCell::DefaultBg;
    else
        t.bg = rgbOf(c.bg);
    return t;
}

TerminalCell TerminalScreen::cell(int row, int col) const
{
    VTermScreenCell c;
    if (!vterm_screen_get_cell(m_screen, VTermPos{row, col}, &c))
        return {};
    return convert(&c);
}

std::vector<TerminalCell> TerminalScreen::line(int index) const
{
    if (index < 0 || index >= totalLines())
        return {};
    if (index < scrollbackLines())
        return m_scrollback[size_t(index)];
    const int row = index - scrollbackLines();
    std::vector<TerminalCell> out;
    out.reserve(size_t(m_cols));
    for (int col = 0; col < m_cols; ++col)
        out.push_back(cell(row, col));
    return out;
}

QString TerminalScreen::lineText(int index, int from, int to) const
{
    const std::vector<TerminalCell> cells = line(index);
    const int end = to < 0 ? int(cells.size()) : std::min(to, int(cells.size()));
    QString text;
    for (int i = std::max(from, 0); i < end; ++i) {
        const TerminalCell &c = cells[size_t(i)];
        if (c.has(TerminalCell::Continuation))
            continue;
        if (c.ch == 0) {
            text += QLatin1Char(' ');
        } else {
            const char32_t ch = c.ch;
            text += QString::fromUcs4(&ch, 1);
        }
    }
    while (text.endsWith(QLatin1Char(' ')))
        text.chop(1);
    return text;
}

QString TerminalScreen::screenText() const
{
    QStringList rows;
    for (int r = 0; r < m_rows; ++r)
        rows << lineText(scrollbackLines() + r);
    return rows.join(QLatin1Char('\n'));
}

void TerminalScreen::setPalette(const QPalette &palette)
{
    m_defaultFg = palette.color(QPalette::Text);
    m_defaultBg = palette.color(QPalette::Base);
    applyColours();
    markDirty(0, m_rows - 1);
}

void TerminalScreen::applyColours()
{
    const VTermColor fg = toVTerm(m_defaultFg.rgb());
    const VTermColor bg = toVTerm(m_defaultBg.rgb());
    vterm_state_set_default_colors(m_state, &fg, &bg);
    for (int i = 0; i < 16; ++i) {
        const VTermColor c = toVTerm(m_ansi[i]);
        vterm_state_set_palette_color(m_state, i, &c);
    }
}

bool TerminalScreen::sendKey(int qtKey, Qt::KeyboardModifiers mods, const QString &text)
{
    const VTermModifier mod = toVTerm(mods);
    VTermKey key = VTERM_KEY_NONE;
    switch (qtKey) {
    case Qt::Key_Return:
    case Qt::Key_Enter:
        key = VTERM_KEY_ENTER;
        break;
    case Qt::Key_Tab:
    case Qt::Key_Backtab:
        key = VTERM_KEY_TAB;
        break;
    case Qt::Key_Backspace:
        key = VTERM_KEY_BACKSPACE;
        break;
    case Qt::Key_Escape:
        key = VTERM_KEY_ESCAPE;
        break;
    case Qt::Key_Up:
        key = VTERM_KEY_UP;
        break;
    case Qt::Key_Down:
        key = VTERM_KEY_DOWN;
        break;
    case Qt::Key_Left:
        key = VTERM_KEY_LEFT;
        break;
    case Qt::Key_Right:
        key = VTERM_KEY_RIGHT;
        break;
    case Qt::Key_Insert:
        key = VTERM_KEY_INS;
        break;
    case Qt::Key_Delete:
        key = VTERM_KEY_DEL;
        break;
    case Qt::Key_Home:
        key = VTERM_KEY_HOME;
        break;
    case Qt::Key_End:
        key = VTERM_KEY_END;
        break;
    case Qt::Key_PageUp:
        key = VTERM_KEY_PAGEUP;
        break;
    case Qt::Key_PageDown:
        key = VTERM_KEY_PAGEDOWN;
        break;
    default:
        if (qtKey >= Qt::Key_F1 && qtKey <= Qt::Key_F12)
            key = VTermKey(VTERM_KEY_FUNCTION(qtKey - Qt::Key_F1 + 1));
        break;
    }
    if (key != VTERM_KEY_NONE) {
        // Shift+Tab is Backtab in Qt: libvterm sends CSI Z for Tab with Shift.
        const VTermModifier m =
            qtKey == Qt::Key_Backtab ? VTermModifier(mod | VTERM_MOD_SHIFT) : mod;
        vterm_keyboard_key(m_vt, key, m);
        return true;
    }

    const bool ctrl = mods & Qt::ControlModifier;
    const bool alt = mods & Qt::AltModifier;
    QByteArray bytes;
    if (ctrl) {
        // The classic control codes, whatever the keyboard layout made of the text.
        if (qtKey >= Qt::Key_A && qtKey <= Qt::Key_Z)
            bytes = QByteArray(1, char(qtKey - Qt::Key_A + 1));
        else if (qtKey == Qt::Key_Space || qtKey == Qt::Key_At || qtKey == Qt::Key_2)
            bytes = QByteArray(1, '\0');
        else if (qtKey == Qt::Key_BracketLeft || qtKey == Qt::Key_3)
            bytes = QByteArray(1, '\x1b');
        else if (qtKey == Qt::Key_Backslash || qtKey == Qt::Key_4)
            bytes = QByteArray(1, '\x1c');
        else if (qtKey == Qt::Key_BracketRight || qtKey == Qt::Key_5)
            bytes = QByteArray(1, '\x1d');
        else if (qtKey == Qt::Key_AsciiCircum || qtKey == Qt::Key_6)
            bytes = QByteArray(1, '\x1e');
        else if (qtKey == Qt::Key_Underscore || qtKey == Qt::Key_Minus || qtKey == Qt::Key_Slash ||
                 qtKey == Qt::Key_7)
            bytes = QByteArray(1, '\x1f');
        else if (qtKey == Qt::Key_Question || qtKey == Qt::Key_8)
            bytes = QByteArray(1, '\x7f');
    }
    if (bytes.isEmpty())
        bytes = text.toUtf8();
    if (bytes.isEmpty())
        return false;
    if (alt)
        bytes.prepend('\x1b');
    Q_EMIT input(bytes);
    return true;
}

void TerminalScreen::sendPaste(const QString &text)
{
    QString t = text;
    t.replace(QLatin1String("\r\n"), QLatin1String("\r"));
    t.replace(QLatin1Char('\n'), QLatin1Char('\r'));
    // A paste must not end the bracket early: drop what would.
    t.remove(QStringLiteral("\x1b[201~"));
    vterm_keyboard_start_paste(m_vt);
    Q_EMIT input(t.toUtf8());
    vterm_keyboard_end_paste(m_vt);
}

void TerminalScreen::sendMouseMove(int row, int col, Qt::KeyboardModifiers mods)
{
    vterm_mouse_move(m_vt, std::clamp(row, 0, m_rows - 1), std::clamp(col, 0, m_cols - 1),
                     toVTerm(mods));
}

void TerminalScreen::sendMouseButton(int button, bool pressed, Qt::KeyboardModifiers mods)
{
    vterm_mouse_button(m_vt, button, pressed, toVTerm(mods));
}

void TerminalScreen::sendFocus(bool in)
{
    if (in)
        vterm_state_focus_in(m_state);
    else
        vterm_state_focus_out(m_state);
}

void TerminalScreen::markDirty(int from, int to)
{
    from = std::clamp(from, 0, m_rows - 1);
    to = std::clamp(to, 0, m_rows - 1);
    if (from > to)
        return;
    m_dirtyFrom = m_dirtyFrom < 0 ? from : std::min(m_dirtyFrom, from);
    m_dirtyTo = std::max(m_dirtyTo, to);
}

std::pair<int, int> TerminalScreen::takeDamage()
{
    vterm_screen_flush_damage(m_screen);
    const std::pair<int, int> d{m_dirtyFrom, m_dirtyTo};
    m_dirtyFrom = m_dirtyTo = -1;
    return d;
}

} // namespace elsai
