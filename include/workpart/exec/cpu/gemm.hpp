#pragma once
/// \file gemm.hpp
/// The CPU's contraction "library node": a statement recognised as a contraction
/// (../contraction.hpp) runs as one GEMM per batch point on the buffers in place: the BLAS's
/// sgemm/dgemm (sgemv/dgemv for a matrix times a vector) where workpart is built with one
/// (WORKPART_HAVE_BLAS, which CMake defines where it links the BLAS), Eigen's coefficient
/// products below 20 rows + columns + depth (as Eigen itself decides), and Eigen's own GEMM
/// where there is no BLAS. workpart calls the BLAS itself rather than through EIGEN_USE_BLAS, so
/// that a program's own Eigen code is not switched to the BLAS by linking workpart. Transposed
/// operands are column-major maps, not copies; only an operand with neither matrix axis
/// contiguous (a batch axis innermost) goes through a packed copy.

#include "eigen_view.hpp"
#include <algorithm>
#include <atomic>
#include <climits>
#include <string>
#include <type_traits>
#include <vector>

#include "../../config.hpp"
#include "../contraction.hpp"
#include "../counters.hpp"

#if defined(WORKPART_HAVE_BLAS) && WORKPART_HAVE_BLAS
// The Fortran BLAS, declared as Eigen's misc/blas.h declares it (so both may be seen).
extern "C" {
int sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
           const int*, const float*, const int*, const float*, float*, const int*);
int dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
           const double*, const int*, const double*, const int*, const double*, double*,
           const int*);
int sgemv_(const char*, const int*, const int*, const float*, const float*, const int*,
           const float*, const int*, const float*, float*, const int*);
int dgemv_(const char*, const int*, const int*, const double*, const double*, const int*,
           const double*, const int*, const double*, double*, const int*);
}
#endif

namespace workpart::detail {

template <class T>
using row_major_map = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
                                 Eigen::Unaligned, Eigen::OuterStride<>>;
template <class T>
using col_major_map = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>,
                                 Eigen::Unaligned, Eigen::OuterStride<>>;
template <class T>
using const_row_major_map =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
               Eigen::Unaligned, Eigen::OuterStride<>>;
template <class T>
using const_col_major_map =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>,
               Eigen::Unaligned, Eigen::OuterStride<>>;

/// A strided rows x cols operand: calls f with a row- or column-major map of it (in place
/// when either stride is 1, else through a packed copy).
template <class T, class F>
void with_operand(const T* p, index_t rows, index_t cols, index_t rs, index_t cs, F&& f) {
  if (cols == 1) cs = 1;
  if (rows == 1) rs = cs == 1 ? cols : 1;
  if (cs == 1 && rs >= cols) {
    f(const_row_major_map<T>(p, rows, cols, Eigen::OuterStride<>(rs)));
  } else if (rs == 1 && cs >= rows) {
    f(const_col_major_map<T>(p, rows, cols, Eigen::OuterStride<>(cs)));
  } else {
    std::vector<T> packed(static_cast<std::size_t>(rows * cols));
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 0; j < cols; ++j) packed[i * cols + j] = p[i * rs + j * cs];
    f(const_row_major_map<T>(packed.data(), rows, cols, Eigen::OuterStride<>(cols)));
  }
}

