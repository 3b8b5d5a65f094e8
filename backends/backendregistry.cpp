// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "backendregistry.h"

#include "errors.h"
#include "inputchecks.h"
#include "sandboxspec.h"
#include "sshsandboxbackend.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <limits>

namespace elsai {

namespace {

/// A key is a line of text; anything bigger is the wrong file.
constexpr qint64 kMaxKeyFileBytes = 64 * 1024;

QCommandLineOption flag(const char *name, const QString &help)
{
    return QCommandLineOption(QString::fromLatin1(name), help);
}

QCommandLineOption valued(const char *name, const QString &help, const char *value)
{
    return QCommandLineOption(QString::fromLatin1(name), help, QString::fromLatin1(value));
}

int wholeNumber(const QString &option, const QString &value, int min)
{
    bool ok = false;
    const int n = value.toInt(&ok);
    if (!ok || n < min)
        throw ValueError(QStringLiteral("--%1 needs a whole number >= %2, got '%3'")
                             .arg(option)
                             .arg(min)
                             .arg(value));
    return n;
}

/// The first line of a key file, trimmed. Only a regular file is opened (a FIFO would block).
QString readKeyFile(const QString &option, const QString &path)
{
    const QFileInfo info(path);
    if (path.isEmpty() || !info.exists())
        throw ValueError(QStringLiteral("--%1: no such file '%2'; give the file holding the key")
                             .arg(option, path));
    if (!info.isFile())
        throw ValueError(QStringLiteral("--%1: '%2' is not a regular file; give the file "
                                        "holding the key")
                             .arg(option, path));
    if (info.size() > kMaxKeyFileBytes)
        throw ValueError(QStringLiteral("--%1: '%2' is %3 bytes, too large for a key file; "
                                        "put only the key in it")
                             .arg(option, path)
                             .arg(info.size()));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw ValueError(
            QStringLiteral("--%1: cannot read '%2' (%3)").arg(option, path, file.errorString()));
    const QString key =
        QString::fromUtf8(file.read(kMaxKeyFileBytes).split('\n').value(0)).trimmed();
    if (key.isEmpty())
        throw ValueError(
            QStringLiteral("--%1: '%2' is empty; put the key on its first line").arg(option, path));
    if (std::any_of(key.cbegin(), key.cend(), [](QChar c) { return c.isSpace() || !c.isPrint(); }))
        throw ValueError(QStringLiteral("--%1: the first line of '%2' is not a key (it holds "
                                        "spaces or control characters)")
                             .arg(option, path));
    return key;
}

/// The spec's workspace id as one folder or object name.
QString safeId(const QString &id)
{
    QString safe = id;
    safe.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("_"));
    return safe;
}

/// The host folder of a local workspace: the spec's, or a new one under the temp folder, kept.
QString hostWorkspace(SandboxSpec &spec)
{
    if (spec.workspaceRoot.isEmpty()) {
        QTemporaryDir dir(QDir::tempPath() + QStringLiteral("/elsai-") + safeId(spec.workspaceId) +
                          QStringLiteral("-XXXXXX"));
        if (!dir.isValid())
            throw OSError(QStringLiteral("cannot create a workspace folder under %1: %2")
                              .arg(QDir::tempPath(), dir.errorString()));
        dir.setAutoRemove(false);
        spec.workspaceRoot = dir.path();
    }
    return spec.workspaceRoot;
}

// ---- the descriptors ----------------------------------------------------------------------

BackendDescriptor localBackend()
{
    BackendDescriptor d;
    d.name = QStringLiteral("local");
    d.title = QStringLiteral("Local folder");
    d.summary = QStringLiteral("Commands run on this machine as you, in the workspace folder.");
    d.capabilities = {true, true, true, false, true};
    d.create = [](SandboxSpec &spec) -> BackendPtr {
        return std::make_shared<LocalSandboxBackend>(hostWorkspace(spec), spec.local);
    };
    return d;
}

BackendDescriptor bwrapBackend()
{
    BackendDescriptor d;
    d.name = QStringLiteral("bwrap");
    d.title = QStringLiteral("Bubblewrap");
    d.summary = QStringLiteral("Commands run in bubblewrap namespaces: /usr read-only, the "
                               "workspace at /workspace, a private /tmp, an allowlisted "
                               "environment.");
    d.capabilities = {true, false, true, false, true};
    d.helpHint = QStringLiteral("--bwrap-*");
    d.options = {
        flag("bwrap-network",
             QStringLiteral("bwrap: share the host's network (default: loopback only).")),
        valued("bwrap-max-processes", QStringLiteral("bwrap: process limit (default: 256)."), "N"),
        valued("bwrap-max-file-size",
               QStringLiteral("bwrap: largest file a command may write, in bytes or with a K, M or "
                              "G suffix; 0 = unlimited (default: 1G)."),
               "SIZE"),
        valued("bwrap-max-memory",
               QStringLiteral("bwrap: data memory limit per process, bytes or K/M/G; 0 = "
                              "unlimited (default: 4G)."),
               "SIZE"),
        valued("bwrap-ro-bind",
               QStringLiteral("bwrap: host path bound read-only at the same place (repeatable)."),
               "PATH"),
        valued("bwrap-program",
               QStringLiteral("bwrap: the bwrap executable (default: bwrap from PATH)."), "FILE"),
        flag("bwrap-no-pids-cgroup",
             QStringLiteral("bwrap: never bound processes with a pids cgroup (RLIMIT_NPROC "
                            "only).")),
    };
    d.readOptions = [](const QCommandLineParser &p, SandboxSpec &spec) {
        BwrapSandboxBackend::Options &b = spec.bwrap;
        b.network = p.isSet(QStringLiteral("bwrap-network"));
        if (p.isSet(QStringLiteral("bwrap-max-processes")))
            b.maxProcesses = wholeNumber(QStringLiteral("bwrap-max-processes"),
                                         p.value(QStringLiteral("bwrap-max-processes")), 1);
        if (p.isSet(QStringLiteral("bwrap-max-file-size")))
            b.maxFileSizeBytes = parseByteSize(QStringLiteral("bwrap-max-file-size"),
                                               p.value(QStringLiteral("bwrap-max-file-size")));
        if (p.isSet(QStringLiteral("bwrap-max-memory")))
            b.maxMemoryBytes = parseByteSize(QStringLiteral("bwrap-max-memory"),
                                             p.value(QStringLiteral("bwrap-max-memory")));
        if (p.isSet(QStringLiteral("bwrap-ro-bind")))
            b.readOnlyBinds = p.values(QStringLiteral("bwrap-ro-bind"));
        for (const QString &path : std::as_const(b.readOnlyBinds)) {
            if (!path.startsWith(QLatin1Char('/')))
                throw ValueError(
                    QStringLiteral("--bwrap-ro-bind needs an absolute path, got '%1'").arg(path));
        }
        if (p.isSet(QStringLiteral("bwrap-program"))) {
            b.bwrapPath = p.value(QStringLiteral("bwrap-program"));
            if (b.bwrapPath.isEmpty())
                throw ValueError(QStringLiteral("--bwrap-program must not be empty"));
        }
        if (p.isSet(QStringLiteral("bwrap-no-pids-cgroup")))
            b.pidsCgroup = false;
    };
    d.create = [](SandboxSpec &spec) -> BackendPtr {
        return std::make_shared<BwrapSandboxBackend>(hostWorkspace(spec), spec.local, spec.bwrap);
    };
    return d;
}

BackendDescriptor sshBackend()
{
    BackendDescriptor d;
    d.name = QStringLiteral("ssh");
    d.title = QStringLiteral("SSH host");
    d.summary = QStringLiteral("Commands run on a remote host over OpenSSH, as the remote user, "
                               "in a workspace folder there.");
    d.capabilities = {false, false, true, false, false, true};
    d.helpHint = QStringLiteral("--ssh-*");
    d.options = {
        valued("ssh-host", QStringLiteral("ssh: remote host (required)."), "HOST"),
        valued("ssh-port", QStringLiteral("ssh: port (default: 22)."), "PORT"),
        valued("ssh-user", QStringLiteral("ssh: remote user (default: yours)."), "USER"),
        valued("ssh-identity",
               QStringLiteral("ssh: private key file (default: ssh's own and the agent)."), "FILE"),
        valued("ssh-known-hosts",
               QStringLiteral("ssh: known_hosts file checked strictly (default: "
                              "~/.ssh/known_hosts)."),
               "FILE"),
        valued("ssh-remote-root",
               QStringLiteral("ssh: remote folder of the workspaces (default: .elsai/workspaces "
                              "in the remote home)."),
               "DIR"),
    };
    d.readOptions = [](const QCommandLineParser &p, SandboxSpec &spec) {
        spec.ssh.host = p.value(QStringLiteral("ssh-host"));
        if (spec.ssh.host.isEmpty())
            throw ValueError(QStringLiteral("--backend ssh needs --ssh-host HOST"));
        if (p.isSet(QStringLiteral("ssh-port"))) {
            bool ok = false;
            const QString v = p.value(QStringLiteral("ssh-port"));
            spec.ssh.port = v.toInt(&ok);
            if (!ok || spec.ssh.port < 1 || spec.ssh.port > 65535)
                throw ValueError(
                    QStringLiteral("--ssh-port needs a port 1-65535, got '%1'").arg(v));
        }
        spec.ssh.user = p.value(QStringLiteral("ssh-user"));
        spec.ssh.identityFile = p.value(QStringLiteral("ssh-identity"));
        spec.ssh.knownHostsFile = p.value(QStringLiteral("ssh-known-hosts"));
        if (p.isSet(QStringLiteral("ssh-remote-root")))
            spec.sshRemoteRoot = p.value(QStringLiteral("ssh-remote-root"));
    };
    d.create = [](SandboxSpec &spec) -> BackendPtr {
        SshSandboxBackend::Options o;
        o.target = spec.ssh;
        o.remoteRoot = spec.sshRemoteRoot;
        // "." and ".." are valid ids but not folder names
        const QString safe = safeId(spec.workspaceId);
        o.workspaceName = safe.startsWith(QLatin1Char('.')) ? QLatin1Char('_') + safe : safe;
        o.timeout = spec.local.timeout;
        o.maxOutputBytes = spec.local.maxOutputBytes;
        o.env = spec.local.env;
        o.killGraceSeconds = spec.local.killGraceMs / 1000.0;
        return std::make_shared<SshSandboxBackend>(o);
    };
    return d;
}

BackendDescriptor daytonaBackend()
{
    BackendDescriptor d;
    d.name = QStringLiteral("daytona");
    d.title = QStringLiteral("Daytona sandbox");
    d.summary = QStringLiteral("Commands run in a Daytona cloud sandbox, through its toolbox "
                               "API.");
    d.capabilities.timeTravelByListing = true;
    d.helpHint = QStringLiteral("--daytona-*, DAYTONA_API_KEY");
    d.options = {
        valued("daytona-api-url",
               QStringLiteral("daytona: control-plane URL (default: DAYTONA_API_URL, else "
                              "https://app.daytona.io/api)."),
               "URL"),
        valued("daytona-target",
               QStringLiteral("daytona: target region of new sandboxes, e.g. us or eu (default: "
                              "DAYTONA_TARGET, else the server's)."),
               "TARGET"),
        valued("daytona-api-key-file",
               QStringLiteral("daytona: read the API key from the first line of FILE (default: "
                              "DAYTONA_API_KEY). There is no option taking the key itself: "
                              "command lines are visible to every user (ps)."),
               "FILE"),
    };
    d.readOptions = [](const QCommandLineParser &p, SandboxSpec &spec) {
        daytona::DaytonaConfig &c = spec.daytona.config;
        if (p.isSet(QStringLiteral("daytona-api-url"))) {
            const QString value = p.value(QStringLiteral("daytona-api-url"));
            const QUrl url(value, QUrl::StrictMode);
            const QString scheme = url.scheme().toLower();
            if (!url.isValid() || url.host().isEmpty() ||
                (scheme != QLatin1String("https") && scheme != QLatin1String("http")))
                throw ValueError(QStringLiteral("--daytona-api-url needs an http(s) URL such as "
                                                "https://app.daytona.io/api, got '%1'")
                                     .arg(value));
            c.apiUrl = url;
        }
        if (p.isSet(QStringLiteral("daytona-target"))) {
            static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$"));
            c.target = p.value(QStringLiteral("daytona-target"));
            if (!re.match(c.target).hasMatch())
                throw ValueError(QStringLiteral("--daytona-target needs a target name such as us "
                                                "or eu (letters, digits, '-', '_', '.'), got '%1'")
                                     .arg(c.target));
        }
        if (p.isSet(QStringLiteral("daytona-api-key-file")))
            c.apiKey = readKeyFile(QStringLiteral("daytona-api-key-file"),
                                   p.value(QStringLiteral("daytona-api-key-file")));
    };
    d.create = [](SandboxSpec &spec) -> BackendPtr {
        DaytonaSandboxBackend::Options o = spec.daytona;
        o.timeout = spec.local.timeout;
        o.maxOutputBytes = spec.local.maxOutputBytes;
        o.env.insert(spec.local.env);
        return std::make_shared<DaytonaSandboxBackend>(spec.workspaceId, o);
    };
    return d;
}

BackendDescriptor agentcoreBackend()
{
    BackendDescriptor d;
    d.name = QStringLiteral("agentcore");
    d.title = QStringLiteral("AWS Bedrock AgentCore");
    d.summary = QStringLiteral("Commands run in an AWS Bedrock AgentCore Code Interpreter "
                               "session.");
    d.capabilities.timeTravelByListing = true;
    d.helpHint = QStringLiteral("AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, "
                                "AWS_REGION");
    d.options = {
        valued("aws-region",
               QStringLiteral("AgentCore region (default: AWS_REGION, AWS_DEFAULT_REGION)."),
               "REGION"),
        valued("agentcore-endpoint",
               QStringLiteral("AgentCore endpoint URL (default: "
                              "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, AWS_ENDPOINT_URL, else the "
                              "region's)."),
               "URL"),
    };
    d.readOptions = [](const QCommandLineParser &p, SandboxSpec &spec) {
        if (p.isSet(QStringLiteral("aws-region")))
            spec.agentcore.region = p.value(QStringLiteral("aws-region"));
        if (p.isSet(QStringLiteral("agentcore-endpoint"))) {
            const QString value = p.value(QStringLiteral("agentcore-endpoint"));
            const QUrl url(value, QUrl::StrictMode);
            if (!url.isValid() || url.host().isEmpty())
                throw ValueError(
                    QStringLiteral("--agentcore-endpoint needs an http(s) URL, got '%1'")
                        .arg(value));
            spec.agentcore.endpoint = url;
        }
    };
    d.create = [](SandboxSpec &spec) -> BackendPtr {
        aws::AgentCoreOptions options = spec.agentcore;
        const aws::AgentCoreOptions env = aws::AgentCoreOptions::fromEnvironment();
        if (!options.credentials.isValid())
            options.credentials = env.credentials;
        if (options.region.isEmpty())
            options.region = env.region;
        if (options.endpoint.isEmpty())
            options.endpoint = env.endpoint;
        options.timeout = spec.local.timeout;
        options.maxOutputBytes = spec.local.maxOutputBytes;
        // Only explicit variables travel: the host environment is not the remote one.
        options.env.insert(spec.local.env);
        return aws::AgentCoreSandboxTemplate(options).buildForSession(spec.workspaceId);
    };
    return d;
}

BackendDescriptor dockerBackend()
{
    BackendDescriptor d;
    d.name = QStringLiteral("docker");
    d.title = QStringLiteral("Docker / Podman container");
    d.summary = QStringLiteral("Commands run in a container of their own through the Docker "
                               "Engine API (Docker or Podman): no network, no capabilities, a "
                               "read-only image, the workspace in a volume.");
    d.capabilities = {false, false, true, false, false, true};
    d.helpHint = QStringLiteral("--docker-*");
    d.options = {
        valued("docker-image",
               QStringLiteral("docker: image of the sandbox's container (required; it needs "
                              "/bin/sh, coreutils, findutils and tar)."),
               "IMAGE"),
        valued("docker-host",
               QStringLiteral("docker: engine socket, unix://PATH or tcp://HOST:PORT (default: "
                              "DOCKER_HOST, else unix:///var/run/docker.sock; Podman: "
                              "unix://$XDG_RUNTIME_DIR/podman/podman.sock)."),
               "HOST"),
        valued("docker-cert-path",
               QStringLiteral("docker: folder of ca.pem, cert.pem and key.pem for tcp:// with TLS "
                              "(default: DOCKER_CERT_PATH when DOCKER_TLS_VERIFY is set)."),
               "DIR"),
        flag("docker-network",
             QStringLiteral("docker: give the container the engine's default network (default: "
                            "none).")),
        flag("docker-keep",
             QStringLiteral("docker: stop the container on close and keep it and its workspace "
                            "volume (default: remove both).")),
        valued("docker-memory",
               QStringLiteral("docker: memory limit, bytes or K/M/G; 0 = none (default: 2G)."),
               "SIZE"),
        valued("docker-cpus", QStringLiteral("docker: CPU limit; 0 = none (default: 2)."), "N"),
        valued("docker-pids", QStringLiteral("docker: process limit; 0 = none (default: 512)."),
               "N"),
    };
    d.readOptions = [](const QCommandLineParser &p, SandboxSpec &spec) {
        DockerSandboxBackend::Options &o = spec.docker;
        if (p.isSet(QStringLiteral("docker-image")))
            o.image = p.value(QStringLiteral("docker-image"));
        if (o.image.trimmed().isEmpty())
            throw ValueError(QStringLiteral("--backend docker needs --docker-image IMAGE"));
        if (p.isSet(QStringLiteral("docker-host")))
            o.host = p.value(QStringLiteral("docker-host"));
        if (p.isSet(QStringLiteral("docker-cert-path")))
            o.tlsCertPath = p.value(QStringLiteral("docker-cert-path"));
        if (p.isSet(QStringLiteral("docker-network")))
            o.network = true;
        if (p.isSet(QStringLiteral("docker-keep")))
            o.keep = true;
        if (p.isSet(QStringLiteral("docker-memory")))
            o.memoryBytes = parseByteSize(QStringLiteral("docker-memory"),
                                          p.value(QStringLiteral("docker-memory")));
        if (p.isSet(QStringLiteral("docker-cpus"))) {
            bool ok = false;
            const QString v = p.value(QStringLiteral("docker-cpus"));
            o.cpus = v.toDouble(&ok);
            if (!ok || !(o.cpus >= 0) || !std::isfinite(o.cpus))
                throw ValueError(
                    QStringLiteral("--docker-cpus needs a number >= 0, got '%1'").arg(v));
        }
        if (p.isSet(QStringLiteral("docker-pids")))
            o.pidsLimit = wholeNumber(QStringLiteral("docker-pids"),
                                      p.value(QStringLiteral("docker-pids")), 0);
    };
    d.create = [](SandboxSpec &spec) -> BackendPtr {
        DockerSandboxBackend::Options o = spec.docker;
        o.timeout = spec.local.timeout;
        o.maxOutputBytes = spec.local.maxOutputBytes;
        o.env.insert(spec.local.env);
        o.killGraceSeconds = spec.local.killGraceMs / 1000.0;
        return std::make_shared<DockerSandboxBackend>(spec.workspaceId, o);
    };
    return d;
}

} // namespace

