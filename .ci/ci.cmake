# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# CMake cache preload (-C) of every CI build: .ci/build, .ci/sanitize, .ci/fuzz, .ci/trixie.
# Line tables only (-g1) rather than full debug info: backtraces and sanitizer reports keep
# function, file and line, while compiling and linking take about a fifth less CPU time.
set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O2 -g1 -DNDEBUG" CACHE STRING "")
# The libraries as unity builds (CMakeLists.txt, CONTRIBUTING.md): about 45 % less CPU for them.
set(ELSAI_UNITY_BUILD ON CACHE BOOL "")

# ccache where it is installed. It caches the files that use a precompiled header (ELSAI_PCH)
# only with this sloppiness (ccache's manual, "Precompiled headers").
find_program(ELSAI_CCACHE ccache)
if(ELSAI_CCACHE)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
        ${ELSAI_CCACHE} CACHE STRING "")
endif()
