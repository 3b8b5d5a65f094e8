// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "timelinepanel.h"

#include "checkpointbrowser.h"
#include "confirm.h"
#include "diffview.h"
#include "errors.h"
#include "filediff.h"
#include "flowlayout.h"
#include "localsandboxbackend.h"
#include "messagebar.h"
#include "modelroles.h"
#include "newsandboxdialog.h"
#include "panelwidgets.h"
#include "sandboxcontroller.h"
#include "threadpriority.h"
#include "timelinemodel.h"
#include "tonecolors.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIdentityProxyModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QShortcut>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace elsai {

namespace {

using Kind = TimelineRow::Kind;

/// Checkpoints in bold, failed calls in the negative tone (the model has no QtGui).
class TimelineLook : public QIdentityProxyModel
{
public:
    TimelineLook(QWidget *view, QObject *parent) : QIdentityProxyModel(parent), m_view(view) {}

    QVariant data(const QModelIndex &index, int role) const override
    {
        const QModelIndex source = mapToSource(index);
        const auto kind = Kind(source.data(Roles::TimelineKindRole).toInt());
        if (role == Qt::FontRole && kind != Kind::Call) {
            QFont f = m_view->font();
            f.setBold(true);
            f.setItalic(kind == Kind::Now);
            return f;
        }
        if (role == Qt::ForegroundRole && kind == Kind::Call &&
            index.column() == TimelineModel::OutcomeColumn &&
            source.data(Roles::OutcomeRole).toString() != QLatin1String("ok"))
            return toneForeground(m_view->palette(), Tone::Negative);
        return QIdentityProxyModel::data(index, role);
    }

private:
    QWidget *m_view;
};

QToolButton *toolButton(QWidget *parent, const QString &text, const QString &name,
                        const QString &tip)
{
    auto *b = new QToolButton(parent);
    b->setText(text);
    b->setAccessibleName(name);
    b->setToolTip(tip);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    b->setAutoRaise(true);
    return b;
}

QString errorText(std::exception_ptr error)
{
    const auto err = futureError(error);
    return err ? err->second : QString();
}

} // namespace

