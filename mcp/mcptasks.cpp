// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "mcptasks.h"

#include "jsonrpc.h"
#include "mcpera.h"
#include "process.h"

#include <QRandomGenerator>

#include <algorithm>

namespace elsai {

namespace {

constexpr int kMaxFinishedTasks = 256;

QString newTaskId()
{
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    return QString::fromLatin1(
        QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex());
}

QString isoTime(const QDateTime &t)
{
    return t.toUTC().toString(Qt::ISODateWithMs);
}

const char *statusName(McpTaskStore::Status s)
{
    switch (s) {
    case McpTaskStore::Status::Working:
        return "working";
    case McpTaskStore::Status::Completed:
        return "completed";
    case McpTaskStore::Status::Failed:
        return "failed";
    case McpTaskStore::Status::Cancelled:
        return "cancelled";
    }
    return "failed";
}

} // namespace

struct McpTaskStore::Task
{
    QString id;
    QDateTime createdAt;
    QDateTime updatedAt;
    QDateTime finishedAt; ///< invalid while working
    Status status = Status::Working;
    QString statusMessage;
    QJsonObject payload; ///< result (completed) or error (failed)
    std::shared_ptr<CancellationToken> token;
};

McpTaskStore::McpTaskStore(std::chrono::milliseconds pollInterval) : m_pollInterval(pollInterval) {}

McpTaskStore::~McpTaskStore() = default;

void McpTaskStore::setPollInterval(std::chrono::milliseconds interval)
{
    QMutexLocker lock(&m_mutex);
    m_pollInterval = interval;
}

void McpTaskStore::setRetention(std::chrono::milliseconds retention)
{
    QMutexLocker lock(&m_mutex);
    m_retention = retention;
}

QString McpTaskStore::create(std::shared_ptr<CancellationToken> token, const QString &statusMessage)
{
    auto task = std::make_shared<Task>();
    task->id = newTaskId();
    task->createdAt = task->updatedAt = QDateTime::currentDateTimeUtc();
    task->statusMessage = statusMessage;
    task->token = std::move(token);
    QMutexLocker lock(&m_mutex);
    purgeLocked();
    m_tasks.insert(task->id, task);
    return task->id;
}

void McpTaskStore::setStatusMessage(const QString &id, const QString &message)
{
    QMutexLocker lock(&m_mutex);
    const auto task = m_tasks.value(id);
    if (!task || task->status != Status::Working)
        return;
    task->statusMessage = message;
    task->updatedAt = QDateTime::currentDateTimeUtc();
}

void McpTaskStore::complete(const QString &id, const QJsonObject &result)
{
    finish(id, Status::Completed, result, QStringLiteral("completed"));
}

void McpTaskStore::fail(const QString &id, const QJsonObject &error)
{
    finish(id, Status::Failed, error, error.value(QLatin1String("message")).toString());
}

void McpTaskStore::markCancelled(const QString &id, const QString &statusMessage)
{
    finish(id, Status::Cancelled, {}, statusMessage);
}

void McpTaskStore::finish(const QString &id, Status status, const QJsonObject &payload,
                          const QString &statusMessage)
{
    QList<std::pair<Send, QByteArray>> out;
    {
        QMutexLocker lock(&m_mutex);
        const auto task = m_tasks.value(id);
        if (!task || task->status != Status::Working)
            return;
        task->status = status;
        task->payload = payload;
        task->statusMessage = statusMessage;
        task->updatedAt = task->finishedAt = QDateTime::currentDateTimeUtc();
        task->token.reset();
        out = notificationsLocked(id);
    }
    for (const auto &[send, bytes] : out)
        send(bytes);
}

QJsonObject McpTaskStore::fieldsLocked(const Task &t, bool withPayload) const
{
    // ttlMs counts from creation: while working, the age plus the retention; then fixed.
    const QDateTime end = t.finishedAt.isValid() ? t.finishedAt : QDateTime::currentDateTimeUtc();
    const qint64 ttl = t.createdAt.msecsTo(end) + qint64(m_retention.count());
    QJsonObject o{{QStringLiteral("taskId"), t.id},
                  {QStringLiteral("status"), QLatin1String(statusName(t.status))},
                  {QStringLiteral("createdAt"), isoTime(t.createdAt)},
                  {QStringLiteral("lastUpdatedAt"), isoTime(t.updatedAt)},
                  {QStringLiteral("ttlMs"), ttl},
                  {QStringLiteral("pollIntervalMs"), qint64(m_pollInterval.count())}};
    if (!t.statusMessage.isEmpty())
        o.insert(QStringLiteral("statusMessage"), t.statusMessage);
    if (withPayload && t.status == Status::Completed)
        o.insert(QStringLiteral("result"), t.payload);
    else if (withPayload && t.status == Status::Failed)
        o.insert(QStringLiteral("error"), t.payload);
    return o;
}

void McpTaskStore::purgeLocked() const
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QList<std::shared_ptr<Task>> finished;
    for (auto it = m_tasks.begin(); it != m_tasks.end();) {
        const auto &t = it.value();
        if (t->finishedAt.isValid() && t->finishedAt.msecsTo(now) > qint64(m_retention.count())) {
            it = m_tasks.erase(it);
            continue;
        }
        if (t->finishedAt.isValid())
            finished.append(t);
        ++it;
    }
    if (finished.size() <= kMaxFinishedTasks)
        return;
    std::sort(finished.begin(), finished.end(),
              [](const auto &a, const auto &b) { return a->finishedAt < b->finishedAt; });
    for (qsizetype i = 0; i < finished.size() - kMaxFinishedTasks; ++i)
        m_tasks.remove(finished.at(i)->id);
}

