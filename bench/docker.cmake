# SPDX-FileCopyrightText: 2026 The elsai workbench authors
# SPDX-License-Identifier: MIT
# execute("true") and seeding through DockerSandboxBackend against the raw Engine API (curl),
# the docker CLI and docker cp. Included from bench/CMakeLists.txt: include(docker.cmake)
add_executable(docker_bench ${CMAKE_CURRENT_LIST_DIR}/docker_bench.cpp)
target_include_directories(docker_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(docker_bench PRIVATE elsai_backend_docker)
