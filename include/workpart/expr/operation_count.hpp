#pragma once
/// \file operation_count.hpp
/// Arithmetic operations per point of a map, counted from its statement types: what the cost
/// model prices a map's compute by (optimize/cost_model.hpp) and what a program's map entry
/// reports (entries/map_model.hpp).

#include <algorithm>
#include <array>
#include <type_traits>

#include "map.hpp"
#include "node.hpp"
#include "ops.hpp"
#include "reduce.hpp"

namespace workpart::detail {

// ---- work per point of a statement, from its expression ----
// `at`: where the expression is counted, coordinates as reals (the space's centre; inside an
// inner range, its index at the range's centre). Accesses, scalars, index values: no arithmetic.
// W weighs each node: count_ops every operation (ops_per_point), count_slow the calls of slow
// functions alone (slow_ops_per_point).
using ops_point = std::array<double, max_dims>;

/// Slow functions: one libm call per element, at a fraction of the rate of + and *
/// (machine_model::slow_flops).
template <class Op>
constexpr bool is_slow_op_v =
    std::is_same_v<Op, op_exp> || std::is_same_v<Op, op_log> || std::is_same_v<Op, op_sqrt> ||
    std::is_same_v<Op, op_tanh> || std::is_same_v<Op, op_erf> || std::is_same_v<Op, op_log1p> ||
    std::is_same_v<Op, op_expm1> || std::is_same_v<Op, op_sigmoid> || std::is_same_v<Op, op_pow>;
struct count_ops {
  template <class Op>
  static constexpr double op = 1;
  static constexpr double select = 1, combine = 1;  // a select; a reduction's combine per trip
};
struct count_slow {
  template <class Op>
  static constexpr double op = is_slow_op_v<Op> ? 1 : 0;
  static constexpr double select = 0, combine = 0;
};

template <class W, class E>
double work_at(const E&, ops_point&) {
  return 0;
}
template <class W, class Op, class E>
double work_at(const unary_node<Op, E>& n, ops_point& at);
template <class W, class Op, class L, class R>
double work_at(const binary_node<Op, L, R>& n, ops_point& at);
template <class W, class C, class A, class B>
double work_at(const select_node<C, A, B>& n, ops_point& at);
template <class W, class Red, int D, class Lo, class Hi, class Body>
double work_at(const reduce_node<Red, D, Lo, Hi, Body>& n, ops_point& at);

template <class W, class Op, class E>
double work_at(const unary_node<Op, E>& n, ops_point& at) {
  return W::template op<Op> + work_at<W>(n.e, at);
}
template <class W, class Op, class L, class R>
double work_at(const binary_node<Op, L, R>& n, ops_point& at) {
  return W::template op<Op> + work_at<W>(n.l, at) + work_at<W>(n.r, at);
}
template <class W, class C, class A, class B>
double work_at(const select_node<C, A, B>& n, ops_point& at) {
  return W::select + work_at<W>(n.c, at) + work_at<W>(n.a, at) + work_at<W>(n.b, at);
}
/// An inner reduction: its body and one combine per trip, times its trips at `at` — an
/// estimate at the centre: the mean where the length is linear in the space's indices alone
/// and never negative over it; nested ranges whose bounds use an outer range, and ranges
/// empty over part of the space, are not averaged. Bounds read from data count one trip
/// (their length is not known before the values are).
template <class W, class Red, int D, class Lo, class Hi, class Body>
double work_at(const reduce_node<Red, D, Lo, Hi, Body>& n, ops_point& at) {
  if constexpr (reduce_node<Red, D, Lo, Hi, Body>::dd_bounds) {
    return W::combine + work_at<W>(n.body, at);
  } else {
    auto value = [&](const auto& b) {
      double v = double(b.offset);
      for (int d = 0; d < max_dims; ++d) v += double(b.coef_of(d)) * at[std::size_t(d)];
      return v;
    };
    const double lo = value(n.lo), hi = value(n.hi);
    const double saved = at[std::size_t(D)];
    at[std::size_t(D)] = (lo + hi - 1) / 2;
    const double body = work_at<W>(n.body, at);
    at[std::size_t(D)] = saved;
    return std::max(0.0, hi - lo) * (W::combine + body);
  }
}

/// W's count per point of a map's space: each statement's expression counted at the space's
/// centre, plus `combining` per combining write (`+=`, `max_into`, `min_into`); whether any
/// statement runs.
template <class W, int N, class... S>
double work_per_point(const map_t<N, S...>& m, double combining, bool& runs) {
  ops_point at{};
  for (int d = 0; d < N; ++d)
    at[std::size_t(d)] = (double(m.iteration_space().lo[std::size_t(d)]) +
                          double(m.iteration_space().hi[std::size_t(d)]) - 1) /
                         2;
  double work = 0;
  runs = false;
  m.for_each_statement([&](const auto& st) {
    using St = std::decay_t<decltype(st)>;
    work += work_at<W>(st.rhs, at) + (St::kind == combine::assign ? 0 : combining);
    runs = true;
  });
  return work;
}

/// Arithmetic operations per point of a map's space: each statement's expression (counted at
/// the space's centre: an inner reduction as its mean trips times its body), plus one for a
/// combining write (`+=`, `max_into`, `min_into`); at least 1 (a copy costs something); 0 where
/// no statement runs (wp::backward's pruned zeroing maps: they run nowhere).
template <int N, class... S>
double ops_per_point(const map_t<N, S...>& m) {
  bool runs = false;
  const double ops = work_per_point<count_ops>(m, 1, runs);
  return runs ? std::max(1.0, ops) : 0.0;
}

/// Of those, calls of slow functions per point (exp, log, tanh, ...), counted alike.
template <int N, class... S>
double slow_ops_per_point(const map_t<N, S...>& m) {
  bool runs = false;
  return work_per_point<count_slow>(m, 0, runs);
}

}  // namespace workpart::detail
