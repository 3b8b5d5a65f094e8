// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>

class QWidget;

namespace elsai {

/// Gives every control under `root` that assistive tools would announce without a name (line
/// edits, combo boxes, spin boxes, item and text views) the name a sighted user reads next to
/// it: its form label (QFormLayout), its placeholder text, its tool tip; the line edit of an
/// editable combo box takes the combo box's name; an item view with none of these gets
/// `fallback` (the panel's title). Names already set — by the widget's own code or through a
/// label's buddy — are kept. The window runs it on each panel and dialog it creates, so a
/// panel that forgets a name still announces something meaningful; tst_accessibility fails
/// on anything left unnamed. Returns how many controls it named.
int nameUnnamedControls(QWidget *root, const QString &fallback);

} // namespace elsai
