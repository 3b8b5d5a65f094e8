#pragma once

#include <QTabWidget>

namespace elsai {

class SandboxController;

/// Open workspace files as tabs. Text files get syntax highlighting (KSyntaxHighlighting when
/// built with it — theme follows the palette — else a small built-in highlighter), binary
/// files a read-only hex view, files above largeFileLimit() a clear refusal with the size.
/// Edits are saved through the controller (write as the human actor); a file changed
/// underneath (by an agent, a command) is noticed: an unmodified tab reloads, a modified one
/// shows a reload/keep prompt — never a silent loss.
class FileTabs : public QTabWidget
{
    Q_OBJECT

public:
    explicit FileTabs(SandboxController *controller, QWidget *parent = nullptr);

    static qint64 largeFileLimit() { return 8 * 1024 * 1024; }

    /// Opens (or focuses) the tab of a file; loads it off the GUI thread.
    void openFile(const QString &workspaceId, const QString &path);
    /// Saves the current tab; returns false when nothing to save.
    bool saveCurrent();
    int indexOf(const QString &workspaceId, const QString &path) const;

Q_SIGNALS:
    void fileOpened(const QString &workspaceId, const QString &path);
    void fileSaved(const QString &workspaceId, const QString &path);

private:
    SandboxController *m_controller;
};

} // namespace elsai
