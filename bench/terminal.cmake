# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# The terminal under a 50 MB flood vs xterm, its event-loop stalls, and keypress-to-echo.
# Included from bench/CMakeLists.txt; driven by bench/run.sh (under xvfb-run).
find_package(Qt6 6.4 REQUIRED COMPONENTS Test Widgets)
add_executable(terminal_bench ${CMAKE_CURRENT_LIST_DIR}/terminal_bench.cpp)
target_link_libraries(terminal_bench PRIVATE elsai_ui Qt6::Test)
target_compile_features(terminal_bench PRIVATE cxx_std_20)
