// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "consolehistorymodel.h"

#include "modelroles.h"

namespace elsai {

namespace {

// New tail pieces start past this size, so trimming the tail's front drops whole pieces and
// moves at most this much memory.
constexpr qsizetype TailPieceBytes = 64 * 1024;
// How far the tail's start may move to reach a line start instead of cutting a line.
constexpr qsizetype LineSearchBytes = 4096;

QString statusText(const ConsoleHistoryModel::Entry &e)
{
    if (e.running)
        return ConsoleHistoryModel::tr("running…");
    if (!e.result)
        return ConsoleHistoryModel::tr("failed");
    const ExecuteResult &r = *e.result;
    QString status =
        r.timedOut ? ConsoleHistoryModel::tr("timed out")
        : r.cancelled
            ? ConsoleHistoryModel::tr("cancelled")
            : ConsoleHistoryModel::tr("exit %1 in %2 ms").arg(r.exitCode).arg(r.durationMs);
    if (r.truncated || e.droppedBytes > 0)
        status += ConsoleHistoryModel::tr(", truncated");
    return status;
}

void addPiece(QList<ConsoleHistoryModel::Piece> &pieces, OutputChannel channel,
              QByteArrayView bytes, qsizetype pieceLimit)
{
    if (!pieces.isEmpty() && pieces.last().channel == channel &&
        pieces.last().data.size() < pieceLimit)
        pieces.last().data.append(bytes);
    else
        pieces.append({channel, bytes.toByteArray()});
}

} // namespace

bool ConsoleHistoryModel::Entry::headEndsMidLine() const
{
    return !head.isEmpty() && !head.last().data.endsWith('\n');
}

QByteArray ConsoleHistoryModel::Entry::channelData(OutputChannel channel) const
{
    QByteArray out;
    for (const QList<Piece> *pieces : {&head, &tail}) {
        for (const Piece &p : *pieces) {
            if (p.channel == channel)
                out += p.data;
        }
    }
    return out;
}

ConsoleHistoryModel::ConsoleHistoryModel(QObject *parent) : QAbstractListModel(parent) {}

int ConsoleHistoryModel::beginCommand(quint64 id, const QString &command, const QString &cwd,
                                      const QString &agent)
{
    Entry e;
    e.id = id;
    e.command = command;
    e.cwd = cwd;
    e.agent = agent;
    e.startedAt = QDateTime::currentDateTime();
    const int row = int(m_entries.size());
    beginInsertRows({}, row, row);
    m_entries.append(std::move(e));
    endInsertRows();
    trimEntries();
    return rowOf(id);
}

void ConsoleHistoryModel::appendOutput(quint64 id, OutputChannel channel, const QByteArray &chunk)
{
    const int row = rowOf(id);
    if (row < 0 || chunk.isEmpty())
        return;
    append(m_entries[row], channel, chunk);
    scheduleChanged(row);
}

void ConsoleHistoryModel::append(Entry &e, OutputChannel channel, QByteArrayView chunk)
{
    if (chunk.isEmpty())
        return;
    e.receivedBytes += chunk.size();
    const qint64 budget = keptBytes();
    const qint64 headCap = budget - budget / 2;
    const qint64 tailCap = budget / 2;
    if (!e.headClosed) {
        const qint64 room = headCap - e.headBytes;
        qsizetype take = qsizetype(qMin<qint64>(room, chunk.size()));
        const bool newRun = e.head.isEmpty() || e.head.last().channel != channel;
        if (newRun && e.head.size() >= maxRuns())
            take = 0;
        if (take < chunk.size()) {
            // The head is full: end it at a line end where the chunk has one.
            const qsizetype nl = chunk.first(take).lastIndexOf('\n');
            if (nl >= 0)
                take = nl + 1;
            else if (e.headBytes > 0 && !e.headEndsMidLine())
                take = 0;
            e.headClosed = true;
        }
        if (take > 0) {
            addPiece(e.head, channel, chunk.first(take), std::numeric_limits<qsizetype>::max());
            e.headBytes += take;
        }
        chunk = chunk.sliced(take);
        if (chunk.isEmpty())
            return;
    }
    if (e.tail.isEmpty())
        e.tailStart = e.receivedBytes - chunk.size();
    if (chunk.size() > tailCap) {
        // Only its end can stay: drop the rest (and the whole current tail) before copying.
        const qsizetype skip = chunk.size() - qsizetype(tailCap);
        const bool cleanCut = chunk.at(skip - 1) == '\n';
        e.droppedBytes += e.tailBytes + skip;
        e.tailStart = e.receivedBytes - (chunk.size() - skip);
        e.tail.clear();
        e.tailBytes = 0;
        chunk = chunk.sliced(skip);
        e.tailStartsMidLine = !cleanCut;
        if (!cleanCut) {
            const qsizetype nl = chunk.first(qMin(chunk.size(), LineSearchBytes)).indexOf('\n');
            if (nl >= 0) {
                e.droppedBytes += nl + 1;
                e.tailStart += nl + 1;
                chunk = chunk.sliced(nl + 1);
                e.tailStartsMidLine = false;
            }
        }
        if (chunk.isEmpty())
            return;
    }
    addPiece(e.tail, channel, chunk, TailPieceBytes);
    e.tailBytes += chunk.size();
    trimTail(e);
}

void ConsoleHistoryModel::trimTail(Entry &e)
{
    const qint64 tailCap = keptBytes() / 2;
    qint64 excess = e.tailBytes - tailCap;
    if (excess <= 0 && e.tail.size() <= maxRuns())
        return;
    char lastDropped = '\n';
    const auto drop = [&e, &lastDropped](qsizetype n) {
        Piece &front = e.tail.first();
        lastDropped = front.data.at(n - 1);
        e.tailBytes -= n;
        e.droppedBytes += n;
        e.tailStart += n;
        if (n == front.data.size())
            e.tail.removeFirst();
        else
            front.data.remove(0, n);
    };
    while (e.tail.size() > maxRuns()) {
        excess -= e.tail.first().data.size();
        drop(e.tail.first().data.size());
    }
    while (excess > 0 && !e.tail.isEmpty()) {
        const qsizetype n = qsizetype(qMin<qint64>(excess, e.tail.first().data.size()));
        drop(n);
        excess -= n;
    }
    // Start the tail at a line start where one is near, else say its first line is cut.
    e.tailStartsMidLine = lastDropped != '\n';
    if (e.tailStartsMidLine && !e.tail.isEmpty()) {
        const QByteArray &front = e.tail.first().data;
        const qsizetype nl =
            QByteArrayView(front).first(qMin(front.size(), LineSearchBytes)).indexOf('\n');
        if (nl >= 0) {
            drop(nl + 1);
            e.tailStartsMidLine = false;
        }
    }
}

void ConsoleHistoryModel::finishCommand(quint64 id, const ExecuteResult &result,
                                        std::optional<FullOutput> full)
{
    const int row = rowOf(id);
    if (row < 0)
        return;
    Entry &e = m_entries[row];
    e.running = false;
    // Callers that did not stream still get the output shown.
    if (e.receivedBytes == 0) {
        append(e, OutputChannel::Stdout, result.output.toUtf8());
        append(e, OutputChannel::Stderr, result.stderr_.toUtf8());
    }
    e.result = result;
    e.result->output.clear();
    e.result->stderr_.clear();
    if (e.droppedBytes > 0) {
        // What the blocks do not hold, for "save output" (within the sandbox's cap); a
        // result that holds less than the stream showed is no better than head and tail.
        if (!full)
            full = FullOutput{result.output.toUtf8(), result.stderr_.toUtf8()};
        QByteArray out = std::move(full->stdoutData);
        QByteArray err = std::move(full->stderrData);
        if (out.size() + err.size() > e.keptBytes()) {
            e.fullStdout = std::move(out);
            e.fullStderr = std::move(err);
            e.hasFullOutput = true;
            releaseFullOutputs();
        }
    }
    // No trimming here: the finished row must still be there for its coalesced update.
    scheduleChanged(row);
}

void ConsoleHistoryModel::releaseFullOutputs()
{
    qint64 total = 0;
    int newest = -1;
    for (int row = 0; row < m_entries.size(); ++row) {
        total += m_entries.at(row).fullOutputBytes();
        if (m_entries.at(row).hasFullOutput)
            newest = row;
    }
    for (int row = 0; row < newest && total > maxFullOutputBytes(); ++row) {
        Entry &e = m_entries[row];
        if (!e.hasFullOutput)
            continue;
        total -= e.fullOutputBytes();
        e.fullStdout = QByteArray();
        e.fullStderr = QByteArray();
        e.hasFullOutput = false;
    }
}

void ConsoleHistoryModel::failCommand(quint64 id, const QString &errorType, const QString &message)
{
    const int row = rowOf(id);
    if (row < 0)
        return;
    Entry &e = m_entries[row];
    e.running = false;
    e.result.reset();
    // The error is kept in full even when the output filled the budget.
    e.failure = errorType + QStringLiteral(": ") + message;
    scheduleChanged(row);
}

int ConsoleHistoryModel::rowOf(quint64 id) const
{
    // Updates are nearly always for the newest commands.
    for (int row = int(m_entries.size()) - 1; row >= 0; --row) {
        if (m_entries.at(row).id == id)
            return row;
    }
    return -1;
}

QStringList ConsoleHistoryModel::commandHistory() const
{
    QStringList out;
    for (const Entry &e : m_entries) {
        if (e.command.trimmed().isEmpty() || (!out.isEmpty() && out.last() == e.command))
            continue;
        out.append(e.command);
    }
    return out;
}

QByteArray ConsoleHistoryModel::savedOutput(int row, bool *complete) const
{
    const Entry &e = m_entries.at(row);
    QByteArray out;
    const auto newline = [&out] {
        if (!out.isEmpty() && !out.endsWith('\n'))
            out += '\n';
    };
    const bool whole = e.hasFullOutput || e.droppedBytes == 0;
    if (complete)
        *complete = whole;
    if (whole) {
        out = e.hasFullOutput ? e.fullStdout : e.stdoutData();
        const QByteArray err = e.hasFullOutput ? e.fullStderr : e.stderrData();
        if (!err.isEmpty()) {
            newline();
            out += "[stderr]\n" + err;
        }
    } else {
        // Only the kept stream remains: in arrival order, the gap stated where it is.
        for (const Piece &p : e.head)
            out += p.data;
        newline();
        out += tr("[… %1 bytes dropped here: this file holds the first %2 and the last %3 "
                  "bytes of the output (stdout and stderr as they arrived) …]\n")
                   .arg(e.droppedBytes)
                   .arg(e.headBytes)
                   .arg(e.tailBytes)
                   .toUtf8();
        for (const Piece &p : e.tail)
            out += p.data;
    }
    if (!e.failure.isEmpty()) {
        newline();
        out += e.failure.toUtf8() + '\n';
    }
    return out;
}

void ConsoleHistoryModel::setMaxEntries(int n)
{
    m_maxEntries = qMax(1, n);
    trimEntries();
}

void ConsoleHistoryModel::trimEntries()
{
    qsizetype excess = m_entries.size() - m_maxEntries;
    for (int row = 0; excess > 0 && row < m_entries.size();) {
        if (m_entries.at(row).running) {
            ++row; // a running command keeps its row (and so its Cancel)
            continue;
        }
        int last = row;
        while (last + 1 < m_entries.size() && last - row + 1 < excess &&
               !m_entries.at(last + 1).running)
            ++last;
        beginRemoveRows({}, row, last);
        m_entries.remove(row, last - row + 1);
        endRemoveRows();
        excess -= last - row + 1;
    }
}

int ConsoleHistoryModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_entries.size());
}

