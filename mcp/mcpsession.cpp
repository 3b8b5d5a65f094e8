// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcpsession.h"

#include "audit.h"
#include "errors.h"
#include "mcpera.h"
#include "mcpprogress.h"
#include "process.h"
#include "sandboxmanager.h"
#include "sandboxplugin.h"

#include <QJsonArray>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcMcpSession, "elsai.mcp.session", QtInfoMsg)

namespace elsai {

namespace {

// list_dir: the MCP result carries the listing as text and drops the structured entries (they
// would repeat it), so they are not built at all: a JSON object per entry was most of the cost
// of listing a large folder.
void installTextListDir(Agent &agent)
{
    std::optional<Tool> listDir = agent.tools().get(QStringLiteral("list_dir"));
    if (!listDir)
        return;
    listDir->invoke = [](Agent &a, const QJsonObject &args) {
        const QString path =
            args::requiredString(args, QStringLiteral("path"), QStringLiteral("list_dir"));
        return ToolResult{listWorkspaceDir(a, path), {{QStringLiteral("path"), path}}, false};
    };
    agent.tools().add(*listDir);
}

QJsonObject textContent(const QString &text)
{
    return {{QStringLiteral("type"), QStringLiteral("text")}, {QStringLiteral("text"), text}};
}

} // namespace

// The fields of a tool's structured result that the text content already carries: left out of
// structuredContent (they would double a large result) and so of the output schema.
const char *const kTextFields[] = {"output", "stderr", "content", "entries"};

// The outputSchema of a tool as MCP sends its results: the core's result schema without the
// text fields, plus what this layer and the offload policy add. A failed call's result holds
// only "error" (the SDK validates error results too), hence the two alternatives.
static QJsonObject mcpOutputSchema(const QJsonObject &resultSchema)
{
    QJsonObject properties = resultSchema.value(QLatin1String("properties")).toObject();
    for (const char *field : kTextFields)
        properties.remove(QLatin1String(field));
    const auto typed = [](const char *type) {
        return QJsonObject{{QStringLiteral("type"), QLatin1String(type)}};
    };
    properties.insert(QStringLiteral("offloaded"),
                      QJsonObject{{QStringLiteral("type"), QStringLiteral("object")},
                                  {QStringLiteral("properties"),
                                   QJsonObject{{QStringLiteral("handle"), typed("string")},
                                               {QStringLiteral("tokens"), typed("integer")}}}});
    properties.insert(QStringLiteral("error"),
                      QJsonObject{{QStringLiteral("type"), QStringLiteral("object")},
                                  {QStringLiteral("properties"),
                                   QJsonObject{{QStringLiteral("type"), typed("string")},
                                               {QStringLiteral("message"), typed("string")}}},
                                  {QStringLiteral("required"),
                                   QJsonArray{QStringLiteral("type"), QStringLiteral("message")}}});
    QJsonArray required = resultSchema.value(QLatin1String("required")).toArray();
    for (qsizetype i = required.size() - 1; i >= 0; --i) {
        for (const char *field : kTextFields) {
            if (required.at(i).toString() == QLatin1String(field)) {
                required.removeAt(i);
                break;
            }
        }
    }
    return {{QStringLiteral("type"), QStringLiteral("object")},
            {QStringLiteral("properties"), properties},
            {QStringLiteral("additionalProperties"), false},
            {QStringLiteral("anyOf"),
             QJsonArray{
                 QJsonObject{{QStringLiteral("required"), required}},
                 QJsonObject{{QStringLiteral("required"), QJsonArray{QStringLiteral("error")}}}}}};
}

QJsonObject mcpToolDescription(const Tool &tool)
{
    static const QStringList readOnly{QStringLiteral("read_file"), QStringLiteral("list_dir"),
                                      QStringLiteral("retrieve_offloaded_content")};
    // the tool's own hints where it gives them (every sandbox tool), else by name
    const ToolHints hints = tool.hints.value_or(
        ToolHints{readOnly.contains(tool.name), true, tool.name == QLatin1String("write_file")});
    const bool ro = hints.readOnly;
    QJsonObject annotations{{QStringLiteral("readOnlyHint"), ro},
                            {QStringLiteral("openWorldHint"), false}};
    if (!ro) {
        annotations.insert(QStringLiteral("destructiveHint"), hints.destructive);
        annotations.insert(QStringLiteral("idempotentHint"), hints.idempotent);
    }
    const QString title = tool.title.isEmpty() ? tool.name : tool.title;
    annotations.insert(QStringLiteral("title"), title); // where clients before 2025-06-18 look
    QJsonObject description{{QStringLiteral("name"), tool.name},
                            {QStringLiteral("title"), title},
                            {QStringLiteral("description"), tool.description},
                            {QStringLiteral("inputSchema"), tool.inputSchema},
                            {QStringLiteral("annotations"), annotations}};
    if (!tool.outputSchema.isEmpty())
        description.insert(QStringLiteral("outputSchema"), mcpOutputSchema(tool.outputSchema));
    return description;
}

McpSession::McpSession(QString id, McpAgentSpec agent, SandboxPtr sandbox,
                       std::optional<SandboxOutputOffloadPolicy> offload)
    : m_id(std::move(id)), m_spec(std::move(agent)), m_sandbox(std::move(sandbox)),
      m_offload(std::move(offload))
{
}

McpSession::~McpSession()
{
    close();
}

QStringList McpSession::supportedProtocolVersions()
{
    return mcpera::legacyVersions();
}

QString McpSession::latestProtocolVersion()
{
    return mcpera::latestLegacyVersion();
}

bool McpSession::isSupportedProtocolVersion(const QString &version)
{
    return mcpera::isLegacyVersion(version);
}

static const QStringList &statelessMethods()
{
    static const QStringList methods{
        QStringLiteral("server/discover"),     QStringLiteral("tools/list"),
        QStringLiteral("tools/call"),          QStringLiteral("tasks/get"),
        QStringLiteral("tasks/update"),        QStringLiteral("tasks/cancel"),
        QStringLiteral("subscriptions/listen")};
    return methods;
}

bool McpSession::servesStatelessMethod(const QString &method)
{
    return statelessMethods().contains(method);
}

std::optional<jsonrpc::Fault> McpSession::missingCapability(const jsonrpc::Message &m,
                                                            const mcpera::Envelope &envelope)
{
    if (!m.method.startsWith(QLatin1String("tasks/")) ||
        envelope.declaresExtension(mcpera::kTasksExtension))
        return std::nullopt;
    return mcpera::missingTasksExtension(m.id, m.method);
}

bool McpSession::allowsBatches(const QString &version)
{
    return version == QLatin1String("2025-03-26");
}

void McpSession::setProgressInterval(std::chrono::milliseconds interval)
{
    m_progressInterval = interval;
    if (!m_taskThresholdSet) {
        m_taskThreshold = interval;
        m_tasks.setPollInterval(interval);
    }
}

void McpSession::setTaskThreshold(std::chrono::milliseconds threshold)
{
    m_taskThreshold = threshold;
    m_taskThresholdSet = true;
    m_tasks.setPollInterval(threshold);
}

bool McpSession::isInitialized() const
{
    QMutexLocker lock(&m_mutex);
    return m_agent != nullptr;
}

bool McpSession::isClosed() const
{
    QMutexLocker lock(&m_mutex);
    return m_closed;
}

QString McpSession::protocolVersion() const
{
    QMutexLocker lock(&m_mutex);
    return m_protocolVersion;
}

QJsonObject McpSession::clientInfo() const
{
    QMutexLocker lock(&m_mutex);
    return m_clientInfo;
}

AgentPtr McpSession::agent() const
{
    QMutexLocker lock(&m_mutex);
    return m_agent;
}

int McpSession::runningCalls() const
{
    QMutexLocker lock(&m_mutex);
    return int(m_running.size());
}

void McpSession::close()
{
    AgentPtr agent;
    {
        QMutexLocker lock(&m_mutex);
        if (m_closed)
            return;
        m_closed = true;
        for (const auto &token : std::as_const(m_running))
            token->cancel();
        agent = m_agent;
    }
    m_tasks.cancelAll();
    if (agent && m_sandbox)
        m_sandbox->detach(agent);
    qCDebug(lcMcpSession) << "session" << m_id << "of" << m_spec.name << "closed";
}

// A tools/call result with its text content item filled in.
static QJsonObject withTextContent(QJsonObject result, const QString &text)
{
    QJsonArray content = result.value(QLatin1String("content")).toArray();
    if (content.isEmpty())
        content.append(textContent(text));
    else
        content.replace(0, textContent(text)); // an image may follow
    result.insert(QStringLiteral("content"), content);
    return result;
}

// The response of a tools/call with its text content item filled in.
static QJsonObject withText(QJsonObject response, const QString &text)
{
    response.insert(QStringLiteral("result"),
                    withTextContent(response.value(QLatin1String("result")).toObject(), text));
    return response;
}

McpSession::Reply McpSession::handle(const jsonrpc::Message &m, const Notify &notify)
{
    Answer a = answer(m, CallContext{notify, {}, {}});
    if (a.response && a.text)
        return {withText(std::move(*a.response), *a.text), a.cancelled};
    return {std::move(a.response), a.cancelled};
}

McpSession::SerializedReply McpSession::handleSerialized(const jsonrpc::Message &m,
                                                         const Notify &notify)
{
    return handleSerialized(m, CallContext{notify, {}, {}});
}

McpSession::SerializedReply McpSession::handleSerialized(const jsonrpc::Message &m,
                                                         const CallContext &context)
{
    const Answer a = answer(m, context);
    if (!a.response)
        return {{}, a.cancelled, a.answered, a.keepOpen};
    QByteArray bytes = jsonrpc::serialize(*a.response);
    if (!a.text)
        return {bytes, a.cancelled};
    // The only unescaped `"content":[{"text":""` is the structure itself: inside JSON strings
    // every quote is escaped.
    static const QByteArray marker = QByteArrayLiteral("\"content\":[{\"text\":\"");
    const qsizetype at = bytes.indexOf(marker + '"');
    if (at < 0) { // cannot happen; stays correct if the serializer ever changes
        qCWarning(lcMcpSession) << "text content not found in a serialized tools/call result";
        return {jsonrpc::serialize(withText(*a.response, *a.text)), a.cancelled};
    }
    const qsizetype split = at + marker.size();
    const QByteArray utf8 = a.text->toUtf8();
    QByteArray out;
    out.reserve(bytes.size() + utf8.size() + utf8.size() / 8 + 16); // room for escapes and '\n'
    out.append(bytes.constData(), split);
    jsonrpc::appendEscaped(out, utf8);
    out.append(bytes.constData() + split, bytes.size() - split);
    return {out, a.cancelled};
}

QByteArray McpSession::handleBatch(const QList<jsonrpc::ParseResult> &batch)
{
    QByteArray out("[");
    for (const jsonrpc::ParseResult &item : batch) {
        QByteArray response;
        if (const auto *fault = std::get_if<jsonrpc::Fault>(&item)) {
            response = jsonrpc::serialize(jsonrpc::errorResponse(*fault));
        } else {
            const auto &m = std::get<jsonrpc::Message>(item);
            if (m.isRequest() && m.method == QLatin1String("initialize")) {
                response = jsonrpc::serialize(jsonrpc::errorResponse(
                    m.id, jsonrpc::InvalidRequest,
                    QStringLiteral("initialize must not be part of a JSON-RPC batch")));
            } else if (mcpera::claimsModern(m)) {
                response = jsonrpc::serialize(jsonrpc::errorResponse(
                    m.id, jsonrpc::InvalidRequest,
                    QStringLiteral("MCP %1 has no JSON-RPC batches; send one message per "
                                   "request")
                        .arg(mcpera::modernVersion())));
            } else {
                SerializedReply r = handleSerialized(m);
                if (!r.cancelled)
                    response = std::move(r.bytes);
            }
        }
        if (response.isEmpty())
            continue;
        if (out.size() > 1)
            out.append(',');
        out.append(response);
    }
    if (out.size() == 1)
        return {};
    out.append(']');
    return out;
}

McpSession::Answer McpSession::answer(const jsonrpc::Message &m, const CallContext &context)
{
    using namespace jsonrpc;
    if (m.kind == Message::Kind::Response || m.kind == Message::Kind::ErrorResponse)
        return {}; // this server sends no requests, so a response answers nothing
    if (m.isNotification()) {
        // Either era: the request (or subscriptions/listen stream) with that id stops. A task
        // is not a request any more: only tasks/cancel stops it (the Tasks extension).
        if (m.method == QLatin1String("notifications/cancelled"))
            cancelRequest(m.params.value(QLatin1String("requestId")));
        // notifications/initialized and unknown notifications need no action.
        return {};
    }
    if (mcpera::classify(m) == mcpera::Era::Modern)
        return answerModern(m, context);

    auto fault = [&](int code, const QString &message) {
        return Answer{errorResponse(m.id, code, message), std::nullopt};
    };
    if (isClosed())
        return fault(InvalidRequest,
                     QStringLiteral("the MCP session has ended; initialize a new one"));
    if (m.method == QLatin1String("ping"))
        return {resultResponse(m.id, QJsonObject{}), std::nullopt};
    if (m.method == QLatin1String("initialize")) {
        try {
            return {resultResponse(m.id, initialize(m.params)), std::nullopt};
        } catch (const SandboxError &e) {
            return fault(InternalError, e.display());
        }
    }
    if (!isInitialized())
        return fault(InvalidRequest,
                     QStringLiteral("'%1' before initialize: send initialize first, or send "
                                    "MCP %2 requests (params._meta with \"%3\")")
                         .arg(m.method, mcpera::modernVersion(),
                              QLatin1String(mcpera::kProtocolVersionKey)));
    if (m.method == QLatin1String("tools/list"))
        return {resultResponse(m.id, listTools()), std::nullopt};
    if (m.method == QLatin1String("tools/call")) {
        CallOutcome outcome;
        auto result = callTool(m, context, false, &outcome);
        if (const auto *f = std::get_if<Fault>(&result))
            return {errorResponse(m.id, f->code, f->message), std::nullopt, outcome.cancelled};
        ToolCallResult &r = std::get<ToolCallResult>(result);
        return {resultResponse(m.id, r.result), std::move(r.text), outcome.cancelled};
    }
    return fault(MethodNotFound, QStringLiteral("method '%1' is not supported; this server "
                                                "offers ping, tools/list and tools/call")
                                     .arg(m.method));
}

McpSession::Answer McpSession::answerModern(const jsonrpc::Message &m, const CallContext &context)
{
    using namespace jsonrpc;
    auto fault = [&](const Fault &f) { return Answer{errorResponse(f), std::nullopt}; };
    if (!servesStatelessMethod(m.method))
        return fault({MethodNotFound,
                      QStringLiteral("Method not found: '%1'; MCP %2 requests here are %3")
                          .arg(m.method, mcpera::modernVersion(),
                               statelessMethods().join(QStringLiteral(", "))),
                      m.id});
    const auto envelope = mcpera::parseEnvelope(m);
    if (const auto *f = std::get_if<Fault>(&envelope))
        return fault(*f);
    const mcpera::Envelope &env = std::get<mcpera::Envelope>(envelope);
    if (const auto missing = missingCapability(m, env))
        return fault(*missing);
    if (isClosed())
        return fault({InternalError, QStringLiteral("the MCP server is shutting down"), m.id});
    try {
        ensureAgent();
    } catch (const SandboxError &e) {
        return fault({InternalError, e.display(), m.id});
    }
    if (!env.clientInfo.isEmpty()) {
        QMutexLocker lock(&m_mutex);
        m_clientInfo = env.clientInfo; // the latest, for display only
    }
    if (m.method == QLatin1String("server/discover"))
        return {resultResponse(m.id, mcpera::modernResult(discover())), std::nullopt};
    if (m.method == QLatin1String("tools/list")) {
        // The list depends on the agent's mode (its token), and changes only with the server.
        QJsonObject list = listTools();
        list.insert(QStringLiteral("ttlMs"), 600000);
        list.insert(QStringLiteral("cacheScope"), QStringLiteral("private"));
        return {resultResponse(m.id, mcpera::modernResult(list)), std::nullopt};
    }
    if (m.method == QLatin1String("tools/call")) {
        CallOutcome outcome;
        const bool withTasks = context.respond && env.declaresExtension(mcpera::kTasksExtension);
        auto result = callTool(m, context, withTasks, &outcome);
        if (outcome.becameTask)
            return {std::nullopt, std::nullopt, outcome.cancelled, true};
        if (const auto *f = std::get_if<Fault>(&result))
            return {errorResponse(m.id, f->code, f->message), std::nullopt, outcome.cancelled};
        ToolCallResult &r = std::get<ToolCallResult>(result);
        return {resultResponse(m.id, mcpera::modernResult(r.result)), std::move(r.text),
                outcome.cancelled};
    }
    if (m.method == QLatin1String("subscriptions/listen"))
        return listen(m, context);
    return answerTasks(m);
}

McpSession::Answer McpSession::answerTasks(const jsonrpc::Message &m)
{
    using namespace jsonrpc;
    const QJsonValue idValue = m.params.value(QLatin1String("taskId"));
    if (!idValue.isString())
        return {errorResponse(m.id, InvalidParams,
                              QStringLiteral("%1 needs \"taskId\", the string a tools/call "
                                             "answered with resultType \"task\"")
                                  .arg(m.method)),
                std::nullopt};
    const QString taskId = idValue.toString();
    const Answer notFound{errorResponse(m.id, InvalidParams,
                                        QStringLiteral("Failed to retrieve task: Task not "
                                                       "found (unknown, another agent's, or "
                                                       "expired an hour after it ended)")),
                          std::nullopt};
    if (m.method == QLatin1String("tasks/get")) {
        const auto task = m_tasks.detailed(taskId);
        if (!task)
            return notFound;
        return {resultResponse(m.id, mcpera::modernResult(*task)), std::nullopt};
    }
    if (m.method == QLatin1String("tasks/cancel")) {
        if (!m_tasks.cancel(taskId))
            return notFound;
        qCInfo(lcMcpSession).noquote() << "session" << m_id << "cancelled task" << taskId;
        return {resultResponse(m.id, mcpera::modernResult({})), std::nullopt};
    }
    // tasks/update: this server's tasks never ask for input, so there is nothing outstanding
    // to answer; responses are acknowledged and ignored, as the extension asks.
    if (!m_tasks.contains(taskId))
        return notFound;
    return {resultResponse(m.id, mcpera::modernResult({})), std::nullopt};
}

McpSession::Answer McpSession::listen(const jsonrpc::Message &m, const CallContext &context)
{
    using namespace jsonrpc;
    const QJsonValue filter = m.params.value(QLatin1String("notifications"));
    if (!filter.isObject())
        return {errorResponse(m.id, InvalidParams,
                              QStringLiteral("subscriptions/listen needs \"notifications\", an "
                                             "object naming what to receive")),
                std::nullopt};
    QStringList wanted;
    for (const QJsonValue &v : filter.toObject().value(QLatin1String("taskIds")).toArray())
        wanted.append(v.toString());
    const mcpera::Envelope env = std::get<mcpera::Envelope>(mcpera::parseEnvelope(m));
    if (!wanted.isEmpty() && !env.declaresExtension(mcpera::kTasksExtension))
        return {errorResponse(mcpera::missingTasksExtension(
                    m.id, QStringLiteral("listening to task status notifications"))),
                std::nullopt};
    if (!context.notify)
        return {errorResponse(m.id, InvalidParams,
                              QStringLiteral("subscriptions/listen needs a stream (on HTTP, "
                                             "accept text/event-stream)")),
                std::nullopt};
    const QString key = context.runKey.isEmpty() ? idKey(m.id) : context.runKey;
    // Only task status is offered: the tool list never changes while the server runs, and
    // there are no prompts or resources. The acknowledgement says so by omitting the rest.
    const QStringList taken = m_tasks.subscribe(key, m.id, wanted, context.notify);
    QJsonObject accepted;
    if (!taken.isEmpty())
        accepted.insert(QStringLiteral("taskIds"), QJsonArray::fromStringList(taken));
    context.notify(serialize(notification(
        QStringLiteral("notifications/subscriptions/acknowledged"),
        {{QStringLiteral("_meta"), QJsonObject{{QLatin1String(mcpera::kSubscriptionIdKey), m.id}}},
         {QStringLiteral("notifications"), accepted}})));
    m_tasks.announceFinished(key);
    Answer open;
    open.keepOpen = true;
    return open;
}

AgentPtr McpSession::ensureAgent()
{
    if (AgentPtr existing = agent())
        return existing;
    AgentConfig config;
    config.sandbox = m_sandbox;
    config.sandboxMode = SandboxMode::Sandbox;
    config.sandboxAttachMode = m_spec.mode;
    config.sandboxOutputOffload = m_offload;
    AgentPtr agent = Agent::create(m_spec.name, config); // attaches; audited as "attach"
    installTextListDir(*agent);
    bool detachOurs = false;
    {
        QMutexLocker lock(&m_mutex);
        if (m_agent) { // another thread attached first: that one serves
            detachOurs = true;
        } else {
            m_agent = agent;
            detachOurs = m_closed;
        }
    }
    if (detachOurs)
        m_sandbox->detach(agent);
    return this->agent();
}

QString McpSession::instructions() const
{
    return QStringLiteral("Tools act on the shared sandbox workspace '%1' as agent '%2' (%3). "
                          "Paths are relative to the workspace root.")
        .arg(m_sandbox->workspaceId(), m_spec.name, toString(m_spec.mode));
}

QJsonObject McpSession::discover() const
{
    return {
        {QStringLiteral("supportedVersions"),
         QJsonArray::fromStringList(mcpera::supportedVersions())},
        {QStringLiteral("capabilities"),
         QJsonObject{{QStringLiteral("tools"), QJsonObject{{QStringLiteral("listChanged"), false}}},
                     {QStringLiteral("extensions"),
                      QJsonObject{{QLatin1String(mcpera::kTasksExtension), QJsonObject{}}}}}},
        {QStringLiteral("serverInfo"), mcpera::serverInfo()},
        {QStringLiteral("instructions"), instructions()},
        // The instructions name the agent (its token): private, and fixed while it runs.
        {QStringLiteral("ttlMs"), 600000},
        {QStringLiteral("cacheScope"), QStringLiteral("private")}};
}

QJsonObject McpSession::initialize(const QJsonObject &params)
{
    const QString requested = params.value(QLatin1String("protocolVersion")).toString();
    const QString version =
        isSupportedProtocolVersion(requested) ? requested : latestProtocolVersion();
    ensureAgent();
    {
        QMutexLocker lock(&m_mutex);
        m_protocolVersion = version;
        m_clientInfo = params.value(QLatin1String("clientInfo")).toObject();
    }
    qCInfo(lcMcpSession).noquote()
        << "session" << m_id << "agent" << m_spec.name << toString(m_spec.mode) << "client"
        << clientInfo().value(QLatin1String("name")).toString() << "protocol" << version;
    return {{QStringLiteral("protocolVersion"), version},
            {QStringLiteral("capabilities"),
             QJsonObject{
                 {QStringLiteral("tools"), QJsonObject{{QStringLiteral("listChanged"), false}}}}},
            {QStringLiteral("serverInfo"), mcpera::serverInfo()},
            {QStringLiteral("instructions"), instructions()}};
}

QJsonObject McpSession::listTools() const
{
    QJsonArray tools;
    for (const Tool &t : agent()->tools().tools())
        tools.append(mcpToolDescription(t));
    return {{QStringLiteral("tools"), tools}};
}

std::variant<McpSession::ToolCallResult, jsonrpc::Fault>
McpSession::callTool(const jsonrpc::Message &message, const CallContext &context, bool withTasks,
                     CallOutcome *outcome)
{
    using jsonrpc::Fault;
    const QJsonObject &params = message.params;
    const QJsonValue nameValue = params.value(QLatin1String("name"));
    const QJsonValue argsValue = params.value(QLatin1String("arguments"));
    const AgentPtr a = agent();
    // A call refused here never reaches the agent: its `invalid` record comes from the helper
    // the core uses for the calls it refuses.
    auto invalid = [&](const QString &message) {
        auditInvalidToolCall(nameValue.toString(), SandboxManager::resolveWorkspaceId(*a), a->id(),
                             QStringLiteral("ValueError"), message);
        return Fault{jsonrpc::InvalidParams, message};
    };
    if (!nameValue.isString())
        return invalid(QStringLiteral("tools/call needs \"name\", the tool to call"));
    if (!argsValue.isUndefined() && !argsValue.isNull() && !argsValue.isObject())
        return invalid(QStringLiteral("tools/call \"arguments\" must be an object"));
    const QString name = nameValue.toString();

    auto token = std::make_shared<CancellationToken>();
    const QString key = context.runKey.isEmpty() ? jsonrpc::idKey(message.id) : context.runKey;
    {
        QMutexLocker lock(&m_mutex);
        if (!m_running.contains(key))
            m_running.insert(key, token);
        else
            token.reset();
    }
    if (!token) {
        Fault f = invalid(
            QStringLiteral("request id %1 is already running; use a new id").arg(key.mid(2)));
        f.code = jsonrpc::InvalidRequest;
        return f;
    }
    const auto started = std::chrono::steady_clock::now();
    const bool counts = name == QLatin1String("execute");
    auto output = std::make_shared<ExecuteProgress>();
    auto status = [=] {
        using namespace std::chrono;
        const double seconds =
            duration_cast<milliseconds>(steady_clock::now() - started).count() / 1000.0;
        QString message =
            QStringLiteral("%1 running for %2 s").arg(name, QString::number(seconds, 'f', 1));
        if (counts)
            message += QStringLiteral("; %1 bytes of output so far")
                           .arg(output->outputBytes.load(std::memory_order_relaxed));
        return std::make_pair(seconds, message);
    };

    // A call that outlives the task threshold becomes a task (when the client can take one):
    // the task is stored first, then its handle answers the request, and the call runs on.
    // Progress notifications stop there: the request they belonged to has its answer.
    struct Promotion
    {
        QMutex mutex;
        QString taskId; ///< set once promoted
    };
    auto promotion = std::make_shared<Promotion>();
    ProgressTicker::Registration promoting;
    if (withTasks) {
        promoting = ProgressTicker::instance().start(m_taskThreshold, [=, this] {
            QMutexLocker lock(&promotion->mutex);
            if (!promotion->taskId.isEmpty()) {
                m_tasks.setStatusMessage(promotion->taskId, status().second);
                return;
            }
            promotion->taskId = m_tasks.create(token, status().second);
            {
                // No longer a request: notifications/cancelled of its id must not reach it
                // (tasks/cancel does), and the id may be used again.
                QMutexLocker running(&m_mutex);
                if (m_running.value(key) == token)
                    m_running.remove(key);
            }
            const QJsonObject created = *m_tasks.summary(promotion->taskId);
            qCInfo(lcMcpSession).noquote()
                << "session" << m_id << "call" << name << "became task" << promotion->taskId;
            context.respond(jsonrpc::serialize(jsonrpc::resultResponse(
                message.id, mcpera::modernResult(created, QStringLiteral("task")))));
        });
    }
    const auto promotedTask = [promotion] {
        QMutexLocker lock(&promotion->mutex);
        return promotion->taskId;
    };

    // Progress while it runs, for a client that asked for it (it may reset its request
    // timeout on each): the time so far and, for execute, the output size so far.
    ProgressTicker::Registration ticking;
    const QJsonValue progressToken =
        params.value(QLatin1String("_meta")).toObject().value(QLatin1String("progressToken"));
    const bool wantsProgress =
        context.notify && (progressToken.isString() || progressToken.isDouble());
    if (wantsProgress) {
        ticking = ProgressTicker::instance().start(m_progressInterval, [=] {
            if (!promotedTask().isEmpty())
                return;
            const auto [seconds, message] = status();
            context.notify(jsonrpc::serialize(jsonrpc::notification(
                QStringLiteral("notifications/progress"),
                {{QStringLiteral("progressToken"), progressToken},
                 {QStringLiteral("progress"), seconds}, // grows with every notification
                 {QStringLiteral("message"), message}})));
        });
    }
    ToolCallResult call;
    std::optional<Fault> fault;
    try {
        // notifications/cancelled kills the command; its output feeds the progress messages
        ToolCallCancelScope::OutputObserver onOutput;
        if (wantsProgress || withTasks) {
            onOutput = [output](OutputChannel, const QByteArray &chunk) {
                output->outputBytes.fetch_add(chunk.size(), std::memory_order_relaxed);
            };
        }
        ToolCallCancelScope scope(token, std::move(onOutput));
        const ToolResult r = a->callTool(name, argsValue.toObject());
        QJsonObject structured = r.data;
        // The text already carries these; repeating them would double large results.
        for (const char *big : kTextFields)
            structured.remove(QLatin1String(big));
        QJsonArray content{textContent(QString())}; // the text goes first (handleSerialized)
        if (r.image) // read_file of an image: MCP image content beside the text
            content.append(QJsonObject{
                {QStringLiteral("type"), QStringLiteral("image")},
                {QStringLiteral("data"), QString::fromLatin1(r.image->bytes.toBase64())},
                {QStringLiteral("mimeType"), r.image->mimeType}});
        call.result = {{QStringLiteral("content"), content},
                       {QStringLiteral("structuredContent"), structured},
                       {QStringLiteral("isError"), false}};
        call.text = r.text;
    } catch (const ToolNotFoundError &e) {
        fault = Fault{jsonrpc::InvalidParams, e.display()};
    } catch (const SandboxError &e) {
        call.result = {{QStringLiteral("content"), QJsonArray{textContent(QString())}},
                       {QStringLiteral("structuredContent"),
                        QJsonObject{{QStringLiteral("error"),
                                     QJsonObject{{QStringLiteral("type"), e.specName()},
                                                 {QStringLiteral("message"), e.message()}}}}},
                       {QStringLiteral("isError"), true}};
        call.text = e.display();
    } catch (const std::exception &e) {
        const ErrorDescription d = describeError(e);
        qCWarning(lcMcpSession) << "tool" << name << "failed unexpectedly:" << d.display();
        fault = Fault{jsonrpc::InternalError,
                      QStringLiteral("tool '%1' failed: %2").arg(name, d.display())};
    }
    // No progress and no promotion after this point (each waits for a running callback).
    ticking = {};
    promoting = {};
    {
        QMutexLocker lock(&m_mutex);
        if (m_running.value(key) == token)
            m_running.remove(key);
    }
    outcome->cancelled = token->isCancelled();
    if (const QString taskId = promotedTask(); !taskId.isEmpty()) {
        outcome->becameTask = true;
        if (outcome->cancelled)
            m_tasks.markCancelled(taskId, QStringLiteral("cancelled by tasks/cancel"));
        else if (fault)
            m_tasks.fail(taskId, QJsonObject{{QStringLiteral("code"), fault->code},
                                             {QStringLiteral("message"), fault->message}});
        else
            m_tasks.complete(taskId, mcpera::modernResult(withTextContent(call.result, call.text)));
        return call;
    }
    if (fault)
        return *fault;
    return call;
}

void McpSession::cancelRequest(const QJsonValue &requestId)
{
    if (!requestId.isString() && !requestId.isDouble())
        return;
    cancelRun(jsonrpc::idKey(requestId));
}

void McpSession::cancelRun(const QString &key)
{
    m_tasks.unsubscribe(key); // a subscriptions/listen stream ends
    QMutexLocker lock(&m_mutex);
    if (const auto token = m_running.value(key)) {
        token->cancel();
        qCInfo(lcMcpSession).noquote() << "session" << m_id << "cancelled request" << key.mid(2);
    }
}

} // namespace elsai
