// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include "audit.h"

#include <QObject>
#include <QString>

namespace elsai {

/// The audit trail's health for the window: AuditLog::instance()'s health, with a signal on
/// every change of state (delivered on this object's thread, whichever thread's write changed
/// it). The status bar shows statusText() while it is not empty.
class AuditHealthMonitor : public QObject
{
    Q_OBJECT

public:
    explicit AuditHealthMonitor(QObject *parent = nullptr);
    ~AuditHealthMonitor() override;

    AuditHealth health() const { return m_health; }
    /// Empty while the log is ok; else one line ("audit log failing: 3 records dropped (…)").
    QString statusText() const;

    /// Re-reads the health now (counts change without a change of state: the window polls).
    void refresh() { update(AuditLog::instance().health()); }

Q_SIGNALS:
    /// The state or a count changed.
    void healthChanged();

private:
    void update(const AuditHealth &health);

    AuditHealth m_health;
    int m_observer = 0;
};

} // namespace elsai
