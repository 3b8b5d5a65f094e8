// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// A throwaway sshd on 127.0.0.1 for tests (remote-backends.md §5.4): generated host and user
// keys in a private temp folder, a free port, key login for the current user (root included),
// stopped and removed with the fixture. Reusable by any suite:
//
//   elsai::test::SshServer sshd;
//   if (!sshd.start()) QSKIP(qPrintable(sshd.error()));
//   auto backend = sshd.makeBackend("ws1"); // SshSandboxBackend, create() not called yet
//   BackendFixture{"ssh", sshd.factory()};  // for the conformance suite

#include "sshsandboxbackend.h"
#include "testutil.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>

namespace elsai::test {

class SshServer
{
public:
    SshServer() = default;
    ~SshServer() { stop(); }
    /// Lets clients forward TCP ports (off: the suites need none); set before start().
    bool tcpForwarding = false;
    SshServer(const SshServer &) = delete;
    SshServer &operator=(const SshServer &) = delete;

    /// Starts sshd; false (see error()) when openssh-server is missing or sshd will not run.
    bool start()
    {
        if (m_sshd)
            return true;
        isolateFlushBases(); // the backends it makes keep their flush bases on this host
        if (!QFileInfo(sshdPath()).isExecutable())
            return fail(
                QStringLiteral("%1 not found (apt-get install openssh-server)").arg(sshdPath()));
        if (QStandardPaths::findExecutable(QStringLiteral("ssh")).isEmpty() ||
            QStandardPaths::findExecutable(QStringLiteral("ssh-keygen")).isEmpty())
            return fail(QStringLiteral("ssh / ssh-keygen not found (apt-get install "
                                       "openssh-client)"));
        m_dir = std::make_unique<QTemporaryDir>(QDir::tempPath() +
                                                QStringLiteral("/elsai-sshd-XXXXXX"));
        if (!m_dir->isValid())
            return fail(QStringLiteral("cannot create a temp folder"));
        ::chmod(QFile::encodeName(dir()).constData(), 0700);
        if (::geteuid() == 0) {
            // sshd's privilege separation folder (missing in fresh chroots and containers)
            ::mkdir("/run/sshd", 0755);
        }
        const passwd *pw = ::getpwuid(::geteuid());
        m_user = pw ? QString::fromLocal8Bit(pw->pw_name) : QStringLiteral("root");
        if (!keygen(hostKey()) || !keygen(userKey()))
            return false;
        QFile::copy(userKey() + QStringLiteral(".pub"), path("authorized_keys"));
        QFile::setPermissions(path("authorized_keys"), QFile::ReadOwner | QFile::WriteOwner);
        m_port = freePort();
        if (m_port <= 0)
            return fail(QStringLiteral("no free port on 127.0.0.1"));
        const QStringList cfg{
            QStringLiteral("ListenAddress 127.0.0.1"),
            QStringLiteral("Port %1").arg(m_port),
            QStringLiteral("HostKey ") + hostKey(),
            QStringLiteral("AuthorizedKeysFile ") + path("authorized_keys"),
            QStringLiteral("PidFile none"),
            QStringLiteral("AllowUsers ") + m_user,
            QStringLiteral("PubkeyAuthentication yes"),
            QStringLiteral("PasswordAuthentication no"),
            QStringLiteral("KbdInteractiveAuthentication no"),
            QStringLiteral("PermitRootLogin prohibit-password"),
            QStringLiteral("UsePAM no"),
            QStringLiteral("StrictModes no"),
            QStringLiteral("X11Forwarding no"),
            QStringLiteral("AllowTcpForwarding ") +
                (tcpForwarding ? QStringLiteral("local") : QStringLiteral("no")),
            QStringLiteral("PrintMotd no"),
            QStringLiteral("MaxSessions 100"), // many channels over one master
            QStringLiteral("MaxStartups 100"),
            QStringLiteral("Subsystem sftp /usr/lib/openssh/sftp-server"),
            QStringLiteral("LogLevel VERBOSE"),
            // bash sources ~/.bashrc for a command sent over SSH when it is the top-level
            // shell; a user's (e.g. `pyenv init`: 1 s) would be paid by every remote command
            // of the suites. SHLVL=1 makes the session's shell a nested one.
            QStringLiteral("SetEnv SHLVL=1"),
        };
        writeFile(path("sshd_config"), cfg.join(u'\n').toUtf8() + '\n');
        QString out;
        if (runTool(sshdPath(), {QStringLiteral("-t"), QStringLiteral("-f"), path("sshd_config")},
                    &out) != 0)
            return fail(QStringLiteral("sshd -t rejected the config: ") + out);

        m_sshd = std::make_unique<QProcess>();
        m_sshd->setStandardOutputFile(QProcess::nullDevice());
        m_sshd->setStandardErrorFile(path("sshd.log"));
        // absolute path: sshd re-executes itself
        m_sshd->start(sshdPath(), {QStringLiteral("-D"), QStringLiteral("-e"), QStringLiteral("-f"),
                                   path("sshd_config")});
        if (!m_sshd->waitForStarted(10000))
            return fail(QStringLiteral("cannot start sshd: ") + m_sshd->errorString());
        if (!waitForPort())
            return fail(QStringLiteral("sshd did not listen on port %1: %2")
                            .arg(m_port)
                            .arg(QString::fromUtf8(log())));
        writeFile(knownHosts(), knownHostsLine());
        const QStringList client{
            QStringLiteral("Host ") + alias(),
            QStringLiteral("  HostName 127.0.0.1"),
            QStringLiteral("  Port %1").arg(m_port),
            QStringLiteral("  User ") + m_user,
            QStringLiteral("  IdentityFile ") + userKey(),
            QStringLiteral("  IdentitiesOnly yes"),
            QStringLiteral("  UserKnownHostsFile ") + knownHosts(),
            QStringLiteral("  GlobalKnownHostsFile /dev/null"),
            QStringLiteral("  StrictHostKeyChecking yes"),
            QStringLiteral("  BatchMode yes"),
            QStringLiteral("  LogLevel ERROR"),
        };
        writeFile(path("client_config"), client.join(u'\n').toUtf8() + '\n');
        QDir().mkpath(remoteRoot());
        return true;
    }

