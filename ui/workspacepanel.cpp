#include "workspacepanel.h"

#include "modelroles.h"
#include "sandboxcontroller.h"
#include "workspacetreemodel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QDirIterator>
#include <QDropEvent>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QIdentityProxyModel>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QStyle>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace elsai {

namespace {

QString joinPath(const QString &folder, const QString &name)
{
    return folder.isEmpty() || folder == QLatin1String(".") ? name
                                                            : folder + QLatin1Char('/') + name;
}

/// Adds icons and the "changed since seeding" marks (colours and fonts live in ui/).
class DecoratedTreeProxy : public QIdentityProxyModel
{
public:
    using QIdentityProxyModel::QIdentityProxyModel;

    QVariant data(const QModelIndex &index, int role) const override
    {
        if (index.column() == WorkspaceTreeModel::NameColumn) {
            const auto mark =
                ChangeMark(QIdentityProxyModel::data(index, Roles::ChangeMarkRole).toInt());
            switch (role) {
            case Qt::DecorationRole: {
                const auto type =
                    FileInfo::Type(QIdentityProxyModel::data(index, Roles::FileTypeRole).toInt());
                QStyle *style = QApplication::style();
                switch (type) {
                case FileInfo::Type::Directory:
                    return style->standardIcon(QStyle::SP_DirIcon);
                case FileInfo::Type::Symlink:
                    return style->standardIcon(QStyle::SP_FileLinkIcon);
                default:
                    return style->standardIcon(QStyle::SP_FileIcon);
                }
            }
            case Qt::FontRole:
                if (mark != ChangeMark::None) {
                    QFont font;
                    font.setBold(mark == ChangeMark::Added);
                    font.setItalic(mark == ChangeMark::Modified);
                    return font;
                }
                break;
            case Qt::ForegroundRole:
                if (mark == ChangeMark::Added)
                    return QColor(0x2e, 0x9d, 0x4a);
                if (mark == ChangeMark::Modified)
                    return QColor(0xc0, 0x7a, 0x12);
                break;
            case Qt::ToolTipRole: {
                const QString path = QIdentityProxyModel::data(index, Roles::PathRole).toString();
                if (mark == ChangeMark::Added)
                    return WorkspacePanel::tr("%1 — added since seeding").arg(path);
                if (mark == ChangeMark::Modified)
                    return QIdentityProxyModel::data(index, Roles::IsDirRole).toBool()
                               ? WorkspacePanel::tr("%1 — holds changes since seeding").arg(path)
                               : WorkspacePanel::tr("%1 — modified since seeding").arg(path);
                return path;
            }
            default:
                break;
            }
        }
        return QIdentityProxyModel::data(index, role);
    }
};

/// Accepts local files dragged from the desktop.
class DropTreeView : public QTreeView
{
public:
    using QTreeView::QTreeView;
    std::function<void(const QList<QUrl> &, const QModelIndex &)> onDrop;

protected:
    static bool acceptable(const QMimeData *mime)
    {
        if (!mime || !mime->hasUrls())
            return false;
        const QList<QUrl> urls = mime->urls();
        return std::all_of(urls.begin(), urls.end(),
                           [](const QUrl &u) { return u.isLocalFile(); });
    }
    void dragEnterEvent(QDragEnterEvent *event) override
    {
        if (acceptable(event->mimeData()))
            event->acceptProposedAction();
        else
            event->ignore();
    }
    void dragMoveEvent(QDragMoveEvent *event) override
    {
        if (acceptable(event->mimeData()))
            event->acceptProposedAction();
        else
            event->ignore();
    }
    void dropEvent(QDropEvent *event) override
    {
        if (!acceptable(event->mimeData()) || !onDrop) {
            event->ignore();
            return;
        }
        event->setDropAction(Qt::CopyAction);
        event->accept();
        onDrop(event->mimeData()->urls(), indexAt(event->position().toPoint()));
    }
};

/// Host file → workspace path pairs for the given host paths; never follows a symlink.
struct HostWalk
{
    QList<QPair<QString, FileSource>> files;
    QStringList skipped;
};

HostWalk walkHostPaths(const QStringList &hostPaths, const QString &destFolder)
{
    // A bound keeps an accidental drop of a huge tree from flooding the workspace.
    constexpr int kMaxFiles = 20000;
    HostWalk walk;
    for (const QString &hostPath : hostPaths) {
        const QFileInfo top(hostPath);
        if (top.isSymLink() || !top.exists()) {
            walk.skipped.append(hostPath);
            continue;
        }
        if (top.isFile()) {
            walk.files.append({joinPath(destFolder, top.fileName()),
                               FileSource::hostPath(top.absoluteFilePath())});
            continue;
        }
        if (!top.isDir()) {
            walk.skipped.append(hostPath);
            continue;
        }
        const QDir base(top.absoluteFilePath());
        const QString destBase = joinPath(destFolder, top.fileName());
        // No FollowSymlinks: linked folders are not entered; NoSymLinks drops linked files;
        // without QDir::System, FIFOs, sockets and devices are not listed.
        QDirIterator it(base.path(), QDir::Files | QDir::NoSymLinks | QDir::Hidden,
                        QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            if (walk.files.size() >= kMaxFiles) {
                walk.skipped.append(file);
                break;
            }
            walk.files.append(
                {joinPath(destBase, base.relativeFilePath(file)), FileSource::hostPath(file)});
        }
    }
    return walk;
}

} // namespace

