#include "audithealthmonitor.h"

#include <QMetaObject>
#include <QPointer>

namespace elsai {

AuditHealthMonitor::AuditHealthMonitor(QObject *parent)
    : QObject(parent), m_health(AuditLog::instance().health())
{
    QPointer<AuditHealthMonitor> self(this);
    m_observer = AuditLog::instance().addHealthObserver([self](const AuditHealth &h) {
        // Any thread: hop to the monitor's thread (dropped if it is gone by then).
        if (self)
            QMetaObject::invokeMethod(
                self.data(), [self, h] {
                    if (self)
                        self->update(h);
                },
                Qt::QueuedConnection);
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
