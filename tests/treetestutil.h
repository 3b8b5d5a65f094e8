// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// What the checkpoint tests of every backend share: a shell command run in a host folder, and
// the digest of a folder as a fresh local walk sees it.

#pragma once

#include "fdutil.h"
#include "treemanifest.h"
#include "treesnapshot.h"

#include <QFile>
#include <QProcess>
#include <QtTest>

#include <fcntl.h>

namespace elsai::test {

/// The digest of a folder as a fresh walk sees it (no cache, nothing shared with the engine's
/// walk but the walker itself: contents, modes and links are compared by treeDigest()).
inline QByteArray digestOf(const QString &root)
{
    const UniqueFd fd(::open(QFile::encodeName(root).constData(), O_RDONLY | O_DIRECTORY));
    return treeDigest(captureTree(fd.get(), {}));
}

/// Runs `command` with /bin/sh in `cwd`; a failure or a non-zero exit fails the current test.
inline void sh(const QString &cwd, const QString &command)
{
    QProcess p;
    p.setWorkingDirectory(cwd);
    p.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), command});
    QVERIFY(p.waitForFinished(30000));
    QVERIFY2(p.exitCode() == 0, qPrintable(command + QStringLiteral(": ") +
                                           QString::fromUtf8(p.readAllStandardError())));
}

} // namespace elsai::test
