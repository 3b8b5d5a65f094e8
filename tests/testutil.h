// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// Small helpers shared by the engine tests.

#include "audit.h"
#include "backend.h"
#include "sandboxplugin.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QList>
#include <QMutex>
#include <QString>
#include <QTemporaryDir>

#include <functional>
#include <memory>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace elsai::test {

/// Writes a host file (making its folders); a failure ends the test run. Returns true, so
/// that it also reads well inside QVERIFY.
inline bool writeHostFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(data) != data.size())
        qFatal("cannot write %s", qPrintable(path));
    return true;
}

inline QByteArray readHostFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return QByteArray("<missing>");
    return f.readAll();
}

/// The sandbox tools an agent attached in `mode` gets on a backend that runs commands, sorted
/// as ToolRegistry::names() lists them (tst_sandboxplugin pins the set itself).
inline QStringList sortedSandboxTools(SandboxAttachMode mode)
{
    QStringList names = SandboxPlugin::toolNames(mode, true);
    names.sort();
    return names;
}

/// Collects audit events while alive.
class AuditCapture
{
public:
    AuditCapture()
        : m_sink(std::make_shared<CallbackAuditSink>([this](const AuditEvent &e) {
              QMutexLocker lock(&m_mutex);
              m_events.append(e);
          }))
    {
        AuditLog::instance().addSink(m_sink);
    }
    ~AuditCapture() { AuditLog::instance().removeSink(m_sink); }

    QList<AuditEvent> events() const
    {
        QMutexLocker lock(&m_mutex);
        return m_events;
    }
    QStringList names() const
    {
        QStringList out;
        for (const AuditEvent &e : events())
            out.append(e.event);
        return out;
    }
    QList<AuditEvent> named(const QString &event) const
    {
        QList<AuditEvent> out;
        for (const AuditEvent &e : events()) {
            if (e.event == event)
                out.append(e);
        }
        return out;
    }
    void clear()
    {
        QMutexLocker lock(&m_mutex);
        m_events.clear();
    }

private:
    mutable QMutex m_mutex;
    QList<AuditEvent> m_events;
    AuditSinkPtr m_sink;
};

/// Points the remote backends' persisted flush bases (platform/flushbase.h) at a folder of this
/// test process, removed at exit, unless ELSAI_FLUSH_BASE_DIR is set already: tests never
/// write to the user's data folder, and never see a base of another run.
inline void isolateFlushBases()
{
    static QTemporaryDir bases;
    if (qEnvironmentVariableIsEmpty("ELSAI_FLUSH_BASE_DIR") && bases.isValid())
        qputenv("ELSAI_FLUSH_BASE_DIR", QFile::encodeName(bases.path()));
}

/// True in an AddressSanitizer build, which reserves terabytes of address space: RLIMIT_AS
/// cannot be used there.
constexpr bool addressSanitized()
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

/// The address space this process maps now (VmSize), in bytes; -1 when unknown.
inline qint64 mappedBytes()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmSize:"))
            return line.mid(7).trimmed().split(' ').value(0).toLongLong() * 1024;
    }
    return -1;
}

/// Runs `body` in a forked child whose address space is limited to `limit(mappedBytes())`
/// bytes, so that a limit (and an abort on std::bad_alloc) cannot hurt the test process.
/// Returns the child's exit status: body's result, 2 for an exception, 3 when the limit could
/// not be set; -1 when the child died of a signal (an abort).
inline int exitStatusUnderAddressLimit(const std::function<qint64(qint64)> &limit,
                                       const std::function<int()> &body)
{
    const pid_t child = ::fork();
    if (child < 0)
        return -1;
    if (child == 0) {
        const qint64 mapped = mappedBytes();
        const rlimit rl{rlim_t(limit(mapped)), rlim_t(limit(mapped))};
        if (mapped <= 0 || ::setrlimit(RLIMIT_AS, &rl) != 0)
            ::_exit(3);
        int code = 0;
        try {
            code = body();
        } catch (...) {
            code = 2;
        }
        ::_exit(code);
    }
    int wstatus = 0;
    if (::waitpid(child, &wstatus, 0) != child || !WIFEXITED(wstatus))
        return -1;
    return WEXITSTATUS(wstatus);
}

} // namespace elsai::test
