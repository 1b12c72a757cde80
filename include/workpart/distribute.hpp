#pragma once
/// \file distribute.hpp
/// wp::distribute: a map or a program, and a grid, a schedule or wp::automatic, to a plan.
/// The top of the data flow: it joins the schedule (schedule/), the optimizer (optimize/) and
/// the runtime (comm/), which know nothing of each other's entry points.

#include <mpi.h>

#include <boost/mpi/collectives/broadcast.hpp>

#include <cstddef>
#include <utility>
#include <vector>

#include "comm/agreement.hpp"
#include "comm/context.hpp"
#include "comm/map_plan.hpp"
#include "comm/program_plan.hpp"
#include "exec/options.hpp"
#include "optimize/optimize.hpp"
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
/// A program of several maps gives a program_plan: intermediates move rank to rank. A program
/// of one map gives that map's plan, the same as distribute(map, grid). Collective; a map
/// without a grid, a grid for a map not in the program, or a bad grid is an error on every rank
/// before anything moves.
template <class... M>
auto distribute(const program_t<M...>& p, const schedule& s, const context& ctx, options opt = {}) {
  if constexpr (sizeof...(M) == 1) {
    const auto grids = detail::schedule_grids(p, s, ctx.comm());
    return map_plan<M...>(p.maps().template get<0>(), grids[0], ctx.comm(), opt);
  } else {
    return program_plan<M...>(p, s, ctx.comm(), opt);
  }
}
template <class... M>
auto distribute(const program_t<M...>& p, const schedule& s, options opt = {}) {
  const boost::mpi::communicator comm = detail::default_communicator();
  if constexpr (sizeof...(M) == 1) {
    const auto grids = detail::schedule_grids(p, s, comm);
    return map_plan<M...>(p.maps().template get<0>(), grids[0], comm, opt);
  } else {
    return program_plan<M...>(p, s, comm, opt);
  }
}
/// A single map with a schedule that gives its grid: a program of one map.
template <int N, class... S>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, const schedule& s, const context& ctx,
                                    options opt = {}) {
  return distribute(program(m), s, ctx, opt);
}
template <int N, class... S>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, const schedule& s, options opt = {}) {
  return distribute(program(m), s, opt);
}

namespace detail {
/// Root's schedule on every rank (where only root has one, the others' `s` is ignored). The
/// optimizer prices an init() array as generated in place only where root holds no copy of
/// it, and a gather leaves one on root alone: the ranks can price alike-built programs
/// differently, and root's choice is the one its data needs.
template <class... M>
schedule roots_schedule(const boost::mpi::communicator& comm, const program_t<M...>& p,
                        const schedule& s) {
  // per map in program order (the ranks agree on the maps): 1, its grid and its replica
  // count where root's schedule has a grid of the map's rank, else 0 and as many zeros (a
  // grid of another rank travels as the one extent 0, refused by check_grid as a bad extent)
  std::vector<index_t> dims;
  p.for_each_map([&](const auto& m) {
    const grid_shape* g = comm.rank() == 0 ? s.find(m.name()) : nullptr;
    const bool fits = g && g->space_rank() == m.rank;
    dims.push_back(g ? 1 : 0);
    for (int d = 0; d < m.rank; ++d) dims.push_back(fits ? g->dims[std::size_t(d)] : 0);
    dims.push_back(g ? g->replicas() : 0);
  });
  if (comm.size() > 1) boost::mpi::broadcast(comm, dims.data(), int(dims.size()), 0);
  schedule out;
  std::size_t at = 0;
  p.for_each_map([&](const auto& m) {
    const std::size_t n = std::size_t(m.rank);
    if (dims[at] != 0)
      out.set(m.name(), grid_shape(std::vector<index_t>(dims.begin() + std::ptrdiff_t(at + 1),
                                                        dims.begin() + std::ptrdiff_t(at + 1 + n)))
                            .replicated(dims[at + 1 + n]));
    at += 2 + n;
  });
  return out;
}

/// wp::automatic's schedule: found on root alone (the other ranks would find another only
/// where they price differently, and root's is the one used), without runner-ups (nothing
/// shows them), within automatic_t::max_table_bytes (over it, in PaSE's space: see
/// automatic_t), then given to every rank. A failure on root is raised on every rank.
template <class... M>
schedule automatic_schedule(const boost::mpi::communicator& comm, const program_t<M...>& p,
                            const automatic_t& a) {
  schedule s;
  local_then_agree(comm, [&] {
    if (comm.rank() != 0) return;
    search_options so;
    so.runner_ups = false;
    so.max_table_bytes = a.max_table_bytes;
    program_cost_tables t = program_costs(p, comm.size(), a.model, a.configs);
    optimized r = optimize_tables(t, comm.size(), so);
    if (!r.proven_optimal && !a.configs.tie_backward) {
      // the same tables searched in PaSE's space, where that ties something ("dN" beside N)
      config_options tied_configs = a.configs;
      tied_configs.tie_backward = true;
      std::vector<std::vector<index_t>> extents;
      p.for_each_map([&](const auto& m) {
        auto& e = extents.emplace_back();
        for (int d = 0; d < m.rank; ++d) e.push_back(m.iteration_space().extent(d));
      });
      std::vector<std::size_t> tied = tied_vertices(t, extents, tied_configs);
      bool ties_more = false;
      for (std::size_t v = 0; v < tied.size(); ++v)
        ties_more |= tied[v] != (t.tied.empty() ? v : t.tied[v]);
      if (ties_more) {
        t.tied = std::move(tied);
        optimized in_pase = optimize_tables(t, comm.size(), so);
        if (in_pase.cost < r.cost) r = std::move(in_pase);
      }
    }
    s = std::move(r.schedule);
  });
  return roots_schedule(comm, p, s);
}
}  // namespace detail

/// `wp::distribute(prog, wp::automatic [, ctx] [, options])`: the optimizer's schedule for the
/// context's ranks (root computes it and broadcasts it: see automatic_schedule), then the
/// plan of that schedule.
template <class... M>
auto distribute(const program_t<M...>& p, const automatic_t& a, const context& ctx,
                options opt = {}) {
  return distribute(p, detail::automatic_schedule(ctx.comm(), p, a), ctx, opt);
}
template <class... M>
auto distribute(const program_t<M...>& p, const automatic_t& a, options opt = {}) {
  const boost::mpi::communicator comm = detail::default_communicator();
  return distribute(p, detail::automatic_schedule(comm, p, a), opt);
}
template <int N, class... S>
auto distribute(const map_t<N, S...>& m, const automatic_t& a, const context& ctx,
                options opt = {}) {
  return distribute(program(m), a, ctx, opt);
}
template <int N, class... S>
auto distribute(const map_t<N, S...>& m, const automatic_t& a, options opt = {}) {
  return distribute(program(m), a, opt);
}

}  // namespace workpart
