// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "flushpreviewdialog.h"

#include "diffview.h"
#include "displaytext.h"
#include "errors.h"
#include "filediff.h"
#include "sandboxcontroller.h"
#include "threadpriority.h"
#include "treecopy.h"
#include "unifieddiff.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace elsai {

namespace {

constexpr int kPathRole = Qt::UserRole + 1;
constexpr int kActionRole = Qt::UserRole + 2;

QString actionName(SyncPlanEntry::Action action)
{
    switch (action) {
    case SyncPlanEntry::Action::Add:
        return FlushPreviewDialog::tr("Add");
    case SyncPlanEntry::Action::Update:
        return FlushPreviewDialog::tr("Update");
    case SyncPlanEntry::Action::Unchanged:
        return FlushPreviewDialog::tr("Unchanged");
    case SyncPlanEntry::Action::KeepHost:
        return FlushPreviewDialog::tr("Keep host");
    case SyncPlanEntry::Action::Conflict:
        return FlushPreviewDialog::tr("Conflict");
    case SyncPlanEntry::Action::SkippedSymlink:
        return FlushPreviewDialog::tr("Skipped symlink");
    case SyncPlanEntry::Action::SkippedSpecial:
        return FlushPreviewDialog::tr("Skipped special file");
    case SyncPlanEntry::Action::HostDeleted:
        return FlushPreviewDialog::tr("Deleted on the host");
    case SyncPlanEntry::Action::SandboxDeleted:
        return FlushPreviewDialog::tr("Deleted in the sandbox");
    }
    return {};
}

QString actionHint(SyncPlanEntry::Action action)
{
    switch (action) {
    case SyncPlanEntry::Action::Add:
        return FlushPreviewDialog::tr("new on the host");
    case SyncPlanEntry::Action::Update:
        return FlushPreviewDialog::tr("the workspace version replaces the host file");
    case SyncPlanEntry::Action::Unchanged:
        return FlushPreviewDialog::tr("nothing to do");
    case SyncPlanEntry::Action::KeepHost:
        return FlushPreviewDialog::tr("changed on the host only: the host file is kept");
    case SyncPlanEntry::Action::Conflict:
        return FlushPreviewDialog::tr("changed on both sides: the host file is kept, the "
                                      "workspace version is written beside it (%1, or a "
                                      "numbered name when that one holds other content)")
            .arg(conflictSuffix());
    case SyncPlanEntry::Action::SkippedSymlink:
        return FlushPreviewDialog::tr("symlinks are never created on the host");
    case SyncPlanEntry::Action::SkippedSpecial:
        return FlushPreviewDialog::tr("special files are not synced");
    case SyncPlanEntry::Action::HostDeleted:
        return FlushPreviewDialog::tr("deleted on the host, unchanged in the workspace: it "
                                      "stays deleted");
    case SyncPlanEntry::Action::SandboxDeleted:
        return FlushPreviewDialog::tr("deleted in the workspace: the host file is kept (a "
                                      "flush never deletes host files)");
    }
    return {};
}

} // namespace

struct FlushPreviewDialog::Private
{
    SandboxController *controller;
    QString workspaceId;
    QLabel *summary;
    QTreeWidget *entries;
    DiffView *diff;
    QProgressBar *progress;
    QLabel *result;
    QPushButton *flushButton;
    QPushButton *refreshButton;
    std::optional<SyncPlan> plan;
    int diffSerial = 0;
    bool flushing = false;
};

FlushPreviewDialog::FlushPreviewDialog(SandboxController *controller, const QString &workspaceId,
                                       QWidget *parent)
    : QDialog(parent), d(std::make_unique<Private>())
{
    d->controller = controller;
    d->workspaceId = workspaceId;
    setWindowTitle(tr("Flush Preview — %1").arg(workspaceId));

    d->summary = new QLabel(tr("Planning…"), this);
    d->summary->setWordWrap(true);
    auto *splitter = new QSplitter(this);
    d->entries = new QTreeWidget(splitter);
    d->entries->setHeaderLabels({tr("Path"), tr("Size")});
    d->entries->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    d->entries->header()->setStretchLastSection(false);
    d->entries->setAccessibleName(tr("Planned files"));
    d->diff = new DiffView(splitter);
    d->diff->setAccessibleName(tr("Host and workspace versions compared"));
    d->diff->setPlaceholderText(tr("Select a file to see the host and workspace versions "
                                   "compared."));
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 2);
    d->progress = new QProgressBar(this);
    d->progress->hide();
    d->result = new QLabel(this);
    d->result->setWordWrap(true);
    d->result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    d->result->hide();

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    d->refreshButton = buttons->addButton(tr("&Refresh"), QDialogButtonBox::ActionRole);
    // ActionRole: flushing keeps the dialog open to show the result.
    d->flushButton = buttons->addButton(tr("&Flush"), QDialogButtonBox::ActionRole);
    d->flushButton->setEnabled(false);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(d->refreshButton, &QPushButton::clicked, this, &FlushPreviewDialog::refresh);
    connect(d->flushButton, &QPushButton::clicked, this, &FlushPreviewDialog::flushNow);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(d->summary);
    layout->addWidget(splitter, 1);
    layout->addWidget(d->progress);
    layout->addWidget(d->result);
    layout->addWidget(buttons);
    resize(900, 600);

    connect(d->entries, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *item) {
        if (item && !item->data(0, kPathRole).toString().isEmpty())
            showDiff(item->data(0, kPathRole).toString());
    });
    connect(controller, &SandboxController::flushProgress, this,
            [this](const QString &ws, int done, int total) {
                if (ws != d->workspaceId)
                    return;
                d->progress->setRange(0, qMax(total, 1));
                d->progress->setValue(done);
            });
    refresh();
}

