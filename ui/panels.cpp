#include "panels.h"

#include "agentsmodel.h"
#include "auditlogmodel.h"
#include "consolehistorymodel.h"
#include "errors.h"
#include "hostfiles.h"
#include "modelroles.h"
#include "sandboxcontroller.h"
#include "sessionsmodel.h"

#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QFileInfo>
#include <QJsonDocument>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextBlock>
#include <QTimer>
#include <QVBoxLayout>

namespace elsai {

namespace {

enum TextKind { PromptText, StdoutText, StderrText, OkText, FailText };

bool isDark(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128;
}

// Accents readable on both palettes: saturated and darker on light bases, lighter on dark.
QColor accent(const QPalette &palette, int kind)
{
    const bool dark = isDark(palette);
    switch (kind) {
    case PromptText:
        return dark ? QColor(0x79, 0xb8, 0xff) : QColor(0x00, 0x4f, 0xb0);
    case StderrText:
    case FailText:
        return dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xb3, 0x1d, 0x1d);
    case OkText:
        return dark ? QColor(0x7e, 0xe7, 0x87) : QColor(0x1a, 0x7f, 0x37);
    }
    return palette.color(QPalette::Text);
}

QTableView *makeTable(QWidget *parent)
{
    auto *view = new QTableView(parent);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setAlternatingRowColors(true);
    view->setWordWrap(false);
    view->verticalHeader()->hide();
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setStretchLastSection(true);
    view->horizontalHeader()->setHighlightSections(false);
    return view;
}

QPlainTextEdit *makeDetails(QWidget *parent)
{
    auto *details = new QPlainTextEdit(parent);
    details->setReadOnly(true);
    details->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    details->setLineWrapMode(QPlainTextEdit::NoWrap);
    return details;
}

QString statusLine(const ConsoleHistoryModel::Entry &e)
{
    if (e.running)
        return ConsolePanel::tr("running…");
    if (!e.result)
        return ConsolePanel::tr("failed to run");
    const ExecuteResult &r = *e.result;
    QStringList parts{ConsolePanel::tr("exit %1").arg(r.exitCode),
                      ConsolePanel::tr("%1 ms").arg(r.durationMs)};
    if (r.truncated || e.droppedBytes > 0)
        parts << ConsolePanel::tr("truncated");
    if (r.timedOut)
        parts << ConsolePanel::tr("timed out");
    if (r.cancelled)
        parts << ConsolePanel::tr("cancelled");
    return parts.join(QStringLiteral(" · "));
}

} // namespace

// ---- SessionsPanel -----------------------------------------------------------------------

SessionsPanel::SessionsPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent)
    , m_controller(controller)
    , m_view(makeTable(this))
    , m_start(new QPushButton(tr("Start"), this))
    , m_stop(new QPushButton(tr("Stop"), this))
    , m_remove(new QPushButton(tr("Remove"), this))
{
    SessionsModel *model = controller->sessionsModel();
    m_view->setModel(model);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_stop->setToolTip(tr("Stop and sync the allowed artifacts back to the host"));
    m_remove->setToolTip(tr("Stop without sync and forget the sandbox (its folder stays)"));

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_start);
    buttons->addWidget(m_stop);
    buttons->addWidget(m_remove);
    buttons->addStretch();
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_view);
    layout->addLayout(buttons);

    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                const QString id = current.data(Roles::WorkspaceIdRole).toString();
                updateButtons();
                if (id == m_selected)
                    return;
                m_selected = id;
                Q_EMIT currentWorkspaceChanged(id);
            });
    connect(model, &QAbstractItemModel::dataChanged, this, &SessionsPanel::updateButtons);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &SessionsPanel::updateButtons);
    // Errors of these calls reach the status bar through operationFailed.
    auto guarded = [this](auto fn) {
        return [this, fn] {
            const QString id = selectedWorkspace();
            if (id.isEmpty())
                return;
            try {
                fn(id);
            } catch (const SandboxError &e) {
                Q_EMIT m_controller->operationFailed(id, QString(), e.specName(), e.message());
            }
        };
    };
    connect(m_start, &QPushButton::clicked, this,
            guarded([this](const QString &id) { m_controller->startSandbox(id); }));
    connect(m_stop, &QPushButton::clicked, this,
            guarded([this](const QString &id) { m_controller->stopSandbox(id, true); }));
    connect(m_remove, &QPushButton::clicked, this,
            guarded([this](const QString &id) { m_controller->removeSandbox(id); }));
    updateButtons();
}