QVariant ConsoleHistoryModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Entry &e = m_entries.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return QStringLiteral("$ %1 — %2").arg(e.command, statusText(e));
    case Qt::ToolTipRole:
        return tr("in %1, started %2")
            .arg(e.cwd, e.startedAt.toString(QStringLiteral("yyyy-MM-dd hh:mm:ss")));
    case Roles::CommandRole:
        return e.command;
    case Roles::ExitCodeRole:
        return e.result ? QVariant(e.result->exitCode) : QVariant();
    case Roles::RunningRole:
        return e.running;
    case Roles::OutputRole:
        return QString::fromUtf8(e.stdoutData());
    case Roles::StderrRole: {
        QString err = QString::fromUtf8(e.stderrData());
        if (!e.failure.isEmpty()) {
            if (!err.isEmpty() && !err.endsWith(QLatin1Char('\n')))
                err += QLatin1Char('\n');
            err += e.failure;
        }
        return err;
    }
    case Roles::DurationRole:
        if (e.result)
            return e.result->durationMs;
        return e.running ? e.startedAt.msecsTo(QDateTime::currentDateTime()) : QVariant();
    }
    return {};
}

QHash<int, QByteArray> ConsoleHistoryModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractListModel::roleNames();
    names.insert(Roles::CommandRole, "command");
    names.insert(Roles::ExitCodeRole, "exitCode");
    names.insert(Roles::RunningRole, "running");
    names.insert(Roles::OutputRole, "output");
    names.insert(Roles::StderrRole, "stderr");
    names.insert(Roles::DurationRole, "duration");
    return names;
}

void ConsoleHistoryModel::scheduleChanged(int row)
{
    const quint64 id = m_entries.at(row).id;
    if (!m_dirty.contains(id))
        m_dirty.append(id);
    if (m_flushQueued)
        return;
    m_flushQueued = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_flushQueued = false;
            const QList<quint64> dirty = std::exchange(m_dirty, {});
            for (quint64 dirtyId : dirty) {
                const int dirtyRow = rowOf(dirtyId);
                if (dirtyRow >= 0)
                    Q_EMIT dataChanged(index(dirtyRow), index(dirtyRow));
            }
        },
        Qt::QueuedConnection);
}

} // namespace elsai