FlushPreviewDialog::~FlushPreviewDialog() = default;

QTreeWidget *FlushPreviewDialog::entriesView() const
{
    return d->entries;
}

DiffView *FlushPreviewDialog::diffView() const
{
    return d->diff;
}

QString FlushPreviewDialog::resultText() const
{
    return d->result->isHidden() ? QString() : d->result->text();
}

void FlushPreviewDialog::refresh()
{
    if (!d->controller->sandbox(d->workspaceId)) {
        d->summary->setText(tr("No sandbox '%1'.").arg(d->workspaceId));
        return;
    }
    d->refreshButton->setEnabled(false);
    d->flushButton->setEnabled(false);
    d->summary->setText(tr("Planning…"));
    auto *watcher = new QFutureWatcher<std::optional<SyncPlan>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        d->refreshButton->setEnabled(true);
        try {
            d->plan = watcher->result();
        } catch (...) {
            const auto err = futureError(std::current_exception());
            d->plan.reset();
            d->summary->setText(
                tr("Cannot plan the flush: %1")
                    .arg(err ? err->first + QStringLiteral(": ") + err->second : QString()));
            return;
        }
        const QString current = d->entries->currentItem()
                                    ? d->entries->currentItem()->data(0, kPathRole).toString()
                                    : QString();
        d->entries->clear();
        if (!d->plan) {
            d->summary->setText(tr("This sandbox has no sync destination (neither a seed "
                                   "folder nor a sync destination): nothing to flush."));
            Q_EMIT planReady();
            return;
        }
        const SyncPlan &plan = *d->plan;
        QMap<int, QTreeWidgetItem *> groups;
        QMap<int, int> counts;
        int toWrite = 0;
        for (const SyncPlanEntry &e : plan.entries) {
            const int action = int(e.action);
            QTreeWidgetItem *&group = groups[action];
            if (!group) {
                group = new QTreeWidgetItem;
                group->setData(0, kActionRole, action);
                group->setToolTip(0, actionHint(e.action));
            }
            ++counts[action];
            auto *row = new QTreeWidgetItem(group, {e.path, sizeText(e.size)});
            row->setData(0, kPathRole, e.path);
            row->setData(0, kActionRole, action);
            row->setToolTip(0, actionHint(e.action));
            if (e.action == SyncPlanEntry::Action::Add ||
                e.action == SyncPlanEntry::Action::Update ||
                e.action == SyncPlanEntry::Action::Conflict)
                ++toWrite;
        }
        // QMap keeps the enum order: Add, Update, Unchanged, KeepHost, Conflict, Skipped….
        for (auto it = groups.begin(); it != groups.end(); ++it) {
            const auto action = SyncPlanEntry::Action(it.key());
            it.value()->setText(0, tr("%1 (%2)").arg(actionName(action)).arg(counts[it.key()]));
            d->entries->addTopLevelItem(it.value());
            it.value()->setExpanded(action != SyncPlanEntry::Action::Unchanged);
        }
        if (!plan.errors.isEmpty()) {
            auto *errors =
                new QTreeWidgetItem(d->entries, {tr("Errors (%1)").arg(plan.errors.size())});
            for (const QString &e : plan.errors)
                new QTreeWidgetItem(errors, {e});
            errors->setExpanded(true);
        }
        d->summary->setText(
            plan.entries.isEmpty()
                ? tr("Nothing in the workspace matches the sync includes (flush into %1).")
                      .arg(plan.destRoot)
                : tr("Flush into %1: %n file(s) to write.", nullptr, toWrite).arg(plan.destRoot));
        d->flushButton->setEnabled(!d->flushing);
        if (!current.isEmpty()) {
            const auto found =
                d->entries->findItems(current, Qt::MatchExactly | Qt::MatchRecursive);
            if (!found.isEmpty())
                d->entries->setCurrentItem(found.first());
        }
        Q_EMIT planReady();
    });
    watcher->setFuture(d->controller->planFlush(d->workspaceId));
}

