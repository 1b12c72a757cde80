#pragma once
/// \file cublas.hpp
/// Under CUDA, a statement recognised as a contraction (../contraction.hpp) runs as cuBLAS
/// GEMMs on the device buffers in place: the calls gemm_calls.hpp plans, each one
/// `cublas?gemmStridedBatched`. What does not fit that form runs as the generic kernel. In
/// the Thrust-OpenMP build there is no cuBLAS: contractions run as the generic kernel (the
/// dispatch decision is still made and counted, so tests see it; the planned calls are
/// checked against a host GEMM in tests/unit/test_gemm_calls.cpp).

#include "../../config.hpp"

#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA

#include <type_traits>
#include <vector>

#include <cublas_v2.h>

#include "../counters.hpp"
#include "context.hpp"
#include "gemm_calls.hpp"

namespace workpart::detail {

inline cublasOperation_t blas_op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

inline cublasStatus_t gemm_batched(cublasHandle_t h, const strided_gemm<float>& g) {
  const float beta = 1.0f;
  return cublasSgemmStridedBatched(h, blas_op(g.trans_a), blas_op(g.trans_b), g.m, g.n, g.k,
                                   &g.alpha, g.a, g.lda, g.stride_a, g.b, g.ldb, g.stride_b, &beta,
                                   g.c, g.ldc, g.stride_c, g.count);
}
inline cublasStatus_t gemm_batched(cublasHandle_t h, const strided_gemm<double>& g) {
  const double beta = 1.0;
  return cublasDgemmStridedBatched(h, blas_op(g.trans_a), blas_op(g.trans_b), g.m, g.n, g.k,
                                   &g.alpha, g.a, g.lda, g.stride_a, g.b, g.ldb, g.stride_b, &beta,
                                   g.c, g.ldc, g.stride_c, g.count);
}

/// Runs a recognised contraction over the box [lo, hi) with cuBLAS; false when it does not
/// fit cuBLAS (the caller then runs the generic kernel).
template <int N, class Stmt, class WEnv, class REnv>
bool run_contraction_cublas(const Stmt& st, const WEnv& wenv, const REnv& renv, const index_t* lo,
                            const index_t* hi, device_context& dev) {
  using T = typename Stmt::value_type;
  if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
    return false;
  } else {
    std::vector<strided_gemm<T>> calls;  // planned in full first: all of it goes to cuBLAS or none
    if (!plan_strided_gemms<N>(st, wenv, renv, lo, hi,
                               [&](const strided_gemm<T>& g) { calls.push_back(g); }))
      return false;
    if (calls.empty()) return true;
    cublasHandle_t h = dev.blas();
    cublas_check(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    for (const auto& g : calls) {
      cublas_check(gemm_batched(h, g), std::is_same_v<T, float> ? "cublasSgemmStridedBatched"
                                                                : "cublasDgemmStridedBatched");
      counters().device_gemm_calls.fetch_add(1, std::memory_order_relaxed);
    }
    return true;
  }
}

}  // namespace workpart::detail

#endif
