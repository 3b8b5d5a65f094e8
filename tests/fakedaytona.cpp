// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "fakedaytona.h"

#include "multipart.h"
#include "testutil.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSet>

#include <atomic>

namespace elsai::test {

using Request = FakeHttpServer::Request;
using Response = FakeHttpServer::Response;

namespace {

Response error(int status, const QString &message, const QByteArray &code, const QString &path)
{
    const QJsonObject o{
        {QStringLiteral("statusCode"), status},
        {QStringLiteral("message"), message},
        {QStringLiteral("code"), QString::fromLatin1(code)},
        {QStringLiteral("timestamp"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
        {QStringLiteral("path"), path}};
    return Response::json(status, QJsonDocument(o).toJson(QJsonDocument::Compact));
}

Response json(int status, const QJsonValue &value)
{
    const QJsonDocument doc =
        value.isArray() ? QJsonDocument(value.toArray()) : QJsonDocument(value.toObject());
    return Response::json(status, doc.toJson(QJsonDocument::Compact));
}

Response empty(int status)
{
    Response r;
    r.status = status;
    return r;
}

QJsonObject fileInfoJson(const QFileInfo &fi)
{
    QString mode = fi.isSymLink() ? QStringLiteral("Lrwxrwxrwx")
                   : fi.isDir()   ? QStringLiteral("drwxr-xr-x")
                   : fi.isFile()  ? QStringLiteral("-rw-r--r--")
                                  : QStringLiteral("prw-r--r--");
    return {{QStringLiteral("name"), fi.fileName()},
            {QStringLiteral("size"), fi.isSymLink() ? 0 : fi.size()},
            {QStringLiteral("mode"), mode},
            {QStringLiteral("modifiedAt"), fi.lastModified().toUTC().toString(Qt::ISODateWithMs)},
            {QStringLiteral("isDir"), fi.isDir() && !fi.isSymLink()},
            {QStringLiteral("owner"), QStringLiteral("daytona")},
            {QStringLiteral("group"), QStringLiteral("daytona")},
            {QStringLiteral("permissions"), QStringLiteral("0644")}};
}

} // namespace

FakeDaytona::FakeDaytona(QString apiKey) : m_apiKey(std::move(apiKey))
{
    isolateFlushBases(); // the backends on this fake keep their flush bases on this host
    m_http = std::make_unique<FakeHttpServer>([this](const Request &r) { return handle(r); });
}

FakeDaytona::~FakeDaytona()
{
    // Processes belong to the server thread: end them there, then stop serving.
    m_http->runInServerThread([this] {
        QMutexLocker lock(&m_mutex);
        m_sessions.clear();
    });
    m_http.reset();
}

void FakeDaytona::Command::drain()
{
    out += process->readAllStandardOutput();
    err += process->readAllStandardError();
}

QUrl FakeDaytona::apiUrl() const
{
    return m_http->url(QStringLiteral("/api"));
}

DaytonaSandboxBackend::Options FakeDaytona::options() const
{
    DaytonaSandboxBackend::Options o;
    o.config = daytona::DaytonaConfig();
    o.config.apiKey = m_apiKey;
    o.config.apiUrl = apiUrl();
    o.config.requestTimeoutMs = 30000;
    o.config.retry.initialBackoffMs = 1;
    o.config.retry.maxBackoffMs = 20;
    o.startTimeoutMs = 20000;
    return o;
}

void FakeDaytona::setPollsUntilStarted(int polls)
{
    QMutexLocker lock(&m_mutex);
    m_pollsUntilStarted = polls;
}

void FakeDaytona::setStartFailure(const QString &reason)
{
    QMutexLocker lock(&m_mutex);
    m_startFailure = reason;
}

QList<FakeDaytona::SandboxState> FakeDaytona::sandboxes() const
{
    QMutexLocker lock(&m_mutex);
    QList<SandboxState> out;
    for (const auto &[id, s] : m_sandboxes)
        out.append(s->info);
    return out;
}

std::optional<FakeDaytona::SandboxState> FakeDaytona::sandbox(const QString &id) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_sandboxes.find(id);
    if (it == m_sandboxes.end())
        return std::nullopt;
    return it->second->info;
}

int FakeDaytona::openSessions() const
{
    QMutexLocker lock(&m_mutex);
    return int(m_sessions.size());
}

std::function<std::shared_ptr<SandboxBackend>()> FakeDaytona::backendFactory()
{
    auto fake = std::make_shared<FakeDaytona>();
    auto counter = std::make_shared<std::atomic_int>(0);
    return [fake, counter]() -> std::shared_ptr<SandboxBackend> {
        // The backend is declared last so it goes first: it may still close its sandbox.
        struct Holder
        {
            std::shared_ptr<FakeDaytona> fake;
            std::shared_ptr<DaytonaSandboxBackend> backend;
        };
        const QString id = QStringLiteral("conformance-%1").arg(++*counter);
        auto holder = std::make_shared<Holder>(
            Holder{fake, std::make_shared<DaytonaSandboxBackend>(id, fake->options())});
        return std::shared_ptr<SandboxBackend>(holder, holder->backend.get());
    };
}

QJsonObject FakeDaytona::sandboxJson(const Sandbox &s) const
{
    const QJsonObject body = s.info.createBody;
    return {
        {QStringLiteral("id"), s.info.id},
        {QStringLiteral("organizationId"), QStringLiteral("org-test")},
        {QStringLiteral("name"), body.value(QStringLiteral("name")).toString(s.info.id)},
        {QStringLiteral("user"), QStringLiteral("daytona")},
        {QStringLiteral("env"), body.value(QStringLiteral("env")).toObject()},
        {QStringLiteral("labels"), body.value(QStringLiteral("labels")).toObject()},
        {QStringLiteral("public"), false},
        {QStringLiteral("networkBlockAll"), false},
        {QStringLiteral("target"),
         body.value(QStringLiteral("target")).toString(QStringLiteral("us"))},
        {QStringLiteral("cpu"), 1},
        {QStringLiteral("gpu"), 0},
        {QStringLiteral("memory"), 1},
        {QStringLiteral("disk"), 3},
        {QStringLiteral("state"), s.info.state},
        {QStringLiteral("errorReason"), s.failure},
        {QStringLiteral("toolboxProxyUrl"), m_http->url(QStringLiteral("/toolbox")).toString()}};
}

void FakeDaytona::setInterceptor(Interceptor interceptor)
{
    QMutexLocker lock(&m_mutex);
    m_interceptor = std::move(interceptor);
}

Response FakeDaytona::handle(const Request &request)
{
    {
        QMutexLocker lock(&m_mutex);
        if (m_interceptor) {
            if (auto answer = m_interceptor(request))
                return *answer;
        }
    }
    if (request.header("Authorization") != "Bearer " + m_apiKey.toUtf8())
        return Response::json(401, R"({"message":"Unauthorized","statusCode":401})");
    const QString path = request.path();
    QStringList parts = path.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    QMutexLocker lock(&m_mutex);
    if (parts.value(0) == QLatin1String("api"))
        return control(request, parts.mid(1));
    if (parts.value(0) == QLatin1String("toolbox") && parts.size() >= 2) {
        const auto it = m_sandboxes.find(parts[1]);
        if (it == m_sandboxes.end() || it->second->info.state != QLatin1String("started"))
            return Response::json(404, R"({"message":"sandbox not found or not started"})");
        const QString rest = QLatin1Char('/') + parts.mid(2).join(QLatin1Char('/'));
        return toolbox(request, *it->second, rest);
    }
    return error(404, QStringLiteral("no route"), "NOT_FOUND", path);
}

Response FakeDaytona::control(const Request &request, const QStringList &parts)
{
    const QString path = request.path();
    if (parts.value(0) != QLatin1String("sandbox"))
        return error(404, QStringLiteral("no route"), "NOT_FOUND", path);
    if (parts.size() == 1 && request.method == "POST") {
        auto s = std::make_unique<Sandbox>();
        s->info.id = QStringLiteral("sbx-%1").arg(m_nextId++);
        s->info.createBody = QJsonDocument::fromJson(request.body).object();
        s->dir = std::make_unique<QTemporaryDir>();
        s->info.root = s->dir->path();
        s->pollsLeft = m_pollsUntilStarted;
        s->failure = m_startFailure;
        s->info.state = s->pollsLeft > 0 ? QStringLiteral("creating") : QStringLiteral("started");
        const QJsonObject out = sandboxJson(*s);
        m_sandboxes[s->info.id] = std::move(s);
        return json(200, out);
    }
    const auto it = m_sandboxes.find(parts.value(1));
    if (it == m_sandboxes.end())
        return Response::json(
            404, R"({"statusCode":404,"error":"Not Found","message":"Sandbox not found"})");
    Sandbox &s = *it->second;
    const QString action = parts.value(2);
    if (request.method == "GET" && action.isEmpty()) {
        if (s.info.state == QLatin1String("creating") && --s.pollsLeft <= 0)
            s.info.state =
                s.failure.isEmpty() ? QStringLiteral("started") : QStringLiteral("error");
        return json(200, sandboxJson(s));
    }
    if (request.method == "POST" && action == QLatin1String("start")) {
        s.info.state = QStringLiteral("started");
        return json(200, sandboxJson(s));
    }
    if (request.method == "POST" && action == QLatin1String("stop")) {
        s.info.state = QStringLiteral("stopped");
        return json(200, sandboxJson(s));
    }
    if (request.method == "DELETE" && action.isEmpty()) {
        s.info.state = QStringLiteral("destroyed");
        return json(200, sandboxJson(s));
    }
    if (request.method == "GET" && action == QLatin1String("toolbox-proxy-url"))
        return json(200, QJsonObject{{QStringLiteral("url"),
                                      m_http->url(QStringLiteral("/toolbox")).toString()}});
    return error(404, QStringLiteral("no route"), "NOT_FOUND", path);
}

Response FakeDaytona::toolbox(const Request &request, Sandbox &sandbox, const QString &path)
{
    const QString root = sandbox.info.root;
    // The sandbox's file system is its temp folder: absolute paths must stay beneath it.
    const auto confined = [&](const QString &p, QString *out) {
        const QString clean = QDir::cleanPath(p);
        if (clean != root && !clean.startsWith(root + QLatin1Char('/')))
            return false;
        *out = clean;
        return true;
    };
    const QByteArray &method = request.method;
    QString target;
    const QString pathArg = request.queryItem(QStringLiteral("path"));
    const bool needsPath = path.startsWith(QLatin1String("/files")) &&
                           path != QLatin1String("/files/bulk-upload") &&
                           path != QLatin1String("/files/bulk-download");
    if (needsPath && !confined(pathArg, &target))
        return error(403, QStringLiteral("access denied: %1").arg(pathArg), "FORBIDDEN", path);

    if (path == QLatin1String("/work-dir") && method == "GET")
        return json(200, QJsonObject{{QStringLiteral("dir"), root}});

    if (path == QLatin1String("/files") && method == "GET") {
        const QFileInfo fi(target);
        if (!fi.exists())
            return error(404, QStringLiteral("no such folder"), "NOT_FOUND", path);
        if (!fi.isDir())
            return error(400, QStringLiteral("path is not a folder"), "BAD_REQUEST", path);
        QJsonArray out;
        const auto entries = QDir(target).entryInfoList(
            QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
        for (const QFileInfo &e : entries)
            out.append(fileInfoJson(e));
        return json(200, out);
    }
    if (path == QLatin1String("/files/info") && method == "GET") {
        const QFileInfo fi(target);
        if (!fi.exists() && !fi.isSymLink())
            return error(404, QStringLiteral("file not found"), "FILE_NOT_FOUND", path);
        return json(200, fileInfoJson(fi));
    }
    if (path == QLatin1String("/files/download") && method == "GET") {
        const QFileInfo fi(target);
        if (!fi.exists())
            return error(404, QStringLiteral("file not found"), "FILE_NOT_FOUND", path);
        if (fi.isDir())
            return error(400, QStringLiteral("path must be a file"), "BAD_REQUEST", path);
        QFile f(target);
        if (!f.open(QIODevice::ReadOnly))
            return error(403, f.errorString(), "FILE_ACCESS_DENIED", path);
        Response r;
        r.headers.emplaceBack("Content-Type", "application/octet-stream");
        r.body = f.readAll();
        return r;
    }
    if (path == QLatin1String("/files/bulk-download") && method == "POST") {
        // Fixed boundary, one part per file, `error` parts for failures (§1.6).
        const QByteArray boundary = "DAYTONA-FILE-BOUNDARY";
        QByteArray body;
        const QJsonArray paths =
            QJsonDocument::fromJson(request.body).object().value(QStringLiteral("paths")).toArray();
        for (const QJsonValue &v : paths) {
            QString file;
            QFile f;
            if (confined(v.toString(), &file) && QFileInfo(file).isFile()) {
                f.setFileName(file);
                if (f.open(QIODevice::ReadOnly)) {
                    const QByteArray content = f.readAll();
                    body += "--" + boundary +
                            "\r\nContent-Disposition: form-data; name=\"file\"; "
                            "filename=\"" +
                            v.toString().toUtf8() +
                            "\"\r\nContent-Type: "
                            "application/octet-stream\r\nContent-Length: " +
                            QByteArray::number(content.size()) + "\r\n\r\n" + content + "\r\n";
                    continue;
                }
            }
            body += "--" + boundary +
                    "\r\nContent-Disposition: form-data; name=\"error\"\r\n"
                    "Content-Type: application/json\r\n\r\n"
                    "{\"statusCode\":404,\"message\":\"file not "
                    "found\",\"code\":\"FILE_NOT_FOUND\"}\r\n";
        }
        body += "--" + boundary + "--\r\n";
        Response r;
        r.headers.emplaceBack("Content-Type", "multipart/form-data; boundary=" + boundary);
        r.body = body;
        return r;
    }
    if (path == QLatin1String("/files/folder") && method == "POST") {
        if (request.queryItem(QStringLiteral("mode")).isEmpty())
            return error(400, QStringLiteral("mode is required"), "BAD_REQUEST", path);
        if (QFileInfo(target).isFile() || !QDir().mkpath(target))
            return error(400, QStringLiteral("cannot create folder"), "BAD_REQUEST", path);
        return empty(201);
    }
    if (path == QLatin1String("/files") && method == "DELETE") {
        const QFileInfo fi(target);
        if (!fi.exists() && !fi.isSymLink())
            return error(404, QStringLiteral("file not found"), "FILE_NOT_FOUND", path);
        if (fi.isDir() && !fi.isSymLink()) {
            if (request.queryItem(QStringLiteral("recursive")) != QLatin1String("true"))
                return error(400, QStringLiteral("cannot delete directory without recursive flag"),
                             "BAD_REQUEST", path);
            QDir(target).removeRecursively();
        } else {
            QFile::remove(target);
        }
        return empty(204);
    }
    if (path == QLatin1String("/files/bulk-upload") && method == "POST") {
        const auto parts = remote::parseMultipart(
            request.body, remote::multipartBoundary(request.header("Content-Type")));
        if (!parts)
            return error(400, QStringLiteral("malformed multipart body"), "BAD_REQUEST", path);
        QHash<QByteArray, QString> destinations;
        QJsonArray files;
        QJsonArray errors;
        for (const remote::MultipartPart &p : *parts) {
            if (p.name.endsWith(".path")) {
                destinations.insert(p.name.chopped(5), QString::fromUtf8(p.content));
                continue;
            }
            if (!p.name.endsWith(".file"))
                continue;
            const QByteArray key = p.name.chopped(5);
            if (!destinations.contains(key)) {
                errors.append(QString::fromLatin1(key) +
                              QStringLiteral(": missing .path metadata"));
                continue;
            }
            QString dest;
            if (!confined(destinations.value(key), &dest)) {
                errors.append(QStringLiteral("access denied: ") + destinations.value(key));
                continue;
            }
            QDir().mkpath(QFileInfo(dest).absolutePath());
            QFile f(dest);
            if (QFileInfo(dest).isDir() || !f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
                errors.append(QStringLiteral("%1: cannot write (is a directory?)").arg(dest));
                continue;
            }
            f.write(p.content);
            files.append(QJsonObject{{QStringLiteral("path"), dest},
                                     {QStringLiteral("bytes"), p.content.size()}});
        }
        if (!errors.isEmpty())
            return json(400, QJsonObject{{QStringLiteral("errors"), errors},
                                         {QStringLiteral("files"), files}});
        return json(200, QJsonObject{{QStringLiteral("files"), files}});
    }
    if (path == QLatin1String("/process/session") && method == "POST") {
        const QString id = QJsonDocument::fromJson(request.body)
                               .object()
                               .value(QStringLiteral("sessionId"))
                               .toString();
        if (id.isEmpty() || m_sessions.contains(id))
            return error(409, QStringLiteral("session exists"), "CONFLICT", path);
        m_sessions.insert(id, {});
        return empty(201);
    }
    if (path == QLatin1String("/process/execute") && method == "POST") {
        // Combined output; a timeout kills the shell and answers 408 without output (§1.4).
        const QJsonObject body = QJsonDocument::fromJson(request.body).object();
        QProcess proc;
        proc.setProcessChannelMode(QProcess::MergedChannels);
        proc.setWorkingDirectory(root);
        proc.start(QStringLiteral("/bin/sh"),
                   {QStringLiteral("-c"), body.value(QStringLiteral("command")).toString()});
        const int timeout = body.value(QStringLiteral("timeout")).toInt();
        if (!proc.waitForFinished(timeout > 0 ? timeout * 1000 : -1)) {
            proc.kill();
            proc.waitForFinished();
            return error(408, QStringLiteral("request timeout: command execution timeout"),
                         "REQUEST_TIMEOUT", path);
        }
        return json(200, QJsonObject{{QStringLiteral("exitCode"), proc.exitCode()},
                                     {QStringLiteral("result"),
                                      QString::fromUtf8(proc.readAllStandardOutput())}});
    }
    if (path.startsWith(QLatin1String("/process/session/"))) {
        const QStringList p = path.split(QLatin1Char('/'), Qt::SkipEmptyParts);
        const QString sid = p.value(2);
        if (!m_sessions.contains(sid))
            return error(404, QStringLiteral("session not found"), "NOT_FOUND", path);
        auto &commands = m_sessions[sid];
        if (method == "DELETE" && p.size() == 3) {
            m_sessions.remove(sid); // kills the wrapper shells still running, as the daemon does
            return empty(204);
        }
        if (method == "POST" && p.size() == 4 && p.value(3) == QLatin1String("exec")) {
            const QJsonObject body = QJsonDocument::fromJson(request.body).object();
            auto cmd = std::make_shared<Command>();
            cmd->command = body.value(QStringLiteral("command")).toString();
            cmd->process = std::make_unique<QProcess>();
            cmd->process->setWorkingDirectory(root);
            cmd->process->start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), cmd->command});
            const QString cmdId = QStringLiteral("cmd-%1").arg(m_nextCommand++);
            commands.insert(cmdId, cmd);
            if (body.value(QStringLiteral("runAsync")).toBool())
                return json(202, QJsonObject{{QStringLiteral("cmdId"), cmdId}});
            cmd->process->waitForFinished(-1);
            cmd->drain();
            return json(200, QJsonObject{{QStringLiteral("cmdId"), cmdId},
                                         {QStringLiteral("exitCode"), cmd->process->exitCode()},
                                         {QStringLiteral("stdout"), QString::fromUtf8(cmd->out)},
                                         {QStringLiteral("stderr"), QString::fromUtf8(cmd->err)},
                                         {QStringLiteral("output"),
                                          QString::fromUtf8(cmd->out + cmd->err)}});
        }
        if (method == "GET" && p.value(3) == QLatin1String("command") && p.size() >= 5) {
            const auto cmd = commands.value(p.value(4));
            if (!cmd)
                return error(404, QStringLiteral("command not found"), "NOT_FOUND", path);
            cmd->drain();
            if (p.size() == 6 && p.value(5) == QLatin1String("logs"))
                return json(200,
                            QJsonObject{{QStringLiteral("stdout"), QString::fromUtf8(cmd->out)},
                                        {QStringLiteral("stderr"), QString::fromUtf8(cmd->err)},
                                        {QStringLiteral("output"),
                                         QString::fromUtf8(cmd->out + cmd->err)}});
            QJsonObject o{{QStringLiteral("id"), p.value(4)},
                          {QStringLiteral("command"), cmd->command}};
            if (cmd->process->state() == QProcess::NotRunning)
                o.insert(QStringLiteral("exitCode"), cmd->process->exitCode());
            return json(200, o);
        }
    }
    return error(404, QStringLiteral("no route"), "NOT_FOUND", path);
}

} // namespace elsai::test
