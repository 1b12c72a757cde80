#pragma once
/// \file cublas.hpp
/// Under CUDA, a statement recognised as a contraction (../contraction.hpp) runs as cuBLAS
/// GEMMs on the device buffers in place: `cublas?gemmStridedBatched` along the innermost
/// batch loop, one call per point of the outer ones. Operands whose matrix axes are both
/// strided (a batch axis innermost), element types other than float and double, and extents
/// past `int` run as the generic kernel instead. In the Thrust-OpenMP build there is no
/// cuBLAS: contractions run as the generic kernel (the dispatch decision is still made and
/// counted, so tests see it).

#include "../../config.hpp"

#if WORKPART_DEVICE_SYSTEM == WORKPART_DEVICE_CUDA

#include <algorithm>
#include <climits>
#include <type_traits>

#include <cublas_v2.h>

#include "../contraction.hpp"
#include "../counters.hpp"
#include "context.hpp"

namespace workpart::detail {

/// One column-major operand as cuBLAS takes it: the operation and the leading dimension.
struct blas_operand {
  bool ok = false;
  cublasOperation_t op = CUBLAS_OP_N;
  int ld = 1;
};
/// A rows x cols operand at strides (rs, cs): column-major in place (rs == 1), or the
/// transpose of a column-major one (cs == 1); an axis of extent 1 takes any stride.
inline blas_operand blas_form(index_t rows, index_t cols, index_t rs, index_t cs) {
  blas_operand o;
  const index_t ldn = cols == 1 ? std::max<index_t>(rows, 1) : cs;
  const index_t ldt = rows == 1 ? std::max<index_t>(cols, 1) : rs;
  if ((rs == 1 || rows == 1) && ldn >= rows && ldn >= 1 && ldn <= INT_MAX)
    o = {true, CUBLAS_OP_N, int(ldn)};
  else if ((cs == 1 || cols == 1) && ldt >= cols && ldt >= 1 && ldt <= INT_MAX)
    o = {true, CUBLAS_OP_T, int(ldt)};
  return o;
}

inline cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                   int m, int n, int k, const float* alpha, const float* a, int lda,
                                   long long sa, const float* b, int ldb, long long sb,
                                   const float* beta, float* c, int ldc, long long sc, int count) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc,
                                   sc, count);
}
inline cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                   int m, int n, int k, const double* alpha, const double* a,
                                   int lda, long long sa, const double* b, int ldb, long long sb,
                                   const double* beta, double* c, int ldc, long long sc, int count) {
  return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc,
                                   sc, count);
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
    constexpr contraction_dims<N> cd = contraction_of<N, Stmt>();
    using F = contraction_form<typename Stmt::rhs_type>;
    const auto bc = st.lhs.bind(wenv, 0);
    const auto ba = F::a(st.rhs).bind(renv, 0);
    const auto bb = F::b(st.rhs).bind(renv, 0);
    for (int d = 0; d < N; ++d)
      if (hi[d] <= lo[d]) return true;  // nothing to do
    int loops[max_dims] = {};
    int nloops = 0;
    for (int b = 0; b < cd.nbatch; ++b) loops[nloops++] = cd.batch[b];
    const fused_dim fm = fuse_role(cd.m, cd.nm, bc, ba, lo, hi, loops, nloops);
    const fused_dim fn = fuse_role(cd.n, cd.nn, bc, bb, lo, hi, loops, nloops);
    const fused_dim fk = fuse_role(cd.k, cd.nk, ba, bb, lo, hi, loops, nloops);
    std::sort(loops, loops + nloops);
    auto st_of = [](const auto& bound, int d) { return d < 0 ? index_t(0) : bound.step(d); };
    if (fm.ext > INT_MAX || fn.ext > INT_MAX || fk.ext > INT_MAX) return false;
    const index_t c_rs = st_of(bc, fm.inner), c_cs = st_of(bc, fn.inner);
    const bool transposed = c_cs == 1 || fn.ext == 1;
    cublasHandle_t h = dev.blas();
    cublas_check(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    // C' (M x Nn, column-major) += op(X) (M x k) op(Y) (k x Nn): X rows along dx, Y columns along dy.
    auto go = [&](const auto& bx, const auto& by, int dx, int dy, index_t M, index_t Nn,
                  blas_operand oc) {
      const blas_operand ox = blas_form(M, fk.ext, st_of(bx, dx), st_of(bx, fk.inner));
      const blas_operand oy = blas_form(fk.ext, Nn, st_of(by, fk.inner), st_of(by, dy));
      if (!oc.ok || oc.op != CUBLAS_OP_N || !ox.ok || !oy.ok) return false;
      // The innermost loop dimension becomes the batch of one strided-batched call, unless C
      // does not move along it (a contracted index left unfused: its GEMMs add into one C).
      int inner = nloops > 0 ? loops[nloops - 1] : -1;
      if (inner >= 0 && bc.step(inner) == 0) inner = -1;
      const index_t count = inner >= 0 ? hi[inner] - lo[inner] : 1;
      if (count > INT_MAX) return false;
      const int outer_loops = inner >= 0 ? nloops - 1 : nloops;
      const T alpha = static_cast<T>(F::scale(st.rhs)), beta = T(1);
      index_t pt[max_dims] = {};
      for (int d = 0; d < N; ++d) pt[d] = lo[d];
      for (;;) {
        cublas_check(gemm_batched(h, ox.op, oy.op, int(M), int(Nn), int(fk.ext), &alpha, bx.ptr(pt),
                                  ox.ld, (long long)st_of(bx, inner), by.ptr(pt), oy.ld,
                                  (long long)st_of(by, inner), &beta, bc.ptr(pt), oc.ld,
                                  (long long)st_of(bc, inner), int(count)),
                     std::is_same_v<T, float> ? "cublasSgemmStridedBatched"
                                              : "cublasDgemmStridedBatched");
        counters().device_gemm_calls.fetch_add(1, std::memory_order_relaxed);
        int b = outer_loops - 1;
        for (; b >= 0; --b) {
          const int d = loops[b];
          if (++pt[d] < hi[d]) break;
          pt[d] = lo[d];
        }
        if (b < 0) return true;
      }
    };
    // Row-major thinking, column-major cuBLAS: when C's rows are contiguous, C (m x n) +=
    // A B is C^T (n x m) += B^T (n x k) A^T (k x m); otherwise C is column-major as it is.
    if (transposed) return go(bb, ba, fn.inner, fm.inner, fn.ext, fm.ext, blas_form(fn.ext, fm.ext, c_cs, c_rs));
    return go(ba, bb, fm.inner, fn.inner, fm.ext, fn.ext, blas_form(fm.ext, fn.ext, c_rs, c_cs));
  }
}

}  // namespace workpart::detail

#endif
