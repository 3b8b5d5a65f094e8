// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QSet>

namespace elsai {

/// A flat table of `Row`s keyed by `Key` that is refreshed by merging a new snapshot, never
/// by a reset: gone rows are removed (contiguous ranges), kept rows change in place
/// (dataChanged) or move (beginMoveRows), new rows are inserted in runs — so selections and
/// persistent indexes survive (GammaRay's mergeProcesses). GUI thread only.
template<typename Row, typename Key>
class MergingTableModel : public QAbstractTableModel
{
public:
    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : int(m_rows.size());
    }

protected:
    virtual Key keyOf(const Row &row) const = 0;

    /// Makes the rows equal to `rows` (the first of a duplicated key wins).
    void mergeRows(const QList<Row> &rows)
    {
        QList<Row> next;
        QSet<Key> nextKeys;
        for (const Row &row : rows) {
            if (!nextKeys.contains(keyOf(row))) {
                nextKeys.insert(keyOf(row));
                next.append(row);
            }
        }

        // Gone rows, as contiguous ranges from the back so earlier rows keep their numbers.
        for (int last = int(m_rows.size()) - 1; last >= 0; --last) {
            if (nextKeys.contains(keyOf(m_rows.at(last))))
                continue;
            int first = last;
            while (first > 0 && !nextKeys.contains(keyOf(m_rows.at(first - 1))))
                --first;
            beginRemoveRows({}, first, last);
            m_rows.remove(first, last - first + 1);
            endRemoveRows();
            last = first;
        }

        // Walk the new order: update in place, move a known row up, or insert new rows.
        QSet<Key> known;
        for (const Row &row : std::as_const(m_rows))
            known.insert(keyOf(row));
        const int lastColumn = columnCount() - 1;
        for (int i = 0; i < next.size();) {
            const Key key = keyOf(next.at(i));
            if (i < m_rows.size() && keyOf(m_rows.at(i)) == key) {
                if (!(m_rows.at(i) == next.at(i))) {
                    m_rows[i] = next.at(i);
                    Q_EMIT dataChanged(index(i, 0), index(i, lastColumn));
                }
                ++i;
            } else if (known.contains(key)) {
                int from = i + 1;
                while (keyOf(m_rows.at(from)) != key)
                    ++from;
                beginMoveRows({}, from, from, {}, i);
                m_rows.move(from, i);
                endMoveRows(); // the next pass updates its data
            } else {
                int end = i + 1;
                while (end < next.size() && !known.contains(keyOf(next.at(end))))
                    ++end;
                beginInsertRows({}, i, end - 1);
                // One insertion for the run (element by element would be quadratic).
                m_rows.insert(i, end - i, next.at(i));
                for (int j = i + 1; j < end; ++j)
                    m_rows[j] = next.at(j);
                endInsertRows();
                i = end;
            }
        }
    }

    QList<Row> m_rows;
};

} // namespace elsai
