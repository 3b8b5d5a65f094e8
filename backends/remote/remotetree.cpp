// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "remotetree.h"

#include "checkpointstore.h"
#include "confinedopen.h"
#include "confinedscript.h"
#include "errors.h"
#include "findrecord.h"
#include "localtar.h"
#include "tempfiles.h"
#include "treecopy.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QSet>
#include <QTemporaryDir>

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai::remote {

namespace {

/// The capture saw a file change between its listing and its arrival: take it again.
struct ChangedMeanwhile
{
    QStringList paths;
};

constexpr int kCaptureAttempts = 3;

[[noreturn]] void malformed(const char *what)
{
    throw OSError(QStringLiteral("the sandbox answered the workspace listing malformed (%1)")
                      .arg(QLatin1String(what)),
                  EIO);
}

/// An atomic write's temp file, a restore's staging folder, or anything beneath one: not part
/// of the tree (as the local walk leaves them out).
bool underTempName(QByteArrayView path)
{
    qsizetype from = 0;
    while (from <= path.size()) {
        qsizetype slash = path.indexOf('/', from);
        if (slash < 0)
            slash = path.size();
        if (isStaleTempName(path.sliced(from, slash - from)))
            return true;
        from = slash + 1;
    }
    return false;
}

bool safeRelative(QByteArrayView path)
{
    if (path.isEmpty() || path.startsWith('/'))
        return false;
    for (const QByteArrayView seg : QByteArray(path.toByteArray()).split('/')) {
        if (seg.isEmpty() || seg == "." || seg == "..")
            return false;
    }
    return true;
}

/// "sec.nnnnnnnnn": a time as find's -newer and touch -d take it after '@'.
QString timeArg(qint64 ns)
{
    if (ns <= 0)
        return QStringLiteral("0");
    return QString::number(ns / 1000000000) + u'.' +
           QString::number(ns % 1000000000).rightJustified(9, u'0');
}

/// `\` and newline escaped (the `apply` plan is one line a field; the script undoes it with
/// printf %b).
QByteArray escapedLine(const QByteArray &text)
{
    QByteArray out;
    out.reserve(text.size() + 1);
    for (const char c : text) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    out += '\n';
    return out;
}

void writeStaged(const QString &path, const QByteArray &data)
{
    if (!writeLocalFile(path, data))
        throw OSError(QStringLiteral("cannot write '%1' locally").arg(path));
}

std::unique_ptr<QTemporaryDir> scratchDir(const TreeTransport &t, const char *what)
{
    const QString parent = t.scratchParent.isEmpty() ? QDir::tempPath() : t.scratchParent;
    auto dir = std::make_unique<QTemporaryDir>(parent + QStringLiteral("/elsai-") +
                                               QLatin1String(what) + QStringLiteral("-XXXXXX"));
    if (!dir->isValid())
        throw OSError(QStringLiteral("cannot create a local staging folder under %1").arg(parent));
    return dir;
}

/// Runs `op` with the local file `input` (named by confinedTempName()) reaching it: on stdin
/// ("-" as the first argument), or uploaded beside the workspace (its name as the first). With
/// `output`, the payload goes there (streamed where the transport can) and none is returned.
QByteArray runWithInput(const TreeTransport &t, const QString &op, const QString &input,
                        QStringList args, const QString &output = {})
{
    QString stdinFile;
    if (t.upload) {
        t.upload(input);
        args.prepend(QFileInfo(input).fileName());
    } else {
        args.prepend(QStringLiteral("-"));
        stdinFile = input;
    }
    if (output.isEmpty())
        return t.run(op, args, stdinFile);
    if (t.runToFile)
        t.runToFile(op, args, stdinFile, output);
    else
        writeStaged(output, t.run(op, args, stdinFile));
    return {};
}

} // namespace

// ---- the listing --------------------------------------------------------------------------

namespace {

/// A `manifest` answer.
struct Listing
{
    qint64 startNs = 0;
    QHash<QByteArray, QByteArray> hashes; ///< relative path → BLAKE2b-256 (raw)
    std::vector<TreeEntry> entries;       ///< pathLess() order
};

Listing parseListing(const QByteArray &payload)
{
    Listing l;
    qsizetype pos = 0;
    const auto next = [&](QByteArrayView *out) {
        const qsizetype end = payload.indexOf('\0', pos);
        if (end < 0)
            return false;
        *out = QByteArrayView(payload).sliced(pos, end - pos);
        pos = end + 1;
        return true;
    };
    QByteArrayView tok;
    if (!next(&tok))
        malformed("no start time");
    l.startNs = parseFindTimeNs(tok.toByteArray());
    if (l.startNs <= 0)
        malformed("no start time");
    for (;;) {
        if (!next(&tok))
            malformed("no listing");
        if (tok == "L")
            break;
        // b2sum -z: "<64 hex>  ./<path>"
        if (tok.size() < 69 || tok.sliced(64, 4) != "  ./")
            continue;
        l.hashes.insert(tok.sliced(68).toByteArray(),
                        QByteArray::fromHex(tok.first(64).toByteArray()));
    }
    while (pos < payload.size()) {
        QByteArrayView rec, link;
        if (!next(&rec) || !next(&link))
            malformed("a record cut short");
        // %y %m %s %T@ %C@ %D:%i %P (the path last: it may hold tabs)
        QByteArrayView f[6];
        qsizetype at = 0;
        for (QByteArrayView &field : f) {
            const qsizetype tab = rec.indexOf('\t', at);
            if (tab < 0)
                malformed("a record without its fields");
            field = rec.sliced(at, tab - at);
            at = tab + 1;
        }
        const QByteArrayView path = rec.sliced(at);
        if (!safeRelative(path))
            continue; // a broken or hostile answer names nothing outside the workspace
        if (underTempName(path))
            continue;
        TreeEntry e;
        e.path = path.toByteArray();
        if (f[0] == "d")
            e.type = TreeEntry::Type::Dir;
        else if (f[0] == "l")
            e.type = TreeEntry::Type::Symlink;
        else if (f[0] == "f")
            e.type = TreeEntry::Type::File;
        else
            continue;
        bool ok = false;
        e.mode = f[1].toUInt(&ok, 8) & 01777;
        const qint64 size = f[2].toLongLong();
        const qsizetype colon = f[5].indexOf(':');
        e.stamp.dev = f[5].first(qMax<qsizetype>(colon, 0)).toULongLong();
        e.stamp.ino = f[5].sliced(colon + 1).toULongLong();
        e.stamp.mtimeNs = parseFindTimeNs(f[3].toByteArray());
        e.stamp.ctimeNs = parseFindTimeNs(f[4].toByteArray());
        if (!ok || colon < 0)
            malformed("a record's mode or identity");
        switch (e.type) {
        case TreeEntry::Type::File:
            e.size = size;
            e.stamp.size = size;
            break;
        case TreeEntry::Type::Symlink:
            e.mode = 0777;
            e.target = link.toByteArray();
            e.size = e.target.size();
            break;
        case TreeEntry::Type::Dir:
            break;
        }
        l.entries.push_back(std::move(e));
    }
    std::sort(l.entries.begin(), l.entries.end(),
              [](const TreeEntry &a, const TreeEntry &b) { return pathLess(a.path, b.path); });
    return l;
}

/// The BLAKE2b-256 of the rest of `fd` (the local copy of `path`), and its length.
QByteArray hashFd(int fd, const QString &path, qint64 *length)
{
    QCryptographicHash h(QCryptographicHash::Blake2b_256);
    QByteArray chunk(1 << 20, Qt::Uninitialized);
    *length = 0;
    for (;;) {
        const ssize_t r = ::read(fd, chunk.data(), size_t(chunk.size()));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            throwOsError(errno, QStringLiteral("cannot read a file the sandbox sent"), path);
        if (r == 0)
            break;
        h.addData(QByteArrayView(chunk.constData(), r));
        *length += r;
    }
    return h.result();
}

} // namespace

// ---- capture --------------------------------------------------------------------------------

TreeManifest RemoteTree::capture(const TreeTransport &transport, const CaptureOptions &options)
{
    QStringList changing;
    for (int attempt = 1; attempt <= kCaptureAttempts; ++attempt) {
        try {
            return captureOnce(transport, options);
        } catch (const ChangedMeanwhile &c) {
            changing = c.paths;
        }
    }
    throw OSError(QStringLiteral("the workspace kept changing while it was recorded (%1); try "
                                 "again when it is quiet")
                      .arg(changing.mid(0, 5).join(QStringLiteral(", "))),
                  EAGAIN);
}

TreeManifest RemoteTree::captureOnce(const TreeTransport &t, const CaptureOptions &options)
{
    // Only what changed since the previous capture that filled this cache is hashed there.
    QString since = QStringLiteral("0");
    {
        QMutexLocker lock(&m_mutex);
        if (options.cache && options.cache == m_lastCache && m_lastStartNs > 0)
            since = timeArg(m_lastStartNs - TreeHashCache::RacyWindowNs);
    }
    Listing l = parseListing(t.run(QStringLiteral("manifest"), {since}, {}));
    std::vector<size_t> needed; // files whose content must come: unknown hash, or not stored
    std::vector<bool> moving(l.entries.size(), false);
    for (size_t i = 0; i < l.entries.size(); ++i) {
        TreeEntry &e = l.entries[i];
        if (e.type != TreeEntry::Type::File)
            continue;
        // Changed after the walk started: its hash (taken before) may not be of this state.
        moving[i] = e.stamp.ctimeNs >= l.startNs;
        if (!moving[i]) {
            e.hash = l.hashes.value(e.path);
            if (e.hash.size() != 32)
                e.hash = options.cache ? options.cache->lookup(e.stamp, l.startNs) : QByteArray();
        }
        if (e.hash.isEmpty() || (options.store && !options.store->hasBlob(e.hash, e.size)))
            needed.push_back(i);
    }

    if (!needed.empty()) {
        // ONE tar of every needed file, unpacked into a private folder, each hashed again.
        const auto work = scratchDir(t, "capture");
        QByteArray names;
        for (size_t i : needed)
            names += "./" + l.entries[i].path + '\0';
        const QString listFile = work->filePath(confinedTempName(QStringLiteral("pack")));
        writeStaged(listFile, names);
        const QString tarFile = work->filePath(QStringLiteral("files.tar"));
        runWithInput(t, QStringLiteral("pack"), listFile, {}, tarFile);
        const QString filesDir = work->filePath(QStringLiteral("files"));
        QDir().mkpath(filesDir);
        const QStringList tarErrors = runLocalTar(
            {QStringLiteral("-x"), QStringLiteral("-f"), tarFile, QStringLiteral("-C"), filesDir,
             QStringLiteral("--no-same-owner"), QStringLiteral("--no-same-permissions")});
        const UniqueFd filesFd(
            ::open(QFile::encodeName(filesDir).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!filesFd.isValid())
            throwOsError(errno, QStringLiteral("cannot open the local staging folder"), filesDir);
        QStringList changed;
        QSet<QByteArray> gone; // written and removed again during the walk: no entry
        for (size_t i : needed) {
            TreeEntry &e = l.entries[i];
            const UniqueFd fd =
                openConfined(filesFd.get(), e.path, O_RDONLY | O_NOCTTY, ConfinedLinks::None);
            struct stat st;
            if (!fd.isValid() && errno == ENOENT && moving[i]) {
                gone.insert(e.path);
                continue;
            }
            if (!fd.isValid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
                changed.append(e.displayPath()); // gone, or no longer a file
                continue;
            }
            qint64 length = 0;
            const QByteArray hash =
                options.store ? options.store->addBlobFromFd(fd.get(), st.st_size, &length)
                              : hashFd(fd.get(), e.displayPath(), &length);
            if (moving[i]) { // what arrived is what the checkpoint holds; never cached
                e.hash = hash;
                e.size = length;
                e.stamp.ctimeNs = 0;
                e.stamp.ino = 0;
            } else if (length != e.size || (!e.hash.isEmpty() && hash != e.hash)) {
                changed.append(e.displayPath());
            } else {
                e.hash = hash;
            }
        }
        if (!changed.isEmpty()) {
            if (!tarErrors.isEmpty())
                changed.append(tarErrors.first());
            throw ChangedMeanwhile{changed};
        }
        if (!gone.isEmpty()) {
            l.entries.erase(
                std::remove_if(l.entries.begin(), l.entries.end(),
                               [&](const TreeEntry &e) { return gone.contains(e.path); }),
                l.entries.end());
        }
    }

    if (options.cache) {
        for (const TreeEntry &e : l.entries) {
            if (e.type == TreeEntry::Type::File && e.stamp.ctimeNs != 0)
                options.cache->insert(e.stamp, e.hash);
        }
    }
    {
        QMutexLocker lock(&m_mutex);
        m_lastCache = options.cache;
        m_lastStartNs = l.startNs;
    }
    TreeManifest m;
    m.entries = std::move(l.entries);
    return m;
}

// ---- apply ----------------------------------------------------------------------------------

ApplyResult RemoteTree::apply(const TreeTransport &t, const TreeManifest &current,
                              const TreeManifest &target, const CheckpointStore &store,
                              TreeHashCache *cache)
{
    Q_UNUSED(cache); // the files written get new ctimes: the next capture hashes them there
    ApplyResult result;
    const std::vector<TreeChange> changes = diffManifests(current, target);
    if (changes.empty())
        return result;
    const auto work = scratchDir(t, "restore");
    // The staging folder and the temp names are ours, random (the script checks their form).
    const QString staging = confinedTempName(QStringLiteral("restore"));
    const QString stage = work->filePath(staging);
    if (!QDir().mkpath(stage))
        throw OSError(
            QStringLiteral("cannot create a local staging folder in %1").arg(work->path()));
    const UniqueFd stageFd(
        ::open(QFile::encodeName(stage).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!stageFd.isValid())
        throwOsError(errno, QStringLiteral("cannot open the local staging folder"), stage);

    // Five lines a step (confinedscript.cpp, `apply`): removals deepest first, folders
    // parents first, files, links, folder modes deepest first.
    QByteArray plan;
    const auto step = [&plan](char kind, const QByteArray &path, const QByteArray &a = "-",
                              const QByteArray &b = "-", const QByteArray &c = "-") {
        plan += kind;
        plan += '\n';
        plan += escapedLine(path);
        plan += escapedLine(a);
        plan += escapedLine(b);
        plan += escapedLine(c);
    };
    for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
        if (it->kind == TreeChange::Kind::Deleted) {
            step('R', it->path);
            ++result.removed;
        }
    }
    for (const TreeChange &c : changes) {
        if (c.kind == TreeChange::Kind::Added && c.to->type == TreeEntry::Type::Dir) {
            step('D', c.path);
            ++result.created;
        }
    }
    int index = 0;
    for (const TreeChange &c : changes) {
        if (c.kind == TreeChange::Kind::Deleted || c.to->type != TreeEntry::Type::File)
            continue;
        const TreeEntry &e = *c.to;
        const QByteArray name = QByteArray::number(index++);
        const UniqueFd blob = store.openBlob(e.hash);
        const UniqueFd out(::openat(stageFd.get(), name.constData(),
                                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
        qint64 copied = 0;
        if (!out.isValid() || !copyContent(blob.get(), out.get(), e.size, &copied))
            throwOsError(errno, QStringLiteral("cannot stage a file to restore"), e.displayPath());
        if (copied != e.size)
            throw OSError(QStringLiteral("the checkpoint's content of '%1' is shorter than its "
                                         "record")
                              .arg(e.displayPath()),
                          EIO);
        step('F', e.path, name, QByteArray::number(e.mode & 01777, 8),
             timeArg(e.stamp.mtimeNs).toLatin1());
        ++result.written;
    }
    for (const TreeChange &c : changes) {
        if (c.kind != TreeChange::Kind::Deleted && c.to->type == TreeEntry::Type::Symlink) {
            step('L', c.path, c.to->target);
            ++result.linked;
        }
    }
    for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
        if (it->kind != TreeChange::Kind::Deleted && it->to->type == TreeEntry::Type::Dir) {
            step('M', it->path, QByteArray::number(it->to->mode & 01777, 8));
            ++result.modes;
        }
    }
    writeStaged(stage + QStringLiteral("/plan"), plan);

    // ONE archive in, ONE command.
    const QString temp = confinedTempName(QStringLiteral("r"));
    if (t.sendFolder) {
        t.sendFolder(stage);
        t.run(QStringLiteral("apply"), {QStringLiteral("="), staging, temp}, {});
        return result;
    }
    const QString tarFile = work->filePath(confinedTempName(QStringLiteral("restore")));
    if (const QStringList errors = runLocalTar({QStringLiteral("-c"), QStringLiteral("-f"), tarFile,
                                                QStringLiteral("--format=posix"),
                                                QStringLiteral("-C"), stage, QStringLiteral(".")});
        !errors.isEmpty())
        throw OSError(errors.join(u'\n'));
    const QByteArray answer = runWithInput(t, QStringLiteral("apply"), tarFile, {staging, temp});
    Q_UNUSED(answer);
    return result;
}

// ---- watch ----------------------------------------------------------------------------------

std::unique_ptr<TreeWatch> RemoteTree::watch(TreeTransport transport)
{
    return std::make_unique<ListingTreeWatch>([t = std::move(transport)] {
        const Listing l =
            parseListing(t.run(QStringLiteral("manifest"), {QStringLiteral("-")}, {}));
        PathStates out;
        for (const TreeEntry &e : l.entries) {
            PathState s;
            s.type = e.type;
            s.mode = e.mode;
            s.size = e.size;
            s.mtimeNs = e.stamp.mtimeNs;
            s.ino = e.stamp.ino;
            s.target = e.target;
            out.insert(e.path, s);
        }
        return out;
    });
}

} // namespace elsai::remote
