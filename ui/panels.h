#pragma once

#include <QHash>
#include <QPointer>
#include <QStringDecoder>
#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTimer;

namespace elsai {

class AuditFilterProxyModel;
class ConsoleHistoryModel;
class SandboxController;

/// Sessions table (every sandbox; selecting one makes it current; start/stop/remove actions).
class SessionsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit SessionsPanel(SandboxController *controller, QWidget *parent = nullptr);
    QTableView *view() const { return m_view; }
    /// Workspace id of the selected row (empty when none).
    QString selectedWorkspace() const;
public Q_SLOTS:
    /// Selects the row of `workspaceId` (no signal when it is already selected).
    void selectWorkspace(const QString &workspaceId);
Q_SIGNALS:
    void currentWorkspaceChanged(const QString &workspaceId);
private:
    void updateButtons();
    SandboxController *m_controller;
    QTableView *m_view;
    QPushButton *m_start, *m_stop, *m_remove;
    QString m_selected;
};

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

/// Attached agents of the current sandbox: attach / detach / change mode, each agent's tools
/// and recent calls.
class AgentsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit AgentsPanel(SandboxController *controller, QWidget *parent = nullptr);
    QTableView *view() const { return m_view; }
    QLineEdit *nameEdit() const { return m_name; }
    QComboBox *modeBox() const { return m_mode; }
    QPushButton *attachButton() const { return m_attach; }
    QPlainTextEdit *details() const { return m_details; }
public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
    void attach();
    void detachSelected();
    void toggleModeOfSelected();
private:
    int selectedSourceRow() const;
    void updateDetails();
    SandboxController *m_controller;
    QString m_workspaceId;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLineEdit *m_name;
    QComboBox *m_mode;
    QPushButton *m_attach, *m_detach, *m_changeMode;
    QPlainTextEdit *m_details;
};

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
};

} // namespace elsai
