// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "accessiblenames.h"

#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAccessible>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTextEdit>

namespace elsai {

namespace {

QString labelText(const QWidget *label)
{
    const auto *l = qobject_cast<const QLabel *>(label);
    if (!l)
        return {};
    QString text = l->text();
    text.replace(QStringLiteral("&&"), QStringLiteral("\x01"));
    text.remove(QLatin1Char('&'));
    text.replace(QStringLiteral("\x01"), QStringLiteral("&"));
    text = text.trimmed();
    if (text.endsWith(QLatin1Char(':')))
        text.chop(1);
    return text;
}

bool layoutContains(QLayout *layout, const QWidget *w)
{
    for (int i = 0; i < layout->count(); ++i) {
        QLayoutItem *item = layout->itemAt(i);
        if (item->widget() == w)
            return true;
        if (item->layout() && layoutContains(item->layout(), w))
            return true;
    }
    return false;
}

/// The label of the QFormLayout row holding `w` (directly, or inside the row's widget or
/// layout, as a field with a Browse… button beside it).
QString formLabel(const QWidget *w)
{
    for (const QWidget *field = w; field && field->parentWidget(); field = field->parentWidget()) {
        const auto *form = qobject_cast<const QFormLayout *>(field->parentWidget()->layout());
        if (!form)
            continue;
        for (int row = 0; row < form->rowCount(); ++row) {
            QLayoutItem *item = form->itemAt(row, QFormLayout::FieldRole);
            if (!item)
                continue;
            const bool holds = item->widget() == field ||
                               (item->layout() && layoutContains(item->layout(), field));
            if (!holds)
                continue;
            if (const QLayoutItem *label = form->itemAt(row, QFormLayout::LabelRole))
                return labelText(label->widget());
            return {};
        }
    }
    return {};
}

bool needsName(const QWidget *w)
{
    return qobject_cast<const QLineEdit *>(w) || qobject_cast<const QComboBox *>(w) ||
           qobject_cast<const QAbstractSpinBox *>(w) ||
           qobject_cast<const QAbstractItemView *>(w) || qobject_cast<const QPlainTextEdit *>(w) ||
           qobject_cast<const QTextEdit *>(w);
}

QString nameFor(QWidget *w, const QString &fallback)
{
    // An editable combo box's line edit, a spin box's: the name of the control it belongs to.
    if (auto *combo = qobject_cast<QComboBox *>(w->parentWidget());
        combo && qobject_cast<QLineEdit *>(w)) {
        const QString name = combo->accessibleName();
        return name.isEmpty() ? nameFor(combo, fallback) : name;
    }
    if (QString label = formLabel(w); !label.isEmpty())
        return label;
    if (auto *edit = qobject_cast<QLineEdit *>(w); edit && !edit->placeholderText().isEmpty())
        return edit->placeholderText();
    if (auto *combo = qobject_cast<QComboBox *>(w);
        combo && combo->lineEdit() && !combo->lineEdit()->placeholderText().isEmpty())
        return combo->lineEdit()->placeholderText();
    if (auto *text = qobject_cast<QPlainTextEdit *>(w); text && !text->placeholderText().isEmpty())
        return text->placeholderText();
    if (!w->toolTip().isEmpty())
        return w->toolTip();
    return fallback;
}

} // namespace

int nameUnnamedControls(QWidget *root, const QString &fallback)
{
    int named = 0;
    const auto widgets = root->findChildren<QWidget *>();
    for (QWidget *w : widgets) {
        if (!needsName(w) || !w->accessibleName().isEmpty())
            continue;
        // A name Qt already derives (a label's buddy) is the right one.
        if (QAccessibleInterface *iface = QAccessible::queryAccessibleInterface(w);
            iface && !iface->text(QAccessible::Name).trimmed().isEmpty())
            continue;
        const QString name = nameFor(w, fallback);
        if (name.isEmpty())
            continue;
        w->setAccessibleName(name);
        ++named;
    }
    return named;
}

} // namespace elsai
