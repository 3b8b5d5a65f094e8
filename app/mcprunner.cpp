// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcprunner.h"

#include "clientconfig.h"
#include "errors.h"
#include "mcphttpserver.h"
#include "mcpstdioserver.h"
#include "recording.h"
#include "sessionoptions.h"
#include "shutdownsignals.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace elsai {

std::pair<QHostAddress, quint16> parseMcpHttpAddress(const QString &value)
{
    QString host = QStringLiteral("127.0.0.1");
    QString port = value;
    const qsizetype colon = value.lastIndexOf(QLatin1Char(':'));
    if (colon >= 0) {
        host = value.left(colon);
        port = value.mid(colon + 1);
        if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
            host = host.mid(1, host.size() - 2);
        if (host == QLatin1String("localhost"))
            host = QStringLiteral("127.0.0.1");
    }
    bool ok = false;
    const uint p = port.toUInt(&ok);
    if (!ok || p > 65535)
        throw ValueError(
            QStringLiteral("--mcp-http needs [HOST:]PORT with a port 0-65535, got '%1'")
                .arg(value));
    const QHostAddress address(host);
    if (address.isNull())
        throw ValueError(QStringLiteral("--mcp-http: '%1' is not an IP address (use 127.0.0.1, "
                                        "::1 or the address of an interface)")
                             .arg(host));
    return {address, quint16(p)};
}

namespace {

QList<McpAgentSpec> parseAgents(const SessionOptions &options)
{
    QList<McpAgentSpec> agents;
    for (const QString &value : options.mcpAgents)
        agents.append(McpAgentSpec::parse(value));
    if (agents.isEmpty())
        throw ValueError(QStringLiteral("declare the MCP agent(s) with --mcp-agent "
                                        "NAME=read_write|read_only[:TOKEN]"));
    if (options.mcpStdio && agents.size() != 1)
        throw ValueError(QStringLiteral("--mcp-stdio serves exactly one agent; give one "
                                        "--mcp-agent"));
    return agents;
}

std::chrono::milliseconds progressInterval(const SessionOptions &options)
{
    // At most an hour: a bigger value would only overflow.
    return std::chrono::milliseconds(qint64(qMin(options.mcpProgressInterval, 3600.0) * 1000));
}

// The clients --mcp-config names (ValueError for an unknown one, naming the known ones).
QStringList configClients(const QString &value)
{
    QStringList ids;
    for (const McpClientKind &k : mcpClientKinds())
        ids.append(k.id);
    if (value == QLatin1String("all"))
        return ids;
    if (!ids.contains(value))
        mcpClientConfig(value, McpClientTransport::Http, {}); // throws, naming them
    return {value};
}

// Every client's configuration for every agent, as --mcp-config prints it.
QString configText(const QStringList &clients, const QList<McpAgentSpec> &agents,
                   McpClientTransport transport, const McpClientTarget &base)
{
    QString out;
    for (const McpAgentSpec &a : agents) {
        McpClientTarget t = base;
        t.agent = a.name;
        t.token = a.token;
        t.arguments.append({QStringLiteral("--mcp-stdio"), QStringLiteral("--mcp-agent"),
                            a.name + QLatin1Char('=') + toString(a.mode)});
        for (const QString &client : clients) {
            const auto kind = std::find_if(mcpClientKinds().cbegin(), mcpClientKinds().cend(),
                                           [&](const McpClientKind &k) { return k.id == client; });
            out += QStringLiteral("## %1, agent %2 (%3), %4\n")
                       .arg(kind->name, a.name, toString(a.mode),
                            transport == McpClientTransport::Http ? QStringLiteral("HTTP")
                                                                  : QStringLiteral("stdio"));
            out += mcpClientConfigText(mcpClientConfig(client, transport, t)) + QLatin1Char('\n');
        }
    }
    return out;
}

// The options that serve this sandbox again, for a stdio configuration: the command line
// without the MCP options (the configuration adds its own agent's).
QStringList sandboxArguments()
{
    static const QStringList dropWithValue{QStringLiteral("--mcp-config"),
                                           QStringLiteral("--mcp-agent"),
                                           QStringLiteral("--mcp-http")};
    static const QStringList drop{QStringLiteral("--mcp-stdio"),
                                  QStringLiteral("--mcp-allow-remote")};
    const QStringList all = QCoreApplication::arguments().mid(1);
    QStringList out;
    for (qsizetype i = 0; i < all.size(); ++i) {
        const QString &a = all.at(i);
        const QString name = a.section(QLatin1Char('='), 0, 0);
        if (dropWithValue.contains(name)) {
            if (!a.contains(QLatin1Char('=')))
                ++i;
            continue;
        }
        if (!drop.contains(a))
            out.append(a);
    }
    return out;
}

} // namespace

