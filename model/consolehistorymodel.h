#pragma once

#include "process.h"
#include "types.h"

#include <QAbstractListModel>
#include <QDateTime>
#include <QList>

namespace elsai {

/// The commands run in one sandbox's console, newest last, with their results.
///
/// Output is kept per entry up to outputCap() bytes per channel (the rest counted, not kept),
/// so a flood neither grows memory without bound nor costs a row update per chunk: output
/// changes are coalesced into at most one dataChanged per entry per event-loop pass.
/// History navigation (up/down in the console) uses commandAt(). GUI thread only.
class ConsoleHistoryModel : public QAbstractListModel
{
    Q_OBJECT

public:
    struct Entry
    {
        quint64 id = 0;
        QString command;
        QString cwd;
        QDateTime startedAt;
        bool running = true;
        QByteArray stdoutData;
        QByteArray stderrData;
        /// The order stdout and stderr arrived in: runs of one channel, each ending at an
        /// offset into that channel's kept bytes. A redraw replays them to keep the
        /// interleaving; bytes past the last run (a result that was not streamed, a failure
        /// message, more than maxRuns() switches) follow, stdout first.
        struct Run
        {
            OutputChannel channel;
            qsizetype end;
        };
        QList<Run> runs;
        qint64 droppedBytes = 0; ///< beyond outputCap
        /// Exit code, flags and duration; its output strings are dropped (the bounded copies
        /// above are what the model keeps).
        std::optional<ExecuteResult> result;
    };

    explicit ConsoleHistoryModel(QObject *parent = nullptr);

    /// Adds a running entry; returns its row.
    int beginCommand(quint64 id, const QString &command, const QString &cwd);
    void appendOutput(quint64 id, OutputChannel channel, const QByteArray &chunk);
    void finishCommand(quint64 id, const ExecuteResult &result);
    /// Marks a command that failed to run at all (error type + message as stderr).
    void failCommand(quint64 id, const QString &errorType, const QString &message);

    int rowOf(quint64 id) const;
    const Entry &entry(int row) const { return m_entries.at(row); }
    /// Distinct commands, oldest first, for up/down navigation.
    QStringList commandHistory() const;

    qint64 outputCap() const { return m_outputCap; }
    /// Channel switches recorded per entry (bounds memory under alternating output).
    static int maxRuns() { return 10000; }
    void setOutputCap(qint64 bytes) { m_outputCap = bytes; }
    int maxEntries() const { return m_maxEntries; }
    void setMaxEntries(int n);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

private:
    void scheduleChanged(int row);
    QList<Entry> m_entries;
    QList<quint64> m_dirty;
    bool m_flushQueued = false;
    qint64 m_outputCap = 1 << 20;
    int m_maxEntries = 500;
};

} // namespace elsai
