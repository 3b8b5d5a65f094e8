// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// The backend conformance suite: the same cases for every SandboxBackend. Each backend has a
// tiny executable (tst_conformance_<name>.cpp) that fills a BackendFixture and calls
// runBackendConformance() from main().
//
// Everything a case needs goes through the backend itself: files are planted with
// writeFile() or execute() (symlinks with `ln -s`), never on the workspace's host folder, so
// remote backends run the same cases. Seeding and flush use host folders, as their API does.

#include "backend.h"

#include <QHash>
#include <QString>

#include <functional>
#include <memory>

struct BackendFixture
{
    QString name;
    /// A fresh, created backend over an empty workspace, with the spec's defaults: timeout
    /// 120 s and max_output_bytes 100000.
    std::function<std::shared_ptr<elsai::SandboxBackend>()> make;
    /// False where the service's listing has no link type (AgentCore's listFiles names only
    /// files and folders): listDir may report a link as its target's type. Confinement
    /// through links is still checked.
    bool listsSymlinks = true;
    /// Test function → why it is skipped for this backend: a known backend bug not fixed yet
    /// (the reason names it; docs/backends/conformance.md lists them). Keep it empty.
    QHash<QString, QString> knownBugs = {};
    /// A second backend on the same workspace, not created yet, as the workbench makes one
    /// after it restarts (SSH: same remote folder; Daytona: the existing sandbox); null where
    /// a workspace cannot be reattached (an AgentCore session ends with its backend).
    std::function<std::shared_ptr<elsai::SandboxBackend>(elsai::SandboxBackend &)> reopen = {};
    /// The largest single answer the service sent since the last reset (what one call moved);
    /// null where nothing records it (local backends, SSH).
    std::function<qint64()> largestTransfer = {};
    std::function<void()> resetTransfer = {};
    /// The requests (SSH: remote commands) the backends sent so far, to count round trips;
    /// null where nothing counts them (local backends, containers).
    std::function<qint64()> roundTrips = {};
    /// Runs after the last case, while the suite's QCoreApplication still exists: a fake
    /// service whose server thread needs the event loop must be released here, not at exit.
    std::function<void()> teardown = {};
};

/// Runs every conformance case against backends made by `fixture` (QTest::qExec; the usual
/// QtTest command line applies). Returns the process exit status.
int runBackendConformance(int argc, char **argv, const BackendFixture &fixture);
