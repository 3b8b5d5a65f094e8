// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "audithealthmonitor.h"

#include <QMetaObject>

namespace elsai {

AuditHealthMonitor::AuditHealthMonitor(QObject *parent)
    : QObject(parent), m_health(AuditLog::instance().health())
{
    // Any thread: hop to the monitor's thread. The destructor removes the observer, which
    // waits for a running one, so `this` is alive here; Qt drops the queued call if the
    // monitor is deleted before it runs.
    m_observer = AuditLog::instance().addHealthObserver([this](const AuditHealth &h) {
        QMetaObject::invokeMethod(
            this, [this, h] { update(h); }, Qt::QueuedConnection);
    });
}

AuditHealthMonitor::~AuditHealthMonitor()
{
    AuditLog::instance().removeHealthObserver(m_observer);
}

QString AuditHealthMonitor::statusText() const
{
    return m_health.isOk() && m_health.recordsDropped == 0 ? QString() : m_health.describe();
}

void AuditHealthMonitor::update(const AuditHealth &health)
{
    if (health == m_health)
        return;
    m_health = health;
    Q_EMIT healthChanged();
}

} // namespace elsai
