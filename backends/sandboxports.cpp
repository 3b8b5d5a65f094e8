// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sandboxports.h"

#include "bwrapsandboxbackend.h"
#include "daytonabackend.h"
#include "errors.h"
#include "listeningports.h"
#include "localsandboxbackend.h"
#include "processregistry.h"
#include "shellquote.h"
#include "sshconnection.h"
#include "sshsandboxbackend.h"

#include <QJsonArray>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTcpServer>

#include <algorithm>

namespace elsai {

namespace {

constexpr int RemoteTimeoutMs = 15000;

/// The host pids that lead a tree of the sandbox (its terminals' programs).
QSet<qint64> registeredLeaders(const QString &workspaceId)
{
    QSet<qint64> pids;
    for (const ProcessEntry &e : ProcessRegistry::instance().list(workspaceId)) {
        if (e.pid > 0)
            pids.insert(e.pid);
    }
    return pids;
}

SandboxPort fromListener(const ListeningPort &l, SandboxPort::Reach reach, qint64 nsPid = 0)
{
    SandboxPort p;
    p.port = l.port;
    p.address = l.address;
    p.process = l.process;
    p.pid = l.pid;
    p.reach = reach;
    p.namespacePid = nsPid;
    return p;
}

/// One row per port: a server listening on both IPv4 and IPv6 shows once.
QList<SandboxPort> unique(QList<SandboxPort> ports)
{
    std::sort(ports.begin(), ports.end(), [](const SandboxPort &a, const SandboxPort &b) {
        return a.port < b.port || (a.port == b.port && a.address < b.address);
    });
    QList<SandboxPort> out;
    for (const SandboxPort &p : ports) {
        if (!out.isEmpty() && out.last().port == p.port)
            continue;
        out.append(p);
    }
    return out;
}

QList<SandboxPort> hostPorts(const QString &workspaceId, const QString &workspaceRoot)
{
    QSet<qint64> roots = registeredLeaders(workspaceId);
    roots.unite(processesWorkingIn(workspaceRoot));
    QList<SandboxPort> out;
    for (const ListeningPort &l : listenersOf(tcpListeners(), processTrees(roots)))
        out.append(fromListener(l, SandboxPort::Reach::Direct));
    return out;
}

QList<SandboxPort> bwrapPorts(const BwrapSandboxBackend &backend, const QString &workspaceId)
{
    if (backend.bwrapOptions().network)
        return hostPorts(workspaceId, QString()); // its cwd reads /workspace: trees only
    QList<SandboxPort> out;
    QSet<qint64> seen;
    for (qint64 leader : registeredLeaders(workspaceId)) {
        const qint64 inside = processInOtherNetworkNamespace(leader);
        if (inside <= 0 || seen.contains(inside))
            continue;
        seen.insert(inside);
        // Every listener of that namespace is the sandbox's; name the programs we can see.
        const QList<ListeningPort> all = tcpListeners(inside);
        const QList<ListeningPort> named = listenersOf(all, processTrees({leader}));
        for (const ListeningPort &l : all) {
            const auto it = std::find_if(named.begin(), named.end(), [&](const ListeningPort &n) {
                return n.inode == l.inode;
            });
            out.append(fromListener(it == named.end() ? l : *it, SandboxPort::Reach::NamespaceProxy,
                                    inside));
        }
    }
    return out;
}

/// Listeners on the SSH host held by processes with the backend's marker, working in the
/// workspace: one remote shell command prints their pid, name and socket inodes, then the
/// kernel's tables.
QList<SandboxPort> sshPorts(const SshSandboxBackend &backend)
{
    const auto conn = backend.connection();
    const QString root = backend.remoteWorkspace();
    if (!conn || root.isEmpty())
        return {};
    const QByteArray script =
        "r=" + shellQuote(root.toUtf8()) +
        "; for p in /proc/[0-9]*; do"
        " grep -qsF ELSAI_CALL= \"$p/environ\" 2>/dev/null || continue;"
        " c=$(readlink \"$p/cwd\" 2>/dev/null); case $c in \"$r\"|\"$r\"/*) ;; *) continue;; esac;"
        " n=$(cat \"$p/comm\" 2>/dev/null);"
        " for f in \"$p\"/fd/*; do l=$(readlink \"$f\" 2>/dev/null); case $l in socket:*)"
        " echo \"S ${p#/proc/} $l $n\";; esac; done; done;"
        " echo T4; cat /proc/net/tcp; echo T6; cat /proc/net/tcp6 2>/dev/null";
    ssh::SshConnection::Call call;
    call.remoteCommand = script;
    call.timeoutMs = RemoteTimeoutMs;
    call.maxOutputBytes = 4 << 20;
    const ProcessOutcome o = conn->run(call);
    if (o.exitCode == 255)
        conn->throwConnectionError(o.stderrData, QStringLiteral("listing the ports"));
    QHash<quint64, std::pair<qint64, QString>> owners;
    QByteArray tcp4, tcp6;
    QByteArray *table = nullptr;
    for (const QByteArray &line : o.stdoutData.split('\n')) {
        if (line == "T4") {
            table = &tcp4;
        } else if (line == "T6") {
            table = &tcp6;
        } else if (table) {
            table->append(line + '\n');
        } else if (line.startsWith("S ")) {
            const QList<QByteArray> f = line.split(' ');
            if (f.size() >= 3 && f[2].startsWith("socket:["))
                owners.insert(f[2].mid(8, f[2].size() - 9).toULongLong(),
                              {f[1].toLongLong(), QString::fromUtf8(f.value(3))});
        }
    }
    QList<SandboxPort> out;
    for (const ListeningPort &l : parseProcNetTcp(tcp4, false) + parseProcNetTcp(tcp6, true)) {
        const auto it = owners.constFind(l.inode);
        if (it == owners.constEnd())
            continue;
        SandboxPort p = fromListener(l, SandboxPort::Reach::SshForward);
        p.pid = it->first;
        p.process = it->second;
        out.append(p);
    }
    return out;
}

QList<SandboxPort> daytonaPorts(const DaytonaSandboxBackend &backend)
{
    if (!backend.isCreated())
        return {};
    const remote::HttpResponse r = backend.api().toolbox(
        backend.toolboxUrl(), "GET", QStringLiteral("/port"), {}, {}, {}, RemoteTimeoutMs);
    if (!r.ok())
        daytona::DaytonaApi::raise(r, daytona::CallKind::ControlPlane,
                                   QStringLiteral("list the ports"));
    QList<SandboxPort> out;
    for (const QJsonValue &v :
         daytona::DaytonaApi::object(r).value(QStringLiteral("ports")).toArray()) {
        SandboxPort p;
        p.port = v.toInt();
        p.reach = SandboxPort::Reach::Preview;
        if (p.port > 0 && p.port < 65536)
            out.append(p);
    }
    return out;
}

/// A loopback port free now (the forward binds it right after).
int freeLoopbackPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        throw OSError(QStringLiteral("no free port on 127.0.0.1 for the forward: %1")
                          .arg(probe.errorString()));
    return probe.serverPort();
}

} // namespace