#if defined(WORKPART_HAVE_BLAS) && WORKPART_HAVE_BLAS
/// C (row-major, m x n) = alpha * A * B (+ C unless `overwrite`) by one BLAS call on the maps
/// in place: C^T = B^T A^T in the BLAS's column-major terms, a row-major map being its
/// transpose's column-major storage; a matrix times a vector by gemv (as Eigen does with
/// EIGEN_USE_BLAS). False (nothing done) where an extent or a stride exceeds the BLAS's int.
template <class CMap, class AMap, class BMap, class T>
bool blas_gemm(CMap& cm, const AMap& am, const BMap& bm, T alpha, bool overwrite) {
  const index_t m = cm.rows(), n = cm.cols(), k = am.cols();
  const index_t lda = am.outerStride(), ldb = bm.outerStride(), ldc = cm.outerStride();
  for (index_t x : {m, n, k, lda, ldb, ldc})
    if (x > INT_MAX) return false;
  const T beta = overwrite ? T(0) : T(1);
  constexpr bool a_rows = AMap::IsRowMajor, b_rows = BMap::IsRowMajor;
  auto gemv = [](char t, int rows, int cols, T al, const T* p, int ld, const T* x, int incx, T be,
                 T* y, int incy) {
    if constexpr (std::is_same_v<T, float>)
      sgemv_(&t, &rows, &cols, &al, p, &ld, x, &incx, &be, y, &incy);
    else
      dgemv_(&t, &rows, &cols, &al, p, &ld, x, &incx, &be, y, &incy);
  };
  if (n == 1) {  // y (m, stride ldc) = A x, x B's column
    const int incx = b_rows ? int(ldb) : 1;
    if constexpr (a_rows)  // A row-major: its storage is A^T (k x m)
      gemv('T', int(k), int(m), alpha, am.data(), int(lda), bm.data(), incx, beta, cm.data(),
           int(ldc));
    else
      gemv('N', int(m), int(k), alpha, am.data(), int(lda), bm.data(), incx, beta, cm.data(),
           int(ldc));
    return true;
  }
  if (m == 1) {  // y (n, contiguous) = B^T x, x A's row
    const int incx = a_rows ? 1 : int(lda);
    if constexpr (b_rows)  // B row-major: its storage is B^T (n x k)
      gemv('N', int(n), int(k), alpha, bm.data(), int(ldb), am.data(), incx, beta, cm.data(), 1);
    else
      gemv('T', int(k), int(n), alpha, bm.data(), int(ldb), am.data(), incx, beta, cm.data(), 1);
    return true;
  }
  // C^T (n x m) = op(X) op(Y), X holding B, Y holding A
  const char tx = b_rows ? 'N' : 'T', ty = a_rows ? 'N' : 'T';
  const int M = int(n), N = int(m), K = int(k), ldx = int(ldb), ldy = int(lda), ldz = int(ldc);
  if constexpr (std::is_same_v<T, float>)
    sgemm_(&tx, &ty, &M, &N, &K, &alpha, bm.data(), &ldx, am.data(), &ldy, &beta, cm.data(), &ldz);
  else
    dgemm_(&tx, &ty, &M, &N, &K, &alpha, bm.data(), &ldx, am.data(), &ldy, &beta, cm.data(), &ldz);
  return true;
}
#endif

/// C = alpha A B (+ C unless `overwrite`) by Eigen's product (where workpart has no BLAS, and
/// for element types the BLAS has not).
template <class CMap, class AMap, class BMap, class T>
void eigen_product(CMap&& cm, const AMap& am, const BMap& bm, T alpha, bool overwrite) {
  if (overwrite && alpha == T(1))
    cm.noalias() = am * bm;
  else if (overwrite)
    cm.noalias() = alpha * (am * bm);
  else if (alpha == T(1))
    cm.noalias() += am * bm;
  else
    cm.noalias() += alpha * (am * bm);
}

/// Element types whose GEMMs go to the BLAS (Eigen's own GEMM for the others, and for all
/// where workpart has no BLAS).
template <class T>
inline constexpr bool blas_element =
#if defined(WORKPART_HAVE_BLAS) && WORKPART_HAVE_BLAS
    std::is_same_v<T, float> || std::is_same_v<T, double>;
#else
    false;
#endif

/// C (m x n, strides c_rs, c_cs) += alpha * A (m x k) * B (k x n); with `overwrite`,
/// C = alpha * A * B (C is not read).
template <class T>
void gemm_strided(index_t m, index_t n, index_t k, T alpha, const T* a, index_t a_rs, index_t a_cs,
                  const T* b, index_t b_rs, index_t b_cs, T* c, index_t c_rs, index_t c_cs,
                  bool overwrite = false) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  if (n == 1) c_cs = 1;
  if (m == 1) c_rs = c_cs == 1 ? n : 1;
  if (!(c_cs == 1 && c_rs >= n)) {
    if (c_rs == 1 && c_cs >= m) {  // column-major C: C^T += B^T A^T
      gemm_strided<T>(n, m, k, alpha, b, b_cs, b_rs, a, a_cs, a_rs, c, c_cs, c_rs, overwrite);
      return;
    }
    std::vector<T> tmp(static_cast<std::size_t>(m * n), T(0));
    gemm_strided<T>(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, tmp.data(), n, 1);
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j)
        c[i * c_rs + j * c_cs] = (overwrite ? T(0) : c[i * c_rs + j * c_cs]) + tmp[i * n + j];
    return;
  }
  row_major_map<T> cm(c, m, n, Eigen::OuterStride<>(c_rs));
  with_operand(a, m, k, a_rs, a_cs, [&](const auto& am) {
    with_operand(b, k, n, b_rs, b_cs, [&](const auto& bm) {
      if constexpr (blas_element<T>) {
#if defined(WORKPART_HAVE_BLAS) && WORKPART_HAVE_BLAS
        if (m + n + k >= 20 && blas_gemm(cm, am, bm, alpha, overwrite)) return;
#endif
        // small products, as Eigen computes them: coefficient by coefficient
        if (overwrite)
          cm.noalias() = alpha * am.lazyProduct(bm);
        else
          cm.noalias() += alpha * am.lazyProduct(bm);
      } else {
        eigen_product(cm, am, bm, alpha, overwrite);
      }
    });
  });
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
}

