/// \file distribute_automatic.ipp
/// wp::automatic's schedule, searched on root and broadcast (distribute_automatic.hpp): compiled
/// once in workpart::compiled (src/workpart.cpp) or, header-only, included by that header
/// (after its declarations: like the other .ipp files, it does not include its header). Not a
/// public header.
#pragma once

#include <boost/mpi/collectives/broadcast.hpp>

#include <cstddef>
#include <utility>
#include <vector>

#include "../comm/agreement.hpp"
#include "../optimize/optimize_tables.hpp"
#include "../optimize/pricer.hpp"

namespace workpart {

namespace detail {
WORKPART_DECL schedule roots_schedule(const boost::mpi::communicator& comm,
                                      const std::vector<priced_map>& maps, const schedule& s) {
  // per map in program order (the ranks agree on the maps): 1, its grid and its replica
  // count where root's schedule has a grid of the map's rank, else 0 and as many zeros (a
  // grid of another rank travels as the one extent 0, refused by check_grid as a bad extent)
  std::vector<index_t> dims;
  for (const priced_map& m : maps) {
    const int rank = int(m.extents.size());
    const grid_shape* g = comm.rank() == 0 ? s.find(m.name) : nullptr;
    const bool fits = g && g->space_rank() == rank;
    dims.push_back(g ? 1 : 0);
    for (int d = 0; d < rank; ++d) dims.push_back(fits ? g->dims[std::size_t(d)] : 0);
    dims.push_back(g ? g->replicas() : 0);
  }
  if (comm.size() > 1) boost::mpi::broadcast(comm, dims.data(), int(dims.size()), 0);
  schedule out;
  std::size_t at = 0;
  for (const priced_map& m : maps) {
    const std::size_t n = m.extents.size();
    if (dims[at] != 0)
      out.set(m.name, grid_shape(std::vector<index_t>(dims.begin() + std::ptrdiff_t(at + 1),
                                                      dims.begin() + std::ptrdiff_t(at + 1 + n)))
                          .replicated(dims[at + 1 + n]));
    at += 2 + n;
  }
  return out;
}

WORKPART_DECL schedule automatic_schedule(const boost::mpi::communicator& comm,
                                          const std::vector<priced_map>& maps,
                                          const automatic_t& a) {
  schedule s;
  local_then_agree(comm, [&] {
    if (comm.rank() != 0) return;
    if (maps.empty())
      throw plan_error(
          "wp::distribute: the program has no maps; add maps with wp::program(m1, m2, ...) or "
          "prog.add(map)");
    search_options so;
    so.runner_ups = false;
    so.max_table_bytes = a.max_table_bytes;
    program_cost_tables t = program_costs(maps, comm.size(), a.model, a.configs);
    optimized r = optimize_tables(t, comm.size(), so);
    if (!r.proven_optimal && !a.configs.tie_backward) {
      // the same tables searched in PaSE's space, where that ties something ("dN" beside N)
      config_options tied_configs = a.configs;
      tied_configs.tie_backward = true;
      std::vector<std::vector<index_t>> extents;
      for (const priced_map& m : maps) extents.push_back(m.extents);
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
  return roots_schedule(comm, maps, s);
}
WORKPART_DECL schedule automatic_schedule(const boost::mpi::communicator& comm, const program& p,
                                          const automatic_t& a) {
  return automatic_schedule(comm, priced_views(p), a);
}
WORKPART_DECL schedule roots_schedule(const boost::mpi::communicator& comm, const program& p,
                                      const schedule& s) {
  return roots_schedule(comm, priced_views(p), s);
}
}  // namespace detail

}  // namespace workpart
