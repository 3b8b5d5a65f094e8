// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QObject>
#include <QUrl>

class QTcpServer;

namespace elsai {

/// A loopback proxy into a network namespace this host cannot route to (a bwrap sandbox
/// without the network): it listens on 127.0.0.1 and relays each connection through a helper
/// that joins the namespace (`nsenter -U -n` into a process of the sandbox — ours, so
/// no privilege is needed) and connects to the port there. Lives on the thread that made it
/// (an event loop is needed); ends its relays when destroyed.
class NamespaceForward : public QObject
{
    Q_OBJECT

public:
    /// Throws OSError when nsenter is missing or no loopback port can be had.
    NamespaceForward(qint64 namespacePid, int port, QObject *parent = nullptr);
    ~NamespaceForward() override;

    qint64 namespacePid() const { return m_pid; }
    int port() const { return m_port; }
    QUrl url() const;
    int activeRelays() const { return m_relays; }

private:
    void onConnection();

    qint64 m_pid;
    int m_port;
    QString m_nsenter;
    QTcpServer *m_server;
    int m_relays = 0;
};

} // namespace elsai
