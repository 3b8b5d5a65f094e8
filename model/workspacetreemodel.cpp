// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "workspacetreemodel.h"

#include "displaytext.h"
#include "errors.h"
#include "modelroles.h"
#include "workspacechanges.h"

#include <QDateTime>
#include <QFutureWatcher>
#include <QLocale>
#include <QSet>
#include <QTimer>
#include <QUnhandledException>

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

namespace elsai {

namespace {

using Listing = QList<FileInfo>;
using ListingWatcher = QFutureWatcher<Listing>;

// "", "." → root; "./a//b/" → "a/b".
QString normalizedPath(const QString &path)
{
    QStringList parts;
    for (const QString &part : path.split(u'/', Qt::SkipEmptyParts)) {
        if (part != u".")
            parts.append(part);
    }
    return parts.join(u'/');
}

QString parentPath(const QString &path)
{
    const qsizetype slash = path.lastIndexOf(u'/');
    return slash < 0 ? QString() : path.left(slash);
}

QString childPath(const QString &folder, const QString &name)
{
    return folder.isEmpty() ? name : folder + u'/' + name;
}

// Folders first, then by name (QString order: case-sensitive, by UTF-16 code unit).
bool sortsBefore(bool aDir, const QString &a, bool bDir, const QString &b)
{
    if (aDir != bDir)
        return aDir;
    return a < b;
}

QString typeName(FileInfo::Type type)
{
    switch (type) {
    case FileInfo::Type::File:
        return QStringLiteral("file");
    case FileInfo::Type::Directory:
        return QStringLiteral("folder");
    case FileInfo::Type::Symlink:
        return QStringLiteral("symlink");
    case FileInfo::Type::Other:
        return QStringLiteral("special");
    }
    return {};
}

struct Failure
{
    QString type;
    QString message;
};

// QtConcurrent::run wraps non-QException errors in QUnhandledException; a QPromise-made
// future rethrows the original. Both end up here.
Failure describe(const std::exception_ptr &error)
{
    const ErrorDescription d = describeError(error);
    return {d.type, d.message};
}

} // namespace

struct WorkspaceTreeModel::Node
{
    enum class LoadState { NotFetched, Fetching, Fetched };

    QString name;
    FileInfo info; ///< info.path is rebuilt from the parent, whatever the lister returned
    Node *parent = nullptr;
    std::vector<std::unique_ptr<Node>> children;
    int row = 0;
    LoadState loadState = LoadState::NotFetched;
    QString lastFailure;    ///< last reported failure, so timer refreshes don't repeat it
    int markedChildren = 0; ///< children (files or folders) whose ChangeMark is not None

    bool isFolder() const { return info.isDir; }
    bool isLoaded() const { return loadState != LoadState::NotFetched; }
};

struct WorkspaceTreeModel::Private
{
    struct Pending
    {
        ListingWatcher *watcher = nullptr;
        bool again = false; ///< refresh requested while in flight: list once more afterwards
    };

    explicit Private(WorkspaceTreeModel *model) : q(model)
    {
        root.info.isDir = true;
        root.info.type = FileInfo::Type::Directory;
    }

    WorkspaceTreeModel *q;
    Lister lister;
    Node root;
    QHash<QString, FileStamp> baseline;
    QSet<QString> baselineFolders;   ///< every folder that held a seeded file
    QHash<QString, Pending> pending; ///< keyed by folder path: nodes may die while listing
    /// Listings whose rows are still being inserted, a chunk per event-loop pass.
    QHash<QString, Listing> continuing;
    QTimer continueTimer;

    Node *nodeFor(const QModelIndex &index) const
    {
        return index.isValid() ? static_cast<Node *>(index.internalPointer())
                               : const_cast<Node *>(&root);
    }

    QModelIndex indexOf(Node *node, int column = 0) const
    {
        return node == &root ? QModelIndex() : q->createIndex(node->row, column, node);
    }

    static Node *findChild(const Node *folder, const QString &name)
    {
        const auto &c = folder->children;
        const auto firstFile =
            std::partition_point(c.begin(), c.end(), [](const auto &n) { return n->isFolder(); });
        const auto byName = [](const auto &n, const QString &key) { return n->name < key; };
        const auto ranges = {std::pair(c.begin(), firstFile), std::pair(firstFile, c.end())};
        for (const auto &[b, e] : ranges) {
            const auto it = std::lower_bound(b, e, name, byName);
            if (it != e && (*it)->name == name)
                return it->get();
        }
        return nullptr;
    }

