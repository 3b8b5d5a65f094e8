// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "agentcorebackend.h"

#include "agentcoreinternal.h"
#include "inputchecks.h"

#include "awserror.h"
#include "confinedscript.h"
#include "errors.h"
#include "eventstream.h"
#include "findrecord.h"
#include "remotefetch.h"
#include "workspacefs.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QStringDecoder>
#include <QThread>
#include <QUuid>

#include <utility>

Q_LOGGING_CATEGORY(lcAgentCore, "elsai.agentcore")

namespace elsai::aws {

using namespace agentcore;

namespace {

QString sessionName(const QString &workspaceId)
{
    QString name = QStringLiteral("elsai-") + workspaceId;
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9]+")), QStringLiteral("-"));
    while (name.endsWith(QLatin1Char('-')))
        name.chop(1);
    return name.left(100);
}

bool isSafeText(const QByteArray &bytes)
{
    if (bytes.contains('\0'))
        return false;
    QStringDecoder decoder(QStringDecoder::Utf8);
    (void)QString(decoder(bytes));
    return !decoder.hasError();
}

[[noreturn]] void throwStreamException(const QString &type, const QString &message,
                                       const QString &what)
{
    const QString text = QStringLiteral("%1 failed: %2: %3").arg(what, type, message);
    if (type == QLatin1String("accessDeniedException"))
        throw PermissionError(text + QStringLiteral(". Check the credentials and IAM policy."));
    if (type == QLatin1String("validationException"))
        throw ValueError(text + QStringLiteral("."));
    if (type == QLatin1String("resourceNotFoundException"))
        throw OSError(text + QStringLiteral(". The interpreter session is gone (stopped or timed "
                                            "out); restart the sandbox."));
    throw OSError(text + QStringLiteral(". Retry later."));
}

} // namespace

// ---- options -------------------------------------------------------------------------------

AgentCoreOptions AgentCoreOptions::fromEnvironment()
{
    AgentCoreOptions o;
    o.region = regionFromEnvironment();
    o.credentials = Credentials::fromEnvironment();
    o.endpoint = endpointOverrideFromEnvironment(QStringLiteral("bedrock-agentcore"));
    return o;
}

QUrl AgentCoreOptions::resolvedEndpoint() const
{
    if (!endpoint.isEmpty())
        return endpoint;
    return QUrl(QStringLiteral("https://bedrock-agentcore.%1.%2").arg(region, dnsSuffix(region)));
}

void AgentCoreOptions::validate() const
{
    if (!credentials.isValid())
        throw ValueError(QStringLiteral("AgentCore needs AWS credentials: set AWS_ACCESS_KEY_ID "
                                        "and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for "
                                        "temporary credentials)."));
    if (region.isEmpty())
        throw ValueError(QStringLiteral("AgentCore needs a region: set AWS_REGION."));
    static const QRegularExpression regionRe(QStringLiteral("^[a-z0-9-]+$"));
    if (!regionRe.match(region).hasMatch())
        throw ValueError(QStringLiteral("'%1' is not an AWS region name.").arg(region));
    const QUrl url = resolvedEndpoint();
    if (!url.isValid() ||
        (url.scheme() != QLatin1String("https") && url.scheme() != QLatin1String("http")))
        throw ValueError(
            QStringLiteral("AgentCore endpoint '%1' is not an http(s) URL.").arg(url.toString()));
    if (sessionTimeoutSeconds < 1 || sessionTimeoutSeconds > 28800)
        throw ValueError(QStringLiteral("AgentCore session timeout must be 1–28800 seconds, not "
                                        "%1.")
                             .arg(sessionTimeoutSeconds));
    if (maxOutputBytes < 0)
        throw ValueError(QStringLiteral("max output bytes cannot be negative."));
    static const QRegularExpression idRe(QStringLiteral("^[A-Za-z0-9._-]+$"));
    if (!idRe.match(codeInterpreterId).hasMatch())
        throw ValueError(
            QStringLiteral("'%1' is not a code interpreter identifier.").arg(codeInterpreterId));
    checkEnvironment(env);
}

