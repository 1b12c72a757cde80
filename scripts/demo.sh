#!/usr/bin/env bash
# Builds and runs examples/01_matmul on 2 MPI ranks. Extra arguments go to the example.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DWORKPART_BUILD_EXAMPLES=ON -DWORKPART_BUILD_TESTS=OFF -DWORKPART_BUILD_BENCHMARKS=OFF
cmake --build build --target 01_matmul
mpirun --allow-run-as-root --oversubscribe -np 2 build/examples/01_matmul "$@"
