#pragma once

// Small helpers shared by the engine tests.

#include "audit.h"
#include "backend.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QList>
#include <QMutex>
#include <QString>

#include <memory>

namespace elsai::test {

/// Writes a host file (making its folders); a failure ends the test run. Returns true, so
/// that it also reads well inside QVERIFY.
inline bool writeHostFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(data) != data.size())
        qFatal("cannot write %s", qPrintable(path));
    return true;
}

inline QByteArray readHostFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return QByteArray("<missing>");
    return f.readAll();
}

/// Collects audit events while alive.
class AuditCapture
{
public:
    AuditCapture()
        : m_sink(std::make_shared<CallbackAuditSink>([this](const AuditEvent &e) {
              QMutexLocker lock(&m_mutex);
              m_events.append(e);
          }))
    {
        AuditLog::instance().addSink(m_sink);
    }
    ~AuditCapture() { AuditLog::instance().removeSink(m_sink); }

    QList<AuditEvent> events() const
    {
        QMutexLocker lock(&m_mutex);
        return m_events;
    }
    QStringList names() const
    {
        QStringList out;
        for (const AuditEvent &e : events())
            out.append(e.event);
        return out;
    }
    QList<AuditEvent> named(const QString &event) const
    {
        QList<AuditEvent> out;
        for (const AuditEvent &e : events()) {
            if (e.event == event)
                out.append(e);
        }
        return out;
    }
    void clear()
    {
        QMutexLocker lock(&m_mutex);
        m_events.clear();
    }

private:
    mutable QMutex m_mutex;
    QList<AuditEvent> m_events;
    AuditSinkPtr m_sink;
};

} // namespace elsai::test