// ---- backend: session ----------------------------------------------------------------------

AgentCoreSandboxBackend::AgentCoreSandboxBackend(QString workspaceId, AgentCoreOptions options)
    : m_workspaceId(std::move(workspaceId)), m_options(std::move(options)),
      m_signer(m_options.credentials, m_options.region, QStringLiteral("bedrock-agentcore"))
{
    m_options.validate();
}

AgentCoreSandboxBackend::~AgentCoreSandboxBackend()
{
    try {
        close();
    } catch (const SandboxError &e) {
        qCWarning(lcAgentCore) << "stopping the AgentCore session failed:" << e.message();
    }
}

QString AgentCoreSandboxBackend::id() const
{
    return QStringLiteral("agentcore:%1/%2").arg(m_options.region, m_workspaceId);
}

QString AgentCoreSandboxBackend::sessionId() const
{
    QMutexLocker lock(&m_mutex);
    return m_sessionId;
}

bool AgentCoreSandboxBackend::isCreated() const
{
    return !sessionId().isEmpty();
}

QString AgentCoreSandboxBackend::requireSession() const
{
    const QString id = sessionId();
    if (id.isEmpty())
        throw OSError(QStringLiteral("the AgentCore sandbox '%1' has no session; start the "
                                     "sandbox first.")
                          .arg(m_workspaceId));
    return id;
}

