// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QString>

class QTemporaryDir;

namespace elsai {

struct SessionOptions;

/// Copies the bundled sample project (Qt resource ":/sample-project", compiled into the
/// executable) into `dest`; false when it is missing.
bool extractSampleProject(const QString &dest);

/// With neither --seed-from nor --workspace-root, makes the session a demo: seeded from the
/// sample project (extracted into `scratch`, or the source tree as a fallback) under the
/// workspace id "demo" unless one was given. Returns true when it did.
bool applyDemoDefaults(SessionOptions &options, bool workspaceIdGiven, QTemporaryDir &scratch);

} // namespace elsai
