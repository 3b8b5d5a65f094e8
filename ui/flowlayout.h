// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QLayout>
#include <QList>
#include <QStyle>

namespace elsai {

/// A row of controls that wraps onto further lines when its panel is narrower than the row, so
/// a panel's minimum width is its widest control, not the sum of them (a dock beside the
/// editor must not push the window wider than the screen). Stretch factors of addWidget(w, 1)
/// let that control take the rest of its line.
class FlowLayout : public QLayout
{
    Q_OBJECT

public:
    explicit FlowLayout(QWidget *parent = nullptr);
    ~FlowLayout() override;

    void addWidget(QWidget *widget, int stretch = 0);

    void addItem(QLayoutItem *item) override;
    int count() const override;
    QLayoutItem *itemAt(int index) const override;
    QLayoutItem *takeAt(int index) override;
    Qt::Orientations expandingDirections() const override;
    bool hasHeightForWidth() const override;
    int heightForWidth(int width) const override;
    QSize minimumSize() const override;
    QSize sizeHint() const override;
    void setGeometry(const QRect &rect) override;

private:
    int arrange(const QRect &rect, bool apply) const;
    int spacingOr(QStyle::PixelMetric metric, Qt::Orientation o) const;

    QList<QLayoutItem *> m_items;
    QList<int> m_stretch; ///< per item, as given to addWidget()
};

} // namespace elsai
