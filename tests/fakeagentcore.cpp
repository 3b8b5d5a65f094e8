// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "fakeagentcore.h"

#include "eventstream.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>

namespace elsai::test {

namespace {

const QString INTERPRETER = QStringLiteral("aws.codeinterpreter.v1");

QJsonObject textResult(const QString &text, bool isError)
{
    return {{QStringLiteral("content"),
             QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                    {QStringLiteral("text"), text}}}},
            {QStringLiteral("isError"), isError}};
}

// The SDK refuses absolute paths; the fake refuses them and any '..' too.
bool isRelativeInside(const QString &path)
{
    if (path.startsWith(QLatin1Char('/')))
        return false;
    const QStringList parts = path.split(QLatin1Char('/'));
    return !parts.contains(QStringLiteral(".."));
}

QString newSessionId()
{
    static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    QString id;
    for (int i = 0; i < 26; ++i)
        id += QLatin1Char(alphabet[QRandomGenerator::global()->bounded(32)]);
    return id;
}

QString now()
{
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
}

} // namespace

aws::Credentials FakeAgentCore::testCredentials()
{
    return {QStringLiteral("AKIDAGENTCORETEST"), QStringLiteral("agentcore/test+secret"), {}};
}

FakeAgentCore::FakeAgentCore(aws::Credentials credentials, QString region)
    : m_credentials(std::move(credentials)), m_region(std::move(region))
{
    m_server.setHandler([this](const FakeHttpServer::Request &r) { return handle(r); });
}

FakeAgentCore::~FakeAgentCore() = default;

aws::AgentCoreOptions FakeAgentCore::options() const
{
    aws::AgentCoreOptions o;
    o.region = m_region;
    o.credentials = m_credentials;
    o.endpoint = endpoint();
    o.retry.initialBackoffMs = 1;
    o.retry.maxBackoffMs = 5;
    o.requestTimeoutMs = 30000;
    return o;
}

std::function<std::shared_ptr<SandboxBackend>()> FakeAgentCore::backendFactory()
{
    // Members are destroyed in reverse order: the backend (which stops its session) first.
    struct Holder
    {
        std::shared_ptr<FakeAgentCore> fake;
        std::shared_ptr<aws::AgentCoreSandboxBackend> backend;
    };
    auto fake = std::make_shared<FakeAgentCore>();
    return [fake] {
        int n;
        {
            QMutexLocker lock(&fake->m_mutex);
            n = ++fake->m_nextWorkspace;
        }
        auto holder = std::make_shared<Holder>();
        holder->fake = fake;
        holder->backend = std::make_shared<aws::AgentCoreSandboxBackend>(
            QStringLiteral("conformance-%1").arg(n), fake->options());
        return std::shared_ptr<SandboxBackend>(holder, holder->backend.get());
    };
}

QString FakeAgentCore::sessionFolder(const QString &sessionId) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_sessions.constFind(sessionId);
    return it == m_sessions.constEnd() ? QString() : it->dir->path();
}

QStringList FakeAgentCore::liveSessions() const
{
    QMutexLocker lock(&m_mutex);
    return m_sessions.keys();
}

int FakeAgentCore::sessionsStarted() const
{
    QMutexLocker lock(&m_mutex);
    return m_started;
}

QList<QJsonObject> FakeAgentCore::startRequests() const
{
    QMutexLocker lock(&m_mutex);
    return m_startRequests;
}

QStringList FakeAgentCore::toolCalls() const
{
    QMutexLocker lock(&m_mutex);
    return m_toolCalls;
}

QStringList FakeAgentCore::rejections() const
{
    QMutexLocker lock(&m_mutex);
    return m_rejections;
}

void FakeAgentCore::enqueueStreamException(const QByteArray &exceptionType, const QString &message)
{
    const QByteArray frame = exceptionFrame(exceptionType, message);
    enqueueStreamMutation([frame](const QByteArray &) { return frame; });
}

void FakeAgentCore::enqueueStreamMutation(std::function<QByteArray(QByteArray)> mutate)
{
    QMutexLocker lock(&m_mutex);
    m_streamOverrides.append(std::move(mutate));
}

QByteArray FakeAgentCore::resultFrame(const QJsonObject &result)
{
    aws::EventStreamMessage m;
    m.headers = {
        aws::EventStreamHeader::string(":event-type", QStringLiteral("result")),
        aws::EventStreamHeader::string(":content-type", QStringLiteral("application/json")),
        aws::EventStreamHeader::string(":message-type", QStringLiteral("event"))};
    m.payload = QJsonDocument(result).toJson(QJsonDocument::Compact);
    return aws::encodeEventStreamMessage(m);
}

