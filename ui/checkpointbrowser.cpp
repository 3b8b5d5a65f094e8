// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "checkpointbrowser.h"

#include "appsettings.h"
#include "checkpointtreemodel.h"
#include "codeeditor.h"
#include "displaytext.h"
#include "modelroles.h"
#include "sandboxcontroller.h"

#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSplitter>
#include <QStringDecoder>
#include <QTreeView>
#include <QVBoxLayout>

namespace elsai {

CheckpointBrowser::CheckpointBrowser(std::shared_ptr<TimeTravel> timeTravel,
                                     const QString &workspaceId, const QString &checkpoint,
                                     QThreadPool *pool, QWidget *parent)
    : QDialog(parent), m_model(new CheckpointTreeModel(this)), m_tree(new QTreeView(this)),
      m_file(new CodeEditor(this)), m_status(new QLabel(this)), m_pool(pool)
{
    setAttribute(Qt::WA_DeleteOnClose);
    setWindowTitle(tr("%1 at Checkpoint %2 (read-only)").arg(workspaceId, checkpoint));
    setAccessibleName(tr("Workspace at checkpoint"));
    m_tree->setModel(m_model);
    m_tree->setAccessibleName(tr("Files of the checkpoint"));
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setSectionResizeMode(CheckpointTreeModel::NameColumn, QHeaderView::Stretch);
    m_file->setReadOnly(true);
    m_file->setFont(AppSettings::instance()->editorFont());
    m_file->setAccessibleName(tr("File at the checkpoint"));
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_status->setAccessibleName(tr("Checkpoint browser status"));
    m_status->setText(tr("Reading checkpoint %1…").arg(checkpoint));
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_tree);
    split->addWidget(m_file);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);
    resize(900, 560);

    connect(m_model, &CheckpointTreeModel::loaded, this, [this] {
        m_status->setText(
            tr("Checkpoint %1: read-only, from the checkpoint store.").arg(m_model->checkpoint()));
    });
    connect(m_model, &CheckpointTreeModel::failed, this, [this](const QString &message) {
        m_status->setText(tr("Cannot read the checkpoint: %1").arg(message));
    });
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (current.isValid() && !current.data(Roles::IsDirRole).toBool())
                    showFile(current.data(Roles::PathRole).toString());
            });
    m_model->load(std::move(timeTravel), checkpoint, pool);
}

CheckpointBrowser::~CheckpointBrowser() = default;

void CheckpointBrowser::showFile(const QString &path)
{
    const quint64 serial = ++m_serial;
    auto *watcher = new QFutureWatcher<QByteArray>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial, path] {
        watcher->deleteLater();
        if (serial != m_serial)
            return;
        try {
            const QByteArray bytes = watcher->result();
            QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
            const QString text = decoder(bytes);
            if (decoder.hasError() || bytes.left(8192).contains('\0'))
                m_file->setPlainText(tr("%1: binary, %2.").arg(path, sizeText(bytes.size())));
            else
                m_file->setPlainText(text);
        } catch (...) {
            const auto err = futureError(std::current_exception());
            m_file->setPlainText(tr("%1: %2").arg(path, err ? err->second : QString()));
        }
        Q_EMIT fileShown(path);
    });
    watcher->setFuture(m_model->readFile(path, m_pool));
}

} // namespace elsai