    Node *findNode(const QString &normalized) const
    {
        Node *node = const_cast<Node *>(&root);
        for (const QString &part : normalized.split(u'/', Qt::SkipEmptyParts)) {
            node = findChild(node, part);
            if (!node)
                return nullptr;
        }
        return node;
    }

    // The folder that must be re-listed for a change at `normalized` to show up: its parent,
    // or the deepest existing folder on the way there when the parent is new.
    Node *holderOf(const QString &normalized) const
    {
        Node *node = const_cast<Node *>(&root);
        for (const QString &part : parentPath(normalized).split(u'/', Qt::SkipEmptyParts)) {
            Node *child = findChild(node, part);
            if (!child || !child->isFolder())
                break;
            node = child;
        }
        return node;
    }

    static void renumber(Node *folder, size_t from)
    {
        for (size_t i = from; i < folder->children.size(); ++i)
            folder->children[i]->row = int(i);
    }

    ChangeMark changeMark(const Node *node) const
    {
        if (baseline.isEmpty() || node == &root)
            return ChangeMark::None;
        if (node->isFolder()) {
            // A folder that held no seeded file is new; one with marked children is changed.
            if (!baselineFolders.contains(node->info.path))
                return ChangeMark::Added;
            return node->markedChildren > 0 ? ChangeMark::Modified : ChangeMark::None;
        }
        const auto it = baseline.constFind(node->info.path);
        if (it == baseline.cend())
            return ChangeMark::Added;
        if (stampChanged(*it, node->info))
            return ChangeMark::Modified;
        return ChangeMark::None;
    }

    int countMarked(const Node *folder) const
    {
        int n = 0;
        for (const auto &child : folder->children)
            n += changeMark(child.get()) != ChangeMark::None;
        return n;
    }

    // After `folder`'s children changed: recount, and walk up while a folder's own mark
    // flips (only then can its parent's count change). Views hear of each flipped folder.
    void updateFolderMarks(Node *folder)
    {
        for (Node *node = folder; node; node = node->parent) {
            const ChangeMark before = changeMark(node);
            node->markedChildren = countMarked(node);
            if (changeMark(node) == before)
                return;
            if (node != &root)
                Q_EMIT q->dataChanged(indexOf(node), indexOf(node, ColumnCount - 1),
                                      {Roles::ChangeMarkRole});
        }
    }

    // Bottom-up for every loaded folder (a new baseline).
    int recountAll(Node *folder)
    {
        for (const auto &child : folder->children) {
            if (child->isFolder())
                recountAll(child.get());
        }
        folder->markedChildren = countMarked(folder);
        return folder->markedChildren;
    }

    void requestListing(const QString &path)
    {
        const auto it = pending.find(path);
        if (it != pending.end())
            it->again = true;
        else
            startListing(path);
    }

    void startListing(const QString &path)
    {
        auto *watcher = new ListingWatcher(q);
        pending.insert(path, {watcher, false});
        QObject::connect(watcher, &ListingWatcher::finished, q,
                         [this, path, watcher] { onListed(path, watcher); });
        QFuture<Listing> future;
        try {
            // WorkspaceFs and the backends refuse "" and want "." for the root.
            future = lister(path.isEmpty() ? QStringLiteral(".") : path);
        } catch (...) {
            future = QtFuture::makeExceptionalFuture<Listing>(std::current_exception());
        }
        // Even a ready future reports through the event loop, so results always arrive queued.
        watcher->setFuture(future);
    }

    void dropPending()
    {
        for (const Pending &p : std::as_const(pending)) {
            p.watcher->disconnect(q);
            p.watcher->deleteLater();
        }
        pending.clear();
    }

