// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "process.h"

#include <QByteArray>
#include <QMutex>
#include <QString>
#include <QTemporaryDir>

#include <functional>
#include <memory>

namespace elsai::ssh {

/// Where and how to log in. Every value is written into a private ssh_config, so the user's
/// ~/.ssh/config is never read.
struct SshTarget
{
    QString host;
    int port = 22;
    QString user;           ///< empty: the local user name
    QString identityFile;   ///< empty: ssh's default identities (and the agent)
    QString knownHostsFile; ///< empty: ~/.ssh/known_hosts
    int connectTimeoutSeconds = 10;
    QString sshProgram = QStringLiteral("ssh"); ///< name on PATH or absolute path

    /// "user@host:port" for messages.
    QString display() const;
};

/// One OpenSSH ControlMaster connection and the ssh clients that share it. Thread-safe: calls
/// run concurrently over the one master (each is its own ssh channel).
class SshConnection
{
public:
    /// Validates the target (ValueError) and writes the private config (OSError).
    explicit SshConnection(SshTarget target);
    ~SshConnection();
    SshConnection(const SshConnection &) = delete;
    SshConnection &operator=(const SshConnection &) = delete;

    const SshTarget &target() const { return m_target; }
    /// The private folder (mode 0700) holding the config, the control socket and temp files.
    QString localDir() const { return m_dir.path(); }
    QString configPath() const;
    QString controlSocket() const { return m_dir.path() + QStringLiteral("/cm"); }
    static QString alias() { return QStringLiteral("elsai-remote"); }

    /// Starts the master (idempotent). Throws PermissionError for an unknown or changed host
    /// key and for a refused login, OSError when the host cannot be reached.
    void start();
    /// Closes the master (`ssh -O exit`). Idempotent.
    void stop();
    /// `ssh -O check`.
    bool masterAlive() const;

    struct Call
    {
        QByteArray remoteCommand;
        QString stdinFile;  ///< local file fed to the remote stdin; empty: /dev/null
        QString stdoutFile; ///< local file receiving stdout; empty: captured in the outcome
        int timeoutMs = 0;  ///< <= 0: none
        qint64 maxOutputBytes = qint64(1) << 40;
        std::function<void(OutputChannel, const QByteArray &)> onOutput;
        std::shared_ptr<CancellationToken> cancel;
    };
    /// Runs one ssh client over the master and waits for it. The exit code is the remote
    /// command's, or 255 when ssh itself failed. A master that went away (its socket is gone)
    /// is started again first, so calls never fall back to a full login each.
    ProcessOutcome run(const Call &call);

    /// The argv of an ssh client over the master (for benchmarks and diagnostics).
    QStringList clientArguments(const QByteArray &remoteCommand) const;

    /// Throws the OSError that explains a failed ssh client (exit 255) from its stderr.
    [[noreturn]] void throwConnectionError(const QByteArray &sshStderr, const QString &what) const;

private:
    void startLocked();

    SshTarget m_target;
    QTemporaryDir m_dir;
    QString m_ssh; ///< absolute path of the ssh client
    mutable QMutex m_mutex;
    bool m_started = false;
};

} // namespace elsai::ssh
