// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "dockersandboxbackend.h"

#include "commandwrapper.h"
#include "confinedscript.h"
#include "errors.h"
#include "flushbase.h"
#include "glob.h"
#include "inputchecks.h"
#include "localtar.h"
#include "remotefetch.h"
#include "seedarchive.h"

#include <QBuffer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QUrl>

#include <sys/stat.h>

#include <cerrno>
#include <cmath>

Q_LOGGING_CATEGORY(lcDocker, "elsai.backend.docker", QtInfoMsg)

namespace elsai {

using docker::EngineRequest;
using docker::EngineResponse;
using remote::Channel;

namespace {

constexpr auto kService = "container";
/// Writes up to this size travel inside the exec's command line (base64, under the kernel's
/// 128 KiB limit of one argument); larger ones are sent as an archive to a temp file.
constexpr qsizetype kInlineWriteBytes = 48 * 1024;

QByteArray pct(const QString &s)
{
    return QUrl::toPercentEncoding(s);
}

QString randomHex(int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(raw.data()), bytes / 4);
    return QString::fromLatin1(raw.toHex());
}

} // namespace

// ---- construction, lifecycle ------------------------------------------------------------

DockerSandboxBackend::DockerSandboxBackend(QString workspaceId, Options options)
    : m_workspaceId(std::move(workspaceId)), m_options(std::move(options)),
      m_engine(docker::EngineEndpoint::fromEnvironment(m_options.host), m_options.apiVersion)
{
    if (m_options.image.trimmed().isEmpty())
        throw ValueError(QStringLiteral("the docker backend needs an image: give --docker-image "
                                        "IMAGE (e.g. debian:12)"));
    if (!(m_options.timeout > 0) || !std::isfinite(m_options.timeout))
        throw ValueError(QStringLiteral("timeout must be a positive number of seconds, got %1")
                             .arg(m_options.timeout));
    if (m_options.maxOutputBytes < 0)
        throw ValueError(
            QStringLiteral("max_output_bytes must be >= 0, got %1").arg(m_options.maxOutputBytes));
    if (m_options.memoryBytes < 0 || m_options.cpus < 0 || m_options.pidsLimit < 0 ||
        !std::isfinite(m_options.cpus))
        throw ValueError(QStringLiteral("container limits must be >= 0 (0 = no limit)"));
    if (!m_options.tlsCertPath.isEmpty())
        m_engine = docker::EngineClient(
            docker::EngineEndpoint::parse(m_engine.endpoint().display().section(u' ', 0, 0),
                                          m_options.tlsCertPath),
            m_options.apiVersion);
    if (m_options.workspacePath != volumeMount() &&
        !m_options.workspacePath.startsWith(volumeMount() + u'/'))
        throw ValueError(QStringLiteral("the container's workspace must be %1 or beneath it")
                             .arg(volumeMount()));
    checkEnvironment(m_options.env);
}

DockerSandboxBackend::~DockerSandboxBackend() = default;

QString DockerSandboxBackend::id() const
{
    return QStringLiteral("docker:%1/%2").arg(m_engine.endpoint().display(), m_workspaceId);
}

QString DockerSandboxBackend::volumeName() const
{
    QMutexLocker lock(&m_mutex);
    return m_volume;
}

QString DockerSandboxBackend::containerId() const
{
    QMutexLocker lock(&m_mutex);
    return m_container;
}

bool DockerSandboxBackend::isCreated() const
{
    return !containerId().isEmpty();
}

QString DockerSandboxBackend::requireContainer() const
{
    const QString c = containerId();
    if (c.isEmpty())
        throw OSError(QStringLiteral("the container of '%1' is not running; start the sandbox "
                                     "first")
                          .arg(m_workspaceId));
    return c;
}

void DockerSandboxBackend::raise(const EngineResponse &r, const QString &what, bool starting) const
{
    const QString text =
        QStringLiteral("%1 failed on %2: %3").arg(what, m_engine.endpoint().display(), r.message());
    if (r.timedOut)
        throw TimeoutError(text, ETIMEDOUT);
    if (starting)
        throw SandboxStartError(text);
    if (r.status == 404)
        throw OSError(text + QStringLiteral(" (the container is gone: restart the sandbox)"),
                      ENOENT);
    throw OSError(text, EIO);
}