QString SessionsPanel::selectedWorkspace() const
{
    return m_view->selectionModel()->currentIndex().data(Roles::WorkspaceIdRole).toString();
}

void SessionsPanel::selectWorkspace(const QString &workspaceId)
{
    const int row = m_controller->sessionsModel()->rowOf(workspaceId);
    if (row < 0) {
        m_view->selectionModel()->clearCurrentIndex();
        return;
    }
    const QModelIndex index = m_controller->sessionsModel()->index(row, 0);
    m_view->selectionModel()->setCurrentIndex(
        index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void SessionsPanel::updateButtons()
{
    const QString id = selectedWorkspace();
    const SessionState state = m_controller->state(id);
    const bool known = !id.isEmpty() && m_controller->sandbox(id);
    m_start->setEnabled(known
                        && (state == SessionState::Stopped || state == SessionState::Expired
                            || state == SessionState::Failed));
    m_stop->setEnabled(known && state == SessionState::Running);
    m_remove->setEnabled(known);
}

// ---- ConsolePanel ------------------------------------------------------------------------

struct ConsolePanel::Shown
{
    qsizetype out = 0;
    qsizetype err = 0;
    qsizetype run = 0; ///< the entry's run being shown (the last one may still grow)
    bool header = false;
    bool done = false;
    // Chunks may split a UTF-8 sequence: decoders keep the state between appends.
    QStringDecoder outDecoder{QStringDecoder::Utf8};
    QStringDecoder errDecoder{QStringDecoder::Utf8};
};

ConsolePanel::ConsolePanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent)
    , m_controller(controller)
    , m_output(new QPlainTextEdit(this))
    , m_input(new QLineEdit(this))
    , m_cwd(new QComboBox(this))
    , m_run(new QPushButton(tr("Run"), this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_status(new QLabel(this))
    , m_drainTimer(new QTimer(this))
{
    // A zero timer: the next slice goes in once the events queued meanwhile have run.
    m_drainTimer->setSingleShot(true);
    m_drainTimer->setInterval(0);
    connect(m_drainTimer, &QTimer::timeout, this, &ConsolePanel::drainPending);
    m_output->setReadOnly(true);
    m_output->setMaximumBlockCount(maxBlockCount());
    m_output->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_output->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_output->setUndoRedoEnabled(false);
    m_input->setPlaceholderText(tr("Command (Enter runs it as the 'console' agent; "
                                   "Up/Down: history)"));
    m_input->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_input->installEventFilter(this);
    m_cwd->setEditable(true);
    m_cwd->addItem(QStringLiteral("."));
    m_cwd->setToolTip(tr("Working folder, relative to the workspace root"));
    m_cwd->setMinimumContentsLength(8);
    m_cancel->setEnabled(false);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *line = new QHBoxLayout;
    line->addWidget(new QLabel(tr("cwd"), this));
    line->addWidget(m_cwd);
    line->addWidget(m_input, 1);
    line->addWidget(m_run);
    line->addWidget(m_cancel);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_output, 1);
    layout->addLayout(line);
    layout->addWidget(m_status);

    connect(m_input, &QLineEdit::returnPressed, this, [this] { runCommand(m_input->text()); });
    connect(m_run, &QPushButton::clicked, this, [this] { runCommand(m_input->text()); });
    connect(m_cancel, &QPushButton::clicked, this, &ConsolePanel::cancelCommand);
    updateRunState();
}

ConsolePanel::~ConsolePanel() = default;

void ConsolePanel::setWorkspace(const QString &workspaceId)
{
    ConsoleHistoryModel *model = m_controller->consoleModel(workspaceId);
    if (workspaceId == m_workspaceId && model == m_model)
        return;
    for (const auto &c : std::as_const(m_modelConnections))
        disconnect(c);
    m_modelConnections.clear();
    m_workspaceId = workspaceId;
    m_model = model;
    m_requestId = 0;
    m_historyPos = -1;
    m_status->clear();
    if (model) {
        m_modelConnections << connect(model, &QAbstractItemModel::rowsInserted, this,
                                      [this](const QModelIndex &, int first, int last) {
                                          for (int row = first; row <= last; ++row)
                                              renderRow(row);
                                      });
        m_modelConnections << connect(model, &QAbstractItemModel::dataChanged, this,
                                      [this](const QModelIndex &tl, const QModelIndex &br) {
                                          for (int row = tl.row(); row <= br.row(); ++row)
                                              renderRow(row);
                                      });
        m_modelConnections << connect(model, &QAbstractItemModel::modelReset, this,
                                      &ConsolePanel::renderAll);
    }
    renderAll();
    updateRunState();
}

void ConsolePanel::renderAll()
{
    m_output->clear();
    m_pending.clear();
    m_pendingLines = 0;
    m_pendingDropped = 0;
    m_drainTimer->stop();
    m_atLineStart = true;
    m_lineLength = 0;
    m_lineClipped = false;
    m_shown.clear();
    if (!m_model)
        return;
    for (int row = 0; row < m_model->rowCount(); ++row)
        renderRow(row);
}

void ConsolePanel::renderRow(int row)
{
    if (!m_model || row < 0 || row >= m_model->rowCount())
        return;
    const ConsoleHistoryModel::Entry &e = m_model->entry(row);
    std::shared_ptr<Shown> &shown = m_shown[e.id];
    if (!shown)
        shown = std::make_shared<Shown>();
    if (!shown->header) {
        shown->header = true;
        const QString where = e.cwd.isEmpty() || e.cwd == QLatin1String(".")
                                  ? QString()
                                  : QStringLiteral("[%1] ").arg(e.cwd);
        appendText(QStringLiteral("%1$ %2\n").arg(where, e.command), PromptText);
    }
    // Only the bytes not shown yet: a flood costs one append per coalesced model update.
    const auto showUpTo = [this, &e, &shown](OutputChannel channel, qsizetype end) {
        const bool out = channel == OutputChannel::Stdout;
        qsizetype &pos = out ? shown->out : shown->err;
        if (end <= pos)
            return;
        const QByteArray &data = out ? e.stdoutData : e.stderrData;
        QStringDecoder &decoder = out ? shown->outDecoder : shown->errDecoder;
        appendText(decoder.decode(QByteArrayView(data).sliced(pos, end - pos)),
                   out ? StdoutText : StderrText);
        pos = end;
    };
    // In arrival order, so a redraw interleaves stdout and stderr as they streamed.
    for (; shown->run < e.runs.size(); ++shown->run) {
        const ConsoleHistoryModel::Entry::Run &run = e.runs.at(shown->run);
        showUpTo(run.channel, run.end);
        if (shown->run + 1 == e.runs.size())
            break; // the last run may still grow
    }
    showUpTo(OutputChannel::Stdout, e.stdoutData.size());
    showUpTo(OutputChannel::Stderr, e.stderrData.size());
    if (!e.running && !shown->done) {
        shown->done = true;
        const bool ok = e.result && e.result->exitCode == 0 && !e.result->timedOut;
        appendText(QStringLiteral("[%1]\n").arg(statusLine(e)), ok ? OkText : FailText);
    }
    if (e.id == m_requestId) {
        m_status->setText(statusLine(e));
        m_cancel->setEnabled(e.running);
    }
}

QString ConsolePanel::clipForView(const QString &text)
{
    // Only the last maxBlockCount() lines can stay in the view anyway: inserting more and
    // letting the document trim them one by one stalls the GUI thread for seconds.
    QString out;
    qsizetype start = 0;
    const qsizetype lines = text.count(QLatin1Char('\n'));
    if (lines > maxBlockCount()) {
        const qsizetype skip = lines - maxBlockCount();
        qsizetype pos = -1;
        for (qsizetype n = 0; n < skip; ++n)
            pos = text.indexOf(QLatin1Char('\n'), pos + 1);
        start = pos + 1;
        out += tr("[… %1 lines not shown]\n").arg(skip);
        m_lineLength = 0;
        m_lineClipped = false;
    }
    for (qsizetype i = start; i < text.size();) {
        const qsizetype nl = text.indexOf(QLatin1Char('\n'), i);
        const qsizetype end = nl < 0 ? text.size() : nl;
        const qsizetype room = qMax<qsizetype>(0, maxLineLength() - m_lineLength);
        if (end - i <= room) {
            out += QStringView(text).sliced(i, end - i);
            m_lineLength += end - i;
        } else {
            out += QStringView(text).sliced(i, room);
            m_lineLength += room;
            if (!m_lineClipped) {
                out += QStringLiteral(" …");
                m_lineClipped = true;
            }
        }
        if (nl < 0)
            break;
        out += QLatin1Char('\n');
        m_lineLength = 0;
        m_lineClipped = false;
        i = nl + 1;
    }
    return out;
}

void ConsolePanel::appendText(const QString &rawText, int kind)
{
    if (rawText.isEmpty())
        return;
    const bool output = kind != PromptText && kind != OkText && kind != FailText;
    QString text = output ? clipForView(rawText) : rawText;
    if (!output) {
        m_lineLength = 0;
        m_lineClipped = false;
        // Status lines and prompts start on their own line even after output without '\n'.
        if (!m_atLineStart)
            text.prepend(QLatin1Char('\n'));
    }
    enqueue(text, kind);
    // Insert at once what one pass may; a slice already scheduled keeps the order.
    if (!m_drainTimer->isActive())
        drainPending();
}

void ConsolePanel::enqueue(const QString &text, int kind)
{
    if (text.isEmpty())
        return;
    m_atLineStart = text.endsWith(QLatin1Char('\n'));
    if (!m_pending.isEmpty() && m_pending.last().kind == kind)
        m_pending.last().text += text;
    else
        m_pending.append({text, kind});
    m_pendingLines += text.count(QLatin1Char('\n'));
    // Lines beyond the view's cap would be trimmed right after insertion: drop them here.
    while (m_pendingLines > maxBlockCount()) {
        Pending &front = m_pending.first();
        const qsizetype frontLines = front.text.count(QLatin1Char('\n'));
        const qsizetype excess = m_pendingLines - maxBlockCount();
        if (frontLines <= excess) {
            m_pendingLines -= frontLines;
            m_pendingDropped += frontLines + (front.text.endsWith(QLatin1Char('\n')) ? 0 : 1);
            m_pending.removeFirst();
            continue;
        }
        qsizetype pos = -1;
        for (qsizetype n = 0; n < excess; ++n)
            pos = front.text.indexOf(QLatin1Char('\n'), pos + 1);
        front.text.remove(0, pos + 1);
        m_pendingLines -= excess;
        m_pendingDropped += excess;
    }
}

void ConsolePanel::drainPending()
{
    if (m_pending.isEmpty() && m_pendingDropped == 0)
        return;
    QScrollBar *bar = m_output->verticalScrollBar();
    const bool follow = bar->value() >= bar->maximum() - 2;
    QTextCursor cursor(m_output->document());
    cursor.movePosition(QTextCursor::End);
    if (m_pendingDropped > 0) {
        QTextCharFormat note;
        note.setForeground(accent(palette(), PromptText));
        const bool lineStart = cursor.block().text().isEmpty();
        cursor.insertText(tr("%1[… %2 lines not shown]\n")
                              .arg(lineStart ? QString() : QStringLiteral("\n"))
                              .arg(m_pendingDropped),
                          note);
        m_pendingDropped = 0;
    }
    qsizetype chars = 0, lines = 0;
    while (!m_pending.isEmpty() && chars < maxCharsPerPass() && lines < maxLinesPerPass()) {
        Pending &front = m_pending.first();
        // The slice ends after the last newline that fits in the budget, else at the budget.
        const qsizetype room = qMin<qsizetype>(maxCharsPerPass() - chars, front.text.size());
        qsizetype cut = 0, sliceLines = 0;
        for (qsizetype nl = front.text.indexOf(QLatin1Char('\n'));
             nl >= 0 && nl < room && lines + sliceLines < maxLinesPerPass();
             nl = front.text.indexOf(QLatin1Char('\n'), nl + 1)) {
            cut = nl + 1;
            ++sliceLines;
        }
        if (cut == 0 || (room == front.text.size() && lines + sliceLines < maxLinesPerPass()))
            cut = room;
        if (cut < front.text.size() && front.text.at(cut).isLowSurrogate())
            --cut; // never split a surrogate pair
        if (cut <= 0)
            break;
        const QStringView slice = QStringView(front.text).first(cut);
        const qsizetype slicedLines = slice.count(QLatin1Char('\n'));
        QTextCharFormat format;
        format.setForeground(accent(palette(), front.kind));
        format.setFontWeight(front.kind == PromptText ? QFont::Bold : QFont::Normal);
        cursor.insertText(slice.toString(), format);
        chars += cut;
        lines += slicedLines;
        m_pendingLines -= slicedLines;
        if (cut == front.text.size())
            m_pending.removeFirst();
        else
            front.text.remove(0, cut);
    }
    if (follow)
        bar->setValue(bar->maximum());
    if (!m_pending.isEmpty())
        m_drainTimer->start();
}

void ConsolePanel::runCommand(const QString &command)
{
    if (command.trimmed().isEmpty())
        return;
    if (m_workspaceId.isEmpty()) {
        m_status->setText(tr("No sandbox selected"));
        return;
    }
    QString cwd = m_cwd->currentText().trimmed();
    if (!cwd.isEmpty() && m_cwd->findText(cwd) < 0)
        m_cwd->addItem(cwd);
    if (cwd == QLatin1String("."))
        cwd.clear();
    const quint64 id = m_controller->execute(m_workspaceId, command, cwd);
    if (id == 0) {
        m_status->setText(tr("Sandbox '%1' is not running").arg(m_workspaceId));
        return;
    }
    m_requestId = id;
    m_historyPos = -1;
    m_input->clear();
    m_status->setText(tr("running…"));
    m_cancel->setEnabled(true);
}

void ConsolePanel::cancelCommand()
{
    if (m_requestId)
        m_controller->cancelCommand(m_requestId);
}

void ConsolePanel::updateRunState()
{
    const bool have = m_model != nullptr;
    m_input->setEnabled(have);
    m_run->setEnabled(have);
    m_cwd->setEnabled(have);
    m_cancel->setEnabled(m_requestId && m_controller->isCommandRunning(m_requestId));
}

void ConsolePanel::browseHistory(int step)
{
    const QStringList history = m_model ? m_model->commandHistory() : QStringList();
    if (history.isEmpty())
        return;
    if (m_historyPos < 0) {
        if (step > 0)
            return;
        m_draft = m_input->text();
        m_historyPos = int(history.size()) - 1;
    } else {
        m_historyPos = qMax(0, m_historyPos + step);
        if (m_historyPos >= history.size()) {
            m_historyPos = -1;
            m_input->setText(m_draft);
            return;
        }
    }
    m_input->setText(history.at(m_historyPos));
}

bool ConsolePanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_input && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent *>(event)->key();
        if (key == Qt::Key_Up || key == Qt::Key_Down) {
            browseHistory(key == Qt::Key_Up ? -1 : 1);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void ConsolePanel::changeEvent(QEvent *event)
{
    // Accents depend on the palette: redraw the kept output in the new colours.
    if (event->type() == QEvent::PaletteChange)
        renderAll();
    QWidget::changeEvent(event);
}

// ---- AgentsPanel -------------------------------------------------------------------------

AgentsPanel::AgentsPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent)
    , m_controller(controller)
    , m_proxy(new QSortFilterProxyModel(this))
    , m_view(makeTable(this))
    , m_name(new QLineEdit(this))
    , m_mode(new QComboBox(this))
    , m_attach(new QPushButton(tr("Attach"), this))
    , m_detach(new QPushButton(tr("Detach"), this))
    , m_changeMode(new QPushButton(tr("Change mode"), this))
    , m_details(makeDetails(this))
{
    m_proxy->setSourceModel(controller->agentsModel());
    m_proxy->setFilterRole(Roles::WorkspaceIdRole);
    m_proxy->setFilterKeyColumn(AgentsModel::NameColumn);
    m_view->setModel(m_proxy);
    m_view->hideColumn(AgentsModel::WorkspaceColumn);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    setWorkspace(QString());

    m_name->setPlaceholderText(tr("agent name"));
    m_mode->addItem(tr("read-write"), QStringLiteral("read_write"));
    m_mode->addItem(tr("read-only"), QStringLiteral("read_only"));
    m_changeMode->setToolTip(tr("Re-attach the selected agent read-only / read-write"));

    auto *form = new QHBoxLayout;
    form->addWidget(new QLabel(tr("Attach…"), this));
    form->addWidget(m_name, 1);
    form->addWidget(m_mode);
    form->addWidget(m_attach);
    auto *actions = new QHBoxLayout;
    actions->addWidget(m_detach);
    actions->addWidget(m_changeMode);
    actions->addStretch();

    auto *top = new QWidget(this);
    auto *topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(m_view);
    topLayout->addLayout(actions);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(top);
    splitter->addWidget(m_details);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(form);
    layout->addWidget(splitter, 1);

    connect(m_attach, &QPushButton::clicked, this, &AgentsPanel::attach);
    connect(m_name, &QLineEdit::returnPressed, this, &AgentsPanel::attach);
    connect(m_detach, &QPushButton::clicked, this, &AgentsPanel::detachSelected);
    connect(m_changeMode, &QPushButton::clicked, this, &AgentsPanel::toggleModeOfSelected);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &AgentsPanel::updateDetails);
    connect(m_proxy, &QAbstractItemModel::dataChanged, this, &AgentsPanel::updateDetails);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &AgentsPanel::updateDetails);
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &AgentsPanel::updateDetails);
    updateDetails();
}

