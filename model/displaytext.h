// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QLocale>
#include <QString>

namespace elsai {

/// A size as the models show it ("1.5 KiB", in the user's locale); empty when not known
/// (negative).
inline QString sizeText(qint64 bytes)
{
    return bytes < 0 ? QString() : QLocale().formattedDataSize(bytes);
}

} // namespace elsai
