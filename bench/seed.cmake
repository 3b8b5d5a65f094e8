# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# Seeding benchmark program, driven by bench/seed_bench.sh (include()d from bench/CMakeLists.txt).
add_executable(seed_bench ${CMAKE_CURRENT_LIST_DIR}/seed_bench.cpp)
target_link_libraries(seed_bench PRIVATE elsai_platform)
target_compile_features(seed_bench PRIVATE cxx_std_20)
