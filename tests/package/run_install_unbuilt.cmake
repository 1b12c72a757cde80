# cmake -P script behind the CTest test package.install_unbuilt: a fresh configure of the
# source tree (tools and the compiled planner on), then `cmake --install` with nothing built,
# then an outside project's find_package against that prefix. A header-only library installs
# its headers and package files from configure + install alone.
cmake_minimum_required(VERSION 3.21)
foreach(var SOURCE_DIR WORK_DIR CONSUMER_DIR GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_install_unbuilt.cmake: -D${var}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" EXTRA_PREFIX_PATH "${EXTRA_PREFIX_PATH}")

function(step what)
  message(STATUS "package.install_unbuilt: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message("${out}")
    message(FATAL_ERROR "package.install_unbuilt: ${what} failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(extra)
if(MAKE_PROGRAM)
  list(APPEND extra "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
step("configure workpart" ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build"
  -G "${GENERATOR}" ${extra} -DWORKPART_INSTALL=ON -DWORKPART_BUILD_TOOLS=ON
  -DWORKPART_BUILD_COMPILED=ON -DWORKPART_BUILD_TESTS=OFF -DWORKPART_BUILD_EXAMPLES=OFF
  -DWORKPART_BUILD_BENCHMARKS=OFF -DWORKPART_ENABLE_CUDA=OFF)
step("install, nothing built" ${CMAKE_COMMAND} --install "${WORK_DIR}/build"
  --prefix "${WORK_DIR}/prefix")
foreach(f include/workpart/workpart.hpp share/cmake/workpart/workpartConfig.cmake)
  if(NOT EXISTS "${WORK_DIR}/prefix/${f}")
    message(FATAL_ERROR "package.install_unbuilt: ${f} was not installed")
  endif()
endforeach()
if(EXISTS "${WORK_DIR}/prefix/bin/workpart-optimize")
  message(FATAL_ERROR "package.install_unbuilt: a workpart-optimize appeared without a build")
endif()
set(prefix_path "${WORK_DIR}/prefix" ${EXTRA_PREFIX_PATH})
step("find_package from an outside project" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}"
  -B "${WORK_DIR}/consumer" -G "${GENERATOR}" ${extra} "-DCMAKE_PREFIX_PATH=${prefix_path}"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
message(STATUS "package.install_unbuilt: ok")
