#pragma once
/// \file options.hpp
/// The options of wp::distribute: which local executor a plan's ranks run.

namespace workpart {

/// Which local executor a plan uses: the CPU (loops, Eigen GEMM) or a device (CUDA kernels and
/// cuBLAS under nvcc; Thrust's OpenMP system with workpart::device_omp).
enum class backend { cpu, cuda };

/// Options of wp::distribute.
struct options {
  workpart::backend backend = workpart::backend::cpu;
};

}  // namespace workpart
