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

// ---- operations per point of a statement, from its expression ----
// `at`: where the expression is counted, coordinates as reals (the space's centre; inside an
// inner range, its index at the range's centre). Accesses, scalars, index values: no arithmetic.
using ops_point = std::array<double, max_dims>;
template <class E>
double ops_at(const E&, ops_point&) {
  return 0;
}
template <class Op, class E>
double ops_at(const unary_node<Op, E>& n, ops_point& at);
template <class Op, class L, class R>
double ops_at(const binary_node<Op, L, R>& n, ops_point& at);
template <class C, class A, class B>
double ops_at(const select_node<C, A, B>& n, ops_point& at);
template <class Red, int D, class Lo, class Hi, class Body>
double ops_at(const reduce_node<Red, D, Lo, Hi, Body>& n, ops_point& at);

template <class Op, class E>
double ops_at(const unary_node<Op, E>& n, ops_point& at) {
  return 1 + ops_at(n.e, at);
}
template <class Op, class L, class R>
double ops_at(const binary_node<Op, L, R>& n, ops_point& at) {
  return 1 + ops_at(n.l, at) + ops_at(n.r, at);
}
template <class C, class A, class B>
double ops_at(const select_node<C, A, B>& n, ops_point& at) {
  return 1 + ops_at(n.c, at) + ops_at(n.a, at) + ops_at(n.b, at);
}
/// An inner reduction: its body and one combine per trip, times its trips at `at` — an
/// estimate at the centre: the mean where the length is linear in the space's indices alone
/// and never negative over it; nested ranges whose bounds use an outer range, and ranges
/// empty over part of the space, are not averaged. Bounds read from data count one trip
/// (their length is not known before the values are).
template <class Red, int D, class Lo, class Hi, class Body>
double ops_at(const reduce_node<Red, D, Lo, Hi, Body>& n, ops_point& at) {
  if constexpr (reduce_node<Red, D, Lo, Hi, Body>::dd_bounds) {
    return 1 + ops_at(n.body, at);
  } else {
    auto value = [&](const auto& b) {
      double v = double(b.offset);
      for (int d = 0; d < max_dims; ++d) v += double(b.coef_of(d)) * at[std::size_t(d)];
      return v;
    };
    const double lo = value(n.lo), hi = value(n.hi);
    const double saved = at[std::size_t(D)];
    at[std::size_t(D)] = (lo + hi - 1) / 2;
    const double body = ops_at(n.body, at);
    at[std::size_t(D)] = saved;
    return std::max(0.0, hi - lo) * (1 + body);
  }
}

/// Arithmetic operations per point of a map's space: each statement's expression (counted at
/// the space's centre: an inner reduction as its mean trips times its body), plus one for a
/// combining write (`+=`, `max_into`, `min_into`); at least 1 (a copy costs something); 0 where
/// no statement runs (wp::backward's pruned zeroing maps: they run nowhere).
template <int N, class... S>
double ops_per_point(const map_t<N, S...>& m) {
  ops_point at{};
  for (int d = 0; d < N; ++d)
    at[std::size_t(d)] = (double(m.iteration_space().lo[std::size_t(d)]) +
                          double(m.iteration_space().hi[std::size_t(d)]) - 1) /
                         2;
  double ops = 0;
  bool runs = false;
  m.for_each_statement([&](const auto& st) {
    using St = std::decay_t<decltype(st)>;
    ops += ops_at(st.rhs, at) + (St::kind == combine::assign ? 0 : 1);
    runs = true;
  });
  return runs ? std::max(1.0, ops) : 0.0;
}

// ---- of those, calls of slow functions (exp, log, tanh, ...) per point ----
// They run one libm call per element, at a fraction of the rate of + and *
// (machine_model::slow_flops). Counted like ops_at: an inner reduction's body times its trips.
template <class Op>
constexpr bool is_slow_op_v =
    std::is_same_v<Op, op_exp> || std::is_same_v<Op, op_log> || std::is_same_v<Op, op_sqrt> ||
    std::is_same_v<Op, op_tanh> || std::is_same_v<Op, op_erf> || std::is_same_v<Op, op_log1p> ||
    std::is_same_v<Op, op_expm1> || std::is_same_v<Op, op_sigmoid> || std::is_same_v<Op, op_pow>;
template <class E>
double slow_at(const E&, ops_point&) {
  return 0;
}
template <class Op, class E>
double slow_at(const unary_node<Op, E>& n, ops_point& at);
template <class Op, class L, class R>
double slow_at(const binary_node<Op, L, R>& n, ops_point& at);
template <class C, class A, class B>
double slow_at(const select_node<C, A, B>& n, ops_point& at);
template <class Red, int D, class Lo, class Hi, class Body>
double slow_at(const reduce_node<Red, D, Lo, Hi, Body>& n, ops_point& at);

template <class Op, class E>
double slow_at(const unary_node<Op, E>& n, ops_point& at) {
  return (is_slow_op_v<Op> ? 1 : 0) + slow_at(n.e, at);
}
template <class Op, class L, class R>
double slow_at(const binary_node<Op, L, R>& n, ops_point& at) {
  return (is_slow_op_v<Op> ? 1 : 0) + slow_at(n.l, at) + slow_at(n.r, at);
}
template <class C, class A, class B>
double slow_at(const select_node<C, A, B>& n, ops_point& at) {
  return slow_at(n.c, at) + slow_at(n.a, at) + slow_at(n.b, at);
}
template <class Red, int D, class Lo, class Hi, class Body>
double slow_at(const reduce_node<Red, D, Lo, Hi, Body>& n, ops_point& at) {
  const double body = slow_at(n.body, at);
  if (body == 0) return 0;
  // the trips ops_at counts: its total over (1 + its body's operations)
  const double trips_ops = ops_at(n, at), body_ops = 1 + ops_at(n.body, at);
  return trips_ops / body_ops * body;
}

/// Calls of slow functions per point of a map's space, counted where ops_per_point counts
/// (a part of its operations).
template <int N, class... S>
double slow_ops_per_point(const map_t<N, S...>& m) {
  ops_point at{};
  for (int d = 0; d < N; ++d)
    at[std::size_t(d)] = (double(m.iteration_space().lo[std::size_t(d)]) +
                          double(m.iteration_space().hi[std::size_t(d)]) - 1) /
                         2;
  double slow = 0;
  m.for_each_statement([&](const auto& st) { slow += slow_at(st.rhs, at); });
  return slow;
}

}  // namespace workpart::detail
