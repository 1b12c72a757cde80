#pragma once
/// \file row_vector.hpp
/// Whether the loop executor runs a statement's rows as vectors (simd_row.hpp): its plan for
/// the rows (loop.hpp's row_plan), found from the statement's type alone, so that both the
/// executor (exec/local.hpp) and the cost model (exec/local_kind.hpp: a loop whose rows have
/// no vector form runs at machine_model::scalar_flops) ask one trait.

#include <utility>

#include "../env.hpp"
#include "loop.hpp"

namespace workpart::detail {

/// The loop executor's plan for a statement's rows (cpu/loop.hpp; N > 0).
template <int N, class Stmt>
using loop_row_plan_of = row_plan<Stmt::kind, choose_row_dim<N, Stmt>(), typename Stmt::lhs_type,
                                  decltype(std::declval<const typename Stmt::rhs_type&>().bind(
                                      std::declval<const buffer_env&>(), dim_mask{}))>;

/// Whether the loop executor runs a statement's rows as vectors (or its inner range outside
/// them, over vector rows of the body); vector_text says which in words.
template <int N, class Stmt>
constexpr bool loop_rows_are_vectors() {
  if constexpr (N == 0) {
    return false;
  } else {
    using plan = loop_row_plan_of<N, Stmt>;
    return plan::range_outside || plan::vector_reduce || plan::vector_store;
  }
}

}  // namespace workpart::detail
