// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "checkpointstore.h"

#include "atomicwrite.h"
#include "errors.h"
#include "faultinjection.h"
#include "hostfiles.h"
#include "tempfiles.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>

#include <algorithm>

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace elsai {

namespace {

constexpr char kSuffix[] = ".ckpt";
constexpr char kJournal[] = "restore.journal";
/// A manifest larger than this is refused (about four million entries).
constexpr qint64 kMaxManifestBytes = qint64(1) << 30;

QString spaceKey(const QString &backendId)
{
    return QString::fromLatin1(
        QCryptographicHash::hash(backendId.toUtf8(), QCryptographicHash::Sha256).toHex().left(32));
}

QStringList entryNames(const QString &folder)
{
    return QDir(folder).entryList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden,
                                  QDir::Name);
}

QByteArray readSmall(const QString &path, qint64 max)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.read(max);
}

} // namespace

// ---- the store ----------------------------------------------------------------------------

QString CheckpointStore::defaultFolder()
{
    const QByteArray overridden = qgetenv("ELSAI_CHECKPOINT_DIR");
    if (!overridden.isEmpty())
        return QDir::cleanPath(QFile::decodeName(overridden));
    const QString data = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    return data.isEmpty() ? QString() : data + QStringLiteral("/elsai/checkpoints");
}

std::shared_ptr<CheckpointStore> CheckpointStore::open(const QString &folder)
{
    if (folder.isEmpty())
        throw OSError(QStringLiteral("no folder for checkpoints on this machine; set "
                                     "ELSAI_CHECKPOINT_DIR or --checkpoint-dir"));
    const QString clean = QDir::cleanPath(QDir(folder).absolutePath());
    static QMutex mutex;
    static QHash<QString, std::weak_ptr<CheckpointStore>> open;
    QMutexLocker lock(&mutex);
    if (auto existing = open.value(clean).lock())
        return existing;
    std::shared_ptr<CheckpointStore> store(new CheckpointStore(clean));
    open.insert(clean, store);
    return store;
}

CheckpointStore::CheckpointStore(const QString &folder) : m_folder(folder)
{
    m_fd = openHostFolder(folder, true);
    ::fchmod(m_fd.get(), 0700);
    if (::mkdirat(m_fd.get(), "blobs", 0700) != 0 && errno != EEXIST)
        throwOsError(errno, QStringLiteral("cannot create the checkpoint blobs folder"),
                     folder + QStringLiteral("/blobs"));
    m_blobsFd = openHostFolder(folder + QStringLiteral("/blobs"), false);
    // A crash between a temp file and its rename leaves the temp file: never a blob (nor the
    // garbage collection's generation file).
    removeStaleTempFiles(m_blobsFd.get(), true);
    removeStaleTempFiles(m_fd.get(), false);
    // and a large blob's pending file (no checkpoint refers to it yet)
    for (const QString &name :
         QDir(folder + QStringLiteral("/blobs"))
             .entryList({QStringLiteral(".pending.*")}, QDir::Files | QDir::Hidden)) {
        ::unlinkat(m_blobsFd.get(), QFile::encodeName(name).constData(), 0);
    }
}

