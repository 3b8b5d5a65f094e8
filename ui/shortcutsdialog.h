// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QDialog>

class QLineEdit;
class QMainWindow;
class QTreeWidget;

namespace elsai {

/// Help → Keyboard Shortcuts: every action of the window's menus with its keys, read from the
/// menus themselves (so the list cannot go stale), plus the keys panels handle directly
/// (console, workspace tree). A filter field narrows it.
class ShortcutsDialog : public QDialog
{
    Q_OBJECT

public:
    explicit ShortcutsDialog(QMainWindow *window, QWidget *parent = nullptr);

    QTreeWidget *list() const { return m_list; }
    QLineEdit *filterField() const { return m_filter; }

private:
    void applyFilter(const QString &text);

    QTreeWidget *m_list;
    QLineEdit *m_filter;
};

} // namespace elsai
