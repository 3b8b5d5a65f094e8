// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "ptyfactory.h"

#include "bwrappty.h"
#include "bwrapsandboxbackend.h"
#include "daytonabackend.h"
#include "daytonapty.h"
#include "localpty.h"
#include "localsandboxbackend.h"
#include "sshpty.h"
#include "sshsandboxbackend.h"

#include <QCoreApplication>

namespace elsai {

PtySupport ptySupport(const ExecutionBackend *backend)
{
    if (!backend)
        return {false,
                QCoreApplication::translate("elsai", "Start the sandbox to open a terminal")};
    if (dynamic_cast<const LocalSandboxBackend *>(backend) ||
        dynamic_cast<const SshSandboxBackend *>(backend) ||
        dynamic_cast<const DaytonaSandboxBackend *>(backend))
        return {true, {}};
    return {false, QCoreApplication::translate(
                       "elsai", "The %1 backend has no interactive terminal (no PTY)")
                       .arg(backend->typeName())};
}

PtySession *createPtySession(const BackendPtr &backend, const QString &workspaceId, QObject *parent)
{
    if (!ptySupport(backend.get()).available)
        return nullptr;
    if (auto daytona = std::dynamic_pointer_cast<DaytonaSandboxBackend>(backend)) {
        if (!daytona->isCreated())
            return nullptr;
        return new DaytonaPtySession(workspaceId, daytona->api(), daytona->toolboxUrl(),
                                     daytona->remoteRoot(), daytona->options().env, parent);
    }
    ProcessPtySession::Launcher launcher;
    // The launcher keeps the backend alive until the program has started.
    if (auto bwrap = std::dynamic_pointer_cast<BwrapSandboxBackend>(backend))
        launcher = [bwrap] { return bwrapPtyLaunch(*bwrap); };
    else if (auto local = std::dynamic_pointer_cast<LocalSandboxBackend>(backend))
        launcher = [local] { return localPtyLaunch(*local); };
    else if (auto ssh = std::dynamic_pointer_cast<SshSandboxBackend>(backend))
        launcher = [ssh] { return sshPtyLaunch(*ssh); };
    if (!launcher)
        return nullptr;
    return new ProcessPtySession(workspaceId, backend->typeName(), std::move(launcher), parent);
}

} // namespace elsai
