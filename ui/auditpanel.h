// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QWidget>

class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QTableView;

namespace elsai {

class AuditFilterProxyModel;
class MessageBar;
class SandboxController;

/// Live audit log: filters (event, actor, outcome, text), details of the selected record,
/// export to JSON lines.
class AuditPanel : public QWidget
{
    Q_OBJECT
public:
    explicit AuditPanel(SandboxController *controller, QWidget *parent = nullptr);
    QTableView *view() const { return m_view; }
    AuditFilterProxyModel *proxy() const { return m_proxy; }
    QComboBox *eventBox() const { return m_event; }
    QLineEdit *actorEdit() const { return m_actor; }
    QComboBox *outcomeBox() const { return m_outcome; }
    QLineEdit *textEdit() const { return m_text; }
    QPlainTextEdit *details() const { return m_details; }
    MessageBar *messageBar() const { return m_bar; }
    /// Shows the audit log's trouble (AuditHealthMonitor::statusText()) in the panel's message
    /// bar until it is fixed; empty hides it.
    void showHealth(const QString &text);
    /// Writes the visible (filtered) rows as JSON lines; false with `error` set on failure.
    bool exportVisible(const QString &path, QString *error = nullptr) const;
public Q_SLOTS:
    void exportWithDialog();

private:
    void updateDetails();
    SandboxController *m_controller;
    AuditFilterProxyModel *m_proxy;
    QTableView *m_view;
    QComboBox *m_event;
    QLineEdit *m_actor;
    QComboBox *m_outcome;
    QLineEdit *m_text;
    QPlainTextEdit *m_details;
    MessageBar *m_bar;
};

} // namespace elsai
