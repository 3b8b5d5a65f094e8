// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QByteArray>
#include <QStringList>

namespace elsai::remote {

/// Runs the host's GNU tar with `args` (argv, never through a shell) and waits for it: the
/// archives a remote backend moves in one piece (seeding packs one, a flush unpacks one into
/// a private staging folder). Returns tar's error lines, each as "local tar: …"; none on
/// success.
QStringList runLocalTar(const QStringList &args);

/// Writes `data` to the private local file `path` (what a tar is made of or told to take: a
/// name list, a staged file); false when it cannot.
bool writeLocalFile(const QString &path, const QByteArray &data);

} // namespace elsai::remote
