#pragma once

// Crash-safety tests only (tests/tst_crash.cpp). ELSAI_FAULT_POINT marks a file-system
// mutation that has just happened: a write, fsync, rename, unlink or mkdir. In the *_faulty
// library variants that tests/CMakeLists.txt builds with ELSAI_FAULT_INJECTION, the k-th point
// after fault::arm(k) ends the process with _exit(fault::CrashExitCode), as a power cut or a
// kill would at that moment. Everywhere else — the shipped libraries and binary — it expands to
// nothing and costs nothing.

#ifdef ELSAI_FAULT_INJECTION

namespace elsai::fault {

inline constexpr int CrashExitCode = 86;

/// Crash at the k-th point from now (k >= 1); 0 disarms. Counting restarts at every arm().
void arm(int k);
/// Points passed since the last arm().
int pointsPassed();
void point(const char *what);

} // namespace elsai::fault

#define ELSAI_FAULT_POINT(what) ::elsai::fault::point(what)

#else

#define ELSAI_FAULT_POINT(what) static_cast<void>(0)

#endif
