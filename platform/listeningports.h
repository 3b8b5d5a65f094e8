// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// The TCP ports processes listen on, from /proc (Linux): the Ports panel's source for the
// sandboxes whose processes run on this host.

#include <QList>
#include <QSet>
#include <QString>

namespace elsai {

struct ListeningPort
{
    QString address; ///< "127.0.0.1", "0.0.0.0", "::", "::1", …
    int port = 0;
    quint64 inode = 0; ///< the socket's inode: matched against /proc/PID/fd links
    qint64 pid = 0;    ///< a process that holds it (0: unknown)
    QString process;   ///< its name (/proc/PID/comm)

    bool operator==(const ListeningPort &) const = default;
};

/// Parses a /proc/net/tcp or tcp6 table: the sockets in state LISTEN (0A).
QList<ListeningPort> parseProcNetTcp(const QByteArray &table, bool v6);

/// The TCP listeners of the network namespace `pid` lives in (its /proc/PID/net/tcp and tcp6;
/// 0: this process's namespace).
QList<ListeningPort> tcpListeners(qint64 pid = 0);

/// Keeps the listeners whose socket one of `pids` holds open, with that process.
QList<ListeningPort> listenersOf(const QList<ListeningPort> &listeners, const QSet<qint64> &pids);

/// `roots` and all their descendants (by the parent pid in /proc/PID/stat).
QSet<qint64> processTrees(const QSet<qint64> &roots);

/// The processes whose working folder is `folder` or beneath it (canonical path).
QSet<qint64> processesWorkingIn(const QString &folder);

/// A process of the tree of `root` whose network namespace differs from ours (a bwrap
/// sandbox with its own network), or 0.
qint64 processInOtherNetworkNamespace(qint64 root);

} // namespace elsai
