#!/usr/bin/env bash
# Builds and runs the examples under mpirun: 01_matmul (one process's work, on 2 ranks) and
# 02_distribute (the same matmul split over 4 ranks on grid (2,2,1), with its explain()), and
# 03_program (a 2-layer MLP as a program of three maps on 4 ranks), 05_matmul_schemes (a matmul
# under every scheme: replicated, data-, reduction-parallel, hybrid) and 06_softmax (one map
# and three maps), 07_attention (Megatron self-attention, head-parallel: one Allreduce),
# 08_mlp_layernorm (the MLP's partial sums reduce-scattered into the layer norm's rows) and
# 09_jacobi (a stencil iterated: halos only) and 10_spmv (CSR: each rank gets exactly its rows'
# entries), and 11_device (the device backend: on the CPU through Thrust's OpenMP system,
# when the CUDA toolkit's Thrust headers are there), 12_train (a training step, wp::automatic)
# and 13_residual (a 100-block residual MLP built in a loop: a run-time program), at demo sizes (the examples' defaults are
# the evaluation's sizes).
# Extra arguments go to 02_distribute (M N K).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DWORKPART_BUILD_EXAMPLES=ON -DWORKPART_BUILD_TESTS=OFF -DWORKPART_BUILD_BENCHMARKS=OFF
cmake --build build --target 01_matmul 02_distribute 03_program 05_matmul_schemes 06_softmax 07_attention \
  08_mlp_layernorm 09_jacobi 10_spmv 12_train 13_residual
mpirun --allow-run-as-root --oversubscribe -np 2 build/examples/01_matmul
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/02_distribute "$@"
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/03_program
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/05_matmul_schemes 512 512 512
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/06_softmax 2 4 128 128
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/07_attention 2 64 4 16
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/08_mlp_layernorm 64 64 256
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/09_jacobi 256 256 20
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/10_spmv 20000 20000 1
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/12_train
mpirun --allow-run-as-root --oversubscribe -np 4 build/examples/13_residual
# The device backend needs Thrust (the CUDA toolkit's headers): built only where CMake found it.
if ninja -C build -t targets all 2>/dev/null | grep -q '^11_device:'; then
  cmake --build build --target 11_device
  mpirun --allow-run-as-root --oversubscribe -np 2 build/examples/11_device 256 2048 512
fi