    void onListed(const QString &path, ListingWatcher *watcher)
    {
        watcher->deleteLater();
        const auto it = pending.constFind(path);
        if (it == pending.cend() || it->watcher != watcher)
            return;
        const bool again = it->again;
        pending.erase(it);

        Listing entries;
        std::optional<Failure> failure;
        QFuture<Listing> future = watcher->future();
        try {
            future.waitForFinished();
            const QList<Listing> all = future.results();
            if (all.isEmpty())
                failure = Failure{QStringLiteral("CancelledError"),
                                  QStringLiteral("the listing was cancelled")};
            else
                entries = all.first();
        } catch (...) {
            failure = describe(std::current_exception());
        }

        // Look the folder up again: a refresh may have removed or replaced it meanwhile.
        Node *folder = findNode(path);
        const bool wanted = folder && folder->isFolder() && folder->isLoaded();
        if (wanted) {
            if (failure) {
                continuing.remove(path);
                fail(folder, *failure);
            } else {
                // Busy until the last chunk is in; a newer listing replaces an older rest.
                continuing.insert(path, entries);
                if (merge(folder, entries)) {
                    continuing.remove(path);
                    finishLoad(folder);
                } else {
                    continueTimer.start();
                }
            }
            if (again && findNode(path) == folder)
                startListing(path);
        } else {
            continuing.remove(path);
        }
        if (pending.isEmpty() && continuing.isEmpty())
            Q_EMIT q->listingsSettled();
    }

    void finishLoad(Node *folder)
    {
        folder->loadState = Node::LoadState::Fetched;
        folder->lastFailure.clear();
        Q_EMIT q->folderLoaded(folder->info.path);
    }

    // One more chunk of each folder whose listing is not fully inserted yet.
    void continueMerges()
    {
        const QStringList paths = continuing.keys();
        for (const QString &path : paths) {
            Node *folder = findNode(path);
            if (!folder || !folder->isFolder() || !folder->isLoaded()) {
                continuing.remove(path);
                continue;
            }
            if (merge(folder, continuing.value(path))) {
                continuing.remove(path);
                finishLoad(folder);
            }
        }
        if (!continuing.isEmpty())
            continueTimer.start();
        else if (pending.isEmpty())
            Q_EMIT q->listingsSettled();
    }

    // A failed first listing leaves the folder fetched and empty (views would otherwise call
    // fetchMore again in a loop); refreshFolder()/refreshAll() retry it. A failed refresh keeps
    // the rows already shown.
    void fail(Node *folder, const Failure &failure)
    {
        folder->loadState = Node::LoadState::Fetched;
        const QString key = failure.type + u':' + failure.message;
        if (folder->lastFailure == key)
            return;
        folder->lastFailure = key;
        Q_EMIT q->listingFailed(folder->info.path, failure.type, failure.message);
    }

    // Merges a listing into `folder`: removals and changes at once, at most
    // insertChunkSize() new rows; false when rows are left for the next pass.
    bool merge(Node *folder, const Listing &listing)
    {
        struct Entry
        {
            QString name;
            FileInfo info;
        };
        std::vector<Entry> fresh;
        fresh.reserve(size_t(listing.size()));
        QSet<QString> seen;
        for (const FileInfo &info : listing) {
            const QString name = info.path.section(u'/', -1);
            if (name.isEmpty() || name == u"." || name == u".." || seen.contains(name))
                continue;
            seen.insert(name);
            fresh.push_back({name, info});
            fresh.back().info.path = childPath(folder->info.path, name);
        }
        std::sort(fresh.begin(), fresh.end(), [](const Entry &a, const Entry &b) {
            return sortsBefore(a.info.isDir, a.name, b.info.isDir, b.name);
        });
        QHash<QString, const FileInfo *> byName;
        for (const Entry &entry : fresh)
            byName.insert(entry.name, &entry.info);

        const QModelIndex parentIndex = indexOf(folder);
        auto &children = folder->children;

        // Removed, or switched between folder and file: that moves the row (folders sort
        // first) and a former folder must lose its children, so it is removed and re-added.
        const auto kept = [&](const Node &n) {
            const FileInfo *info = byName.value(n.name);
            return info && info->isDir == n.isFolder();
        };
        for (int end = int(children.size()) - 1; end >= 0;) {
            if (kept(*children[end])) {
                --end;
                continue;
            }
            int start = end;
            while (start > 0 && !kept(*children[start - 1]))
                --start;
            q->beginRemoveRows(parentIndex, start, end);
            children.erase(children.begin() + start, children.begin() + end + 1);
            renumber(folder, start);
            q->endRemoveRows();
            end = start - 1;
        }

        // Changed: the Name column is included since views decorate it by type and mark.
        for (const auto &child : children) {
            const FileInfo &info = *byName.value(child->name);
            int last = -1;
            if (info.type != child->info.type)
                last = TypeColumn;
            else if (info.mtimeMs != child->info.mtimeMs)
                last = ModifiedColumn;
            else if (info.size != child->info.size)
                last = SizeColumn;
            if (last < 0)
                continue;
            child->info = info;
            Q_EMIT q->dataChanged(indexOf(child.get()), indexOf(child.get(), last));
        }

        // Added: both lists share one order, so each run of new names goes in at one place.
        size_t row = 0;
        size_t i = 0;
        size_t budget = size_t(insertChunkSize());
        const auto matches = [&](size_t r, size_t k) {
            return r < children.size() && children[r]->name == fresh[k].name;
        };
        while (i < fresh.size()) {
            if (matches(row, i)) {
                ++row;
                ++i;
                continue;
            }
            if (budget == 0) {
                updateFolderMarks(folder);
                return false;
            }
            size_t j = i;
            while (j < fresh.size() && j - i < budget && !matches(row, j))
                ++j;
            budget -= j - i;
            std::vector<std::unique_ptr<Node>> added;
            for (size_t k = i; k < j; ++k) {
                auto node = std::make_unique<Node>();
                node->name = fresh[k].name;
                node->info = fresh[k].info;
                node->parent = folder;
                added.push_back(std::move(node));
            }
            q->beginInsertRows(parentIndex, int(row), int(row + added.size()) - 1);
            children.insert(children.begin() + qsizetype(row),
                            std::make_move_iterator(added.begin()),
                            std::make_move_iterator(added.end()));
            renumber(folder, row);
            q->endInsertRows();
            row += j - i;
            i = j;
        }
        updateFolderMarks(folder);
        return true;
    }