QList<SandboxPort> listSandboxPorts(const BackendPtr &backend, const QString &workspaceId)
{
    if (!backend)
        return {};
    QList<SandboxPort> ports;
    if (const auto *bwrap = dynamic_cast<const BwrapSandboxBackend *>(backend.get()))
        ports = bwrapPorts(*bwrap, workspaceId);
    else if (const auto *local = dynamic_cast<const LocalSandboxBackend *>(backend.get()))
        ports = hostPorts(workspaceId, local->workspaceRoot());
    else if (const auto *ssh = dynamic_cast<const SshSandboxBackend *>(backend.get()))
        ports = sshPorts(*ssh);
    else if (const auto *daytona = dynamic_cast<const DaytonaSandboxBackend *>(backend.get()))
        ports = daytonaPorts(*daytona);
    return unique(ports);
}

QUrl sandboxPortUrl(const BackendPtr &backend, const SandboxPort &port)
{
    switch (port.reach) {
    case SandboxPort::Reach::Direct: {
        const bool v6Only =
            port.address.contains(QLatin1Char(':')) && port.address != QLatin1String("::");
        const QString host = port.address == QLatin1String("0.0.0.0") ||
                                     port.address == QLatin1String("::") || port.address.isEmpty()
                                 ? QStringLiteral("127.0.0.1")
                             : v6Only ? QStringLiteral("[%1]").arg(port.address)
                                      : port.address;
        return QUrl(QStringLiteral("http://%1:%2/").arg(host).arg(port.port));
    }
    case SandboxPort::Reach::SshForward: {
        const auto *ssh = dynamic_cast<const SshSandboxBackend *>(backend.get());
        const auto conn = ssh ? ssh->connection() : nullptr;
        if (!conn)
            throw OSError(QStringLiteral("the SSH sandbox is not running"));
        // The master carries the forward (no new login); it ends with the master.
        const int local = freeLoopbackPort();
        const QString target = port.address == QLatin1String("::") ||
                                       port.address == QLatin1String("0.0.0.0") ||
                                       port.address.isEmpty()
                                   ? QStringLiteral("127.0.0.1")
                                   : port.address;
        ProcessSpec spec;
        spec.arguments = {
            QStandardPaths::findExecutable(conn->target().sshProgram), QStringLiteral("-F"),
            conn->configPath(),
            // The config's ClearAllForwardings (no forward at login) would drop this -L
            // before it reaches the master, and -O forward would still exit 0.
            QStringLiteral("-o"), QStringLiteral("ClearAllForwardings=no"), QStringLiteral("-O"),
            QStringLiteral("forward"), QStringLiteral("-L"),
            QStringLiteral("127.0.0.1:%1:[%2]:%3").arg(local).arg(target).arg(port.port),
            ssh::SshConnection::alias()};
        if (spec.arguments.first().isEmpty())
            spec.arguments.first() = conn->target().sshProgram;
        spec.environment = QProcessEnvironment::systemEnvironment().toStringList();
        spec.timeoutMs = RemoteTimeoutMs;
        const ProcessOutcome o = runProcess(spec);
        if (o.exitCode != 0)
            throw OSError(QStringLiteral("the SSH forward of port %1 failed: %2")
                              .arg(port.port)
                              .arg(QString::fromUtf8(o.stderrData).trimmed()));
        return QUrl(QStringLiteral("http://127.0.0.1:%1/").arg(local));
    }
    case SandboxPort::Reach::Preview: {
        const auto *daytona = dynamic_cast<const DaytonaSandboxBackend *>(backend.get());
        if (!daytona || !daytona->isCreated())
            throw OSError(QStringLiteral("the Daytona sandbox is not running"));
        // A signed URL: a browser cannot send the preview token header. Short-lived.
        const remote::HttpResponse r = daytona->api().control(
            "GET", QStringLiteral("/sandbox/%1/ports/%2/signed-preview-url?expiresInSeconds=3600")
                       .arg(daytona->sandboxId())
                       .arg(port.port));
        if (!r.ok())
            daytona::DaytonaApi::raise(r, daytona::CallKind::ControlPlane,
                                       QStringLiteral("get the preview URL"));
        const QUrl url(daytona::DaytonaApi::object(r).value(QStringLiteral("url")).toString());
        if (!url.isValid() || url.scheme().isEmpty())
            throw OSError(
                QStringLiteral("Daytona returned no preview URL for port %1").arg(port.port));
        return url;
    }
    case SandboxPort::Reach::NamespaceProxy:
        break;
    }
    throw ValueError(
        QStringLiteral("port %1 needs a loopback proxy into the sandbox's network").arg(port.port));
}

} // namespace elsai
