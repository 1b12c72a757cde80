#pragma once
/// \file loop.hpp
/// The CPU loop executor: runs one statement over a box of its space. Rows run along the
/// dimension that makes the most accesses contiguous (a plain `p[t]` the compiler
/// vectorises); an outer dimension that the left side maps one-to-one is split over
/// OpenMP threads when the box is large enough to pay for them.

#include <algorithm>
#include <cstdint>
#include <type_traits>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../../expr/map.hpp"
#include "../../expr/reduce.hpp"
#include "../combine.hpp"
#include "../counters.hpp"
#include "inner_rows.hpp"
#include "row_dim.hpp"
#include "simd_row.hpp"

namespace workpart::detail {

/// Points below which a statement runs on one thread.
inline constexpr index_t parallel_threshold = index_t(1) << 18;
/// The same for a statement whose right side reduces over an inner range (`s(i) = sum(x(i,
/// wp::all))`): each point does a whole range of work, so far fewer points pay for threads.
inline constexpr index_t parallel_threshold_reducing = index_t(1) << 12;
template <class Stmt>
constexpr index_t parallel_threshold_of() {
  return Stmt::rhs_type::info.reduces ? parallel_threshold_reducing : parallel_threshold;
}

/// The outermost dimension other than M that the left side maps one-to-one (a left axis
/// whose subscript uses that dimension alone): threads over it never write one element
/// twice. -1 if there is none.
template <int N, int M, class Lhs>
constexpr int choose_thread_dim() {
  int found = -1;
  [&]<std::size_t... A>(std::index_sequence<A...>) {
    constexpr affine_sig sigs[] = {Lhs::template axis_sig<int(A)>()..., affine_sig{}};
    for (int d = 0; d < N && found < 0; ++d) {
      if (d == M) continue;
      for (int a = 0; a < int(sizeof...(A)); ++a)
        if (sigs[a].present == dim_bit(d)) found = d;
    }
  }
  (std::make_index_sequence<Lhs::array_type::rank>{});
  return found;
}

/// Whether some left-hand axis is subscripted by dimension D alone: points that differ along
/// D then write different elements, so D can be split over threads.
template <int D, class Lhs>
constexpr bool lhs_owns_dim() {
  return (lhs_owned_dims<Lhs>() & dim_bit(D)) != 0;
}

/// How run_row runs a row along M of `Lhs K= BR` (BR: the bound right side): one plan that
/// run_row follows and explain_local() reads (vector_text), so the text cannot drift from it.
template <combine K, int M, class Lhs, class BR>
struct row_plan {
  using rhs_type = BR;
  using T = typename Lhs::array_type::value_type;
  using Row = std::remove_cvref_t<decltype(std::declval<const BR&>().template row<M>(
      static_cast<const index_t*>(nullptr)))>;
  static constexpr step_kind lhs_step = Lhs::template step_along<M>();
  /// a data-dependent left subscript: elements found point by point
  static constexpr bool scatter = !Lhs::all_affine;
  /// an inner range run outside the row (inner_rows.hpp; unless its ranges read data)
  static constexpr bool range_outside =
      !scatter && lhs_step != step_kind::zero && range_outside_pays<M, BR>();
  /// the row has a vector form in the stored type
  static constexpr bool vector = simd::row_vectorises<T, Row>;
  /// a row sum / max / min into an element fixed along the row, in vector accumulators
  static constexpr bool vector_reduce =
      !scatter && lhs_step == step_kind::zero && vector && K != combine::assign;
  /// a contiguous store of vectors
  static constexpr bool vector_store = !scatter && lhs_step == step_kind::unit && vector;
};

/// One row: pt[M] = its start, len points.
template <combine K, int M, class Lhs, class BL, class BR>
WORKPART_ALWAYS_INLINE void run_row(const BL& lhs, const BR& rhs, const index_t* pt, index_t len) {
  using T = typename BL::value_type;
  using plan = row_plan<K, M, Lhs, BR>;
  constexpr step_kind ls = plan::lhs_step;
  if constexpr (plan::range_outside) {
    if (ranges_unchecked<M>(rhs)) {  // a stencil / convolution: its range outside the row
      run_row_range_outside<K, M>(lhs, rhs, pt, len);
      return;
    }
  }
  const auto r = rhs.template row<M>(pt);
  if constexpr (plan::scatter) {
    // A scatter (h(idx(i)) += e): the element is found point by point, and one whose
    // subscript leaves the buffer is recorded and skipped. Threads run only over dimensions
    // that an affine axis of the left side owns, so no two write one element.
    if constexpr (ls == step_kind::zero) {
      using A = std::common_type_t<T, std::remove_cvref_t<decltype(r(0))>>;
      A acc = A(0);
      for (index_t t = 0; t < len; ++t) acc += r(t);
      if (T* p = lhs.ptr_if_inside(pt)) *p = static_cast<T>(*p + acc);
    } else if constexpr (!(Lhs::indirect_free & dim_bit(M))) {
      // the data-dependent subscripts stay put along the row: find its start once (the
      // affine axes were checked over the whole space when the map was built)
      T* p = lhs.ptr_if_inside(pt);
      if (!p) return;
      const index_t st = lhs.step(M);
      for (index_t t = 0; t < len; ++t) p[t * st] = combine_value<K>(p[t * st], r(t));
    } else {
      index_t q[max_dims];
      for (int d = 0; d < max_dims; ++d) q[d] = pt[d];
      for (index_t t = 0; t < len; ++t) {
        q[M] = pt[M] + t;
        if (T* p = lhs.ptr_if_inside(q)) *p = combine_value<K>(*p, r(t));
      }
    }
    return;
  }
  T* p = lhs.ptr(pt);
  if constexpr (plan::vector_reduce) {
    simd::reduce_row<K>(p, r, len);  // a row sum / max / min in vector accumulators
  } else if constexpr (plan::vector_store) {
    simd::store_row<K>(p, r, len);
  } else if constexpr (ls == step_kind::zero) {
    // The left element is fixed along the row: combine the row first, then into it once.
    using V = std::remove_cvref_t<decltype(r(0))>;
    if constexpr (K == combine::add) {
      using A = std::common_type_t<T, V>;
      A acc = A(0);
      for (index_t t = 0; t < len; ++t) acc += r(t);
      *p = static_cast<T>(*p + acc);
    } else if constexpr (K == combine::max) {
      T acc = *p;
      for (index_t t = 0; t < len; ++t) acc = static_cast<T>(op_max::apply(acc, r(t)));
      *p = acc;
    } else if constexpr (K == combine::min) {
      T acc = *p;
      for (index_t t = 0; t < len; ++t) acc = static_cast<T>(op_min::apply(acc, r(t)));
      *p = acc;
    } else {
      for (index_t t = 0; t < len; ++t) *p = static_cast<T>(r(t));  // unreachable: a race
    }
  } else if constexpr (ls == step_kind::unit) {
    T* WORKPART_RESTRICT q = p;
#pragma GCC ivdep
    for (index_t t = 0; t < len; ++t) q[t] = combine_value<K>(q[t], r(t));
  } else {
    const index_t s = lhs.step(M);
    for (index_t t = 0; t < len; ++t) p[t * s] = combine_value<K>(p[t * s], r(t));
  }
}

/// Visits every row start of the box [lo, hi) (dimensions other than M and `fixed`).
template <int N, int M, class F>
WORKPART_ALWAYS_INLINE void for_each_row(index_t* pt, const index_t* lo, const index_t* hi,
                                         int fixed, F&& f) {
  int dims[N > 0 ? N : 1];
  int nd = 0;
  for (int d = 0; d < N; ++d) {
    if (d == M || d == fixed) continue;
    if (hi[d] <= lo[d]) return;
    pt[d] = lo[d];
    dims[nd++] = d;
  }
  pt[M] = lo[M];
  for (;;) {
    f(pt);
    int k = nd - 1;
    for (; k >= 0; --k) {
      const int d = dims[k];
      if (++pt[d] < hi[d]) break;
      pt[d] = lo[d];
    }
    if (k < 0) return;
  }
}

struct block_of_rows {
  index_t start, end;
};
/// Part `me` of `n` balanced parts of [lo, hi), rounded to 16 elements (whole vectors).
inline block_of_rows split_rows(index_t lo, index_t hi, index_t n, index_t me) {
  const index_t len = hi - lo;
  auto cut = [&](index_t k) { return k >= n ? hi : lo + (len * k / n) / 16 * 16; };
  return {cut(me), cut(me + 1)};
}

/// The threads a statement's loop may use: one inside a parallel region (fused blocks are
/// already shared among threads).
inline int worker_threads() {
#if defined(_OPENMP)
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

/// What the loop executor does with a statement (for explain texts).
struct loop_shape {
  int row_dim = -1;
  int thread_dim = -1;
  bool split_rows = false;  ///< rows themselves are split over threads when no thread_dim pays
};
template <int N, class Stmt>
constexpr loop_shape loop_shape_of() {
  if constexpr (N == 0) {
    return {};
  } else {
    constexpr int M = choose_row_dim<N, Stmt>();
    return {M, choose_thread_dim<N, M, typename Stmt::lhs_type>(),
            lhs_owns_dim<M, typename Stmt::lhs_type>()};
  }
}

/// Runs `lhs K= rhs` (bound nodes) for every point of the box [lo, hi).
template <int N, class Stmt, class BL, class BR>
void run_statement_loop(const BL& lhs, const BR& rhs, const index_t* lo, const index_t* hi) {
  constexpr combine K = Stmt::kind;
  using Lhs = typename Stmt::lhs_type;
  index_t pt[max_dims] = {};
  if constexpr (N == 0) {
    if (typename BL::value_type* p = lhs.ptr_if_inside(pt)) *p = combine_value<K>(*p, rhs.eval(pt));
  } else {
    index_t points = 1;
    for (int d = 0; d < N; ++d) points *= std::max<index_t>(0, hi[d] - lo[d]);
    if (points == 0) return;
    constexpr int M = choose_row_dim<N, Stmt>();
    constexpr int P = choose_thread_dim<N, M, Lhs>();
    const index_t len = hi[M] - lo[M];
    auto row = [&](const index_t* q) { run_row<K, M, Lhs>(lhs, rhs, q, len); };
    const int threads = worker_threads();
    if (threads > 1 && points >= parallel_threshold_of<Stmt>()) {
      if constexpr (P >= 0) {
        if (hi[P] - lo[P] >= threads && lhs.step(P) != 0) {
          const index_t p0 = lo[P], p1 = hi[P];
          counters().threaded_outer.fetch_add(1, std::memory_order_relaxed);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
          for (index_t p = p0; p < p1; ++p) {
            index_t q[max_dims] = {};
            q[P] = p;
            for_each_row<N, M>(q, lo, hi, P, row);
          }
          return;
        }
      }
      // Otherwise split the rows themselves, when the left side moves along them (each
      // thread then writes its own elements).
      if constexpr (lhs_owns_dim<M, Lhs>()) {
        if (len >= 4 * threads && lhs.step(M) != 0) {
          counters().threaded_rows.fetch_add(1, std::memory_order_relaxed);
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
#endif
          {
#if defined(_OPENMP)
            const index_t nt = omp_get_num_threads(), me = omp_get_thread_num();
#else
            const index_t nt = 1, me = 0;
#endif
            const block_of_rows chunk = split_rows(lo[M], hi[M], nt, me);
            // lo and hi hold N values (wp::run passes space<N>::lo.data()): copy no more
            index_t clo[max_dims] = {}, chi[max_dims] = {}, q[max_dims] = {};
            for (int d = 0; d < N; ++d) {
              clo[d] = lo[d];
              chi[d] = hi[d];
            }
            clo[M] = chunk.start;
            chi[M] = chunk.end;
            if (chunk.end > chunk.start)
              for_each_row<N, M>(q, clo, chi, -1, [&](const index_t* x) {
                run_row<K, M, Lhs>(lhs, rhs, x, chunk.end - chunk.start);
              });
          }
          return;
        }
      }
    }
    for_each_row<N, M>(pt, lo, hi, -1, row);
  }
}

}  // namespace workpart::detail
