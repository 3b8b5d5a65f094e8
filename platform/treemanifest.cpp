// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "treemanifest.h"

#include <QCryptographicHash>
#include <QHashFunctions>

#include <algorithm>
#include <charconv>

namespace elsai {

// Format (every record ends with NUL; fields by TAB, the free-text field last):
//   elsai-checkpoint 1
//   N <name>            T <note>           C <created ms>     A <0|1>       S <source>
//   E <type> <mode octal> <size> <hash hex> <dev> <ino> <mtime ns> <ctime ns> <path>
//   L <link text>       (right after the E record of a symlink)
//   K <skipped path>
//   Z <entry count> <BLAKE2b-256 hex of everything before this record>

namespace {

constexpr char kMagic[] = "elsai-checkpoint 1";
constexpr int kHeaderFields = 5;

QByteArray num(qint64 v)
{
    return QByteArray::number(v);
}

} // namespace

size_t qHash(const FileStampKey &k, size_t seed) noexcept
{
    return qHashMulti(seed, k.dev, k.ino, k.size, k.mtimeNs, k.ctimeNs);
}

bool pathLess(const QByteArray &a, const QByteArray &b)
{
    const qsizetype n = qMin(a.size(), b.size());
    const auto [x, y] = std::mismatch(a.cbegin(), a.cbegin() + n, b.cbegin());
    if (x == a.cbegin() + n)
        return a.size() < b.size();
    const auto rank = [](char c) { return c == '/' ? 0 : int(uchar(c)) + 1; };
    return rank(*x) < rank(*y);
}

qint64 TreeManifest::fileCount() const
{
    return std::count_if(entries.begin(), entries.end(),
                         [](const TreeEntry &e) { return e.type == TreeEntry::Type::File; });
}

qint64 TreeManifest::byteCount() const
{
    qint64 total = 0;
    for (const TreeEntry &e : entries) {
        if (e.type == TreeEntry::Type::File)
            total += e.size;
    }
    return total;
}

const TreeEntry *TreeManifest::find(const QByteArray &path) const
{
    const auto it = std::lower_bound(
        entries.begin(), entries.end(), path,
        [](const TreeEntry &e, const QByteArray &p) { return pathLess(e.path, p); });
    return it != entries.end() && it->path == path ? &*it : nullptr;
}

void TreeManifest::sort()
{
    const auto less = [](const TreeEntry &a, const TreeEntry &b) {
        return pathLess(a.path, b.path);
    };
    if (!std::is_sorted(entries.begin(), entries.end(), less))
        std::sort(entries.begin(), entries.end(), less);
}

QByteArray contentHash(QByteArrayView data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Blake2b_256);
}

namespace {

/// Appends without a temporary string per number (a manifest has nine per entry).
void appendNumber(QByteArray &out, qint64 v)
{
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr - buf);
}

void appendUnsigned(QByteArray &out, quint64 v, int base = 10)
{
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, base);
    out.append(buf, r.ptr - buf);
}

void appendHex(QByteArray &out, const QByteArray &bytes)
{
    static constexpr char digits[] = "0123456789abcdef";
    for (const char c : bytes) {
        out.append(digits[uchar(c) >> 4]);
        out.append(digits[uchar(c) & 15]);
    }
}

} // namespace

QByteArray encodeManifest(const TreeManifest &m)
{
    QByteArray out;
    out.reserve(qsizetype(m.entries.size()) * 160 + 256);
    const auto record = [&](char tag, const QByteArray &value) {
        out += tag;
        out += '\t';
        out += value;
        out += '\0';
    };
    out += kMagic;
    out += '\0';
    record('N', m.name.toUtf8());
    record('T', m.note.toUtf8());
    record('C', num(m.createdMs));
    record('A', m.automatic ? "1" : "0");
    record('S', m.source.toUtf8());
    for (const QString &s : m.skipped)
        record('K', s.toUtf8());
    for (const TreeEntry &e : m.entries) {
        out += "E\t";
        out += char(e.type);
        out += '\t';
        appendUnsigned(out, e.mode, 8);
        out += '\t';
        appendNumber(out, e.size);
        out += '\t';
        if (e.hash.isEmpty())
            out += '-';
        else
            appendHex(out, e.hash);
        out += '\t';
        appendUnsigned(out, e.stamp.dev);
        out += '\t';
        appendUnsigned(out, e.stamp.ino);
        out += '\t';
        appendNumber(out, e.stamp.mtimeNs);
        out += '\t';
        appendNumber(out, e.stamp.ctimeNs);
        out += '\t';
        out += e.path;
        out += '\0';
        if (e.type == TreeEntry::Type::Symlink)
            record('L', e.target);
    }
    const QByteArray digest = contentHash(out).toHex();
    record('Z', num(qint64(m.entries.size())) + '\t' + digest);
    return out;
}

