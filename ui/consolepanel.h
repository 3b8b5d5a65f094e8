// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QHash>
#include <QPointer>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QVBoxLayout;

namespace elsai {

class ConsoleBlock;
class ConsoleHistoryModel;
class SandboxController;

/// Console of the current sandbox: command line with history (up/down) and a cwd selector;
/// each command is a ConsoleBlock (header, streamed output with stdout and stderr told apart,
/// status line, its own Cancel and Save output…).
///
/// Concurrency, chosen deliberately: a command entered while others run starts at once in its
/// own block (as in a terminal with several tabs); every running block keeps its Cancel
/// whatever else runs, and each status line shows its own command's result. The line under
/// the input says how many run.
///
/// Keys while the console has focus: Ctrl+C cancels the focused block's command, else the
/// newest running one (with a text selection in the focused view or input, it copies as
/// usual); Ctrl+L clears the finished blocks (running ones stay; the model keeps the history).
///
/// At most maxBlocks() finished blocks stay in the view (running ones always do); the model
/// keeps more for history.
class ConsolePanel : public QWidget
{
    Q_OBJECT
public:
    explicit ConsolePanel(SandboxController *controller, QWidget *parent = nullptr);
    ~ConsolePanel() override;
    static int maxBlocks() { return 50; }
    static int maxBlockCount();
    static int maxLineLength();
    static int maxCharsPerPass();
    static int maxLinesPerPass();
    /// Lines queued for the views but not inserted yet, over all blocks.
    qsizetype pendingLines() const;
    bool hasPendingOutput() const;
    QString workspaceId() const { return m_workspaceId; }
    /// The blocks shown, oldest first.
    QList<ConsoleBlock *> blocks() const { return m_order; }
    ConsoleBlock *block(quint64 requestId) const { return m_blocks.value(requestId); }
    /// The newest block's output view / status line (nullptr / the panel's message line
    /// while there is no block).
    QPlainTextEdit *output() const;
    QLabel *statusLabel() const;
    /// The line under the input: what runs, and messages of the panel.
    QLabel *messageLabel() const { return m_message; }
    QLineEdit *input() const { return m_input; }
    QComboBox *cwdBox() const { return m_cwd; }
    QScrollArea *scrollArea() const { return m_scroll; }
    /// Writes the block's saved output (ConsoleHistoryModel::savedOutput) to `path`
    /// atomically; an existing file is replaced only after the user agreed (asked here).
    /// Returns whether the file was written; `message` says what happened.
    bool saveOutput(quint64 requestId, const QString &path, QString *message = nullptr);
public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
    /// Starts `command` in a new block; returns its request id (0: not started).
    quint64 runCommand(const QString &command);
    /// Cancels the focused block's command, else the newest running one.
    void cancelCommand();
    void cancelCommand(quint64 requestId);
    /// Removes the finished blocks from the view.
    void clearFinished();
    void saveOutputWithDialog(quint64 requestId);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void renderAll();
    void renderRow(int row);
    ConsoleBlock *addBlock(quint64 id);
    void removeBlock(ConsoleBlock *block);
    void trimBlocks();
    void watchKeys(QWidget *widget);
    ConsoleBlock *cancelTarget() const;
    void browseHistory(int step);
    void updateRunState();
    SandboxController *m_controller;
    QString m_workspaceId;
    QPointer<ConsoleHistoryModel> m_model;
    QList<QMetaObject::Connection> m_modelConnections;
    QHash<quint64, ConsoleBlock *> m_blocks;
    QList<ConsoleBlock *> m_order;
    QHash<QString, quint64> m_clearedUpTo; ///< per sandbox: finished ids at or below are hidden
    QScrollArea *m_scroll;
    QWidget *m_blocksHost;
    QVBoxLayout *m_blocksLayout;
    QLineEdit *m_input;
    QComboBox *m_cwd;
    QPushButton *m_run;
    QLabel *m_message;
    QString m_notice; ///< the last message of the panel ("not running", a save)
    int m_historyPos = -1;
    QString m_draft;
    bool m_follow = true; ///< the block list is scrolled to its end
};

} // namespace elsai