namespace BackendRegistry {

const QList<BackendDescriptor> &all()
{
    static const QList<BackendDescriptor> list{localBackend(),   bwrapBackend(),
                                               sshBackend(),     dockerBackend(),
                                               daytonaBackend(), agentcoreBackend()};
    return list;
}

const BackendDescriptor *find(const QString &name)
{
    for (const BackendDescriptor &d : all()) {
        if (d.name == name)
            return &d;
    }
    return nullptr;
}

QStringList names()
{
    QStringList out;
    for (const BackendDescriptor &d : all())
        out << d.name;
    return out;
}

const BackendDescriptor &get(const QString &name)
{
    if (const BackendDescriptor *d = find(name))
        return *d;
    throw ValueError(QStringLiteral("unknown backend '%1'; available: %2")
                         .arg(name, names().join(QStringLiteral(", "))));
}

QString helpText()
{
    QStringList parts;
    for (const BackendDescriptor &d : all()) {
        QStringList notes;
        if (d.name == SandboxSpec().backend)
            notes << QStringLiteral("default");
        if (!d.helpHint.isEmpty())
            notes << d.helpHint;
        parts << (notes.isEmpty()
                      ? d.name
                      : d.name + QStringLiteral(" (") + notes.join(QStringLiteral(", ")) + u')');
    }
    return parts.join(QStringLiteral(", "));
}

BackendCapabilities capabilities(const QString &name)
{
    const BackendDescriptor *d = find(name);
    return d ? d->capabilities : BackendCapabilities{};
}

} // namespace BackendRegistry

} // namespace elsai