void FlushPreviewDialog::showDiff(const QString &path)
{
    if (!d->plan)
        return;
    const auto it = std::find_if(d->plan->entries.cbegin(), d->plan->entries.cend(),
                                 [&](const SyncPlanEntry &e) { return e.path == path; });
    if (it == d->plan->entries.cend())
        return;
    const int serial = ++d->diffSerial;
    const SyncPlanEntry::Action action = it->action;
    // nothing to compare: one side is a link, a special file, or gone
    if (action == SyncPlanEntry::Action::SkippedSymlink ||
        action == SyncPlanEntry::Action::SkippedSpecial ||
        action == SyncPlanEntry::Action::HostDeleted ||
        action == SyncPlanEntry::Action::SandboxDeleted) {
        d->diff->setMessage(tr("%1: %2.").arg(path, actionHint(action)));
        Q_EMIT diffReady(path);
        return;
    }
    d->diff->setMessage(tr("Reading %1…").arg(path));
    const SandboxPtr sandbox = d->controller->sandbox(d->workspaceId);
    const QString root = d->plan->destRoot;
    auto *differ = new QFutureWatcher<FileDiff>(this);
    connect(differ, &QFutureWatcherBase::finished, this, [this, differ, serial, path] {
        differ->deleteLater();
        if (serial != d->diffSerial)
            return;
        try {
            d->diff->setDiff(differ->result());
        } catch (...) {
            const auto err = futureError(std::current_exception());
            d->diff->setMessage(
                tr("Cannot read the workspace version: %1").arg(err ? err->second : QString()));
        }
        Q_EMIT diffReady(path);
    });
    // Both sides read and compared on the pool; the host side never leaves the destination.
    differ->setFuture(QtConcurrent::run(d->controller->bulkPool(), [sandbox, root, path] {
        lowerThreadPriority();
        const BackendPtr backend = sandbox ? sandbox->backend() : nullptr;
        if (!backend)
            throw OSError(QStringLiteral("the sandbox is not running"));
        return diffFileVersions(readHostVersion(root, path), QStringLiteral("host/") + path,
                                readWorkspaceVersion(*backend, path),
                                QStringLiteral("workspace/") + path);
    }));
}

void FlushPreviewDialog::flushNow()
{
    if (d->flushing || !d->controller->sandbox(d->workspaceId))
        return;
    d->flushing = true;
    d->flushButton->setEnabled(false);
    d->progress->setRange(0, 0); // busy until the first progress report
    d->progress->show();
    d->result->hide();
    auto *watcher = new QFutureWatcher<std::optional<WorkspaceSyncResult>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        d->flushing = false;
        d->progress->hide();
        bool ok = false;
        QString text;
        try {
            const std::optional<WorkspaceSyncResult> r = watcher->result();
            if (!r) {
                text = tr("Nothing flushed: the sandbox has no sync destination.");
            } else {
                ok = r->success() && r->conflicts.isEmpty();
                text = tr("%n file(s) synced (%1).", nullptr, r->filesSynced)
                           .arg(sizeText(r->bytesSynced));
                if (!r->conflicts.isEmpty())
                    text += QLatin1Char(' ') +
                            tr("%n conflict(s) — the host files were kept and the workspace "
                               "versions written beside them as *%1: %2.",
                               nullptr, int(r->conflicts.size()))
                                .arg(conflictSuffix(), r->conflicts.join(QStringLiteral(", ")));
                if (!r->sandboxDeleted.isEmpty())
                    text +=
                        QLatin1Char(' ') + tr("Deleted in the sandbox, kept on the host: %1.")
                                               .arg(r->sandboxDeleted.join(QStringLiteral(", ")));
                if (!r->skippedPaths.isEmpty())
                    text += QLatin1Char(' ') +
                            tr("Skipped: %1.").arg(r->skippedPaths.join(QStringLiteral(", ")));
                const QStringList errors = r->errors;
                if (!errors.isEmpty())
                    text += QLatin1Char('\n') + tr("Errors:") + QLatin1Char('\n') +
                            errors.join(QLatin1Char('\n'));
            }
        } catch (...) {
            const auto err = futureError(std::current_exception());
            text = tr("The flush failed: %1")
                       .arg(err ? err->first + QStringLiteral(": ") + err->second : QString());
        }
        d->result->setText(text);
        d->result->show();
        Q_EMIT flushFinished(ok);
        refresh();
    });
    watcher->setFuture(d->controller->flush(d->workspaceId));
}

} // namespace elsai
