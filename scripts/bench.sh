#!/usr/bin/env bash
# Builds the benchmarks for timing (-O3, Release) into build-bench/, with the CUDA benchmark
# where nvcc is; the test command only checks that they compile (-O0, build-test/).
#   scripts/bench.sh                       every benchmark
#   scripts/bench.sh bench_train ...       the ones named
# Then run them from build-bench/benchmarks/, e.g.
#   mpirun --allow-run-as-root --oversubscribe -np 4 build-bench/benchmarks/bench_train --reps 11
# (bench_ilp also installs coinor-cbc, its exact solver, where it is missing; bench_model builds
# bench_networks, whose --run mode it is)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# bench_ilp's exact solver (COIN-OR CBC, the `cbc` program): installed when that benchmark is
# built and it is missing; without it bench_ilp says so and exits 0
if { [[ $# -eq 0 ]] || [[ " $* " == *" bench_ilp "* ]]; } && ! command -v cbc >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends coinor-cbc ||
      echo "bench.sh: coinor-cbc could not be installed; bench_ilp will say it is skipped" >&2
  else
    echo "bench.sh: bench_ilp needs coinor-cbc (apt-get install coinor-cbc, as root)" >&2
  fi
fi

config=(-DCMAKE_BUILD_TYPE=Release -DWORKPART_BUILD_BENCHMARKS=ON -DWORKPART_BENCHMARK_OPT=-O3
        -DWORKPART_BUILD_TESTS=OFF -DWORKPART_BUILD_EXAMPLES=OFF)
if [[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null 2>&1; then
  config+=(-DWORKPART_ENABLE_CUDA=ON)
fi
cmake -S . -B build-bench -G Ninja "${config[@]}"
# bench_model (the model against measurement) is bench_networks --run:
#   mpirun -np 2 build-bench/benchmarks/bench_networks --run --csv model_np2.csv
targets=()
for t in "$@"; do
  if [[ $t == bench_model ]]; then targets+=(bench_networks); else targets+=("$t"); fi
done
if [[ $# -gt 0 ]]; then
  cmake --build build-bench -j2 --target "${targets[@]}"
else
  cmake --build build-bench -j2
fi
