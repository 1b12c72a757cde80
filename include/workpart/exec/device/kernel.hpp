#pragma once
/// \file kernel.hpp
/// The one kernel form of the device backend: a Thrust `for_each` over the points of the
/// rank's block along the dimensions the left side maps one-to-one (the innermost fastest,
/// so neighbouring device threads touch neighbouring elements), instantiated from the
/// statement's types. Each device thread runs the other dimensions in order: a conflicted
/// write (`+=`, `max_into`, `min_into` over an index absent from the left side) is then a
/// segmented reduction held in a register and written once, with no atomics, and its result
/// does not depend on how threads are scheduled. A scatter (`h(idx(i)) += e`) runs the same
/// way: its threads own distinct affine coordinates of the left side, and each adds its points
/// in order, so it needs no atomics either and is deterministic. Inner `wp::sum` / `max_of` /
/// `min_of` ranges are evaluated per point by the bound expression itself.

#include <bit>
#include <type_traits>

#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include "../combine.hpp"
#include "context.hpp"

namespace workpart::detail {

template <int N, class Stmt, class BL, class BR>
struct statement_kernel {
  using Lhs = typename Stmt::lhs_type;
  using T = typename BL::value_type;
  static constexpr combine K = Stmt::kind;
  /// Dimensions split over device threads; the others run in order in each thread.
  static constexpr dim_mask parallel = lhs_owned_dims<Lhs>() & dims_below(N);
  static constexpr bool has_sequential = (dims_below(N) & ~parallel) != 0;
  /// The element written stays put along the sequential dimensions (a row reduction).
  static constexpr bool lhs_fixed = (Lhs::info.free & dims_below(N) & ~parallel) == 0;

  BL lhs;
  BR rhs;
  index_t lo[N > 0 ? N : 1];
  index_t hi[N > 0 ? N : 1];

  /// Moves pt to the next point of the sequential dimensions (row-major); false at the end.
  WORKPART_HD WORKPART_ALWAYS_INLINE bool next_sequential(index_t* pt) const {
    for (int d = N - 1; d >= 0; --d) {
      if (parallel & dim_bit(d)) continue;
      if (++pt[d] < hi[d]) return true;
      pt[d] = lo[d];
    }
    return false;
  }

  /// The outermost parallel dimension takes what is left of the thread's index: one
  /// division fewer (none for a single parallel dimension, as in elementwise maps).
  static constexpr int outermost = parallel ? std::countr_zero(parallel) : -1;

  WORKPART_HD void operator()(index_t t) const {
    index_t pt[max_dims] = {};
    for (int d = N - 1; d >= 0; --d) {
      if (d == outermost) {
        pt[d] = lo[d] + t;
      } else if (parallel & dim_bit(d)) {
        const index_t e = hi[d] - lo[d];
        const index_t q = t / e;
        pt[d] = lo[d] + (t - q * e);
        t = q;
      } else {
        pt[d] = lo[d];
      }
    }
    if constexpr (!Lhs::all_affine) {
      // A scatter (h(idx(i)) += e): the element is found point by point (one whose subscript
      // leaves the buffer is recorded and skipped); threads own distinct affine coordinates.
      do {
        if (T* p = lhs.ptr_if_inside(pt)) *p = combine_value<K>(*p, rhs.eval(pt));
      } while (has_sequential && next_sequential(pt));
    } else if constexpr (!has_sequential) {
      T* p = lhs.ptr(pt);
      *p = combine_value<K>(*p, rhs.eval(pt));
    } else if constexpr (lhs_fixed && K == combine::add) {
      using V = decltype(rhs.eval(pt));
      using A = std::common_type_t<T, V>;
      T* p = lhs.ptr(pt);
      A acc = A(0);
      do acc += rhs.eval(pt);
      while (next_sequential(pt));
      *p = static_cast<T>(*p + acc);
    } else if constexpr (lhs_fixed && K != combine::assign) {
      T* p = lhs.ptr(pt);
      T acc = *p;
      do acc = combine_value<K>(acc, rhs.eval(pt));
      while (next_sequential(pt));
      *p = acc;
    } else {
      do {
        T* p = lhs.ptr(pt);
        *p = combine_value<K>(*p, rhs.eval(pt));
      } while (next_sequential(pt));
    }
  }
};

/// Runs `lhs K= rhs` (bound on device buffers) over the box [lo, hi) of the space.
template <int N, class Stmt, class BL, class BR>
void launch_statement(const BL& bl, const BR& br, const index_t* lo, const index_t* hi) {
  using kernel = statement_kernel<N, Stmt, BL, BR>;
  kernel k{bl, br, {}, {}};
  index_t threads = 1;
  for (int d = 0; d < N; ++d) {
    if (hi[d] <= lo[d]) return;
    k.lo[d] = lo[d];
    k.hi[d] = hi[d];
    if (kernel::parallel & dim_bit(d)) threads *= hi[d] - lo[d];
  }
  device_call("a statement's kernel (thrust::for_each)", [&] {
    thrust::for_each(thrust::device, thrust::counting_iterator<index_t>(0),
                     thrust::counting_iterator<index_t>(threads), k);
  });
}

}  // namespace workpart::detail