void DockerSandboxBackend::create()
{
    QMutexLocker lifecycle(&m_lifecycleMutex);
    if (isCreated())
        return;
    const QString owner = ownerLabel() + QStringLiteral("=1");
    const QString mine = workspaceLabel() + u'=' + m_workspaceId;

    // A container left for this workspace (a restart, or --docker-keep) is taken up again.
    const QByteArray filters =
        QJsonDocument(QJsonObject{{QStringLiteral("label"), QJsonArray{owner, mine}}})
            .toJson(QJsonDocument::Compact);
    EngineRequest list;
    list.path = "/containers/json?all=1&filters=" + pct(QString::fromUtf8(filters));
    EngineResponse r = m_engine.send(list);
    if (!r.ok())
        raise(r, QStringLiteral("listing the containers"), true);
    QString container, volume;
    bool fresh = false; // a new container (and volume) rather than one taken up again
    const QJsonArray found = QJsonDocument::fromJson(r.body).array();
    if (!found.isEmpty()) {
        const QJsonObject c = found.first().toObject();
        container = c.value(QStringLiteral("Id")).toString();
        for (const QJsonValue &m : c.value(QStringLiteral("Mounts")).toArray()) {
            if (m.toObject().value(QStringLiteral("Destination")).toString() == volumeMount())
                volume = m.toObject().value(QStringLiteral("Name")).toString();
        }
        qCInfo(lcDocker) << "reattaching the container" << container.left(12) << "of"
                         << m_workspaceId;
    } else {
        QJsonObject labels{{ownerLabel(), QStringLiteral("1")}, {workspaceLabel(), m_workspaceId}};
        for (auto it = m_options.labels.cbegin(); it != m_options.labels.cend(); ++it)
            labels.insert(it.key(), it.value());
        QString safe = m_workspaceId;
        safe.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]")), QStringLiteral("_"));
        const QString name = QStringLiteral("elsai-%1-%2").arg(safe.left(40), randomHex(4));
        r = m_engine.post("/volumes/create",
                          {{QStringLiteral("Name"), name}, {QStringLiteral("Labels"), labels}});
        if (!r.ok())
            raise(r, QStringLiteral("creating the workspace volume"), true);
        volume = name;
        QJsonObject host{
            {QStringLiteral("NetworkMode"),
             m_options.network ? QStringLiteral("default") : QStringLiteral("none")},
            {QStringLiteral("ReadonlyRootfs"), true},
            {QStringLiteral("CapDrop"), QJsonArray{QStringLiteral("ALL")}},
            {QStringLiteral("SecurityOpt"), QJsonArray{QStringLiteral("no-new-privileges")}},
            {QStringLiteral("Tmpfs"),
             QJsonObject{{QStringLiteral("/tmp"),
                          QStringLiteral("rw,nosuid,nodev,size=%1").arg(m_options.tmpBytes)}}},
            {QStringLiteral("Mounts"),
             QJsonArray{QJsonObject{{QStringLiteral("Type"), QStringLiteral("volume")},
                                    {QStringLiteral("Source"), name},
                                    {QStringLiteral("Target"), volumeMount()}}}}};
        if (m_options.memoryBytes > 0) {
            host.insert(QStringLiteral("Memory"), double(m_options.memoryBytes));
            host.insert(QStringLiteral("MemorySwap"), double(m_options.memoryBytes));
        }
        if (m_options.cpus > 0)
            host.insert(QStringLiteral("NanoCpus"), double(qint64(m_options.cpus * 1e9)));
        if (m_options.pidsLimit > 0)
            host.insert(QStringLiteral("PidsLimit"), m_options.pidsLimit);
        // Open files bounded too. Podman also raises the process rlimit to its own maximum by
        // default, which a constrained engine may not set (the container fails to start):
        // there it is given explicitly (the pids limit is the real bound).
        QJsonArray ulimits{QJsonObject{{QStringLiteral("Name"), QStringLiteral("nofile")},
                                       {QStringLiteral("Soft"), 4096},
                                       {QStringLiteral("Hard"), 16384}}};
        EngineRequest version;
        version.path = "/version";
        if (m_engine.send(version).body.contains("Podman"))
            ulimits.append(QJsonObject{{QStringLiteral("Name"), QStringLiteral("nproc")},
                                       {QStringLiteral("Soft"), 32768},
                                       {QStringLiteral("Hard"), 32768}});
        host.insert(QStringLiteral("Ulimits"), ulimits);
        const QJsonObject spec{
            {QStringLiteral("Image"), m_options.image},
            // PID 1: a shell that waits, so it reaps what commands orphan (zombies count
            // against the pids limit) without an init binary on the engine's host (Docker's
            // docker-init, Podman's catatonit), and ends at once on TERM.
            {QStringLiteral("Entrypoint"),
             QJsonArray{QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                        QStringLiteral("trap 'exit 0' TERM; while :; do sleep 3600 & wait; done")}},
            {QStringLiteral("Cmd"), QJsonArray()},
            {QStringLiteral("WorkingDir"), volumeMount()},
            {QStringLiteral("Labels"), labels},
            {QStringLiteral("NetworkDisabled"), !m_options.network},
            {QStringLiteral("HostConfig"), host}};
        r = m_engine.post("/containers/create?name=" + pct(name), spec);
        if (!r.ok()) {
            EngineRequest drop;
            drop.method = "DELETE";
            drop.path = "/volumes/" + pct(name);
            m_engine.send(drop);
            if (r.status == 404)
                throw SandboxStartError(QStringLiteral("the image '%1' is not on %2: pull or "
                                                       "import it first (docker pull %1)")
                                            .arg(m_options.image, m_engine.endpoint().display()));
            raise(r, QStringLiteral("creating the container"), true);
        }
        container = r.json().value(QStringLiteral("Id")).toString();
        fresh = true;
    }
    EngineRequest start;
    start.method = "POST";
    start.path = "/containers/" + pct(container) + "/start";
    r = m_engine.send(start);
    if (!r.ok() && r.status != 304) // 304: already running
        raise(r, QStringLiteral("starting the container"), true);
    {
        QMutexLocker lock(&m_mutex);
        m_container = container;
        m_volume = volume;
    }
    try {
        m_owner = numericUser(container);
        ExecSpec writable;
        writable.argv = {QStringLiteral("test"), QStringLiteral("-w"), volumeMount()};
        writable.timeoutMs = 30000;
        if (fresh && !m_owner.startsWith(QLatin1String("0:")) &&
            exec(container, writable).exitCode != 0) {
            // Docker makes a new volume's folder root's (Podman gives it to the container's
            // user): open it to the image's (non-root) user. Only root's own folder is
            // changed (no capability needed), as root, in the container.
            ExecSpec chmod;
            chmod.argv = {QStringLiteral("chmod"), QStringLiteral("1777"), volumeMount()};
            chmod.user = QStringLiteral("0");
            chmod.timeoutMs = 30000;
            const Exec e = exec(container, chmod);
            if (e.exitCode != 0)
                throw SandboxStartError(QStringLiteral("cannot open %1 to the container's user: %2")
                                            .arg(volumeMount(), QString::fromUtf8(e.err)));
        }
        if (fresh && m_options.workspacePath != volumeMount()) {
            ExecSpec mkdir;
            mkdir.argv = {QStringLiteral("mkdir"), QStringLiteral("-p"), m_options.workspacePath};
            mkdir.timeoutMs = 30000;
            if (const Exec e = exec(container, mkdir); e.exitCode != 0)
                throw SandboxStartError(
                    QStringLiteral("cannot create %1 in the container: %2")
                        .arg(m_options.workspacePath, QString::fromUtf8(e.err)));
        }
    } catch (const SandboxError &) {
        QMutexLocker lock(&m_mutex);
        m_container.clear();
        throw;
    }
    // The volume names the workspace in the base file: a base is never taken for a
    // workspace whose volume was removed and made again.
    if (const QString error = m_flush.identify(id(), volume.toUtf8()); !error.isEmpty())
        qCWarning(lcDocker) << error; // without it a flush has no base: the safe rule applies
}

