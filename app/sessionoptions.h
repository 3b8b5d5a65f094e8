#pragma once

#include "offload.h"
#include "sandbox.h"

#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

class QCommandLineParser;

namespace elsai {

/// The sandbox the command line describes (--workspace-id, --seed-from, …), shared by the
/// headless runner and the window.
struct SessionOptions
{
    enum class Mode { Headless, Gui };

    QString workspaceId = QStringLiteral("workbench");
    QString workspaceRoot; ///< empty: a new folder under the temp folder, kept after exit
    std::optional<QString> seedFrom;
    QStringList seedExclude;
    std::optional<QStringList> syncInclude;
    std::optional<QString> syncDest;
    std::optional<double> ttlSeconds = 7200;
    double timeout = 120;
    qint64 maxOutputBytes = 100000;
    bool inheritEnv = true;
    QMap<QString, QString> env;
    QString backend = QStringLiteral("local");
    QString auditLog;

    QStringList execCommands;
    QString scriptPath;

    bool offload = false;
    QString offloadDir;
    qint64 offloadMaxTokens = 2500;
    qint64 offloadPreviewTokens = 1000;

    /// Adds every option (and --help, --version) to the parser.
    static void describe(QCommandLineParser &parser, Mode mode);
    /// Reads the parsed options; ValueError on a bad value (message names the option).
    static SessionOptions fromParser(const QCommandLineParser &parser);

    /// Builds the backend and the sandbox (not started). Fills workspaceRoot when empty.
    SandboxPtr createSandbox();
    std::optional<SandboxOutputOffloadPolicy> offloadPolicy() const;
};

} // namespace elsai
