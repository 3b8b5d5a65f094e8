// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "consolehistorymodel.h"

#include <QFrame>
#include <QPointer>
#include <QStringDecoder>

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTimer;

namespace elsai {

/// One console command as a block: a header (command, cwd, agent, start time), its output,
/// a status line (exit code, duration, bytes, truncated / timed out / cancelled) and its own
/// Cancel and Save output… buttons. The block only shows; ConsolePanel acts on its signals.
///
/// Output shows what the model's entry keeps: its head, a "[… N bytes dropped here …]" line
/// where the model dropped bytes, then its tail. While the command runs the view streams;
/// when a flood outruns the model's tail between two updates, the view stops following it
/// (one line says so: showing every tail would cost the GUI thread the whole stream). Once
/// a command that dropped bytes has ended, the block is drawn again from the entry: the
/// head's first lines, one gap line, the tail's last lines. A line
/// is never cut silently: a line longer than maxLineLength(), a head that ends or a tail that
/// starts within a line, and output the sandbox's cap cut all say so.
///
/// Text reaches the view through an ordered queue drained in slices of at most
/// maxCharsPerPass() characters / maxLinesPerPass() lines per event-loop pass, so one big
/// update never stalls the GUI thread for long; the queue never holds more than
/// maxBlockCount() lines (older ones could not stay in the view anyway and are replaced by a
/// "[… N lines not shown]" note).
class ConsoleBlock : public QFrame
{
    Q_OBJECT
public:
    /// Shows the entry `id` of `model` (redrawn from it when the palette changes).
    ConsoleBlock(quint64 id, ConsoleHistoryModel *model, QWidget *parent = nullptr);
    ~ConsoleBlock() override;

    static int maxBlockCount() { return 20000; }
    /// Longer lines are cut in the view (Save output… keeps them): text layout of a single
    /// huge line costs more than the view can afford per update.
    static int maxLineLength() { return 4096; }
    static int maxCharsPerPass() { return 32 * 1024; }
    static int maxLinesPerPass() { return 500; }
    /// Lines of output the block grows to before its view scrolls.
    static int maxVisibleLines() { return 14; }

    quint64 id() const { return m_id; }
    bool isRunning() const { return m_running; }
    qsizetype pendingLines() const { return m_pendingLines; }
    bool hasPendingOutput() const
    {
        return m_redrawQueued || !m_pending.isEmpty() || m_pendingDropped > 0;
    }
    QLabel *headerLabel() const { return m_header; }
    QPlainTextEdit *output() const { return m_output; }
    QLabel *statusLabel() const { return m_status; }
    QPushButton *cancelButton() const { return m_cancel; }
    QPushButton *saveButton() const { return m_save; }

    /// Shows what `e` has that the block does not show yet, and its status.
    void update(const ConsoleHistoryModel::Entry &e);
    /// Draws the block again from `e` (palette change, or to settle gaps at the end).
    void redraw(const ConsoleHistoryModel::Entry &e);
    /// The status line's text for an entry.
    static QString statusText(const ConsoleHistoryModel::Entry &e);

Q_SIGNALS:
    void cancelRequested(quint64 id);
    void saveRequested(quint64 id);

protected:
    void changeEvent(QEvent *event) override;

private:
    struct Pending
    {
        QString text;
        int kind;
    };
    void reset();
    void showBytes(const QList<ConsoleHistoryModel::Piece> &pieces, qint64 start, bool settled);
    void appendText(const QString &text, int kind);
    QString clipLines(const QString &text, qsizetype keepLast);
    QByteArray dropUnseenLineBytes(QByteArrayView bytes) const;
    void enqueue(const QString &text, int kind);
    void drainPending();
    void fitHeight();
    void updateStatus(const ConsoleHistoryModel::Entry &e);

    quint64 m_id;
    QPointer<ConsoleHistoryModel> m_model;
    QLabel *m_header;
    QLabel *m_where;
    QPlainTextEdit *m_output;
    QLabel *m_status;
    QPushButton *m_cancel;
    QPushButton *m_save;
    QTimer *m_drainTimer;
    bool m_running = true;
    bool m_headerSet = false;
    bool m_done = false;
    bool m_redrawQueued = false;
    bool m_liveGap = false;         ///< a flood outran the model's tail: no live tail until the end
    qint64 m_shownUpTo = 0;         ///< stream offset of the next byte to show
    qsizetype m_headLinesLeft = -1; ///< redraw: head lines still to show, -1 = no limit
    qsizetype m_headLinesHidden = 0;
    QStringDecoder m_outDecoder{QStringDecoder::Utf8};
    QStringDecoder m_errDecoder{QStringDecoder::Utf8};
    qsizetype m_lineLength = 0; ///< characters on the view's last line
    bool m_lineClipped = false; ///< the last line was cut at maxLineLength()
    bool m_atLineStart = true;  ///< the text shown or queued so far ends with a newline
    QList<Pending> m_pending;   ///< text for the view, oldest first
    qsizetype m_pendingLines = 0;
    qsizetype m_pendingDropped = 0; ///< lines dropped from the queue's front
};

} // namespace elsai
