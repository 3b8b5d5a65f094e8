#include "findrecord.h"

namespace elsai {

namespace {

/// "1732881234.1234567890" (find's %T@) → nanoseconds.
qint64 parseMtimeNs(const QByteArray &text)
{
    const qsizetype dot = text.indexOf('.');
    const QByteArray secs = dot < 0 ? text : text.left(dot);
    QByteArray frac = dot < 0 ? QByteArray() : text.mid(dot + 1);
    frac = frac.left(9).leftJustified(9, '0');
    return secs.toLongLong() * 1000000000LL + frac.toLongLong();
}

} // namespace

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
        r.mtimeNs = parseMtimeNs(f[2]);
        if (const qsizetype colon = f[3].indexOf(':'); colon > 0) {
            r.device = f[3].left(colon).toULongLong();
            r.inode = f[3].mid(colon + 1).toULongLong();
        }
        r.name = QString::fromUtf8(
            rec.mid(f[0].size() + f[1].size() + f[2].size() + f[3].size() + 4));
        out.append(r);
    }
    return out;
}

} // namespace elsai
