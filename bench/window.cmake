# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# Window responsiveness (event-loop stalls under a 50 MB console flood and a 20,000-file seed)
# and the audit model's append rate and memory against a QStandardItemModel.
# Included from bench/CMakeLists.txt; driven by bench/run.sh.
find_package(Qt6 6.4 REQUIRED COMPONENTS Gui Widgets)

add_executable(window_bench ${CMAKE_CURRENT_LIST_DIR}/window_bench.cpp)
target_link_libraries(window_bench PRIVATE elsai_ui)
target_compile_features(window_bench PRIVATE cxx_std_20)

add_executable(audit_bench ${CMAKE_CURRENT_LIST_DIR}/audit_bench.cpp)
target_link_libraries(audit_bench PRIVATE elsai_model Qt6::Gui)
target_compile_features(audit_bench PRIVATE cxx_std_20)
