// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "auditlogmodel.h"

#include <cstdio>
#include <limits>

#include "errors.h"
#include "hostfiles.h"
#include "modelroles.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMutex>

namespace elsai {

namespace {

// Forwards events from any thread to the model. The model may be destroyed while a worker is
// inside record() (AuditLog calls sinks outside its lock), so the model pointer is only used
// under the mutex and detach() clears it. Events are queued here and drained by one posted
// call, so a burst costs one event-loop event, not one per record.
class ModelAuditSink : public AuditSink, public std::enable_shared_from_this<ModelAuditSink>
{
public:
    explicit ModelAuditSink(AuditLogModel *model) : m_model(model) {}

    void record(const AuditEvent &event) override
    {
        QMutexLocker lock(&m_mutex);
        if (!m_model)
            return;
        m_queue.append(event);
        if (m_queue.size() > 1)
            return; // a drain is already posted
        AuditLogModel *model = m_model;
        QMetaObject::invokeMethod(
            model,
            [weak = weak_from_this(), model] {
                if (const auto self = weak.lock())
                    self->drainInto(model);
            },
            Qt::QueuedConnection);
    }

    // Runs on the model's thread (the posted call is dropped if the model dies first).
    void drainInto(AuditLogModel *model)
    {
        QList<AuditEvent> events;
        {
            QMutexLocker lock(&m_mutex);
            if (m_model != model)
                return;
            events.swap(m_queue);
        }
        for (const AuditEvent &e : std::as_const(events))
            model->append(e);
    }

    void detach()
    {
        QMutexLocker lock(&m_mutex);
        m_model = nullptr;
        m_queue.clear();
    }

private:
    QMutex m_mutex;
    AuditLogModel *m_model;
    QList<AuditEvent> m_queue;
};

// hh:mm:ss.zzz in local time without a toLocalTime() per cell: the UTC offset is looked up
// once per 15-minute bucket (zone transitions fall on such boundaries) and cached; a view
// asks for neighbouring rows, so the cache nearly always hits.
QString localClockText(const QDateTime &timestamp)
{
    if (!timestamp.isValid())
        return {};
    constexpr qint64 bucketMs = 15 * 60 * 1000;
    constexpr qint64 dayMs = 24 * 60 * 60 * 1000;
    const qint64 ms = timestamp.toMSecsSinceEpoch();
    const qint64 bucket = ms >= 0 ? ms / bucketMs : -((-ms + bucketMs - 1) / bucketMs);
    thread_local qint64 cachedBucket = std::numeric_limits<qint64>::min();
    thread_local qint64 offsetMs = 0;
    if (bucket != cachedBucket) {
        offsetMs = qint64(QDateTime::fromMSecsSinceEpoch(bucket * bucketMs).offsetFromUtc()) * 1000;
        cachedBucket = bucket;
    }
    const qint64 inDay = ((ms + offsetMs) % dayMs + dayMs) % dayMs;
    char text[16];
    std::snprintf(text, sizeof text, "%02d:%02d:%02d.%03d", int(inDay / 3600000),
                  int(inDay / 60000 % 60), int(inDay / 1000 % 60), int(inDay % 1000));
    return QString::fromLatin1(text);
}

QString detailsText(const QJsonObject &fields, QChar separator)
{
    QStringList parts;
    for (auto it = fields.begin(); it != fields.end(); ++it)
        parts.append(it.key() + QLatin1Char('=') + AuditLogModel::fieldText(it.value()));
    return parts.join(separator);
}

} // namespace

QString AuditLogModel::fieldText(const QJsonValue &v, bool itemPerLine)
{
    switch (v.type()) {
    case QJsonValue::String:
        return v.toString();
    case QJsonValue::Bool:
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double:
        return v.toVariant().toString();
    case QJsonValue::Array:
        if (itemPerLine) {
            QStringList items;
            for (const QJsonValue &item : v.toArray())
                items.append(fieldText(item));
            return items.join(QLatin1Char('\n'));
        }
        return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object:
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Undefined:
        break;
    }
    return {};
}

QString AuditLogModel::columnText(const AuditEvent &e, int column)
{
    switch (column) {
    case AuditLogModel::TimeColumn:
        return localClockText(e.timestamp);
    case AuditLogModel::EventColumn:
        return e.event;
    case AuditLogModel::WorkspaceColumn:
        return e.workspaceId;
    case AuditLogModel::ActorColumn:
        return e.actor;
    case AuditLogModel::OutcomeColumn:
        return e.outcome;
    case AuditLogModel::DetailsColumn:
        return detailsText(e.fields, QLatin1Char(' '));
    }
    return {};
}

AuditLogModel::AuditLogModel(QObject *parent) : QAbstractTableModel(parent)
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(50);
    connect(&m_timer, &QTimer::timeout, this, &AuditLogModel::flush);
}

