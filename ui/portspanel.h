// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QHash>
#include <QPointer>
#include <QUrl>
#include <QWidget>

#include <functional>

class QLabel;
class QPushButton;
class QTableView;

namespace elsai {

class NamespaceForward;
class PortsModel;
class SandboxController;

/// The Ports panel: the TCP ports listening in the current sandbox, each with "Open in
/// browser" (through a forward where this host cannot reach it: `ssh -L` through the master,
/// a loopback proxy into a bwrap network namespace, Daytona's preview URL). Forwards end with
/// their sandbox.
class PortsPanel : public QWidget
{
    Q_OBJECT

public:
    explicit PortsPanel(SandboxController *controller, QWidget *parent = nullptr);
    ~PortsPanel() override;

    PortsModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    /// What opens a URL (QDesktopServices::openUrl by default; tests replace it).
    void setUrlOpener(std::function<bool(const QUrl &)> opener) { m_openUrl = std::move(opener); }
    /// Opens the selected port; the URL goes to the opener once known (asynchronously).
    void openSelected();

public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);

Q_SIGNALS:
    void opened(const QUrl &url);
    void message(const QString &text);

protected:
    void showEvent(QShowEvent *e) override;
    void hideEvent(QHideEvent *e) override;

private:
    void dropForwards(const QString &workspaceId);

    SandboxController *m_controller;
    PortsModel *m_model;
    QTableView *m_view;
    QPushButton *m_open;
    QLabel *m_status;
    QString m_current;
    std::function<bool(const QUrl &)> m_openUrl;
    /// Loopback proxies into bwrap namespaces, by workspace.
    QHash<QString, QList<QPointer<NamespaceForward>>> m_forwards;
};

} // namespace elsai
