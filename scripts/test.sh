#!/usr/bin/env bash
# Configures, builds and runs every test (benchmarks are built, not run).
#   scripts/test.sh              build-test/, Release
#   scripts/test.sh --sanitize   build-asan/, Debug, ASan + UBSan (or WORKPART_SANITIZE=1); the
#                                tests marked NOT_SANITIZED only with WORKPART_SANITIZE_ALL=1
# Exits nonzero when configuring, building or any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize="${WORKPART_SANITIZE:-0}"
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=1 ;;
    *) echo "test.sh: unknown argument '$arg' (only --sanitize)" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

if [[ "$sanitize" == 1 ]]; then
  # Left out: benchmarks (built, not run, by the plain suite), compile-fail and package tests
  # (nothing of the library runs in them), the examples (the plain suite runs them; the
  # library paths they take run here in tests/), and the tests marked NOT_SANITIZED (what the
  # types derive -- gradients, layers, expression forms -- checked against loops; their
  # run-time paths are the ones the tests built here run; WORKPART_SANITIZE_ALL=1 builds them
  # too). That keeps CI under its time budget. Line tables only (-g1) keep the template-heavy
  # debug build fast while sanitizer reports still name files and lines.
  dir=build-asan
  config=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g1" -DWORKPART_SANITIZE=ON
          -DWORKPART_BUILD_BENCHMARKS=OFF -DWORKPART_TEST_COMPILE=OFF -DWORKPART_TEST_PACKAGE=OFF
          -DWORKPART_BUILD_EXAMPLES=OFF "-DWORKPART_SANITIZE_ALL=${WORKPART_SANITIZE_ALL:-0}")
else
  # Tests and examples at -O1: they check results, not speed, and build in about half the
  # time of -O3. Benchmarks at -O0: here only that they compile is checked (scripts/bench.sh
  # builds them at -O3 for timing). With nvcc installed, the CUDA backend's tests are compiled too
  # (tests/cuda; run only where a GPU is).
  dir=build-test
  config=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
          -DWORKPART_SANITIZE=OFF -DWORKPART_BUILD_BENCHMARKS=ON -DWORKPART_BENCHMARK_OPT=-O0
          -DWORKPART_TEST_COMPILE=ON -DWORKPART_TEST_PACKAGE=ON -DWORKPART_BUILD_EXAMPLES=ON)
  if [[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null 2>&1; then
    config+=(-DWORKPART_ENABLE_CUDA=ON "-DCMAKE_CUDA_FLAGS_RELEASE=-O1 -DNDEBUG")
  fi
fi

# The published cost tables (../shared beside the checkout) let tools.optimize check the
# optimizer's command-line tool on real graphs too.
anchors="$(cd .. && pwd)/shared/anchors/pase-tables"
[[ -d "$anchors" ]] && config+=("-DWORKPART_PASE_TABLES_DIR=$anchors")

# The layout check (.clang-format) with the plain suite: a file that differs fails the run.
if [[ "$sanitize" != 1 ]]; then
  bash scripts/format.sh --check
fi

cmake -S . -B "$dir" -G Ninja "${config[@]}" -DWORKPART_BUILD_TESTS=ON
cmake --build "$dir" -j2
ctest --test-dir "$dir" --output-on-failure -j2 --timeout 600
