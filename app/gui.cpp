#include "gui.h"

#include "audit.h"
#include "consolehistorymodel.h"
#include "errors.h"
#include "mainwindow.h"
#include "sandboxcontroller.h"
#include "sessionoptions.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QIcon>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QTextStream>

#include <cstdlib>

namespace elsai {

namespace {

void printError(const QString &text)
{
    QTextStream(stderr) << "elsai-workbench: " << text << Qt::endl;
}

bool isSetEnv(const char *name)
{
    const char *value = std::getenv(name);
    return value && *value;
}

/// Copies the bundled sample project (Qt resource) into `dest`; false when it is missing.
bool extractSampleProject(const QString &dest)
{
    const QString root = QStringLiteral(":/sample-project");
    if (!QDir(root).exists())
        return false;
    QDirIterator it(root, QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    bool any = false;
    while (it.hasNext()) {
        const QString source = it.next();
        const QString target = QDir(dest).filePath(source.mid(root.size() + 1));
        QDir().mkpath(QFileInfo(target).absolutePath());
        if (!QFile::copy(source, target))
            return false;
        // Resource files copy read-only; the demo project must be writable (flush target).
        QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup
                                          | QFile::ReadOther);
        any = true;
    }
    return any;
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
    QApplication::setDesktopFileName(QStringLiteral("elsai-workbench"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/elsai-workbench.svg")));

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

    AuditSinkPtr auditSink;
    if (!options.auditLog.isEmpty()) {
        try {
            auditSink = std::make_shared<JsonLinesAuditSink>(options.auditLog);
            AuditLog::instance().addSink(auditSink);
        } catch (const SandboxError &e) {
            printError(e.display());
            return 1;
        }
    }

    // No project and no folder given: a demo sandbox on the bundled sample project.
    QTemporaryDir sampleDir;
    const bool demo = !options.spec.seedFrom && options.spec.workspaceRoot.isEmpty();
    if (demo) {
        QString source;
        if (sampleDir.isValid() && extractSampleProject(sampleDir.path()))
            source = sampleDir.path();
#ifdef ELSAI_SOURCE_DIR
        else if (QDir(QStringLiteral(ELSAI_SOURCE_DIR "/resources/sample-project")).exists())
            source = QStringLiteral(ELSAI_SOURCE_DIR "/resources/sample-project");
#endif
        if (!source.isEmpty())
            options.spec.seedFrom = source;
        if (!parser.isSet(QStringLiteral("workspace-id")))
            options.spec.workspaceId = QStringLiteral("demo");
    }

    int status = 0;
    {
        SandboxController controller;
        MainWindow window(&controller);
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
        status = QApplication::exec();
    }
    if (auditSink)
        AuditLog::instance().removeSink(auditSink);
    return status;
}

} // namespace elsai
