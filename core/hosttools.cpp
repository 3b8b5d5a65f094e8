// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "hosttools.h"

#include "errors.h"
#include "fdutil.h"
#include "hostfiles.h"
#include "process.h"
#include "sandboxplugin.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QProcessEnvironment>

#include <fcntl.h>

namespace elsai {

static ToolResult runOnHost(const QString &command, const std::optional<QString> &cwd,
                            std::optional<double> timeout)
{
    ProcessSpec spec;
    spec.command = command;
    spec.environment = QProcessEnvironment::systemEnvironment().toStringList();
    spec.timeoutMs = static_cast<int>(timeout.value_or(120) * 1000);
    UniqueFd cwdFd;
    if (cwd) {
        cwdFd.reset(
            ::open(QFile::encodeName(*cwd).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!cwdFd.isValid())
            throwOsError(errno, QStringLiteral("cannot use working folder"), *cwd);
    }
    spec.cwdFd = cwdFd.get();
    const ExecuteResult r = toExecuteResult(runProcess(spec));
    return {formatExecuteResult(r), r.toJson(), false};
}

static QJsonObject str(const char *description)
{
    return {{QStringLiteral("type"), QStringLiteral("string")},
            {QStringLiteral("description"), QString::fromUtf8(description)}};
}

static QJsonObject num(const char *description)
{
    return {{QStringLiteral("type"), QStringLiteral("number")},
            {QStringLiteral("description"), QString::fromUtf8(description)}};
}

QList<Tool> hostExecutionTools()
{
    QList<Tool> tools;
    const QString provider = QStringLiteral("host");

    tools.append({QStringLiteral("shell"),
                  QStringLiteral("Run a shell command on the HOST machine (not sandboxed)."),
                  objectSchema({{QStringLiteral("command"), str("Shell command.")},
                                {QStringLiteral("cwd"), str("Host working folder.")},
                                {QStringLiteral("timeout"), num("Seconds (default 120).")}},
                               {QStringLiteral("command")}),
                  provider, [](Agent &, const QJsonObject &a) {
                      const QString t = QStringLiteral("shell");
                      return runOnHost(args::requiredString(a, QStringLiteral("command"), t),
                                       args::optionalString(a, QStringLiteral("cwd"), t),
                                       args::optionalNumber(a, QStringLiteral("timeout"), t));
                  }});

    tools.append({QStringLiteral("python_repl"),
                  QStringLiteral("Run Python code with python3 on the HOST machine."),
                  objectSchema({{QStringLiteral("code"), str("Python source.")},
                                {QStringLiteral("timeout"), num("Seconds (default 120).")}},
                               {QStringLiteral("code")}),
                  provider, [](Agent &, const QJsonObject &a) {
                      const QString t = QStringLiteral("python_repl");
                      QString code = args::requiredString(a, QStringLiteral("code"), t);
                      // Single-quote for sh: ' becomes '\''.
                      code.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
                      return runOnHost(QStringLiteral("exec python3 -c '%1'").arg(code),
                                       std::nullopt,
                                       args::optionalNumber(a, QStringLiteral("timeout"), t));
                  }});

    tools.append(
        {QStringLiteral("file_read"), QStringLiteral("Read a text file of the HOST."),
         objectSchema({{QStringLiteral("path"), str("Host path.")}}, {QStringLiteral("path")}),
         provider, [](Agent &, const QJsonObject &a) {
             const QString path =
                 args::requiredString(a, QStringLiteral("path"), QStringLiteral("file_read"));
             QFile f(path);
             if (QFileInfo(path).isDir())
                 throwOsError(EISDIR, QStringLiteral("cannot read"), path);
             if (!f.open(QIODevice::ReadOnly))
                 throwOsError(QFileInfo::exists(path) ? EACCES : ENOENT,
                              QStringLiteral("cannot read"), path);
             const QString text = QString::fromUtf8(f.readAll());
             return ToolResult{text, {{QStringLiteral("content"), text}}, false};
         }});

    tools.append(
        {QStringLiteral("file_write"),
         QStringLiteral("Write a text file of the HOST (atomic replace)."),
         objectSchema({{QStringLiteral("path"), str("Host path.")},
                       {QStringLiteral("content"), str("Text content.")}},
                      {QStringLiteral("path"), QStringLiteral("content")}),
         provider, [](Agent &, const QJsonObject &a) {
             const QString t = QStringLiteral("file_write");
             const QString path = args::requiredString(a, QStringLiteral("path"), t);
             const QByteArray data = args::requiredString(a, QStringLiteral("content"), t).toUtf8();
             // The host is trusted here (this tool exists only outside sandbox mode).
             writeHostFileAtomic(path, data);
             return ToolResult{QStringLiteral("Wrote %1 bytes to %2").arg(data.size()).arg(path),
                               {{QStringLiteral("bytes"), data.size()}},
                               false};
         }});

    tools.append(
        {QStringLiteral("environment"),
         QStringLiteral("Read the HOST environment: one variable by name, or the list "
                        "of variable names."),
         objectSchema({{QStringLiteral("name"), str("Variable name (optional).")}}, {}), provider,
         [](Agent &, const QJsonObject &a) {
             const auto env = QProcessEnvironment::systemEnvironment();
             if (const auto name = args::optionalString(a, QStringLiteral("name"),
                                                        QStringLiteral("environment"))) {
                 if (!env.contains(*name))
                     throw ValueError(QStringLiteral("environment: no variable '%1'").arg(*name));
                 const QString v = env.value(*name);
                 return ToolResult{v, {{QStringLiteral("value"), v}}, false};
             }
             QStringList keys = env.keys();
             keys.sort();
             return ToolResult{keys.join(QLatin1Char('\n')),
                               {{QStringLiteral("names"), QJsonArray::fromStringList(keys)}},
                               false};
         }});
    return tools;
}

} // namespace elsai