    template<typename Fn>
    void forEachLoadedFolder(Fn fn)
    {
        std::vector<Node *> stack{&root};
        while (!stack.empty()) {
            Node *node = stack.back();
            stack.pop_back();
            if (!node->isFolder() || !node->isLoaded())
                continue;
            fn(node);
            for (const auto &child : node->children)
                stack.push_back(child.get());
        }
    }
};

WorkspaceTreeModel::WorkspaceTreeModel(QObject *parent)
    : QAbstractItemModel(parent), d(std::make_unique<Private>(this))
{
    // Zero interval: the next chunk goes in once the events queued meanwhile have run.
    d->continueTimer.setSingleShot(true);
    d->continueTimer.setInterval(0);
    connect(&d->continueTimer, &QTimer::timeout, this, [this] { d->continueMerges(); });
}

WorkspaceTreeModel::~WorkspaceTreeModel()
{
    d->dropPending();
}

void WorkspaceTreeModel::setLister(Lister lister)
{
    const bool wasBusy = isBusy();
    d->dropPending();
    d->continuing.clear();
    d->continueTimer.stop();
    beginResetModel();
    d->root.children.clear();
    d->root.markedChildren = 0;
    d->root.loadState = Node::LoadState::NotFetched;
    d->root.lastFailure.clear();
    d->lister = std::move(lister);
    endResetModel();
    // A QAbstractItemModelTester may already have fetched the root from modelReset.
    if (canFetchMore({}))
        fetchMore({});
    if (wasBusy && !isBusy())
        Q_EMIT listingsSettled();
}

void WorkspaceTreeModel::setSeedBaseline(const QHash<QString, FileStamp> &baseline)
{
    d->baseline = baseline;
    d->baselineFolders.clear();
    for (auto it = baseline.cbegin(); it != baseline.cend(); ++it) {
        for (QString folder = parentPath(normalizedPath(it.key())); !folder.isEmpty();
             folder = parentPath(folder)) {
            if (d->baselineFolders.contains(folder))
                break;
            d->baselineFolders.insert(folder);
        }
    }
    d->recountAll(&d->root);
    d->forEachLoadedFolder([this](Node *folder) {
        if (folder->children.empty())
            return;
        const QModelIndex parent = d->indexOf(folder);
        Q_EMIT dataChanged(index(0, 0, parent),
                           index(int(folder->children.size()) - 1, ColumnCount - 1, parent),
                           {Roles::ChangeMarkRole});
    });
}

void WorkspaceTreeModel::refreshFolder(const QString &path)
{
    Node *node = d->findNode(normalizedPath(path));
    if (d->lister && node && node->isFolder() && node->isLoaded())
        d->requestListing(node->info.path);
}

void WorkspaceTreeModel::pathsChanged(const QStringList &paths)
{
    if (!d->lister)
        return;
    QSet<QString> folders;
    for (const QString &raw : paths) {
        const QString path = normalizedPath(raw);
        const Node *node = d->findNode(path);
        if (node && node->isFolder() && node->isLoaded())
            folders.insert(path);
        if (path.isEmpty())
            continue;
        const Node *holder = d->holderOf(path);
        if (holder->isLoaded())
            folders.insert(holder->info.path);
    }
    QStringList sorted(folders.begin(), folders.end());
    sorted.sort();
    for (const QString &folder : std::as_const(sorted))
        d->requestListing(folder);
}

void WorkspaceTreeModel::refreshAll()
{
    if (!d->lister)
        return;
    // Folders still on their first listing are skipped: that listing is fresh enough.
    d->forEachLoadedFolder([this](Node *folder) {
        if (folder->loadState == Node::LoadState::Fetched)
            d->requestListing(folder->info.path);
    });
}

QModelIndex WorkspaceTreeModel::indexForPath(const QString &path) const
{
    Node *node = d->findNode(normalizedPath(path));
    return node ? d->indexOf(node) : QModelIndex();
}

QString WorkspaceTreeModel::pathForIndex(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this)
        return {};
    return d->nodeFor(index)->info.path;
}

