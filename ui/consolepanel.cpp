// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "consolepanel.h"

#include "consoleblock.h"
#include "consolehistorymodel.h"
#include "errors.h"
#include "hostfiles.h"
#include "sandboxcontroller.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

namespace elsai {

namespace {

bool isKey(const QKeyEvent *ke, int key)
{
    return ke->key() == key && (ke->modifiers() & ~Qt::KeypadModifier) == Qt::ControlModifier;
}

// Ctrl+C copies where there is something selected to copy.
bool hasSelection(QObject *watched)
{
    if (auto *edit = qobject_cast<QPlainTextEdit *>(watched))
        return edit->textCursor().hasSelection();
    if (auto *line = qobject_cast<QLineEdit *>(watched))
        return line->hasSelectedText();
    if (auto *label = qobject_cast<QLabel *>(watched))
        return label->hasSelectedText();
    return false;
}

} // namespace

int ConsolePanel::maxBlockCount()
{
    return ConsoleBlock::maxBlockCount();
}
int ConsolePanel::maxLineLength()
{
    return ConsoleBlock::maxLineLength();
}
int ConsolePanel::maxCharsPerPass()
{
    return ConsoleBlock::maxCharsPerPass();
}
int ConsolePanel::maxLinesPerPass()
{
    return ConsoleBlock::maxLinesPerPass();
}

ConsolePanel::ConsolePanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_scroll(new QScrollArea(this)),
      m_blocksHost(new QWidget), m_blocksLayout(new QVBoxLayout(m_blocksHost)),
      m_input(new QLineEdit(this)), m_cwd(new QComboBox(this)),
      m_run(new QPushButton(tr("Run"), this)), m_message(new QLabel(this))
{
    m_blocksLayout->setContentsMargins(0, 0, 0, 0);
    m_blocksLayout->setSpacing(4);
    m_blocksLayout->addStretch(1);
    m_scroll->setWidget(m_blocksHost);
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setAccessibleName(tr("Console commands"));
    m_scroll->setFocusPolicy(Qt::NoFocus);
    QScrollBar *bar = m_scroll->verticalScrollBar();
    connect(bar, &QScrollBar::rangeChanged, this, [this, bar](int, int max) {
        if (m_follow)
            bar->setValue(max);
    });
    connect(bar, &QScrollBar::valueChanged, this,
            [this, bar](int value) { m_follow = value >= bar->maximum() - 2; });

    m_input->setPlaceholderText(tr("Command (Enter runs it as the 'console' agent, beside any "
                                   "still running; Up/Down: history; Ctrl+C: cancel; "
                                   "Ctrl+L: clear)"));
    m_input->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_input->setAccessibleName(tr("Command"));
    m_cwd->setEditable(true);
    m_cwd->addItem(QStringLiteral("."));
    m_cwd->setToolTip(tr("Working folder, relative to the workspace root"));
    m_cwd->setAccessibleName(tr("Working folder"));
    m_cwd->setMinimumContentsLength(8);
    m_run->setAccessibleName(tr("Run the command"));
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setAccessibleName(tr("Console state"));
    m_message->setWordWrap(true);

    auto *cwdLabel = new QLabel(tr("cwd"), this);
    cwdLabel->setBuddy(m_cwd);
    auto *line = new QHBoxLayout;
    line->addWidget(cwdLabel);
    line->addWidget(m_cwd);
    line->addWidget(m_input, 1);
    line->addWidget(m_run);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_scroll, 1);
    layout->addLayout(line);
    layout->addWidget(m_message);

    connect(m_input, &QLineEdit::returnPressed, this, [this] { runCommand(m_input->text()); });
    connect(m_run, &QPushButton::clicked, this, [this] { runCommand(m_input->text()); });
    watchKeys(this);
    updateRunState();
}

ConsolePanel::~ConsolePanel() = default;

void ConsolePanel::watchKeys(QWidget *widget)
{
    widget->installEventFilter(this);
    const QList<QWidget *> children = widget->findChildren<QWidget *>();
    for (QWidget *child : children)
        child->installEventFilter(this);
}

qsizetype ConsolePanel::pendingLines() const
{
    qsizetype n = 0;
    for (const ConsoleBlock *b : m_order)
        n += b->pendingLines();
    return n;
}

bool ConsolePanel::hasPendingOutput() const
{
    for (const ConsoleBlock *b : m_order) {
        if (b->hasPendingOutput())
            return true;
    }
    return false;
}

