// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// Small helpers shared by the engine tests.

#include "audit.h"
#include "backend.h"
#include "sandboxplugin.h"

#include <QByteArray>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QList>
#include <QMutex>
#include <QString>
#include <QTemporaryDir>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

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

/// Copies the files beneath `source` (hidden ones too) to `dest`, each written anew: every
/// copy of a tree has the same contents and modes (a sample project for a test to change).
inline void copyFiles(const QString &source, const QString &dest)
{
    QDirIterator it(source, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString file = it.next();
        writeHostFile(dest + file.mid(source.size()), readHostFile(file));
    }
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

/// A process's state letter and parent, from /proc/<pid>/stat; none when it is gone.
struct ProcStat
{
    char state = 0; ///< R, S, D, Z (zombie), X (dead), …
    pid_t parent = 0;
};
inline std::optional<ProcStat> procStat(pid_t pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QByteArray s = stat.readAll();
    const qsizetype close = s.lastIndexOf(')'); // the name may hold anything
    if (close < 0)
        return std::nullopt;
    const QList<QByteArray> fields = s.mid(close + 2).split(' ');
    if (fields.size() < 2 || fields.at(0).isEmpty())
        return std::nullopt;
    return ProcStat{fields.at(0).at(0), pid_t(fields.at(1).toInt())};
}

/// Every process of /proc for which `match(pid)` holds (one scan).
inline QList<pid_t> processesWhere(const std::function<bool(pid_t)> &match)
{
    QList<pid_t> found;
    const QStringList pids = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &pid : pids) {
        if (!pid.isEmpty() && pid.at(0).isDigit() && match(pid_t(pid.toInt())))
            found.append(pid_t(pid.toInt()));
    }
    return found;
}

/// The processes whose command line (NUL-separated arguments, e.g. "sleep\0" "300") holds
/// every one of `parts`. Zombies have none, so only live processes are found.
inline QList<pid_t> processesWith(const QList<QByteArray> &parts)
{
    return processesWhere([&](pid_t pid) {
        QFile file(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (!file.open(QIODevice::ReadOnly))
            return false;
        const QByteArray cmdline = file.readAll();
        return !cmdline.isEmpty() &&
               std::all_of(parts.begin(), parts.end(),
                           [&](const QByteArray &p) { return cmdline.contains(p); });
    });
}

/// The live (not zombie) children of `parent`.
inline QList<pid_t> liveChildrenOf(pid_t parent)
{
    return processesWhere([&](pid_t pid) {
        const auto st = procStat(pid);
        return st && st->parent == parent && st->state != 'Z' && st->state != 'X';
    });
}

} // namespace elsai::test