CheckpointStore::Lock::Lock(const CheckpointStore &store, bool exclusive)
{
    // A file description of its own per lock: flock() between threads of one process too.
    m_fd.reset(::openat(store.m_fd.get(), "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!m_fd.isValid())
        throwOsError(errno, QStringLiteral("cannot open the checkpoint store's lock"),
                     store.m_folder + QStringLiteral("/lock"));
    while (::flock(m_fd.get(), exclusive ? LOCK_EX : LOCK_SH) != 0) {
        if (errno != EINTR)
            throwOsError(errno, QStringLiteral("cannot lock the checkpoint store"),
                         store.m_folder + QStringLiteral("/lock"));
    }
}

QByteArray CheckpointStore::blobRel(const QByteArray &hash) const
{
    const QByteArray hex = hash.toHex();
    return hex.left(2) + '/' + hex.mid(2);
}

bool CheckpointStore::hasBlob(const QByteArray &hash, qint64 size) const
{
    {
        QMutexLocker lock(&m_mutex);
        if (m_present.contains(hash))
            return true;
    }
    struct stat st;
    const bool there =
        ::fstatat(m_blobsFd.get(), blobRel(hash).constData(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && st.st_size == size;
    if (there) {
        QMutexLocker lock(&m_mutex);
        m_present.insert(hash);
    }
    return there;
}

QByteArray CheckpointStore::generation() const
{
    return readSmall(m_folder + QStringLiteral("/generation"), 64);
}

void CheckpointStore::refreshPresence()
{
    const QByteArray now = generation();
    QMutexLocker lock(&m_mutex);
    if (now != m_generation) {
        m_present.clear();
        m_generation = now;
    }
}

void CheckpointStore::addBlob(const QByteArray &hash, QByteArrayView data)
{
    if (hasBlob(hash, data.size()))
        return;
    const QByteArray rel = blobRel(hash);
    const QByteArray dir = rel.left(2);
    if (::mkdirat(m_blobsFd.get(), dir.constData(), 0700) != 0 && errno != EEXIST)
        throwOsError(errno, QStringLiteral("cannot create a checkpoint blob folder"),
                     m_folder + QStringLiteral("/blobs/") + QString::fromLatin1(dir));
    const UniqueFd dirFd(::openat(m_blobsFd.get(), dir.constData(),
                                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dirFd.isValid())
        throwOsError(errno, QStringLiteral("cannot open a checkpoint blob folder"),
                     m_folder + QStringLiteral("/blobs/") + QString::fromLatin1(dir));
    AtomicWriteOptions options;
    options.createMode = 0400;
    options.exactMode = 0400;
    options.durable = false; // one syncfs before the manifest (syncBlobs)
    if (const auto e = writeAtomicAt(dirFd.get(), rel.mid(3), data, options)) {
        throwOsError(e->error, QStringLiteral("cannot write a checkpoint blob"),
                     m_folder + QStringLiteral("/blobs/") + QString::fromLatin1(rel));
    }
    QMutexLocker lock(&m_mutex);
    m_bytesAdded += data.size();
    m_present.insert(hash);
}

QByteArray CheckpointStore::addBlobFromFd(int fd, qint64 size, qint64 *copied)
{
    // Written under a name of its own by the one atomic writer, then renamed to its hash once
    // the hash is known: the only rename in the engine outside writeAtomicAt(). It is safe
    // without the writer's checks: both names are ours, beneath the store's own descriptor
    // (no agent can reach it), and the target's name is its content's hash, so replacing an
    // existing blob (a race with another writer of the same content) never changes a byte.
    // Durability comes with the checkpoint's syncfs (syncBlobs), before its manifest.
    const QByteArray pending = ".pending." + QByteArray::number(quint64(::getpid())) + '.' +
                               QByteArray::number(quintptr(this), 16) + '.' +
                               QByteArray::number(size) + '.' +
                               QByteArray::number(qint64(::gettid()));
    QCryptographicHash hash(QCryptographicHash::Blake2b_256);
    *copied = 0;
    const auto fill = [&](int out) {
        QByteArray chunk(1 << 20, Qt::Uninitialized);
        while (*copied < size) {
            const ssize_t r =
                ::read(fd, chunk.data(), size_t(qMin<qint64>(chunk.size(), size - *copied)));
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                return false;
            if (r == 0)
                break;
            hash.addData(QByteArrayView(chunk.constData(), r));
            if (!writeAllFd(out, chunk.constData(), r))
                return false;
            *copied += r;
        }
        return true;
    };
    AtomicWriteOptions options;
    options.createMode = 0400;
    options.exactMode = 0400;
    options.durable = false;
    if (const auto e = writeAtomicAt(m_blobsFd.get(), pending, fill, options))
        throwOsError(e->error, QStringLiteral("cannot write a checkpoint blob"), m_folder);
    const QByteArray result = hash.result();
    const QByteArray rel = blobRel(result);
    if (::mkdirat(m_blobsFd.get(), rel.left(2).constData(), 0700) != 0 && errno != EEXIST) {
        ::unlinkat(m_blobsFd.get(), pending.constData(), 0);
        throwOsError(errno, QStringLiteral("cannot create a checkpoint blob folder"), m_folder);
    }
    if (hasBlob(result, *copied)) {
        ::unlinkat(m_blobsFd.get(), pending.constData(), 0);
        return result;
    }
    if (::renameat(m_blobsFd.get(), pending.constData(), m_blobsFd.get(), rel.constData()) != 0) {
        const int err = errno;
        ::unlinkat(m_blobsFd.get(), pending.constData(), 0);
        throwOsError(err, QStringLiteral("cannot store a checkpoint blob"), m_folder);
    }
    ELSAI_FAULT_POINT("rename");
    QMutexLocker lock(&m_mutex);
    m_bytesAdded += *copied;
    m_present.insert(result);
    return result;
}

UniqueFd CheckpointStore::openBlob(const QByteArray &hash) const
{
    UniqueFd fd(
        ::openat(m_blobsFd.get(), blobRel(hash).constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.isValid())
        throwOsError(errno, QStringLiteral("a checkpoint's content is missing from the store"),
                     m_folder + QStringLiteral("/blobs/") + QString::fromLatin1(blobRel(hash)));
    return fd;
}

QByteArray CheckpointStore::readBlob(const QByteArray &hash) const
{
    const QByteArray rel = blobRel(hash);
    return readHostFileAt(m_blobsFd.get(), rel,
                          m_folder + QStringLiteral("/blobs/") + QString::fromLatin1(rel));
}

void CheckpointStore::syncBlobs()
{
    if (::syncfs(m_blobsFd.get()) != 0)
        throwOsError(errno, QStringLiteral("cannot flush the checkpoint store to disk"), m_folder);
    ELSAI_FAULT_POINT("fsync");
}

qint64 CheckpointStore::bytesAdded() const
{
    QMutexLocker lock(&m_mutex);
    return m_bytesAdded;
}

void CheckpointStore::pin(const QByteArray &hash)
{
    QMutexLocker lock(&m_mutex);
    ++m_pins[hash];
}

void CheckpointStore::unpin(const QByteArray &hash)
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_pins.find(hash);
    if (it != m_pins.end() && --*it <= 0)
        m_pins.erase(it);
}

QStringList CheckpointStore::collectGarbage(qint64 limitBytes, qint64 *usedBytes)
{
    const Lock lock(*this, true);
    struct Item
    {
        QString space;
        QString source;
        QString name;
        qint64 created;
        bool automatic;
        bool pinned; // the target of an unfinished restore
        std::vector<std::pair<QByteArray, qint64>> blobs;
    };
    std::vector<Item> items;
    const QString spacesRoot = m_folder + QStringLiteral("/spaces");
    for (const QString &key : entryNames(spacesRoot)) {
        const QString folder = spacesRoot + u'/' + key;
        const QString source =
            QString::fromUtf8(readSmall(folder + QStringLiteral("/source"), 4096));
        const QString journal =
            QString::fromUtf8(readSmall(folder + u'/' + QLatin1String(kJournal), 4096));
        for (const QString &file : entryNames(folder)) {
            if (!file.endsWith(QLatin1String(kSuffix)))
                continue;
            QFile f(folder + u'/' + file);
            if (!f.open(QIODevice::ReadOnly) || f.size() > kMaxManifestBytes)
                continue;
            auto m = decodeManifest(f.readAll());
            if (!m)
                continue; // damaged: its blobs may go, the file stays for a person to look at
            Item item{folder, source, m->name, m->createdMs, m->automatic, m->name == journal, {}};
            for (const TreeEntry &e : m->entries) {
                if (e.type == TreeEntry::Type::File)
                    item.blobs.emplace_back(e.hash, e.size);
            }
            items.push_back(std::move(item));
        }
    }
    QHash<QByteArray, int> refs;
    QHash<QByteArray, qint64> sizes;
    qint64 used = 0;
    for (const Item &item : items) {
        for (const auto &[hash, size] : item.blobs) {
            if (refs[hash]++ == 0) {
                sizes.insert(hash, size);
                used += size;
            }
        }
    }
    // Oldest automatic first; the newest checkpoint of each workspace stays, so a checkpoint
    // just taken is never the one that makes room.
    QHash<QString, qint64> newest;
    for (const Item &item : items)
        newest[item.space] = qMax(newest.value(item.space), item.created);
    std::vector<size_t> order(items.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return items[a].created < items[b].created; });
    QStringList removed;
    for (size_t i : order) {
        if (used <= limitBytes)
            break;
        const Item &item = items[i];
        if (!item.automatic || item.pinned || item.created == newest.value(item.space))
            continue;
        if (!QFile::remove(item.space + u'/' + item.name + QLatin1String(kSuffix)))
            continue;
        ELSAI_FAULT_POINT("unlink");
        removed.append(item.source + QStringLiteral(": ") + item.name);
        for (const auto &[hash, size] : item.blobs) {
            if (--refs[hash] == 0)
                used -= size;
        }
    }
    // Sweep every blob nothing refers to (a crash's leftovers included) and nobody pinned.
    const QHash<QByteArray, int> pins = [this] {
        QMutexLocker guard(&m_mutex);
        return m_pins;
    }();
    for (int b = 0; b < 256; ++b) {
        const QByteArray dir = QByteArray::number(b, 16).rightJustified(2, '0');
        const UniqueFd dirFd(::openat(m_blobsFd.get(), dir.constData(),
                                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!dirFd.isValid())
            continue;
        DIR *d = ::fdopendir(::fcntl(dirFd.get(), F_DUPFD_CLOEXEC, 0));
        if (!d)
            continue;
        QByteArrayList dead;
        while (const dirent *e = ::readdir(d)) {
            const QByteArray name(e->d_name);
            if (name == "." || name == "..")
                continue;
            const QByteArray hash = QByteArray::fromHex(dir + name);
            if (refs.value(hash) == 0 && !pins.contains(hash))
                dead.append(name);
        }
        ::closedir(d);
        for (const QByteArray &name : std::as_const(dead)) {
            ::unlinkat(dirFd.get(), name.constData(), 0);
            ELSAI_FAULT_POINT("unlink");
        }
    }
    if (usedBytes)
        *usedBytes = used;
    // Every process forgets the blobs it knew present (refreshPresence()).
    const QByteArray next = QByteArray::number(generation().toLongLong() + 1);
    writeHostFileAtomic(m_folder + QStringLiteral("/generation"), next, 0600);
    QMutexLocker guard(&m_mutex);
    m_bytesAdded = 0;
    m_present.clear();
    m_generation = next;
    return removed;
}

// ---- one workspace's checkpoints ----------------------------------------------------------

CheckpointSpace::CheckpointSpace(std::shared_ptr<CheckpointStore> store, const QString &backendId)
    : m_store(std::move(store))
{
    m_folder = m_store->folder() + QStringLiteral("/spaces/") + spaceKey(backendId);
    const UniqueFd fd = openHostFolder(m_folder, true);
    const QString source = m_folder + QStringLiteral("/source");
    if (readSmall(source, 4096) != backendId.toUtf8())
        writeHostFileAtomic(source, backendId.toUtf8(), 0600);
    removeStaleTempFiles(fd.get(), false);
}

void CheckpointSpace::checkName(const QString &name)
{
    static const QRegularExpression valid(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$"));
    if (!valid.match(name).hasMatch())
        throw ValueError(QStringLiteral("'%1' is not a checkpoint name: use 1 to 100 letters, "
                                        "digits, '.', '_' or '-', not starting with '.' or '-'")
                             .arg(name.left(120)));
    if (name == QLatin1String("now"))
        throw ValueError(QStringLiteral("'now' names the live workspace in a diff; choose "
                                        "another checkpoint name"));
}

QString CheckpointSpace::manifestPath(const QString &name) const
{
    checkName(name);
    return m_folder + u'/' + name + QLatin1String(kSuffix);
}

QList<TreeManifest> CheckpointSpace::list() const
{
    QList<TreeManifest> out;
    for (const QString &file : entryNames(m_folder)) {
        if (!file.endsWith(QLatin1String(kSuffix)) || file.startsWith(u'.'))
            continue;
        // the header is at the start: a note is at most a few KiB
        auto m = decodeManifest(readSmall(m_folder + u'/' + file, 64 * 1024), nullptr, true);
        if (m)
            out.append(std::move(*m));
    }
    std::sort(out.begin(), out.end(), [](const TreeManifest &a, const TreeManifest &b) {
        return a.createdMs != b.createdMs ? a.createdMs < b.createdMs : a.name < b.name;
    });
    return out;
}

std::optional<TreeManifest> CheckpointSpace::load(const QString &name) const
{
    const QString path = manifestPath(name);
    const UniqueFd dir = openHostFolder(m_folder, false);
    const QByteArray file = QFile::encodeName(name + QLatin1String(kSuffix));
    struct stat st;
    if (::fstatat(dir.get(), file.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return std::nullopt;
    if (st.st_size > kMaxManifestBytes)
        throw OSError(QStringLiteral("the checkpoint '%1' is larger than %2 bytes")
                          .arg(path)
                          .arg(kMaxManifestBytes),
                      EFBIG);
    QString error;
    auto m = decodeManifest(readHostFileAt(dir.get(), file, path), &error);
    if (!m)
        throw OSError(QStringLiteral("the checkpoint '%1' cannot be used: %2").arg(path, error),
                      EINVAL);
    return m;
}

bool CheckpointSpace::exists(const QString &name) const
{
    return QFileInfo::exists(manifestPath(name));
}

void CheckpointSpace::save(const TreeManifest &manifest, bool replace)
{
    const QString path = manifestPath(manifest.name);
    m_store->syncBlobs(); // blobs first, the manifest that refers to them last
    try {
        writeHostFileAtomic(path, encodeManifest(manifest), 0600, replace);
    } catch (const FileExistsError &) {
        throw FileExistsError(QStringLiteral("a checkpoint named '%1' exists; delete it first or "
                                             "choose another name")
                                  .arg(manifest.name),
                              EEXIST);
    }
}

bool CheckpointSpace::remove(const QString &name)
{
    const QString path = manifestPath(name);
    if (journal() == name)
        throw PermissionError(QStringLiteral("the checkpoint '%1' is the target of an "
                                             "interrupted restore; finish the restore first")
                                  .arg(name),
                              EBUSY);
    if (!QFile::exists(path))
        return false;
    if (!QFile::remove(path))
        throw OSError(QStringLiteral("cannot delete the checkpoint '%1'").arg(path));
    return true;
}

void CheckpointSpace::writeJournal(const QString &checkpoint)
{
    writeHostFileAtomic(m_folder + u'/' + QLatin1String(kJournal), checkpoint.toUtf8(), 0600);
}

std::optional<QString> CheckpointSpace::journal() const
{
    const QByteArray data = readSmall(m_folder + u'/' + QLatin1String(kJournal), 4096);
    if (data.isEmpty())
        return std::nullopt;
    return QString::fromUtf8(data);
}

void CheckpointSpace::clearJournal()
{
    const QString path = m_folder + u'/' + QLatin1String(kJournal);
    if (QFile::exists(path) && !QFile::remove(path))
        throw OSError(QStringLiteral("cannot remove the restore journal '%1'").arg(path));
    ELSAI_FAULT_POINT("unlink");
}

} // namespace elsai
