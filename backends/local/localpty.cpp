// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "localpty.h"

#include "errors.h"
#include "fdutil.h"
#include "localsandboxbackend.h"

#include <QFile>
#include <QFileInfo>

#include <cerrno>

#include <fcntl.h>

namespace elsai {

QString localShell(const QStringList &environment)
{
    for (const QString &kv : environment) {
        if (!kv.startsWith(QLatin1String("SHELL=")))
            continue;
        const QString shell = kv.mid(6);
        const QFileInfo fi(shell);
        if (fi.isAbsolute() && fi.isFile() && fi.isExecutable())
            return shell;
    }
    return QStringLiteral("/bin/sh");
}

PtyLaunch localPtyLaunch(const LocalSandboxBackend &backend)
{
    if (!backend.isCreated())
        throw OSError(QStringLiteral("the sandbox is not running; start it to open a terminal"));
    auto cwd = std::make_shared<UniqueFd>(
        ::open(QFile::encodeName(backend.workspaceRoot()), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cwd->isValid())
        throwOsError(errno, QStringLiteral("Cannot open the workspace folder"),
                     backend.workspaceRoot());
    PtyLaunch launch;
    launch.spec.environment = terminalEnvironment(backend.baseEnvironment());
    const QString shell = localShell(launch.spec.environment);
    launch.spec.arguments = {shell};
    launch.spec.cwdFd = cwd->get();
    launch.spec.killGraceMs = backend.options().killGraceMs;
    launch.keepAlive = cwd;
    launch.programName = QFileInfo(shell).fileName();
    launch.idleNames = idleShellNames();
    return launch;
}

} // namespace elsai