WorkspacePanel::WorkspacePanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_view(new DropTreeView(this)),
      m_proxy(new DecoratedTreeProxy(this)), m_error(new QLabel(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_error);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #c62828; padding: 2px 4px;"));
    m_error->hide();

    m_view->setModel(m_proxy);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setUniformRowHeights(true);
    m_view->setAcceptDrops(true);
    m_view->viewport()->setAcceptDrops(true);
    m_view->setDropIndicatorShown(true);
    m_view->setDragDropMode(QAbstractItemView::DropOnly);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    static_cast<DropTreeView *>(m_view)->onDrop = [this](const QList<QUrl> &urls,
                                                         const QModelIndex &at) {
        QStringList paths;
        for (const QUrl &url : urls)
            paths.append(url.toLocalFile());
        QString folder;
        if (at.isValid()) {
            const QString path = at.data(Roles::PathRole).toString();
            folder = at.data(Roles::IsDirRole).toBool() ? path : QFileInfo(path).path();
        }
        addHostPaths(paths, folder == QLatin1String(".") ? QString() : folder);
    };

    connect(m_view, &QTreeView::activated, this, [this](const QModelIndex &index) {
        if (!index.data(Roles::IsDirRole).toBool())
            Q_EMIT fileActivated(m_workspaceId, index.data(Roles::PathRole).toString());
    });
    connect(m_view, &QWidget::customContextMenuRequested, this, &WorkspacePanel::showContextMenu);
    connect(m_controller, &SandboxController::operationFailed, this,
            [this](const QString &ws, const QString &operation, const QString &type,
                   const QString &message) {
                if (ws == m_workspaceId)
                    showError(QStringLiteral("%1 failed — %2: %3")
                                  .arg(operation, type, message));
            });
    connect(m_controller, &SandboxController::sandboxRemoved, this, [this](const QString &ws) {
        if (ws == m_workspaceId)
            setWorkspace(QString());
    });

    createActions();
    updateActions();
}

void WorkspacePanel::createActions()
{
    auto make = [this](const QString &text, QKeySequence key, auto slot) {
        auto *a = new QAction(text, this);
        if (!key.isEmpty()) {
            a->setShortcut(key);
            a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        }
        connect(a, &QAction::triggered, this, slot);
        addAction(a);
        m_actions.append(a);
        return a;
    };
    // Same order as the Action enum.
    make(tr("&Open"), QKeySequence(), &WorkspacePanel::openSelected);
    make(tr("&Add Files…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A),
         &WorkspacePanel::addFilesInteractive);
    make(tr("&Download To…"), QKeySequence(), &WorkspacePanel::downloadInteractive);
    make(tr("De&lete…"), QKeySequence(QKeySequence::Delete), &WorkspacePanel::deleteInteractive);
    make(tr("&Rename / Move…"), QKeySequence(Qt::Key_F2), &WorkspacePanel::renameInteractive);
    make(tr("New &File…"), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_N),
         &WorkspacePanel::newFileInteractive);
    make(tr("New F&older…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N),
         &WorkspacePanel::newFolderInteractive);
    make(tr("&Copy Path"), QKeySequence(QKeySequence::Copy), &WorkspacePanel::copyPaths);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &WorkspacePanel::updateActions);
}

QAction *WorkspacePanel::action(Action which) const
{
    return m_actions.value(int(which));
}

void WorkspacePanel::updateActions()
{
    const bool has = !m_workspaceId.isEmpty() && m_controller->sandbox(m_workspaceId);
    const int selected = selectedPaths().size();
    action(Action::Open)->setEnabled(has && selected > 0);
    action(Action::AddFiles)->setEnabled(has);
    action(Action::Download)->setEnabled(has && selected > 0);
    action(Action::Delete)->setEnabled(has && selected > 0);
    action(Action::Rename)->setEnabled(has && selected == 1);
    action(Action::NewFile)->setEnabled(has);
    action(Action::NewFolder)->setEnabled(has);
    action(Action::CopyPath)->setEnabled(has && selected > 0);
}

