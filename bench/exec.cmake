# Per-call overhead of runProcess() against a bare posix_spawn + waitpid.
# Included from bench/CMakeLists.txt: include(exec.cmake)
add_executable(exec_bench ${CMAKE_CURRENT_LIST_DIR}/exec_bench.cpp)
target_link_libraries(exec_bench PRIVATE elsai_platform)
