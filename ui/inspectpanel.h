// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QPointer>
#include <QTimer>
#include <QWidget>

class QFormLayout;
class QLabel;
class QPushButton;

namespace elsai {

class McpServerModel;
class ResourceSampler;
class SandboxController;

/// "What is this sandbox?": the current sandbox's backend and state, its workspace folder (open
/// it in the file manager, copy its path), seed source and sync destination, TTL and idle
/// time, command timeout and output cap, attached agents with their modes, its MCP endpoint,
/// and — where commands run on this machine (local, bwrap) — the live CPU, memory and process
/// count of its running commands (ResourceSampler, off the GUI thread). Refreshed once a
/// second while visible; nothing runs while hidden.
class InspectPanel : public QWidget
{
    Q_OBJECT

public:
    explicit InspectPanel(SandboxController *controller, QWidget *parent = nullptr);
    ~InspectPanel() override;

    /// The MCP server whose endpoint is shown when it serves the current sandbox.
    void setMcpModel(McpServerModel *model);
    QString workspaceId() const { return m_workspaceId; }
    ResourceSampler *sampler() const { return m_sampler; }

    /// The value shown for a field, by its key: backend, state, folder, seed, sync, ttl, idle,
    /// timeout, outputCap, agents, mcp, resources.
    QString field(const QString &key) const;
    QLabel *fieldLabel(const QString &key) const;
    QPushButton *openFolderButton() const { return m_open; }
    QPushButton *copyPathButton() const { return m_copy; }

public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
    /// Reads every field again (the timer does it each second while visible).
    void refresh();

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    QLabel *addField(const QString &key, const QString &title, QWidget *extra = nullptr);
    void setField(const QString &key, const QString &text, const QString &tip = {});
    void updateResources();
    SandboxController *m_controller;
    QPointer<McpServerModel> m_mcp;
    ResourceSampler *m_sampler;
    QString m_workspaceId;
    QString m_folder; ///< the local workspace folder, when there is one
    QHash<QString, QLabel *> m_fields;
    QFormLayout *m_form;
    QLabel *m_title;
    QPushButton *m_open;
    QPushButton *m_copy;
    QTimer m_timer;
};

} // namespace elsai