TimelinePanel::TimelinePanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_model(new TimelineModel(controller, this)),
      m_bar(new MessageBar(this)), m_summary(new QLabel(this)), m_view(makeTable(this)),
      m_diff(new DiffView(this))
{
    m_model->setActive(false); // until shown
    auto *look = new TimelineLook(m_view, this);
    look->setSourceModel(m_model);
    m_view->setModel(look);
    m_view->setAccessibleName(tr("Timeline of calls and checkpoints"));
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSortingEnabled(false);      // time order is the point
    m_view->setCornerButtonEnabled(false); // "select all" compares nothing
    m_view->horizontalHeader()->setStretchLastSection(true);
    const QFontMetrics fm = m_view->fontMetrics();
    const int pad = 3 * fm.averageCharWidth();
    m_view->setColumnWidth(TimelineModel::TimeColumn,
                           fm.horizontalAdvance(QStringLiteral("00:00:00")) + pad);
    m_view->setColumnWidth(TimelineModel::AgentColumn,
                           fm.horizontalAdvance(tr("auto checkpoint")) + pad);
    m_view->setColumnWidth(TimelineModel::CallColumn,
                           fm.horizontalAdvance(QStringLiteral("◆ write_file__")) + pad);
    m_view->setColumnWidth(TimelineModel::OutcomeColumn,
                           fm.horizontalAdvance(QStringLiteral("FileNotFoundError")));
    m_diff->setAccessibleName(tr("Diff of the selected call or points"));
    m_diff->setMessage(tr("Select a call to see what it changed, a checkpoint to see what "
                          "changed since, or two points (Ctrl-click) to compare them."));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setAccessibleName(tr("Timeline summary"));

    m_take = toolButton(this, tr("Take Checkpoint…"), tr("Take checkpoint"),
                        tr("Record the workspace as it is now under a name"));
    m_restore = toolButton(this, tr("Restore to Here…"), tr("Restore to checkpoint"),
                           tr("Make the workspace exactly the selected checkpoint (asks first)"));
    m_fork = toolButton(this, tr("Fork from Here…"), tr("Fork from checkpoint"),
                        tr("Start a new sandbox from the selected checkpoint, in a new or empty "
                           "folder"));
    m_compare = toolButton(this, tr("Compare With"), tr("Compare with"),
                           tr("Diff the selected checkpoint with another one or with now"));
    m_compare->setPopupMode(QToolButton::InstantPopup);
    m_compare->setMenu(new QMenu(m_compare));
    m_compare->menu()->setAccessibleName(tr("Compare with"));
    m_delete = toolButton(this, tr("Delete Checkpoint…"), tr("Delete checkpoint"),
                          tr("Remove the selected checkpoint (asks first)"));
    m_browse = toolButton(this, tr("Show Workspace…"), tr("Show workspace at checkpoint"),
                          tr("The workspace as the selected checkpoint recorded it, read-only"));
    auto *refresh = new QToolButton(this);
    refresh->setIcon(style()->standardIcon(QStyle::SP_BrowserReload));
    refresh->setToolTip(tr("Read the history again"));
    refresh->setAccessibleName(tr("Refresh timeline"));
    refresh->setAutoRaise(true);

    // A flow: the buttons wrap in a narrow dock instead of widening the window.
    auto *top = new FlowLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(m_summary, 1);
    for (QToolButton *b : {m_take, m_restore, m_fork, m_compare, m_browse, m_delete, refresh})
        top->addWidget(b);
    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName(QStringLiteral("timelineSplitter"));
    splitter->addWidget(m_view);
    splitter->addWidget(m_diff);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setChildrenCollapsible(false);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_bar);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);

    // Keyboard: the context menu (Menu key, Shift+F10) has the buttons' actions; Delete
    // deletes the selected checkpoint (asking first).
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        QMenu menu(this);
        menu.setAccessibleName(tr("Timeline actions"));
        for (QToolButton *b : {m_take, m_restore, m_fork, m_browse, m_delete})
            menu.addAction(b->text(), b, &QToolButton::click)->setEnabled(b->isEnabled());
        menu.exec(m_view->viewport()->mapToGlobal(pos));
    });
    auto *deleteKey = new QShortcut(QKeySequence::Delete, m_view);
    deleteKey->setContext(Qt::WidgetShortcut);
    connect(deleteKey, &QShortcut::activated, this, [this] {
        if (m_delete->isEnabled())
            m_delete->click();
    });
    connect(m_take, &QToolButton::clicked, this, &TimelinePanel::askCheckpoint);
    connect(m_restore, &QToolButton::clicked, this,
            [this] { restoreCheckpoint(selectedCheckpoint()); });
    connect(m_fork, &QToolButton::clicked, this, &TimelinePanel::askFork);
    connect(m_delete, &QToolButton::clicked, this,
            [this] { deleteCheckpoint(selectedCheckpoint()); });
    connect(m_compare->menu(), &QMenu::aboutToShow, this, &TimelinePanel::fillCompareMenu);
    connect(m_browse, &QToolButton::clicked, this, [this] {
        if (CheckpointBrowser *browser = browseCheckpoint(selectedCheckpoint()))
            browser->show();
    });
    connect(refresh, &QToolButton::clicked, m_model, &TimelineModel::refresh);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &TimelinePanel::onSelectionChanged);
    connect(m_model, &TimelineModel::fetched, this, &TimelinePanel::updateActions);
    updateActions();
}

TimelinePanel::~TimelinePanel() = default;

QString TimelinePanel::workspaceId() const
{
    return m_model->workspaceId();
}

void TimelinePanel::setWorkspace(const QString &workspaceId)
{
    m_model->setWorkspace(workspaceId);
    ++m_diffSerial;
    m_bar->dismiss();
    m_diff->setMessage(tr("Select a call to see what it changed, a checkpoint to see what "
                          "changed since, or two points (Ctrl-click) to compare them."));
    updateActions();
}

void TimelinePanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    m_model->setActive(true);
}

void TimelinePanel::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    m_model->setActive(false);
}

QString TimelinePanel::selectedCheckpoint() const
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    if (rows.size() != 1 ||
        Kind(rows.first().data(Roles::TimelineKindRole).toInt()) != Kind::Checkpoint)
        return {};
    return rows.first().data(Roles::CheckpointNameRole).toString();
}

void TimelinePanel::updateActions()
{
    const SandboxPtr sandbox = m_controller->sandbox(workspaceId());
    const bool running = sandbox && sandbox->isStarted();
    const bool checkpoints = running && m_model->checkpointsOn();
    const bool one = !selectedCheckpoint().isEmpty();
    m_take->setEnabled(checkpoints);
    for (QToolButton *b : {m_restore, m_fork, m_compare, m_browse, m_delete})
        b->setEnabled(checkpoints && one);

    QString text;
    if (workspaceId().isEmpty()) {
        text = tr("No sandbox.");
    } else if (m_model->fetchCount() == 0) {
        text = tr("Reading the history…");
    } else {
        int calls = 0;
        int marks = 0;
        for (int r = 0; r < m_model->rowCount(); ++r) {
            const Kind k = m_model->rowAt(r).kind;
            calls += k == Kind::Call ? 1 : 0;
            marks += k == Kind::Checkpoint ? 1 : 0;
        }
        text = tr("%n call(s)", nullptr, calls) + QStringLiteral(" · ") +
               tr("%n checkpoint(s)", nullptr, marks);
        if (!m_model->problem().isEmpty())
            text = m_model->rowCount() == 0 ? m_model->problem()
                                            : text + QStringLiteral(". ") + m_model->problem();
    }
    m_summary->setText(text);
}

void TimelinePanel::onSelectionChanged()
{
    updateActions();
    QModelIndexList rows = m_view->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(),
              [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    const auto kindOf = [](const QModelIndex &i) {
        return Kind(i.data(Roles::TimelineKindRole).toInt());
    };
    const auto say = [this](const QString &text) { // no diff: a newer word than any diff
        ++m_diffSerial;
        m_diff->setMessage(text);
        Q_EMIT diffReady();
    };
    if (rows.size() == 1) {
        const QModelIndex &r = rows.first();
        if (kindOf(r) == Kind::Call)
            showCall(r.data(Roles::CallIdRole).toULongLong());
        else if (kindOf(r) == Kind::Checkpoint)
            compare(r.data(Roles::CheckpointNameRole).toString(), QStringLiteral("now"));
        else
            say(kindOf(r) == Kind::Restore
                    ? tr("Here the workspace was restored to a checkpoint: the calls after this "
                         "start from it.")
                    : tr("The workspace now: select a checkpoint with it (Ctrl-click) to see "
                         "what changed since."));
        return;
    }
    const auto isPoint = [&](const QModelIndex &i) {
        return kindOf(i) == Kind::Checkpoint || kindOf(i) == Kind::Now;
    };
    if (rows.size() == 2 && isPoint(rows[0]) && isPoint(rows[1])) {
        compare(rows[0].data(Roles::CheckpointNameRole).toString(),
                rows[1].data(Roles::CheckpointNameRole).toString());
        return;
    }
    say(rows.size() == 2 ? tr("Two checkpoints, or a checkpoint and now, can be compared; "
                              "select a call alone to see what it changed.")
                         : tr("Select one call, one checkpoint, or two points to compare."));
}

template<typename T, typename Work, typename Done>
void TimelinePanel::run(const QString &operation, Work work, Done done)
{
    auto *watcher = new QFutureWatcher<T>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, operation, done] {
        watcher->deleteLater();
        std::optional<T> result;
        try {
            result = watcher->result();
        } catch (...) {
            fail(operation, errorText(std::current_exception()));
            return;
        }
        done(*result);
        m_model->refresh();
    });
    watcher->setFuture(QtConcurrent::run(m_controller->pool(), std::move(work)));
}

