// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QColor>
#include <QObject>
#include <QPalette>
#include <QPoint>
#include <QString>

#include <deque>
#include <vector>

struct VTerm;
struct VTermScreen;
struct VTermState;

namespace elsai {

/// One character cell as the view draws it (colours resolved, defaults kept as such so that
/// a theme change repaints them).
struct TerminalCell
{
    enum Flag : quint16 {
        Bold = 1 << 0,
        Italic = 1 << 1,
        Underline = 1 << 2,
        DoubleUnderline = 1 << 3,
        Reverse = 1 << 4,
        Strike = 1 << 5,
        Blink = 1 << 6,
        DefaultFg = 1 << 7,
        DefaultBg = 1 << 8,
        Wide = 1 << 9,         ///< the first half of a two-column character
        Continuation = 1 << 10 ///< the second half: nothing of its own to draw
    };
    char32_t ch = 0; ///< 0: blank
    QRgb fg = 0;
    QRgb bg = 0;
    quint16 flags = DefaultFg | DefaultBg;

    bool has(Flag f) const { return (flags & f) != 0; }
    bool sameLook(const TerminalCell &o) const
    {
        return fg == o.fg && bg == o.bg &&
               (flags & ~(Wide | Continuation)) == (o.flags & ~(Wide | Continuation));
    }
};

/// The terminal's emulation (libvterm) without any drawing: the screen, the alternate screen,
/// the scrollback, the cursor, the modes a program set, and the bytes keys and mouse turn into.
/// Rows are addressed in "lines": 0 .. scrollbackLines()-1 are the scrollback (oldest first),
/// then the screen's rows.
class TerminalScreen : public QObject
{
    Q_OBJECT

public:
    enum class CursorShape { Block, Underline, Bar };
    enum class MouseMode { None, Click, Drag, Move };

    TerminalScreen(int cols, int rows, QObject *parent = nullptr);
    ~TerminalScreen() override;

    int columns() const { return m_cols; }
    int rows() const { return m_rows; }
    void resize(int cols, int rows);

    /// Feeds the program's output.
    void feed(const QByteArray &bytes);

    /// Lines of scrollback kept at most (default 10,000); fewer drops the oldest.
    void setScrollbackLimit(int lines);
    int scrollbackLimit() const { return m_scrollbackLimit; }
    int scrollbackLines() const { return int(m_scrollback.size()); }
    int totalLines() const { return scrollbackLines() + m_rows; }
    /// Lines pushed into the scrollback since the start (a view keeps its place by it).
    qint64 linesScrolled() const { return m_linesScrolled; }

    /// The cells of a line (see the class comment); `cols` long for screen rows, possibly
    /// shorter for scrollback lines (blank beyond).
    std::vector<TerminalCell> line(int index) const;
    /// A screen cell (row 0 = the top of the screen).
    TerminalCell cell(int row, int col) const;
    /// The text of a line, trailing blanks removed; `from`/`to` columns (to exclusive, -1: end).
    QString lineText(int index, int from = 0, int to = -1) const;
    /// The screen's text: its rows joined by '\n', each without trailing blanks.
    QString screenText() const;

    QPoint cursor() const { return m_cursor; } ///< column, row on the screen
    bool cursorVisible() const { return m_cursorVisible; }
    bool cursorBlink() const { return m_cursorBlink; }
    CursorShape cursorShape() const { return m_cursorShape; }
    bool altScreen() const { return m_altScreen; }
    MouseMode mouseMode() const { return m_mouseMode; }
    bool reverseVideo() const { return m_reverse; }
    QString title() const { return m_title; }

    /// The default colours and the 16 ANSI colours from a palette (dark or light set).
    void setPalette(const QPalette &palette);
    QColor defaultForeground() const { return m_defaultFg; }
    QColor defaultBackground() const { return m_defaultBg; }

    // Input: what the program receives comes out of input().
    /// A key with Qt's key code, its text and modifiers; false when nothing was sent.
    bool sendKey(int qtKey, Qt::KeyboardModifiers mods, const QString &text);
    /// A paste: bracketed when the program asked for it (ESC[200~ … ESC[201~).
    void sendPaste(const QString &text);
    /// Mouse reporting (the program asked for it: mouseMode() != None). `button` 1..3, 4/5 for
    /// the wheel; row/col on the screen.
    void sendMouseMove(int row, int col, Qt::KeyboardModifiers mods);
    void sendMouseButton(int button, bool pressed, Qt::KeyboardModifiers mods);
    void sendFocus(bool in);

    /// The rows changed since the last call (screen coordinates), inclusive; {-1, -1}: none.
    /// Flushes libvterm's merged damage first.
    std::pair<int, int> takeDamage();

Q_SIGNALS:
    /// Bytes for the program (keys, paste, mouse, terminal answers to queries).
    void input(const QByteArray &bytes);
    void titleChanged(const QString &title);
    void bell();

private:
    friend struct VTermGlue; // libvterm's callbacks (terminalscreen.cpp)

    TerminalCell convert(const void *vtermCell) const;
    void markDirty(int from, int to);
    void applyColours();

    VTerm *m_vt = nullptr;
    VTermScreen *m_screen = nullptr;
    VTermState *m_state = nullptr;
    int m_cols;
    int m_rows;
    std::deque<std::vector<TerminalCell>> m_scrollback;
    int m_scrollbackLimit = 10000;
    qint64 m_linesScrolled = 0;
    QPoint m_cursor;
    bool m_cursorVisible = true;
    bool m_cursorBlink = true;
    CursorShape m_cursorShape = CursorShape::Block;
    bool m_altScreen = false;
    MouseMode m_mouseMode = MouseMode::None;
    bool m_reverse = false;
    QString m_title;
    QByteArray m_titlePending; ///< a title arriving in pieces (libvterm >= 0.2)
    QColor m_defaultFg = Qt::black;
    QColor m_defaultBg = Qt::white;
    QRgb m_ansi[16] = {};
    int m_dirtyFrom = -1;
    int m_dirtyTo = -1;
};

} // namespace elsai
