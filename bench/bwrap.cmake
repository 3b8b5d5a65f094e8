# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# Per-call overhead of the bwrap backend's execute() against a bare bwrap with the same
# arguments. Included from bench/CMakeLists.txt.
add_executable(bwrap_bench ${CMAKE_CURRENT_LIST_DIR}/bwrap_bench.cpp)
target_link_libraries(bwrap_bench PRIVATE elsai_backend_bwrap)