void TimelinePanel::fail(const QString &operation, const QString &message)
{
    m_bar->showMessage(message, MessageBar::Type::Error);
    Q_EMIT operationFinished(operation, false);
}

void TimelinePanel::showDiff(const QString &title, const QString &reading,
                             std::function<CheckpointDiff(TimeTravel &)> work)
{
    const SandboxPtr sandbox = m_controller->sandbox(workspaceId());
    const quint64 serial = ++m_diffSerial;
    if (!sandbox) {
        m_diff->setMessage(tr("No sandbox."));
        Q_EMIT diffReady();
        return;
    }
    m_diff->setMessage(reading);
    auto *watcher = new QFutureWatcher<CheckpointDiff>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial, title] {
        watcher->deleteLater();
        if (serial != m_diffSerial)
            return; // another selection meanwhile
        try {
            m_diff->setDiff(timelineDiffText(watcher->result(), title));
        } catch (...) {
            m_diff->setMessage(tr("%1: %2").arg(title, errorText(std::current_exception())));
        }
        Q_EMIT diffReady();
    });
    watcher->setFuture(QtConcurrent::run(m_controller->bulkPool(), [sandbox, work] {
        lowerThreadPriority();
        const auto tt = sandbox->timeTravel();
        if (!tt)
            throw OSError(QStringLiteral("sandbox '%1' is not running, or keeps no history")
                              .arg(sandbox->workspaceId()));
        return work(*tt);
    }));
}

void TimelinePanel::showCall(quint64 id)
{
    const int row = m_model->rowOfCall(id);
    QString title = tr("Call %1").arg(id);
    if (row >= 0) {
        const TimelineRow &r = m_model->rowAt(row);
        title = tr("Call %1: %2 by %3 (%4)").arg(id).arg(r.tool, r.actor, r.outcome);
    }
    showDiff(title, tr("Reading what call %1 changed…").arg(id),
             [id](TimeTravel &tt) { return tt.callDiff(id); });
}

void TimelinePanel::compare(const QString &from, const QString &to)
{
    const QString title = to == QLatin1String("now") ? tr("From checkpoint %1 to now").arg(from)
                                                     : tr("From %1 to %2").arg(from, to);
    showDiff(title, tr("Comparing %1 with %2…").arg(from, to),
             [from, to](TimeTravel &tt) { return tt.diff(from, to); });
}

void TimelinePanel::fillCompareMenu()
{
    QMenu *menu = m_compare->menu();
    menu->clear();
    const QString selected = selectedCheckpoint();
    if (selected.isEmpty())
        return;
    const int selectedRow = m_model->rowOfCheckpoint(selected);
    QStringList others = m_model->checkpointNames();
    others.removeAll(selected);
    others.append(QStringLiteral("now"));
    for (const QString &name : std::as_const(others)) {
        QAction *a = menu->addAction(name == QLatin1String("now") ? tr("Now") : name);
        connect(a, &QAction::triggered, this, [this, name, selected, selectedRow] {
            // older first, whichever was picked first
            if (m_model->rowOfCheckpoint(name) < selectedRow)
                compare(name, selected);
            else
                compare(selected, name);
        });
    }
}

void TimelinePanel::askCheckpoint()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Take Checkpoint"));
    dialog.setAccessibleName(tr("Take checkpoint"));
    auto *name = new QLineEdit(&dialog);
    name->setAccessibleName(tr("Checkpoint name"));
    name->setPlaceholderText(tr("empty: an automatic name"));
    name->setMaxLength(100);
    auto *note = new QLineEdit(&dialog);
    note->setAccessibleName(tr("Checkpoint note"));
    note->setMaxLength(4096);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Take"));
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto *form = new QFormLayout(&dialog);
    form->addRow(tr("&Name:"), name);
    form->addRow(tr("N&ote:"), note);
    form->addRow(buttons);
    if (dialog.exec() == QDialog::Accepted)
        takeCheckpoint(name->text().trimmed(), note->text());
}

