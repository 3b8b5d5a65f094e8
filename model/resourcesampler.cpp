// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "resourcesampler.h"

#include "processusage.h"
#include "sandboxcontroller.h"

#include <QFutureWatcher>
#include <QtConcurrent>

namespace elsai {

namespace {

struct Taken
{
    ProcessUsage usage;
    int commands = 0;
    qint64 wallNs = 0;
};

std::shared_ptr<SandboxBackend> localCommands(const SandboxPtr &sandbox)
{
    const BackendPtr backend = sandbox ? sandbox->backend() : nullptr;
    if (!backend || backend->hostFolder().isEmpty())
        return nullptr; // commands run on another machine
    return std::dynamic_pointer_cast<SandboxBackend>(backend);
}

} // namespace

ResourceSampler::ResourceSampler(SandboxController *controller, QObject *parent)
    : QObject(parent), m_controller(controller)
{
    m_clock.start();
    m_timer.setInterval(1000);
    connect(&m_timer, &QTimer::timeout, this, &ResourceSampler::sampleNow);
}

void ResourceSampler::setWorkspace(const QString &workspaceId)
{
    if (workspaceId == m_workspaceId)
        return;
    m_workspaceId = workspaceId;
    ++m_serial;
    m_last = Sample();
    m_prevCpuNs = -1;
    if (isActive())
        sampleNow();
}

void ResourceSampler::setActive(bool active)
{
    if (active == m_timer.isActive())
        return;
    if (active) {
        m_timer.start();
        sampleNow();
    } else {
        m_timer.stop();
    }
}

bool ResourceSampler::isSupported() const
{
    return m_controller && localCommands(m_controller->sandbox(m_workspaceId));
}

void ResourceSampler::sampleNow()
{
    if (m_busy || !m_controller || m_controller->isShuttingDown())
        return;
    const SandboxPtr sandbox = m_controller->sandbox(m_workspaceId);
    if (!localCommands(sandbox)) {
        if (m_last.valid) {
            m_last = Sample();
            Q_EMIT sampled();
        }
        return;
    }
    m_busy = true;
    const quint64 serial = m_serial;
    auto *watcher = new QFutureWatcher<Taken>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, serial] {
        watcher->deleteLater();
        m_busy = false;
        if (serial != m_serial || watcher->isCanceled())
            return;
        const Taken t = watcher->result();
        Sample s;
        s.valid = true;
        s.processes = t.usage.processes;
        s.rssBytes = t.usage.rssBytes;
        s.commands = t.commands;
        // CPU over the interval; a process that ended takes its time with it: never negative.
        if (m_prevCpuNs >= 0 && t.wallNs > m_prevWallNs)
            s.cpuPercent = qMax(0.0, double(t.usage.cpuNs - m_prevCpuNs) * 100.0 /
                                         double(t.wallNs - m_prevWallNs));
        m_prevCpuNs = t.usage.cpuNs;
        m_prevWallNs = t.wallNs;
        m_last = s;
        Q_EMIT sampled();
    });
    const QElapsedTimer clock = m_clock;
    watcher->setFuture(QtConcurrent::run(m_controller->pool(), [sandbox, clock] {
        Taken t;
        if (const auto backend = localCommands(sandbox)) {
            const QList<qint64> groups = backend->runningProcessGroups();
            t.commands = int(groups.size());
            t.usage = sampleProcessGroups(groups);
        }
        t.wallNs = clock.nsecsElapsed();
        return t;
    }));
}

} // namespace elsai
