// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT
// libFuzzer target: the MCP JSON-RPC parser (mcp/jsonrpc.h) and the session dispatcher
// (mcp/mcpsession.h). Input: a first byte whose low bit says whether a canned initialize runs
// first, then one JSON-RPC payload per line, each parsed and (when it parses) handled by a fresh
// McpSession of a read-only agent on a scratch local sandbox. Read-only agents have no execute
// or write tool, so nothing runs on this machine. Properties checked for every input:
// - a request is answered; a notification or a response is not;
// - every answer (also a parse fault's) is {"jsonrpc":"2.0", "id": the request's id} with
//   exactly one of "result" and "error", and an error has an integer code and a message;
// - every answer serializes and parses back as a response with the same id;
// - a read-only agent never changes the workspace (R1).
#include "jsonrpc.h"
#include "localsandboxbackend.h"
#include "mcpsession.h"
#include "sandbox.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTemporaryDir>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <variant>

using namespace elsai;

namespace {

QByteArray treeDigest(const QString &root)
{
    QStringList lines;
    QDirIterator it(root, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        QFile f(it.filePath());
        const bool regular = it.fileInfo().isFile() && !it.fileInfo().isSymLink();
        lines << it.filePath() + u'|' +
                     (regular && f.open(QIODevice::ReadOnly) ? QString::fromLatin1(f.readAll())
                                                             : QStringLiteral("-"));
    }
    lines.sort();
    return QCryptographicHash::hash(lines.join(u'\n').toUtf8(), QCryptographicHash::Sha256);
}

struct Fixture
{
    QTemporaryDir dir;
    SandboxPtr sandbox;
    QByteArray digest;
    int runs = 0;

    Fixture()
    {
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.*=false"));
        const QString ws = dir.filePath(QStringLiteral("ws"));
        QDir().mkpath(ws + QStringLiteral("/src"));
        for (const auto &[name, text] :
             {std::pair{"README.md", "# fuzz\n"}, std::pair{"src/a.py", "print('a')\n"}}) {
            QFile f(ws + u'/' + QLatin1String(name));
            if (!f.open(QIODevice::WriteOnly) || f.write(text) < 0)
                std::abort();
        }
        // outside the workspace: a hostile path that escaped would read or list it
        QFile canary(dir.filePath(QStringLiteral("outside.txt")));
        if (!canary.open(QIODevice::WriteOnly) || canary.write("FUZZ-CANARY") < 0)
            std::abort();
        canary.close();
        reset(); // before the digest: whatever start() leaves is the baseline
        digest = treeDigest(dir.path());
    }
    void reset()
    {
        if (sandbox)
            sandbox->stop(false);
        sandbox = Sandbox::create(
            QStringLiteral("fuzz"),
            std::make_shared<LocalSandboxBackend>(dir.filePath(QStringLiteral("ws"))),
            std::nullopt);
        sandbox->start();
        runs = 0;
    }
};

bool isIntegral(const QJsonValue &v)
{
    return v.isDouble() && std::floor(v.toDouble()) == v.toDouble();
}

/// The checks every answer passes, whatever it answers.
void checkAnswer(const QJsonObject &answer, const QJsonValue &id)
{
    if (answer.value(QLatin1String("jsonrpc")).toString() != QLatin1String("2.0"))
        std::abort();
    if (answer.value(QLatin1String("id")) != id)
        std::abort();
    const bool hasResult = answer.contains(QLatin1String("result"));
    const bool hasError = answer.contains(QLatin1String("error"));
    if (hasResult == hasError)
        std::abort();
    if (hasError) {
        const QJsonObject error = answer.value(QLatin1String("error")).toObject();
        if (!isIntegral(error.value(QLatin1String("code"))) ||
            !error.value(QLatin1String("message")).isString())
            std::abort();
    }
    // our own answer must parse as a response to the same request
    const jsonrpc::ParseResult back = jsonrpc::parse(jsonrpc::serialize(answer));
    const auto *m = std::get_if<jsonrpc::Message>(&back);
    if (id.isNull()) {
        // an answer to what had no usable id: a fault on our own parser too (no null ids)
        if (m)
            std::abort();
        return;
    }
    if (!m || m->id != id)
        std::abort();
    if (m->kind !=
        (hasError ? jsonrpc::Message::Kind::ErrorResponse : jsonrpc::Message::Kind::Response))
        std::abort();
}

const QByteArray Initialize =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
    R"("capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}})";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static Fixture fixture;
    if (size == 0 || size > 16384)
        return 0;
    const bool initializeFirst = data[0] & 1;
    QList<QByteArray> lines =
        QByteArray(reinterpret_cast<const char *>(data) + 1, qsizetype(size - 1)).split('\n');
    if (initializeFirst)
        lines.prepend(Initialize);

    McpAgentSpec spec;
    spec.name = QStringLiteral("fuzz-reader");
    spec.mode = SandboxAttachMode::ReadOnly;
    McpSession session(QStringLiteral("fuzz"), spec, fixture.sandbox);
    for (const QByteArray &line : std::as_const(lines)) {
        const jsonrpc::ParseResult parsed = jsonrpc::parse(line);
        if (const auto *fault = std::get_if<jsonrpc::Fault>(&parsed)) {
            if (fault->code >= 0 || fault->message.isEmpty())
                std::abort();
            checkAnswer(jsonrpc::errorResponse(*fault), fault->id);
            continue;
        }
        const jsonrpc::Message &m = std::get<jsonrpc::Message>(parsed);
        const McpSession::Reply reply = session.handle(m);
        if (m.isRequest() != reply.response.has_value())
            std::abort();
        if (reply.response)
            checkAnswer(*reply.response, m.id);
    }
    session.close();
    if (treeDigest(fixture.dir.path()) != fixture.digest)
        std::abort(); // a read-only agent changed the workspace, or something escaped it
    // the audit trail grows with every attach: start afresh now and then
    if (++fixture.runs >= 1000)
        fixture.reset();
    return 0;
}
