// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "icons.h"

#include <QFile>

namespace elsai {

QIcon bundledIcon(const QString &name)
{
    const QString path = QStringLiteral(":/elsai/icons/%1.svg").arg(name);
    return QFile::exists(path) ? QIcon(path) : QIcon();
}

QIcon themeIcon(const QString &name)
{
    return QIcon::fromTheme(name, bundledIcon(name));
}

} // namespace elsai