void AgentsPanel::setWorkspace(const QString &workspaceId)
{
    m_workspaceId = workspaceId;
    m_proxy->setFilterRegularExpression(
        QRegularExpression(QStringLiteral("^%1$").arg(QRegularExpression::escape(workspaceId))));
    m_attach->setEnabled(!workspaceId.isEmpty());
    updateDetails();
}

int AgentsPanel::selectedSourceRow() const
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    return current.isValid() ? m_proxy->mapToSource(current).row() : -1;
}

void AgentsPanel::attach()
{
    const QString name = m_name->text().trimmed();
    if (name.isEmpty() || m_workspaceId.isEmpty())
        return;
    try {
        const SandboxAttachMode mode = attachModeFromString(m_mode->currentData().toString());
        m_controller->attachAgent(m_workspaceId, name, mode);
        m_name->clear();
    } catch (const SandboxError &e) {
        Q_EMIT m_controller->operationFailed(m_workspaceId, QStringLiteral("attach"),
                                             e.specName(), e.message());
    }
}

void AgentsPanel::detachSelected()
{
    const int row = selectedSourceRow();
    if (row < 0)
        return;
    const AgentRow a = m_controller->agentsModel()->agent(row);
    try {
        m_controller->detachAgent(a.workspaceId, a.name);
    } catch (const SandboxError &e) {
        Q_EMIT m_controller->operationFailed(a.workspaceId, QStringLiteral("detach"),
                                             e.specName(), e.message());
    }
}

