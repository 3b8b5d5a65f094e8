# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# Per-call overhead of runProcess() against a bare posix_spawn + waitpid.
# Included from bench/CMakeLists.txt: include(exec.cmake)
add_executable(exec_bench ${CMAKE_CURRENT_LIST_DIR}/exec_bench.cpp)
target_link_libraries(exec_bench PRIVATE elsai_platform)
# execute("true") through the real program (headless script and MCP stdio) against the same
# floor: bench/run.sh passes the elsai-workbench executable.
add_executable(stack_bench ${CMAKE_CURRENT_LIST_DIR}/stack_bench.cpp)
target_link_libraries(stack_bench PRIVATE Qt6::Core)
add_dependencies(stack_bench elsai-workbench)
