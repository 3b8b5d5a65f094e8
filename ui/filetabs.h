// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QTabWidget>

#include <array>

class QAction;
class QPlainTextEdit;
class QTimer;

namespace elsai {

class CodeEditor;
class FileTab;
class FindBar;
class GoToLineBar;
class SandboxController;

/// Open workspace files as tabs. Text files open in a CodeEditor (line numbers, current line)
/// with syntax highlighting (KSyntaxHighlighting when built with it — theme follows the
/// palette — else a small built-in highlighter), a find / replace bar and a go-to-line bar
/// under it (editAction(): Ctrl+F, F3, Shift+F3, Ctrl+H, Ctrl+G, word wrap), in the editor
/// font of AppSettings, applied live. With several sandboxes open, a tab's title names its
/// file's sandbox ("main.py — demo"). Binary
/// files a read-only hex view, files above largeFileLimit() a clear refusal with the size.
/// Edits are saved through the controller (write as the human actor); a file changed
/// underneath (by an agent, a command) is noticed: an unmodified tab reloads, a modified one
/// shows a reload/keep prompt — never a silent loss.
///
/// Change detection stats the open files off the GUI thread (SandboxController::statFile)
/// every changeCheckInterval() ms and shortly after the workspace tree reports a change, and
/// re-reads a file only when its size or mtime (ms) differs from the version shown. A
/// rewrite with the same size within the same millisecond as the version shown goes
/// unnoticed until the file changes again.
class FileTabs : public QTabWidget
{
    Q_OBJECT

public:
    /// What a tab shows.
    enum class TabKind { Loading, Text, Hex, Refused, Error };
    /// The editing actions (the window's Edit and View menus): shortcuts act where the tabs
    /// have focus, the menus reach them from anywhere.
    enum class EditAction { Find, FindNext, FindPrevious, Replace, GoToLine, WordWrap, Count };

    explicit FileTabs(SandboxController *controller, QWidget *parent = nullptr);
    ~FileTabs() override;

    static qint64 largeFileLimit() { return 8 * 1024 * 1024; }
    /// Bytes shown by the hex view of a binary file.
    static qint64 hexViewLimit() { return 64 * 1024; }

    /// Opens (or focuses) the tab of a file; loads it off the GUI thread.
    void openFile(const QString &workspaceId, const QString &path);
    /// Saves the current tab; returns false when nothing to save.
    bool saveCurrent();
    int indexOf(const QString &workspaceId, const QString &path) const;
    using QTabWidget::indexOf;

    // Inspection (tests, the main window's menus).
    TabKind tabKind(int index) const;
    bool isTabModified(int index) const;
    /// The text editor of a text tab (nullptr otherwise).
    QPlainTextEdit *editor(int index) const;
    CodeEditor *codeEditor(int index) const;
    FindBar *findBar(int index) const;
    GoToLineBar *goToLineBar(int index) const;
    QAction *editAction(EditAction which) const;
    /// A tab's title: the file name, " — <sandbox>" when several sandboxes are open, " *"
    /// when modified.
    static QString tabTitle(const QString &fileName, const QString &workspaceId, bool modified,
                            bool severalSandboxes);
    /// The hex view of a binary tab, or the refusal / error text of the others.
    QString tabMessage(int index) const;
    /// attachHighlighter()'s answer for a text tab.
    QString highlighterName(int index) const;
    /// True while the "changed on disk" bar of a modified tab is shown.
    bool hasChangePrompt(int index) const;
    /// "path (workspace)" of every tab with unsaved edits, in tab order.
    QStringList modifiedFiles() const;
    /// Saves every tab with unsaved edits and waits for the writes (quitting). False, with the
    /// first failure in `error`, when one could not be saved (its tab shows why and keeps the
    /// edits).
    bool saveAllAndWait(QString *error = nullptr);

    void setChangeCheckInterval(int ms);
    int changeCheckInterval() const;
    /// Files re-read by change checks so far (a stat that finds a file unchanged reads none).
    int changeReads() const { return m_changeReads; }

public Q_SLOTS:
    /// Checks every open file now (off the GUI thread); re-reads the changed ones.
    void checkForChanges();
    /// Closes a tab, asking first (Save / Discard / Cancel) when it is modified.
    /// Returns false when the user cancelled.
    bool closeTab(int index);
    /// Answers the change prompt of a tab: take the file's new content, or keep the edits.
    void reloadFromDisk(int index);
    void keepMine(int index);
    /// Shows the current text tab's find bar (with the replace row when `replace`).
    void showFindBar(bool replace = false);

Q_SIGNALS:
    void fileOpened(const QString &workspaceId, const QString &path);
    void fileSaved(const QString &workspaceId, const QString &path);
    /// A file's content changed on disk and its unmodified tab was reloaded.
    void fileReloaded(const QString &workspaceId, const QString &path);
    /// A modified tab's file changed on disk: the prompt bar is shown.
    void externalChangeDetected(const QString &workspaceId, const QString &path);
    /// A load, save or re-read failed (the tab shows it too).
    void fileError(const QString &workspaceId, const QString &path, const QString &message);
    /// A tab was opened or closed (the window shows its welcome page while none is open).
    void tabCountChanged(int count);

protected:
    /// Re-highlights open text tabs when the palette turns light or dark.
    void changeEvent(QEvent *event) override;
    void tabInserted(int index) override;
    void tabRemoved(int index) override;

private:
    FileTab *tabAt(int index) const;
    void load(FileTab *tab);
    void showContent(FileTab *tab, const QByteArray &bytes);
    void onRead(FileTab *tab, const QByteArray &bytes);
    void reread(FileTab *tab);
    void updateTitle(FileTab *tab);
    void updateTitles();
    void createEditActions();
    void updateEditActions();
    void applyEditorFont(const QFont &font);
    void watchWorkspace(const QString &workspaceId);
    void save(FileTab *tab, bool closeAfter);

    SandboxController *m_controller;
    QTimer *m_checkTimer;
    QTimer *m_soonTimer;
    QStringList m_watched;
    int m_changeReads = 0;
    std::array<QAction *, int(EditAction::Count)> m_actions{};
};

} // namespace elsai