AuditLogModel::~AuditLogModel()
{
    unsubscribe();
}

void AuditLogModel::subscribe()
{
    if (m_sink)
        return;
    m_sink = std::make_shared<ModelAuditSink>(this);
    AuditLog::instance().addSink(m_sink);
}

void AuditLogModel::unsubscribe()
{
    if (!m_sink)
        return;
    // Detach first: removeSink() does not wait for a record() already running on a worker.
    static_cast<ModelAuditSink *>(m_sink.get())->detach();
    AuditLog::instance().removeSink(m_sink);
    m_sink.reset();
}

void AuditLogModel::append(const AuditEvent &event)
{
    m_pending.append(event);
    if (m_pending.size() >= m_batchSize)
        flush();
    else if (!m_timer.isActive())
        m_timer.start();
}

void AuditLogModel::flush()
{
    m_timer.stop();
    if (m_pending.isEmpty())
        return;
    QList<AuditEvent> batch;
    batch.swap(m_pending);

    // A burst larger than the cap: its oldest events never become rows.
    const qsizetype skipped = qMax<qsizetype>(0, batch.size() - m_rowCap);
    const qsizetype incoming = batch.size() - skipped;
    const qsizetype excess = qMax<qsizetype>(0, qsizetype(m_rows.size()) + incoming - m_rowCap);
    if (excess > 0) {
        beginRemoveRows({}, 0, int(excess - 1));
        m_rows.erase(m_rows.begin(), m_rows.begin() + excess);
        endRemoveRows();
    }
    const int first = int(m_rows.size());
    beginInsertRows({}, first, first + int(incoming) - 1);
    m_rows.insert(m_rows.end(), batch.cbegin() + skipped, batch.cend());
    endInsertRows();
    if (excess + skipped > 0)
        Q_EMIT rowsTrimmed(int(excess + skipped));
}

void AuditLogModel::clear()
{
    m_timer.stop();
    m_pending.clear();
    if (m_rows.empty())
        return;
    beginRemoveRows({}, 0, int(m_rows.size()) - 1);
    m_rows.clear();
    endRemoveRows();
}

void AuditLogModel::setRowCap(int cap)
{
    m_rowCap = qMax(1, cap);
    const int excess = int(m_rows.size()) - m_rowCap;
    if (excess <= 0)
        return;
    beginRemoveRows({}, 0, excess - 1);
    m_rows.erase(m_rows.begin(), m_rows.begin() + excess);
    endRemoveRows();
    Q_EMIT rowsTrimmed(excess);
}

bool AuditLogModel::exportJsonLines(const QString &path, const QList<int> &rows,
                                    QString *error) const
{
    auto fail = [error](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    for (int row : rows) {
        if (row < 0 || row >= rowCount())
            return fail(QStringLiteral("row %1 is out of range").arg(row));
    }
    QByteArray text;
    auto writeRow = [&text](const AuditEvent &e) {
        text += QJsonDocument(e.toJson()).toJson(QJsonDocument::Compact) + '\n';
    };
    if (rows.isEmpty()) {
        for (const AuditEvent &e : m_rows)
            writeRow(e);
    } else {
        for (int row : rows)
            writeRow(m_rows.at(row));
    }
    // an export never creates folders: a missing one is a mistyped path
    if (!QFileInfo(QFileInfo(path).absolutePath()).isDir())
        return fail(QStringLiteral("cannot write '%1': the folder does not exist").arg(path));
    try {
        writeHostFileAtomic(path, text);
    } catch (const SandboxError &e) {
        return fail(e.message());
    }
    return true;
}

int AuditLogModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int AuditLogModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AuditLogModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const AuditEvent &e = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return columnText(e, index.column());
    case Qt::ToolTipRole:
        if (index.column() == TimeColumn)
            return e.timestamp.toString(Qt::ISODateWithMs);
        if (index.column() == DetailsColumn && !e.fields.isEmpty())
            return detailsText(e.fields, QLatin1Char('\n'));
        return {};
    case Roles::AuditEventRole:
        return QVariant::fromValue(e);
    case Roles::AuditJsonRole:
        return e.toJson();
    case Roles::TimestampRole:
        return e.timestamp;
    case Roles::EventNameRole:
        return e.event;
    case Roles::WorkspaceIdRole:
        return e.workspaceId;
    case Roles::ActorRole:
        return e.actor;
    case Roles::OutcomeRole:
        return e.outcome;
    case Roles::SequenceRole:
        return e.sequence;
    }
    return {};
}

