// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "process.h"
#include "types.h"

#include <QAbstractListModel>
#include <QDateTime>
#include <QList>

namespace elsai {

/// The commands run in one sandbox's console, newest last, with their results.
///
/// Output retention: each entry keeps the head and the tail of its stream (stdout and stderr
/// together, in arrival order), at most keptBytes() in all: the first half of that budget as
/// the head, the last half as the tail, and counts the bytes dropped in between. The budget
/// follows the sandbox's output cap (setOutputCap(), the engine keeps no more than that
/// anyway), bounded by maxKeptBytes() so a sandbox with a huge cap cannot grow the window's
/// memory. The head ends at a line end where the stream allows it, and the tail starts at one;
/// where a line had to be cut, headEndsMidLine() / tailStartsMidLine say so for the view.
///
/// A finished entry that dropped bytes also keeps the engine's whole result (within the
/// sandbox's cap) for "save output", for the newest entries up to maxFullOutputBytes() in
/// all (the newest one always); older ones release it (savedOutput() then says incomplete).
///
/// Output changes are coalesced into at most one dataChanged per entry per event-loop pass.
/// Trimming to maxEntries() (when a command begins) removes the oldest finished entries only:
/// a running command keeps its row. History navigation (up/down in the console) uses
/// commandHistory(). GUI thread only.
class ConsoleHistoryModel : public QAbstractListModel
{
    Q_OBJECT

public:
    /// Bytes of one channel, in arrival order.
    struct Piece
    {
        OutputChannel channel;
        QByteArray data;
    };

    struct Entry
    {
        quint64 id = 0;
        QString command;
        QString cwd;
        QString agent;
        QDateTime startedAt;
        bool running = true;
        QList<Piece> head; ///< the stream's first bytes
        QList<Piece> tail; ///< its last bytes after the head
        qint64 headBytes = 0;
        qint64 tailBytes = 0;
        qint64 tailStart = 0;     ///< stream offset of the tail's first byte
        qint64 receivedBytes = 0; ///< every byte of the stream the model was handed
        qint64 droppedBytes = 0;  ///< not kept: between the head and the tail
        bool headClosed = false;  ///< later bytes go to the tail
        bool tailStartsMidLine = false;
        QString failure; ///< "ErrorType: message" of a command that failed to run
        /// Exit code, flags and duration; its output strings are dropped (the bounded copies
        /// above, and fullStdout/fullStderr, are what the model keeps).
        std::optional<ExecuteResult> result;
        bool hasFullOutput = false; ///< fullStdout/fullStderr hold the engine's result
        QByteArray fullStdout;
        QByteArray fullStderr;

        bool headEndsMidLine() const;
        qint64 keptBytes() const { return headBytes + tailBytes; }
        /// Kept bytes of one channel: its head bytes, then its tail bytes.
        QByteArray channelData(OutputChannel channel) const;
        QByteArray stdoutData() const { return channelData(OutputChannel::Stdout); }
        QByteArray stderrData() const { return channelData(OutputChannel::Stderr); }
        qint64 fullOutputBytes() const { return fullStdout.size() + fullStderr.size(); }
    };

    /// The engine's whole result as bytes, for "save output".
    struct FullOutput
    {
        QByteArray stdoutData;
        QByteArray stderrData;
    };

    explicit ConsoleHistoryModel(QObject *parent = nullptr);

    /// Adds a running entry; returns its row.
    int beginCommand(quint64 id, const QString &command, const QString &cwd,
                     const QString &agent = QString());
    void appendOutput(quint64 id, OutputChannel channel, const QByteArray &chunk);
    /// `full`: the result's output already as UTF-8 (converted off the GUI thread: a flood's
    /// result is tens of megabytes); none: converted here when needed.
    void finishCommand(quint64 id, const ExecuteResult &result,
                       std::optional<FullOutput> full = std::nullopt);
    /// Marks a command that failed to run at all (error type + message, shown in full).
    void failCommand(quint64 id, const QString &errorType, const QString &message);

    int rowOf(quint64 id) const;
    const Entry &entry(int row) const { return m_entries.at(row); }
    /// Distinct commands, oldest first, for up/down navigation.
    QStringList commandHistory() const;

    /// What "save output" writes for a row: stdout, then "[stderr]" and stderr when there is
    /// any, then the failure. The engine's whole result when it is kept (or nothing was
    /// dropped); else the kept head and tail with a line saying how much is missing, and
    /// `complete` false.
    QByteArray savedOutput(int row, bool *complete = nullptr) const;

    /// The sandbox's output cap (max_output_bytes: stdout and stderr together).
    qint64 outputCap() const { return m_outputCap; }
    void setOutputCap(qint64 bytes) { m_outputCap = qMax<qint64>(0, bytes); }
    /// Head plus tail budget of one entry: the cap, at most maxKeptBytes().
    qint64 keptBytes() const { return qMin(m_outputCap, m_maxKeptBytes); }
    qint64 maxKeptBytes() const { return m_maxKeptBytes; }
    void setMaxKeptBytes(qint64 bytes) { m_maxKeptBytes = qMax<qint64>(2, bytes); }
    /// Whole results kept for saving, across entries.
    static qint64 maxFullOutputBytes() { return 64 << 20; }
    /// Pieces per head and per tail (bounds memory under alternating stdout / stderr).
    static int maxRuns() { return 10000; }
    int maxEntries() const { return m_maxEntries; }
    void setMaxEntries(int n);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    void append(Entry &e, OutputChannel channel, QByteArrayView chunk);
    void trimTail(Entry &e);
    void releaseFullOutputs();
    void trimEntries();
    void scheduleChanged(int row);
    QList<Entry> m_entries;
    QList<quint64> m_dirty;
    bool m_flushQueued = false;
    qint64 m_outputCap = 100000;
    qint64 m_maxKeptBytes = 2 << 20;
    int m_maxEntries = 500;
};

} // namespace elsai
