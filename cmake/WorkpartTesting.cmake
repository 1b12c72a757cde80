# Helpers that register workpart's tests and examples with CTest.
#
#   workpart_add_test(NAME <name> SOURCES <src>... [LABELS <l>...] [TIMEOUT <s>]
#                     [LIBRARIES <lib>...] [ARGS <arg>...] [NO_PCH] [NOT_SANITIZED]
#                     [OPTIMIZED])
#       executable test_<name> (Catch2 v2, main from workpart_catch_main; never initialises
#       MPI), CTest test unit.<name>, labels unit + LABELS, timeout 120 by default.
#
#   workpart_add_mpi_test(NAME <name> SOURCES <src>... NPROCS <p>... [LABELS <l>...]
#                         [TIMEOUT <s>] [LIBRARIES <lib>...] [ARGS <arg>...] [NO_PCH]
#                         [NOT_SANITIZED] [OPTIMIZED])
#       one executable test_mpi_<name> (main from workpart_mpi_main: MPI init,
#       Catch::Session, failures summed over ranks), one CTest test per P:
#       mpi.<name>.np<P> = mpiexec -n P <preflags> exe <postflags> <args>,
#       labels mpi + LABELS, PROCESSORS P, timeout 120 by default.
#
#   workpart_add_mpi_test_run(NAME <name> OF <mpi test name> NPROCS <p>... ARGS <arg>...
#                             [TIMEOUT <s>] [LABELS <l>...])
#       more CTest tests mpi.<name>.np<P> of the executable workpart_add_mpi_test(NAME <of>)
#       made, with their own arguments (a Catch test spec: some of its cases at some rank
#       counts, under a timeout of their own); nothing where that test was not built here.
#
#   workpart_add_compile_fail_test(NAME <name> SOURCE <file.cpp> REGEX <regex>
#                                  [LITERAL] [TIMEOUT <s>] [LIBRARIES <lib>...])
#       OBJECT library compile_fail_<name> (SOURCE built with WORKPART_COMPILE_FAIL=1),
#       excluded from every build; CTest test compile_fail.<name> builds it and passes only
#       when the build output matches REGEX (LITERAL: REGEX is plain text, regex characters
#       are escaped).
#       Label compile_fail, timeout 300 by default.
#
#   workpart_add_example(NAME <name> SOURCE <file.cpp> [NPROCS <p>...] [ARGS <arg>...]
#                        [TIMEOUT <s>] [LABELS <l>...] [LIBRARIES <lib>...])
#       executable <name>, CTest tests example.<name>.np<P> run under mpiexec,
#       labels example + LABELS, timeout 120 by default; NPROCS defaults to 1.
#
#   Every helper's target reads <workpart/workpart.hpp> (and Catch2 for tests) from one
#   precompiled header per kind of target (WORKPART_TEST_PCH): parsing the library once instead
#   of once per file. A target given LIBRARIES (which may add definitions the header tests) or
#   NO_PCH compiles without it. Targets link workpart::compiled (the planner compiled once)
#   where the project builds it; a target given LIBRARIES links header-only workpart::workpart.
#
#   NOT_SANITIZED: the test is left out of the sanitizer build (WORKPART_SANITIZE) unless
#   WORKPART_SANITIZE_ALL is ON. For tests whose subject is what the types derive (gradients,
#   layers, expression forms) checked against loops: their run-time paths (the loop executor,
#   the plans, the collectives) are the ones the sanitized tests run, and their translation
#   units are the costliest to build under the sanitizers (2 to 8 minutes each), which the CI
#   budget cannot hold. Also for tests that cannot run under them (a memory limit set with
#   RLIMIT_AS, which cannot bound AddressSanitizer's shadow memory).
#
#   OPTIMIZED: the test's own run time needs an optimised build (convolutions of whole
#   networks run as loops): it compiles with WORKPART_TEST_OPTIMIZED_FLAGS added, where that is
#   set, and without the shared PCH (whose flags would differ). scripts/test.sh builds the
#   other tests at -O0 -- they check results on small shapes and run in a second or two either
#   way, and -O0 compiles them a quarter faster -- and these at -O1.
#
#   WORKPART_TEST_SANITIZED_ELSEWHERE (a build without WORKPART_SANITIZE): the tests the
#   sanitizer build runs -- every test not marked NOT_SANITIZED -- are neither built nor
#   registered here. scripts/test.sh runs them in its sanitizer build (build-asan/), so that
#   the whole suite compiles each test once; WORKPART_BUILDS_SANITIZED_TESTS says whether
#   this build has them (for the registrations that follow a helper's).
#
# Cache variables:
#   WORKPART_TEST_PCH             ON: tests and examples share precompiled headers
#   WORKPART_TEST_OPTIMIZED_FLAGS compile options added to the OPTIMIZED tests, e.g. -O1
#   WORKPART_MPIEXEC_EXTRA_FLAGS  extra mpiexec flags after MPIEXEC_PREFLAGS,
#                                 space separated, e.g. "--mca btl tcp,self".
include_guard(GLOBAL)

