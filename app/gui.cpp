// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "gui.h"

#include "agentplanpanel.h"
#include "appsettings.h"
#include "audit.h"
#include "consolehistorymodel.h"
#include "demo.h"
#include "errors.h"
#include "mainwindow.h"
#include "sandboxcontroller.h"
#include "sessionoptions.h"
#include "shutdownsignals.h"

#include <QApplication>
#include <QComboBox>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QIcon>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QTextStream>

#include <cstdlib>
#include <memory>

namespace elsai {

namespace {

bool isSetEnv(const char *name)
{
    const char *value = std::getenv(name);
    return value && *value;
}

void startPlanInWindow(AgentPlanPanel &plans, const SessionOptions &options,
                       SandboxController &controller)
{
    if (!plans.loadPlan(options.runAgent))
        return; // the dock shows why
    if (options.agentMode)
        plans.modeBox()->setCurrentIndex(plans.modeBox()->findData(int(*options.agentMode)));
    plans.runner()->setAgentName(options.agentName);
    if (auto *dock = qobject_cast<QDockWidget *>(plans.parentWidget())) {
        dock->show();
        dock->raise();
    }
    const QString id = options.spec.workspaceId;
    auto played = std::make_shared<bool>(false); // once: a restarted sandbox does not replay
    QObject::connect(&controller, &SandboxController::sandboxStarted, &plans,
                     [&plans, id, played](const QString &started) {
                         if (started != id || *played)
                             return;
                         *played = true;
                         plans.runner()->play();
                     });
}

} // namespace

bool noDisplay()
{
    return !isSetEnv("DISPLAY") && !isSetEnv("WAYLAND_DISPLAY") && !isSetEnv("QT_QPA_PLATFORM");
}

int runGui(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("elsai"));
    QApplication::setApplicationName(QStringLiteral("elsai-workbench"));
    QApplication::setApplicationDisplayName(QStringLiteral("elsai workbench"));
    QApplication::setApplicationVersion(QStringLiteral(ELSAI_VERSION));
    QApplication::setDesktopFileName(QStringLiteral(ELSAI_APP_ID));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/elsai-workbench.svg")));
    installShutdownSignals(ShutdownExit::EventLoop);

    QCommandLineParser parser;
    SessionOptions::describe(parser, SessionOptions::Mode::Gui);
    parser.process(app);
    if (!parser.isSet(QStringLiteral("verbose")))
        QLoggingCategory::setFilterRules(QStringLiteral("elsai.sandbox.audit.info=false"));

    SessionOptions options;
    try {
        options = SessionOptions::fromParser(parser);
    } catch (const SandboxError &e) {
        printError(e.display());
        return 2;
    }
    if (options.wantsMcp()) {
        printError(QStringLiteral("--mcp-http and --mcp-stdio run with --headless; the window "
                                  "serves MCP from its MCP dock"));
        return 2;
    }
    if (!options.recordFile.isEmpty()) {
        printError(QStringLiteral("--record runs with --headless; the window records with "
                                  "Sandbox → Record Session…"));
        return 2;
    }

    AuditSinkPtr auditSink;
    try {
        auditSink = options.installAuditLog();
    } catch (const SandboxError &e) {
        printError(e.display());
        return 1;
    }

    // No project and no folder given: a demo sandbox on the bundled sample project.
    QTemporaryDir sampleDir;
    const bool demo =
        applyDemoDefaults(options, parser.isSet(QStringLiteral("workspace-id")), sampleDir);
    // The theme chosen in Settings (light, dark, or the system's), before any window shows.
    AppSettings::applyTheme(AppSettings::instance()->theme());

    int status = 0;
    {
        SandboxController controller;
        MainWindow window(&controller);
        // File > New Sandbox starts from the command line's sandbox, also when it failed.
        window.setNewSandboxSpec(options.spec);
        if (demo) // the welcome page suggests the demo's three steps
            window.setDemoWorkspace(options.spec.workspaceId);
        window.show();
        try {
            controller.addSandbox(options.spec);
        } catch (const SandboxError &e) {
            // The window still opens: File > New Sandbox can fix what the options got wrong.
            printError(e.display());
        }

        // --exec in the window: run the commands one after another in the console once the
        // sandbox has started.
        const QString id = options.spec.workspaceId;
        QStringList pending = options.execCommands;
        auto runNext = [&controller, &pending, id] {
            if (!pending.isEmpty())
                controller.execute(id, pending.takeFirst());
        };
        QObject::connect(&controller, &SandboxController::sandboxStarted, &controller,
                         [runNext, id](const QString &started) {
                             if (started == id)
                                 runNext();
                         });
        QObject::connect(&controller, &SandboxController::commandFinished, &controller,
                         [runNext, id](const QString &ws) {
                             if (ws == id)
                                 runNext();
                         });
        // --run-agent in the window: the plan waits in the Scripted Agent dock and plays once
        // the sandbox has started.
        auto *plans = window.findChild<AgentPlanPanel *>();
        if (plans && !options.runAgent.isEmpty())
            startPlanInWindow(*plans, options, controller);
        status = QApplication::exec();
        // Whatever ended the loop (Quit, a signal): the same teardown, in its order, before the
        // window (views) and then the controller (models) are destroyed.
        window.shutdown();
    }
    if (auditSink)
        AuditLog::instance().removeSink(auditSink);
    return status;
}

} // namespace elsai
