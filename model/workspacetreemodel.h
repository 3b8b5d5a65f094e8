// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "treecopy.h"
#include "types.h"

#include <QAbstractItemModel>
#include <QFuture>
#include <QHash>
#include <QList>
#include <QPersistentModelIndex>

#include <functional>
#include <memory>

namespace elsai {

/// How a workspace file compares with what seeding copied in.
enum class ChangeMark { None, Added, Modified };

/// Lazily loaded tree of one workspace.
///
/// Listing runs off the GUI thread through the lister (a function returning a QFuture, e.g.
/// QtConcurrent::run on the controller's pool); each folder has a load state (not fetched /
/// fetching / fetched) and its new children are inserted at most insertChunkSize() rows per
/// event-loop pass (a 20,000-entry folder arrives in chunks, the GUI keeps running; the
/// folder counts as fetched, and folderLoaded() is emitted, once every row is in).
/// Updates are incremental, never a reset: refreshFolder() re-lists a fetched folder and merges
/// (insert / remove / dataChanged); pathsChanged() refreshes the folders holding the given
/// paths; refreshAll() re-lists every fetched folder (the controller calls it on a timer for
/// changes made by commands). Columns: Name, Size, Modified, Type; rows are folders first, then
/// by name (case-sensitive). Files added or modified since seeding (setSeedBaseline) carry a
/// ChangeMark; so do folders: Added when no seeded file was in them (a new folder), Modified
/// when a loaded child is marked (kept up to date incrementally, up the ancestors). A folder
/// not loaded yet shows only its own Added mark. GUI thread only.
class WorkspaceTreeModel : public QAbstractItemModel
{
    Q_OBJECT

public:
    enum Column { NameColumn, SizeColumn, ModifiedColumn, TypeColumn, ColumnCount };
    /// Lists one folder: a workspace-relative path, "." for the root (WorkspaceFs refuses "").
    using Lister = std::function<QFuture<QList<FileInfo>>(const QString &path)>;

    explicit WorkspaceTreeModel(QObject *parent = nullptr);
    /// New rows inserted per folder and event-loop pass.
    static int insertChunkSize() { return 1000; }
    ~WorkspaceTreeModel() override;

    /// Sets the lister and (re)loads the root. An empty lister clears the tree.
    void setLister(Lister lister);
    /// Baseline of seeded files: workspace-relative path → stamp of the copy after seeding.
    void setSeedBaseline(const QHash<QString, FileStamp> &baseline);

    void refreshFolder(const QString &path);
    void pathsChanged(const QStringList &paths);
    void refreshAll();

    QModelIndex indexForPath(const QString &path) const;
    QString pathForIndex(const QModelIndex &index) const;
    bool isFetched(const QString &folder) const;
    /// True while any listing is in flight (tests wait on listingsSettled()).
    bool isBusy() const;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    bool hasChildren(const QModelIndex &parent = {}) const override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

Q_SIGNALS:
    void folderLoaded(const QString &path);
    /// A failed first listing leaves the folder fetched and empty (refreshes retry it); the same
    /// failure is reported once until a listing of that folder succeeds.
    void listingFailed(const QString &path, const QString &errorType, const QString &message);
    void listingsSettled(); ///< no listing in flight any more

private:
    struct Node;
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace elsai