set(WORKPART_MPIEXEC_EXTRA_FLAGS "" CACHE STRING
  "Extra mpiexec flags for MPI tests and examples, space separated (e.g. --mca btl tcp,self)")

option(WORKPART_TEST_SANITIZED_ELSEWHERE
  "Leave the tests the sanitizer build runs to it (scripts/test.sh: each test compiled once)" OFF)
if(WORKPART_TEST_SANITIZED_ELSEWHERE AND NOT WORKPART_SANITIZE)
  set(WORKPART_BUILDS_SANITIZED_TESTS FALSE)
else()
  set(WORKPART_BUILDS_SANITIZED_TESTS TRUE)
endif()

if(NOT TARGET MPI::MPI_CXX)
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()

# Sanitized runs. Open MPI leaks at MPI_Init/MPI_Finalize by design, from plugins
# it dlclose()s before LeakSanitizer reports; their leaks can be suppressed only
# when allocations record full stacks (fast_unwind_on_malloc=0: exact, slower
# malloc). WORKPART_SANITIZE_LEAKS=OFF turns leak checking off instead.
if(WORKPART_SANITIZE)
  option(WORKPART_SANITIZE_ALL "Build the NOT_SANITIZED tests in the sanitizer build too" OFF)
  option(WORKPART_SANITIZE_LEAKS "LeakSanitizer in sanitized test runs (MPI stack suppressed)" ON)
  set(_WORKPART_LSAN_SUPP ${workpart_BINARY_DIR}/workpart_lsan.supp)
  file(WRITE ${_WORKPART_LSAN_SUPP}
"# generated by cmake/WorkpartTesting.cmake: leaks inside the MPI stack
leak:libmpi.so
leak:libmpi_cxx.so
leak:libopen-pal.so
leak:libopen-rte.so
leak:libpmix.so
leak:libhwloc.so
leak:libevent
leak:libucp.so
leak:libucs.so
leak:libuct.so
leak:libfabric.so
leak:libboost_mpi
leak:mca_
")
endif()

# Precompiled headers for the project's own targets. GCC and Clang refuse a PCH built with other
# flags or macros (-Winvalid-pch, an error under -Werror), so each kind of target that shares
# flags gets its own owner: an object library with one empty source whose PCH the others reuse
# (REUSE_FROM). Measured here (g++ 12, -O1): one file rebuilt alone (the edit loop) takes
# 3.1 s user instead of 7.0 (a compile-fail twin), 19.5 s instead of 30.9 (example 07); in a
# -j2 build the kernel time of mapping the 300 MB PCH into two compilers at once eats most of
# that (23 files: 175 s user + 65 s sys against 218 + 31, 4% less wall). Each PCH costs
# about 20 s once. Benchmarks (-O3) build without: GCC 12 reports false -Wstringop-overflow
# warnings in std::string code there with a PCH.
option(WORKPART_TEST_PCH "Tests and examples share a precompiled workpart.hpp" ON)
set(WORKPART_TEST_OPTIMIZED_FLAGS "" CACHE STRING
  "Compile options added to the tests marked OPTIMIZED, space separated (e.g. -O1)")

# _workpart_optimize(<target> <OPTIMIZED flag> <out: use the PCH>): an OPTIMIZED test gets
# WORKPART_TEST_OPTIMIZED_FLAGS and, with them, its own flags: no shared PCH.
function(_workpart_optimize target optimized out)
  set(${out} TRUE PARENT_SCOPE)
  if(optimized AND NOT WORKPART_TEST_OPTIMIZED_FLAGS STREQUAL "")
    separate_arguments(flags UNIX_COMMAND "${WORKPART_TEST_OPTIMIZED_FLAGS}")
    target_compile_options(${target} PRIVATE ${flags})
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# The library the helpers' targets link: workpart::compiled where the project builds it (the
# planner compiled once for all of them), else workpart::workpart. A target given LIBRARIES (the
# device backend) links workpart::workpart: the compiled library is for the host backend.
# Every test, example and benchmark links workpart::openmp where OpenMP is found: the loop
# executor's threads are part of what they check (tests/omp_threads.hpp) and time.
if(TARGET workpart::openmp)
  set(_WORKPART_OPENMP workpart::openmp)
else()
  set(_WORKPART_OPENMP "")
endif()
if(TARGET workpart::compiled)
  set(_WORKPART_TEST_LIB workpart::compiled ${_WORKPART_OPENMP})
else()
  set(_WORKPART_TEST_LIB workpart::workpart ${_WORKPART_OPENMP})
endif()
function(_workpart_library out libraries)
  if(libraries)
    set(${out} workpart::workpart ${_WORKPART_OPENMP} PARENT_SCOPE)
  else()
    set(${out} ${_WORKPART_TEST_LIB} PARENT_SCOPE)
  endif()
endfunction()
# Tests link workpart::nn_compiled where it is built: a test of layers or whole networks then
# does not compile the layers again (their float and double instances are in that library).
# Examples link workpart::compiled (none uses the layers; scripts/demo.sh builds no nn_compiled).
function(_workpart_test_library out libraries)
  if(NOT libraries AND TARGET workpart::nn_compiled)
    set(${out} workpart::nn_compiled ${_WORKPART_OPENMP} PARENT_SCOPE)
  else()
    _workpart_library(lib "${libraries}")
    set(${out} ${lib} PARENT_SCOPE)
  endif()
endfunction()
if(CMAKE_VERSION VERSION_LESS 3.16 OR NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set(WORKPART_TEST_PCH OFF)
endif()

# workpart_use_pch(<target> <kind>): <target> reuses the PCH of <kind> (catch: workpart.hpp +
# Catch2; plain: workpart.hpp), made on first use with the link set the helpers give their
# targets.
function(workpart_use_pch target kind)
  if(NOT WORKPART_TEST_PCH)
    return()
  endif()
  # GCC 12/13 with a PCH at -O2/-O3 (e.g. the demo's Release build of the examples) reports false
  # -Wstringop-overflow and -Warray-bounds in std::string code, errors under -Werror: there the
  # targets compile without it, as they did before it (the test build is -O1).
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 14
     AND "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${config}}" MATCHES "-O[23s]|-Ofast")
    return()
  endif()
  set(owner workpart_pch_${kind})
  if(NOT TARGET ${owner})
    set(src ${workpart_BINARY_DIR}/workpart_pch/${kind}.cpp)
    if(NOT EXISTS ${src})
      file(WRITE ${src} "// generated by cmake/WorkpartTesting.cmake: the owner of a precompiled header\n")
    endif()
    add_library(${owner} OBJECT ${src})
    target_link_libraries(${owner} PRIVATE ${_WORKPART_TEST_LIB} workpart_warnings workpart_sanitize)
    set(headers <workpart/workpart.hpp>)
    if(kind STREQUAL "catch")
      _workpart_require_catch2()
      target_link_libraries(${owner} PRIVATE workpart_catch2)
      set(headers <catch2/catch.hpp> <workpart/workpart.hpp>)
    endif()
    target_precompile_headers(${owner} PRIVATE ${headers})
  endif()
  target_precompile_headers(${target} REUSE_FROM ${owner})
endfunction()

# Environment for every test the helpers register. _workpart_test_environment(<out> NO_MPI): for a
# process that never initialises MPI (the unit tests), whose leaks need no MPI suppression and
# so no full malloc stacks: fast unwinding keeps LeakSanitizer on at a fraction of the cost
# (unit.optimize_model under ASan + UBSan, Debug: 522 s with full stacks, 93 s without). A unit
# test must therefore not initialise MPI: a test that does is an MPI test (workpart_add_mpi_test).
# mpi_yield_when_idle: a rank waiting for a message yields its core (Open MPI does so by itself
# only where mpiexec sees more ranks than slots): CTest runs tests side by side, and a 2-rank
# test's spinning ranks took the cores from the compile-bound tests beside them.
function(_workpart_test_environment out)
  set(env
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1
    OMPI_MCA_mpi_yield_when_idle=1
    OPENBLAS_NUM_THREADS=1)
  if(WORKPART_SANITIZE)
    if(WORKPART_SANITIZE_LEAKS AND "${ARGV1}" STREQUAL "NO_MPI")
      set(asan "detect_leaks=1")
    elseif(WORKPART_SANITIZE_LEAKS)
      set(asan "detect_leaks=1:fast_unwind_on_malloc=0")
    else()
      set(asan "detect_leaks=0")
    endif()
    list(APPEND env
      "ASAN_OPTIONS=${asan}:detect_stack_use_after_return=1:strict_init_order=1:allocator_may_return_null=1"
      "LSAN_OPTIONS=suppressions=${_WORKPART_LSAN_SUPP}:print_suppressions=0"
      "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  endif()
  set(${out} "${env}" PARENT_SCOPE)
endfunction()

# mpiexec flags placed before the executable: MPIEXEC_PREFLAGS, then (Open MPI)
# --allow-run-as-root --oversubscribe, then WORKPART_MPIEXEC_EXTRA_FLAGS.
function(_workpart_mpiexec_preflags out)
  if(NOT DEFINED WORKPART_MPIEXEC_IS_OPEN_MPI)
    set(is_ompi OFF)
    if(MPIEXEC_EXECUTABLE)
      execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version
        OUTPUT_VARIABLE version ERROR_VARIABLE version
        RESULT_VARIABLE rc TIMEOUT 30)
      if(version MATCHES "Open MPI|OpenRTE")
        set(is_ompi ON)
      endif()
    endif()
    set(WORKPART_MPIEXEC_IS_OPEN_MPI ${is_ompi} CACHE INTERNAL "mpiexec is Open MPI's")
  endif()
  set(flags ${MPIEXEC_PREFLAGS})
  if(WORKPART_MPIEXEC_IS_OPEN_MPI)
    foreach(f --allow-run-as-root --oversubscribe)
      if(NOT f IN_LIST flags)
        list(APPEND flags ${f})
      endif()
    endforeach()
  endif()
  separate_arguments(extra UNIX_COMMAND "${WORKPART_MPIEXEC_EXTRA_FLAGS}")
  list(APPEND flags ${extra})
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# Catch2 v2 single header (Debian: /usr/include/catch2/catch.hpp).
function(_workpart_require_catch2)
  if(TARGET workpart_catch2)
    return()
  endif()
  find_path(WORKPART_CATCH2_INCLUDE_DIR catch2/catch.hpp
    DOC "Directory holding catch2/catch.hpp (Catch2 v2)")
  if(NOT WORKPART_CATCH2_INCLUDE_DIR)
    message(FATAL_ERROR
      "workpart tests need Catch2 v2 (<catch2/catch.hpp>): run scripts/setup.sh "
      "(apt-get install catch2) or set WORKPART_CATCH2_INCLUDE_DIR")
  endif()
  add_library(workpart_catch2 INTERFACE)
  target_include_directories(workpart_catch2 SYSTEM INTERFACE ${WORKPART_CATCH2_INCLUDE_DIR})
  target_compile_features(workpart_catch2 INTERFACE cxx_std_20)
endfunction()

# main() for unit tests, compiled once.
function(_workpart_require_catch_main)
  if(TARGET workpart_catch_main)
    return()
  endif()
  _workpart_require_catch2()
  add_library(workpart_catch_main STATIC ${workpart_SOURCE_DIR}/tests/catch_main.cpp)
  target_link_libraries(workpart_catch_main PUBLIC workpart_catch2 workpart_sanitize)
endfunction()

# main() for MPI tests, compiled once.
function(_workpart_require_mpi_main)
  if(TARGET workpart_mpi_main)
    return()
  endif()
  _workpart_require_catch2()
  add_library(workpart_mpi_main STATIC ${workpart_SOURCE_DIR}/tests/mpi_main.cpp)
  target_link_libraries(workpart_mpi_main
    PUBLIC workpart_catch2 workpart_sanitize Boost::mpi Boost::serialization MPI::MPI_CXX)
endfunction()

function(_workpart_check_args fn)
  if(NOT arg_NAME)
    message(FATAL_ERROR "${fn}: NAME is required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${fn}(${arg_NAME}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
endfunction()

# Registers <exe> under mpiexec once per process count.
function(_workpart_add_mpiexec_tests prefix name exe nprocs timeout labels args)
  _workpart_mpiexec_preflags(preflags)
  _workpart_test_environment(env)
  foreach(np IN LISTS nprocs)
    if(NOT np MATCHES "^[1-9][0-9]*$")
      message(FATAL_ERROR "${prefix}.${name}: NPROCS must be positive integers, got '${np}'")
    endif()
    set(test ${prefix}.${name}.np${np})
    add_test(NAME ${test}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${preflags}
              $<TARGET_FILE:${exe}> ${MPIEXEC_POSTFLAGS} ${args})
    set_tests_properties(${test} PROPERTIES
      LABELS "${labels}" PROCESSORS ${np} TIMEOUT ${timeout} ENVIRONMENT "${env}")
  endforeach()
endfunction()

function(workpart_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "NO_PCH;NOT_SANITIZED;OPTIMIZED" "NAME;TIMEOUT" "SOURCES;LABELS;LIBRARIES;ARGS")
  _workpart_check_args(workpart_add_test)
  if(arg_NOT_SANITIZED AND WORKPART_SANITIZE AND NOT WORKPART_SANITIZE_ALL)
    return()
  endif()
  if(NOT arg_NOT_SANITIZED AND NOT WORKPART_BUILDS_SANITIZED_TESTS)
    return()
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "workpart_add_test(${arg_NAME}): SOURCES is required")
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  _workpart_require_catch_main()
  set(exe test_${arg_NAME})
  add_executable(${exe} ${arg_SOURCES})
  _workpart_test_library(lib "${arg_LIBRARIES}")
  target_link_libraries(${exe} PRIVATE
    workpart_catch_main ${lib} workpart_warnings workpart_sanitize ${arg_LIBRARIES})
  _workpart_optimize(${exe} "${arg_OPTIMIZED}" pch)
  if(pch AND NOT arg_NO_PCH AND NOT arg_LIBRARIES)
    workpart_use_pch(${exe} catch)
  endif()
  _workpart_test_environment(env NO_MPI)
  add_test(NAME unit.${arg_NAME} COMMAND ${exe} ${arg_ARGS})
  set(labels unit ${arg_LABELS})
  set_tests_properties(unit.${arg_NAME} PROPERTIES
    LABELS "${labels}" TIMEOUT ${arg_TIMEOUT} ENVIRONMENT "${env}")
endfunction()

function(workpart_add_mpi_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "NO_PCH;NOT_SANITIZED;OPTIMIZED" "NAME;TIMEOUT" "SOURCES;NPROCS;LABELS;LIBRARIES;ARGS")
  _workpart_check_args(workpart_add_mpi_test)
  if(arg_NOT_SANITIZED AND WORKPART_SANITIZE AND NOT WORKPART_SANITIZE_ALL)
    return()
  endif()
  if(NOT arg_NOT_SANITIZED AND NOT WORKPART_BUILDS_SANITIZED_TESTS)
    return()
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "workpart_add_mpi_test(${arg_NAME}): SOURCES is required")
  endif()
  if(NOT arg_NPROCS)
    message(FATAL_ERROR "workpart_add_mpi_test(${arg_NAME}): NPROCS is required (e.g. NPROCS 1 2 4)")
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  _workpart_require_mpi_main()
  set(exe test_mpi_${arg_NAME})
  add_executable(${exe} ${arg_SOURCES})
  _workpart_test_library(lib "${arg_LIBRARIES}")
  target_link_libraries(${exe} PRIVATE
    workpart_mpi_main ${lib} workpart_warnings workpart_sanitize ${arg_LIBRARIES})
  _workpart_optimize(${exe} "${arg_OPTIMIZED}" pch)
  if(pch AND NOT arg_NO_PCH AND NOT arg_LIBRARIES)
    workpart_use_pch(${exe} catch)
  endif()
  set(labels mpi ${arg_LABELS})
  _workpart_add_mpiexec_tests(mpi ${arg_NAME} ${exe} "${arg_NPROCS}" ${arg_TIMEOUT}
    "${labels}" "${arg_ARGS}")
