// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QWidget>

class QPlainTextEdit;
class QPushButton;
class QTableView;
class QTimer;

namespace elsai {

class ProcessesModel;

/// The Processes panel: what runs in the current sandbox — terminals, every agent's running
/// commands (agent, start, duration, folder), background processes — with the output so far
/// of the selected one and Stop (SIGTERM to its process group, SIGKILL after the grace).
class ProcessesPanel : public QWidget
{
    Q_OBJECT

public:
    explicit ProcessesPanel(QWidget *parent = nullptr);

    ProcessesModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    /// Stops the selected process; false when none is selected (or it is gone).
    bool stopSelected();
    /// The output shown for the selection.
    QString shownOutput() const;

public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);

private:
    void showSelected();

    ProcessesModel *m_model;
    QTableView *m_view;
    QPlainTextEdit *m_output;
    QPushButton *m_stop;
    QTimer *m_outputTimer;
};

} // namespace elsai
