// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// A loopback AWS Bedrock AgentCore Code Interpreter (remote-backends.md §2) on FakeHttpServer:
// sessions start / stop / get, and tools/invoke answering AWS binary event-stream frames.
// Every request's SigV4 signature (service bedrock-agentcore) is recomputed with the test
// credentials: 403 InvalidSignatureException on any mismatch. Each session is a temporary
// folder; executeCommand really runs `/bin/sh -c` there, with no timeout and no cwd of its own
// (like the service), so the backend's wrapping is what the tests exercise. Tool paths must be
// relative, as the SDK demands.
//
// Reusable by the backend conformance suite:
//   BackendFixture{"agentcore", FakeAgentCore::backendFactory()};

#include "agentcorebackend.h"
#include "fakehttpserver.h"
#include "sigv4.h"

#include <QHash>
#include <QJsonObject>
#include <QMutex>
#include <QTemporaryDir>

#include <functional>
#include <memory>

namespace elsai::test {

class FakeAgentCore
{
public:
    static aws::Credentials testCredentials();

    explicit FakeAgentCore(aws::Credentials credentials = testCredentials(),
                           QString region = QStringLiteral("us-east-1"));
    ~FakeAgentCore();

    FakeHttpServer &server() { return m_server; }
    QUrl endpoint() const { return m_server.url(); }
    const aws::Credentials &credentials() const { return m_credentials; }
    const QString &region() const { return m_region; }

    /// Options pointing a backend at this server (fast retries).
    aws::AgentCoreOptions options() const;
    /// Backends (not yet created) on fresh workspace ids of one shared fake, which every
    /// backend keeps alive: the factory and its backends may outlive the fixture.
    static std::function<std::shared_ptr<SandboxBackend>()> backendFactory();

    /// Host folder of a live session (empty when unknown or stopped).
    QString sessionFolder(const QString &sessionId) const;
    QStringList liveSessions() const;
    int sessionsStarted() const;
    /// The body of every start request, in order.
    QList<QJsonObject> startRequests() const;
    /// Tool names invoked so far, in order.
    QStringList toolCalls() const;
    QStringList rejections() const;

    /// The next tools/invoke answers 200 with this exception frame instead of a result.
    void enqueueStreamException(const QByteArray &exceptionType, const QString &message);
    /// The next tools/invoke answers 200 with its event-stream bytes passed through `mutate`.
    void enqueueStreamMutation(std::function<QByteArray(QByteArray)> mutate);

    /// Encodes a CodeInterpreterResult as one `result` event frame.
    static QByteArray resultFrame(const QJsonObject &result);
    static QByteArray exceptionFrame(const QByteArray &type, const QString &message);
    /// A REST-JSON error response (x-amzn-ErrorType + {"message"}).
    static FakeHttpServer::Response error(int status, const QByteArray &type,
                                          const QString &message);

private:
    struct Session
    {
        std::shared_ptr<QTemporaryDir> dir;
        QString clientToken;
    };

    FakeHttpServer::Response handle(const FakeHttpServer::Request &request);
    FakeHttpServer::Response invoke(const QString &sessionId, const QJsonObject &body);
    QJsonObject runTool(const QString &root, const QString &tool, const QJsonObject &args);

    aws::Credentials m_credentials;
    QString m_region;
    mutable QMutex m_mutex;
    QHash<QString, Session> m_sessions;
    int m_started = 0;
    int m_nextWorkspace = 0;
    QList<QJsonObject> m_startRequests;
    QStringList m_toolCalls;
    QStringList m_rejections;
    QList<std::function<QByteArray(QByteArray)>> m_streamOverrides;
    FakeHttpServer m_server; // last: its thread stops before the state above goes away
};

} // namespace elsai::test
