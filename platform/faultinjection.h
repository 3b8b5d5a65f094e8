// SPDX-FileCopyrightText: 2026 The elsai workbench authors
// SPDX-License-Identifier: MIT

#pragma once

// Crash-safety tests only (tests/tst_crash.cpp). ELSAI_FAULT_POINT marks a file-system mutation
// that has just happened: a write, fsync, rename, unlink or mkdir. In the copies of these files
// that tests/CMakeLists.txt builds with ELSAI_FAULT_INJECTION for the crash-safety tests
// (elsai_fault_points), the k-th point after fault::arm(k) ends the process with
// _exit(fault::CrashExitCode), as a power cut or a kill would at that moment. Everywhere else —
// the shipped libraries and binary — it expands to nothing and costs nothing.
//
// ELSAI_FAULT_WRITE(what, fd, buf, len) is ::write(), except in those copies, where
// fault::failWrites() makes the next writes at that point fail (a full disk, an I/O error), the
// first optionally as a short write (tests/tst_auditfaults.cpp).

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>

#ifdef ELSAI_FAULT_INJECTION

namespace elsai::fault {

inline constexpr int CrashExitCode = 86;

/// Crash at the k-th point from now (k >= 1); 0 disarms. Counting restarts at every arm().
void arm(int k);
/// Points passed since the last arm().
int pointsPassed();
void point(const char *what);

/// The next `count` writes at point `what` fail with errno `err`; with `shortBytes` > 0 the
/// first of them writes that many bytes for real and returns that count (a short write).
/// count 0 disarms.
void failWrites(const char *what, int err, int count, std::size_t shortBytes = 0);
ssize_t write(const char *what, int fd, const void *buf, std::size_t len);

} // namespace elsai::fault

#define ELSAI_FAULT_POINT(what) ::elsai::fault::point(what)
#define ELSAI_FAULT_WRITE(what, fd, buf, len) ::elsai::fault::write(what, fd, buf, len)

#else

#define ELSAI_FAULT_POINT(what) static_cast<void>(0)
#define ELSAI_FAULT_WRITE(what, fd, buf, len) ::write(fd, buf, len)

#endif
