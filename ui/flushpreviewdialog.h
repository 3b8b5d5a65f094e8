// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QDialog>

#include <memory>

class QTreeWidget;

namespace elsai {

class DiffView;
class SandboxController;

/// Before syncing back: what flush would add / change / keep / report as conflicting on the
/// host under the sync policy (planFlush off the GUI thread), with a per-file text diff of the
/// host and workspace versions (the one DiffView; filediff.h reads and compares them); then
/// "Flush" runs it with a progress bar.
///
/// The plan is taken when the dialog opens (and on Refresh / after a flush); the entries are
/// grouped by action. Reads and diffs run off the GUI thread; a stale answer (the user picked
/// another file meanwhile) is dropped.
class FlushPreviewDialog : public QDialog
{
    Q_OBJECT

public:
    FlushPreviewDialog(SandboxController *controller, const QString &workspaceId,
                       QWidget *parent = nullptr);
    ~FlushPreviewDialog() override;

    /// Plans again; planReady() once the list is filled.
    void refresh();
    /// Shows the diff of one planned path (as selecting it does); diffReady() when shown.
    void showDiff(const QString &path);
    /// Runs the flush; flushFinished() with the result shown.
    void flushNow();

    QTreeWidget *entriesView() const;
    DiffView *diffView() const;
    /// The summary of the last flush (empty before one).
    QString resultText() const;

Q_SIGNALS:
    void planReady();
    void diffReady(const QString &path);
    void flushFinished(bool success);

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace elsai
