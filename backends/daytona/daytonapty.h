// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "daytonaapi.h"
#include "ptysession.h"

#include <QMap>
#include <QPointer>
#include <QUrl>

#include <memory>

class QWebSocket;

namespace elsai {

/// A terminal in a Daytona sandbox through the toolbox's PTY sessions (the daemon's
/// `process/pty` endpoints, as the SDK's generated toolbox client calls them):
/// - create: POST {toolbox}/process/pty {id, cwd, envs, cols, rows} → 201 {sessionId};
/// - connect: a WebSocket on {toolbox}/process/pty/{id}/connect, with the API's headers. The
///   daemon first sends a text control message {"type":"control","status":"connected"} (or
///   "error" with "error"), then the output as binary messages; input goes back as binary
///   messages; the end is a close frame whose reason is JSON {"exitCode": N, "exitReason"};
/// - resize: POST {toolbox}/process/pty/{id}/resize {cols, rows} (the latest size wins);
/// - kill: DELETE {toolbox}/process/pty/{id}.
/// The HTTP calls run on the global thread pool, never on the session's thread.
class DaytonaPtySession : public PtySession
{
    Q_OBJECT

public:
    DaytonaPtySession(QString workspaceId, daytona::DaytonaApi api, QUrl toolbox, QString cwd,
                      QMap<QString, QString> env, QObject *parent = nullptr);
    ~DaytonaPtySession() override;

    /// The daemon's session id ("elsai-…").
    QString sessionId() const { return m_id; }

protected:
    void doStart(int cols, int rows) override;
    void doWrite(const QByteArray &bytes) override;
    void doResize(int cols, int rows) override;
    void doTerminate() override;

private:
    void connectSocket();
    void onText(const QString &message);
    void onDisconnected();
    void sendResize();
    /// The daemon's part of the session goes (DELETE), whatever happens here.
    void deleteRemote();

    struct Shared; // what the pool's calls share with us (the API, the latest size)
    std::shared_ptr<Shared> m_shared;
    QString m_id;
    QString m_cwd;
    QMap<QString, QString> m_env;
    QWebSocket *m_socket = nullptr;
    bool m_connected = false;
    bool m_terminating = false;
    bool m_deleted = false;
};

/// The toolbox URL with the WebSocket scheme (http → ws, https → wss) and `path` appended.
QUrl daytonaWebSocketUrl(const QUrl &toolbox, const QString &path);

} // namespace elsai
