// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "checkpointtreemodel.h"

#include "checkpointstore.h"
#include "displaytext.h"
#include "errors.h"
#include "modelroles.h"
#include "sandboxcontroller.h"
#include "threadpriority.h"
#include "timetravel.h"
#include "types.h"

#include <QFutureWatcher>
#include <QHash>
#include <QLocale>
#include <QtConcurrent>

#include <algorithm>

namespace elsai {

CheckpointTreeModel::Tree buildCheckpointTree(TreeManifest manifest)
{
    CheckpointTreeModel::Tree tree;
    tree.manifest = std::move(manifest);
    const std::vector<TreeEntry> &entries = tree.manifest.entries;
    tree.nodes.reserve(entries.size() + 1);
    tree.nodes.push_back({});
    QHash<QByteArray, int> folders; // path → node
    for (int i = 0; i < int(entries.size()); ++i) {
        const TreeEntry &e = entries[size_t(i)];
        const qsizetype slash = e.path.lastIndexOf('/');
        const int parent = slash < 0 ? 0 : folders.value(e.path.left(slash), 0);
        CheckpointTreeModel::Node n;
        n.entry = i;
        n.parent = parent;
        n.name = QString::fromUtf8(slash < 0 ? e.path : e.path.mid(slash + 1));
        const int id = int(tree.nodes.size());
        tree.nodes.push_back(std::move(n));
        tree.nodes[size_t(parent)].children.push_back(id);
        if (e.type == TreeEntry::Type::Dir)
            folders.insert(e.path, id);
    }
    // Folders first, then by name (as the workspace tree).
    for (CheckpointTreeModel::Node &n : tree.nodes) {
        std::sort(n.children.begin(), n.children.end(), [&](int a, int b) {
            const auto &na = tree.nodes[size_t(a)];
            const auto &nb = tree.nodes[size_t(b)];
            const bool da = entries[size_t(na.entry)].type == TreeEntry::Type::Dir;
            const bool db = entries[size_t(nb.entry)].type == TreeEntry::Type::Dir;
            if (da != db)
                return da;
            return na.name.compare(nb.name, Qt::CaseInsensitive) < 0;
        });
        for (size_t r = 0; r < n.children.size(); ++r)
            tree.nodes[size_t(n.children[r])].row = int(r);
    }
    return tree;
}

CheckpointTreeModel::CheckpointTreeModel(QObject *parent) : QAbstractItemModel(parent) {}

CheckpointTreeModel::~CheckpointTreeModel() = default;

void CheckpointTreeModel::load(std::shared_ptr<TimeTravel> timeTravel, const QString &name,
                               QThreadPool *pool)
{
    const quint64 serial = ++m_serial;
    auto *watcher = new QFutureWatcher<std::shared_ptr<const Tree>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this,
            [this, watcher, serial, name, timeTravel] {
                watcher->deleteLater();
                if (serial != m_serial)
                    return; // another checkpoint asked for meanwhile
                try {
                    std::shared_ptr<const Tree> tree = watcher->result();
                    beginResetModel();
                    m_tree = std::move(tree);
                    m_store = timeTravel->store().shared_from_this();
                    m_name = name;
                    endResetModel();
                    Q_EMIT loaded();
                } catch (...) {
                    const auto err = futureError(std::current_exception());
                    Q_EMIT failed(err ? err->second : QString());
                }
            });
    watcher->setFuture(QtConcurrent::run(pool, [timeTravel, name] {
        lowerThreadPriority();
        if (!timeTravel)
            throw OSError(QStringLiteral("the sandbox is not running"));
        return std::shared_ptr<const Tree>(
            std::make_shared<Tree>(buildCheckpointTree(timeTravel->manifest(name))));
    }));
}

const CheckpointTreeModel::Node *CheckpointTreeModel::node(const QModelIndex &index) const
{
    if (!m_tree)
        return nullptr;
    const int id = index.isValid() ? int(index.internalId()) : 0;
    return id >= 0 && size_t(id) < m_tree->nodes.size() ? &m_tree->nodes[size_t(id)] : nullptr;
}

