// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sshsandboxbackend.h"

#include "commandwrapper.h"
#include "confinedscript.h"
#include "errors.h"
#include "findrecord.h"
#include "flushbase.h"
#include "glob.h"
#include "inputchecks.h"
#include "localtar.h"
#include "remotefetch.h"
#include "seedarchive.h"
#include "shellquote.h"

#include <QDir>
#include <QFile>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTemporaryFile>

#include <sys/stat.h>

#include <cerrno>
#include <cmath>

namespace elsai {

using remote::Channel;
using ssh::SshConnection;

namespace {

/// Output a capped helper call keeps beyond its payload: the helper's one refusal line on
/// stderr (the output cap counts stdout and stderr together).
constexpr qint64 kRefusalRoom = 4096;

QString randomToken()
{
    quint64 v[2];
    QRandomGenerator::system()->fillRange(v);
    return QString::number(v[0], 16).rightJustified(16, u'0') +
           QString::number(v[1], 16).rightJustified(16, u'0');
}

} // namespace

SshSandboxBackend::SshSandboxBackend(Options options) : m_options(std::move(options))
{
    if (!(m_options.timeout > 0) || !std::isfinite(m_options.timeout))
        throw ValueError(QStringLiteral("timeout must be a positive number of seconds, got %1")
                             .arg(m_options.timeout));
    if (m_options.maxOutputBytes < 0)
        throw ValueError(
            QStringLiteral("max_output_bytes must be >= 0, got %1").arg(m_options.maxOutputBytes));
    if (!(m_options.killGraceSeconds > 0) || !std::isfinite(m_options.killGraceSeconds))
        throw ValueError(QStringLiteral("the kill grace must be a positive number of seconds"));
    static const QRegularExpression nameRe(QStringLiteral("^[A-Za-z0-9._-]+$"));
    if (!nameRe.match(m_options.workspaceName).hasMatch() ||
        m_options.workspaceName == QLatin1String(".") ||
        m_options.workspaceName == QLatin1String(".."))
        throw ValueError(QStringLiteral("remote workspace name '%1' must be one folder name of "
                                        "letters, digits, '.', '_' and '-'")
                             .arg(m_options.workspaceName));
    if (m_options.remoteRoot.isEmpty() || m_options.remoteRoot.contains(QChar(u'\0')))
        throw ValueError(QStringLiteral("the remote root folder must not be empty"));
    checkEnvironment(m_options.env);
}

SshSandboxBackend::~SshSandboxBackend() = default;

QString SshSandboxBackend::id() const
{
    return QStringLiteral("ssh:") + m_options.target.display() + QLatin1Char('/') +
           m_options.remoteRoot + QLatin1Char('/') + m_options.workspaceName;
}

QString SshSandboxBackend::remoteWorkspace() const
{
    QMutexLocker lock(&m_mutex);
    return m_root;
}

std::shared_ptr<ssh::SshConnection> SshSandboxBackend::connection() const
{
    QMutexLocker lock(&m_mutex);
    return m_conn;
}

void SshSandboxBackend::create()
{
    QMutexLocker lock(&m_mutex);
    if (m_conn)
        return;
    auto conn = std::make_shared<SshConnection>(m_options.target);
    conn->start();
    // mkdir -p of the remote root is the user's choice of place; the workspace beneath it is
    // ours. pwd -P gives the canonical path every later check compares against.
    const QByteArray dir =
        shellQuote((m_options.remoteRoot + QLatin1Char('/') + m_options.workspaceName).toUtf8());
    SshConnection::Call call;
    call.remoteCommand = "mkdir -p -- " + dir + " && cd -- " + dir + " && pwd -P";
    call.timeoutMs = m_options.operationTimeoutSeconds * 1000;
    call.maxOutputBytes = 1 << 20;
    const ProcessOutcome o = conn->run(call);
    if (o.exitCode == 255)
        conn->throwConnectionError(o.stderrData, QStringLiteral("cannot create the workspace"));
    const QString root = QString::fromUtf8(o.stdoutData).trimmed();
    if (o.exitCode != 0 || !root.startsWith(QLatin1Char('/'))) {
        throw OSError(QStringLiteral("cannot create the remote workspace %1/%2 on %3: %4")
                          .arg(m_options.remoteRoot, m_options.workspaceName,
                               m_options.target.display(),
                               QString::fromUtf8(o.stderrData).trimmed()));
    }
    m_conn = std::move(conn);
    m_root = root;
    identifyWorkspace();
}

void SshSandboxBackend::identifyWorkspace()
{
    // The remote folder's device:inode names it in the base file: a base is never taken for
    // a workspace that was deleted and made again under the same id.
    QByteArray identity;
    try {
        const ProcessOutcome o = op({m_conn, m_root}, QStringLiteral("stat"), {});
        const QList<FindRecord> recs = parseFindRecords(o.stdoutData);
        if (o.exitCode == 0 && !recs.isEmpty())
            identity = QByteArray::number(recs.first().device) + ':' +
                       QByteArray::number(recs.first().inode);
    } catch (const SandboxError &e) {
        qWarning("cannot identify the SSH workspace %s: %s", qPrintable(id()),
                 qPrintable(e.message()));
    }
    if (const QString error = m_flush.identify(id(), identity); !error.isEmpty())
        qWarning("%s", qPrintable(error)); // no base: the safe no-base rule applies
}

void SshSandboxBackend::close()
{
    std::shared_ptr<SshConnection> conn;
    {
        QMutexLocker lock(&m_mutex);
        conn = std::move(m_conn);
        m_conn.reset();
    }
    if (conn)
        conn->stop(); // calls in flight fail; the remote folder stays
}

bool SshSandboxBackend::isCreated() const
{
    QMutexLocker lock(&m_mutex);
    return m_conn != nullptr;
}

SshSandboxBackend::Session SshSandboxBackend::session() const
{
    QMutexLocker lock(&m_mutex);
    if (!m_conn)
        throw OSError(
            QStringLiteral("the SSH workspace %1 is closed; start the sandbox first").arg(id()));
    return {m_conn, m_root};
}

ProcessOutcome SshSandboxBackend::op(const Session &s, const QString &name, const QStringList &args,
                                     const QString &stdinFile, const QString &stdoutFile) const
{
    SshConnection::Call call;
    call.remoteCommand =
        remote::confinedScript(Channel::Binary, s.root, name, args.value(0), args.mid(1)).toUtf8();
    call.stdinFile = stdinFile;
    call.stdoutFile = stdoutFile;
    call.timeoutMs = m_options.operationTimeoutSeconds * 1000;
    return checked(s, name, s.conn->run(call));
}

ProcessOutcome SshSandboxBackend::checked(const Session &s, const QString &name,
                                          ProcessOutcome o) const
{
    if (o.timedOut) {
        throw TimeoutError(QStringLiteral("the remote operation '%1' took more than %2 s")
                               .arg(name)
                               .arg(m_options.operationTimeoutSeconds),
                           ETIMEDOUT);
    }
    if (o.exitCode == 255)
        s.conn->throwConnectionError(o.stderrData, QStringLiteral("remote '%1'").arg(name));
    remote::throwIfRefused(Channel::Binary, o.exitCode, o.stdoutData, o.stderrData);
    return o;
}

static void throwIfFailed(const ProcessOutcome &o, const QString &what)
{
    if (o.exitCode != 0)
        throw OSError(QStringLiteral("%1 failed on the SSH remote (exit code %2): %3")
                          .arg(what)
                          .arg(o.exitCode)
                          .arg(QString::fromUtf8(o.stderrData).trimmed()),
                      EIO);
}

QByteArray SshSandboxBackend::readFile(const QString &path)
{
    const QString rel = remote::confinedPath(path);
    const ProcessOutcome o = op(session(), QStringLiteral("read"), {rel});
    throwIfFailed(o, QStringLiteral("reading '%1'").arg(path));
    return o.stdoutData;
}

FileRange SshSandboxBackend::readFileRange(const QString &path, qint64 offset, qint64 maxBytes)
{
    if (offset < 0 || maxBytes < 0)
        throw ValueError(QStringLiteral("a file range needs offset >= 0 and max_bytes >= 0"));
    const QString rel = remote::confinedPath(path);
    const Session s = session();
    SshConnection::Call call;
    call.remoteCommand = remote::confinedScript(Channel::Binary, s.root, QStringLiteral("range"),
                                                rel, remote::confinedRangeArgs(offset, maxBytes))
                             .toUtf8();
    call.timeoutMs = m_options.operationTimeoutSeconds * 1000;
    // the size line and the range, and room for a refusal on stderr (the cap counts both
    // streams): a remote that sends more is cut, never held
    call.maxOutputBytes = qMin<qint64>(maxBytes, qint64(1) << 40) + 32 + kRefusalRoom;
    const ProcessOutcome o = checked(s, QStringLiteral("range"), s.conn->run(call));
    throwIfFailed(o, QStringLiteral("reading '%1'").arg(path));
    return remote::confinedRange(o.stdoutData, maxBytes, QStringLiteral("SSH"));
}

void SshSandboxBackend::writeFile(const QString &path, const QByteArray &content)
{
    const QString rel = remote::confinedPath(path);
    if (rel.isEmpty())
        throw IsADirectoryError(
            QStringLiteral("cannot write '%1': it is the workspace root").arg(path), EISDIR);
    if (path.endsWith(QLatin1Char('/')))
        throw IsADirectoryError(
            QStringLiteral("cannot write '%1': the path names a folder").arg(path), EISDIR);
    const Session s = session();
    QTemporaryFile tmp(s.conn->localDir() + QStringLiteral("/upload-XXXXXX"));
    if (!tmp.open() || tmp.write(content) != content.size() || !tmp.flush())
        throw OSError(
            QStringLiteral("cannot stage '%1' for upload: %2").arg(path, tmp.errorString()));
    // The remote temporary name comes from here: the remote shell has no random source of its
    // own, and the helper creates it with O_EXCL, so a name planted in advance only fails.
    throwIfFailed(op(s, QStringLiteral("write"),
                     {rel, remote::confinedTempName(rel.section(QLatin1Char('/'), -1))},
                     tmp.fileName()),
                  QStringLiteral("writing '%1'").arg(path));
}

QList<FileInfo> SshSandboxBackend::listDir(const QString &path)
{
    const QString rel = remote::confinedPath(path);
    const ProcessOutcome o = op(session(), QStringLiteral("list"), {rel});
    throwIfFailed(o, QStringLiteral("listing '%1'").arg(path));
    QList<FileInfo> out = remote::confinedEntries(o.stdoutData, rel);
    std::sort(out.begin(), out.end(),
              [](const FileInfo &a, const FileInfo &b) { return a.path < b.path; });
    return out;
}

void SshSandboxBackend::walkTree(const QString &path, bool withStat,
                                 const std::function<WalkStep(const WalkEntry &)> &visit)
{
    Q_UNUSED(withStat); // find reports sizes and times of every entry anyway
    // One command: `tree` refuses a path that is not a folder (ENOTDIR) or leaves the workspace.
    const QString root = remote::confinedPath(path);
    const ProcessOutcome o = op(session(), QStringLiteral("tree"), {root});
    throwIfFailed(o, QStringLiteral("listing '%1'").arg(path));
    remote::walkConfinedTree(o.stdoutData, root, visit);
}

std::optional<QHash<QString, QByteArray>> SshSandboxBackend::fetchFiles(const FileFetch &fetch)
{
    const Session s = session();
    return remote::fetchByArchive(
        fetch, s.conn->localDir(),
        [&](const QString &folder, const QByteArray &exclusions, const QString &exclusionsFile,
            qint64 maxBytes) {
            SshConnection::Call call;
            call.remoteCommand =
                remote::confinedScript(
                    Channel::Binary, s.root, QStringLiteral("archive-out"), folder,
                    remote::archiveOutArgs(exclusions, exclusionsFile, maxBytes, {}))
                    .toUtf8();
            call.stdinFile = exclusionsFile;
            call.timeoutMs = m_options.operationTimeoutSeconds * 1000;
            call.maxOutputBytes = maxBytes + 1 + kRefusalRoom;
            // tar's warnings (a file that vanished or cannot be read) are not failures: the
            // file is then missing from the archive
            return checked(s, QStringLiteral("archive-out"), s.conn->run(call)).stdoutData;
        });
}

CappedListing SshSandboxBackend::listDirFirst(const QString &path, qsizetype maxEntries,
                                              qsizetype statLimit)
{
    Q_UNUSED(statLimit); // find reports the lstat data of every entry it sends anyway
    const QString rel = remote::confinedPath(path);
    const Session s = session();
    SshConnection::Call call;
    const qsizetype cap = qMax<qsizetype>(0, maxEntries);
    call.remoteCommand = remote::confinedScript(Channel::Binary, s.root, QStringLiteral("list"),
                                                rel, {QString::number(cap)})
                             .toUtf8();
    call.timeoutMs = m_options.operationTimeoutSeconds * 1000;
    // a record is at most 4 numbers and a 255-byte name; then room for a refusal on stderr
    call.maxOutputBytes = qint64(cap) * 400 + 64 + kRefusalRoom;
    const ProcessOutcome o = checked(s, QStringLiteral("list"), s.conn->run(call));
    throwIfFailed(o, QStringLiteral("listing '%1'").arg(path));
    CappedListing listing;
    if (!parseCappedListing(o.stdoutData, rel, cap, &listing.listing, &listing.totalEntries))
        throw OSError(QStringLiteral("the SSH remote answered the listing of '%1' without its "
                                     "count")
                          .arg(path),
                      EIO);
    return listing;
}

void SshSandboxBackend::removeFile(const QString &path, bool recursive)
{
    const QString rel = remote::confinedPath(path);
    if (rel.isEmpty())
        throw PermissionError(
            QStringLiteral("refusing to remove the workspace root ('%1')").arg(path), EPERM);
    throwIfFailed(op(session(), QStringLiteral("remove"),
                     {rel, recursive ? QStringLiteral("1") : QStringLiteral("0")}),
                  QStringLiteral("removing '%1'").arg(path));
}

FileInfo SshSandboxBackend::stat(const QString &path)
{
    const QString rel = remote::confinedPath(path);
    const ProcessOutcome o = op(session(), QStringLiteral("stat"), {rel});
    throwIfFailed(o, QStringLiteral("stat of '%1'").arg(path));
    const QList<FindRecord> recs = parseFindRecords(o.stdoutData);
    if (recs.isEmpty())
        throw FileNotFoundError(QStringLiteral("'%1': no such file or folder").arg(path), ENOENT);
    return recs.first().toInfo(rel);
}

void SshSandboxBackend::makeDirs(const QString &path)
{
    const QString rel = remote::confinedPath(path);
    if (rel.isEmpty())
        return;
    throwIfFailed(op(session(), QStringLiteral("mkdirs"), {rel}),
                  QStringLiteral("creating the folder '%1'").arg(path));
}

QHash<QString, FindRecord> SshSandboxBackend::listAll(const Session &s) const
{
    const ProcessOutcome o = op(s, QStringLiteral("tree"), {});
    throwIfFailed(o, QStringLiteral("listing the workspace"));
    return remote::confinedTree(o.stdoutData);
}

// ---- checkpoints --------------------------------------------------------------------------

remote::TreeTransport SshSandboxBackend::treeTransport(const Session &s) const
{
    remote::TreeTransport t;
    t.scratchParent = s.conn->localDir();
    t.run = [this, s](const QString &name, const QStringList &args, const QString &input) {
        const ProcessOutcome o = op(s, name, QStringList{QString()} + args, input);
        throwIfFailed(o, QStringLiteral("the remote operation '%1'").arg(name));
        return o.stdoutData;
    };
    t.runToFile = [this, s](const QString &name, const QStringList &args, const QString &input,
                            const QString &output) {
        throwIfFailed(op(s, name, QStringList{QString()} + args, input, output),
                      QStringLiteral("the remote operation '%1'").arg(name));
    };
    return t;
}

TreeManifest SshSandboxBackend::captureTree(const CaptureOptions &options)
{
    TreeManifest m = m_tree.capture(treeTransport(session()), options);
    m.source = id();
    return m;
}

ApplyResult SshSandboxBackend::applyTree(const TreeManifest &current, const TreeManifest &target,
                                         const CheckpointStore &store, TreeHashCache *cache)
{
    return m_tree.apply(treeTransport(session()), current, target, store, cache);
}

std::unique_ptr<TreeWatch> SshSandboxBackend::watchTree(int maxWatches)
{
    Q_UNUSED(maxWatches); // no watches: one listing per drain
    return remote::RemoteTree::watch(treeTransport(session()));
}

// ---- execute --------------------------------------------------------------------------------

ExecuteResult SshSandboxBackend::execute(const QString &command,
                                         std::optional<double> timeoutSeconds, const QString &cwd,
                                         const ExecuteOptions &options)
{
    checkExecuteInput(command, cwd, options.env);
    const Session s = session();
    const double timeout = timeoutSeconds.value_or(m_options.timeout);
    if (!(timeout > 0) || !std::isfinite(timeout))
        throw ValueError(QStringLiteral("timeout must be a positive number of seconds"));
    // The remote command travels as one argv string (ssh locally, the login shell remotely),
    // which Linux limits to 128 KiB; leave room for the helper.
    constexpr qsizetype MaxSshCommandBytes = 100000;
    checkCommandFits(command, MaxSshCommandBytes, QStringLiteral("SSH backend"));
    const QString rel = remote::confinedPath(cwd);
    remote::WrappedCommand wrapped;
    wrapped.command = command;
    wrapped.env = m_options.env;
    wrapped.env.insert(options.env);
    wrapped.timeoutSeconds = timeout;
    wrapped.killGraceSeconds = m_options.killGraceSeconds;
    // Killing the local client leaves the remote command running: the marker finds its tree.
    wrapped.marker = randomToken();

    SshConnection::Call call;
    // The confined walk enters the folder, then runs the wrapper there.
    call.remoteCommand = remote::confinedScript(Channel::Binary, s.root, QStringLiteral("run"), rel,
                                                {remote::wrapCommand(wrapped)})
                             .toUtf8();
    // A backstop only: the remote timeout answers first unless the connection hangs.
    call.timeoutMs =
        static_cast<int>(std::min((timeout + m_options.killGraceSeconds + 30) * 1000.0, 2e9));
    call.maxOutputBytes = m_options.maxOutputBytes;
    call.onOutput = options.onOutput;
    call.cancel = options.cancel;
    ProcessOutcome o = s.conn->run(call);

    if (o.cancelled || o.timedOut) {
        SshConnection::Call sweep;
        sweep.remoteCommand = remote::sweepScript(wrapped.marker).toUtf8();
        sweep.timeoutMs = m_options.operationTimeoutSeconds * 1000;
        s.conn->run(sweep); // a connection that is gone took the remote session's tree with it
    } else {
        remote::throwIfRefused(Channel::Binary, o.exitCode, o.stdoutData, o.stderrData);
        // 255 is both "ssh failed" and a command's own exit 255: ask the master.
        if (o.exitCode == 255 && !s.conn->masterAlive())
            s.conn->throwConnectionError(o.stderrData, QStringLiteral("execute"));
    }
    ExecuteResult r = toExecuteResult(o);
    // The wrapper's watchdog answers 124 (a command's own 124 comes before the timeout).
    const bool remoteTimeout = !o.cancelled && o.exitCode == remote::kTimeoutExit &&
                               double(o.durationMs) >= timeout * 1000.0 - 50;
    if (o.timedOut || remoteTimeout) {
        r.timedOut = true;
        r.exitCode = remote::kTimeoutExit;
    }
    return r;
}

// ---- seeding ----------------------------------------------------------------------------------

std::optional<SeedManifest> SshSandboxBackend::seedManifest() const
{
    return m_flush.seedManifest(); // remote stamps, as listDir() reports them
}

WorkspaceSeedResult SshSandboxBackend::seedWorkspace(const QString &source,
                                                     const QStringList &excludes,
                                                     const std::function<void(int, int)> &progress)
{
    const Session s = session();
    // One tar stream over one ssh channel (remote::SeedArchive); archive-in answers with the
    // workspace's stamps of the files that arrived.
    const remote::SeedArchive archive(source, excludes, s.conn->localDir());
    if (progress)
        progress(0, archive.fileCount());
    QHash<QString, FileStamp> remote;
    QStringList tarErrors;
    if (!archive.tarFile().isEmpty()) {
        const QString stampsFile = archive.scratchFile(QStringLiteral("stamps"));
        const ProcessOutcome o =
            op(s, QStringLiteral("archive-in"), {}, archive.tarFile(), stampsFile);
        if (o.exitCode != 0) {
            for (const QByteArray &l : o.stderrData.split('\n')) {
                if (!l.trimmed().isEmpty())
                    tarErrors << QStringLiteral("remote tar: ") + QString::fromUtf8(l);
            }
        }
        QFile f(stampsFile);
        const QByteArray stamps = f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        for (const FindRecord &r : parseFindRecords(stamps))
            remote.insert(r.name, {r.size, r.mtimeNs});
    }
    SeedManifest manifest;
    WorkspaceSeedResult result = archive.finish(remote, &manifest, QStringLiteral("on the remote"));
    result.errors += tarErrors;
    if (progress)
        progress(archive.fileCount(), archive.fileCount());
    if (const QString error = m_flush.recordSeed(archive.root(), std::move(manifest));
        !error.isEmpty())
        result.errors << error;
    return result;
}

// ---- flush --------------------------------------------------------------------------------------

remote::RemoteFlush::Transport SshSandboxBackend::flushTransport(const Session &s) const
{
    remote::RemoteFlush::Transport t;
    t.scratchParent = s.conn->localDir();
    t.list = [this, s] { return listAll(s); };
    // One tar stream of the wanted files (archive-out, the rest excluded by name), of which
    // only the listed names are extracted: the archive may hold more (names the exclusions
    // cannot express, files created since the listing). GNU tar refuses `..` and absolute
    // members and delays symlinks, and the folder is ours alone.
    t.fetch = [this, s](const QStringList &paths, const QHash<QString, FindRecord> &listing,
                        const QString &scratch, const QString &files) {
        QByteArray list;
        for (const QString &rel : paths)
            list += "./" + rel.toUtf8() + '\0';
        const QString listFile = scratch + QStringLiteral("/list");
        const QString tarFile = scratch + QStringLiteral("/flush.tar");
        const QString excludeFile = scratch + QStringLiteral("/exclude");
        const QSet<QString> wanted(paths.cbegin(), paths.cend());
        QList<std::pair<QString, bool>> entries;
        entries.reserve(listing.size());
        for (auto it = listing.cbegin(); it != listing.cend(); ++it)
            entries.append({it.key(), it->type == 'd'});
        if (!remote::writeLocalFile(listFile, list) ||
            !remote::writeLocalFile(excludeFile, remote::archiveExclusions(entries, wanted)))
            throw OSError(QStringLiteral("cannot write the flush list locally"));
        QStringList errors;
        const ProcessOutcome o = op(s, QStringLiteral("archive-out"), {}, excludeFile, tarFile);
        if (o.exitCode != 0) {
            for (const QByteArray &l : o.stderrData.split('\n')) {
                if (!l.trimmed().isEmpty())
                    errors << QStringLiteral("remote tar: ") + QString::fromUtf8(l);
            }
        }
        errors += remote::runLocalTar(
            {QStringLiteral("-x"), QStringLiteral("-f"), tarFile, QStringLiteral("-C"), files,
             QStringLiteral("--no-same-owner"), QStringLiteral("--no-same-permissions"),
             QStringLiteral("--no-recursion"), QStringLiteral("--null"), QStringLiteral("-T"),
             listFile});
        return errors;
    };
    return t;
}

SyncPlan SshSandboxBackend::planSync(const QString &dest, const WorkspaceSyncPolicy &policy)
{
    return m_flush.planSync(dest, policy, flushTransport(session()));
}

WorkspaceSyncResult SshSandboxBackend::syncArtifacts(const QString &dest,
                                                     const WorkspaceSyncPolicy &policy,
                                                     const std::function<void(int, int)> &progress)
{
    return m_flush.syncArtifacts(dest, policy, flushTransport(session()), progress);
}

} // namespace elsai
