// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "namespaceforward.h"

#include "errors.h"
#include "processguard.h"

#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>

namespace elsai {

NamespaceForward::NamespaceForward(qint64 namespacePid, int port, QObject *parent)
    : QObject(parent), m_pid(namespacePid), m_port(port), m_server(new QTcpServer(this))
{
    m_nsenter = QStandardPaths::findExecutable(QStringLiteral("nsenter"));
    if (m_nsenter.isEmpty())
        throw OSError(QStringLiteral("nsenter (util-linux) was not found: the sandbox's ports "
                                     "cannot be reached from this host"));
    if (!m_server->listen(QHostAddress::LocalHost, 0))
        throw OSError(
            QStringLiteral("no loopback port for the proxy: %1").arg(m_server->errorString()));
    connect(m_server, &QTcpServer::newConnection, this, &NamespaceForward::onConnection);
}

NamespaceForward::~NamespaceForward()
{
    // The relays are children: QProcess's destructor kills them.
}

QUrl NamespaceForward::url() const
{
    return QUrl(QStringLiteral("http://127.0.0.1:%1/").arg(m_server->serverPort()));
}

void NamespaceForward::onConnection()
{
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        socket->setParent(this);
        auto *relay = new QProcess(this);
        QProcessEnvironment env;
        env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
        const QByteArray marker = engineHelperMarker(); // dies with the engine
        const qsizetype eq = marker.indexOf('=');
        env.insert(QString::fromLatin1(marker.left(eq)), QString::fromLatin1(marker.mid(eq + 1)));
        relay->setProcessEnvironment(env);
        relay->setProcessChannelMode(QProcess::SeparateChannels);
        // Inside the namespace: a bash /dev/tcp connection, copied both ways.
        const QString script = QStringLiteral("exec 3<>/dev/tcp/127.0.0.1/%1 || exit 1; "
                                              "cat <&3 & cat >&3; kill $! 2>/dev/null")
                                   .arg(m_port);
        relay->setProgram(m_nsenter);
        relay->setArguments({QStringLiteral("--target"), QString::number(m_pid),
                             QStringLiteral("--user"), QStringLiteral("--net"),
                             QStringLiteral("--preserve-credentials"), QStringLiteral("--"),
                             QStringLiteral("/bin/bash"), QStringLiteral("-c"), script});
        ++m_relays;
        connect(socket, &QTcpSocket::readyRead, relay,
                [socket, relay] { relay->write(socket->readAll()); });
        connect(relay, &QProcess::readyReadStandardOutput, socket,
                [socket, relay] { socket->write(relay->readAllStandardOutput()); });
        connect(socket, &QTcpSocket::disconnected, relay, [relay] { relay->closeWriteChannel(); });
        connect(relay, &QProcess::finished, this, [this, socket, relay] {
            socket->write(relay->readAllStandardOutput());
            socket->disconnectFromHost();
            socket->deleteLater();
            relay->deleteLater();
            --m_relays;
        });
        relay->start();
    }
}

} // namespace elsai