void TimelinePanel::takeCheckpoint(const QString &name, const QString &note)
{
    const SandboxPtr sandbox = m_controller->sandbox(workspaceId());
    if (!sandbox)
        return fail(QStringLiteral("checkpoint"), tr("No sandbox."));
    run<CheckpointInfo>(
        QStringLiteral("checkpoint"),
        [sandbox, name, note] {
            return sandbox->checkpoint(name, note, SandboxController::humanActor());
        },
        [this](const CheckpointInfo &info) {
            QString text = tr("Checkpoint %1 taken: %n file(s)", nullptr,
                              int(qMin<qint64>(info.files, INT_MAX)))
                               .arg(info.name);
            if (!info.removedBySizeLimit.isEmpty())
                text += QLatin1Char(' ') + tr("(the store's size limit removed: %1)")
                                               .arg(info.removedBySizeLimit.join(u", "));
            m_bar->showMessage(text, MessageBar::Type::Positive, 8000);
            Q_EMIT operationFinished(QStringLiteral("checkpoint"), true);
        });
}

void TimelinePanel::restoreCheckpoint(const QString &name)
{
    const QString id = workspaceId();
    const SandboxPtr sandbox = m_controller->sandbox(id);
    if (!sandbox || name.isEmpty())
        return fail(QStringLiteral("restore"), tr("Select a checkpoint to restore."));
    // First what would be lost (the paths that differ from now), then the question.
    run<CheckpointDiff>(
        QStringLiteral("restore"),
        [sandbox, name] {
            const auto tt = sandbox->timeTravel();
            if (!tt)
                throw OSError(
                    QStringLiteral("sandbox '%1' is not running").arg(sandbox->workspaceId()));
            CheckpointDiffOptions options;
            options.unified = false;
            options.maxEntries = 12;
            return tt->diff(QStringLiteral("now"), name, options);
        },
        [this, sandbox, name, id](const CheckpointDiff &loss) {
            Confirmation q;
            q.kind = QStringLiteral("restore-checkpoint");
            q.title = tr("Restore to Checkpoint?");
            const qint64 total = loss.added + loss.modified + loss.deleted;
            q.text = total == 0
                         ? tr("The workspace of %1 already equals checkpoint %2; restoring "
                              "checks it again.")
                               .arg(id, name)
                         : tr("The workspace of %1 becomes exactly checkpoint %2: %3 path(s) "
                              "differ from now (%4 to remove, %5 to put back as they were, "
                              "%6 to bring back), and what differs now is lost.")
                               .arg(id, name)
                               .arg(total)
                               .arg(loss.deleted)
                               .arg(loss.modified)
                               .arg(loss.added);
            q.text += QLatin1Char(' ') + tr("Commands running in it (agents', the console's) "
                                            "are stopped first.");
            for (const CheckpointDiffEntry &e : loss.entries)
                q.items.append(e.path);
            q.acceptText = tr("Restore");
            if (confirm(this, q) != ConfirmAnswer::Accept) {
                Q_EMIT operationFinished(QStringLiteral("restore"), false);
                return;
            }
            run<RestoreResult>(
                QStringLiteral("restore"),
                [sandbox, name] { return sandbox->restore(name, SandboxController::humanActor()); },
                [this](const RestoreResult &r) {
                    m_bar->showMessage(
                        tr("Restored %1: %2 file(s) written, %3 removed, %4 command(s) stopped.")
                            .arg(r.name)
                            .arg(r.applied.written + r.applied.linked)
                            .arg(r.applied.removed)
                            .arg(r.stoppedCalls),
                        MessageBar::Type::Positive, 8000);
                    Q_EMIT operationFinished(QStringLiteral("restore"), true);
                });
        });
}

void TimelinePanel::askFork()
{
    const QString name = selectedCheckpoint();
    if (name.isEmpty())
        return;
    const QString folder = QFileDialog::getExistingDirectory(
        this, tr("Fork %1 into a New or Empty Folder").arg(name), QDir::homePath());
    if (!folder.isEmpty())
        forkCheckpoint(name, folder);
}