void WorkspacePanel::setWorkspace(const QString &workspaceId)
{
    WorkspaceTreeModel *tree = m_controller->treeModel(workspaceId);
    m_workspaceId = tree ? workspaceId : QString();
    m_proxy->setSourceModel(tree);
    m_error->hide();
    if (tree && tree->canFetchMore({}))
        tree->fetchMore({});
    if (QHeaderView *header = m_view->header(); header->count() == WorkspaceTreeModel::ColumnCount) {
        // Names first: in a narrow dock the details scroll, the names stay readable.
        header->setStretchLastSection(false);
        header->setSectionResizeMode(WorkspaceTreeModel::NameColumn, QHeaderView::Interactive);
        header->resizeSection(WorkspaceTreeModel::NameColumn,
                              qMax(180, m_view->viewport()->width() / 2));
        for (int c = WorkspaceTreeModel::SizeColumn; c < WorkspaceTreeModel::ColumnCount; ++c)
            header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    }
    // setModel() is not called again, but the selection model was cleared by the reset.
    updateActions();
}

QStringList WorkspacePanel::selectedPaths() const
{
    QStringList paths;
    const QModelIndexList rows = m_view->selectionModel()->selectedRows(0);
    for (const QModelIndex &index : rows)
        paths.append(index.data(Roles::PathRole).toString());
    return paths;
}

QString WorkspacePanel::targetFolder() const
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    const QModelIndexList rows = m_view->selectionModel()->selectedRows(0);
    const QModelIndex index = rows.size() == 1 ? rows.first() : current;
    if (!index.isValid() || (rows.size() != 1 && !rows.contains(index.siblingAtColumn(0))))
        return {};
    const QString path = index.data(Roles::PathRole).toString();
    if (index.data(Roles::IsDirRole).toBool())
        return path;
    const QString parent = QFileInfo(path).path();
    return parent == QLatin1String(".") ? QString() : parent;
}

QString WorkspacePanel::errorText() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

void WorkspacePanel::showError(const QString &text)
{
    m_error->setText(text);
    m_error->show();
    // Errors also reach the main window; this line only fades out after a while.
    QTimer::singleShot(10000, m_error, [label = m_error, text] {
        if (label->text() == text)
            label->hide();
    });
}

void WorkspacePanel::showContextMenu(const QPoint &pos)
{
    updateActions();
    QMenu menu(this);
    menu.addAction(action(Action::Open));
    menu.addSeparator();
    menu.addAction(action(Action::AddFiles));
    menu.addAction(action(Action::NewFile));
    menu.addAction(action(Action::NewFolder));
    menu.addSeparator();
    menu.addAction(action(Action::Rename));
    menu.addAction(action(Action::Download));
    menu.addAction(action(Action::CopyPath));
    menu.addSeparator();
    menu.addAction(action(Action::Delete));
    menu.exec(m_view->viewport()->mapToGlobal(pos));
}

void WorkspacePanel::openSelected()
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows(0);
    for (const QModelIndex &index : rows) {
        if (!index.data(Roles::IsDirRole).toBool())
            Q_EMIT fileActivated(m_workspaceId, index.data(Roles::PathRole).toString());
    }
}

void WorkspacePanel::addHostPaths(const QStringList &hostPaths, const QString &destFolder)
{
    if (m_workspaceId.isEmpty() || hostPaths.isEmpty())
        return;
    const QString ws = m_workspaceId;
    auto *walker = new QFutureWatcher<HostWalk>(this);
    connect(walker, &QFutureWatcherBase::finished, this, [this, walker, ws] {
        walker->deleteLater();
        const HostWalk walk = walker->result();
        if (!walk.skipped.isEmpty())
            showError(tr("Skipped (symlink, special file or missing): %1")
                          .arg(walk.skipped.join(QStringLiteral(", "))));
        if (walk.files.isEmpty() || !m_controller->sandbox(ws))
            return;
        auto *adder = new QFutureWatcher<QStringList>(this);
        connect(adder, &QFutureWatcherBase::finished, this, [this, adder, ws] {
            adder->deleteLater();
            try {
                Q_EMIT filesAdded(ws, adder->result());
            } catch (...) {
                // Reported by the controller's operationFailed.
            }
        });
        adder->setFuture(m_controller->addFiles(ws, walk.files));
    });
    walker->setFuture(
        QtConcurrent::run(m_controller->pool(), walkHostPaths, hostPaths, destFolder));
}

QFuture<void> WorkspacePanel::deletePaths(const QStringList &paths)
{
    if (!m_controller->sandbox(m_workspaceId))
        return {};
    return m_controller->deleteFiles(m_workspaceId, paths);
}

QFuture<void> WorkspacePanel::renamePath(const QString &src, const QString &dest)
{
    if (!m_controller->sandbox(m_workspaceId))
        return {};
    return m_controller->moveFile(m_workspaceId, src, dest);
}

