// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

namespace elsai {

class SandboxController;

/// Live CPU, memory and process count of one sandbox's running commands, where they run on
/// this machine (local, bwrap): the backend's process groups (SandboxBackend::
/// runningProcessGroups) summed from /proc (platform/processusage.h) on the controller's pool,
/// once per interval while active (the Inspect panel is visible). GUI thread only.
class ResourceSampler : public QObject
{
    Q_OBJECT

public:
    struct Sample
    {
        bool valid = false;    ///< a sample was taken
        int processes = 0;     ///< processes of the running commands
        double cpuPercent = 0; ///< since the previous sample; 100 = one core busy
        qint64 rssBytes = 0;   ///< resident memory, summed
        int commands = 0;      ///< commands running (process groups)
    };

    explicit ResourceSampler(SandboxController *controller, QObject *parent = nullptr);

    void setWorkspace(const QString &workspaceId);
    QString workspaceId() const { return m_workspaceId; }
    /// Samples every intervalMs() while active, and once at once.
    void setActive(bool active);
    bool isActive() const { return m_timer.isActive(); }
    void setIntervalMs(int ms) { m_timer.setInterval(ms); }
    int intervalMs() const { return m_timer.interval(); }
    /// The sandbox's commands run on this machine (a running local or bwrap sandbox).
    bool isSupported() const;
    const Sample &last() const { return m_last; }
    /// Takes a sample now (skipped while one is being taken).
    void sampleNow();

Q_SIGNALS:
    void sampled();

private:
    QPointer<SandboxController> m_controller;
    QString m_workspaceId;
    QTimer m_timer;
    QElapsedTimer m_clock;
    Sample m_last;
    qint64 m_prevCpuNs = -1;
    qint64 m_prevWallNs = 0;
    bool m_busy = false;
    quint64 m_serial = 0;
};

} // namespace elsai
