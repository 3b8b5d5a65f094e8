// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;

namespace elsai {

class ChangesModel;
class DiffView;
class SandboxController;

/// "What did the agent change?": the files added, modified and deleted in the current sandbox
/// since its seed (ChangesModel, updated live while the panel is visible), a path filter, and
/// the selected file's unified diff against its seeded version beside it (DiffView; read and
/// compared on the controller's bulk pool, a stale answer dropped). The diff follows the file:
/// when the selected file changes again, it is compared again.
class ChangesPanel : public QWidget
{
    Q_OBJECT

public:
    explicit ChangesPanel(SandboxController *controller, QWidget *parent = nullptr);
    ~ChangesPanel() override;

    ChangesModel *model() const { return m_model; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    QTableView *view() const { return m_view; }
    DiffView *diffView() const { return m_diff; }
    QLabel *summaryLabel() const { return m_summary; }
    QLineEdit *filterEdit() const { return m_filter; }
    QString workspaceId() const;
    /// The path whose diff is shown (or being read); empty when none.
    QString shownPath() const { return m_shownPath; }

    /// Compares `path` with its seeded version and shows it (as selecting its row does);
    /// diffReady() once shown.
    void showDiff(const QString &path);

public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);

Q_SIGNALS:
    void diffReady(const QString &path);

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    void updateSummary();
    void onCurrentChanged();
    SandboxController *m_controller;
    ChangesModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    DiffView *m_diff;
    QLabel *m_summary;
    QLineEdit *m_filter;
    QToolButton *m_refresh;
    QString m_shownPath;
    quint64 m_diffSerial = 0;
};

} // namespace elsai
