// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "mcpagentspec.h"
#include "mcplimits.h"
#include "mcpsession.h"
#include "offload.h"
#include "sandbox.h"

#include <QMutex>
#include <QObject>
#include <QThreadPool>

#include <memory>
#include <optional>

class QThread;

namespace elsai {

/// The MCP stdio transport: one session for one agent, newline-delimited JSON-RPC on two file
/// descriptors (stdin/stdout by default), serving both the session-based revisions (after
/// initialize) and the stateless 2026-07-28 (requests with `_meta`), per message. Nothing else
/// may write to the output fd; logs go to stderr. tools/call runs on a worker pool, so ping and
/// notifications/cancelled are served while a command runs; a cancelled request gets no
/// response (as the protocol asks).
class McpStdioServer : public QObject
{
    Q_OBJECT

public:
    McpStdioServer(SandboxPtr sandbox, McpAgentSpec agent,
                   std::optional<SandboxOutputOffloadPolicy> offload = std::nullopt,
                   int inputFd = 0, int outputFd = 1, QObject *parent = nullptr);
    ~McpStdioServer() override;

    /// Starts reading on a thread of its own. finished() follows end of input.
    void start();
    const McpSession &session() const { return *m_session; }
    /// The largest message taken (default kDefaultMaxMcpMessageBytes, as over HTTP); set
    /// before start(). A longer line is dropped and answered with an error carrying its id.
    void setMaxMessageBytes(qint64 bytes) { m_maxMessageBytes = bytes; }
    /// How often a long tools/call that asked for progress reports it (default 5 s).
    void setProgressInterval(std::chrono::milliseconds interval)
    {
        m_session->setProgressInterval(interval);
    }
    /// How long a stateless tools/call runs before it becomes a task (default: the progress
    /// interval).
    void setTaskThreshold(std::chrono::milliseconds threshold)
    {
        m_session->setTaskThreshold(threshold);
    }

Q_SIGNALS:
    /// Input ended (the client closed stdin) and every running call returned.
    void finished();

private:
    void readLoop();
    void dispatch(const QByteArray &line);
    /// Answers a message over the cap (dropped unread) with the id found in its bytes.
    void refuseOversized(const QJsonValue &id);
    void send(const QJsonObject &message);
    /// Writes one serialized message and its newline in a single write.
    void sendBytes(QByteArray bytes);

    McpSessionPtr m_session;
    qint64 m_maxMessageBytes = kDefaultMaxMcpMessageBytes;
    const int m_inFd;
    const int m_outFd;
    QMutex m_writeMutex;
    QThreadPool m_pool;
    QThread *m_reader = nullptr;
    int m_wakePipe[2] = {-1, -1};
};

} // namespace elsai