QPlainTextEdit *ConsolePanel::output() const
{
    return m_order.isEmpty() ? nullptr : m_order.last()->output();
}

QLabel *ConsolePanel::statusLabel() const
{
    return m_order.isEmpty() ? m_message : m_order.last()->statusLabel();
}

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
    m_historyPos = -1;
    m_notice.clear();
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
}

void ConsolePanel::renderAll()
{
    for (ConsoleBlock *b : std::as_const(m_order))
        delete b;
    m_order.clear();
    m_blocks.clear();
    if (m_model) {
        // Every running command, and the newest finished ones that fit.
        const quint64 cleared = m_clearedUpTo.value(m_workspaceId);
        int finished = 0;
        QList<int> rows;
        for (int row = m_model->rowCount() - 1; row >= 0; --row) {
            const ConsoleHistoryModel::Entry &e = m_model->entry(row);
            if (e.running || (e.id > cleared && finished++ < maxBlocks()))
                rows.prepend(row);
        }
        for (int row : std::as_const(rows))
            renderRow(row);
    }
    updateRunState();
}

void ConsolePanel::renderRow(int row)
{
    if (!m_model || row < 0 || row >= m_model->rowCount())
        return;
    const ConsoleHistoryModel::Entry &e = m_model->entry(row);
    ConsoleBlock *b = m_blocks.value(e.id);
    if (!b) {
        if (!e.running && e.id <= m_clearedUpTo.value(m_workspaceId))
            return;
        b = addBlock(e.id);
        // Trimmed when a block comes, not when one ends: a command that just ended stays
        // in view with its status.
        trimBlocks();
    }
    b->update(e);
    updateRunState();
}

ConsoleBlock *ConsolePanel::addBlock(quint64 id)
{
    auto *b = new ConsoleBlock(id, m_model, m_blocksHost);
    // Before the stretch, after the blocks already shown (request ids grow).
    m_blocksLayout->insertWidget(m_blocksLayout->count() - 1, b);
    m_blocks.insert(id, b);
    m_order.append(b);
    connect(b, &ConsoleBlock::cancelRequested, this,
            qOverload<quint64>(&ConsolePanel::cancelCommand));
    connect(b, &ConsoleBlock::saveRequested, this, &ConsolePanel::saveOutputWithDialog);
    watchKeys(b);
    return b;
}

void ConsolePanel::removeBlock(ConsoleBlock *b)
{
    m_blocks.remove(b->id());
    m_order.removeOne(b);
    b->hide();
    b->deleteLater();
}

void ConsolePanel::trimBlocks()
{
    int finished = 0;
    for (const ConsoleBlock *b : std::as_const(m_order))
        finished += b->isRunning() ? 0 : 1;
    for (int i = 0; finished > maxBlocks() && i < m_order.size();) {
        ConsoleBlock *b = m_order.at(i);
        if (b->isRunning()) {
            ++i;
            continue;
        }
        removeBlock(b);
        --finished;
    }
}

quint64 ConsolePanel::runCommand(const QString &command)
{
    if (command.trimmed().isEmpty())
        return 0;
    if (m_workspaceId.isEmpty()) {
        m_notice = tr("No sandbox selected");
        updateRunState();
        return 0;
    }
    QString cwd = m_cwd->currentText().trimmed();
    if (!cwd.isEmpty() && m_cwd->findText(cwd) < 0)
        m_cwd->addItem(cwd);
    if (cwd == QLatin1String("."))
        cwd.clear();
    m_follow = true;
    const quint64 id = m_controller->execute(m_workspaceId, command, cwd);
    if (id == 0) {
        m_notice = tr("Sandbox '%1' is not running").arg(m_workspaceId);
        updateRunState();
        return 0;
    }
    m_notice.clear();
    m_historyPos = -1;
    m_input->clear();
    updateRunState();
    return id;
}

ConsoleBlock *ConsolePanel::cancelTarget() const
{
    for (QObject *o = QApplication::focusWidget(); o; o = o->parent()) {
        if (auto *b = qobject_cast<ConsoleBlock *>(o)) {
            if (b->isRunning() && m_blocks.value(b->id()) == b)
                return b;
            break;
        }
    }
    for (auto it = m_order.crbegin(); it != m_order.crend(); ++it) {
        if ((*it)->isRunning())
            return *it;
    }
    return nullptr;
}

