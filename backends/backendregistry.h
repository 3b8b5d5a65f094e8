// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "backend.h"

#include <QCommandLineOption>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

class QCommandLineParser;

namespace elsai {

struct SandboxSpec;

/// What a backend can do, for the command line and the New Sandbox dialog to ask instead of
/// comparing backend names.
struct BackendCapabilities
{
    /// The workspace is a folder on this host (--workspace-root names it); otherwise it lives
    /// elsewhere and the backend names it itself.
    bool hostFolder = false;
    /// Commands get the workbench's own environment (--no-inherit-env turns it off).
    bool inheritsEnvironment = false;
    /// A timed-out command gets TERM, then KILL after a grace the user sets.
    bool killGrace = false;
    /// Interactive terminals (a PTY) can be opened in the sandbox.
    bool pty = false;
    /// Checkpoints and change tracking (TimeTravelOptions) work: the window turns them on by
    /// default for such a backend (docs/window.md, Timeline).
    bool timeTravel = false;
    /// They work by listing the remote workspace (one remote command per checkpoint, and at
    /// the start and end of every call with change tracking): the window offers them off by
    /// default and says what they cost.
    bool timeTravelByListing = false;
};

/// One backend as the rest of the program sees it: adding a backend is one descriptor here
/// (and its SandboxSpec member and dialog page), never a name compared elsewhere.
struct BackendDescriptor
{
    QString name;    ///< the value of --backend
    QString title;   ///< for people: "Docker / Podman container"
    QString summary; ///< one sentence: where commands run and what isolates them
    /// What --help says beside the name: its options and variables ("--docker-*").
    QString helpHint;
    BackendCapabilities capabilities;
    /// Its own command-line options (--docker-image, …); given with another backend they are
    /// refused.
    QList<QCommandLineOption> options;
    /// Reads those options into the spec (ValueError naming the option); called for the
    /// chosen backend only, also when none of its options is set (a required one is missing).
    std::function<void(const QCommandLineParser &, SandboxSpec &)> readOptions;
    /// Builds the backend from the spec (ValueError for bad values).
    std::function<BackendPtr(SandboxSpec &)> create;
};

namespace BackendRegistry {

/// Every backend, in the order the command line and the dialog list them.
const QList<BackendDescriptor> &all();
/// The backend called `name`, or null.
const BackendDescriptor *find(const QString &name);
/// The backend called `name`; ValueError naming the available ones otherwise.
const BackendDescriptor &get(const QString &name);
QStringList names();
/// "local (default), bwrap (--bwrap-*), …": the backends as --help lists them.
QString helpText();
/// The capabilities of `name` (all false for an unknown name).
BackendCapabilities capabilities(const QString &name);

} // namespace BackendRegistry

} // namespace elsai
