// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "workspacepanel.h"

#include "confirm.h"
#include "displaytext.h"
#include "errors.h"
#include "inputchecks.h"
#include "messagebar.h"
#include "modelroles.h"
#include "sandboxcontroller.h"
#include "sessionsmodel.h"
#include "tonecolors.h"
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
#include <QLocale>
#include <QMenu>
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
                // Made once: standardIcon() reads the icon's images again on every call, and
                // a view asks for each visible row at each paint.
                if (m_fileIcon.isNull()) {
                    QStyle *style = QApplication::style();
                    m_dirIcon = style->standardIcon(QStyle::SP_DirIcon);
                    m_linkIcon = style->standardIcon(QStyle::SP_FileLinkIcon);
                    m_fileIcon = style->standardIcon(QStyle::SP_FileIcon);
                }
                switch (type) {
                case FileInfo::Type::Directory:
                    return m_dirIcon;
                case FileInfo::Type::Symlink:
                    return m_linkIcon;
                default:
                    return m_fileIcon;
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
                    return toneForeground(QApplication::palette(), Tone::Positive);
                if (mark == ChangeMark::Modified)
                    return toneForeground(QApplication::palette(), Tone::Neutral);
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

private:
    mutable QIcon m_dirIcon, m_linkIcon, m_fileIcon;
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
        return std::all_of(urls.begin(), urls.end(), [](const QUrl &u) { return u.isLocalFile(); });
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

QString sizeText(const FileInfo &info)
{
    return info.size ? elsai::sizeText(*info.size) : WorkspacePanel::tr("size unknown");
}

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
      m_proxy(new DecoratedTreeProxy(this)), m_bar(new MessageBar(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_bar);
    layout->addWidget(m_view, 1);
    m_bar->setObjectName(QStringLiteral("workspaceMessageBar"));
    m_view->setAccessibleName(tr("Workspace files"));

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
                    showError(QStringLiteral("%1 failed — %2: %3").arg(operation, type, message));
            });
    connect(m_controller, &SandboxController::operationWarning, this,
            [this](const QString &ws, const QString &operation, const QString &message) {
                if (ws != m_workspaceId)
                    return;
                const QString text = operation == QLatin1String("seed")
                                         ? tr("Seeding '%1' was incomplete — %2").arg(ws, message)
                                         : tr("%1 of '%2' — %3").arg(operation, ws, message);
                m_bar->showMessage(text, MessageBar::Type::Warning);
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
    m_bar->dismiss();
    // A sandbox seeded with errors says so whenever it is shown, not only when it started.
    const int row = m_controller->sessionsModel()->rowOf(m_workspaceId);
    if (row >= 0) {
        const SessionRow &session = m_controller->sessionsModel()->session(row);
        if (session.state == SessionState::Failed && !session.message.isEmpty())
            m_bar->showMessage(tr("'%1' did not start — %2").arg(m_workspaceId, session.message),
                               MessageBar::Type::Error);
        else if (!session.message.isEmpty() && session.state == SessionState::Running)
            m_bar->showMessage(
                tr("Seeding '%1' was incomplete — %2").arg(m_workspaceId, session.message),
                MessageBar::Type::Warning);
    }
    if (tree && tree->canFetchMore({}))
        tree->fetchMore({});
    if (QHeaderView *header = m_view->header();
        header->count() == WorkspaceTreeModel::ColumnCount) {
        // Names first: in a narrow dock the details scroll, the names stay readable.
        header->setStretchLastSection(false);
        header->setSectionResizeMode(WorkspaceTreeModel::NameColumn, QHeaderView::Interactive);
        header->resizeSection(WorkspaceTreeModel::NameColumn,
                              qMax(180, m_view->viewport()->width() / 2));
        // Widths from the font, not ResizeToContents: that measures every row's text (a date
        // formatted per row) at each insertion, and a 1,000-entry folder then stalls the
        // window for a tenth of a second per chunk (bench/window_bench, the seed).
        const QFontMetrics fm = m_view->fontMetrics();
        const int pad = 3 * fm.averageCharWidth();
        const std::pair<int, QString> widest[] = {
            {WorkspaceTreeModel::SizeColumn,
             fm.horizontalAdvance(QStringLiteral("1023 bytes")) >
                     fm.horizontalAdvance(QStringLiteral("1023.9 KiB"))
                 ? QStringLiteral("1023 bytes")
                 : QStringLiteral("1023.9 KiB")},
            {WorkspaceTreeModel::ModifiedColumn, QStringLiteral("0000-00-00 00:00:00")},
            {WorkspaceTreeModel::TypeColumn, QStringLiteral("symlink")},
        };
        for (const auto &[column, text] : widest) {
            header->setSectionResizeMode(column, QHeaderView::Interactive);
            const QString title = m_view->model()->headerData(column, Qt::Horizontal).toString();
            header->resizeSection(
                column, qMax(fm.horizontalAdvance(text), fm.horizontalAdvance(title) + pad) + pad);
        }
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
    return m_bar->text();
}

void WorkspacePanel::showError(const QString &text)
{
    m_bar->showMessage(text, MessageBar::Type::Error);
}

bool WorkspacePanel::acceptPathName(const QString &path)
{
    try {
        const QStringList parts = path.split(QLatin1Char('/'), Qt::SkipEmptyParts);
        if (parts.isEmpty())
            checkName(QString(), tr("file name"));
        for (const QString &part : parts)
            checkName(part, tr("file name"));
        return true;
    } catch (const SandboxError &e) {
        showError(tr("That name was refused: %1").arg(e.message()));
        return false;
    }
}

void WorkspacePanel::probe(const QString &path,
                           std::function<void(const std::optional<FileInfo> &)> then)
{
    auto *watcher = new QFutureWatcher<FileInfo>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [watcher, then] {
        watcher->deleteLater();
        std::optional<FileInfo> info;
        try {
            info = watcher->result();
        } catch (...) {
            // Missing (or unreadable: the operation itself reports that).
        }
        then(info);
    });
    watcher->setFuture(m_controller->statFile(m_workspaceId, path));
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
        // First without replacing anything: what is left out already exists.
        auto *adder = new QFutureWatcher<QStringList>(this);
        connect(adder, &QFutureWatcherBase::finished, this, [this, adder, ws, walk] {
            adder->deleteLater();
            QStringList written;
            try {
                written = adder->result();
            } catch (...) {
                return; // reported by the controller's operationFailed
            }
            QList<QPair<QString, FileSource>> existing;
            QStringList names;
            for (const auto &file : walk.files) {
                if (!written.contains(file.first)) {
                    existing.append(file);
                    names.append(file.first);
                }
            }
            if (existing.isEmpty() || !m_controller->sandbox(ws)) {
                Q_EMIT filesAdded(ws, written);
                return;
            }
            Confirmation q;
            q.kind = QStringLiteral("overwrite");
            q.title = tr("Replace files");
            q.text = tr("%n file(s) already exist in '%1'. Replace them with the files added? "
                        "Their current content is lost.",
                        nullptr, int(names.size()))
                         .arg(ws);
            q.items = names;
            q.acceptText = tr("Replace");
            if (confirm(this, q) != ConfirmAnswer::Accept) {
                m_bar->showMessage(
                    tr("Kept %n existing file(s) as they were", nullptr, int(names.size())),
                    MessageBar::Type::Information, 8000);
                if (!written.isEmpty())
                    Q_EMIT filesAdded(ws, written);
                return;
            }
            auto *replacer = new QFutureWatcher<QStringList>(this);
            connect(replacer, &QFutureWatcherBase::finished, this, [this, replacer, ws, written] {
                replacer->deleteLater();
                try {
                    Q_EMIT filesAdded(ws, written + replacer->result());
                } catch (...) {
                    // Reported by the controller's operationFailed.
                }
            });
            replacer->setFuture(m_controller->addFiles(ws, existing, true));
        });
        adder->setFuture(m_controller->addFiles(ws, walk.files, false));
    });
    walker->setFuture(
        QtConcurrent::run(m_controller->pool(), walkHostPaths, hostPaths, destFolder));
}

