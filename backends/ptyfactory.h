// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"
#include "ptysession.h"

#include <QObject>
#include <QString>

namespace elsai {

/// Whether `backend` can open a terminal, with the reason when it cannot (the window's
/// tooltip). Null: no sandbox running.
PtySupport ptySupport(const ExecutionBackend *backend);

/// A new, not yet started terminal session on `backend` for the sandbox `workspaceId`, or
/// nullptr when ptySupport() says no. The session keeps the backend alive.
PtySession *createPtySession(const BackendPtr &backend, const QString &workspaceId,
                             QObject *parent = nullptr);

} // namespace elsai
