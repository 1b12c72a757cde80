#pragma once
/// \file run.hpp
/// One-process execution: `wp::run(map)` on root's global arrays (`wp::run(program)`:
/// program/program.hpp).

#include <string>

#include "../fwd.hpp"
#include "local.hpp"

namespace workpart {

namespace detail {
/// Views root's whole arrays in env, once per array a statement touches. (One visitor type
/// for every statement of every map: each node type's walk is compiled once.)
struct root_views {
  buffer_env& env;
  template <class A>
  void on_access(const A& a) {
    if (!env.has(a.arr)) env.add(a.arr, global_view(*a.arr));
  }
  template <class R>
  void enter_range(const R&) {}
  void leave_range() {}
};

template <int N, class... S>
void run_on_root(const map_t<N, S...>& m) {
  m.require_valid();
  buffer_env env;
  root_views views{env};
  m.visit_accesses(views);
  const auto& sp = m.iteration_space();
  run_map_box(m, env, sp.lo.data(), sp.hi.data());
}
}  // namespace detail

/// Runs a map, or a program's maps in order, on the calling process over root's arrays.
/// Under mpirun only root runs (other ranks hold no global data and return at once); use
/// `wp::distribute` to share the work between ranks.
/// \code
///   wp::run(wp::map("axpy", wp::space(n), y(i) += a * x(i)));
/// \endcode
template <int N, class... S>
void run(const map_t<N, S...>& m) {
  if (detail::current_rank() != 0) return;
  detail::run_on_root(m);
}

/// Text saying how each statement of a map runs on one process (GEMM or loop, row and
/// thread dimensions), e.g. to check that a contraction was recognised.
template <int N, class... S>
std::string explain_local(const map_t<N, S...>& m) {
  std::string s = "map '" + m.name() + "' over " + m.iteration_space().str() + ":";
  m.for_each_statement([&](const auto& st) {
    s += "\n  " + st.str() + "\n    -> " + detail::local_strategy<N>(st);
  });
  if constexpr (sizeof...(S) > 1) {
    const auto& sp = m.iteration_space();
    s += "\n  statements: " +
         detail::fusion_text(detail::map_fusion_plan<N>(m, sp.lo.data(), sp.hi.data()), N);
  }
  return s + "\n";
}

}  // namespace workpart
