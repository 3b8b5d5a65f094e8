# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# Checkpoints and change tracking against cp -a, rsync -a --delete and diff -r
# (bench/checkpoint_bench.cpp). Included from bench/CMakeLists.txt.
add_executable(checkpoint_bench ${CMAKE_CURRENT_LIST_DIR}/checkpoint_bench.cpp)
target_link_libraries(checkpoint_bench PRIVATE elsai_core elsai_backend_local)
target_include_directories(checkpoint_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR})
