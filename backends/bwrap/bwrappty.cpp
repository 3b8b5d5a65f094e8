// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "bwrappty.h"

#include "bwrapsandboxbackend.h"
#include "errors.h"
#include "fdutil.h"
#include "pidscgroup.h"

#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

#include <cerrno>

#include <fcntl.h>

namespace elsai {

namespace {

/// What the launch keeps alive: the pids cgroup and the fd its child joins it by.
struct BwrapPtyResources
{
    std::unique_ptr<PidsCgroup> cgroup;
    UniqueFd joinFd;
};

} // namespace

PtyLaunch bwrapPtyLaunch(const BwrapSandboxBackend &backend)
{
    if (!backend.isCreated() || backend.bwrapProgram().isEmpty())
        throw OSError(QStringLiteral("the sandbox is not running; start it to open a terminal"));
    // /usr and /bin are the host's, bound read-only: what exists here exists inside.
    const QString shell = QFileInfo(QStringLiteral("/bin/bash")).isExecutable()
                              ? QStringLiteral("/bin/bash")
                              : QStringLiteral("/bin/sh");
    const QString setsid = QStandardPaths::findExecutable(
        QStringLiteral("setsid"), {QStringLiteral("/usr/bin"), QStringLiteral("/bin")});
    const QString command = setsid.isEmpty()
                                ? QStringLiteral("exec %1 -i").arg(shell)
                                : QStringLiteral("exec %1 -c -w %2").arg(setsid, shell);
    const QMap<QString, QString> termEnv{{QStringLiteral("TERM"), QStringLiteral("xterm-256color")},
                                         {QStringLiteral("COLORTERM"), QStringLiteral("truecolor")},
                                         {QStringLiteral("PS1"), QStringLiteral("\\w\\$ ")}};

    auto resources = std::make_shared<BwrapPtyResources>();
    if (backend.bwrapOptions().pidsCgroup) {
        resources->cgroup = PidsCgroup::create(backend.bwrapOptions().maxProcesses);
        if (resources->cgroup) {
            resources->joinFd.reset(
                ::open(QFile::encodeName(resources->cgroup->joinFile()).constData(),
                       O_WRONLY | O_CLOEXEC));
            if (!resources->joinFd.isValid())
                throwOsError(errno, QStringLiteral("Cannot open the pids cgroup"),
                             resources->cgroup->folder());
        }
    }
    PtyLaunch launch;
    launch.spec.arguments =
        QStringList{backend.bwrapProgram()} + backend.bwrapArguments(command, {}, false, termEnv);
    launch.spec.environment = {QStringLiteral("PATH=/usr/bin:/bin")};
    launch.spec.joinCgroupFd = resources->joinFd.get();
    launch.spec.ttyControlling = false; // the shell's session inside takes it (see the header)
    launch.spec.killGraceMs = backend.options().killGraceMs;
    // bwrap leads the group and the sandbox's pid namespace dies with it (as for execute).
    launch.spec.sweepStrays = false;
    launch.keepAlive = resources;
    launch.programName = QFileInfo(shell).fileName();
    launch.idleNames = idleShellNames() << QStringLiteral("bwrap") << QStringLiteral("setsid");
    return launch;
}

} // namespace elsai