endfunction()

function(workpart_add_mpi_test_run)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;OF;TIMEOUT" "NPROCS;LABELS;ARGS")
  _workpart_check_args(workpart_add_mpi_test_run)
  if(NOT arg_OF OR NOT arg_NPROCS OR NOT arg_ARGS)
    message(FATAL_ERROR "workpart_add_mpi_test_run(${arg_NAME}): OF, NPROCS and ARGS are required")
  endif()
  if(NOT TARGET test_mpi_${arg_OF})
    return()
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  _workpart_add_mpiexec_tests(mpi ${arg_NAME} test_mpi_${arg_OF} "${arg_NPROCS}" ${arg_TIMEOUT}
    "mpi;${arg_LABELS}" "${arg_ARGS}")
endfunction()

function(workpart_add_compile_fail_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "LITERAL" "NAME;SOURCE;REGEX;TIMEOUT" "LIBRARIES")
  _workpart_check_args(workpart_add_compile_fail_test)
  if(NOT arg_SOURCE OR NOT arg_REGEX)
    message(FATAL_ERROR "workpart_add_compile_fail_test(${arg_NAME}): SOURCE and REGEX are required")
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  set(regex "${arg_REGEX}")
  if(arg_LITERAL)
    string(REGEX REPLACE "([][.*+?^$()|{}\\\\])" "\\\\\\1" regex "${regex}")
  endif()
  # A ';' would split the property into several alternative regexes; '[;]' keeps one.
  string(REPLACE ";" "[;]" regex "${regex}")
  set(target compile_fail_${arg_NAME})
  add_library(${target} OBJECT EXCLUDE_FROM_ALL ${arg_SOURCE})
  set_target_properties(${target} PROPERTIES EXCLUDE_FROM_DEFAULT_BUILD ON)
  _workpart_library(lib "${arg_LIBRARIES}")
  target_link_libraries(${target} PRIVATE
    ${lib} workpart_warnings workpart_sanitize ${arg_LIBRARIES})
  target_compile_definitions(${target} PRIVATE WORKPART_COMPILE_FAIL=1)
  if(NOT arg_LIBRARIES)
    workpart_use_pch(${target} plain)
  endif()
  add_test(NAME compile_fail.${arg_NAME}
    COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target ${target} --config $<CONFIG>)
  # RESOURCE_LOCK: one build tool at a time in the shared build tree.
  set_tests_properties(compile_fail.${arg_NAME} PROPERTIES
    PASS_REGULAR_EXPRESSION "${regex}"
    LABELS compile_fail TIMEOUT ${arg_TIMEOUT} RESOURCE_LOCK workpart_build_tree)
endfunction()

function(workpart_add_example)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;SOURCE;TIMEOUT" "NPROCS;ARGS;LABELS;LIBRARIES")
  _workpart_check_args(workpart_add_example)
  if(NOT arg_SOURCE)
    message(FATAL_ERROR "workpart_add_example(${arg_NAME}): SOURCE is required")
  endif()
  if(NOT arg_NPROCS)
    set(arg_NPROCS 1)
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  add_executable(${arg_NAME} ${arg_SOURCE})
  _workpart_library(lib "${arg_LIBRARIES}")
  target_link_libraries(${arg_NAME} PRIVATE
    ${lib} workpart_warnings workpart_sanitize ${arg_LIBRARIES})
  if(NOT arg_LIBRARIES)
    workpart_use_pch(${arg_NAME} plain)
  endif()
  set(labels example ${arg_LABELS})
  _workpart_add_mpiexec_tests(example ${arg_NAME} ${arg_NAME} "${arg_NPROCS}" ${arg_TIMEOUT}
    "${labels}" "${arg_ARGS}")
endfunction()
