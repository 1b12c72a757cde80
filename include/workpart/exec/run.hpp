#pragma once
/// \file run.hpp
/// One-process execution: `wp::run(map)` / `wp::run(program)` on root's global arrays.

#include <string>

#include "../fwd.hpp"
#include "local.hpp"

namespace workpart {

namespace detail {
template <int N, class... S>
void run_on_root(const map_t<N, S...>& m) {
  m.require_valid();
  buffer_env env;
  m.for_each_statement([&](const auto& st) {
    auto add = [&](auto& arr) {
      if (!env.has(&arr)) env.add(&arr, global_view(arr));
    };
    for_each_array(st.lhs, add);
    for_each_array(st.rhs, add);
  });
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
template <class... M>
void run(const program_t<M...>& p) {
  if (detail::current_rank() != 0) return;
  p.for_each_map([](const auto& m) { detail::run_on_root(m); });
}

/// Text saying how each statement of a map runs on one process (GEMM or loop, row and
/// thread dimensions), e.g. to check that a contraction was recognised.
template <int N, class... S>
std::string explain_local(const map_t<N, S...>& m) {
  std::string s = "map '" + m.name() + "' over " + m.iteration_space().str() + ":";
  m.for_each_statement([&](const auto& st) {
    s += "\n  " + st.str() + "\n    -> " + detail::local_strategy<N>(st);
  });
  return s + "\n";
}

}  // namespace workpart