QString DockerSandboxBackend::numericUser(const QString &container)
{
    // One image has one user: asked once per engine and image in a process (an exec saved per
    // sandbox).
    static QMutex cacheMutex;
    static QHash<QString, QString> cache;
    const QString key = m_engine.endpoint().display() + u'\n' + m_options.image;
    {
        QMutexLocker lock(&cacheMutex);
        if (const auto it = cache.constFind(key); it != cache.constEnd())
            return *it;
    }
    ExecSpec id;
    id.argv = {QStringLiteral("/bin/sh"), QStringLiteral("-c"), QStringLiteral("id -u; id -g")};
    id.timeoutMs = 30000;
    const Exec e = exec(container, id);
    const QList<QByteArray> ids = e.out.trimmed().split('\n');
    bool ok[2] = {};
    const uint uid = ids.value(0).trimmed().toUInt(&ok[0]);
    const uint gid = ids.value(1).trimmed().toUInt(&ok[1]);
    if (e.exitCode != 0 || !ok[0] || !ok[1])
        throw SandboxStartError(QStringLiteral("the image '%1' cannot run `id` (exit %2: %3); the "
                                               "docker backend needs a POSIX shell and GNU "
                                               "coreutils in the image")
                                    .arg(m_options.image)
                                    .arg(e.exitCode)
                                    .arg(QString::fromUtf8(e.err.trimmed())));
    const QString owner = QStringLiteral("%1:%2").arg(uid).arg(gid);
    QMutexLocker lock(&cacheMutex);
    cache.insert(key, owner);
    return owner;
}

