// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "processespanel.h"

#include "modelroles.h"
#include "panelwidgets.h"
#include "processesmodel.h"
#include "processregistry.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace elsai {

ProcessesPanel::ProcessesPanel(QWidget *parent)
    : QWidget(parent), m_model(new ProcessesModel(this)), m_view(makeTable(this)),
      m_output(makeDetails(this)), m_stop(new QPushButton(tr("Sto&p"), this)),
      m_outputTimer(new QTimer(this))
{
    m_view->setModel(m_model);
    m_view->setAccessibleName(tr("Processes"));
    m_view->horizontalHeader()->setSectionResizeMode(ProcessesModel::What, QHeaderView::Stretch);
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_output->setAccessibleName(tr("Output so far"));
    m_output->setPlaceholderText(tr("Select a process to see its output so far."));
    m_stop->setAccessibleName(tr("Stop the selected process"));
    m_stop->setToolTip(tr("SIGTERM to its process group, SIGKILL after the grace"));
    m_stop->setEnabled(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(4, 2, 4, 2);
    // Wrapped, so that the panel's minimum width is not this sentence's.
    auto *about = new QLabel(tr("Terminals, agents' commands and background processes of this "
                                "sandbox."),
                             this);
    about->setWordWrap(true);
    bar->addWidget(about, 1);
    bar->addWidget(m_stop);
    layout->addLayout(bar);
    // Side by side, as the audit log: a bottom panel is wide and short.
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_view);
    split->addWidget(m_output);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);

    connect(m_stop, &QPushButton::clicked, this, &ProcessesPanel::stopSelected);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ProcessesPanel::showSelected);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &ProcessesPanel::showSelected);
    m_outputTimer->setInterval(1000);
    connect(m_outputTimer, &QTimer::timeout, this, &ProcessesPanel::showSelected);
    m_outputTimer->start();
}

void ProcessesPanel::setWorkspace(const QString &workspaceId)
{
    m_model->setWorkspace(workspaceId);
    showSelected();
}

bool ProcessesPanel::stopSelected()
{
    const quint64 id = m_model->processId(m_view->currentIndex().row());
    if (!id || !ProcessRegistry::instance().stop(id))
        return false;
    m_model->refresh();
    return true;
}

QString ProcessesPanel::shownOutput() const
{
    return m_output->toPlainText();
}

void ProcessesPanel::showSelected()
{
    const int row = m_view->currentIndex().row();
    const quint64 id = m_model->processId(row);
    m_stop->setEnabled(id != 0);
    if (!id) {
        m_output->clear();
        return;
    }
    const auto entry = ProcessRegistry::instance().find(id);
    QString text;
    if (entry && entry->kind == ProcessEntry::Kind::Terminal) {
        text = entry->foreground.isEmpty()
                   ? tr("An interactive terminal: its output is in its tab of the Terminal "
                        "panel. Stop ends the terminal.")
                   : tr("An interactive terminal running %1: its output is in its tab of the "
                        "Terminal panel. Stop ends that program; the shell stays.")
                         .arg(entry->foreground);
    } else {
        text = QString::fromUtf8(ProcessRegistry::instance().output(id));
        if (text.isEmpty())
            text = tr("(no output yet)");
    }
    if (text == m_output->toPlainText())
        return;
    QScrollBar *bar = m_output->verticalScrollBar();
    const bool atEnd = bar->value() == bar->maximum();
    m_output->setPlainText(text);
    if (atEnd)
        bar->setValue(bar->maximum());
}

} // namespace elsai
