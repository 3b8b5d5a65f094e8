// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QWidget>

#include <functional>

class QLabel;
class QTableView;
class QToolButton;

namespace elsai {

class CheckpointBrowser;
struct CheckpointDiff;
class DiffView;
class MessageBar;
class SandboxController;
class TimelineModel;
class TimeTravel;

/// "What did each call change, and put it back" (docs/window.md, Timeline): the current
/// sandbox's calls and checkpoints in time order (TimelineModel, live while the panel is
/// visible) beside a diff (DiffView):
///  * one call selected: what that call changed (TimeTravel::callDiff());
///  * one checkpoint selected: what changed since it (checkpoint → now);
///  * two points selected (Ctrl-click, or "Compare with…"): the older against the newer;
/// and on a checkpoint: Restore to here (asks first, naming what is lost), Fork from here (a
/// new sandbox in a new or empty folder), Delete (asks first); Take checkpoint at any time.
/// Engine work runs on the controller's pools; results and errors go to the message bar.
class TimelinePanel : public QWidget
{
    Q_OBJECT

public:
    explicit TimelinePanel(SandboxController *controller, QWidget *parent = nullptr);
    ~TimelinePanel() override;

    TimelineModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    DiffView *diffView() const { return m_diff; }
    MessageBar *messageBar() const { return m_bar; }
    QString workspaceId() const;

    // What the buttons do once they have their answers (the dialogs ask for them); each runs
    // off the GUI thread and ends with operationFinished().
    /// Diffs two points ("now" or checkpoint names), older first.
    void compare(const QString &from, const QString &to);
    /// Shows what call `id` changed.
    void showCall(quint64 id);
    void takeCheckpoint(const QString &name, const QString &note);
    /// Asks first (confirm(), kind "restore-checkpoint") with the paths that will be lost.
    void restoreCheckpoint(const QString &name);
    /// `folder` must be new or empty; the fork is added to the window as a new sandbox.
    void forkCheckpoint(const QString &name, const QString &folder);
    /// Asks first (kind "delete-checkpoint").
    void deleteCheckpoint(const QString &name);
    /// Opens the workspace as checkpoint `name` recorded it, read-only (CheckpointBrowser).
    CheckpointBrowser *browseCheckpoint(const QString &name);

public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);

Q_SIGNALS:
    /// A diff is shown (or why not).
    void diffReady();
    /// `operation`: "checkpoint", "restore", "fork", "delete"; `ok` false on failure or when
    /// the question was declined.
    void operationFinished(const QString &operation, bool ok);

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    void onSelectionChanged();
    void updateActions();
    void askCheckpoint();
    void askFork();
    void fillCompareMenu();
    /// The selected checkpoint's name (one checkpoint row selected), else empty.
    QString selectedCheckpoint() const;
    template<typename T, typename Work, typename Done>
    void run(const QString &operation, Work work, Done done);
    void fail(const QString &operation, const QString &message);
    /// Shows the diff `work` makes on the bulk pool (a newer selection drops it).
    void showDiff(const QString &title, const QString &reading,
                  std::function<CheckpointDiff(TimeTravel &)> work);

    SandboxController *m_controller;
    TimelineModel *m_model;
    MessageBar *m_bar;
    QLabel *m_summary;
    QTableView *m_view;
    DiffView *m_diff;
    QToolButton *m_take;
    QToolButton *m_restore;
    QToolButton *m_fork;
    QToolButton *m_compare;
    QToolButton *m_delete;
    QToolButton *m_browse;
    quint64 m_diffSerial = 0;
};

} // namespace elsai