remote::HttpResponse AgentCoreSandboxBackend::call(const QByteArray &method, const QString &path,
                                                   const QByteArray &query, const QJsonObject &body,
                                                   const remote::HttpHeaders &extraHeaders,
                                                   int timeoutMs, const remote::RetryPolicy &retry)
{
    QByteArray base =
        m_options.resolvedEndpoint().toEncoded(QUrl::RemoveQuery | QUrl::RemoveFragment);
    while (base.endsWith('/'))
        base.chop(1);
    QByteArray url = base + "/code-interpreters/" +
                     uriEncode(m_options.codeInterpreterId.toUtf8()) + path.toUtf8();
    if (!query.isEmpty())
        url += '?' + query;
    remote::HttpRequest request;
    request.method = method;
    request.url = QUrl::fromEncoded(url);
    request.timeoutMs = timeoutMs;
    if (method != "GET") {
        request.headers.append(
            {QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")});
        request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    }
    request.headers += extraHeaders;
    return remote::send(request, retry, [this](remote::HttpRequest &r) {
        m_signer.sign(r.method, r.url, r.headers, r.body, QDateTime::currentDateTimeUtc());
    });
}

void AgentCoreSandboxBackend::create()
{
    QMutexLocker lock(&m_mutex);
    if (!m_sessionId.isEmpty())
        return;
    // The client token makes a retried start return the same session instead of a second one.
    const QJsonObject body{
        {QStringLiteral("name"), sessionName(m_workspaceId)},
        {QStringLiteral("sessionTimeoutSeconds"), m_options.sessionTimeoutSeconds},
        {QStringLiteral("clientToken"), QUuid::createUuid().toString(QUuid::WithoutBraces)}};
    const remote::HttpResponse response = call("PUT", QStringLiteral("/sessions/start"), {}, body,
                                               {}, m_options.requestTimeoutMs, m_options.retry);
    if (!response.ok())
        throwForResponse(response, QStringLiteral("AgentCore StartCodeInterpreterSession"));
    const QString id = QJsonDocument::fromJson(response.body)
                           .object()
                           .value(QLatin1String("sessionId"))
                           .toString();
    static const QRegularExpression idRe(QStringLiteral("^[0-9a-zA-Z]{1,40}$"));
    if (!idRe.match(id).hasMatch())
        throw OSError(QStringLiteral("AgentCore StartCodeInterpreterSession answered without a "
                                     "valid sessionId; check the endpoint."));
    m_sessionId = id;
    qCDebug(lcAgentCore) << "started session" << id << "for" << m_workspaceId;
}

void AgentCoreSandboxBackend::close()
{
    QMutexLocker lock(&m_mutex);
    if (m_sessionId.isEmpty())
        return;
    const QString id = std::exchange(m_sessionId, QString());
    const QJsonObject body{
        {QStringLiteral("clientToken"), QUuid::createUuid().toString(QUuid::WithoutBraces)}};
    const remote::HttpResponse response =
        call("PUT", QStringLiteral("/sessions/stop"), "sessionId=" + uriEncode(id.toUtf8()), body,
             {}, m_options.requestTimeoutMs, m_options.retry);
    // 404: the session already ended (timed out); that is what close wanted.
    if (!response.ok() && !(response.networkError.isEmpty() && response.status == 404))
        throwForResponse(response, QStringLiteral("AgentCore StopCodeInterpreterSession"));
}

// ---- backend: tool invocation --------------------------------------------------------------

QString AgentCoreSandboxBackend::ToolResult::text() const
{
    QStringList parts;
    for (const QJsonValue &block : content) {
        const QJsonObject o = block.toObject();
        if (o.value(QLatin1String("type")).toString() == QLatin1String("text"))
            parts.append(o.value(QLatin1String("text")).toString());
    }
    return parts.join(QLatin1Char('\n'));
}

AgentCoreSandboxBackend::ToolResult AgentCoreSandboxBackend::invoke(const QString &tool,
                                                                    const QJsonObject &arguments,
                                                                    int timeoutMs,
                                                                    bool retryThrottling)
{
    const QString session = requireSession();
    const QString what = QStringLiteral("AgentCore %1").arg(tool);
    const QJsonObject body{{QStringLiteral("name"), tool},
                           {QStringLiteral("arguments"), arguments}};
    // A tool that must not run twice (executeCommand) is retried only on 429, which AWS sends
    // before running anything; the shared layer would also retry 5xx.
    remote::RetryPolicy retry = m_options.retry;
    if (!retryThrottling)
        retry.maxAttempts = 1;
    remote::HttpResponse response;
    int backoffMs = m_options.retry.initialBackoffMs;
    for (int attempt = 1;; ++attempt) {
        response =
            call("POST", QStringLiteral("/tools/invoke"), {}, body,
                 {{QByteArrayLiteral("x-amzn-code-interpreter-session-id"), session.toUtf8()}},
                 timeoutMs < 0 ? m_options.requestTimeoutMs : timeoutMs, retry);
        if (retryThrottling || response.status != 429 || attempt >= m_options.retry.maxAttempts)
            break;
        const int asked = remote::retryAfterMs(response.header("Retry-After"));
        QThread::msleep(qMin(asked >= 0 ? asked : backoffMs, m_options.retry.maxBackoffMs));
        backoffMs = int(backoffMs * m_options.retry.multiplier);
    }
    if (!response.ok()) {
        if (response.networkError.isEmpty() && response.status == 404) {
            // The service's own words first (a wrong interpreter id, a missing session, …).
            const AwsErrorInfo info = parseAwsError(response);
            QString said = info.code;
            if (!info.message.isEmpty())
                said += (said.isEmpty() ? QString() : QStringLiteral(": ")) + info.message;
            if (said.isEmpty())
                said = QStringLiteral("HTTP 404");
            if (!info.requestId.isEmpty())
                said += QStringLiteral(" (request id %1)").arg(info.requestId);
            throw OSError(QStringLiteral("%1 failed: %2. If the interpreter session %3 ended "
                                         "(stopped, or idle for more than %4 s), restart the "
                                         "sandbox.")
                              .arg(what, said, session)
                              .arg(m_options.sessionTimeoutSeconds));
        }
        throwForResponse(response, what);
    }

    QJsonObject result;
    bool haveResult = false;
    const QByteArray contentType = response.header("Content-Type");
    if (contentType.contains("json")) {
        // Not the documented stream; accept a plain JSON result rather than fail.
        const QJsonObject json = QJsonDocument::fromJson(response.body).object();
        result = json.contains(QLatin1String("result"))
                     ? json.value(QLatin1String("result")).toObject()
                     : json;
        haveResult = true;
    } else {
        for (const EventStreamMessage &m : decodeEventStream(response.body)) {
            const QString type = m.stringHeader(":message-type");
            if (type == QLatin1String("event")) {
                if (m.stringHeader(":event-type") != QLatin1String("result"))
                    continue;
                QJsonParseError error;
                const QJsonDocument doc = QJsonDocument::fromJson(m.payload, &error);
                if (!doc.isObject())
                    throw OSError(QStringLiteral("%1 returned a result that is not JSON (%2).")
                                      .arg(what, error.errorString()));
                result = doc.object();
                haveResult = true;
            } else if (type == QLatin1String("exception")) {
                throwStreamException(m.stringHeader(":exception-type"),
                                     QJsonDocument::fromJson(m.payload)
                                         .object()
                                         .value(QLatin1String("message"))
                                         .toString(),
                                     what);
            } else if (type == QLatin1String("error")) {
                throw OSError(QStringLiteral("%1 failed: %2: %3")
                                  .arg(what, m.stringHeader(":error-code"),
                                       m.stringHeader(":error-message")));
            }
        }
    }
    if (!haveResult)
        throw OSError(QStringLiteral("%1 returned no result event; retry the call.").arg(what));
    ToolResult out;
    out.content = result.value(QLatin1String("content")).toArray();
    out.structured = result.value(QLatin1String("structuredContent")).toObject();
    out.isError = result.value(QLatin1String("isError")).toBool();
    return out;
}

AgentCoreSandboxBackend::ScriptOutcome AgentCoreSandboxBackend::runScript(const QString &script,
                                                                          int timeoutMs)
{
    const ToolResult r =
        invoke(QStringLiteral("executeCommand"), {{QStringLiteral("command"), script}}, timeoutMs);
    ScriptOutcome out;
    const QJsonValue stdoutValue = r.structured.value(QLatin1String("stdout"));
    out.out = stdoutValue.isString() ? stdoutValue.toString().toUtf8() : r.text().toUtf8();
    out.err = r.structured.value(QLatin1String("stderr")).toString().toUtf8();
    const QJsonValue code = r.structured.value(QLatin1String("exitCode"));
    // The SDKs' rule: isError without an exit code counts as exit 1.
    out.exitCode = code.isDouble() ? code.toInt() : (r.isError ? 1 : 0);
    return out;
}

QStringList AgentCoreSandboxBackend::escapingPaths(const QStringList &paths)
{
    QStringList out;
    if (!m_options.confineSymlinks)
        return out;
    for (qsizetype i = 0; i < paths.size(); i += 200) {
        // realpath -m resolves every symlink, also below names that do not exist yet (a
        // dangling link would make a write land outside); anything unresolvable is refused.
        QString script = QStringLiteral("ws=$(pwd -P) || exit 2\nfor p in");
        for (const QString &p : paths.mid(i, 200))
            script += QLatin1Char(' ') + shellQuote(p);
        script += QStringLiteral("; do\n"
                                 "  r=$(realpath -m -- \"$p\" 2>/dev/null)\n"
                                 "  case \"$r\" in \"$ws\"|\"$ws\"/*) ;; "
                                 "*) printf '%s\\0' \"$p\" ;; esac\n"
                                 "done\n");
        const ScriptOutcome o = runScript(script, m_options.requestTimeoutMs);
        if (o.exitCode != 0)
            throw OSError(QStringLiteral("cannot check paths in the AgentCore workspace: %1")
                              .arg(QString::fromUtf8(o.err).trimmed()));
        for (const QByteArray &p : o.out.split('\0')) {
            if (!p.isEmpty())
                out.append(QString::fromUtf8(p));
        }
    }
    return out;
}

void AgentCoreSandboxBackend::guardPaths(const QStringList &paths)
{
    const QStringList escaping = escapingPaths(paths);
    if (!escaping.isEmpty())
        throw PermissionError(escapeMessage(escaping.first()));
}

// ---- backend: files ------------------------------------------------------------------------

QHash<QString, QByteArray> AgentCoreSandboxBackend::readBatch(const QStringList &paths,
                                                              QStringList *errors, ToolResult *raw)
{
    QHash<QString, QByteArray> out;
    if (paths.isEmpty())
        return out;
    const ToolResult r = invoke(QStringLiteral("readFiles"),
                                {{QStringLiteral("paths"), QJsonArray::fromStringList(paths)}});
    if (raw)
        *raw = r;
    for (const QJsonValue &block : r.content) {
        const QJsonObject o = block.toObject();
        if (o.value(QLatin1String("type")).toString() != QLatin1String("resource"))
            continue;
        const QJsonObject res = o.value(QLatin1String("resource")).toObject();
        QString uri = res.value(QLatin1String("uri")).toString();
        if (uri.startsWith(QLatin1String("file://")))
            uri = uri.mid(7);
        // The service may answer with absolute paths; match on the requested relative one.
        QString path;
        for (const QString &p : paths) {
            if (uri == p || uri.endsWith(QLatin1Char('/') + p)) {
                path = p;
                break;
            }
        }
        if (path.isEmpty() && paths.size() == 1)
            path = paths.first();
        if (path.isEmpty())
            continue;
        out.insert(path, res.contains(QLatin1String("blob"))
                             ? QByteArray::fromBase64(
                                   res.value(QLatin1String("blob")).toString().toLatin1())
                             : res.value(QLatin1String("text")).toString().toUtf8());
    }
    if (errors) {
        for (const QString &p : paths) {
            if (!out.contains(p))
                errors->append(
                    QStringLiteral("cannot read '%1' from the AgentCore workspace%2")
                        .arg(p, r.isError ? QStringLiteral(": ") + r.text() : QString()));
        }
    }
    return out;
}

QList<FileTransferResult>
AgentCoreSandboxBackend::writeBatch(const QList<QPair<QString, QByteArray>> &files)
{
    QJsonArray content;
    for (const auto &[path, data] : files) {
        QJsonObject entry{{QStringLiteral("path"), path}};
        if (isSafeText(data))
            entry.insert(QStringLiteral("text"), QString::fromUtf8(data));
        else
            entry.insert(QStringLiteral("blob"), QString::fromLatin1(data.toBase64()));
        content.append(entry);
    }
    const ToolResult r =
        invoke(QStringLiteral("writeFiles"), {{QStringLiteral("content"), content}});
    QList<FileTransferResult> out;
    for (const auto &[path, data] : files) {
        FileTransferResult result;
        result.path = path;
        if (r.isError)
            result.error = QStringLiteral("cannot write '%1' to the AgentCore workspace: %2")
                               .arg(path, r.text());
        out.append(result);
    }
    return out;
}

QByteArray AgentCoreSandboxBackend::confined(const QString &op, const QString &rel,
                                             const QStringList &args)
{
    // The check and the use in one executeCommand (backends/remote/confinedscript.h): the
    // file tools open paths by name and follow symlinks, so a separate check could be raced.
    const ScriptOutcome o =
        runScript(remote::confinedScript(remote::Channel::Text, QStringLiteral("."), op, rel, args),
                  m_options.requestTimeoutMs);
    return remote::confinedPayload(remote::Channel::Text, o.exitCode, o.out, o.err,
                                   QStringLiteral("AgentCore"));
}

void AgentCoreSandboxBackend::writeConfined(const QString &rel, const QByteArray &content)
{
    if (rel.isEmpty())
        throw IsADirectoryError(QStringLiteral("cannot write '.': it is a folder"));
    // Never in place (writeFiles truncates the existing file, writing through a hard link): a
    // temp file beside the entry, renamed over it by the script that checked the path.
    const qsizetype slash = rel.lastIndexOf(QLatin1Char('/'));
    const QString tempName = remote::confinedTempName(rel.mid(slash + 1));
    if (content.size() <= INLINE_WRITE_BYTES) {
        confined(QStringLiteral("write"), rel, {tempName, QString::fromLatin1(content.toBase64())});
        return;
    }
    confined(QStringLiteral("prepare"), rel);
    const QString temp = rel.left(slash + 1) + tempName;
    try {
        const QList<FileTransferResult> written = writeBatch({{temp, content}});
        if (!written.first().success())
            throw OSError(*written.first().error);
        confined(QStringLiteral("commit"), rel, {tempName});
    } catch (const SandboxError &) {
        try {
            confined(QStringLiteral("discard"), rel, {tempName});
        } catch (const SandboxError &e) {
            qCWarning(lcAgentCore) << "cannot remove the temp file of" << rel << e.message();
        }
        throw;
    }
}

// ---- checkpoints ------------------------------------------------------------------------------

remote::TreeTransport AgentCoreSandboxBackend::treeTransport()
{
    remote::TreeTransport t;
    t.run = [this](const QString &op, const QStringList &args, const QString &) {
        return confined(op, QString(), args);
    };
    t.upload = [this](const QString &file) {
        QFile f(file);
        if (!f.open(QIODevice::ReadOnly))
            throw OSError(QStringLiteral("cannot read '%1' to upload").arg(file));
        const QList<FileTransferResult> written =
            writeBatch({{QFileInfo(file).fileName(), f.readAll()}});
        if (!written.first().success())
            throw OSError(*written.first().error);
    };
    return t;
}

TreeManifest AgentCoreSandboxBackend::captureTree(const CaptureOptions &options)
{
    TreeManifest m = m_tree.capture(treeTransport(), options);
    m.source = id();
    return m;
}

ApplyResult AgentCoreSandboxBackend::applyTree(const TreeManifest &current,
                                               const TreeManifest &target,
                                               const CheckpointStore &store, TreeHashCache *cache)
{
    return m_tree.apply(treeTransport(), current, target, store, cache);
}

std::unique_ptr<TreeWatch> AgentCoreSandboxBackend::watchTree(int maxWatches)
{
    Q_UNUSED(maxWatches); // no watches: one listing per drain
    return remote::RemoteTree::watch(treeTransport());
}

QByteArray AgentCoreSandboxBackend::readFile(const QString &path)
{
    const QString p = WorkspaceFs::normalize(path);
    if (p.isEmpty())
        throw IsADirectoryError(QStringLiteral("cannot read '.': it is a folder"));
    return confined(QStringLiteral("read"), p);
}

FileRange AgentCoreSandboxBackend::readFileRange(const QString &path, qint64 offset,
                                                 qint64 maxBytes)
{
    const QString p = WorkspaceFs::normalize(path);
    if (p.isEmpty())
        throw IsADirectoryError(QStringLiteral("cannot read '.': it is a folder"));
    // One confined command moves just the range (readFiles has none).
    const QStringList args = remote::confinedRangeArgs(offset, maxBytes);
    return remote::confinedRange(confined(QStringLiteral("range"), p, args), maxBytes,
                                 QStringLiteral("AgentCore"));
}

void AgentCoreSandboxBackend::writeFile(const QString &path, const QByteArray &content)
{
    writeConfined(WorkspaceFs::normalize(path), content);
}

QList<FileInfo> AgentCoreSandboxBackend::listDir(const QString &path)
{
    const QString p = WorkspaceFs::normalize(path);
    QList<FileInfo> out = remote::confinedEntries(confined(QStringLiteral("list"), p), p);
    std::sort(out.begin(), out.end(),
              [](const FileInfo &a, const FileInfo &b) { return a.path < b.path; });
    return out;
}

std::optional<QHash<QString, QByteArray>>
AgentCoreSandboxBackend::fetchFiles(const FileFetch &fetch)
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

CappedListing AgentCoreSandboxBackend::listDirFirst(const QString &path, qsizetype maxEntries,
                                                    qsizetype statLimit)
{
    Q_UNUSED(statLimit); // find reports the lstat data of every entry it sends anyway
    const QString p = WorkspaceFs::normalize(path);
    const qsizetype cap = qMax<qsizetype>(0, maxEntries);
    CappedListing listing;
    if (!parseCappedListing(confined(QStringLiteral("list"), p, {QString::number(cap)}), p, cap,
                            &listing.listing, &listing.totalEntries))
        throw OSError(
            QStringLiteral("AgentCore answered the listing of '%1' without its count").arg(path),
            EIO);
    return listing;
}

void AgentCoreSandboxBackend::walkTree(const QString &path, bool withStat,
                                       const std::function<WalkStep(const WalkEntry &)> &visit)
{
    Q_UNUSED(withStat); // find reports sizes and times of every entry anyway
    // One InvokeCodeInterpreter for the whole walk, not one listing per folder: `tree`
    // refuses a path that is not a folder (ENOTDIR) or leaves the workspace.
    const QString root = WorkspaceFs::normalize(path);
    remote::walkConfinedTree(confined(QStringLiteral("tree"), root), root, visit);
}

FileInfo AgentCoreSandboxBackend::stat(const QString &path)
{
    const QString p = WorkspaceFs::normalize(path);
    if (p.isEmpty()) {
        FileInfo root;
        root.isDir = true;
        root.type = FileInfo::Type::Directory;
        return root;
    }
    const QList<FileInfo> found = remote::confinedEntries(confined(QStringLiteral("stat"), p), {});
    if (found.isEmpty())
        throw OSError(QStringLiteral("AgentCore answered the stat of '%1' without an entry; "
                                     "retry")
                          .arg(p));
    FileInfo info = found.first();
    info.path = p;
    return info;
}

void AgentCoreSandboxBackend::removeFile(const QString &path, bool recursive)
{
    const QString p = WorkspaceFs::normalize(path);
    if (p.isEmpty())
        throw PermissionError(QStringLiteral("cannot remove the workspace root"));
    confined(QStringLiteral("remove"), p, {recursive ? QStringLiteral("1") : QStringLiteral("0")});
}

void AgentCoreSandboxBackend::makeDirs(const QString &path)
{
    const QString p = WorkspaceFs::normalize(path);
    if (!p.isEmpty())
        confined(QStringLiteral("mkdirs"), p);
}

QList<FileTransferResult>
AgentCoreSandboxBackend::uploadFiles(const QList<QPair<QString, QByteArray>> &files)
{
    // One confined write each (the race-free path); seeding keeps the batched writeFiles.
    QList<FileTransferResult> out;
    for (const auto &[path, content] : files) {
        FileTransferResult result;
        result.path = path;
        try {
            writeConfined(WorkspaceFs::normalize(path), content);
        } catch (const SandboxError &e) {
            result.error = e.message();
        }
        out.append(result);
    }
    return out;
}

QList<FileTransferResult> AgentCoreSandboxBackend::downloadFiles(const QStringList &paths)
{
    QList<FileTransferResult> out;
    for (const QString &path : paths) {
        FileTransferResult r;
        r.path = path;
        try {
            r.content = readFile(path);
        } catch (const SandboxError &e) {
            r.error = e.message();
        }
        out.append(r);
    }
    return out;
}

// ---- template ------------------------------------------------------------------------------

AgentCoreSandboxTemplate::AgentCoreSandboxTemplate(AgentCoreOptions options)
    : m_options(std::move(options))
{
}

BackendPtr AgentCoreSandboxTemplate::buildForSession(const QString &sessionId)
{
    QMutexLocker lock(&m_mutex);
    if (auto existing = m_backends.value(sessionId).lock())
        return existing;
    auto backend = std::make_shared<AgentCoreSandboxBackend>(sessionId, m_options);
    m_backends.insert(sessionId, backend);
    return backend;
}

BackendPtr AgentCoreSandboxTemplate::buildDefault()
{
    return buildForSession(QStringLiteral("default"));
}

} // namespace elsai::aws
