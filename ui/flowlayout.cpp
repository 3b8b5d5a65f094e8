// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "flowlayout.h"

#include <QStyle>
#include <QWidget>

namespace elsai {

FlowLayout::FlowLayout(QWidget *parent) : QLayout(parent) {}

FlowLayout::~FlowLayout()
{
    while (QLayoutItem *item = takeAt(0))
        delete item;
}

void FlowLayout::addWidget(QWidget *widget, int stretch)
{
    addChildWidget(widget);
    m_items.append(new QWidgetItem(widget));
    m_stretch.append(stretch);
    invalidate();
}

void FlowLayout::addItem(QLayoutItem *item)
{
    m_items.append(item);
    m_stretch.append(0);
}

int FlowLayout::count() const
{
    return int(m_items.size());
}

QLayoutItem *FlowLayout::itemAt(int index) const
{
    return m_items.value(index);
}

QLayoutItem *FlowLayout::takeAt(int index)
{
    if (index < 0 || index >= m_items.size())
        return nullptr;
    m_stretch.removeAt(index);
    return m_items.takeAt(index);
}

Qt::Orientations FlowLayout::expandingDirections() const
{
    return Qt::Horizontal;
}

bool FlowLayout::hasHeightForWidth() const
{
    return true;
}

int FlowLayout::heightForWidth(int width) const
{
    return arrange(QRect(0, 0, width, 0), false);
}

QSize FlowLayout::minimumSize() const
{
    QSize size(0, 0);
    for (const QLayoutItem *item : m_items) {
        if (!item->isEmpty())
            size = size.expandedTo(item->minimumSize());
    }
    const QMargins m = contentsMargins();
    return size + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowLayout::sizeHint() const
{
    // One line: what the row would like when there is room.
    const int h = spacingOr(QStyle::PM_LayoutHorizontalSpacing, Qt::Horizontal);
    int width = 0;
    int height = 0;
    for (const QLayoutItem *item : m_items) {
        if (item->isEmpty())
            continue;
        const QSize s = item->sizeHint();
        width += (width > 0 ? h : 0) + s.width();
        height = qMax(height, s.height());
    }
    const QMargins m = contentsMargins();
    return QSize(width + m.left() + m.right(), height + m.top() + m.bottom());
}

void FlowLayout::setGeometry(const QRect &rect)
{
    QLayout::setGeometry(rect);
    arrange(rect, true);
}

int FlowLayout::spacingOr(QStyle::PixelMetric metric, Qt::Orientation o) const
{
    if (spacing() >= 0)
        return spacing();
    const QWidget *w = parentWidget();
    if (!w)
        return 6;
    const int s =
        w->style()->layoutSpacing(QSizePolicy::PushButton, QSizePolicy::PushButton, o, nullptr, w);
    return s >= 0 ? s : w->style()->pixelMetric(metric, nullptr, w);
}

// Lines are filled greedily with sizeHint widths; a line's spare width goes to its stretched
// items (or is left at the end), and an item wider than the line is narrowed to it.
int FlowLayout::arrange(const QRect &rect, bool apply) const
{
    const QRect r = rect.marginsRemoved(contentsMargins());
    const int hSpace = spacingOr(QStyle::PM_LayoutHorizontalSpacing, Qt::Horizontal);
    const int vSpace = spacingOr(QStyle::PM_LayoutVerticalSpacing, Qt::Vertical);
    int y = r.y();
    qsizetype first = 0;
    while (first < m_items.size()) {
        // Collect one line.
        qsizetype last = first;
        int used = 0;
        int lineHeight = 0;
        int stretchSum = 0;
        for (; last < m_items.size(); ++last) {
            const QLayoutItem *item = m_items.at(last);
            if (item->isEmpty())
                continue;
            const int w = qMin(item->sizeHint().width(), r.width());
            const int needed = used > 0 ? used + hSpace + w : w;
            if (used > 0 && needed > r.width())
                break;
            used = needed;
            lineHeight = qMax(lineHeight, item->sizeHint().height());
            stretchSum += m_stretch.at(last);
        }
        if (apply) {
            const int spare = qMax(0, r.width() - used);
            int x = r.x();
            for (qsizetype i = first; i < last; ++i) {
                QLayoutItem *item = m_items.at(i);
                if (item->isEmpty())
                    continue;
                int w = qMin(item->sizeHint().width(), r.width());
                if (stretchSum > 0)
                    w += spare * m_stretch.at(i) / stretchSum;
                const int h =
                    item->hasHeightForWidth() ? item->heightForWidth(w) : item->sizeHint().height();
                item->setGeometry(
                    QRect(x, y + (lineHeight - qMin(h, lineHeight)) / 2, w, qMin(h, lineHeight)));
                x += w + hSpace;
            }
        }
        y += lineHeight;
        first = last;
        if (first < m_items.size())
            y += vSpace;
    }
    return y - r.y() + contentsMargins().top() + contentsMargins().bottom();
}

} // namespace elsai
