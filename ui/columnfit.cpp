// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "columnfit.h"

#include <QAbstractItemView>
#include <QHeaderView>
#include <QSet>
#include <QTableView>
#include <QTimer>
#include <QTreeView>

namespace elsai {

namespace {

QHeaderView *headerOf(QAbstractItemView *view)
{
    if (auto *table = qobject_cast<QTableView *>(view))
        return table->horizontalHeader();
    if (auto *tree = qobject_cast<QTreeView *>(view))
        return tree->header();
    return nullptr;
}

class ColumnFitter : public QObject
{
public:
    explicit ColumnFitter(QAbstractItemView *view) : QObject(view), m_view(view)
    {
        setObjectName(QStringLiteral("elsai_columnFitter"));
        m_timer.setSingleShot(true);
        m_timer.setInterval(250);
        connect(&m_timer, &QTimer::timeout, this, &ColumnFitter::fit);
        QHeaderView *header = headerOf(view);
        connect(header, &QHeaderView::sectionResized, this, [this](int section, int, int) {
            if (!m_fitting)
                m_userSized.insert(section);
        });
        watch();
        m_timer.start();
    }

    void watch()
    {
        QAbstractItemModel *model = m_view->model();
        if (!model || model == m_model)
            return;
        m_model = model;
        auto soon = [this] {
            if (!m_timer.isActive())
                m_timer.start();
        };
        connect(model, &QAbstractItemModel::rowsInserted, this, soon);
        connect(model, &QAbstractItemModel::dataChanged, this, soon);
        connect(model, &QAbstractItemModel::modelReset, this, soon);
        connect(model, &QAbstractItemModel::layoutChanged, this, soon);
        connect(model, &QAbstractItemModel::headerDataChanged, this, soon);
    }

    void fit()
    {
        watch();
        QHeaderView *header = headerOf(m_view);
        const QAbstractItemModel *model = m_view->model();
        if (!header || !model)
            return;
        const int cap = m_view->fontMetrics().averageCharWidth() * 48;
        const int rows = visibleRows(model);
        m_fitting = true;
        for (int section = 0; section < header->count(); ++section) {
            if (header->isSectionHidden(section) || m_userSized.contains(section) ||
                header->sectionResizeMode(section) != QHeaderView::Interactive ||
                (header->stretchLastSection() &&
                 header->visualIndex(section) == header->count() - 1))
                continue;
            const int wanted =
                qMax(headerTextWidth(header, section), qMin(cap, contentWidth(section, rows)));
            if (wanted > header->sectionSize(section))
                header->resizeSection(section, wanted);
        }
        m_fitting = false;
    }

private:
    /// Rows shown in the viewport (a tree: its visible items, which Qt measures itself).
    int visibleRows(const QAbstractItemModel *model) const
    {
        return qMin(model->rowCount(m_view->rootIndex()),
                    m_view->viewport()->height() / qMax(1, m_view->fontMetrics().height()) + 2);
    }

    int contentWidth(int column, int rows) const
    {
        if (auto *tree = qobject_cast<QTreeView *>(m_view))
            return static_cast<QAbstractItemView *>(tree)->sizeHintForColumn(
                column); // visible only
        const QAbstractItemModel *model = m_view->model();
        const int first = qMax(0, m_view->indexAt(QPoint(1, 1)).row());
        QStyleOptionViewItem option;
        option.initFrom(m_view);
        option.font = m_view->font();
        int width = 0;
        for (int r = first; r < first + rows && r < model->rowCount(m_view->rootIndex()); ++r) {
            const QModelIndex index = model->index(r, column, m_view->rootIndex());
            QAbstractItemDelegate *delegate = m_view->itemDelegateForColumn(column);
            if (!delegate)
                delegate = m_view->itemDelegate();
            width = qMax(width, delegate->sizeHint(option, index).width());
        }
        return width + 2; // the grid line
    }

    QAbstractItemView *m_view;
    QAbstractItemModel *m_model = nullptr;
    QTimer m_timer;
    QSet<int> m_userSized;
    bool m_fitting = false;
};

} // namespace

int headerTextWidth(const QHeaderView *header, int logicalIndex)
{
    return header->sectionSizeHint(logicalIndex);
}

void fitColumnsToContent(QAbstractItemView *view)
{
    if (!view || !headerOf(view) ||
        view->findChild<QObject *>(QStringLiteral("elsai_columnFitter"),
                                   Qt::FindDirectChildrenOnly))
        return;
    new ColumnFitter(view);
}

} // namespace elsai
