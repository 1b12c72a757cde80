#pragma once
/// \file gemm_calls.hpp
/// A recognised contraction (../contraction.hpp) over a box, as column-major strided-batched
/// GEMM calls (the cuBLAS form: `C_i = alpha op(A_i) op(B_i) + C_i`, i < count, operand i at
/// base + i * stride), planned on the host from the bound operands' steps. The device
/// backend issues each call to `cublas?gemmStridedBatched` (cublas.hpp); the tests execute
/// them with a plain host GEMM, so what would be passed to cuBLAS is checked on every machine.
///
/// The innermost batch loop becomes the batch of one call (unless C does not move along it: a
/// contracted index left unfused adds into one C), the outer ones a call per point. Operands
/// whose matrix axes are both strided (a batch axis innermost), element types other than
/// float and double, and extents past `int` are not planned (false: the caller runs the
/// generic kernel).

#include <algorithm>
#include <climits>
#include <type_traits>

#include "../contraction.hpp"

namespace workpart::detail {

/// One strided-batched GEMM, column-major: C (m x n) += alpha op(A) (m x k) op(B) (k x n).
template <class T>
struct strided_gemm {
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0;
  T alpha = T(1);
  const T* a = nullptr;
  int lda = 1;
  long long stride_a = 0;
  const T* b = nullptr;
  int ldb = 1;
  long long stride_b = 0;
  T* c = nullptr;
  int ldc = 1;
  long long stride_c = 0;
  int count = 1;
};

/// A rows x cols operand at element strides (rs, cs) as a column-major matrix: in place
/// (rs == 1: leading dimension cs), or the transpose of one (cs == 1: leading dimension rs);
/// an axis of extent 1 takes any stride.
struct blas_operand {
  bool ok = false;
  bool trans = false;
  int ld = 1;
};
inline blas_operand blas_form(index_t rows, index_t cols, index_t rs, index_t cs) {
  blas_operand o;
  const index_t ldn = cols == 1 ? std::max<index_t>(rows, 1) : cs;
  const index_t ldt = rows == 1 ? std::max<index_t>(cols, 1) : rs;
  if ((rs == 1 || rows == 1) && ldn >= rows && ldn >= 1 && ldn <= INT_MAX)
    o = {true, false, int(ldn)};
  else if ((cs == 1 || cols == 1) && ldt >= cols && ldt >= 1 && ldt <= INT_MAX)
    o = {true, true, int(ldt)};
  return o;
}

/// Plans `st` (a contraction) over the box [lo, hi) on the buffers of wenv/renv: calls
/// emit(strided_gemm<T>) for each GEMM, or returns false, before emitting any, when the
/// contraction does not fit the form. Nothing to do (an empty box) is true with no call.
template <int N, class Stmt, class WEnv, class REnv, class Emit>
bool plan_strided_gemms(const Stmt& st, const WEnv& wenv, const REnv& renv, const index_t* lo,
                        const index_t* hi, Emit&& emit) {
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
    const gemm_layout lay = layout_gemm<N>(cd, bc, ba, bb, lo, hi);
    const fused_dim &fm = lay.m, &fn = lay.n, &fk = lay.k;
    if (fm.ext > INT_MAX || fn.ext > INT_MAX || fk.ext > INT_MAX) return false;
    const index_t c_rs = step_along(bc, fm.inner), c_cs = step_along(bc, fn.inner);
    // C' (M x Nn, column-major) += op(X) (M x k) op(Y) (k x Nn): X rows along dx, Y columns along
    // dy.
    auto go = [&](const auto& bx, const auto& by, int dx, int dy, index_t M, index_t Nn,
                  blas_operand oc) {
      const blas_operand ox = blas_form(M, fk.ext, step_along(bx, dx), step_along(bx, fk.inner));
      const blas_operand oy = blas_form(fk.ext, Nn, step_along(by, fk.inner), step_along(by, dy));
      if (!oc.ok || oc.trans || !ox.ok || !oy.ok) return false;
      // The innermost loop is the batch of one call, unless C does not move along it (a
      // contracted index left unfused: its GEMMs add into one C, one call each).
      int inner = lay.nloops > 0 ? lay.loops[lay.nloops - 1] : -1;
      if (inner >= 0 && bc.step(inner) == 0) inner = -1;
      const index_t count = inner >= 0 ? hi[inner] - lo[inner] : 1;
      if (count > INT_MAX) return false;
      const int outer_loops = inner >= 0 ? lay.nloops - 1 : lay.nloops;
      strided_gemm<T> g;
      g.trans_a = ox.trans;
      g.trans_b = oy.trans;
      g.m = int(M);
      g.n = int(Nn);
      g.k = int(fk.ext);
      g.alpha = static_cast<T>(F::scale(st.rhs));
      g.lda = ox.ld;
      g.stride_a = (long long)step_along(bx, inner);
      g.ldb = oy.ld;
      g.stride_b = (long long)step_along(by, inner);
      g.ldc = oc.ld;
      g.stride_c = (long long)step_along(bc, inner);
      g.count = int(count);
      index_t pt[max_dims] = {};
      for (int d = 0; d < N; ++d) pt[d] = lo[d];
      do {
        g.a = bx.ptr(pt);
        g.b = by.ptr(pt);
        g.c = bc.ptr(pt);
        emit(g);
      } while (next_loop_point(pt, lay.loops, outer_loops, lo, hi));
      return true;
    };
    // Row-major thinking, column-major BLAS: when C's rows are contiguous, C (m x n) += A B
    // is C^T (n x m) += B^T (n x k) A^T (k x m); otherwise C is column-major as it is.
    if (c_cs == 1 || fn.ext == 1)
      return go(bb, ba, fn.inner, fm.inner, fn.ext, fm.ext, blas_form(fn.ext, fm.ext, c_cs, c_rs));
    return go(ba, bb, fm.inner, fn.inner, fm.ext, fn.ext, blas_form(fm.ext, fn.ext, c_rs, c_cs));
  }
}

}  // namespace workpart::detail
