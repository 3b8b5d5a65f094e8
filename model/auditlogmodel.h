// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "audit.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QElapsedTimer>
#include <QList>
#include <QSortFilterProxyModel>
#include <QTimer>

#include <deque>
#include <limits>

namespace elsai {

/// Append-only audit log for the window: one row per AuditEvent.
///
/// Columns: Time, Event, Workspace, Actor, Outcome, Details (the event's own fields, compact).
/// Appends are batched: append() queues, and the queue is inserted with one
/// beginInsertRows per batch when it reaches batchSize() or after batchIntervalMs(), whichever
/// comes first; flush() inserts at once (tests). A row cap drops the oldest rows (one
/// beginRemoveRows per batch), including when a single burst is larger than the cap.
/// GUI thread only. Use subscribe() to receive events from any thread (queued).
class AuditLogModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column {
        TimeColumn,
        EventColumn,
        WorkspaceColumn,
        ActorColumn,
        OutcomeColumn,
        DetailsColumn,
        ColumnCount
    };

    explicit AuditLogModel(QObject *parent = nullptr);
    ~AuditLogModel() override;

    /// Registers a sink on AuditLog::instance() that forwards every event to this model
    /// (queued to the model's thread). Unsubscribed in the destructor.
    void subscribe();
    void unsubscribe();

    void append(const AuditEvent &event);
    void flush();
    void clear();

    int rowCap() const { return m_rowCap; }
    void setRowCap(int cap);
    int batchSize() const { return m_batchSize; }
    void setBatchSize(int n) { m_batchSize = qMax(1, n); }
    int batchIntervalMs() const { return m_timer.interval(); }
    void setBatchIntervalMs(int ms) { m_timer.setInterval(ms); }

    const AuditEvent &event(int row) const { return m_rows.at(row); }
    /// The DisplayRole text of `column` for an event (what data() shows).
    static QString columnText(const AuditEvent &event, int column);
    /// A field's value as text: strings as they are, lists and objects as compact JSON (or,
    /// with `itemPerLine`, a list's items one per line).
    static QString fieldText(const QJsonValue &value, bool itemPerLine = false);

    /// Writes the given rows (all when empty) as JSON lines; returns false with `error` set.
    bool exportJsonLines(const QString &path, const QList<int> &rows = {},
                         QString *error = nullptr) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

Q_SIGNALS:
    void rowsTrimmed(int count); ///< oldest rows dropped by the cap

private:
    std::deque<AuditEvent> m_rows;
    QList<AuditEvent> m_pending;
    QTimer m_timer;
    int m_rowCap = 100000;
    int m_batchSize = 50;
    AuditSinkPtr m_sink;
};

/// Filter/sort proxy over AuditLogModel: event, actor, outcome (exact; empty = any), a time
/// range, and a free text matched case-insensitively against every column and the details.
class AuditFilterProxyModel : public QSortFilterProxyModel
{
    Q_OBJECT

public:
    explicit AuditFilterProxyModel(QObject *parent = nullptr);

    void setEventFilter(const QString &event);
    void setActorFilter(const QString &actor);
    void setOutcomeFilter(const QString &outcome);
    void setTextFilter(const QString &text);
    /// Records from `from` to `to`, both included; an invalid end is open.
    void setTimeRange(const QDateTime &from, const QDateTime &to = {});
    QDateTime timeFrom() const { return m_from; }
    QDateTime timeTo() const { return m_to; }
    QString eventFilter() const { return m_event; }
    QString actorFilter() const { return m_actor; }
    QString outcomeFilter() const { return m_outcome; }
    QString textFilter() const { return m_text; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;

private:
    QString m_event, m_actor, m_outcome, m_text;
    QDateTime m_from, m_to;
    mutable int m_localOffset = std::numeric_limits<int>::min(); ///< reset by setTextFilter
};

} // namespace elsai
