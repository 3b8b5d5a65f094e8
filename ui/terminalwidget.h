// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "ptysession.h"
#include "terminalscreen.h"

#include <QElapsedTimer>
#include <QFont>
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QScrollBar;

namespace elsai {

class PtySession;

/// A terminal view: libvterm's emulation (TerminalScreen) drawn with QPainter, after
/// Konsole's TerminalDisplay. Only the rows that changed are repainted, at most once per
/// frame, whatever the rate of output. Keys go to the program (Ctrl+C, Ctrl+D, Ctrl+Z, arrows,
/// Home/End, PgUp/PgDn, F1–F12, Alt combinations); Ctrl+Shift+C / Ctrl+Shift+V copy and paste
/// (bracketed when the program asked), Shift+PgUp / Shift+PgDn scroll back, Ctrl+Shift+F
/// asks for the find bar. The mouse selects (Shift with a program that reports the mouse),
/// the wheel scrolls back or reaches the program. The screen's text is exposed through the
/// accessibility text interface.
class TerminalWidget : public QWidget
{
    Q_OBJECT

public:
    /// The settings keys (QSettings "elsai" / "workbench") it reads.
    static constexpr char FontKey[] = "editor/font";
    static constexpr char ScrollbackKey[] = "terminal/scrollbackLines";
    static constexpr int DefaultScrollback = 10000;

    explicit TerminalWidget(QWidget *parent = nullptr);
    ~TerminalWidget() override;

    /// Connects the view to a session: its output is shown, keys go to it, the window size
    /// follows the view. The session is not owned.
    void setSession(PtySession *session);
    PtySession *session() const { return m_session; }
    TerminalScreen *screen() const { return m_screen; }

    void setTerminalFont(const QFont &font);
    QFont terminalFont() const { return m_font; }
    QSizeF cellSize() const { return {m_cellWidth, m_cellHeight}; }

    /// The line at the top of the view (see TerminalScreen's lines); the bottom: the screen.
    int topLine() const;
    bool isScrolledBack() const { return m_scrollBack > 0; }
    void scrollToBottom();
    void scrollLines(int delta); ///< negative: back in time

    bool hasSelection() const;
    QString selectedText() const;
    void selectAll();
    void clearSelection();
    void copy();
    void paste();
    /// Finds `text` (case-insensitive) from the selection or the bottom, backwards by default;
    /// selects it and scrolls it into view. False when not found.
    bool find(const QString &text, bool backwards = true);

    /// The visible screen's text, rows joined by '\n' (what accessibility reports).
    QString visibleText() const;

    /// Repaints (frames) so far: the tests and the bench read it.
    qint64 frameCount() const { return m_frames; }

Q_SIGNALS:
    void titleChanged(const QString &title);
    void findRequested();

protected:
    bool event(QEvent *e) override;
    void paintEvent(QPaintEvent *e) override;
    void resizeEvent(QResizeEvent *e) override;
    void keyPressEvent(QKeyEvent *e) override;
    void inputMethodEvent(QInputMethodEvent *e) override;
    QVariant inputMethodQuery(Qt::InputMethodQuery query) const override;
    void mousePressEvent(QMouseEvent *e) override;
    void mouseMoveEvent(QMouseEvent *e) override;
    void mouseReleaseEvent(QMouseEvent *e) override;
    void mouseDoubleClickEvent(QMouseEvent *e) override;
    void wheelEvent(QWheelEvent *e) override;
    void focusInEvent(QFocusEvent *e) override;
    void focusOutEvent(QFocusEvent *e) override;
    bool focusNextPrevChild(bool next) override;
    void changeEvent(QEvent *e) override;

private:
    struct Pos
    {
        qint64 line = 0; ///< lines counted from the first ever (survives dropped scrollback)
        int col = 0;
        bool operator<(const Pos &o) const
        {
            return line < o.line || (line == o.line && col < o.col);
        }
        bool operator==(const Pos &o) const = default;
    };
    void onOutput(const QByteArray &bytes);
    void scheduleFrame();
    void frame();
    void updateGeometryFromSize();
    void updateScrollBar();
    QRectF cellRect(int viewRow, int col, int width = 1) const;
    Pos posAt(const QPoint &p) const;
    QPoint screenCellAt(const QPoint &p) const; ///< column, row on the screen
    qint64 droppedLines() const;
    bool reportsMouse(Qt::KeyboardModifiers mods) const;
    int mouseButton(Qt::MouseButton b) const;
    bool isSelected(qint64 line, int col) const;
    void drawRow(QPainter &p, int viewRow, const std::vector<TerminalCell> &cells, qint64 line);
    void drawCursor(QPainter &p);

    TerminalScreen *m_screen;
    QPointer<PtySession> m_session;
    QScrollBar *m_scrollBar;
    QFont m_font;
    QFont m_boldFont, m_italicFont, m_boldItalicFont;
    qreal m_cellWidth = 8;
    qreal m_cellHeight = 16;
    qreal m_ascent = 12;
    int m_scrollBack = 0; ///< lines above the screen the view shows
    qint64 m_lastScrolled = 0;
    QTimer m_frameTimer;
    QElapsedTimer m_sinceFrame;
    QTimer m_blinkTimer;
    bool m_blinkOn = true;
    bool m_selecting = false;
    bool m_hasSelection = false;
    Pos m_selAnchor, m_selEnd;
    bool m_mouseReported = false; ///< a press went to the program; so does its release
    qint64 m_frames = 0;
};

} // namespace elsai
