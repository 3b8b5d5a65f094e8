// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "treemanifest.h"

#include <QAbstractItemModel>
#include <QFuture>

#include <memory>
#include <vector>

namespace elsai {

class CheckpointStore;
class TimeTravel;

/// The workspace as a checkpoint recorded it, read-only (docs/window.md, Timeline: "Show
/// Workspace"): a tree over the checkpoint's manifest — folders first, then files and links,
/// each by name — whose files are read from the checkpoint store, never from the workspace.
/// The manifest is read off the GUI thread (load()); showing another checkpoint resets the
/// model. Columns: Name, Size, Type.
class CheckpointTreeModel : public QAbstractItemModel
{
    Q_OBJECT

public:
    enum Column { NameColumn, SizeColumn, TypeColumn, ColumnCount };
    /// Files larger than this are not opened (their size and hash are shown instead).
    static constexpr qint64 maxOpenBytes() { return 16 * 1024 * 1024; }

    explicit CheckpointTreeModel(QObject *parent = nullptr);
    ~CheckpointTreeModel() override;

    /// Builds the tree of checkpoint `name` of `timeTravel` on `pool`; loaded() or failed().
    void load(std::shared_ptr<TimeTravel> timeTravel, const QString &name, QThreadPool *pool);
    QString checkpoint() const { return m_name; }
    /// The entry of an index (none for an invalid one).
    const TreeEntry *entry(const QModelIndex &index) const;
    QModelIndex indexForPath(const QString &path) const;
    /// The bytes of a file of the checkpoint, read from the store on `pool` (OSError for a
    /// folder, a link or a file over maxOpenBytes()).
    QFuture<QByteArray> readFile(const QString &path, QThreadPool *pool) const;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    struct Node
    {
        int entry = -1; ///< into the manifest's entries; -1: the root
        int parent = -1;
        int row = 0; ///< among its parent's children
        std::vector<int> children;
        QString name;
    };
    struct Tree
    {
        TreeManifest manifest;
        std::vector<Node> nodes; ///< nodes[0] is the root
    };

Q_SIGNALS:
    void loaded();
    void failed(const QString &message);

private:
    const Node *node(const QModelIndex &index) const;
    std::shared_ptr<const Tree> m_tree;
    std::shared_ptr<CheckpointStore> m_store; ///< where the files are read from
    QString m_name;
    quint64 m_serial = 0;
};

/// The tree of a manifest (folders first, then by name); entries whose folder is missing from
/// it hang beneath the root.
CheckpointTreeModel::Tree buildCheckpointTree(TreeManifest manifest);

} // namespace elsai
