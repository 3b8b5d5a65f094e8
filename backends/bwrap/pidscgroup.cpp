#include "pidscgroup.h"

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

QByteArray readSmallFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

bool writeSmallFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Unbuffered) && f.write(data) == data.size();
}

/// Our cgroup path in the hierarchy whose /proc/self/cgroup line has `controllers` (v1:
/// "pids"; v2: empty).
QString ownCgroupPath(const QByteArray &controllers)
{
    for (const QByteArray &line : readSmallFile(QStringLiteral("/proc/self/cgroup")).split('\n')) {
        const QList<QByteArray> parts = line.split(':');
        if (parts.size() >= 3 &&
            (parts[1] == controllers ||
             (!controllers.isEmpty() && parts[1].split(',').contains(controllers))))
            return QString::fromUtf8(line.mid(parts[0].size() + parts[1].size() + 2));
    }
    return {};
}

/// The writable folder under which per-command cgroups with a pids controller can be made.
QString findParentFolder()
{
    // mountinfo: id parent dev root mountpoint options [optional…] - fstype source superoptions
    const QByteArray info = readSmallFile(QStringLiteral("/proc/self/mountinfo"));
    QString v1, v2;
    QString v1Root, v2Root;
    for (const QByteArray &line : info.split('\n')) {
        const int dash = line.indexOf(" - ");
        if (dash < 0)
            continue;
        const QList<QByteArray> left = line.left(dash).split(' ');
        const QList<QByteArray> right = line.mid(dash + 3).split(' ');
        if (left.size() < 5 || right.size() < 3)
            continue;
        if (right[0] == "cgroup" && right[2].split(',').contains("pids")) {
            v1 = QString::fromUtf8(left[4]);
            v1Root = QString::fromUtf8(left[3]);
        } else if (right[0] == "cgroup2") {
            v2 = QString::fromUtf8(left[4]);
            v2Root = QString::fromUtf8(left[3]);
        }
    }
    const auto folderOf = [](const QString &mount, const QString &root, QString own) {
        // Inside a container the mount's root is our own cgroup: strip it.
        if (root != QLatin1String("/") && own.startsWith(root))
            own = own.mid(root.size());
        return QDir::cleanPath(mount + QLatin1Char('/') + own);
    };
    if (!v1.isEmpty()) {
        const QString folder = folderOf(v1, v1Root, ownCgroupPath("pids"));
        if (::access(QFile::encodeName(folder).constData(), W_OK) == 0)
            return folder;
        qCDebug(lcCgroup) << "the pids cgroup" << folder << "is not writable";
    }
    if (!v2.isEmpty()) {
        const QString folder = folderOf(v2, v2Root, ownCgroupPath(QByteArray()));
        const QByteArray subtree =
            readSmallFile(folder + QStringLiteral("/cgroup.subtree_control"));
        if (subtree.trimmed().split(' ').contains("pids")) {
            if (::access(QFile::encodeName(folder).constData(), W_OK) == 0)
                return folder;
        }
        qCDebug(lcCgroup) << "the cgroup v2 folder" << folder
                          << "has no writable pids subtree (not delegated)";
    }
    return {};
}

QAtomicInteger<quint64> s_serial;

/// Kills every task listed in the cgroup's `cgroup.procs` (all of them are the sandbox's).
void killTasks(const QString &procsFile)
{
    for (const QByteArray &pid : readSmallFile(procsFile).split('\n')) {
        bool ok = false;
        const int n = pid.toInt(&ok);
        if (ok && n > 0)
            ::kill(n, SIGKILL);
    }
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
    if (!writeSmallFile(folder + QStringLiteral("/pids.max"), QByteArray::number(maxPids))) {
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
