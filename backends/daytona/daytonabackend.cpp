// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "daytonabackend.h"

#include "commandwrapper.h"
#include "confinedscript.h"
#include "errors.h"
#include "findrecord.h"
#include "flushbase.h"
#include "glob.h"
#include "inputchecks.h"
#include "multipart.h"
#include "remotefetch.h"
#include "shellquote.h"
#include "workspacefs.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QScopeGuard>
#include <QSet>
#include <QThread>
#include <QUuid>

#include <cerrno>

Q_LOGGING_CATEGORY(lcDaytona, "elsai.backend.daytona", QtInfoMsg)

namespace elsai {

using daytona::CallKind;
using daytona::DaytonaApi;
using remote::HttpResponse;

namespace {

QString joinRemote(const QString &root, const QString &rel)
{
    return rel.isEmpty() ? root : root + QLatin1Char('/') + rel;
}

/// Extra time the client waits beyond the command timeout before giving up on the answer.
constexpr int kExecuteSlackMs = 30000;
/// Files per bulk-download request while flushing.
constexpr qsizetype kDownloadBatch = 100;
/// Seconds a confined file operation may take on the sandbox (a read of a large file too).
constexpr int kFileOpTimeoutS = 120;
/// Writes up to this size travel inside the command (one round trip, base64, under the
/// kernel's 128 KiB limit of one argument); larger ones are uploaded to a temp file.
constexpr qsizetype kInlineWriteBytes = 48 * 1024;

} // namespace

// ---- construction, lifecycle ------------------------------------------------------------

DaytonaSandboxBackend::DaytonaSandboxBackend(QString workspaceId, Options options)
    : m_workspaceId(std::move(workspaceId)), m_options(std::move(options)), m_api(m_options.config)
{
}

DaytonaSandboxBackend::~DaytonaSandboxBackend() = default;

QString DaytonaSandboxBackend::id() const
{
    QMutexLocker lock(&m_mutex);
    return QStringLiteral("daytona:") +
           (m_remote.sandboxId.isEmpty() ? m_workspaceId : m_remote.sandboxId);
}

QString DaytonaSandboxBackend::sandboxId() const
{
    QMutexLocker lock(&m_mutex);
    return m_remote.sandboxId;
}

QString DaytonaSandboxBackend::remoteRoot() const
{
    QMutexLocker lock(&m_mutex);
    return m_remote.root;
}

QUrl DaytonaSandboxBackend::toolboxUrl() const
{
    return remote().toolbox;
}

bool DaytonaSandboxBackend::isCreated() const
{
    QMutexLocker lock(&m_mutex);
    return m_created;
}

DaytonaSandboxBackend::Remote DaytonaSandboxBackend::remote() const
{
    QMutexLocker lock(&m_mutex);
    if (!m_created)
        throw SandboxError(QStringLiteral("the Daytona sandbox of '%1' is not created; call "
                                          "create() (start the sandbox) first")
                               .arg(m_workspaceId));
    return m_remote;
}

QJsonObject DaytonaSandboxBackend::waitForState(const QString &sandboxId, const QStringList &wanted)
{
    QElapsedTimer clock;
    clock.start();
    int intervalMs = 100;
    for (;;) {
        const HttpResponse r =
            m_api.control("GET", QStringLiteral("/sandbox/") +
                                     QString::fromLatin1(QUrl::toPercentEncoding(sandboxId)));
        if (!r.ok())
            DaytonaApi::raise(r, CallKind::ControlPlane, QStringLiteral("get sandbox"), sandboxId);
        const QJsonObject sandbox = DaytonaApi::object(r);
        const QString state = sandbox.value(QStringLiteral("state")).toString();
        if (wanted.contains(state))
            return sandbox;
        if (state == QLatin1String("error") || state == QLatin1String("build_failed"))
            throw SandboxStartError(
                QStringLiteral("Daytona sandbox %1 failed to start (%2): %3")
                    .arg(sandboxId, state,
                         sandbox.value(QStringLiteral("errorReason")).toString()));
        if (clock.elapsed() > m_options.startTimeoutMs)
            throw SandboxStartError(QStringLiteral("Daytona sandbox %1 is still '%2' after %3 s; "
                                                   "try again or raise the start timeout")
                                        .arg(sandboxId, state)
                                        .arg(m_options.startTimeoutMs / 1000));
        QThread::msleep(ulong(intervalMs));
        // The SDK's pace: 0.1 s, then ×1.1 after 5 s, capped at 1 s (§1.2).
        if (clock.elapsed() > 5000)
            intervalMs = std::min(1000, int(intervalMs * 1.1) + 1);
    }
}

void DaytonaSandboxBackend::create()
{
    // m_lifecycleMutex serializes create/close; m_mutex is held only for the state, so id()
    // and isCreated() never wait for the network.
    QMutexLocker lifecycle(&m_lifecycleMutex);
    if (isCreated())
        return;
    if (m_options.config.apiKey.isEmpty() && m_options.config.jwtToken.isEmpty())
        throw SandboxStartError(QStringLiteral("no Daytona credentials: set DAYTONA_API_KEY (or "
                                               "DAYTONA_JWT_TOKEN and DAYTONA_ORGANIZATION_ID)"));
    QJsonObject sandbox;
    QString sid;
    if (!m_options.existingSandbox.isEmpty()) {
        sid = m_options.existingSandbox;
        const QString path =
            QStringLiteral("/sandbox/") + QString::fromLatin1(QUrl::toPercentEncoding(sid));
        HttpResponse r = m_api.control("GET", path);
        if (!r.ok())
            DaytonaApi::raise(r, CallKind::ControlPlane, QStringLiteral("get sandbox"), sid);
        sandbox = DaytonaApi::object(r);
        if (sandbox.value(QStringLiteral("state")).toString() != QLatin1String("started")) {
            r = m_api.control("POST", path + QStringLiteral("/start"));
            if (!r.ok())
                DaytonaApi::raise(r, CallKind::ControlPlane, QStringLiteral("start sandbox"), sid);
        }
        sid = sandbox.value(QStringLiteral("id")).toString(sid);
    } else {
        QJsonObject body;
        if (!m_options.name.isEmpty())
            body.insert(QStringLiteral("name"), m_options.name);
        if (!m_options.snapshot.isEmpty())
            body.insert(QStringLiteral("snapshot"), m_options.snapshot);
        if (!m_options.config.target.isEmpty())
            body.insert(QStringLiteral("target"), m_options.config.target);
        QJsonObject env;
        for (auto it = m_options.sandboxEnv.cbegin(); it != m_options.sandboxEnv.cend(); ++it)
            env.insert(it.key(), it.value());
        body.insert(QStringLiteral("env"), env);
        QJsonObject labels;
        for (auto it = m_options.labels.cbegin(); it != m_options.labels.cend(); ++it)
            labels.insert(it.key(), it.value());
        labels.insert(QStringLiteral("elsai.workspace"), m_workspaceId);
        body.insert(QStringLiteral("labels"), labels);
        body.insert(QStringLiteral("autoStopInterval"), m_options.autoStopMinutes);
        const HttpResponse r = m_api.control("POST", QStringLiteral("/sandbox"), body, true);
        if (!r.ok())
            DaytonaApi::raise(r, CallKind::ControlPlane, QStringLiteral("create sandbox"));
        sandbox = DaytonaApi::object(r);
        sid = sandbox.value(QStringLiteral("id")).toString();
        if (sid.isEmpty())
            throw SandboxStartError(QStringLiteral("Daytona answered the create request without "
                                                   "a sandbox id; check DAYTONA_API_URL"));
    }
    try {
        if (sandbox.value(QStringLiteral("state")).toString() != QLatin1String("started"))
            sandbox = waitForState(sid, {QStringLiteral("started")});
        QString proxy = sandbox.value(QStringLiteral("toolboxProxyUrl")).toString();
        if (proxy.isEmpty()) {
            const HttpResponse r =
                m_api.control("GET", QStringLiteral("/sandbox/%1/toolbox-proxy-url")
                                         .arg(QString::fromLatin1(QUrl::toPercentEncoding(sid))));
            if (!r.ok())
                DaytonaApi::raise(r, CallKind::ControlPlane, QStringLiteral("toolbox proxy url"),
                                  sid);
            proxy = DaytonaApi::object(r).value(QStringLiteral("url")).toString();
        }
        Remote remote;
        remote.sandboxId = sid;
        while (proxy.endsWith(QLatin1Char('/')))
            proxy.chop(1);
        remote.toolbox =
            QUrl(proxy + QLatin1Char('/') + QString::fromLatin1(QUrl::toPercentEncoding(sid)));
        remote.root = m_options.remoteRoot;
        if (remote.root.isEmpty()) {
            const HttpResponse r =
                m_api.toolbox(remote.toolbox, "GET", QStringLiteral("/work-dir"));
            if (!r.ok())
                DaytonaApi::raise(r, CallKind::ControlPlane, QStringLiteral("work-dir"), sid);
            const QString dir = DaytonaApi::object(r).value(QStringLiteral("dir")).toString();
            if (!dir.startsWith(QLatin1Char('/')))
                throw SandboxStartError(QStringLiteral("Daytona sandbox %1 reported no usable "
                                                       "working folder ('%2'); set remoteRoot")
                                            .arg(sid, dir));
            remote.root = QDir::cleanPath(dir) + QStringLiteral("/workspace");
        }
        remote.root = QDir::cleanPath(remote.root);
        if (!remote.root.startsWith(QLatin1Char('/')) || remote.root == QLatin1String("/"))
            throw ValueError(QStringLiteral("the Daytona workspace folder must be an absolute "
                                            "folder other than '/', not '%1'")
                                 .arg(remote.root));
        QUrlQuery q;
        q.addQueryItem(QStringLiteral("path"),
                       QString::fromUtf8(QUrl::toPercentEncoding(remote.root)));
        q.addQueryItem(QStringLiteral("mode"), QStringLiteral("755"));
        const HttpResponse r =
            m_api.toolbox(remote.toolbox, "POST", QStringLiteral("/files/folder"), q);
        if (!r.ok())
            DaytonaApi::raise(r, CallKind::ControlPlane, QStringLiteral("create workspace folder"),
                              remote.root);
        {
            QMutexLocker lock(&m_mutex);
            m_remote = remote;
            m_created = true;
        }
        identifyWorkspace(remote);
        qCInfo(lcDaytona) << "sandbox" << sid << "started for" << m_workspaceId;
    } catch (...) {
        // Do not leak a sandbox we created and cannot use.
        if (m_options.existingSandbox.isEmpty())
            m_api.control("DELETE", QStringLiteral("/sandbox/") +
                                        QString::fromLatin1(QUrl::toPercentEncoding(sid)));
        throw;
    }
}

void DaytonaSandboxBackend::close()
{
    QMutexLocker lifecycle(&m_lifecycleMutex);
    if (!isCreated())
        return;
    const Remote current = remote();
    const QString path = QStringLiteral("/sandbox/") +
                         QString::fromLatin1(QUrl::toPercentEncoding(current.sandboxId));
    const HttpResponse r = m_options.deleteOnClose
                               ? m_api.control("DELETE", path)
                               : m_api.control("POST", path + QStringLiteral("/stop"));
    // 404: already gone, which is what close() wants.
    if (!r.ok() && r.status != 404)
        DaytonaApi::raise(r, CallKind::ControlPlane,
                          m_options.deleteOnClose ? QStringLiteral("delete sandbox")
                                                  : QStringLiteral("stop sandbox"),
                          current.sandboxId);
    qCInfo(lcDaytona) << "sandbox" << current.sandboxId
                      << (m_options.deleteOnClose ? "deleted" : "stopped");
    QMutexLocker lock(&m_mutex);
    m_created = false;
}

// ---- files -------------------------------------------------------------------------------

QByteArray DaytonaSandboxBackend::confined(const Remote &r, const QString &op, const QString &rel,
                                           const QStringList &args)
{
    // One /process/execute call does the check and the use (backends/remote/confinedscript.h):
    // the toolbox file API follows symlinks by name, so a separate check could be raced.
    const QJsonObject body{
        {QStringLiteral("command"),
         QStringLiteral("/bin/sh -c ") +
             shellQuote(remote::confinedScript(remote::Channel::Text, r.root, op, rel, args))},
        {QStringLiteral("timeout"), kFileOpTimeoutS}};
    const HttpResponse resp =
        m_api.toolbox(r.toolbox, "POST", QStringLiteral("/process/execute"), {},
                      QJsonDocument(body).toJson(QJsonDocument::Compact), "application/json");
    if (!resp.ok())
        DaytonaApi::raise(resp, CallKind::File, op, rel);
    const QJsonObject o = DaytonaApi::object(resp);
    return remote::confinedPayload(
        remote::Channel::Text, o.value(QStringLiteral("exitCode")).toInt(-1),
        o.value(QStringLiteral("result")).toString().toUtf8(), {}, QStringLiteral("Daytona"));
}

QByteArray DaytonaSandboxBackend::readFile(const QString &path)
{
    return confined(remote(), QStringLiteral("read"), WorkspaceFs::normalize(path));
}

FileRange DaytonaSandboxBackend::readFileRange(const QString &path, qint64 offset, qint64 maxBytes)
{
    // One confined command moves just the range (the toolbox download has no range).
    const QStringList args = remote::confinedRangeArgs(offset, maxBytes);
    return remote::confinedRange(
        confined(remote(), QStringLiteral("range"), WorkspaceFs::normalize(path), args), maxBytes,
        QStringLiteral("Daytona"));
}

void DaytonaSandboxBackend::uploadBatch(const Remote &r,
                                        const QList<QPair<QString, QByteArray>> &files)
{
    remote::MultipartWriter form;
    for (qsizetype i = 0; i < files.size(); ++i) {
        const QString &abs = files[i].first;
        // `.path` must come before its `.file` (§1.6).
        form.addField(QStringLiteral("files[%1].path").arg(i).toUtf8(), abs.toUtf8());
        form.addFile(QStringLiteral("files[%1].file").arg(i).toUtf8(),
                     QFileInfo(abs).fileName().toUtf8(), files[i].second);
    }
    const QByteArray body = form.finish();
    const HttpResponse resp = m_api.toolbox(r.toolbox, "POST", QStringLiteral("/files/bulk-upload"),
                                            {}, body, form.contentType());
    if (!resp.ok()) {
        HttpResponse shown = resp;
        const QJsonArray errors =
            DaytonaApi::object(resp).value(QStringLiteral("errors")).toArray();
        if (!errors.isEmpty()) {
            QStringList parts;
            for (const QJsonValue &e : errors)
                parts.append(e.toString());
            shown.body = QJsonDocument(QJsonObject{{QStringLiteral("message"),
                                                    parts.join(QStringLiteral("; "))}})
                             .toJson();
        }
        DaytonaApi::raise(shown, CallKind::File, QStringLiteral("write"),
                          files.size() == 1 ? files[0].first : QString());
    }
}

void DaytonaSandboxBackend::writeConfined(const Remote &r, const QString &rel,
                                          const QByteArray &content)
{
    if (rel.isEmpty())
        throw IsADirectoryError(QStringLiteral("cannot write the workspace root itself"), EISDIR);
    // Never in place (the upload truncates the existing file, writing through a hard link):
    // a temp file beside the entry, renamed over it by the same script that checked the path.
    const QString temp = remote::confinedTempName(rel.section(QLatin1Char('/'), -1));
    if (content.size() <= kInlineWriteBytes) {
        confined(r, QStringLiteral("write"), rel, {temp, QString::fromLatin1(content.toBase64())});
        return;
    }
    // Too big for one command line: upload the temp file to the folder the script found.
    const QString dir = QString::fromUtf8(confined(r, QStringLiteral("prepare"), rel));
    try {
        uploadBatch(r, {{dir + u'/' + temp, content}});
        confined(r, QStringLiteral("commit"), rel, {temp});
    } catch (const SandboxError &) {
        try {
            confined(r, QStringLiteral("discard"), rel, {temp});
        } catch (const SandboxError &e) {
            qCWarning(lcDaytona) << "cannot remove the temp file of" << rel << e.message();
        }
        throw;
    }
}

void DaytonaSandboxBackend::writeFile(const QString &path, const QByteArray &content)
{
    writeConfined(remote(), WorkspaceFs::normalize(path), content);
}

QList<FileTransferResult>
DaytonaSandboxBackend::uploadFiles(const QList<QPair<QString, QByteArray>> &files)
{
    const Remote r = remote();
    QList<FileTransferResult> results;
    for (const auto &[path, content] : files) {
        FileTransferResult res;
        res.path = path;
        try {
            writeConfined(r, WorkspaceFs::normalize(path), content);
        } catch (const SandboxError &e) {
            res.error = e.message();
        }
        results.append(res);
    }
    return results;
}

QList<FileInfo> DaytonaSandboxBackend::listDir(const QString &path)
{
    const QString rel = WorkspaceFs::normalize(path);
    QList<FileInfo> out =
        remote::confinedEntries(confined(remote(), QStringLiteral("list"), rel), rel);
    std::sort(out.begin(), out.end(),
              [](const FileInfo &a, const FileInfo &b) { return a.path < b.path; });
    return out;
}

CappedListing DaytonaSandboxBackend::listDirFirst(const QString &path, qsizetype maxEntries,
                                                  qsizetype statLimit)
{
    Q_UNUSED(statLimit); // find reports the lstat data of every entry it sends anyway
    const QString rel = WorkspaceFs::normalize(path);
    const qsizetype cap = qMax<qsizetype>(0, maxEntries);
    CappedListing listing;
    if (!parseCappedListing(confined(remote(), QStringLiteral("list"), rel, {QString::number(cap)}),
                            rel, cap, &listing.listing, &listing.totalEntries))
        throw OSError(
            QStringLiteral("Daytona answered the listing of '%1' without its count").arg(path),
            EIO);
    return listing;
}

void DaytonaSandboxBackend::walkTree(const QString &path, bool withStat,
                                     const std::function<WalkStep(const WalkEntry &)> &visit)
{
    Q_UNUSED(withStat); // find reports sizes and times of every entry anyway
    // One /process/execute for the whole walk, not one listing per folder: `tree` refuses a
    // path that is not a folder (ENOTDIR) or leaves the workspace.
    const QString root = WorkspaceFs::normalize(path);
    remote::walkConfinedTree(confined(remote(), QStringLiteral("tree"), root), root, visit);
}

FileInfo DaytonaSandboxBackend::stat(const QString &path)
{
    const QString rel = WorkspaceFs::normalize(path);
    const QList<FileInfo> found =
        remote::confinedEntries(confined(remote(), QStringLiteral("stat"), rel), {});
    if (found.isEmpty())
        throw OSError(QStringLiteral("Daytona answered the stat of '%1' without an entry").arg(rel),
                      EIO);
    FileInfo info = found.first();
    info.path = rel;
    return info;
}

void DaytonaSandboxBackend::removeFile(const QString &path, bool recursive)
{
    const QString rel = WorkspaceFs::normalize(path);
    if (rel.isEmpty())
        throw PermissionError(QStringLiteral("refusing to remove the workspace root"), EPERM);
    confined(remote(), QStringLiteral("remove"), rel,
             {recursive ? QStringLiteral("1") : QStringLiteral("0")});
}

std::optional<QHash<QString, QByteArray>> DaytonaSandboxBackend::fetchFiles(const FileFetch &fetch)
{
    const Remote r = remote();
    const remote::TreeTransport t = treeTransport(r);
    return remote::fetchByArchive(
        fetch, t.scratchParent,
        [&](const QString &folder, const QByteArray &exclusions, const QString &exclusionsFile,
            qint64 maxBytes) {
            return confined(r, QStringLiteral("archive-out"), folder,
                            remote::archiveOutArgs(exclusions, exclusionsFile, maxBytes, t.upload));
        });
}

void DaytonaSandboxBackend::makeDirs(const QString &path)
{
    confined(remote(), QStringLiteral("mkdirs"), WorkspaceFs::normalize(path));
}

// ---- execute -----------------------------------------------------------------------------

ExecuteResult DaytonaSandboxBackend::execute(const QString &command,
                                             std::optional<double> timeoutSeconds,
                                             const QString &cwd, const ExecuteOptions &options)
{
    checkExecuteInput(command, cwd, options.env);
    const Remote r = remote();
    QElapsedTimer clock;
    clock.start();
    ProcessOutcome outcome;
    if (options.cancel && options.cancel->isCancelled()) {
        outcome.cancelled = true;
        outcome.exitCode = 130;
        return toExecuteResult(outcome);
    }
    if (command.trimmed().isEmpty())
        throw ValueError(QStringLiteral("the command is empty"));
    // The folder as the kernel resolved it inside the workspace (loops and escapes refused);
    // the wrapper enters it with `cd -P` and checks it got there (a swap meanwhile fails).
    const QString rel = cwd.isEmpty() ? QString() : WorkspaceFs::normalize(cwd);
    const QString dir =
        rel.isEmpty() ? r.root : QString::fromUtf8(confined(r, QStringLiteral("cwd"), rel));
    const double timeout = timeoutSeconds.value_or(m_options.timeout);
    // One session per call: split stdout/stderr, and no shell state leaks between calls.
    const QString session =
        QStringLiteral("elsai-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
    const QString sessionPath = QStringLiteral("/process/session/") + session;
    const QString pidFile = QStringLiteral("/tmp/%1.pid").arg(session);
    const qint64 cap = std::max<qint64>(0, m_options.maxOutputBytes);
    // The daemon's session exec has no timeout, no cap and no group kill of its own: the
    // wrapper adds them. The session log is never capped by the daemon, so each stream is
    // capped inside the sandbox; the trailer's tag is new per call, so output cannot pass
    // for it by accident.
    remote::WrappedCommand wrapped;
    wrapped.command = command;
    wrapped.dir = dir;
    wrapped.verifyDir = !rel.isEmpty();
    wrapped.env = m_options.env;
    wrapped.env.insert(options.env);
    wrapped.timeoutSeconds = timeout;
    wrapped.streamCap = cap;
    wrapped.trailerTag = remote::newTrailerTag();
    wrapped.pidFile = pidFile;
    const QByteArray &tag = wrapped.trailerTag;
    const QString script = QStringLiteral("/bin/sh -c ") + shellQuote(remote::wrapCommand(wrapped));
    const auto json = [](const QJsonObject &o) {
        return QJsonDocument(o).toJson(QJsonDocument::Compact);
    };
    HttpResponse resp =
        m_api.toolbox(r.toolbox, "POST", QStringLiteral("/process/session"), {},
                      json({{QStringLiteral("sessionId"), session}}), "application/json");
    if (!resp.ok())
        DaytonaApi::raise(resp, CallKind::Execute, QStringLiteral("create session"));
    // Deleting the session at the end also ends the wrapper shell if it is still there.
    const auto deleteSession =
        qScopeGuard([&] { m_api.toolbox(r.toolbox, "DELETE", sessionPath); });

    // Asynchronous exec, then polling: output streams, cancel works, and no HTTP request is
    // held open for the whole command. Never retried: the command may have run.
    resp = m_api.toolbox(
        r.toolbox, "POST", sessionPath + QStringLiteral("/exec"), {},
        json({{QStringLiteral("command"), script}, {QStringLiteral("runAsync"), true}}),
        "application/json", -1, false);
    if (resp.status == 408 || resp.timedOut) {
        outcome.timedOut = true;
        outcome.exitCode = 124;
        outcome.durationMs = clock.elapsed();
        return toExecuteResult(outcome);
    }
    if (!resp.ok())
        DaytonaApi::raise(resp, CallKind::Execute, QStringLiteral("execute"));
    QJsonObject done = DaytonaApi::object(resp);
    const QString cmdId = done.value(QStringLiteral("cmdId")).toString();
    const QString cmdPath = sessionPath + QStringLiteral("/command/") +
                            QString::fromUtf8(QUrl::toPercentEncoding(cmdId));
    QByteArray out, err;                   // everything the service reported so far
    qint64 droppedOut = 0, droppedErr = 0; // what the wrapper's readers did not pass on
    int trailerExit = -1;
    bool haveTrailer = false;
    // Strips the wrapper's trailer (stderr; the combined `output` of an old daemon).
    const auto takeTrailers = [&] {
        if (haveTrailer)
            return;
        auto t = remote::takeTrailer(err, tag);
        if (!t)
            t = remote::takeTrailer(out, tag);
        if (t) {
            haveTrailer = true;
            trailerExit = t->exitCode;
            droppedOut = t->droppedOut;
            droppedErr = t->droppedErr;
        }
    };
    qint64 sentOut = 0, sentErr = 0;
    // Streams the part of each channel not sent yet, within the output cap.
    const auto deliver = [&] {
        qint64 budget = cap;
        const auto push = [&](OutputChannel channel, const QByteArray &all, qint64 &sent) {
            const qint64 keep = std::min<qint64>(all.size(), budget);
            budget -= keep;
            if (keep > sent && options.onOutput)
                options.onOutput(channel, all.mid(sent, keep - sent));
            sent = std::max(sent, keep);
        };
        push(OutputChannel::Stdout, out, sentOut);
        push(OutputChannel::Stderr, err, sentErr);
    };
    const auto fetchLogs = [&] {
        const HttpResponse logs =
            m_api.toolbox(r.toolbox, "GET", cmdPath + QStringLiteral("/logs"));
        if (!logs.ok())
            return;
        const QJsonObject o = DaytonaApi::object(logs);
        out = o.value(QStringLiteral("stdout")).toString().toUtf8();
        err = o.value(QStringLiteral("stderr")).toString().toUtf8();
        haveTrailer = false;
        takeTrailers();
        deliver();
    };
    // Kills the command's process group through a second, independent call.
    const auto killCommand = [&] {
        const QString kill = QStringLiteral("p=$(cat %1 2>/dev/null) && kill -KILL -\"$p\"")
                                 .arg(shellQuote(pidFile));
        m_api.toolbox(r.toolbox, "POST", QStringLiteral("/process/execute"), {},
                      json({{QStringLiteral("command"), kill}, {QStringLiteral("timeout"), 10}}),
                      "application/json");
    };
    const qint64 deadlineMs = timeout > 0 ? qint64(timeout * 1000) + kExecuteSlackMs : -1;
    int intervalMs = 20;
    bool finished = done.contains(QStringLiteral("exitCode")) &&
                    !done.value(QStringLiteral("exitCode")).isNull();
    while (!finished) {
        if (options.cancel && options.cancel->isCancelled()) {
            killCommand();
            fetchLogs();
            outcome.cancelled = true;
            outcome.exitCode = 130;
            break;
        }
        if (deadlineMs > 0 && clock.elapsed() > deadlineMs) {
            // The watchdog should have ended it long ago: the service is not answering.
            killCommand();
            outcome.timedOut = true;
            outcome.exitCode = 124;
            break;
        }
        QThread::msleep(ulong(intervalMs));
        intervalMs = std::min(500, intervalMs * 3 / 2);
        const HttpResponse state = m_api.toolbox(r.toolbox, "GET", cmdPath);
        if (!state.ok())
            DaytonaApi::raise(state, CallKind::Execute, QStringLiteral("execute status"));
        done = DaytonaApi::object(state);
        finished = done.contains(QStringLiteral("exitCode")) &&
                   !done.value(QStringLiteral("exitCode")).isNull();
        if (options.onOutput || finished)
            fetchLogs();
    }
    if (finished) {
        outcome.exitCode = done.value(QStringLiteral("exitCode")).toInt(-1);
        if (out.isEmpty() && err.isEmpty() && !haveTrailer) {
            // A daemon that answered synchronously carries the output in the exec answer.
            out = done.value(QStringLiteral("stdout")).toString().toUtf8();
            err = done.value(QStringLiteral("stderr")).toString().toUtf8();
            if (!done.contains(QStringLiteral("stdout")) &&
                !done.contains(QStringLiteral("stderr")))
                out = done.value(QStringLiteral("output")).toString().toUtf8(); // old daemon
            takeTrailers();
            deliver();
        }
        outcome.timedOut = outcome.exitCode == 124 && timeout > 0 &&
                           clock.elapsed() >= qint64(timeout * 1000) - 50;
    }
    if (haveTrailer && finished && trailerExit != outcome.exitCode)
        qCWarning(lcDaytona) << "the command status" << outcome.exitCode
                             << "differs from the wrapper's" << trailerExit;
    // Each stream arrives capped by the wrapper; the cap is on both together: stdout first,
    // then stderr. Bytes the wrapper dropped count too, so a flood is reported truncated.
    outcome.droppedBytes = droppedOut + droppedErr;
    remote::capOutput(out, err, cap, &outcome.droppedBytes);
    outcome.truncated = outcome.droppedBytes > 0;
    outcome.stdoutData = out;
    outcome.stderrData = err;
    outcome.durationMs = clock.elapsed();
    return toExecuteResult(outcome);
}

// ---- seed and flush through a local shadow -------------------------------------------------

WorkspaceSeedResult
DaytonaSandboxBackend::seedWorkspace(const QString &source, const QStringList &excludes,
                                     const std::function<void(int, int)> &progress)
{
    const Remote r = remote();
    QMutexLocker lock(&m_seedMutex);
    if (!m_shadow) {
        m_shadowDir = std::make_unique<QTemporaryDir>(QDir::tempPath() +
                                                      QStringLiteral("/elsai-daytona-XXXXXX"));
        if (!m_shadowDir->isValid())
            throw OSError(QStringLiteral("cannot create a shadow folder for seeding under %1")
                              .arg(QDir::tempPath()));
        m_shadow = std::make_unique<WorkspaceFs>(m_shadowDir->path());
    }
    const QString root = QDir(source).absolutePath();
    const SeedPlan plan = planSeed(root, GlobSet(excludes));
    SeedManifest manifest;
    manifest.hostRoot = root;
    WorkspaceSeedResult result = executeSeed(plan, *m_shadow, &manifest);

    // Upload what reached the shadow, in requests of about uploadBatchBytes.
    QStringList paths;
    for (const SeedPlanEntry &e : plan.entries) {
        if (e.action == SeedPlanEntry::Action::Copy && !e.isDir && manifest.files.contains(e.path))
            paths.append(e.path);
    }
    QList<QPair<QString, QByteArray>> batch;
    qint64 batchBytes = 0;
    int done = 0;
    const auto flushBatch = [&] {
        if (batch.isEmpty())
            return;
        try {
            uploadBatch(r, batch);
        } catch (const SandboxError &e) {
            for (const auto &f : batch) {
                const QString rel = f.first.mid(r.root.size() + 1);
                result.errors.append(QStringLiteral("%1: %2").arg(rel, e.message()));
                manifest.files.remove(rel);
                --result.filesSeeded;
                result.bytesSeeded -= f.second.size();
            }
        }
        done += int(batch.size());
        if (progress)
            progress(done, int(paths.size()));
        batch.clear();
        batchBytes = 0;
    };
    for (const QString &p : paths) {
        QByteArray content;
        try {
            content = m_shadow->readFile(p);
        } catch (const SandboxError &e) {
            result.errors.append(QStringLiteral("%1: %2").arg(p, e.message()));
            continue;
        }
        batchBytes += content.size();
        batch.append({joinRemote(r.root, p), content});
        if (batchBytes >= m_options.uploadBatchBytes || batch.size() >= 500)
            flushBatch();
    }
    flushBatch();
    // The base keeps the REMOTE stamps (what a flush lists), not the shadow's.
    QHash<QString, FindRecord> tree;
    try {
        tree = remoteTree(r);
    } catch (const SandboxError &e) {
        result.errors.append(
            QStringLiteral("cannot list the seeded workspace: %1").arg(e.message()));
    }
    for (auto it = manifest.files.begin(); it != manifest.files.end(); ++it) {
        const auto rec = tree.constFind(it.key());
        it->workspace = rec == tree.cend() ? FileStamp{} : FileStamp{rec->size, rec->mtimeNs};
    }
    if (const QString error = m_flush.recordSeed(root, std::move(manifest)); !error.isEmpty())
        result.errors << error;
    return result;
}

QHash<QString, QByteArray> DaytonaSandboxBackend::bulkDownload(const Remote &r,
                                                               const QStringList &paths)
{
    QHash<QString, QString> relOf; // absolute path in the sandbox → workspace-relative
    QJsonArray requested;
    for (const QString &p : paths) {
        const QString abs = joinRemote(r.root, p);
        relOf.insert(abs, p);
        requested.append(abs);
    }
    const HttpResponse resp =
        m_api.toolbox(r.toolbox, "POST", QStringLiteral("/files/bulk-download"), {},
                      QJsonDocument(QJsonObject{{QStringLiteral("paths"), requested}})
                          .toJson(QJsonDocument::Compact),
                      "application/json");
    QHash<QString, QByteArray> out;
    if (!resp.ok())
        return out; // an older daemon or a failure: the caller fetches one by one
    const auto parts =
        remote::parseMultipart(resp.body, remote::multipartBoundary(resp.header("Content-Type")));
    if (!parts) {
        qCWarning(lcDaytona) << "bulk download answer truncated or malformed; fetching files "
                                "one by one";
        return out;
    }
    for (const remote::MultipartPart &part : *parts) {
        const QString rel = relOf.value(QString::fromUtf8(part.fileName));
        if (part.name == "file" && !rel.isEmpty())
            out.insert(rel, part.content);
    }
    return out;
}

QHash<QString, FindRecord> DaytonaSandboxBackend::remoteTree(const Remote &r)
{
    return remote::confinedTree(confined(r, QStringLiteral("tree"), QString()));
}

remote::RemoteFlush::Transport DaytonaSandboxBackend::flushTransport(const Remote &r)
{
    remote::RemoteFlush::Transport t;
    t.list = [this, r] { return remoteTree(r); };
    t.fetch = [this, r](const QStringList &paths, const QHash<QString, FindRecord> &,
                        const QString &, const QString &files) {
        WorkspaceFs staging(files);
        QStringList errors;
        for (qsizetype from = 0; from < paths.size(); from += kDownloadBatch) {
            const QStringList batch = paths.mid(from, kDownloadBatch);
            const QHash<QString, QByteArray> got = bulkDownload(r, batch);
            for (const QString &path : batch) {
                try {
                    // what the bulk answer lacks is fetched alone, for a typed, per-file error
                    staging.writeFile(path, got.contains(path) ? got.value(path) : readFile(path));
                } catch (const SandboxError &e) {
                    errors.append(QStringLiteral("%1: %2").arg(path, e.message()));
                }
            }
        }
        return errors;
    };
    return t;
}

SyncPlan DaytonaSandboxBackend::planSync(const QString &dest, const WorkspaceSyncPolicy &policy)
{
    return m_flush.planSync(dest, policy, flushTransport(remote()));
}

WorkspaceSyncResult
DaytonaSandboxBackend::syncArtifacts(const QString &dest, const WorkspaceSyncPolicy &policy,
                                     const std::function<void(int, int)> &progress)
{
    return m_flush.syncArtifacts(dest, policy, flushTransport(remote()), progress);
}

remote::TreeTransport DaytonaSandboxBackend::treeTransport(const Remote &r)
{
    remote::TreeTransport t;
    t.run = [this, r](const QString &op, const QStringList &args, const QString &) {
        return confined(r, op, QString(), args);
    };
    t.upload = [this, r](const QString &file) {
        QFile f(file);
        if (!f.open(QIODevice::ReadOnly))
            throw OSError(QStringLiteral("cannot read '%1' to upload").arg(file));
        uploadBatch(r, {{joinRemote(r.root, QFileInfo(file).fileName()), f.readAll()}});
    };
    return t;
}

TreeManifest DaytonaSandboxBackend::captureTree(const CaptureOptions &options)
{
    TreeManifest m = m_tree.capture(treeTransport(remote()), options);
    m.source = id();
    return m;
}

ApplyResult DaytonaSandboxBackend::applyTree(const TreeManifest &current,
                                             const TreeManifest &target,
                                             const CheckpointStore &store, TreeHashCache *cache)
{
    return m_tree.apply(treeTransport(remote()), current, target, store, cache);
}

std::unique_ptr<TreeWatch> DaytonaSandboxBackend::watchTree(int maxWatches)
{
    Q_UNUSED(maxWatches); // no watches: one listing per drain
    return remote::RemoteTree::watch(treeTransport(remote()));
}

void DaytonaSandboxBackend::identifyWorkspace(const Remote &r)
{
    // The workspace folder's device:inode names it in the base file: a base is never taken
    // for a workspace that was deleted and made again in the same sandbox.
    QByteArray identity;
    try {
        const QList<FileInfo> root =
            remote::confinedEntries(confined(r, QStringLiteral("stat"), QString()), {});
        if (!root.isEmpty())
            identity = QByteArray::number(root.first().device) + ':' +
                       QByteArray::number(root.first().inode);
    } catch (const SandboxError &e) {
        qCWarning(lcDaytona) << "cannot identify the workspace of" << r.sandboxId << e.message();
    }
    if (const QString error = m_flush.identify(id(), identity); !error.isEmpty())
        qCWarning(lcDaytona) << error; // without it a flush has no base: the safe rule applies
}

std::optional<SeedManifest> DaytonaSandboxBackend::seedManifest() const
{
    return m_flush.seedManifest(); // remote stamps, as listDir() reports them
}

// ---- template ----------------------------------------------------------------------------

DaytonaSandboxTemplate::DaytonaSandboxTemplate(DaytonaSandboxBackend::Options options)
    : m_options(std::move(options))
{
}

BackendPtr DaytonaSandboxTemplate::buildForSession(const QString &sessionId)
{
    return std::make_shared<DaytonaSandboxBackend>(sessionId, m_options);
}

BackendPtr DaytonaSandboxTemplate::buildDefault()
{
    return std::make_shared<DaytonaSandboxBackend>(QStringLiteral("default"), m_options);
}

} // namespace elsai
