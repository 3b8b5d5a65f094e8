// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "agentcorebackend.h"
#include "bwrapsandboxbackend.h"
#include "daytonabackend.h"
#include "dockersandboxbackend.h"
#include "localsandboxbackend.h"
#include "sandbox.h"
#include "sshconnection.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace elsai {

/// Everything needed to create one sandbox: the Sandbox parameters and the backend's. Filled
/// by the command line (SessionOptions) and by the window's New Sandbox dialog.
struct SandboxSpec
{
    QString workspaceId = QStringLiteral("workbench");
    QString backend = QStringLiteral("local");
    /// Host folder of a local workspace; empty: a new folder under the temp folder, kept.
    /// For `ssh` it is not a location: createBackend() fills it with the backend id
    /// ("ssh:user@host:port/<remote root>/<workspace>") for display.
    QString workspaceRoot;
    std::optional<QString> seedFrom;
    QStringList seedExclude;                ///< merged with DEFAULT_SANDBOX_SEED_EXCLUDES
    std::optional<QStringList> syncInclude; ///< none: DEFAULT_SANDBOX_SYNC_INCLUDE
    std::optional<QString> syncDest;
    /// Flush rule where a destination has no base (nothing seeded from or flushed to it).
    NoBaseConflict noBaseConflict = NoBaseConflict::KeepBoth;
    std::optional<double> ttlSeconds = 7200;
    /// Bound of an agent's read_file answer in bytes (Sandbox::Options::readFileMaxBytes).
    qint64 readFileMaxBytes = DefaultReadFileMaxBytes;
    /// Sandbox::Options::executeSoftReturnSeconds (none: the default, 45 s).
    std::optional<double> executeSoftReturnSeconds;
    /// Checkpoints and change tracking (--checkpoints, --track-changes, …).
    TimeTravelOptions timeTravel;
    /// Command options shared by every backend (timeout, output cap, env; inheritEnv is local
    /// and bwrap only: remote commands get the remote login environment plus `env`).
    LocalSandboxBackend::Options local;
    BwrapSandboxBackend::Options bwrap; ///< isolation and limits of the bwrap backend
    /// `ssh`: where to log in (host required) and the remote folder holding the workspaces
    /// (relative: to the remote home); the workspace is <sshRemoteRoot>/<sanitized id>.
    ssh::SshTarget ssh;
    QString sshRemoteRoot = QStringLiteral(".elsai/workspaces");
    /// Daytona connection and sandbox settings (DAYTONA_* variables by default); its timeout,
    /// output cap and env are taken from `local`, which the command line fills.
    DaytonaSandboxBackend::Options daytona;
    /// `agentcore`: empty credentials, region and endpoint are taken from the environment
    /// (AWS_*); the command timeout, output cap and --env variables come from `local`.
    aws::AgentCoreOptions agentcore;
    /// `docker`: the image (required), the engine's address and the container's limits; the
    /// command timeout, output cap, kill grace and --env variables come from `local`.
    DockerSandboxBackend::Options docker;

    /// Names accepted by `backend` (BackendRegistry::names()).
    static QStringList availableBackends();

    /// Builds the backend through its descriptor (backendregistry.h; ValueError for an unknown
    /// backend or bad values). Fills workspaceRoot when empty: a new host folder for a backend
    /// with one (OSError when none can be made), else the backend's id, for display.
    BackendPtr createBackend();
    /// createBackend() + Sandbox::create() with `manager` (none: the sandbox makes its own).
    SandboxPtr createSandbox(std::shared_ptr<SandboxManager> manager = {});
};

} // namespace elsai