QFuture<void> WorkspacePanel::newFile(const QString &path)
{
    if (!m_controller->sandbox(m_workspaceId))
        return {};
    return m_controller->writeFile(m_workspaceId, path, QByteArray());
}

QFuture<void> WorkspacePanel::newFolder(const QString &path)
{
    if (!m_controller->sandbox(m_workspaceId))
        return {};
    return m_controller->makeFolder(m_workspaceId, path);
}

QFuture<QStringList> WorkspacePanel::downloadTo(const QStringList &paths,
                                                const QString &hostFolder)
{
    if (!m_controller->sandbox(m_workspaceId))
        return {};
    QList<QPair<QString, QString>> files;
    WorkspaceTreeModel *tree = m_controller->treeModel(m_workspaceId);
    for (const QString &path : paths) {
        if (tree && tree->indexForPath(path).data(Roles::IsDirRole).toBool())
            continue;
        files.append({path, QDir(hostFolder).filePath(QFileInfo(path).fileName())});
    }
    return m_controller->downloadFiles(m_workspaceId, files);
}

void WorkspacePanel::copyPaths()
{
    const QStringList paths = selectedPaths();
    if (!paths.isEmpty())
        QGuiApplication::clipboard()->setText(paths.join(QLatin1Char('\n')));
}

void WorkspacePanel::addFilesInteractive()
{
    if (m_workspaceId.isEmpty())
        return;
    const QString folder = targetFolder();
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Add files to %1").arg(folder.isEmpty() ? tr("the workspace root") : folder));
    addHostPaths(files, folder);
}

void WorkspacePanel::downloadInteractive()
{
    const QStringList paths = selectedPaths();
    if (paths.isEmpty())
        return;
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Download to"));
    if (dir.isEmpty())
        return;
    auto *watcher = new QFutureWatcher<QStringList>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, dir] {
        watcher->deleteLater();
        try {
            const QStringList done = watcher->result();
            const int n = int(done.size());
            m_error->setText(tr("Downloaded %n file(s) to %1", nullptr, n).arg(dir));
            m_error->setStyleSheet(QStringLiteral("padding: 2px 4px;"));
            m_error->show();
            QTimer::singleShot(5000, m_error, [this] {
                m_error->hide();
                m_error->setStyleSheet(QStringLiteral("color: #c62828; padding: 2px 4px;"));
            });
        } catch (...) {
            // Reported by operationFailed.
        }
    });
    watcher->setFuture(downloadTo(paths, dir));
}

void WorkspacePanel::deleteInteractive()
{
    const QStringList paths = selectedPaths();
    if (paths.isEmpty())
        return;
    const QString what =
        paths.size() == 1 ? paths.first() : tr("%n items", nullptr, int(paths.size()));
    if (QMessageBox::question(this, tr("Delete"),
                              tr("Delete %1 from the workspace? Folders are deleted with "
                                 "everything in them.")
                                  .arg(what)) != QMessageBox::Yes)
        return;
    deletePaths(paths);
}

void WorkspacePanel::renameInteractive()
{
    const QStringList paths = selectedPaths();
    if (paths.size() != 1)
        return;
    bool ok = false;
    const QString dest =
        QInputDialog::getText(this, tr("Rename / Move"), tr("New workspace-relative path:"),
                              QLineEdit::Normal, paths.first(), &ok)
            .trimmed();
    if (ok && !dest.isEmpty() && dest != paths.first())
        renamePath(paths.first(), dest);
}

void WorkspacePanel::newFileInteractive()
{
    if (m_workspaceId.isEmpty())
        return;
    bool ok = false;
    const QString path =
        QInputDialog::getText(this, tr("New File"), tr("Workspace-relative path:"),
                              QLineEdit::Normal,
                              joinPath(targetFolder(), QStringLiteral("untitled.txt")), &ok)
            .trimmed();
    if (!ok || path.isEmpty())
        return;
    const QString ws = m_workspaceId;
    auto *watcher = new QFutureWatcher<void>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, ws, path] {
        watcher->deleteLater();
        try {
            watcher->waitForFinished();
            Q_EMIT fileActivated(ws, path);
        } catch (...) {
            // Reported by operationFailed.
        }
    });
    watcher->setFuture(newFile(path));
}

void WorkspacePanel::newFolderInteractive()
{
    if (m_workspaceId.isEmpty())
        return;
    bool ok = false;
    const QString path =
        QInputDialog::getText(this, tr("New Folder"), tr("Workspace-relative path:"),
                              QLineEdit::Normal,
                              joinPath(targetFolder(), QStringLiteral("new-folder")), &ok)
            .trimmed();
    if (ok && !path.isEmpty())
        newFolder(path);
}

} // namespace elsai
