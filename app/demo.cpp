// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "demo.h"

#include "sessionoptions.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

namespace elsai {

bool extractSampleProject(const QString &dest)
{
    const QString root = QStringLiteral(":/sample-project");
    if (!QDir(root).exists())
        return false;
    QDirIterator it(root, QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    bool any = false;
    while (it.hasNext()) {
        const QString source = it.next();
        const QString target = QDir(dest).filePath(source.mid(root.size() + 1));
        QDir().mkpath(QFileInfo(target).absolutePath());
        if (!QFile::copy(source, target))
            return false;
        // Resource files copy read-only; the demo project must be writable (flush target).
        QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup |
                                          QFile::ReadOther);
        any = true;
    }
    return any;
}

bool applyDemoDefaults(SessionOptions &options, bool workspaceIdGiven, QTemporaryDir &scratch)
{
    if (options.spec.seedFrom || !options.spec.workspaceRoot.isEmpty())
        return false;
    QString source;
    if (scratch.isValid() && extractSampleProject(scratch.path()))
        source = scratch.path();
#ifdef ELSAI_SOURCE_DIR
    else if (QDir(QStringLiteral(ELSAI_SOURCE_DIR "/resources/sample-project")).exists())
        source = QStringLiteral(ELSAI_SOURCE_DIR "/resources/sample-project");
#endif
    if (!source.isEmpty())
        options.spec.seedFrom = source;
    if (!workspaceIdGiven)
        options.spec.workspaceId = QStringLiteral("demo");
    return true;
}

} // namespace elsai
