// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "changespanel.h"

#include "changesmodel.h"
#include "diffview.h"
#include "errors.h"
#include "filediff.h"
#include "modelroles.h"
#include "panelwidgets.h"
#include "sandboxcontroller.h"
#include "threadpriority.h"
#include "tonecolors.h"

#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace elsai {

namespace {

/// Filters by path and colours the kind of change (the model has no colours: no QtGui).
class ChangesProxy : public QSortFilterProxyModel
{
public:
    ChangesProxy(QWidget *view, QObject *parent) : QSortFilterProxyModel(parent), m_view(view)
    {
        setFilterKeyColumn(ChangesModel::PathColumn);
        setFilterCaseSensitivity(Qt::CaseInsensitive);
    }

    QVariant data(const QModelIndex &index, int role) const override
    {
        if (role == Qt::ForegroundRole && index.column() == ChangesModel::ChangeColumn) {
            switch (WorkspaceChange::Kind(index.data(Roles::ChangeKindRole).toInt())) {
            case WorkspaceChange::Kind::Added:
                return toneForeground(m_view->palette(), Tone::Positive);
            case WorkspaceChange::Kind::Modified:
                return toneForeground(m_view->palette(), Tone::Neutral);
            case WorkspaceChange::Kind::Deleted:
                return toneForeground(m_view->palette(), Tone::Negative);
            }
        }
        return QSortFilterProxyModel::data(index, role);
    }

private:
    QWidget *m_view;
};

} // namespace

ChangesPanel::ChangesPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_model(new ChangesModel(controller, this)),
      m_view(makeTable(this)), m_diff(new DiffView(this)), m_summary(new QLabel(this)),
      m_filter(new QLineEdit(this)), m_refresh(new QToolButton(this))
{
    m_model->setActive(false); // until shown
    m_proxy = new ChangesProxy(m_view, this);
    m_proxy->setSourceModel(m_model);
    m_view->setModel(m_proxy);
    m_view->setAccessibleName(tr("Changed files"));
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_view->horizontalHeader()->setSectionResizeMode(ChangesModel::PathColumn,
                                                     QHeaderView::Stretch);
    // Widths from the font: ResizeToContents would measure every row at each merge.
    const QFontMetrics fm = m_view->fontMetrics();
    const int pad = 3 * fm.averageCharWidth();
    m_view->setColumnWidth(ChangesModel::ChangeColumn,
                           fm.horizontalAdvance(tr("modified (special)")) + pad);
    m_view->setColumnWidth(ChangesModel::SizeColumn,
                           fm.horizontalAdvance(QStringLiteral("1023.9 KiB → 1023.9 KiB")) + pad);
    m_diff->setAccessibleName(tr("Diff of the selected file"));
    m_diff->setMessage(tr("Select a file to compare it with its seeded version."));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setAccessibleName(tr("Changes summary"));
    m_filter->setPlaceholderText(tr("Filter paths"));
    m_filter->setClearButtonEnabled(true);
    m_filter->setAccessibleName(tr("Filter changed paths"));
    m_refresh->setIcon(style()->standardIcon(QStyle::SP_BrowserReload));
    m_refresh->setToolTip(tr("List the changes again"));
    m_refresh->setAccessibleName(tr("Refresh changes"));
    m_refresh->setAutoRaise(true);

    auto *top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_filter);
    top->addWidget(m_refresh);
    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName(QStringLiteral("changesSplitter"));
    splitter->addWidget(m_view);
    splitter->addWidget(m_diff);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setChildrenCollapsible(false);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(top);
    layout->addWidget(splitter, 1);

    connect(m_filter, &QLineEdit::textChanged, m_proxy,
            &QSortFilterProxyModel::setFilterFixedString);
    connect(m_refresh, &QToolButton::clicked, m_model, &ChangesModel::refresh);
    connect(m_model, &ChangesModel::scanned, this, &ChangesPanel::updateSummary);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ChangesPanel::onCurrentChanged);
    // The selected file changed again, or is no longer changed: compare it again.
    connect(m_model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex &first, const QModelIndex &last) {
                const int row = m_model->rowOf(m_shownPath);
                if (row >= first.row() && row <= last.row())
                    showDiff(m_shownPath);
            });
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, [this] {
        if (!m_shownPath.isEmpty() && m_model->rowOf(m_shownPath) < 0)
            showDiff(m_shownPath);
    });
    updateSummary();
}

