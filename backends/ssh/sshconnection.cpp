// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sshconnection.h"

#include "errors.h"
#include "processguard.h"
#include "shellquote.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QStandardPaths>

#include <cerrno>

namespace elsai::ssh {

Q_LOGGING_CATEGORY(lcSsh, "elsai.backend.ssh", QtInfoMsg)

QString SshTarget::display() const
{
    const QString who = user.isEmpty() ? QString() : user + QLatin1Char('@');
    return who + host + QLatin1Char(':') + QString::number(port);
}

// ssh_config has its own quoting (double quotes, no escapes): refuse what it cannot carry.
static void checkConfigValue(const QString &what, const QString &value, bool allowSpace)
{
    static const QRegularExpression bad(QStringLiteral("[\"\\x00-\\x1f\\x7f]"));
    if (value.contains(bad) || (!allowSpace && value.contains(QLatin1Char(' '))))
        throw ValueError(
            QStringLiteral("ssh %1 '%2' contains characters that cannot be passed "
                           "to ssh (quotes, control characters%3)")
                .arg(what, value, allowSpace ? QString() : QStringLiteral(", spaces")));
}

static QString quoted(const QString &path)
{
    return QLatin1Char('"') + path + QLatin1Char('"');
}

SshConnection::SshConnection(SshTarget target)
    : m_target(std::move(target)), m_dir(QDir::tempPath() + QStringLiteral("/elsai-ssh-XXXXXX"))
{
    if (m_target.host.isEmpty())
        throw ValueError(QStringLiteral("the SSH backend needs a host (--ssh-host)"));
    if (m_target.host.startsWith(QLatin1Char('-')))
        throw ValueError(
            QStringLiteral("ssh host '%1' must not start with '-'").arg(m_target.host));
    checkConfigValue(QStringLiteral("host"), m_target.host, false);
    checkConfigValue(QStringLiteral("user"), m_target.user, false);
    checkConfigValue(QStringLiteral("identity file"), m_target.identityFile, true);
    checkConfigValue(QStringLiteral("known_hosts file"), m_target.knownHostsFile, true);
    if (m_target.port < 1 || m_target.port > 65535)
        throw ValueError(QStringLiteral("ssh port must be 1–65535, got %1").arg(m_target.port));
    if (m_target.connectTimeoutSeconds < 1)
        throw ValueError(QStringLiteral("ssh connect timeout must be >= 1 second"));
    if (!m_target.identityFile.isEmpty() && !QFileInfo(m_target.identityFile).isFile())
        throw FileNotFoundError(QStringLiteral("ssh identity file '%1' does not exist; give "
                                               "the private key file (--ssh-identity)")
                                    .arg(m_target.identityFile),
                                ENOENT);
    if (!m_target.knownHostsFile.isEmpty() && !QFileInfo(m_target.knownHostsFile).isFile())
        throw FileNotFoundError(
            QStringLiteral("known_hosts file '%1' does not exist; create it with the host's key "
                           "(ssh-keyscan -p PORT HOST, after checking the fingerprint)")
                .arg(m_target.knownHostsFile),
            ENOENT);
    m_ssh = QFileInfo(m_target.sshProgram).isAbsolute()
                ? m_target.sshProgram
                : QStandardPaths::findExecutable(m_target.sshProgram);
    if (m_ssh.isEmpty())
        throw FileNotFoundError(QStringLiteral("the ssh client '%1' is not installed (Debian: "
                                               "apt-get install openssh-client)")
                                    .arg(m_target.sshProgram),
                                ENOENT);
    if (!m_dir.isValid())
        throw OSError(QStringLiteral("cannot create a private folder for the ssh connection: %1")
                          .arg(m_dir.errorString()));

    QStringList cfg{
        QStringLiteral("Host ") + alias(),
        QStringLiteral("  HostName ") + m_target.host,
        QStringLiteral("  Port %1").arg(m_target.port),
        QStringLiteral("  BatchMode yes"), // never prompt: a prompt would hang the call
        QStringLiteral("  StrictHostKeyChecking yes"),
        QStringLiteral("  CheckHostIP no"),
        QStringLiteral("  UpdateHostKeys no"),
        QStringLiteral("  LogLevel ERROR"),
        QStringLiteral("  ConnectTimeout %1").arg(m_target.connectTimeoutSeconds),
        QStringLiteral("  ServerAliveInterval 15"),
        QStringLiteral("  ServerAliveCountMax 3"),
        QStringLiteral("  ControlPath ") + quoted(controlSocket()),
        QStringLiteral("  ControlMaster no"),
        // A master left behind by a crash goes away after four idle hours.
        QStringLiteral("  ControlPersist 4h"),
        QStringLiteral("  ForwardAgent no"),
        QStringLiteral("  ForwardX11 no"),
        QStringLiteral("  ClearAllForwardings yes"),
    };
    if (!m_target.user.isEmpty())
        cfg << QStringLiteral("  User ") + m_target.user;
    if (!m_target.identityFile.isEmpty()) {
        cfg << QStringLiteral("  IdentityFile ") +
                   quoted(QFileInfo(m_target.identityFile).absoluteFilePath())
            << QStringLiteral("  IdentitiesOnly yes");
    }
    if (!m_target.knownHostsFile.isEmpty()) {
        cfg << QStringLiteral("  UserKnownHostsFile ") +
                   quoted(QFileInfo(m_target.knownHostsFile).absoluteFilePath())
            << QStringLiteral("  GlobalKnownHostsFile /dev/null");
    }
    QFile f(configPath());
    if (!f.open(QIODevice::WriteOnly) || f.write(cfg.join(QLatin1Char('\n')).toUtf8() + '\n') < 0)
        throw OSError(QStringLiteral("cannot write the ssh config %1: %2")
                          .arg(configPath(), f.errorString()));
}

SshConnection::~SshConnection()
{
    try {
        stop();
    } catch (...) {
        // a destructor must not throw; the master exits on its own after ControlPersist
    }
}

QString SshConnection::configPath() const
{
    return m_dir.path() + QStringLiteral("/ssh_config");
}

QStringList SshConnection::clientArguments(const QByteArray &remoteCommand) const
{
    return {QStringLiteral("-F"), configPath(), QStringLiteral("-T"), alias(),
            QString::fromUtf8(remoteCommand)};
}

void SshConnection::start()
{
    QMutexLocker lock(&m_mutex);
    if (m_started && masterAlive())
        return;
    startLocked();
}

void SshConnection::startLocked()
{
    // The master backgrounds itself after login (-f) and outlives this QProcess; its stderr
    // goes to a file so no pipe is left open behind it.
    const QString log = m_dir.path() + QStringLiteral("/master.log");
    QFile::remove(log);
    QProcess p;
    p.setStandardInputFile(QProcess::nullDevice());
    p.setStandardOutputFile(QProcess::nullDevice());
    p.setStandardErrorFile(log);
    // It leaves our session (-f), so no group kill reaches it: it is born in the engine's
    // cgroup, and carries the engine's marker for where there is none (processguard.h).
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    const QByteArray marker = engineHelperMarker();
    const qsizetype eq = marker.indexOf('=');
    env.insert(QString::fromLatin1(marker.left(eq)), QString::fromLatin1(marker.mid(eq + 1)));
    p.setProcessEnvironment(env);
    p.start(m_ssh, {QStringLiteral("-F"), configPath(), QStringLiteral("-o"),
                    QStringLiteral("ControlMaster=yes"), QStringLiteral("-f"), QStringLiteral("-N"),
                    alias()});
    const int waitMs = (m_target.connectTimeoutSeconds + 20) * 1000;
    if (!p.waitForStarted(waitMs))
        throw OSError(QStringLiteral("cannot run %1: %2").arg(m_ssh, p.errorString()));
    if (!p.waitForFinished(waitMs)) {
        p.kill();
        p.waitForFinished(1000);
        throw TimeoutError(QStringLiteral("ssh login to %1 took more than %2 s; check the "
                                          "host and the network")
                               .arg(m_target.display())
                               .arg(waitMs / 1000),
                           ETIMEDOUT);
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        QFile f(log);
        const QByteArray err = f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        throwConnectionError(err, QStringLiteral("cannot connect"));
    }
    m_started = true;
    qCDebug(lcSsh) << "master connection to" << m_target.display() << "started";
}

void SshConnection::stop()
{
    QMutexLocker lock(&m_mutex);
    if (!m_started)
        return;
    m_started = false;
    QProcess p;
    p.setStandardInputFile(QProcess::nullDevice());
    p.start(m_ssh, {QStringLiteral("-F"), configPath(), QStringLiteral("-O"),
                    QStringLiteral("exit"), alias()});
    if (!p.waitForFinished(10000))
        p.kill();
    p.waitForFinished(1000);
}

bool SshConnection::masterAlive() const
{
    QProcess p;
    p.setStandardInputFile(QProcess::nullDevice());
    p.start(m_ssh, {QStringLiteral("-F"), configPath(), QStringLiteral("-O"),
                    QStringLiteral("check"), alias()});
    if (!p.waitForFinished(10000)) {
        p.kill();
        p.waitForFinished(1000);
        return false;
    }
    return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

ProcessOutcome SshConnection::run(const Call &call)
{
    if (!QFileInfo::exists(controlSocket())) {
        QMutexLocker lock(&m_mutex);
        if (m_started && !QFileInfo::exists(controlSocket())) {
            qCInfo(lcSsh) << "master connection to" << m_target.display()
                          << "went away; starting it again";
            startLocked(); // throws when the host cannot be reached any more
        }
    }
    const auto quoted = [](const QString &s) { return shellQuote(s.toUtf8()); };
    QByteArray line = "exec";
    line += ' ' + quoted(m_ssh);
    for (const QString &a : clientArguments(call.remoteCommand))
        line += ' ' + quoted(a);
    line += " <" + (call.stdinFile.isEmpty() ? QByteArray("/dev/null") : quoted(call.stdinFile));
    if (!call.stdoutFile.isEmpty())
        line += " >" + quoted(call.stdoutFile);
    ProcessSpec spec;
    spec.command = QString::fromUtf8(line);
    spec.environment = QProcessEnvironment::systemEnvironment().toStringList();
    spec.timeoutMs = call.timeoutMs;
    spec.killGraceMs = 500;
    spec.maxOutputBytes = call.maxOutputBytes;
    spec.onOutput = call.onOutput;
    spec.cancel = call.cancel;
    return runProcess(spec);
}

void SshConnection::throwConnectionError(const QByteArray &sshStderr, const QString &what) const
{
    const QString text = QString::fromUtf8(sshStderr).trimmed();
    const QString where = m_target.display();
    const QString kh = m_target.knownHostsFile.isEmpty() ? QStringLiteral("~/.ssh/known_hosts")
                                                         : m_target.knownHostsFile;
    if (text.contains(QLatin1String("IDENTIFICATION HAS CHANGED"))) {
        throw PermissionError(
            QStringLiteral("%1 to %2: the host key CHANGED since it was recorded in %3 (a "
                           "reinstalled host, or someone intercepting the connection); verify "
                           "the new key with the host's administrator before replacing the "
                           "entry")
                .arg(what, where, kh),
            EACCES);
    }
    if (text.contains(QLatin1String("Host key verification failed")) ||
        text.contains(QLatin1String("host key is known"))) {
        throw PermissionError(
            QStringLiteral("%1 to %2: the host key is not in %3 (strict host key checking); "
                           "check its fingerprint, then add it, e.g. ssh-keyscan -p %4 %5 >> %3. "
                           "ssh said: %6")
                .arg(what, where, kh, QString::number(m_target.port), m_target.host, text),
            EACCES);
    }
    if (text.contains(QLatin1String("Permission denied"))) {
        throw PermissionError(
            QStringLiteral("%1 to %2: the login was refused (%3); check the user and that the "
                           "identity file's public key is in the remote authorized_keys")
                .arg(what, where, text),
            EACCES);
    }
    if (text.contains(QLatin1String("Connection refused"))) {
        throw OSError(QStringLiteral("%1 to %2: connection refused; is sshd running on that "
                                     "port? (%3)")
                          .arg(what, where, text),
                      ECONNREFUSED);
    }
    if (text.contains(QLatin1String("timed out"))) {
        throw TimeoutError(QStringLiteral("%1 to %2: %3").arg(what, where, text), ETIMEDOUT);
    }
    throw OSError(QStringLiteral("%1 to %2: ssh failed: %3")
                      .arg(what, where, text.isEmpty() ? QStringLiteral("no message") : text),
                  EIO);
}

} // namespace elsai::ssh