QByteArray FakeAgentCore::exceptionFrame(const QByteArray &type, const QString &message)
{
    aws::EventStreamMessage m;
    m.headers = {
        aws::EventStreamHeader::string(":exception-type", QString::fromLatin1(type)),
        aws::EventStreamHeader::string(":content-type", QStringLiteral("application/json")),
        aws::EventStreamHeader::string(":message-type", QStringLiteral("exception"))};
    m.payload = QJsonDocument(QJsonObject{{QStringLiteral("message"), message}})
                    .toJson(QJsonDocument::Compact);
    return aws::encodeEventStreamMessage(m);
}

FakeHttpServer::Response FakeAgentCore::error(int status, const QByteArray &type,
                                              const QString &message)
{
    FakeHttpServer::Response r = FakeHttpServer::Response::json(
        status, QJsonDocument(QJsonObject{{QStringLiteral("message"), message}})
                    .toJson(QJsonDocument::Compact));
    r.headers.emplaceBack("x-amzn-ErrorType", type + ":http://internal.amazon.com/coral/");
    r.headers.emplaceBack("x-amzn-RequestId", "fake-request-0001");
    return r;
}

FakeHttpServer::Response FakeAgentCore::handle(const FakeHttpServer::Request &request)
{
    const QString why = aws::verifySignedRequest(
        request.method, request.target, request.headers, request.body, m_credentials, m_region,
        QStringLiteral("bedrock-agentcore"), QDateTime::currentDateTimeUtc());
    if (!why.isEmpty()) {
        QMutexLocker lock(&m_mutex);
        m_rejections.append(why);
        return error(403, "InvalidSignatureException", why);
    }

    const QStringList parts = request.path().split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (parts.size() != 4 || parts.at(0) != QLatin1String("code-interpreters"))
        return error(404, "UnknownOperationException", QStringLiteral("no such operation"));
    if (parts.at(1) != INTERPRETER)
        return error(404, "ResourceNotFoundException",
                     QStringLiteral("code interpreter %1 not found").arg(parts.at(1)));
    const QString op = parts.at(2) + QLatin1Char('/') + parts.at(3);
    QJsonParseError parseError;
    const QJsonObject body = QJsonDocument::fromJson(request.body, &parseError).object();
    if (request.method != "GET" && parseError.error != QJsonParseError::NoError)
        return error(400, "ValidationException", QStringLiteral("body is not JSON"));

    if (op == QLatin1String("sessions/start") && request.method == "PUT") {
        const QString name = body.value(QLatin1String("name")).toString();
        const int timeout = body.value(QLatin1String("sessionTimeoutSeconds")).toInt(900);
        const QString token = body.value(QLatin1String("clientToken")).toString();
        static const QRegularExpression tokenRe(
            QStringLiteral("^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,256}$"));
        if (body.contains(QLatin1String("name")) && (name.isEmpty() || name.size() > 100))
            return error(400, "ValidationException", QStringLiteral("name must be 1-100 chars"));
        if (timeout < 1 || timeout > 28800)
            return error(400, "ValidationException",
                         QStringLiteral("sessionTimeoutSeconds must be 1-28800"));
        if (body.contains(QLatin1String("clientToken")) &&
            (token.size() < 33 || token.size() > 256 || !tokenRe.match(token).hasMatch()))
            return error(400, "ValidationException", QStringLiteral("bad clientToken"));
        if (body.contains(QLatin1String("description")))
            return error(400, "ValidationException",
                         QStringLiteral("description is not a member of the request"));
        QMutexLocker lock(&m_mutex);
        m_startRequests.append(body);
        QString id;
        for (auto it = m_sessions.cbegin(); it != m_sessions.cend(); ++it) {
            if (!token.isEmpty() && it->clientToken == token)
                id = it.key(); // idempotent retry
        }
        if (id.isEmpty()) {
            id = newSessionId();
            Session s;
            s.dir = std::make_shared<QTemporaryDir>();
            s.clientToken = token;
            m_sessions.insert(id, std::move(s));
            ++m_started;
        }
        return FakeHttpServer::Response::json(
            200,
            QJsonDocument(QJsonObject{{QStringLiteral("codeInterpreterIdentifier"), INTERPRETER},
                                      {QStringLiteral("sessionId"), id},
                                      {QStringLiteral("createdAt"), now()}})
                .toJson(QJsonDocument::Compact));
    }
    if ((op == QLatin1String("sessions/stop") && request.method == "PUT") ||
        (op == QLatin1String("sessions/get") && request.method == "GET")) {
        const QString id = request.queryItem(QStringLiteral("sessionId"));
        QMutexLocker lock(&m_mutex);
        if (!m_sessions.contains(id))
            return error(404, "ResourceNotFoundException",
                         QStringLiteral("session %1 not found").arg(id));
        if (op == QLatin1String("sessions/stop"))
            m_sessions.remove(id);
        return FakeHttpServer::Response::json(
            200,
            QJsonDocument(QJsonObject{{QStringLiteral("codeInterpreterIdentifier"), INTERPRETER},
                                      {QStringLiteral("sessionId"), id},
                                      {QStringLiteral("status"), QStringLiteral("READY")},
                                      {QStringLiteral("lastUpdatedAt"), now()}})
                .toJson(QJsonDocument::Compact));
    }
    if (op == QLatin1String("tools/invoke") && request.method == "POST")
        return invoke(QString::fromLatin1(request.header("x-amzn-code-interpreter-session-id")),
                      body);
    return error(404, "UnknownOperationException", QStringLiteral("no such operation"));
}

