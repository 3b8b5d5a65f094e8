// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "pidscgroup.h"

#include "cgroup.h"
#include "processguard.h"

#include <QAtomicInteger>
#include <QDir>
#include <QFile>
#include <QLoggingCategory>
#include <QMutex>
#include <QStringList>
#include <QThread>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcCgroup, "elsai.bwrap.cgroup", QtInfoMsg)

namespace elsai {

namespace {

using cgroup::writeFile;

/// The writable folder under which per-command cgroups with a pids controller can be made:
/// ours in the v1 pids hierarchy, else a v2 folder whose subtree has the controller — the
/// engine's own cgroup (the engine lives in a leaf of it) or, without one, ours.
QString findParentFolder()
{
    const cgroup::OwnFolders own = cgroup::ownFolders();
    if (!own.v1Pids.isEmpty()) {
        if (cgroup::writable(own.v1Pids))
            return own.v1Pids;
        qCDebug(lcCgroup) << "the pids cgroup" << own.v1Pids << "is not writable";
    }
    for (const QString &folder : {engineCgroupFolder(), own.v2}) {
        if (!folder.isEmpty() &&
            cgroup::listsController(folder + QStringLiteral("/cgroup.subtree_control"), "pids") &&
            cgroup::writable(folder))
            return folder;
    }
    if (!own.v2.isEmpty())
        qCDebug(lcCgroup) << "the cgroup v2 folder" << own.v2
                          << "has no writable pids subtree (not delegated)";
    return {};
}

QAtomicInteger<quint64> s_serial;

/// Kills every task listed in the cgroup's `cgroup.procs` (all of them are the sandbox's).
void killTasks(const QString &procsFile)
{
    cgroup::killListed(procsFile);
}

/// Folders whose last tasks were still being reaped when their command returned: removed by a
/// later create() or at exit, so that no call waits for the kernel's teardown.
class PendingRemovals
{
public:
    ~PendingRemovals() { removeAll(std::chrono::milliseconds(500)); }
    void add(const QString &folder)
    {
        QMutexLocker lock(&m_mutex);
        m_folders.append(folder);
    }
    void removeAll(std::chrono::milliseconds patience = {})
    {
        QMutexLocker lock(&m_mutex);
        const auto deadline = std::chrono::steady_clock::now() + patience;
        while (!m_folders.isEmpty()) {
            m_folders.removeIf([](const QString &f) {
                if (::rmdir(QFile::encodeName(f).constData()) == 0 || errno == ENOENT)
                    return true;
                killTasks(f + QStringLiteral("/cgroup.procs"));
                return false;
            });
            if (m_folders.isEmpty() || std::chrono::steady_clock::now() >= deadline)
                break;
            QThread::msleep(2);
        }
        for (const QString &f : std::as_const(m_folders)) {
            if (patience.count() > 0)
                qCWarning(lcCgroup) << "cannot remove the cgroup" << f;
        }
    }

private:
    QMutex m_mutex;
    QStringList m_folders;
};

PendingRemovals &pendingRemovals()
{
    static PendingRemovals pending;
    return pending;
}

} // namespace

QString PidsCgroup::parentFolder()
{
    static const QString folder = findParentFolder();
    return folder;
}

std::unique_ptr<PidsCgroup> PidsCgroup::create(int maxPids)
{
    const QString parent = parentFolder();
    if (parent.isEmpty())
        return nullptr;
    pendingRemovals().removeAll();
    const QString folder = QStringLiteral("%1/elsai-%2-%3")
                               .arg(parent)
                               .arg(::getpid())
                               .arg(s_serial.fetchAndAddRelaxed(1));
    if (::mkdir(QFile::encodeName(folder).constData(), 0755) != 0) {
        qCWarning(lcCgroup) << "cannot create the cgroup" << folder << ::strerror(errno);
        return nullptr;
    }
    std::unique_ptr<PidsCgroup> cg(new PidsCgroup(folder));
    if (!writeFile(folder + QStringLiteral("/pids.max"), QByteArray::number(maxPids))) {
        qCWarning(lcCgroup) << "cannot set pids.max in" << folder;
        return nullptr; // the destructor removes the folder
    }
    return cg;
}

QString PidsCgroup::joinFile() const
{
    const QString tasks = m_folder + QStringLiteral("/tasks");
    return QFile::exists(tasks) ? tasks : procsFile();
}

PidsCgroup::~PidsCgroup()
{
    if (::rmdir(QFile::encodeName(m_folder).constData()) == 0 || errno == ENOENT)
        return;
    // A pid namespace that lost its init is torn down by the kernel asynchronously, and the
    // tasks of a finished command may still be being reaped: make sure they die, and remove
    // the folder later.
    killTasks(procsFile());
    pendingRemovals().add(m_folder);
}

} // namespace elsai
