// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QFuture>
#include <QWidget>

#include <functional>
#include <optional>

class QAction;
class QTreeView;
class QIdentityProxyModel;

namespace elsai {

class MessageBar;
class SandboxController;
struct FileInfo;

/// The workspace tree of the current sandbox: open (fileActivated), add files (file dialog
/// and drag-and-drop from the desktop = add_files), download to the host, delete,
/// rename/move, new file / new folder, copy path; multi-selection; context menu; keyboard
/// shortcuts. Every operation goes through the controller (off the GUI thread).
///
/// The view shows the controller's tree model through a proxy that adds icons and marks
/// files added (bold) or modified (italic) since seeding. The operations without a dialog
/// are public so the main window's menus and the tests can call them; their failures also
/// reach SandboxController::operationFailed and are shown in the panel's message bar, with
/// the sandbox's seed errors.
///
/// Nothing is replaced without asking (confirm()): Add Files and drag-and-drop onto existing
/// files, New File and Rename / Move onto an existing path, Delete. A name typed with a
/// control character (newline, tab, NUL…) is refused in the message bar.
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
    /// The message shown in the panel's bar (empty when none is shown).
    QString errorText() const;
    MessageBar *messageBar() const { return m_bar; }

    /// Adds host files into `destFolder` ("" = the root). A folder adds its files
    /// recursively under its own name; symlinks and special files are skipped. Files whose
    /// workspace path exists are replaced only when the user agrees (one question listing
    /// them); declined, they stay as they were. The folder walk runs off the GUI thread;
    /// filesAdded() reports the workspace paths written.
    void addHostPaths(const QStringList &hostPaths, const QString &destFolder = QString());
    /// The user's New File: checks the name, asks before replacing an existing file (its
    /// content would be lost), creates an empty file and opens it (fileActivated).
    void createFile(const QString &path);
    /// The user's Rename / Move: checks the name, asks before replacing an existing `dest`.
    void movePath(const QString &src, const QString &dest);
    /// The user's New Folder: checks the name, then makes the folder.
    void createFolder(const QString &path);
    /// Whether every component of a workspace path typed by the user is a valid name (no
    /// control character); shows why not in the message bar.
    bool acceptPathName(const QString &path);

    // The operations themselves, without a question (the actions above ask first).
    QFuture<void> deletePaths(const QStringList &paths);
    QFuture<void> renamePath(const QString &src, const QString &dest); ///< replaces `dest`
    QFuture<void> newFile(const QString &path);                        ///< replaces `path`
    QFuture<void> newFolder(const QString &path);
    /// Downloads the given workspace files into a host folder (folders are skipped); with
    /// `overwrite` false, host files that exist are left alone.
    QFuture<QStringList> downloadTo(const QStringList &paths, const QString &hostFolder,
                                    bool overwrite = true);
    /// The user's Download To: asks before replacing host files that exist (declined, they
    /// stay and the others are downloaded).
    void downloadAsking(const QStringList &paths, const QString &hostFolder);
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
    /// Calls `then` with the lstat of `path`, or none when it does not exist (or cannot be
    /// read: the operation that follows reports that).
    void probe(const QString &path, std::function<void(const std::optional<FileInfo> &)> then);

    SandboxController *m_controller;
    QTreeView *m_view;
    QString m_workspaceId;
    QIdentityProxyModel *m_proxy = nullptr;
    MessageBar *m_bar = nullptr;
    QList<QAction *> m_actions;
};

} // namespace elsai
