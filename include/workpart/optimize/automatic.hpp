#pragma once
/// \file automatic.hpp
/// `wp::distribute(prog, wp::automatic [, ctx] [, options])`: the optimizer's schedule for the
/// context's ranks (every rank computes the same one, with no communication), then the
/// program plan of that schedule.

#include "../schedule/distribute.hpp"
#include "optimize.hpp"

namespace workpart {

template <class... M>
auto distribute(const program_t<M...>& p, const automatic_t& a, const context& ctx, options opt = {}) {
  const optimized r = optimize(p, ctx.size(), a.model, {a.configs, {}});
  return distribute(p, r.schedule, ctx, opt);
}
template <class... M>
auto distribute(const program_t<M...>& p, const automatic_t& a, options opt = {}) {
  const boost::mpi::communicator comm = detail::default_communicator();
  const optimized r = optimize(p, comm.size(), a.model, {a.configs, {}});
  return distribute(p, r.schedule, opt);
}
template <int N, class... S>
auto distribute(const map_t<N, S...>& m, const automatic_t& a, const context& ctx, options opt = {}) {
  return distribute(program(m), a, ctx, opt);
}
template <int N, class... S>
auto distribute(const map_t<N, S...>& m, const automatic_t& a, options opt = {}) {
  return distribute(program(m), a, opt);
}

}  // namespace workpart
