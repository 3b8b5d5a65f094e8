// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "tonecolors.h"

#include <QTimer>
#include <QWidget>

#include <optional>

class QComboBox;
class QDateTimeEdit;
class QLineEdit;
class QPlainTextEdit;
class QTabWidget;
class QTableView;
class QTreeWidget;

namespace elsai {

class AuditFilterProxyModel;
class MessageBar;
class SandboxController;

/// Live audit log: filters (event, actor, outcome, time range, text); denied, invalid and
/// error rows coloured (palette-derived, light and dark themes alike); the selected record as
/// a form of its fields (and its JSON); export of the visible rows as JSON lines, confirmed
/// with the path and the number of records written.
///
/// Time ranges: the last 5 minutes, the last hour and today move with the clock (re-applied
/// every 15 s); a custom range is from–to, both included.
class AuditPanel : public QWidget
{
    Q_OBJECT
public:
    enum class TimeRange { All, Last5Minutes, LastHour, Today, Custom };

    explicit AuditPanel(SandboxController *controller, QWidget *parent = nullptr);
    QTableView *view() const { return m_view; }
    AuditFilterProxyModel *proxy() const { return m_proxy; }
    QComboBox *eventBox() const { return m_event; }
    QLineEdit *actorEdit() const { return m_actor; }
    QComboBox *outcomeBox() const { return m_outcome; }
    QLineEdit *textEdit() const { return m_text; }
    QComboBox *timeBox() const { return m_time; }
    QDateTimeEdit *fromEdit() const { return m_from; }
    QDateTimeEdit *toEdit() const { return m_to; }
    /// The selected record as indented JSON (the "JSON" tab).
    QPlainTextEdit *details() const { return m_details; }
    /// The selected record as a form: one row per field (the "Record" tab).
    QTreeWidget *recordView() const { return m_record; }
    MessageBar *messageBar() const { return m_bar; }
    /// Shows the audit log's trouble (AuditHealthMonitor::statusText()) in the panel's message
    /// bar until it is fixed; empty hides it.
    void showHealth(const QString &text);
    void setTimeRange(TimeRange range);
    /// Writes the visible (filtered) rows as JSON lines; false with `error` set on failure.
    /// `*written` gets the number of records written.
    bool exportVisible(const QString &path, QString *error = nullptr, int *written = nullptr) const;
    /// Exports and says so in the message bar: "Wrote N audit record(s) to PATH", or why not.
    bool exportAndConfirm(const QString &path);

    /// The tone a row of this outcome is coloured with (none: "ok", not coloured).
    static std::optional<Tone> outcomeTone(const QString &outcome);

public Q_SLOTS:
    void exportWithDialog();

private:
    void updateDetails();
    void applyTimeRange();
    SandboxController *m_controller;
    AuditFilterProxyModel *m_proxy;
    QTableView *m_view;
    QComboBox *m_event;
    QLineEdit *m_actor;
    QComboBox *m_outcome;
    QLineEdit *m_text;
    QComboBox *m_time;
    QDateTimeEdit *m_from;
    QDateTimeEdit *m_to;
    QTabWidget *m_tabs;
    QTreeWidget *m_record;
    QPlainTextEdit *m_details;
    MessageBar *m_bar;
    QTimer m_rangeTimer;
};

} // namespace elsai
