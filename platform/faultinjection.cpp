// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#include "faultinjection.h"

#ifdef ELSAI_FAULT_INJECTION

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include <unistd.h>

namespace elsai::fault {

namespace {
std::atomic<int> s_crashAt{0};
std::atomic<int> s_passed{0};
} // namespace

void arm(int k)
{
    s_passed.store(0);
    s_crashAt.store(k);
}

int pointsPassed()
{
    return s_passed.load();
}

void point(const char *what)
{
    const int n = s_passed.fetch_add(1) + 1;
    const int k = s_crashAt.load();
    if (k > 0 && n == k) {
        // Name the point for the test log, then die without running any destructor or
        // flushing any buffer: whatever is on disk now is what a crash leaves.
        const char prefix[] = "fault: crash at ";
        [[maybe_unused]] ssize_t r = ::write(2, prefix, sizeof prefix - 1);
        r = ::write(2, what, std::strlen(what));
        r = ::write(2, "\n", 1);
        ::_exit(CrashExitCode);
    }
}

namespace {
std::mutex s_writeMutex;
std::string s_writePoint;
int s_writeErr = 0;
int s_writeCount = 0;
std::size_t s_shortBytes = 0;
} // namespace

void failWrites(const char *what, int err, int count, std::size_t shortBytes)
{
    std::lock_guard lock(s_writeMutex);
    s_writePoint = what ? what : "";
    s_writeErr = err;
    s_writeCount = count;
    s_shortBytes = shortBytes;
}

ssize_t write(const char *what, int fd, const void *buf, std::size_t len)
{
    {
        std::lock_guard lock(s_writeMutex);
        if (s_writeCount > 0 && s_writePoint == what) {
            --s_writeCount;
            const std::size_t partial = std::exchange(s_shortBytes, 0);
            if (partial > 0 && partial < len)
                return ::write(fd, buf, partial);
            errno = s_writeErr;
            return -1;
        }
    }
    return ::write(fd, buf, len);
}

} // namespace elsai::fault

#endif