std::optional<QJsonObject> McpTaskStore::detailed(const QString &id) const
{
    QMutexLocker lock(&m_mutex);
    purgeLocked();
    const auto task = m_tasks.value(id);
    if (!task)
        return std::nullopt;
    return fieldsLocked(*task, true);
}

std::optional<QJsonObject> McpTaskStore::summary(const QString &id) const
{
    QMutexLocker lock(&m_mutex);
    const auto task = m_tasks.value(id);
    if (!task)
        return std::nullopt;
    return fieldsLocked(*task, false);
}

bool McpTaskStore::cancel(const QString &id)
{
    QMutexLocker lock(&m_mutex);
    purgeLocked();
    const auto task = m_tasks.value(id);
    if (!task)
        return false;
    if (task->token)
        task->token->cancel();
    return true;
}

bool McpTaskStore::contains(const QString &id) const
{
    QMutexLocker lock(&m_mutex);
    purgeLocked();
    return m_tasks.contains(id);
}

int McpTaskStore::size() const
{
    QMutexLocker lock(&m_mutex);
    return int(m_tasks.size());
}

void McpTaskStore::cancelAll()
{
    QMutexLocker lock(&m_mutex);
    for (const auto &t : std::as_const(m_tasks)) {
        if (t->token)
            t->token->cancel();
    }
    m_subscriptions.clear();
}

QByteArray McpTaskStore::notificationLocked(const Task &task, const Subscription &s) const
{
    QJsonObject params = fieldsLocked(task, true);
    params.insert(QStringLiteral("_meta"),
                  QJsonObject{{QLatin1String(mcpera::kSubscriptionIdKey), s.subscriptionId}});
    return jsonrpc::serialize(jsonrpc::notification(QStringLiteral("notifications/tasks"), params));
}

QList<std::pair<McpTaskStore::Send, QByteArray>>
McpTaskStore::notificationsLocked(const QString &id) const
{
    QList<std::pair<Send, QByteArray>> out;
    const auto task = m_tasks.value(id);
    if (!task || task->status == Status::Working)
        return out;
    for (const Subscription &s : m_subscriptions) {
        if (s.taskIds.contains(id))
            out.append({s.send, notificationLocked(*task, s)});
    }
    return out;
}

QStringList McpTaskStore::subscribe(const QString &key, const QJsonValue &subscriptionId,
                                    const QStringList &taskIds, Send send)
{
    QStringList taken;
    QMutexLocker lock(&m_mutex);
    purgeLocked();
    for (const QString &id : taskIds) {
        if (m_tasks.contains(id) && !taken.contains(id))
            taken.append(id);
    }
    m_subscriptions.insert(key, Subscription{subscriptionId, taken, std::move(send)});
    return taken;
}

void McpTaskStore::announceFinished(const QString &key)
{
    QList<std::pair<Send, QByteArray>> out;
    {
        QMutexLocker lock(&m_mutex);
        const auto s = m_subscriptions.constFind(key);
        if (s == m_subscriptions.cend())
            return;
        for (const QString &id : s->taskIds) {
            const auto task = m_tasks.value(id);
            if (task && task->status != Status::Working)
                out.append({s->send, notificationLocked(*task, *s)});
        }
    }
    for (const auto &[send, bytes] : out)
        send(bytes);
}

void McpTaskStore::unsubscribe(const QString &key)
{
    QMutexLocker lock(&m_mutex);
    m_subscriptions.remove(key);
}

bool McpTaskStore::hasSubscription(const QString &key) const
{
    QMutexLocker lock(&m_mutex);
    return m_subscriptions.contains(key);
}

} // namespace elsai
