// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "sshpty.h"

#include "commandwrapper.h"
#include "errors.h"
#include "shellquote.h"
#include "sshconnection.h"
#include "sshsandboxbackend.h"

#include <QFileInfo>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QStandardPaths>

namespace elsai {

PtyLaunch sshPtyLaunch(const SshSandboxBackend &backend)
{
    const std::shared_ptr<ssh::SshConnection> conn = backend.connection();
    const QString root = backend.remoteWorkspace();
    if (!conn || root.isEmpty())
        throw OSError(QStringLiteral("the sandbox is not running; start it to open a terminal"));
    conn->start(); // a master that went away comes back first: never a login per terminal

    const QString program = QFileInfo(conn->target().sshProgram).isAbsolute()
                                ? conn->target().sshProgram
                                : QStandardPaths::findExecutable(conn->target().sshProgram);
    if (program.isEmpty())
        throw OSError(
            QStringLiteral("the ssh client '%1' was not found").arg(conn->target().sshProgram));
    quint64 raw[2];
    QRandomGenerator::system()->fillRange(raw);
    const QString token = QString::number(raw[0], 16) + QString::number(raw[1], 16);

    // The remote login shell reads this line: cd into the workspace, then the user's shell
    // with the session's marker (the command wrapper's ELSAI_CALL, which sweepScript() finds)
    // and the backend's variables.
    QByteArray line = "cd " + shellQuote(root.toUtf8()) +
                      " && ELSAI_CALL=" + shellQuote(token.toUtf8()) + " COLORTERM=truecolor";
    const QMap<QString, QString> &env = backend.options().env;
    for (auto it = env.cbegin(); it != env.cend(); ++it)
        line += ' ' + it.key().toUtf8() + '=' + shellQuote(it.value().toUtf8());
    line += " exec \"${SHELL:-/bin/sh}\"";

    PtyLaunch launch;
    launch.spec.arguments = {program,
                             QStringLiteral("-F"),
                             conn->configPath(),
                             QStringLiteral("-tt"),
                             QStringLiteral("-o"),
                             QStringLiteral("LogLevel=ERROR"),
                             ssh::SshConnection::alias(),
                             QString::fromUtf8(line)};
    // ssh sends TERM with its pty request: the remote side then speaks xterm-256color.
    launch.spec.environment =
        terminalEnvironment(QProcessEnvironment::systemEnvironment().toStringList());
    launch.programName = QStringLiteral("ssh %1").arg(conn->target().host);
    launch.idleNames = {QStringLiteral("ssh")};
    launch.keepAlive = conn;
    launch.cleanup = [conn, token] {
        ssh::SshConnection::Call call;
        call.remoteCommand = remote::sweepScript(token).toUtf8();
        call.timeoutMs = 15000;
        try {
            conn->run(call);
        } catch (const SandboxError &) {
            // the connection is gone, and with it the remote session's tree, mostly
        }
    };
    return launch;
}

} // namespace elsai
