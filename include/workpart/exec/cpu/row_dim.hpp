#pragma once
/// \file row_dim.hpp
/// The dimension the CPU loop executor (loop.hpp) runs a statement's rows along: the one that
/// makes the most accesses contiguous. Type traits only, so that the cost model
/// (exec/local_kind.hpp) knows a block's rows without the executor.

#include <tuple>
#include <utility>

#include "../../expr/map.hpp"
#include "../../expr/reduce.hpp"

namespace workpart::detail {

/// How well a row along M suits a node: +2 per contiguous access, -1 per strided one.
template <int M, class Nd>
constexpr int row_score() {
  if constexpr (is_access_v<Nd>) {
    constexpr step_kind k = Nd::template step_along<M>();
    return k == step_kind::unit ? 2 : k == step_kind::zero ? 0 : -1;
  } else if constexpr (node_traits<Nd>::elementwise) {
    return []<class... C>(std::tuple<C...>*) {
      return (row_score<M, C>() + ... + 0);
    }(static_cast<typename node_traits<Nd>::children*>(nullptr));
  } else {
    return 0;  // scalars, val, inner reductions (their rows run along their own index)
  }
}

/// How well a row along M suits the left side: a contiguous store, or (for `+=`, max_into,
/// min_into) an element fixed along the row, accumulated in registers (a row sum or row max
/// along the contiguous axis of what it reads), +2; strided -1.
template <int M, class Stmt>
constexpr int lhs_row_score() {
  constexpr step_kind k = Stmt::lhs_type::template step_along<M>();
  if (k == step_kind::unit) return 2;
  if (k == step_kind::zero) return Stmt::kind == combine::assign ? 0 : 2;
  return -1;
}

/// The row dimension of a statement in a space of rank N (N > 0): best score, the left
/// side counting double; ties go to the later dimension (row-major order).
template <int N, class Stmt>
constexpr int choose_row_dim() {
  int best = N - 1, best_score = -1000;
  [&]<std::size_t... D>(std::index_sequence<D...>) {
    constexpr int scores[] = {
        (2 * lhs_row_score<int(D), Stmt>() + row_score<int(D), typename Stmt::rhs_type>())...};
    for (int d = 0; d < N; ++d)
      if (scores[d] >= best_score) {
        best_score = scores[d];
        best = d;
      }
  }
  (std::make_index_sequence<N>{});
  return best;
}

}  // namespace workpart::detail