void DockerSandboxBackend::close()
{
    QMutexLocker lifecycle(&m_lifecycleMutex);
    QString container, volume;
    {
        QMutexLocker lock(&m_mutex);
        container = std::exchange(m_container, QString());
        volume = std::exchange(m_volume, QString());
    }
    if (container.isEmpty())
        return;
    EngineRequest r;
    if (m_options.keep) {
        r.method = "POST";
        r.path = "/containers/" + pct(container) + "/stop?t=1";
        const EngineResponse resp = m_engine.send(r);
        if (!resp.ok() && resp.status != 304 && resp.status != 404)
            raise(resp, QStringLiteral("stopping the container"));
        return;
    }
    r.method = "DELETE";
    r.path = "/containers/" + pct(container) + "?force=1&v=1";
    EngineResponse resp = m_engine.send(r);
    if (!resp.ok() && resp.status != 404)
        raise(resp, QStringLiteral("removing the container"));
    if (!volume.isEmpty()) {
        r.path = "/volumes/" + pct(volume);
        resp = m_engine.send(r);
        if (!resp.ok() && resp.status != 404)
            raise(resp, QStringLiteral("removing the workspace volume"));
    }
}

int DockerSandboxBackend::removeLabelled(const Options &options, const QStringList &labels)
{
    const docker::EngineClient engine(docker::EngineEndpoint::fromEnvironment(options.host),
                                      options.apiVersion);
    QJsonArray wanted{ownerLabel() + QStringLiteral("=1")};
    for (const QString &l : labels)
        wanted.append(l);
    const QByteArray filters =
        pct(QString::fromUtf8(QJsonDocument(QJsonObject{{QStringLiteral("label"), wanted}})
                                  .toJson(QJsonDocument::Compact)));
    EngineRequest r;
    r.path = "/containers/json?all=1&filters=" + filters;
    EngineResponse resp = engine.send(r);
    if (!resp.ok())
        throw OSError(QStringLiteral("cannot list the containers on %1: %2")
                          .arg(engine.endpoint().display(), resp.message()));
    int removed = 0;
    r.method = "DELETE";
    for (const QJsonValue &c : QJsonDocument::fromJson(resp.body).array()) {
        r.path = "/containers/" + pct(c.toObject().value(QStringLiteral("Id")).toString()) +
                 "?force=1&v=1";
        removed += engine.send(r).ok() ? 1 : 0;
    }
    r.method = "GET";
    r.path = "/volumes?filters=" + filters;
    resp = engine.send(r);
    r.method = "DELETE";
    for (const QJsonValue &v : resp.json().value(QStringLiteral("Volumes")).toArray()) {
        r.path = "/volumes/" + pct(v.toObject().value(QStringLiteral("Name")).toString());
        engine.send(r);
    }
    return removed;
}

// ---- exec ---------------------------------------------------------------------------------

