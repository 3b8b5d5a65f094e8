# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# execute("true") over SshSandboxBackend against a bare ssh on the same ControlMaster.
# Included from bench/CMakeLists.txt: include(ssh.cmake)
add_executable(ssh_bench ${CMAKE_CURRENT_LIST_DIR}/ssh_bench.cpp)
target_include_directories(ssh_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(ssh_bench PRIVATE elsai_backend_ssh)

# Checkpoints over SSH against rsync over the same ControlMaster (remote_checkpoint_bench.cpp).
add_executable(remote_checkpoint_bench ${CMAKE_CURRENT_LIST_DIR}/remote_checkpoint_bench.cpp)
target_include_directories(remote_checkpoint_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(remote_checkpoint_bench PRIVATE elsai_core elsai_backend_ssh)