bool WorkspaceTreeModel::isFetched(const QString &folder) const
{
    const Node *node = d->findNode(normalizedPath(folder));
    return node && node->isFolder() && node->loadState == Node::LoadState::Fetched;
}

bool WorkspaceTreeModel::isBusy() const
{
    return !d->pending.isEmpty() || !d->continuing.isEmpty();
}

QModelIndex WorkspaceTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    return createIndex(row, column, d->nodeFor(parent)->children[size_t(row)].get());
}

QModelIndex WorkspaceTreeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    return d->indexOf(d->nodeFor(child)->parent);
}

int WorkspaceTreeModel::rowCount(const QModelIndex &parent) const
{
    if (parent.column() > 0)
        return 0;
    return int(d->nodeFor(parent)->children.size());
}

int WorkspaceTreeModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

bool WorkspaceTreeModel::hasChildren(const QModelIndex &parent) const
{
    if (parent.column() > 0)
        return false;
    const Node *node = d->nodeFor(parent);
    if (!node->isFolder())
        return false;
    // Unfetched folders show an expander until their listing says otherwise.
    if (node->loadState == Node::LoadState::Fetched || !d->lister)
        return !node->children.empty();
    return true;
}

bool WorkspaceTreeModel::canFetchMore(const QModelIndex &parent) const
{
    if (parent.column() > 0 || !d->lister)
        return false;
    const Node *node = d->nodeFor(parent);
    return node->isFolder() && node->loadState == Node::LoadState::NotFetched;
}

void WorkspaceTreeModel::fetchMore(const QModelIndex &parent)
{
    if (!canFetchMore(parent))
        return;
    Node *node = d->nodeFor(parent);
    node->loadState = Node::LoadState::Fetching;
    d->requestListing(node->info.path);
}

QVariant WorkspaceTreeModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid())
        return {};
    const Node *node = d->nodeFor(index);
    const FileInfo &info = node->info;
    const bool hasSize = info.size && !node->isFolder();
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return node->name;
        case SizeColumn:
            return hasSize ? sizeText(*info.size) : QVariant();
        case ModifiedColumn:
            // mtimeMs 0 means "unknown" (FileInfo's default).
            if (!info.mtimeMs)
                return {};
            return QDateTime::fromMSecsSinceEpoch(info.mtimeMs)
                .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        case TypeColumn:
            return typeName(info.type);
        }
        return {};
    case Qt::ToolTipRole:
        return info.path;
    case Qt::TextAlignmentRole:
        if (index.column() == SizeColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Roles::PathRole:
        return info.path;
    case Roles::IsDirRole:
        return node->isFolder();
    case Roles::FileTypeRole:
        return int(info.type);
    case Roles::SizeRole:
        return hasSize ? QVariant::fromValue<qint64>(*info.size) : QVariant();
    case Roles::MTimeRole:
        return info.mtimeMs ? QDateTime::fromMSecsSinceEpoch(info.mtimeMs) : QVariant();
    case Roles::ChangeMarkRole:
        return int(d->changeMark(node));
    }
    return {};
}

QVariant WorkspaceTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Name");
    case SizeColumn:
        return tr("Size");
    case ModifiedColumn:
        return tr("Modified");
    case TypeColumn:
        return tr("Type");
    }
    return {};
}

Qt::ItemFlags WorkspaceTreeModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (!d->nodeFor(index)->isFolder())
        f |= Qt::ItemNeverHasChildren;
    return f;
}

} // namespace elsai
