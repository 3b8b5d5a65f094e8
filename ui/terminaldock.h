// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QHash>
#include <QPointer>
#include <QWidget>

class QAction;
class QLabel;
class QLineEdit;
class QStackedWidget;
class QTabWidget;

namespace elsai {

class PtySession;
class SandboxController;
class TerminalWidget;

/// One terminal tab: the view, its find bar (Ctrl+Shift+F) and, once the shell ended, a line
/// that says so with a Restart button. Owns its session.
class TerminalPane : public QWidget
{
    Q_OBJECT

public:
    TerminalPane(PtySession *session, QWidget *parent = nullptr);
    ~TerminalPane() override;

    PtySession *session() const { return m_session; }
    TerminalWidget *view() const { return m_view; }
    QString title() const;
    void showFindBar();

Q_SIGNALS:
    void titleChanged();
    void restartRequested();

private:
    void find(bool backwards);
    PtySession *m_session;
    TerminalWidget *m_view;
    QWidget *m_findBar;
    QLineEdit *m_findText;
    QWidget *m_endBar;
    QLabel *m_endLabel;
    QString m_programTitle;
};

/// The Terminal panel: the terminals of every sandbox, as tabs per sandbox; the current
/// sandbox's tabs are shown and the others keep running. A sandbox's terminals close when it
/// stops (confirmStop() asks first where a program runs in one) and when it is removed.
/// Terminals are the host's: the attach modes of agents do not apply, and the panel says so.
class TerminalDock : public QWidget
{
    Q_OBJECT

public:
    explicit TerminalDock(SandboxController *controller, QWidget *parent = nullptr);
    ~TerminalDock() override;

    /// "New Terminal": enabled when the current sandbox's backend has a PTY; otherwise its
    /// tooltip says why.
    QAction *newTerminalAction() const { return m_newAction; }
    QString workspace() const { return m_current; }

    /// The terminals of a sandbox, in tab order.
    QList<TerminalPane *> terminals(const QString &workspaceId) const;
    /// Lines naming the programs running in terminals (all sandboxes with an empty id).
    QStringList runningPrograms(const QString &workspaceId = QString()) const;
    /// Asks before the sandbox stops when a program runs in one of its terminals; true: go on.
    bool confirmStop(const QString &workspaceId);
    /// Ends every terminal of a sandbox now (no question).
    void closeTerminals(const QString &workspaceId);
    /// Ends every terminal (quitting).
    void closeAll();

public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
    /// Opens a terminal on the current sandbox; nullptr (and a message) when it cannot.
    TerminalPane *openTerminal();

Q_SIGNALS:
    void message(const QString &text);

private:
    QTabWidget *tabsFor(const QString &workspaceId);
    void closeTab(QTabWidget *tabs, int index, bool ask);
    void discard(TerminalPane *pane);
    void updateAction();

    SandboxController *m_controller;
    QString m_current;
    QAction *m_newAction;
    QStackedWidget *m_stack;
    QLabel *m_empty;
    QHash<QString, QTabWidget *> m_tabs;
};

} // namespace elsai
