// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "portspanel.h"

#include "errors.h"
#include "namespaceforward.h"
#include "panelwidgets.h"
#include "portsmodel.h"
#include "sandboxcontroller.h"

#include <QDesktopServices>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace elsai {

PortsPanel::PortsPanel(SandboxController *controller, QWidget *parent)
    : QWidget(parent), m_controller(controller), m_model(new PortsModel(controller, this)),
      m_view(makeTable(this)), m_open(new QPushButton(tr("&Open in Browser"), this)),
      m_status(new QLabel(this))
{
    m_openUrl = [](const QUrl &url) { return QDesktopServices::openUrl(url); };
    m_view->setModel(m_model);
    m_view->setAccessibleName(tr("Listening ports"));
    m_open->setAccessibleName(tr("Open the selected port in the browser"));
    m_open->setEnabled(false);
    m_status->setWordWrap(true);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(4, 2, 4, 2);
    bar->addWidget(m_status, 1);
    bar->addWidget(m_open);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);

    connect(m_open, &QPushButton::clicked, this, &PortsPanel::openSelected);
    connect(m_view, &QTableView::activated, this, &PortsPanel::openSelected);
    auto updateButton = [this] { m_open->setEnabled(m_view->currentIndex().isValid()); };
    connect(m_model, &QAbstractItemModel::modelReset, this, updateButton);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, updateButton);
    connect(m_model, &PortsModel::refreshed, this, [this] {
        m_status->setText(
            m_model->rowCount() == 0
                ? tr("Nothing listens on a TCP port in this sandbox.")
                : tr("%n port(s) listening in this sandbox.", "", m_model->rowCount()));
    });
    connect(m_model, &PortsModel::failed, this, [this](const QString &error) {
        m_status->setText(tr("Cannot list the ports: %1").arg(error));
    });
    connect(controller, &SandboxController::sandboxStopped, this,
            [this](const QString &id) { dropForwards(id); });
    connect(controller, &SandboxController::sandboxRemoved, this,
            [this](const QString &id) { dropForwards(id); });
}

PortsPanel::~PortsPanel() = default;

void PortsPanel::setWorkspace(const QString &workspaceId)
{
    m_current = workspaceId;
    m_status->clear();
    m_model->setWorkspace(workspaceId);
}

void PortsPanel::showEvent(QShowEvent *e)
{
    m_model->setActive(true);
    QWidget::showEvent(e);
}

void PortsPanel::hideEvent(QHideEvent *e)
{
    m_model->setActive(false);
    QWidget::hideEvent(e);
}

void PortsPanel::dropForwards(const QString &workspaceId)
{
    for (const QPointer<NamespaceForward> &f : m_forwards.take(workspaceId))
        delete f.data();
}

void PortsPanel::openSelected()
{
    const int row = m_view->currentIndex().row();
    if (row < 0)
        return;
    const SandboxPort port = m_model->port(row);
    const SandboxPtr sandbox = m_current.isEmpty() ? nullptr : m_controller->sandbox(m_current);
    const BackendPtr backend = sandbox ? sandbox->backend() : nullptr;
    if (!backend)
        return;
    auto open = [this](const QUrl &url) {
        if (m_openUrl(url)) {
            Q_EMIT opened(url);
            m_status->setText(tr("Opened %1").arg(url.toDisplayString()));
        } else {
            Q_EMIT message(tr("No browser could open %1").arg(url.toDisplayString()));
        }
    };
    if (port.reach == SandboxPort::Reach::NamespaceProxy) {
        // One proxy per port of the namespace, reused.
        QList<QPointer<NamespaceForward>> &list = m_forwards[m_current];
        for (const QPointer<NamespaceForward> &f : std::as_const(list)) {
            if (f && f->namespacePid() == port.namespacePid && f->port() == port.port) {
                open(f->url());
                return;
            }
        }
        try {
            auto *forward = new NamespaceForward(port.namespacePid, port.port, this);
            list.append(forward);
            open(forward->url());
        } catch (const SandboxError &e) {
            Q_EMIT message(e.message());
        }
        return;
    }
    // The SSH forward and Daytona's preview URL ask the remote: off the GUI thread.
    auto *watcher = new QFutureWatcher<std::pair<QUrl, QString>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, open] {
        const auto [url, error] = watcher->result();
        watcher->deleteLater();
        if (!error.isEmpty())
            Q_EMIT message(tr("Cannot open the port: %1").arg(error));
        else
            open(url);
    });
    watcher->setFuture(QtConcurrent::run(m_controller->pool(), [backend, port] {
        try {
            return std::make_pair(sandboxPortUrl(backend, port), QString());
        } catch (const SandboxError &e) {
            return std::make_pair(QUrl(), e.message());
        }
    }));
}

} // namespace elsai