DockerSandboxBackend::Exec DockerSandboxBackend::exec(const QString &container,
                                                      const ExecSpec &spec) const
{
    Exec result;
    QJsonObject create{{QStringLiteral("AttachStdout"), true},
                       {QStringLiteral("AttachStderr"), true},
                       {QStringLiteral("Tty"), false},
                       {QStringLiteral("Cmd"), QJsonArray::fromStringList(spec.argv)}};
    if (!spec.user.isEmpty())
        create.insert(QStringLiteral("User"), spec.user);
    EngineResponse r = m_engine.post("/containers/" + pct(container) + "/exec", create);
    if (!r.ok())
        raise(r, QStringLiteral("starting a command in the container"));
    const QByteArray execId = pct(r.json().value(QStringLiteral("Id")).toString());

    qint64 budget = spec.cap;
    const auto take = [&](OutputChannel channel, const QByteArray &bytes) {
        QByteArray &into = channel == OutputChannel::Stdout ? result.out : result.err;
        if (spec.cap < 0) {
            into += bytes;
            return;
        }
        // Kept, and streamed, in arrival order up to the cap; the rest is only counted.
        const qint64 keep = std::min<qint64>(budget, bytes.size());
        if (keep > 0) {
            into += bytes.left(qsizetype(keep));
            if (spec.onOutput)
                spec.onOutput(channel, bytes.left(qsizetype(keep)));
        }
        budget -= keep;
        result.dropped += bytes.size() - keep;
    };
    docker::StreamDemuxer demux([&](int stream, const QByteArray &bytes) {
        if (stream == 1 || stream == 2)
            take(stream == 1 ? OutputChannel::Stdout : OutputChannel::Stderr, bytes);
    });
    EngineRequest start;
    start.method = "POST";
    start.path = "/exec/" + execId + "/start";
    start.body = R"({"Detach":false,"Tty":false})";
    start.upgrade = true;
    start.timeoutMs = spec.timeoutMs;
    start.cancel = spec.cancel;
    start.sink = [&](const QByteArray &chunk) {
        demux.feed(chunk);
        return true;
    };
    r = m_engine.send(start);
    result.timedOut = r.timedOut;
    result.cancelled = r.cancelled;
    if (!r.error.isEmpty() && !r.timedOut && !r.cancelled)
        raise(r, QStringLiteral("running a command in the container"));
    if (r.status != 101 && r.status != 200 && r.error.isEmpty())
        raise(r, QStringLiteral("running a command in the container"));
    if (result.timedOut || result.cancelled)
        return result;
    EngineRequest inspect;
    inspect.path = "/exec/" + execId + "/json";
    r = m_engine.send(inspect);
    if (!r.ok())
        raise(r, QStringLiteral("reading a command's exit status"));
    const QJsonValue code = r.json().value(QStringLiteral("ExitCode"));
    result.exitCode = code.isDouble() ? code.toInt() : -1;
    return result;
}

QByteArray DockerSandboxBackend::confined(const QString &op, const QString &rel,
                                          const QStringList &args)
{
    ExecSpec spec;
    spec.argv = {QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                 remote::confinedScript(Channel::Binary, m_options.workspacePath, op, rel, args)};
    spec.timeoutMs = m_options.operationTimeoutSeconds * 1000;
    const Exec e = exec(requireContainer(), spec);
    if (e.timedOut)
        throw TimeoutError(QStringLiteral("the file operation '%1' in the container took more "
                                          "than %2 s")
                               .arg(op)
                               .arg(m_options.operationTimeoutSeconds),
                           ETIMEDOUT);
    return remote::confinedPayload(Channel::Binary, e.exitCode, e.out, e.err,
                                   QLatin1String(kService));
}

// ---- files ----------------------------------------------------------------------------------

void DockerSandboxBackend::putArchive(const QString &dir, const QString &localParent,
                                      const QString &member, const QString &what)
{
    // One archive of the member (a file or a folder), owned by the container's user, that
    // the engine unpacks into `dir`.
    const QString tarFile = localParent + u'/' + member + QStringLiteral(".tar");
    const QStringList errors =
        remote::runLocalTar({QStringLiteral("-c"), QStringLiteral("-f"), tarFile,
                             QStringLiteral("--format=posix"), QStringLiteral("--numeric-owner"),
                             QStringLiteral("--owner=") + m_owner.section(u':', 0, 0),
                             QStringLiteral("--group=") + m_owner.section(u':', 1, 1),
                             QStringLiteral("-C"), localParent, member});
    const auto removeTar = qScopeGuard([&] { QFile::remove(tarFile); });
    if (!errors.isEmpty())
        throw OSError(errors.join(u'\n'));
    putTar(dir, tarFile, what);
}

void DockerSandboxBackend::putTar(const QString &dir, const QString &tarFile, const QString &what)
{
    QFile tar(tarFile);
    if (!tar.open(QIODevice::ReadOnly))
        throw OSError(QStringLiteral("cannot read the archive for %1").arg(what));
    EngineRequest put;
    put.method = "PUT";
    put.path = "/containers/" + pct(requireContainer()) + "/archive?path=" + pct(dir);
    put.contentType = "application/x-tar";
    put.bodyDevice = &tar;
    put.bodySize = tar.size();
    put.timeoutMs = m_options.operationTimeoutSeconds * 1000;
    const EngineResponse r = m_engine.send(put);
    if (!r.ok())
        raise(r, what);
}

QByteArray DockerSandboxBackend::readFile(const QString &path)
{
    return confined(QStringLiteral("read"), remote::confinedPath(path));
}

FileRange DockerSandboxBackend::readFileRange(const QString &path, qint64 offset, qint64 maxBytes)
{
    const QStringList args = remote::confinedRangeArgs(offset, maxBytes);
    return remote::confinedRange(
        confined(QStringLiteral("range"), remote::confinedPath(path), args), maxBytes,
        QLatin1String(kService));
}