void AgentsPanel::toggleModeOfSelected()
{
    const int row = selectedSourceRow();
    if (row < 0)
        return;
    const AgentRow a = m_controller->agentsModel()->agent(row);
    const SandboxAttachMode mode = a.mode == QLatin1String("read_write")
                                       ? SandboxAttachMode::ReadOnly
                                       : SandboxAttachMode::ReadWrite;
    try {
        m_controller->attachAgent(a.workspaceId, a.name, mode);
    } catch (const SandboxError &e) {
        Q_EMIT m_controller->operationFailed(a.workspaceId, QStringLiteral("attach"),
                                             e.specName(), e.message());
    }
}

void AgentsPanel::updateDetails()
{
    const int row = selectedSourceRow();
    m_detach->setEnabled(row >= 0);
    m_changeMode->setEnabled(row >= 0);
    if (row < 0) {
        m_details->setPlainText(m_workspaceId.isEmpty()
                                    ? tr("No sandbox selected.")
                                    : tr("Select an agent to see its tools and recent calls."));
        return;
    }
    const AgentRow &a = m_controller->agentsModel()->agent(row);
    QStringList lines{QStringLiteral("%1 (%2), attached %3")
                          .arg(a.name, a.mode,
                               a.attachedAt.toLocalTime().toString(QStringLiteral("hh:mm:ss"))),
                      tr("Tools: %1").arg(a.tools.join(QStringLiteral(", "))),
                      tr("Calls: %1").arg(a.toolCalls), QString(), tr("Recent calls:")};
    if (a.recentCalls.isEmpty())
        lines << tr("  (none)");
    for (auto it = a.recentCalls.crbegin(); it != a.recentCalls.crend(); ++it)
        lines << QStringLiteral("  %1  %2  %3")
                     .arg(it->at.toLocalTime().toString(QStringLiteral("hh:mm:ss")),
                          it->tool.leftJustified(10), it->outcome);
    const QString text = lines.join(QLatin1Char('\n'));
    if (m_details->toPlainText() != text)
        m_details->setPlainText(text);
}

