#pragma once

#include <QWidget>

namespace elsai {

class SandboxController;

/// Sessions table (every sandbox; selecting one makes it current; start/stop/remove actions).
class SessionsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit SessionsPanel(SandboxController *controller, QWidget *parent = nullptr);
Q_SIGNALS:
    void currentWorkspaceChanged(const QString &workspaceId);
private:
    SandboxController *m_controller;
};

/// Console of the current sandbox: command line with history (up/down) and a cwd selector,
/// streamed output (stdout and stderr told apart), exit code, duration, truncated / timed out,
/// cancel.
class ConsolePanel : public QWidget
{
    Q_OBJECT
public:
    explicit ConsolePanel(SandboxController *controller, QWidget *parent = nullptr);
public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
    void runCommand(const QString &command);
private:
    SandboxController *m_controller;
};

/// Attached agents: attach / detach / change mode, each agent's tools and recent calls.
class AgentsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit AgentsPanel(SandboxController *controller, QWidget *parent = nullptr);
public Q_SLOTS:
    void setWorkspace(const QString &workspaceId);
private:
    SandboxController *m_controller;
};

/// Live audit log: filters (event, actor, outcome, text), details of the selected record,
/// export to JSON lines.
class AuditPanel : public QWidget
{
    Q_OBJECT
public:
    explicit AuditPanel(SandboxController *controller, QWidget *parent = nullptr);
private:
    SandboxController *m_controller;
};

} // namespace elsai