int runMcp(const SessionOptions &options, const SandboxPtr &sandbox, HeadlessRecording &recording)
{
    if (options.mcpStdio && !options.mcpHttp.isEmpty()) {
        printError(QStringLiteral("--mcp-stdio and --mcp-http cannot be combined; pick one"));
        return 2;
    }
    QList<McpAgentSpec> agents;
    std::pair<QHostAddress, quint16> address;
    QStringList configFor;
    try {
        agents = parseAgents(options);
        if (!options.mcpHttp.isEmpty())
            address = parseMcpHttpAddress(options.mcpHttp);
        if (!options.mcpConfig.isEmpty())
            configFor = configClients(options.mcpConfig);
    } catch (const SandboxError &e) {
        printError(e.display());
        return 2;
    }
    if (!configFor.isEmpty() && options.mcpStdio) {
        // The client starts the server itself: print how, and leave the sandbox alone.
        McpClientTarget base;
        base.program = QCoreApplication::applicationFilePath();
        base.arguments = sandboxArguments();
        std::fputs(
            configText(configFor, agents, McpClientTransport::Stdio, base).toUtf8().constData(),
            stdout);
        return 0;
    }
    // A client that hangs up must not kill the server with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);

    if (const auto seed = sandbox->start(); seed && !seed->success()) {
        for (const QString &e : seed->errors)
            printError(QStringLiteral("seeding: ") + e);
    }
    if (!recording.begin(sandbox)) {
        sandbox->stop(false);
        return 2;
    }
    int status = 0;
    if (options.mcpStdio) {
        McpStdioServer server(sandbox, agents.first(), options.offloadPolicy());
        server.setProgressInterval(progressInterval(options));
        QObject::connect(&server, &McpStdioServer::finished, QCoreApplication::instance(),
                         &QCoreApplication::quit);
        installShutdownSignals(ShutdownExit::EventLoop);
        server.start();
        status = QCoreApplication::exec();
    } else {
        McpHttpServer server(sandbox, agents, options.offloadPolicy());
        server.setProgressInterval(progressInterval(options));
        try {
            server.listen(address.first, address.second, options.mcpAllowRemote);
        } catch (const SandboxError &e) {
            printError(e.display());
            sandbox->stop(false);
            return 2;
        }
        // Keys in the documented order (QJsonObject would sort them).
        auto str = [](const QString &v) {
            const QByteArray a = QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact);
            return a.mid(1, a.size() - 2); // the quoted, escaped string
        };
        if (!configFor.isEmpty()) {
            McpClientTarget base;
            base.url = server.url();
            std::fputs(
                configText(configFor, agents, McpClientTransport::Http, base).toUtf8().constData(),
                stdout);
        }
        for (const McpAgentSpec &a : configFor.isEmpty() ? agents : QList<McpAgentSpec>{}) {
            const QByteArray line =
                "{\"agent\":" + str(a.name) + ",\"mode\":" + str(toString(a.mode)) +
                ",\"url\":" + str(server.url().toString()) + ",\"token\":" + str(a.token) + "}\n";
            std::fputs(line.constData(), stdout);
        }
        std::fflush(stdout);
        installShutdownSignals(ShutdownExit::EventLoop);
        status = QCoreApplication::exec();
        server.close();
    }
    status = recording.finish(status);
    sandbox->stop(false);
    return status;
}

} // namespace elsai