void DockerSandboxBackend::writeFile(const QString &path, const QByteArray &content)
{
    const QString rel = remote::confinedPath(path);
    if (rel.isEmpty())
        throw IsADirectoryError(
            QStringLiteral("cannot write '%1': it is the workspace root").arg(path), EISDIR);
    // Never in place: a temp file beside the entry, renamed over it by the script that
    // checked the path (confinedscript.h).
    const QString temp = remote::confinedTempName(rel.section(QLatin1Char('/'), -1));
    if (content.size() <= kInlineWriteBytes) {
        confined(QStringLiteral("write"), rel, {temp, QString::fromLatin1(content.toBase64())});
        return;
    }
    // Too big for one command line: one archive holding the temp file, into the folder the
    // script found, then `commit` checks the path again and renames.
    const QString dir = QString::fromUtf8(confined(QStringLiteral("prepare"), rel));
    try {
        QTemporaryDir work;
        if (!work.isValid() || !remote::writeLocalFile(work.path() + u'/' + temp, content))
            throw OSError(QStringLiteral("cannot stage '%1' for upload").arg(path));
        putArchive(dir, work.path(), temp, QStringLiteral("writing '%1'").arg(path));
        confined(QStringLiteral("commit"), rel, {temp});
    } catch (const SandboxError &) {
        try {
            confined(QStringLiteral("discard"), rel, {temp});
        } catch (const SandboxError &e) {
            qCWarning(lcDocker) << "cannot remove the temp file of" << rel << e.message();
        }
        throw;
    }
}

QList<FileInfo> DockerSandboxBackend::listDir(const QString &path)
{
    const QString rel = remote::confinedPath(path);
    QList<FileInfo> out = remote::confinedEntries(confined(QStringLiteral("list"), rel), rel);
    std::sort(out.begin(), out.end(),
              [](const FileInfo &a, const FileInfo &b) { return a.path < b.path; });
    return out;
}

CappedListing DockerSandboxBackend::listDirFirst(const QString &path, qsizetype maxEntries,
                                                 qsizetype statLimit)
{
    Q_UNUSED(statLimit); // find reports the lstat data of every entry it sends anyway
    const QString rel = remote::confinedPath(path);
    const qsizetype cap = qMax<qsizetype>(0, maxEntries);
    CappedListing listing;
    if (!parseCappedListing(confined(QStringLiteral("list"), rel, {QString::number(cap)}), rel, cap,
                            &listing.listing, &listing.totalEntries))
        throw OSError(QStringLiteral("the container answered the listing of '%1' without its "
                                     "count")
                          .arg(path),
                      EIO);
    return listing;
}

FileInfo DockerSandboxBackend::stat(const QString &path)
{
    const QString rel = remote::confinedPath(path);
    const QList<FileInfo> found =
        remote::confinedEntries(confined(QStringLiteral("stat"), rel), {});
    if (found.isEmpty())
        throw OSError(
            QStringLiteral("the container answered the stat of '%1' without an entry").arg(rel),
            EIO);
    FileInfo info = found.first();
    info.path = rel;
    return info;
}

void DockerSandboxBackend::removeFile(const QString &path, bool recursive)
{
    const QString rel = remote::confinedPath(path);
    if (rel.isEmpty())
        throw PermissionError(
            QStringLiteral("refusing to remove the workspace root ('%1')").arg(path), EPERM);
    confined(QStringLiteral("remove"), rel,
             {recursive ? QStringLiteral("1") : QStringLiteral("0")});
}

void DockerSandboxBackend::makeDirs(const QString &path)
{
    const QString rel = remote::confinedPath(path);
    if (!rel.isEmpty())
        confined(QStringLiteral("mkdirs"), rel);
}

void DockerSandboxBackend::walkTree(const QString &path, bool withStat,
                                    const std::function<WalkStep(const WalkEntry &)> &visit)
{
    Q_UNUSED(withStat); // find reports sizes and times of every entry anyway
    // One exec: `tree` refuses a path that is not a folder (ENOTDIR) or leaves the workspace.
    const QString root = remote::confinedPath(path);
    remote::walkConfinedTree(confined(QStringLiteral("tree"), root), root, visit);
}

std::optional<QHash<QString, QByteArray>> DockerSandboxBackend::fetchFiles(const FileFetch &fetch)
{
    const remote::TreeTransport t = treeTransport();
    return remote::fetchByArchive(
        fetch, t.scratchParent,
        [&](const QString &folder, const QByteArray &exclusions, const QString &exclusionsFile,
            qint64 maxBytes) {
            return confined(QStringLiteral("archive-out"), folder,
                            remote::archiveOutArgs(exclusions, exclusionsFile, maxBytes, t.upload));
        });
}

