// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "localtar.h"

#include "process.h"
#include "shellquote.h"

#include <QFile>
#include <QProcessEnvironment>

namespace elsai::remote {

QStringList runLocalTar(const QStringList &args)
{
    QByteArray line = "exec tar";
    for (const QString &a : args)
        line += ' ' + shellQuote(a.toUtf8());
    ProcessSpec spec;
    spec.command = QString::fromUtf8(line);
    spec.environment = QProcessEnvironment::systemEnvironment().toStringList();
    spec.timeoutMs = 0;
    spec.maxOutputBytes = 1 << 20;
    const ProcessOutcome o = runProcess(spec);
    QStringList errors;
    if (o.exitCode != 0) {
        for (const QByteArray &l : o.stderrData.split('\n')) {
            if (!l.trimmed().isEmpty())
                errors << QStringLiteral("local tar: ") + QString::fromUtf8(l);
        }
        if (errors.isEmpty())
            errors << QStringLiteral("local tar failed with exit code %1").arg(o.exitCode);
    }
    return errors;
}

bool writeLocalFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

} // namespace elsai::remote
