// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "flowlayout.h"

#include <QLineEdit>
#include <QPushButton>
#include <QTest>
#include <QWidget>

using namespace elsai;

// The button rows of the panels: their minimum width is the widest control (so docks stay
// narrow and the window fits small screens), and a narrow panel wraps instead of cutting.
class TestFlowLayout : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void minimumIsTheWidestControl();
    void wrapsWhenNarrow();
    void stretchTakesTheRestOfItsLine();
    void hiddenControlsTakeNoRoom();

private:
    struct Row
    {
        QWidget widget;
        FlowLayout *layout = nullptr;
        QList<QWidget *> items;
    };
    static void fill(Row &row, int buttons);
};

void TestFlowLayout::fill(Row &row, int buttons)
{
    row.layout = new FlowLayout(&row.widget);
    row.layout->setContentsMargins(0, 0, 0, 0);
    row.layout->setSpacing(4);
    for (int i = 0; i < buttons; ++i) {
        auto *b = new QPushButton(QStringLiteral("Button number %1").arg(i), &row.widget);
        row.layout->addWidget(b);
        row.items.append(b);
    }
}

void TestFlowLayout::minimumIsTheWidestControl()
{
    Row row;
    fill(row, 5);
    int widest = 0, sum = 0;
    for (QWidget *w : std::as_const(row.items)) {
        widest = qMax(widest, w->minimumSizeHint().width());
        sum += w->sizeHint().width();
    }
    QCOMPARE(row.layout->minimumSize().width(), widest);
    QVERIFY(row.layout->sizeHint().width() >= sum);
    QCOMPARE(row.widget.minimumSizeHint().width(), widest);
}

void TestFlowLayout::wrapsWhenNarrow()
{
    Row row;
    fill(row, 4);
    const int one = row.items.first()->sizeHint().width();
    const int lineHeight = row.items.first()->sizeHint().height();
    QVERIFY(row.layout->hasHeightForWidth());
    const int wide = row.layout->sizeHint().width();
    QCOMPARE(row.layout->heightForWidth(wide), lineHeight);
    // Two buttons to a line: two lines.
    const int two = 2 * one + 4 + 2;
    QCOMPARE(row.layout->heightForWidth(two), 2 * lineHeight + 4);
    // One to a line: four lines, every control fully inside the widget, none overlapping.
    row.widget.resize(one, row.layout->heightForWidth(one));
    row.layout->setGeometry(row.widget.rect());
    QCOMPARE(row.widget.height(), 4 * lineHeight + 3 * 4);
    for (qsizetype i = 0; i < row.items.size(); ++i) {
        const QRect g = row.items.at(i)->geometry();
        QVERIFY2(row.widget.rect().contains(g), qPrintable(QString::number(i)));
        for (qsizetype j = 0; j < i; ++j)
            QVERIFY(!g.intersects(row.items.at(j)->geometry()));
    }
}

void TestFlowLayout::stretchTakesTheRestOfItsLine()
{
    QWidget widget;
    auto *layout = new FlowLayout(&widget);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    auto *button = new QPushButton(QStringLiteral("Export"), &widget);
    auto *filter = new QLineEdit(&widget);
    layout->addWidget(filter, 1);
    layout->addWidget(button);
    const int width = layout->sizeHint().width() + 200;
    layout->setGeometry(QRect(0, 0, width, layout->heightForWidth(width)));
    QCOMPARE(filter->width(), filter->sizeHint().width() + 200);
    QCOMPARE(button->geometry().right(), width - 1);
}

void TestFlowLayout::hiddenControlsTakeNoRoom()
{
    Row row;
    fill(row, 3);
    const int all = row.layout->sizeHint().width();
    row.items.at(1)->hide();
    QCOMPARE(row.layout->sizeHint().width(), all - row.items.at(1)->sizeHint().width() - 4);
}

QTEST_MAIN(TestFlowLayout)
#include "tst_flowlayout.moc"