ChangesPanel::~ChangesPanel() = default;

QString ChangesPanel::workspaceId() const
{
    return m_model->workspaceId();
}

void ChangesPanel::setWorkspace(const QString &workspaceId)
{
    m_model->setWorkspace(workspaceId);
    m_shownPath.clear();
    ++m_diffSerial;
    m_diff->setMessage(tr("Select a file to compare it with its seeded version."));
    updateSummary();
}

void ChangesPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    m_model->setActive(true);
}

void ChangesPanel::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    m_model->setActive(false);
}

void ChangesPanel::onCurrentChanged()
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    if (current.isValid())
        showDiff(current.data(Roles::PathRole).toString());
}

void ChangesPanel::showDiff(const QString &path)
{
    m_shownPath = path;
    const quint64 serial = ++m_diffSerial;
    const SandboxPtr sandbox = m_controller->sandbox(m_model->workspaceId());
    if (!sandbox || !sandbox->isStarted()) {
        m_diff->setMessage(tr("The sandbox is not running: its files cannot be read."));
        Q_EMIT diffReady(path);
        return;
    }
    auto *watcher = new QFutureWatcher<FileDiff>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial, path] {
        watcher->deleteLater();
        if (serial != m_diffSerial)
            return; // another file was picked meanwhile
        try {
            FileDiff diff = watcher->result();
            if (m_model->rowOf(path) < 0 && diff.kind == FileDiff::Kind::Identical)
                diff.note = tr("%1 is no longer changed since the seed.").arg(path);
            m_diff->setDiff(diff);
        } catch (...) {
            const auto err = futureError(std::current_exception());
            m_diff->setMessage(
                tr("Cannot compare %1: %2").arg(path, err ? err->second : QString()));
        }
        Q_EMIT diffReady(path);
    });
    watcher->setFuture(QtConcurrent::run(m_controller->bulkPool(), [sandbox, path] {
        lowerThreadPriority();
        const BackendPtr backend = sandbox->backend();
        if (!backend)
            throw OSError(
                QStringLiteral("sandbox '%1' is not running").arg(sandbox->workspaceId()));
        return diffAgainstSeed(*backend, path);
    }));
}

void ChangesPanel::updateSummary()
{
    QString text;
    if (m_model->workspaceId().isEmpty()) {
        text = tr("No sandbox.");
    } else if (!m_model->problem().isEmpty() && m_model->scanCount() > 0 &&
               m_model->rowCount() == 0) {
        text = m_model->problem();
    } else if (m_model->scanCount() == 0) {
        text = tr("Listing the changes…");
    } else {
        using K = WorkspaceChange::Kind;
        const QString counts = tr("%1 added · %2 modified · %3 deleted")
                                   .arg(m_model->count(K::Added))
                                   .arg(m_model->count(K::Modified))
                                   .arg(m_model->count(K::Deleted));
        switch (m_model->base()) {
        case ChangeBase::Seed:
            text = tr("%1 since the seed from %2").arg(counts, m_model->baseRoot());
            break;
        case ChangeBase::Empty:
            text = tr("%1 (not seeded: every file is new)").arg(counts);
            break;
        case ChangeBase::Missing:
            text = tr("%1 — the seed record is missing (its base file was lost): every file "
                      "shows as new")
                       .arg(counts);
            break;
        case ChangeBase::Unknown:
            text = tr("This backend keeps no record of its seed: changes cannot be told.");
            break;
        }
        if (m_model->isTruncated())
            text += QLatin1Char(' ') + tr("(partial: the workspace is larger than the listing "
                                          "bound; deletions are not shown)");
        if (!m_model->errors().isEmpty())
            text += QLatin1Char(' ') +
                    tr("%n folder(s) could not be listed.", nullptr, int(m_model->errors().size()));
        if (!m_model->problem().isEmpty())
            text += QLatin1Char(' ') + m_model->problem();
    }
    m_summary->setText(text);
    m_summary->setToolTip(m_model->errors().join(QLatin1Char('\n')));
}

} // namespace elsai