void ConsolePanel::cancelCommand()
{
    if (ConsoleBlock *b = cancelTarget()) {
        cancelCommand(b->id());
    } else {
        m_notice = tr("No command is running");
        updateRunState();
    }
}

void ConsolePanel::cancelCommand(quint64 requestId)
{
    m_controller->cancelCommand(requestId);
}

void ConsolePanel::clearFinished()
{
    if (m_model && m_model->rowCount() > 0) {
        quint64 &cleared = m_clearedUpTo[m_workspaceId];
        for (int row = 0; row < m_model->rowCount(); ++row) {
            const ConsoleHistoryModel::Entry &e = m_model->entry(row);
            if (!e.running)
                cleared = qMax(cleared, e.id);
        }
    }
    const QList<ConsoleBlock *> blocks = m_order;
    for (ConsoleBlock *b : blocks) {
        if (!b->isRunning())
            removeBlock(b);
    }
    m_notice.clear();
    updateRunState();
}

bool ConsolePanel::saveOutput(quint64 requestId, const QString &path, QString *message)
{
    const auto say = [message](const QString &text) {
        if (message)
            *message = text;
    };
    const int row = m_model ? m_model->rowOf(requestId) : -1;
    if (row < 0) {
        say(tr("Not saved: the console no longer keeps that command's output"));
        return false;
    }
    bool complete = true;
    const QByteArray data = m_model->savedOutput(row, &complete);
    const QFileInfo info(path);
    const bool exists = info.exists() || info.isSymLink();
    if (exists) {
        if (info.isDir()) {
            say(tr("Not saved: '%1' is a folder").arg(path));
            return false;
        }
        const auto answer = QMessageBox::question(
            this, tr("Replace file?"),
            tr("'%1' already exists (%2 bytes). Replace it with this output? Its current "
               "contents will be lost.")
                .arg(path, QLocale::system().toString(info.size())),
            QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
        if (answer != QMessageBox::Yes) {
            say(tr("Not saved: '%1' was left as it was").arg(path));
            return false;
        }
    }
    try {
        // Without the user's yes an entry that appeared meanwhile is never replaced.
        writeHostFileAtomic(path, data, 0644, exists);
    } catch (const std::exception &e) {
        say(tr("Not saved: %1").arg(describeError(e).display()));
        return false;
    }
    say(complete ? tr("Saved %1 bytes to '%2'").arg(data.size()).arg(path)
                 : tr("Saved %1 bytes to '%2': the kept head and tail only, the whole output "
                      "is no longer kept")
                       .arg(data.size())
                       .arg(path));
    return true;
}

void ConsolePanel::saveOutputWithDialog(quint64 requestId)
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save output"), QDir::home().filePath(QStringLiteral("console-output.txt")),
        tr("Text (*.txt *.log);;All files (*)"), nullptr, QFileDialog::DontConfirmOverwrite);
    if (path.isEmpty())
        return;
    saveOutput(requestId, path, &m_notice);
    updateRunState();
}

void ConsolePanel::updateRunState()
{
    const bool have = m_model != nullptr;
    m_input->setEnabled(have);
    m_run->setEnabled(have);
    m_cwd->setEnabled(have);
    int running = 0;
    for (const ConsoleBlock *b : std::as_const(m_order))
        running += b->isRunning() ? 1 : 0;
    QStringList parts;
    if (!m_notice.isEmpty())
        parts << m_notice;
    if (running > 0)
        parts << tr("%n running; a new command runs beside them in its own block", nullptr,
                    running);
    m_message->setText(parts.join(QStringLiteral(" · ")));
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
    const QEvent::Type type = event->type();
    if (type == QEvent::ShortcutOverride || type == QEvent::KeyPress) {
        auto *ke = static_cast<QKeyEvent *>(event);
        const bool ctrlC = isKey(ke, Qt::Key_C) && !hasSelection(watched);
        const bool ctrlL = isKey(ke, Qt::Key_L);
        if (ctrlC || ctrlL) {
            // Accepting the override keeps window shortcuts from taking the key.
            ke->accept();
            if (type == QEvent::KeyPress) {
                if (ctrlC)
                    cancelCommand();
                else
                    clearFinished();
            }
            return true;
        }
        if (type == QEvent::KeyPress && watched == m_input &&
            (ke->key() == Qt::Key_Up || ke->key() == Qt::Key_Down)) {
            browseHistory(ke->key() == Qt::Key_Up ? -1 : 1);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace elsai
