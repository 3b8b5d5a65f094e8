// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

class QPlainTextEdit;
class QTableView;
class QWidget;

namespace elsai {

/// The look every panel's table shares: whole-row single selection, no row numbers, rows one
/// line high, the last column stretched.
QTableView *makeTable(QWidget *parent);
/// A read-only, fixed-font, unwrapped text view for the details of a selected row.
QPlainTextEdit *makeDetails(QWidget *parent);

} // namespace elsai
