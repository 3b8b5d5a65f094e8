// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "auditpanel.h"

#include "auditlogmodel.h"
#include "errors.h"
#include "hostfiles.h"
#include "messagebar.h"
#include "modelroles.h"
#include "panelwidgets.h"
#include "sandboxcontroller.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace elsai {

AuditPanel::AuditPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_proxy(new AuditFilterProxyModel(this)),
      m_view(makeTable(this)), m_event(new QComboBox(this)), m_actor(new QLineEdit(this)),
      m_outcome(new QComboBox(this)), m_text(new QLineEdit(this)), m_details(makeDetails(this))
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

void AuditPanel::updateDetails()
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    if (!current.isValid()) {
        m_details->setPlainText(tr("Select a record to see all its fields."));
        return;
    }
    const QJsonObject json = current.data(Roles::AuditJsonRole).toJsonObject();
    m_details->setPlainText(QString::fromUtf8(QJsonDocument(json).toJson(QJsonDocument::Indented)));
}

void AuditPanel::showHealth(const QString &text)
{
    if (text.isEmpty())
        m_bar->dismiss();
    else if (m_bar->text() != text)
        m_bar->showMessage(text, MessageBar::Type::Error);
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