const TreeEntry *CheckpointTreeModel::entry(const QModelIndex &index) const
{
    const Node *n = index.isValid() ? node(index) : nullptr;
    return n && n->entry >= 0 ? &m_tree->manifest.entries[size_t(n->entry)] : nullptr;
}

QModelIndex CheckpointTreeModel::indexForPath(const QString &path) const
{
    if (!m_tree)
        return {};
    const TreeEntry *e = m_tree->manifest.find(path.toUtf8());
    if (!e)
        return {};
    const int entryIndex = int(e - m_tree->manifest.entries.data());
    // Nodes are made in entry order, after the root.
    const int id = entryIndex + 1;
    return createIndex(m_tree->nodes[size_t(id)].row, 0, quintptr(id));
}

QFuture<QByteArray> CheckpointTreeModel::readFile(const QString &path, QThreadPool *pool) const
{
    std::optional<TreeEntry> e;
    if (m_tree) {
        if (const TreeEntry *found = m_tree->manifest.find(path.toUtf8()))
            e = *found;
    }
    const std::shared_ptr<CheckpointStore> store = m_store;
    const QString name = m_name;
    return QtConcurrent::run(pool, [store, e, path, name] {
        if (!e || !store)
            throw FileNotFoundError(
                QStringLiteral("'%1' is not in checkpoint '%2'").arg(path, name), ENOENT);
        if (e->type != TreeEntry::Type::File)
            throw IsADirectoryError(
                QStringLiteral("'%1' is not a file in checkpoint '%2'").arg(path, name), EISDIR);
        if (e->size > maxOpenBytes())
            throw OSError(QStringLiteral("'%1' is %2 bytes: larger than %3 bytes, it is not "
                                         "opened")
                              .arg(path)
                              .arg(e->size)
                              .arg(maxOpenBytes()),
                          EFBIG);
        return store->readBlob(e->hash);
    });
}

QModelIndex CheckpointTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    const Node *p = node(parent);
    if (!p || row < 0 || column < 0 || column >= ColumnCount || size_t(row) >= p->children.size())
        return {};
    return createIndex(row, column, quintptr(p->children[size_t(row)]));
}

QModelIndex CheckpointTreeModel::parent(const QModelIndex &child) const
{
    const Node *n = child.isValid() ? node(child) : nullptr;
    if (!n || n->parent <= 0)
        return {};
    return createIndex(m_tree->nodes[size_t(n->parent)].row, 0, quintptr(n->parent));
}

int CheckpointTreeModel::rowCount(const QModelIndex &parent) const
{
    if (parent.column() > 0)
        return 0;
    const Node *n = node(parent);
    return n ? int(n->children.size()) : 0;
}

int CheckpointTreeModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant CheckpointTreeModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Node *n = node(index);
    const TreeEntry *e = entry(index);
    if (!n || !e)
        return {};
    const bool dir = e->type == TreeEntry::Type::Dir;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return n->name;
        case SizeColumn:
            return e->type == TreeEntry::Type::File ? sizeText(e->size) : QString();
        case TypeColumn:
            if (e->type == TreeEntry::Type::Symlink)
                return tr("link → %1").arg(QString::fromUtf8(e->target));
            return dir ? tr("folder") : tr("file, mode %1").arg(QString::number(e->mode, 8));
        }
        return {};
    case Qt::ToolTipRole:
        return e->displayPath();
    case Roles::PathRole:
        return e->displayPath();
    case Roles::IsDirRole:
        return dir;
    case Roles::SizeRole:
        return dir ? QVariant() : QVariant(e->size);
    case Roles::FileTypeRole:
        return int(dir                                   ? FileInfo::Type::Directory
                   : e->type == TreeEntry::Type::Symlink ? FileInfo::Type::Symlink
                                                         : FileInfo::Type::File);
    }
    return {};
}

QVariant CheckpointTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Name");
    case SizeColumn:
        return tr("Size");
    case TypeColumn:
        return tr("Type");
    }
    return {};
}

QHash<int, QByteArray> CheckpointTreeModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractItemModel::roleNames();
    names.insert(Roles::PathRole, "path");
    names.insert(Roles::IsDirRole, "isDir");
    names.insert(Roles::SizeRole, "size");
    names.insert(Roles::FileTypeRole, "fileType");
    return names;
}

} // namespace elsai
