#pragma once
/// \file distribute_automatic.hpp
/// `wp::distribute(map or program, wp::automatic [, ctx] [, options])`: the optimizer's
/// schedule for the context's ranks (optimize/), then the plan of that schedule
/// (distribute.hpp). A header of its own so that distribute.hpp needs no optimizer;
/// workpart.hpp includes both.

#include <boost/mpi/communicator.hpp>

#include <vector>

#include "config.hpp"
#include "distribute.hpp"
#include "optimize/optimize.hpp"

namespace workpart {

namespace detail {
/// Root's schedule on every rank (where only root has one, the others' `s` is ignored). The
/// optimizer prices an init() array as generated in place only where root holds no copy of
/// it, and a gather leaves one on root alone: the ranks can price alike-built programs
/// differently, and root's choice is the one its data needs.
WORKPART_DECL schedule roots_schedule(const boost::mpi::communicator& comm,
                                      const std::vector<priced_map>& maps, const schedule& s);
WORKPART_DECL schedule roots_schedule(const boost::mpi::communicator& comm, const program& p,
                                      const schedule& s);
/// wp::automatic's schedule: found on root alone (the other ranks would find another only
/// where they price differently, and root's is the one used), without runner-ups (nothing
/// shows them), within automatic_t::max_table_bytes (over it, in PaSE's space: see
/// automatic_t), then given to every rank. A failure on root is raised on every rank.
WORKPART_DECL schedule automatic_schedule(const boost::mpi::communicator& comm,
                                          const std::vector<priced_map>& maps,
                                          const automatic_t& a);
WORKPART_DECL schedule automatic_schedule(const boost::mpi::communicator& comm, const program& p,
                                          const automatic_t& a);
}  // namespace detail

/// `wp::distribute(prog, wp::automatic [, ctx] [, options])`: the optimizer's schedule for the
/// context's ranks (root computes it and broadcasts it: see automatic_schedule), then the
/// plan of that schedule.
inline program_plan distribute(const program& p, const automatic_t& a, const context& ctx,
                               options opt = {}) {
  return distribute(p, detail::automatic_schedule(ctx.comm(), detail::priced_views(p), a), ctx,
                    opt);
}
inline program_plan distribute(const program& p, const automatic_t& a, options opt = {}) {
  const boost::mpi::communicator comm = detail::default_communicator();
  return distribute(p, detail::automatic_schedule(comm, detail::priced_views(p), a), opt);
}
template <int N, class... S>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, const automatic_t& a,
                                    const context& ctx, options opt = {}) {
  return distribute(m, detail::automatic_schedule(ctx.comm(), {detail::priced_view(m)}, a), ctx,
                    opt);
}
template <int N, class... S>
map_plan<map_t<N, S...>> distribute(const map_t<N, S...>& m, const automatic_t& a,
                                    options opt = {}) {
  const boost::mpi::communicator comm = detail::default_communicator();
  return distribute(m, detail::automatic_schedule(comm, {detail::priced_view(m)}, a), opt);
}

}  // namespace workpart

#if WORKPART_HEADER_ONLY
#include "impl/distribute_automatic.ipp"
#endif