// ---- AuditPanel --------------------------------------------------------------------------

AuditPanel::AuditPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent)
    , m_controller(controller)
    , m_proxy(new AuditFilterProxyModel(this))
    , m_view(makeTable(this))
    , m_event(new QComboBox(this))
    , m_actor(new QLineEdit(this))
    , m_outcome(new QComboBox(this))
    , m_text(new QLineEdit(this))
    , m_details(makeDetails(this))
{
    AuditLogModel *source = controller->auditModel();
    m_proxy->setSourceModel(source);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(AuditLogModel::TimeColumn, Qt::AscendingOrder);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->setColumnWidth(AuditLogModel::TimeColumn, 90);
    m_view->setColumnWidth(AuditLogModel::EventColumn, 150);

    m_event->setEditable(true);
    m_event->addItem(QString());
    m_event->lineEdit()->setPlaceholderText(tr("any event"));
    m_event->setInsertPolicy(QComboBox::NoInsert);
    m_event->setMinimumContentsLength(14);
    m_actor->setPlaceholderText(tr("any actor"));
    m_outcome->addItem(tr("any outcome"), QString());
    for (const char *o : {"ok", "error", "denied"})
        m_outcome->addItem(QLatin1String(o), QLatin1String(o));
    m_text->setPlaceholderText(tr("search"));
    m_text->setClearButtonEnabled(true);
    auto *exportButton = new QPushButton(tr("Export…"), this);

    auto *filters = new QHBoxLayout;
    filters->addWidget(m_event);
    filters->addWidget(m_actor);
    filters->addWidget(m_outcome);
    filters->addWidget(m_text, 1);
    filters->addWidget(exportButton);
    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_view);
    splitter->addWidget(m_details);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(filters);
    layout->addWidget(splitter, 1);

    connect(m_event, &QComboBox::currentTextChanged, m_proxy,
            [this](const QString &t) { m_proxy->setEventFilter(t.trimmed()); });
    connect(m_actor, &QLineEdit::textChanged, m_proxy,
            [this](const QString &t) { m_proxy->setActorFilter(t.trimmed()); });
    connect(m_outcome, &QComboBox::currentIndexChanged, m_proxy,
            [this] { m_proxy->setOutcomeFilter(m_outcome->currentData().toString()); });
    connect(m_text, &QLineEdit::textChanged, m_proxy, &AuditFilterProxyModel::setTextFilter);
    connect(exportButton, &QPushButton::clicked, this, &AuditPanel::exportWithDialog);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &AuditPanel::updateDetails);

    // Offer every event name seen so far in the event filter.
    connect(source, &QAbstractItemModel::rowsInserted, this,
            [this, source](const QModelIndex &, int first, int last) {
                for (int row = first; row <= last; ++row) {
                    const QString name
                        = source->index(row, 0).data(Roles::EventNameRole).toString();
                    if (!name.isEmpty() && m_event->findText(name) < 0)
                        m_event->addItem(name);
                }
            });
    // Follow new records while the view is scrolled to the bottom.
    auto follow = std::make_shared<bool>(true);
    connect(m_proxy, &QAbstractItemModel::rowsAboutToBeInserted, this, [this, follow] {
        const QScrollBar *bar = m_view->verticalScrollBar();
        *follow = bar->value() >= bar->maximum() - 2;
    });
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, [this, follow] {
        if (*follow)
            m_view->scrollToBottom();
    });
    updateDetails();
}