void WorkspacePanel::createFile(const QString &path)
{
    if (m_workspaceId.isEmpty() || !acceptPathName(path))
        return;
    const QString ws = m_workspaceId;
    probe(path, [this, ws, path](const std::optional<FileInfo> &existing) {
        if (ws != m_workspaceId)
            return;
        if (existing) {
            Confirmation q;
            q.kind = QStringLiteral("overwrite");
            q.title = tr("New File");
            q.text = existing->type == FileInfo::Type::Directory
                         ? tr("'%1' is a folder in '%2'; pick another name.").arg(path, ws)
                         : tr("'%1' already exists in '%2' (%3). Replace it with an empty "
                              "file? Its content is lost.")
                               .arg(path, ws, sizeText(*existing));
            if (existing->type == FileInfo::Type::Directory) {
                showError(q.text);
                return;
            }
            q.acceptText = tr("Replace");
            if (confirm(this, q) != ConfirmAnswer::Accept)
                return;
        }
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
    });
}

void WorkspacePanel::movePath(const QString &src, const QString &dest)
{
    if (m_workspaceId.isEmpty() || !acceptPathName(dest))
        return;
    const QString ws = m_workspaceId;
    probe(dest, [this, ws, src, dest](const std::optional<FileInfo> &existing) {
        if (ws != m_workspaceId)
            return;
        if (existing && existing->type != FileInfo::Type::Directory) {
            Confirmation q;
            q.kind = QStringLiteral("overwrite");
            q.title = tr("Rename / Move");
            q.text = tr("'%1' already exists in '%2' (%3). Replace it with '%4'? Its content "
                        "is lost.")
                         .arg(dest, ws, sizeText(*existing), src);
            q.acceptText = tr("Replace");
            if (confirm(this, q) != ConfirmAnswer::Accept)
                return;
        }
        renamePath(src, dest);
    });
}

