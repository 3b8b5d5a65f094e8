# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# grep and glob against ripgrep and fd (bench/search_bench.cpp). Included from
# bench/CMakeLists.txt.
add_executable(search_bench ${CMAKE_CURRENT_LIST_DIR}/search_bench.cpp)
target_link_libraries(search_bench PRIVATE elsai_core elsai_backend_local)
target_include_directories(search_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR})
