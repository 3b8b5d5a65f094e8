// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// The attacker of the rename races (tests/hostile, tst_sshbackend), after the openat2
// selftests: a thread that swaps two paths with renameat2(RENAME_EXCHANGE) as fast as it can
// while the code under test resolves paths through them.

#include <QByteArray>

#include <atomic>
#include <thread>

#include <fcntl.h>
#include <stdio.h>

namespace elsai::test {

class RenameExchanger
{
public:
    /// Starts swapping `a` and `b` (absolute paths) at once.
    RenameExchanger(QByteArray a, QByteArray b)
        : m_a(std::move(a)), m_b(std::move(b)), m_thread([this] { run(); })
    {
    }
    ~RenameExchanger() { stop(); }
    RenameExchanger(const RenameExchanger &) = delete;
    RenameExchanger &operator=(const RenameExchanger &) = delete;

    /// Stops the attacker and waits for it.
    void stop()
    {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
    }
    /// How many swaps succeeded so far.
    qint64 swaps() const { return m_swaps.load(); }

private:
    void run()
    {
        while (!m_stop.load()) {
            if (::renameat2(AT_FDCWD, m_a.constData(), AT_FDCWD, m_b.constData(),
                            RENAME_EXCHANGE) == 0)
                m_swaps.fetch_add(1);
        }
    }

    const QByteArray m_a;
    const QByteArray m_b;
    std::atomic<bool> m_stop{false};
    std::atomic<qint64> m_swaps{0};
    std::thread m_thread; // last: it starts once the members it reads exist
};

} // namespace elsai::test
