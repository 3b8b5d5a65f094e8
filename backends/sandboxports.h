// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"

#include <QList>
#include <QString>
#include <QUrl>

namespace elsai {

/// A TCP port listening inside a sandbox, as the Ports panel shows it.
struct SandboxPort
{
    /// How a browser on this host reaches it.
    enum class Reach {
        Direct,         ///< on this host's network: http://127.0.0.1:PORT
        NamespaceProxy, ///< inside a bwrap network namespace: a loopback proxy into it
        SshForward,     ///< on the SSH host: `ssh -L` through the master
        Preview,        ///< Daytona's preview URL
    };
    int port = 0;
    QString address; ///< what it listens on ("0.0.0.0", "127.0.0.1", "::"); may be empty
    QString process; ///< the program, when known
    qint64 pid = 0;  ///< in the host's view (local, bwrap) or the remote's (ssh); 0: unknown
    Reach reach = Reach::Direct;
    qint64 namespacePid = 0; ///< NamespaceProxy: a process inside that namespace

    bool operator==(const SandboxPort &) const = default;
};

/// The TCP ports listening in the sandbox `workspaceId` on `backend` (decisions in
/// docs/terminal.md, "Ports"):
/// - local: sockets held by the sandbox's process trees — its terminals' shells and their
///   descendants, and processes whose working folder is in the workspace;
/// - bwrap: every listener of a terminal's network namespace (or, with the network shared, as
///   local);
/// - ssh: listeners on the remote host held by processes the backend started (its marker),
///   working in the workspace;
/// - daytona: the toolbox's detected ports (3000–9999).
/// Blocking (ssh and daytona ask the remote): call it off the GUI thread.
QList<SandboxPort> listSandboxPorts(const BackendPtr &backend, const QString &workspaceId);

/// Where a browser opens the port, making the SSH forward or asking for Daytona's signed
/// preview URL when needed (blocking). A NamespaceProxy port needs the proxy first
/// (NamespaceForward) and has no URL here. Throws SandboxError when it cannot.
QUrl sandboxPortUrl(const BackendPtr &backend, const SandboxPort &port);

} // namespace elsai
