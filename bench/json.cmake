# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# Linearity of the agent JSON path (MCP parse + tool argument check): time(2N) / time(N).
# Included from bench/CMakeLists.txt: include(json.cmake)
add_executable(json_bench ${CMAKE_CURRENT_LIST_DIR}/json_bench.cpp)
target_link_libraries(json_bench PRIVATE elsai_mcp elsai_core)
