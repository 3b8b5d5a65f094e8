// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QDir>
#include <QString>

namespace elsai::test {

/// How many entries a folder of /proc/self has: "fd" counts the open descriptors (links to
/// pipes and eventfds included), "task" the threads.
inline int procSelfEntries(const char *folder)
{
    return int(QDir(QStringLiteral("/proc/self/") + QLatin1String(folder))
                   .entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System)
                   .size());
}

} // namespace elsai::test
