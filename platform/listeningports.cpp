// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "listeningports.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>

#include <cstring>
#include <optional>
#include <utility>

#include <sys/stat.h>

namespace elsai {

namespace {

QByteArray readSmall(const QString &path, qint64 limit = 8 << 20)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.read(limit);
}

QList<qint64> allPids()
{
    QList<qint64> pids;
    const QStringList names =
        QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &n : names) {
        bool ok = false;
        const qint64 pid = n.toLongLong(&ok);
        if (ok)
            pids.append(pid);
    }
    return pids;
}

qint64 parentOf(qint64 pid)
{
    const QByteArray stat = readSmall(QStringLiteral("/proc/%1/stat").arg(pid), 4096);
    const qsizetype close = stat.lastIndexOf(')');
    if (close < 0)
        return -1;
    const QList<QByteArray> fields = stat.mid(close + 2).split(' ');
    return fields.size() > 1 ? fields[1].toLongLong() : -1;
}

QString processNameOf(qint64 pid)
{
    return QString::fromLocal8Bit(readSmall(QStringLiteral("/proc/%1/comm").arg(pid), 256))
        .trimmed();
}

} // namespace

QList<ListeningPort> parseProcNetTcp(const QByteArray &table, bool v6)
{
    QList<ListeningPort> out;
    const QList<QByteArray> lines = table.split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) { // the first line is the header
        const QList<QByteArray> f = lines[i].simplified().split(' ');
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
        if (f.size() < 10 || f[3] != "0A")
            continue;
        const QList<QByteArray> local = f[1].split(':');
        if (local.size() != 2)
            continue;
        bool ok = false;
        const int port = local[1].toInt(&ok, 16);
        if (!ok)
            continue;
        ListeningPort p;
        p.port = port;
        p.inode = f[9].toULongLong();
        const QByteArray &hex = local[0];
        if (!v6 && hex.size() == 8) {
            // The kernel printed the native value of four bytes in network order.
            const quint32 raw = hex.toUInt(nullptr, 16);
            unsigned char b[4];
            std::memcpy(b, &raw, 4);
            p.address = QStringLiteral("%1.%2.%3.%4").arg(b[0]).arg(b[1]).arg(b[2]).arg(b[3]);
        } else if (v6 && hex.size() == 32) {
            // Four 32-bit words, each in the host's order; written as eight groups, with the
            // two forms people know compressed.
            QStringList groups;
            for (int w = 0; w < 4; ++w) {
                // The kernel printed the native value of bytes in network order.
                const quint32 word = hex.mid(w * 8, 8).toUInt(nullptr, 16);
                unsigned char b[4];
                std::memcpy(b, &word, 4);
                groups << QString::number((b[0] << 8) | b[1], 16)
                       << QString::number((b[2] << 8) | b[3], 16);
            }
            const QString full = groups.join(QLatin1Char(':'));
            p.address = full == QLatin1String("0:0:0:0:0:0:0:0")   ? QStringLiteral("::")
                        : full == QLatin1String("0:0:0:0:0:0:0:1") ? QStringLiteral("::1")
                                                                   : full;
        } else {
            continue;
        }
        out.append(p);
    }
    return out;
}

QList<ListeningPort> tcpListeners(qint64 pid)
{
    const QString base =
        pid > 0 ? QStringLiteral("/proc/%1/net/").arg(pid) : QStringLiteral("/proc/self/net/");
    QList<ListeningPort> out = parseProcNetTcp(readSmall(base + QStringLiteral("tcp")), false);
    out += parseProcNetTcp(readSmall(base + QStringLiteral("tcp6")), true);
    return out;
}

QList<ListeningPort> listenersOf(const QList<ListeningPort> &listeners, const QSet<qint64> &pids)
{
    QHash<quint64, qint64> owner; // socket inode → pid
    for (qint64 pid : pids) {
        const QString fdDir = QStringLiteral("/proc/%1/fd").arg(pid);
        const QStringList fds =
            QDir(fdDir).entryList(QDir::Files | QDir::System | QDir::NoDotAndDotDot);
        for (const QString &fd : fds) {
            const QString target = QFileInfo(fdDir + QLatin1Char('/') + fd).symLinkTarget();
            // "socket:[12345]" (symLinkTarget makes it absolute: look at the file name)
            const QString name = QFileInfo(target).fileName();
            if (name.startsWith(QLatin1String("socket:[")))
                owner.insert(name.mid(8, name.size() - 9).toULongLong(), pid);
        }
    }
    QList<ListeningPort> out;
    for (ListeningPort p : listeners) {
        const auto it = owner.constFind(p.inode);
        if (it == owner.constEnd())
            continue;
        p.pid = *it;
        p.process = processNameOf(p.pid);
        out.append(p);
    }
    return out;
}

QSet<qint64> processTrees(const QSet<qint64> &roots)
{
    if (roots.isEmpty())
        return {};
    QHash<qint64, QList<qint64>> children;
    for (qint64 pid : allPids())
        children[parentOf(pid)].append(pid);
    QSet<qint64> out;
    QList<qint64> todo(roots.begin(), roots.end());
    while (!todo.isEmpty()) {
        const qint64 pid = todo.takeLast();
        if (out.contains(pid))
            continue;
        out.insert(pid);
        todo += children.value(pid);
    }
    return out;
}

QSet<qint64> processesWorkingIn(const QString &folder)
{
    const QString root = QFileInfo(folder).canonicalFilePath();
    QSet<qint64> out;
    if (root.isEmpty())
        return out;
    for (qint64 pid : allPids()) {
        const QString cwd = QFileInfo(QStringLiteral("/proc/%1/cwd").arg(pid)).symLinkTarget();
        if (cwd == root || cwd.startsWith(root + QLatin1Char('/')))
            out.insert(pid);
    }
    return out;
}

qint64 processInOtherNetworkNamespace(qint64 root)
{
    // A namespace is told by the device and inode of its /proc file (the link text
    // "net:[N]" is not a path: QFileInfo would make it one, different for every pid).
    auto netns = [](const QByteArray &path) -> std::optional<std::pair<dev_t, ino_t>> {
        struct stat st;
        if (::stat(path.constData(), &st) != 0)
            return std::nullopt;
        return std::pair(st.st_dev, st.st_ino);
    };
    const auto ours = netns(QByteArrayLiteral("/proc/self/ns/net"));
    if (!ours)
        return 0;
    for (qint64 pid : processTrees({root})) {
        const auto ns = netns(QByteArray("/proc/") + QByteArray::number(pid) + "/ns/net");
        if (ns && *ns != *ours)
            return pid;
    }
    return 0;
}

} // namespace elsai