    void stop()
    {
        if (m_sshd) {
            m_sshd->terminate();
            if (!m_sshd->waitForFinished(5000)) {
                m_sshd->kill();
                m_sshd->waitForFinished(2000);
            }
            m_sshd.reset();
        }
        m_dir.reset();
    }

    bool isRunning() const { return m_sshd && m_sshd->state() == QProcess::Running; }
    const QString &error() const { return m_error; }
    int port() const { return m_port; }
    const QString &user() const { return m_user; }
    QString dir() const { return m_dir ? m_dir->path() : QString(); }
    QString path(const char *name) const { return dir() + u'/' + QLatin1String(name); }
    QString hostKey() const { return path("host_ed25519"); }
    QString userKey() const { return path("user_ed25519"); }
    QString knownHosts() const { return path("known_hosts"); }
    /// "[127.0.0.1]:PORT ssh-ed25519 AAAA…\n"
    QByteArray knownHostsLine() const
    {
        QFile f(hostKey() + QStringLiteral(".pub"));
        f.open(QIODevice::ReadOnly);
        const QList<QByteArray> parts = f.readAll().trimmed().split(' ');
        return "[127.0.0.1]:" + QByteArray::number(m_port) + ' ' + parts.value(0) + ' ' +
               parts.value(1) + '\n';
    }
    /// Folder on the "remote" (this machine) that holds the workspaces.
    QString remoteRoot() const { return path("remote"); }
    static QString alias() { return QStringLiteral("elsai-test"); }
    QByteArray log() const
    {
        QFile f(path("sshd.log"));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    ssh::SshTarget target() const
    {
        ssh::SshTarget t;
        t.host = QStringLiteral("127.0.0.1");
        t.port = m_port;
        t.user = m_user;
        t.identityFile = userKey();
        t.knownHostsFile = knownHosts();
        return t;
    }
    SshSandboxBackend::Options backendOptions(const QString &workspaceName) const
    {
        SshSandboxBackend::Options o;
        o.target = target();
        o.remoteRoot = remoteRoot();
        o.workspaceName = workspaceName;
        return o;
    }
    /// A backend on a fresh workspace folder each call (create() not called).
    std::shared_ptr<SshSandboxBackend> makeBackend(const QString &workspaceName = {})
    {
        static std::atomic_int counter{0};
        const QString name = workspaceName.isEmpty()
                                 ? QStringLiteral("ws%1").arg(counter.fetch_add(1))
                                 : workspaceName;
        return std::make_shared<SshSandboxBackend>(backendOptions(name));
    }
    /// For the backend conformance suite: BackendFixture{"ssh", sshd.factory()}.
    std::function<std::shared_ptr<SandboxBackend>()> factory()
    {
        return [this] {
            auto b = makeBackend();
            return std::static_pointer_cast<SandboxBackend>(b);
        };
    }

    /// Runs `command` on the remote with a plain ssh client (no master); its stdout.
    QByteArray remote(const QString &command, int *exitCode = nullptr) const
    {
        QString out;
        const int rc =
            runTool(QStringLiteral("ssh"),
                    {QStringLiteral("-F"), path("client_config"), alias(), command}, &out, false);
        if (exitCode)
            *exitCode = rc;
        return out.toUtf8();
    }

private:
    static QString sshdPath() { return QStringLiteral("/usr/sbin/sshd"); }

    bool fail(const QString &why)
    {
        m_error = QStringLiteral("throwaway sshd: ") + why;
        if (m_sshd) {
            m_sshd->kill();
            m_sshd->waitForFinished(2000);
            m_sshd.reset();
        }
        return false;
    }

    bool keygen(const QString &file)
    {
        QString out;
        if (runTool(QStringLiteral("ssh-keygen"),
                    {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                     QStringLiteral("-N"), QString(), QStringLiteral("-C"),
                     QStringLiteral("elsai-test"), QStringLiteral("-f"), file},
                    &out) != 0)
            return fail(QStringLiteral("ssh-keygen failed: ") + out);
        return true;
    }

    static int runTool(const QString &program, const QStringList &args, QString *output,
                       bool mergeStderr = true)
    {
        QProcess p;
        p.setProcessChannelMode(mergeStderr ? QProcess::MergedChannels
                                            : QProcess::SeparateChannels);
        p.setStandardInputFile(QProcess::nullDevice());
        p.start(program, args);
        if (!p.waitForFinished(60000)) {
            p.kill();
            p.waitForFinished(1000);
            return -1;
        }
        *output = QString::fromUtf8(p.readAllStandardOutput());
        return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    }

    static void writeFile(const QString &file, const QByteArray &data)
    {
        QFile f(file);
        if (f.open(QIODevice::WriteOnly | QIODevice::Truncate))
            f.write(data);
    }

    static int freePort()
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        int port = -1;
        if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0)
            port = ntohs(addr.sin_port);
        ::close(fd);
        return port;
    }

    bool waitForPort() const
    {
        // bounded: 300 × 100 ms (machines here are heavily shared)
        for (int i = 0; i < 300; ++i) {
            if (!m_sshd || m_sshd->state() != QProcess::Running)
                return false;
            const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in addr{};
            addr.sin_family = AF_INET;
            addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            addr.sin_port = htons(quint16(m_port));
            const bool ok = ::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
            ::close(fd);
            if (ok)
                return true;
            QThread::msleep(100);
        }
        return false;
    }

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QProcess> m_sshd;
    QString m_user;
    QString m_error;
    int m_port = 0;
};

} // namespace elsai::test