// ---- execute ------------------------------------------------------------------------------

ExecuteResult DockerSandboxBackend::execute(const QString &command,
                                            std::optional<double> timeoutSeconds,
                                            const QString &cwd, const ExecuteOptions &options)
{
    checkExecuteInput(command, cwd, options.env);
    const QString container = requireContainer();
    const double timeout = timeoutSeconds.value_or(m_options.timeout);
    if (!(timeout > 0) || !std::isfinite(timeout))
        throw ValueError(QStringLiteral("timeout must be a positive number of seconds"));
    // The command travels inside one argument of the exec (Linux: 128 KiB), quoted twice.
    checkCommandFits(command, 100000, QStringLiteral("docker backend"));
    if (options.readOnlyWorkspace)
        throw PermissionError(QStringLiteral("the docker backend cannot run a command with the "
                                             "workspace read-only; use a read-write agent"));
    const QString rel = remote::confinedPath(cwd);
    const qint64 cap = std::max<qint64>(0, m_options.maxOutputBytes);
    remote::WrappedCommand wrapped;
    wrapped.command = command;
    wrapped.env = m_options.env;
    wrapped.env.insert(options.env);
    wrapped.timeoutSeconds = timeout;
    wrapped.killGraceSeconds = m_options.killGraceSeconds;
    // One byte more than the cap per stream: what arrives then tells "there was more".
    wrapped.streamCap = cap + 1;
    wrapped.marker = randomHex(16);

    ExecSpec spec;
    spec.argv = {QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                 remote::confinedScript(Channel::Binary, m_options.workspacePath,
                                        QStringLiteral("run"), rel,
                                        {remote::wrapCommand(wrapped)})};
    // A backstop only: the wrapper's watchdog answers first unless the engine hangs.
    spec.timeoutMs = int(std::min((timeout + m_options.killGraceSeconds + 30) * 1000.0, 2e9));
    spec.cap = cap;
    spec.onOutput = options.onOutput;
    spec.cancel = options.cancel;
    QElapsedTimer clock;
    clock.start();
    Exec e = exec(container, spec);
    ProcessOutcome o;
    if (e.cancelled || e.timedOut) {
        // Closing the stream does not stop an exec: what it started is found by its marker.
        ExecSpec sweep;
        sweep.argv = {QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                      remote::sweepScript(wrapped.marker)};
        // as the container's own user: without capabilities, root could neither read another
        // user's /proc/<pid>/environ nor signal its processes
        sweep.timeoutMs = 30000;
        try {
            exec(container, sweep);
        } catch (const SandboxError &err) {
            qCWarning(lcDocker) << "cannot stop what a command left running:" << err.message();
        }
        o.cancelled = e.cancelled;
        o.timedOut = e.timedOut;
        o.exitCode = e.cancelled ? 130 : remote::kTimeoutExit;
    } else {
        remote::throwIfRefused(Channel::Binary, e.exitCode, e.out, e.err);
        o.exitCode = e.exitCode;
        o.timedOut = e.exitCode == remote::kTimeoutExit && clock.elapsed() >= timeout * 1000 - 50;
    }
    remote::capOutput(e.out, e.err, cap, &e.dropped);
    o.stdoutData = e.out;
    o.stderrData = e.err;
    o.droppedBytes = e.dropped;
    o.truncated = e.dropped > 0;
    o.durationMs = clock.elapsed();
    return toExecuteResult(o);
}

// ---- seed and flush -------------------------------------------------------------------------

QHash<QString, FindRecord> DockerSandboxBackend::tree()
{
    return remote::confinedTree(confined(QStringLiteral("tree"), QString()));
}

std::optional<SeedManifest> DockerSandboxBackend::seedManifest() const
{
    return m_flush.seedManifest(); // the container's stamps, as listDir() reports them
}

