// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "findrecord.h"

#include <algorithm>

namespace elsai {

qint64 parseFindTimeNs(const QByteArray &text)
{
    const qsizetype dot = text.indexOf('.');
    const QByteArray secs = dot < 0 ? text : text.left(dot);
    QByteArray frac = dot < 0 ? QByteArray() : text.mid(dot + 1);
    frac = frac.left(9).leftJustified(9, '0');
    return secs.toLongLong() * 1000000000LL + frac.toLongLong();
}

FileInfo FindRecord::toInfo(const QString &path) const
{
    FileInfo info;
    info.path = path;
    info.isDir = type == 'd';
    switch (type) {
    case 'f':
        info.type = FileInfo::Type::File;
        info.size = size;
        break;
    case 'd':
        info.type = FileInfo::Type::Directory;
        break;
    case 'l':
        info.type = FileInfo::Type::Symlink;
        break;
    default:
        info.type = FileInfo::Type::Other;
    }
    info.mtimeMs = mtimeNs / 1000000;
    info.device = device;
    info.inode = inode;
    return info;
}

QList<FindRecord> parseFindRecords(const QByteArray &data)
{
    QList<FindRecord> out;
    for (const QByteArray &rec : data.split('\0')) {
        const QList<QByteArray> f = rec.split('\t');
        if (f.size() < 5 || f[0].isEmpty())
            continue;
        FindRecord r;
        r.type = f[0].at(0);
        r.size = f[1].toLongLong();
        r.mtimeNs = parseFindTimeNs(f[2]);
        if (const qsizetype colon = f[3].indexOf(':'); colon > 0) {
            r.device = f[3].left(colon).toULongLong();
            r.inode = f[3].mid(colon + 1).toULongLong();
        }
        r.name =
            QString::fromUtf8(rec.mid(f[0].size() + f[1].size() + f[2].size() + f[3].size() + 4));
        out.append(r);
    }
    return out;
}

bool parseCappedListing(const QByteArray &payload, const QString &dir, qsizetype maxEntries,
                        DirListing *out, qint64 *total)
{
    const qsizetype nl = payload.indexOf('\n');
    bool ok = false;
    const qint64 count = nl > 0 && nl <= 20 ? payload.left(nl).trimmed().toLongLong(&ok) : -1;
    if (!ok || count < 0)
        return false;
    QList<FileInfo> infos;
    for (const FindRecord &r : parseFindRecords(payload.sliced(nl + 1))) {
        if (infos.size() >= maxEntries)
            break;
        if (r.name.isEmpty() || r.name == QLatin1String(".") || r.name == QLatin1String("..") ||
            r.name.contains(u'/'))
            continue;
        infos.append(r.toInfo(dir.isEmpty() ? r.name : dir + u'/' + r.name));
    }
    std::sort(infos.begin(), infos.end(),
              [](const FileInfo &a, const FileInfo &b) { return a.path < b.path; });
    *out = DirListing::fromInfos(dir, infos);
    *total = qMax<qint64>(count, infos.size());
    return true;
}

} // namespace elsai
