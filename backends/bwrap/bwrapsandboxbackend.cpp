// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "bwrapsandboxbackend.h"

#include "errors.h"
#include "fdutil.h"
#include "inputchecks.h"
#include "pidscgroup.h"
#include "process.h"
#include "workspacefs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QStandardPaths>

#include <cmath>

#include <fcntl.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcBwrap, "elsai.bwrap", QtInfoMsg)

namespace elsai {

namespace {

/// Host files under /etc that ordinary commands need: the loader cache, user and group
/// names (no passwords: shadow stays out), time zone, TLS roots, and the alternatives
/// symlinks Debian points /usr/bin entries at.
const QStringList EtcFiles = {
    QStringLiteral("/etc/ld.so.cache"),  QStringLiteral("/etc/ld.so.conf"),
    QStringLiteral("/etc/ld.so.conf.d"), QStringLiteral("/etc/passwd"),
    QStringLiteral("/etc/group"),        QStringLiteral("/etc/nsswitch.conf"),
    QStringLiteral("/etc/localtime"),    QStringLiteral("/etc/alternatives"),
    QStringLiteral("/etc/ssl/certs"),    QStringLiteral("/etc/ca-certificates"),
    QStringLiteral("/etc/mime.types"),
};
/// Name resolution, bound only when the sandbox has the network.
const QStringList EtcNetworkFiles = {
    QStringLiteral("/etc/resolv.conf"),
    QStringLiteral("/etc/hosts"),
    QStringLiteral("/etc/host.conf"),
    QStringLiteral("/etc/gai.conf"),
};
/// Top-level folders that hold programs and libraries: bound read-only, or recreated as
/// the symlinks they are on merged-/usr systems.
const QStringList ProgramDirs = {
    QStringLiteral("/bin"),   QStringLiteral("/sbin"),  QStringLiteral("/lib"),
    QStringLiteral("/lib32"), QStringLiteral("/lib64"), QStringLiteral("/libx32"),
};
/// Host variables copied in when set: locale and terminal only, nothing that can hold a
/// secret.
const QStringList HostAllowlist = {
    QStringLiteral("LANG"),        QStringLiteral("LC_ALL"), QStringLiteral("LC_CTYPE"),
    QStringLiteral("LC_MESSAGES"), QStringLiteral("TERM"),   QStringLiteral("TZ"),
};

int timeoutMs(double seconds)
{
    if (!(seconds > 0) || !std::isfinite(seconds))
        throw ValueError(
            QStringLiteral("timeout must be a positive number of seconds, got %1").arg(seconds));
    // Round up: a tiny timeout must still be a timeout (0 would mean "none").
    return static_cast<int>(std::clamp(std::ceil(seconds * 1000.0), 1.0, 2e9));
}

} // namespace

BwrapSandboxBackend::BwrapSandboxBackend(const QString &workspaceRoot,
                                         LocalSandboxBackend::Options base, Options options)
    : LocalSandboxBackend(workspaceRoot, std::move(base)), m_bwrap(std::move(options))
{
    if (m_bwrap.maxProcesses < 1)
        throw ValueError(
            QStringLiteral("max_processes must be >= 1, got %1").arg(m_bwrap.maxProcesses));
    if (m_bwrap.maxFileSizeBytes < 0 || m_bwrap.maxMemoryBytes < 0)
        throw ValueError(QStringLiteral("file size and memory limits must be >= 0 (0 = none)"));
    checkEnvironment(LocalSandboxBackend::options().env);
    for (const QString &p : m_bwrap.readOnlyBinds) {
        if (!QDir::isAbsolutePath(p))
            throw ValueError(QStringLiteral("read-only bind '%1' must be an absolute path").arg(p));
    }
}

BwrapSandboxBackend::BwrapSandboxBackend(const QString &workspaceRoot)
    : BwrapSandboxBackend(workspaceRoot, LocalSandboxBackend::Options(), Options())
{
}

QString BwrapSandboxBackend::id() const
{
    return QStringLiteral("bwrap:") + workspaceRoot();
}

void BwrapSandboxBackend::create()
{
    LocalSandboxBackend::create();
    QMutexLocker lock(&m_createMutex);
    if (!m_bwrapProgram.isEmpty())
        return;
    const QString program = m_bwrap.bwrapPath.isEmpty()
                                ? QStandardPaths::findExecutable(QStringLiteral("bwrap"))
                                : m_bwrap.bwrapPath;
    if (program.isEmpty() || !QFileInfo(program).isExecutable()) {
        LocalSandboxBackend::close();
        throw OSError(
            QStringLiteral("bubblewrap (bwrap) was not found%1; install the Debian "
                           "package 'bubblewrap'")
                .arg(m_bwrap.bwrapPath.isEmpty() ? QString() : QStringLiteral(" at ") + program));
    }
    m_canonicalRoot = QFileInfo(workspaceRoot()).canonicalFilePath();
    // Looked up where the sandbox sees it too (/usr and /bin are bound), not in the host PATH.
    m_prlimit = QStandardPaths::findExecutable(
        QStringLiteral("prlimit"), {QStringLiteral("/usr/bin"), QStringLiteral("/bin")});
    if (m_prlimit.isEmpty())
        qCWarning(lcBwrap) << "prlimit (util-linux) not found: commands run without rlimits";

    // One probe, so that a machine without user namespaces fails here with the reason rather
    // than on every command.
    m_bwrapProgram = program;
    ProcessSpec probe;
    probe.arguments = QStringList{program} + bwrapArguments(QStringLiteral("true"));
    probe.environment = {QStringLiteral("PATH=/usr/bin:/bin")};
    probe.timeoutMs = 30000;
    const ProcessOutcome out = runProcess(probe);
    if (out.exitCode != 0) {
        m_bwrapProgram.clear();
        LocalSandboxBackend::close();
        throw OSError(QStringLiteral("bubblewrap cannot create a sandbox here (exit code %1: "
                                     "%2); it needs unprivileged user namespaces (sysctl "
                                     "kernel.unprivileged_userns_clone=1, "
                                     "user.max_user_namespaces > 0)")
                          .arg(out.exitCode)
                          .arg(QString::fromLocal8Bit(out.stderrData).trimmed()));
    }
    if (PidsCgroup::parentFolder().isEmpty())
        qCInfo(lcBwrap) << "no pids cgroup can be made here: processes are limited by "
                           "RLIMIT_NPROC only";
}

QMap<QString, QString>
BwrapSandboxBackend::sandboxEnvironment(const QMap<QString, QString> &extraEnv) const
{
    QMap<QString, QString> env;
    env.insert(QStringLiteral("PATH"),
               QStringLiteral("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
    env.insert(QStringLiteral("HOME"), QStringLiteral("/tmp"));
    env.insert(QStringLiteral("TMPDIR"), QStringLiteral("/tmp"));
    env.insert(QStringLiteral("LANG"), QStringLiteral("C.UTF-8"));
    env.insert(QStringLiteral("TERM"), QStringLiteral("dumb"));
    for (const QString &name : HostAllowlist) {
        const QByteArray value = qgetenv(name.toLatin1().constData());
        if (!value.isEmpty())
            env.insert(name, QString::fromLocal8Bit(value));
    }
    for (const auto *source : {&options().env, &extraEnv}) {
        checkEnvironment(*source);
        for (auto it = source->cbegin(); it != source->cend(); ++it)
            env.insert(it.key(), it.value());
    }
    return env;
}

QStringList BwrapSandboxBackend::bwrapArguments(const QString &command, const QString &insideCwd,
                                                bool readOnlyWorkspace,
                                                const QMap<QString, QString> &extraEnv) const
{
    QStringList a{
        QStringLiteral("--unshare-user"),
        QStringLiteral("--unshare-pid"),
        QStringLiteral("--unshare-ipc"),
        QStringLiteral("--unshare-uts"),
        QStringLiteral("--unshare-cgroup-try"),
        // No nested user namespaces: they are the usual first step of kernel exploits.
        QStringLiteral("--disable-userns"),
        QStringLiteral("--die-with-parent"),
        QStringLiteral("--new-session"),
        QStringLiteral("--cap-drop"),
        QStringLiteral("ALL"),
        QStringLiteral("--hostname"),
        QStringLiteral("elsai-sandbox"),
        QStringLiteral("--clearenv"),
    };
    if (!m_bwrap.network)
        a << QStringLiteral("--unshare-net");
    const QMap<QString, QString> env = sandboxEnvironment(extraEnv);
    for (auto it = env.cbegin(); it != env.cend(); ++it)
        a << QStringLiteral("--setenv") << it.key() << it.value();

    a << QStringLiteral("--ro-bind") << QStringLiteral("/usr") << QStringLiteral("/usr");
    for (const QString &dir : ProgramDirs) {
        const QFileInfo fi(dir);
        if (fi.isSymLink())
            a << QStringLiteral("--symlink") << fi.symLinkTarget() << dir;
        else if (fi.isDir())
            a << QStringLiteral("--ro-bind") << dir << dir;
    }
    for (const QString &f : EtcFiles)
        a << QStringLiteral("--ro-bind-try") << f << f;
    if (m_bwrap.network) {
        for (const QString &f : EtcNetworkFiles)
            a << QStringLiteral("--ro-bind-try") << f << f;
    }
    for (const QString &p : m_bwrap.readOnlyBinds)
        a << QStringLiteral("--ro-bind-try") << p << p;
    a << QStringLiteral("--proc") << QStringLiteral("/proc") << QStringLiteral("--dev")
      << QStringLiteral("/dev") << QStringLiteral("--tmpfs") << QStringLiteral("/tmp");

    const QString root = m_canonicalRoot.isEmpty() ? workspaceRoot() : m_canonicalRoot;
    a << (readOnlyWorkspace ? QStringLiteral("--ro-bind") : QStringLiteral("--bind")) << root
      << sandboxWorkspace();
    // bwrap builds the tree on a tmpfs root; freeze it so that nothing but /workspace, /tmp
    // and /dev/shm is writable, even in throwaway memory.
    a << QStringLiteral("--remount-ro") << QStringLiteral("/");
    a << QStringLiteral("--chdir")
      << (insideCwd.isEmpty() ? sandboxWorkspace()
                              : sandboxWorkspace() + QLatin1Char('/') + insideCwd);
    a << QStringLiteral("--");
    if (!m_prlimit.isEmpty()) {
        // Inside the sandbox, so the limits bind the command and not bwrap's own setup.
        a << m_prlimit << QStringLiteral("--nproc=%1").arg(m_bwrap.maxProcesses);
        if (m_bwrap.maxFileSizeBytes > 0)
            a << QStringLiteral("--fsize=%1").arg(m_bwrap.maxFileSizeBytes);
        if (m_bwrap.maxMemoryBytes > 0)
            a << QStringLiteral("--data=%1").arg(m_bwrap.maxMemoryBytes);
    }
    a << QStringLiteral("/bin/sh") << QStringLiteral("-c") << command;
    return a;
}

QString BwrapSandboxBackend::insideCwd(const QString &cwd) const
{
    if (cwd.isEmpty())
        return {};
    // The confined resolver refuses escapes (PermissionError) and missing folders; the real
    // path of what it opened tells where that is beneath the workspace.
    const UniqueFd fd(fs()->openDirectory(cwd));
    const QString link = QStringLiteral("/proc/self/fd/%1").arg(fd.get());
    const QString real = QFileInfo(link).symLinkTarget();
    const QString root = m_canonicalRoot;
    if (real == root)
        return {};
    if (root.isEmpty() || !real.startsWith(root + QLatin1Char('/')))
        throw PermissionError(
            QStringLiteral("the working folder '%1' is not inside the workspace").arg(cwd));
    return real.mid(root.size() + 1);
}

std::unique_ptr<RunningCommand>
BwrapSandboxBackend::startCommand(const QString &command, std::optional<double> timeoutSeconds,
                                  const QString &cwd, const ExecuteOptions &options)
{
    checkExecuteInput(command, cwd, options.env);
    checkCommandFits(command, MaxArgumentBytes, QStringLiteral("bwrap backend"));
    fs(); // OSError when closed
    {
        QMutexLocker lock(&m_createMutex);
        if (m_bwrapProgram.isEmpty())
            throw OSError(QStringLiteral("the bwrap sandbox is not created; start the sandbox "
                                         "first"));
    }
    ProcessSpec spec;
    spec.timeoutMs = timeoutMs(timeoutSeconds.value_or(LocalSandboxBackend::options().timeout));
    const QStringList args =
        bwrapArguments(command, insideCwd(cwd), options.readOnlyWorkspace, options.env);

    // bwrap itself is the child (no launcher shell): it leads the process group, so a
    // timeout's kill reaches it, and --die-with-parent takes the sandbox down. It joins the
    // per-call cgroup between fork and exec, before it can fork anything.
    std::shared_ptr<PidsCgroup> cgroup =
        m_bwrap.pidsCgroup ? PidsCgroup::create(m_bwrap.maxProcesses) : nullptr;
    UniqueFd joinFd;
    if (cgroup) {
        joinFd.reset(
            ::open(QFile::encodeName(cgroup->joinFile()).constData(), O_WRONLY | O_CLOEXEC));
        if (!joinFd.isValid())
            throwOsError(errno, QStringLiteral("Cannot open the pids cgroup"), cgroup->folder());
    }
    spec.arguments = QStringList{m_bwrapProgram} + args;
    spec.joinCgroupFd = joinFd.get();
    spec.environment = {QStringLiteral("PATH=/usr/bin:/bin")};
    spec.killGraceMs = LocalSandboxBackend::options().killGraceMs;
    spec.maxOutputBytes = LocalSandboxBackend::options().maxOutputBytes;
    spec.onOutput = options.onOutput;
    spec.cancel = options.cancel;
    spec.stdinFd = options.stdinFd; // bwrap hands its stdin to the command
    spec.streamOnly = options.streamOnly;
    // bwrap leads the group and the sandbox's pid namespace dies with it: nothing of the
    // command can outlive the call, so the marker sweep would only probe foreign processes.
    spec.sweepStrays = false;
    return startProcess(std::move(spec), std::move(cgroup)); // the cgroup goes with the command
}

} // namespace elsai