void WorkspacePanel::createFolder(const QString &path)
{
    if (!m_workspaceId.isEmpty() && acceptPathName(path))
        newFolder(path);
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

QFuture<QStringList> WorkspacePanel::downloadTo(const QStringList &paths, const QString &hostFolder,
                                                bool overwrite)
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
    return m_controller->downloadFiles(m_workspaceId, files, overwrite);
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
    if (!dir.isEmpty())
        downloadAsking(paths, dir);
}

void WorkspacePanel::downloadAsking(const QStringList &paths, const QString &dir)
{
    QStringList existing;
    for (const QString &path : paths) {
        const QString host = QDir(dir).filePath(QFileInfo(path).fileName());
        if (QFileInfo(host).isFile())
            existing.append(host);
    }
    bool overwrite = true;
    if (!existing.isEmpty()) {
        Confirmation q;
        q.kind = QStringLiteral("overwrite");
        q.title = tr("Download To");
        q.text = tr("%n file(s) already exist in %1 on the host. Replace them with the "
                    "workspace's? Their current content is lost; Cancel keeps them and "
                    "downloads the others.",
                    nullptr, int(existing.size()))
                     .arg(dir);
        q.items = existing;
        q.acceptText = tr("Replace");
        overwrite = confirm(this, q) == ConfirmAnswer::Accept;
    }
    auto *watcher = new QFutureWatcher<QStringList>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, dir] {
        watcher->deleteLater();
        try {
            const QStringList done = watcher->result();
            const int n = int(done.size());
            m_bar->showMessage(tr("Downloaded %n file(s) to %1", nullptr, n).arg(dir),
                               MessageBar::Type::Positive, 5000);
        } catch (...) {
            // Reported by operationFailed.
        }
    });
    watcher->setFuture(downloadTo(paths, dir, overwrite));
}

void WorkspacePanel::deleteInteractive()
{
    const QStringList paths = selectedPaths();
    if (paths.isEmpty())
        return;
    Confirmation q;
    q.kind = QStringLiteral("delete");
    q.title = tr("Delete");
    q.text = tr("Delete %n item(s) from '%1'? Folders are deleted with everything in them; "
                "nothing is kept.",
                nullptr, int(paths.size()))
                 .arg(m_workspaceId);
    q.items = paths;
    q.acceptText = tr("Delete");
    if (confirm(this, q) != ConfirmAnswer::Accept)
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
        movePath(paths.first(), dest);
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
    if (ok)
        createFile(path);
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
    if (ok)
        createFolder(path);
}

} // namespace elsai
