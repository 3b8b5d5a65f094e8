#include "consolepanel.h"

#include "consolehistorymodel.h"
#include "sandboxcontroller.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QStringDecoder>
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

} // namespace elsai
