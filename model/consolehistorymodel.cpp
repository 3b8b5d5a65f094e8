#include "consolehistorymodel.h"

#include "modelroles.h"

namespace elsai {

namespace {

// Keeps at most `cap` bytes in `kept`, counting the rest; returns whether `kept` grew.
bool appendBounded(QByteArray &kept, qint64 &dropped, const QByteArray &chunk, qint64 cap)
{
    const qint64 room = qMax<qint64>(0, cap - kept.size());
    const qint64 take = qMin<qint64>(room, chunk.size());
    if (take > 0)
        kept.append(chunk.constData(), take);
    dropped += chunk.size() - take;
    return take > 0;
}

QString statusText(const ConsoleHistoryModel::Entry &e)
{
    if (e.running)
        return ConsoleHistoryModel::tr("running…");
    if (!e.result)
        return ConsoleHistoryModel::tr("failed");
    const ExecuteResult &r = *e.result;
    QString status = r.timedOut    ? ConsoleHistoryModel::tr("timed out")
                     : r.cancelled ? ConsoleHistoryModel::tr("cancelled")
                                   : ConsoleHistoryModel::tr("exit %1 in %2 ms")
                                         .arg(r.exitCode)
                                         .arg(r.durationMs);
    if (r.truncated || e.droppedBytes > 0)
        status += ConsoleHistoryModel::tr(", truncated");
    return status;
}

} // namespace

ConsoleHistoryModel::ConsoleHistoryModel(QObject *parent)
    : QAbstractListModel(parent)
{
}

int ConsoleHistoryModel::beginCommand(quint64 id, const QString &command, const QString &cwd)
{
    const int excess = int(m_entries.size()) + 1 - m_maxEntries;
    if (excess > 0) {
        beginRemoveRows({}, 0, excess - 1);
        m_entries.remove(0, excess);
        endRemoveRows();
    }
    Entry e;
    e.id = id;
    e.command = command;
    e.cwd = cwd;
    e.startedAt = QDateTime::currentDateTime();
    const int row = int(m_entries.size());
    beginInsertRows({}, row, row);
    m_entries.append(std::move(e));
    endInsertRows();
    return row;
}

void ConsoleHistoryModel::appendOutput(quint64 id, OutputChannel channel,
                                       const QByteArray &chunk)
{
    const int row = rowOf(id);
    if (row < 0 || chunk.isEmpty())
        return;
    Entry &e = m_entries[row];
    QByteArray &kept = channel == OutputChannel::Stdout ? e.stdoutData : e.stderrData;
    if (!appendBounded(kept, e.droppedBytes, chunk, m_outputCap))
        return;
    if (!e.runs.isEmpty() && e.runs.last().channel == channel)
        e.runs.last().end = kept.size();
    else if (e.runs.size() < maxRuns())
        e.runs.append({channel, kept.size()});
    scheduleChanged(row);
}

void ConsoleHistoryModel::finishCommand(quint64 id, const ExecuteResult &result)
{
    const int row = rowOf(id);
    if (row < 0)
        return;
    Entry &e = m_entries[row];
    e.running = false;
    // Callers that did not stream still get the output shown.
    if (e.stdoutData.isEmpty())
        appendBounded(e.stdoutData, e.droppedBytes, result.output.toUtf8(), m_outputCap);
    if (e.stderrData.isEmpty())
        appendBounded(e.stderrData, e.droppedBytes, result.stderr_.toUtf8(), m_outputCap);
    // Keep the status only: the full output would defeat outputCap (a flood is megabytes).
    e.result = result;
    e.result->output.clear();
    e.result->stderr_.clear();
    scheduleChanged(row);
}

void ConsoleHistoryModel::failCommand(quint64 id, const QString &errorType,
                                      const QString &message)
{
    const int row = rowOf(id);
    if (row < 0)
        return;
    Entry &e = m_entries[row];
    e.running = false;
    e.result.reset();
    if (!e.stderrData.isEmpty() && !e.stderrData.endsWith('\n'))
        e.stderrData.append('\n');
    // The error is shown in full even when the output filled the cap.
    e.stderrData.append((errorType + QStringLiteral(": ") + message).toUtf8());
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

void ConsoleHistoryModel::setMaxEntries(int n)
{
    m_maxEntries = qMax(1, n);
    const int excess = int(m_entries.size()) - m_maxEntries;
    if (excess <= 0)
        return;
    beginRemoveRows({}, 0, excess - 1);
    m_entries.remove(0, excess);
    endRemoveRows();
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
        return QString::fromUtf8(e.stdoutData);
    case Roles::StderrRole:
        return QString::fromUtf8(e.stderrData);
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