QVariant AuditLogModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case EventColumn:
        return tr("Event");
    case WorkspaceColumn:
        return tr("Workspace");
    case ActorColumn:
        return tr("Actor");
    case OutcomeColumn:
        return tr("Outcome");
    case DetailsColumn:
        return tr("Details");
    }
    return {};
}

QHash<int, QByteArray> AuditLogModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractTableModel::roleNames();
    names.insert(Roles::AuditEventRole, "auditEvent");
    names.insert(Roles::AuditJsonRole, "auditJson");
    names.insert(Roles::TimestampRole, "timestamp");
    names.insert(Roles::EventNameRole, "eventName");
    names.insert(Roles::WorkspaceIdRole, "workspaceId");
    names.insert(Roles::ActorRole, "actor");
    names.insert(Roles::OutcomeRole, "outcome");
    names.insert(Roles::SequenceRole, "sequence");
    return names;
}

AuditFilterProxyModel::AuditFilterProxyModel(QObject *parent) : QSortFilterProxyModel(parent) {}

void AuditFilterProxyModel::setEventFilter(const QString &event)
{
    if (m_event == event)
        return;
    m_event = event;
    invalidateFilter();
}

void AuditFilterProxyModel::setActorFilter(const QString &actor)
{
    if (m_actor == actor)
        return;
    m_actor = actor;
    invalidateFilter();
}

void AuditFilterProxyModel::setOutcomeFilter(const QString &outcome)
{
    if (m_outcome == outcome)
        return;
    m_outcome = outcome;
    invalidateFilter();
}

void AuditFilterProxyModel::setTextFilter(const QString &text)
{
    if (m_text == text)
        return;
    m_text = text;
    m_localOffset = std::numeric_limits<int>::min(); // DST may have changed since
    invalidateFilter();
}

void AuditFilterProxyModel::setTimeRange(const QDateTime &from, const QDateTime &to)
{
    if (m_from == from && m_to == to)
        return;
    m_from = from;
    m_to = to;
    invalidateFilter();
}

bool AuditFilterProxyModel::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const QAbstractItemModel *source = sourceModel();
    const QModelIndex first = source->index(sourceRow, 0, sourceParent);
    if (m_from.isValid() || m_to.isValid()) {
        const auto *log = qobject_cast<const AuditLogModel *>(source);
        const QDateTime t =
            log ? log->event(sourceRow).timestamp : first.data(Roles::TimestampRole).toDateTime();
        if ((m_from.isValid() && t < m_from) || (m_to.isValid() && t > m_to))
            return false;
    }
    auto matches = [&first](const QString &wanted, int role) {
        return wanted.isEmpty() || first.data(role).toString() == wanted;
    };
    if (!matches(m_event, Roles::EventNameRole) || !matches(m_actor, Roles::ActorRole) ||
        !matches(m_outcome, Roles::OutcomeRole))
        return false;
    if (m_text.isEmpty())
        return true;
    if (const auto *log = qobject_cast<const AuditLogModel *>(source)) {
        // Straight from the event: building every column's display text (a local-time
        // conversion per row) made each keystroke cost ~0.4 s on 100,000 rows.
        const AuditEvent &e = log->event(sourceRow);
        const auto has = [this](const QString &text) {
            return text.contains(m_text, Qt::CaseInsensitive);
        };
        if (has(e.event) || has(e.workspaceId) || has(e.actor) || has(e.outcome) ||
            has(detailsText(e.fields, QLatin1Char(' '))))
            return true;
        // Times match as shown (local hh:mm:ss.zzz), with the offset taken once per filter.
        if (m_localOffset == std::numeric_limits<int>::min())
            m_localOffset = QDateTime::currentDateTime().offsetFromUtc();
        const QString time = e.timestamp.toUTC()
                                 .addSecs(m_localOffset)
                                 .time()
                                 .toString(QStringLiteral("hh:mm:ss.zzz"));
        return has(time);
    }
    for (int column = 0; column < source->columnCount(sourceParent); ++column) {
        const QString text = source->index(sourceRow, column, sourceParent).data().toString();
        if (text.contains(m_text, Qt::CaseInsensitive))
            return true;
    }
    return false;
}

bool AuditFilterProxyModel::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    // Display times repeat within a millisecond and wrap at midnight; the sequence does not.
    if (left.column() == AuditLogModel::TimeColumn)
        return left.data(Roles::SequenceRole).toLongLong() <
               right.data(Roles::SequenceRole).toLongLong();
    return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace elsai
