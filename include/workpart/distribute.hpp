#pragma once
/// \file distribute.hpp
/// wp::distribute: a map or a program, and a grid or a schedule, to a plan. The top of the
/// data flow: it joins the schedule (schedule/) and the runtime (runtime/). wp::automatic's
/// overloads, which need the optimizer, are distribute_automatic.hpp's (workpart.hpp
/// includes both).

#include <mpi.h>

#include <utility>
#include <vector>

#include "comm/context.hpp"
#include "runtime/map_plan.hpp"
#include "runtime/program_plan.hpp"
#include "exec/options.hpp"
#include "entries/map_model.hpp"
#include "program/program.hpp"
#include "schedule/grid.hpp"
#include "schedule/schedule.hpp"

namespace workpart {

namespace detail {
inline boost::mpi::communicator default_communicator() {
  if (const auto* c = current_comm()) return *c;
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited)
    throw plan_error(
        "wp::distribute: MPI is not initialised; create a wp::context(argc, argv) "
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
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, const grid_shape& g,
                                    options opt = {}) {
  return map_plan<map_t<N, S...>>(m, g, detail::default_communicator(), opt);
}

/// \code
///   wp::schedule s;
///   s.set(m1, wp::grid<4, 1>).set(m2, wp::grid_shape{1, 4});
///   auto plan = wp::distribute(wp::program(m1, m2), s, ctx);
///   plan.run();
/// \endcode
/// A program's plan: intermediates move rank to rank (a program of one map is that map's
/// plan). Collective; a map without a grid, a grid for a map not in the program, or a bad
/// grid is an error on every rank before anything moves.
inline program_plan distribute(const program& p, const schedule& s, const context& ctx,
                               options opt = {}) {
  return program_plan(p, s, ctx.comm(), opt);
}
inline program_plan distribute(const program& p, const schedule& s, options opt = {}) {
  return program_plan(p, s, detail::default_communicator(), opt);
}
/// A single map with a schedule that gives its grid.
template <int N, class... S>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, const schedule& s, const context& ctx,
                                    options opt = {}) {
  const auto grids = detail::schedule_grids({m.name()}, {m.origin()}, s, ctx.comm());
  return map_plan<map_t<N, S...>>(m, grids[0], ctx.comm(), opt);
}
template <int N, class... S>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, const schedule& s, options opt = {}) {
  const boost::mpi::communicator comm = detail::default_communicator();
  const auto grids = detail::schedule_grids({m.name()}, {m.origin()}, s, comm);
  return map_plan<map_t<N, S...>>(m, grids[0], comm, opt);
}

}  // namespace workpart
