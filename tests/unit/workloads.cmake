# Registered by tests/unit/CMakeLists.txt with include(${CMAKE_CURRENT_LIST_DIR}/workloads.cmake).
workpart_add_test(NAME workloads
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_workloads.cpp
          ${CMAKE_CURRENT_LIST_DIR}/test_workloads_reductions.cpp
  LABELS unit NOT_SANITIZED)
