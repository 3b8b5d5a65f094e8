// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QLocale>
#include <QString>

namespace elsai {

/// A size as the window shows it everywhere: "512 bytes", "1.5 KiB", "120.0 MiB" (one
/// decimal, in the user's locale); empty when not known (negative). Exact byte counts (the
/// console's) are written out instead.
inline QString sizeText(qint64 bytes)
{
    return bytes < 0 ? QString() : QLocale().formattedDataSize(bytes, 1);
}

} // namespace elsai
