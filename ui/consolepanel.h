#pragma once

#include <QHash>
#include <QPointer>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTimer;

namespace elsai {

class ConsoleHistoryModel;
class SandboxController;

/// Console of the current sandbox: command line with history (up/down) and a cwd selector,
/// streamed output (stdout and stderr told apart), exit code, duration, truncated / timed out,
/// cancel. The output view shows only what the sandbox's ConsoleHistoryModel keeps (bounded
/// per command) and is itself capped at maxBlockCount() lines, so floods stay cheap.
///
/// Text reaches the view through an ordered queue drained in slices of at most
/// maxCharsPerPass() characters / maxLinesPerPass() lines per event-loop pass, so one big
/// model update never stalls the GUI thread for long; the queue itself never holds more than
/// maxBlockCount() lines (older ones could not stay in the view anyway and are replaced by a
/// "[… N lines not shown]" note).
class ConsolePanel : public QWidget
{
    Q_OBJECT
public:
    explicit ConsolePanel(SandboxController *controller, QWidget *parent = nullptr);
    ~ConsolePanel() override;
    static int maxBlockCount() { return 20000; }
    /// Longer lines are cut in the view (the console model keeps the bytes): text layout of a
    /// single huge line costs more than the view can afford per update.
    static int maxLineLength() { return 4096; }
    /// Work per event-loop pass when inserting into the view.
    static int maxCharsPerPass() { return 32 * 1024; }
    static int maxLinesPerPass() { return 500; }
    /// Lines queued for the view but not inserted yet.
    qsizetype pendingLines() const { return m_pendingLines; }
    bool hasPendingOutput() const { return !m_pending.isEmpty() || m_pendingDropped > 0; }
    QString workspaceId() const { return m_workspaceId; }
    QPlainTextEdit *output() const { return m_output; }
    QLineEdit *input() const { return m_input; }
    QComboBox *cwdBox() const { return m_cwd; }
    QLabel *statusLabel() const { return m_status; }
public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
    void runCommand(const QString &command);
    void cancelCommand();
protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void changeEvent(QEvent *event) override;
private:
    struct Shown;
    struct Pending
    {
        QString text;
        int kind;
    };
    void renderAll();
    void enqueue(const QString &text, int kind);
    void drainPending();
    void renderRow(int row);
    void appendText(const QString &text, int kind);
    QString clipForView(const QString &text);
    void browseHistory(int step);
    void updateRunState();
    SandboxController *m_controller;
    QString m_workspaceId;
    QPointer<ConsoleHistoryModel> m_model;
    QList<QMetaObject::Connection> m_modelConnections;
    QHash<quint64, std::shared_ptr<Shown>> m_shown;
    QPlainTextEdit *m_output;
    QLineEdit *m_input;
    QComboBox *m_cwd;
    QPushButton *m_run, *m_cancel;
    QLabel *m_status;
    quint64 m_requestId = 0;
    int m_historyPos = -1;
    QString m_draft;
    qsizetype m_lineLength = 0; ///< characters on the view's last line
    bool m_lineClipped = false; ///< the last line was cut at maxLineLength()
    bool m_atLineStart = true;  ///< the text shown or queued so far ends with a newline
    QList<Pending> m_pending;   ///< text for the view, oldest first
    qsizetype m_pendingLines = 0;
    qsizetype m_pendingDropped = 0; ///< lines dropped from the queue's front
    QTimer *m_drainTimer;
};

} // namespace elsai