void AuditPanel::updateDetails()
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    if (!current.isValid()) {
        m_details->setPlainText(tr("Select a record to see all its fields."));
        return;
    }
    const QJsonObject json = current.data(Roles::AuditJsonRole).toJsonObject();
    m_details->setPlainText(
        QString::fromUtf8(QJsonDocument(json).toJson(QJsonDocument::Indented)));
}

bool AuditPanel::exportVisible(const QString &path, QString *error) const
{
    m_controller->auditModel()->flush();
    QList<int> rows;
    rows.reserve(m_proxy->rowCount());
    for (int r = 0; r < m_proxy->rowCount(); ++r)
        rows.append(m_proxy->mapToSource(m_proxy->index(r, 0)).row());
    if (rows.isEmpty()) {
        // exportJsonLines() treats "no rows" as "all rows"; nothing visible means an empty file.
        // an export never creates folders: a missing one is a mistyped path
        if (!QFileInfo(QFileInfo(path).absolutePath()).isDir()) {
            if (error)
                *error = tr("cannot write '%1': the folder does not exist").arg(path);
            return false;
        }
        try {
            writeHostFileAtomic(path, QByteArray());
            return true;
        } catch (const SandboxError &e) {
            if (error)
                *error = e.message();
            return false;
        }
    }
    return m_controller->auditModel()->exportJsonLines(path, rows, error);
}

void AuditPanel::exportWithDialog()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export audit log"), QDir::home().filePath(QStringLiteral("elsai-audit.jsonl")),
        tr("JSON lines (*.jsonl);;All files (*)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportVisible(path, &error))
        QMessageBox::warning(this, tr("Export audit log"), error);
}

} // namespace elsai