FakeHttpServer::Response FakeAgentCore::invoke(const QString &sessionId, const QJsonObject &body)
{
    static const QStringList tools = {QStringLiteral("executeCode"),
                                      QStringLiteral("executeCommand"),
                                      QStringLiteral("readFiles"),
                                      QStringLiteral("listFiles"),
                                      QStringLiteral("removeFiles"),
                                      QStringLiteral("writeFiles"),
                                      QStringLiteral("startCommandExecution"),
                                      QStringLiteral("getTask"),
                                      QStringLiteral("stopTask")};
    const QString tool = body.value(QLatin1String("name")).toString();
    QString root;
    std::function<QByteArray(QByteArray)> mutate;
    {
        QMutexLocker lock(&m_mutex);
        const auto it = m_sessions.constFind(sessionId);
        if (it == m_sessions.constEnd())
            return error(404, "ResourceNotFoundException",
                         QStringLiteral("session %1 not found").arg(sessionId));
        if (!tools.contains(tool))
            return error(400, "ValidationException", QStringLiteral("unknown tool %1").arg(tool));
        root = it->dir->path();
        m_toolCalls.append(tool);
        if (!m_streamOverrides.isEmpty())
            mutate = m_streamOverrides.takeFirst();
    }
    // Runs unlocked: a command may take long, and the server is single-threaded anyway.
    const QJsonObject result =
        runTool(root, tool, body.value(QLatin1String("arguments")).toObject());
    FakeHttpServer::Response r;
    r.headers = {{"Content-Type", "application/vnd.amazon.eventstream"},
                 {"x-amzn-code-interpreter-session-id", sessionId.toLatin1()},
                 {"x-amzn-RequestId", "fake-request-0001"}};
    r.body = resultFrame(result);
    if (mutate)
        r.body = mutate(r.body);
    return r;
}

