// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "tonecolors.h"

#include <QPalette>

namespace elsai {

QColor blend(const QColor &a, const QColor &b, double amount)
{
    const double t = qBound(0.0, amount, 1.0);
    return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t),
                            float(a.greenF() * (1 - t) + b.greenF() * t),
                            float(a.blueF() * (1 - t) + b.blueF() * t));
}

QColor toneAccent(Tone tone)
{
    switch (tone) {
    case Tone::Positive:
        return QColor(0x27, 0xae, 0x60);
    case Tone::Neutral:
        return QColor(0xf6, 0x74, 0x00);
    case Tone::Negative:
        return QColor(0xda, 0x44, 0x53);
    case Tone::Active:
        break;
    }
    return QColor(0x3d, 0xae, 0xe9);
}

QColor toneBackground(const QPalette &palette, Tone tone)
{
    const QColor base = palette.color(QPalette::Base);
    // A dark base needs more of the accent to be told apart.
    return blend(base, toneAccent(tone), base.lightnessF() < 0.5 ? 0.32 : 0.22);
}

QColor toneForeground(const QPalette &palette, Tone tone)
{
    const QColor text = palette.color(QPalette::Text);
    return blend(toneAccent(tone), text, 0.3);
}

} // namespace elsai
