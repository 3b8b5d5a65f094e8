// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QJsonValue>
#include <QMutex>
#include <QString>
#include <QStringList>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace elsai {

class CancellationToken;

/// The tasks of one agent (the MCP Tasks extension, `io.modelcontextprotocol/tasks`, of
/// revision 2026-07-28): a tools/call still running when its first interval is over is
/// answered with a task handle, and its result is kept here for `tasks/get`.
///
/// Task ids are 128 random bits: they are the only handle on a task, so they cannot be
/// guessed, and each agent has its own store (no agent can read another's task). A finished
/// task is kept for an hour (`ttlMs` counts from creation, so it grows while the task works),
/// at most 256 finished tasks per agent (the oldest go first). Thread-safe.
///
/// Status notifications (`notifications/tasks`) go to the `subscriptions/listen` streams that
/// asked for the task, when it reaches a terminal status.
class McpTaskStore
{
public:
    enum class Status { Working, Completed, Failed, Cancelled };

    /// `pollInterval` is the `pollIntervalMs` suggested to clients.
    explicit McpTaskStore(std::chrono::milliseconds pollInterval);
    ~McpTaskStore();
    McpTaskStore(const McpTaskStore &) = delete;
    McpTaskStore &operator=(const McpTaskStore &) = delete;

    void setPollInterval(std::chrono::milliseconds interval);
    /// How long a finished task is kept (default one hour).
    void setRetention(std::chrono::milliseconds retention);

    /// A new working task whose tasks/cancel cancels `token`; returns its id.
    QString create(std::shared_ptr<CancellationToken> token, const QString &statusMessage);
    void setStatusMessage(const QString &id, const QString &message);
    /// Terminal transitions (once; later calls are ignored). `result` is what the request
    /// would have returned (a CallToolResult, `isError` results included); `error` a
    /// JSON-RPC error object {code, message}.
    void complete(const QString &id, const QJsonObject &result);
    void fail(const QString &id, const QJsonObject &error);
    void markCancelled(const QString &id, const QString &statusMessage);

    /// The task's Task fields (taskId, status, statusMessage, createdAt, lastUpdatedAt,
    /// ttlMs, pollIntervalMs) and, when terminal, `result` or `error`; none for an unknown
    /// or expired id.
    std::optional<QJsonObject> detailed(const QString &id) const;
    /// The Task fields without result/error (a CreateTaskResult's body).
    std::optional<QJsonObject> summary(const QString &id) const;
    /// Asks a task to stop (its token is cancelled; it ends as `cancelled` unless it
    /// finished first). False for an unknown id.
    bool cancel(const QString &id);
    bool contains(const QString &id) const;
    int size() const;
    /// Cancels every working task (the agent detaches).
    void cancelAll();

    /// A subscriptions/listen stream's interest: `send` gets a serialized notifications/tasks
    /// (carrying `subscriptionId` in `_meta`) for each of `taskIds` that reaches a terminal
    /// status. Returns the ids taken (the known ones).
    using Send = std::function<void(const QByteArray &notification)>;
    QStringList subscribe(const QString &key, const QJsonValue &subscriptionId,
                          const QStringList &taskIds, Send send);
    /// Sends the notifications of a subscription's tasks that are already terminal (after
    /// the acknowledgement, which must come first on the stream).
    void announceFinished(const QString &key);
    void unsubscribe(const QString &key);
    bool hasSubscription(const QString &key) const;

private:
    struct Task;
    struct Subscription
    {
        QJsonValue subscriptionId;
        QStringList taskIds;
        Send send;
    };
    void finish(const QString &id, Status status, const QJsonObject &payload,
                const QString &statusMessage);
    QJsonObject fieldsLocked(const Task &task, bool withPayload) const;
    void purgeLocked() const;
    QByteArray notificationLocked(const Task &task, const Subscription &s) const;
    /// The notifications to send for `id` (called under the lock, sent after it).
    QList<std::pair<Send, QByteArray>> notificationsLocked(const QString &id) const;

    mutable QMutex m_mutex;
    mutable QHash<QString, std::shared_ptr<Task>> m_tasks;
    QHash<QString, Subscription> m_subscriptions;
    std::chrono::milliseconds m_pollInterval;
    std::chrono::milliseconds m_retention = std::chrono::hours(1);
};

} // namespace elsai