WorkspaceSeedResult
DockerSandboxBackend::seedWorkspace(const QString &source, const QStringList &excludes,
                                    const std::function<void(int, int)> &progress)
{
    requireContainer();
    // One archive (remote::SeedArchive), owned by the container's user, into the volume.
    const remote::SeedArchive archive(source, excludes, QDir::tempPath(),
                                      {QStringLiteral("--numeric-owner"),
                                       QStringLiteral("--owner=") + m_owner.section(u':', 0, 0),
                                       QStringLiteral("--group=") + m_owner.section(u':', 1, 1)});
    if (progress)
        progress(0, archive.fileCount());
    QHash<QString, FileStamp> remote;
    if (!archive.tarFile().isEmpty()) {
        putTar(m_options.workspacePath, archive.tarFile(), QStringLiteral("seeding the workspace"));
        const QHash<QString, FindRecord> listed = tree();
        for (auto it = listed.cbegin(); it != listed.cend(); ++it) {
            if (it->type == 'f')
                remote.insert(it.key(), {it->size, it->mtimeNs});
        }
    }
    SeedManifest manifest;
    WorkspaceSeedResult result =
        archive.finish(remote, &manifest, QStringLiteral("in the container"));
    if (progress)
        progress(archive.fileCount(), archive.fileCount());
    if (const QString error = m_flush.recordSeed(archive.root(), std::move(manifest));
        !error.isEmpty())
        result.errors << error;
    return result;
}

// ---- checkpoints ------------------------------------------------------------------------------

remote::TreeTransport DockerSandboxBackend::treeTransport()
{
    remote::TreeTransport t;
    t.run = [this](const QString &op, const QStringList &args, const QString &) {
        return confined(op, QString(), args);
    };
    // no stdin on an exec here: the input goes in by the archive endpoint
    const auto put = [this](const QString &local) {
        const QFileInfo info(local);
        putArchive(m_options.workspacePath, info.path(), info.fileName(),
                   QStringLiteral("a checkpoint transfer"));
    };
    t.upload = put;
    t.sendFolder = put;
    return t;
}

TreeManifest DockerSandboxBackend::captureTree(const CaptureOptions &options)
{
    TreeManifest m = m_tree.capture(treeTransport(), options);
    m.source = id();
    return m;
}

ApplyResult DockerSandboxBackend::applyTree(const TreeManifest &current, const TreeManifest &target,
                                            const CheckpointStore &store, TreeHashCache *cache)
{
    return m_tree.apply(treeTransport(), current, target, store, cache);
}

std::unique_ptr<TreeWatch> DockerSandboxBackend::watchTree(int maxWatches)
{
    Q_UNUSED(maxWatches); // no watches: one listing per drain
    return remote::RemoteTree::watch(treeTransport());
}

remote::RemoteFlush::Transport DockerSandboxBackend::flushTransport()
{
    const QString container = requireContainer();
    remote::RemoteFlush::Transport t;
    t.list = [this] { return tree(); };
    // One archive of the workspace comes back; only the wanted names are unpacked. GNU tar
    // refuses `..` and absolute members and delays links, and the folder is ours alone.
    t.fetch = [this, container](const QStringList &paths, const QHash<QString, FindRecord> &,
                                const QString &scratch, const QString &files) {
        // GET archive names every member after the folder's own name
        const QByteArray top = m_options.workspacePath.section(u'/', -1).toUtf8() + '/';
        QByteArray list;
        for (const QString &rel : paths)
            list += top + rel.toUtf8() + '\0';
        const QString listFile = scratch + QStringLiteral("/list");
        const QString tarFile = scratch + QStringLiteral("/flush.tar");
        QFile tar(tarFile);
        if (!remote::writeLocalFile(listFile, list) || !tar.open(QIODevice::WriteOnly))
            throw OSError(QStringLiteral("cannot write the flush list locally"));
        EngineRequest get;
        get.path =
            "/containers/" + pct(container) + "/archive?path=" + pct(m_options.workspacePath);
        get.timeoutMs = m_options.operationTimeoutSeconds * 1000;
        get.sink = [&](const QByteArray &chunk) { return tar.write(chunk) == chunk.size(); };
        const EngineResponse r = m_engine.send(get);
        tar.close();
        if (!r.ok())
            raise(r, QStringLiteral("fetching the workspace"));
        const QStringList errors = remote::runLocalTar(
            {QStringLiteral("-x"), QStringLiteral("-f"), tarFile, QStringLiteral("-C"), files,
             QStringLiteral("--no-same-owner"), QStringLiteral("--no-same-permissions"),
             QStringLiteral("--no-recursion"), QStringLiteral("--strip-components=1"),
             QStringLiteral("--null"), QStringLiteral("-T"), listFile});
        QFile::remove(tarFile);
        return errors;
    };
    return t;
}

SyncPlan DockerSandboxBackend::planSync(const QString &dest, const WorkspaceSyncPolicy &policy)
{
    return m_flush.planSync(dest, policy, flushTransport());
}

WorkspaceSyncResult
DockerSandboxBackend::syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                                    const std::function<void(int, int)> &progress)
{
    return m_flush.syncArtifacts(dest, policy, flushTransport(), progress);
}

} // namespace elsai
