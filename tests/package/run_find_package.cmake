# cmake -P script behind the CTest test package.find_package:
#   (a) cmake --install <WORKPART_BINARY_DIR> --prefix <PREFIX>
#   (b) configure SOURCE_DIR (an outside project) in a fresh BINARY_DIR with
#       -DCMAKE_PREFIX_PATH=<PREFIX>, and check it found workpart under PREFIX
#   (c) build it
#   (d) run it (under mpiexec with 2 ranks when MPIEXEC is given) and check its output
# Any failing step ends the script with FATAL_ERROR.
cmake_minimum_required(VERSION 3.21)

foreach(var WORKPART_BINARY_DIR PREFIX SOURCE_DIR BINARY_DIR GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_find_package.cmake: -D${var}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" MPIEXEC_PREFLAGS "${MPIEXEC_PREFLAGS}")
string(REPLACE "|" ";" EXTRA_PREFIX_PATH "${EXTRA_PREFIX_PATH}")

function(step what)
  message(STATUS "package.find_package: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc COMMAND_ECHO STDOUT)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package.find_package: ${what} failed (${rc})")
  endif()
endfunction()

set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()

file(REMOVE_RECURSE "${PREFIX}" "${BINARY_DIR}")

# (a) install
step("install into ${PREFIX}"
  ${CMAKE_COMMAND} --install "${WORKPART_BINARY_DIR}" --prefix "${PREFIX}" ${config_args})
if(NOT EXISTS "${PREFIX}/include/workpart/workpart.hpp")
  message(FATAL_ERROR "package.find_package: ${PREFIX}/include/workpart/workpart.hpp was not installed")
endif()

# (b) configure the consumer
set(prefix_path "${PREFIX}" ${EXTRA_PREFIX_PATH})
set(configure_args -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
  "-DCMAKE_PREFIX_PATH=${prefix_path}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(CONFIG)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
  if(CONFIG_FLAGS)
    string(TOUPPER "${CONFIG}" config_upper)
    list(APPEND configure_args "-DCMAKE_CXX_FLAGS_${config_upper}=${CONFIG_FLAGS}")
  endif()
endif()
step("configure consumer" ${CMAKE_COMMAND} ${configure_args})

file(STRINGS "${BINARY_DIR}/CMakeCache.txt" found_dir REGEX "^workpart_DIR:")
string(REGEX REPLACE "^workpart_DIR:[A-Z]+=" "" found_dir "${found_dir}")
file(REAL_PATH "${PREFIX}" real_prefix)
if(EXISTS "${found_dir}")
  file(REAL_PATH "${found_dir}" found_dir)
endif()
string(FIND "${found_dir}" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "package.find_package: the consumer found workpart in '${found_dir}', "
                      "not under the install prefix '${real_prefix}'")
endif()

# (c) build
step("build consumer" ${CMAKE_COMMAND} --build "${BINARY_DIR}" ${config_args})

# (d) run: the plain consumer, the same with the precompiled header (workpart::pch) and against
# the compiled planner (workpart::compiled), with OpenMP (workpart::openmp), the layers
# compiled once (workpart::nn_compiled, where the package has them), and the
# one built against workpart::device_omp where the installed package has it (the device path
# on the CPU)
foreach(name app app_pch app_compiled app_openmp app_nn app_device)
  set(app "${BINARY_DIR}/${name}")
  if(CONFIG AND EXISTS "${BINARY_DIR}/${CONFIG}/${name}")
    set(app "${BINARY_DIR}/${CONFIG}/${name}")
  endif()
  if(NOT EXISTS "${app}")
    if(NOT name MATCHES "^app_(device|nn|openmp)$")
      message(FATAL_ERROR "package.find_package: the consumer '${app}' was not built")
    endif()
    message(STATUS "package.find_package: no ${name} (the package has no workpart::device_omp, workpart::nn_compiled or workpart::openmp)")
    continue()
  endif()
  if(MPIEXEC)
    set(ranks 2)
    set(run ${MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MPIEXEC_PREFLAGS} "${app}")
  else()
    set(ranks 1)
    set(run "${app}")
  endif()
  message(STATUS "package.find_package: run ${name}")
  execute_process(COMMAND ${run} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out
    COMMAND_ECHO STDOUT)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package.find_package: ${name} exited with ${rc}")
  endif()
  if(NOT out MATCHES "workpart package ok, ranks=${ranks}")
    message(FATAL_ERROR "package.find_package: expected 'workpart package ok, ranks=${ranks}' in ${name}'s output")
  endif()
endforeach()
message(STATUS "package.find_package: ok")
