#pragma once

#include <QFuture>
#include <QWidget>

class QAction;
class QLabel;
class QTreeView;
class QIdentityProxyModel;

namespace elsai {

class SandboxController;

/// The workspace tree of the current sandbox: open (fileActivated), add files (file dialog
/// and drag-and-drop from the desktop = add_files), download to the host, delete,
/// rename/move, new file / new folder, copy path; multi-selection; context menu; keyboard
/// shortcuts. Every operation goes through the controller (off the GUI thread).
///
/// The view shows the controller's tree model through a proxy that adds icons and marks
/// files added (bold) or modified (italic) since seeding. The operations without a dialog
/// are public so the main window's menus and the tests can call them; their failures also
/// reach SandboxController::operationFailed and are shown briefly in the panel.
class WorkspacePanel : public QWidget
{
    Q_OBJECT

public:
    enum class Action { Open, AddFiles, Download, Delete, Rename, NewFile, NewFolder, CopyPath };

    explicit WorkspacePanel(SandboxController *controller, QWidget *parent = nullptr);

    QString workspaceId() const { return m_workspaceId; }
    QTreeView *view() const { return m_view; }
    /// Workspace-relative paths of the selected rows.
    QStringList selectedPaths() const;
    /// Where new items go: the selected folder, the folder of the selected file, or "" (root).
    QString targetFolder() const;
    QAction *action(Action which) const;
    /// The error line under the tree (empty when none is shown).
    QString errorText() const;

    /// Adds host files into `destFolder` ("" = the root). A folder adds its files
    /// recursively under its own name; symlinks and special files are skipped. The folder
    /// walk runs off the GUI thread; filesAdded() reports the workspace paths written.
    void addHostPaths(const QStringList &hostPaths, const QString &destFolder = QString());
    QFuture<void> deletePaths(const QStringList &paths);
    QFuture<void> renamePath(const QString &src, const QString &dest);
    QFuture<void> newFile(const QString &path);
    QFuture<void> newFolder(const QString &path);
    /// Downloads the given workspace files into a host folder (folders are skipped).
    QFuture<QStringList> downloadTo(const QStringList &paths, const QString &hostFolder);
    /// Puts the selected paths (one a line) on the clipboard.
    void copyPaths();

public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);

Q_SIGNALS:
    void fileActivated(const QString &workspaceId, const QString &path);
    void filesAdded(const QString &workspaceId, const QStringList &paths);

private:
    void createActions();
    void updateActions();
    void showContextMenu(const QPoint &pos);
    void openSelected();
    void addFilesInteractive();
    void downloadInteractive();
    void deleteInteractive();
    void renameInteractive();
    void newFileInteractive();
    void newFolderInteractive();
    void showError(const QString &text);

    SandboxController *m_controller;
    QTreeView *m_view;
    QString m_workspaceId;
    QIdentityProxyModel *m_proxy = nullptr;
    QLabel *m_error = nullptr;
    QList<QAction *> m_actions;
};

} // namespace elsai
