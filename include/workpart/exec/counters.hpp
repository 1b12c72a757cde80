#pragma once
/// \file counters.hpp
/// Counts of what the local executors did, so that tests and benchmarks can see which path
/// ran (a GEMM, a plain loop, threads) rather than infer it from timings.

#include <atomic>

namespace workpart::detail {

/// Counts of what the local executors ran (for tests and explain()).
struct exec_counters {
  std::atomic<long> gemm_calls{0};  ///< GEMMs issued (one per batch point)
  std::atomic<long> loop_statements{0};
  std::atomic<long> threaded_outer{0};     ///< loops split over threads along an outer dimension
  std::atomic<long> threaded_rows{0};      ///< loops whose rows themselves were split over threads
  std::atomic<long> fused_maps{0};         ///< maps whose statements ran together over blocks
  std::atomic<long> fused_blocks{0};       ///< the blocks they ran over
  std::atomic<long> snapshot_elements{0};  ///< elements copied for statements reading their output
  std::atomic<long> packed_elements{0};    ///< elements copied into packed GEMM operands (im2col)
  std::atomic<long> unpacked_elements{0};  ///< GEMM results added into an overlapping C (col2im)
  // The device backend (exec/device/):
  std::atomic<long> device_kernels{0};       ///< statements run as the generic Thrust kernel
  std::atomic<long> device_contractions{0};  ///< statements recognised as contractions there
  std::atomic<long> device_gemm_calls{0};    ///< cuBLAS calls (CUDA only)
  // Communication (comm/collectives/exchange.hpp):
  std::atomic<long> exchange_type_builds{0};  ///< Alltoallw datatype sets built (not reused)
};
inline exec_counters& counters() {
  static exec_counters c;
  return c;
}

}  // namespace workpart::detail
