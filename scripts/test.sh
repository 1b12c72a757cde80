#!/usr/bin/env bash
# Configures, builds and runs the whole test suite (benchmarks are built, not run).
#   scripts/test.sh              the whole suite, each test compiled once: the tests the
#                                sanitizers run (every test not marked NOT_SANITIZED) in
#                                build-asan/ (Debug, ASan + UBSan), everything else -- the tests
#                                of what the types derive, examples, benchmarks, compile-fail,
#                                header, package and CUDA tests -- in build-test/ (Release -O0;
#                                the tests marked OPTIMIZED at -O1)
#   scripts/test.sh --sanitize   the sanitizer part alone (build-asan/; or WORKPART_SANITIZE=1);
#                                the NOT_SANITIZED tests too with WORKPART_SANITIZE_ALL=1
#   scripts/test.sh --plain      every test without sanitizers, in build-test/
# Exits nonzero when configuring, building or any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=whole
[[ "${WORKPART_SANITIZE:-0}" == 1 ]] && mode=sanitize
for arg in "$@"; do
  case "$arg" in
    --sanitize) mode=sanitize ;;
    --plain) mode=plain ;;
    *) echo "test.sh: unknown argument '$arg' (--sanitize or --plain)" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# The published cost tables (../shared beside the checkout) let tools.optimize check the
# optimizer's command-line tool on real graphs too.
anchors="$(cd .. && pwd)/shared/anchors/pase-tables"
common=(-DWORKPART_BUILD_TESTS=ON)
[[ -d "$anchors" ]] && common+=("-DWORKPART_PASE_TABLES_DIR=$anchors")

run_suite() {  # run_suite <build dir> <ctest jobs> <cmake options>...
  local dir="$1" jobs="$2"
  shift 2
  cmake -S . -B "$dir" -G Ninja "$@" "${common[@]}"
  cmake --build "$dir" -j2
  ctest --test-dir "$dir" --output-on-failure "-j$jobs" --timeout 600
}

# Tests and examples at -O0: they check results on small shapes, not speed, run in a second
# or two either way, and build a quarter faster than at -O1 (test_backward.cpp: 137 s against
# 179 s). The few whose run time needs it (whole networks' convolutions as loops, tens of MB
# per rank: five times slower at -O0; the CNN step's pricing in mpi.nn) are marked OPTIMIZED
# and built at -O1, as is the planner every test links (workpart::compiled). (The sanitizer
# build is -O0 as well; scripts/demo.sh builds the examples at -O3.) Benchmarks with
# -fsyntax-only: here only that they compile is checked, no code is generated
# (scripts/bench.sh builds them at -O3 for timing). With nvcc installed, the CUDA backend's
# tests are compiled too (tests/cuda; run only where a GPU is).
plain_suite() {  # plain_suite <sanitized tests elsewhere: ON/OFF>
  local config=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG"
                -DWORKPART_TEST_OPTIMIZED_FLAGS=-O1 -DWORKPART_SANITIZE=OFF "-DWORKPART_TEST_SANITIZED_ELSEWHERE=$1"
                -DWORKPART_BUILD_BENCHMARKS=ON -DWORKPART_BENCHMARK_OPT=-fsyntax-only
                -DWORKPART_TEST_COMPILE=ON -DWORKPART_TEST_PACKAGE=ON -DWORKPART_BUILD_EXAMPLES=ON
                -DWORKPART_NN_COMPILED_TYPES=double)
  if [[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null 2>&1; then
    # host code at -O0, as the other tests (the device code is ptxas's, optimised either way;
    # nothing runs here without a GPU)
    config+=(-DWORKPART_ENABLE_CUDA=ON "-DCMAKE_CUDA_FLAGS_RELEASE=-O0 -DNDEBUG")
  fi
  # The layout check (.clang-format): a file that differs fails the run.
  bash scripts/format.sh --check
  # ctest -j4 on two cores: a test of P ranks reserves P slots (PROCESSORS), so at -j2 every
  # multi-rank test ran alone, the cores idle while its ranks launched and waited on small
  # messages, beside none of the compile-bound tests (the header check, the compile-fail and
  # package tests): 618 s at -j2, 521 s at -j4 (the same tree, CI27). The sanitizer part's
  # tests are compute-bound: -j2 (306 s; 329 s at -j4).
  run_suite build-test 4 "${config[@]}"
}

# Left out of the sanitizer build: benchmarks, compile-fail and package tests (nothing of the
# library runs in them), the examples (the plain part runs them; the library paths they take
# run here in tests/), and the tests marked NOT_SANITIZED (what the types derive -- gradients,
# layers, expression forms -- checked against loops; their run-time paths are the ones the
# tests built here run; WORKPART_SANITIZE_ALL=1 builds them too). Line tables only (-g1) keep
# the template-heavy debug build fast while sanitizer reports still name files and lines.
# No workpart::nn_compiled here: the one sanitized test that makes a layer (unit.gemm_packed)
# compiles it itself, cheaper than the library's every layer under the sanitizers.
sanitized_suite() {
  run_suite build-asan 2 -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g1" \
    -DWORKPART_SANITIZE=ON -DWORKPART_BUILD_BENCHMARKS=OFF -DWORKPART_TEST_COMPILE=OFF \
    -DWORKPART_TEST_PACKAGE=OFF -DWORKPART_BUILD_EXAMPLES=OFF -DWORKPART_BUILD_NN_COMPILED=OFF \
    "-DWORKPART_SANITIZE_ALL=${WORKPART_SANITIZE_ALL:-0}"
}

case "$mode" in
  whole)
    plain_suite ON
    sanitized_suite
    ;;
  sanitize) sanitized_suite ;;
  plain) plain_suite OFF ;;
esac
