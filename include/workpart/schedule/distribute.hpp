#pragma once
/// \file distribute.hpp
/// wp::distribute: a map and a grid (compile-time or run-time) to a plan.

#include <mpi.h>

#include "../comm/context.hpp"
#include "../comm/map_plan.hpp"
#include "grid.hpp"

namespace workpart {

namespace detail {
inline boost::mpi::communicator default_communicator() {
  if (const auto* c = current_comm()) return *c;
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited)
    throw plan_error("wp::distribute: MPI is not initialised; create a wp::context(argc, argv) "
                     "first");
  return boost::mpi::communicator();
}
}  // namespace detail

/// \code
///   auto plan = wp::distribute(mm, wp::grid<2, 2, 1>);            // the current context
///   auto plan = wp::distribute(mm, wp::grid_shape{4, 1, 1}, ctx);  // a run-time grid
///   plan.run();
/// \endcode
/// Collective over the context's communicator. Errors (grid rank or size, out-of-bounds
/// accesses, writes that overlap) are raised on every rank before any communication.
template <int N, class... S, index_t... G>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, grid_t<G...>, const context& ctx,
                                    options opt = {}) {
  static_assert(sizeof...(G) == N,
                "workpart::distribute: grid rank must equal the iteration-space rank; pad with "
                "1s, e.g. grid<2,2,1> for a 3-index space");
  return map_plan<map_t<N, S...>>(m, grid_shape{G...}, ctx.comm(), opt);
}
template <int N, class... S, index_t... G>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, grid_t<G...> g, options opt = {}) {
  static_assert(sizeof...(G) == N,
                "workpart::distribute: grid rank must equal the iteration-space rank; pad with "
                "1s, e.g. grid<2,2,1> for a 3-index space");
  (void)g;
  return map_plan<map_t<N, S...>>(m, grid_shape{G...}, detail::default_communicator(), opt);
}
template <int N, class... S>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, const grid_shape& g,
                                    const context& ctx, options opt = {}) {
  return map_plan<map_t<N, S...>>(m, g, ctx.comm(), opt);
}
template <int N, class... S>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, const grid_shape& g, options opt = {}) {
  return map_plan<map_t<N, S...>>(m, g, detail::default_communicator(), opt);
}

}  // namespace workpart
