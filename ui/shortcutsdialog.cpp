// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "shortcutsdialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace elsai {

namespace {

QString plain(QString text)
{
    // "&Save" → "Save"; "&&" stays one ampersand.
    text.replace(QStringLiteral("&&"), QStringLiteral("\x01"));
    text.remove(QLatin1Char('&'));
    text.replace(QStringLiteral("\x01"), QStringLiteral("&"));
    return text;
}

void addMenu(QTreeWidget *list, QMenu *menu, const QString &path)
{
    for (QAction *a : menu->actions()) {
        if (a->isSeparator())
            continue;
        if (QMenu *sub = a->menu()) {
            addMenu(list, sub, path + QStringLiteral(" → ") + plain(a->text()));
            continue;
        }
        const QList<QKeySequence> keys = a->shortcuts();
        if (keys.isEmpty())
            continue;
        QStringList texts;
        for (const QKeySequence &k : keys)
            texts.append(k.toString(QKeySequence::NativeText));
        new QTreeWidgetItem(list, {plain(a->text()), texts.join(QStringLiteral(", ")), path});
    }
}

} // namespace

ShortcutsDialog::ShortcutsDialog(QMainWindow *window, QWidget *parent) : QDialog(parent)
{
    setObjectName(QStringLiteral("shortcutsDialog"));
    setWindowTitle(tr("Keyboard Shortcuts"));
    setAccessibleName(tr("Keyboard Shortcuts"));
    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("shortcutsFilter"));
    m_filter->setPlaceholderText(tr("Filter"));
    m_filter->setAccessibleName(tr("Filter shortcuts"));
    m_filter->setClearButtonEnabled(true);
    m_list = new QTreeWidget(this);
    m_list->setObjectName(QStringLiteral("shortcutsList"));
    m_list->setAccessibleName(tr("Shortcuts"));
    m_list->setRootIsDecorated(false);
    m_list->setAlternatingRowColors(true);
    m_list->setHeaderLabels({tr("Action"), tr("Keys"), tr("Where")});

    const auto menus = window->menuBar()->actions();
    for (QAction *a : menus) {
        if (QMenu *menu = a->menu())
            addMenu(m_list, menu, plain(a->text()));
    }
    // Keys the panels handle themselves (no menu entry).
    const QString console = tr("Console");
    const QString tabs = tr("File tabs");
    const QString find = tr("Find bar");
    const struct
    {
        QString action, keys, where;
    } panelKeys[] = {
        {tr("Run the command"), tr("Enter"), console},
        {tr("Previous / next command of the history"), tr("Up, Down"), console},
        {tr("Cancel the running command (copy when text is selected)"), tr("Ctrl+C"), console},
        {tr("Clear the finished blocks"), tr("Ctrl+L"), console},
        {tr("Next / previous tab"), tr("Ctrl+Tab, Ctrl+Shift+Tab"), tabs},
        {tr("Next / previous match"), tr("Enter, Shift+Enter"), find},
        {tr("Close the bar"), tr("Esc"), find},
        {tr("Move between panels and fields"), tr("Tab, Shift+Tab"), tr("Window")},
    };
    for (const auto &k : panelKeys)
        new QTreeWidgetItem(m_list, {k.action, k.keys, k.where});
    for (int c = 0; c < m_list->columnCount(); ++c)
        m_list->resizeColumnToContents(c);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_filter, &QLineEdit::textChanged, this, &ShortcutsDialog::applyFilter);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_filter);
    layout->addWidget(m_list, 1);
    layout->addWidget(buttons);
    const int width = m_list->header()->length() + 40;
    resize(qBound(480, width, 900), 520);
}

void ShortcutsDialog::applyFilter(const QString &text)
{
    for (int i = 0; i < m_list->topLevelItemCount(); ++i) {
        QTreeWidgetItem *item = m_list->topLevelItem(i);
        bool match = text.isEmpty();
        for (int c = 0; !match && c < m_list->columnCount(); ++c)
            match = item->text(c).contains(text, Qt::CaseInsensitive);
        item->setHidden(!match);
    }
}

} // namespace elsai
