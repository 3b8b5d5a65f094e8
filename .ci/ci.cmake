# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# CMake cache preload (-C) of every CI build: .ci/build, .ci/sanitize, .ci/fuzz, .ci/trixie.
# Line tables only (-g1) rather than full debug info: backtraces and sanitizer reports keep
# function, file and line, while compiling and linking take about a fifth less CPU time.
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O2 -g1 -DNDEBUG" CACHE STRING "")
