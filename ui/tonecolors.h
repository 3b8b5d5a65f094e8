// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QColor>

class QPalette;

namespace elsai {

/// The meaning a colour carries (KDE's colour-scheme roles): success or an addition, a
/// warning or a modification, an error or a removal, and neutral information.
enum class Tone { Positive, Neutral, Negative, Active };

/// The accent of a tone (Breeze's): borders, icons.
QColor toneAccent(Tone tone);
/// An opaque background for rows or lines of that tone, derived from the palette's base so
/// that it reads in light and dark themes alike (the accent blended into the base).
QColor toneBackground(const QPalette &palette, Tone tone);
/// A text colour of that tone with contrast on the palette's base: the accent pulled toward
/// the palette's text colour.
QColor toneForeground(const QPalette &palette, Tone tone);
/// `a` blended into `b` by `amount` (0: a, 1: b).
QColor blend(const QColor &a, const QColor &b, double amount);

} // namespace elsai