std::optional<TreeManifest> decodeManifest(const QByteArray &data, QString *error, bool headerOnly)
{
    const auto bad = [&](const QString &why) -> std::optional<TreeManifest> {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const qsizetype magicEnd = data.indexOf('\0');
    if (magicEnd < 0 || QByteArrayView(data).first(magicEnd) != QByteArrayView(kMagic))
        return bad(QStringLiteral("not a checkpoint of this version"));
    if (!headerOnly) {
        // The trailer first: nothing of a cut or altered file is used.
        if (!data.endsWith('\0'))
            return bad(QStringLiteral("the checkpoint is cut short"));
        const qsizetype z = data.lastIndexOf(QByteArrayView("\0Z\t", 3), data.size() - 2);
        if (z < 0)
            return bad(QStringLiteral("the checkpoint has no trailer"));
        const QByteArray trailer = data.mid(z + 3, data.size() - z - 4);
        const QByteArray digest = contentHash(QByteArrayView(data).first(z + 1)).toHex();
        if (trailer.mid(trailer.indexOf('\t') + 1) != digest)
            return bad(QStringLiteral("the checkpoint's checksum does not match"));
    }
    TreeManifest m;
    int header = 0;
    qsizetype pos = magicEnd + 1;
    while (pos < data.size()) {
        const qsizetype end = data.indexOf('\0', pos);
        if (end < 0 || end - pos < 2 || data.at(pos + 1) != '\t')
            return bad(QStringLiteral("malformed record at byte %1").arg(pos));
        const char tag = data.at(pos);
        const QByteArrayView value = QByteArrayView(data).sliced(pos + 2, end - pos - 2);
        pos = end + 1;
        switch (tag) {
        case 'N':
            m.name = QString::fromUtf8(value);
            ++header;
            break;
        case 'T':
            m.note = QString::fromUtf8(value);
            ++header;
            break;
        case 'C':
            m.createdMs = value.toLongLong();
            ++header;
            break;
        case 'A':
            m.automatic = value == "1";
            ++header;
            break;
        case 'S':
            m.source = QString::fromUtf8(value);
            ++header;
            break;
        case 'K':
            m.skipped.append(QString::fromUtf8(value));
            break;
        case 'E': {
            if (headerOnly)
                return header == kHeaderFields ? std::optional(std::move(m))
                                               : bad(QStringLiteral("incomplete header"));
            // 9 fields; the path (last) may hold tabs
            qsizetype at = 0;
            QByteArrayView f[8];
            for (int i = 0; i < 8; ++i) {
                const qsizetype tab = value.indexOf('\t', at);
                if (tab < 0)
                    return bad(QStringLiteral("malformed entry at byte %1").arg(end));
                f[i] = value.sliced(at, tab - at);
                at = tab + 1;
            }
            TreeEntry e;
            bool ok[7] = {};
            if (f[0].size() != 1 || !(f[0][0] == 'f' || f[0][0] == 'd' || f[0][0] == 'l'))
                return bad(QStringLiteral("unknown entry type at byte %1").arg(end));
            e.type = TreeEntry::Type(f[0][0]);
            e.mode = f[1].toUInt(&ok[0], 8);
            e.size = f[2].toLongLong(&ok[1]);
            if (f[3] != "-") {
                e.hash = QByteArray::fromHex(f[3].toByteArray());
                ok[2] = e.hash.size() == 32;
            } else {
                ok[2] = e.type != TreeEntry::Type::File;
            }
            e.stamp.dev = f[4].toULongLong(&ok[3]);
            e.stamp.ino = f[5].toULongLong(&ok[4]);
            e.stamp.mtimeNs = f[6].toLongLong(&ok[5]);
            e.stamp.ctimeNs = f[7].toLongLong(&ok[6]);
            e.stamp.size = e.size;
            e.path = value.sliced(at).toByteArray();
            if (!std::all_of(std::begin(ok), std::end(ok), [](bool b) { return b; }) ||
                e.path.isEmpty() || e.path.startsWith('/'))
                return bad(QStringLiteral("malformed entry at byte %1").arg(end));
            m.entries.push_back(std::move(e));
            break;
        }
        case 'L':
            if (m.entries.empty() || m.entries.back().type != TreeEntry::Type::Symlink)
                return bad(QStringLiteral("a link text without its link at byte %1").arg(end));
            m.entries.back().target = value.toByteArray();
            break;
        case 'Z':
            if (header != kHeaderFields)
                return bad(QStringLiteral("incomplete header"));
            if (value.first(qMax<qsizetype>(0, value.indexOf('\t'))).toLongLong() !=
                qint64(m.entries.size()))
                return bad(QStringLiteral("the entry count does not match"));
            m.sort(); // written sorted; a hand-made one still searches right
            return m;
        default:
            return bad(QStringLiteral("unknown record '%1'").arg(QLatin1Char(tag)));
        }
    }
    if (headerOnly && header == kHeaderFields)
        return m;
    return bad(QStringLiteral("the checkpoint has no trailer"));
}

std::vector<TreeChange> diffManifests(const TreeManifest &from, const TreeManifest &to)
{
    std::vector<TreeChange> out;
    auto a = from.entries.begin();
    auto b = to.entries.begin();
    while (a != from.entries.end() || b != to.entries.end()) {
        if (b == to.entries.end() || (a != from.entries.end() && pathLess(a->path, b->path))) {
            out.push_back({TreeChange::Kind::Deleted, a->path, &*a, nullptr, true});
            ++a;
        } else if (a == from.entries.end() || pathLess(b->path, a->path)) {
            out.push_back({TreeChange::Kind::Added, b->path, nullptr, &*b, true});
            ++b;
        } else {
            if (a->type != b->type) {
                out.push_back({TreeChange::Kind::Deleted, a->path, &*a, nullptr, true});
                out.push_back({TreeChange::Kind::Added, b->path, nullptr, &*b, true});
            } else if (!a->sameState(*b)) {
                const bool content = a->hash != b->hash || a->target != b->target;
                out.push_back({TreeChange::Kind::Modified, a->path, &*a, &*b, content});
            }
            ++a;
            ++b;
        }
    }
    return out;
}

QString toString(TreeChange::Kind kind)
{
    switch (kind) {
    case TreeChange::Kind::Added:
        return QStringLiteral("added");
    case TreeChange::Kind::Modified:
        return QStringLiteral("modified");
    case TreeChange::Kind::Deleted:
        break;
    }
    return QStringLiteral("deleted");
}

} // namespace elsai
