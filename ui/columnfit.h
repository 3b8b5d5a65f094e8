// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

class QAbstractItemView;
class QHeaderView;

namespace elsai {

/// Keeps the interactive columns of a table or tree view at least as wide as their header
/// text and the visible cells they hold: a state that becomes longer ("pending" → "running" →
/// "failed") widens its column instead of being cut. Columns only grow, at most to 48
/// average characters (a long path does not push the others away), and a column the user
/// resized is left alone. Work is bounded: a debounced pass over the visible rows only, so a
/// flood of rows costs one short pass per 250 ms. Stretched and ResizeToContents sections are
/// Qt's. The view owns the fitter; calling it twice is harmless.
void fitColumnsToContent(QAbstractItemView *view);

/// The width a section needs for its header text (QHeaderView::sectionSizeHint).
int headerTextWidth(const QHeaderView *header, int logicalIndex);

} // namespace elsai