QJsonObject FakeAgentCore::runTool(const QString &root, const QString &tool,
                                   const QJsonObject &args)
{
    const QDir dir(root);
    if (tool == QLatin1String("executeCommand")) {
        QElapsedTimer timer;
        timer.start();
        QProcess process;
        process.setWorkingDirectory(root);
        process.start(QStringLiteral("/bin/sh"),
                      {QStringLiteral("-c"), args.value(QLatin1String("command")).toString()});
        process.waitForFinished(300000);
        const int exitCode =
            process.exitStatus() == QProcess::NormalExit ? process.exitCode() : 137;
        const QString out = QString::fromUtf8(process.readAllStandardOutput());
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QJsonObject result = textResult(out, exitCode != 0);
        result.insert(QStringLiteral("structuredContent"),
                      QJsonObject{{QStringLiteral("stdout"), out},
                                  {QStringLiteral("stderr"), err},
                                  {QStringLiteral("exitCode"), exitCode},
                                  {QStringLiteral("executionTime"), double(timer.elapsed())}});
        return result;
    }
    if (tool == QLatin1String("readFiles")) {
        QJsonArray content;
        QStringList problems;
        for (const QJsonValue &v : args.value(QLatin1String("paths")).toArray()) {
            const QString path = v.toString();
            const QFileInfo info(dir.filePath(path));
            if (!isRelativeInside(path)) {
                problems.append(QStringLiteral("Path must be relative: %1").arg(path));
                continue;
            }
            QFile file(info.filePath());
            if (!info.isFile() || !file.open(QIODevice::ReadOnly)) {
                problems.append(QStringLiteral("File not found: %1").arg(path));
                continue;
            }
            const QByteArray data = file.readAll();
            QJsonObject resource{{QStringLiteral("uri"), QStringLiteral("file://") + path}};
            const QString text = QString::fromUtf8(data);
            if (!data.contains('\0') && text.toUtf8() == data) {
                resource.insert(QStringLiteral("type"), QStringLiteral("text"));
                resource.insert(QStringLiteral("text"), text);
            } else {
                resource.insert(QStringLiteral("type"), QStringLiteral("blob"));
                resource.insert(QStringLiteral("blob"), QString::fromLatin1(data.toBase64()));
            }
            content.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("resource")},
                                       {QStringLiteral("resource"), resource}});
        }
        for (const QString &p : std::as_const(problems))
            content.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("text")},
                                       {QStringLiteral("text"), p}});
        return {{QStringLiteral("content"), content},
                {QStringLiteral("isError"), !problems.isEmpty()}};
    }
    if (tool == QLatin1String("writeFiles")) {
        QStringList problems;
        for (const QJsonValue &v : args.value(QLatin1String("content")).toArray()) {
            const QJsonObject entry = v.toObject();
            const QString path = entry.value(QLatin1String("path")).toString();
            if (path.isEmpty() || !isRelativeInside(path)) {
                problems.append(QStringLiteral("Path must be relative: %1").arg(path));
                continue;
            }
            const QString target = dir.filePath(path);
            QFile file(target);
            if (!QDir().mkpath(QFileInfo(target).path()) || QFileInfo(target).isDir() ||
                !file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
                problems.append(QStringLiteral("Cannot write %1").arg(path));
                continue;
            }
            file.write(entry.contains(QLatin1String("blob"))
                           ? QByteArray::fromBase64(
                                 entry.value(QLatin1String("blob")).toString().toLatin1())
                           : entry.value(QLatin1String("text")).toString().toUtf8());
        }
        return textResult(problems.isEmpty() ? QStringLiteral("Files written")
                                             : problems.join(QLatin1Char('\n')),
                          !problems.isEmpty());
    }
    if (tool == QLatin1String("listFiles")) {
        const QString path = args.value(QLatin1String("directoryPath")).toString();
        if (!isRelativeInside(path))
            return textResult(QStringLiteral("Path must be relative: %1").arg(path), true);
        const QFileInfo info(path.isEmpty() ? root : dir.filePath(path));
        if (!info.isDir())
            return textResult(QStringLiteral("Not a directory: %1").arg(path), true);
        QJsonArray content;
        const QFileInfoList entries = QDir(info.filePath())
                                          .entryInfoList(QDir::AllEntries | QDir::Hidden |
                                                             QDir::System | QDir::NoDotAndDotDot,
                                                         QDir::Name);
        for (const QFileInfo &e : entries) {
            const QString rel = dir.relativeFilePath(e.filePath());
            QJsonObject link{{QStringLiteral("type"), QStringLiteral("resource_link")},
                             {QStringLiteral("uri"), QStringLiteral("file://") + rel},
                             {QStringLiteral("name"),
                              e.isDir() ? e.fileName() + QLatin1Char('/') : e.fileName()}};
            if (!e.isDir())
                link.insert(QStringLiteral("size"), e.size());
            content.append(link);
        }
        return {{QStringLiteral("content"), content}, {QStringLiteral("isError"), false}};
    }
    if (tool == QLatin1String("removeFiles")) {
        QStringList problems;
        for (const QJsonValue &v : args.value(QLatin1String("paths")).toArray()) {
            const QString path = v.toString();
            const QFileInfo info(dir.filePath(path));
            if (path.isEmpty() || !isRelativeInside(path)) {
                problems.append(QStringLiteral("Path must be relative: %1").arg(path));
            } else if (info.isDir() && !info.isSymLink()) {
                QDir(info.filePath()).removeRecursively();
            } else if (!QFile::remove(info.filePath())) {
                problems.append(QStringLiteral("File not found: %1").arg(path));
            }
        }
        return textResult(problems.isEmpty() ? QStringLiteral("Files removed")
                                             : problems.join(QLatin1Char('\n')),
                          !problems.isEmpty());
    }
    return textResult(QStringLiteral("%1 is not supported by the fake").arg(tool), true);
}

} // namespace elsai::test
