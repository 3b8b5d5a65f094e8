// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// A Daytona control plane + toolbox for tests, speaking the documented protocol
// (docs/backends/daytona.md) on a loopback FakeHttpServer. Each sandbox is a temp
// folder; commands run for real with /bin/sh inside it. Reusable as a backend fixture:
//
//   FakeDaytona fake;
//   auto backend = std::make_shared<DaytonaSandboxBackend>("ws", fake.options());

#include "daytonabackend.h"
#include "fakehttpserver.h"

#include <QHash>
#include <QJsonObject>
#include <QMutex>
#include <QProcess>
#include <QTemporaryDir>

#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace elsai::test {

class FakeDaytona
{
public:
    explicit FakeDaytona(QString apiKey = QStringLiteral("test-api-key"));
    ~FakeDaytona();

    FakeHttpServer &http() { return *m_http; }
    QString apiKey() const { return m_apiKey; }
    /// `http://127.0.0.1:PORT/api`
    QUrl apiUrl() const;
    /// Backend options pointing at this server, with quick retries.
    DaytonaSandboxBackend::Options options() const;

    /// GET /sandbox/{id} answers "creating" this many times before "started".
    void setPollsUntilStarted(int polls);
    /// Sandboxes created from now on end in state "error" with this reason.
    void setStartFailure(const QString &reason);

    struct SandboxState
    {
        QString id;
        QString state;
        QJsonObject createBody;
        QString root; ///< host folder holding the sandbox's file system
    };
    QList<SandboxState> sandboxes() const;
    std::optional<SandboxState> sandbox(const QString &id) const;
    /// Answers instead of the protocol when it returns a response (broken or hostile servers).
    using Interceptor =
        std::function<std::optional<FakeHttpServer::Response>(const FakeHttpServer::Request &)>;
    void setInterceptor(Interceptor interceptor);

    /// Sessions currently open (created and not deleted).
    int openSessions() const;

    /// For a backend conformance fixture (`BackendFixture{"daytona", FakeDaytona::
    /// backendFactory()}`): each call returns a new backend, not yet created, with a workspace
    /// id of its own, on one shared fake that lives as long as the factory or any backend.
    static std::function<std::shared_ptr<SandboxBackend>()> backendFactory();

private:
    struct Sandbox
    {
        SandboxState info;
        int pollsLeft = 0;
        QString failure;
        std::unique_ptr<QTemporaryDir> dir;
    };
    FakeHttpServer::Response handle(const FakeHttpServer::Request &request);
    FakeHttpServer::Response control(const FakeHttpServer::Request &request,
                                     const QStringList &parts);
    FakeHttpServer::Response toolbox(const FakeHttpServer::Request &request, Sandbox &sandbox,
                                     const QString &path);
    QJsonObject sandboxJson(const Sandbox &sandbox) const;

    QString m_apiKey;
    mutable QMutex m_mutex;
    std::map<QString, std::unique_ptr<Sandbox>> m_sandboxes;
    struct Command
    {
        QString command;
        std::unique_ptr<QProcess> process;
        QByteArray out, err;
        void drain();
        ~Command()
        {
            if (process && process->state() != QProcess::NotRunning) {
                process->kill();
                process->waitForFinished();
            }
        }
    };
    // Session id → command id → command; processes live on the server thread.
    QHash<QString, QHash<QString, std::shared_ptr<Command>>> m_sessions;
    int m_nextCommand = 1;
    int m_pollsUntilStarted = 1;
    QString m_startFailure;
    int m_nextId = 1;
    Interceptor m_interceptor;
    std::unique_ptr<FakeHttpServer> m_http;
};

} // namespace elsai::test
