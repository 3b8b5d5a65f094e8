// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QDialog>

#include <memory>

class QLabel;
class QPlainTextEdit;
class QThreadPool;
class QTreeView;

namespace elsai {

class CheckpointTreeModel;
class TimeTravel;

/// The workspace as a checkpoint recorded it, read-only (the Timeline's "Show Workspace"): its
/// tree (CheckpointTreeModel) and the selected file's text, read from the checkpoint store on
/// `pool`, never from the workspace. Binary files and files over
/// CheckpointTreeModel::maxOpenBytes() show their size instead. Not modal; deletes itself when
/// closed.
class CheckpointBrowser : public QDialog
{
    Q_OBJECT

public:
    CheckpointBrowser(std::shared_ptr<TimeTravel> timeTravel, const QString &workspaceId,
                      const QString &checkpoint, QThreadPool *pool, QWidget *parent = nullptr);
    ~CheckpointBrowser() override;

    CheckpointTreeModel *model() const { return m_model; }
    QTreeView *tree() const { return m_tree; }
    QPlainTextEdit *fileView() const { return m_file; }
    /// Shows `path` (as selecting it does); fileShown() once shown.
    void showFile(const QString &path);

Q_SIGNALS:
    void fileShown(const QString &path);

private:
    CheckpointTreeModel *m_model;
    QTreeView *m_tree;
    QPlainTextEdit *m_file;
    QLabel *m_status;
    QThreadPool *m_pool;
    quint64 m_serial = 0;
};

} // namespace elsai