/// The GEMMs of a contraction laid out as g over the box [lo, hi), one per batch point: c, a
/// and b point at the operands' elements at lo, cs, as and bs are their steps along every
/// dim of the space (plain subscripts: an element's address is linear in the point). One
/// copy per element type, whatever the statement.
template <class T>
void run_gemms(const gemm_layout& g, T alpha, T* c, const index_t* cs, const T* a,
               const index_t* as, const T* b, const index_t* bs, const index_t* lo,
               const index_t* hi) {
  index_t pt[max_dims] = {};
  for (int x = 0; x < g.nloops; ++x) pt[g.loops[x]] = lo[g.loops[x]];
  auto at = [&](const index_t* s) {  // the batch point's offset from lo
    index_t o = 0;
    for (int x = 0; x < g.nloops; ++x) o += s[g.loops[x]] * (pt[g.loops[x]] - lo[g.loops[x]]);
    return o;
  };
  auto step = [](const index_t* s, int d) { return d < 0 ? index_t(0) : s[d]; };
  do {
    gemm_strided<T>(g.m.ext, g.n.ext, g.k.ext, alpha, a + at(as), step(as, g.m.inner),
                    step(as, g.k.inner), b + at(bs), step(bs, g.k.inner), step(bs, g.n.inner),
                    c + at(cs), step(cs, g.m.inner), step(cs, g.n.inner));
  } while (next_loop_point(pt, g.loops, g.nloops, lo, hi));
}

#if !WORKPART_HEADER_ONLY
// workpart::compiled holds the float and double GEMMs (src/workpart.cpp): Eigen's product
// kernels were the largest part of a file's compile time that its maps do not decide (4 s of
// example 07's front end), compiled again in every file that has a contraction.
#define WORKPART_GEMM_TYPES(T)                                                                   \
  extern template void gemm_strided<T>(index_t, index_t, index_t, T, const T*, index_t, index_t, \
                                       const T*, index_t, index_t, T*, index_t, index_t, bool);  \
  extern template void run_gemms<T>(const gemm_layout&, T, T*, const index_t*, const T*,         \
                                    const index_t*, const T*, const index_t*, const index_t*,    \
                                    const index_t*);
WORKPART_GEMM_TYPES(float)
WORKPART_GEMM_TYPES(double)
#undef WORKPART_GEMM_TYPES
#endif

/// Runs a recognised contraction over the box [lo, hi) of the space on bound buffers.
template <int N, class Stmt, class WEnv, class REnv>
void run_contraction(const Stmt& st, const WEnv& wenv, const REnv& renv, const index_t* lo,
                     const index_t* hi) {
  constexpr contraction_dims<N> cd = contraction_of<N, Stmt>();
  using F = contraction_form<typename Stmt::rhs_type>;
  using T = typename Stmt::value_type;
  const auto& A = F::a(st.rhs);
  const auto& B = F::b(st.rhs);
  const auto bc = st.lhs.bind(wenv, 0);
  const auto ba = A.bind(renv, 0);
  const auto bb = B.bind(renv, 0);
  for (int d = 0; d < N; ++d)
    if (hi[d] <= lo[d]) return;
  index_t cs[max_dims] = {}, as[max_dims] = {}, bs[max_dims] = {}, pt[max_dims] = {};
  for (int d = 0; d < N; ++d) {
    cs[d] = bc.step(d);
    as[d] = ba.step(d);
    bs[d] = bb.step(d);
    pt[d] = lo[d];
  }
  // Batch points in the space's order (outer dims first); one GEMM each.
  run_gemms<T>(layout_gemm_steps<N>(cd, cs, as, bs, lo, hi), static_cast<T>(F::scale(st.rhs)),
               bc.ptr(pt), cs, ba.ptr(pt), as, bb.ptr(pt), bs, lo, hi);
}

}  // namespace workpart::detail
