#!/usr/bin/env bash
# Builds the benchmarks for timing (-O3, Release) into build-bench/, with the CUDA benchmark
# where nvcc is; the test command only checks that they compile (-O0, build-test/).
#   scripts/bench.sh                       every benchmark
#   scripts/bench.sh bench_train ...       the ones named
# Then run them from build-bench/benchmarks/, e.g.
#   mpirun --allow-run-as-root --oversubscribe -np 4 build-bench/benchmarks/bench_train --reps 11
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

config=(-DCMAKE_BUILD_TYPE=Release -DWORKPART_BUILD_BENCHMARKS=ON -DWORKPART_BENCHMARK_OPT=-O3
        -DWORKPART_BUILD_TESTS=OFF -DWORKPART_BUILD_EXAMPLES=OFF)
if [[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null 2>&1; then
  config+=(-DWORKPART_ENABLE_CUDA=ON)
fi
cmake -S . -B build-bench -G Ninja "${config[@]}"
if [[ $# -gt 0 ]]; then
  cmake --build build-bench -j2 --target "$@"
else
  cmake --build build-bench -j2
fi
