// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "auditpanel.h"

#include "auditlogmodel.h"
#include "errors.h"
#include "flowlayout.h"
#include "hostfiles.h"
#include "messagebar.h"
#include "modelroles.h"
#include "panelwidgets.h"
#include "sandboxcontroller.h"

#include <QComboBox>
#include <QDateTimeEdit>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace elsai {

namespace {

/// Colours denied, invalid and error rows (the whole row; the outcome in bold).
class OutcomeDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        const auto tone = AuditPanel::outcomeTone(index.data(Roles::OutcomeRole).toString());
        if (!tone)
            return;
        option->backgroundBrush = toneBackground(option->palette, *tone);
        if (index.column() == AuditLogModel::OutcomeColumn) {
            option->palette.setColor(QPalette::Text, toneForeground(option->palette, *tone));
            option->font.setBold(true);
        }
    }
};

} // namespace

std::optional<Tone> AuditPanel::outcomeTone(const QString &outcome)
{
    if (outcome == QLatin1String("error"))
        return Tone::Negative;
    if (outcome == QLatin1String("denied") || outcome == QLatin1String("invalid"))
        return Tone::Neutral;
    return std::nullopt;
}

AuditPanel::AuditPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_proxy(new AuditFilterProxyModel(this)),
      m_view(makeTable(this)), m_event(new QComboBox(this)), m_actor(new QLineEdit(this)),
      m_outcome(new QComboBox(this)), m_text(new QLineEdit(this)), m_time(new QComboBox(this)),
      m_from(new QDateTimeEdit(this)), m_to(new QDateTimeEdit(this)), m_tabs(new QTabWidget(this)),
      m_record(new QTreeWidget(this)), m_details(makeDetails(this))
{
    AuditLogModel *source = controller->auditModel();
    m_proxy->setSourceModel(source);
    m_view->setModel(m_proxy);
    m_view->setItemDelegate(new OutcomeDelegate(m_view));
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(AuditLogModel::TimeColumn, Qt::AscendingOrder);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->setAccessibleName(tr("Audit records"));
    // Widths from the font: the time and outcome always fit, the rest start sensibly.
    const QFontMetrics fm = m_view->fontMetrics();
    const int pad = 3 * fm.averageCharWidth();
    m_view->setColumnWidth(AuditLogModel::TimeColumn,
                           fm.horizontalAdvance(QStringLiteral("00:00:00.000")) + pad);
    m_view->setColumnWidth(AuditLogModel::EventColumn,
                           fm.horizontalAdvance(QStringLiteral("sandbox.download_files")) + pad);
    m_view->setColumnWidth(AuditLogModel::WorkspaceColumn,
                           fm.horizontalAdvance(QStringLiteral("workbench-12")) + pad);
    m_view->setColumnWidth(AuditLogModel::ActorColumn,
                           fm.horizontalAdvance(QStringLiteral("reviewer-1")) + pad);
    m_view->setColumnWidth(AuditLogModel::OutcomeColumn,
                           fm.horizontalAdvance(QStringLiteral("Outcome")) + pad);

    m_event->setEditable(true);
    m_event->addItem(QString());
    m_event->lineEdit()->setPlaceholderText(tr("any event"));
    m_event->setInsertPolicy(QComboBox::NoInsert);
    m_event->setMinimumContentsLength(14);
    m_event->setAccessibleName(tr("Event filter"));
    m_actor->setPlaceholderText(tr("any actor"));
    m_actor->setAccessibleName(tr("Actor filter"));
    m_outcome->addItem(tr("any outcome"), QString());
    for (const char *o : {"ok", "error", "denied", "invalid"})
        m_outcome->addItem(QLatin1String(o), QLatin1String(o));
    m_outcome->setAccessibleName(tr("Outcome filter"));
    m_time->addItem(tr("All time"), int(TimeRange::All));
    m_time->addItem(tr("Last 5 minutes"), int(TimeRange::Last5Minutes));
    m_time->addItem(tr("Last hour"), int(TimeRange::LastHour));
    m_time->addItem(tr("Today"), int(TimeRange::Today));
    m_time->addItem(tr("From – to…"), int(TimeRange::Custom));
    m_time->setAccessibleName(tr("Time range"));
    for (QDateTimeEdit *edit : {m_from, m_to}) {
        edit->setDisplayFormat(QStringLiteral("yyyy-MM-dd hh:mm:ss"));
        edit->setCalendarPopup(true);
        edit->hide();
    }
    const QDateTime now = QDateTime::currentDateTime();
    m_from->setDateTime(QDateTime(now.date(), QTime(0, 0)));
    m_to->setDateTime(now.addSecs(3600));
    m_from->setAccessibleName(tr("From time"));
    m_to->setAccessibleName(tr("To time"));
    m_text->setPlaceholderText(tr("search"));
    m_text->setClearButtonEnabled(true);
    m_text->setAccessibleName(tr("Search the records"));
    auto *exportButton = new QPushButton(tr("Export…"), this);
    exportButton->setAccessibleName(tr("Export the visible records"));
    exportButton->setToolTip(tr("Write the records shown (after the filters) as JSON lines"));

    m_record->setColumnCount(2);
    m_record->setHeaderLabels({tr("Field"), tr("Value")});
    m_record->setRootIsDecorated(false);
    m_record->setWordWrap(true);
    m_record->setUniformRowHeights(false);
    m_record->setSelectionMode(QAbstractItemView::NoSelection);
    m_record->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_record->header()->setStretchLastSection(true);
    m_record->setAccessibleName(tr("Record fields"));
    m_details->setAccessibleName(tr("Record as JSON"));
    m_tabs->addTab(m_record, tr("Record"));
    m_tabs->addTab(m_details, tr("JSON"));
    m_tabs->setAccessibleName(tr("Selected record"));

    // The filters wrap onto a second line when the panel is narrow (ui/flowlayout.h).
    auto *filters = new FlowLayout;
    filters->setContentsMargins(0, 0, 0, 0);
    filters->addWidget(m_event);
    filters->addWidget(m_actor);
    filters->addWidget(m_outcome);
    filters->addWidget(m_time);
    filters->addWidget(m_from);
    filters->addWidget(m_to);
    filters->addWidget(m_text, 1);
    filters->addWidget(exportButton);
    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName(QStringLiteral("auditSplitter"));
    splitter->addWidget(m_view);
    splitter->addWidget(m_tabs);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setChildrenCollapsible(false);
    m_bar = new MessageBar(this);
    m_bar->setObjectName(QStringLiteral("auditMessageBar"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_bar);
    layout->addLayout(filters);
    layout->addWidget(splitter, 1);

    connect(m_event, &QComboBox::currentTextChanged, m_proxy,
            [this](const QString &t) { m_proxy->setEventFilter(t.trimmed()); });
    connect(m_actor, &QLineEdit::textChanged, m_proxy,
            [this](const QString &t) { m_proxy->setActorFilter(t.trimmed()); });
    connect(m_outcome, &QComboBox::currentIndexChanged, m_proxy,
            [this] { m_proxy->setOutcomeFilter(m_outcome->currentData().toString()); });
    connect(m_text, &QLineEdit::textChanged, m_proxy, &AuditFilterProxyModel::setTextFilter);
    connect(m_time, &QComboBox::currentIndexChanged, this, &AuditPanel::applyTimeRange);
    connect(m_from, &QDateTimeEdit::dateTimeChanged, this, &AuditPanel::applyTimeRange);
    connect(m_to, &QDateTimeEdit::dateTimeChanged, this, &AuditPanel::applyTimeRange);
    m_rangeTimer.setInterval(15000); // relative ranges move with the clock
    connect(&m_rangeTimer, &QTimer::timeout, this, &AuditPanel::applyTimeRange);
    connect(exportButton, &QPushButton::clicked, this, &AuditPanel::exportWithDialog);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &AuditPanel::updateDetails);

    // Offer every event name seen so far in the event filter.
    connect(source, &QAbstractItemModel::rowsInserted, this,
            [this, source](const QModelIndex &, int first, int last) {
                for (int row = first; row <= last; ++row) {
                    const QString name =
                        source->index(row, 0).data(Roles::EventNameRole).toString();
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

void AuditPanel::setTimeRange(TimeRange range)
{
    m_time->setCurrentIndex(m_time->findData(int(range)));
}

void AuditPanel::applyTimeRange()
{
    const auto range = TimeRange(m_time->currentData().toInt());
    const QDateTime now = QDateTime::currentDateTime();
    const bool custom = range == TimeRange::Custom;
    m_from->setVisible(custom);
    m_to->setVisible(custom);
    const bool moving = range == TimeRange::Last5Minutes || range == TimeRange::LastHour;
    if (moving && !m_rangeTimer.isActive())
        m_rangeTimer.start();
    else if (!moving)
        m_rangeTimer.stop();
    switch (range) {
    case TimeRange::All:
        m_proxy->setTimeRange({}, {});
        break;
    case TimeRange::Last5Minutes:
        m_proxy->setTimeRange(now.addSecs(-5 * 60));
        break;
    case TimeRange::LastHour:
        m_proxy->setTimeRange(now.addSecs(-3600));
        break;
    case TimeRange::Today:
        m_proxy->setTimeRange(QDateTime(now.date(), QTime(0, 0)));
        break;
    case TimeRange::Custom:
        // whole seconds as shown: "to" includes its last second
        m_proxy->setTimeRange(m_from->dateTime(), m_to->dateTime().addMSecs(999));
        break;
    }
}

void AuditPanel::updateDetails()
{
    m_record->clear();
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    if (!current.isValid()) {
        m_details->setPlainText(tr("Select a record to see all its fields."));
        new QTreeWidgetItem(m_record, {tr("(none)"), tr("Select a record to see its fields.")});
        return;
    }
    const QJsonObject json = current.data(Roles::AuditJsonRole).toJsonObject();
    m_details->setPlainText(QString::fromUtf8(QJsonDocument(json).toJson(QJsonDocument::Indented)));

    const auto event = current.data(Roles::AuditEventRole).value<AuditEvent>();
    auto add = [this](const QString &field, const QString &value) {
        auto *item = new QTreeWidgetItem(m_record, {field, value});
        item->setToolTip(1, value);
        return item;
    };
    const QDateTime local = event.timestamp.toLocalTime();
    add(tr("Time"), QStringLiteral("%1 (%2 UTC)")
                        .arg(local.toString(QStringLiteral("yyyy-MM-dd hh:mm:ss.zzz")),
                             event.timestamp.toUTC().toString(QStringLiteral("hh:mm:ss.zzz"))));
    add(tr("Event"), event.event);
    add(tr("Workspace"), event.workspaceId);
    add(tr("Actor"), event.actor);
    QTreeWidgetItem *outcome = add(tr("Outcome"), event.outcome);
    if (const auto tone = outcomeTone(event.outcome)) {
        outcome->setForeground(1, toneForeground(palette(), *tone));
        QFont bold = outcome->font(1);
        bold.setBold(true);
        outcome->setFont(1, bold);
    }
    QStringList keys = event.fields.keys();
    // The error first: it is what the reader of a failed record looks for.
    for (const QString &first : {QStringLiteral("error_type"), QStringLiteral("error")}) {
        if (keys.removeOne(first))
            keys.prepend(first);
    }
    for (const QString &key : std::as_const(keys)) {
        QString name = key;
        name.replace(QLatin1Char('_'), QLatin1Char(' '));
        add(name, AuditLogModel::fieldText(event.fields.value(key), true));
    }
    add(tr("Sequence"), QString::number(event.sequence));
}

void AuditPanel::showHealth(const QString &text)
{
    if (text.isEmpty())
        m_bar->dismiss();
    else if (m_bar->text() != text)
        m_bar->showMessage(text, MessageBar::Type::Error);
}

bool AuditPanel::exportVisible(const QString &path, QString *error, int *written) const
{
    if (written)
        *written = 0;
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
    if (!m_controller->auditModel()->exportJsonLines(path, rows, error))
        return false;
    if (written)
        *written = int(rows.size());
    return true;
}

bool AuditPanel::exportAndConfirm(const QString &path)
{
    QString error;
    int written = 0;
    if (!exportVisible(path, &error, &written)) {
        m_bar->showMessage(tr("The audit log was not exported: %1").arg(error),
                           MessageBar::Type::Error);
        return false;
    }
    m_bar->showMessage(
        tr("Wrote %n audit record(s) to %1", nullptr, written).arg(QDir::toNativeSeparators(path)),
        MessageBar::Type::Positive, 20000);
    return true;
}

void AuditPanel::exportWithDialog()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export audit log"), QDir::home().filePath(QStringLiteral("elsai-audit.jsonl")),
        tr("JSON lines (*.jsonl);;All files (*)"));
    if (!path.isEmpty())
        exportAndConfirm(path);
}

} // namespace elsai
