#pragma once

#include <QWidget>

class QTreeView;

namespace elsai {

class SandboxController;

/// The workspace tree of the current sandbox: open (fileActivated), add files (file dialog
/// and drag-and-drop from the desktop = add_files), download to the host, delete,
/// rename/move, new file / new folder, copy path; multi-selection; context menu; keyboard
/// shortcuts. Every operation goes through the controller (off the GUI thread).
class WorkspacePanel : public QWidget
{
    Q_OBJECT

public:
    explicit WorkspacePanel(SandboxController *controller, QWidget *parent = nullptr);

    QString workspaceId() const { return m_workspaceId; }
    QTreeView *view() const { return m_view; }
    /// Workspace-relative paths of the selected rows.
    QStringList selectedPaths() const;

public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);

Q_SIGNALS:
    void fileActivated(const QString &workspaceId, const QString &path);

private:
    SandboxController *m_controller;
    QTreeView *m_view;
    QString m_workspaceId;
};

} // namespace elsai
