// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

#include <QJsonValue>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

namespace elsai {

/// Calls a function every `interval` while a long request runs, on one shared thread: the MCP
/// session sends notifications/progress from it so a client that resets its request timeout
/// on progress keeps waiting for a command that is silent for minutes.
///
/// One thread serves every registration (no thread per call). A callback never runs after
/// its Registration is destroyed, so no progress follows the response.
class ProgressTicker
{
public:
    using Callback = std::function<void()>;

    /// Unregisters on destruction; waits for a callback of this registration that is running.
    class Registration
    {
    public:
        Registration() = default;
        ~Registration();
        Registration(Registration &&other) noexcept;
        Registration &operator=(Registration &&other) noexcept;
        Registration(const Registration &) = delete;
        Registration &operator=(const Registration &) = delete;
        explicit operator bool() const { return m_id != 0; }

    private:
        friend class ProgressTicker;
        explicit Registration(quint64 id) : m_id(id) {}
        quint64 m_id = 0;
    };

    /// The process-wide ticker (its thread starts on first use and ends with the process).
    static ProgressTicker &instance();

    /// Calls `callback` every `interval` (the first time one interval from now) until the
    /// registration is destroyed.
    [[nodiscard]] Registration start(std::chrono::milliseconds interval, Callback callback);

    ProgressTicker(const ProgressTicker &) = delete;
    ProgressTicker &operator=(const ProgressTicker &) = delete;

private:
    ProgressTicker();
    ~ProgressTicker();
    void stop(quint64 id);
    void run();
    struct State;
    std::unique_ptr<State> d;
};

/// What the progress notifications of one running execute report: the bytes of output so far
/// (the command's stdout and stderr, counted as they arrive).
struct ExecuteProgress
{
    std::atomic<qint64> outputBytes{0};
};

} // namespace elsai