void TimelinePanel::forkCheckpoint(const QString &name, const QString &folder)
{
    const QString id = workspaceId();
    const SandboxPtr sandbox = m_controller->sandbox(id);
    if (!sandbox || name.isEmpty())
        return fail(QStringLiteral("fork"), tr("Select a checkpoint to fork from."));
    const QDir dir(folder);
    if (folder.isEmpty() || !QDir::isAbsolutePath(folder))
        return fail(QStringLiteral("fork"), tr("Choose a folder for the fork."));
    if (dir.exists() &&
        !dir.isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System))
        return fail(QStringLiteral("fork"),
                    tr("%1 is not empty: a fork goes into a new or empty folder (nothing is "
                       "replaced).")
                        .arg(folder));
    SandboxSpec spec = m_controller->spec(id);
    spec.workspaceId = id + QStringLiteral("-fork");
    spec = NewSandboxDialog::withFreeWorkspaceId(spec, m_controller->workspaceIds());
    spec.workspaceRoot = folder;
    spec.seedFrom.reset(); // the checkpoint is its start; its own baseline is taken at start
    spec.syncDest.reset();
    const QString forkId = spec.workspaceId;
    run<QString>(
        QStringLiteral("fork"),
        [sandbox, name, forkId, folder] {
            // Written as a local folder, then stopped: the window starts it as a sandbox of
            // the source's kind (its backend, limits and time travel) on that folder.
            const SandboxPtr forked =
                sandbox->fork(name, forkId, std::make_shared<LocalSandboxBackend>(folder),
                              Sandbox::Options(), SandboxController::humanActor());
            forked->stop(false);
            return forkId;
        },
        [this, spec, name](const QString &) {
            try {
                m_controller->addSandbox(spec, true);
            } catch (const SandboxError &e) {
                return fail(QStringLiteral("fork"), e.display());
            }
            m_bar->showMessage(tr("Forked %1 into the new sandbox %2 (%3).")
                                   .arg(name, spec.workspaceId, spec.workspaceRoot),
                               MessageBar::Type::Positive, 8000);
            Q_EMIT operationFinished(QStringLiteral("fork"), true);
        });
}

void TimelinePanel::deleteCheckpoint(const QString &name)
{
    const SandboxPtr sandbox = m_controller->sandbox(workspaceId());
    if (!sandbox || name.isEmpty())
        return fail(QStringLiteral("delete"), tr("Select a checkpoint to delete."));
    Confirmation q;
    q.kind = QStringLiteral("delete-checkpoint");
    q.title = tr("Delete Checkpoint?");
    q.text = tr("Checkpoint %1 of %2 is removed: it can no longer be restored, forked or "
                "compared. The workspace is not changed.")
                 .arg(name, workspaceId());
    q.acceptText = tr("Delete");
    if (confirm(this, q) != ConfirmAnswer::Accept) {
        Q_EMIT operationFinished(QStringLiteral("delete"), false);
        return;
    }
    run<bool>(
        QStringLiteral("delete"),
        [sandbox, name] {
            return sandbox->deleteCheckpoint(name, SandboxController::humanActor());
        },
        [this, name](bool removed) {
            m_bar->showMessage(removed ? tr("Checkpoint %1 deleted.").arg(name)
                                       : tr("There was no checkpoint %1.").arg(name),
                               removed ? MessageBar::Type::Positive : MessageBar::Type::Warning,
                               8000);
            Q_EMIT operationFinished(QStringLiteral("delete"), removed);
        });
}

CheckpointBrowser *TimelinePanel::browseCheckpoint(const QString &name)
{
    const SandboxPtr sandbox = m_controller->sandbox(workspaceId());
    const auto tt = sandbox ? sandbox->timeTravel() : nullptr;
    if (!tt || name.isEmpty()) {
        m_bar->showMessage(tr("Select a checkpoint of a running sandbox to show its workspace."),
                           MessageBar::Type::Warning);
        return nullptr;
    }
    return new CheckpointBrowser(tt, workspaceId(), name, m_controller->bulkPool(), this);
}

} // namespace elsai
