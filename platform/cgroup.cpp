// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "cgroup.h"

#include <QDir>
#include <QFile>
#include <QList>

#include <csignal>

#include <unistd.h>

namespace elsai::cgroup {

namespace {

/// Our cgroup path in the hierarchy whose /proc/self/cgroup line has `controllers` (v1:
/// "pids"; v2: empty).
QString ownPath(const QByteArray &self, const QByteArray &controllers)
{
    for (const QByteArray &line : self.split('\n')) {
        const QList<QByteArray> parts = line.split(':');
        if (parts.size() >= 3 &&
            (parts[1] == controllers ||
             (!controllers.isEmpty() && parts[1].split(',').contains(controllers))))
            return QString::fromUtf8(line.mid(parts[0].size() + parts[1].size() + 2));
    }
    return {};
}

QString folderOf(const QString &mount, const QString &root, QString own)
{
    // Inside a container the mount's root is our own cgroup: strip it.
    if (root != QLatin1String("/") && own.startsWith(root))
        own = own.mid(root.size());
    return QDir::cleanPath(mount + QLatin1Char('/') + own);
}

} // namespace

QByteArray readFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Unbuffered))
        return {};
    return f.readAll();
}

bool writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Unbuffered) && f.write(data) == data.size();
}

OwnFolders ownFolders()
{
    // mountinfo: id parent dev root mountpoint options [optional…] - fstype source superoptions
    const QByteArray info = readFile(QStringLiteral("/proc/self/mountinfo"));
    const QByteArray self = readFile(QStringLiteral("/proc/self/cgroup"));
    OwnFolders result;
    for (const QByteArray &line : info.split('\n')) {
        const int dash = line.indexOf(" - ");
        if (dash < 0)
            continue;
        const QList<QByteArray> left = line.left(dash).split(' ');
        const QList<QByteArray> right = line.mid(dash + 3).split(' ');
        if (left.size() < 5 || right.size() < 3)
            continue;
        const QString mount = QString::fromUtf8(left[4]);
        const QString root = QString::fromUtf8(left[3]);
        if (right[0] == "cgroup" && right[2].split(',').contains("pids"))
            result.v1Pids = folderOf(mount, root, ownPath(self, "pids"));
        else if (right[0] == "cgroup2" && self.contains("0::"))
            result.v2 = folderOf(mount, root, ownPath(self, QByteArray()));
    }
    return result;
}

bool writable(const QString &folder)
{
    return !folder.isEmpty() && ::access(QFile::encodeName(folder).constData(), W_OK) == 0;
}

bool listsController(const QString &file, const QByteArray &controller)
{
    return readFile(file).trimmed().split(' ').contains(controller);
}

int killListed(const QString &procsFile, pid_t spare)
{
    int count = 0;
    for (const QByteArray &pid : readFile(procsFile).split('\n')) {
        bool ok = false;
        const int n = pid.toInt(&ok);
        if (ok && n > 0 && n != spare && ::kill(n, SIGKILL) == 0)
            ++count;
    }
    return count;
}

} // namespace elsai::cgroup
